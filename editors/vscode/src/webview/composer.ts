/**
 * The bottom of the view: what Tether is doing (with the stop button), the editor context
 * added to the next prompt, the prompt box, the mode picker and Send.
 */
import type { ModeInfo, Status, ViewMessage } from "../shared/messages";
import { h } from "./dom";

const STATUS_TEXT: Record<Status, string> = {
  idle: "",
  streaming: "Tether is working…",
  waiting: "Waiting for your approval",
};

interface Context {
  label: string;
  text: string;
}

type Select = HTMLElement & { value: string; position: string };

/** A slash command of `available_commands_update` (SPEC §4.11). */
export interface SlashCommand {
  name: string;
  description: string;
  input?: { hint: string } | null;
}

export class Composer {
  readonly el: HTMLElement;
  private readonly statusRow: HTMLElement;
  private readonly statusText: HTMLElement;
  private readonly stop: HTMLElement;
  private readonly chips: HTMLElement;
  private readonly input: HTMLTextAreaElement;
  private readonly modeSelect: Select;
  private readonly send: HTMLElement;
  private readonly steer: HTMLElement;
  private readonly suggestions: HTMLElement;
  private commands: SlashCommand[] = [];
  private contexts: Context[] = [];
  private status: Status = "idle";
  private hasFolder = true; // without a workspace folder there is no daemon to send to

