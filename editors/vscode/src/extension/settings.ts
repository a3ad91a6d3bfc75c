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

/** Modes from the loosest to the strictest (SPEC §5.7). */
const MODES = ["full-auto", "auto-edit", "ask", "read-only"];

/**
 * The settings for a folder. A workspace's `.vscode/settings.json` is often someone else's
 * file (a cloned repository), so, as with the daemon's own workspace config (SPEC §9), it
 * cannot choose who answers or where the key goes (`provider`, `baseUrl`, `script`: the
 * user's settings only), and can make the mode only stricter than the user's.
 */
export function readSettings(scope?: vscode.Uri): TetherSettings {
  const c = vscode.workspace.getConfiguration("tether", scope);
  const mine = <T>(key: string, fallback: T): T => c.inspect<T>(key)?.globalValue ?? fallback;
  const modes = c.inspect<string>("defaultMode");
  const stricter = [modes?.globalValue ?? "ask", modes?.workspaceValue, modes?.workspaceFolderValue]
    .filter((mode): mode is string => typeof mode === "string" && MODES.includes(mode))
    .reduce((a, b) => (MODES.indexOf(b) > MODES.indexOf(a) ? b : a));
  return {
    path: c.get<string>("path", "tether") || "tether",
    args: c.get<string[]>("args", []) ?? [],
    provider: mine("provider", ""),
    model: c.get<string>("model", "") ?? "",
    baseUrl: mine("baseUrl", ""),
    script: mine("script", ""),
    defaultMode: stricter,
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
