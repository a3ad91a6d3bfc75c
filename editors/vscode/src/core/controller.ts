/**
 * One workspace's chat: drives the protocol client, folds what comes back into the
 * state (reducer), and speaks to the chat view in `HostMessage`s. The editor-specific
 * parts (applying edits, showing approvals outside the view, errors) go through
 * `ChatHost`. No `vscode` import: the tests drive it against the real daemon.
 */
import type { HostMessage, PermissionPrompt, SessionSummary, ViewMessage } from "../shared/messages";
import * as checkpoints from "./checkpoints";
import type { TetherClient } from "./client";
import { Emitter, type Disposable } from "./events";
import type { PermissionDecision } from "./permissions";
import { initialState, reduce, statusOf, type ChatAction, type ChatState } from "./state";
import type {
  ApplyWorkspaceEditParams,
  ApplyWorkspaceEditResult,
  PromptResult,
  QueuedPrompt,
  RewindRestore,
  Rule,
  SessionClearedParams,
  SessionConfigOption,
  SessionInfo,
} from "../protocol/schema";

export interface ChatHost {
  /** `workspace/applyEdit` from the daemon (SPEC §3.26) */
  applyEdit(params: ApplyWorkspaceEditParams): Promise<ApplyWorkspaceEditResult>;
  /** an approval arrived (for any session of the workspace) */
  permissionAsked?(prompt: PermissionPrompt): void;
  /** an approval was answered or withdrawn */
  permissionClosed?(prompt: PermissionPrompt): void;
  /** something failed that the user should hear about (`error` is what was thrown) */
  reportError?(message: string, error: unknown): void;
}

export interface ChatControllerOptions {
  /** the workspace folder (absolute path), the sessions' `cwd` */
  cwd: string;
  /** the running daemon's client, started on demand */
  connect: () => Promise<TetherClient>;
  host: ChatHost;
  /** the mode shown before the daemon tells (the `tether.defaultMode` setting) */
  defaultMode?: string;
}

/**
 * Editor text for the next prompt ("Ask Tether about selection"). The chat view shows it
 * as a chip and puts its text into the prompt it sends (the user may remove it first), so
 * the text names its file and lines itself.
 */
export interface PromptContext {
  label: string;
  text: string;
}

const CHUNK_KINDS = new Set(["agent_message_chunk", "agent_thought_chunk"]);

/** A prompt of the shown session: running, steered into the running turn, or queued. */
interface LineEntry {
  text: string;
  steer: boolean;
}

/** The shown session's prompts in flight, in the daemon's order (SPEC §3.37): the running
 * turn's, then a steered message that did not land runs next, then the queued ones. */
interface PromptLine {
  sessionId: string;
  running?: LineEntry;
  steers: LineEntry[];
  waiting: LineEntry[];
}

function drop(list: LineEntry[], entry: LineEntry): void {
  const i = list.indexOf(entry);
  if (i >= 0) list.splice(i, 1);
}

export class ChatController implements Disposable {
  private current: ChatState;
  private client?: TetherClient;
  private clientSubscriptions: Disposable[] = [];
  /** what the view was sent for the current session, replayed when the view reloads */
  private transcript: HostMessage[] = [];
  private readonly answers = new Map<string, (decision: PermissionDecision) => void>();
  private contexts: PromptContext[] = [];
  private lastStatus;
  /** sessions whose `session/prompt` is unanswered */
  private readonly inFlight = new Set<string>();
  /** a prompt is creating the session it will run in */
  private creating = false;
  /** each session's prompts in flight (a session left running goes on while another is shown) */
  private readonly lines = new Map<string, PromptLine>();
  /** the shown session's queue (`_meta.tether.queue`), for a reloaded view */
  private queue: QueuedPrompt[] = [];
  /** rewinds the view was asked to confirm, by token */
  private readonly rewinds = new Map<string, checkpoints.PendingRewind>();
  private tokens = 0;
  private readonly messages = new Emitter<HostMessage>();
  private readonly changes = new Emitter<ChatState>();

  /** every message for the chat view */
  readonly onMessage = this.messages.event;
  /** every state change */
  readonly onChange = this.changes.event;

