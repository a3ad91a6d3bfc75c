/**
 * The chat transcript: applies the daemon's `session/update`s (SPEC §4) and the host's turn
 * messages to a list of entries, and keeps their views in the DOM.
 *
 * Streaming is cheap: a delta appends to the last entry's text and marks that one view
 * dirty; dirty views are rendered once per animation frame (markdown is parsed once per
 * frame for the message being streamed, never per delta and never for the whole transcript).
 */
import type { PermissionPrompt, RewindPreview, ViewMessage } from "../shared/messages";
import type { ChangedFile } from "../protocol/schema";
import { Approval } from "./approvals";
import { changesCard, rewindCard } from "./checkpoints";
import { h } from "./dom";
import { createView, type EntryView } from "./render";
import { asRecord, blockText, locationsOf, tetherMeta, type Entry, type ReplayStatus, type ToolEntry } from "./state";
import { ToolCard, type PathLabel } from "./toolCard";

const TOOL_STATUSES = new Set(["pending", "in_progress", "completed", "failed"]);

export interface TranscriptHooks {
  post(message: ViewMessage): void;
  /** the entries changed (to save the view state, not on every frame) */
  changed(): void;
  /** the session got a title (session_info_update) */
  title(title: string): void;
  /** the daemon changed the mode (current_mode_update) */
  mode(modeId: string): void;
  /** a resumed turn ended (session_info_update with _meta.tether.turnEnded) */
  turnEnded(): void;
}

export class Transcript {
  readonly el: HTMLElement;
  entries: Entry[] = [];
  private views: EntryView[] = [];
  /** the newest card of each tool call id (ids repeat across turns, SPEC §4.2) */
  private tools = new Map<string, ToolCard>();
  private approvals = new Map<string, Approval>();
  private plan: EntryView | null = null;
  private dirty = new Set<EntryView>();
  private frame = 0;
  /** the last usage_update of the running turn */
  private usage: { used?: number; size?: number } = {};
  /** keep the end of the chat in view: until the user scrolls up, again once back at the bottom */
  private following = true;
  private lastScrollTop = 0;
  /** the newest approval, kept fully in view (its buttons) until answered or the user scrolls up */
  private newApproval?: HTMLElement;
  /** content keeps growing after it is added (web components upgrade, markdown, fonts) */
  private readonly resizes = new ResizeObserver(() => this.keepInView());
  private watched?: HTMLElement;
  /** the user opened or closed something (a summary): whether to follow is measured after it */
  private userToggled = false;

  constructor(
    private readonly hooks: TranscriptHooks,
    private readonly pathLabel: PathLabel,
  ) {
    this.el = h("div", { class: "transcript", role: "log", "aria-live": "polite" });
    this.el.addEventListener("click", (event) => this.onClick(event));
    this.resizes.observe(this.el);
  }

  clear(): void {
    this.el.replaceChildren();
    this.entries = [];
    this.views = [];
    this.tools.clear();
    this.approvals.clear();
    this.plan = null;
    this.dirty.clear();
    this.usage = {};
    this.newApproval = undefined;
    this.following = true;
    this.hooks.changed();
  }

  /** Show saved entries again (after a reload). */
  restore(entries: Entry[]): void {
    this.clear();
    for (const entry of entries) this.add(entry);
    this.stickToBottom(true);
  }

  get isEmpty(): boolean {
    return this.entries.length === 0;
  }

  userMessage(text: string): void {
    this.usage = {};
    this.add({ kind: "user", text });
    this.stickToBottom(true);
  }

  error(text: string): void {
    this.add({ kind: "error", text });
  }

  notice(text: string): void {
    this.add({ kind: "notice", text });
  }

  /** The texts of the user messages shown, in order (where "Rewind to here" points). */
  userTexts(): string[] {
    return this.entries.filter((e) => e.kind === "user").map((e) => (e as { text: string }).text);
  }

