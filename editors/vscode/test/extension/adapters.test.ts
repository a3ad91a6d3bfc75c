// The VS Code adapters against the stub `vscode` module, without a daemon: the diff
// editor's virtual documents, WorkspaceEdit ranges and saving, settings and secrets.
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, beforeEach, describe, it } from "node:test";
import * as vscode from "vscode";
import { EditReview, DIFF_SCHEME, parseDiffUri } from "../../src/extension/editReview";
import { applyWorkspaceEdit } from "../../src/extension/workspaceEdits";
import { API_KEY_SECRET, daemonLaunch, initializationOptions, readSettings } from "../../src/extension/settings";
import type { PermissionPrompt } from "../../src/shared/messages";
import { stub, Range, TabInputTextDiff, type WorkspaceEdit as StubEdit } from "../stubs/vscode";
import { makeSandbox } from "../support/sandbox";

const sandbox = makeSandbox();
after(() => sandbox.cleanup());
const readme = join(sandbox.workspace, "README.md");

function editPrompt(requestId = "tether-3"): PermissionPrompt {
  return {
    requestId,
    sessionId: "sess_1",
    toolCallId: "call_edit",
    title: "Edit README.md",
    kind: "edit",
    content: [{ type: "diff", path: readme, oldText: "# Sample\n\nHello.\n", newText: "# Sample\n\nHello, edited.\n" }],
    options: [],
    hunks: [{ path: readme, index: 0, header: "@@ -1,3 +1,3 @@" }],
  };
}

describe("the diff editor", () => {
  beforeEach(() => stub.reset());

  it("opens VS Code's diff with virtual before/after documents, never the real file", async () => {
    const review = new EditReview();
    stub.contentProviders.set(DIFF_SCHEME, review);
    review.add(7, editPrompt());
    assert.equal(await review.open(7, "tether-3"), true);

    const diff = stub.executed.find((c) => c.id === "vscode.diff")!;
    const [before, after, title] = diff.args as [vscode.Uri, vscode.Uri, string];
    assert.equal(before.scheme, "tether-diff");
    assert.equal(after.scheme, "tether-diff");
    assert.equal(before.path, readme);
    assert.equal(after.path, readme);
    assert.deepEqual(parseDiffUri(before), { agentId: 7, requestId: "tether-3", side: "before", path: readme });
    assert.deepEqual(parseDiffUri(after), { agentId: 7, requestId: "tether-3", side: "after", path: readme });
    assert.equal(title, "README.md (Tether: proposed edit)");
    assert.equal(stub.contentOf(before), "# Sample\n\nHello.\n");
    assert.equal(stub.contentOf(after), "# Sample\n\nHello, edited.\n");

    // the editor title buttons find the approval from the URI VS Code passes them
    assert.equal(review.target(after)?.prompt.requestId, "tether-3");
    await review.close(7, "tether-3");
    assert.equal(stub.tabs.length, 0);
    assert.equal(stub.closedTabs.length, 1);
    assert.ok(stub.closedTabs[0].input instanceof TabInputTextDiff);
    assert.equal(stub.contentOf(after), "", "a closed approval has no content any more");
    assert.equal(await review.open(7, "tether-3"), false);
  });

  it("a new file diffs against an empty document; a command has no diff", async () => {
    const review = new EditReview();
    stub.contentProviders.set(DIFF_SCHEME, review);
    const create = { ...editPrompt("tether-4"), content: [{ type: "diff" as const, path: join(sandbox.workspace, "new.txt"), newText: "fresh\n" }] };
    review.add(1, create);
    await review.open(1, "tether-4");
    const [before, , title] = stub.executed.at(-1)!.args as [vscode.Uri, vscode.Uri, string];
    assert.equal(stub.contentOf(before), "");
    assert.equal(title, "new.txt (Tether: new file)");
    review.add(1, { ...editPrompt("tether-5"), kind: "execute", content: [{ type: "content", content: { type: "text", text: "$ ls\n(in .)" } }] });
    assert.equal(await review.open(1, "tether-5"), false);
  });
});

