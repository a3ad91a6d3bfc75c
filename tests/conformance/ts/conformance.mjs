#!/usr/bin/env node
// ACP conformance run: drives `tether acp` with the official TypeScript SDK
// (@agentclientprotocol/sdk, ACP v1, the SDK's app API over an ndjson stream on the
// daemon's stdio) and checks what a real SDK client sees.
//
//   node tests/conformance/ts/conformance.mjs --workspace DIR [--strict] [--] [DAEMON COMMAND...]
//
// Without a daemon command it runs
//   ${TETHER_PYTHON:-python3} -m tether acp --provider scripted --script <repo>/examples/approvals.json
// The workspace can also come from TETHER_CONFORMANCE_WORKSPACE. The daemon gets this
// process's environment (set TETHER_HOME to a scratch directory) and runs in the workspace.
//
// The workspace must hold README.md with "Hello from the sample workspace." (the
// fixture of tests/conftest.py); the run edits it.
//
// Prints one JSON summary on stdout: {ok, sdk, checks, deviations, ...}. Exit code 0 when
// every check passed, 1 when one failed (the reasons also go to stderr, with the tail of
// the daemon's stderr and of the wire log), 2 on bad usage. `deviations` are places where
// Tether differs from ACP v1 or from what the SDK expects without breaking a check; with
// --strict any of them fails the run too.

import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import fs from "node:fs/promises";
import path from "node:path";
import { Readable, Writable } from "node:stream";
import { fileURLToPath } from "node:url";

import * as acp from "@agentclientprotocol/sdk";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(HERE, "..", "..", "..");
const STEP_MS = Number(process.env.TETHER_CONFORMANCE_STEP_TIMEOUT_MS || 15000);
// How long a request the SDK cancelled with `$/cancel_request` may stay unanswered
// before the probe counts it as ignored (Tether answers a cancel in milliseconds).
const CANCEL_PROBE_MS = 2000;

const sdkEntry = fileURLToPath(import.meta.resolve("@agentclientprotocol/sdk"));
const sdkRoot = sdkEntry.slice(0, sdkEntry.lastIndexOf(`${path.sep}dist${path.sep}`));
const SDK_VERSION = JSON.parse(readFileSync(path.join(sdkRoot, "package.json"), "utf8")).version;
// The SDK's own generated zod validators for stable ACP v1 (the ones its handlers use).
// Not a public export, so loaded by file; the SDK version is pinned in package-lock.json.
const schemas = await import(new URL("../schema/zod.gen.js", import.meta.resolve("@agentclientprotocol/sdk")));

// ---------------------------------------------------------------------------------
// command line

function usage(message) {
  process.stderr.write(
    `${message}\nusage: node conformance.mjs --workspace DIR [--strict] [--] [daemon command ...]\n`,
  );
  process.exit(2);
}

const argv = process.argv.slice(2);
let workspace = process.env.TETHER_CONFORMANCE_WORKSPACE || "";
let strict = false;
let daemonCommand = [];
for (let i = 0; i < argv.length; i++) {
  const arg = argv[i];
  if (arg === "--workspace" || arg === "-w") {
    workspace = argv[++i] ?? usage("--workspace needs a directory");
  } else if (arg.startsWith("--workspace=")) {
    workspace = arg.slice("--workspace=".length);
  } else if (arg === "--strict") {
    strict = true;
  } else if (arg === "--help" || arg === "-h") {
    usage("Runs Tether's ACP conformance checks with the official TypeScript SDK.");
  } else if (arg === "--") {
    daemonCommand = argv.slice(i + 1);
    break;
  } else if (arg.startsWith("-") && daemonCommand.length === 0) {
    usage(`unknown option ${arg}`);
  } else {
    daemonCommand = argv.slice(i);
    break;
  }
}
if (!workspace) usage("no workspace: pass --workspace DIR or set TETHER_CONFORMANCE_WORKSPACE");
workspace = await fs.realpath(path.resolve(workspace)).catch(() => usage(`workspace ${workspace} does not exist`));
if (daemonCommand.length === 0) {
  daemonCommand = [
    process.env.TETHER_PYTHON || "python3", "-m", "tether", "acp",
    "--provider", "scripted", "--script", path.join(REPO, "examples", "approvals.json"),
  ];
}
const README = path.join(workspace, "README.md");
const README_BEFORE = "# Sample\n\nHello from the sample workspace.\n";
const README_AFTER = "# Sample\n\nHello, edited by Tether.\n";

// ---------------------------------------------------------------------------------
// results

const checks = [];
const deviations = new Map(); // id -> {id, summary, exchange}
const wire = []; // every JSON-RPC message, both directions, in order: {seq, daemon, dir, msg}
const sdkLog = []; // what the SDK printed with console.error (it logs dropped messages there)

function check(name, ok, detail) {
  const entry = { name, ok: Boolean(ok) };
  if (!ok && detail !== undefined) entry.detail = detail;
  checks.push(entry);
  return Boolean(ok);
}

