// generated — DO NOT EDIT.
// Types of the Tether protocol, from protocol/schema.json by scripts/gen_types.py
// (`npm run gen:types`); a test fails when this file is stale.

export const PROTOCOL_VERSION = 1;

/** Apply only these hunks of an allowed edit: absolute path -> hunk indexes. */
export interface AcceptedHunksMeta {
  acceptedHunks?: { [key: string]: number[] };
}

export interface AgentCapabilities {
  loadSession?: boolean;
  mcpCapabilities?: McpCapabilities;
  promptCapabilities?: PromptCapabilities;
  sessionCapabilities?: SessionCapabilities;
}

export interface AgentMessageChunk {
  _meta?: UpdateMeta;
  content: TextContent;
  sessionUpdate: "agent_message_chunk";
}

export interface AgentThoughtChunk {
  _meta?: UpdateMeta;
  content: TextContent;
  sessionUpdate: "agent_thought_chunk";
}

/** A rule "allow always" stores: a tool kind (`execute`, `edit`, `delete`, `move`, `mcp`) and a pattern. */
export interface AllowAlwaysRule {
  kind: string;
  pattern: string;
}

/** What the "allow always" option allows, before it is picked (SPEC §5.9): `text` is also the option's name; `rules` what is stored (empty: nothing, it allows once); `sandboxed`/`network`: how the commands it allows run. */
export interface AllowAlwaysScope {
  network: boolean;
  rules: AllowAlwaysRule[];
  sandboxed: boolean;
  text: string;
}

/** `label` is optional in LSP; Tether always names the edit, first on the wire. */
export interface ApplyWorkspaceEditParams {
  edit: WorkspaceEdit;
  label?: string;
}

/** `applied: true` means done; anything else fails the tool call. */
export interface ApplyWorkspaceEditResult {
  applied: boolean;
  failureReason?: string;
}

/** A slash command: sent as a prompt whose first text block is `/name [input]`. */
export interface AvailableCommand {
  description: string;
  input?: AvailableCommandInput;
  name: string;
}

/** Unstructured text after the command's name; `hint` is shown until it is typed. */
export interface AvailableCommandInput {
  hint: string;
}

/** The whole list of slash commands, replacing the previous one (after `session/new`, after `session/load`, and when the list changes). */
export interface AvailableCommandsUpdate {
  _meta?: UpdateMeta;
  availableCommands: AvailableCommand[];
  sessionUpdate: "available_commands_update";
}

/** `$/cancel_request` (ACP: `requestId`) and `$/cancelRequest` (LSP: `id`), both directions. Either key is accepted in either spelling (`requestId` wins); Tether sends `requestId` in ACP's spelling and `id` in LSP's. */
export interface CancelRequestParams {
  id?: number | string;
  requestId?: number | string;
}

/** `{"outcome": "cancelled"}`: the prompt turn was cancelled while the client asked. */
export interface CancelledOutcome {
  outcome: "cancelled";
}

/** One file: `status` "added" | "modified" | "deleted"; `diff` is unified ("" for binary); `note` says why it cannot be rewound, if it cannot. `turns`: the turns (seqs) that changed it; `turnIds`: the same turns' ids, in the same order. */
export interface ChangedFile {
  diff: string;
  note?: string;
  path: string;
  status: "added" | "deleted" | "modified";
  turnIds: string[];
  turns: number[];
}

/** The files turn `turn` (its seq or its turnId) changed, or the whole session's when absent. */
export interface ChangesParams {
  _meta?: { [key: string]: unknown };
  cwd?: string;
  sessionId: string;
  turn?: number | string;
}

/** `rewinds`: every rewind of the session, oldest first (also with `turn`). */
export interface ChangesResult {
  files: ChangedFile[];
  rewinds: RewindInfo[];
}

/** ACP's client capabilities, with Tether's extensions under `_meta`. */
export interface ClientCapabilities {
  _meta?: ClientCapabilitiesMeta;
  fs?: FileSystemCapabilities;
  terminal?: boolean;
}

/** `terminal_output: true` asks for command output as terminal `_meta` (SPEC §4.9). */
export interface ClientCapabilitiesMeta {
  terminal_output?: boolean;
  tether?: ClientTetherCapabilities;
}

/** `namedPermissionOptions: true`: the client shows permission options by name, so it is offered "Allow once, with network", a second option of kind `allow_once` (SPEC §3.22). `clearSession: true`: `/clear` opens a new session and tells the client by `_tether/session/cleared`, for it to show in the same view (SPEC §4.11). */
export interface ClientTetherCapabilities {
  clearSession?: boolean;
  namedPermissionOptions?: boolean;
}

/** "Ask Tether about this", "Explain", "Fix this with Tether": each runs `tether.ask`. */
export interface CodeAction {
  command: Command;
  diagnostics?: Diagnostic[];
  isPreferred?: boolean;
  kind: string;
  title: string;
}

export interface CodeActionContext {
  diagnostics?: Diagnostic[];
  only?: string[];
  triggerKind?: number;
}

/** The kinds of Tether's code actions (SPEC §3.34). */
export interface CodeActionOptions {
  codeActionKinds: string[];
}

export interface CodeActionParams {
  context?: CodeActionContext;
  range: Range;
  textDocument: TextDocumentIdentifier;
}

