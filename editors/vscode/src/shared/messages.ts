/**
 * The contract between the extension host and the chat webview (postMessage both ways).
 *
 * The host forwards the daemon's `session/update` payloads verbatim (`update`; on ACP v2 as
 * `core/acp_v2.ts` reads them into v1's shapes), so the
 * webview renders exactly what the protocol says and can be tested by replaying
 * recorded updates. Everything else here is the small set of control messages the
 * protocol itself does not carry (session switches, approval prompts, status).
 * Imported by both sides; no `vscode` and no DOM types here.
 */

import type {
  ChangedFile,
  Hunk,
  QueuedPrompt,
  RewindConflict,
  RewindRestore,
  RewindSkipped,
  PermissionOption,
  SessionConfigOption,
  SessionInfo,
  SessionMode,
  ToolCallContent,
  ToolKind,
} from "../protocol/schema";

export type { PermissionOption } from "../protocol/schema";

export type Status = "idle" | "streaming" | "waiting";

/** A session as `session/list` describes it. */
export type SessionSummary = SessionInfo;

/** A mode as `session/new`/`session/load` describe it. */
export type ModeInfo = SessionMode;

/** A hunk the user may pick (SPEC §5.10). */
export type HunkRef = Hunk;

/** A `session/request_permission` the user has to answer (SPEC §3.22). */
export interface PermissionPrompt {
  /** the daemon's request id ("tether-N") */
  requestId: string;
  sessionId: string;
  toolCallId: string;
  title: string;
  kind: ToolKind | string;
  /** the toolCall's ACP content blocks (diff blocks for edits, a text block for commands) */
  content: ToolCallContent[];
  rawInput?: unknown;
  options: PermissionOption[];
  reason?: string;
  hunks: HunkRef[];
}

/** Extension host -> webview. */
export type HostMessage =
  | {
      type: "init";
      sessions: SessionSummary[];
      sessionId: string | null;
      modes: ModeInfo[];
      modeId: string | null;
      /** the session's config options (model, reasoning, mode pickers); [] without a session */
      options?: SessionConfigOption[];
      status: Status;
    }
  | { type: "sessions"; sessions: SessionSummary[] }
  /** the chat now shows this session; the webview clears what it showed before */
  | { type: "session"; sessionId: string; title: string | null; modeId: string | null }
  /** a prompt the user just sent (replayed prompts arrive as user_message_chunk updates) */
  | { type: "userMessage"; text: string }
  /** a `session/update`'s `update` object, verbatim */
  | { type: "update"; sessionId: string; update: Record<string, unknown> }
  /** the `session/prompt` answer, with the turn's usage when known */
  | { type: "turnEnded"; stopReason: string; usage?: { inputTokens?: number; outputTokens?: number } }
  | { type: "permission"; prompt: PermissionPrompt }
  /** the prompt was answered (here or in the editor) or withdrawn by the daemon */
  | { type: "permissionClosed"; requestId: string }
  | { type: "mode"; modeId: string }
  /** the session's config options changed (an answer, or `config_option_update`) */
  | { type: "options"; options: SessionConfigOption[] }
  | { type: "status"; status: Status }
  | { type: "error"; message: string }
  /** no workspace folder (yet): the view says to open one until the next `init` */
  | { type: "noFolder" }
  /** editor context added to the next prompt ("Ask Tether about selection") */
  | { type: "context"; label: string; text: string }
  /** the prompts waiting behind the running turn (`_meta.tether.queue`, SPEC §3.37), oldest first */
  | { type: "queue"; queue: QueuedPrompt[] }
  /** what "Rewind to here" would do (a dry run): the view asks before `rewindConfirm` */
  | { type: "rewindPreview"; preview: RewindPreview }
  /** a rewind was done or refused, in words for the chat */
  | { type: "notice"; text: string }
  /** the files a turn changed, with unified diffs (`_tether/session/changes`) */
  | { type: "changes"; turn: number | null; files: ChangedFile[] };

/** A dry run of "Rewind to here" (SPEC §3.40), to confirm. */
export interface RewindPreview {
  /** names this preview in `rewindConfirm` */
  token: string;
  /** the first line of the message rewound to */
  message: string;
  restore: RewindRestore;
  restored: string[];
  /** files changed since Tether wrote them: overwritten only with `force` */
  conflicts: RewindConflict[];
  skipped: RewindSkipped[];
  hiddenMessages: number;
}

/** Webview -> extension host. */
export type ViewMessage =
  | { type: "ready" }
  /** `steer`: into the running turn (it lands at the next step boundary, SPEC §3.37) */
  | { type: "prompt"; text: string; steer?: boolean }
  /** withdraw a queued prompt */
  | { type: "dequeue"; queueId: string }
  /** "Rewind to here" on the user message `index` (0-based) of `texts` (every user message shown) */
  | { type: "rewind"; texts: string[]; index: number; restore: RewindRestore }
  /** do the rewind previewed (`force`: also overwrite files changed since), or drop it */
  | { type: "rewindConfirm"; token: string; force: boolean }
  | { type: "rewindCancel"; token: string }
  /** the files changed by the turn of the user message `index` of `texts` */
  | { type: "changes"; texts: string[]; index: number }
  | { type: "cancel" }
  /** stop one running tool call; its turn goes on (SPEC §12.4) */
  | { type: "cancelToolCall"; toolCallId: string }
  /** answer a permission prompt; acceptedHunks as in SPEC §5.10 (absolute path -> kept indexes) */
  | { type: "permission"; requestId: string; optionId: string; acceptedHunks?: Record<string, number[]> }
  /** open the prompt's edit in VS Code's diff editor */
  | { type: "openDiff"; requestId: string; path?: string }
  | { type: "openLocation"; path: string; line?: number }
  | { type: "setMode"; modeId: string }
  /** a session config option picked in the view's header (the model, the reasoning effort) */
  | { type: "setOption"; configId: string; value: string }
  | { type: "loadSession"; sessionId: string }
  | { type: "newSession" }
  | { type: "copy"; text: string };
