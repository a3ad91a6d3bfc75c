#!/usr/bin/env node
// The official ACP TypeScript SDK (@agentclientprotocol/sdk) switches the model and the
// reasoning effort mid-session through session/set_config_option, and the next model
// request carries them.
//
//   node tests/conformance/ts/model_switch.mjs --workspace DIR
//
// Starts a fake OpenAI-compatible server on 127.0.0.1 (node:http: GET /v1/models lists
// three models, POST /v1/chat/completions streams "ok" and records the request body), then
// `${TETHER_PYTHON:-python3} -m tether acp --provider openai --base-url <it>/v1 --model m`
// (OPENAI_API_KEY must be set), and drives it with the SDK's client. Every session/update
// and answer is parsed with the SDK's own zod schemas. Prints {ok, checks, bodies} as JSON;
// exit 0 when every check passed, 1 otherwise.

import { spawn } from "node:child_process";
import http from "node:http";
import { Readable, Writable } from "node:stream";

import * as acp from "@agentclientprotocol/sdk";

const schemas = await import(new URL("../schema/zod.gen.js", import.meta.resolve("@agentclientprotocol/sdk")));
const STEP_MS = 15000;
const argv = process.argv.slice(2);
const workspace = argv[argv.indexOf("--workspace") + 1];
const checks = [];
const check = (name, ok, detail) => checks.push({ name, ok: Boolean(ok), ...(ok ? {} : { detail }) });
const parses = (schema, value, what) => {
  const result = schemas[schema].safeParse(value);
  check(`the SDK parses ${what}`, result.success, result.error?.issues);
};
const within = (promise, what) =>
  Promise.race([promise, new Promise((_, reject) => setTimeout(() => reject(new Error(`no ${what} in time`)), STEP_MS))]);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// ---- the fake model server
const bodies = [];
const listings = [];
const chunk = (delta, finish = null) =>
  `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 1, model: "m",
    choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
const server = http.createServer((req, res) => {
  let raw = "";
  req.on("data", (part) => { raw += part; });
  req.on("end", () => {
    if (req.method === "GET" && req.url.endsWith("/models")) {
      listings.push(req.url);
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ object: "list", data: ["m", "o3", "gpt-4.1"].map((id) => ({ id, object: "model" })) }));
      return;
    }
    bodies.push(JSON.parse(raw));
    res.writeHead(200, { "content-type": "text/event-stream" });
    res.end(chunk({ role: "assistant", content: "ok" }) + chunk({}, "stop") + "data: [DONE]\n\n");
  });
});
await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
const base = `http://127.0.0.1:${server.address().port}/v1`;

// ---- the daemon and the SDK client
const child = spawn(process.env.TETHER_PYTHON || "python3",
  ["-m", "tether", "acp", "--provider", "openai", "--base-url", base, "--model", "m"],
  { cwd: workspace, env: process.env, stdio: ["pipe", "pipe", "inherit"] });
const updates = [];
const app = acp.client({ name: "tether-model-switch" });
app.onNotification(acp.methods.client.session.update, ({ params }) => {
  parses("zSessionNotification", params, `a ${params.update?.sessionUpdate} update`);
  updates.push(params.update);
});
app.onRequest("*", ({ method }) => { throw acp.RequestError.methodNotFound(method); });
app.onNotification("*", () => {});
const agent = app.connect(acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout))).agent;

const optionOf = (options, id) => (options || []).find((o) => o.id === id);
const values = (option) => (option?.options || []).map((o) => o.value);

async function prompt(sessionId) {
  const answer = await within(agent.request(acp.methods.agent.session.prompt,
    { sessionId, prompt: [{ type: "text", text: "hi" }] }), "prompt answer");
  check("the turn ends with end_turn", answer.stopReason === "end_turn", answer);
}

async function run() {
  await within(agent.request(acp.methods.agent.initialize, {
    protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: { fs: { readTextFile: false, writeTextFile: false } },
  }), "initialize answer");
  const created = await within(agent.request(acp.methods.agent.session.new, { cwd: workspace, mcpServers: [] }),
    "session/new answer");
  const sessionId = created.sessionId;
  check("session/new offers the configured model at once", JSON.stringify(values(optionOf(created.configOptions, "model"))) === '["m"]',
    created.configOptions);
  const started = Date.now();
  let listed;
  while (!listed && Date.now() - started < STEP_MS) {
    listed = updates.filter((u) => u.sessionUpdate === "config_option_update").at(-1);
    await sleep(20);
  }
  check("the provider's models arrive in a config_option_update",
    JSON.stringify(values(optionOf(listed?.configOptions, "model"))) === '["m","o3","gpt-4.1"]', listed);
  check("the daemon asked GET /v1/models once", JSON.stringify(listings) === '["/v1/models"]', listings);
  await prompt(sessionId);

  const switched = await within(agent.request(acp.methods.agent.session.setConfigOption,
    { sessionId, configId: "model", value: "o3" }), "set_config_option answer");
  parses("zSetSessionConfigOptionResponse", switched, "the set_config_option answer");
  const reasoning = optionOf(switched.configOptions, "reasoning");
  check("o3 brings the reasoning option (category thought_level)",
    reasoning?.category === "thought_level" && JSON.stringify(values(reasoning)) === '["default","low","medium","high"]',
    switched.configOptions);
  await prompt(sessionId);
  const effort = await within(agent.request(acp.methods.agent.session.setConfigOption,
    { sessionId, configId: "reasoning", value: "high" }), "set_config_option answer");
  check("the reasoning option is now high", optionOf(effort.configOptions, "reasoning")?.currentValue === "high", effort);
  await prompt(sessionId);
  const sent = bodies.map((b) => [b.model, b.reasoning_effort ?? null]);
  check("each next request carries the model and reasoning effort chosen",
    JSON.stringify(sent) === JSON.stringify([["m", null], ["o3", null], ["o3", "high"]]), sent);
}

let error = null;
try {
  await run();
} catch (exc) {
  error = String(exc?.stack || exc);
}
child.stdin.end();
await new Promise((resolve) => child.on("exit", resolve));
server.close();
const ok = error === null && checks.length > 0 && checks.every((c) => c.ok);
process.stdout.write(JSON.stringify({ ok, error, checks, bodies: bodies.length }) + "\n");
process.exit(ok ? 0 : 1);
