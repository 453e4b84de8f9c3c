#!/usr/bin/env node
/**
 * The type check and ESLint in one process, on the same TypeScript programs (`npm test`'s static
 * phase; `npm run check`).
 *
 * ESLint's type-aware rules (`no-floating-promises`, `no-misused-promises`, ...) need a
 * TypeScript program of each tsconfig, the very programs `tsc -p` builds and checks: run apart,
 * each tool parses, binds and checks the same 1,700 files. Here the programs are built once, their
 * diagnostics reported as `tsc` reports them, and then handed to typescript-eslint
 * (`parserOptions.programs`), whose rules find the types already resolved by the checker
 * (docs/toolchain.md#static-checks, with the measurement).
 *
 * The projects are eslint.config.mjs's `parserOptions.project`, in its order (a file is linted with
 * the first program that contains it). `npx eslint .` and an editor still build their own programs
 * from that list; this script lints with the same config and only swaps in the built programs.
 *
 * Exit code: 0 when both pass, 2 when the type check failed (ESLint does not run), 1 when ESLint
 * found an error. Started with an IPC channel (scripts/test.mjs), it sends `{ typeCheck: 'passed' }`
 * as soon as the type check passed, so the unit tests start while ESLint runs.
 * `--no-cache`: lint every file (by default ESLint's cache in .local/eslint-cache skips the files
 * unchanged since its last clean run, as `npm test` always did).
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';
import ts from 'typescript';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** The tsconfigs, in eslint.config.mjs's order; all four are type-checked (`tsc -p` each). */
const PROJECTS = ['console/tsconfig.json', 'console/cli/tsconfig.json', 'tsconfig.json', 'examples/email-connector/tsconfig.json'];

const formatHost = {
  getCanonicalFileName: (fileName) => fileName,
  getCurrentDirectory: () => ROOT,
  getNewLine: () => '\n',
};

/**
 * The program of one tsconfig, as `tsc -p` builds it: an incremental one where the tsconfig says
 * `incremental` (the root's buildinfo in .local/tsc makes a local rerun check only what changed).
 */
function buildProgram(project) {
  const configPath = join(ROOT, project);
  const parsed = ts.getParsedCommandLineOfConfigFile(configPath, {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: (d) => fail([d]) });
  if (parsed === undefined) throw new Error(`${project}: could not read`);
  const init = { rootNames: parsed.fileNames, options: parsed.options, configFileParsingDiagnostics: ts.getConfigFileParsingDiagnostics(parsed), projectReferences: parsed.projectReferences };
  if (parsed.options.incremental) {
    const builder = ts.createIncrementalProgram(init);
    return {
      program: builder.getProgram(),
      diagnostics: () => {
        const found = [
          ...builder.getConfigFileParsingDiagnostics(),
          ...builder.getOptionsDiagnostics(),
          ...builder.getGlobalDiagnostics(),
          ...builder.getSyntacticDiagnostics(),
          ...builder.getSemanticDiagnostics(),
        ];
        // With noEmit, emit writes only the buildinfo (what was checked, for the next run).
        if (found.length === 0) builder.emit();
        return found;
      },
    };
  }
  const program = ts.createProgram(init);
  return { program, diagnostics: () => [...program.getConfigFileParsingDiagnostics(), ...ts.getPreEmitDiagnostics(program)] };
}

function fail(diagnostics) {
  const format = process.stdout.isTTY ? ts.formatDiagnosticsWithColorAndContext : ts.formatDiagnostics;
  process.stdout.write(format(diagnostics, formatHost));
  const errors = diagnostics.filter((d) => d.category === ts.DiagnosticCategory.Error).length;
  console.error(`type check: ${errors} error${errors === 1 ? '' : 's'}`);
  process.exit(2);
}

const startedAt = Date.now();
const seconds = () => ((Date.now() - startedAt) / 1000).toFixed(1);
const built = PROJECTS.map((project) => ({ project, ...buildProgram(project) }));
const diagnostics = built.flatMap((b) => b.diagnostics());
if (diagnostics.length > 0) fail(diagnostics);
const files = built.reduce((n, b) => n + b.program.getSourceFiles().length, 0);
console.log(`type check passed (${PROJECTS.length} projects, ${files} files, ${seconds()} s)`);
process.send?.({ typeCheck: 'passed' });

const programs = built.map((b) => b.program);
// ESLint hashes its config into the cache; a Program is no data to hash (and has methods, which
// ESLint refuses to serialise): the projects' names stand for it.
Object.defineProperty(programs, 'toJSON', { value: () => PROJECTS.join(',') });
const cache = !process.argv.includes('--no-cache');
const eslint = new ESLint({
  cwd: ROOT,
  cache,
  cacheLocation: join(ROOT, '.local', 'eslint-cache'),
  cacheStrategy: 'content',
  overrideConfig: { files: ['**/*.ts'], languageOptions: { parserOptions: { programs } } },
});
const results = await eslint.lintFiles(['.']);
const formatter = await eslint.loadFormatter('stylish');
const output = await formatter.format(results);
if (output) process.stdout.write(output);
const errors = results.reduce((n, r) => n + r.errorCount + r.fatalErrorCount, 0);
console.log(`eslint: ${results.length} files, ${errors} error${errors === 1 ? '' : 's'} (${seconds()} s in all)`);
process.exit(errors > 0 ? 1 : 0);