export interface Command {
  arguments?: unknown[];
  command: string;
  title: string;
}

/** What a `tether.*` command did: the workspace's session, and the turn it started (`tether.ask`), the mode it set (`tether.setMode`) or whether a turn was cancelled. */
export interface CommandResult {
  cancelled?: boolean;
  modeId?: string;
  sessionId: string;
  turnId?: string;
}

export interface Compaction {
  replaced: number;
}

/** The full set of session config options, after one changed on the daemon's side. */
export interface ConfigOptionUpdate {
  _meta?: UpdateMeta;
  configOptions: SessionConfigOption[];
  sessionUpdate: "config_option_update";
}

export type ContentBlock = TextContent | ResourceLink | EmbeddedResource;

export interface CreateFile {
  kind: "create";
  options?: CreateFileOptions;
  uri: string;
}

export interface CreateFileOptions {
  ignoreIfExists?: boolean;
  overwrite?: boolean;
}

/** Sent when the mode changes other than by the client's own `session/set_mode` (`session/set_config_option` on the "mode" option, the `/mode` slash command). */
export interface CurrentModeUpdate {
  _meta?: UpdateMeta;
  currentModeId: ModeId;
  sessionUpdate: "current_mode_update";
}

/** `_tether/daemon/stats`: the daemon's own counters, for health checks. */
export interface DaemonStats {
  backgroundTasks: number;
  framesWritten: number;
  framing: "lsp" | "ndjson" | null;
  liveSessions: number;
  maxRssKb: number;
  openFds?: number;
  openStores?: number;
  outgoingRequests: number;
  runningRequests: number;
  tasks?: number;
  threads?: number;
  unknownResponses: number;
  version: string;
  watchedWorkspaces?: number;
  writes: number;
}

export interface DequeueParams {
  _meta?: { [key: string]: unknown };
  queueId: string;
  sessionId: string;
}

/** A diagnostic the editor shows; fields Tether does not read are not listed. */
export interface Diagnostic {
  code?: number | string;
  message: string;
  range: Range;
  severity?: number;
  source?: string;
}

export interface DidChangeTextDocumentParams {
  contentChanges?: TextDocumentContentChangeEvent[];
  textDocument: TextDocumentIdentifier;
}

export interface DidCloseTextDocumentParams {
  textDocument: TextDocumentIdentifier;
}

export interface DidOpenTextDocumentParams {
  textDocument: TextDocumentItem;
}

/** Accepted and ignored. */
export interface DidSaveTextDocumentParams {
  text?: string;
  textDocument?: { [key: string]: unknown };
}

/** `{"type": "diff", path, oldText?, newText}`: whole file texts (SPEC §3.22). */
export interface DiffContent {
  newText: string;
  oldText?: string;
  path: string;
  type: "diff";
}

/** `_tether/session/dump`: a live session, else one stored in `cwd`'s workspace or the default one; with `path`, written to that new file (absolute) a page at a time, never held whole, and answered with `DumpedFile`. */
export interface DumpParams {
  _meta?: { [key: string]: unknown };
  cwd?: string;
  path?: string;
  sessionId: string;
}

export type DumpResult = Snapshot | DumpedFile;

/** `_tether/session/dump` with `path`: the file written, its messages and size. */
export interface DumpedFile {
  bytes: number;
  messages: number;
  path: string;
}

export interface EmbeddedResource {
  _meta?: { [key: string]: unknown };
  resource: TextResource;
  type: "resource";
}

/** No params (or `{}`): `initialized`, `shutdown`, `exit`, `_tether/daemon/stats`. */
export interface EmptyParams {
  _meta?: { [key: string]: unknown };
}

/** `{}`: the result of `session/close`, `session/delete`, `session/set_mode`, `_tether/rules/remove`. */
export interface EmptyResult {
  _meta?: { [key: string]: unknown };
}

/** The `tether.*` commands a stock LSP client may run (SPEC §3.33). */
export interface ExecuteCommandOptions {
  commands: string[];
}

/** `tether.ask` (a prompt string, or `{prompt?, uri?, range?, diagnostics?, kind?}`), `tether.cancel`, `tether.newSession`, `tether.setMode` (a mode id, or nothing: asked). */
export interface ExecuteCommandParams {
  arguments?: unknown[];
  command: string;
  workDoneToken?: number | string;
}

export interface FileSystemCapabilities {
  readTextFile?: boolean;
  writeTextFile?: boolean;
}

/** `session/fork` (ACP, unstable): `cwd` is where the source is looked for and where the fork is stored; `mcpServers` is ignored. */
export interface ForkSessionParams {
  _meta?: { [key: string]: unknown };
  cwd?: string;
  mcpServers?: unknown;
  sessionId: string;
}

/** A hunk of a text change the user may pick (SPEC §5.10): `path` absolute, `index` 0-based per file in diff order, `header` the unified-diff hunk header. */
export interface Hunk {
  header: string;
  index: number;
  path: string;
}

export interface Implementation {
  name: string;
  title?: string;
  version: string;
}