  /** "Rewind to here": what it will do, to confirm (one card at a time). */
  rewindPreview(preview: RewindPreview): void {
    this.el.querySelector(".rewind-confirm")?.remove();
    this.el.appendChild(rewindCard(preview, this.hooks.post));
    this.stickToBottom(true);
  }

  /** A turn's changed files with their diffs. */
  changes(turn: number | null, files: ChangedFile[]): void {
    this.el.querySelector(".changes-card")?.remove();
    this.el.appendChild(changesCard(turn, files));
    this.stickToBottom(true);
  }

  turnEnded(stopReason: string, usage?: { inputTokens?: number; outputTokens?: number }): void {
    this.add({ kind: "turn", stopReason, ...usage, ...this.usage });
    this.usage = {};
  }

  update(update: Record<string, unknown>): void {
    const meta = tetherMeta(update);
    switch (update.sessionUpdate) {
      case "agent_message_chunk": {
        const text = blockText(update.content);
        if (meta.notice === true) this.appendText("notice", text);
        else this.appendText("agent", text, replayStatus(meta.status));
        break;
      }
      case "agent_thought_chunk":
        this.appendText("thought", blockText(update.content), replayStatus(meta.status));
        break;
      case "user_message_chunk":
        if (meta.steered === true) {
          // a message steered into the running turn, shown where it landed
          this.add({ kind: "user", text: blockText(update.content), steered: typeof meta.afterStep === "number" ? meta.afterStep : 0 });
          break;
        }
        this.usage = {};
        this.appendText("user", blockText(update.content));
        break;
      case "tool_call":
        this.toolCall(update);
        break;
      case "tool_call_update":
        this.toolCallUpdate(update);
        break;
      case "plan":
        this.planUpdate(update);
        break;
      case "usage_update":
        if (typeof update.used === "number") this.usage.used = update.used;
        if (typeof update.size === "number") this.usage.size = update.size;
        break;
      case "session_info_update":
        if (typeof update.title === "string") this.hooks.title(update.title);
        {
          const ended = asRecord(meta.turnEnded);
          if (ended) {
            this.turnEnded(typeof ended.stopReason === "string" ? ended.stopReason : "end_turn");
            this.hooks.turnEnded();
          }
        }
        break;
      case "current_mode_update":
        if (typeof update.currentModeId === "string") this.hooks.mode(update.currentModeId);
        break;
    }
  }

  permission(prompt: PermissionPrompt): void {
    let card = this.tools.get(prompt.toolCallId);
    if (!card) {
      this.toolCall({ toolCallId: prompt.toolCallId, title: prompt.title, kind: prompt.kind, status: "pending", content: prompt.content });
      card = this.tools.get(prompt.toolCallId);
    }
    if (!card) return;
    this.approvals.get(prompt.requestId)?.el.remove();
    const approval = new Approval(prompt, this.hooks.post, this.pathLabel);
    this.approvals.set(prompt.requestId, approval);
    card.approvalSlot.replaceChildren(approval.el);
    card.el.classList.add("asking");
    this.newApproval = approval.el;
    this.stickToBottom(true);
    this.keepInView();
  }

  permissionClosed(requestId: string): void {
    const approval = this.approvals.get(requestId);
    if (!approval) return;
    this.approvals.delete(requestId);
    approval.el.closest(".tool")?.classList.remove("asking");
    approval.el.remove();
  }

  /** Paths are shown relative to the workspace once it is known: show them again. */
  relabel(): void {
    for (const card of this.tools.values()) this.markDirty(card);
  }

  /** All open prompts are gone (another session is shown, or the daemon restarted). */
  closeApprovals(): void {
    for (const id of [...this.approvals.keys()]) this.permissionClosed(id);
  }

  // ---- entries and views

  private add(entry: Entry): EntryView {
    const view = createView(entry, this.pathLabel);
    const atBottom = this.following;
    this.entries.push(entry);
    this.views.push(view);
    this.el.appendChild(view.el);
    if (view instanceof ToolCard && entry.kind === "tool") this.tools.set(entry.id, view);
    this.hooks.changed();
    this.stickToBottom(atBottom);
    return view;
  }

