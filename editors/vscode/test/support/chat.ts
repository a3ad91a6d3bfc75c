/** A daemon supervisor and a chat controller wired the way the extension wires them. */
import { ChatController } from "../../src/core/controller";
import { DaemonSupervisor, type DaemonCrashed, type DaemonStarted } from "../../src/core/daemon";
import { initializeParams } from "../../src/core/handshake";
import type { HostMessage, PermissionPrompt } from "../../src/shared/messages";
import type { ApplyWorkspaceEditParams } from "../../src/protocol/schema";
import { applyEditToDisk, scriptedLaunch, waitFor, type Sandbox } from "./sandbox";

export interface ChatRig {
  supervisor: DaemonSupervisor;
  controller: ChatController;
  /** every message the chat view would have received */
  messages: HostMessage[];
  edits: ApplyWorkspaceEditParams[];
  asked: PermissionPrompt[];
  started: DaemonStarted[];
  crashed: DaemonCrashed[];
  log: string[];
  /** every session update as the daemon sent it (v2's own shapes on a v2 connection) */
  wire: Record<string, unknown>[];
  /** the next permission prompt after `index` messages */
  nextPrompt(after?: number): Promise<PermissionPrompt>;
  stop(): Promise<void>;
}

export function startChat(
  sandbox: Sandbox,
  options: { mode?: string; script?: string; init?: Record<string, unknown>; args?: string[]; env?: NodeJS.ProcessEnv } = {},
): ChatRig {
  const log: string[] = [];
  const supervisor = new DaemonSupervisor({
    launch: () => scriptedLaunch(sandbox, options.script, options.env, options.args),
    initializeParams: () =>
      initializeParams({
        rootPath: sandbox.workspace,
        initializationOptions: { ...(options.mode ? { mode: options.mode } : {}), ...(options.init ?? {}) },
      }),
    log: (line) => log.push(line),
    restartDelayMs: 50,
  });
  const rig: ChatRig = {
    supervisor,
    controller: undefined as unknown as ChatController,
    messages: [],
    edits: [],
    asked: [],
    started: [],
    crashed: [],
    log,
    wire: [],
    async nextPrompt(after = 0) {
      const seen = await waitFor(
        () => rig.messages.slice(after).find((m) => m.type === "permission"),
        "a permission prompt in the chat view",
      );
      return (seen as Extract<HostMessage, { type: "permission" }>).prompt;
    },
    async stop() {
      controller.dispose();
      await supervisor.stop();
    },
  };
  const controller = new ChatController({
    cwd: sandbox.workspace,
    connect: () => supervisor.ensureStarted(),
    defaultMode: options.mode,
    host: {
      applyEdit: async (params) => {
        rig.edits.push(params);
        return applyEditToDisk(params);
      },
      permissionAsked: (prompt) => rig.asked.push(prompt),
    },
  });
  rig.controller = controller;
  controller.onMessage((m) => rig.messages.push(m));
  supervisor.onStarted((e) => {
    rig.started.push(e);
    e.client.onWireUpdate((n) => rig.wire.push(n.update as unknown as Record<string, unknown>));
    controller.attach(e.client);
  });
  supervisor.onCrashed((e) => rig.crashed.push(e));
  return rig;
}

export function updatesOf(messages: HostMessage[], kind?: string): Record<string, unknown>[] {
  return messages
    .filter((m): m is Extract<HostMessage, { type: "update" }> => m.type === "update")
    .map((m) => m.update)
    .filter((u) => !kind || u.sessionUpdate === kind);
}

export function textOf(messages: HostMessage[], kind = "agent_message_chunk"): string {
  return updatesOf(messages, kind)
    .map((u) => String((u.content as { text?: string }).text ?? ""))
    .join("");
}