function deviation(id, summary, exchange = []) {
  if (!deviations.has(id)) deviations.set(id, { id, summary, exchange: exchange.filter((m) => m !== undefined).map(brief) });
}

function brief(msg) {
  const text = JSON.stringify(msg) ?? String(msg);
  return text.length > 600 ? `${text.slice(0, 600)}…` : text;
}

const consoleError = console.error.bind(console);
console.error = (...args) => {
  sdkLog.push(args.map((a) => (typeof a === "string" ? a : JSON.stringify(a))).join(" "));
  consoleError(...args);
};

function within(ms, promise, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(predicate, what, ms = STEP_MS) {
  const deadline = Date.now() + ms;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await sleep(10);
  }
}

// ---------------------------------------------------------------------------------
// what the SDK's validators keep: anything Tether sent that they drop is reported

/** Paths present in `raw` that the SDK's parse dropped or changed ([] for array items). */
function droppedPaths(raw, parsed, at = "") {
  if (raw === null || typeof raw !== "object") {
    return Object.is(raw, parsed) ? [] : [at || "(value)"];
  }
  if (Array.isArray(raw)) {
    if (!Array.isArray(parsed)) return [at || "(value)"];
    if (raw.length !== parsed.length) return [`${at}[] (items dropped)`];
    return raw.flatMap((item, i) => droppedPaths(item, parsed[i], `${at}[]`));
  }
  if (parsed === null || typeof parsed !== "object") return [at || "(value)"];
  const out = [];
  for (const [key, value] of Object.entries(raw)) {
    const where = at ? `${at}.${key}` : key;
    if (!(key in parsed) || parsed[key] === undefined) {
      if (value !== null) out.push(where);
    } else if (key !== "_meta") {
      out.push(...droppedPaths(value, parsed[key], where));
    }
  }
  return [...new Set(out)];
}

/** Parses `raw` with one of the SDK's schemas; records a failed check or dropped fields. */
let validated = 0;
function conforms(schemaName, raw, context) {
  validated += 1;
  const result = schemas[schemaName].safeParse(raw);
  if (!result.success) {
    check(`${context} parses as ACP ${schemaName.slice(1)}`, false, {
      issues: result.error.issues.slice(0, 5),
      message: brief(raw),
    });
    return false;
  }
  const dropped = droppedPaths(raw, result.data);
  for (const where of dropped) {
    deviation(
      `dropped-by-sdk: ${context}: ${where}`,
      `${context}: "${where}" is not part of ACP v1's ${schemaName.slice(1)} (or has a value the SDK's ` +
        `schema rejects), so the SDK drops it before the client sees it; ACP extensibility says custom ` +
        `data goes under _meta`,
      [raw],
    );
  }
  return true;
}

// ---------------------------------------------------------------------------------
// one daemon process, one SDK connection

class Daemon {
  constructor(label) {
    this.label = label;
    this.stderr = "";
    this.updates = []; // session/update params, as the SDK's handler received them
    this.permissions = []; // {params, requestId, aborted}
    this.answers = []; // queue: "allow_once" | "reject_once" | ... | "hold"
    this.held = []; // permission prompts left unanswered: {requestId, resolve}
    this.reads = []; // fs/read_text_file params
    this.writes = []; // fs/write_text_file params
    this.unexpected = []; // requests/notifications a client should not get here
    this.otherNotifications = []; // {method, params}: e.g. cancellation notices
  }

  start() {
    const [cmd, ...args] = daemonCommand;
    this.child = spawn(cmd, args, { cwd: workspace, env: process.env, stdio: ["pipe", "pipe", "pipe"] });
    this.stopping = false;
    this.exitStatus = undefined;
    this.exited = new Promise((resolve) => {
      const gone = (status) => {
        this.exitStatus ??= status;
        resolve(status);
        // A daemon that dies mid-run fails every pending request at once (no waiting for timeouts).
        if (!this.stopping) {
          this.connection?.close(new Error(`${this.label} exited unexpectedly (${JSON.stringify(status)}); see its stderr`));
        }
      };
      this.child.on("exit", (code, signal) => gone({ code, signal }));
      this.child.on("error", (error) => gone({ code: null, signal: null, error: String(error) }));
    });
    this.child.stderr.setEncoding("utf8");
    this.child.stderr.on("data", (chunk) => {
      this.stderr = (this.stderr + chunk).slice(-20000);
    });
    this.child.stdin.on("error", () => {}); // EPIPE if the daemon dies; reported through exit

    const base = acp.ndJsonStream(Writable.toWeb(this.child.stdin), Readable.toWeb(this.child.stdout));
    const tap = (dir) =>
      new TransformStream({
        transform: (msg, controller) => {
          wire.push({ seq: wire.length, daemon: this.label, dir, msg });
          controller.enqueue(msg);
        },
      });
    const incoming = base.readable.pipeThrough(tap("in"));
    const outgoing = tap("out");
    outgoing.readable.pipeTo(base.writable).catch(() => {});
    this.connection = this.app().connect({ readable: incoming, writable: outgoing.writable });
    this.agent = this.connection.agent;
    return this;
  }

