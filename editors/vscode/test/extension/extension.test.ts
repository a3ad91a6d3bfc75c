// The whole extension, activated against the stub `vscode` module and driving the real
// daemon (`tether.path` points at a wrapper running `python -m tether`): the chat view,
// approvals in the diff editor and in notifications, WorkspaceEdits, document sync,
// commands, the status bar, SecretStorage, crash notices and deactivation.
import assert from "node:assert/strict";
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type * as vscode from "vscode";
import { activate, deactivate } from "../../src/extension/main";
import type { TetherExtension } from "../../src/extension/tetherExtension";
import { API_KEY_SECRET } from "../../src/extension/settings";
import { toolCall } from "../../src/core/state";
import type { HostMessage } from "../../src/shared/messages";
import { commands, stub, Position, Range, type StubWebviewView } from "../stubs/vscode";
import { acpVersion, CHAT_SCRIPT, EXTENSION_ROOT, makeSandbox, python, waitFor, type Sandbox } from "../support/sandbox";

const MANIFEST = JSON.parse(readFileSync(join(EXTENSION_ROOT, "package.json"), "utf8"));

function daemonEnvironment(pid: number): Record<string, string> {
  const raw = readFileSync(`/proc/${pid}/environ`, "utf8");
  return Object.fromEntries(raw.split("\0").filter(Boolean).map((kv) => [kv.slice(0, kv.indexOf("=")), kv.slice(kv.indexOf("=") + 1)]));
}

const ALWAYS_ECHO = "Always allow `echo` (any arguments) in this workspace: sandboxed, writes only inside the workspace and a private temp dir, " +
  "no network; until you remove it (approval rules)";

