/**
 * The chat state and its reducer: sessions, the current session's turns (messages,
 * thinking, tool calls by id), pending approvals, mode and status. Pure: `reduce`
 * returns a new state and never mutates its input.
 */
import type { ModeInfo, PermissionPrompt, SessionSummary, Status } from "../shared/messages";
import type { PlanEntry, SessionConfigOption, SessionModeState } from "../protocol/schema";

export interface ToolCallView {
  toolCallId: string;
  title: string;
  kind: string;
  status: string;
  /** ACP tool call content: replaced by each update that carries it (SPEC §4.2, §4.9) */
  content: unknown[];
  locations: { path: string; line?: number | null }[];
  rawInput?: unknown;
  /** `_meta.tether.approvedBy` (SPEC §4.9) */
  approvedBy?: string;
}

export type TranscriptItem =
  | { kind: "user"; text: string }
  | { kind: "agent"; text: string; notice: boolean; status?: string }
  | { kind: "thought"; text: string; status?: string }
  | { kind: "tool"; toolCallId: string };

export interface TurnView {
  items: TranscriptItem[];
  /** tool calls of this turn by id (ids are unique within a turn only, SPEC §4.2) */
  toolCalls: Record<string, ToolCallView>;
  stopReason?: string;
  usage?: { inputTokens?: number; outputTokens?: number };
  /** the last `usage_update`: how full the context is */
  context?: { used: number; size: number };
}

export interface ChatState {
  sessions: SessionSummary[];
  sessionId: string | null;
  title: string | null;
  modes: ModeInfo[];
  modeId: string | null;
  /** the session's config options (the model, reasoning and mode pickers), SPEC §3.36 */
  options: SessionConfigOption[];
  turns: TurnView[];
  plan: PlanEntry[];
  /** a turn runs (a prompt is unanswered, or a resumed turn has not announced its end) */
  running: boolean;
  /** approvals waiting for the user, oldest first, for any session of this workspace
   * (they stay open while another session is shown) */
  pending: PermissionPrompt[];
}

export type ChatAction =
  | { type: "sessions"; sessions: SessionSummary[] }
  | {
      type: "sessionOpened";
      sessionId: string;
      title: string | null;
      modes?: SessionModeState | null;
      options?: SessionConfigOption[] | null;
      /** the session already runs a turn (it was left while running) */
      running?: boolean;
    }
  | { type: "sessionCleared" }
  | { type: "prompted"; text: string }
  | { type: "update"; sessionId: string; update: Record<string, unknown> }
  | { type: "turnEnded"; stopReason: string; usage?: { inputTokens?: number; outputTokens?: number } }
  | { type: "permissionAsked"; prompt: PermissionPrompt }
  | { type: "permissionClosed"; requestId: string }
  | { type: "modeChanged"; modeId: string }
  | { type: "optionsChanged"; options: SessionConfigOption[] };

/** The four modes of SPEC §5.7, shown until the daemon sends its own list. */
export const KNOWN_MODES: ModeInfo[] = [
  { id: "read-only", name: "Read-only", description: "Reads and searches only; nothing is changed." },
  { id: "ask", name: "Ask", description: "Reads are free; every edit and command asks first." },
  { id: "auto-edit", name: "Auto-edit", description: "Edits inside the workspace are free; commands ask." },
  { id: "full-auto", name: "Full auto", description: "Everything is free, still confined to the workspace." },
];

export function initialState(modeId: string | null = "ask"): ChatState {
  return {
    sessions: [],
    sessionId: null,
    title: null,
    modes: KNOWN_MODES,
    modeId,
    options: [],
    turns: [],
    plan: [],
    running: false,
    pending: [],
  };
}

export function statusOf(state: ChatState): Status {
  if (state.pending.some((p) => p.sessionId === state.sessionId)) return "waiting";
  return state.running ? "streaming" : "idle";
}

/** The newest turn's tool call with this id. */
export function toolCall(state: ChatState, toolCallId: string): ToolCallView | undefined {
  for (let i = state.turns.length - 1; i >= 0; i--) {
    const call = state.turns[i].toolCalls[toolCallId];
    if (call) return call;
  }
  return undefined;
}

export function reduce(state: ChatState, action: ChatAction): ChatState {
  switch (action.type) {
    case "sessions":
      return { ...state, sessions: action.sessions };
    case "sessionOpened":
      return {
        ...state,
        sessionId: action.sessionId,
        title: action.title,
        modes: action.modes?.availableModes?.length
          ? action.modes.availableModes.map((m) => ({ id: m.id, name: m.name, description: m.description ?? undefined }))
          : state.modes,
        modeId: action.modes?.currentModeId ?? action.options?.find((o) => o.id === "mode")?.currentValue ?? state.modeId,
        options: action.options ?? [],
        turns: [],
        plan: [],
        running: action.running ?? false,
      };
    case "sessionCleared":
      return { ...state, sessionId: null, title: null, turns: [], plan: [], running: false };
    case "prompted":
      return {
        ...state,
        running: true,
        turns: [...state.turns, { items: [{ kind: "user", text: action.text }], toolCalls: {} }],
      };
    case "update":
      return action.sessionId === state.sessionId ? applyUpdate(state, action.update) : state;
    case "turnEnded":
      return {
        ...state,
        running: false,
        turns: mapLastTurn(state.turns, (t) => ({ ...t, stopReason: action.stopReason, usage: action.usage ?? t.usage })),
      };
    case "permissionAsked": {
      const others = state.pending.filter((p) => p.requestId !== action.prompt.requestId);
      return {
        ...state,
        pending: [...others, action.prompt],
        // a prompt can only come from a running turn (also one resumed after a restart)
        running: action.prompt.sessionId === state.sessionId ? true : state.running,
      };
    }
    case "permissionClosed":
      return { ...state, pending: state.pending.filter((p) => p.requestId !== action.requestId) };
    case "modeChanged":
      return { ...state, modeId: action.modeId };
    case "optionsChanged":
      return withOptions(state, action.options);
  }
}

