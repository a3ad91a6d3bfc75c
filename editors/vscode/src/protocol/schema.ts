// generated — DO NOT EDIT.
// Types of the Tether protocol, from protocol/schema.json by scripts/gen-types.mjs
// (`npm run gen:types`); a test fails when this file is stale.
/**
 * One of 3 kinds, told apart by `type` (required here).
 *
 * This interface was referenced by `TetherProtocol`'s JSON-Schema
 * via the `definition` "ContentBlock".
 */
export type ContentBlock = TextContent | ResourceLink | EmbeddedResource;
/**
 * This interface was referenced by `TetherProtocol`'s JSON-Schema
 * via the `definition` "ModeId".
 */
export type ModeId = "read-only" | "ask" | "auto-edit" | "full-auto";
/**
 * This interface was referenced by `TetherProtocol`'s JSON-Schema
 * via the `definition` "StopReason".
 */
export type StopReason = "end_turn" | "max_tokens" | "max_turn_requests" | "refusal" | "cancelled";
/**
 * One of 9 kinds, told apart by `sessionUpdate` (required here).
 *
 * This interface was referenced by `TetherProtocol`'s JSON-Schema
 * via the `definition` "SessionUpdate".
 */
export type SessionUpdate =
  | UserMessageChunk
  | AgentMessageChunk
  | AgentThoughtChunk
  | ToolCall
  | ToolCallUpdate
  | Plan
  | SessionInfoUpdate
  | CurrentModeUpdate
  | UsageUpdate;
/**
 * This interface was referenced by `TetherProtocol`'s JSON-Schema
 * via the `definition` "ToolKind".
 */
export type ToolKind =
  "read" | "edit" | "delete" | "move" | "search" | "execute" | "think" | "fetch" | "switch_mode" | "other";
/**
 * This interface was referenced by `TetherProtocol`'s JSON-Schema
 * via the `definition` "ToolCallStatus".
 */
export type ToolCallStatus = "pending" | "in_progress" | "completed" | "failed";

/**
 * Params, results and notifications of the Tether protocol: the ACP v1 vocabulary (camelCase wire names, `_meta` for extension data) plus `_tether/` extension methods. `x-tether-methods` maps each JSON-RPC method to its params/result definitions; `x-tether-errors` lists the error codes.
 */
export interface TetherProtocol {
  [k: string]: unknown;
}
/**
 * This interface was referenced by `TetherProtocol`'s JSON-Schema
 * via the `definition` "AgentCapabilities".
 */
export interface AgentCapabilities {
  loadSession?: boolean;
  mcpCapabilities?: McpCapabilities;
  promptCapabilities?: PromptCapabilities;
  sessionCapabilities?: SessionCapabilities;
}
/**
 * This interface was referenced by `TetherProtocol`'s JSON-Schema
 * via the `definition` "McpCapabilities".
 */
export interface McpCapabilities {
  http?: boolean;
  sse?: boolean;
}
/**
 * This interface was referenced by `TetherProtocol`'s JSON-Schema
 * via the `definition` "PromptCapabilities".
 */
export interface PromptCapabilities {
  audio?: boolean;
  embeddedContext?: boolean;
  image?: boolean;
}
/**
 * This interface was referenced by `TetherProtocol`'s JSON-Schema
 * via the `definition` "SessionCapabilities".
 */
export interface SessionCapabilities {
  close?: {} | null;
  delete?: {} | null;
  list?: {} | null;
  resume?: {} | null;
}
/**
 * This interface was referenced by `TetherProtocol`'s JSON-Schema
 * via the `definition` "AgentMessageChunk".
 */
export interface AgentMessageChunk {
  /**
   * Extension metadata (ACP `_meta`): implementations must not assume anything about its keys.
   */
  _meta?: {} | null;
  content: TextContent;
  sessionUpdate: "agent_message_chunk";
}
/**
 * This interface was referenced by `TetherProtocol`'s JSON-Schema
 * via the `definition` "TextContent".
 */
export interface TextContent {
  /**
   * Extension metadata (ACP `_meta`): implementations must not assume anything about its keys.
   */
  _meta?: {} | null;
  text: string;
  type: "text";
}
/**
 * This interface was referenced by `TetherProtocol`'s JSON-Schema
 * via the `definition` "AgentThoughtChunk".
 */
export interface AgentThoughtChunk {
  /**
   * Extension metadata (ACP `_meta`): implementations must not assume anything about its keys.
   */
  _meta?: {} | null;
  content: TextContent;
  sessionUpdate: "agent_thought_chunk";
}
/**
 * LSP's `$/cancelRequest`: cancels the request with that id.
 *
 * This interface was referenced by `TetherProtocol`'s JSON-Schema
 * via the `definition` "CancelRequestParams".
 */
