/**
 * The conformance runner (decision 16): runs named scenarios against a connector, each on a fresh
 * in-memory test service with a fresh integration, and reports per scenario whether the end state
 * was as expected and which delivery rules the connector's calls broke.
 */
import { ConnectorClient } from '../client.js';
import { startTestService } from '../testing/index.js';
import { VIOLATION_RULES } from '../testing/violations.js';
import type { TestService, Violation } from '../testing/types.js';
import { lifecycleOf, startsOf, startTarget, windowsOf, type ConnectorTarget, type RunningTarget } from './connector.js';
import { CONFORMANCE_CUSTOMER, SCENARIOS, type Scenario, type ScenarioState } from './scenarios.js';

/** Default time a scenario may take to reach its outcome. */
export const DEFAULT_SCENARIO_TIMEOUT_MS = 15_000;

export interface ScenarioResult {
  name: string;
  title: string;
  status: 'pass' | 'fail' | 'skip';
  durationMs: number;
  /** Rules the connector's calls broke (`violations({ final: true })` of the scenario's service). */
  violations: readonly Violation[];
  /** End-state problems, timeouts and errors, one sentence each. */
  failures: readonly string[];
  /** Why it was skipped. */
  reason?: string;
}

export interface ConformanceOptions {
  connector: ConnectorTarget;
  /** Names of the scenarios to run (default: `SCENARIO_NAMES`, and those of `LIFECYCLE_SCENARIO_NAMES`, `WINDOW_SCENARIO_NAMES` and `START_SCENARIO_NAMES` the connector declares). */
  scenarios?: readonly string[];
  /** Time each scenario may take to reach its outcome (default `DEFAULT_SCENARIO_TIMEOUT_MS`). */
  timeoutMs?: number;
  /** Called after each scenario (the CLI prints its line). */
  onResult?: (result: ScenarioResult) => void;
}

export interface ConformanceReport {
  results: ScenarioResult[];
  passed: number;
  failed: number;
  skipped: number;
  durationMs: number;
}

/** The names of the scenarios every connector runs (all but the ones after the send, the reply window's and the start's). */
export const SCENARIO_NAMES: readonly string[] = Object.freeze(SCENARIOS.filter((s) => s.lifecycle === undefined && s.windows !== true && s.starts !== true).map((s) => s.name));

/** The scenarios after the send (`edit-reply`, `unsend-reply`): run by default for a connector that declares the kind (`lifecycle`). */
export const LIFECYCLE_SCENARIO_NAMES: readonly string[] = Object.freeze(SCENARIOS.filter((s) => s.lifecycle !== undefined).map((s) => s.name));

/** The reply window's scenario (`window-closed`): run by default for a connector that declares `windows` (`--windows`). */
export const WINDOW_SCENARIO_NAMES: readonly string[] = Object.freeze(SCENARIOS.filter((s) => s.windows === true).map((s) => s.name));

/** The scenario of a conversation the desk starts (`start-conversation`): run by default for a connector that declares `starts` (`--starts`). */
export const START_SCENARIO_NAMES: readonly string[] = Object.freeze(SCENARIOS.filter((s) => s.starts === true).map((s) => s.name));

