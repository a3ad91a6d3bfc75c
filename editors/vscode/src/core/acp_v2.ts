/**
 * ACP v2 (Preview) on the extension's connection, read into the v1 shapes the chat state,
 * controller and view already consume (SPEC §12.2's table, read right to left), so the UI
 * is written once: config options renamed back (`configId` -> `id`), the first
 * `tool_call_update` of a call as `tool_call`, diffs (`changes` + git patch) as whole texts,
 * `plan_update` as `plan`, `notice` as a marked message chunk, typed command inputs as
 * hints, terminal chunks as v1's `_meta.terminal_output`, and the v2 permission request as
 * v1's; a call's `capabilities` are kept (v1 has none). v1 updates (what `session/load` replays) pass unchanged. No I/O but `readText`.
 */
import type { ContentBlock, RequestPermissionParams, SessionConfigOption } from "../protocol/schema";

export const ACP_V2 = 2;

type Json = Record<string, unknown>;

/** Reads a file's current text (the editor's buffer, else the disk); undefined if absent. */
export type TextReader = (path: string) => string | undefined;

/** A v1 name for each v2 name of a config option and its choices. */
const V1_OPTION_NAMES: Record<string, string> = { configId: "id", groupId: "group" };

function renamed(o: Json): Json {
  return Object.fromEntries(Object.entries(o).map(([k, v]) => [V1_OPTION_NAMES[k] ?? k, v]));
}

/** v2 config options (`configId`, `groupId`) under v1's names; v1 options are unchanged. */
export function configOptionsV1(options: unknown): SessionConfigOption[] {
  if (!Array.isArray(options)) return [];
  return options.map((option: Json) => {
    const out = renamed(option);
    if (Array.isArray(out.options)) out.options = (out.options as Json[]).map(renamed);
    return out as unknown as SessionConfigOption;
  });
}

/** A turn's id from its prompt's message id (`<turnId>.0`). */
export function turnIdOf(messageId: string): string {
  // `<turnId>.0` the prompt, `<turnId>.s<seq>` a message steered into it (SPEC §12.7)
  return messageId.replace(/\.(0|s\d+)$/, "");
}

/** A whole text as lines, each with its own line end (the last may have none). */
function linesOf(text: string): string[] {
  return text.match(/[^\n]*\n|[^\n]+$/g) ?? [];
}

/**
 * `patch` (a unified diff, as the daemon writes it) applied to `old`; undefined when the
 * patch does not fit the text (it changed since the daemon read it).
 */
export function applyPatch(old: string, patch: string): string | undefined {
  const source = linesOf(old);
  const out: string[] = [];
  let at = 0;
  let last: "old" | "new" | "both" | undefined;
  let inHunk = false; // the `diff --git`, `---` and `+++` headers come first
  for (const line of patch.split("\n")) {
    const hunk = /^@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@/.exec(line);
    if (hunk) {
      const start = Number(hunk[1]) - (hunk[2] === "0" ? 0 : 1);
      if (start < at || start > source.length) return undefined;
      out.push(...source.slice(at, start));
      at = start;
      inHunk = true;
    } else if (!inHunk || line === "") {
      continue;
    } else if (line.startsWith("\\")) {
      // "\ No newline at end of file": the line before it ends without one
      if (last !== "old" && out.length) out[out.length - 1] = out[out.length - 1].replace(/\n$/, "");
    } else if (line[0] === "+") {
      out.push(`${line.slice(1)}\n`);
      last = "new";
    } else {
      if (source[at]?.replace(/\n$/, "") !== line.slice(1)) return undefined;
      if (line[0] === " ") out.push(source[at]);
      last = line[0] === " " ? "both" : "old";
      at++;
    }
  }
  return [...out, ...source.slice(at)].join("");
}

/** v2's diff (`changes` + `patch`) as v1's whole texts, or the patch as text if it does not apply. */
export function diffV1(block: Json, readText: TextReader): Json {
  const change = (Array.isArray(block.changes) ? block.changes[0] : undefined) as Json | undefined;
  const patch = (block.patch as { text?: unknown } | undefined)?.text;
  if (!change || typeof change.path !== "string") return block;
  const path = change.path;
  const operation = change.operation;
  const oldText = operation === "add" ? undefined : readText(typeof change.oldPath === "string" ? change.oldPath : path);
  if (operation === "delete" && oldText !== undefined) return { type: "diff", path, oldText, newText: "" };
  const newText = typeof patch === "string" && (oldText !== undefined || operation === "add") ? applyPatch(oldText ?? "", patch) : undefined;
  if (newText !== undefined) return oldText === undefined ? { type: "diff", path, newText } : { type: "diff", path, oldText, newText };
  const text = typeof patch === "string" ? patch : `${String(operation)} ${path}`;
  return { type: "content", content: { type: "text", text } };
}

function contentV1(content: unknown, readText: TextReader): unknown {
  if (!Array.isArray(content)) return content;
  return content.map((item: Json) => (item?.type === "diff" && "changes" in item ? diffV1(item, readText) : item));
}

/** v2's `session/request_permission` params as v1's (`subject.toolCall` -> `toolCall`). */
export function permissionParamsV1(params: Json, readText: TextReader): RequestPermissionParams {
  if (params.toolCall) return params as unknown as RequestPermissionParams; // a v1 request
  const subject = params.subject as { toolCall?: Json; toolCallId?: string; command?: string } | undefined;
  const call: Json = { ...(subject?.toolCall ?? { toolCallId: subject?.toolCallId ?? "", title: params.title }) };
  call.title ??= params.title;
  call.content = contentV1(call.content ?? [], readText);
  return { sessionId: params.sessionId, toolCall: call, options: params.options, _meta: params._meta } as unknown as RequestPermissionParams;
}

