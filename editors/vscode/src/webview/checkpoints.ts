/**
 * The chat's checkpoint cards: "Rewind to here"'s confirmation (the files it restores, the
 * files changed since Tether wrote them with their diffs, and the choice to overwrite them)
 * and a turn's "Files changed" with unified diffs (SPEC §3.40). Plain DOM, text only.
 */
import type { RewindPreview, ViewMessage } from "../shared/messages";
import type { ChangedFile } from "../protocol/schema";
import { h } from "./dom";

function fileList(cls: string, label: string, items: HTMLElement[]): HTMLElement | null {
  if (!items.length) return null;
  return h("div", { class: cls }, h("div", { class: "card-label" }, label), h("ul", null, ...items));
}

/** The confirmation of a rewind; the buttons post `rewindConfirm` or `rewindCancel`. */
export function rewindCard(p: RewindPreview, post: (message: ViewMessage) => void): HTMLElement {
  const what = p.restore === "both" ? "the conversation and the files" : p.restore === "files" ? "the files" : "the conversation";
  const conflicts = p.conflicts.length > 0;
  const confirm = h("vscode-button", { class: "rewind-confirm-button" }, conflicts ? "Overwrite and rewind" : "Rewind");
  const cancel = h("vscode-button", { class: "rewind-cancel-button", secondary: true }, "Cancel");
  const card = h(
    "div",
    { class: "rewind-confirm", role: "dialog", "aria-label": "Rewind" },
    h("div", { class: "card-title" }, `Rewind ${what} to before “${p.message}”?`),
    p.restore !== "files" ? h("div", { class: "rewind-hidden" }, `${p.hiddenMessages} message(s) leave the conversation (they stay stored).`) : null,
    fileList("rewind-restored", "Files restored", p.restored.map((path) => h("li", null, path))),
    p.restore !== "conversation" && !p.restored.length ? h("div", { class: "rewind-none" }, "No files to restore.") : null,
    fileList(
      "rewind-conflicts",
      "Changed since Tether wrote them (overwritten only if you choose so)",
      p.conflicts.map((c) => h("li", null, h("span", { class: "path" }, c.path), h("pre", { class: "diff" }, c.diff))),
    ),
    fileList("rewind-skipped", "Cannot be restored", p.skipped.map((s) => h("li", null, `${s.path}: ${s.reason}`))),
    h("div", { class: "card-buttons" }, confirm, cancel),
  );
  confirm.addEventListener("click", () => {
    card.remove();
    post({ type: "rewindConfirm", token: p.token, force: conflicts });
  });
  cancel.addEventListener("click", () => {
    card.remove();
    post({ type: "rewindCancel", token: p.token });
  });
  return card;
}

/** A turn's changed files, each with its status and diff; closed with its button. */
export function changesCard(turn: number | null, files: ChangedFile[]): HTMLElement {
  const close = h("button", { class: "changes-close", type: "button", title: "Close" }, "×");
  const card = h(
    "div",
    { class: "changes-card" },
    h("div", { class: "card-title" }, turn === null ? "Files changed in this session" : `Files changed by turn ${turn}`, close),
    files.length === 0 ? h("div", { class: "changes-none" }, "No files changed.") : null,
    ...files.map((f) =>
      h(
        "details",
        { class: "changed-file", open: true, "data-status": f.status },
        h("summary", null, h("span", { class: "change-status" }, f.status), " ", h("span", { class: "path" }, f.path)),
        f.note ? h("div", { class: "change-note" }, f.note) : null,
        h("pre", { class: "diff" }, f.diff || "(binary or not recorded)"),
      ),
    ),
  );
  close.addEventListener("click", () => card.remove());
  return card;
}