  constructor(private readonly options: ChatControllerOptions) {
    this.current = initialState(options.defaultMode ?? "ask");
    this.lastStatus = statusOf(this.current);
  }

  get state(): ChatState {
    return this.current;
  }

  get cwd(): string {
    return this.options.cwd;
  }

  /** Connects to a (new) daemon: after a restart the current session is loaded again. */
  attach(client: TetherClient): void {
    if (client === this.client) return;
    const reconnect = this.client !== undefined;
    for (const s of this.clientSubscriptions) s.dispose();
    this.client = client;
    this.clientSubscriptions = [
      client.onUpdate((n) => this.onUpdate(n.sessionId, n.update as unknown as Record<string, unknown>)),
      client.onCleared((p) => this.onCleared(p)),
    ];
    client.setPermissionHandler((prompt, withdrawn) => this.ask(prompt, withdrawn));
    client.setApplyEditHandler((params) => this.options.host.applyEdit(params));
    // prompts of the old daemon died with it (a restarted daemon asks again after session/load)
    for (const prompt of [...this.current.pending]) this.closePermission(prompt.requestId);
    if (reconnect && this.current.sessionId) void this.loadSession(this.current.sessionId);
  }

  /** Starts the daemon if needed and fetches the session list. */
  async start(): Promise<void> {
    await this.guard(async () => {
      await this.options.connect();
      await this.refreshSessions();
    });
  }

  /** What a freshly loaded chat view needs to show the current state. */
  snapshot(): HostMessage[] {
    const s = this.current;
    const out: HostMessage[] = [
      { type: "init", sessions: s.sessions, sessionId: s.sessionId, modes: s.modes, modeId: s.modeId, status: statusOf(s) },
    ];
    if (s.sessionId) {
      out.push({ type: "session", sessionId: s.sessionId, title: s.title, modeId: s.modeId });
      out.push({ type: "options", options: s.options });
      out.push(...this.transcript);
      for (const prompt of s.pending) if (prompt.sessionId === s.sessionId) out.push({ type: "permission", prompt });
    }
    for (const c of this.contexts) out.push({ type: "context", label: c.label, text: c.text });
    if (this.queue.length) out.push({ type: "queue", queue: this.queue });
    return out;
  }

  /** Handles what the chat view asks for; false for messages the editor adapter handles. */
  handleViewMessage(message: ViewMessage): boolean {
    switch (message.type) {
      case "prompt":
        void this.prompt(message.text, message.steer === true);
        return true;
      case "dequeue":
        void this.dequeue(message.queueId);
        return true;
      case "rewind":
        void this.rewindTo(message.texts, message.index, message.restore);
        return true;
      case "rewindConfirm":
        void this.confirmRewind(message.token, message.force);
        return true;
      case "rewindCancel":
        this.rewinds.delete(message.token);
        return true;
      case "changes":
        void this.showChanges(message.texts, message.index);
        return true;
      case "cancel":
        void this.cancel();
        return true;
      case "cancelToolCall":
        void this.cancelToolCall(message.toolCallId);
        return true;
      case "permission":
        this.answerPermission(message.requestId, { optionId: message.optionId, acceptedHunks: message.acceptedHunks });
        return true;
      case "setMode":
        void this.setMode(message.modeId);
        return true;
      case "setOption":
        void this.setOption(message.configId, message.value);
        return true;
      case "loadSession":
        void this.loadSession(message.sessionId);
        return true;
      case "newSession":
        void this.newSession();
        return true;
      default:
        return false;
    }
  }

  async refreshSessions(): Promise<SessionSummary[]> {
    const client = await this.options.connect();
    const sessions = (await client.listAllSessions(this.options.cwd)).map(summary);
    this.dispatch({ type: "sessions", sessions });
    this.post({ type: "sessions", sessions });
    return sessions;
  }

  /** The approval rules of this workspace (SPEC §3.18); a session is started if none is open. */
  async rules(): Promise<Rule[]> {
    const client = await this.options.connect();
    const sessionId = this.state.sessionId ?? (await this.newSession());
    if (!sessionId) return [];
    return (await client.rules(sessionId)).rules;
  }

  /** Removes a rule the user stored (SPEC §3.19): what it allowed is asked again. */
  async removeRule(id: number): Promise<void> {
    const client = await this.options.connect();
    const sessionId = this.state.sessionId;
    if (sessionId) await client.removeRule(sessionId, id);
  }

