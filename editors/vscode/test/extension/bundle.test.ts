// The production bundle (dist/extension.js, what the .vsix ships) loads with `vscode`
// provided by the host, activates, and registers what package.json contributes.
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import Module, { createRequire } from "node:module";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import * as vscodeStub from "../stubs/vscode";
import { stub } from "../stubs/vscode";
import { EXTENSION_ROOT, makeSandbox, waitFor, type Sandbox } from "../support/sandbox";

const MANIFEST = JSON.parse(readFileSync(join(EXTENSION_ROOT, "package.json"), "utf8"));

type Loader = (request: string, parent: unknown, isMain: boolean) => unknown;

describe("the built extension bundle", () => {
  let sandbox: Sandbox;
  const moduleLoader = Module as unknown as { _load: Loader };
  const originalLoad = moduleLoader._load;

  before(() => {
    sandbox = makeSandbox();
    // VS Code provides `vscode` to extensions at require time; here the stub does
    moduleLoader._load = function (request, parent, isMain) {
      return request === "vscode" ? vscodeStub : originalLoad.call(this, request, parent, isMain);
    };
  });
  after(() => {
    moduleLoader._load = originalLoad;
    sandbox.cleanup();
  });

  it("package.json's main is the bundle, and it activates into what the manifest contributes", async () => {
    const main = join(EXTENSION_ROOT, MANIFEST.main);
    assert.equal(MANIFEST.main, "./dist/extension.js");
    assert.ok(existsSync(main), "run `node build.mjs` first");
    const bundle = readFileSync(main, "utf8");
    assert.doesNotMatch(bundle, /require\("vscode-jsonrpc/, "vscode-jsonrpc is bundled, not required at run time");

    stub.reset();
    stub.addFolder(sandbox.workspace, "ws");
    const extension = createRequire(__filename)(main) as {
      activate(context: unknown): unknown;
      deactivate(): Promise<void>;
    };
    const context = stub.extensionContext(EXTENSION_ROOT, MANIFEST);
    extension.activate(context);

    const commands = (MANIFEST.contributes.commands as { command: string }[]).map((c) => c.command).sort();
    assert.deepEqual([...stub.commands.keys()].sort(), commands);
    const views = (MANIFEST.contributes.views.tether as { id: string; type: string }[]).map((v) => v.id);
    assert.deepEqual([...stub.viewProviders.keys()], views);
    assert.ok(MANIFEST.activationEvents.includes(`onView:${views[0]}`));
    for (const item of MANIFEST.contributes.menus["editor/title"] as { command: string; when: string }[]) {
      assert.ok(stub.commands.has(item.command));
      assert.equal(item.when, `resourceScheme == ${[...stub.contentProviders.keys()][0]}`);
    }
    assert.equal(stub.statusBarItems.length, 1);
    await extension.deactivate();
  });

  it("a tether executable that is not there is reported with a way to the setting", async () => {
    stub.reset();
    stub.addFolder(sandbox.workspace, "ws");
    const missing = join(sandbox.root, "bin", "tether");
    stub.settings = { "tether.path": missing };
    stub.answerMessage = (m) => (m.items.includes("Open Settings") ? "Open Settings" : undefined);
    const extension = createRequire(__filename)(join(EXTENSION_ROOT, MANIFEST.main)) as {
      activate(context: unknown): unknown;
      deactivate(): Promise<void>;
    };
    extension.activate(stub.extensionContext(EXTENSION_ROOT, MANIFEST));
    const view = await stub.resolveView("tether.chat");
    view.send({ type: "ready" });
    const shown = await waitFor(() => stub.executed.find((c) => c.id === "workbench.action.openSettings"), "the settings opened");
    assert.deepEqual(shown.args, ["tether.path"]);
    const error = stub.messages.find((m) => m.level === "error")!;
    assert.equal(error.message, `Tether could not start (${missing} serve): '${missing}' was not found (set tether.path to the tether executable)`);
    assert.deepEqual(error.items, ["Open Settings", "Show Log"]);
    assert.ok(view.posted.some((m) => (m as { type: string; message?: string }).type === "error"), "the chat says it too");
    await extension.deactivate();
  });
});