  private appendText(kind: "user" | "agent" | "thought" | "notice", text: string, status?: ReplayStatus): void {
    if (!text) return;
    const last = this.views[this.views.length - 1];
    const entry = last?.entry;
    const steered = entry?.kind === "user" && entry.steered !== undefined;
    if (entry && entry.kind === kind && !steered && (entry.kind === "agent" || entry.kind === "thought" ? entry.status === status : true)) {
      entry.text += kind === "user" ? `\n\n${text}` : text;
      this.markDirty(last);
      return;
    }
    if (kind === "agent" || kind === "thought") this.add({ kind, text, ...(status ? { status } : {}) });
    else this.add({ kind, text });
  }

  private toolCall(update: Record<string, unknown>): void {
    const id = String(update.toolCallId ?? "");
    const existing = this.tools.get(id);
    // a call waiting for approval is sent again after a restart (SPEC §5.14): same card
    if (existing && existing.entry.status === "pending") {
      this.toolCallUpdate(update);
      return;
    }
    const entry: ToolEntry = {
      kind: "tool",
      id,
      title: typeof update.title === "string" ? update.title : "tool",
      toolKind: typeof update.kind === "string" ? update.kind : "other",
      status: typeof update.status === "string" && TOOL_STATUSES.has(update.status) ? update.status : "pending",
      content: Array.isArray(update.content) ? update.content : [],
      locations: locationsOf(update.locations) ?? [],
      ...(update.rawInput !== undefined ? { rawInput: update.rawInput } : {}),
    };
    this.add(entry);
  }

  private toolCallUpdate(update: Record<string, unknown>): void {
    const card = this.tools.get(String(update.toolCallId ?? ""));
    if (!card) return;
    const e = card.entry;
    if (typeof update.title === "string") e.title = update.title;
    if (typeof update.kind === "string") e.toolKind = update.kind;
    if (typeof update.status === "string" && TOOL_STATUSES.has(update.status)) e.status = update.status;
    // content and locations replace what was there (SPEC §4.2, §4.9)
    if (Array.isArray(update.content)) e.content = update.content;
    const locations = locationsOf(update.locations);
    if (locations) e.locations = locations;
    if (update.rawInput !== undefined) e.rawInput = update.rawInput;
    const approvedBy = tetherMeta(update).approvedBy;
    if (typeof approvedBy === "string") e.approvedBy = approvedBy;
    const capabilities = asRecord(update.capabilities);
    if (capabilities) e.cancellable = capabilities.cancel !== undefined;
    this.markDirty(card);
  }

  private planUpdate(update: Record<string, unknown>): void {
    const items = (Array.isArray(update.entries) ? update.entries : [])
      .map(asRecord)
      .filter((i): i is Record<string, unknown> => !!i && typeof i.content === "string")
      .map((i) => ({
        content: String(i.content),
        ...(typeof i.priority === "string" ? { priority: i.priority } : {}),
        ...(typeof i.status === "string" ? { status: i.status } : {}),
      }));
    // the whole plan replaces the previous one, shown where it last changed (SPEC §4.8)
    if (this.plan) this.removeView(this.plan);
    this.plan = items.length ? this.add({ kind: "plan", items }) : null;
  }

  private removeView(view: EntryView): void {
    const i = this.views.lastIndexOf(view);
    if (i >= 0) {
      this.views.splice(i, 1);
      this.entries.splice(i, 1);
    }
    view.el.remove();
    this.dirty.delete(view);
  }

  private markDirty(view: EntryView): void {
    this.dirty.add(view);
    if (!this.frame) this.frame = requestAnimationFrame(() => this.flush());
  }

