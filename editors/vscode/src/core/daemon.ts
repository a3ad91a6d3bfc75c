/**
 * One `tether serve` child process per workspace folder: started on demand, initialized,
 * restarted when it dies unexpectedly, and stopped in the LSP way (`shutdown`, `exit`,
 * then signals). No `vscode` import: runs in plain Node; the extension turns the events
 * into notices.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { Emitter, type Disposable } from "./events";
import { TetherClient } from "./client";
import type { InitializeParams } from "../protocol/schema";

export interface DaemonLaunch {
  command: string;
  args: string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
}

export interface SupervisorOptions {
  /** read at every start, so changed settings and keys apply after a restart */
  launch: () => DaemonLaunch | Promise<DaemonLaunch>;
  initializeParams: () => InitializeParams | Promise<InitializeParams>;
  log?: (line: string) => void;
  /** delay before a restart after a crash */
  restartDelayMs?: number;
  /** crashes tolerated within `crashWindowMs` before giving up */
  maxCrashes?: number;
  crashWindowMs?: number;
}

export interface DaemonStarted {
  client: TetherClient;
  pid: number;
  /** true when this start follows a crash */
  restarted: boolean;
}

export interface DaemonCrashed {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** false after too many crashes in a row: the user has to restart it */
  willRestart: boolean;
  /** the last lines the daemon wrote to stderr */
  stderrTail: string;
}

/** The daemon could not be started (bad command, bad settings, exit before `initialize`). */
export class DaemonStartError extends Error {
  constructor(
    message: string,
    readonly stderrTail = "",
  ) {
    super(message);
    this.name = "DaemonStartError";
  }
}

const STDERR_TAIL_LINES = 20;

export class DaemonSupervisor implements Disposable {
  private readonly startedEmitter = new Emitter<DaemonStarted>();
  private readonly crashedEmitter = new Emitter<DaemonCrashed>();
  private child?: ChildProcess;
  private current?: TetherClient;
  private starting?: Promise<TetherClient>;
  private stopping = false;
  /** stopped on purpose: nothing starts it again but restart() */
  private halted = false;
  private crashTimes: number[] = [];
  private restartTimer?: NodeJS.Timeout;
  private stderrLines: string[] = [];

  readonly onStarted = this.startedEmitter.event;
  readonly onCrashed = this.crashedEmitter.event;

  constructor(private readonly options: SupervisorOptions) {}

  get client(): TetherClient | undefined {
    return this.current;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** The running daemon's client, starting (or waiting for) it first. */
  ensureStarted(): Promise<TetherClient> {
    if (this.current && !this.current.closedAlready) return Promise.resolve(this.current);
    // after stop() (deactivation), late callers such as a turn's follow-up must not respawn it
    if (this.halted) return Promise.reject(new DaemonStartError("Tether was stopped"));
    this.starting ??= this.start(false).finally(() => (this.starting = undefined));
    return this.starting;
  }

  /** Stops the daemon (if any) and starts a fresh one. */
  async restart(): Promise<TetherClient> {
    await this.stop();
    this.halted = false;
    this.crashTimes = [];
    return this.ensureStarted();
  }

  private async start(restarted: boolean): Promise<TetherClient> {
    this.stopping = false;
    const launch = await this.options.launch();
    const init = await this.options.initializeParams();
    this.log(`starting: ${[launch.command, ...launch.args].join(" ")} (in ${launch.cwd})`);
    this.stderrLines = [];
    const child = spawn(launch.command, launch.args, {
      cwd: launch.cwd,
      env: launch.env,
      stdio: ["pipe", "pipe", "pipe"],
    });
    this.child = child;
    child.stdin?.on("error", () => undefined); // EPIPE after a crash; the exit handler reports it
    child.stderr?.setEncoding("utf8");
    let partial = "";
    child.stderr?.on("data", (chunk: string) => {
      const lines = (partial + chunk).split("\n");
      partial = lines.pop() ?? "";
      for (const line of lines) this.stderrLine(line);
    });

    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
      child.once("exit", (code, signal) => resolve({ code, signal }));
    });
    const failedToSpawn = new Promise<Error>((resolve) => child.once("error", resolve));

    // nothing is written before the process exists (a missing command fails here)
    const spawned = await Promise.race([
      new Promise<true>((resolve) => child.once("spawn", () => resolve(true))),
      failedToSpawn,
    ]);
    if (spawned !== true) {
      this.child = undefined;
      throw new DaemonStartError(describeStartFailure(launch, spawned, ""));
    }