  /** The client: every client-side method of ACP v1 registered explicitly. */
  app() {
    const unsupported = ({ method }) => {
      this.unexpected.push({ method });
      throw acp.RequestError.methodNotFound(method);
    };
    const m = acp.methods.client;
    const app = acp.client({ name: "tether-acp-conformance" });
    this.registered = new Set();
    const request = (method, handler) => {
      this.registered.add(method);
      app.onRequest(method, handler);
    };
    const notification = (method, handler) => {
      this.registered.add(method);
      app.onNotification(method, handler);
    };
    request(m.session.requestPermission, ({ params, requestId, signal }) => this.requestPermission(params, requestId, signal));
    notification(m.session.update, ({ params }) => {
      this.updates.push(params);
    });
    request(m.fs.readTextFile, ({ params }) => this.readTextFile(params));
    request(m.fs.writeTextFile, ({ params }) => this.writeTextFile(params));
    // terminal: false in the capabilities, so none of these may be called
    request(m.terminal.create, unsupported);
    request(m.terminal.output, unsupported);
    request(m.terminal.release, unsupported);
    request(m.terminal.waitForExit, unsupported);
    request(m.terminal.kill, unsupported);
    // no elicitation capability either
    request(m.elicitation.create, unsupported);
    notification(m.elicitation.complete, ({ method, params }) => {
      this.unexpected.push({ method, params });
    });
    // anything else: recorded (requests answered MethodNotFound)
    app.onRequest("*", unsupported);
    app.onNotification("*", ({ method, params }) => {
      this.otherNotifications.push({ method, params });
    });
    return app;
  }

  requestPermission(params, requestId, signal) {
    const entry = { params, requestId, aborted: false };
    this.permissions.push(entry);
    const answer = this.answers.shift();
    const cancelled = { outcome: { outcome: "cancelled" } };
    if (answer === undefined) {
      this.unexpected.push({ method: "session/request_permission", params, why: "no answer scripted" });
      return cancelled;
    }
    if (answer !== "hold") {
      if (!params.options.some((o) => o.optionId === answer)) {
        this.unexpected.push({ method: "session/request_permission", params, why: `no option ${answer}` });
      }
      return { outcome: { outcome: "selected", optionId: answer } };
    }
    // The user never answers. If the agent withdraws the request with ACP's
    // `$/cancel_request`, the SDK aborts `signal`; an ACP client then answers `cancelled`.
    return new Promise((resolve) => {
      const hold = { requestId, resolve: () => resolve(cancelled) };
      this.held.push(hold);
      signal.addEventListener("abort", () => {
        entry.aborted = true;
        hold.resolve();
      });
    });
  }

  insideWorkspace(p) {
    return path.isAbsolute(p) && (p === workspace || p.startsWith(workspace + path.sep));
  }

  async readTextFile(params) {
    this.reads.push(params);
    if (!this.insideWorkspace(params.path)) {
      throw acp.RequestError.invalidParams({ path: params.path }, "path outside the workspace");
    }
    let text;
    try {
      text = await fs.readFile(params.path, "utf8");
    } catch {
      throw acp.RequestError.resourceNotFound(params.path);
    }
    if (params.line != null || params.limit != null) {
      const lines = text.split(/(?<=\n)/);
      const start = Math.max((params.line ?? 1) - 1, 0);
      text = lines.slice(start, params.limit != null ? start + params.limit : undefined).join("");
    }
    return { content: text };
  }

  async writeTextFile(params) {
    this.writes.push(params);
    if (!this.insideWorkspace(params.path)) {
      throw acp.RequestError.invalidParams({ path: params.path }, "path outside the workspace");
    }
    await fs.mkdir(path.dirname(params.path), { recursive: true });
    await fs.writeFile(params.path, params.content, "utf8");
    return {};
  }

  updatesFor(sessionId) {
    return this.updates.filter((n) => n.sessionId === sessionId).map((n) => n.update);
  }

  /** Ends stdin (how an ACP client closes) and waits for the daemon to exit. */
  async stop() {
    this.stopping = true;
    this.child.stdin.end();
    const exit = await within(STEP_MS, this.exited, `${this.label} to exit after stdin closed`);
    this.connection.close();
    return exit;
  }

  kill() {
    if (this.child && this.child.exitCode === null && this.child.signalCode === null) this.child.kill("SIGKILL");
  }
}

// ---------------------------------------------------------------------------------
// helpers over updates and the wire

const textOf = (blocks) =>
  (blocks || []).map((b) => (b.type === "content" ? b.content?.text ?? "" : b.text ?? "")).join("");

function agentText(updates) {
  return updates
    .filter((u) => u.sessionUpdate === "agent_message_chunk" && u.content.type === "text")
    .map((u) => u.content.text)
    .join("");
}

function finalStatus(updates, toolCallId) {
  const done = updates.filter(
    (u) =>
      (u.sessionUpdate === "tool_call" || u.sessionUpdate === "tool_call_update") &&
      u.toolCallId === toolCallId &&
      (u.status === "completed" || u.status === "failed"),
  );
  return done.at(-1);
}

