// The production bundle (dist/extension.js, what the .vsix ships) loads with `vscode`
// provided by the host, activates, and registers what package.json contributes.
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import Module, { createRequire } from "node:module";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import * as vscodeStub from "../stubs/vscode";
import { stub } from "../stubs/vscode";
import { EXTENSION_ROOT, makeSandbox, type Sandbox } from "../support/sandbox";

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
});
