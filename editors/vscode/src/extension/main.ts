/** Extension entry point: `activate` builds everything, `deactivate` stops the daemons. */
import type * as vscode from "vscode";
import { TetherExtension } from "./tetherExtension";

let extension: TetherExtension | undefined;

export function activate(context: vscode.ExtensionContext): TetherExtension {
  extension = new TetherExtension(context);
  context.subscriptions.push(extension);
  return extension;
}

/** Stops every daemon (`shutdown` + `exit`, then signals) before VS Code unloads us. */
export async function deactivate(): Promise<void> {
  const ext = extension;
  extension = undefined;
  await ext?.stop();
}
