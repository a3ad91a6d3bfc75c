/** The status bar item: idle / streaming / waiting for approval, and the mode. */
import * as vscode from "vscode";
import type { Status } from "../shared/messages";
import { CHAT_VIEW_ID } from "./chatView";

const LOOK: Record<Status, { icon: string; text: string }> = {
  idle: { icon: "$(comment-discussion)", text: "idle" },
  streaming: { icon: "$(loading~spin)", text: "streaming" },
  waiting: { icon: "$(bell-dot)", text: "waiting for approval" },
};

export class TetherStatusBar implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Left, 100);

  constructor() {
    this.item.name = "Tether";
    this.item.command = `${CHAT_VIEW_ID}.focus`;
    this.show("idle", null, undefined);
  }

  show(status: Status, modeId: string | null, folder: string | undefined): void {
    const look = LOOK[status];
    this.item.text = `${look.icon} Tether: ${look.text}`;
    this.item.tooltip = [`Tether is ${look.text}`, modeId && `mode: ${modeId}`, folder && `folder: ${folder}`]
      .filter(Boolean)
      .join("\n");
    this.item.backgroundColor = status === "waiting" ? new vscode.ThemeColor("statusBarItem.warningBackground") : undefined;
    this.item.show();
  }

  get text(): string {
    return this.item.text;
  }

  dispose(): void {
    this.item.dispose();
  }
}