/** Wire index of the request `method` we sent for `sessionId` (the last one) and of its answer. */
function exchangeOn(label, method, sessionId, from = 0) {
  const request = wire.findLast(
    (w) => w.daemon === label && w.dir === "out" && w.seq >= from && w.msg.method === method &&
      w.msg.params?.sessionId === sessionId,
  );
  if (!request) return {};
  const response = wire.find(
    (w) => w.daemon === label && w.dir === "in" && w.seq > request.seq && !("method" in w.msg) &&
      w.msg.id === request.msg.id,
  );
  return { request, response };
}

function wireUpdates(label, sessionId, fromSeq, toSeq = Infinity) {
  return wire.filter(
    (w) => w.daemon === label && w.dir === "in" && w.msg.method === "session/update" &&
      w.msg.params?.sessionId === sessionId && w.seq > fromSeq && w.seq < toSeq,
  );
}

/** Runs one prompt turn; `answers` feed the permission prompts it raises. */
async function promptTurn(daemon, sessionId, text, answers, options) {
  daemon.answers.splice(0, Infinity, ...answers);
  const before = daemon.updatesFor(sessionId).length;
  const permissionsBefore = daemon.permissions.length;
  const response = await within(
    STEP_MS,
    daemon.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text }] }, options),
    `the session/prompt answer for "${text}"`,
  );
  await settle(daemon);
  if (daemon.answers.length) {
    check(`"${text}": the daemon asked for every scripted permission answer`, false, { unused: daemon.answers.splice(0) });
  }
  conforms("zPromptResponse", lastResponse(daemon.label, "session/prompt"), `session/prompt result ("${text}")`);
  return {
    response,
    updates: daemon.updatesFor(sessionId).slice(before),
    permissions: daemon.permissions.slice(permissionsBefore),
  };
}

function lastResponse(label, method) {
  const request = wire.findLast((w) => w.daemon === label && w.dir === "out" && w.msg.method === method);
  const response = request &&
    wire.find((w) => w.daemon === label && w.dir === "in" && !("method" in w.msg) && w.msg.id === request.msg.id);
  return response?.msg.result;
}

/** Waits until the SDK has handed every session/update read so far to the client. */
async function settle(daemon) {
  const onWire = () => wire.filter((w) => w.daemon === daemon.label && w.dir === "in" && w.msg.method === "session/update").length;
  try {
    await until(() => daemon.updates.length >= onWire(), "the SDK to deliver the session/update notifications", 2000);
  } catch {
    // reported by the delivery check at the end
  }
}

// ---------------------------------------------------------------------------------
// the run

const summary = {
  ok: false,
  sdk: { name: "@agentclientprotocol/sdk", version: SDK_VERSION, protocolVersion: acp.PROTOCOL_VERSION },
  node: process.version,
  daemon: daemonCommand,
  workspace,
};
const daemons = [];

async function initialize(daemon) {
  const result = await within(
    STEP_MS,
    daemon.agent.request(acp.methods.agent.initialize, {
      protocolVersion: acp.PROTOCOL_VERSION,
      clientCapabilities: { fs: { readTextFile: true, writeTextFile: true }, terminal: false },
      clientInfo: { name: "tether-acp-conformance", title: "Tether ACP conformance (TypeScript SDK)", version: SDK_VERSION },
    }),
    `the initialize answer from ${daemon.label}`,
  );
  conforms("zInitializeResponse", result, "initialize result");
  check(`${daemon.label}: initialize negotiates protocolVersion 1`, result.protocolVersion === 1, result.protocolVersion);
  return result;
}

