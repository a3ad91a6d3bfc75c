// The chat: a recorded streamed turn (thinking, markdown with code, tool cards, a plan),
// the copy button, location links, the mode picker, and the view state kept across a reload.
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

const text = (view, selector) => view.page.locator(selector).innerText();

test("a streamed turn: thinking collapsed, markdown rendered as it streams, code highlighted", async () => {
  const view = await harness.open();
  const play = new Playback(view, fixture("chat"));
  const prompt = await play.untilView();
  assert.equal(prompt.type, "prompt");

  // the user types the recorded prompt and sends it with Enter
  const posted = await view.postedBy(async () => {
    await view.page.locator("textarea.prompt-input").fill(prompt.text);
    await view.page.locator("textarea.prompt-input").press("Enter");
  });
  assert.deepEqual(posted, prompt);
  assert.equal(await view.page.locator("textarea.prompt-input").inputValue(), "");

  await play.until((m) => m.type === "status");
  assert.equal(await text(view, ".entry.user .plain"), "explain the app");
  assert.ok(await view.page.locator(".status-row").isVisible(), "the status row shows while streaming");
  assert.ok(await view.page.locator("vscode-button.stop").isVisible(), "the stop button shows while streaming");
  assert.equal(await text(view, ".session-title"), "New chat");

  await play.until(isUpdate("agent_thought_chunk"));
  assert.equal(await text(view, ".session-title"), "explain the app", "the title from session_info_update");
  const thought = view.page.locator("details.thought");
  assert.equal(await thought.getAttribute("open"), null, "thinking is collapsed");
  assert.equal(await thought.locator("summary").innerText(), "Thinking");
  assert.match(await thought.locator(".plain").textContent(), /read src\/app\.py first/);

  // the answer streams in small chunks: after some of them the view shows the text so far
  await play.until(isUpdate("agent_message_chunk", (u) => u.content.text.includes("def")));
  const partial = await text(view, ".entry.agent:last-of-type .markdown");
  assert.match(partial, /What main does/);
  assert.doesNotMatch(partial, /it returns/);
  await view.screenshot("chat-streaming");

  await play.until((m) => m.type === "status" && m.status === "idle");
  const answer = view.page.locator(".entry.agent").last();
  assert.equal(await answer.locator("h2").innerText(), "What main does");
  assert.equal(await answer.locator("h2 code").innerText(), "main");
  assert.deepEqual(await answer.locator("li").allInnerTexts(), ["it takes no arguments", "it returns 42"]);
  const code = answer.locator(".code-block code");
  assert.equal(await code.textContent(), "def main():\n    return 42");
  assert.equal(await code.locator(".hljs-keyword").first().innerText(), "def", "python is highlighted");
  assert.equal(await answer.locator(".code-lang").innerText(), "python");
  // VS Code's stylesheet gives `code` a background: a block must not paint it on every line
  const codeStyle = await code.evaluate((el) => {
    const s = getComputedStyle(el);
    return [s.backgroundColor, s.padding, s.color === getComputedStyle(el.parentElement).color];
  });
  assert.deepEqual(codeStyle, ["rgba(0, 0, 0, 0)", "0px", true]);
  assert.equal(await answer.locator("h2 code").evaluate((el) => getComputedStyle(el).backgroundColor), "rgb(43, 43, 43)", "inline code keeps one");
  // the model's raw HTML is text, never an element
  assert.equal(await view.page.locator(".transcript img").count(), 0);
  assert.match(await answer.innerText(), /<img src="https:\/\/example.com\/x.png"> is shown as text/);

  assert.equal(await view.page.locator(".status-row").isVisible(), false, "idle: no status row");
  assert.equal(await view.page.locator("vscode-button.stop").isVisible(), false, "idle: no stop button");
  assert.equal(await text(view, ".entry.turn .turn-usage"), "706 in · 60 out · context 1% of 128,000");
  await view.screenshot("chat-answer");

  // Copy posts the code block's text
  const copy = await view.postedBy(() => answer.locator("button.copy-code").click());
  assert.deepEqual(copy, { type: "copy", text: "def main():\n    return 42" });
  assert.equal(await answer.locator("button.copy-code").innerText(), "Copied");
  await view.assertClean();
  await view.close();
});

