// Control while the agent works and a way back, in the chat webview (SPEC §3.37, §3.40):
// queued prompts with a withdraw button, Send queueing and Alt+Enter / "Send into the
// running turn" steering while a turn runs, a steered message shown where it landed,
// "Rewind to here" and its confirmation (the files it restores, a changed file with its
// diff and the choice to overwrite it), and a turn's "Files changed" with diffs.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { Harness, fixture } from "./harness.mjs";

let harness;
before(async () => {
  harness = await Harness.start();
});
after(async () => {
  await harness?.close();
});

async function chat() {
  const view = await harness.open();
  const [init, session] = fixture("chat").slice(0, 2).map((e) => e.host);
  await view.send(init, session);
  return { view, sessionId: session.sessionId };
}

const text = (t) => ({ type: "text", text: t });

test("queued prompts are listed with a withdraw button; Send queues and Alt+Enter steers while a turn runs", async () => {
  const { view, sessionId } = await chat();
  await view.send({ type: "userMessage", text: "write a note" }, { type: "status", status: "streaming" });
  const input = view.page.locator("textarea.prompt-input");
  await input.fill("hello one");
  assert.deepEqual(await view.postedBy(() => input.press("Enter")), { type: "prompt", text: "hello one" });
  await input.fill("and a title");
  assert.deepEqual(await view.postedBy(() => input.press("Alt+Enter")), { type: "prompt", text: "and a title", steer: true });
  await input.fill("also the changelog");
  assert.deepEqual(await view.postedBy(() => view.page.locator("vscode-button.steer").click()), {
    type: "prompt", text: "also the changelog", steer: true,
  });

  const queue = [
    { queueId: "q1", preview: "hello one", queuedAt: 1764108000.5, state: "queued" },
    { queueId: "q2", preview: "hello two", queuedAt: 1764108001.5, state: "queued" },
  ];
  await view.send({ type: "queue", queue });
  const items = view.page.locator("ol.queue li.queued");
  assert.deepEqual(await items.locator(".queue-preview").allInnerTexts(), ["hello one", "hello two"]);
  assert.ok(await view.page.locator("ol.queue").isVisible());
  await view.screenshot("queue");
  assert.deepEqual(await view.postedBy(() => items.nth(1).locator("button.queue-withdraw").click()), { type: "dequeue", queueId: "q2" });

  // the steered message, shown in the running turn where it landed
  await view.send({
    type: "update", sessionId,
    update: { sessionUpdate: "user_message_chunk", content: text("and a title"), _meta: { tether: { steered: true, afterStep: 1, turnId: "turn_72dc820ad1ff434a", messageSeq: 3 } } },
  });
  const users = view.page.locator(".entry.user");
  assert.deepEqual(await users.locator(".entry-author").allInnerTexts(), ["You", "You · steered in after step 1"]);
  assert.deepEqual(await users.locator(".plain").allInnerTexts(), ["write a note", "and a title"]);
  await view.send({ type: "queue", queue: [] }, { type: "status", status: "idle" });
  assert.equal(await view.page.locator("ol.queue").isVisible(), false);
  assert.equal(await view.page.locator("vscode-button.send").innerText(), "Send");
  await view.assertClean();
  await view.close();
});

test("rewind to here asks with the files it restores, a changed file can be overwritten; files changed shows diffs", async () => {
  const { view, sessionId } = await chat();
  await view.send(
    { type: "userMessage", text: "write a note" },
    { type: "update", sessionId, update: { sessionUpdate: "agent_message_chunk", content: text("Written.") } },
    { type: "turnEnded", stopReason: "end_turn" },
    { type: "userMessage", text: "edit the readme" },
    { type: "update", sessionId, update: { sessionUpdate: "agent_message_chunk", content: text("Done.") } },
    { type: "turnEnded", stopReason: "end_turn" },
  );
  const users = view.page.locator(".entry.user");
  assert.deepEqual(await view.postedBy(() => users.nth(1).locator("button.rewind-here").click()), {
    type: "rewind", texts: ["write a note", "edit the readme"], index: 1, restore: "both",
  });

  const diff = "--- a/README.md\n+++ b/README.md\n@@ -1,4 +1,3 @@\n # Sample\n \n-Hello, edited by Tether.\n-mine\n+Hello from the sample workspace.\n";
  await view.send({
    type: "rewindPreview",
    preview: { token: "rewind-1", message: "edit the readme", restore: "both", restored: ["README.md"], conflicts: [{ path: "README.md", diff }], skipped: [], hiddenMessages: 4 },
  });
  const card = view.page.locator(".rewind-confirm");
  assert.equal(await card.locator(".card-title").innerText(), "Rewind the conversation and the files to before “edit the readme”?");
  assert.equal(await card.locator(".rewind-hidden").innerText(), "4 message(s) leave the conversation (they stay stored).");
  assert.deepEqual(await card.locator(".rewind-restored li").allInnerTexts(), ["README.md"]);
  assert.equal(await card.locator(".rewind-conflicts .path").innerText(), "README.md");
  assert.equal(await card.locator(".rewind-conflicts pre.diff").textContent(), diff);
  await view.screenshot("rewind-confirm");
  const confirm = card.locator("vscode-button.rewind-confirm-button");
  assert.equal(await confirm.innerText(), "Overwrite and rewind");
  assert.deepEqual(await view.postedBy(() => confirm.click()), { type: "rewindConfirm", token: "rewind-1", force: true });
  assert.equal(await card.count(), 0, "the card goes once answered");

  await view.send({
    type: "rewindPreview",
    preview: { token: "rewind-2", message: "write a note", restore: "files", restored: ["notes/todo.txt"], conflicts: [], skipped: [], hiddenMessages: 0 },
  });
  assert.equal(await card.locator("vscode-button.rewind-confirm-button").innerText(), "Rewind");
  assert.equal(await card.locator(".rewind-hidden").count(), 0, "a files-only rewind keeps the conversation");
  assert.deepEqual(await view.postedBy(() => card.locator("vscode-button.rewind-cancel-button").click()), { type: "rewindCancel", token: "rewind-2" });

  await view.send({ type: "notice", text: "Rewound (rewind 1); 4 message(s) left the conversation; restored README.md." });
  assert.equal(await view.page.locator(".entry.notice").last().innerText(), "Rewound (rewind 1); 4 message(s) left the conversation; restored README.md.");

  assert.deepEqual(await view.postedBy(() => users.nth(0).locator("button.files-changed").click()), {
    type: "changes", texts: ["write a note", "edit the readme"], index: 0,
  });
  await view.send({
    type: "changes", turn: 1,
    files: [{ path: "notes/todo.txt", status: "added", diff: "--- /dev/null\n+++ b/notes/todo.txt\n@@ -0,0 +1 @@\n+remember\n", turns: [1] }],
  });
  const changes = view.page.locator(".changes-card");
  assert.match(await changes.locator(".card-title").innerText(), /^Files changed by turn 1/);
  assert.equal(await changes.locator(".changed-file summary").innerText(), "added notes/todo.txt");
  assert.match(await changes.locator("pre.diff").textContent(), /\+remember/);
  await view.screenshot("files-changed");
  await changes.locator("button.changes-close").click();
  assert.equal(await changes.count(), 0);
  await view.assertClean();
  await view.close();
});
