/**
 * The conformance scenario `start-conversation` (docs/conformance.md): opt-in by `starts` (the
 * kinds of address the connector starts conversations by). A connector whose `send` handles
 * `input.start` and returns the thread passes it, one start per declared kind, on a plain channel
 * and on one with a reply window (the start then goes as a template); one whose `send` returns no
 * conversation fails it with the reason; one that declares no kinds skips it when it is asked for
 * by name (and does not run it by default: it is not among `SCENARIO_NAMES`).
 */
import { ConnectorClient, runPullLoop, type ProviderSendInput } from '../../../src/index.js';
import type { ConformanceModule, ConformanceStartContext, StartAddressKind } from '../../../src/check/connector.js';
import { formatResult, runConformance, SCENARIO_NAMES, START_SCENARIO_NAMES } from '../../../src/check/runner.js';
import { START_ADDRESSES } from '../../../src/check/scenarios.js';

jest.setTimeout(60_000);

interface Options {
  starts?: readonly StartAddressKind[];
  /** The send of a start returns only provider ids (no conversation). */
  noConversation?: boolean;
  /** Declares a 24 h reply window and one template at start-up, as a WhatsApp connector would. */
  windowed?: boolean;
}

/** A small connector on the SDK's pull loop; `sends` keeps what its provider was asked to send. */
function connector(options: Options): ConformanceModule & { sends: ProviderSendInput[] } {
  let stop: (() => Promise<void>) | undefined;
  let n = 0;
  const sends: ProviderSendInput[] = [];
  return {
    sends,
    ...(options.starts === undefined ? {} : { starts: options.starts }),
    async start(ctx: ConformanceStartContext) {
      const client = new ConnectorClient({ integrationKey: ctx.key, baseUrl: ctx.baseUrl });
      if (options.windowed === true) {
        await client.channel.update({ window: { seconds: 86_400 }, templates: [{ name: 'welcome', language: 'en', params: [{ name: 'name' }], preview: 'Hello {{name}}, this is the support desk.' }] });
      }
      const loop = runPullLoop(client, ctx.subscription, {
        send(input) {
          sends.push(input);
          n += 1;
          if (input.start !== true || options.noConversation === true) return { providerMessageIds: [`p-${n}`] };
          const address = input.recipient.address;
          if (address === undefined) throw new Error('a start without recipient.address');
          return { providerMessageIds: [`p-${n}`], conversation: { externalConversationId: `thread-${address.value}`, externalCustomerId: address.value } };
        },
      });
      stop = () => loop.stop();
    },
    async stop() {
      await stop?.();
      stop = undefined;
    },
  };
}

const run = (module: ConformanceModule) => runConformance({ connector: { kind: 'module', module }, scenarios: START_SCENARIO_NAMES, timeoutMs: 8_000 });

test("the scenario is opt-in: not among every connector's scenarios", () => {
  expect(START_SCENARIO_NAMES).toEqual(['start-conversation']);
  expect(SCENARIO_NAMES).not.toContain('start-conversation');
});

test('a connector that starts conversations by handle and email passes: send got input.start with the address, one start per kind', async () => {
  const module = connector({ starts: ['email', 'handle'] });
  const report = await run(module);
  expect(report.results.map(formatResult).join('\n')).toMatch(/^PASS start-conversation /);
  const starts = module.sends.filter((s) => s.start === true);
  // The two starts go side by side: in any order.
  expect(starts.map((s) => s.recipient.address).sort((a, b) => String(a?.kind).localeCompare(String(b?.kind)))).toEqual([
    { kind: 'email', value: START_ADDRESSES.email },
    { kind: 'handle', value: START_ADDRESSES.handle },
  ]);
  // After each start: the operator's reply goes to the thread the connector named.
  expect(module.sends.filter((s) => s.start !== true).map((s) => s.recipient.externalConversationId).sort()).toEqual([`thread-${START_ADDRESSES.email}`, `thread-${START_ADDRESSES.handle}`].sort());
});

test('on a channel with a reply window the start goes as the first declared template, and passes', async () => {
  const module = connector({ starts: ['handle'], windowed: true });
  const report = await run(module);
  expect(report.results.map(formatResult).join('\n')).toMatch(/^PASS start-conversation /);
  expect(module.sends.find((s) => s.start === true)).toMatchObject({ template: { name: 'welcome', language: 'en', params: { name: 'Conformance' } }, text: 'Hello Conformance, this is the support desk.' });
});

test("a connector whose send returns no conversation fails the scenario, saying what a start's send must return", async () => {
  const report = await run(connector({ starts: ['handle'], noConversation: true }));
  const [result] = report.results;
  expect(result?.status).toBe('fail');
  expect(formatResult(result!)).toMatch(
    /^FAIL start-conversation: the connector's send returned no conversation for the start to handle conformance_new_customer \(the SDK failed it unknown, start_without_conversation\): a start's send must return \{ providerMessageIds, conversation: \{ externalConversationId, externalCustomerId \} \}/,
  );
});

test('a connector that declares no address kinds: skipped when the scenario is named', async () => {
  const plain = connector({});
  const all = await runConformance({ connector: { kind: 'module', module: plain }, scenarios: [...START_SCENARIO_NAMES, 'plain-reply'], timeoutMs: 8_000 });
  expect(all.results.map((r) => [r.name, r.status])).toEqual([
    ['plain-reply', 'pass'],
    ['start-conversation', 'skip'],
  ]);
  expect(all.results[1]?.reason).toBe('the connector declares no address kinds it starts conversations by (starts: [...] / --starts)');
});
