/**
 * A tool call's card: kind icon, title, live status badge, location links, the edit's files
 * and the output (collapsible; open while a command runs, since its output streams in).
 * Approval controls are put in `approvalSlot` by approvals.ts. A running call that can be
 * stopped alone (v2 says so; on v1 a command) has a Stop button (`tool_call/cancel`, §12.4).
 */
import { h, inlineCode } from "./dom";
import { highlight } from "./markdown";
import { asRecord, blockText, type Location, type ToolEntry } from "./state";

const ICONS: Record<string, string> = {
  read: '<path d="M4 1.5h5l3 3v10H4z M9 1.5v3h3 M6 8h4 M6 10.5h4"/>',
  edit: '<path d="M11 2l3 3-8 8H3v-3z M9.5 3.5l3 3"/>',
  delete: '<path d="M3 4h10 M6 4V2.5h4V4 M4.5 4l.5 10h6l.5-10 M7 6.5v5 M9 6.5v5"/>',
  move: '<path d="M2 8h11 M9.5 4.5L13 8l-3.5 3.5"/>',
  search: '<circle cx="6.5" cy="6.5" r="4"/><path d="M9.5 9.5L14 14"/>',
  execute: '<path d="M1.5 2.5h13v11h-13z M4 6l2.5 2L4 10 M8 10.5h4"/>',
  think: '<path d="M8 1.5a4.5 4.5 0 0 0-2.5 8.2V12h5V9.7A4.5 4.5 0 0 0 8 1.5z M6 14.5h4"/>',
  fetch: '<circle cx="8" cy="8" r="6.5"/><path d="M1.5 8h13 M8 1.5c-2.5 3-2.5 10 0 13 M8 1.5c2.5 3 2.5 10 0 13"/>',
  other: '<circle cx="8" cy="8" r="2.5"/><path d="M8 1.5v2 M8 12.5v2 M1.5 8h2 M12.5 8h2 M3.4 3.4l1.4 1.4 M11.2 11.2l1.4 1.4 M3.4 12.6l1.4-1.4 M11.2 4.8l1.4-1.4"/>',
};

const STATUS_LABELS: Record<string, string> = {
  pending: "pending",
  in_progress: "running",
  completed: "done",
  failed: "failed",
};

export function kindIcon(kind: string): HTMLElement {
  const span = h("span", { class: "tool-icon", "aria-hidden": "true", title: kind });
  span.innerHTML = `<svg viewBox="0 0 16 16" width="16" height="16" fill="none" stroke="currentColor" stroke-width="1.2" stroke-linejoin="round" stroke-linecap="round">${ICONS[kind] ?? ICONS.other}</svg>`;
  return span;
}

/** Where a path is shown relative to the workspace, when the workspace is known. */
export type PathLabel = (path: string) => string;

export class ToolCard {
  readonly el: HTMLElement;
  /** approvals.ts puts the open prompt's controls here */
  readonly approvalSlot: HTMLElement;
  private icon: HTMLElement;
  private readonly titleEl: HTMLElement;
  private readonly badge: HTMLElement;
  private readonly stop: HTMLElement;
  private readonly approvedByEl: HTMLElement;
  private readonly locationsEl: HTMLElement;
  private readonly diffsEl: HTMLElement;
  private readonly output: HTMLDetailsElement;
  private readonly outputSummary: HTMLElement;
  private readonly outputPre: HTMLElement;
  private shownStatus = "";
  private shownKind = "";

  constructor(
    public entry: ToolEntry,
    private readonly pathLabel: PathLabel,
  ) {
    this.icon = h("span");
    this.titleEl = h("span", { class: "tool-title" });
    this.badge = h("vscode-badge", { class: "tool-status" });
    this.stop = h("vscode-button", { class: "tool-stop", secondary: true, title: "Stop this call; the turn goes on" }, "Stop");
    this.approvedByEl = h("div", { class: "tool-approved-by" });
    this.locationsEl = h("div", { class: "tool-locations" });
    this.diffsEl = h("ul", { class: "tool-diffs" });
    this.outputSummary = h("summary", null, "Output");
    this.outputPre = h("pre", { class: "tool-output-text" });
    this.output = h("details", { class: "tool-output" }, this.outputSummary, this.outputPre);
    this.approvalSlot = h("div", { class: "tool-approval-slot" });
    this.el = h(
      "div",
      { class: "entry tool", "data-tool-call-id": entry.id },
      h("div", { class: "tool-head" }, this.icon, this.titleEl, this.badge, this.stop),
      this.approvedByEl,
      this.locationsEl,
      this.diffsEl,
      this.approvalSlot,
      this.output,
    );
    this.render();
  }

  render(): void {
    const e = this.entry;
    if (this.shownKind !== e.toolKind) {
      this.icon.replaceWith((this.icon = kindIcon(e.toolKind)));
      this.el.dataset.kind = e.toolKind;
      this.shownKind = e.toolKind;
    }
    this.titleEl.replaceChildren(inlineCode(e.title));
    this.titleEl.title = e.title;
    this.badge.textContent = STATUS_LABELS[e.status] ?? e.status;
    this.badge.dataset.status = e.status;
    this.el.dataset.status = e.status;
    this.stop.hidden = !(e.status === "in_progress" && (e.cancellable ?? e.toolKind === "execute"));
    this.approvedByEl.textContent = e.approvedBy ?? "";
    this.approvedByEl.hidden = !e.approvedBy;
    this.renderLocations(e.locations);

    const diffs = e.content.map(asRecord).filter((b) => b?.type === "diff") as Record<string, unknown>[];
    this.diffsEl.replaceChildren(
      ...diffs.map((d) => {
        const path = String(d.path ?? "");
        const change = typeof d.oldText !== "string" ? "new file" : d.newText === "" ? "deleted" : "changed";
        return h("li", { class: "tool-diff" }, this.locationLink({ path }), h("span", { class: "tool-diff-change" }, change));
      }),
    );
    this.diffsEl.hidden = diffs.length === 0;

    const text = e.content
      .map(asRecord)
      .filter((b) => b?.type === "content")
      .map((b) => blockText(b?.content))
      .join("\n");
    const statusChanged = this.shownStatus !== e.status;
    if (e.status === "completed" && ["edit", "delete", "move"].includes(e.toolKind) && text.includes("\n--- ")) {
      if (statusChanged) this.outputPre.innerHTML = highlight(text, "diff");
    } else if (this.outputPre.textContent !== text) {
      this.outputPre.textContent = text;
    }
    this.output.hidden = text === "";
    const lines = text ? text.replace(/\n$/, "").split("\n").length : 0;
    this.outputSummary.textContent = e.toolKind === "execute" ? `Output · ${lines} line${lines === 1 ? "" : "s"}` : "Output";
    if (statusChanged) {
      // a running command's output is shown as it streams; a failure says why
      if (e.status === "in_progress" && e.toolKind === "execute") this.output.open = true;
      if (e.status === "failed") this.output.open = true;
      this.shownStatus = e.status;
    }
  }

  private renderLocations(locations: Location[]): void {
    this.locationsEl.replaceChildren(...locations.slice(0, 50).map((l) => this.locationLink(l)));
    this.locationsEl.hidden = locations.length === 0;
  }

  private locationLink(l: Location): HTMLElement {
    const label = this.pathLabel(l.path) + (l.line !== undefined ? `:${l.line}` : "");
    const a = h("a", { class: "location", href: "#", title: l.path, "data-path": l.path }, label);
    if (l.line !== undefined) a.dataset.line = String(l.line);
    return a;
  }
}