  /** Starts a new session and shows it (empty). */
  async newSession(): Promise<string | undefined> {
    return this.guard(async () => {
      const client = await this.options.connect();
      const id = await this.createSession(client);
      void this.refreshSessions().catch(() => undefined);
      return id;
    });
  }

  /** Shows a stored session: the daemon replays it (SPEC §3.6, §4.5). */
  async loadSession(sessionId: string): Promise<boolean> {
    const ok = await this.guard(async () => {
      const client = await this.options.connect();
      const known = this.current.sessions.find((s) => s.sessionId === sessionId);
      const title = known?.title ?? (sessionId === this.current.sessionId ? this.current.title : null);
      const waiting = this.current.pending.filter((p) => p.sessionId === sessionId);
      const running = this.inFlight.has(sessionId) || waiting.length > 0;
      this.dispatch({ type: "sessionOpened", sessionId, title, running });
      this.transcript = [];
      this.post({ type: "session", sessionId, title, modeId: this.current.modeId });
      const result = await client.loadSession(sessionId, this.options.cwd);
      if (this.current.sessionId !== sessionId) return true;
      this.setOptions(result.configOptions ?? []);
      const modeId = result.modes?.currentModeId;
      if (modeId) {
        this.dispatch({ type: "modeChanged", modeId });
        this.post({ type: "mode", modeId });
      }
      // approvals of a turn still running in this daemon are still open: show them again
      for (const prompt of waiting) if (this.answers.has(prompt.requestId)) this.post({ type: "permission", prompt });
      return true;
    });
    return ok === true;
  }

  /** Sends a prompt (creating the session first if there is none) and waits for the turn's end.
   * While a turn of the shown session runs, the daemon queues it (its turn is shown when it
   * starts), or with `steer` it joins the running turn (shown where it landed). */
  async prompt(text: string, steer = false): Promise<PromptResult | undefined> {
    const shown = this.current.sessionId;
    const line = shown === null ? undefined : this.lines.get(shown);
    if (shown !== null && line?.running && !this.creating) {
      const entry: LineEntry = { text, steer };
      (steer ? line.steers : line.waiting).push(entry);
      this.contexts = [];
      return this.send(await this.options.connect(), shown, entry);
    }
    if (this.current.running || this.creating || (shown !== null && this.inFlight.has(shown))) {
      this.post({ type: "error", message: "A turn is still running: stop it or wait for its answer." });
      return undefined;
    }
    // marked before the first await, so a second prompt right after this one is refused
    if (shown === null) this.creating = true;
    else this.inFlight.add(shown);
    try {
      return await this.runTurn(text);
    } finally {
      this.creating = false;
      if (shown !== null) this.inFlight.delete(shown);
    }
  }

  private async runTurn(text: string): Promise<PromptResult | undefined> {
    let client: TetherClient;
    let sessionId: string;
    try {
      client = await this.options.connect();
      sessionId = this.current.sessionId ?? (await this.createSession(client));
    } catch (err) {
      this.fail(err);
      return undefined;
    }
    this.contexts = []; // the view folded the ones the user kept into `text`
    this.inFlight.add(sessionId);
    this.creating = false;
    const entry: LineEntry = { text, steer: false };
    this.lines.set(sessionId, { sessionId, running: entry, steers: [], waiting: [] });
    this.begin(entry);
    try {
      return await this.send(client, sessionId, entry);
    } finally {
      this.inFlight.delete(sessionId);
    }
  }

  /** A prompt's turn starts: the user's message in the chat. */
  private begin(entry: LineEntry): void {
    this.dispatch({ type: "prompted", text: entry.text });
    this.post({ type: "userMessage", text: entry.text });
  }

  private async send(client: TetherClient, sessionId: string, entry: LineEntry): Promise<PromptResult | undefined> {
    try {
      const result = await client.prompt(sessionId, [{ type: "text", text: entry.text }], entry.steer);
      await this.answered(client, sessionId, entry, result.stopReason, result);
      void this.refreshSessions().catch(() => undefined);
      return result;
    } catch (err) {
      if (this.current.sessionId === sessionId) {
        this.fail(
          client.closedAlready
            ? new Error("The Tether daemon stopped during this turn; it is restarted and the session is loaded again.")
            : err,
        );
      }
      await this.answered(client, sessionId, entry, "error");
      return undefined;
    }
  }

