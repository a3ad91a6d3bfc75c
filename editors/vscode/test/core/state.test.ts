// The chat state reducer alone: replayed messages with statuses and notices, tool calls
// whose content is replaced, approvals of other sessions, the end of a resumed turn.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { initialState, reduce, statusOf, toolCall, type ChatAction, type ChatState } from "../../src/core/state";
import type { PermissionPrompt } from "../../src/shared/messages";

const S = "sess_a";
const update = (u: Record<string, unknown>): ChatAction => ({ type: "update", sessionId: S, update: u });
const text = (kind: string, t: string, meta?: Record<string, unknown>) =>
  update({ sessionUpdate: kind, content: { type: "text", text: t }, ...(meta ? { _meta: { tether: meta } } : {}) });
const prompt = (requestId: string, sessionId = S): PermissionPrompt => ({
  requestId,
  sessionId,
  toolCallId: "call_edit",
  title: "Edit README.md",
  kind: "edit",
  content: [],
  options: [],
  hunks: [],
});

function run(actions: ChatAction[], from: ChatState = initialState()): ChatState {
  return actions.reduce((state, action) => {
    const before = JSON.stringify(state);
    const next = reduce(state, action);
    assert.equal(JSON.stringify(state), before, `reduce mutated its input on ${JSON.stringify(action)}`);
    return next;
  }, from);
}

