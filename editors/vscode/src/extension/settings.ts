/**
 * The extension's settings (`tether.*`) and secrets. The API key lives in VS Code's
 * SecretStorage only; it reaches the daemon as the child's TETHER_API_KEY environment
 * variable, never in initializationOptions, settings or logs.
 */
import * as vscode from "vscode";
import type { DaemonLaunch } from "../core/daemon";

export const API_KEY_SECRET = "tether.apiKey";

export interface TetherSettings {
  /** the `tether` executable */
  path: string;
  /** extra arguments after `serve` */
  args: string[];
  provider: string;
  model: string;
  baseUrl: string;
  /** scripted provider's script (demos and tests) */
  script: string;
  defaultMode: string;
  saveEditedFiles: boolean;
  openDiffAutomatically: boolean;
}

export function readSettings(scope?: vscode.Uri): TetherSettings {
  const c = vscode.workspace.getConfiguration("tether", scope);
  return {
    path: c.get<string>("path", "tether") || "tether",
    args: c.get<string[]>("args", []) ?? [],
    provider: c.get<string>("provider", "") ?? "",
    model: c.get<string>("model", "") ?? "",
    baseUrl: c.get<string>("baseUrl", "") ?? "",
    script: c.get<string>("script", "") ?? "",
    defaultMode: c.get<string>("defaultMode", "ask") || "ask",
    saveEditedFiles: c.get<boolean>("saveEditedFiles", true) ?? true,
    openDiffAutomatically: c.get<boolean>("openDiffAutomatically", true) ?? true,
  };
}

/** `initializationOptions` for the daemon (SPEC §9): only what is set, and no secrets. */
export function initializationOptions(s: TetherSettings): Record<string, unknown> {
  const options: Record<string, unknown> = { mode: s.defaultMode };
  if (s.provider) options.provider = s.provider;
  if (s.model) options.model = s.model;
  if (s.baseUrl) options.baseUrl = s.baseUrl;
  if (s.script) options.script = s.script;
  return options;
}

export async function daemonLaunch(s: TetherSettings, folderPath: string, secrets: vscode.SecretStorage): Promise<DaemonLaunch> {
  const env: NodeJS.ProcessEnv = { ...process.env };
  const key = await secrets.get(API_KEY_SECRET);
  if (key) env.TETHER_API_KEY = key;
  return { command: s.path, args: ["serve", ...s.args], cwd: folderPath, env };
}
