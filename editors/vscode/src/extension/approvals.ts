/**
 * Approvals outside the chat view: a proposed edit opens in the diff editor; a command
 * (or anything else) is asked in a modal notification when the chat view cannot show it.
 */
import * as vscode from "vscode";
import { commandText, diffBlocks, type PermissionAnswer } from "../core/permissions";
import type { PermissionPrompt } from "../shared/messages";

export const NOTIFICATION_CHOICES: Record<string, string> = {
  "Allow once": "allow_once",
  "Always allow": "allow_always",
  Reject: "reject_once",
};

export function isEdit(prompt: PermissionPrompt): boolean {
  return diffBlocks(prompt).length > 0;
}

/** Asks in a modal notification; undefined when the user dismissed it (the prompt stays open). */
export async function askInNotification(prompt: PermissionPrompt): Promise<PermissionAnswer | undefined> {
  const what = commandText(prompt) ?? prompt.title;
  // what "Always allow" stores and allows, before it is picked (the button's title is its key)
  const always = prompt.options.find((o) => o.optionId === "allow_always")?.name;
  const scope = always && always !== "Allow always" ? `"Always allow": ${always}` : undefined;
  const detail = [what, prompt.reason && `(${prompt.reason})`, scope].filter(Boolean).join("\n");
  const choice = await vscode.window.showWarningMessage(
    `Tether: ${prompt.title}`,
    { modal: true, detail },
    ...Object.keys(NOTIFICATION_CHOICES),
  );
  return choice ? { optionId: NOTIFICATION_CHOICES[choice] } : undefined;
}