/** ACP's and LSP's initialize params in one: either set, or both, may arrive. ACP v2 names the client `info` and its capabilities `capabilities` (LSP's key in v1). */
export interface InitializeParams {
  _meta?: { [key: string]: unknown };
  capabilities?: { [key: string]: unknown };
  clientCapabilities?: ClientCapabilities;
  clientInfo?: Implementation;
  info?: Implementation;
  initializationOptions?: { [key: string]: unknown };
  processId?: number;
  protocolVersion?: number;
  rootPath?: string;
  rootUri?: string;
  workspaceFolders?: WorkspaceFolder[];
}

/** The ACP half always; the LSP half (`capabilities`, `serverInfo`) at the root for a client that sent LSP params, else under `_meta.tether.lsp`. */
export interface InitializeResult {
  _meta?: InitializeResultMeta;
  agentCapabilities: AgentCapabilities;
  agentInfo: Implementation;
  authMethods: { [key: string]: unknown }[];
  capabilities?: ServerCapabilities;
  protocolVersion: number;
  serverInfo?: Implementation;
}

export interface InitializeResultMeta {
  tether?: InitializeTetherMeta;
}

/** The answer's `_meta.tether`: an ACP client's LSP half, the ACP versions Tether speaks (a v1 client may reconnect asking for 2), the workspace-config keys refused (§9). */
export interface InitializeTetherMeta {
  configRefused?: RefusedSetting[];
  lsp?: LspInitializeResult;
  protocolVersions?: number[];
}

export interface LatestParams {
  _meta?: { [key: string]: unknown };
  cwd?: string;
}

export type LatestResult = LatestSession | NoLatestSession;

/** `title` is omitted when the session has none (never null, as in `session/list`). */
export interface LatestSession {
  cwd: string;
  sessionId: string;
  title?: string;
  updatedAt: string;
}

export interface ListSessionsParams {
  _meta?: { [key: string]: unknown };
  cursor?: string;
  cwd?: string;
}

export interface ListSessionsResult {
  nextCursor?: string;
  sessions: SessionInfo[];
}

/** Params of `session/load` and of `session/resume`. */
export interface LoadSessionParams {
  _meta?: { [key: string]: unknown };
  cwd: string;
  mcpServers?: { [key: string]: unknown }[];
  sessionId: string;
}

/** Result of `session/load` and of `session/resume`. */
export interface LoadSessionResult {
  configOptions?: SessionConfigOption[];
  modes: SessionModeState;
}

/** `window/logMessage`: the turn's full answer, and its steps for a client without work-done progress (`type` 3 info, 4 log). */
export interface LogMessageParams {
  message: string;
  type: number;
}

/** The LSP half of the `initialize` result. */
export interface LspInitializeResult {
  capabilities: ServerCapabilities;
  serverInfo: Implementation;
}

export interface McpCapabilities {
  http?: boolean;
  sse?: boolean;
}

/** One message of an earlier session given to the model (`sessionTitle` null when untitled). */
export interface MemoryHit {
  messageSeq: number;
  role: string;
  sessionId: string;
  sessionTitle: string | null;
  snippet: string;
}

/** What retrieved memory gave the model (`_meta.tether.memory` of its notice). */
export interface MemoryRecall {
  hits: MemoryHit[];
  tokens: number;
}

export interface MessageActionItem {
  title: string;
}

export type MessageRole = "assistant" | "system" | "tool" | "user";

export type MessageStatus = "cancelled" | "error" | "incomplete" | "interrupted";

export type ModeId = "ask" | "auto-edit" | "full-auto" | "read-only";

export interface NewSessionParams {
  _meta?: { [key: string]: unknown };
  cwd: string;
  mcpServers?: { [key: string]: unknown }[];
}

/** Also the result of `session/fork` and `_tether/session/fork`. */
export interface NewSessionResult {
  configOptions?: SessionConfigOption[];
  modes: SessionModeState;
  sessionId: string;
}

/** `{"sessionId": null}`: the workspace has no session with a conversation. */
export interface NoLatestSession {
  sessionId: null;
}

/** `version` is the open buffer's, or null for a file that is not open. */
export interface OptionalVersionedTextDocumentIdentifier {
  uri: string;
  version: number | null;
}

/** The checkpointed step (its index in the turn, 1 when left out) and its calls still to run. */
export interface PendingApprovals {
  calls: PendingCall[];
  step?: number;
}

/** One call of the step still to run; `started`: approved and begun before the daemon stopped, so it may have run (never run again unasked). */
export interface PendingCall {
  arguments?: { [key: string]: unknown };
  id: string;
  name: string;
  started?: boolean;
}

/** `optionId` is the kind, or `allow_once_network` (kind `allow_once`) for a sandboxed command that may be given the network. */
export interface PermissionOption {
  kind: PermissionOptionKind;
  name: string;
  optionId: string;
}

export type PermissionOptionKind = "allow_always" | "allow_once" | "reject_always" | "reject_once";

export interface PermissionRequestMeta {
  tether: PermissionTetherMeta;
}

export interface PermissionResultMeta {
  tether?: AcceptedHunksMeta;
}

export interface PermissionTetherMeta {
  allowAlways?: AllowAlwaysScope;
  hunks: Hunk[];
  parentCallId?: string;
  reason: string;
  reviewer?: string;
}

