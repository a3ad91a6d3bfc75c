/**
 * The Tether chat view (a webview in the activity bar): loads the webview bundle under a
 * strict Content-Security-Policy and passes `HostMessage`s / `ViewMessage`s through.
 */
import * as vscode from "vscode";
import { randomBytes } from "node:crypto";
import type { HostMessage, ViewMessage } from "../shared/messages";
import { webviewHtml } from "../webview/html";

export const CHAT_VIEW_ID = "tether.chat";

export class ChatViewProvider implements vscode.WebviewViewProvider, vscode.Disposable {
  private view?: vscode.WebviewView;
  private readonly subscriptions: vscode.Disposable[] = [];

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly receive: (message: ViewMessage) => void,
  ) {}

  resolveWebviewView(view: vscode.WebviewView): void {
    this.view = view;
    const dist = vscode.Uri.joinPath(this.extensionUri, "dist");
    view.webview.options = { enableScripts: true, localResourceRoots: [dist] };
    view.webview.html = webviewHtml({
      cspSource: view.webview.cspSource,
      nonce: randomBytes(16).toString("hex"),
      scriptUri: view.webview.asWebviewUri(vscode.Uri.joinPath(dist, "webview.js")).toString(),
      styleUri: view.webview.asWebviewUri(vscode.Uri.joinPath(dist, "webview.css")).toString(),
    });
    this.subscriptions.push(
      view.webview.onDidReceiveMessage((message: ViewMessage) => this.receive(message)),
      view.onDidDispose(() => {
        if (this.view === view) this.view = undefined;
      }),
    );
  }

  /** The view is shown (not collapsed, its container not hidden). */
  get visible(): boolean {
    return this.view?.visible ?? false;
  }

  post(message: HostMessage): void {
    // a hidden view drops messages; it asks for a snapshot ("ready") when shown again
    void this.view?.webview.postMessage(message);
  }

  async reveal(): Promise<void> {
    if (this.view) this.view.show(true);
    else await vscode.commands.executeCommand(`${CHAT_VIEW_ID}.focus`);
  }

  dispose(): void {
    for (const s of this.subscriptions) s.dispose();
  }
}
