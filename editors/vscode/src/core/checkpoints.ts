/**
 * "Rewind to here" and "files changed" (SPEC §3.40) for the chat: where a user message the
 * view shows is stored (its `messageSeq` and its turn), the dry run the view confirms, the
 * rewind itself, and a turn's changes. No `vscode` import: the tests drive it against the
 * real daemon.
 */
import type { RewindPreview } from "../shared/messages";
import type { ChangesResult, RewindRestore, RewindResult, Snapshot } from "../protocol/schema";
import type { TetherClient } from "./client";

/** A user message's place in the stored conversation. */
export interface StoredPlace {
  seq: number;
  /** its turn's seq (1 = the first turn) */
  turn?: number;
}

function messageText(body: Record<string, unknown>): string {
  const content = Array.isArray(body.content) ? body.content : [];
  return content
    .map((b) => (b && typeof b === "object" && (b as { type?: unknown }).type === "text" ? String((b as { text?: unknown }).text ?? "") : ""))
    .filter((t) => t !== "")
    .join("\n")
    .trim();
}

/**
 * Where each user message shown (`texts`, in order) is stored: the stored user messages the
 * model still sees, matched in order by text (a slash command that ran no turn is shown
 * but not stored; a message the view merged from several blocks matches their joined text).
 */
export function align(snapshot: Snapshot, texts: string[]): (StoredPlace | undefined)[] {
  const turnSeq = new Map(snapshot.turns.map((t) => [t.id, t.seq]));
  const stored = snapshot.messages
    .filter((m) => m.role === "user" && m.rewound === undefined)
    .map((m) => ({ seq: m.seq, turn: m.turn_id ? turnSeq.get(m.turn_id) : undefined, text: messageText(m.body) }));
  const found: (StoredPlace | undefined)[] = [];
  let at = 0;
  for (const text of texts) {
    const wanted = text.replace(/\s+/g, " ").trim();
    const j = stored.findIndex((m, i) => i >= at && m.text.replace(/\s+/g, " ") === wanted);
    if (j < 0) {
      found.push(undefined);
      continue;
    }
    found.push({ seq: stored[j].seq, ...(stored[j].turn !== undefined ? { turn: stored[j].turn } : {}) });
    at = j + 1;
  }
  return found;
}

/** The stored place of the user message `index` of `texts`, or an error the user can act on. */
export async function locate(client: TetherClient, sessionId: string, texts: string[], index: number): Promise<StoredPlace> {
  const place = align(await client.dump(sessionId), texts)[index];
  if (!place) throw new Error("This message is not in the session's stored conversation (a command that ran no turn?).");
  return place;
}

/** A pending rewind: what the view was asked to confirm. */
export interface PendingRewind {
  sessionId: string;
  messageSeq: number;
  restore: RewindRestore;
}

/** The dry run of a rewind to just before the user message at `place`, for the view to confirm. */
export async function preview(
  client: TetherClient,
  sessionId: string,
  place: StoredPlace,
  restore: RewindRestore,
  message: string,
  token: string,
): Promise<RewindPreview> {
  const dry = await client.rewind({ sessionId, messageSeq: place.seq, restore, dryRun: true });
  return {
    token,
    message: message.split("\n")[0].slice(0, 80),
    restore,
    restored: dry.restored,
    conflicts: dry.conflicts,
    skipped: dry.skipped,
    hiddenMessages: dry.hiddenMessages,
  };
}

export function rewind(client: TetherClient, pending: PendingRewind, force: boolean): Promise<RewindResult> {
  return client.rewind({ sessionId: pending.sessionId, messageSeq: pending.messageSeq, restore: pending.restore, force });
}

/** What a rewind did, in words for the chat. */
export function rewindNotice(result: RewindResult, restore: RewindRestore): string {
  if (!result.done) {
    const paths = result.conflicts.map((c) => c.path).join(", ");
    return `Nothing was rewound: ${paths} changed since Tether wrote ${result.conflicts.length === 1 ? "it" : "them"}.`;
  }
  const parts = [`Rewound (rewind ${result.rewindId ?? "?"})`];
  if (restore !== "files") parts.push(`${result.hiddenMessages} message(s) left the conversation`);
  if (result.restored.length) parts.push(`restored ${result.restored.join(", ")}`);
  if (result.skipped.length) parts.push(`could not restore ${result.skipped.map((s) => s.path).join(", ")}`);
  return `${parts.join("; ")}.`;
}

export function changes(client: TetherClient, sessionId: string, turn?: number): Promise<ChangesResult> {
  return client.changes(sessionId, turn);
}
