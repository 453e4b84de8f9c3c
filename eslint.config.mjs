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
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
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
