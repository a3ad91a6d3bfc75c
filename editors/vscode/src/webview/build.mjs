// Builds the chat webview: dist/webview.js (browser IIFE) and dist/webview.css.
// Called by the extension's build script; runnable alone: `node src/webview/build.mjs`.
import { build } from "esbuild";
import { writeFileSync, mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

export async function buildWebview({ minify = false } = {}) {
  mkdirSync(join(root, "dist"), { recursive: true });
  await build({
    entryPoints: [join(root, "src/webview/main.ts")],
    outfile: join(root, "dist/webview.js"),
    bundle: true,
    format: "iife",
    platform: "browser",
    target: "es2022",
    minify,
    sourcemap: false,
    logLevel: "warning",
  });
  writeFileSync(join(root, "dist/webview.css"), "");
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await buildWebview({ minify: process.argv.includes("--minify") });
}
