// A window that has no folder when the extension starts (real VS Code activates it at start-up
// for the status bar): the view says to open one, and becomes the folder's chat, with its daemon
// started, modes and sessions, as soon as a folder arrives; it says so again when the last goes.
// A daemon that could not start (a wrong tether.path) starts when the settings change.
import assert from "node:assert/strict";
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type * as vscode from "vscode";
import { activate, deactivate } from "../../src/extension/main";
import type { TetherExtension } from "../../src/extension/tetherExtension";
import type { HostMessage } from "../../src/shared/messages";
import { stub, type StubWebviewView } from "../stubs/vscode";
import { CHAT_SCRIPT, EXTENSION_ROOT, makeSandbox, python, waitFor, type Sandbox } from "../support/sandbox";

const MANIFEST = JSON.parse(readFileSync(join(EXTENSION_ROOT, "package.json"), "utf8"));

describe("folders arriving while the extension runs", () => {
  let sandbox: Sandbox;
  let ext: TetherExtension;
  let view: StubWebviewView;
  let tether: string;
  const posted = (from = 0) => view.posted.slice(from) as HostMessage[];

  before(() => {
    sandbox = makeSandbox();
    for (const key of Object.keys(process.env)) if (/^(TETHER_|OPENAI_|ANTHROPIC_)/.test(key)) delete process.env[key];
    Object.assign(process.env, { TETHER_HOME: sandbox.home, XDG_CONFIG_HOME: join(sandbox.root, "xdg-config"), TETHER_PROBE_PORTS: "" });
    mkdirSync(join(sandbox.root, "bin"));
    tether = join(sandbox.root, "bin", "tether");
    writeFileSync(tether, `#!/bin/sh\nexec '${python()}' -m tether "$@"\n`);
    chmodSync(tether, 0o755);
    stub.reset();
    stub.settings = { "tether.path": tether, "tether.provider": "scripted", "tether.script": CHAT_SCRIPT };
  });
  after(async () => {
    await deactivate();
    sandbox.cleanup();
  });

  it("with no folder: the status bar is there and the view asks for a folder", async () => {
    ext = activate(stub.extensionContext(EXTENSION_ROOT, MANIFEST) as unknown as vscode.ExtensionContext);
    assert.equal(stub.statusBarItems[0].text, "$(comment-discussion) Tether: idle");
    view = await stub.resolveView("tether.chat");
    view.send({ type: "ready" });
    assert.deepEqual(posted(), [{ type: "noFolder" }]);
    assert.equal(ext.current, undefined);
  });

  it("the first folder makes the view its chat: modes, then the sessions from its daemon", async () => {
    const from = view.posted.length;
    stub.folderAdded(sandbox.workspace, "ws");
    const init = posted(from)[0];
    assert.equal(init?.type, "init");
    assert.deepEqual(init.type === "init" && init.modes.map((m) => m.id), ["read-only", "ask", "auto-edit", "full-auto"]);
    await waitFor(() => posted(from).find((m) => m.type === "sessions"), "the session list from the folder's daemon");
    assert.ok(ext.current?.started, "the folder's daemon runs");
    assert.equal(ext.current?.folder.name, "ws");

    view.send({ type: "prompt", text: "hello" });
    await waitFor(() => posted(from).find((m) => m.type === "turnEnded"), "a turn in the folder");
  });

  it("when the last folder goes, the view asks for one again", async () => {
    const from = view.posted.length;
    stub.folderRemoved(stub.folders[0]);
    await waitFor(() => posted(from).find((m) => m.type === "noFolder"), "the no-folder notice");
    assert.equal(ext.current, undefined);
  });

  it("a daemon that could not start is started as soon as the settings change", async () => {
    stub.changeSettings({ "tether.path": join(sandbox.root, "bin", "no-such-tether") });
    let from = view.posted.length;
    stub.folderAdded(sandbox.workspace, "ws");
    const error = await waitFor(() => posted(from).find((m) => m.type === "error"), "the start failure");
    assert.match(error.type === "error" ? error.message : "", /could not start/);
    assert.equal(ext.current?.started, false);

    from = view.posted.length;
    stub.changeSettings({ "tether.path": tether });
    await waitFor(() => posted(from).find((m) => m.type === "sessions"), "the session list once the daemon started");
    assert.ok(ext.current?.started);
  });
});
