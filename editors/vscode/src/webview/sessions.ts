/** The header: the current session's title, the session list (click to load) and "New". */
import type { SessionSummary, ViewMessage } from "../shared/messages";
import { h } from "./dom";

const relative = new Intl.RelativeTimeFormat("en", { numeric: "auto" });

/** "5 minutes ago", "yesterday", or the date for older sessions. */
export function updatedLabel(iso: string | null, now = Date.now()): string {
  if (!iso) return "";
  const then = Date.parse(iso);
  if (Number.isNaN(then)) return "";
  const seconds = Math.round((then - now) / 1000);
  const abs = Math.abs(seconds);
  if (abs < 60) return "just now";
  if (abs < 3600) return relative.format(Math.round(seconds / 60), "minute");
  if (abs < 86400) return relative.format(Math.round(seconds / 3600), "hour");
  if (abs < 7 * 86400) return relative.format(Math.round(seconds / 86400), "day");
  return new Date(then).toLocaleDateString("en", { month: "short", day: "numeric", year: "numeric" });
}

export class SessionHeader {
  readonly el: HTMLElement;
  private readonly details: HTMLDetailsElement;
  private readonly titleEl: HTMLElement;
  private readonly list: HTMLElement;
  private sessions: SessionSummary[] = [];
  private current: string | null = null;

  constructor(private readonly post: (message: ViewMessage) => void) {
    this.titleEl = h("span", { class: "session-title" }, "New chat");
    this.list = h("ul", { class: "session-list", "aria-label": "Sessions" });
    this.details = h(
      "details",
      { class: "sessions" },
      h("summary", { title: "Sessions" }, this.titleEl),
      this.list,
    );
    const newButton = h("vscode-button", { class: "new-session", secondary: true, title: "Start a new session" }, "New");
    newButton.addEventListener("click", () => this.post({ type: "newSession" }));
    this.el = h("header", { class: "topbar" }, this.details, newButton);
    this.list.addEventListener("click", (event) => {
      const item = (event.target as Element | null)?.closest<HTMLElement>("[data-session-id]");
      if (!item?.dataset.sessionId) return;
      this.details.open = false;
      this.post({ type: "loadSession", sessionId: item.dataset.sessionId });
    });
  }

  /** The list is open when there is nothing else to look at. */
  set open(open: boolean) {
    this.details.open = open;
  }

  setTitle(title: string | null): void {
    this.titleEl.textContent = title || "New chat";
  }

  setCurrent(sessionId: string | null): void {
    this.current = sessionId;
    this.render();
  }

  setSessions(sessions: SessionSummary[]): void {
    this.sessions = sessions;
    this.render();
  }

  /** The workspace folder of the current session, when the list knows it. */
  get cwd(): string | undefined {
    return this.sessions.find((s) => s.sessionId === this.current)?.cwd ?? this.sessions[0]?.cwd;
  }

  private render(): void {
    const now = Date.now();
    const items = this.sessions.map((s) =>
      h(
        "li",
        null,
        h(
          "button",
          {
            class: "session-item",
            type: "button",
            "data-session-id": s.sessionId,
            "aria-current": s.sessionId === this.current ? "true" : undefined,
          },
          h("span", { class: "session-item-title" }, s.title || "Untitled"),
          h("time", { class: "session-item-time", datetime: s.updatedAt ?? undefined, title: s.updatedAt ?? undefined }, updatedLabel(s.updatedAt, now)),
        ),
      ),
    );
    this.list.replaceChildren(...(items.length ? items : [h("li", { class: "session-empty" }, "No sessions yet.")]));
  }
}
