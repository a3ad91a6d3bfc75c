/**
 * What the chat shows, as plain data: the transcript's entries and the view's settings.
 * The DOM is built from these (render.ts, toolCard.ts), and they are what `vscode.setState`
 * keeps, so a reloaded webview shows the same chat without asking the host.
 */
import type { MessageStatus, SessionConfigOption, ToolCallLocation } from "../protocol/schema";
import type { ModeInfo, SessionSummary, Status } from "../shared/messages";

export type Location = ToolCallLocation;

export interface PlanItem {
  content: string;
  priority?: string;
  status?: string;
}

/** `_meta.tether.status` of a replayed message (SPEC §4.6). */
export type ReplayStatus = MessageStatus;

export type Entry =
  /** `steered`: sent into a running turn, landed after that step (SPEC §3.37) */
  | { kind: "user"; text: string; steered?: number }
  | { kind: "agent"; text: string; status?: ReplayStatus }
  | { kind: "thought"; text: string; status?: ReplayStatus }
  | { kind: "notice"; text: string }
  | {
      kind: "tool";
      id: string;
      title: string;
      toolKind: string;
      status: string;
      content: unknown[];
      locations: Location[];
      rawInput?: unknown;
      approvedBy?: string;
      /** ACP v2's `capabilities.cancel` while it runs; unknown on v1 (SPEC §12.4) */
      cancellable?: boolean;
    }
  | { kind: "plan"; items: PlanItem[] }
  | { kind: "turn"; stopReason: string; inputTokens?: number; outputTokens?: number; used?: number; size?: number }
  | { kind: "error"; text: string };

export type ToolEntry = Extract<Entry, { kind: "tool" }>;

export interface ViewState {
  version: 1;
  sessionId: string | null;
  title: string | null;
  modeId: string | null;
  modes: ModeInfo[];
  /** the session's config options (the header's model and reasoning pickers) */
  options: SessionConfigOption[];
  sessions: SessionSummary[];
  status: Status;
  draft: string;
  entries: Entry[];
}

export function emptyState(): ViewState {
  return {
    version: 1, sessionId: null, title: null, modeId: null, modes: [], options: [], sessions: [], status: "idle", draft: "", entries: [],
  };
}

/** A state from `vscode.getState()`, or an empty one when there is none or it is from another version. */
export function restoredState(saved: unknown): ViewState {
  if (saved && typeof saved === "object" && (saved as { version?: unknown }).version === 1) {
    return { ...emptyState(), ...(saved as ViewState) };
  }
  return emptyState();
}

export function asRecord(value: unknown): Record<string, unknown> | undefined {
  return value && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

/** `_meta.tether` of an update, or {}. */
export function tetherMeta(update: Record<string, unknown>): Record<string, unknown> {
  return asRecord(asRecord(update._meta)?.tether) ?? {};
}

/** The text of a content block (`{type:"text", text}`), or a short stand-in for other blocks. */
export function blockText(block: unknown): string {
  const b = asRecord(block);
  if (!b) return "";
  if (b.type === "text" && typeof b.text === "string") return b.text;
  if (b.type === "resource_link") return `[${String(b.name ?? b.uri ?? "resource")}]`;
  if (b.type === "resource") return `[${String(asRecord(b.resource)?.uri ?? "resource")}]`;
  return "";
}

export function locationsOf(value: unknown): Location[] | undefined {
  if (!Array.isArray(value)) return undefined;
  const out: Location[] = [];
  for (const item of value) {
    const l = asRecord(item);
    if (l && typeof l.path === "string") out.push(typeof l.line === "number" ? { path: l.path, line: l.line } : { path: l.path });
  }
  return out;
}
