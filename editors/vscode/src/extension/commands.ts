/** The `tether.*` commands (palette, view title, editor title of a proposed edit). */
import * as vscode from "vscode";
import { acceptedHunksFrom } from "../core/permissions";
import type { HunkRef } from "../shared/messages";
import { API_KEY_SECRET } from "./settings";
import type { TetherExtension } from "./tetherExtension";
import { selectionContext, selectionLabel } from "./locations";
import { pickRule } from "./rules";

export function registerCommands(ext: TetherExtension): vscode.Disposable[] {
  const command = (id: string, run: (...args: never[]) => unknown) => vscode.commands.registerCommand(id, run);
  const current = () => {
    const agent = ext.current;
    if (!agent) void vscode.window.showInformationMessage("Open a folder to use Tether.");
    return agent;
  };

  /** Answers the approval shown in the diff editor (or the only edit waiting). */
  const answerEdit = (optionId: string) => (uri?: vscode.Uri) => {
    const target = ext.review.target(uri);
    if (!target) {
      void vscode.window.showInformationMessage("No Tether edit is waiting for approval here.");
      return false;
    }
    return ext.agentById(target.agentId)?.controller.answerPermission(target.prompt.requestId, { optionId }) ?? false;
  };

  return [
    command("tether.newSession", async () => {
      const agent = current();
      if (!agent) return;
      await ext.view.reveal();
      await agent.controller.newSession();
    }),

    command("tether.sessions", async () => {
      const agent = current();
      if (!agent) return;
      const sessions = await agent.controller.refreshSessions().catch((err: unknown) => {
        void vscode.window.showErrorMessage(err instanceof Error ? err.message : String(err));
        return undefined;
      });
      if (!sessions) return;
      if (!sessions.length) {
        void vscode.window.showInformationMessage(`No Tether sessions in ${agent.folder.name} yet.`);
        return;
      }
      const picked = await vscode.window.showQuickPick(
        sessions.map((s) => ({
          label: s.title ?? "(untitled)",
          description: s.updatedAt ? new Date(s.updatedAt).toLocaleString() : "",
          detail: s.sessionId,
          sessionId: s.sessionId,
        })),
        { title: "Tether sessions", placeHolder: "Open a session", matchOnDetail: true },
      );
      if (!picked) return;
      await ext.view.reveal();
      await agent.controller.loadSession(picked.sessionId);
    }),

    command("tether.cancel", async () => {
      await ext.current?.controller.cancel();
    }),

    command("tether.setMode", async () => {
      const agent = current();
      if (!agent) return;
      const state = agent.controller.state;
      const picked = await vscode.window.showQuickPick(
        state.modes.map((m) => ({
          label: m.name,
          description: m.id === state.modeId ? "current" : "",
          detail: m.description,
          modeId: m.id,
        })),
        { title: "Tether mode", placeHolder: "What may Tether do without asking?" },
      );
      if (picked) await agent.controller.setMode(picked.modeId);
    }),

    command("tether.setModel", async () => {
      const agent = current();
      if (!agent) return;
      if (!agent.controller.state.sessionId) await agent.controller.newSession();
      const option = agent.controller.option("model");
      if (!option) return;
      const picked = await vscode.window.showQuickPick(
        option.options.map((o) => ({
          label: o.name,
          description: [o.name !== o.value ? o.value : "", o.value === option.currentValue ? "current" : ""].filter(Boolean).join(" · "),
          detail: o.description ?? undefined,
          value: o.value,
        })),
        { title: "Tether model", placeHolder: "The model that answers, from the next turn" },
      );
      if (picked) await agent.controller.setOption("model", picked.value);
    }),

    command("tether.askAboutSelection", async () => {
      const editor = vscode.window.activeTextEditor;
      if (!editor || editor.selection.isEmpty) {
        void vscode.window.showInformationMessage("Select the code to ask Tether about first.");
        return;
      }
      const doc = editor.document;
      const agent = ext.agentFor(doc.uri);
      if (!agent) return;
      ext.setCurrent(agent);
      const { start, end } = editor.selection;
      // a selection ending at column 0 does not include that line
      const lastLine = end.character === 0 && end.line > start.line ? end.line - 1 : end.line;
      const label = selectionLabel(agent.folder.uri.fsPath, doc.uri.fsPath, start.line, lastLine);
      agent.controller.addContext({ label, text: selectionContext(label, doc.languageId, doc.getText(editor.selection)) });
      await ext.view.reveal();
    }),

    command("tether.rules", async () => {
      const agent = current();
      if (!agent) return;
      await pickRule(agent.controller);
    }),

    command("tether.acceptEdit", answerEdit("allow_once")),
    command("tether.rejectEdit", answerEdit("reject_once")),
    command("tether.alwaysEdit", answerEdit("allow_always")),

    command("tether.acceptHunks", async (uri?: vscode.Uri) => {
      const target = ext.review.target(uri);
      if (!target) {
        void vscode.window.showInformationMessage("No Tether edit is waiting for approval here.");
        return false;
      }
      const { prompt } = target;
      const many = new Set(prompt.hunks.map((h) => h.path)).size > 1;
      const items = prompt.hunks.map((hunk) => ({
        label: hunk.header,
        description: many ? vscode.workspace.asRelativePath(hunk.path) : `hunk ${hunk.index + 1} of ${prompt.hunks.length}`,
        picked: true,
        hunk,
      }));
      if (!items.length) {
        void vscode.window.showInformationMessage("This change cannot be split into hunks: accept or reject it whole.");
        return false;
      }
      const picked = await vscode.window.showQuickPick(items, {
        title: `Tether: ${prompt.title}`,
        placeHolder: "Keep the checked hunks (the others are not applied)",
        canPickMany: true,
      });
      if (!picked) return false;
      const kept: HunkRef[] = picked.map((p) => p.hunk);
      return (
        ext.agentById(target.agentId)?.controller.answerPermission(prompt.requestId, {
          optionId: "allow_once",
          acceptedHunks: acceptedHunksFrom(prompt, kept),
        }) ?? false
      );
    }),

    command("tether.setApiKey", async () => {
      const key = await vscode.window.showInputBox({
        title: "Tether API key",
        prompt: "Stored in VS Code's secret storage and given to the daemon as TETHER_API_KEY. Leave empty to remove it.",
        password: true,
        ignoreFocusOut: true,
      });
      if (key === undefined) return;
      if (key) await ext.context.secrets.store(API_KEY_SECRET, key);
      else await ext.context.secrets.delete(API_KEY_SECRET);
      const running = [...ext.agents.values()].filter((a) => a.started);
      const message = key ? "Tether API key saved." : "Tether API key removed.";
      if (!running.length) {
        void vscode.window.showInformationMessage(message);
        return;
      }
      const choice = await vscode.window.showInformationMessage(`${message} Restart Tether to use it.`, "Restart Tether");
      if (choice) await Promise.all(running.map((a) => a.restart()));
    }),

    command("tether.restart", async () => {
      await ext.current?.restart();
    }),

    command("tether.showLog", () => ext.output.show(true)),

    command("tether.selectFolder", async () => {
      const agents = [...ext.agents.values()];
      const picked = await vscode.window.showQuickPick(
        agents.map((a) => ({ label: a.folder.name, description: a.folder.uri.fsPath, agent: a })),
        { title: "Chat with Tether in folder" },
      );
      if (picked) ext.setCurrent(picked.agent);
    }),
  ];
}
