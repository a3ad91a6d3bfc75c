// Records the webview's test fixtures from a real `tether serve` (scripted provider).
//
// Each fixture is the conversation between the extension host and the webview, both ways:
// `{"host": HostMessage}` is what the host posts to the webview (the daemon's updates
// verbatim, plus the control messages of src/shared/messages.ts), `{"view": ViewMessage}`
// is what the user did in the webview at that point (the tests click the control and
// assert the webview posted exactly that). This script plays the host's part the way the
// extension does: an ACP + LSP client over Content-Length framing, answering approval
// prompts and applying `workspace/applyEdit` edits to the temp workspace.
//
// Re-record (from editors/vscode):  node test/webview/record.mjs
// The daemon's Python is $TETHER_PYTHON, else ../../.venv/bin/python, else python3.
// The temp workspace's path is replaced by /home/ana/project in the fixtures.
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import rpc from "vscode-jsonrpc/node.js";

const here = dirname(fileURLToPath(import.meta.url));
const repo = join(here, "..", "..", "..", "..");
const fixtures = join(here, "fixtures");
const shownWorkspace = "/home/ana/project";

function python() {
  if (process.env.TETHER_PYTHON) return process.env.TETHER_PYTHON;
  const venv = join(repo, ".venv", "bin", "python");
  return existsSync(venv) ? venv : "python3";
}

function makeWorkspace(root) {
  const ws = join(root, "ws");
  mkdirSync(join(ws, "src"), { recursive: true });
  writeFileSync(join(ws, "README.md"), "# Sample\n\nHello from the sample workspace.\n");
  writeFileSync(join(ws, "src", "app.py"), "def main():\n    return 42\n");
  const lines = Array.from({ length: 40 }, (_, i) => `line ${i + 1}\n`).join("");
  writeFileSync(join(ws, "long.txt"), lines);
  writeFileSync(join(root, "outside.txt"), "secret outside the workspace\n");
  return realpathSync(ws);
}

class Recording {
  constructor(name, description) {
    this.name = name;
    this.description = description;
    this.entries = [];
  }
  host(message) {
    this.entries.push({ host: message });
  }
  view(message) {
    this.entries.push({ view: message });
  }
  save(workspace) {
    const text = JSON.stringify(
      { description: this.description, recordedWith: "test/webview/record.mjs", entries: this.entries },
      null,
      1,
    ).replaceAll(workspace, shownWorkspace);
    writeFileSync(join(fixtures, `${this.name}.json`), text + "\n");
  }
}