/** The tool call asked about: the same `toolCallId`, `title`, `kind` and `locations` as its `session/update`s (locations absolute, with the first changed line where known; none for a command); `content` holds `diff` blocks for file changes or the command as a text block. */
export interface PermissionToolCall {
  content?: ToolCallContent[];
  kind?: ToolKind;
  locations?: ToolCallLocation[];
  rawInput?: { [key: string]: unknown };
  status?: ToolCallStatus;
  title?: string;
  toolCallId: string;
}

/** The whole plan, replacing the previous one (an empty list clears it). */
export interface Plan {
  _meta?: UpdateMeta;
  entries: PlanEntry[];
  sessionUpdate: "plan";
}

export interface PlanEntry {
  content: string;
  priority: PlanEntryPriority;
  status: PlanEntryStatus;
}

export type PlanEntryPriority = "high" | "low" | "medium";

export type PlanEntryStatus = "completed" | "in_progress" | "pending";

/** Line and character, both 0-based; characters are UTF-16 code units. */
export interface Position {
  character: number;
  line: number;
}

/** `$/progress` of a token Tether created with `window/workDoneProgress/create`. */
export interface ProgressParams {
  token: number | string;
  value: ProgressValue;
}

export type ProgressValue = WorkDoneProgressBegin | WorkDoneProgressReport | WorkDoneProgressEnd;

export interface PromptCapabilities {
  audio?: boolean;
  embeddedContext?: boolean;
  image?: boolean;
}

export interface PromptParams {
  _meta?: { [key: string]: unknown };
  idempotencyKey?: string;
  prompt: ContentBlock[];
  sessionId: string;
}

/** `_meta.tether.turnId` names the turn's run report (`_tether/session/report`). */
export interface PromptResult {
  _meta?: PromptResultMeta;
  stopReason: StopReason;
}

export interface PromptResultMeta {
  tether?: PromptTetherMeta;
}

/** `steer`: where a message sent with `_meta.tether.steer: true` went (SPEC §3.37). `turnSeq`: the same turn's seq (1 = the session's first), which rewind and changes also take (SPEC §3.40). */
export interface PromptTetherMeta {
  steer?: SteerOutcome;
  turnId: string;
  turnSeq?: number;
}

export interface QueueParams {
  _meta?: { [key: string]: unknown };
  sessionId: string;
}

/** The session's queue, oldest first: the order its turns run in. */
export interface QueueResult {
  _meta?: { [key: string]: unknown };
  queued: QueuedPrompt[];
}

export type QueueState = "notRun" | "queued";

/** One prompt waiting for its turn: `preview` is its text's first line (cut at 80 characters), `queuedAt` seconds since the epoch. */
export interface QueuedPrompt {
  preview: string;
  queueId: string;
  queuedAt: number;
  state?: QueueState;
}

export interface Range {
  end: Position;
  start: Position;
}

/** Always the whole file: Tether never sends `line` or `limit`. */
export interface ReadTextFileParams {
  path: string;
  sessionId: string;
}

export interface ReadTextFileResult {
  content: string;
}

/** A workspace-config key Tether refused and ignored (SPEC §9). */
export interface RefusedSetting {
  file: string;
  key: string;
  message: string;
  reason: string;
}

export interface RemoveRuleParams {
  _meta?: { [key: string]: unknown };
  id: number;
  sessionId: string;
}

/** `_tether/session/report`: run reports of a session, or of one turn. */
export interface ReportParams {
  _meta?: { [key: string]: unknown };
  sessionId: string;
  turnId?: string;
}

export interface ReportResult {
  reports: RunReport[];
}

export type RequestPermissionOutcome = SelectedOutcome | CancelledOutcome;

export interface RequestPermissionParams {
  _meta?: PermissionRequestMeta;
  options: PermissionOption[];
  sessionId: string;
  toolCall: PermissionToolCall;
}

/** `_meta.tether.acceptedHunks` may sit here or on the selected outcome. */
export interface RequestPermissionResult {
  _meta?: PermissionResultMeta;
  outcome: RequestPermissionOutcome;
}

export interface ResourceLink {
  _meta?: { [key: string]: unknown };
  mimeType?: string;
  name: string;
  type: "resource_link";
  uri: string;
}

/** The snapshot as `snapshot`, or in the file at `path` (absolute; read a record at a time, never whole): exactly one of the two. */
export interface RestoreParams {
  _meta?: { [key: string]: unknown };
  cwd?: string;
  importRules?: boolean;
  keepId?: boolean;
  path?: string;
  snapshot?: Snapshot;
}

/** The stored (not live) session: make it live with `session/load` or `/resume`. */
export interface RestoreResult {
  cwd: string;
  mode: string;
  rules: RestoredRule[];
  sessionId: string;
}

/** `imported` only with `importRules`, for a known kind and a non-blank pattern. */
export interface RestoredRule {
  decision: RuleDecision;
  imported: boolean;
  kind: string;
  pattern: string;
}

/** A file changed since Tether last wrote it (by the user or another program): not overwritten without `force`. `diff` goes from its current content to the one the rewind restores ("" for a binary file). */
export interface RewindConflict {
  diff: string;
  path: string;
}