const ALL_NAMES: readonly string[] = [...SCENARIO_NAMES, ...LIFECYCLE_SCENARIO_NAMES, ...WINDOW_SCENARIO_NAMES, ...START_SCENARIO_NAMES];

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** Runs one scenario on a service of its own. */
async function runScenario(scenario: Scenario, target: ConnectorTarget, timeoutMs: number): Promise<ScenarioResult> {
  const begun = performance.now();
  const base = { name: scenario.name, title: scenario.title };
  const offset = scenario.serviceClockOffsetMs ?? 0;
  const service: TestService = await startTestService(offset === 0 ? {} : { now: () => Date.now() - offset });
  const failures: string[] = [];
  let running: RunningTarget | undefined;
  try {
    const integration = await service.createIntegration(scenario.capabilities ?? {});
    const client = new ConnectorClient({ integrationKey: integration.key, baseUrl: service.baseUrl });
    // The customer writes first: the conversation the replies go to (and the customer an erasure names).
    const opened = await client.messages.send({
      externalConversationId: CONFORMANCE_CUSTOMER.externalConversationId,
      sender: { externalId: CONFORMANCE_CUSTOMER.customerId, displayName: 'Conformance customer' },
      text: CONFORMANCE_CUSTOMER.text,
    });
    const subscription = service.subscription(integration.integrationId);
    const ctx: ScenarioState = {
      service,
      integration,
      conversationId: opened.conversationId,
      externalConversationId: CONFORMANCE_CUSTOMER.externalConversationId,
      customerId: CONFORMANCE_CUSTOMER.customerId,
      startKinds: startsOf(target),
      client,
      sendIncoming: undefined,
      channelMessage: undefined,
      waitFor: (predicate, what) =>
        service.waitFor(predicate, timeoutMs).catch((err: unknown) => {
          throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${/timed out/.test(describe(err)) ? '' : ` (${describe(err)})`}`);
        }),
      settle: (ms) => new Promise((done) => setTimeout(done, ms)),
      ...(target.kind === 'module' ? { subscriptionIdle: () => subscription.outstanding === 0 } : {}),
    };
    await scenario.before?.(ctx);
    try {
      running = await startTarget(target, { baseUrl: service.baseUrl, key: integration.key, subscription, scenario: scenario.name, providerDelayMs: scenario.providerDelayMs ?? 0 }, (url) =>
        service.pushTo(integration.integrationId, url),
      );
    } catch (err) {
      failures.push(`the connector did not start: ${describe(err)}`);
    }
    if (running !== undefined) {
      if (scenario.needsIncoming === true && running.sendIncoming === undefined) {
        return { ...base, status: 'skip', durationMs: Math.round(performance.now() - begun), violations: [], failures: [], reason: 'the connector has no sendIncoming (module) / --incoming URL (process)' };
      }
      if (scenario.windows === true && !windowsOf(target)) {
        return { ...base, status: 'skip', durationMs: Math.round(performance.now() - begun), violations: [], failures: [], reason: 'the connector declares no reply window (windows: true / --windows)' };
      }
      if (scenario.starts === true && ctx.startKinds.length === 0) {
        return { ...base, status: 'skip', durationMs: Math.round(performance.now() - begun), violations: [], failures: [], reason: 'the connector declares no address kinds it starts conversations by (starts: [...] / --starts)' };
      }
      if (scenario.lifecycle !== undefined && lifecycleOf(target)[scenario.lifecycle] !== true) {
        return { ...base, status: 'skip', durationMs: Math.round(performance.now() - begun), violations: [], failures: [], reason: `the connector declares no ${scenario.lifecycle} (lifecycle: { ${scenario.lifecycle}: true })` };
      }
      ctx.sendIncoming = running.sendIncoming;
      ctx.channelMessage = running.channelMessage;
      try {
        await scenario.run(ctx);
      } catch (err) {
        failures.push(describe(err));
      }
      try {
        await running.stop();
      } catch (err) {
        failures.push(`the connector did not stop cleanly: ${describe(err)}`);
      }
      running = undefined;
      try {
        failures.push(...scenario.check(ctx));
      } catch (err) {
        failures.push(describe(err));
      }
    }
    const violations = service.violations({ final: true });
    const status = failures.length === 0 && violations.length === 0 ? 'pass' : 'fail';
    return { ...base, status, durationMs: Math.round(performance.now() - begun), violations, failures };
  } catch (err) {
    return { ...base, status: 'fail', durationMs: Math.round(performance.now() - begun), violations: [], failures: [...failures, describe(err)] };
  } finally {
    if (running !== undefined) await running.stop().catch(() => undefined);
    await service.close();
  }
}

/**
 * Runs the scenarios (all by default) one after the other, each against a fresh test service and
 * integration, with the connector started for it and stopped after it. Never throws for a
 * connector's failure: that is a `fail` result; an unknown scenario name is a `RangeError`.
 */
export async function runConformance(options: ConformanceOptions): Promise<ConformanceReport> {
  // By default: every scenario, and those after the send for the kinds the connector declares.
  const declared = lifecycleOf(options.connector);
  const windows = windowsOf(options.connector);
  const starts = startsOf(options.connector).length > 0;
  const names = options.scenarios ?? SCENARIOS.filter((s) => (s.lifecycle === undefined || declared[s.lifecycle] === true) && (s.windows !== true || windows) && (s.starts !== true || starts)).map((s) => s.name);
  const unknown = names.filter((n) => !ALL_NAMES.includes(n));
  if (unknown.length > 0) throw new RangeError(`unknown scenario ${unknown.join(', ')} (scenarios: ${ALL_NAMES.join(', ')})`);
  const timeoutMs = options.timeoutMs ?? DEFAULT_SCENARIO_TIMEOUT_MS;
  const begun = performance.now();
  const results: ScenarioResult[] = [];
  for (const scenario of SCENARIOS.filter((s) => names.includes(s.name))) {
    const result = await runScenario(scenario, options.connector, timeoutMs);
    results.push(result);
    options.onResult?.(result);
  }
  return {
    results,
    passed: results.filter((r) => r.status === 'pass').length,
    failed: results.filter((r) => r.status === 'fail').length,
    skipped: results.filter((r) => r.status === 'skip').length,
    durationMs: Math.round(performance.now() - begun),
  };
}

/** One result as the CLI prints it: `PASS name (120 ms)`, or `FAIL name: rule — message (calls #3, #5)` and one more indented line per further problem. */
export function formatResult(result: ScenarioResult): string {
  if (result.status === 'pass') return `PASS ${result.name} (${result.durationMs} ms)`;
  if (result.status === 'skip') return `SKIP ${result.name}: ${result.reason ?? 'not applicable'}`;
  const lines = [
    ...result.violations.map((v) => `${v.rule} — ${v.message} (calls ${v.evidence.map((s) => `#${s}`).join(', ')})`),
    ...result.failures,
  ];
  const [first = 'failed', ...rest] = lines;
  return [`FAIL ${result.name}: ${first} (${result.durationMs} ms)`, ...rest.map((l) => `     ${l}`)].join('\n');
}

/** After the summary: each rule some scenario broke, with its one-line description (`VIOLATION_RULES`). */
export function formatRulesBroken(report: ConformanceReport): string[] {
  const broken = [...new Set(report.results.flatMap((r) => r.violations.map((v) => v.rule)))];
  return broken.map((rule) => `rule ${rule}: ${VIOLATION_RULES[rule]}`);
}

/** The summary line. */
export function formatSummary(report: ConformanceReport): string {
  const total = report.results.length;
  return `${report.failed === 0 ? 'OK' : 'FAILED'}: ${total} scenario${total === 1 ? '' : 's'}, ${report.passed} passed, ${report.failed} failed, ${report.skipped} skipped (${(report.durationMs / 1000).toFixed(1)} s)`;
}
