/** Small DOM builders: the webview is plain DOM, without a framework. */

type Child = Node | string | null | undefined | false;

/** `h("div", {class: "x", "data-id": id}, child, …)`: attributes are set as attributes, never as HTML. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs?: Record<string, string | boolean | undefined> | null,
  ...children: Child[]
): HTMLElementTagNameMap[K];
export function h(tag: string, attrs?: Record<string, string | boolean | undefined> | null, ...children: Child[]): HTMLElement;
export function h(tag: string, attrs?: Record<string, string | boolean | undefined> | null, ...children: Child[]): HTMLElement {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs ?? {})) {
    if (value === undefined || value === false) continue;
    el.setAttribute(name, value === true ? "" : value);
  }
  append(el, ...children);
  return el;
}

export function append(parent: Node, ...children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    parent.appendChild(typeof child === "string" ? document.createTextNode(child) : child);
  }
}

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** A title such as "Run `npm test`": text with backtick spans shown as code. */
export function inlineCode(text: string): DocumentFragment {
  const fragment = document.createDocumentFragment();
  text.split("`").forEach((part, i) => {
    if (!part) return;
    fragment.appendChild(i % 2 === 1 ? h("code", null, part) : document.createTextNode(part));
  });
  return fragment;
}