test("tool cards go pending → running → done or failed, with locations and output", async () => {
  const view = await harness.open();
  const play = new Playback(view, fixture("chat"));
  await play.untilView(); // the prompt, sent
  const card = (id) => view.page.locator(`.tool[data-tool-call-id="${id}"]`);
  const badge = (id) => card(id).locator("vscode-badge.tool-status");

  await play.until(isUpdate("tool_call", (u) => u.toolCallId === "call_read"));
  assert.equal(await badge("call_read").getAttribute("data-status"), "pending");
  assert.equal(await badge("call_read").innerText(), "pending");
  assert.equal(await card("call_read").locator(".tool-title").innerText(), "read_file");
  assert.equal(await card("call_read").getAttribute("data-kind"), "read");

  await play.until(isUpdate("tool_call_update", (u) => u.toolCallId === "call_read" && u.title));
  assert.equal(await card("call_read").locator(".tool-title").innerText(), "Read src/app.py");
  assert.equal(await card("call_read").locator("a.location").innerText(), "app.py:1");

  await play.until(isUpdate("tool_call_update", (u) => u.toolCallId === "call_read" && u.status === "in_progress"));
  assert.equal(await badge("call_read").getAttribute("data-status"), "in_progress");
  assert.equal(await badge("call_read").innerText(), "running");
  await view.screenshot("tools-running");

  await play.until(isUpdate("tool_call_update", (u) => u.toolCallId === "call_escape" && u.status === "failed"));
  assert.equal(await badge("call_escape").innerText(), "failed");
  const failedOutput = card("call_escape").locator("details.tool-output");
  assert.equal(await failedOutput.getAttribute("open"), "", "a failure's output is open");
  assert.match(await failedOutput.locator("pre").innerText(), /outside the workspace/);

  await play.until(isUpdate("tool_call_update", (u) => u.toolCallId === "call_read" && u.status === "completed"));
  assert.equal(await badge("call_read").innerText(), "done");
  const readOutput = card("call_read").locator("details.tool-output");
  assert.equal(await readOutput.getAttribute("open"), null, "a read's output is collapsed");
  assert.equal(await readOutput.locator("pre").textContent(), "     1\tdef main():\n     2\t    return 42");
  await readOutput.locator("summary").click();
  assert.equal(await readOutput.getAttribute("open"), "");

  // the plan
  assert.deepEqual(await view.page.locator(".plan .plan-content").allInnerTexts(), ["Read the code", "Explain it"]);
  assert.deepEqual(
    await view.page.locator(".plan .plan-item").evaluateAll((items) => items.map((i) => i.dataset.status)),
    ["completed", "in_progress"],
  );

  // a location link opens the file at the line
  const open = await view.postedBy(() => card("call_read").locator("a.location").click());
  assert.deepEqual(open, { type: "openLocation", path: "/home/ana/project/src/app.py", line: 1 });
  await view.screenshot("tools-done");
  await view.assertClean();
  await view.close();
});

test("the mode picker posts setMode and follows the host's mode", async () => {
  const view = await harness.open();
  const play = new Playback(view, fixture("chat"));
  await play.untilView(); // the prompt, sent
  const setMode = await play.untilView();
  assert.equal(setMode.type, "setMode");
  const picker = view.page.locator("vscode-single-select.mode-picker");
  assert.equal(await picker.evaluate((el) => el.value), "ask");

  await picker.click();
  await view.screenshot("mode-picker-open");
  const posted = await view.postedBy(() => picker.locator("li.option", { hasText: "Auto-edit" }).click());
  assert.deepEqual(posted, setMode);

  await play.untilView();
  assert.ok(play.done);
  assert.equal(await picker.evaluate((el) => el.value), "auto-edit");
  // the host's own mode change does not echo back
  await view.send({ type: "mode", modeId: "read-only" });
  assert.equal(await picker.evaluate((el) => el.value), "read-only");
  assert.equal((await view.posted()).filter((m) => m.type === "setMode").length, 1);
  await view.assertClean();
  await view.close();
});

