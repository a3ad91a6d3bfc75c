// What the webview tests share: the built webview served from 127.0.0.1, one headless
// Chromium per test file, and a page that stands in for VS Code's webview: the real HTML of
// src/webview/html.ts (with its Content-Security-Policy), a stub `acquireVsCodeApi` that
// records what the view posts, and dark-theme variables set the way VS Code sets them.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { chromium } from "playwright-core";
import { buildWebview } from "../../src/webview/build.mjs";

const here = dirname(fileURLToPath(import.meta.url));
export const root = join(here, "..", "..");
export const artifacts = join(root, "test-artifacts", "webview");

export function fixture(name) {
  return JSON.parse(readFileSync(join(here, "fixtures", `${name}.json`), "utf8")).entries;
}

function chromiumPath() {
  if (process.env.CHROMIUM) return process.env.CHROMIUM;
  for (const name of ["chromium", "chromium-browser"]) {
    try {
      return execFileSync("which", [name], { encoding: "utf8" }).trim();
    } catch {
      // not on PATH
    }
  }
  throw new Error("no Chromium: set CHROMIUM or install Debian's chromium (tests/install-deps)");
}

/** src/webview/html.ts, compiled on the fly (the tests never use committed build output). */
export async function loadHtmlModule() {
  const out = await build({
    entryPoints: [join(root, "src/webview/html.ts")],
    bundle: true,
    format: "esm",
    platform: "neutral",
    write: false,
    logLevel: "warning",
  });
  return import(`data:text/javascript;base64,${Buffer.from(out.outputFiles[0].text).toString("base64")}`);
}

// VS Code's Dark Modern colours, set on <html> as VS Code does for its webviews
const DARK_THEME = {
  "--vscode-font-family": 'system-ui, "Ubuntu", "Droid Sans", sans-serif',
  "--vscode-font-size": "13px",
  "--vscode-font-weight": "normal",
  "--vscode-editor-font-family": '"DejaVu Sans Mono", "Droid Sans Mono", monospace',
  "--vscode-editor-font-size": "12px",
  "--vscode-foreground": "#cccccc",
  "--vscode-descriptionForeground": "#9d9d9d",
  "--vscode-editor-background": "#1f1f1f",
  "--vscode-editor-foreground": "#cccccc",
  "--vscode-sideBar-background": "#181818",
  "--vscode-sideBarSectionHeader-border": "#2b2b2b",
  "--vscode-panel-border": "#2b2b2b",
  "--vscode-widget-border": "#313131",
  "--vscode-editorWidget-background": "#202020",
  "--vscode-textLink-foreground": "#4daafc",
  "--vscode-textLink-activeForeground": "#4daafc",
  "--vscode-textCodeBlock-background": "#2b2b2b",
  "--vscode-textPreformat-foreground": "#d7ba7d",
  "--vscode-textPreformat-background": "#ffffff1a",
  "--vscode-textBlockQuote-border": "#616161",
  "--vscode-focusBorder": "#0078d4",
  "--vscode-button-background": "#0078d4",
  "--vscode-button-foreground": "#ffffff",
  "--vscode-button-hoverBackground": "#026ec1",
  "--vscode-button-border": "#ffffff12",
  "--vscode-button-secondaryBackground": "#313131",
  "--vscode-button-secondaryForeground": "#cccccc",
  "--vscode-button-secondaryHoverBackground": "#3c3c3c",
  "--vscode-input-background": "#313131",
  "--vscode-input-foreground": "#cccccc",
  "--vscode-input-border": "#3c3c3c",
  "--vscode-input-placeholderForeground": "#989898",
  "--vscode-badge-background": "#616161",
  "--vscode-badge-foreground": "#f8f8f8",
  "--vscode-checkbox-background": "#313131",
  "--vscode-checkbox-border": "#3c3c3c",
  "--vscode-checkbox-foreground": "#cccccc",
  "--vscode-settings-dropdownBackground": "#313131",
  "--vscode-settings-dropdownBorder": "#3c3c3c",
  "--vscode-settings-dropdownForeground": "#cccccc",
  "--vscode-settings-dropdownListBorder": "#454545",
  "--vscode-list-hoverBackground": "#2a2d2e",
  "--vscode-list-inactiveSelectionBackground": "#37373d",
  "--vscode-list-activeSelectionBackground": "#04395e",
  "--vscode-list-activeSelectionForeground": "#ffffff",
  "--vscode-errorForeground": "#f85149",
  "--vscode-editorWarning-foreground": "#cca700",
  "--vscode-inputValidation-warningBorder": "#b89500",
  "--vscode-testing-iconPassed": "#73c991",
  "--vscode-progressBar-background": "#0078d4",
  "--vscode-toolbar-hoverBackground": "#5a5d5e50",
  "--vscode-terminal-background": "#181818",
  "--vscode-terminal-foreground": "#cccccc",
  "--vscode-terminal-ansiBlue": "#3b8eea",
  "--vscode-terminal-ansiGreen": "#23d18b",
  "--vscode-terminal-ansiYellow": "#f5f543",
  "--vscode-terminal-ansiCyan": "#29b8db",
  "--vscode-terminal-ansiRed": "#f14c4c",
  "--vscode-terminal-ansiMagenta": "#d670d6",
};