/** A rewind of the session: `toRewind: rewindId` undoes it. `atSeq`: the session's next message seq when it was made; `toSeq`: the first message it took out of the model's view. */
export interface RewindInfo {
  atSeq: number;
  restore: RewindRestore;
  rewindId: number;
  toSeq: number;
}

/** Back to just before turn `toTurn` (its seq, 1 = the first, or its turnId) began, or just before the user message `messageSeq`, or just before rewind `toRewind` (which undoes it): exactly one of the three. `force`: also overwrite files changed since Tether last wrote them. `dryRun`: answer what it would do, change nothing. */
export interface RewindParams {
  _meta?: { [key: string]: unknown };
  cwd?: string;
  dryRun?: boolean;
  force?: boolean;
  messageSeq?: number;
  restore?: RewindRestore;
  sessionId: string;
  toRewind?: number;
  toTurn?: number | string;
}

export type RewindRestore = "both" | "conversation" | "files";

/** `rewindId`: this rewind (undo it with `toRewind`); null when nothing was done (a dry run, or refused for conflicts). `restored`: the files put back (or, in a dry run, that would be); `conflicts`: the files left as they are (with `force`, restored too and listed in both); `hiddenMessages`: messages the model no longer sees. */
export interface RewindResult {
  conflicts: RewindConflict[];
  done: boolean;
  hiddenMessages: number;
  restored: string[];
  rewindId: number | null;
  skipped: RewindSkipped[];
}

/** A file the rewind cannot restore (its content was not recorded), and why. */
export interface RewindSkipped {
  path: string;
  reason: string;
}

/** `id` is null for built-in and config rules (they cannot be removed). */
export interface Rule {
  decision: RuleDecision;
  id: number | null;
  kind: RuleKind;
  pattern: string;
  scope?: string;
  source: "built-in" | "config" | "user";
}

export type RuleDecision = "allow" | "deny";

export type RuleKind = "delete" | "edit" | "execute" | "mcp" | "move";

/** `_tether/rules/list`: the rules of a live session's workspace. */
export interface RulesParams {
  _meta?: { [key: string]: unknown };
  sessionId: string;
}

export interface RulesResult {
  rules: Rule[];
}