/** The host's side of one daemon: what the extension does, minus VS Code. */
class Host {
  constructor(workspace, home) {
    this.workspace = workspace;
    this.recording = null;
    this.onPermission = null;
    this.child = spawn(
      python(),
      ["-m", "tether", "serve", "--provider", "scripted", "--script", join(here, "scripted.json")],
      {
        cwd: workspace,
        env: {
          ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(TETHER_|OPENAI_|ANTHROPIC_)/.test(k))),
          TETHER_HOME: join(home, "home"),
          XDG_CONFIG_HOME: join(home, "xdg-config"),
          TETHER_PROBE_PORTS: "",
          PYTHONUNBUFFERED: "1",
        },
        stdio: ["pipe", "pipe", "inherit"],
      },
    );
    // vscode-jsonrpc does not show a handler its request's id; the prompts' ids
    // ("tether-N") are taken from the reader, in arrival order.
    this.permissionIds = [];
    const reader = new rpc.StreamMessageReader(this.child.stdout);
    const listen = reader.listen.bind(reader);
    reader.listen = (callback) =>
      listen((message) => {
        if (message.method === "session/request_permission") this.permissionIds.push(String(message.id));
        callback(message);
      });
    this.conn = rpc.createMessageConnection(reader, new rpc.StreamMessageWriter(this.child.stdin));
    this.conn.onNotification("session/update", (p) => {
      this.recording?.host({ type: "update", sessionId: p.sessionId, update: p.update });
    });
    this.conn.onNotification("$/cancel_request", (p) => {
      this.recording?.host({ type: "permissionClosed", requestId: String(p.requestId) });
    });
    this.conn.onRequest("session/request_permission", (params) => this.permission(params));
    this.conn.onRequest("workspace/applyEdit", (params) => this.applyEdit(params));
    this.conn.listen();
  }

  async start() {
    await this.conn.sendRequest("initialize", {
      protocolVersion: 1,
      clientCapabilities: { fs: { readTextFile: false, writeTextFile: false } },
      processId: process.pid,
      rootUri: pathToFileURL(this.workspace).href,
      workspaceFolders: [{ uri: pathToFileURL(this.workspace).href, name: "project" }],
      clientInfo: { name: "tether-vscode-recorder", version: "0.1.0" },
      capabilities: { workspace: { applyEdit: true, workspaceEdit: { documentChanges: true, resourceOperations: ["create"] } } },
    });
    await this.conn.sendNotification("initialized", {});
  }

  async stop() {
    await this.conn.sendRequest("shutdown");
    await this.conn.sendNotification("exit");
    await new Promise((resolve) => this.child.once("exit", resolve));
    this.conn.dispose();
  }

  async permission(params) {
    const requestId = this.permissionIds.shift();
    const meta = params._meta?.tether ?? {};
    const prompt = {
      requestId,
      sessionId: params.sessionId,
      toolCallId: params.toolCall.toolCallId,
      title: params.toolCall.title,
      kind: params.toolCall.kind,
      content: params.toolCall.content ?? [],
      rawInput: params.toolCall.rawInput,
      options: params.options,
      reason: meta.reason,
      hunks: meta.hunks ?? [],
    };
    this.recording.host({ type: "permission", prompt });
    this.recording.host({ type: "status", status: "waiting" });
    const answer = this.onPermission(prompt);
    this.recording.view({ type: "permission", requestId, optionId: answer.optionId, ...(answer.acceptedHunks ? { acceptedHunks: answer.acceptedHunks } : {}) });
    this.recording.host({ type: "permissionClosed", requestId });
    this.recording.host({ type: "status", status: "streaming" });
    const result = { outcome: { outcome: "selected", optionId: answer.optionId } };
    if (answer.acceptedHunks) result._meta = { tether: { acceptedHunks: answer.acceptedHunks } };
    return result;
  }

  applyEdit(params) {
    for (const change of params.edit.documentChanges ?? []) {
      if (change.kind === "create") {
        const path = fileURLToPath(change.uri);
        mkdirSync(dirname(path), { recursive: true });
        if (!existsSync(path)) writeFileSync(path, "");
      } else if (change.textDocument) {
        // Tether's edits replace the whole text (SPEC §3.26)
        writeFileSync(fileURLToPath(change.textDocument.uri), change.edits.map((e) => e.newText).join(""));
      }
    }
    return { applied: true };
  }

  async sessions() {
    const { sessions } = await this.conn.sendRequest("session/list", { cwd: this.workspace });
    return sessions;
  }

  async newSession() {
    return this.conn.sendRequest("session/new", { cwd: this.workspace, mcpServers: [] });
  }

  async prompt(sessionId, text, { whileRunning } = {}) {
    const rec = this.recording;
    rec.view({ type: "prompt", text });
    rec.host({ type: "userMessage", text });
    rec.host({ type: "status", status: "streaming" });
    const pending = this.conn.sendRequest("session/prompt", { sessionId, prompt: [{ type: "text", text }] });
    if (whileRunning) await whileRunning();
    const result = await pending;
    const turnId = result._meta?.tether?.turnId;
    const { reports } = await this.conn.sendRequest("_tether/session/report", { sessionId, turnId });
    const usage = reports[0]?.totalUsage;
    rec.host({
      type: "turnEnded",
      stopReason: result.stopReason,
      ...(usage ? { usage: { inputTokens: usage.inputTokens, outputTokens: usage.outputTokens } } : {}),
    });
    rec.host({ type: "status", status: "idle" });
  }

  /** init + session, as the host posts them when the view opens on a new session. */
  async openNewSession(rec) {
    const before = await this.sessions();
    const created = await this.newSession();
    this.modes = created.modes.availableModes;
    rec.host({
      type: "init",
      sessions: before,
      sessionId: created.sessionId,
      modes: this.modes,
      modeId: created.modes.currentModeId,
      status: "idle",
    });
    rec.host({ type: "session", sessionId: created.sessionId, title: null, modeId: created.modes.currentModeId });
    return created.sessionId;
  }
}

