/**
 * An ACP v2 connection as the client uses it (SPEC §12): a prompt answered at insertion is
 * awaited to its turn's end (`state_update` idle), a steer answered in v1's shape is shown
 * where it landed, a session is reopened with `session/resume` and a replay when the daemon
 * has no `session/load` on v2, and each update is read into v1's shape (`acp_v2.ts`).
 * No `vscode` import.
 */
import { ErrorCodes, ResponseError, type MessageConnection } from "vscode-jsonrpc/node";
import { AcpV2Reader, configOptionsV1, turnIdOf, type TextReader, type TurnOutcome } from "./acp_v2";
import type { LoadSessionResult, PromptParams, PromptResult, SessionNotification } from "../protocol/schema";

/** JSON-RPC's "request cancelled": a v2 prompt withdrawn before its turn began */
const REQUEST_CANCELLED = -32800;

type Fire = (notification: SessionNotification) => void;

export class AcpV2Session {
  private readonly reader: AcpV2Reader;
  private readonly ends = new PromptEnds();
  /** the daemon answered `session/load` -32601 (SPEC §12.9): reopen with `session/resume` */
  private resumeReplays = false;

  /** `fire` hands the layers above an update in v1's shape */
  constructor(private readonly connection: MessageConnection, readText: TextReader, private readonly fire: Fire) {
    this.reader = new AcpV2Reader(readText);
  }

  /** A v2 update, read into v1's shape; a turn's end is its prompt's answer, or v1's
   * `turnEnded` when no prompt of this window waits for it (SPEC §4.4). */
  update(params: SessionNotification): void {
    const update = params.update as unknown as Record<string, unknown>;
    const reading = this.reader.read(params.sessionId, update);
    if (update.sessionUpdate === "user_message" && reading.kind === "none") this.ends.began(params.sessionId, update.messageId);
    if (reading.kind === "update") {
      this.fire({ ...params, update: reading.update as unknown as SessionNotification["update"] });
    } else if (reading.kind === "ended" && !this.ends.ended(params.sessionId, reading.outcome)) {
      const turnEnded = { stopReason: reading.outcome.stopReason };
      const ended = { sessionUpdate: "session_info_update", _meta: { tether: { turnEnded } } };
      this.fire({ sessionId: params.sessionId, update: ended as unknown as SessionNotification["update"] });
    }
  }

  /** A prompt, answered (as on v1) at its turn's end. */
  async prompt(params: PromptParams): Promise<PromptResult> {
    let answer: { messageId?: unknown };
    this.ends.sent(params.sessionId, 1);
    try {
      answer = await this.connection.sendRequest("session/prompt", params);
    } catch (err) {
      // withdrawn before its turn began (dequeued): v1 answers such a prompt `cancelled`
      if (err instanceof ResponseError && err.code === REQUEST_CANCELLED) return { stopReason: "cancelled" };
      throw err;
    } finally {
      this.ends.sent(params.sessionId, -1);
    }
    // a steer that landed in the running turn is answered once it landed (SPEC §12.7)
    const meta = (answer as PromptResult)._meta;
    if (typeof answer.messageId !== "string" || meta?.tether?.steer?.landed) {
      const stopReason = (answer as PromptResult).stopReason ?? "end_turn";
      return this.steered(params, { stopReason, _meta: meta });
    }
    const outcome = await this.ends.wait(answer.messageId);
    if (outcome.error) throw new ResponseError(outcome.error.code, outcome.error.message, outcome.error.data);
    const turnId = turnIdOf(answer.messageId);
    return { stopReason: outcome.stopReason as PromptResult["stopReason"], _meta: { tether: { turnId } } };
  }

