// Builds the chat webview: dist/webview.js (browser IIFE) and dist/webview.css.
// Called by the extension's build script; runnable alone: `node src/webview/build.mjs [--minify]`.
// `outdir` (default dist/) lets the webview tests build into a directory of their own.
import { build } from "esbuild";
import { mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

export async function buildWebview({ minify = false, outdir = join(root, "dist") } = {}) {
  mkdirSync(outdir, { recursive: true });
  const common = { bundle: true, minify, sourcemap: false, logLevel: "warning", legalComments: "none" };
  await Promise.all([
    build({
      ...common,
      entryPoints: [join(root, "src/webview/main.ts")],
      outfile: join(outdir, "webview.js"),
      format: "iife",
      platform: "browser",
      target: "es2022",
    }),
    build({
      ...common,
      entryPoints: [join(root, "src/webview/styles.css")],
      outfile: join(outdir, "webview.css"),
    }),
  ]);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await buildWebview({ minify: process.argv.includes("--minify") });
}
