/**
 * Protocol types the client uses: the generated schema types (src/protocol/schema.ts)
 * plus the shapes SPEC.md documents but schema.json does not describe yet (SPEC §8):
 * diff content blocks, the requests Tether sends the client (§3.21–§3.26), `_meta.tether`.
 */
export type {
  ContentBlock,
  InitializeParams,
  InitializeResult,
  ListSessionsResult,
  LoadSessionResult,
  ModeId,
  NewSessionResult,
  PlanEntry,
  PromptResult,
  ReportResult,
  SessionInfo,
  SessionMode,
  SessionModeState,
  SessionNotification,
  SessionUpdate,
  StopReason,
  ToolCall,
  ToolCallLocation,
  ToolCallStatus,
  ToolCallUpdate,
  ToolKind,
  Usage,
} from "../protocol/schema";

/** `{type: "diff", …}` inside a tool call: whole file texts (SPEC §3.22, §4.9). */
export interface DiffBlock {
  type: "diff";
  /** absolute path */
  path: string;
  /** absent for a new file */
  oldText?: string | null;
  /** `""` for a deletion */
  newText: string;
}

/** `{type: "content", content: {type: "text", text}}` inside a tool call. */
export interface TextContentBlock {
  type: "content";
  content: { type: "text"; text: string };
}

export interface PermissionOptionWire {
  optionId: string;
  name: string;
  kind: string;
}

/** `session/request_permission` params (SPEC §3.22). */
export interface RequestPermissionParams {
  sessionId: string;
  toolCall: {
    toolCallId: string;
    title?: string | null;
    kind?: string | null;
    status?: string | null;
    content?: unknown[] | null;
    rawInput?: unknown;
  };
  options: PermissionOptionWire[];
  _meta?: { tether?: { reason?: string; hunks?: { path: string; index: number; header: string }[] } } | null;
}

/** `session/request_permission` result: ACP's outcome, plus the hunk subset (SPEC §5.10). */
export interface RequestPermissionResult {
  outcome: { outcome: "selected"; optionId: string } | { outcome: "cancelled" };
  _meta?: { tether: { acceptedHunks: Record<string, number[]> } };
}

/** LSP shapes of `workspace/applyEdit` (SPEC §3.26). */
export interface LspPosition {
  line: number;
  character: number;
}
export interface LspRange {
  start: LspPosition;
  end: LspPosition;
}
export interface LspTextEdit {
  range: LspRange;
  newText: string;
}
export interface LspTextDocumentEdit {
  textDocument: { uri: string; version: number | null };
  edits: LspTextEdit[];
}
export interface LspCreateFile {
  kind: "create";
  uri: string;
  options?: { overwrite?: boolean; ignoreIfExists?: boolean };
}
export interface LspRenameFile {
  kind: "rename";
  oldUri: string;
  newUri: string;
  options?: { overwrite?: boolean; ignoreIfExists?: boolean };
}
export interface LspDeleteFile {
  kind: "delete";
  uri: string;
  options?: { recursive?: boolean; ignoreIfNotExists?: boolean };
}
export type LspDocumentChange = LspTextDocumentEdit | LspCreateFile | LspRenameFile | LspDeleteFile;
export interface LspWorkspaceEdit {
  documentChanges?: LspDocumentChange[];
  changes?: Record<string, LspTextEdit[]>;
}
export interface ApplyWorkspaceEditParams {
  label?: string;
  edit: LspWorkspaceEdit;
}
export interface ApplyWorkspaceEditResult {
  applied: boolean;
  failureReason?: string;
}

/** `textDocument/didChange` content changes (SPEC §3.20). */
export type TextDocumentContentChange = { text: string } | { range: LspRange; text: string };