describe("workspace/applyEdit as a WorkspaceEdit", () => {
  beforeEach(() => {
    stub.reset();
    stub.addFolder(sandbox.workspace);
    writeFileSync(readme, "# Sample\n\nHello from the sample workspace.\n");
  });

  const whole = (uri: string, version: number | null, newText: string) => ({
    label: "Tether: edit README.md",
    edit: {
      documentChanges: [
        {
          textDocument: { uri, version },
          edits: [{ range: { start: { line: 0, character: 0 }, end: { line: 3, character: 0 } }, newText }],
        },
      ],
    },
  });

  it("a file that is not open: the edit's range is kept exactly, and the file is saved", async () => {
    const uri = `file://${readme}`;
    const result = await applyWorkspaceEdit(whole(uri, null, "# Sample\n\nHello, edited.\n"), { save: true });
    assert.deepEqual(result, { applied: true });
    const edit = stub.appliedEdits[0].edit as unknown as StubEdit;
    assert.equal(edit.operations.length, 1);
    const op = edit.operations[0] as { kind: string; uri: vscode.Uri; range: Range; newText: string };
    assert.equal(op.kind, "replace");
    assert.equal(op.uri.toString(), uri);
    assert.deepEqual([op.range.start.line, op.range.start.character, op.range.end.line, op.range.end.character], [0, 0, 3, 0]);
    assert.equal(op.newText, "# Sample\n\nHello, edited.\n");
    assert.equal(readFileSync(readme, "utf8"), "# Sample\n\nHello, edited.\n");
    assert.deepEqual(stub.saved, [readme]);
  });

  it("an open buffer with unsaved changes gets the edit (one undo step) and stays unsaved", async () => {
    const doc = stub.openDocument(readme);
    stub.type(doc, new Range(2, 0, 2, 5), "Howdy");
    assert.equal(doc.isDirty, true);
    const result = await applyWorkspaceEdit(whole(doc.uri.toString(), doc.version, "# Sample\n\nHowdy, edited.\n"), { save: true });
    assert.deepEqual(result, { applied: true });
    assert.equal(doc.getText(), "# Sample\n\nHowdy, edited.\n");
    assert.deepEqual(stub.saved, [], "the user's unsaved work is not saved for them");
    assert.equal(readFileSync(readme, "utf8"), "# Sample\n\nHello from the sample workspace.\n");
  });

  it("an edit made for an older version of the buffer is refused, nothing applied", async () => {
    const doc = stub.openDocument(readme);
    const seen = doc.version;
    stub.type(doc, new Range(0, 0, 0, 0), "x");
    const result = await applyWorkspaceEdit(whole(doc.uri.toString(), seen, "replaced\n"), { save: true });
    assert.equal(result.applied, false);
    assert.match(result.failureReason ?? "", /README.md changed in the editor \(version 2; the edit was made for version 1\)/);
    assert.equal(stub.appliedEdits.length, 0);
    assert.equal(doc.getText(), "x# Sample\n\nHello from the sample workspace.\n");
  });

  it("a new file: CreateFile first, then its text", async () => {
    const path = join(sandbox.workspace, "notes", "todo.txt");
    const uri = `file://${path}`;
    const result = await applyWorkspaceEdit(
      {
        edit: {
          documentChanges: [
            { kind: "create", uri, options: { ignoreIfExists: true } },
            { textDocument: { uri, version: null }, edits: [{ range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } }, newText: "remember\n" }] },
          ],
        },
      },
      { save: true },
    );
    assert.deepEqual(result, { applied: true });
    const ops = (stub.appliedEdits[0].edit as unknown as StubEdit).operations;
    assert.deepEqual(
      ops.map((o) => o.kind),
      ["create", "replace"],
    );
    assert.deepEqual((ops[0] as { options: unknown }).options, { ignoreIfExists: true });
    assert.equal(readFileSync(path, "utf8"), "remember\n");
  });

  it("VS Code refusing the edit is reported back", async () => {
    stub.refuseEdits = true;
    const result = await applyWorkspaceEdit(whole(`file://${readme}`, null, "x"), { save: true });
    assert.deepEqual(result, { applied: false, failureReason: "VS Code did not apply the edit" });
  });
});

describe("settings and secrets", () => {
  beforeEach(() => stub.reset());

  it("the API key comes from SecretStorage into the child's environment only", async () => {
    stub.settings = { "tether.path": "/opt/tether/bin/tether", "tether.args": ["--log-level", "debug"], "tether.provider": "openai", "tether.model": "gpt-x" };
    const context = stub.extensionContext(sandbox.root, {});
    await context.secrets.store(API_KEY_SECRET, "sk-test-secret");
    const settings = readSettings();
    const launch = await daemonLaunch(settings, sandbox.workspace, context.secrets as unknown as vscode.SecretStorage);
    assert.equal(launch.env.TETHER_API_KEY, "sk-test-secret");
    assert.deepEqual(context.secrets.calls, ["store tether.apiKey", "get tether.apiKey"]);
    assert.equal(launch.command, "/opt/tether/bin/tether");
    assert.deepEqual(launch.args, ["serve", "--log-level", "debug"]);
    assert.equal(launch.cwd, sandbox.workspace);
    const options = initializationOptions(settings);
    assert.deepEqual(options, { mode: "ask", provider: "openai", model: "gpt-x" });
    assert.doesNotMatch(JSON.stringify(options), /sk-test-secret|apiKey|api_key/);
  });

  it("a workspace's settings cannot choose who answers, where the key goes, or a looser mode", () => {
    stub.settings = { "tether.provider": "anthropic", "tether.defaultMode": "auto-edit" };
    stub.workspaceSettings = {
      "tether.provider": "scripted",
      "tether.script": "answers.json",
      "tether.baseUrl": "https://attacker.example/v1",
      "tether.defaultMode": "full-auto",
      "tether.model": "their-model",
    };
    const options = initializationOptions(readSettings());
    assert.deepEqual(options, { mode: "auto-edit", provider: "anthropic", model: "their-model" });
    stub.workspaceSettings = { "tether.defaultMode": "read-only" }; // stricter: kept
    assert.equal(readSettings().defaultMode, "read-only");
  });

  it("no key stored: no TETHER_API_KEY is invented", async () => {
    const context = stub.extensionContext(sandbox.root, {});
    const launch = await daemonLaunch(readSettings(), sandbox.workspace, context.secrets as unknown as vscode.SecretStorage);
    assert.equal(launch.env.TETHER_API_KEY, process.env.TETHER_API_KEY);
    assert.equal(launch.command, "tether");
  });
});
