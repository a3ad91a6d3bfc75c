// The model picker's data and /clear against the real `tether serve` (scripted model; the
// models offered come from initializationOptions.models): the session's config options
// reach the state and the view, setting one sends session/set_config_option and the next
// turn uses the model (its run report names it), a config_option_update of the daemon's
// (`/model`) updates them, and `/clear` shows a new session in the same view.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { HostMessage } from "../../src/shared/messages";
import type { SessionConfigOption } from "../../src/protocol/schema";
import { startChat, type ChatRig } from "../support/chat";
import { makeSandbox, type Sandbox } from "../support/sandbox";

const values = (option: SessionConfigOption | undefined) => option?.options.map((o) => o.value);
const lastOptions = (messages: HostMessage[]) =>
  messages.filter((m): m is Extract<HostMessage, { type: "options" }> => m.type === "options").at(-1)?.options;

describe("session config options and /clear against the real daemon", () => {
  let sandbox: Sandbox;
  let rig: ChatRig;

  before(() => {
    sandbox = makeSandbox();
    rig = startChat(sandbox, { init: { models: ["small", "large"] } });
  });
  after(async () => {
    await rig.stop();
    sandbox.cleanup();
  });

  it("a new session brings its options to the state and the view", async () => {
    await rig.controller.newSession();
    assert.deepEqual(values(rig.controller.option("model")), ["default", "small", "large"]);
    assert.equal(rig.controller.option("model")?.currentValue, "default");
    assert.deepEqual(values(lastOptions(rig.messages)?.find((o) => o.id === "model")), ["default", "small", "large"]);
  });

  it("picking a model sends session/set_config_option and the next turn uses it", async () => {
    assert.equal(await rig.controller.setOption("model", "large"), true);
    assert.equal(rig.controller.option("model")?.currentValue, "large");
    assert.equal(lastOptions(rig.messages)?.find((o) => o.id === "model")?.currentValue, "large");
    const result = await rig.controller.prompt("What does the README say?");
    const turnId = (result?._meta as { tether: { turnId: string } }).tether.turnId;
    const report = await rig.supervisor.client!.report(rig.controller.state.sessionId!, turnId);
    assert.equal(report.reports[0].model, "large");
  });

  it("an unknown value is refused and shown as an error", async () => {
    assert.equal(await rig.controller.setOption("model", "huge"), false);
    assert.match(String((rig.messages.at(-1) as { message?: string }).message), /huge.*small, large/s);
  });

  it("/model changes the option through a config_option_update", async () => {
    await rig.controller.prompt("/model small");
    assert.equal(rig.controller.option("model")?.currentValue, "small");
  });

  it("/clear shows a new, empty session in the same view with the same options", async () => {
    const before = rig.controller.state.sessionId;
    const from = rig.messages.length;
    const result = await rig.controller.prompt("/clear");
    assert.equal(result?.stopReason, "end_turn");
    const now = rig.controller.state.sessionId;
    assert.ok(now && now !== before, "a new session is shown");
    assert.deepEqual(rig.controller.state.turns, []);
    assert.equal(rig.controller.state.running, false);
    assert.equal(rig.controller.option("model")?.currentValue, "small");
    const shown = rig.messages.slice(from).filter((m) => m.type === "session");
    assert.deepEqual(shown.map((m) => (m as { sessionId: string }).sessionId), [now]);
    const again = await rig.controller.prompt("What does the README say?");
    assert.equal(again?.stopReason, "end_turn");
    assert.equal(rig.controller.state.sessionId, now);
  });
});