describe("the extension in a (stub) VS Code with the real daemon", () => {
  let sandbox: Sandbox;
  let ext: TetherExtension;
  let view: StubWebviewView;
  let context: ReturnType<typeof stub.extensionContext>;
  const readme = () => join(sandbox.workspace, "README.md");

  const posted = (from = 0) => view.posted.slice(from) as HostMessage[];
  const waitPosted = <T extends HostMessage["type"]>(type: T, from: number, what: string, match: (m: Extract<HostMessage, { type: T }>) => boolean = () => true) =>
    waitFor(() => posted(from).find((m): m is Extract<HostMessage, { type: T }> => m.type === type && match(m as Extract<HostMessage, { type: T }>)), what);
  const statusText = () => stub.statusBarItems[0].text;
  const launchedKey = () => readFileSync(join(sandbox.root, "launched-key"), "utf8");
  const agent = () => ext.current!;

  before(() => {
    sandbox = makeSandbox();
    const interpreter = python();
    // the daemon inherits the extension host's environment: a private home, no real keys
    for (const key of Object.keys(process.env)) if (/^(TETHER_|OPENAI_|ANTHROPIC_)/.test(key)) delete process.env[key];
    Object.assign(process.env, { TETHER_HOME: sandbox.home, XDG_CONFIG_HOME: join(sandbox.root, "xdg-config"), TETHER_PROBE_PORTS: "" });
    const bin = join(sandbox.root, "bin");
    mkdirSync(bin);
    const tether = join(bin, "tether");
    // the wrapper notes the key it was started with: the daemon hides it from its own
    // /proc/PID/environ (SPEC §5.13), so that is no longer where a test can see it
    writeFileSync(tether, `#!/bin/sh\nprintf '%s' "$TETHER_API_KEY" > '${join(sandbox.root, "launched-key")}'\nexec '${interpreter}' -m tether "$@"\n`);
    chmodSync(tether, 0o755);

    stub.reset();
    stub.addFolder(sandbox.workspace, "ws");
    stub.settings = { "tether.path": tether, "tether.provider": "scripted", "tether.script": CHAT_SCRIPT };
    context = stub.extensionContext(EXTENSION_ROOT, MANIFEST);
  });
  after(async () => {
    await deactivate();
    sandbox.cleanup();
  });

  it("activation registers the view, the diff documents, every contributed command and an idle status bar", async () => {
    await context.secrets.store(API_KEY_SECRET, "sk-vscode-test-key");
    ext = activate(context as unknown as vscode.ExtensionContext);
    assert.ok(stub.viewProviders.has("tether.chat"));
    assert.ok(stub.contentProviders.has("tether-diff"));
    const contributed = (MANIFEST.contributes.commands as { command: string }[]).map((c) => c.command).sort();
    assert.deepEqual([...stub.commands.keys()].sort(), contributed);
    assert.equal(statusText(), "$(comment-discussion) Tether: idle");
    assert.equal(stub.statusBarItems[0].command, "tether.chat.focus");
    assert.equal(agent().started, false, "the daemon starts when it is needed");
  });

  it("opening the view loads the webview under a strict CSP and starts the daemon with the key in its environment only", async () => {
    view = await stub.resolveView("tether.chat");
    assert.equal(view.webview.options.enableScripts, true);
    assert.deepEqual(view.webview.options.localResourceRoots?.map((u) => u.fsPath), [join(EXTENSION_ROOT, "dist")]);
    assert.match(view.webview.html, /Content-Security-Policy/);
    assert.match(view.webview.html, /script-src 'nonce-[0-9a-f]{32}'/);
    assert.ok(view.webview.html.includes(`https:${join(EXTENSION_ROOT, "dist", "webview.js")}`));

    view.send({ type: "ready" });
    assert.deepEqual(posted()[0], {
      type: "init",
      sessions: [],
      sessionId: null,
      modes: agent().controller.state.modes,
      modeId: "ask",
      status: "idle",
    });
    await waitPosted("sessions", 0, "the session list from the daemon");

    const pid = agent().supervisor.pid!;
    assert.equal(launchedKey(), "sk-vscode-test-key");
    assert.equal(daemonEnvironment(pid).TETHER_API_KEY, undefined); // hidden by the daemon at start
    assert.equal(daemonEnvironment(pid).TETHER_HOME, sandbox.home);
    const init = agent().supervisor.client!.initializeParams!;
    assert.deepEqual(init.initializationOptions, { mode: "ask", provider: "scripted", script: CHAT_SCRIPT });
    // ACP v2 asked for, with v1's fields beside (a v1-only daemon reads those): SPEC §12.1
    assert.equal(init.protocolVersion, 2);
    assert.equal(agent().supervisor.client!.protocolVersion, acpVersion());
    const tether = { namedPermissionOptions: true, clearSession: true };
    assert.deepEqual(init.clientCapabilities, { fs: { readTextFile: false, writeTextFile: false }, _meta: { tether } });
    assert.deepEqual(init.capabilities, {
      workspace: { applyEdit: true, workspaceEdit: { documentChanges: true, resourceOperations: ["create"] } },
      _meta: { tether },
    });
    assert.deepEqual(init.workspaceFolders, [{ uri: `file://${sandbox.workspace}`, name: "ws" }]);
    assert.doesNotMatch(JSON.stringify(init), /sk-vscode-test-key/);
    assert.doesNotMatch(stub.outputChannels[0].lines.join("\n"), /sk-vscode-test-key/);
  });

  it("a proposed edit opens in the diff editor; Accept in its title applies it as a WorkspaceEdit", async () => {
    const from = view.posted.length;
    const editsBefore = stub.appliedEdits.length;
    view.send({ type: "prompt", text: "edit the readme please" });
    const asked = await waitPosted("permission", from, "the approval in the chat view");
    const diff = await waitFor(() => stub.executed.find((c) => c.id === "vscode.diff"), "the diff editor");
    const [before, afterUri] = diff.args as [vscode.Uri, vscode.Uri];
    assert.equal(before.scheme, "tether-diff");
    assert.equal(afterUri.path, readme());
    assert.equal(stub.contentOf(before), "# Sample\n\nHello from the sample workspace.\n");
    assert.equal(stub.contentOf(afterUri), "# Sample\n\nHello, edited by Tether.\n");
    assert.equal(statusText(), "$(bell-dot) Tether: waiting for approval");
    assert.equal(readFileSync(readme(), "utf8"), "# Sample\n\nHello from the sample workspace.\n", "untouched until accepted");

    assert.equal(await commands.executeCommand("tether.acceptEdit", afterUri), true);
    await waitPosted("turnEnded", from, "the end of the turn");
    assert.ok(posted(from).some((m) => m.type === "permissionClosed" && m.requestId === asked.prompt.requestId));
    assert.equal(stub.appliedEdits.length, editsBefore + 1);
    const op = (stub.appliedEdits.at(-1)!.edit as unknown as { operations: { kind: string; range: Range; newText: string }[] }).operations[0];
    assert.equal(op.kind, "replace");
    assert.deepEqual([op.range.start.line, op.range.start.character, op.range.end.line, op.range.end.character], [0, 0, 3, 0]);
    assert.equal(op.newText, "# Sample\n\nHello, edited by Tether.\n");
    assert.equal(readFileSync(readme(), "utf8"), "# Sample\n\nHello, edited by Tether.\n", "saved after the edit");
    assert.equal(stub.tabs.length, 0, "the diff tab closed");
    assert.equal(statusText(), "$(comment-discussion) Tether: idle");
    assert.equal(toolCall(agent().controller.state, "call_edit")?.approvedBy, "allowed by the user, once");
  });

  it("open documents are synchronised: the agent reads the unsaved text", async () => {
    const doc = stub.openDocument(readme());
    stub.type(doc, new Range(2, 0, 2, 5), "Howdy");
    const from = view.posted.length;
    view.send({ type: "prompt", text: "What does the README say?" });
    await waitPosted("turnEnded", from, "the end of the turn");
    assert.match(JSON.stringify(toolCall(agent().controller.state, "call_read")?.content), /Howdy, edited by Tether\./);
    assert.equal(readFileSync(readme(), "utf8"), "# Sample\n\nHello, edited by Tether.\n");
    stub.closeDocument(doc);
  });

  it("Choose hunks in the diff editor's title keeps only the picked hunk", async () => {
    stub.answerQuickPick = (items) => [items[1]];
    const from = view.posted.length;
    const diffs = stub.executed.filter((c) => c.id === "vscode.diff").length;
    view.send({ type: "prompt", text: "two hunks please" });
    await waitFor(() => stub.executed.filter((c) => c.id === "vscode.diff").length > diffs, "the diff of long.txt");
    assert.equal(await commands.executeCommand("tether.acceptHunks"), true);
    const picker = stub.quickPicks.at(-1)!;
    assert.deepEqual(
      (picker.items as { label: string }[]).map((i) => i.label),
      ["@@ -1,5 +1,5 @@", "@@ -27,7 +27,7 @@"],
    );
    assert.equal((picker.options as { canPickMany?: boolean }).canPickMany, true);
    await waitPosted("turnEnded", from, "the end of the turn");
    const text = readFileSync(join(sandbox.workspace, "long.txt"), "utf8");
    assert.match(text, /^line 2$/m);
    assert.match(text, /^line THIRTY$/m);
  });

  it("a command is asked in a modal notification while the chat view is hidden", async () => {
    view.hide();
    stub.answerMessage = (m) => (m.options?.modal ? "Reject" : undefined);
    const result = await agent().controller.prompt("run the tests");
    assert.equal(result?.stopReason, "end_turn");
    const modal = stub.messages.find((m) => m.options?.modal)!;
    assert.equal(modal.level, "warning");
    assert.equal(modal.message, "Tether: echo testing && echo all passed"); // the title is the command itself
    assert.equal(modal.options?.detail, "$ echo testing && echo all passed\n(in .)\n(mode ask asks before running `echo testing && echo all passed`)\n" +
      `"Always allow": ${ALWAYS_ECHO}`);
    assert.deepEqual(modal.items, ["Allow once", "Always allow", "Reject"]);
    assert.equal(toolCall(agent().controller.state, "call_run")?.status, "failed");
    stub.answerMessage = () => undefined;
    view.show();
  });

  it("Always allow says what it stores; Approval Rules lists the rule and removes it after asking", async () => {
    view.hide();
    stub.answerMessage = (m) => (m.options?.modal ? "Always allow" : undefined);
    assert.equal((await agent().controller.prompt("run the tests"))?.stopReason, "end_turn");
    assert.equal(toolCall(agent().controller.state, "call_run")?.status, "completed");
    stub.answerQuickPick = (items) => (items as { label: string }[]).find((i) => i.label.startsWith("#"));
    stub.answerMessage = (m) => m.items.find((i) => i.startsWith("Remove rule #"));
    await commands.executeCommand("tether.rules");
    const picker = stub.quickPicks.at(-1)!;
    const labels = (picker.items as { label: string; description: string }[]).map((i) => [i.label, i.description]);
    assert.deepEqual(labels[0], ["#1  allow  `echo` (any arguments)", "yours: pick to remove"]);
    assert.ok(labels.some(([l, d]) => l === "deny  `git push` (any arguments)" && d === "built-in: not removable here"));
    const confirm = stub.messages.find((m) => m.message === "Tether: remove #1  allow  `echo` (any arguments)?")!;
    assert.ok(confirm.options?.modal);
    await waitFor(() => stub.messages.find((m) => m.message.startsWith("Tether: rule #1 removed")), "the removal notice");
    assert.deepEqual((await agent().controller.rules()).filter((r) => r.source === "user"), []);
    stub.answerMessage = () => undefined;
    stub.answerQuickPick = () => undefined;
    view.show();
  });

  it("without the automatic diff, a hidden view's edit is announced with a Review Diff action", async () => {
    stub.changeSettings({ "tether.openDiffAutomatically": false });
    view.hide();
    const diffs = stub.executed.filter((c) => c.id === "vscode.diff").length;
    stub.answerMessage = (m) => (m.items.includes("Review Diff") ? "Review Diff" : undefined);
    const turn = agent().controller.prompt("write a note");
    await waitFor(() => stub.executed.filter((c) => c.id === "vscode.diff").length > diffs, "the diff opened from the notice");
    const notice = stub.messages.find((m) => m.items.includes("Review Diff"))!;
    assert.equal(notice.message, "Tether: Write notes/todo.txt");
    assert.equal(await commands.executeCommand("tether.acceptEdit"), true);
    assert.equal((await turn)?.stopReason, "end_turn");
    assert.equal(readFileSync(join(sandbox.workspace, "notes", "todo.txt"), "utf8"), "remember\n");
    stub.answerMessage = () => undefined;
    stub.changeSettings({ "tether.openDiffAutomatically": true });
    view.show();
  });

  it("with the view shown the tool card answers: Allow once posted by the webview runs the command", async () => {
    const modals = stub.messages.filter((m) => m.options?.modal).length;
    const from = view.posted.length;
    view.send({ type: "prompt", text: "run the tests" });
    const asked = await waitPosted("permission", from, "the approval card");
    view.send({ type: "permission", requestId: asked.prompt.requestId, optionId: "allow_once" });
    await waitPosted("turnEnded", from, "the end of the turn");
    assert.equal(stub.messages.filter((m) => m.options?.modal).length, modals, "no notification");
    const call = toolCall(agent().controller.state, "call_run")!;
    assert.equal(call.status, "completed");
    assert.match(JSON.stringify(call.content), /all passed/);
  });

  it("Ask Tether about selection offers the selection, with its file and lines, for the next prompt", async () => {
    const app = join(sandbox.workspace, "src", "app.py");
    const doc = stub.openDocument(app);
    stub.select(doc, new Position(0, 0), new Position(1, 13));
    view.hide();
    const from = view.posted.length;
    await commands.executeCommand("tether.askAboutSelection");
    view.send({ type: "ready" }); // a view shown again asks for the state
    const context = posted(from).find((m) => m.type === "context");
    assert.deepEqual(context, {
      type: "context",
      label: "src/app.py:1-2",
      text: "src/app.py:1-2:\n```python\ndef main():\n    return 42\n```",
    });
    assert.equal(view.visible, true, "the chat view is shown");
    // a reloaded view still offers it until a prompt is sent
    assert.ok(agent().controller.snapshot().some((m) => m.type === "context"));
    // the view sends the chip's text with what the user typed
    const sent = view.posted.length;
    view.send({ type: "prompt", text: `${context!.type === "context" ? context!.text : ""}\n\nexplain this` });
    await waitPosted("turnEnded", sent, "the end of the turn");
    assert.ok(posted(sent).some((m) => m.type === "update" && JSON.stringify(m.update).includes("That selection returns 42.")));
    assert.ok(!agent().controller.snapshot().some((m) => m.type === "context"), "sent with that prompt");
    stub.closeDocument(doc);
  });

  it("New session starts an empty chat; the sessions picker reopens an old one", async () => {
    const old = agent().controller.state.sessionId!;
    let from = view.posted.length;
    await commands.executeCommand("tether.newSession");
    const fresh = await waitPosted("session", from, "the new session");
    assert.notEqual(fresh.sessionId, old);
    assert.equal(fresh.title, null);

    stub.answerQuickPick = (items) => (items as { sessionId: string }[]).find((i) => i.sessionId === old);
    from = view.posted.length;
    await commands.executeCommand("tether.sessions");
    const labels = (stub.quickPicks.at(-1)!.items as { label: string }[]).map((i) => i.label);
    assert.ok(labels.includes("edit the readme please"));
    const shown = await waitPosted("session", from, "the old session");
    assert.equal(shown.sessionId, old);
    assert.equal(shown.title, "edit the readme please");
    assert.ok(posted(from).some((m) => m.type === "update" && JSON.stringify(m.update).includes("Editing.")));
  });

  it("the mode picker changes the daemon's mode: in full-auto the command runs without asking", async () => {
    stub.answerQuickPick = (items) => (items as { modeId: string }[]).find((i) => i.modeId === "full-auto");
    const from = view.posted.length;
    await commands.executeCommand("tether.setMode");
    assert.ok(posted(from).some((m) => m.type === "mode" && m.modeId === "full-auto"));
    assert.match(String(stub.statusBarItems[0].tooltip), /mode: full-auto/);
    view.send({ type: "prompt", text: "run the tests" });
    await waitPosted("turnEnded", from, "the end of the turn");
    assert.ok(!posted(from).some((m) => m.type === "permission"));
    assert.equal(toolCall(agent().controller.state, "call_run")?.approvedBy, "allowed by mode full-auto");
  });

  it("Set Model lists the session's models in a quick pick and sets the one picked", async () => {
    stub.answerQuickPick = (items) => (items as { value: string }[]).find((i) => i.value === "default");
    const from = view.posted.length;
    await commands.executeCommand("tether.setModel");
    const items = stub.quickPicks.at(-1)!.items as { label: string; description: string; value: string }[];
    assert.deepEqual(items.map((i) => [i.label, i.value, i.description]), [["Provider default", "default", "default · current"]]);
    await waitPosted("options", from, "the options after set_config_option");
    assert.equal(agent().controller.option("model")?.currentValue, "default");
  });

  it("the webview's Files changed and Rewind to here reach the daemon: a confirmed rewind restores the file and reloads the chat", async () => {
    let from = view.posted.length;
    view.send({ type: "prompt", text: "write a note again" });
    await waitPosted("turnEnded", from, "the end of the turn");
    const note = join(sandbox.workspace, "notes", "again.txt");
    assert.equal(readFileSync(note, "utf8"), "again\n");
    const texts = agent().controller.state.turns.map((t) => (t.items[0] as { text?: string }).text ?? "");
    const index = texts.lastIndexOf("write a note again");
    from = view.posted.length;
    view.send({ type: "changes", texts, index });
    const changes = await waitPosted("changes", from, "the turn's changed files");
    assert.deepEqual(changes.files.map((f) => [f.path, f.status]), [["notes/again.txt", "added"]]);
    view.send({ type: "rewind", texts, index, restore: "both" });
    const { preview } = await waitPosted("rewindPreview", from, "the rewind to confirm");
    assert.deepEqual([preview.restored, preview.conflicts], [["notes/again.txt"], []]);
    from = view.posted.length;
    view.send({ type: "rewindConfirm", token: preview.token, force: false });
    await waitPosted("notice", from, "the rewind's notice", (m) => m.text.startsWith("Rewound"));
    assert.throws(() => readFileSync(note, "utf8"), /ENOENT/);
    assert.ok(posted(from).some((m) => m.type === "session"), "the chat shows the conversation as it now stands");
    assert.ok(!posted(from).some((m) => m.type === "update" && JSON.stringify(m.update).includes("write a note again")));
  });

  it("location links open the file at the line; copy buttons fill the clipboard", async () => {
    view.send({ type: "openLocation", path: readme(), line: 3 });
    await waitFor(() => stub.shownDocuments.length > 0, "the document shown");
    const shown = stub.shownDocuments.at(-1)!;
    assert.equal(shown.uri.fsPath, readme());
    assert.equal(shown.selection?.start.line, 2);
    view.send({ type: "copy", text: 'print("hello")' });
    await waitFor(() => stub.clipboard === 'print("hello")', "the clipboard");
  });

  it("a daemon crash is announced, the daemon restarts and the session comes back", async () => {
    const sessionId = agent().controller.state.sessionId!;
    const pid = agent().supervisor.pid!;
    const from = view.posted.length;
    process.kill(pid, "SIGKILL");
    const notice = await waitFor(() => stub.messages.find((m) => m.message.startsWith("Tether stopped unexpectedly")), "the crash notice");
    assert.equal(notice.level, "warning");
    assert.equal(notice.message, "Tether stopped unexpectedly in ws (signal SIGKILL); restarting it.");
    assert.deepEqual(notice.items, ["Show Log"]);
    const reloaded = await waitPosted("session", from, "the session loaded again");
    assert.equal(reloaded.sessionId, sessionId);
    assert.notEqual(agent().supervisor.pid, pid);
  });

  it("Set API Key stores the key in SecretStorage; the restarted daemon gets it", async () => {
    stub.answerInputBox = () => "sk-second-key";
    stub.answerMessage = (m) => (m.items.includes("Restart Tether") ? "Restart Tether" : undefined);
    const pid = agent().supervisor.pid!;
    await commands.executeCommand("tether.setApiKey");
    assert.equal(context.secrets.values.get(API_KEY_SECRET), "sk-second-key");
    assert.equal((stub.inputBoxes.at(-1) as { password?: boolean }).password, true);
    await waitFor(() => agent().supervisor.pid && agent().supervisor.pid !== pid, "the restarted daemon");
    await waitFor(() => launchedKey() === "sk-second-key", "the restarted daemon started with the new key");
    assert.equal(daemonEnvironment(agent().supervisor.pid!).TETHER_API_KEY, undefined);
    assert.doesNotMatch(stub.outputChannels[0].lines.join("\n"), /sk-second-key/);
  });

  it("deactivate stops the daemon with shutdown and exit", async () => {
    const pid = agent().supervisor.pid!;
    await deactivate();
    assert.throws(() => process.kill(pid, 0), /ESRCH/);
    assert.match(stub.outputChannels[0].lines.at(-1)!, /exited \(code 0, signal null\)/);
  });
});
