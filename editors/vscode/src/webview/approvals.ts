/**
 * The approval controls inside a tool card, for a `permission` message (SPEC §3.22):
 * why Tether asks, the command and its directory or the files an edit changes (each with
 * "Review diff", which opens VS Code's diff editor), one checkbox per hunk when the edit
 * has more than one (SPEC §5.10), what "Always" would store and allow, and a button per option. `permissionClosed` removes them.
 */
import type { HunkRef, PermissionOption, PermissionPrompt, ViewMessage } from "../shared/messages";
import { h } from "./dom";
import { asRecord, blockText } from "./state";
import type { PathLabel } from "./toolCard";

const EDIT_KINDS = new Set(["edit", "delete", "move"]);

function optionLabel(option: PermissionOption, kind: string): string {
  // an option beyond the four ACP kinds (Tether's "Allow once, with network") keeps its name
  if (option.optionId !== option.kind) return option.name;
  switch (option.kind) {
    case "allow_once":
      return EDIT_KINDS.has(kind) ? "Accept" : "Allow once";
    case "allow_always":
      return "Always";
    case "reject_once":
      return "Reject";
    case "reject_always":
      return "Reject always";
    default:
      return option.name;
  }
}

export class Approval {
  readonly el: HTMLElement;
  private readonly checkboxes: HTMLElement[] = [];
  private readonly buttons: HTMLElement[] = [];

  constructor(
    readonly prompt: PermissionPrompt,
    private readonly post: (message: ViewMessage) => void,
    pathLabel: PathLabel,
  ) {
    const p = prompt;
    this.el = h("div", { class: "approval", "data-request-id": p.requestId, role: "group", "aria-label": "Approval" });
    if (p.reason) this.el.append(h("div", { class: "approval-reason" }, p.reason));

    const texts = p.content.map(asRecord).filter((b) => b?.type === "content").map((b) => blockText(b?.content));
    for (const text of texts) this.el.append(h("pre", { class: "approval-command" }, text));

    const diffs = p.content.map(asRecord).filter((b) => b?.type === "diff") as Record<string, unknown>[];
    const choosable = p.hunks.length > 1;
    for (const diff of diffs) {
      const path = String(diff.path ?? "");
      const review = h("vscode-button", { class: "review-diff", secondary: true, "data-path": path }, "Review diff");
      review.addEventListener("click", () => this.post({ type: "openDiff", requestId: p.requestId, path }));
      this.el.append(h("div", { class: "approval-file" }, h("span", { class: "approval-path", title: path }, pathLabel(path)), review));
      if (choosable) this.addHunks(p.hunks.filter((hunk) => hunk.path === path), () => "");
    }
    // hunks of a file without a diff block (not sent today): still choosable, named by file
    const shown = new Set(diffs.map((d) => String(d.path ?? "")));
    if (choosable) this.addHunks(p.hunks.filter((hunk) => !shown.has(hunk.path)), (hunk) => `${pathLabel(hunk.path)} `);

    // what "Always" stores and allows, shown before it is pressed (SPEC §5.9)
    const always = p.options.find((o) => o.optionId === "allow_always")?.name;
    if (always && always !== "Allow always") this.el.append(h("div", { class: "approval-always" }, always));

    const row = h("div", { class: "approval-buttons" });
    for (const option of p.options) {
      const primary = option.kind === "allow_once";
      const button = h("vscode-button", { class: "approval-option", secondary: !primary, "data-option-id": option.optionId }, optionLabel(option, p.kind));
      button.title = option.name;
      button.addEventListener("click", () => this.answer(option));
      this.buttons.push(button);
      row.append(button);
    }
    this.el.append(row);
  }

  private addHunks(hunks: HunkRef[], prefix: (hunk: HunkRef) => string): void {
    if (hunks.length === 0) return;
    const list = h("div", { class: "approval-hunks" });
    for (const hunk of hunks) {
      const box = h("vscode-checkbox", {
        class: "hunk",
        checked: true,
        label: prefix(hunk) + hunk.header,
        "data-path": hunk.path,
        "data-index": String(hunk.index),
      });
      this.checkboxes.push(box);
      list.append(box);
    }
    this.el.append(list);
  }

  /** The kept hunks per file, when the user unchecked some; undefined when all are kept. */
  acceptedHunks(): Record<string, number[]> | undefined {
    const unchecked = this.checkboxes.filter((box) => !(box as HTMLElement & { checked: boolean }).checked);
    if (unchecked.length === 0) return undefined;
    const kept: Record<string, number[]> = {};
    for (const box of this.checkboxes) {
      const path = box.dataset.path ?? "";
      kept[path] ??= [];
      if ((box as HTMLElement & { checked: boolean }).checked) kept[path].push(Number(box.dataset.index));
    }
    return kept;
  }

  private answer(option: PermissionOption): void {
    const allow = option.kind.startsWith("allow");
    const acceptedHunks = allow ? this.acceptedHunks() : undefined;
    this.post({
      type: "permission",
      requestId: this.prompt.requestId,
      optionId: option.optionId,
      ...(acceptedHunks ? { acceptedHunks } : {}),
    });
    // answered: the controls stay visible, disabled, until the host closes the prompt
    this.el.classList.add("answered");
    for (const control of [...this.buttons, ...this.checkboxes]) control.setAttribute("disabled", "");
  }
}