// What VS Code's own webview stylesheet (webview/browser/pre/index.html, `_defaultStyles`) says
// about code, which every view gets before its own styles. Here it is an adopted stylesheet (the
// page's CSP allows no inline style), which comes after the view's own in the cascade: the
// view's rules must outrank it, not merely follow it.
const VSCODE_DEFAULT_STYLES = `
code { color: var(--vscode-textPreformat-foreground); background-color: var(--vscode-textPreformat-background); padding: 1px 3px; border-radius: 4px; }
pre code { padding: 0; }`;

function stubScript(initialState) {
  return `(() => {
  for (const [name, value] of Object.entries(${JSON.stringify(DARK_THEME)})) document.documentElement.style.setProperty(name, value);
  const vscodeDefaults = new CSSStyleSheet();
  vscodeDefaults.replaceSync(${JSON.stringify(VSCODE_DEFAULT_STYLES)});
  document.adoptedStyleSheets = [vscodeDefaults];
  document.body.classList.add("vscode-dark");
  window.__posted = [];
  window.__state = ${JSON.stringify(initialState ?? null)};
  let acquired = false;
  window.acquireVsCodeApi = () => {
    if (acquired) throw new Error("An instance of the VS Code API has already been acquired");
    acquired = true;
    return {
      postMessage: (message) => window.__posted.push(JSON.parse(JSON.stringify(message))),
      getState: () => window.__state,
      setState: (state) => { window.__state = JSON.parse(JSON.stringify(state)); return state; },
    };
  };
})();`;
}

/** One Chromium and one server for a test file. */
export class Harness {
  static async start() {
    const harness = new Harness();
    harness.outdir = mkdtempSync(join(tmpdir(), "tether-webview-"));
    mkdirSync(artifacts, { recursive: true });
    const [, html] = await Promise.all([buildWebview({ outdir: harness.outdir }), loadHtmlModule()]);
    harness.html = html;
    harness.pages = new Map();
    harness.server = createServer((req, res) => harness.serve(req, res));
    await new Promise((resolve) => harness.server.listen(0, "127.0.0.1", resolve));
    harness.origin = `http://127.0.0.1:${harness.server.address().port}`;
    harness.browser = await chromium.launch({
      executablePath: chromiumPath(),
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
      ],
    });
    return harness;
  }

  serve(req, res) {
    const url = new URL(req.url, this.origin);
    const files = { "/webview.js": "text/javascript", "/webview.css": "text/css" };
    if (files[url.pathname]) {
      res.writeHead(200, { "content-type": files[url.pathname] });
      res.end(readFileSync(join(this.outdir, url.pathname.slice(1))));
      return;
    }
    if (url.pathname === "/favicon.ico") {
      // a browser tab asks for one; a VS Code webview does not
      res.writeHead(204);
      res.end();
      return;
    }
    const page = this.pages.get(url.pathname);
    if (page) {
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
      res.end(page);
      return;
    }
    res.writeHead(404);
    res.end();
  }

  async close() {
    await this.browser?.close();
    await new Promise((resolve) => this.server?.close(resolve));
    if (this.outdir && existsSync(this.outdir)) rmSync(this.outdir, { recursive: true, force: true });
  }

  /** A fresh webview page; `state` is what `getState()` returns (a reload's saved state). */
  async open({ state = null, width = 400, height = 760 } = {}) {
    const nonce = randomBytes(16).toString("base64");
    const html = this.html.webviewHtml({
      cspSource: this.origin,
      nonce,
      scriptUri: `${this.origin}/webview.js`,
      styleUri: `${this.origin}/webview.css`,
    });
    const marker = `<script nonce="${nonce}" src=`;
    assert.ok(html.includes(marker), "the page loads its script by nonce");
    const path = `/page-${this.pages.size}`;
    this.pages.set(path, html.replace(marker, `<script nonce="${nonce}">${stubScript(state)}</script>\n${marker}`));

    const context = await this.browser.newContext({ viewport: { width, height } });
    const page = await context.newPage();
    const view = new View(page, context);
    await page.addInitScript(() => {
      window.__violations = [];
      document.addEventListener("securitypolicyviolation", (e) =>
        window.__violations.push(`${e.violatedDirective} ${e.blockedURI} ${e.sample}`),
      );
    });
    page.on("console", (msg) => {
      if (msg.type() === "error" || msg.type() === "warning") view.consoleProblems.push(`${msg.type()}: ${msg.text()}`);
    });
    page.on("pageerror", (err) => view.consoleProblems.push(`pageerror: ${err.message}`));
    await page.goto(this.origin + path);
    await view.waitPosted((m) => m.type === "ready");
    return view;
  }
}

