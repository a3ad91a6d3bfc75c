/** Editor places: tool call locations and selection labels. */
import * as vscode from "vscode";
import { basename, relative } from "node:path";

/** Opens a tool call location (1-based line, ACP). */
export async function openLocation(path: string, line?: number): Promise<void> {
  const position = new vscode.Position(Math.max(0, (line ?? 1) - 1), 0);
  await vscode.window.showTextDocument(vscode.Uri.file(path), {
    selection: new vscode.Range(position, position),
    preview: true,
  });
}

/** "src/app.ts:3-9" for a selection. */
export function selectionLabel(folderPath: string, filePath: string, startLine: number, endLine: number): string {
  const rel = relative(folderPath, filePath) || basename(filePath);
  return startLine === endLine ? `${rel}:${startLine + 1}` : `${rel}:${startLine + 1}-${endLine + 1}`;
}

/** The selection as prompt text: where it is from, then the code in a fence it cannot close. */
export function selectionContext(label: string, languageId: string, text: string): string {
  const longest = Math.max(0, ...(text.match(/`+/g) ?? []).map((run) => run.length));
  const fence = "`".repeat(Math.max(3, longest + 1));
  return `${label}:\n${fence}${languageId === "plaintext" ? "" : languageId}\n${text}${text.endsWith("\n") ? "" : "\n"}${fence}`;
}