    const client = TetherClient.overStreams(child.stdout!, child.stdin!, (line) => this.log(line));
    const outcome = await Promise.race([
      client.initialize(init).then(() => "ready" as const, (err: unknown) => err),
      exited.then((e) => e),
      failedToSpawn.then((err) => err),
    ]);

    if (outcome !== "ready") {
      client.dispose();
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      this.child = undefined;
      throw new DaemonStartError(describeStartFailure(launch, outcome, this.stderrTail()), this.stderrTail());
    }

    this.current = client;
    void exited.then(({ code, signal }) => this.onExit(child, client, code, signal));
    this.log(`started (pid ${child.pid}, ACP v${client.protocolVersion})`);
    this.startedEmitter.fire({ client, pid: child.pid ?? -1, restarted });
    return client;
  }

  private onExit(child: ChildProcess, client: TetherClient, code: number | null, signal: NodeJS.Signals | null): void {
    client.dispose(); // rejects the requests still waiting for an answer
    if (this.child === child) this.child = undefined;
    if (this.current === client) this.current = undefined;
    this.log(`exited (code ${code}, signal ${signal})`);
    if (this.stopping) return;

    const now = Date.now();
    const window = this.options.crashWindowMs ?? 60_000;
    this.crashTimes = [...this.crashTimes.filter((t) => now - t < window), now];
    const willRestart = this.crashTimes.length <= (this.options.maxCrashes ?? 3);
    this.crashedEmitter.fire({ code, signal, willRestart, stderrTail: this.stderrTail() });
    if (!willRestart) return;
    this.restartTimer = setTimeout(() => {
      this.restartTimer = undefined;
      if (this.stopping || this.current) return;
      this.starting ??= this.start(true).finally(() => (this.starting = undefined));
      this.starting.catch((err: unknown) => {
        this.log(`restart failed: ${err instanceof Error ? err.message : String(err)}`);
        this.crashedEmitter.fire({ code: null, signal: null, willRestart: false, stderrTail: this.stderrTail() });
      });
    }, this.options.restartDelayMs ?? 500);
  }

  /** `shutdown` + `exit`, then SIGTERM, then SIGKILL, each with a deadline. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.halted = true;
    if (this.restartTimer) clearTimeout(this.restartTimer);
    this.restartTimer = undefined;
    if (this.starting) await this.starting.catch(() => undefined);
    const child = this.child;
    const client = this.current;
    this.current = undefined;
    if (!child) return;
    const gone = new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) resolve();
      else child.once("exit", () => resolve());
    });
    if (client) await withDeadline(client.shutdown().catch(() => undefined), 3000);
    child.stdin?.end();
    if (!(await withDeadline(gone, 2000))) {
      child.kill("SIGTERM");
      if (!(await withDeadline(gone, 1000))) child.kill("SIGKILL");
      await withDeadline(gone, 1000);
    }
    client?.dispose();
    this.child = undefined;
  }

  dispose(): void {
    void this.stop();
    this.startedEmitter.dispose();
    this.crashedEmitter.dispose();
  }

  private stderrLine(line: string): void {
    this.stderrLines.push(line);
    if (this.stderrLines.length > STDERR_TAIL_LINES) this.stderrLines.shift();
    this.log(`[daemon] ${line}`);
  }

  private stderrTail(): string {
    return this.stderrLines.join("\n");
  }

  private log(line: string): void {
    this.options.log?.(line);
  }
}

function describeStartFailure(launch: DaemonLaunch, outcome: unknown, stderr: string): string {
  const command = [launch.command, ...launch.args].join(" ");
  let why: string;
  if (outcome instanceof Error && (outcome as NodeJS.ErrnoException).code === "ENOENT") {
    why = `'${launch.command}' was not found (set tether.path to the tether executable)`;
  } else if (outcome instanceof Error) {
    why = outcome.message;
  } else if (outcome && typeof outcome === "object" && "code" in outcome) {
    const { code, signal } = outcome as { code: number | null; signal: string | null };
    why = `it exited before answering initialize (code ${code}${signal ? `, signal ${signal}` : ""})`;
  } else {
    why = String(outcome);
  }
  const tail = stderr.trim() ? `\n${stderr.trim().split("\n").slice(-5).join("\n")}` : "";
  return `Tether could not start (${command}): ${why}${tail}`;
}

async function withDeadline(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  try {
    return await Promise.race([promise.then(() => true as const), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