export interface RunReport {
  completedAt: number;
  error?: string;
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

/** `rank` is SQLite's bm25 score: lower is better; `snippet` marks matches `[[…]]`. */
export interface SearchHit {
  messageSeq: number;
  rank: number;
  role: MessageRole;
  sessionId: string;
  sessionTitle: string | null;
  snippet: string;
}

export interface SearchParams {
  _meta?: { [key: string]: unknown };
  cwd?: string;
  limit?: number;
  query: string;
}

export interface SearchResult {
  hits: SearchHit[];
}

export interface SelectedOutcome {
  _meta?: PermissionResultMeta;
  optionId: string;
  outcome: "selected";
}

/** The LSP half's `capabilities`; `experimental.tether.protocolVersion` marks Tether. */
export interface ServerCapabilities {
  codeActionProvider?: CodeActionOptions;
  executeCommandProvider?: ExecuteCommandOptions;
  experimental: { [key: string]: unknown };
  textDocumentSync: TextDocumentSyncOptions;
}

export interface SessionCapabilities {
  close?: { [key: string]: unknown };
  delete?: { [key: string]: unknown };
  list?: { [key: string]: unknown };
  resume?: { [key: string]: unknown };
}

/** `_tether/session/cleared` (daemon -> client): `/clear` made `new_session_id` (same workspace, mode, model and reasoning) for the view that showed `session_id`. */
export interface SessionClearedParams {
  _meta?: { [key: string]: unknown };
  configOptions: SessionConfigOption[];
  newSessionId: string;
  sessionId: string;
}

/** A select option: `category` is ACP's ("model", "mode", ...), UX only. */
export interface SessionConfigOption {
  category?: string;
  currentValue: string;
  description?: string;
  id: string;
  name: string;
  options: SessionConfigSelectOption[];
  type: "select";
}

export interface SessionConfigSelectOption {
  description?: string;
  name: string;
  value: string;
}

/** Params of `session/close`, `session/delete` and `session/cancel`. */
export interface SessionIdParams {
  _meta?: { [key: string]: unknown };
  sessionId: string;
}

/** `title` is omitted until the first prompt gives it one (never null: some clients crash on a null title); `updatedAt` is ISO 8601 UTC; a sub-agent's session names the session and `delegate` call it ran under in `_meta.tether`. */
export interface SessionInfo {
  _meta?: { [key: string]: unknown };
  cwd: string;
  sessionId: string;
  title?: string;
  updatedAt: string | null;
}

export interface SessionInfoUpdate {
  _meta?: UpdateMeta;
  sessionUpdate: "session_info_update";
  title?: string;
  updatedAt?: string;
}

export interface SessionMode {
  description?: string;
  id: ModeId;
  name: string;
}

export interface SessionModeState {
  availableModes: SessionMode[];
  currentModeId: ModeId;
}

/** `session/update` params. */
export interface SessionNotification {
  _meta?: { [key: string]: unknown };
  sessionId: string;
  update: SessionUpdate;
}

export type SessionUpdate = UserMessageChunk | AgentMessageChunk | AgentThoughtChunk | ToolCall | ToolCallUpdate | Plan | SessionInfoUpdate | CurrentModeUpdate | ConfigOptionUpdate | AvailableCommandsUpdate | UsageUpdate;

export interface SetConfigOptionParams {
  _meta?: { [key: string]: unknown };
  configId: string;
  sessionId: string;
  value: string;
}

/** The full set of options, with their values after the change. */
export interface SetConfigOptionResult {
  _meta?: { [key: string]: unknown };
  configOptions: SessionConfigOption[];
}

export interface SetModeParams {
  _meta?: { [key: string]: unknown };
  modeId: ModeId;
  sessionId: string;
}

/** `session/set_model` (ACP, unstable; avante uses it): the `model` option by another name. */
export interface SetModelParams {
  _meta?: { [key: string]: unknown };
  modelId: string;
  sessionId: string;
}

/** `window/showDocument`: the session's Markdown transcript (in Tether's data dir). */
export interface ShowDocumentParams {
  external?: boolean;
  takeFocus?: boolean;
  uri: string;
}

export interface ShowDocumentResult {
  success: boolean;
}

/** `window/showMessage`: `type` 1 error, 2 warning, 3 info, 4 log. */
export interface ShowMessageParams {
  message: string;
  type: number;
}

/** An approval asked of a stock LSP client: `type` 2, the actions `Allow once`, (`Allow once with network`), `Allow always`, `Reject`. */
export interface ShowMessageRequestParams {
  actions: MessageActionItem[];
  message: string;
  type: number;
}

export type ShowMessageRequestResult = MessageActionItem | null;

/** A session's stored records, format version 1 (`_tether/session/dump`'s result); `checkpoints`: the files its turns and rewinds changed (SPEC §3.40), when it has any. */
export interface Snapshot {
  checkpoints?: { [key: string]: unknown };
  exported_at?: number;
  messages: SnapshotMessage[];
  pending: SnapshotPending | null;
  reports: SnapshotReport[];
  rules?: SnapshotRule[];
  session: SnapshotSession;
  tether_snapshot: number;
  turns: SnapshotTurn[];
}

/** `body` is the stored message (user, assistant or tool result; SPEC §3.28). */
export interface SnapshotMessage {
  body: { [key: string]: unknown };
  created_at: number;
  rewound?: number;
  role: MessageRole;
  seq: number;
  status?: StoredMessageStatus;
  turn_id?: string;
}

export interface SnapshotPending {
  approvals: PendingApprovals;
  turn_id: string;
}

export interface SnapshotReport {
  report: RunReport;
  turn_id: string;
}

export interface SnapshotRule {
  decision: RuleDecision;
  kind: string;
  pattern: string;
}

export interface SnapshotSession {
  created_at: number;
  id: string;
  metadata?: { [key: string]: unknown };
  mode: string;
  title?: string;
  updated_at: number;
  workspace: string;
}

export interface SnapshotTurn {
  error?: string;
  finished_at?: number;
  id: string;
  pending?: PendingApprovals;
  seq: number;
  started_at: number;
  status: TurnStatus;
  stop_reason?: string;
}

/** Where a steered message went. `landed`: it joined the running turn `turnId` after its step `step` (the model saw it on step `step + 1`), stored as message `messageSeq`. Not landed: that turn ended first, so the message ran as a turn of its own (this answer's `stopReason` is that turn's). */
export interface SteerOutcome {
  landed: boolean;
  messageSeq?: number;
  step?: number;
  turnId?: string;
}

/** `_tether/session/steer`: `session/prompt` with `_meta.tether.steer: true`. */
export interface SteerParams {
  _meta?: { [key: string]: unknown };
  prompt: ContentBlock[];
  sessionId: string;
}

export interface StepReport {
  finishReason: string | null;
  firstTokenMs: number | null;
  index: number;
  llmLatencyMs: number;
  toolCalls: ToolCallReport[];
  toolTotalMs: number;
  usage: Usage;
}

export type StopReason = "cancelled" | "end_turn" | "max_tokens" | "max_turn_requests" | "refusal";

export type StoredMessageStatus = "cancelled" | "complete" | "error" | "incomplete" | "interrupted";

/** Params of `terminal/cancel`: the command whose terminal this is is stopped. */
export interface TerminalCancelParams {
  _meta?: { [key: string]: unknown };
  sessionId: string;
  terminalId: string;
}

/** `{"type": "terminal", terminalId}`: command output shown as a terminal (only for clients that set `clientCapabilities._meta.terminal_output`, SPEC §4.9). */
export interface TerminalContent {
  terminalId: string;
  type: "terminal";
}

/** `exit_code` null and `signal` "SIGKILL" when the command was killed. */
export interface TerminalExit {
  exit_code: number | null;
  signal: string | null;
  terminal_id: string;
}

export interface TerminalInfo {
  cwd: string;
  terminal_id: string;
}

/** New output to append (not the tail). */
export interface TerminalOutput {
  data: string;
  terminal_id: string;
}

/** `_tether/session/fork`: messages 0..`messageSeq` (all when absent or null). */
export interface TetherForkParams {
  _meta?: { [key: string]: unknown };
  cwd?: string;
  messageSeq?: number;
  sessionId: string;
}

export interface TextContent {
  _meta?: { [key: string]: unknown };
  text: string;
  type: "text";
}

/** `{text}` replaces the whole text; `{range, text}` replaces that range. */
export interface TextDocumentContentChangeEvent {
  range?: Range;
  rangeLength?: number;
  text: string;
}

export interface TextDocumentEdit {
  edits: TextEdit[];
  textDocument: OptionalVersionedTextDocumentIdentifier;
}

export interface TextDocumentIdentifier {
  uri: string;
  version?: number;
}

/** `didOpen`'s document. Missing `text`/`languageId` count as empty. */
export interface TextDocumentItem {
  languageId?: string;
  text?: string;
  uri: string;
  version?: number;
}

/** LSP: which document notifications Tether wants (`change: 2` is incremental). */
export interface TextDocumentSyncOptions {
  change: number;
  openClose: boolean;
  save: boolean;
}

export interface TextEdit {
  newText: string;
  range: Range;
}

export interface TextResource {
  mimeType?: string;
  text: string;
  uri: string;
}

/** A call's first report: `kind` and `status` always written, the rest left out while unset (no content: none yet). */
export interface ToolCall {
  _meta?: UpdateMeta;
  content?: ToolCallContent[];
  kind?: ToolKind;
  locations?: ToolCallLocation[];
  rawInput?: { [key: string]: unknown };
  rawOutput?: { [key: string]: unknown };
  sessionUpdate: "tool_call";
  status?: ToolCallStatus;
  title: string;
  toolCallId: string;
}

/** Params of `tool_call/cancel` and `_tether/toolCall/cancel` (§12.4): the call to stop. */
export interface ToolCallCancelParams {
  _meta?: { [key: string]: unknown };
  sessionId: string;
  toolCallId: string;
}

export type ToolCallContent = ToolCallContentBlock | DiffContent | TerminalContent;

/** `{"type": "content", "content": <ContentBlock>}` inside a tool call. */
export interface ToolCallContentBlock {
  content: TextContent;
  type: "content";
}

export interface ToolCallLocation {
  line?: number;
  path: string;
}

export interface ToolCallReport {
  approvedBy?: string;
  arguments: { [key: string]: unknown };
  callId: string;
  error?: string;
  latencyMs: number;
  resultSizeBytes: number;
  toolName: string;
}

export type ToolCallStatus = "completed" | "failed" | "in_progress" | "pending";

/** A change to a tool call: fields left out are unchanged; `content` replaces. */
export interface ToolCallUpdate {
  _meta?: UpdateMeta;
  content?: ToolCallContent[];
  kind?: ToolKind;
  locations?: ToolCallLocation[];
  rawInput?: { [key: string]: unknown };
  rawOutput?: { [key: string]: unknown };
  sessionUpdate: "tool_call_update";
  status?: ToolCallStatus;
  title?: string;
  toolCallId: string;
}

export type ToolKind = "delete" | "edit" | "execute" | "fetch" | "move" | "other" | "read" | "search" | "switch_mode" | "think";

/** The end of a turn resumed after a restart, which has no prompt to answer. */
export interface TurnEnded {
  stopReason: TurnStopReason;
  turnId: string;
}

export type TurnStatus = "cancelled" | "complete" | "error" | "interrupted" | "running";

export type TurnStopReason = "cancelled" | "end_turn" | "error" | "max_tokens" | "max_turn_requests" | "refusal";

/** `_meta` of an update. The terminal keys are snake_case, as claude-agent-acp and codex-acp send them (only to clients that set `_meta.terminal_output`). */
export interface UpdateMeta {
  terminal_exit?: TerminalExit;
  terminal_info?: TerminalInfo;
  terminal_output?: TerminalOutput;
  tether?: UpdateTetherMeta;
}

/** `_meta.tether` of an update: a notice (§4.10), a message steered into a running turn, where it landed (`user_message_chunk`: `steered`, `afterStep` (null before the first step), live also `turnId`, `messageSeq`; §3.37), a replayed message's status (§4.6), a compaction (§5.15), memory given to the model, a resumed turn's end (§4.4), why a call was allowed (§4.9), a sub-agent's call and session, the prompt queue (`session_info_update`). */
export interface UpdateTetherMeta {
  afterStep?: number;
  approvedBy?: string;
  childSessionId?: string;
  compaction?: Compaction;
  memory?: MemoryRecall;
  messageSeq?: number;
  notice?: boolean;
  parentCallId?: string;
  queue?: QueuedPrompt[];
  status?: MessageStatus;
  steered?: boolean;
  turnEnded?: TurnEnded;
  turnId?: string;
}

export interface Usage {
  cacheWriteTokens?: number;
  cachedTokens?: number;
  inputTokens?: number;
  outputTokens?: number;
}

export interface UsageUpdate {
  _meta?: UpdateMeta;
  sessionUpdate: "usage_update";
  size: number;
  used: number;
}

/** Replay only: one per block of a stored prompt. */
export interface UserMessageChunk {
  _meta?: UpdateMeta;
  content: ContentBlock;
  sessionUpdate: "user_message_chunk";
}

export interface WorkDoneProgressBegin {
  cancellable?: boolean;
  kind: "begin";
  message?: string;
  percentage?: number;
  title: string;
}

/** The user pressed cancel on the turn's progress (`cancellable: true`): the turn stops. */
export interface WorkDoneProgressCancelParams {
  token: number | string;
}

export interface WorkDoneProgressCreateParams {
  token: number | string;
}

export interface WorkDoneProgressEnd {
  kind: "end";
  message?: string;
}

export interface WorkDoneProgressReport {
  cancellable?: boolean;
  kind: "report";
  message?: string;
  percentage?: number;
}

/** A `CreateFile` (for a new file) and then one whole-text `TextDocumentEdit`. */
export interface WorkspaceEdit {
  documentChanges: (TextDocumentEdit | CreateFile)[];
}

export interface WorkspaceFolder {
  name: string;
  uri: string;
}

/** `content` is the whole new text; `path` is absolute. */
export interface WriteTextFileParams {
  content: string;
  path: string;
  sessionId: string;
}

export type WriteTextFileResult = EmptyResult | null;

/** Requests a client sends Tether: method -> params and result. */
export interface ClientRequests {
  "_tether/daemon/stats": { params: EmptyParams; result: DaemonStats };
  "_tether/rules/list": { params: RulesParams; result: RulesResult };
  "_tether/rules/remove": { params: RemoveRuleParams; result: EmptyResult };
  "_tether/session/changes": { params: ChangesParams; result: ChangesResult };
  "_tether/session/dequeue": { params: DequeueParams; result: EmptyResult };
  "_tether/session/dump": { params: DumpParams; result: DumpResult };
  "_tether/session/fork": { params: TetherForkParams; result: NewSessionResult };
  "_tether/session/latest": { params: LatestParams; result: LatestResult };
  "_tether/session/queue": { params: QueueParams; result: QueueResult };
  "_tether/session/report": { params: ReportParams; result: ReportResult };
  "_tether/session/restore": { params: RestoreParams; result: RestoreResult };
  "_tether/session/rewind": { params: RewindParams; result: RewindResult };
  "_tether/session/search": { params: SearchParams; result: SearchResult };
  "_tether/session/steer": { params: SteerParams; result: PromptResult };
  "_tether/toolCall/cancel": { params: ToolCallCancelParams; result: EmptyResult };
  initialize: { params: InitializeParams; result: InitializeResult };
  "session/close": { params: SessionIdParams; result: EmptyResult };
  "session/delete": { params: SessionIdParams; result: EmptyResult };
  "session/fork": { params: ForkSessionParams; result: NewSessionResult };
  "session/list": { params: ListSessionsParams; result: ListSessionsResult };
  "session/load": { params: LoadSessionParams; result: LoadSessionResult };
  "session/new": { params: NewSessionParams; result: NewSessionResult };
  "session/prompt": { params: PromptParams; result: PromptResult };
  "session/resume": { params: LoadSessionParams; result: LoadSessionResult };
  "session/set_config_option": { params: SetConfigOptionParams; result: SetConfigOptionResult };
  "session/set_mode": { params: SetModeParams; result: EmptyResult };
  "session/set_model": { params: SetModelParams; result: EmptyResult };
  shutdown: { params: EmptyParams; result: null };
  "terminal/cancel": { params: TerminalCancelParams; result: EmptyResult };
  "textDocument/codeAction": { params: CodeActionParams; result: CodeAction[] };
  "tool_call/cancel": { params: ToolCallCancelParams; result: EmptyResult };
  "workspace/executeCommand": { params: ExecuteCommandParams; result: CommandResult | null };
}

/** Notifications a client sends Tether: method -> params. */
export interface ClientNotifications {
  "$/cancelRequest": CancelRequestParams;
  "$/cancel_request": CancelRequestParams;
  exit: EmptyParams;
  initialized: EmptyParams;
  "session/cancel": SessionIdParams;
  "textDocument/didChange": DidChangeTextDocumentParams;
  "textDocument/didClose": DidCloseTextDocumentParams;
  "textDocument/didOpen": DidOpenTextDocumentParams;
  "textDocument/didSave": DidSaveTextDocumentParams;
  "window/workDoneProgress/cancel": WorkDoneProgressCancelParams;
}

/** Requests Tether sends the client: method -> params and the answer. */
export interface AgentRequests {
  "fs/read_text_file": { params: ReadTextFileParams; result: ReadTextFileResult };
  "fs/write_text_file": { params: WriteTextFileParams; result: WriteTextFileResult };
  "session/request_permission": { params: RequestPermissionParams; result: RequestPermissionResult };
  "window/showDocument": { params: ShowDocumentParams; result: ShowDocumentResult };
  "window/showMessageRequest": { params: ShowMessageRequestParams; result: ShowMessageRequestResult };
  "window/workDoneProgress/create": { params: WorkDoneProgressCreateParams; result: null };
  "workspace/applyEdit": { params: ApplyWorkspaceEditParams; result: ApplyWorkspaceEditResult };
}

/** Notifications Tether sends the client: method -> params. */
export interface AgentNotifications {
  "$/cancelRequest": CancelRequestParams;
  "$/cancel_request": CancelRequestParams;
  "$/progress": ProgressParams;
  "_tether/session/cleared": SessionClearedParams;
  "session/update": SessionNotification;
  "window/logMessage": LogMessageParams;
  "window/showMessage": ShowMessageParams;
}