test("a thousand deltas in a row are rendered a few times, not once each", async () => {
  const view = await harness.open();
  const entries = fixture("chat").filter((e) => e.host).map((e) => e.host);
  await view.send(...entries.slice(0, 2)); // init, session
  const sessionId = entries[1].sessionId;
  const chunk = (text) => ({ type: "update", sessionId, update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text } } });
  await view.send(chunk("Counting: "));
  // count how often the message's rendered markdown is replaced while the deltas arrive
  await view.page.evaluate(() => {
    window.__renders = 0;
    new MutationObserver((records) => (window.__renders += records.length)).observe(
      document.querySelector(".entry.agent .markdown"),
      { childList: true },
    );
  });
  const deltas = Array.from({ length: 1000 }, (_, i) => chunk(`${i} `));
  await view.send(...deltas);
  const rendered = await view.page.locator(".entry.agent .markdown").innerText();
  assert.equal(rendered, `Counting: ${Array.from({ length: 1000 }, (_, i) => i).join(" ")}`);
  assert.equal(await view.page.locator(".entry.agent").count(), 1, "one message, appended to");
  const renders = await view.page.evaluate(() => window.__renders);
  assert.ok(renders >= 1 && renders < 100, `rendered ${renders} times for 1000 deltas`);
  await view.assertClean();
  await view.close();
});

test("a reloaded view shows the same chat from its saved state", async () => {
  const first = await harness.open();
  const play = new Playback(first, fixture("chat"));
  await play.untilView(); // the prompt, sent
  await play.untilView();
  // state is saved shortly after changes, not on every delta
  await first.page.waitForFunction(() => window.__state?.entries?.some((e) => e.kind === "turn"));
  const saved = await first.savedState();
  await first.close();

  const view = await harness.open({ state: saved });
  assert.equal(await text(view, ".session-title"), "explain the app");
  assert.equal(await text(view, ".entry.user .plain"), "explain the app");
  assert.equal(await view.page.locator(".entry.agent .code-block code").textContent(), "def main():\n    return 42");
  assert.deepEqual(
    await view.page.locator(".tool vscode-badge").allInnerTexts(),
    ["done", "failed", "done"],
  );
  assert.equal(await view.page.locator(".empty-hint").isVisible(), false);
  // the host's init for the same session keeps it; for another session the chat is cleared
  await view.send({ type: "init", sessions: [], sessionId: saved.sessionId, modes: saved.modes, modeId: "ask", status: "idle" });
  assert.equal(await view.page.locator(".entry.user").count(), 1);
  await view.send({ type: "init", sessions: [], sessionId: "sess_other", modes: saved.modes, modeId: "ask", status: "idle" });
  assert.equal(await view.page.locator(".entry").count(), 0);
  assert.ok(await view.page.locator(".empty-hint").isVisible());
  await view.assertClean();
  await view.close();
});

