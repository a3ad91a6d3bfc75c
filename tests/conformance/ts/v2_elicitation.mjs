// The official TypeScript SDK's ACP v2 client answers ask-first's question as a form
// (`elicitation/create`, SPEC §12.8; the daemon runs with `ask_first = "on"`). With
// `capabilities.elicitation.form` declared (unless `--no-forms`): "delete the old stuff"
// is asked in a form and answered, the answer joins the turn and the model goes on; "clean
// up everything" is asked and declined, the turn ends there. The summary (stdout, JSON)
// carries what it saw, with every line both ways, for tests/conformance/test_acp_v2_elicitation.py.
//
//   node v2_elicitation.mjs [--no-forms] --workspace DIR -- python -m tether acp --provider scripted --script FILE
import { client } from "@agentclientprotocol/sdk/experimental/v2/unstable";

import { args, spawnRecorded, WS } from "./v2_wire.mjs";

const FORMS = !args.includes("--no-forms");
const summary = { ok: false, asked: [] };
const { stream, finish } = spawnRecorded();

const app = client({ name: "tether-v2-elicitation" }).onRequest("elicitation/create", ({ params }) => {
  summary.asked.push(params);
  if (summary.asked.length === 1) {
    return { action: "accept", content: { answer: "only build/ and the *.log files" } };
  }
  return { action: "decline" };
});

async function turn(s, text) {
  const answer = await s.prompt(text);
  const updates = [];
  for (;;) {
    const message = await s.nextUpdate();
    updates.push(message.update);
    if (message.kind === "stop") return { answer, updates };
  }
}

try {
  await app.connectWith(stream, async (cx) => {
    const capabilities = FORMS ? { elicitation: { form: {} } } : {};
    await cx.request("initialize", { protocolVersion: 2, info: { name: "tether-v2-elicitation", version: "1" }, capabilities });
    const s = await cx.buildSession(WS).start();
    summary.answered = await turn(s, "delete the old stuff");
    summary.declined = await turn(s, "clean up everything");
  });
  summary.ok = true;
} catch (err) {
  summary.error = String(err && err.stack ? err.stack : err);
} finally {
  await finish(summary);
}
