// The official TypeScript SDK's ACP v2 client retries prompts with an `idempotencyKey`
// (RFD "v2 Idempotency Keys"; 2.4.0 does not know the param, so `cx.request` sends it).
// A slow first turn runs; a keyed prompt sent meanwhile is held, and its retry (held too)
// must get the same `messageId`; after both turns, a retry gets it again, a new key runs a
// new turn, and the same key on a second session is that session's own. The summary
// (stdout, JSON) carries what it saw for tests/conformance/test_acp_v2_idempotency.py.
//
//   node v2_idempotency.mjs --workspace DIR -- python -m tether acp --provider scripted --script examples/v2-idempotency.json
import { client } from "@agentclientprotocol/sdk/experimental/v2/unstable";

import { spawnRecorded, WS } from "./v2_wire.mjs";

const { stream, finish } = spawnRecorded();
const app = client({ name: "tether-v2-idempotency" });

// Updates of `s` until it has gone idle `turns` times.
async function untilIdle(s, turns) {
  const seen = [];
  let idle = 0;
  while (idle < turns) {
    const message = await s.nextUpdate();
    seen.push(message.update);
    if (message.update.sessionUpdate === "state_update" && message.update.state === "idle") idle += 1;
  }
  return seen;
}

const summary = { ok: false };
try {
  await app.connectWith(stream, async (cx) => {
    await cx.request("initialize", { protocolVersion: 2, info: { name: "tether-v2-idempotency", version: "1" }, capabilities: {} });
    const s = await cx.buildSession(WS).start();
    const prompt = (sessionId, text, idempotencyKey) =>
      cx.request("session/prompt", { sessionId, prompt: [{ type: "text", text }], idempotencyKey });
    summary.sessionId = s.sessionId;
    summary.slow = await s.prompt("slow first");
    // sent while the slow turn runs: held; the retry is held with it
    const held = prompt(s.sessionId, "keyed: summarise", "key-1");
    const retryHeld = prompt(s.sessionId, "keyed: summarise", "key-1");
    [summary.held, summary.retryHeld] = await Promise.all([held, retryHeld]);
    summary.during = await untilIdle(s, 2);
    summary.retryAfter = await prompt(s.sessionId, "keyed: summarise", "key-1");
    summary.newKey = await prompt(s.sessionId, "keyed: summarise", "key-2");
    summary.afterNewKey = await untilIdle(s, 1);
    const other = await cx.buildSession(WS).start();
    summary.otherSessionId = other.sessionId;
    summary.otherSession = await prompt(other.sessionId, "keyed: summarise", "key-1");
    summary.other = await untilIdle(other, 1);
    summary.badKey = await prompt(s.sessionId, "keyed: summarise", "").then((r) => ({ answered: r }), (e) => ({ code: e.code, message: e.message }));
  });
  summary.ok = true;
} catch (err) {
  summary.error = String(err && err.stack ? err.stack : err);
} finally {
  await finish(summary);
}
