/**
 * The protocol client: one JSON-RPC connection to a `tether serve` process over its stdio,
 * LSP `Content-Length` framing (vscode-jsonrpc). Typed requests for what the extension
 * uses, handlers for the requests Tether sends the client (SPEC §3.21), and the
 * withdrawal of those requests with ACP's `$/cancel_request` (SPEC §3.14). It speaks
 * ACP v2 when the daemon's `initialize` answer says 2 (SPEC §12), v1 otherwise, and hands
 * the layers above v1's shapes either way (`acp_v2_session.ts`, `acp_v2.ts`).
 * No `vscode` import: runs in plain Node.
 */
import {
  CancellationSenderStrategy,
  CancellationTokenSource,
  createMessageConnection,
  StreamMessageReader,
  StreamMessageWriter,
  type CancellationToken,
  type Message,
  type MessageConnection,
  type RequestMessage,
} from "vscode-jsonrpc/node";
import { readFileSync } from "node:fs";
import { ACP_V2, configOptionsV1, permissionParamsV1, type TextReader } from "./acp_v2";
import { AcpV2Session } from "./acp_v2_session";
import { Emitter, type Disposable } from "./events";
import { permissionResult, promptFromRequest, type PermissionDecision } from "./permissions";
import type { PermissionPrompt } from "../shared/messages";
import type {
  ApplyWorkspaceEditParams,
  ApplyWorkspaceEditResult,
  ChangesResult,
  ContentBlock,
  InitializeParams,
  InitializeResult,
  LatestResult,
  ListSessionsResult,
  LoadSessionResult,
  NewSessionResult,
  PromptParams,
  PromptResult,
  ReportResult,
  RequestPermissionParams,
  RequestPermissionResult,
  SessionClearedParams,
  SessionConfigOption,
  SessionInfo,
  SessionNotification,
  SetConfigOptionResult,
  Snapshot,
  RewindParams,
  RewindResult,
  RulesResult,
  TextDocumentContentChangeEvent,
} from "../protocol/schema";

/** Decides a permission prompt; `withdrawn` aborts when Tether takes the request back. */
export type PermissionHandler = (prompt: PermissionPrompt, withdrawn: AbortSignal) => Promise<PermissionDecision>;
export type ApplyEditHandler = (params: ApplyWorkspaceEditParams) => Promise<ApplyWorkspaceEditResult>;

function readDisk(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
}

/**
 * The writer to the daemon's stdin. A write to a daemon that has just died (EPIPE, a
 * destroyed stream) is logged and dropped instead of rejected: vscode-jsonrpc rethrows a
 * failed request write inside a promise executor, where nobody can catch it (an unhandled
 * rejection). The request itself stays pending until the supervisor sees the exit and
 * disposes the client, which rejects every request still waiting for an answer.
 */
class DaemonWriter extends StreamMessageWriter {
  constructor(output: NodeJS.WritableStream, private readonly log?: (line: string) => void) {
    super(output);
  }