test("the daemon's slash commands are offered while the prompt is a partial /name", async () => {
  const view = await harness.open();
  const modes = [{ id: "ask", name: "Ask", description: "" }, { id: "auto-edit", name: "Auto-edit", description: "" }];
  await view.send(
    { type: "init", sessions: [], sessionId: "sess_cmd", modes, modeId: "ask", status: "idle" },
    { type: "update", sessionId: "sess_cmd", update: { sessionUpdate: "available_commands_update", availableCommands: [
      { name: "review", description: "Review the uncommitted changes" },
      { name: "mode", description: "Switch the mode", input: { hint: "mode id" } },
    ] } },
  );
  const input = view.page.locator("textarea.prompt-input");
  const list = view.page.locator("ul.slash-commands");
  assert.equal(await list.isVisible(), false, "nothing typed: no list");
  await input.fill("/");
  assert.deepEqual(await list.locator(".slash-name").allInnerTexts(), ["/review", "/mode <mode id>"]);
  await input.fill("/m");
  assert.deepEqual(await list.locator(".slash-name").allInnerTexts(), ["/mode <mode id>"]);
  await list.locator(".slash-command").first().click();
  assert.equal(await input.inputValue(), "/mode ");
  assert.equal(await list.isVisible(), false, "a chosen command hides the list");
  // the daemon changed the mode (/mode): the picker follows
  await view.send({ type: "update", sessionId: "sess_cmd", update: { sessionUpdate: "current_mode_update", currentModeId: "auto-edit" } });
  assert.equal(await view.page.locator("vscode-single-select.mode-picker").evaluate((el) => el.value), "auto-edit");
  // with editor context attached, the command still opens the prompt
  await view.send({ type: "context", label: "app.py:1-2", text: "```python\ndef main(): ...\n```" });
  const posted = await view.postedBy(async () => {
    await input.fill("/review the error handling");
    await input.press("Enter");
  });
  assert.equal(posted.type, "prompt");
  assert.ok(posted.text.startsWith("/review the error handling\n\n```python"), posted.text);
  await view.assertClean();
  await view.close();
});

test("the header's model picker lists the session's models, posts setOption and follows config_option_update", async () => {
  const view = await harness.open();
  const option = (id, current, values, category) => ({
    id, name: id === "model" ? "Model" : "Reasoning effort", currentValue: current, type: "select", category,
    options: values.map(([value, name]) => ({ value, name })),
  });
  const models = [["default", "Provider default"], ["gpt-4.1", "gpt-4.1"], ["o3", "o3"]];
  const mode = option("mode", "ask", [["ask", "Ask"]], "mode");
  const pickers = view.page.locator(".config-pickers");
  const model = view.page.locator("vscode-single-select.option-model");
  const reasoning = view.page.locator("vscode-single-select.option-reasoning");
  await view.send({ type: "init", sessions: [], sessionId: null, modes: [], modeId: null, status: "idle" });
  assert.equal(await pickers.isVisible(), false, "no session: no pickers");

  await view.send(
    { type: "session", sessionId: "sess_m", title: null, modeId: "ask" },
    { type: "options", options: [option("model", "default", models.slice(0, 2), "model"), mode] },
  );
  assert.equal(await model.evaluate((el) => el.value), "default");
  assert.equal(await reasoning.isVisible(), false, "this model has no reasoning option");
  // the provider's list arrives later, as a config_option_update
  await view.send({ type: "update", sessionId: "sess_m", update: {
    sessionUpdate: "config_option_update", configOptions: [option("model", "default", models, "model"), mode],
  } });
  await model.click();
  assert.deepEqual(await model.locator("li.option").allInnerTexts(), ["Provider default", "gpt-4.1", "o3"]);
  await view.screenshot("model-picker-open");
  const posted = await view.postedBy(() => model.locator("li.option", { hasText: "o3" }).click());
  assert.deepEqual(posted, { type: "setOption", configId: "model", value: "o3" });

  // the answer: o3 brings the reasoning option
  const effort = option("reasoning", "default", [["default", "Model default"], ["low", "Low"], ["high", "High"]], "thought_level");
  await view.send({ type: "options", options: [option("model", "o3", models, "model"), effort, mode] });
  assert.equal(await model.evaluate((el) => el.value), "o3");
  assert.equal(await reasoning.isVisible(), true);
  await reasoning.click();
  const picked = await view.postedBy(() => reasoning.locator("li.option", { hasText: "High" }).click());
  assert.deepEqual(picked, { type: "setOption", configId: "reasoning", value: "high" });
  // another session (a /clear): its own options replace these
  await view.send({ type: "session", sessionId: "sess_n", title: null, modeId: "ask" });
  assert.equal(await pickers.isVisible(), false, "until the new session's options arrive");
  assert.equal((await view.posted()).filter((m) => m.type === "setOption").length, 2);
  await view.assertClean();
  await view.close();
});
