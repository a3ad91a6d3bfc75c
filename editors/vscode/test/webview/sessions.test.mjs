// Sessions and turns: the session list after a daemon restart (New, loading stored
// sessions, their replayed transcript), the stop button, prompts with editor context, errors.
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

test("the session list: New, then stored sessions loaded and replayed", async () => {
  const view = await harness.open();
  const play = new Playback(view, fixture("replay"));
  const newSession = await play.untilView();
  assert.deepEqual(newSession, { type: "newSession" });

  // no session shown yet: the list is open, newest first, with titles and times
  const list = view.page.locator("details.sessions");
  assert.equal(await list.getAttribute("open"), "");
  assert.deepEqual(await list.locator(".session-item-title").allInnerTexts(), [
    "slow",
    "two hunks",
    "edit the readme",
    "run the tests",
    "explain the app",
  ]);
  const times = await list.locator("time.session-item-time").evaluateAll((ts) => ts.map((t) => [t.dateTime, t.textContent]));
  for (const [datetime, label] of times) {
    assert.match(datetime, /^\d{4}-\d\d-\d\dT.*Z$/);
    assert.ok(label.length > 0, "an updated time is shown");
  }
  assert.ok(await view.page.locator(".empty-hint").isVisible());
  assert.equal(await view.page.locator("vscode-single-select.mode-picker").isVisible(), false, "no session, no mode");
  await view.screenshot("sessions-list");

  assert.deepEqual(await view.postedBy(() => view.page.locator("vscode-button.new-session").click()), newSession);
  const load = await play.untilView();
  assert.equal(load.type, "loadSession");
  assert.equal(await list.getAttribute("open"), null, "a shown session closes the list");
  assert.equal(await view.page.locator(".session-title").innerText(), "New chat");
  assert.equal(await view.page.locator("vscode-single-select.mode-picker").evaluate((el) => el.value), "ask");
  assert.ok(await view.page.locator("vscode-single-select.mode-picker").isVisible());
  assert.equal(await view.page.locator('.session-item[aria-current="true"] .session-item-title').textContent(), "Untitled");

  await list.locator("summary").click();
  const item = list.locator(`.session-item[data-session-id="${load.sessionId}"]`);
  assert.equal(await item.locator(".session-item-title").innerText(), "explain the app");
  assert.deepEqual(await view.postedBy(() => item.click()), load);
  assert.equal(await list.getAttribute("open"), null);

  const loadCancelled = await play.untilView();
  assert.equal(await view.page.locator(".session-title").innerText(), "explain the app");
  assert.equal(await view.page.locator(".entry.user .plain").innerText(), "explain the app");
  assert.equal(await view.page.locator("details.thought").getAttribute("open"), null);
  assert.deepEqual(await view.page.locator(".tool vscode-badge").allInnerTexts(), ["done", "failed", "done"]);
  assert.deepEqual(await view.page.locator(".tool .tool-title").allInnerTexts(), ["Read src/app.py", "Read ../outside.txt", "Update plan"]);
  assert.equal(await view.page.locator(".entry.agent .code-block code").textContent(), "def main():\n    return 42");
  assert.equal(await view.page.locator("vscode-single-select.mode-picker").evaluate((el) => el.value), "auto-edit");
  await view.screenshot("session-replayed");

  // a stored session whose turn was stopped: its message is marked
  await view.postedBy(async () => {
    await list.locator("summary").click();
    await list.locator(`.session-item[data-session-id="${loadCancelled.sessionId}"]`).click();
  });
  await play.untilView();
  assert.ok(play.done);
  assert.equal(await view.page.locator(".tool").count(), 0, "the chat shows only the loaded session");
  const stopped = view.page.locator(".entry.agent");
  assert.equal(await stopped.getAttribute("data-replay-status"), "cancelled");
  assert.equal(await stopped.locator(".markdown").innerText(), "This answer str");
  assert.equal(await stopped.locator(".entry-note").innerText(), "stopped");
  await view.assertClean();
  await view.close();
});

test("the stop button shows while a turn streams and posts cancel", async () => {
  const view = await harness.open();
  const play = new Playback(view, fixture("cancel"));
  await play.untilView(); // the prompt, sent
  const stop = view.page.locator("vscode-button.stop");
  const send = view.page.locator("vscode-button.send");
  assert.equal(await stop.isVisible(), false, "no stop button before the turn");

  const cancel = await play.untilView();
  assert.deepEqual(cancel, { type: "cancel" });
  assert.ok(await stop.isVisible());
  // a second prompt while one runs is queued, or sent into the running turn
  assert.equal(await send.innerText(), "Queue");
  assert.ok(await view.page.locator("vscode-button.steer").isVisible());
  assert.equal(await view.page.locator(".entry.agent .markdown").innerText(), "This answer str");
  await view.screenshot("streaming-stop");
  assert.deepEqual(await view.postedBy(() => stop.click()), cancel);

  await play.untilView();
  assert.ok(play.done);
  assert.equal(await stop.isVisible(), false);
  assert.equal(await send.innerText(), "Send");
  assert.equal(await view.page.locator("vscode-button.steer").isVisible(), false);
  assert.equal(await view.page.locator(".entry.turn .turn-stop").innerText(), "Stopped");
  assert.equal(await view.page.locator(".entry.turn .turn-usage").count(), 0, "no usage shown when none was counted");
  await view.assertClean();
  await view.close();
});

