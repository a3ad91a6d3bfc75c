// The official TypeScript SDK's ACP v2 client (@agentclientprotocol/sdk/experimental/v2)
// drives `tether acp` through one text turn whose edit asks permission (allowed), then
// session/list and session/close. Every line both ways is recorded; the summary (stdout,
// JSON) carries them for tests/conformance/test_acp_v2_typescript_sdk.py to validate.
//
//   node v2_turn.mjs --workspace DIR -- python -m tether acp --provider scripted --script examples/v2-turn.json
import { readFileSync } from "node:fs";
import path from "node:path";

import { client } from "@agentclientprotocol/sdk/experimental/v2/unstable";

import { spawnRecorded, WS } from "./v2_wire.mjs";

const { stream, finish } = spawnRecorded();

const asked = [];
const app = client({ name: "tether-v2-conformance" }).onRequest("session/request_permission", ({ params }) => {
  asked.push(params);
  const allow = params.options.find((o) => o.kind === "allow_once");
  return { outcome: { outcome: "selected", optionId: allow.optionId } };
});

const summary = { ok: false };
try {
  await app.connectWith(stream, async (cx) => {
    const init = await cx.request("initialize", {
      // v1's fs/terminal capabilities are not v2's: a client that still sends them gets no fs/* or
      // terminal/* request (a v2 client has neither method), the daemon reads and writes the disk
      protocolVersion: 2, info: { name: "tether-v2-conformance", version: "1" },
      capabilities: { fs: { readTextFile: true, writeTextFile: true }, terminal: true },
    });
    summary.initialize = init;
    const s = await cx.buildSession(WS).start();
    summary.sessionId = s.sessionId;
    const answer = await s.prompt("edit the readme, please");
    summary.promptAnswer = answer;
    const seen = [];
    for (;;) {
      const message = await s.nextUpdate();
      seen.push(message.update);
      if (message.kind === "stop") break;
    }
    summary.updates = seen;
    summary.text = seen
      .filter((u) => u.sessionUpdate === "agent_message_chunk" && u.content.type === "text")
      .map((u) => u.content.text).join("");
    summary.permissionRequests = asked;
    summary.list = await cx.request("session/list", { cwd: WS });
    summary.close = await cx.request("session/close", { sessionId: s.sessionId });
  });
  summary.readme = readFileSync(path.join(WS, "README.md"), "utf8");
  summary.ok = true;
} catch (err) {
  summary.error = String(err && err.stack ? err.stack : err);
} finally {
  await finish(summary);
}
