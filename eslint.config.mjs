// Lint: typescript-eslint with type information. `no-floating-promises` is an error because
// un-awaited work in Cloud Functions is silently lost when the instance is throttled.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['**/node_modules/**', 'functions/lib/**', 'sdk/dist/**', 'examples/email-connector/dist/**', '.local/**', '.emulators/**', 'coverage/**', 'bench/results/**', 'hosting/public/console/app.js'] },
  js.configs.recommended,
  {
    files: ['**/*.ts'],
    extends: [...tseslint.configs.recommended],
    languageOptions: {
      // The programs to lint with, named rather than found per file (`projectService`): a file is
      // linted with the first program that contains it, so the console's browser code gets the DOM
      // library, the desk CLI its own, and everything else (functions/src, sdk, test, bench) the
      // root program the type check uses, instead of a program of its own per nearest tsconfig.
      // The same findings in 0.74 of the CPU (68 s against 92 s for the whole tree, one run each).
      // A TypeScript file none of these include is refused by the parser: add it to one of them.
      parserOptions: {
        project: ['./console/tsconfig.json', './console/cli/tsconfig.json', './tsconfig.json', './examples/email-connector/tsconfig.json'],
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/ban-ts-comment': ['error', { 'ts-ignore': true, 'ts-expect-error': 'allow-with-description' }],
      // esbuild tree-shakes zod only through the namespace import: the named `z` (or the default)
      // is a namespace object esbuild keeps whole, with all 64 locales (scripts/bundle-functions.mjs).
      // (no-restricted-imports cannot tell `import * as z` from `import { z }`, hence a selector.)
      'no-restricted-syntax': ['error', { selector: "ImportDeclaration[source.value='zod'][importKind!='type'] > :matches(ImportSpecifier[importKind!='type'], ImportDefaultSpecifier)", message: "Use `import * as z from 'zod'`: it keeps zod's locales out of the function bundles." }],
    },
  },
  {
    files: ['**/*.mjs', '**/*.cjs', '**/*.js'],
    languageOptions: {
      globals: { process: 'readonly', console: 'readonly', Buffer: 'readonly', fetch: 'readonly', AbortSignal: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly', setInterval: 'readonly', clearInterval: 'readonly', URL: 'readonly', module: 'writable', require: 'readonly', __dirname: 'readonly' },
    },
    rules: { 'no-unused-vars': ['error', { argsIgnorePattern: '^_' }] },
  },
);