  /** A prompt's answer: the running turn ended (the next one starts at once, as in the
   * daemon), or a waiting prompt was answered (withdrawn, a steer that landed, refused). */
  private async answered(
    client: TetherClient, sessionId: string, entry: LineEntry, stopReason: string, result?: PromptResult,
  ): Promise<void> {
    const line = this.lines.get(sessionId);
    if (!line) return;
    if (line.running !== entry) {
      drop(line.steers, entry);
      drop(line.waiting, entry);
      return;
    }
    const next = line.steers.shift() ?? line.waiting.shift();
    line.running = next;
    if (next) {
      // the next turn's updates follow this answer: end this one and show the next first
      if (this.current.sessionId === sessionId) {
        this.endTurn(stopReason);
        this.begin(next);
      }
      return;
    }
    this.lines.delete(sessionId);
    const usage = result ? await this.turnUsage(client, sessionId, result) : undefined;
    if (this.current.sessionId === sessionId) this.endTurn(stopReason, usage);
  }

  /** Withdraws a queued prompt (its turn never runs). */
  async dequeue(queueId: string): Promise<void> {
    await this.guard(async () => {
      const sessionId = this.current.sessionId;
      if (!sessionId) return;
      await (await this.options.connect()).dequeue(sessionId, queueId);
    });
  }

  /** "Rewind to here": a dry run of rewinding to just before the user message `index` of
   * `texts` (every user message the view shows), for the view to confirm. */
  async rewindTo(texts: string[], index: number, restore: RewindRestore): Promise<void> {
    await this.guard(async () => {
      const sessionId = this.current.sessionId;
      if (!sessionId) throw new Error("There is no session to rewind.");
      const client = await this.options.connect();
      const place = await checkpoints.locate(client, sessionId, texts, index);
      const token = `rewind-${++this.tokens}`;
      const preview = await checkpoints.preview(client, sessionId, place, restore, texts[index] ?? "", token);
      this.rewinds.set(token, { sessionId, messageSeq: place.seq, restore });
      this.post({ type: "rewindPreview", preview });
    });
  }

  /** The rewind the view confirmed; the chat then shows the conversation as it now stands. */
  async confirmRewind(token: string, force: boolean): Promise<boolean> {
    const pending = this.rewinds.get(token);
    if (!pending) return false;
    this.rewinds.delete(token);
    const ok = await this.guard(async () => {
      const client = await this.options.connect();
      const result = await checkpoints.rewind(client, pending, force);
      if (result.done && pending.restore !== "files" && this.current.sessionId === pending.sessionId) {
        await this.loadSession(pending.sessionId);
      }
      this.post({ type: "notice", text: checkpoints.rewindNotice(result, pending.restore) });
      return result.done;
    });
    return ok === true;
  }

  /** The files changed by the turn of the user message `index` of `texts`, with diffs. */
  async showChanges(texts: string[], index: number): Promise<void> {
    await this.guard(async () => {
      const sessionId = this.current.sessionId;
      if (!sessionId) return;
      const client = await this.options.connect();
      const place = await checkpoints.locate(client, sessionId, texts, index);
      const result = await checkpoints.changes(client, sessionId, place.turn);
      this.post({ type: "changes", turn: place.turn ?? null, files: result.files });
    });
  }

  /** Stops the running turn; its prompt then answers `cancelled` (SPEC §5.2). */
  async cancel(): Promise<void> {
    const sessionId = this.current.sessionId;
    if (!sessionId || !this.client) return;
    await this.client.cancel(sessionId);
  }

  /** Stops one running tool call (a command, a sub-agent); the turn goes on (SPEC §12.4). */
  async cancelToolCall(toolCallId: string): Promise<void> {
    await this.guard(async () => {
      const sessionId = this.current.sessionId;
      if (sessionId) await (await this.options.connect()).cancelToolCall(sessionId, toolCallId);
    });
  }

