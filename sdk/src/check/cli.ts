#!/usr/bin/env node
/**
 * `support-desk-connector-check`: the conformance runner's command line (docs/conformance.md).
 *
 *   support-desk-connector-check <module> [--scenario name ...] [--timeout ms]
 *   support-desk-connector-check --push <url> --command "<cmd>" [--incoming <url>] [--lifecycle kinds] [--windows] [--starts kinds] [--scenario name ...] [--timeout ms] [--verbose]
 *
 * Prints one line per scenario, a summary, and the rules broken (with what each means); exits 0 when every scenario passed (or was
 * skipped), 1 when one failed, 2 on a usage error.
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { isLifecycleKind, LIFECYCLE_KINDS } from '../internal/contract.generated.js';
import { START_ADDRESS_KINDS } from '../internal/contract.generated.js';
import type { ConformanceModule, ConnectorTarget, LifecycleDeclaration, StartAddressKind } from './connector.js';
import { DEFAULT_SCENARIO_TIMEOUT_MS, formatResult, formatRulesBroken, formatSummary, LIFECYCLE_SCENARIO_NAMES, runConformance, SCENARIO_NAMES, START_SCENARIO_NAMES, WINDOW_SCENARIO_NAMES } from './runner.js';

const USAGE = `usage:
  support-desk-connector-check <module> [--scenario name ...] [--timeout ms]
      an in-process connector: a module exporting start({ baseUrl, key, subscription, providerDelayMs }),
      stop() and, optionally, sendIncoming({ text, externalConversationId, externalCustomerId }),
      lifecycle = { ${LIFECYCLE_KINDS.join(', ')} }, windows = true, starts = [${START_ADDRESS_KINDS.map((k) => `'${k}'`).join(', ')}] and channelMessage(providerMessageId)
  support-desk-connector-check --push <url> --command "<cmd>" [--incoming <url>] [--lifecycle ${LIFECYCLE_KINDS.join(',')}] [--windows] [--starts ${START_ADDRESS_KINDS.join(',')}] [--scenario name ...] [--timeout ms] [--verbose]
      a connector process started per scenario with SUPPORT_DESK_API_BASE_URL, SUPPORT_DESK_INTEGRATION_KEY,
      SUPPORT_DESK_CHECK_SCENARIO and SUPPORT_DESK_CHECK_PROVIDER_DELAY_MS; notifications are pushed to <url>
scenarios: ${SCENARIO_NAMES.join(', ')}
after the send (run for the kinds the connector declares): ${LIFECYCLE_SCENARIO_NAMES.join(', ')}
the reply window (run when the connector declares windows / --windows): ${WINDOW_SCENARIO_NAMES.join(', ')}
conversations the desk starts (run when the connector declares starts / --starts): ${START_SCENARIO_NAMES.join(', ')}
default timeout per scenario: ${DEFAULT_SCENARIO_TIMEOUT_MS} ms`;

class UsageError extends Error {}

function isModule(value: unknown): value is ConformanceModule {
  const m = value as { start?: unknown; stop?: unknown } | null;
  return typeof m === 'object' && m !== null && typeof m.start === 'function' && typeof m.stop === 'function';
}

async function loadModule(path: string): Promise<ConformanceModule> {
  const loaded: unknown = await import(pathToFileURL(resolve(path)).href);
  if (isModule(loaded)) return loaded;
  const fallback = (loaded as { default?: unknown }).default;
  if (isModule(fallback)) return fallback;
  throw new UsageError(`${path} exports no start() and stop()`);
}

/** The contract's kinds in words: "edit and/or unsend", "edit, unsend and/or pin". */
const KINDS_IN_WORDS = `${LIFECYCLE_KINDS.slice(0, -1).join(', ')} and/or ${LIFECYCLE_KINDS.at(-1) ?? ''}`;

/** `--lifecycle edit,unsend`: the kinds a process connector implements (any of the contract's). */
function lifecycleFlag(value: string | undefined): LifecycleDeclaration | undefined {
  if (value === undefined) return undefined;
  const kinds = value.split(',').map((k) => k.trim());
  const unknown = kinds.filter((k) => !isLifecycleKind(k));
  if (unknown.length > 0) throw new UsageError(`--lifecycle takes ${KINDS_IN_WORDS}, not ${unknown.join(', ')}`);
  return Object.fromEntries(LIFECYCLE_KINDS.map((kind) => [kind, kinds.includes(kind)]));
}

