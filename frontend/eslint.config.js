// ESLint for the web app (`npm run lint`, part of `make lint`): the recommended rules of ESLint and typescript-eslint,
// and React's rules of hooks (rules-of-hooks, exhaustive-deps). The plugin's React Compiler rules (refs,
// set-state-in-effect, purity, immutability) are left out: they guard code that React Compiler memoizes, and this
// app is not compiled by it. The type checker is `npm run typecheck` (tsc --noEmit).
import js from "@eslint/js";
import reactHooks from "eslint-plugin-react-hooks";
import globals from "globals";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["dist/", "node_modules/", "src/api/schema.d.ts"] },
  js.configs.recommended,
  tseslint.configs.recommended,
  {
    files: ["**/*.{ts,tsx}"],
    languageOptions: { globals: { ...globals.browser } },
    plugins: { "react-hooks": reactHooks },
    rules: {
      "react-hooks/rules-of-hooks": "error",
      "react-hooks/exhaustive-deps": "error",
      // a leading underscore names what is there for its position only (a callback's unused argument)
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
    },
  },
  { files: ["public/sw.js"], languageOptions: { globals: { ...globals.serviceworker } } },
  { files: ["vite.config.ts", "eslint.config.js"], languageOptions: { globals: { ...globals.node } } },
);