/** A webview page and what the tests do with it. */
export class View {
  constructor(page, context) {
    this.page = page;
    this.context = context;
    this.consoleProblems = [];
    this.sentinel = 0;
  }

  /** Post host messages to the view, then wait until it handled them and rendered a frame. */
  async send(...messages) {
    const id = ++this.sentinel;
    await this.page.evaluate(
      ({ messages, id }) =>
        new Promise((resolve) => {
          const onMessage = (event) => {
            if (event.data?.__sentinel !== id) return;
            window.removeEventListener("message", onMessage);
            requestAnimationFrame(() => setTimeout(resolve, 0));
          };
          window.addEventListener("message", onMessage);
          for (const message of messages) window.postMessage(message, "*");
          window.postMessage({ __sentinel: id }, "*");
        }),
      { messages, id },
    );
  }

  async posted() {
    return this.page.evaluate(() => window.__posted);
  }

  /** Wait for a posted message matching `predicate`; returns it. */
  async waitPosted(predicate, what = "a posted message") {
    const deadline = Date.now() + 10000;
    for (;;) {
      const found = (await this.posted()).find(predicate);
      if (found) return found;
      if (Date.now() > deadline) throw new Error(`the view never posted ${what}; posted: ${JSON.stringify(await this.posted())}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  /** The messages posted since `count` messages had been posted. */
  async postedSince(count) {
    return (await this.posted()).slice(count);
  }

  /** Do `action` and return the one message it made the view post. */
  async postedBy(action) {
    const before = (await this.posted()).length;
    await action();
    const deadline = Date.now() + 10000;
    for (;;) {
      const since = await this.postedSince(before);
      if (since.length > 0) {
        assert.equal(since.length, 1, `one message posted, got ${JSON.stringify(since)}`);
        return since[0];
      }
      if (Date.now() > deadline) throw new Error("the action posted nothing");
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  async savedState() {
    return this.page.evaluate(() => window.__state);
  }

  async screenshot(name) {
    await this.page.screenshot({ path: join(artifacts, `${name}.png`), fullPage: false });
  }

  /** No Content-Security-Policy violation and no console error happened on this page. */
  async assertClean() {
    const violations = await this.page.evaluate(() => window.__violations);
    assert.deepEqual(violations, [], "Content-Security-Policy violations");
    assert.deepEqual(this.consoleProblems, [], "console errors");
  }

  async close() {
    await this.context.close();
  }
}

/**
 * Plays a recorded fixture: `host` entries are sent to the view, and at each `view` entry
 * (what the user did when it was recorded) `untilView` stops and returns it, so the test
 * can do the same in the UI and check the view posts exactly that message.
 */
export class Playback {
  constructor(view, entries) {
    this.view = view;
    this.entries = entries;
    this.at = 0;
  }

  get done() {
    return this.at >= this.entries.length;
  }

  /** Send host messages up to (not including) the next `view` entry, which is returned. */
  async untilView() {
    const batch = [];
    while (this.at < this.entries.length && this.entries[this.at].host) batch.push(this.entries[this.at++].host);
    if (batch.length) await this.view.send(...batch);
    return this.at < this.entries.length ? this.entries[this.at++].view : undefined;
  }

  /** Send host messages up to and including the first one matching `predicate`. */
  async until(predicate) {
    const batch = [];
    while (this.at < this.entries.length) {
      const entry = this.entries[this.at];
      if (entry.view) throw new Error(`reached the user's action ${JSON.stringify(entry.view)} first`);
      this.at++;
      batch.push(entry.host);
      if (predicate(entry.host)) break;
    }
    await this.view.send(...batch);
  }
}

export const isUpdate = (kind, extra = () => true) => (m) => m.type === "update" && m.update.sessionUpdate === kind && extra(m.update);
