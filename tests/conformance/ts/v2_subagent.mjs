// The official TypeScript SDK's ACP v2 client sees a `delegate` call's sub-agent as a child
// session: `subagent_update` on the parent, the child's updates on the child's own
// sessionId, its permission request asked on it. First turn: the child edits README.md
// (allowed on the child's session). Second turn: the child runs a slow command and the
// client cancels only the child with `session/cancel` on its id once the process runs;
// the parent's turn goes on to its next reply. Third turn: the client stops the child's
// command alone with `tool_call/cancel` on the child's session; the child goes on. The summary (stdout, JSON) carries what it
// saw, with every line both ways, for tests/conformance/test_acp_v2_subagent.py.
//
//   node v2_subagent.mjs --sleep 33.5 --workspace DIR -- python -m tether acp --provider scripted --script FILE
import { readFileSync } from "node:fs";

import { client } from "@agentclientprotocol/sdk/experimental/v2/unstable";

import { args, processesRunning as running, spawnRecorded, until, WS } from "./v2_wire.mjs";

const SLEEP = args[args.indexOf("--sleep") + 1];
const AGAIN = `34.${SLEEP.split(".")[1]}`;  // the third turn's child command

const summary = { ok: false, permissions: [], bySession: {} };
let context = null;
const { stream, finish } = spawnRecorded();

const app = client({ name: "tether-v2-subagent" })
  .onNotification("session/update", ({ params }) => {
    (summary.bySession[params.sessionId] ??= []).push(params.update);
  })
  .onRequest("session/request_permission", ({ params }) => {
    summary.permissions.push(params);
    const title = params.subject?.toolCall?.title ?? "";
    if (title.includes(`sleep ${SLEEP}`)) {
      // once the child's command runs, cancel the child alone (not awaited: answer first)
      void (async () => {
        summary.runningBefore = await until(() => running(`sleep ${SLEEP}`).length > 0, 10000);
        summary.cancelledChild = params.sessionId;
        await context.notify("session/cancel", { sessionId: params.sessionId });
      })();
    }
    if (title.includes(`sleep ${AGAIN}`)) {
      // once it runs, stop the child's command alone, by its id on the child's session
      void (async () => {
        await until(() => running(`sleep ${AGAIN}`).length > 0, 10000);
        const toolCallId = params.subject.toolCall.toolCallId;
        summary.callCancel = await context.request("tool_call/cancel", { sessionId: params.sessionId, toolCallId });
      })();
    }
    const allow = params.options.find((o) => o.kind === "allow_once");
    return { outcome: { outcome: "selected", optionId: allow.optionId } };
  });

async function untilIdle(s) {
  const seen = [];
  for (;;) {
    const message = await s.nextUpdate();
    seen.push(message.update);
    if (message.kind === "stop") return seen;
  }
}

try {
  await app.connectWith(stream, async (cx) => {
    context = cx;
    await cx.request("initialize", { protocolVersion: 2, info: { name: "tether-v2-subagent", version: "1" }, capabilities: {} });
    const s = await cx.buildSession(WS).start();
    summary.sessionId = s.sessionId;
    await s.prompt("have a sub-agent edit the readme");
    summary.first = await untilIdle(s);
    summary.readme = readFileSync(`${WS}/README.md`, "utf8");
    await s.prompt("have a sub-agent run the slow check");
    summary.second = await untilIdle(s);
    summary.runningAfter = await until(() => running(`sleep ${SLEEP}`).length === 0 ? [] : null, 10000)
      ?? running(`sleep ${SLEEP}`);
    await s.prompt("have a sub-agent run the check once");
    summary.third = await untilIdle(s);
    summary.againAfter = await until(() => running(`sleep ${AGAIN}`).length === 0 ? [] : null, 10000)
      ?? running(`sleep ${AGAIN}`);
  });
  summary.ok = true;
} catch (err) {
  summary.error = String(err && err.stack ? err.stack : err);
} finally {
  await finish(summary);
}