/** New config options; the mode follows its option. */
export function withOptions(state: ChatState, options: SessionConfigOption[]): ChatState {
  const mode = options.find((o) => o.id === "mode")?.currentValue;
  return { ...state, options, modeId: mode ?? state.modeId };
}

function applyUpdate(state: ChatState, update: Record<string, unknown>): ChatState {
  const meta = tetherMeta(update);
  switch (update.sessionUpdate) {
    case "user_message_chunk": {
      const text = blockText(update.content);
      const last = state.turns[state.turns.length - 1];
      const lastItem = last?.items[last.items.length - 1];
      // consecutive user blocks (text + context) belong to one replayed prompt
      if (last && lastItem?.kind === "user" && last.items.length === 1) {
        return { ...state, turns: mapLastTurn(state.turns, (t) => ({ ...t, items: [{ kind: "user", text: `${lastItem.text}\n${text}` }] })) };
      }
      return { ...state, turns: [...state.turns, { items: [{ kind: "user", text }], toolCalls: {} }] };
    }
    case "agent_message_chunk":
    case "agent_thought_chunk": {
      const text = blockText(update.content);
      const thought = update.sessionUpdate === "agent_thought_chunk";
      const notice = meta?.notice === true;
      const status = typeof meta?.status === "string" ? meta.status : undefined;
      return {
        ...state,
        turns: mapLastTurn(ensureTurn(state.turns), (t) => {
          const items = [...t.items];
          const last = items[items.length - 1];
          if (thought && last?.kind === "thought" && last.status === status) {
            items[items.length - 1] = { ...last, text: last.text + text };
          } else if (!thought && last?.kind === "agent" && last.notice === notice && last.status === status) {
            items[items.length - 1] = { ...last, text: last.text + text };
          } else {
            items.push(thought ? { kind: "thought", text, status } : { kind: "agent", text, notice, status });
          }
          return { ...t, items };
        }),
      };
    }
    case "tool_call":
    case "tool_call_update": {
      const id = String(update.toolCallId ?? "");
      if (!id) return state;
      return {
        ...state,
        turns: mapLastTurn(ensureTurn(state.turns), (t) => {
          const known = t.toolCalls[id];
          const base: ToolCallView = known ?? {
            toolCallId: id,
            title: id,
            kind: "other",
            status: "pending",
            content: [],
            locations: [],
          };
          const next = mergeToolCall(base, update, meta);
          const items = known ? t.items : [...t.items, { kind: "tool" as const, toolCallId: id }];
          return { ...t, items, toolCalls: { ...t.toolCalls, [id]: next } };
        }),
      };
    }
    case "plan":
      return { ...state, plan: Array.isArray(update.entries) ? (update.entries as PlanEntry[]) : [] };
    case "usage_update": {
      const used = Number(update.used);
      const size = Number(update.size);
      return { ...state, turns: mapLastTurn(ensureTurn(state.turns), (t) => ({ ...t, context: { used, size } })) };
    }
    case "session_info_update": {
      let next = state;
      if (typeof update.title === "string") {
        const title = update.title;
        next = {
          ...next,
          title,
          sessions: next.sessions.map((s) => (s.sessionId === state.sessionId ? { ...s, title } : s)),
        };
      }
      const ended = meta?.turnEnded as { stopReason?: string } | undefined;
      if (ended) next = reduce(next, { type: "turnEnded", stopReason: String(ended.stopReason ?? "end_turn") });
      return next;
    }
    case "config_option_update":
      return Array.isArray(update.configOptions) ? withOptions(state, update.configOptions as SessionConfigOption[]) : state;
    case "current_mode_update":
      return typeof update.currentModeId === "string" ? { ...state, modeId: update.currentModeId } : state;
    default:
      return state;
  }
}

function mergeToolCall(base: ToolCallView, update: Record<string, unknown>, meta: Record<string, unknown> | undefined): ToolCallView {
  const next = { ...base };
  if (typeof update.title === "string") next.title = update.title;
  if (typeof update.kind === "string") next.kind = update.kind;
  if (typeof update.status === "string") next.status = update.status;
  if (Array.isArray(update.content)) next.content = update.content;
  if (Array.isArray(update.locations)) next.locations = update.locations as ToolCallView["locations"];
  if (update.rawInput !== undefined && update.rawInput !== null) next.rawInput = update.rawInput;
  if (typeof meta?.approvedBy === "string") next.approvedBy = meta.approvedBy;
  return next;
}

function tetherMeta(update: Record<string, unknown>): Record<string, unknown> | undefined {
  const meta = update._meta as { tether?: Record<string, unknown> } | undefined;
  return meta?.tether;
}

function blockText(content: unknown): string {
  const block = content as { type?: string; text?: unknown; resource?: { uri?: string; text?: unknown }; uri?: string; name?: string };
  if (!block) return "";
  if (typeof block.text === "string") return block.text;
  if (block.type === "resource" && block.resource) {
    return typeof block.resource.text === "string" ? block.resource.text : String(block.resource.uri ?? "");
  }
  if (block.type === "resource_link") return String(block.name ?? block.uri ?? "");
  return "";
}

function ensureTurn(turns: TurnView[]): TurnView[] {
  return turns.length ? turns : [{ items: [], toolCalls: {} }];
}

function mapLastTurn(turns: TurnView[], f: (t: TurnView) => TurnView): TurnView[] {
  if (!turns.length) return turns;
  const out = turns.slice();
  out[out.length - 1] = f(out[out.length - 1]);
  return out;
}
