/**
 * The extension's composition root: one WorkspaceAgent per workspace folder, the chat
 * view showing the current one, the diff editor for edits, the status bar, commands.
 */
import * as vscode from "vscode";
import type { ChatHost } from "../core/controller";
import { DaemonStartError } from "../core/daemon";
import type { HostMessage, PermissionPrompt, ViewMessage } from "../shared/messages";
import { statusOf } from "../core/state";
import { askInNotification, isEdit } from "./approvals";
import { CHAT_VIEW_ID, ChatViewProvider } from "./chatView";
import { registerCommands } from "./commands";
import { DIFF_SCHEME, EditReview } from "./editReview";
import { openLocation } from "./locations";
import { readSettings } from "./settings";
import { TetherStatusBar } from "./statusBar";
import { applyWorkspaceEdit } from "./workspaceEdits";
import { WorkspaceAgent } from "./workspaceAgent";

export class TetherExtension implements vscode.Disposable {
  readonly output: vscode.OutputChannel;
  readonly view: ChatViewProvider;
  readonly review = new EditReview();
  readonly statusBar = new TetherStatusBar();
  readonly agents = new Map<string, WorkspaceAgent>();
  private currentAgent?: WorkspaceAgent;
  /** the chat view has loaded (said "ready") at least once: the current folder's daemon runs */
  private viewLoaded = false;
  private readonly subscriptions: vscode.Disposable[] = [];

  constructor(readonly context: vscode.ExtensionContext) {
    this.output = vscode.window.createOutputChannel("Tether");
    this.view = new ChatViewProvider(context.extensionUri, (message) => this.onViewMessage(message));
    this.subscriptions.push(
      this.output,
      this.view,
      this.review,
      this.statusBar,
      vscode.window.registerWebviewViewProvider(CHAT_VIEW_ID, this.view),
      vscode.workspace.registerTextDocumentContentProvider(DIFF_SCHEME, this.review),
      vscode.workspace.onDidChangeWorkspaceFolders((e) => {
        for (const folder of e.removed) void this.removeFolder(folder);
        for (const folder of e.added) this.addFolder(folder);
      }),
      vscode.workspace.onDidChangeConfiguration((e) => this.onConfigurationChanged(e)),
      ...registerCommands(this),
    );
    for (const folder of vscode.workspace.workspaceFolders ?? []) this.addFolder(folder);
  }

  get current(): WorkspaceAgent | undefined {
    return this.currentAgent;
  }

  /** The agent of the folder holding `uri` (or the current one). */
  agentFor(uri?: vscode.Uri): WorkspaceAgent | undefined {
    const folder = uri && vscode.workspace.getWorkspaceFolder(uri);
    return (folder && this.agents.get(folder.uri.toString())) ?? this.currentAgent;
  }

  agentById(id: number): WorkspaceAgent | undefined {
    return [...this.agents.values()].find((a) => a.id === id);
  }

  /** Shows this folder's chat in the view. */
  setCurrent(agent: WorkspaceAgent): void {
    if (agent === this.currentAgent) return;
    this.currentAgent = agent;
    for (const message of agent.controller.snapshot()) this.view.post(message);
    this.updateStatusBar();
  }

  async stop(): Promise<void> {
    await Promise.all([...this.agents.values()].map((a) => a.stop()));
  }

  dispose(): void {
    for (const agent of this.agents.values()) agent.dispose();
    this.agents.clear();
    for (const s of this.subscriptions) s.dispose();
  }

  private addFolder(folder: vscode.WorkspaceFolder): void {
    const key = folder.uri.toString();
    if (this.agents.has(key)) return;
    const agent = new WorkspaceAgent(folder, {
      output: this.output,
      secrets: this.context.secrets,
      extensionVersion: String(this.context.extension?.packageJSON?.version ?? "0.0.0"),
      host: (a) => this.hostFor(a),
    });
    this.agents.set(key, agent);
    agent.controller.onMessage((message) => this.onHostMessage(agent, message));
    if (this.currentAgent) {
      this.updateStatusBar();
      return;
    }
    // the first folder: a view that has been showing "open a folder" becomes this folder's chat
    this.setCurrent(agent);
    if (this.viewLoaded) void agent.controller.start();
  }

  private async removeFolder(folder: vscode.WorkspaceFolder): Promise<void> {
    const key = folder.uri.toString();
    const agent = this.agents.get(key);
    if (!agent) return;
    this.agents.delete(key);
    if (this.currentAgent === agent) {
      this.currentAgent = undefined;
      const next = this.agents.values().next().value;
      if (next) this.setCurrent(next);
      else {
        this.view.post({ type: "noFolder" });
        this.updateStatusBar();
      }
    }
    await agent.stop();
    agent.dispose();
  }

