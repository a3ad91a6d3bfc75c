// Approvals through the protocol client against the real daemon (mode `ask`):
// accept an edit (applied through workspace/applyEdit), reject a command, keep one hunk
// of two, a prompt withdrawn by cancel, live command output, and one command stopped alone.
import assert from "node:assert/strict";
import { readFileSync, existsSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { diffBlocks, commandText } from "../../src/core/permissions";
import { statusOf, toolCall } from "../../src/core/state";
import type { HostMessage } from "../../src/shared/messages";
import { startChat, updatesOf, type ChatRig } from "../support/chat";
import { acpVersion, makeSandbox, waitFor, type Sandbox } from "../support/sandbox";

describe("approvals against the real daemon", () => {
  let sandbox: Sandbox;
  let rig: ChatRig;

  before(() => {
    sandbox = makeSandbox();
    rig = startChat(sandbox, { mode: "ask" });
  });
  after(async () => {
    await rig.stop();
    sandbox.cleanup();
  });

  it("accepting an edit applies it through workspace/applyEdit", async () => {
    const start = rig.messages.length;
    const turn = rig.controller.prompt("edit the readme please");
    const prompt = await rig.nextPrompt(start);

    assert.match(prompt.requestId, /^tether-\d+$/);
    assert.equal(prompt.toolCallId, "call_edit");
    assert.equal(prompt.kind, "edit");
    assert.equal(prompt.reason, "mode ask asks before editing README.md");
    assert.deepEqual(
      prompt.options.map((o) => o.optionId),
      ["allow_once", "allow_always", "reject_once", "reject_always"],
    );
    const readme = join(sandbox.workspace, "README.md");
    assert.deepEqual(diffBlocks(prompt), [
      {
        type: "diff",
        path: readme,
        oldText: "# Sample\n\nHello from the sample workspace.\n",
        newText: "# Sample\n\nHello, edited by Tether.\n",
      },
    ]);
    assert.deepEqual(prompt.hunks, [{ path: readme, index: 0, header: "@@ -1,3 +1,3 @@" }]);
    assert.equal(statusOf(rig.controller.state), "waiting");
    assert.deepEqual(rig.asked.at(-1), prompt, "the editor adapter hears of it too");
    // the file is untouched until the user accepts
    assert.equal(readFileSync(readme, "utf8"), "# Sample\n\nHello from the sample workspace.\n");

    assert.equal(rig.controller.answerPermission(prompt.requestId, { optionId: "allow_once" }), true);
    assert.equal((await turn)?.stopReason, "end_turn");

    assert.ok(rig.messages.slice(start).some((m) => m.type === "permissionClosed" && m.requestId === prompt.requestId));
    const edit = rig.edits.at(-1)!;
    assert.equal(edit.label, "Tether: edit README.md");
    assert.equal(readFileSync(readme, "utf8"), "# Sample\n\nHello, edited by Tether.\n");
    const call = toolCall(rig.controller.state, "call_edit")!;
    assert.equal(call.status, "completed");
    assert.equal(call.approvedBy, "allowed by the user, once");
    assert.equal(statusOf(rig.controller.state), "idle");
    // answering twice (card and diff editor) is harmless
    assert.equal(rig.controller.answerPermission(prompt.requestId, { optionId: "reject_once" }), false);
  });

  it("rejecting a command fails the call and the turn goes on", async () => {
    const start = rig.messages.length;
    const turn = rig.controller.prompt("run the tests");
    const prompt = await rig.nextPrompt(start);
    assert.equal(prompt.kind, "execute");
    assert.equal(commandText(prompt), "$ echo testing && echo all passed\n(in .)");
    assert.deepEqual(prompt.hunks, []);
    rig.controller.answerPermission(prompt.requestId, { optionId: "reject_once" });
    assert.equal((await turn)?.stopReason, "end_turn");
    const call = toolCall(rig.controller.state, "call_run")!;
    assert.equal(call.status, "failed");
    assert.match(JSON.stringify(call.content), /the user rejected running/);
    assert.match(JSON.stringify(updatesOf(rig.messages.slice(start), "agent_message_chunk")), /Ran them\./);
  });

  it("keeping one hunk of two writes only that hunk", async () => {
    const start = rig.messages.length;
    const turn = rig.controller.prompt("two hunks please");
    const prompt = await rig.nextPrompt(start);
    const long = join(sandbox.workspace, "long.txt");
    assert.deepEqual(
      prompt.hunks.map((h) => [h.path, h.index]),
      [
        [long, 0],
        [long, 1],
      ],
    );
    rig.controller.answerPermission(prompt.requestId, { optionId: "allow_once", acceptedHunks: { [long]: [1] } });
    assert.equal((await turn)?.stopReason, "end_turn");
    const text = readFileSync(long, "utf8");
    assert.match(text, /^line 2$/m, "the first hunk was not applied");
    assert.match(text, /^line THIRTY$/m, "the second hunk was applied");
    const call = toolCall(rig.controller.state, "call_hunks")!;
    assert.match(JSON.stringify(call.content), /The user kept hunk 2 of 2 in long.txt/);
  });

  it("cancel while a prompt waits withdraws it: the card closes and nothing is written", async () => {
    const start = rig.messages.length;
    const turn = rig.controller.prompt("write a note");
    const prompt = await rig.nextPrompt(start);
    await rig.controller.cancel();
    assert.equal((await turn)?.stopReason, "cancelled");
    await waitFor(
      () => rig.messages.slice(start).some((m) => m.type === "permissionClosed" && m.requestId === prompt.requestId),
      "the withdrawn prompt to close",
    );
    assert.deepEqual(rig.controller.state.pending, []);
    assert.equal(existsSync(join(sandbox.workspace, "notes", "todo.txt")), false);
    const call = toolCall(rig.controller.state, "call_write")!;
    assert.equal(call.status, "failed");
    assert.match(JSON.stringify(call.content), /not run: the turn was cancelled/);
    assert.equal(statusOf(rig.controller.state), "idle");
  });

  it("an allowed command streams its output into the tool card", async () => {
    const start = rig.messages.length;
    const turn = rig.controller.prompt("stream output");
    const prompt = await rig.nextPrompt(start);
    rig.controller.answerPermission(prompt.requestId, { optionId: "allow_once" });
    assert.equal((await turn)?.stopReason, "end_turn");
    const outputs = updatesOf(rig.messages.slice(start), "tool_call_update")
      .filter((u) => u.toolCallId === "call_stream" && !u.status && Array.isArray(u.content))
      .map((u) => JSON.stringify(u.content));
    assert.ok(outputs.length >= 2, `live output updates: ${outputs.length}`);
    assert.match(outputs[0], /line1/);
    assert.doesNotMatch(outputs[0], /line3/);
    const call = toolCall(rig.controller.state, "call_stream")!;
    assert.equal(call.status, "completed");
    assert.match(JSON.stringify(call.content), /line1\\nline2\\nline3\\nexit code 0/);
  });

  it("the Stop of a running command's card stops that command alone: the turn goes on", async () => {
    const start = rig.messages.length;
    const turn = rig.controller.prompt("run something long");
    rig.controller.answerPermission((await rig.nextPrompt(start)).requestId, { optionId: "allow_once" });
    await waitFor(() => /started/.test(JSON.stringify(toolCall(rig.controller.state, "call_long")?.content ?? [])), "the command's first output");
    const running = updatesOf(rig.messages.slice(start), "tool_call_update").find((u) => u.toolCallId === "call_long" && u.status === "in_progress")!;
    // what shows the card's Stop: v2 says the call can be stopped; v1 has no marker (a command can)
    assert.deepEqual(running.capabilities, acpVersion() === 2 ? { cancel: {} } : undefined);
    assert.equal(rig.controller.handleViewMessage({ type: "cancelToolCall", toolCallId: "call_long" }), true);
    assert.equal((await turn)?.stopReason, "end_turn");
    const call = toolCall(rig.controller.state, "call_long")!;
    assert.equal(call.status, "failed"); // v2's `cancelled`, in v1's words
    assert.match(JSON.stringify(call.content), /cancelled by the user/);
    assert.ok(rig.messages.slice(start).some((m) => m.type === "update" && JSON.stringify(m.update).includes("Stopped it.")), "the turn went on");
    assert.ok(!rig.messages.slice(start).some((m) => m.type === "error"), "no error shown");
  });

  it("an approval stays open while another session is shown, and is shown again on return", async () => {
    const first = rig.controller.state.sessionId!;
    const start = rig.messages.length;
    const turn = rig.controller.prompt("run the tests");
    const asked = await rig.nextPrompt(start);

    const other = await rig.controller.newSession();
    assert.ok(other && other !== first);
    assert.equal(statusOf(rig.controller.state), "idle", "the new session is not waiting");
    // sessions run independently: this one answers while the other waits
    assert.equal((await rig.controller.prompt("hello there"))?.stopReason, "end_turn");

    const back = rig.messages.length;
    assert.equal(await rig.controller.loadSession(first), true);
    const again = rig.messages.slice(back).find((m) => m.type === "permission");
    assert.deepEqual(again, { type: "permission", prompt: asked });
    assert.equal(statusOf(rig.controller.state), "waiting");
    rig.controller.answerPermission(asked.requestId, { optionId: "allow_once" });
    assert.equal((await turn)?.stopReason, "end_turn");
    assert.equal(toolCall(rig.controller.state, "call_run")?.status, "completed");
    assert.equal(statusOf(rig.controller.state), "idle");
  });

  it("mode changes reach the daemon: in auto-edit an edit runs without asking", async () => {
    await rig.controller.setMode("auto-edit");
    assert.equal(rig.controller.state.modeId, "auto-edit");
    // the mode picker among the options shows it too (on v2 the mode is that option)
    await waitFor(() => rig.controller.option("mode")?.currentValue === "auto-edit", "the mode option to follow");
    assert.deepEqual(
      rig.messages.filter((m): m is Extract<HostMessage, { type: "mode" }> => m.type === "mode").at(-1),
      { type: "mode", modeId: "auto-edit" },
    );
    const asked = rig.asked.length;
    const result = await rig.controller.prompt("write a note");
    assert.equal(result?.stopReason, "end_turn");
    assert.equal(readFileSync(join(sandbox.workspace, "notes", "todo.txt"), "utf8"), "remember\n");
    const created = rig.edits.at(-1)!.edit.documentChanges![0];
    assert.deepEqual(created, {
      kind: "create",
      uri: `file://${sandbox.workspace}/notes/todo.txt`,
      options: { ignoreIfExists: true },
    });
    assert.equal(toolCall(rig.controller.state, "call_write")?.approvedBy, "allowed by mode auto-edit");
    assert.equal(rig.asked.length, asked);
  });
});