  async setMode(modeId: string): Promise<void> {
    await this.guard(async () => {
      const sessionId = this.current.sessionId;
      if (sessionId) {
        const client = await this.options.connect();
        const options = await client.setMode(sessionId, modeId);
        if (options && this.current.sessionId === sessionId) this.setOptions(options); // v2: the mode is an option
      }
      // without a session yet, the mode is applied when the session is created
      this.dispatch({ type: "modeChanged", modeId });
      this.post({ type: "mode", modeId });
    });
  }

  /** Sets a session config option (the model, the reasoning effort; SPEC §3.36): it applies
   * from the session's next turn. Without a session there is no option to set yet. */
  async setOption(configId: string, value: string): Promise<boolean> {
    const ok = await this.guard(async () => {
      const sessionId = this.current.sessionId;
      if (!sessionId) throw new Error("Start a session first: its models are listed when it opens.");
      const client = await this.options.connect();
      const result = await client.setConfigOption(sessionId, configId, value);
      if (this.current.sessionId === sessionId) this.setOptions(result.configOptions);
      return true;
    });
    return ok === true;
  }

  /** The current session's config option `id`, if it has one. */
  option(id: string): SessionConfigOption | undefined {
    return this.current.options.find((o) => o.id === id);
  }

  /** Answers an approval (from the chat card, the diff editor or a notification). */
  answerPermission(requestId: string, decision: PermissionDecision): boolean {
    const resolve = this.answers.get(requestId);
    if (!resolve) return false;
    resolve(decision);
    this.closePermission(requestId);
    return true;
  }

  /** Offers editor text for the next prompt: the view shows it and sends it with the prompt. */
  addContext(context: PromptContext): void {
    this.contexts.push(context);
    this.post({ type: "context", label: context.label, text: context.text });
  }

  dispose(): void {
    for (const s of this.clientSubscriptions) s.dispose();
    for (const requestId of [...this.answers.keys()]) this.answerPermission(requestId, "cancelled");
    this.messages.dispose();
    this.changes.dispose();
  }

  private async createSession(client: TetherClient): Promise<string> {
    const wanted = this.current.modeId;
    const result = await client.newSession(this.options.cwd);
    this.dispatch({
      type: "sessionOpened", sessionId: result.sessionId, title: null, modes: result.modes, options: result.configOptions,
    });
    this.transcript = [];
    if (wanted && wanted !== this.current.modeId && this.current.modes.some((m) => m.id === wanted)) {
      const options = await client.setMode(result.sessionId, wanted);
      if (options) this.dispatch({ type: "optionsChanged", options });
      this.dispatch({ type: "modeChanged", modeId: wanted });
    }
    this.post({ type: "session", sessionId: result.sessionId, title: null, modeId: this.current.modeId });
    this.post({ type: "options", options: this.current.options });
    return result.sessionId;
  }

  private setOptions(options: SessionConfigOption[]): void {
    this.dispatch({ type: "optionsChanged", options });
    this.post({ type: "options", options });
  }

  /** `/clear` in this view: the daemon made a new session (same mode, model, reasoning);
   * show it, empty. The old one stays in the session list. */
  private onCleared(params: SessionClearedParams): void {
    if (params.sessionId !== this.current.sessionId) return;
    this.dispatch({ type: "sessionOpened", sessionId: params.newSessionId, title: null, options: params.configOptions });
    this.post({ type: "session", sessionId: params.newSessionId, title: null, modeId: this.current.modeId });
    this.post({ type: "options", options: this.current.options });
    void this.refreshSessions().catch(() => undefined);
  }

  private onUpdate(sessionId: string, update: Record<string, unknown>): void {
    this.dispatch({ type: "update", sessionId, update });
    if (sessionId !== this.current.sessionId) return;
    this.post({ type: "update", sessionId, update });
    const queue = (update._meta as { tether?: { queue?: QueuedPrompt[] } } | undefined)?.tether?.queue;
    if (update.sessionUpdate === "session_info_update" && Array.isArray(queue)) {
      this.queue = queue;
      this.post({ type: "queue", queue });
    }
    const ended = (update._meta as { tether?: { turnEnded?: { stopReason?: string } } } | undefined)?.tether?.turnEnded;
    if (update.sessionUpdate === "session_info_update" && ended) {
      // a resumed turn has no prompt request: this update is its end (SPEC §4.4)
      this.post({ type: "turnEnded", stopReason: String(ended.stopReason ?? "end_turn") });
    }
  }

