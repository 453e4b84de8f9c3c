/**
 * Email connector, inbound refusals: what the sending MTA hears when the API refuses for now (429
 * after the retries, or the key refused: 451) or for good (a disabled source, mail for someone
 * else: 550).
 * It meets the incoming rate limit, kept per function instance: npm test serves the messages
 * function from one process (scripts/test-stack.mjs), so it runs beside other suites.
 */
import { randomUUID } from 'node:crypto';
import { closePubSub } from '../helpers/deliveries';
import { closeStack } from '../helpers/stack';
import { refusal, startEmailStack } from './helpers';

jest.setTimeout(120_000);

afterAll(async () => {
  await closePubSub();
  await closeStack();
});

test('the API refusing for now (429 after the retries, or the key refused) is a 451 for the sending MTA; a refused source is a 550', async () => {
  // One message a minute, and no retries in the SDK: the second mail meets the 429. The first
  // answer says the budget is spent (RateLimit-Remaining: 0, reset in a minute), so the SDK holds
  // the next call until the reset, capped by maxRetryAfterMs (30 s by default): 1 s here, which
  // still sends it within the minute.
  // The three connectors start side by side (each creates its integration, topic and servers).
  const [limited, wrongKey, disabled] = await Promise.all([
    startEmailStack({ integration: { messagesPerMinute: 1 }, clientRetry: { limit: 0, maxRetryAfterMs: 1_000 } }),
    startEmailStack({ integrationKey: `sdk_test_${randomUUID().replace(/-/g, '')}` }),
    startEmailStack({ integration: { sourceEnabled: false } }),
  ]);
  try {
    await limited.mail({ from: 'carol@example.test', text: 'first' });
    expect(await refusal(limited.mail({ from: 'carol@example.test', text: 'second' }))).toEqual({ responseCode: 451, response: expect.stringMatching(/^451 4\.3\.0 .*rate_limited/) });
    expect(await refusal(wrongKey.mail({ from: 'carol@example.test', text: 'hello' }))).toEqual({ responseCode: 451, response: expect.stringMatching(/^451 4\.7\.0 /) });
    expect(await refusal(disabled.mail({ from: 'carol@example.test', text: 'hello' }))).toEqual({ responseCode: 550, response: expect.stringMatching(/^550 5\.7\.1 .*source_disabled/) });
    // Mail for anyone else is not ours to take.
    expect(await refusal(limited.mail({ from: 'carol@example.test', to: 'someone@support-desk.test', text: 'hi' }))).toMatchObject({ responseCode: 550 });
  } finally {
    await Promise.all([limited.close(), wrongKey.close(), disabled.close()]);
  }
});