  constructor(
    private readonly post: (message: ViewMessage) => void,
    private readonly draftChanged: (draft: string) => void,
  ) {
    this.statusText = h("span", { class: "status-text", role: "status" });
    this.stop = h("vscode-button", { class: "stop", secondary: true, title: "Stop this turn" }, "Stop");
    this.stop.addEventListener("click", () => this.post({ type: "cancel" }));
    this.statusRow = h("div", { class: "status-row" }, h("span", { class: "spinner", "aria-hidden": "true" }), this.statusText, this.stop);
    this.chips = h("div", { class: "context-chips" });
    this.input = h("textarea", { class: "prompt-input", rows: "3", placeholder: "Ask Tether… (Enter to send, Shift+Enter for a new line)", "aria-label": "Prompt" });
    this.input.addEventListener("keydown", (event) => {
      if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
        event.preventDefault();
        // Alt+Enter while a turn runs: into that turn (steer); Enter: queued after it
        this.submit(event.altKey && this.status !== "idle");
      }
    });
    this.input.addEventListener("input", () => {
      this.draftChanged(this.input.value);
      this.renderSuggestions();
    });
    this.suggestions = h("ul", { class: "slash-commands", role: "listbox", "aria-label": "Slash commands" });
    this.suggestions.hidden = true;
    this.modeSelect = h("vscode-single-select", { class: "mode-picker", "aria-label": "Mode", title: "Mode: what Tether may do without asking" }) as Select;
    this.modeSelect.position = "above";
    this.modeSelect.addEventListener("change", () => {
      if (this.modeSelect.value) this.post({ type: "setMode", modeId: this.modeSelect.value });
    });
    this.send = h("vscode-button", { class: "send", title: "Send (Enter)" }, "Send");
    this.send.addEventListener("click", () => this.submit());
    this.steer = h("vscode-button", { class: "steer", secondary: true, title: "Send into the running turn: the agent sees it after its current step (Alt+Enter)" }, "Send into the running turn");
    this.steer.addEventListener("click", () => this.submit(true));
    this.el = h(
      "footer",
      { class: "composer" },
      this.statusRow,
      this.chips,
      this.suggestions,
      this.input,
      h("div", { class: "composer-row" }, this.modeSelect, h("span", { class: "spacer" }), this.steer, this.send),
    );
    this.setStatus("idle");
  }

  set draft(text: string) {
    this.input.value = text;
  }

  focus(): void {
    this.input.focus();
  }

  setStatus(status: Status): void {
    this.status = status;
    this.statusRow.hidden = status === "idle";
    this.statusRow.dataset.status = status;
    this.statusText.textContent = STATUS_TEXT[status];
    // while a turn runs, Send queues the prompt (it runs when the turn ends)
    this.send.textContent = status === "idle" ? "Send" : "Queue";
    this.send.setAttribute("title", status === "idle" ? "Send (Enter)" : "Send after this turn (Enter): it waits in the queue");
    this.steer.hidden = status === "idle";
  }

  /** No workspace folder: Send and Enter do nothing (the view says to open a folder). */
  setFolder(hasFolder: boolean): void {
    this.hasFolder = hasFolder;
    this.send.toggleAttribute("disabled", !hasFolder);
    this.steer.toggleAttribute("disabled", !hasFolder);
    this.send.setAttribute("title", hasFolder ? "Send (Enter)" : "Open a folder to chat with Tether");
  }

  setModes(modes: ModeInfo[], modeId: string | null): void {
    this.modeSelect.replaceChildren(
      ...modes.map((m) => h("vscode-option", { value: m.id, description: m.description, selected: m.id === modeId }, m.name)),
    );
    // no session yet: no mode to show (the picker would show its first option)
    this.modeSelect.hidden = modes.length === 0 || !modeId;
    if (modeId) this.setMode(modeId);
  }

  setMode(modeId: string): void {
    this.modeSelect.hidden = this.modeSelect.children.length === 0;
    for (const option of Array.from(this.modeSelect.children) as HTMLElement[]) {
      option.toggleAttribute("selected", option.getAttribute("value") === modeId);
    }
    this.modeSelect.value = modeId;
  }

  /** The daemon's `/` commands, offered while the prompt is `/` and a partial name. */
  setCommands(commands: SlashCommand[]): void {
    this.commands = commands;
    this.renderSuggestions();
  }

  private renderSuggestions(): void {
    const typed = /^\/([\w.:-]*)$/.exec(this.input.value);
    const matching = typed ? this.commands.filter((c) => c.name.startsWith(typed[1])) : [];
    this.suggestions.replaceChildren(
      ...matching.map((c) => {
        const hint = c.input?.hint ? ` <${c.input.hint}>` : "";
        const item = h("li", { class: "slash-command", role: "option", title: c.description },
          h("span", { class: "slash-name" }, `/${c.name}${hint}`), h("span", { class: "slash-description" }, c.description));
        item.addEventListener("click", () => {
          this.input.value = `/${c.name} `;
          this.draftChanged(this.input.value);
          this.renderSuggestions();
          this.focus();
        });
        return item;
      }),
    );
    this.suggestions.hidden = matching.length === 0;
  }

  addContext(label: string, text: string): void {
    this.contexts.push({ label, text });
    this.renderChips();
    this.focus();
  }

  private renderChips(): void {
    this.chips.replaceChildren(
      ...this.contexts.map((c, i) => {
        const remove = h("button", { class: "chip-remove", type: "button", title: "Remove", "aria-label": `Remove ${c.label}` }, "×");
        remove.addEventListener("click", () => {
          this.contexts.splice(i, 1);
          this.renderChips();
        });
        return h("span", { class: "context-chip", title: c.text }, h("span", { class: "chip-label" }, c.label), remove);
      }),
    );
    this.chips.hidden = this.contexts.length === 0;
  }

  private submit(steer = false): void {
    const typed = this.input.value.trim();
    if (!this.hasFolder || (!typed && this.contexts.length === 0)) return;
    // a slash command must open the prompt (SPEC §4.11): the editor context follows it
    const contexts = this.contexts.map((c) => c.text);
    const parts = typed.startsWith("/") ? [typed, ...contexts] : [...contexts, typed];
    const text = parts.filter(Boolean).join("\n\n");
    this.post(steer ? { type: "prompt", text, steer: true } : { type: "prompt", text });
    this.input.value = "";
    this.contexts = [];
    this.renderChips();
    this.draftChanged("");
  }
}
