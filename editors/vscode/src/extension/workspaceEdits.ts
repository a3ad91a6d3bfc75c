/**
 * `workspace/applyEdit` (SPEC §3.26) as a VS Code WorkspaceEdit: one undo step, applied
 * to the open buffer when there is one. An edit made for another version of the buffer,
 * or a file with unsaved changes Tether has not seen, is refused rather than clobbered.
 * Files that had no unsaved changes are saved afterwards (setting `tether.saveEditedFiles`),
 * so commands and tests the agent runs next see the change on disk.
 */
import * as vscode from "vscode";
import { basename } from "node:path";
import type { ApplyWorkspaceEditParams, ApplyWorkspaceEditResult, Range } from "../protocol/schema";

export function toRange(r: Range): vscode.Range {
  return new vscode.Range(r.start.line, r.start.character, r.end.line, r.end.character);
}

/** An open file's text in the editor (what the daemon reads, SPEC §3.20), else undefined. */
export function openText(path: string): string | undefined {
  return openDocument(vscode.Uri.file(path))?.getText();
}

function openDocument(uri: vscode.Uri): vscode.TextDocument | undefined {
  const key = uri.toString();
  return vscode.workspace.textDocuments.find((d) => d.uri.toString() === key && !d.isClosed);
}

function staleReason(uri: vscode.Uri, version: number | null): string | undefined {
  const doc = openDocument(uri);
  const name = basename(uri.fsPath);
  if (version === null || version === undefined) {
    return doc?.isDirty ? `${name} has unsaved changes in the editor` : undefined;
  }
  if (!doc) return `${name} was closed in the editor after Tether read it`;
  if (doc.version !== version) return `${name} changed in the editor (version ${doc.version}; the edit was made for version ${version})`;
  return undefined;
}

export async function applyWorkspaceEdit(
  params: ApplyWorkspaceEditParams,
  options: { save: boolean },
): Promise<ApplyWorkspaceEditResult> {
  const edit = new vscode.WorkspaceEdit();
  const edited: vscode.Uri[] = [];
  const dirtyBefore = new Set<string>();
  const addText = (uri: vscode.Uri, edits: { range: Range; newText: string }[]) => {
    if (openDocument(uri)?.isDirty) dirtyBefore.add(uri.toString());
    for (const e of edits) edit.replace(uri, toRange(e.range), e.newText);
    edited.push(uri);
  };

  for (const change of params.edit.documentChanges ?? []) {
    // Tether sends a CreateFile (for a new file) and whole-text edits (SPEC §3.26)
    if ("kind" in change) {
      edit.createFile(vscode.Uri.parse(change.uri), { ...change.options });
      continue;
    }
    const uri = vscode.Uri.parse(change.textDocument.uri);
    const stale = staleReason(uri, change.textDocument.version);
    if (stale) return { applied: false, failureReason: stale };
    addText(uri, change.edits);
  }

  const applied = await vscode.workspace.applyEdit(edit);
  if (!applied) return { applied: false, failureReason: "VS Code did not apply the edit" };
  if (options.save) {
    for (const uri of edited) {
      if (dirtyBefore.has(uri.toString())) continue; // the user's unsaved work stays unsaved
      const doc = await vscode.workspace.openTextDocument(uri);
      await doc.save();
    }
  }
  return { applied: true };
}