  private hostFor(agent: WorkspaceAgent): ChatHost {
    return {
      applyEdit: (params) => applyWorkspaceEdit(params, { save: readSettings(agent.folder.uri).saveEditedFiles }),
      permissionAsked: (prompt) => void this.permissionAsked(agent, prompt),
      permissionClosed: (prompt) => void this.review.close(agent.id, prompt.requestId),
      reportError: (message, error) => void this.reportError(agent, message, error),
    };
  }

  private async reportError(agent: WorkspaceAgent, message: string, error: unknown): Promise<void> {
    if (error instanceof DaemonStartError) {
      // the chat cannot work at all: say so wherever the user is looking
      const choice = await vscode.window.showErrorMessage(message, "Open Settings", "Show Log");
      if (choice === "Open Settings") await vscode.commands.executeCommand("workbench.action.openSettings", "tether.path");
      else if (choice) this.output.show(true);
      return;
    }
    if (this.view.visible && agent === this.currentAgent) return; // shown in the chat
    const choice = await vscode.window.showErrorMessage(message, "Show Log");
    if (choice) this.output.show(true);
  }

  private async permissionAsked(agent: WorkspaceAgent, prompt: PermissionPrompt): Promise<void> {
    const inView = this.view.visible && agent === this.currentAgent && prompt.sessionId === agent.controller.state.sessionId;
    if (isEdit(prompt)) {
      this.review.add(agent.id, prompt);
      if (readSettings(agent.folder.uri).openDiffAutomatically) {
        await this.review.open(agent.id, prompt.requestId);
      } else if (!inView) {
        const choice = await vscode.window.showInformationMessage(`Tether: ${prompt.title}`, "Review Diff", "Open Chat");
        if (choice === "Review Diff") await this.review.open(agent.id, prompt.requestId);
        else if (choice === "Open Chat") {
          this.setCurrent(agent);
          await this.view.reveal();
        }
      }
      return;
    }
    if (inView) return; // the tool card shows the buttons
    const answer = await askInNotification(prompt);
    if (answer) agent.controller.answerPermission(prompt.requestId, answer);
    else if (agent === this.currentAgent) await this.view.reveal(); // dismissed: answer it in the view
  }

  private onHostMessage(agent: WorkspaceAgent, message: HostMessage): void {
    if (agent !== this.currentAgent) return;
    this.view.post(message);
    if (message.type === "status" || message.type === "mode" || message.type === "session" || message.type === "init") this.updateStatusBar();
  }

  private updateStatusBar(): void {
    const agent = this.currentAgent;
    const state = agent?.controller.state;
    this.statusBar.show(state ? statusOf(state) : "idle", state?.modeId ?? null, agent?.folder.name);
  }

  private onViewMessage(message: ViewMessage): void {
    if (message.type === "ready") this.viewLoaded = true;
    const agent = this.currentAgent;
    if (!agent) {
      if (message.type === "ready") this.view.post({ type: "noFolder" });
      return;
    }
    switch (message.type) {
      case "ready":
        for (const m of agent.controller.snapshot()) this.view.post(m);
        void agent.controller.start();
        return;
      case "openDiff":
        void this.review.open(agent.id, message.requestId, message.path).then((shown) => {
          if (!shown) void vscode.window.showInformationMessage("That edit is no longer waiting for approval.");
        });
        return;
      case "openLocation":
        void openLocation(message.path, message.line);
        return;
      case "copy":
        void vscode.env.clipboard.writeText(message.text);
        return;
      default:
        agent.controller.handleViewMessage(message);
    }
  }

  private onConfigurationChanged(e: vscode.ConfigurationChangeEvent): void {
    const restartKeys = ["path", "args", "provider", "model", "baseUrl", "script"];
    if (!restartKeys.some((k) => e.affectsConfiguration(`tether.${k}`))) return;
    // a chat whose daemon could not start (tether.path wrong, or the settings not there yet) tries again
    const current = this.currentAgent;
    if (current && !current.started && this.viewLoaded) void current.controller.start();
    const running = [...this.agents.values()].filter((a) => a.started);
    if (!running.length) return;
    void vscode.window
      .showInformationMessage("Tether settings changed: restart Tether to use them.", "Restart Tether")
      .then((choice) => {
        if (choice) for (const agent of running) void agent.restart();
      });
  }
}