describe("the chat state reducer", () => {
  it("a replay: prompts start turns, text runs merge, notices and statuses stay apart", () => {
    const state = run([
      { type: "sessionOpened", sessionId: S, title: "Fix it" },
      text("user_message_chunk", "Fix the bug"),
      update({ sessionUpdate: "user_message_chunk", content: { type: "resource", resource: { uri: "file:///a.py", text: "x = 1" } } }),
      text("agent_thought_chunk", "Think"),
      text("agent_message_chunk", "Partial "),
      text("agent_message_chunk", "answer", { status: "cancelled" }),
      text("agent_message_chunk", "\n[3 earlier messages were summarised]\n", { notice: true }),
      text("user_message_chunk", "Again"),
      text("agent_message_chunk", "Done "),
      text("agent_message_chunk", "now."),
    ]);
    assert.equal(state.turns.length, 2);
    assert.deepEqual(state.turns[0].items, [
      { kind: "user", text: "Fix the bug\nx = 1" },
      { kind: "thought", text: "Think", status: undefined },
      { kind: "agent", text: "Partial ", notice: false, status: undefined },
      { kind: "agent", text: "answer", notice: false, status: "cancelled" },
      { kind: "agent", text: "\n[3 earlier messages were summarised]\n", notice: true, status: undefined },
    ]);
    assert.deepEqual(state.turns[1].items, [
      { kind: "user", text: "Again" },
      { kind: "agent", text: "Done now.", notice: false, status: undefined },
    ]);
    assert.equal(statusOf(state), "idle");
  });

  it("tool calls: fields merge, content is replaced, approvedBy is kept; ids are per turn", () => {
    const state = run([
      { type: "sessionOpened", sessionId: S, title: null },
      { type: "prompted", text: "run it" },
      update({ sessionUpdate: "tool_call", toolCallId: "c1", title: "run_command", kind: "execute", status: "pending" }),
      update({ sessionUpdate: "tool_call_update", toolCallId: "c1", title: "Run `make`", rawInput: { command: "make" } }),
      update({ sessionUpdate: "tool_call_update", toolCallId: "c1", status: "in_progress", _meta: { tether: { approvedBy: "allowed by mode full-auto" } } }),
      update({ sessionUpdate: "tool_call_update", toolCallId: "c1", content: [{ type: "content", content: { type: "text", text: "a\n" } }] }),
      update({ sessionUpdate: "tool_call_update", toolCallId: "c1", content: [{ type: "content", content: { type: "text", text: "a\nb\n" } }] }),
      update({ sessionUpdate: "tool_call_update", toolCallId: "c1", status: "completed", locations: [{ path: "/w/Makefile", line: 1 }] }),
      update({ sessionUpdate: "plan", entries: [{ content: "Build", priority: "high", status: "completed" }] }),
      update({ sessionUpdate: "usage_update", used: 300, size: 1000 }),
      { type: "turnEnded", stopReason: "end_turn", usage: { inputTokens: 10, outputTokens: 2 } },
      { type: "prompted", text: "again" },
      update({ sessionUpdate: "tool_call", toolCallId: "c1", title: "read_file", kind: "read", status: "pending" }),
    ]);
    const first = state.turns[0].toolCalls.c1;
    assert.deepEqual(first, {
      toolCallId: "c1",
      title: "Run `make`",
      kind: "execute",
      status: "completed",
      content: [{ type: "content", content: { type: "text", text: "a\nb\n" } }],
      locations: [{ path: "/w/Makefile", line: 1 }],
      rawInput: { command: "make" },
      approvedBy: "allowed by mode full-auto",
    });
    assert.deepEqual(state.turns[0].items.map((i) => i.kind), ["user", "tool"]);
    assert.deepEqual(state.turns[0].context, { used: 300, size: 1000 });
    assert.deepEqual(state.turns[0].usage, { inputTokens: 10, outputTokens: 2 });
    assert.equal(state.turns[0].stopReason, "end_turn");
    assert.deepEqual(state.plan, [{ content: "Build", priority: "high", status: "completed" }]);
    assert.equal(toolCall(state, "c1")?.kind, "read", "the newest turn's call of that id");
    assert.equal(statusOf(state), "streaming");
  });

  it("approvals: waiting only for the shown session; prompts stay open while another session is shown", () => {
    let state = run([{ type: "sessionOpened", sessionId: S, title: null }, { type: "permissionAsked", prompt: prompt("tether-1", "sess_other") }]);
    assert.equal(statusOf(state), "idle");
    state = run([{ type: "permissionAsked", prompt: prompt("tether-2") }], state);
    assert.equal(statusOf(state), "waiting");
    assert.equal(state.running, true, "a prompt comes from a running turn, also a resumed one");
    state = run([{ type: "permissionClosed", requestId: "tether-2" }], state);
    assert.equal(statusOf(state), "streaming");
    state = run([{ type: "sessionOpened", sessionId: "sess_other", title: null, running: true }], state);
    assert.equal(statusOf(state), "waiting", "switching to a session whose prompt is still open");
    assert.equal(state.running, true);
    state = run([{ type: "sessionOpened", sessionId: "sess_b", title: null }], state);
    assert.deepEqual(state.pending.map((p) => p.requestId), ["tether-1"], "prompts stay open while another session is shown");
    assert.equal(statusOf(state), "idle");
  });

  it("a resumed turn ends with session_info_update turnEnded; titles update the session list", () => {
    const state = run([
      { type: "sessions", sessions: [{ sessionId: S, updatedAt: null, cwd: "/w" }] },
      { type: "sessionOpened", sessionId: S, title: null },
      { type: "permissionAsked", prompt: prompt("tether-1") },
      { type: "permissionClosed", requestId: "tether-1" },
      update({ sessionUpdate: "session_info_update", title: "Edit the notes" }),
      update({ sessionUpdate: "session_info_update", _meta: { tether: { turnEnded: { turnId: "turn_1", stopReason: "end_turn" } } } }),
      { type: "update", sessionId: "sess_elsewhere", update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "not shown" } } },
    ]);
    assert.equal(state.running, false);
    assert.equal(state.title, "Edit the notes");
    assert.equal(state.sessions[0].title, "Edit the notes");
    assert.ok(!JSON.stringify(state.turns).includes("not shown"), "other sessions' updates are not shown");
    assert.equal(statusOf(state), "idle");
  });
});
