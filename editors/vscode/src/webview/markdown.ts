/**
 * Markdown for the model's text: marked (GFM) with code blocks highlighted by highlight.js
 * and a copy button on each. Raw HTML in the model's text is shown as text, never parsed,
 * and only web and mail links stay links: nothing the model writes can load a resource
 * (the page's Content-Security-Policy would block it anyway) or run anything.
 */
import { Marked, type Tokens } from "marked";
import hljs from "highlight.js/lib/common";
import { escapeHtml } from "./dom";

const SAFE_LINK = /^(https?:|mailto:)/i;

/** Highlighted HTML of `code`; plain escaped text when the language is unknown. */
export function highlight(code: string, language: string | undefined): string {
  const lang = language && hljs.getLanguage(language) ? language : undefined;
  if (!lang) return escapeHtml(code);
  return hljs.highlight(code, { language: lang, ignoreIllegals: true }).value;
}

const marked = new Marked({
  gfm: true,
  breaks: false,
  async: false,
  renderer: {
    code({ text, lang }: Tokens.Code): string {
      const language = (lang ?? "").trim().split(/\s+/)[0] ?? "";
      const label = language ? `<span class="code-lang">${escapeHtml(language)}</span>` : "<span></span>";
      return (
        `<div class="code-block"><div class="code-toolbar">${label}` +
        `<button class="copy-code" type="button" title="Copy code" aria-label="Copy code">Copy</button></div>` +
        `<pre><code class="hljs${language ? ` language-${escapeHtml(language)}` : ""}">${highlight(text, language)}</code></pre></div>`
      );
    },
    html({ text }: Tokens.HTML | Tokens.Tag): string {
      return escapeHtml(text);
    },
    link({ href, title, tokens }: Tokens.Link): string {
      const inner = this.parser.parseInline(tokens);
      if (!SAFE_LINK.test(href)) return inner;
      const t = title ? ` title="${escapeHtml(title)}"` : "";
      return `<a href="${escapeHtml(href)}"${t}>${inner}</a>`;
    },
    image({ href, text }: Tokens.Image): string {
      // never loaded: a link to it instead
      const alt = escapeHtml(text || href);
      return SAFE_LINK.test(href) ? `<a href="${escapeHtml(href)}">${alt}</a>` : alt;
    },
  },
});

export function renderMarkdown(text: string): string {
  return marked.parse(text) as string;
}
