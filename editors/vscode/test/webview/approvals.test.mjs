// Approvals in the tool cards, from recorded permission prompts: a command (command and
// directory shown, Allow once, then its live output), a one-hunk edit (Review diff, Accept)
// and a two-hunk edit where the user keeps only the second hunk.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { Harness, Playback, fixture, isUpdate } from "./harness.mjs";

let harness;
before(async () => {
  harness = await Harness.start();
});
after(async () => {
  await harness?.close();
});

const buttonTexts = (card) => card.locator("vscode-button.approval-option").allInnerTexts();

test("a command asks with its command and directory; Allow once posts the answer; output streams in", async () => {
  const view = await harness.open();
  const play = new Playback(view, fixture("command"));
  await play.untilView(); // the prompt, sent
  const answer = await play.untilView();
  assert.equal(answer.type, "permission");

  const card = view.page.locator('.tool[data-tool-call-id="call_run"]');
  const approval = card.locator(".approval");
  assert.equal(await approval.getAttribute("data-request-id"), answer.requestId);
  assert.match(await approval.locator(".approval-reason").innerText(), /^mode ask asks before running/);
  assert.equal(
    await approval.locator("pre.approval-command").textContent(),
    "$ for i in 1 2 3; do echo line$i; sleep 0.3; done\n(in .)",
  );
  // a sandboxed command: the network is a separate, explicit choice (an option past the four ACP kinds)
  assert.deepEqual(await buttonTexts(card), ["Allow once", "Always", "Reject", "Reject always", "Allow once, with network"]);
  assert.equal(await card.locator("vscode-checkbox").count(), 0);
  assert.equal(await view.page.locator(".status-text").innerText(), "Waiting for your approval");
  // what "Always" would store, before it is pressed: a loop is no plain command, so nothing
  assert.equal(await approval.locator(".approval-always").innerText(),
    "Allow this once (no rule can cover it: not a plain list of words)");
  assert.ok(await view.page.locator("vscode-button.stop").isVisible());
  await view.screenshot("approval-command");

  const posted = await view.postedBy(() => card.locator('vscode-button[data-option-id="allow_once"]').click());
  assert.deepEqual(posted, { type: "permission", requestId: answer.requestId, optionId: "allow_once" });
  assert.deepEqual(posted, answer);

  await play.until((m) => m.type === "permissionClosed");
  assert.equal(await card.locator(".approval").count(), 0, "permissionClosed removes the buttons");
  assert.equal(await view.page.locator("vscode-button.approval-option").count(), 0);

  await play.until(isUpdate("tool_call_update", (u) => u.status === "in_progress"));
  assert.equal(await card.locator("vscode-badge").innerText(), "running");
  assert.equal(await card.locator(".tool-approved-by").innerText(), "allowed by the user, once");

  // live output: each update replaces the output so far
  const output = card.locator("details.tool-output");
  await play.until(isUpdate("tool_call_update", (u) => u.content?.[0]?.content?.text === "line1\n"));
  assert.equal(await output.getAttribute("open"), "", "a running command's output is open");
  assert.equal(await output.locator("pre").textContent(), "line1\n");
  await play.until(isUpdate("tool_call_update", (u) => u.content?.[0]?.content?.text === "line1\nline2\n"));
  assert.equal(await output.locator("pre").textContent(), "line1\nline2\n");
  assert.equal(await output.locator("summary").innerText(), "Output · 2 lines");
  await view.screenshot("command-live-output");

  await play.until(isUpdate("tool_call_update", (u) => u.status === "completed"));
  assert.equal(await card.locator("vscode-badge").innerText(), "done");
  assert.match(await output.locator("pre").textContent(), /^line1\nline2\nline3\nexit code 0/);
  assert.match(await output.locator("summary").innerText(), /Output · 4 lines/);
  await play.untilView();
  assert.ok(play.done);
  assert.equal(await view.page.locator(".entry.agent").last().innerText(), "All three lines printed.");
  await view.assertClean();
  await view.close();
});

