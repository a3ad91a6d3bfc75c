/**
 * Proposed edits in VS Code's diff editor: the before and after texts are virtual
 * documents on the `tether-diff:` scheme (the real file is never touched until the edit
 * is accepted), and the editor title's Accept / Reject / Always / Choose hunks buttons
 * answer the approval. The tabs close when the approval is answered or withdrawn.
 */
import * as vscode from "vscode";
import { basename } from "node:path";
import { diffBlocks } from "../core/permissions";
import type { PermissionPrompt } from "../shared/messages";

export const DIFF_SCHEME = "tether-diff";

export type DiffSide = "before" | "after";

/** What a `tether-diff:` URI names: a side of one file of one approval of one daemon. */
export interface DiffTarget {
  agentId: number;
  requestId: string;
  side: DiffSide;
  path: string;
}

export function diffUri(target: DiffTarget): vscode.Uri {
  const query = new URLSearchParams({ agent: String(target.agentId), request: target.requestId, side: target.side });
  return vscode.Uri.from({ scheme: DIFF_SCHEME, path: target.path, query: query.toString() });
}

export function parseDiffUri(uri: vscode.Uri): DiffTarget | undefined {
  if (uri.scheme !== DIFF_SCHEME) return undefined;
  const q = new URLSearchParams(uri.query);
  const agentId = Number(q.get("agent"));
  const requestId = q.get("request");
  const side = q.get("side");
  if (!requestId || !Number.isInteger(agentId) || (side !== "before" && side !== "after")) return undefined;
  return { agentId, requestId, side, path: uri.path };
}

interface Review {
  agentId: number;
  prompt: PermissionPrompt;
}

export class EditReview implements vscode.TextDocumentContentProvider {
  private readonly reviews = new Map<string, Review>();
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;

  /** Remembers an edit approval so its diff can be shown. */
  add(agentId: number, prompt: PermissionPrompt): void {
    if (diffBlocks(prompt).length) this.reviews.set(key(agentId, prompt.requestId), { agentId, prompt });
  }

  get(agentId: number, requestId: string): PermissionPrompt | undefined {
    return this.reviews.get(key(agentId, requestId))?.prompt;
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    const target = parseDiffUri(uri);
    if (!target) return "";
    const prompt = this.get(target.agentId, target.requestId);
    const block = prompt && diffBlocks(prompt).find((b) => b.path === target.path);
    if (!block) return "";
    return target.side === "before" ? (block.oldText ?? "") : block.newText;
  }

  /** Opens the diff of one file of the approval (the first when `path` is not given). */
  async open(agentId: number, requestId: string, path?: string): Promise<boolean> {
    const prompt = this.get(agentId, requestId);
    if (!prompt) return false;
    const blocks = diffBlocks(prompt);
    const block = blocks.find((b) => b.path === path) ?? blocks[0];
    const before = diffUri({ agentId, requestId, side: "before", path: block.path });
    const after = diffUri({ agentId, requestId, side: "after", path: block.path });
    const what = block.oldText === undefined || block.oldText === null ? "new file" : block.newText === "" ? "deletion" : "proposed edit";
    await vscode.commands.executeCommand("vscode.diff", before, after, `${basename(block.path)} (Tether: ${what})`, {
      preview: true,
    });
    return true;
  }

  /** Forgets the approval and closes its diff tabs. */
  async close(agentId: number, requestId: string): Promise<void> {
    this.reviews.delete(key(agentId, requestId));
    const tabs = vscode.window.tabGroups.all
      .flatMap((group) => group.tabs)
      .filter((tab) => {
        const input = tab.input;
        if (!(input instanceof vscode.TabInputTextDiff)) return false;
        const target = parseDiffUri(input.modified);
        return target?.agentId === agentId && target.requestId === requestId;
      });
    if (tabs.length) await vscode.window.tabGroups.close(tabs);
  }

  /**
   * The approval a diff editor command is about: the URI VS Code passes from the editor
   * title, else the active diff tab, else the only edit waiting.
   */
  target(uri?: vscode.Uri): { agentId: number; prompt: PermissionPrompt } | undefined {
    const fromUri = (u: vscode.Uri | undefined) => {
      const t = u && parseDiffUri(u);
      const prompt = t && this.get(t.agentId, t.requestId);
      return t && prompt ? { agentId: t.agentId, prompt } : undefined;
    };
    const direct = fromUri(uri);
    if (direct) return direct;
    const input = vscode.window.tabGroups.activeTabGroup?.activeTab?.input;
    if (input instanceof vscode.TabInputTextDiff) {
      const active = fromUri(input.modified);
      if (active) return active;
    }
    const all = [...this.reviews.values()];
    return all.length === 1 ? { agentId: all[0].agentId, prompt: all[0].prompt } : undefined;
  }

  dispose(): void {
    this.changed.dispose();
    this.reviews.clear();
  }
}

function key(agentId: number, requestId: string): string {
  return `${agentId}/${requestId}`;
}