export interface CancelRequestParams {
  id: number | string;
}
/**
 * This interface was referenced by `TetherProtocol`'s JSON-Schema
 * via the `definition` "ClientCapabilities".
 */
export interface ClientCapabilities {
  /**
   * Extension metadata (ACP `_meta`): implementations must not assume anything about its keys.
   */
  _meta?: {} | null;
  fs?: FileSystemCapabilities;
  terminal?: boolean;
}
/**
 * This interface was referenced by `TetherProtocol`'s JSON-Schema
 * via the `definition` "FileSystemCapabilities".
 */
export interface FileSystemCapabilities {
  readTextFile?: boolean;
  writeTextFile?: boolean;
}
/**
 * This interface was referenced by `TetherProtocol`'s JSON-Schema
 * via the `definition` "ResourceLink".
 */
export interface ResourceLink {
  /**
   * Extension metadata (ACP `_meta`): implementations must not assume anything about its keys.
   */
  _meta?: {} | null;
  mimeType?: string | null;
  name: string;
  type: "resource_link";
  uri: string;
}
/**
 * This interface was referenced by `TetherProtocol`'s JSON-Schema
 * via the `definition` "EmbeddedResource".
 */
export interface EmbeddedResource {
  /**
   * Extension metadata (ACP `_meta`): implementations must not assume anything about its keys.
   */
  _meta?: {} | null;
  resource: TextResource;
  type: "resource";
}
/**
 * This interface was referenced by `TetherProtocol`'s JSON-Schema
 * via the `definition` "TextResource".
 */
export interface TextResource {
  mimeType?: string | null;
  text: string;
  uri: string;
}
/**
 * This interface was referenced by `TetherProtocol`'s JSON-Schema
 * via the `definition` "CurrentModeUpdate".
 */
export interface CurrentModeUpdate {
  /**
   * Extension metadata (ACP `_meta`): implementations must not assume anything about its keys.
   */
  _meta?: {} | null;
  currentModeId: ModeId;
  sessionUpdate: "current_mode_update";
}
/**
 * This interface was referenced by `TetherProtocol`'s JSON-Schema
 * via the `definition` "EmptyResult".
 */
export interface EmptyResult {
  /**
   * Extension metadata (ACP `_meta`): implementations must not assume anything about its keys.
   */
  _meta?: {} | null;
}
/**
 * This interface was referenced by `TetherProtocol`'s JSON-Schema
 * via the `definition` "Implementation".
 */
export interface Implementation {
  name: string;
  title?: string | null;
  version: string;
}
/**
 * ACP's and LSP's initialize params in one: either set, or both, may arrive.
 *
 * This interface was referenced by `TetherProtocol`'s JSON-Schema
 * via the `definition` "InitializeParams".
 */
export interface InitializeParams {
  /**
   * Extension metadata (ACP `_meta`): implementations must not assume anything about its keys.
   */
  _meta?: {} | null;
  capabilities?: {} | null;
  clientCapabilities?: ClientCapabilities | null;
  clientInfo?: Implementation | null;
  initializationOptions?: {} | null;
  processId?: number | null;
  protocolVersion?: number | null;
  rootPath?: string | null;
  rootUri?: string | null;
  workspaceFolders?: WorkspaceFolder[] | null;
}
/**
 * This interface was referenced by `TetherProtocol`'s JSON-Schema
 * via the `definition` "WorkspaceFolder".
 */
export interface WorkspaceFolder {
  name: string;
  uri: string;
}
/**
 * This interface was referenced by `TetherProtocol`'s JSON-Schema
 * via the `definition` "InitializeResult".
 */
export interface InitializeResult {
  agentCapabilities: AgentCapabilities;
  agentInfo: Implementation;
  authMethods: {}[];
  capabilities: {};
  protocolVersion: number;
  serverInfo: Implementation;
}
/**
 * This interface was referenced by `TetherProtocol`'s JSON-Schema
 * via the `definition` "ListSessionsParams".
 */
export interface ListSessionsParams {
  /**
   * Extension metadata (ACP `_meta`): implementations must not assume anything about its keys.
   */
  _meta?: {} | null;
  cursor?: string | null;
  cwd?: string | null;
}
/**
 * This interface was referenced by `TetherProtocol`'s JSON-Schema
 * via the `definition` "ListSessionsResult".
 */
export interface ListSessionsResult {
  nextCursor?: string | null;
  sessions: SessionInfo[];
}
/**
 * This interface was referenced by `TetherProtocol`'s JSON-Schema
 * via the `definition` "SessionInfo".
 */
