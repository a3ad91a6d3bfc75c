// The official TypeScript SDK's ACP v2 client steers a message into the running turn
// (`_meta.tether.steer` on `session/prompt`, SPEC §12.7): sent while the turn's first step
// waits for its approval, it is answered once it landed at the next step boundary with
// `{messageId: "<turnId>.s<seq>"}`, and the turn shows it as a `user_message` under that id.
// The summary (stdout, JSON) carries what it saw, with every line both ways, for
// tests/conformance/test_acp_v2_steer.py.
//
//   node v2_steer.mjs --workspace DIR -- python -m tether acp --provider scripted --script examples/approvals.json
import { client } from "@agentclientprotocol/sdk/experimental/v2/unstable";

import { spawnRecorded, WS } from "./v2_wire.mjs";

const summary = { ok: false };
let steer = null;
let steerSettled = false;
let session = null;
let context = null;
const { stream, finish } = spawnRecorded();

const app = client({ name: "tether-v2-steer" }).onRequest("session/request_permission", async ({ params }) => {
  if (steer === null) {  // the first step waits here: steer into it, then let it go on
    steer = context.request("session/prompt", {
      sessionId: session.sessionId, prompt: [{ type: "text", text: "and a title" }], _meta: { tether: { steer: true } },
    });
    steer.then(() => { steerSettled = true; }, () => { steerSettled = true; });
    await new Promise((r) => setTimeout(r, 200));
    summary.steerAnsweredBeforeBoundary = steerSettled;  // the step's call has no result yet
  }
  const allow = params.options.find((o) => o.kind === "allow_once");
  return { outcome: { outcome: "selected", optionId: allow.optionId } };
});

try {
  await app.connectWith(stream, async (cx) => {
    context = cx;
    await cx.request("initialize", { protocolVersion: 2, info: { name: "tether-v2-steer", version: "1" }, capabilities: {} });
    session = await cx.buildSession(WS).start();
    summary.promptAnswer = await session.prompt("write a note");
    summary.updates = [];
    for (;;) {
      const message = await session.nextUpdate();
      summary.updates.push(message.update);
      if (message.kind === "stop") break;
    }
    summary.steerAnswer = await steer;
  });
  summary.ok = true;
} catch (err) {
  summary.error = String(err && err.stack ? err.stack : err);
} finally {
  await finish(summary);
}
