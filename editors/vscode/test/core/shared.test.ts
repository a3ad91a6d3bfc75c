// Two VS Code windows on one shared daemon (SPEC §11): each window's `tether serve` is a
// thin proxy to the user's background daemon. One window turns it on with `tether.args`
// (`--shared`), the other through its environment (TETHER_SHARED=1); both reach the same
// daemon, see one session's turn live, and an approval answered in one closes in the other;
// a bare ACP client (`tether acp`, newline-delimited JSON) joins the same session and answers
// a VS Code window's approval; closing a window leaves the daemon to the others.
import assert from "node:assert/strict";
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createInterface } from "node:readline";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { statusOf, toolCall } from "../../src/core/state";
import { startChat, textOf, type ChatRig } from "../support/chat";
import { CHAT_SCRIPT, makeSandbox, python, waitFor, type Sandbox } from "../support/sandbox";

/** A bare ACP client (`tether acp --shared`, newline-delimited JSON), as Zed or an ACP SDK
 * would run it: it answers every permission request with `answer`. */
class AcpWindow {
  readonly child: ChildProcessWithoutNullStreams;
  readonly updates: Record<string, unknown>[] = [];
  readonly asked: Record<string, unknown>[] = [];
  private nextId = 1;
  private readonly waiting = new Map<number, (message: Record<string, unknown>) => void>();

  constructor(sandbox: Sandbox, private readonly answer: string) {
    this.child = spawn(python(), ["-m", "tether", "acp", "--provider", "scripted", "--script", CHAT_SCRIPT], {
      cwd: sandbox.workspace, env: { ...sandbox.env, TETHER_SHARED: "1" },
    });
    createInterface({ input: this.child.stdout }).on("line", (line) => this.received(JSON.parse(line)));
  }

  request(method: string, params: Record<string, unknown>): Promise<Record<string, unknown>> {
    const id = this.nextId++;
    this.child.stdin.write(JSON.stringify({ jsonrpc: "2.0", id, method, params }) + "\n");
    return new Promise((resolve) => this.waiting.set(id, resolve));
  }

  private received(message: Record<string, unknown>): void {
    if (message.method === "session/update") {
      this.updates.push((message.params as { update: Record<string, unknown> }).update);
    } else if (message.method === "session/request_permission") {
      this.asked.push(message.params as Record<string, unknown>);
      const outcome = { outcome: "selected", optionId: this.answer };
      this.child.stdin.write(JSON.stringify({ jsonrpc: "2.0", id: message.id, result: { outcome } }) + "\n");
    } else if (typeof message.id === "number" && this.waiting.has(message.id)) {
      this.waiting.get(message.id)!(message);
      this.waiting.delete(message.id);
    }
  }

  close(): void {
    this.child.stdin.end();
  }
}