  private ask(prompt: PermissionPrompt, withdrawn: AbortSignal): Promise<PermissionDecision> {
    return new Promise<PermissionDecision>((resolve) => {
      this.answers.set(prompt.requestId, resolve);
      this.dispatch({ type: "permissionAsked", prompt });
      if (prompt.sessionId === this.current.sessionId) this.post({ type: "permission", prompt });
      this.options.host.permissionAsked?.(prompt);
      const onWithdrawn = () => {
        if (!this.answers.has(prompt.requestId)) return;
        this.closePermission(prompt.requestId);
        resolve("cancelled"); // ignored by the daemon: it withdrew the request
      };
      if (withdrawn.aborted) onWithdrawn();
      else withdrawn.addEventListener("abort", onWithdrawn, { once: true });
    });
  }

  private closePermission(requestId: string): void {
    this.answers.delete(requestId);
    const prompt = this.current.pending.find((p) => p.requestId === requestId);
    if (!prompt) return;
    this.dispatch({ type: "permissionClosed", requestId });
    if (prompt.sessionId === this.current.sessionId) this.post({ type: "permissionClosed", requestId });
    this.options.host.permissionClosed?.(prompt);
  }

  private endTurn(stopReason: string, usage?: { inputTokens?: number; outputTokens?: number }): void {
    this.dispatch({ type: "turnEnded", stopReason, usage });
    this.post(usage ? { type: "turnEnded", stopReason, usage } : { type: "turnEnded", stopReason });
  }

  private async turnUsage(client: TetherClient, sessionId: string, result: PromptResult) {
    const turnId = (result._meta as { tether?: { turnId?: string } } | null | undefined)?.tether?.turnId;
    if (!turnId) return undefined;
    try {
      const report = (await client.report(sessionId, turnId)).reports[0];
      if (!report) return undefined;
      return { inputTokens: report.totalUsage.inputTokens, outputTokens: report.totalUsage.outputTokens };
    } catch {
      return undefined; // usage is a nicety; the turn itself ended fine
    }
  }

  private async guard<T>(work: () => Promise<T>): Promise<T | undefined> {
    try {
      return await work();
    } catch (err) {
      this.fail(err);
      return undefined;
    }
  }

  private fail(err: unknown): void {
    const message = err instanceof Error ? err.message : String(err);
    this.post({ type: "error", message });
    this.options.host.reportError?.(message, err);
  }

  private dispatch(action: ChatAction): void {
    this.current = reduce(this.current, action);
    this.changes.fire(this.current);
    const status = statusOf(this.current);
    if (status !== this.lastStatus) {
      this.lastStatus = status;
      this.post({ type: "status", status });
    }
  }

  private post(message: HostMessage): void {
    this.record(message);
    this.messages.fire(message);
  }

  /** Keeps the current session's transcript, merging consecutive text chunks. */
  private record(message: HostMessage): void {
    if (message.type === "session") {
      this.transcript = [];
      this.queue = [];
      return;
    }
    if (message.type === "update" && CHUNK_KINDS.has(String(message.update.sessionUpdate))) {
      const last = this.transcript[this.transcript.length - 1];
      if (
        last?.type === "update" &&
        last.update.sessionUpdate === message.update.sessionUpdate &&
        JSON.stringify(last.update._meta ?? null) === JSON.stringify(message.update._meta ?? null)
      ) {
        const text = chunkText(last.update) + chunkText(message.update);
        const content = { ...(last.update.content as Record<string, unknown>), text };
        this.transcript[this.transcript.length - 1] = { ...last, update: { ...last.update, content } };
        return;
      }
    }
    if (["userMessage", "update", "turnEnded", "error", "notice"].includes(message.type)) this.transcript.push(message);
  }
}

function chunkText(update: Record<string, unknown>): string {
  const text = (update.content as { text?: unknown } | undefined)?.text;
  return typeof text === "string" ? text : "";
}

function summary(info: SessionInfo): SessionSummary {
  return { sessionId: info.sessionId, ...(info.title === undefined ? {} : { title: info.title }), updatedAt: info.updatedAt ?? null, cwd: info.cwd };
}
