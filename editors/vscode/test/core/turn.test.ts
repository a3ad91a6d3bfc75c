// The protocol client, reducer and chat controller against the real `tether serve`
// (scripted model): a streamed turn with a tool call, and cancel; on ACP v2 (the default)
// and on a v1-only daemon (TETHER_ACP_V2=off), the same user-visible flow.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { statusOf, toolCall } from "../../src/core/state";
import type { HostMessage } from "../../src/shared/messages";
import { startChat, textOf, updatesOf, type ChatRig } from "../support/chat";
import { acpVersion, makeSandbox, waitFor, type Sandbox } from "../support/sandbox";

describe("a turn against the real daemon", () => {
  let sandbox: Sandbox;
  let rig: ChatRig;

  before(() => {
    sandbox = makeSandbox();
    rig = startChat(sandbox);
  });
  after(async () => {
    await rig.stop();
    sandbox.cleanup();
  });

  it("initializes as an ACP and LSP client, ACP v2 when the daemon offers it, and lists no sessions yet", async () => {
    await rig.controller.start();
    const client = rig.supervisor.client!;
    const answer = client.initializeAnswer as { protocolVersion: number; capabilities?: unknown; _meta?: { tether?: Record<string, unknown> } };
    assert.equal(client.agentName, "tether");
    assert.equal(answer.protocolVersion, acpVersion());
    assert.equal(client.protocolVersion, acpVersion());
    // the LSP half: at the root of a v1 answer to LSP params (SPEC §2.1), under `_meta.tether.lsp` on v2
    const lsp = (acpVersion() === 2 ? answer._meta?.tether?.lsp : answer) as { capabilities: { experimental?: unknown } };
    assert.deepEqual(lsp.capabilities.experimental, { tether: { protocolVersion: 1 } });
    // a v1-only daemon (acp_v2 = "off") says so (SPEC §12.1)
    assert.deepEqual(answer._meta?.tether?.protocolVersions, acpVersion() === 2 ? [1, 2] : [1]);
    assert.deepEqual(rig.controller.state.sessions, []);
    assert.deepEqual(rig.messages.at(-1), { type: "sessions", sessions: [] });
  });

  it("streams a turn: thinking, text in several chunks, a tool call from pending to completed", async () => {
    const statuses: string[] = [];
    rig.controller.onChange((s) => statuses.push(statusOf(s)));
    const result = await rig.controller.prompt("What does the README say?");
    assert.equal(result?.stopReason, "end_turn");

    const shown = rig.messages.map((m) => m.type);
    assert.ok(shown.indexOf("session") < shown.indexOf("userMessage"), "the session is shown before the prompt");
    assert.ok(shown.indexOf("userMessage") < shown.indexOf("update"), "the prompt is shown before the answer");
    assert.ok(statuses.includes("streaming") && statuses.at(-1) === "idle");

    assert.equal(textOf(rig.messages, "agent_thought_chunk"), "Read the README first.");
    assert.equal(textOf(rig.messages), 'Reading the **README**.The README says hello.\n\n```python\nprint("hello")\n```\n');
    assert.ok(updatesOf(rig.messages, "agent_message_chunk").length > 2, "the answer arrives in chunks");

    // the wire was the daemon's version: v2's turn states, ids and upserts, or v1's
    const kinds = new Set(rig.wire.map((u) => u.sessionUpdate));
    if (acpVersion() === 2) {
      assert.deepEqual(rig.wire.filter((u) => u.sessionUpdate === "state_update").map((u) => u.state), ["running", "idle"]);
      assert.ok(kinds.has("user_message") && !kinds.has("tool_call"), [...kinds].join(", "));
      assert.ok(rig.wire.filter((u) => u.sessionUpdate === "agent_message_chunk").every((u) => typeof u.messageId === "string"));
    } else {
      assert.ok(kinds.has("tool_call") && !kinds.has("state_update") && !kinds.has("user_message"), [...kinds].join(", "));
    }

    const calls = updatesOf(rig.messages).filter((u) => u.toolCallId === "call_read");
    assert.equal(calls[0].sessionUpdate, "tool_call");
    assert.equal(calls[0].status, "pending");
    assert.deepEqual(
      calls.map((u) => u.status).filter(Boolean),
      ["pending", "in_progress", "completed"],
    );

    // the reducer's view of the same turn
    const state = rig.controller.state;
    assert.equal(state.turns.length, 1);
    assert.deepEqual(
      state.turns[0].items.map((i) => i.kind),
      ["user", "thought", "agent", "tool", "agent"],
    );
    const read = toolCall(state, "call_read")!;
    assert.equal(read.title, "Read README.md");
    assert.equal(read.kind, "read");
    assert.equal(read.status, "completed");
    assert.match(JSON.stringify(read.content), /Hello from the sample workspace/);
    assert.deepEqual(read.locations[0], { path: `${sandbox.workspace}/README.md`, line: 1 });
    assert.ok(state.turns[0].context && state.turns[0].context.used > 0, "usage_update folded in");
    assert.equal(state.title, "What does the README say?");

    const ended = rig.messages.find((m) => m.type === "turnEnded") as Extract<HostMessage, { type: "turnEnded" }>;
    assert.equal(ended.stopReason, "end_turn");
    assert.ok((ended.usage?.inputTokens ?? 0) > 0 && (ended.usage?.outputTokens ?? 0) > 0, "usage per turn");
    assert.equal(statusOf(state), "idle");

    const sessions = await waitFor(
      () => rig.controller.state.sessions.find((s) => s.title === "What does the README say?"),
      "the session in the list with its title",
    );
    assert.equal(sessions.sessionId, state.sessionId);
    assert.equal(sessions.cwd, sandbox.workspace);
  });

  it("a reloaded view gets the same transcript, text chunks merged", () => {
    const snapshot = rig.controller.snapshot();
    assert.equal(snapshot[0].type, "init");
    assert.equal(snapshot[1].type, "session");
    assert.equal(textOf(snapshot), textOf(rig.messages));
    assert.ok(updatesOf(snapshot, "agent_message_chunk").length < updatesOf(rig.messages, "agent_message_chunk").length);
    assert.deepEqual(
      snapshot.filter((m) => m.type === "userMessage"),
      [{ type: "userMessage", text: "What does the README say?" }],
    );
  });

  it("cancel stops a streaming turn: the prompt answers cancelled and the status is idle again", async () => {
    const start = rig.messages.length;
    const turn = rig.controller.prompt("slow answer please");
    await waitFor(() => textOf(rig.messages.slice(start)).length > 0, "the first streamed words");
    assert.equal(statusOf(rig.controller.state), "streaming");
    await rig.controller.cancel();
    const result = await turn;
    assert.equal(result?.stopReason, "cancelled");
    const streamed = textOf(rig.messages.slice(start));
    assert.ok(streamed.length < "This answer streams slowly so that it can be stopped part way through, long before it ends.".length);
    assert.equal(statusOf(rig.controller.state), "idle");
    assert.deepEqual(rig.messages.filter((m) => m.type === "turnEnded").at(-1)?.type, "turnEnded");
    assert.equal(rig.controller.state.turns.at(-1)?.stopReason, "cancelled");
  });

  it("a new prompt while a turn runs is queued by the daemon and runs after it", async () => {
    const turn = rig.controller.prompt("slow again");
    await waitFor(() => rig.controller.state.running, "the turn running");
    const start = rig.messages.length;
    const second = rig.controller.prompt("second");
    await waitFor(() => rig.messages.slice(start).some((m) => m.type === "queue" && m.queue.length === 1), "the prompt queued");
    assert.ok(!rig.messages.slice(start).some((m) => m.type === "userMessage"), "shown when its own turn starts");
    await rig.controller.cancel();
    assert.equal((await turn)?.stopReason, "cancelled");
    assert.equal((await second)?.stopReason, "end_turn");
    assert.deepEqual(rig.messages.slice(start).filter((m) => m.type === "userMessage"), [{ type: "userMessage", text: "second" }]);
  });
});