export interface SessionInfo {
  cwd: string;
  sessionId: string;
  title?: string | null;
  updatedAt?: string | null;
}
/**
 * This interface was referenced by `TetherProtocol`'s JSON-Schema
 * via the `definition` "LoadSessionParams".
 */
export interface LoadSessionParams {
  /**
   * Extension metadata (ACP `_meta`): implementations must not assume anything about its keys.
   */
  _meta?: {} | null;
  cwd: string;
  mcpServers?: {}[];
  sessionId: string;
}
/**
 * This interface was referenced by `TetherProtocol`'s JSON-Schema
 * via the `definition` "LoadSessionResult".
 */
export interface LoadSessionResult {
  modes: SessionModeState;
}
/**
 * This interface was referenced by `TetherProtocol`'s JSON-Schema
 * via the `definition` "SessionModeState".
 */
export interface SessionModeState {
  availableModes: SessionMode[];
  currentModeId: ModeId;
}
/**
 * This interface was referenced by `TetherProtocol`'s JSON-Schema
 * via the `definition` "SessionMode".
 */
export interface SessionMode {
  description?: string | null;
  id: ModeId;
  name: string;
}
/**
 * This interface was referenced by `TetherProtocol`'s JSON-Schema
 * via the `definition` "NewSessionParams".
 */
export interface NewSessionParams {
  /**
   * Extension metadata (ACP `_meta`): implementations must not assume anything about its keys.
   */
  _meta?: {} | null;
  cwd: string;
  mcpServers?: {}[];
}
/**
 * This interface was referenced by `TetherProtocol`'s JSON-Schema
 * via the `definition` "NewSessionResult".
 */
export interface NewSessionResult {
  modes: SessionModeState;
  sessionId: string;
}
/**
 * This interface was referenced by `TetherProtocol`'s JSON-Schema
 * via the `definition` "Plan".
 */
export interface Plan {
  /**
   * Extension metadata (ACP `_meta`): implementations must not assume anything about its keys.
   */
  _meta?: {} | null;
  entries: PlanEntry[];
  sessionUpdate: "plan";
}
/**
 * This interface was referenced by `TetherProtocol`'s JSON-Schema
 * via the `definition` "PlanEntry".
 */
export interface PlanEntry {
  content: string;
  priority: "high" | "medium" | "low";
  status: "pending" | "in_progress" | "completed";
}
/**
 * This interface was referenced by `TetherProtocol`'s JSON-Schema
 * via the `definition` "PromptParams".
 */
export interface PromptParams {
  /**
   * Extension metadata (ACP `_meta`): implementations must not assume anything about its keys.
   */
  _meta?: {} | null;
  prompt: ContentBlock[];
  sessionId: string;
}
/**
 * This interface was referenced by `TetherProtocol`'s JSON-Schema
 * via the `definition` "PromptResult".
 */
export interface PromptResult {
  /**
   * Extension metadata (ACP `_meta`): implementations must not assume anything about its keys.
   */
  _meta?: {} | null;
  stopReason: StopReason;
}
/**
 * `_tether/session/report`: run reports of a session, or of one turn.
 *
 * This interface was referenced by `TetherProtocol`'s JSON-Schema
 * via the `definition` "ReportParams".
 */
export interface ReportParams {
  /**
   * Extension metadata (ACP `_meta`): implementations must not assume anything about its keys.
   */
  _meta?: {} | null;
  sessionId: string;
  turnId?: string | null;
}
/**
 * This interface was referenced by `TetherProtocol`'s JSON-Schema
 * via the `definition` "ReportResult".
 */
export interface ReportResult {
  reports: RunReport[];
}
/**
 * This interface was referenced by `TetherProtocol`'s JSON-Schema
 * via the `definition` "RunReport".
 */
export interface RunReport {
  completedAt: number;
  error?: string | null;
  model: string;
  provider: string;
  sessionId: string;
  startedAt: number;
  status: string;
  stepCount: number;
  steps: StepReport[];
  stopReason: string;
  toolCallCount: number;
  totalLlmMs: number;
  totalMs: number;
  totalToolMs: number;
  totalUsage: Usage;
  turnId: string;
}
/**
 * This interface was referenced by `TetherProtocol`'s JSON-Schema
 * via the `definition` "StepReport".
 */
export interface StepReport {
  finishReason: string;
  firstTokenMs: number | null;
  index: number;
  llmLatencyMs: number;
  toolCalls: ToolCallReport[];
  toolTotalMs: number;
  usage: Usage;
}
/**
 * This interface was referenced by `TetherProtocol`'s JSON-Schema
 * via the `definition` "ToolCallReport".
 */