test("a one-hunk edit: Review diff opens the diff, Accept posts allow_once without hunks", async () => {
  const view = await harness.open();
  const play = new Playback(view, fixture("edit"));
  await play.untilView();
  const card = view.page.locator('.tool[data-tool-call-id="call_edit"]');
  // the preview's file, from the diff content sent before the prompt
  await play.until(isUpdate("tool_call_update", (u) => u.content?.[0]?.type === "diff"));
  assert.equal(await card.locator(".tool-diffs .location").innerText(), "README.md");
  assert.equal(await card.locator(".tool-diffs .tool-diff-change").innerText(), "changed");
  const answer = await play.untilView();

  assert.equal(await card.getAttribute("data-kind"), "edit");
  assert.deepEqual(await buttonTexts(card), ["Accept", "Always", "Reject", "Reject always"]);
  assert.equal(await card.locator("vscode-checkbox").count(), 0, "one hunk: no checkboxes");
  assert.equal(await card.locator(".approval-path").innerText(), "README.md");
  assert.match(await card.locator(".approval-reason").innerText(), /mode ask asks before editing README.md/);
  assert.equal(await card.locator(".approval-always").innerText(),
    "Always allow edits to `README.md` in this workspace, until you remove it (approval rules)");
  assert.equal(await card.locator(".tool-diffs").isVisible(), false, "while asking, the files are listed with the buttons");
  await view.screenshot("approval-edit");

  const review = await view.postedBy(() => card.locator("vscode-button.review-diff").click());
  assert.deepEqual(review, { type: "openDiff", requestId: answer.requestId, path: "/home/ana/project/README.md" });

  const posted = await view.postedBy(() => card.locator("vscode-button", { hasText: "Accept" }).click());
  assert.deepEqual(posted, { type: "permission", requestId: answer.requestId, optionId: "allow_once" });
  assert.deepEqual(posted, answer);
  // answered: the buttons wait, disabled, for the host to close the prompt
  assert.equal(await card.locator('vscode-button[data-option-id="reject_once"]').getAttribute("disabled"), "");

  await play.untilView();
  assert.ok(play.done);
  assert.equal(await card.locator(".approval").count(), 0);
  assert.equal(await card.locator("vscode-badge").innerText(), "done");
  // the applied diff, highlighted
  const output = card.locator("details.tool-output");
  await output.locator("summary").click();
  assert.equal(await output.locator(".hljs-addition").innerText(), "+Hello, edited by Tether.");
  assert.equal(await output.locator(".hljs-deletion").innerText(), "-Hello from the sample workspace.");
  await view.screenshot("edit-applied");
  await view.assertClean();
  await view.close();
});

test("an approval arriving in a chat taller than the view is fully in view, buttons and all", async () => {
  const view = await harness.open({ height: 420 });
  const play = new Playback(view, fixture("edit"));
  await play.untilView();
  await play.until((m) => m.type === "userMessage");
  const long = Array.from({ length: 60 }, (_, i) => `${i + 1}. a long answer, so that the chat is taller than the view`).join("\n");
  await view.send({ type: "update", sessionId: "sess_8ab1dfd9517e49f892c61d88aa88cf81", update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: `${long}\n\n` } } });
  await play.untilView(); // the permission prompt arrived
  await view.page.waitForTimeout(500); // its buttons (web components) have rendered
  const layout = await view.page.evaluate(() => {
    const scroller = document.querySelector("main.scroll").getBoundingClientRect();
    const tall = document.querySelector("main.scroll").scrollHeight > 2 * scroller.height;
    const buttons = [...document.querySelectorAll(".approval vscode-button.approval-option")].map((b) => b.getBoundingClientRect());
    return { tall, inView: buttons.length > 0 && buttons.every((b) => b.height > 0 && b.top >= scroller.top && b.bottom <= scroller.bottom) };
  });
  await view.screenshot("approval-in-long-chat");
  assert.deepEqual(layout, { tall: true, inView: true });

  // a user who scrolled up is left there: a streamed update does not pull the view down
  await view.page.locator("main.scroll").evaluate((el) => el.scrollBy(0, -600));
  await view.page.waitForTimeout(100);
  const top = await view.page.locator("main.scroll").evaluate((el) => el.scrollTop);
  await view.send({ type: "update", sessionId: "sess_8ab1dfd9517e49f892c61d88aa88cf81", update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "more" } } });
  assert.equal(await view.page.locator("main.scroll").evaluate((el) => el.scrollTop), top);
  await view.close();
});