describe("two windows on one shared daemon", () => {
  let sandbox: Sandbox;
  let runtime: string;
  let first: ChatRig;
  let second: ChatRig;

  /** the live daemons' pids, from their pid files in the runtime directory */
  function daemons(): number[] {
    const dir = join(runtime, "tether");
    if (!existsSync(dir)) return [];
    return readdirSync(dir)
      .filter((name) => name.endsWith(".pid"))
      .map((name) => Number(readFileSync(join(dir, name), "utf8").trim()))
      .filter((pid) => {
        try {
          process.kill(pid, 0);
          return true;
        } catch {
          return false;
        }
      });
  }

  before(() => {
    sandbox = makeSandbox();
    // a short directory: a Unix socket's path has at most 107 bytes
    runtime = mkdtempSync("/tmp/t21v-");
    sandbox.env.XDG_RUNTIME_DIR = runtime;
    sandbox.env.XDG_STATE_HOME = join(sandbox.root, "state");
    first = startChat(sandbox, { mode: "ask", args: ["--shared"] });
    second = startChat(sandbox, { mode: "ask", env: { TETHER_SHARED: "1" } });
  });
  after(async () => {
    await first?.stop();
    await second?.stop();
    for (const pid of daemons()) process.kill(pid, "SIGKILL");
    rmSync(runtime, { recursive: true, force: true });
    sandbox.cleanup();
  });

  it("both windows are proxies of one background daemon", async () => {
    await first.controller.start();
    await second.controller.start();
    const pids = daemons();
    assert.equal(pids.length, 1, `one shared daemon, not ${pids.length}`);
    assert.ok(!pids.includes(first.supervisor.pid!) && !pids.includes(second.supervisor.pid!), "the windows are proxies");
    assert.equal(first.supervisor.client?.agentName, "tether");
    assert.equal(second.supervisor.client?.agentName, "tether");
  });

  it("a session open in both windows: both see the turn, the approval answered in one closes in the other", async () => {
    const sessionId = (await first.controller.newSession())!;
    assert.ok(sessionId);
    assert.equal(await second.controller.loadSession(sessionId), true);

    const firstStart = first.messages.length;
    const secondStart = second.messages.length;
    const turn = first.controller.prompt("run the tests");
    const askedFirst = await first.nextPrompt(firstStart);
    const askedSecond = await second.nextPrompt(secondStart);
    assert.equal(askedFirst.toolCallId, "call_run");
    assert.equal(askedSecond.toolCallId, "call_run");
    assert.equal(statusOf(second.controller.state), "waiting", "the other window is asked too");

    // the second window answers; the first window's card closes and its turn goes on
    assert.equal(second.controller.answerPermission(askedSecond.requestId, { optionId: "allow_once" }), true);
    assert.equal((await turn)?.stopReason, "end_turn");
    await waitFor(
      () => first.messages.slice(firstStart).some((m) => m.type === "permissionClosed" && m.requestId === askedFirst.requestId),
      "the first window's approval card to close",
    );
    assert.deepEqual(first.controller.state.pending, []);
    for (const rig of [first, second]) {
      await waitFor(() => toolCall(rig.controller.state, "call_run")?.status === "completed", "the command to complete");
      assert.match(JSON.stringify(toolCall(rig.controller.state, "call_run")!.content), /all passed/);
    }
    // the turn's text reached both windows live
    assert.equal(textOf(first.messages.slice(firstStart)), "Running.Ran them.");
    await waitFor(() => textOf(second.messages.slice(secondStart)) === "Running.Ran them.", "the other window's text");
    // the other window sent no prompt: it is told the turn ended, and is idle again
    await waitFor(() => statusOf(second.controller.state) === "idle", "the other window to see the turn end");
  });

  it("an approval rejected in the window that prompted fails the call in the other window too", async () => {
    const firstStart = first.messages.length;
    const secondStart = second.messages.length;
    const turn = first.controller.prompt("run the tests");
    const askedFirst = await first.nextPrompt(firstStart);
    const askedSecond = await second.nextPrompt(secondStart);
    assert.equal(first.controller.answerPermission(askedFirst.requestId, { optionId: "reject_once" }), true);
    assert.equal((await turn)?.stopReason, "end_turn");
    await waitFor(
      () => second.messages.slice(secondStart).some((m) => m.type === "permissionClosed" && m.requestId === askedSecond.requestId),
      "the second window's approval card to close",
    );
    const failed = await waitFor(() => {
      const call = toolCall(second.controller.state, "call_run");
      return call?.status === "failed" && call;
    }, "the other window to see the rejection");
    assert.match(JSON.stringify(failed.content), /the user rejected running/);
    assert.equal(daemons().length, 1, "still one daemon");
  });

  it("an ACP client (tether acp) on the same session answers the VS Code window's approval", async () => {
    const acp = new AcpWindow(sandbox, "allow_once");
    try {
      const init = await acp.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
      assert.equal((init.result as { agentInfo: { name: string } }).agentInfo.name, "tether");
      const sessionId = second.controller.state.sessionId!;
      const loaded = await acp.request("session/load", { sessionId, cwd: sandbox.workspace, mcpServers: [] });
      assert.ok(loaded.result, JSON.stringify(loaded));
      const replayed = acp.updates.length;
      const start = second.messages.length;
      const turn = second.controller.prompt("run the tests");
      const asked = await second.nextPrompt(start);
      const result = await turn;
      assert.equal(result?.stopReason, "end_turn", "the ACP client's answer decided it");
      const turnId = (result?._meta as { tether?: { turnId?: string } } | undefined)?.tether?.turnId;
      assert.ok(turnId);
      assert.deepEqual(acp.asked.map((p) => (p.toolCall as { toolCallId: string }).toolCallId), ["call_run"]);
      await waitFor(
        () => second.messages.slice(start).some((m) => m.type === "permissionClosed" && m.requestId === asked.requestId),
        "the VS Code card to close",
      );
      assert.equal(toolCall(second.controller.state, "call_run")?.status, "completed");
      // the ACP client saw the turn live, the call's end, and the turn's end last
      const ended = (u?: Record<string, unknown>) => (u?._meta as { tether?: { turnEnded?: unknown } })?.tether?.turnEnded;
      await waitFor(() => acp.updates.length > replayed && ended(acp.updates.at(-1)), "the turn's end");
      assert.deepEqual(ended(acp.updates.at(-1)), { turnId, stopReason: "end_turn" });
      const text = acp.updates.slice(replayed).filter((u) => u.sessionUpdate === "agent_message_chunk")
        .map((u) => (u.content as { text: string }).text).join("");
      assert.equal(text, "Running.Ran them.");
      assert.ok(acp.updates.slice(replayed).some((u) => u.toolCallId === "call_run" && u.status === "completed"));
      assert.equal(daemons().length, 1, "the ACP client joined the same daemon");
    } finally {
      acp.close();
    }
  });

  it("closing one window (shutdown, exit) leaves the daemon and the other window running", async () => {
    const [daemon] = daemons();
    const closing = first;
    first = undefined as unknown as ChatRig;
    await closing.stop();
    assert.deepEqual(daemons(), [daemon]);
    const start = second.messages.length;
    const result = await second.controller.prompt("What does the README say?");
    assert.equal(result?.stopReason, "end_turn");
    assert.match(textOf(second.messages.slice(start)), /The README says hello\./);
  });
});