async function waitFor(predicate, what) {
  const deadline = Date.now() + 20000;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

async function main() {
  mkdirSync(fixtures, { recursive: true });
  const root = mkdtempSync(join(tmpdir(), "tether-webview-rec-"));
  const workspace = makeWorkspace(root);
  const host = new Host(workspace, root);
  try {
    await host.start();

    // chat: thinking, streamed markdown, tool cards (completed, failed), a plan, a mode change
    const chat = new Recording("chat", "A streamed turn: thinking, markdown with code, read tools (one fails), a plan; then a mode change.");
    host.recording = chat;
    const chatId = await host.openNewSession(chat);
    await host.prompt(chatId, "explain the app");
    chat.host({ type: "sessions", sessions: await host.sessions() });
    chat.view({ type: "setMode", modeId: "auto-edit" });
    await host.conn.sendRequest("session/set_mode", { sessionId: chatId, modeId: "auto-edit" });
    chat.host({ type: "mode", modeId: "auto-edit" });
    chat.save(workspace);

    // command: approval of a command, then its live output
    const command = new Recording("command", "A command asks for approval (allowed once), then streams its output.");
    host.recording = command;
    const commandId = await host.openNewSession(command);
    host.onPermission = () => ({ optionId: "allow_once" });
    await host.prompt(commandId, "run the tests");
    command.save(workspace);

    // edit: a one-hunk edit, accepted
    const edit = new Recording("edit", "An edit with one hunk asks for approval (accepted) and is applied with workspace/applyEdit.");
    host.recording = edit;
    const editId = await host.openNewSession(edit);
    host.onPermission = () => ({ optionId: "allow_once" });
    await host.prompt(editId, "edit the readme");
    edit.save(workspace);

    // hunks: a two-hunk edit, only the second hunk kept
    const hunks = new Recording("hunks", "An edit with two hunks; the user keeps only the second.");
    host.recording = hunks;
    const hunksId = await host.openNewSession(hunks);
    host.onPermission = (prompt) => ({
      optionId: "allow_once",
      acceptedHunks: { [prompt.hunks[0].path]: [1] },
    });
    await host.prompt(hunksId, "two hunks");
    hunks.save(workspace);

    // cancel: the stop button during a slow answer
    const cancel = new Recording("cancel", "A slowly streamed answer stopped part way with the stop button.");
    host.recording = cancel;
    const cancelId = await host.openNewSession(cancel);
    await host.prompt(cancelId, "slow", {
      whileRunning: async () => {
        const chunks = () => cancel.entries.filter((e) => e.host?.type === "update").length;
        await waitFor(() => chunks() >= 6, "streamed chunks");
        cancel.view({ type: "cancel" });
        await host.conn.sendNotification("session/cancel", { sessionId: cancelId });
      },
    });
    cancel.save(workspace);
    await host.stop();

    // replay: a new daemon; the session list, a new session, then two old sessions loaded
    const host2 = new Host(workspace, root);
    await host2.start();
    const replay = new Recording("replay", "After a daemon restart: the session list, New, then stored sessions loaded (replayed).");
    host2.recording = replay;
    const sessions = await host2.sessions();
    // the four modes are fixed (SPEC §3.5); a host knows them before its first session here
    replay.host({ type: "init", sessions, sessionId: null, modes: host.modes, modeId: null, status: "idle" });
    replay.view({ type: "newSession" });
    const created = await host2.newSession();
    replay.host({ type: "session", sessionId: created.sessionId, title: null, modeId: created.modes.currentModeId });
    replay.host({ type: "sessions", sessions: await host2.sessions() });
    for (const sessionId of [chatId, cancelId]) {
      replay.view({ type: "loadSession", sessionId });
      const title = sessions.find((s) => s.sessionId === sessionId)?.title ?? null;
      // the host says which session is shown, then the replayed updates arrive
      replay.host({ type: "session", sessionId, title, modeId: null });
      const result = await host2.conn.sendRequest("session/load", { sessionId, cwd: workspace, mcpServers: [] });
      replay.host({ type: "mode", modeId: result.modes.currentModeId });
    }
    replay.save(workspace);
    await host2.stop();
  } finally {
    if (host.child.exitCode === null) host.child.kill();
    rmSync(root, { recursive: true, force: true });
  }
  for (const name of ["chat", "command", "edit", "hunks", "cancel", "replay"]) {
    const n = JSON.parse(readFileSync(join(fixtures, `${name}.json`), "utf8")).entries.length;
    console.log(`${name}.json: ${n} entries`);
  }
}

await main();