  /** Render what changed since the last frame. */
  flush(): void {
    this.frame = 0;
    if (this.dirty.size === 0) return;
    const atBottom = this.following;
    for (const view of this.dirty) view.render();
    this.dirty.clear();
    this.hooks.changed();
    this.stickToBottom(atBottom);
  }

  // ---- scrolling: follow the stream while the user is at the bottom
  //
  // Whether to follow is decided by what the user did (scrolled up, or back to the bottom),
  // never by measuring after content was added: a card measured before it reaches its full
  // height would stop the following for good, and an approval's buttons would stay hidden.

  private scroller(): HTMLElement {
    const s = (this.el.parentElement ?? this.el) as HTMLElement;
    if (s !== this.el && this.watched !== s) {
      this.watched = s;
      s.addEventListener("scroll", () => this.onScroll(s), { passive: true });
      this.resizes.observe(s);
    }
    return s;
  }

  private onScroll(s: HTMLElement): void {
    const atBottom = s.scrollHeight - s.scrollTop - s.clientHeight < 40;
    if (s.scrollTop < this.lastScrollTop - 1 && !atBottom) {
      this.following = false; // the user scrolled up: leave the view where they put it
      this.newApproval = undefined;
    } else if (atBottom) this.following = true;
    this.lastScrollTop = s.scrollTop;
  }

  private stickToBottom(stick: boolean): void {
    if (!stick) return;
    this.following = true;
    const s = this.scroller();
    s.scrollTop = s.scrollHeight;
    this.lastScrollTop = s.scrollTop;
  }

  /** After any change of size: the end stays in view while following, and so does a new approval. */
  private keepInView(): void {
    if (this.userToggled) {
      // as before this content grew by the user's hand: follow only if still at the bottom
      this.userToggled = false;
      const s = this.scroller();
      this.following = s.scrollHeight - s.scrollTop - s.clientHeight < 40;
    }
    this.stickToBottom(this.following);
    const approval = this.newApproval;
    if (!approval?.isConnected) return;
    const s = this.scroller();
    const below = approval.getBoundingClientRect().bottom - s.getBoundingClientRect().bottom;
    if (below > 0) {
      s.scrollTop += below + 8;
      this.lastScrollTop = s.scrollTop;
    }
  }

  // ---- clicks inside the transcript

  private onClick(event: MouseEvent): void {
    const target = event.target as Element | null;
    if (target?.closest("summary")) this.userToggled = true;
    const location = target?.closest<HTMLElement>("a.location");
    if (location) {
      event.preventDefault();
      const line = location.dataset.line;
      this.hooks.post({ type: "openLocation", path: location.dataset.path ?? "", ...(line ? { line: Number(line) } : {}) });
      return;
    }
    const action = target?.closest<HTMLElement>("button.rewind-here, button.files-changed");
    if (action) {
      const index = this.views.filter((v) => v.entry.kind === "user").findIndex((v) => v.el.contains(action));
      const texts = this.userTexts();
      if (index < 0) return;
      if (action.classList.contains("rewind-here")) this.hooks.post({ type: "rewind", texts, index, restore: "both" });
      else this.hooks.post({ type: "changes", texts, index });
      return;
    }
    const stop = target?.closest<HTMLElement>(".tool-stop");
    if (stop) {
      const toolCallId = stop.closest<HTMLElement>(".tool")?.dataset.toolCallId;
      if (toolCallId) this.hooks.post({ type: "cancelToolCall", toolCallId });
      return;
    }
    const copy = target?.closest<HTMLElement>("button.copy-code");
    if (copy) {
      const code = copy.closest(".code-block")?.querySelector("code")?.textContent ?? "";
      this.hooks.post({ type: "copy", text: code });
      copy.textContent = "Copied";
      setTimeout(() => (copy.textContent = "Copy"), 1500);
    }
  }
}

function replayStatus(value: unknown): ReplayStatus | undefined {
  return value === "cancelled" || value === "incomplete" || value === "interrupted" || value === "error" ? value : undefined;
}
