// Generates src/protocol/schema.ts from ../../protocol/schema.json (JSON Schema 2020-12).
//   node scripts/gen-types.mjs          rewrite the file
//   node scripts/gen-types.mjs --check  exit 1 if the committed file is stale
// json-schema-to-typescript understands `definitions` better than `$defs`, and turns a
// `$ref` with siblings (`default`, a union member's `required`) into a duplicate type, so
// the schema is normalised in memory first; the wire shapes are unchanged.
import { compile } from "json-schema-to-typescript";
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const schemaPath = join(root, "..", "..", "protocol", "schema.json");
export const outputPath = join(root, "src", "protocol", "schema.ts");

const HEADER = `// generated — DO NOT EDIT.
// Types of the Tether protocol, from protocol/schema.json by scripts/gen-types.mjs
// (\`npm run gen:types\`); a test fails when this file is stale.
`;

function normalise(schema) {
  const s = JSON.parse(JSON.stringify(schema).replaceAll("#/$defs/", "#/definitions/"));
  s.definitions = s.$defs;
  delete s.$defs;
  for (const key of Object.keys(s)) if (key.startsWith("x-")) delete s[key];
  // Discriminated unions list members as {$ref, required: [tag]}: on the wire the tag is
  // always present, so it becomes required on the member type itself.
  for (const def of Object.values(s.definitions)) {
    for (const member of def.oneOf ?? []) {
      if (!member.$ref || !member.required) continue;
      const target = s.definitions[member.$ref.split("/").pop()];
      target.required = [...new Set([...(target.required ?? []), ...member.required])];
      delete member.required;
    }
  }
  const walk = (node) => {
    if (Array.isArray(node)) node.forEach(walk);
    else if (node && typeof node === "object") {
      if (node.$ref) delete node.default;
      Object.values(node).forEach(walk);
    }
  };
  walk(s);
  return s;
}

export async function generate() {
  const schema = normalise(JSON.parse(readFileSync(schemaPath, "utf8")));
  const body = await compile(schema, "TetherProtocol", {
    bannerComment: "",
    unreachableDefinitions: true,
    additionalProperties: false,
  });
  return HEADER + body;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const text = await generate();
  if (process.argv.includes("--check")) {
    let current = "";
    try {
      current = readFileSync(outputPath, "utf8");
    } catch {
      // missing counts as stale
    }
    if (current !== text) {
      console.error("src/protocol/schema.ts is stale: run `npm run gen:types` in editors/vscode");
      process.exit(1);
    }
    console.log("src/protocol/schema.ts is up to date");
  } else {
    writeFileSync(outputPath, text);
    console.log(`wrote ${outputPath}`);
  }
}