test("a two-hunk edit: one checkbox per hunk; unchecking one posts acceptedHunks", async () => {
  const view = await harness.open();
  const play = new Playback(view, fixture("hunks"));
  await play.untilView();
  const answer = await play.untilView();
  assert.deepEqual(answer.acceptedHunks, { "/home/ana/project/long.txt": [1] });
  const card = view.page.locator('.tool[data-tool-call-id="call_hunks"]');
  const hunks = card.locator("vscode-checkbox.hunk");

  assert.equal(await hunks.count(), 2);
  assert.deepEqual(
    await hunks.evaluateAll((boxes) => boxes.map((b) => [b.getAttribute("label"), b.checked])),
    [
      ["@@ -1,5 +1,5 @@", true],
      ["@@ -27,7 +27,7 @@", true],
    ],
  );
  await view.screenshot("approval-hunks");

  await hunks.first().click();
  assert.equal(await hunks.first().evaluate((b) => b.checked), false);
  const posted = await view.postedBy(() => card.locator("vscode-button", { hasText: "Accept" }).click());
  assert.deepEqual(posted, answer);

  await play.untilView();
  assert.ok(play.done);
  assert.equal(await card.locator(".approval").count(), 0);
  assert.match(await card.locator("details.tool-output pre").textContent(), /kept hunk 2 of 2 in long\.txt; hunk 1 was rejected/);
  await view.assertClean();
  await view.close();
});

test("Reject posts reject_once, and a rejected hunk choice is not sent with it", async () => {
  const view = await harness.open();
  const play = new Playback(view, fixture("hunks"));
  await play.untilView();
  const recorded = await play.untilView();
  const card = view.page.locator('.tool[data-tool-call-id="call_hunks"]');
  await card.locator("vscode-checkbox.hunk").first().click();
  const posted = await view.postedBy(() => card.locator('vscode-button[data-option-id="reject_once"]').click());
  assert.deepEqual(posted, { type: "permission", requestId: recorded.requestId, optionId: "reject_once" });
  await view.send({ type: "permissionClosed", requestId: recorded.requestId });
  assert.equal(await card.locator(".approval").count(), 0);
  await view.assertClean();
  await view.close();
});

test("a prompt for a call the view has not seen gets its own card", async () => {
  const view = await harness.open();
  const entries = fixture("command");
  const init = entries.find((e) => e.host?.type === "init").host;
  const session = entries.find((e) => e.host?.type === "session").host;
  const prompt = entries.find((e) => e.host?.type === "permission").host.prompt;
  // as after a daemon restart: the prompt arrives without the live tool_call before it
  await view.send(init, session, { type: "permission", prompt: { ...prompt, toolCallId: "call_resumed" } });
  const card = view.page.locator('.tool[data-tool-call-id="call_resumed"]');
  assert.equal(await card.locator(".tool-title").getAttribute("title"), prompt.title);
  assert.equal(await card.locator(".tool-title code").innerText(), "for i in 1 2 3; do echo line$i; sleep 0.3; done");
  assert.equal(await card.locator("vscode-badge").innerText(), "pending");
  // a sandboxed command: the network is a separate, explicit choice (an option past the four ACP kinds)
  assert.deepEqual(await buttonTexts(card), ["Allow once", "Always", "Reject", "Reject always", "Allow once, with network"]);
  await view.assertClean();
  await view.close();
});

test("a running call that can be stopped alone has a Stop: it posts cancelToolCall, and goes when the call ends", async () => {
  const view = await harness.open();
  const update = (u) => ({ type: "update", sessionId: "s1", update: u });
  await view.send(
    { type: "session", sessionId: "s1", title: null, modeId: "ask" },
    update({ sessionUpdate: "tool_call", toolCallId: "call_long", title: "sleep 30", kind: "execute", status: "pending" }),
    update({ sessionUpdate: "tool_call", toolCallId: "call_read", title: "Read a.txt", kind: "read", status: "pending" }),
  );
  const stop = (id) => view.page.locator(`.tool[data-tool-call-id="${id}"] vscode-button.tool-stop`);
  assert.equal(await stop("call_long").isVisible(), false, "not before it runs");
  // ACP v2 marks a call that can be stopped alone (`capabilities.cancel`); v1 has no marker: a command can
  await view.send(
    update({ sessionUpdate: "tool_call_update", toolCallId: "call_long", status: "in_progress", capabilities: { cancel: {} } }),
    update({ sessionUpdate: "tool_call_update", toolCallId: "call_read", status: "in_progress", capabilities: {} }),
  );
  assert.ok(await stop("call_long").isVisible());
  assert.equal(await stop("call_read").isVisible(), false, "v2 says the read cannot be stopped");
  assert.deepEqual(await view.postedBy(() => stop("call_long").click()), { type: "cancelToolCall", toolCallId: "call_long" });
  await view.send(update({ sessionUpdate: "tool_call_update", toolCallId: "call_long", status: "failed", capabilities: {} }));
  assert.equal(await stop("call_long").isVisible(), false, "gone once the call ended");
  await view.assertClean();
});