export interface ToolCallReport {
  arguments: {};
  callId: string;
  error?: string | null;
  latencyMs: number;
  resultSizeBytes: number;
  toolName: string;
}
/**
 * This interface was referenced by `TetherProtocol`'s JSON-Schema
 * via the `definition` "Usage".
 */
export interface Usage {
  cacheWriteTokens?: number;
  cachedTokens?: number;
  inputTokens?: number;
  outputTokens?: number;
}
/**
 * Params of `session/close`, `session/delete` and `session/cancel`.
 *
 * This interface was referenced by `TetherProtocol`'s JSON-Schema
 * via the `definition` "SessionIdParams".
 */
export interface SessionIdParams {
  /**
   * Extension metadata (ACP `_meta`): implementations must not assume anything about its keys.
   */
  _meta?: {} | null;
  sessionId: string;
}
/**
 * This interface was referenced by `TetherProtocol`'s JSON-Schema
 * via the `definition` "SessionInfoUpdate".
 */
export interface SessionInfoUpdate {
  /**
   * Extension metadata (ACP `_meta`): implementations must not assume anything about its keys.
   */
  _meta?: {} | null;
  sessionUpdate: "session_info_update";
  title?: string | null;
  updatedAt?: string | null;
}
/**
 * This interface was referenced by `TetherProtocol`'s JSON-Schema
 * via the `definition` "SessionNotification".
 */
export interface SessionNotification {
  /**
   * Extension metadata (ACP `_meta`): implementations must not assume anything about its keys.
   */
  _meta?: {} | null;
  sessionId: string;
  update: SessionUpdate;
}
/**
 * This interface was referenced by `TetherProtocol`'s JSON-Schema
 * via the `definition` "UserMessageChunk".
 */
export interface UserMessageChunk {
  /**
   * Extension metadata (ACP `_meta`): implementations must not assume anything about its keys.
   */
  _meta?: {} | null;
  content: ContentBlock;
  sessionUpdate: "user_message_chunk";
}
/**
 * This interface was referenced by `TetherProtocol`'s JSON-Schema
 * via the `definition` "ToolCall".
 */
export interface ToolCall {
  /**
   * Extension metadata (ACP `_meta`): implementations must not assume anything about its keys.
   */
  _meta?: {} | null;
  content?: ToolCallContentBlock[];
  kind?: ToolKind;
  locations?: ToolCallLocation[];
  rawInput?: {} | null;
  rawOutput?: {} | null;
  sessionUpdate: "tool_call";
  status?: ToolCallStatus;
  title: string;
  toolCallId: string;
}
/**
 * `{"type": "content", "content": <ContentBlock>}` inside a tool call.
 *
 * This interface was referenced by `TetherProtocol`'s JSON-Schema
 * via the `definition` "ToolCallContentBlock".
 */
export interface ToolCallContentBlock {
  content: TextContent;
  type?: "content";
}
/**
 * This interface was referenced by `TetherProtocol`'s JSON-Schema
 * via the `definition` "ToolCallLocation".
 */
export interface ToolCallLocation {
  line?: number | null;
  path: string;
}
/**
 * This interface was referenced by `TetherProtocol`'s JSON-Schema
 * via the `definition` "ToolCallUpdate".
 */
export interface ToolCallUpdate {
  /**
   * Extension metadata (ACP `_meta`): implementations must not assume anything about its keys.
   */
  _meta?: {} | null;
  content?: ToolCallContentBlock[] | null;
  kind?: ToolKind | null;
  locations?: ToolCallLocation[] | null;
  rawInput?: {} | null;
  rawOutput?: {} | null;
  sessionUpdate: "tool_call_update";
  status?: ToolCallStatus | null;
  title?: string | null;
  toolCallId: string;
}
/**
 * This interface was referenced by `TetherProtocol`'s JSON-Schema
 * via the `definition` "UsageUpdate".
 */
export interface UsageUpdate {
  /**
   * Extension metadata (ACP `_meta`): implementations must not assume anything about its keys.
   */
  _meta?: {} | null;
  sessionUpdate: "usage_update";
  size: number;
  used: number;
}
/**
 * This interface was referenced by `TetherProtocol`'s JSON-Schema
 * via the `definition` "SetModeParams".
 */
export interface SetModeParams {
  /**
   * Extension metadata (ACP `_meta`): implementations must not assume anything about its keys.
   */
  _meta?: {} | null;
  modeId: ModeId;
  sessionId: string;
}
