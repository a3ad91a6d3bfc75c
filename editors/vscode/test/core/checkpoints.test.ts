// Control while the agent works and a way back, through the chat controller against the
// real daemon (SPEC §3.37, §3.40): prompts queued during a turn (shown, withdrawn, run in
// order), a steered message shown where it landed, "Rewind to here" with its dry run, a
// file changed since refused then overwritten, the session shown again as it now stands,
// and a turn's changed files with diffs.
import assert from "node:assert/strict";
import { readFileSync, writeFileSync, existsSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { HostMessage, RewindPreview } from "../../src/shared/messages";
import { startChat, textOf, updatesOf, type ChatRig } from "../support/chat";
import { makeSandbox, waitFor, type Sandbox } from "../support/sandbox";

type Of<T extends HostMessage["type"]> = Extract<HostMessage, { type: T }>;

function last<T extends HostMessage["type"]>(messages: HostMessage[], type: T): Of<T> | undefined {
  return messages.filter((m): m is Of<T> => m.type === type).at(-1);
}

describe("the prompt queue and steering against the real daemon", () => {
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

  it("queues prompts sent during a turn, withdraws one, steers one in, then runs the rest in order", async () => {
    const start = rig.messages.length;
    const first = rig.controller.prompt("write a note please");
    const approval = await rig.nextPrompt(start); // the turn holds here until we answer
    const one = rig.controller.prompt("hello one");
    const two = rig.controller.prompt("hello two");
    const queued = await waitFor(() => {
      const q = last(rig.messages, "queue");
      return q && q.queue.length === 2 ? q.queue : undefined;
    }, "two queued prompts shown");
    assert.deepEqual(queued.map((q) => q.preview), ["hello one", "hello two"]);
    assert.ok(!rig.messages.some((m) => m.type === "userMessage" && m.text === "hello one"), "shown when its turn starts");
    assert.deepEqual(rig.controller.snapshot().at(-1), { type: "queue", queue: queued }, "a reloaded view shows the queue");

    await rig.controller.dequeue(queued[1].queueId);
    assert.equal((await two)?.stopReason, "cancelled");
    const steered = rig.controller.prompt("and a title", true);
    rig.controller.answerPermission(approval.requestId, { optionId: "allow_once" });

    assert.equal((await first)?.stopReason, "end_turn");
    const steer = (await steered)?._meta as { tether?: { steer?: { landed?: boolean } } } | undefined;
    assert.equal(steer?.tether?.steer?.landed, true);
    assert.equal((await one)?.stopReason, "end_turn");

    const since = rig.messages.slice(start);
    const at = (pred: (m: HostMessage) => boolean) => since.findIndex(pred);
    const landed = at((m) => m.type === "update" && m.update.sessionUpdate === "user_message_chunk");
    const ends = since.map((m, i) => (m.type === "turnEnded" ? i : -1)).filter((i) => i >= 0);
    const oneShown = at((m) => m.type === "userMessage" && m.text === "hello one");
    assert.ok(landed > 0 && landed < ends[0], "the steered message is shown in the running turn");
    const meta = ((since[landed] as Of<"update">).update._meta as { tether: Record<string, unknown> }).tether;
    assert.equal(meta.steered, true);
    assert.equal(meta.afterStep, 1);
    assert.ok(ends[0] < oneShown && oneShown < ends[1], "the queued prompt's turn follows, as its own");
    assert.equal(textOf(since.slice(oneShown)), "Hello from the scripted provider.");
    assert.ok(!since.some((m) => m.type === "userMessage" && m.text === "hello two"), "a withdrawn prompt never runs");
    assert.deepEqual(
      rig.controller.state.turns.map((t) => (t.items[0] as { text?: string }).text),
      ["write a note please", "and a title", "hello one"],
    );
    assert.equal(rig.controller.state.running, false);
    await waitFor(() => last(rig.messages, "queue")?.queue.length === 0, "the queue empty again");
  });
});

describe("rewind and changes against the real daemon", () => {
  let sandbox: Sandbox;
  let rig: ChatRig;
  const texts = ["write a note", "edit the readme"];

  before(() => {
    sandbox = makeSandbox();
    rig = startChat(sandbox, { mode: "full-auto" });
  });
  after(async () => {
    await rig.stop();
    sandbox.cleanup();
  });

  it("shows a turn's changed files with diffs", async () => {
    for (const text of texts) assert.equal((await rig.controller.prompt(text))?.stopReason, "end_turn");
    await rig.controller.showChanges(texts, 1);
    const changes = last(rig.messages, "changes")!;
    assert.equal(changes.turn, 2);
    assert.deepEqual(changes.files.map((f) => [f.path, f.status]), [["README.md", "modified"]]);
    assert.match(changes.files[0].diff, /-Hello from the sample workspace\.\n\+Hello, edited by Tether\./);
    await rig.controller.showChanges(texts, 0);
    assert.deepEqual(last(rig.messages, "changes")!.files.map((f) => [f.path, f.status]), [["notes/todo.txt", "added"]]);
  });

  it("rewinds to here: the dry run lists a file changed since, forced it is overwritten, the chat shows the session as it now stands", async () => {
    const readme = join(sandbox.workspace, "README.md");
    writeFileSync(readme, "# Sample\n\nHello, edited by Tether.\nmine\n");
    await rig.controller.rewindTo(texts, 1, "both");
    const preview: RewindPreview = last(rig.messages, "rewindPreview")!.preview;
    assert.equal(preview.message, "edit the readme");
    assert.deepEqual(preview.restored, ["README.md"]);
    assert.deepEqual(preview.conflicts.map((c) => c.path), ["README.md"]);
    assert.match(preview.conflicts[0].diff, /-mine/);
    assert.ok(preview.hiddenMessages > 0);
    assert.match(readFileSync(readme, "utf8"), /mine/, "a dry run changes nothing");

    const start = rig.messages.length;
    assert.equal(await rig.controller.confirmRewind(preview.token, true), true);
    assert.equal(readFileSync(readme, "utf8"), "# Sample\n\nHello from the sample workspace.\n");
    const since = rig.messages.slice(start);
    assert.equal(since[0].type, "session", "the session is shown again");
    assert.deepEqual(updatesOf(since, "user_message_chunk").map((u) => (u.content as { text: string }).text), ["write a note"]);
    assert.match(last(since, "notice")!.text, /^Rewound \(rewind \d+\); \d+ message\(s\) left the conversation; restored README\.md\.$/);
    assert.equal(await rig.controller.confirmRewind(preview.token, true), false, "a preview is used once");
  });

  it("a files-only rewind with nothing in the way restores the files and keeps the conversation", async () => {
    await rig.controller.rewindTo(["write a note"], 0, "files");
    const preview = last(rig.messages, "rewindPreview")!.preview;
    assert.deepEqual([preview.restored, preview.conflicts], [["notes/todo.txt"], []]);
    const start = rig.messages.length;
    assert.equal(await rig.controller.confirmRewind(preview.token, false), true);
    assert.equal(existsSync(join(sandbox.workspace, "notes", "todo.txt")), false);
    assert.ok(!rig.messages.slice(start).some((m) => m.type === "session"), "the conversation is not reloaded");
  });
});
