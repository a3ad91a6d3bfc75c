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
