// The v2 reader (src/core/acp_v2.ts) on the shapes the daemon sends on a v2 connection:
// each becomes what the chat state and view consume on v1, and a patch that does not fit
// the file is shown as text rather than as a wrong diff.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { AcpV2Reader, applyPatch, configOptionsV1, diffV1, permissionParamsV1 } from "../../src/core/acp_v2";
import { PromptEnds } from "../../src/core/acp_v2_session";

const README = "# Sample\n\nHello from the sample workspace.\n";
const PATCH =
  "diff --git a/ws/README.md b/ws/README.md\n--- a/README.md\n+++ b/README.md\n@@ -1,3 +1,3 @@\n # Sample\n \n-Hello from the sample workspace.\n+Hello, edited by Tether.\n";

describe("ACP v2 read into v1's shapes", () => {
  it("a git patch applied to the old text gives the new text; a new file and a missing line end too", () => {
    assert.equal(applyPatch(README, PATCH), "# Sample\n\nHello, edited by Tether.\n");
    assert.equal(applyPatch("", "--- /dev/null\n+++ b/n.txt\n@@ -0,0 +1,2 @@\n+a\n+b\n"), "a\nb\n");
    const noEol = "@@ -1,2 +1,2 @@\n one\n-two\n\\ No newline at end of file\n+TWO\n\\ No newline at end of file\n";
    assert.equal(applyPatch("one\ntwo", noEol), "one\nTWO");
    const far = "@@ -30,1 +30,1 @@\n-line 30\n+line THIRTY\n";
    const long = Array.from({ length: 40 }, (_, i) => `line ${i + 1}\n`).join("");
    assert.equal(applyPatch(long, far), long.replace("line 30\n", "line THIRTY\n"));
  });

  it("a patch that does not fit the text is not applied: the block shows the patch as text", () => {
    assert.equal(applyPatch("# Other\n\nsomething else\n", PATCH), undefined);
    const block = { type: "diff", changes: [{ operation: "modify", path: "/ws/README.md" }], patch: { format: "git_patch", text: PATCH } };
    assert.deepEqual(diffV1(block, () => "changed meanwhile\n"), { type: "content", content: { type: "text", text: PATCH } });
    assert.deepEqual(diffV1(block, () => README), {
      type: "diff", path: "/ws/README.md", oldText: README, newText: "# Sample\n\nHello, edited by Tether.\n",
    });
    const added = { type: "diff", changes: [{ operation: "add", path: "/ws/n.txt" }], patch: { format: "git_patch", text: "@@ -0,0 +1 @@\n+x\n" } };
    assert.deepEqual(diffV1(added, () => assert.fail("a new file has no old text to read")), { type: "diff", path: "/ws/n.txt", newText: "x\n" });
    const deleted = { type: "diff", changes: [{ operation: "delete", path: "/ws/README.md" }] };
    assert.deepEqual(diffV1(deleted, () => README), { type: "diff", path: "/ws/README.md", oldText: README, newText: "" });
  });

  it("config options get v1's names back, choices too", () => {
    const v2 = [{ type: "select", configId: "mode", groupId: "g", name: "Mode", currentValue: "ask", options: [{ value: "ask", name: "Ask", groupId: "g" }] }];
    assert.deepEqual(configOptionsV1(v2), [
      { type: "select", id: "mode", group: "g", name: "Mode", currentValue: "ask", options: [{ value: "ask", name: "Ask", group: "g" }] },
    ]);
  });

  it("updates: the first tool_call_update creates the call, plan, notice, commands, terminal output", () => {
    const reader = new AcpV2Reader(() => README);
    const read = (u: Record<string, unknown>) => reader.read("s1", u);
    const call = { sessionUpdate: "tool_call_update", toolCallId: "c1", title: "run", kind: "execute", status: "pending" };
    assert.deepEqual(read(call), { kind: "update", update: { ...call, sessionUpdate: "tool_call" } });
    const stopped = read({ sessionUpdate: "tool_call_update", toolCallId: "c1", status: "cancelled", capabilities: {} });
    assert.deepEqual(stopped, { kind: "update", update: { sessionUpdate: "tool_call_update", toolCallId: "c1", status: "failed", capabilities: {} } });
    reader.read("s2", call);
    assert.deepEqual(reader.read("s2", call), { kind: "update", update: call }, "a later report patches the call");

    const entries = [{ content: "a", priority: "high", status: "pending" }];
    assert.deepEqual(read({ sessionUpdate: "plan_update", plan: { type: "items", planId: "s1.plan", entries } }), {
      kind: "update", update: { sessionUpdate: "plan", entries },
    });
    assert.deepEqual(read({ sessionUpdate: "notice", severity: "info", title: "memory: 2 messages", _meta: { tether: { memory: { tokens: 3 } } } }), {
      kind: "update",
      update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "memory: 2 messages" }, _meta: { tether: { memory: { tokens: 3 }, notice: true } } },
    });
    const commands = [{ type: "command", name: "compact", description: "d", input: { type: "text", hint: "focus" } }, { type: "command", name: "init", description: "i" }];
    assert.deepEqual(read({ sessionUpdate: "available_commands_update", availableCommands: commands }), {
      kind: "update",
      update: { sessionUpdate: "available_commands_update", availableCommands: [{ name: "compact", description: "d", input: { hint: "focus" } }, { name: "init", description: "i" }] },
    });
    const chunk = read({ sessionUpdate: "terminal_output_chunk", terminalId: "c1", data: Buffer.from("héllo\n").toString("base64") });
    assert.deepEqual(chunk, { kind: "update", update: { sessionUpdate: "tool_call_update", toolCallId: "c1", _meta: { terminal_output: { terminal_id: "c1", data: "héllo\n" } } } });
  });

  it("turn states: idle ends a turn, other states and a live prompt show nothing; a replay shows its prompts", () => {
    const reader = new AcpV2Reader(() => undefined);
    assert.deepEqual(reader.read("s", { sessionUpdate: "state_update", state: "running" }), { kind: "none" });
    assert.deepEqual(reader.read("s", { sessionUpdate: "state_update", state: "idle", stopReason: "cancelled" }), { kind: "ended", outcome: { stopReason: "cancelled" } });
    const prompt = { sessionUpdate: "user_message", messageId: "t.0", content: [{ type: "text", text: "hi" }] };
    assert.deepEqual(reader.read("s", prompt), { kind: "none" });
    reader.startReplay("s");
    assert.deepEqual(reader.read("s", prompt), { kind: "update", update: { sessionUpdate: "user_message_chunk", content: { type: "text", text: "hi" } } });
    assert.deepEqual(reader.read("s", { sessionUpdate: "replay_complete" }), { kind: "none" });
    assert.deepEqual(reader.read("s", { sessionUpdate: "state_update", state: "idle", stopReason: "end_turn" }), { kind: "none" }, "the replay's state is no turn's end");
    reader.endReplay("s");
  });

  it("a turn's end goes to the prompt whose turn it is, also when it arrives before the prompt's answer", async () => {
    const ends = new PromptEnds();
    ends.sent("s", 1);
    ends.began("s", "t1.0");
    assert.equal(ends.ended("s", { stopReason: "end_turn" }), true, "kept for the prompt still unanswered");
    ends.sent("s", -1);
    assert.deepEqual(await ends.wait("t1.0"), { stopReason: "end_turn" });
    ends.began("s", "t2.0");
    const second = ends.wait("t2.0");
    assert.equal(ends.ended("s", { stopReason: "cancelled" }), true);
    assert.deepEqual(await second, { stopReason: "cancelled" });
    ends.began("s", "t3.0");
    assert.equal(ends.ended("s", { stopReason: "end_turn" }), false, "another window's turn: v1's turnEnded");
    const orphan = ends.wait("t4.0");
    ends.failAll(new Error("closed"));
    await assert.rejects(orphan, /closed/);
  });

  it("a message steered into a turn (`<turnId>.s<seq>`) leaves that turn's end to its prompt", async () => {
    const ends = new PromptEnds();
    ends.began("s", "t5.0");
    const first = ends.wait("t5.0");
    ends.began("s", "t5.s3"); // the steered message's user_message, mid-turn
    assert.equal(ends.ended("s", { stopReason: "end_turn" }), true);
    assert.deepEqual(await first, { stopReason: "end_turn" });
  });

  it("a v2 permission request reads as v1's: the subject's call, its diff as whole texts", () => {
    const params = {
      sessionId: "s", title: "Edit README.md", description: "mode ask asks",
      subject: { type: "tool_call", toolCall: { toolCallId: "c", title: "Edit README.md", kind: "edit", content: [{ type: "diff", changes: [{ operation: "modify", path: "/ws/README.md" }], patch: { format: "git_patch", text: PATCH } }] } },
      options: [{ optionId: "allow_once", name: "Allow once", kind: "allow_once" }],
      _meta: { tether: { reason: "mode ask asks", hunks: [] } },
    };
    const v1 = permissionParamsV1(params, () => README);
    assert.equal(v1.toolCall.toolCallId, "c");
    assert.deepEqual(v1.toolCall.content, [{ type: "diff", path: "/ws/README.md", oldText: README, newText: "# Sample\n\nHello, edited by Tether.\n" }]);
    assert.deepEqual(v1.options, params.options);
    assert.deepEqual(v1._meta, params._meta);
  });
});
