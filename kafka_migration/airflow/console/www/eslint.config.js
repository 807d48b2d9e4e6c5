// The console's lint (`npm run lint`, part of `make lint`): ESLint's recommended rules, typescript-eslint's
// type-checked ones (the compiler's knowledge: floating promises, unsafe any) and React's rules of hooks.
// The generated API types (src/api/openapi.ts) are the generator's, not ours; tsc still checks them.
import js from "@eslint/js";
import { defineConfig, globalIgnores } from "eslint/config";
import reactHooks from "eslint-plugin-react-hooks";
import tseslint from "typescript-eslint";

export default defineConfig(
  globalIgnores(["dist/", "node_modules/", "src/api/openapi.ts"]),
  js.configs.recommended,
  tseslint.configs.recommendedTypeChecked,
  reactHooks.configs.flat["recommended-latest"],
  {
    languageOptions: {
      parserOptions: { projectService: { allowDefaultProject: ["*.js", "*.ts"] }, tsconfigRootDir: import.meta.dirname },
    },
  },
  {
    files: ["*.js", "*.ts"], // the build's own configuration, run by Node
    extends: [tseslint.configs.disableTypeChecked],
  },
);
