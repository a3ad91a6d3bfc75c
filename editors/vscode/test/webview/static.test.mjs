// Checks without a browser: the page's Content-Security-Policy, the webview's types, and
// the minified build the packaged extension ships.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { buildWebview } from "../../src/webview/build.mjs";
import { loadHtmlModule, root } from "./harness.mjs";

test("the page's Content-Security-Policy allows only its own nonce'd script and its own styles", async () => {
  const { webviewHtml } = await loadHtmlModule();
  const html = webviewHtml({
    cspSource: "https://abc.vscode-cdn.net",
    nonce: "n0nc3",
    scriptUri: "https://abc.vscode-cdn.net/dist/webview.js",
    styleUri: "https://abc.vscode-cdn.net/dist/webview.css",
  });
  const meta = html.match(/<meta http-equiv="Content-Security-Policy" content="([^"]*)">/);
  assert.ok(meta, "a CSP meta tag");
  const policy = Object.fromEntries(
    meta[1].split(";").map((d) => d.trim().split(/\s+/)).map(([name, ...values]) => [name, values]),
  );
  assert.deepEqual(policy["default-src"], ["'none'"]);
  assert.deepEqual(policy["script-src"], ["'nonce-n0nc3'"]);
  assert.deepEqual(policy["style-src"], ["https://abc.vscode-cdn.net", "'nonce-n0nc3'"]);
  assert.deepEqual(policy["img-src"], ["https://abc.vscode-cdn.net", "data:"]);
  assert.doesNotMatch(meta[1], /unsafe-(eval|inline)|\*/);
  // the only scripts are the bundle, by nonce; no inline script or style
  assert.deepEqual([...html.matchAll(/<script[^>]*>/g)].map((m) => m[0]), [
    '<script nonce="n0nc3" src="https://abc.vscode-cdn.net/dist/webview.js">',
  ]);
  assert.doesNotMatch(html, /<style|style="/);
  assert.match(html, /<link rel="stylesheet" href="https:\/\/abc.vscode-cdn.net\/dist\/webview.css">/);
});

test("the webview's TypeScript is strict-clean (tsc -p src/webview)", () => {
  const tsc = join(root, "node_modules", "typescript", "bin", "tsc");
  try {
    execFileSync(process.execPath, [tsc, "-p", join(root, "src", "webview")], { encoding: "utf8" });
  } catch (err) {
    assert.fail(`tsc found errors:\n${err.stdout}${err.stderr}`);
  }
});

test("the minified build writes the bundle and the stylesheet", async () => {
  const outdir = mkdtempSync(join(tmpdir(), "tether-webview-min-"));
  try {
    await buildWebview({ minify: true, outdir });
    const js = readFileSync(join(outdir, "webview.js"), "utf8");
    const css = readFileSync(join(outdir, "webview.css"), "utf8");
    assert.match(js, /acquireVsCodeApi\(\)/);
    assert.match(js, /customElements\.define\(/);
    assert.match(css, /\.tool-status\[data-status=failed\]/);
    assert.doesNotMatch(js, /\beval\(|new Function\(/, "nothing the CSP would refuse");
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
});