function commandsV1(commands: unknown): unknown {
  if (!Array.isArray(commands)) return commands;
  return commands.map((c: Json) => {
    const { type: _type, input, ...rest } = c;
    void _type;
    const hint = (input as { hint?: unknown } | undefined)?.hint;
    return typeof hint === "string" ? { ...rest, input: { hint } } : rest;
  });
}

/** How a session's turn ended, as `state_update` idle says it. */
export interface TurnOutcome {
  stopReason: string;
  error?: { code: number; message: string; data?: unknown };
}

/** What a v2 update means for the client: its v1 form (if any), or a turn's end. */
export type Reading = { kind: "update"; update: Json } | { kind: "ended"; outcome: TurnOutcome } | { kind: "none" };

const NONE: Reading = { kind: "none" };

/**
 * The v1 reading of one connection's v2 updates. It keeps what an upsert needs: the tool
 * calls each session has shown (the first report creates the card), and the sessions
 * being replayed (`session/resume` until its answer: their prompts are shown).
 */
export class AcpV2Reader {
  private readonly calls = new Map<string, Set<string>>();
  private readonly replaying = new Set<string>();

  constructor(private readonly readText: TextReader) {}

  startReplay(sessionId: string): void {
    this.replaying.add(sessionId);
    this.calls.delete(sessionId);
  }

  endReplay(sessionId: string): void {
    this.replaying.delete(sessionId);
  }

  read(sessionId: string, update: Json): Reading {
    switch (update.sessionUpdate) {
      case "state_update":
        // a replay ends with the session's state, which is no turn's end
        return update.state === "idle" && !this.replaying.has(sessionId) ? { kind: "ended", outcome: outcomeOf(update) } : NONE;
      case "replay_complete":
        return NONE;
      case "user_message":
        // a live prompt is shown by the window that sent it (v1 shows it nowhere else)
        return this.replaying.has(sessionId) ? this.blocks("user_message_chunk", update) : NONE;
      case "agent_message":
        return this.blocks("agent_message_chunk", update);
      case "agent_thought":
        return this.blocks("agent_thought_chunk", update);
      case "tool_call_update":
        return { kind: "update", update: this.toolCall(sessionId, update) };
      case "tool_call_content_chunk":
        return { kind: "update", update: { sessionUpdate: "tool_call_update", toolCallId: update.toolCallId, content: contentV1([update.content], this.readText) } };
      case "terminal_output_chunk":
        return this.terminal(update, { terminal_output: { terminal_id: update.terminalId, data: decodeBase64(update.data) } });
      case "terminal_update":
        return update.exitStatus ? this.terminal(update, { terminal_exit: { terminal_id: update.terminalId, exit_code: (update.exitStatus as Json).exitCode ?? null, signal: (update.exitStatus as Json).signal ?? null } }) : NONE;
      case "plan_update":
        return { kind: "update", update: { sessionUpdate: "plan", entries: (update.plan as { entries?: unknown } | undefined)?.entries ?? [] } };
      case "notice":
        return { kind: "update", update: noticeV1(update) };
      case "available_commands_update":
        return { kind: "update", update: { ...update, availableCommands: commandsV1(update.availableCommands) } };
      case "config_option_update":
        return { kind: "update", update: { ...update, configOptions: configOptionsV1(update.configOptions) } };
      default:
        return { kind: "update", update }; // the same on both versions, or already v1's (a `session/load` replay)
    }
  }

  private blocks(kind: string, update: Json): Reading {
    const content = Array.isArray(update.content) ? (update.content as ContentBlock[]) : [];
    const text = content.map((b) => ("text" in b && typeof b.text === "string" ? b.text : "")).join("\n");
    return { kind: "update", update: { sessionUpdate: kind, content: { type: "text", text }, ...(update._meta ? { _meta: update._meta } : {}) } };
  }

  private toolCall(sessionId: string, update: Json): Json {
    const id = String(update.toolCallId ?? "");
    let seen = this.calls.get(sessionId);
    if (!seen) this.calls.set(sessionId, (seen = new Set()));
    const first = !seen.has(id);
    seen.add(id);
    // `capabilities.cancel` stays: the card's Stop button reads it
    const out: Json = { ...update, sessionUpdate: first ? "tool_call" : "tool_call_update" };
    if ("content" in update) out.content = contentV1(update.content, this.readText);
    if (update.status === "cancelled") out.status = "failed"; // v1 has no `cancelled` status
    return out;
  }

  private terminal(update: Json, meta: Json): Reading {
    return { kind: "update", update: { sessionUpdate: "tool_call_update", toolCallId: update.terminalId, _meta: meta } };
  }
}

function outcomeOf(update: Json): TurnOutcome {
  const stopReason = typeof update.stopReason === "string" ? update.stopReason : "end_turn";
  const error = update.error as TurnOutcome["error"] | undefined;
  return error ? { stopReason, error } : { stopReason };
}

function noticeV1(update: Json): Json {
  const text = [update.title, update.description].filter((t) => typeof t === "string" && t).join("\n");
  const tether = (update._meta as { tether?: Json } | undefined)?.tether ?? {};
  return { sessionUpdate: "agent_message_chunk", content: { type: "text", text }, _meta: { tether: { ...tether, notice: true } } };
}

function decodeBase64(data: unknown): string {
  return typeof data === "string" ? Buffer.from(data, "base64").toString("utf8") : "";
}
