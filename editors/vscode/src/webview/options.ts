/**
 * The view's header pickers for the session's config options (SPEC §3.36): the model and,
 * where the model has one, the reasoning effort / thinking budget. Each is a select bound
 * to the option's values and current value; picking posts `setOption`, and the host's
 * `options` message (the answer, or a `config_option_update` of the daemon: the provider's
 * model list arriving, `/model`) redraws them.
 */
import type { ViewMessage } from "../shared/messages";
import type { SessionConfigOption } from "../protocol/schema";
import { h } from "./dom";

type Select = HTMLElement & { value: string; position: string };

/** The options shown here, in this order (the mode has its own picker by the prompt). */
const SHOWN: Record<string, string> = { model: "Model", reasoning: "Reasoning" };

export class OptionPickers {
  readonly el: HTMLElement;
  private readonly selects = new Map<string, Select>();
  private options: SessionConfigOption[] = [];

  constructor(private readonly post: (message: ViewMessage) => void) {
    this.el = h("div", { class: "config-pickers", role: "toolbar", "aria-label": "Session options" });
    for (const [id, label] of Object.entries(SHOWN)) {
      const select = h("vscode-single-select", {
        class: `option-picker option-${id}`,
        "aria-label": label,
        "data-config-id": id,
      }) as Select;
      select.position = "below";
      select.addEventListener("change", () => {
        const current = this.options.find((o) => o.id === id)?.currentValue;
        if (select.value && select.value !== current) this.post({ type: "setOption", configId: id, value: select.value });
      });
      this.selects.set(id, select);
      this.el.append(select);
    }
    this.set([]);
  }

  /** The session's options (from an answer or a `config_option_update`). */
  set(options: SessionConfigOption[]): void {
    this.options = options;
    for (const [id, select] of this.selects) {
      const option = options.find((o) => o.id === id);
      select.hidden = !option;
      if (!option) {
        select.replaceChildren();
        continue;
      }
      select.title = `${option.name}: ${option.description ?? ""}`.trim();
      select.replaceChildren(
        ...option.options.map((o) =>
          h("vscode-option", { value: o.value, description: o.description ?? undefined, selected: o.value === option.currentValue }, o.name),
        ),
      );
      select.value = option.currentValue;
    }
    this.el.hidden = !options.some((o) => o.id in SHOWN);
  }
}