async function run() {
  // ================= daemon A: a session, four turns, cancellation, listing =================
  const a = new Daemon("daemon A").start();
  daemons.push(a);
  const missing = Object.values(acp.CLIENT_METHODS).filter((method) => !a.registered.has(method));
  check("the client has its own handler for every ACP v1 client method of the SDK", missing.length === 0, missing);
  const init = await initialize(a);
  check("initialize: agentCapabilities.loadSession is true", init.agentCapabilities?.loadSession === true, init.agentCapabilities);
  check("initialize: agentInfo names tether", init.agentInfo?.name === "tether", init.agentInfo);
  check("initialize: sessionCapabilities.list is advertised", init.agentCapabilities?.sessionCapabilities?.list != null,
    init.agentCapabilities?.sessionCapabilities);

  const created = await within(
    STEP_MS,
    a.agent.request(acp.methods.agent.session.new, { cwd: workspace, mcpServers: [] }),
    "the session/new answer",
  );
  conforms("zNewSessionResponse", created, "session/new result");
  const sessionId = created.sessionId;
  check("session/new returns a sessionId", typeof sessionId === "string" && sessionId.length > 0, created);
  check("session/new returns the modes, current mode ask", created.modes?.currentModeId === "ask", created.modes);
  summary.sessionId = sessionId;

  // --- the session's config options (the model and mode pickers), set through the SDK
  const optionOf = (options, id) => (options || []).find((o) => o.id === id);
  check("session/new returns the model option (category model)", optionOf(created.configOptions, "model")?.category === "model",
    created.configOptions);
  check("session/new returns the mode option, current ask", optionOf(created.configOptions, "mode")?.currentValue === "ask",
    created.configOptions);
  const modelValue = optionOf(created.configOptions, "model")?.currentValue;
  const setModel = await within(STEP_MS, a.agent.request(acp.methods.agent.session.setConfigOption,
    { sessionId, configId: "model", value: modelValue }), "the session/set_config_option answer");
  conforms("zSetSessionConfigOptionResponse", setModel, "session/set_config_option result");
  const setMode = await within(STEP_MS, a.agent.request(acp.methods.agent.session.setConfigOption,
    { sessionId, configId: "mode", value: "read-only" }), "the session/set_config_option answer");
  check("session/set_config_option answers the full options, mode now read-only",
    optionOf(setMode.configOptions, "mode")?.currentValue === "read-only" && setMode.configOptions.length === 2, setMode);
  await within(STEP_MS, a.agent.request(acp.methods.agent.session.setMode, { sessionId, modeId: "ask" }), "the session/set_mode answer");
  const changes = () => a.updatesFor(sessionId).filter((u) => u.sessionUpdate !== "available_commands_update");
  await until(() => changes().length >= 2, "the mode and config option updates");
  const configUpdates = changes().map((u) => u.sessionUpdate);
  check("the mode set by option is a current_mode_update; set_mode's is a config_option_update",
    JSON.stringify(configUpdates) === JSON.stringify(["current_mode_update", "config_option_update"]), configUpdates);

  // --- turn 1: read, then an edit the user allows once
  check("README.md starts as the fixture", (await fs.readFile(README, "utf8")) === README_BEFORE);
  const t1 = await promptTurn(a, sessionId, "edit the readme", ["allow_once"]);
  check('turn 1 ("edit the readme"): stopReason end_turn', t1.response.stopReason === "end_turn", t1.response);
  const kinds1 = new Set(t1.updates.map((u) => u.sessionUpdate));
  for (const kind of ["tool_call", "tool_call_update", "agent_message_chunk"]) {
    check(`turn 1: the client got ${kind} updates`, kinds1.has(kind), [...kinds1]);
  }
  const read1 = t1.updates.find((u) => u.sessionUpdate === "tool_call" && u.toolCallId === "call_read");
  check("turn 1: tool_call for call_read (kind read)", read1?.kind === "read", read1);
  check("turn 1: call_read ends completed", finalStatus(t1.updates, "call_read")?.status === "completed",
    finalStatus(t1.updates, "call_read"));
  check("turn 1: call_read's result shows the README", textOf(finalStatus(t1.updates, "call_read")?.content).includes("Hello from the sample workspace."),
    finalStatus(t1.updates, "call_read"));
  const edit1 = finalStatus(t1.updates, "call_edit");
  check("turn 1: tool_call_update completed for call_edit", edit1?.sessionUpdate === "tool_call_update" && edit1.status === "completed", edit1);
  check("turn 1: call_edit's result has the applied diff", textOf(edit1?.content).includes("+Hello, edited by Tether."), edit1);
  check("turn 1: agent text is streamed as agent_message_chunk", agentText(t1.updates) === "Reading it first.Editing.Done.",
    agentText(t1.updates));
  check("turn 1: exactly one permission prompt", t1.permissions.length === 1, t1.permissions.length);
  const p1 = t1.permissions[0]?.params;
  check("turn 1: the prompt is for call_edit, kind edit", p1?.toolCall.toolCallId === "call_edit" && p1?.toolCall.kind === "edit", p1?.toolCall);
  check("turn 1: the prompt offers allow_once, allow_always, reject_once, reject_always",
    JSON.stringify(p1?.options.map((o) => [o.optionId, o.kind])) ===
      JSON.stringify([["allow_once", "allow_once"], ["allow_always", "allow_always"], ["reject_once", "reject_once"], ["reject_always", "reject_always"]]),
    p1?.options);
  const diff = p1?.toolCall.content?.find((c) => c.type === "diff");
  check("turn 1: the prompt carries the diff (absolute path, old and new text)",
    diff?.path === README && diff.oldText === README_BEFORE && diff.newText === README_AFTER, diff);
  check("turn 1: the daemon read README.md through fs/read_text_file", a.reads.some((r) => r.path === README && r.sessionId === sessionId), a.reads);
  check("turn 1: the daemon wrote README.md through fs/write_text_file",
    a.writes.length === 1 && a.writes[0].path === README && a.writes[0].content === README_AFTER, a.writes);
  check("turn 1: README.md changed on disk", (await fs.readFile(README, "utf8")) === README_AFTER, await fs.readFile(README, "utf8"));
  const rawPermission = wire.find((w) => w.daemon === a.label && w.dir === "in" && w.msg.method === "session/request_permission");
  if (rawPermission) conforms("zRequestPermissionRequest", rawPermission.msg.params, "session/request_permission params");
  const rawRead = wire.find((w) => w.daemon === a.label && w.dir === "in" && w.msg.method === "fs/read_text_file");
  if (rawRead) conforms("zReadTextFileRequest", rawRead.msg.params, "fs/read_text_file params");
  const rawWrite = wire.find((w) => w.daemon === a.label && w.dir === "in" && w.msg.method === "fs/write_text_file");
  if (rawWrite) conforms("zWriteTextFileRequest", rawWrite.msg.params, "fs/write_text_file params");

  // --- turn 2: a command the user rejects; the turn goes on
  const t2 = await promptTurn(a, sessionId, "run the tests", ["reject_once"]);
  check('turn 2 ("run the tests", reject_once): stopReason end_turn', t2.response.stopReason === "end_turn", t2.response);
  const p2 = t2.permissions[0]?.params;
  check("turn 2: one permission prompt, for call_run (kind execute)",
    t2.permissions.length === 1 && p2?.toolCall.toolCallId === "call_run" && p2?.toolCall.kind === "execute", p2?.toolCall);
  const run2 = finalStatus(t2.updates, "call_run");
  check("turn 2: call_run ends failed", run2?.status === "failed", run2);
  check("turn 2: the failure says the user rejected it", textOf(run2?.content).includes("the user rejected"), run2);
  check("turn 2: the turn went on after the rejection", agentText(t2.updates).endsWith("Ran them."), agentText(t2.updates));

  // --- turn 3: session/cancel while a permission prompt is pending (never answered)
  a.answers.splice(0, Infinity, "hold");
  const permissionsBefore3 = a.permissions.length;
  const updatesBefore3 = a.updatesFor(sessionId).length;
  const prompt3 = a.agent.request(acp.methods.agent.session.prompt, {
    sessionId, prompt: [{ type: "text", text: "run the tests" }],
  });
  prompt3.catch(() => {});
  await until(() => a.permissions.length > permissionsBefore3, "the permission prompt of turn 3");
  const held3 = a.held.at(-1);
  await a.agent.notify(acp.methods.agent.session.cancel, { sessionId });
  const r3 = await within(STEP_MS, prompt3, "the session/prompt answer after session/cancel");
  await settle(a);
  const t3 = a.updatesFor(sessionId).slice(updatesBefore3);
  check("turn 3 (cancel while a permission prompt is pending): stopReason cancelled", r3.stopReason === "cancelled", r3);
  const run3 = finalStatus(t3, "call_run");
  check("turn 3: call_run did not run (ends failed, not completed)", run3?.status === "failed", run3);
  // How the daemon withdrew its pending session/request_permission.
  const withdrawal = wire.find(
    (w) => w.daemon === a.label && w.dir === "in" && "method" in w.msg && !("id" in w.msg) &&
      /^\$\/cancel/i.test(w.msg.method) && w.seq > (wire.findLast((x) => x.msg.method === "session/cancel")?.seq ?? 0),
  );
  const permission3 = a.permissions[permissionsBefore3];
  check("turn 3: the daemon told the client to drop its pending permission prompt", Boolean(withdrawal), a.otherNotifications);
  if (withdrawal && !permission3.aborted) {
    deviation(
      "permission-withdrawn-with-lsp-cancelRequest",
      `Tether withdraws its pending session/request_permission with LSP's "${withdrawal.msg.method}" ` +
        `(params ${JSON.stringify(Object.keys(withdrawal.msg.params ?? {}))}); ACP v1 defines "$/cancel_request" with ` +
        `{requestId}. The SDK does not recognise it: the handler's AbortSignal never fires and the prompt stays ` +
        `open in the client until the client answers it itself (ACP: the client answers pending prompts ` +
        `"cancelled" after session/cancel).`,
      [
        wire.find((w) => w.daemon === a.label && w.msg.id === permission3.requestId && w.msg.method)?.msg,
        wire.findLast((w) => w.daemon === a.label && w.msg.method === "session/cancel")?.msg,
        withdrawal.msg,
      ],
    );
  }
  // ACP: after session/cancel the client answers every pending prompt with `cancelled`.
  // Tether stopped waiting for it; a late answer must be harmless.
  if (held3) {
    held3.resolve();
    await until(
      () => wire.some((w) => w.daemon === a.label && w.dir === "out" && w.msg.id === held3.requestId && "result" in w.msg),
      "the client's late answer to the withdrawn permission prompt",
    );
  }
  const stats = await within(STEP_MS, a.agent.request("_tether/daemon/stats", {}), "the _tether/daemon/stats answer");
  check("turn 3: after the late `cancelled` answer the daemon waits for no client request", stats.outgoingRequests === 0, stats);
  summary.daemonStatsAfterCancel = stats;

  // --- turn 4: cancel the prompt request itself with the SDK's cancellation ($/cancel_request)
  a.answers.splice(0, Infinity, "hold");
  const permissionsBefore4 = a.permissions.length;
  const abort = new AbortController();
  const prompt4 = a.agent.request(
    acp.methods.agent.session.prompt,
    { sessionId, prompt: [{ type: "text", text: "run the tests" }] },
    { cancellationSignal: abort.signal },
  );
  prompt4.catch(() => {});
  await until(() => a.permissions.length > permissionsBefore4, "the permission prompt of turn 4");
  const promptSent4 = wire.findLast((w) => w.daemon === a.label && w.dir === "out" && w.msg.method === "session/prompt");
  abort.abort();
  let r4;
  try {
    r4 = await within(CANCEL_PROBE_MS, prompt4, "an answer to the prompt cancelled with $/cancel_request");
  } catch {
    r4 = undefined;
  }
  if (r4 === undefined) {
    const sentCancel = wire.findLast((w) => w.daemon === a.label && w.dir === "out" && w.msg.method === "$/cancel_request");
    deviation(
      "ignores-acp-cancel_request",
      `Tether ignores ACP's "$/cancel_request" as the SDK sends it (params {requestId}, the id of the ` +
        `session/prompt): the prompt was not answered within ${CANCEL_PROBE_MS} ms and its turn kept waiting on the ` +
        `permission prompt. session/cancel still cancels it.`,
      [promptSent4?.msg, sentCancel?.msg, "(no answer to the session/prompt)"],
    );
    await a.agent.notify(acp.methods.agent.session.cancel, { sessionId });
    r4 = await within(STEP_MS, prompt4, "the session/prompt answer after session/cancel");
  }
  check("turn 4: a cancelled prompt answers stopReason cancelled", r4.stopReason === "cancelled", r4);
  for (const hold of a.held.splice(0)) hold.resolve();
  await settle(a);

  // --- session/list
  const listed = await within(
    STEP_MS,
    a.agent.request(acp.methods.agent.session.list, { cwd: workspace }),
    "the session/list answer",
  );
  conforms("zListSessionsResponse", listed, "session/list result");
  const mine = listed.sessions?.find((s) => s.sessionId === sessionId);
  check("session/list lists the session with its cwd", mine?.cwd === workspace, listed);
  check("session/list gives the title from the first prompt", mine?.title === "edit the readme", mine);
  check("session/list gives updatedAt as ISO 8601", typeof mine?.updatedAt === "string" && !Number.isNaN(Date.parse(mine.updatedAt)), mine);

  const exitA = await a.stop();
  check("daemon A exits 0 when stdin closes", exitA.code === 0, exitA);

  // ================= daemon B: a new process loads the session and replays it =================
  const b = new Daemon("daemon B").start();
  daemons.push(b);
  await initialize(b);
  const listedB = await within(STEP_MS, b.agent.request(acp.methods.agent.session.list, { cwd: workspace }), "session/list on daemon B");
  check("daemon B: session/list still lists the session", listedB.sessions?.some((s) => s.sessionId === sessionId), listedB);

  const loaded = await within(
    STEP_MS,
    b.agent.request(acp.methods.agent.session.load, { sessionId, cwd: workspace, mcpServers: [] }),
    "the session/load answer",
  );
  conforms("zLoadSessionResponse", lastResponse(b.label, "session/load"), "session/load result");
  check("session/load returns the session's modes", loaded.modes?.currentModeId === "ask", loaded);
  const load = exchangeOn(b.label, "session/load", sessionId);
  const replayedOnWire = wireUpdates(b.label, sessionId, load.request.seq, load.response.seq);
  check("session/load: the history is replayed before the response", replayedOnWire.length > 0, replayedOnWire.length);
  await settle(b);
  // the slash command list follows the answer (SPEC: session/new and session/load), racing the
  // client's next request: it is no part of the replay
  const replay = b.updatesFor(sessionId).filter((u) => u.sessionUpdate !== "available_commands_update");
  const userTexts = replay.filter((u) => u.sessionUpdate === "user_message_chunk").map((u) => u.content.text);
  check("replay: the user messages, in order", JSON.stringify(userTexts) ===
    JSON.stringify(["edit the readme", "run the tests", "run the tests", "run the tests"]), userTexts);
  const replayedEdit = replay.find((u) => u.sessionUpdate === "tool_call" && u.toolCallId === "call_edit");
  check("replay: call_edit as one complete tool_call (completed, with its result)",
    replayedEdit?.status === "completed" && textOf(replayedEdit.content).includes("+Hello, edited by Tether."), replayedEdit);
  const replayedRuns = replay.filter((u) => u.sessionUpdate === "tool_call" && u.toolCallId === "call_run");
  check("replay: the three call_run calls, all failed", replayedRuns.length === 3 && replayedRuns.every((u) => u.status === "failed"),
    replayedRuns.map((u) => u.status));
  // a later step's text of a turn is a paragraph apart (this client is not Tether's own: SPEC §3.6)
  check("replay: the agent text", agentText(replay).startsWith("Reading it first.\n\nEditing.\n\nDone.Running.\n\nRan them."), agentText(replay));
  check("replay: no updates of kinds that are not replayed",
    replay.every((u) => ["user_message_chunk", "agent_message_chunk", "agent_thought_chunk", "tool_call"].includes(u.sessionUpdate)),
    [...new Set(replay.map((u) => u.sessionUpdate))]);

  const t5 = await promptTurn(b, sessionId, "hello again", []);
  const prompt5 = exchangeOn(b.label, "session/prompt", sessionId);
  const afterLoad = wireUpdates(b.label, sessionId, load.response.seq, prompt5.request.seq).filter(
    (w) => w.msg.params?.update?.sessionUpdate !== "available_commands_update",
  );
  check("session/load: nothing is replayed after the response", afterLoad.length === 0, afterLoad.map((w) => brief(w.msg)));
  check("the loaded session takes a new prompt (end_turn)", t5.response.stopReason === "end_turn", t5.response);
  check("the loaded session's new turn streams text", agentText(t5.updates) === "Nothing scripted for that.", agentText(t5.updates));

  const exitB = await b.stop();
  check("daemon B exits 0 when stdin closes", exitB.code === 0, exitB);

  // ================= what holds over the whole run =================
  for (const d of daemons) {
    const label = d.label;
    const raw = wire.filter((w) => w.daemon === label && w.dir === "in" && w.msg.method === "session/update");
    check(`${label}: the SDK accepted every session/update (${raw.length})`, d.updates.length === raw.length, {
      onWire: raw.length, delivered: d.updates.length,
    });
    for (const w of raw) conforms("zSessionNotification", w.msg.params, `session/update ${w.msg.params?.update?.sessionUpdate}`);
    check(`${label}: no request or notification a client does not expect`, d.unexpected.length === 0, d.unexpected);
    // ordering: nothing for a session between a session/prompt answer and the next request on it
    const answers = wire.filter((w) => w.daemon === label && w.dir === "in" && !("method" in w.msg));
    const prompts = wire.filter((w) => w.daemon === label && w.dir === "out" && w.msg.method === "session/prompt");
    const late = [];
    for (const p of prompts) {
      const answer = answers.find((w) => w.msg.id === p.msg.id && w.seq > p.seq);
      if (!answer) continue;
      const next = wire.find((w) => w.daemon === label && w.dir === "out" && w.seq > answer.seq &&
        ["session/prompt", "session/load"].includes(w.msg.method) && w.msg.params?.sessionId === p.msg.params.sessionId);
      late.push(...wireUpdates(label, p.msg.params.sessionId, answer.seq, next ? next.seq : Infinity).map((w) => w.msg));
    }
    check(`${label}: no session/update after its turn's session/prompt answer`, late.length === 0, late.map(brief));
    const dupes = answers.map((w) => w.msg.id).filter((id, i, all) => all.indexOf(id) !== i);
    check(`${label}: every request answered exactly once`, dupes.length === 0, dupes);
  }
  const dropped = sdkLog.filter((line) => /Error handling|Invalid message|unknown request/.test(line));
  check("the SDK logged no dropped or invalid message", dropped.length === 0, dropped);
}

