/**
 * Permission prompts (SPEC §3.22, §5.10): the request as the UI sees it, and the answer
 * as the daemon expects it. No I/O here.
 */
import type { HunkRef, PermissionPrompt } from "../shared/messages";
import type { DiffContent, RequestPermissionParams, RequestPermissionResult } from "../protocol/schema";

/** What the user chose: an option id, and optionally only some hunks of an edit. */
export interface PermissionAnswer {
  optionId: string;
  /** absolute path -> kept hunk indexes (SPEC §5.10); a file not listed keeps all hunks */
  acceptedHunks?: Record<string, number[]>;
}

/** The user's answer, or `cancelled` (which cancels the whole turn, SPEC §3.22). */
export type PermissionDecision = PermissionAnswer | "cancelled";

export function promptFromRequest(requestId: string | number, params: RequestPermissionParams): PermissionPrompt {
  const call = params.toolCall;
  const tether = params._meta?.tether;
  return {
    requestId: String(requestId),
    sessionId: params.sessionId,
    toolCallId: call.toolCallId,
    title: call.title ?? call.toolCallId,
    kind: call.kind ?? "other",
    content: Array.isArray(call.content) ? call.content : [],
    rawInput: call.rawInput ?? undefined,
    options: (params.options ?? []).map((o) => ({ optionId: o.optionId, name: o.name, kind: o.kind })),
    reason: tether?.reason,
    hunks: (tether?.hunks ?? []).map((h): HunkRef => ({ path: h.path, index: h.index, header: h.header })),
  };
}

export function permissionResult(decision: PermissionDecision): RequestPermissionResult {
  if (decision === "cancelled") return { outcome: { outcome: "cancelled" } };
  const result: RequestPermissionResult = { outcome: { outcome: "selected", optionId: decision.optionId } };
  if (decision.acceptedHunks && Object.keys(decision.acceptedHunks).length > 0) {
    result._meta = { tether: { acceptedHunks: decision.acceptedHunks } };
  }
  return result;
}

/** The prompt's file changes (one diff block per file); empty for a command. */
export function diffBlocks(prompt: Pick<PermissionPrompt, "content">): DiffContent[] {
  return prompt.content.filter(isDiffContent);
}

export function isDiffContent(block: unknown): block is DiffContent {
  if (!block || typeof block !== "object") return false;
  const b = block as Record<string, unknown>;
  return b.type === "diff" && typeof b.path === "string" && typeof b.newText === "string";
}

/** The command text block of a command prompt (`"$ <command>\n(in <cwd>)"`), if any. */
export function commandText(prompt: Pick<PermissionPrompt, "content">): string | undefined {
  for (const block of prompt.content) {
    const b = block as { type?: string; content?: { type?: string; text?: unknown } };
    if (b?.type === "content" && b.content?.type === "text" && typeof b.content.text === "string") return b.content.text;
  }
  return undefined;
}

/** Hunk choices for every file of the prompt: files without a choice keep all hunks. */
export function acceptedHunksFrom(prompt: Pick<PermissionPrompt, "hunks">, kept: HunkRef[]): Record<string, number[]> {
  const out: Record<string, number[]> = {};
  for (const hunk of prompt.hunks) out[hunk.path] ??= [];
  for (const hunk of kept) out[hunk.path]?.push(hunk.index);
  return out;
}
