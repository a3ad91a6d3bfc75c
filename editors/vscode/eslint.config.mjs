// ESLint (flat config): typescript-eslint's recommended rules for the TypeScript sources
// and tests, ESLint's recommended rules for the build scripts and the webview's test files.
import js from "@eslint/js";
import globals from "globals";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["node_modules/", "dist/", "out/", "test-artifacts/", "src/protocol/schema.ts", "*.vsix"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ["**/*.ts"],
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
    },
  },
  {
    files: ["src/webview/**/*.ts"],
    languageOptions: { globals: globals.browser },
  },
  {
    files: ["**/*.mjs"],
    // test files also hand functions to the browser (page.evaluate)
    languageOptions: { globals: { ...globals.node, ...globals.browser } },
  },
);
