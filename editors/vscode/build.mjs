// Builds the extension.
//   node build.mjs            dist/extension.js (Node, CommonJS, `vscode` external) + the webview
//   node build.mjs --minify   the same, minified (what `vsce package` ships)
//   node build.mjs --tests    also out/test/**/*.test.js: each test file bundled with the
//                             sources it imports, `vscode` resolved to test/stubs/vscode.ts
import { build } from "esbuild";
import { readdirSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { buildWebview } from "./src/webview/build.mjs";

const root = dirname(fileURLToPath(import.meta.url));

export async function buildExtension({ minify = false } = {}) {
  await build({
    entryPoints: [join(root, "src/extension/main.ts")],
    outfile: join(root, "dist/extension.js"),
    bundle: true,
    platform: "node",
    format: "cjs",
    target: "node20",
    external: ["vscode"],
    minify,
    sourcemap: !minify,
    logLevel: "warning",
  });
  await buildWebview({ minify });
}

export async function buildTests() {
  const testRoot = join(root, "test");
  const entryPoints = readdirSync(testRoot, { recursive: true })
    .map(String)
    .filter((p) => p.endsWith(".test.ts"))
    .map((p) => join(testRoot, p));
  rmSync(join(root, "out"), { recursive: true, force: true });
  await build({
    entryPoints,
    outdir: join(root, "out/test"),
    outbase: testRoot,
    bundle: true,
    platform: "node",
    format: "cjs",
    target: "node20",
    alias: { vscode: join(testRoot, "stubs/vscode.ts") },
    sourcemap: "inline",
    logLevel: "warning",
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await buildExtension({ minify: process.argv.includes("--minify") });
  if (process.argv.includes("--tests")) await buildTests();
}
