/**
 * "Tether: Approval Rules": the workspace's approval rules in a quick pick (SPEC §3.18),
 * the ones the user stored first with what each covers; picking one asks, then removes it
 * (SPEC §3.19). Built-in and config rules are listed but cannot be removed here.
 */
import * as vscode from "vscode";
import type { ChatController } from "../core/controller";
import type { Rule } from "../protocol/schema";

/** One rule as the quick pick shows it. */
export function ruleLabel(rule: Rule): string {
  const covers = rule.scope ?? `${rule.kind} ${rule.pattern}`;
  return rule.id === null ? `${rule.decision}  ${covers}` : `#${rule.id}  ${rule.decision}  ${covers}`;
}

export async function pickRule(controller: ChatController): Promise<void> {
  let rules: Rule[];
  try {
    rules = await controller.rules();
  } catch (err) {
    void vscode.window.showErrorMessage(`Tether: ${err instanceof Error ? err.message : String(err)}`);
    return;
  }
  const stored = rules.filter((r) => r.id !== null);
  const ordered = [...stored, ...rules.filter((r) => r.id === null)];
  const picked = await vscode.window.showQuickPick(
    ordered.map((rule) => ({
      label: ruleLabel(rule),
      description: rule.id === null ? `${rule.source}: not removable here` : "yours: pick to remove",
      rule,
    })),
    { title: "Tether approval rules", placeHolder: stored.length ? "Pick a rule you stored to remove it" : "No rules you stored yet" },
  );
  const rule = picked?.rule;
  if (!rule) return;
  if (rule.id === null) {
    void vscode.window.showInformationMessage(`Tether: ${rule.source} rules cannot be removed here; change your config.`);
    return;
  }
  const remove = `Remove rule #${rule.id}`;
  const answer = await vscode.window.showWarningMessage(
    `Tether: remove ${ruleLabel(rule)}?`,
    { modal: true, detail: "What it allowed is asked again." },
    remove,
  );
  if (answer !== remove) return;
  try {
    await controller.removeRule(rule.id);
    void vscode.window.showInformationMessage(`Tether: rule #${rule.id} removed; what it allowed is asked again.`);
  } catch (err) {
    void vscode.window.showErrorMessage(`Tether: ${err instanceof Error ? err.message : String(err)}`);
  }
}
