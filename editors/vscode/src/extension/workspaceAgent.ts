/**
 * One workspace folder's Tether: its daemon (started on demand, restarted on crash with
 * a notice), its chat controller and its document sync.
 */
import * as vscode from "vscode";
import { ChatController, type ChatHost } from "../core/controller";
import { DaemonSupervisor } from "../core/daemon";
import { initializeParams } from "../core/handshake";
import { daemonLaunch, initializationOptions, readSettings } from "./settings";
import { DocumentSync } from "./documentSync";
import { openText } from "./workspaceEdits";

export interface AgentEnvironment {
  output: vscode.OutputChannel;
  secrets: vscode.SecretStorage;
  extensionVersion: string;
  /** approvals, edits and errors, answered by the extension for this agent */
  host: (agent: WorkspaceAgent) => ChatHost;
}

let nextAgentId = 1;

export class WorkspaceAgent implements vscode.Disposable {
  readonly id = nextAgentId++;
  readonly supervisor: DaemonSupervisor;
  readonly controller: ChatController;
  private readonly documents: DocumentSync;
  private readonly subscriptions: vscode.Disposable[] = [];

  constructor(
    readonly folder: vscode.WorkspaceFolder,
    env: AgentEnvironment,
  ) {
    const root = folder.uri.fsPath;
    const log = (line: string) => env.output.appendLine(`[${folder.name}] ${line}`);
    this.supervisor = new DaemonSupervisor({
      launch: () => daemonLaunch(readSettings(folder.uri), root, env.secrets),
      initializeParams: () =>
        initializeParams({
          rootPath: root,
          folderName: folder.name,
          clientName: "tether-vscode",
          clientVersion: env.extensionVersion,
          initializationOptions: initializationOptions(readSettings(folder.uri)),
        }),
      log,
    });
    this.controller = new ChatController({
      cwd: root,
      connect: () => this.supervisor.ensureStarted(),
      host: env.host(this),
      defaultMode: readSettings(folder.uri).defaultMode,
    });
    this.documents = new DocumentSync(folder, () => this.supervisor.client);
    this.subscriptions.push(
      this.documents,
      this.supervisor.onStarted(({ client }) => {
        client.setTextReader(openText); // v2's diffs are patches of what the daemon read
        this.controller.attach(client);
        this.documents.resync();
      }),
      this.supervisor.onCrashed((crash) => {
        const how = crash.signal ? `signal ${crash.signal}` : `exit code ${crash.code}`;
        if (crash.willRestart) {
          void vscode.window
            .showWarningMessage(`Tether stopped unexpectedly in ${folder.name} (${how}); restarting it.`, "Show Log")
            .then((choice) => choice && env.output.show(true));
        } else {
          void vscode.window
            .showErrorMessage(`Tether keeps stopping in ${folder.name} (${how}); it was not restarted.`, "Restart", "Show Log")
            .then((choice) => {
              if (choice === "Restart") void this.restart();
              else if (choice) env.output.show(true);
            });
        }
      }),
    );
  }

  get started(): boolean {
    return this.supervisor.client !== undefined;
  }

  async restart(): Promise<void> {
    try {
      await this.supervisor.restart();
    } catch (err) {
      void vscode.window.showErrorMessage(err instanceof Error ? err.message : String(err));
    }
  }

  async stop(): Promise<void> {
    await this.supervisor.stop();
  }

  dispose(): void {
    for (const s of this.subscriptions) s.dispose();
    this.controller.dispose();
    this.supervisor.dispose();
  }
}