/** `--starts handle,email`: the kinds of address a process connector starts conversations by (any of the contract's). */
function startsFlag(value: string | undefined): StartAddressKind[] | undefined {
  if (value === undefined) return undefined;
  const kinds = value.split(',').map((k) => k.trim());
  const unknown = kinds.filter((k) => !(START_ADDRESS_KINDS as readonly string[]).includes(k));
  if (unknown.length > 0 || kinds.length === 0) throw new UsageError(`--starts takes ${START_ADDRESS_KINDS.join(', ')} (one or more, separated by commas), not ${unknown.join(', ')}`);
  return START_ADDRESS_KINDS.filter((kind) => kinds.includes(kind));
}

async function target(
  values: { push?: string | undefined; command?: string | undefined; incoming?: string | undefined; lifecycle?: string | undefined; windows?: boolean | undefined; starts?: string | undefined; verbose?: boolean | undefined },
  positionals: string[],
): Promise<ConnectorTarget> {
  if (values.push !== undefined || values.command !== undefined) {
    if (values.push === undefined || values.command === undefined) throw new UsageError('--push and --command go together');
    if (positionals.length > 0) throw new UsageError('give a module or --push/--command, not both');
    const lifecycle = lifecycleFlag(values.lifecycle);
    const starts = startsFlag(values.starts);
    return {
      kind: 'process',
      pushUrl: values.push,
      command: values.command,
      ...(values.incoming === undefined ? {} : { incomingUrl: values.incoming }),
      ...(lifecycle === undefined ? {} : { lifecycle }),
      ...(values.windows === true ? { windows: true } : {}),
      ...(starts === undefined ? {} : { starts }),
      ...(values.verbose === true ? { output: (chunk: string) => process.stderr.write(chunk) } : {}),
    };
  }
  if (values.lifecycle !== undefined) throw new UsageError('--lifecycle is for a process (--push/--command); a module exports lifecycle');
  if (values.windows !== undefined) throw new UsageError('--windows is for a process (--push/--command); a module exports windows');
  if (values.starts !== undefined) throw new UsageError('--starts is for a process (--push/--command); a module exports starts');
  const [path, ...extra] = positionals;
  if (path === undefined || extra.length > 0) throw new UsageError('give exactly one module path');
  return { kind: 'module', module: await loadModule(path) };
}

async function main(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        scenario: { type: 'string', multiple: true },
        timeout: { type: 'string' },
        push: { type: 'string' },
        command: { type: 'string' },
        incoming: { type: 'string' },
        lifecycle: { type: 'string' },
        windows: { type: 'boolean' },
        starts: { type: 'string' },
        verbose: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (err) {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n${USAGE}\n`);
    return 2;
  }
  const { values, positionals } = parsed;
  if (values.help === true) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  try {
    const timeoutMs = values.timeout === undefined ? undefined : Number(values.timeout);
    if (timeoutMs !== undefined && !(Number.isInteger(timeoutMs) && timeoutMs > 0)) throw new UsageError('--timeout must be a positive integer (ms)');
    const unknown = (values.scenario ?? []).filter((n) => !SCENARIO_NAMES.includes(n) && !LIFECYCLE_SCENARIO_NAMES.includes(n) && !WINDOW_SCENARIO_NAMES.includes(n) && !START_SCENARIO_NAMES.includes(n));
    if (unknown.length > 0) throw new UsageError(`unknown scenario ${unknown.join(', ')}`);
    const connector = await target(values, positionals);
    const report = await runConformance({
      connector,
      ...(values.scenario === undefined ? {} : { scenarios: values.scenario }),
      ...(timeoutMs === undefined ? {} : { timeoutMs }),
      onResult: (result) => process.stdout.write(`${formatResult(result)}\n`),
    });
    process.stdout.write(`${formatSummary(report)}\n`);
    for (const line of formatRulesBroken(report)) process.stdout.write(`${line}\n`);
    return report.failed === 0 ? 0 : 1;
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`${err.message}\n${USAGE}\n`);
      return 2;
    }
    throw err;
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`support-desk-connector-check: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exitCode = 2;
  },
);
