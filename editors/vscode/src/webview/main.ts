/**
 * The chat webview's entry: wires the host's messages (src/shared/messages.ts) to the
 * header, the transcript and the composer, posts the user's actions back, and keeps the
 * view state with `vscode.setState` so a reloaded view shows the same chat.
 */
import "./elements";
import type { HostMessage, ViewMessage } from "../shared/messages";
import { Composer, type SlashCommand } from "./composer";
import { h } from "./dom";
import { OptionPickers } from "./options";
import { QueueList } from "./queue";
import { SessionHeader } from "./sessions";
import { restoredState, type ViewState } from "./state";
import { Transcript } from "./transcript";

interface VsCodeApi {
  postMessage(message: ViewMessage): void;
  getState(): unknown;
  setState(state: ViewState): void;
}

declare function acquireVsCodeApi(): VsCodeApi;

const vscode = acquireVsCodeApi();
const state = restoredState(vscode.getState());
const post = (message: ViewMessage): void => vscode.postMessage(message);

// ---- saving: at most twice a second, never per delta
let saveTimer: ReturnType<typeof setTimeout> | undefined;
function save(): void {
  saveTimer = undefined;
  state.entries = transcript.entries;
  vscode.setState(state);
}
function scheduleSave(): void {
  saveTimer ??= setTimeout(save, 500);
}

const header = new SessionHeader(post);
const pickers = new OptionPickers(post);

function setOptions(options: ViewState["options"]): void {
  state.options = options;
  pickers.set(options);
  const mode = options.find((o) => o.id === "mode")?.currentValue;
  if (mode) {
    state.modeId = mode;
    composer.setMode(mode);
  }
}

function pathLabel(path: string): string {
  const cwd = header.cwd;
  if (cwd && path === cwd) return `${cwd.split("/").pop() || cwd}/`;
  if (cwd && path.startsWith(`${cwd}/`)) return path.slice(cwd.length + 1);
  return path.split("/").pop() || path;
}

const transcript = new Transcript(
  {
    post,
    changed() {
      emptyHint.hidden = !transcript.isEmpty || !noFolder.hidden;
      scheduleSave();
    },
    title(title) {
      state.title = title;
      header.setTitle(title);
    },
    mode(modeId) {
      state.modeId = modeId;
      composer.setMode(modeId);
    },
    turnEnded() {
      scheduleSave();
    },
  },
  pathLabel,
);

const composer = new Composer(post, (draft) => {
  state.draft = draft;
  scheduleSave();
});

const queueList = new QueueList(post);

const emptyHint = h(
  "div",
  { class: "empty-hint" },
  h("p", null, "Ask Tether about this workspace: it reads, edits and runs commands, and asks before it changes anything."),
  h("p", null, "Earlier sessions are listed above."),
);

// shown while the window has no folder; not part of the saved state (the host says it again)
const noFolder = h("p", { class: "no-folder", hidden: true }, "Open a folder to chat with Tether.");

document.getElementById("app")?.replaceChildren(
  header.el,
  pickers.el,
  h("main", { class: "scroll" }, noFolder, emptyHint, transcript.el),
  queueList.el,
  composer.el,
);

function showSession(sessionId: string | null, title: string | null): void {
  state.sessionId = sessionId;
  state.title = title;
  header.setCurrent(sessionId);
  header.setTitle(title);
}

// ---- restore what the view showed before a reload
showSession(state.sessionId, state.title);
header.setSessions(state.sessions);
composer.setModes(state.modes, state.modeId);
pickers.set(state.options);
composer.setStatus(state.status);
composer.draft = state.draft;
transcript.restore(state.entries);
header.open = transcript.isEmpty && state.sessions.length > 0;

function onMessage(message: HostMessage): void {
  switch (message.type) {
    case "init":
      noFolder.hidden = true;
      composer.setFolder(true);
      emptyHint.hidden = !transcript.isEmpty;
      state.sessions = message.sessions;
      state.modes = message.modes;
      state.modeId = message.modeId;
      header.setSessions(message.sessions);
      if (message.sessionId !== state.sessionId) {
        transcript.clear();
        setOptions([]);
        showSession(message.sessionId, message.sessions.find((s) => s.sessionId === message.sessionId)?.title ?? null);
      }
      composer.setModes(message.modes, message.modeId);
      setStatus(message.status);
      header.open = transcript.isEmpty && message.sessions.length > 0;
      break;
    case "sessions": {
      const cwd = header.cwd;
      state.sessions = message.sessions;
      header.setSessions(message.sessions);
      if (header.cwd !== cwd) transcript.relabel();
      break;
    }
    case "session":
      transcript.clear();
      queueList.set([]);
      if (message.sessionId !== state.sessionId) setOptions([]); // until the session's own arrive
      showSession(message.sessionId, message.title);
      if (message.modeId) {
        state.modeId = message.modeId;
        composer.setMode(message.modeId);
      }
      header.open = false;
      break;
    case "userMessage":
      transcript.userMessage(message.text);
      break;
    case "update":
      if (message.sessionId !== state.sessionId && state.sessionId !== null) break;
      if (message.update.sessionUpdate === "available_commands_update") {
        composer.setCommands((message.update.availableCommands as SlashCommand[] | undefined) ?? []);
      } else if (message.update.sessionUpdate === "config_option_update" && Array.isArray(message.update.configOptions)) {
        setOptions(message.update.configOptions as ViewState["options"]);
      } else if (message.update.sessionUpdate === "current_mode_update" && typeof message.update.currentModeId === "string") {
        state.modeId = message.update.currentModeId;
        composer.setMode(message.update.currentModeId);
      } else {
        transcript.update(message.update);
      }
      break;
    case "turnEnded":
      transcript.turnEnded(message.stopReason, message.usage);
      break;
    case "permission":
      transcript.permission(message.prompt);
      break;
    case "permissionClosed":
      transcript.permissionClosed(message.requestId);
      break;
    case "mode":
      state.modeId = message.modeId;
      composer.setMode(message.modeId);
      break;
    case "options":
      setOptions(message.options);
      break;
    case "status":
      setStatus(message.status);
      break;
    case "error":
      transcript.error(message.message);
      break;
    case "noFolder":
      noFolder.hidden = false;
      composer.setFolder(false);
      emptyHint.hidden = true;
      break;
    case "context":
      composer.addContext(message.label, message.text);
      break;
    case "queue":
      queueList.set(message.queue);
      break;
    case "rewindPreview":
      transcript.rewindPreview(message.preview);
      break;
    case "notice":
      transcript.notice(message.text);
      break;
    case "changes":
      transcript.changes(message.turn, message.files);
      break;
  }
  scheduleSave();
}

function setStatus(status: ViewState["status"]): void {
  state.status = status;
  composer.setStatus(status);
}

window.addEventListener("message", (event: MessageEvent<HostMessage>) => {
  if (event.data && typeof event.data === "object" && typeof event.data.type === "string") onMessage(event.data);
});
post({ type: "ready" });
