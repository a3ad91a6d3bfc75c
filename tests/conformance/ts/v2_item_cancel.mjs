// The official TypeScript SDK's ACP v2 client stops one running tool call: a `sleep`
// command (approved) advertises `capabilities.cancel`, the client calls
// `cancelToolCall()` once the command's process runs, and reads the turn on to idle.
// Then it cancels calls that cannot be (finished, never run, not cancellable), and, in a
// second turn, stops a command by its terminal (the SDK's `cancelTerminal()`, once the
// terminal's `terminal_update` advertised cancel; the client declared
// `_meta.terminal_output`). The summary (stdout, JSON) carries what it saw, with every
// line both ways, for tests/conformance/test_acp_v2_item_cancel.py.
//
//   node v2_item_cancel.mjs --sleeps 31.25,32.75 --workspace DIR -- python -m tether acp --provider scripted --script examples/v2-item-cancel.json
import { client } from "@agentclientprotocol/sdk/experimental/v2/unstable";

import { args, processesRunning, spawnRecorded, until, WS } from "./v2_wire.mjs";

// The two commands' `sleep` durations (`--sleeps 31.x,32.y`, unique to the run): their
// processes are found by them, never another run's beside this one.
const [firstSleep, secondSleep] = args[args.indexOf("--sleeps") + 1].split(",");

async function failure(promise) {
  try {
    return { answered: await promise };
  } catch (err) {
    return { code: err.code, message: err.message, data: err.data };
  }
}

const { stream, finish } = spawnRecorded();

const app = client({ name: "tether-v2-item-cancel" }).onRequest("session/request_permission", ({ params }) => {
  const allow = params.options.find((o) => o.kind === "allow_once");
  return { outcome: { outcome: "selected", optionId: allow.optionId } };
});

// Read updates until the call `callId` advertises cancel and `marker`'s process runs; then
// `stop()`; then read on to idle. What was seen, and when, goes into the summary.
async function stopMidRun(s, callId, marker, stop) {
  const seen = [];
  const out = { updates: seen };
  for (;;) {
    const message = await s.nextUpdate();
    seen.push(message.update);
    const u = message.update;
    if (u.sessionUpdate === "tool_call_update" && u.toolCallId === callId && u.capabilities?.cancel && !out.answer) {
      out.advertised = u;
      out.runningBefore = await until(() => processesRunning(marker).length > 0 && processesRunning(marker), 10000);
      out.sdkSaysCancellable = s.canCancelToolCall(callId);
      const asked = Date.now();
      out.answer = await stop(u);
      out.askedAt = asked;
    }
    if (u.sessionUpdate === "tool_call_update" && u.toolCallId === callId && ["cancelled", "completed", "failed"].includes(u.status)) {
      out.final = u;
      out.endedAfterMs = Date.now() - out.askedAt;
      // a sandboxed command's inner processes die with the sandbox's leader, a moment later
      out.runningAfter = await until(() => processesRunning(marker).length === 0 ? [] : null, 10000) ?? processesRunning(marker);
    }
    if (message.kind === "stop") break;
  }
  return out;
}

const summary = { ok: false };
try {
  await app.connectWith(stream, async (cx) => {
    summary.initialize = await cx.request("initialize", {
      protocolVersion: 2, info: { name: "tether-v2-item-cancel", version: "1" },
      capabilities: { _meta: { terminal_output: true } },
    });
    const s = await cx.buildSession(WS).start();
    summary.sessionId = s.sessionId;
    await s.prompt("run the slow check");
    summary.first = await stopMidRun(s, "call_sleep", `sleep ${firstSleep}`, () => s.cancelToolCall("call_sleep"));
    summary.sdkSaysCancellableAfter = s.canCancelToolCall("call_sleep");
    const cancel = (toolCallId) => cx.request("tool_call/cancel", { sessionId: s.sessionId, toolCallId });
    summary.finished = await failure(cancel("call_sleep"));
    summary.notCancellable = await failure(cancel("call_read"));
    summary.unknown = await failure(cancel("call_never"));
    await s.prompt("once more");
    // by its terminal, through the SDK's own cancelTerminal(): it sends terminal/cancel only
    // for a terminal whose terminal_update advertised capabilities.cancel
    summary.second = await stopMidRun(s, "call_again", `sleep ${secondSleep}`, (u) => {
      const terminal = (u.content || []).find((c) => c.type === "terminal");
      summary.sdkSaysTerminalCancellable = s.canCancelTerminal(terminal.terminalId);
      return s.cancelTerminal(terminal.terminalId);
    });
    summary.sdkSaysTerminalCancellableAfter = s.canCancelTerminal("call_again");
    summary.terminalGone = await failure(
      cx.request("terminal/cancel", { sessionId: s.sessionId, terminalId: "call_again" }));
  });
  summary.ok = true;
} catch (err) {
  summary.error = String(err && err.stack ? err.stack : err);
} finally {
  await finish(summary);
}
