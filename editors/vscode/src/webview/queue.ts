/**
 * The prompts waiting behind the running turn (`_meta.tether.queue`, SPEC §3.37), above the
 * prompt box, each with a button that withdraws it.
 */
import type { ViewMessage } from "../shared/messages";
import type { QueuedPrompt } from "../protocol/schema";
import { h } from "./dom";

export class QueueList {
  readonly el: HTMLElement;

  constructor(private readonly post: (message: ViewMessage) => void) {
    this.el = h("ol", { class: "queue", "aria-label": "Queued prompts" });
    this.el.hidden = true;
  }

  set(queue: QueuedPrompt[]): void {
    this.el.replaceChildren(
      ...queue.map((q) => {
        const withdraw = h("button", { class: "queue-withdraw", type: "button", title: "Withdraw: it will not run" }, "Withdraw");
        withdraw.addEventListener("click", () => this.post({ type: "dequeue", queueId: q.queueId }));
        const state = q.state === "notRun" ? "not run" : "queued";
        return h("li", { class: "queued", "data-queue-id": q.queueId, "data-state": q.state ?? "queued" },
          h("span", { class: "queue-state" }, state), h("span", { class: "queue-preview" }, q.preview), withdraw);
      }),
    );
    this.el.hidden = queue.length === 0;
  }
}