  /** A steer that landed is shown where it landed, as v1's `user_message_chunk` (the live
   * `user_message` the v2 daemon sends for it is a prompt this window sent: not shown twice). */
  private steered(params: PromptParams, result: PromptResult): PromptResult {
    const steer = result._meta?.tether?.steer;
    if (!steer?.landed) return result;
    const tether = { steered: true, turnId: steer.turnId, afterStep: steer.step, messageSeq: steer.messageSeq };
    for (const content of params.prompt) {
      const update = { sessionUpdate: "user_message_chunk", content, _meta: { tether } };
      this.fire({ sessionId: params.sessionId, update: update as unknown as SessionNotification["update"] });
    }
    return result;
  }

  /** The Preview has no `session/load`: `session/resume` replays from the start and says
   * `replay_complete` (SPEC §12.9). A daemon that still serves `session/load` on v2 (and
   * does not replay on resume) is asked that first. */
  async loadSession(sessionId: string, cwd: string): Promise<LoadSessionResult> {
    if (!this.resumeReplays) {
      try {
        const loaded = await this.connection.sendRequest<LoadSessionResult>("session/load", { sessionId, cwd, mcpServers: [] });
        return { ...loaded, configOptions: configOptionsV1(loaded.configOptions) };
      } catch (err) {
        if (!(err instanceof ResponseError && err.code === ErrorCodes.MethodNotFound)) throw err;
        this.resumeReplays = true;
      }
    }
    this.reader.startReplay(sessionId);
    try {
      const resumed = await this.connection.sendRequest<LoadSessionResult>("session/resume", {
        sessionId, cwd, mcpServers: [], replayFrom: { type: "start" },
      });
      return { ...resumed, configOptions: configOptionsV1(resumed.configOptions) };
    } finally {
      this.reader.endReplay(sessionId);
    }
  }

  /** The connection closed: no turn end will come. */
  closed(err: Error): void {
    this.ends.failAll(err);
  }
}

interface Waiter {
  resolve(outcome: TurnOutcome): void;
  reject(err: Error): void;
}

/**
 * Matches v2 turn ends (`state_update` idle) to this window's prompts: a v2 prompt is
 * answered when its turn begins (after the turn's `user_message`), and ends with the
 * session's next idle. An end no prompt of this window waits for is v1's
 * `turnEnded` (the client shows it as such).
 */
export class PromptEnds {
  /** the running turn of each session, from its `user_message` */
  private readonly running = new Map<string, string>();
  private readonly waiting = new Map<string, Waiter>();
  /** turns that ended before their prompt's answer was read */
  private readonly early = new Map<string, TurnOutcome>();
  /** prompts sent and not answered yet, per session */
  private readonly asking = new Map<string, number>();

  began(sessionId: string, messageId: unknown): void {
    if (typeof messageId === "string") this.running.set(sessionId, turnIdOf(messageId));
  }

  sent(sessionId: string, delta: 1 | -1): void {
    this.asking.set(sessionId, (this.asking.get(sessionId) ?? 0) + delta);
  }

  /** A turn of `sessionId` ended; false when no prompt of this window waits for it. */
  ended(sessionId: string, outcome: TurnOutcome): boolean {
    const turnId = this.running.get(sessionId);
    this.running.delete(sessionId);
    if (turnId === undefined) return false;
    const waiter = this.waiting.get(turnId);
    if (waiter) {
      this.waiting.delete(turnId);
      waiter.resolve(outcome);
      return true;
    }
    if (!this.asking.get(sessionId)) return false;
    this.early.set(turnId, outcome);
    return true;
  }

  /** The end of the turn whose prompt was answered `messageId`. */
  wait(messageId: string): Promise<TurnOutcome> {
    const turnId = turnIdOf(messageId);
    const done = this.early.get(turnId);
    this.early.delete(turnId);
    if (done) return Promise.resolve(done);
    return new Promise((resolve, reject) => this.waiting.set(turnId, { resolve, reject }));
  }

  /** The connection closed: no turn end will come. */
  failAll(err: Error): void {
    for (const waiter of this.waiting.values()) waiter.reject(err);
    this.waiting.clear();
  }
}
