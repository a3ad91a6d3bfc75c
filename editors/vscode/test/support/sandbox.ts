/**
 * What the tests share: a private workspace + TETHER_HOME per test, how to start the real
 * daemon (`python -m tether serve --provider scripted`), and waiting with a deadline.
 * The Python comes from TETHER_PYTHON (the pytest wrapper sets it to sys.executable),
 * else the repository's .venv, else `python3` on PATH. `TETHER_ACP_V2=off` reaches the
 * daemon, so a test runs on v1 (`acpVersion()` says which one the daemon is asked to speak).
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { DaemonLaunch } from "../../src/core/daemon";
import type { ApplyWorkspaceEditParams, ApplyWorkspaceEditResult, TextEdit } from "../../src/protocol/schema";

/** editors/vscode: the folder holding the extension's package.json */
export const EXTENSION_ROOT = findUp(__dirname, (dir) => {
  const manifest = join(dir, "package.json");
  return existsSync(manifest) && JSON.parse(readFileSync(manifest, "utf8")).name === "tether-vscode";
});
export const REPO_ROOT = join(EXTENSION_ROOT, "..", "..");
export const CHAT_SCRIPT = join(EXTENSION_ROOT, "test", "fixtures", "chat.json");

export function python(): string {
  if (process.env.TETHER_PYTHON) return process.env.TETHER_PYTHON;
  const venv = join(REPO_ROOT, ".venv", "bin", "python");
  return existsSync(venv) ? venv : "python3";
}

/** The ACP version the tests' daemons speak: 2, or 1 when `TETHER_ACP_V2=off`. */
export function acpVersion(): 1 | 2 {
  return process.env.TETHER_ACP_V2 === "off" ? 1 : 2;
}

export interface Sandbox {
  root: string;
  workspace: string;
  home: string;
  env: NodeJS.ProcessEnv;
  cleanup(): void;
}

const SCRUB = ["TETHER_", "OPENAI_", "ANTHROPIC_"];

/** A temp workspace (README.md, src/app.py, long.txt) and a private daemon environment. */
export function makeSandbox(): Sandbox {
  const root = mkdtempSync(join(tmpdir(), "tether-vscode-"));
  const workspace = join(root, "ws");
  const home = join(root, "home");
  mkdirSync(join(workspace, "src"), { recursive: true });
  mkdirSync(home);
  writeFileSync(join(workspace, "README.md"), "# Sample\n\nHello from the sample workspace.\n");
  writeFileSync(join(workspace, "src", "app.py"), "def main():\n    return 42\n");
  writeFileSync(join(workspace, "long.txt"), Array.from({ length: 40 }, (_, i) => `line ${i + 1}\n`).join(""));
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!SCRUB.some((p) => k.startsWith(p))) env[k] = v;
  env.TETHER_HOME = home;
  env.XDG_CONFIG_HOME = join(root, "xdg-config");
  env.TETHER_PROBE_PORTS = "";
  env.PYTHONUNBUFFERED = "1";
  // the flow tests run against a v1-only daemon too (pytest sets TETHER_ACP_V2=off, SPEC §12.1)
  if (process.env.TETHER_ACP_V2) env.TETHER_ACP_V2 = process.env.TETHER_ACP_V2;
  return { root, workspace, home, env, cleanup: () => rmSync(root, { recursive: true, force: true }) };
}

export function scriptedLaunch(
  sandbox: Sandbox, script = CHAT_SCRIPT, extraEnv: NodeJS.ProcessEnv = {}, extraArgs: string[] = [],
): DaemonLaunch {
  return {
    command: python(),
    args: ["-m", "tether", "serve", ...extraArgs, "--provider", "scripted", "--script", script],
    cwd: sandbox.workspace,
    env: { ...sandbox.env, ...extraEnv },
  };
}

/** Polls `probe` until it returns something truthy; fails with `what` after the deadline. */
export async function waitFor<T>(probe: () => T | undefined | null | false, what: string, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * The editor's part of `workspace/applyEdit` for tests of the core layer: applies the
 * LSP edit to the files on disk (the VS Code adapter applies it as a WorkspaceEdit).
 */
export function applyEditToDisk(params: ApplyWorkspaceEditParams): ApplyWorkspaceEditResult {
  for (const change of params.edit.documentChanges ?? []) {
    if ("kind" in change) {
      if (change.kind === "create") {
        const path = fileURLToPath(change.uri);
        mkdirSync(dirname(path), { recursive: true });
        if (!existsSync(path)) writeFileSync(path, "");
      }
      continue;
    }
    const path = fileURLToPath(change.textDocument.uri);
    writeFileSync(path, applyTextEdits(existsSync(path) ? readFileSync(path, "utf8") : "", change.edits));
  }
  return { applied: true };
}

export function applyTextEdits(text: string, edits: TextEdit[]): string {
  const offset = (line: number, character: number) => {
    const lines = text.split("\n");
    let at = 0;
    for (let i = 0; i < line && i < lines.length; i++) at += lines[i].length + 1;
    return Math.min(at + character, text.length);
  };
  const sorted = [...edits].sort((a, b) => b.range.start.line - a.range.start.line || b.range.start.character - a.range.start.character);
  for (const e of sorted) {
    text = text.slice(0, offset(e.range.start.line, e.range.start.character)) + e.newText + text.slice(offset(e.range.end.line, e.range.end.character));
  }
  return text;
}

function findUp(start: string, found: (dir: string) => boolean): string {
  let dir = start;
  for (;;) {
    if (found(dir)) return dir;
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`no tether-vscode package.json above ${start}`);
    dir = parent;
  }
}