  override async write(msg: Message): Promise<void> {
    try {
      await super.write(msg);
    } catch (err) {
      this.log?.(`[rpc] a message to the daemon was not written: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
}

export class TetherClient implements Disposable {
  private readonly updates = new Emitter<SessionNotification>();
  private readonly wire = new Emitter<SessionNotification>();
  private readonly cleared = new Emitter<SessionClearedParams>();
  private readonly closed = new Emitter<void>();
  /** sources of the requests Tether sent us that are still open, by request id */
  private readonly incoming = new Map<string | number, CancellationTokenSource>();
  private readonly incomingIds = new WeakMap<CancellationToken, string | number>();
  private permissionHandler?: PermissionHandler;
  private applyEditHandler?: ApplyEditHandler;
  private isClosed = false;
  /** set when the daemon answered v2: its prompts, reopening and updates in v1's shapes */
  private v2?: AcpV2Session;
  private readText: TextReader = readDisk;
  /** what `initialize` sent and got, for diagnostics and tests (`initializeResult`: a v1 answer) */
  initializeParams?: InitializeParams;
  initializeResult?: InitializeResult;
  initializeAnswer?: Record<string, unknown>;
  /** the ACP version of this connection: what the daemon answered (SPEC §12.1) */
  protocolVersion = 1;

  /** every session update in v1's shape (v2's read into it: `acp_v2.ts`) */
  readonly onUpdate = this.updates.event;
  /** every session update as the daemon sent it (its own version's shape) */
  readonly onWireUpdate = this.wire.event;
  /** `/clear` made a new session for the view showing `sessionId` (SPEC §4.11) */
  readonly onCleared = this.cleared.event;
  readonly onClose = this.closed.event;

  constructor(private readonly connection: MessageConnection) {
    connection.onNotification("session/update", (params: SessionNotification) => this.onSessionUpdate(params));
    connection.onNotification("_tether/session/cleared", (params: SessionClearedParams) =>
      this.cleared.fire(this.v2 ? { ...params, configOptions: configOptionsV1(params.configOptions) } : params),
    );
    connection.onNotification("$/cancel_request", (params: { requestId?: string | number; id?: string | number }) => {
      const id = params?.requestId ?? params?.id;
      if (id !== undefined) this.incoming.get(id)?.cancel();
    });
    connection.onRequest("session/request_permission", (params: RequestPermissionParams, token: CancellationToken) =>
      this.onPermission(params, token),
    );
    connection.onRequest("workspace/applyEdit", (params: ApplyWorkspaceEditParams) => this.onApplyEdit(params));
    connection.onClose(() => this.markClosed());
    connection.listen();
  }

  /** A client over a child process's stdout (input) and stdin (output). */
  static overStreams(input: NodeJS.ReadableStream, output: NodeJS.WritableStream, log?: (line: string) => void): TetherClient {
    const source = { incoming: undefined as TetherClient | undefined };
    const connection = createMessageConnection(
      new StreamMessageReader(input),
      new DaemonWriter(output, log),
      {
        error: (m) => log?.(`[rpc error] ${m}`),
        warn: (m) => log?.(`[rpc warn] ${m}`),
        info: () => undefined,
        log: () => undefined,
      },
      {
        cancellationStrategy: {
          // Keep each incoming request's id with its token, so the handler can name the
          // request ("tether-N") and `$/cancel_request` can find it.
          receiver: {
            kind: "request",
            createCancellationTokenSource(message: RequestMessage) {
              const tokenSource = new CancellationTokenSource();
              if (message.id !== null) source.incoming?.track(message.id, tokenSource);
              return tokenSource;
            },
          },
          sender: CancellationSenderStrategy.Message,
        },
      },
    );
    const client = new TetherClient(connection);
    source.incoming = client;
    return client;
  }

  private track(id: string | number, tokenSource: CancellationTokenSource): void {
    this.incoming.set(id, tokenSource);
    this.incomingIds.set(tokenSource.token, id);
  }

  get closedAlready(): boolean {
    return this.isClosed;
  }

  setPermissionHandler(handler: PermissionHandler | undefined): void {
    this.permissionHandler = handler;
  }

  setApplyEditHandler(handler: ApplyEditHandler | undefined): void {
    this.applyEditHandler = handler;
  }

  /** Where a v2 diff's old text is read first (the editor's buffers); then the disk. */
  setTextReader(reader: TextReader): void {
    this.readText = (path) => reader(path) ?? readDisk(path);
  }

  /** Asks for ACP v2 (`params` carry both versions' fields); the answer decides (SPEC §12.1). */
  async initialize(params: InitializeParams): Promise<Record<string, unknown>> {
    this.initializeParams = params;
    const result = await this.connection.sendRequest<Record<string, unknown>>("initialize", params);
    this.initializeAnswer = result;
    if (result.protocolVersion === ACP_V2) {
      this.protocolVersion = ACP_V2;
      this.v2 = new AcpV2Session(this.connection, (path) => this.readText(path), (n) => this.updates.fire(n));
    } else {
      this.initializeResult = result as unknown as InitializeResult;
    }
    await this.connection.sendNotification("initialized", {});
    return result;
  }

  /** The daemon's name, from either version's answer. */
  get agentName(): string | undefined {
    const info = (this.initializeAnswer?.info ?? this.initializeAnswer?.agentInfo) as { name?: string } | undefined;
    return info?.name;
  }

  async newSession(cwd: string): Promise<NewSessionResult> {
    const result = await this.connection.sendRequest<NewSessionResult>("session/new", { cwd, mcpServers: [] });
    return this.v2 ? { ...result, configOptions: configOptionsV1(result.configOptions) } : result;
  }

  /** Replays the conversation as `session/update`s before answering (SPEC §3.6; on v2
   * `session/resume` from the start, SPEC §12.9). */
  loadSession(sessionId: string, cwd: string): Promise<LoadSessionResult> {
    if (this.v2) return this.v2.loadSession(sessionId, cwd);
    return this.connection.sendRequest("session/load", { sessionId, cwd, mcpServers: [] });
  }

  listSessions(cwd: string, cursor?: string): Promise<ListSessionsResult> {
    return this.connection.sendRequest("session/list", cursor ? { cwd, cursor } : { cwd });
  }

  /** Every stored session of the workspace, newest first (follows `nextCursor`). */
  async listAllSessions(cwd: string, limit = 500): Promise<SessionInfo[]> {
    const out: SessionInfo[] = [];
    let cursor: string | undefined;
    do {
      const page = await this.listSessions(cwd, cursor);
      out.push(...page.sessions);
      cursor = page.nextCursor ?? undefined;
    } while (cursor && out.length < limit);
    return out;
  }

  latestSession(cwd: string): Promise<LatestResult> {
    return this.connection.sendRequest("_tether/session/latest", { cwd });
  }

  /** The session's mode; v2 has no `session/set_mode`: the mode is its `mode` option there,
   * and the options it answers are returned (v1: undefined). */
  async setMode(sessionId: string, modeId: string): Promise<SessionConfigOption[] | undefined> {
    if (this.v2) return (await this.setConfigOption(sessionId, "mode", modeId)).configOptions;
    await this.connection.sendRequest("session/set_mode", { sessionId, modeId });
    return undefined;
  }

  /** A session config option (the model or reasoning picker, the mode), SPEC §3.36. */
  async setConfigOption(sessionId: string, configId: string, value: string): Promise<SetConfigOptionResult> {
    const result = await this.connection.sendRequest<SetConfigOptionResult>("session/set_config_option", { sessionId, configId, value });
    return this.v2 ? { ...result, configOptions: configOptionsV1(result.configOptions) } : result;
  }

  /** A prompt; sent while a turn runs it is queued, or with `steer` joins that turn (SPEC §3.37).
   * Answered at the turn's end on both versions (v2 answers at insertion: its end is waited for). */
  prompt(sessionId: string, prompt: ContentBlock[], steer = false): Promise<PromptResult> {
    const params: PromptParams = steer ? { sessionId, prompt, _meta: { tether: { steer: true } } } : { sessionId, prompt };
    return this.v2 ? this.v2.prompt(params) : this.connection.sendRequest("session/prompt", params);
  }

  /** Stops one running tool call; its turn goes on (SPEC §12.4). */
  async cancelToolCall(sessionId: string, toolCallId: string): Promise<void> {
    await this.connection.sendRequest(this.v2 ? "tool_call/cancel" : "_tether/toolCall/cancel", { sessionId, toolCallId });
  }

  /** Withdraws a queued prompt: its `session/prompt` answers `cancelled`. */
  async dequeue(sessionId: string, queueId: string): Promise<void> {
    await this.connection.sendRequest("_tether/session/dequeue", { sessionId, queueId });
  }

  /** The session's snapshot (SPEC §3.28): where its messages and turns are stored. */
  dump(sessionId: string): Promise<Snapshot> {
    // without `path` the answer is the snapshot itself (with it, the file written)
    return this.connection.sendRequest("_tether/session/dump", { sessionId }) as Promise<Snapshot>;
  }

  /** Takes the session back (SPEC §3.40); `dryRun` only says what it would do. */
  rewind(params: RewindParams): Promise<RewindResult> {
    return this.connection.sendRequest("_tether/session/rewind", params);
  }

  /** The files a turn (or the whole session) changed, with diffs. */
  changes(sessionId: string, turn?: number): Promise<ChangesResult> {
    return this.connection.sendRequest("_tether/session/changes", turn === undefined ? { sessionId } : { sessionId, turn });
  }

  /** The approval rules of the session's workspace, each with what it covers (SPEC §3.18). */
  rules(sessionId: string): Promise<RulesResult> {
    return this.connection.sendRequest("_tether/rules/list", { sessionId });
  }

  /** Removes a rule the user stored; built-in and config rules cannot be removed. */
  async removeRule(sessionId: string, id: number): Promise<void> {
    await this.connection.sendRequest("_tether/rules/remove", { sessionId, id });
  }

  /** Cancels the session's running turn; its prompt then answers `cancelled`. */
  async cancel(sessionId: string): Promise<void> {
    await this.notify("session/cancel", { sessionId });
  }

  report(sessionId: string, turnId: string): Promise<ReportResult> {
    return this.connection.sendRequest("_tether/session/report", { sessionId, turnId });
  }

  async didOpen(uri: string, languageId: string, version: number, text: string): Promise<void> {
    await this.notify("textDocument/didOpen", { textDocument: { uri, languageId, version, text } });
  }

  async didChange(uri: string, version: number, contentChanges: TextDocumentContentChangeEvent[]): Promise<void> {
    await this.notify("textDocument/didChange", { textDocument: { uri, version }, contentChanges });
  }

  async didClose(uri: string): Promise<void> {
    await this.notify("textDocument/didClose", { textDocument: { uri } });
  }

  /** LSP's orderly end: `shutdown` (cancels running turns), then `exit`. */
  async shutdown(): Promise<void> {
    await this.connection.sendRequest("shutdown");
    await this.notify("exit");
  }

  dispose(): void {
    for (const source of this.incoming.values()) source.cancel();
    this.incoming.clear();
    this.connection.dispose();
    this.markClosed();
  }

  private async notify(method: string, params?: object): Promise<void> {
    if (this.isClosed) return;
    try {
      if (params === undefined) await this.connection.sendNotification(method);
      else await this.connection.sendNotification(method, params);
    } catch {
      // the daemon went away; the supervisor reports and restarts it
    }
  }

  private markClosed(): void {
    if (this.isClosed) return;
    this.isClosed = true;
    this.v2?.closed(new Error("the connection to the Tether daemon closed"));
    this.closed.fire();
  }

  private onSessionUpdate(params: SessionNotification): void {
    this.wire.fire(params);
    if (this.v2) this.v2.update(params);
    else this.updates.fire(params);
  }

  private async onPermission(params: RequestPermissionParams, token: CancellationToken): Promise<RequestPermissionResult> {
    const id = this.incomingIds.get(token) ?? "";
    const withdrawn = new AbortController();
    if (token.isCancellationRequested) withdrawn.abort();
    const subscription = token.onCancellationRequested(() => withdrawn.abort());
    try {
      if (!this.permissionHandler) return permissionResult({ optionId: "reject_once" });
      const request = this.v2 ? permissionParamsV1(params as unknown as Record<string, unknown>, this.readText) : params;
      return permissionResult(await this.permissionHandler(promptFromRequest(id, request), withdrawn.signal));
    } finally {
      subscription.dispose();
      this.incoming.delete(id);
    }
  }

  private async onApplyEdit(params: ApplyWorkspaceEditParams): Promise<ApplyWorkspaceEditResult> {
    if (!this.applyEditHandler) return { applied: false, failureReason: "no editor is attached to apply edits" };
    try {
      return await this.applyEditHandler(params);
    } catch (err) {
      return { applied: false, failureReason: err instanceof Error ? err.message : String(err) };
    }
  }
}
