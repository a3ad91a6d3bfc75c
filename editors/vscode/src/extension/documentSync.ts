/**
 * Open documents of one workspace folder, synchronised to its daemon (SPEC §3.20), so
 * tools read the editor's unsaved text and `workspace/applyEdit` targets its version.
 */
import * as vscode from "vscode";
import type { TetherClient } from "../core/client";

export class DocumentSync implements vscode.Disposable {
  private readonly open = new Set<string>();
  private readonly subscriptions: vscode.Disposable[];

  constructor(
    private readonly folder: vscode.WorkspaceFolder,
    private readonly client: () => TetherClient | undefined,
  ) {
    this.subscriptions = [
      vscode.workspace.onDidOpenTextDocument((doc) => this.opened(doc)),
      vscode.workspace.onDidChangeTextDocument((e) => this.changed(e)),
      vscode.workspace.onDidCloseTextDocument((doc) => this.closed(doc)),
    ];
  }

  /** A (re)started daemon gets every open document of the folder. */
  resync(): void {
    this.open.clear();
    for (const doc of vscode.workspace.textDocuments) this.opened(doc);
  }

  private covers(doc: vscode.TextDocument): boolean {
    if (doc.uri.scheme !== "file" || doc.isClosed) return false;
    return vscode.workspace.getWorkspaceFolder(doc.uri)?.uri.toString() === this.folder.uri.toString();
  }

  private opened(doc: vscode.TextDocument): void {
    const client = this.client();
    if (!client || !this.covers(doc)) return;
    const key = doc.uri.toString();
    this.open.add(key);
    void client.didOpen(key, doc.languageId, doc.version, doc.getText());
  }

  private changed(e: vscode.TextDocumentChangeEvent): void {
    const key = e.document.uri.toString();
    const client = this.client();
    if (!client || !this.open.has(key) || !e.contentChanges.length) return;
    void client.didChange(
      key,
      e.document.version,
      e.contentChanges.map((c) => ({
        range: {
          start: { line: c.range.start.line, character: c.range.start.character },
          end: { line: c.range.end.line, character: c.range.end.character },
        },
        text: c.text,
      })),
    );
  }

  private closed(doc: vscode.TextDocument): void {
    const key = doc.uri.toString();
    if (!this.open.delete(key)) return;
    void this.client()?.didClose(key);
  }

  dispose(): void {
    for (const s of this.subscriptions) s.dispose();
  }
}