test("editor context is added to the next prompt; errors are shown", async () => {
  const view = await harness.open();
  const entries = fixture("chat");
  await view.send(...entries.slice(0, 2).map((e) => e.host)); // init, session
  await view.send({ type: "context", label: "app.py:1-2", text: "From src/app.py:\n```python\ndef main():\n    return 42\n```" });
  const chip = view.page.locator(".context-chip");
  assert.equal(await chip.locator(".chip-label").innerText(), "app.py:1-2");
  await view.screenshot("context-chip");

  const input = view.page.locator("textarea.prompt-input");
  await input.fill("what does this return?");
  // Shift+Enter is a new line, not a send
  await input.press("Shift+Enter");
  assert.equal((await view.posted()).filter((m) => m.type === "prompt").length, 0);
  await input.fill("what does this return?");
  const posted = await view.postedBy(() => view.page.locator("vscode-button.send").click());
  assert.deepEqual(posted, {
    type: "prompt",
    text: "From src/app.py:\n```python\ndef main():\n    return 42\n```\n\nwhat does this return?",
  });
  assert.equal(await chip.count(), 0, "the context went with the prompt");

  // a removed chip is not sent
  await view.send({ type: "context", label: "README.md:1", text: "# Sample" });
  await chip.locator("button.chip-remove").click();
  await input.fill("hello");
  assert.deepEqual(await view.postedBy(() => input.press("Enter")), { type: "prompt", text: "hello" });

  await view.send({ type: "error", message: "the daemon stopped; restarting it" });
  const error = view.page.locator('.entry.error[role="alert"]');
  assert.equal(await error.innerText(), "the daemon stopped; restarting it");
  await view.assertClean();
  await view.close();
});

test("updates are shown only for the session on screen; a new session clears the chat", async () => {
  const view = await harness.open();
  const entries = fixture("chat").filter((e) => e.host).map((e) => e.host);
  const sessionId = entries.find((m) => m.type === "session").sessionId;
  await view.send(...entries.slice(0, 2));
  await view.send({ type: "update", sessionId: "sess_elsewhere", update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "not this one" } } });
  assert.equal(await view.page.locator(".entry").count(), 0);
  await view.send(...entries.filter(isUpdate("agent_message_chunk")).slice(0, 1));
  assert.equal(await view.page.locator(".entry.agent").innerText(), "Let me read the code.");
  await view.send({ type: "session", sessionId: "sess_new", title: null, modeId: "full-auto" });
  assert.equal(await view.page.locator(".entry").count(), 0);
  assert.equal(await view.page.locator("vscode-single-select.mode-picker").evaluate((el) => el.value), "full-auto");
  assert.notEqual(sessionId, "sess_new");
  await view.assertClean();
  await view.close();
});

test("at a 300 px sidebar the Queue button is whole on screen", async () => {
  const view = await harness.open({ width: 300 });
  const play = new Playback(view, fixture("cancel"));
  await play.untilView(); // the prompt, sent
  await play.untilView(); // streaming: Send is Queue, beside "Send into the running turn"
  const queue = view.page.locator("vscode-button.send");
  assert.equal(await queue.innerText(), "Queue");
  const box = await queue.boundingBox();
  const width = await view.page.evaluate(() => document.documentElement.clientWidth);
  assert.ok(box && box.x >= 0 && box.x + box.width <= width, `Queue at ${JSON.stringify(box)} in ${width} px`);
  const steer = await view.page.locator("vscode-button.steer").boundingBox();
  assert.ok(steer && steer.x + steer.width <= width, "the steer button is on screen too");
  await view.screenshot("queue-300px");
  await view.close();
});

test("without a folder Send is disabled and Enter sends nothing", async () => {
  const view = await harness.open();
  await view.send({ type: "noFolder" });
  assert.ok(await view.page.locator(".no-folder").isVisible());
  const send = view.page.locator("vscode-button.send");
  assert.equal(await send.getAttribute("disabled"), "");
  const input = view.page.locator("textarea.prompt-input");
  await input.fill("hello");
  await input.press("Enter");
  await send.click({ force: true });
  assert.equal((await view.posted()).filter((m) => m.type === "prompt").length, 0);
  await view.close();
});
