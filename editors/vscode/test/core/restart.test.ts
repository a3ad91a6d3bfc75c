// The daemon dies (kill -9): the supervisor restarts it, the chat loads its session again
// (replay), a turn that was waiting for approval asks again and finishes; session list
// and load work on the new daemon; a clean stop is LSP's shutdown + exit.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { TetherClient } from "../../src/core/client";
import { DaemonStartError, DaemonSupervisor } from "../../src/core/daemon";
import { initializeParams } from "../../src/core/handshake";
import { toolCall } from "../../src/core/state";
import { startChat, textOf, updatesOf, type ChatRig } from "../support/chat";
import { makeSandbox, scriptedLaunch, waitFor, type Sandbox } from "../support/sandbox";

describe("daemon restarts", () => {
  let sandbox: Sandbox;
  let rig: ChatRig;

  before(() => {
    sandbox = makeSandbox();
    rig = startChat(sandbox, { mode: "ask" });
  });
  after(async () => {
    await rig.stop();
    sandbox.cleanup();
  });

  async function killDaemon(): Promise<void> {
    const pid = rig.supervisor.pid!;
    const starts = rig.started.length;
    process.kill(pid, "SIGKILL");
    await waitFor(() => rig.started.length > starts, "the restarted daemon");
    assert.notEqual(rig.supervisor.pid, pid);
  }

  it("after a crash the session is loaded again and replayed", async () => {
    assert.equal((await rig.controller.prompt("What does the README say?"))?.stopReason, "end_turn");
    const sessionId = rig.controller.state.sessionId!;
    const start = rig.messages.length;
    await killDaemon();

    assert.equal(rig.crashed.length, 1);
    assert.equal(rig.crashed[0].signal, "SIGKILL");
    assert.equal(rig.crashed[0].willRestart, true);
    assert.equal(rig.started.at(-1)?.restarted, true);

    const after = () => rig.messages.slice(start);
    await waitFor(() => textOf(after()).includes("The README says hello."), "the replayed answer");
    assert.deepEqual(after()[0], { type: "session", sessionId, title: "What does the README say?", modeId: "ask" });
    assert.equal(updatesOf(after(), "user_message_chunk").length, 1);
    const state = rig.controller.state;
    assert.equal(state.sessionId, sessionId);
    assert.equal(state.turns.length, 1);
    assert.equal(toolCall(state, "call_read")?.status, "completed", "replayed tool calls are complete");

    const sessions = await rig.controller.refreshSessions();
    assert.deepEqual(
      sessions.map((s) => [s.sessionId, s.title]),
      [[sessionId, "What does the README say?"]],
    );
  });

  it("a turn waiting for approval when the daemon died asks again and finishes", async () => {
    const start = rig.messages.length;
    const turn = rig.controller.prompt("edit the readme please");
    const first = await rig.nextPrompt(start);
    await killDaemon();
    assert.equal(await turn, undefined, "the interrupted prompt has no answer");
    assert.match(JSON.stringify(rig.messages.slice(start)), /The Tether daemon stopped during this turn/);

    const reloaded = () => {
      const after = rig.messages.slice(start);
      return after.slice(after.findIndex((m) => m.type === "session"));
    };
    const again = await waitFor(
      () => reloaded().find((m) => m.type === "permission"),
      "the approval asked again",
    );
    assert.equal(first.toolCallId, "call_edit");
    assert.equal(again.type === "permission" && again.prompt.toolCallId, "call_edit");
    const ended = rig.messages.length;
    rig.controller.answerPermission(again.type === "permission" ? again.prompt.requestId : "", { optionId: "allow_once" });
    await waitFor(() => rig.messages.slice(ended).some((m) => m.type === "turnEnded"), "the resumed turn's end");
    assert.equal(readFileSync(join(sandbox.workspace, "README.md"), "utf8"), "# Sample\n\nHello, edited by Tether.\n");
    assert.equal(rig.controller.state.running, false);
    assert.equal(toolCall(rig.controller.state, "call_edit")?.status, "completed");
  });

  it("a session is listed and loaded by a fresh daemon after a clean stop", async () => {
    const sessionId = rig.controller.state.sessionId!;
    await rig.supervisor.stop();
    assert.ok(rig.log.some((l) => l === "exited (code 0, signal null)"), "shutdown + exit ends with code 0");
    // nothing late (a turn's follow-up, a view) starts a stopped daemon again
    await assert.rejects(rig.supervisor.ensureStarted(), /Tether was stopped/);
    assert.equal(rig.supervisor.pid, undefined);
    const other = startChat(sandbox, { mode: "ask" });
    try {
      const sessions = await other.controller.refreshSessions();
      assert.ok(sessions.some((s) => s.sessionId === sessionId));
      assert.equal(await other.controller.loadSession(sessionId), true);
      assert.equal(other.controller.state.turns.length, 2);
      assert.match(textOf(other.messages), /The README says hello\./);
    } finally {
      await other.stop();
    }
  });

  it("a request written to a daemon that just died fails when the client is disposed, never as an unhandled error", async () => {
    // After a kill -9 the chat's session-list refresh can reach the stdin pipe once Node has
    // destroyed it but before the exit is seen (ERR_STREAM_DESTROYED, seen in CI). Destroying
    // the pipe here makes that moment certain; the daemon then ends on its closed stdin.
    const launch = scriptedLaunch(sandbox);
    const child = spawn(launch.command, launch.args, { cwd: launch.cwd, env: launch.env, stdio: ["pipe", "pipe", "ignore"] });
    const exited = new Promise((resolve) => child.once("exit", resolve));
    const log: string[] = [];
    const client = TetherClient.overStreams(child.stdout, child.stdin, (line) => log.push(line));
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on("unhandledRejection", onUnhandled);
    try {
      await client.initialize(initializeParams({ rootPath: sandbox.workspace }));
      child.stdin.destroy();
      const late = client.listSessions(sandbox.workspace);
      const second = client.prompt("no-such-session", [{ type: "text", text: "hi" }]);
      await waitFor(() => log.filter((l) => l.includes("was not written")).length === 2, "both failed writes in the log");
      await exited;
      client.dispose(); // what the supervisor does when it sees the exit
      await assert.rejects(late, /disposed/);
      await assert.rejects(second, /disposed/);
      await new Promise((r) => setTimeout(r, 50));
      assert.deepEqual(unhandled, []);
      assert.equal(client.closedAlready, true);
    } finally {
      process.off("unhandledRejection", onUnhandled);
      client.dispose();
    }
  });

  it("a daemon that cannot start says why", async () => {
    const supervisor = new DaemonSupervisor({
      launch: () => ({ command: join(sandbox.root, "no-such-tether"), args: ["serve"], cwd: sandbox.workspace, env: sandbox.env }),
      initializeParams: () => initializeParams({ rootPath: sandbox.workspace }),
    });
    await assert.rejects(supervisor.ensureStarted(), (err: unknown) => {
      assert.ok(err instanceof DaemonStartError);
      assert.match(err.message, /no-such-tether' was not found \(set tether\.path/);
      return true;
    });
  });
});
