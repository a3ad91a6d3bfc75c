// The official TypeScript SDK's ACP v2 client resumes a stored session with replay.
//
//   --phase turn: one turn whose edit asks permission (allowed), read until idle, then session/close.
//   --phase resume --session ID: (a new daemon) session/load (v2 removed it), session/resume with an
//     unknown replay cursor, session/resume with replayFrom {type: "start"}, then again without it.
// The SDK has no resume API: session/resume goes through cx.request, and the session's updates are
// read with onNotification (they are parsed by the SDK: a replay_complete passes its open union).
// Every line both ways is recorded for tests/conformance/test_acp_v2_resume.py.
//
//   node v2_resume.mjs --phase turn --workspace DIR -- python -m tether acp --provider scripted --script S
import { client } from "@agentclientprotocol/sdk/experimental/v2/unstable";

import { args, spawnRecorded, WS } from "./v2_wire.mjs";

const phase = args[args.indexOf("--phase") + 1];
const { stream, finish } = spawnRecorded();

const noted = [];
const app = client({ name: "tether-v2-resume" })
  .onRequest("session/request_permission", ({ params }) => {
    const allow = params.options.find((o) => o.kind === "allow_once");
    return { outcome: { outcome: "selected", optionId: allow.optionId } };
  })
  .onNotification("session/update", ({ params }) => { noted.push(params); });

async function failure(promise) {
  try {
    return { result: await promise };
  } catch (err) {
    return { code: err.code, message: err.message, data: err.data };
  }
}

// The SDK may run notification handlers after a response it read later: wait for the
// state_update that ends what a resume sends before its answer (the order is checked on the wire).
async function stateSeen() {
  for (let i = 0; i < 500 && !noted.some((n) => n.update.sessionUpdate === "state_update"); i++) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  const at = noted.findIndex((n) => n.update.sessionUpdate === "state_update");
  return noted.splice(0, at + 1).map((n) => n.update);
}

async function turn(cx, summary) {
  const s = await cx.buildSession(WS).start();
  summary.sessionId = s.sessionId;
  summary.promptAnswer = await s.prompt("edit the readme, please");
  const seen = [];
  for (;;) {
    const message = await s.nextUpdate();
    seen.push(message.update);
    if (message.kind === "stop") break;
  }
  summary.updates = seen;
  await cx.request("session/close", { sessionId: s.sessionId });
}

async function resume(cx, summary) {
  const sessionId = args[args.indexOf("--session") + 1];
  summary.load = await failure(cx.request("session/load", { sessionId, cwd: WS, mcpServers: [] }));
  summary.badCursor = await failure(
    cx.request("session/resume", { sessionId, cwd: WS, replayFrom: { type: "message", messageId: "x" } }));
  summary.extraRoots = await failure(
    cx.request("session/resume", { sessionId, cwd: WS, additionalDirectories: ["/tmp"], replayFrom: { type: "start" } }));
  summary.resumed = await cx.request("session/resume", { sessionId, cwd: WS, replayFrom: { type: "start" } });
  summary.replayed = await stateSeen();
  summary.resumedAgain = await cx.request("session/resume", { sessionId, cwd: WS });
  summary.again = await stateSeen();
}

const summary = { ok: false };
try {
  await app.connectWith(stream, async (cx) => {
    const init = await cx.request("initialize", {
      protocolVersion: 2, info: { name: "tether-v2-resume", version: "1" }, capabilities: {},
    });
    summary.initialize = init;
    await (phase === "turn" ? turn(cx, summary) : resume(cx, summary));
    summary.after = noted.splice(0).map((n) => n.update);
  });
  summary.ok = true;
} catch (err) {
  summary.error = String(err && err.stack ? err.stack : err);
} finally {
  await finish(summary);
}