try {
  await run();
} catch (error) {
  check("the run completed", false, String(error?.stack || error));
} finally {
  for (const d of daemons) d.kill();
  // so that the report can say how each daemon ended
  await Promise.race([Promise.all(daemons.map((d) => d.exited)), sleep(1000)]);
}

const failed = checks.filter((c) => !c.ok);
summary.deviations = [...deviations.values()];
summary.checks = checks;
summary.passed = checks.length - failed.length;
summary.failed = failed.length;
summary.ok = failed.length === 0 && (!strict || deviations.size === 0);
summary.wireMessages = wire.length;
summary.parsedWithSdkSchemas = validated;
process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);

if (!summary.ok) {
  const lines = [`ACP conformance (TypeScript SDK ${SDK_VERSION}) FAILED: ${failed.length} of ${checks.length} checks`];
  for (const c of failed) lines.push(`  - ${c.name}${c.detail === undefined ? "" : `: ${brief(c.detail)}`}`);
  if (strict && deviations.size) lines.push(`  - --strict and ${deviations.size} deviation(s): ${[...deviations.keys()].join("; ")}`);
  for (const d of daemons) {
    const status = d.exitStatus ? `exited ${JSON.stringify(d.exitStatus)}` : "was running (killed now)";
    lines.push(`--- ${d.label} (${daemonCommand.join(" ")}) ${status}; stderr tail ---`, d.stderr.slice(-3000));
  }
  lines.push("--- wire (last 25 messages) ---", ...wire.slice(-25).map((w) => `${w.daemon} ${w.dir === "in" ? "<-" : "->"} ${brief(w.msg)}`));
  process.stderr.write(`${lines.join("\n")}\n`);
  process.exitCode = 1;
} else {
  process.stderr.write(`ACP conformance (TypeScript SDK ${SDK_VERSION}): ${checks.length} passed, 0 failed; ${deviations.size} deviation(s)\n`);
}
// The SDK connections are closed and the daemons gone; nothing should keep node alive,
// but a stuck stream must not hang the caller either.
setTimeout(() => process.exit(process.exitCode ?? 0), 200).unref();
