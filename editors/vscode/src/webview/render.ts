/**
 * Views of the transcript's entries other than tool cards. Each view keeps its entry and
 * `render()`s it again when the entry changed; the transcript calls `render()` at most
 * once per animation frame, however many deltas arrived.
 */
import { append, h } from "./dom";
import { renderMarkdown } from "./markdown";
import type { Entry, PlanItem } from "./state";
import { ToolCard, type PathLabel } from "./toolCard";

export interface EntryView {
  readonly el: HTMLElement;
  entry: Entry;
  render(): void;
}

const STATUS_NOTES: Record<string, string> = {
  cancelled: "stopped",
  incomplete: "incomplete",
  interrupted: "interrupted",
  error: "failed",
};

class TextView implements EntryView {
  readonly el: HTMLElement;
  private readonly body: HTMLElement;
  private shown = "";

  constructor(public entry: Extract<Entry, { kind: "user" | "agent" | "notice" | "error" }>) {
    const e = entry;
    this.body = h("div", { class: e.kind === "agent" ? "markdown" : "plain" });
    this.el = h("div", { class: `entry ${e.kind}` }, this.body);
    if (e.kind === "user") {
      const author = e.steered === undefined ? "You" : `You · steered in after step ${e.steered}`;
      this.el.prepend(h("div", { class: "entry-author" }, author));
      this.el.append(
        h(
          "div",
          { class: "entry-actions" },
          h("button", { class: "rewind-here", type: "button", title: "Take the conversation and the files back to just before this message" }, "Rewind to here"),
          h("button", { class: "files-changed", type: "button", title: "The files this turn changed, with diffs" }, "Files changed"),
        ),
      );
    }
    if (e.kind === "agent" && e.status) {
      this.el.dataset.replayStatus = e.status;
      this.el.append(h("div", { class: "entry-note" }, STATUS_NOTES[e.status] ?? e.status));
    }
    if (e.kind === "error") this.el.setAttribute("role", "alert");
    this.render();
  }

  render(): void {
    const text = this.entry.kind === "notice" ? this.entry.text.trim() : (this.entry as { text: string }).text;
    if (text === this.shown) return;
    this.shown = text;
    if (this.entry.kind === "agent") this.body.innerHTML = renderMarkdown(text);
    else this.body.textContent = text;
  }
}

class ThoughtView implements EntryView {
  readonly el: HTMLDetailsElement;
  private readonly body: HTMLElement;

  constructor(public entry: Extract<Entry, { kind: "thought" }>) {
    this.body = h("div", { class: "plain" });
    this.el = h("details", { class: "entry thought" }, h("summary", null, "Thinking"), this.body);
    if (entry.status) this.el.dataset.replayStatus = entry.status;
    this.render();
  }

  render(): void {
    if (this.body.textContent !== this.entry.text) this.body.textContent = this.entry.text;
  }
}

const PLAN_MARKS: Record<string, string> = { completed: "✓", in_progress: "●", pending: "○" };

class PlanView implements EntryView {
  readonly el: HTMLElement;
  private readonly list: HTMLElement;

  constructor(public entry: Extract<Entry, { kind: "plan" }>) {
    this.list = h("ol", { class: "plan-items" });
    this.el = h("div", { class: "entry plan" }, h("div", { class: "plan-title" }, "Plan"), this.list);
    this.render();
  }

  render(): void {
    this.list.replaceChildren(
      ...this.entry.items.map((item: PlanItem) =>
        h(
          "li",
          { class: "plan-item", "data-status": item.status ?? "pending" },
          h("span", { class: "plan-mark", "aria-hidden": "true" }, PLAN_MARKS[item.status ?? "pending"] ?? "○"),
          h("span", { class: "plan-content" }, item.content),
          item.priority === "high" ? h("span", { class: "plan-priority" }, "high") : null,
        ),
      ),
    );
  }
}

const STOP_NOTES: Record<string, string> = {
  cancelled: "Stopped",
  max_tokens: "Stopped at the output limit",
  max_turn_requests: "Stopped at the step limit",
  refusal: "Refused",
  error: "Failed",
};

export function formatCount(n: number): string {
  return n.toLocaleString("en-US");
}

/** "1,234 in · 56 out · context 12% of 128,000", the parts that are known. */
export function usageText(e: { inputTokens?: number; outputTokens?: number; used?: number; size?: number }): string {
  const parts: string[] = [];
  if (e.inputTokens || e.outputTokens) parts.push(`${formatCount(e.inputTokens ?? 0)} in · ${formatCount(e.outputTokens ?? 0)} out`);
  if (e.used !== undefined && e.size) parts.push(`context ${Math.max(1, Math.round((100 * e.used) / e.size))}% of ${formatCount(e.size)}`);
  return parts.join(" · ");
}

class TurnView implements EntryView {
  readonly el: HTMLElement;

  constructor(public entry: Extract<Entry, { kind: "turn" }>) {
    this.el = h("div", { class: "entry turn", "data-stop-reason": entry.stopReason });
    this.render();
  }

  render(): void {
    const e = this.entry;
    const note = STOP_NOTES[e.stopReason];
    const usage = usageText(e);
    this.el.replaceChildren();
    append(
      this.el,
      note && h("span", { class: "turn-stop" }, note),
      usage && h("span", { class: "turn-usage", title: "tokens this turn" }, usage),
    );
    this.el.hidden = !note && !usage;
  }
}

export function createView(entry: Entry, pathLabel: PathLabel): EntryView {
  switch (entry.kind) {
    case "tool":
      return new ToolCard(entry, pathLabel);
    case "thought":
      return new ThoughtView(entry);
    case "plan":
      return new PlanView(entry);
    case "turn":
      return new TurnView(entry);
    default:
      return new TextView(entry);
  }
}
