// What the v2 client scripts share: spawn the daemon command after `--`, and record every
// line both ways ({from: "daemon" | "client", line}) while the SDK's stream reads them.
import { spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { PassThrough, Readable, Writable } from "node:stream";

import { ndJsonStream } from "@agentclientprotocol/sdk/experimental/v2/unstable";

export const args = process.argv.slice(2);
export const WS = path.resolve(args[args.indexOf("--workspace") + 1]);

export function spawnRecorded() {
  const command = args.slice(args.indexOf("--") + 1);
  const wire = [];
  const tap = (from) => {
    let rest = "";
    return (chunk) => {
      rest += chunk.toString("utf8");
      let nl;
      while ((nl = rest.indexOf("\n")) >= 0) {
        const line = rest.slice(0, nl);
        rest = rest.slice(nl + 1);
        if (line.trim()) wire.push({ from, line });
      }
    };
  };
  const daemon = spawn(command[0], command.slice(1), { cwd: WS, stdio: ["pipe", "pipe", "inherit"] });
  const fromDaemon = new PassThrough();
  daemon.stdout.on("data", tap("daemon"));
  daemon.stdout.pipe(fromDaemon);
  const toDaemon = new PassThrough();
  toDaemon.on("data", tap("client"));
  toDaemon.pipe(daemon.stdin);
  const stream = ndJsonStream(Writable.toWeb(toDaemon), Readable.toWeb(fromDaemon));
  // stdin closed, the daemon's exit awaited, the summary written with the wire
  const finish = async (summary) => {
    daemon.stdin.end();
    await new Promise((resolve) => { if (daemon.exitCode !== null) resolve(); else daemon.on("exit", resolve); });
    summary.wire = wire;
    process.stdout.write(JSON.stringify(summary) + "\n");
  };
  return { stream, finish };
}

// The pids of live processes (not zombies, not this script) whose command line holds `marker`.
export function processesRunning(marker) {
  const found = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;  // its own arguments may hold it
    try {
      const cmdline = readFileSync(`/proc/${name}/cmdline`, "utf8").split("\0").join(" ");
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      const state = stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0];
      if (cmdline.includes(marker) && state !== "Z") found.push(Number(name));
    } catch { /* exited while we looked */ }
  }
  return found;
}

// `check()`'s first truthy value, polled every 20 ms for at most `limitMs` (then its last value).
export async function until(check, limitMs) {
  const end = Date.now() + limitMs;
  for (;;) {
    const value = check();
    if (value || Date.now() > end) return value;
    await new Promise((r) => setTimeout(r, 20));
  }
}
