/**
 * `client.channel.update()` end to end on the emulator stack or the test service (./target.ts):
 * the channel stored and answered, a field left out kept, the same input again unchanged (its
 * `updatedAt` too), a refused input a `BadRequestError` naming the field with nothing stored, and
 * an inactive integration's key refused. The same assertions on both targets: the test service runs
 * the service's own channel rules.
 */
import { BadRequestError, ForbiddenError, type ChannelTemplate } from '../../src/index.js';
import { closePubSub, closeStack, createTestIntegration, sdkClient } from './helpers';

jest.setTimeout(60_000);

afterAll(async () => {
  await closePubSub();
  await closeStack();
});

const orderUpdate: ChannelTemplate = { name: 'order_update', language: 'en-US', params: [{ name: 'order', maxLength: 32 }], preview: 'Your order {{ order }} has shipped.' };

test('update stores the channel; a field left out stays; the same input again changes nothing', async () => {
  const client = sdkClient((await createTestIntegration()).key);
  const first = await client.channel.update({ window: { seconds: 86_400 }, templates: [orderUpdate] });
  expect(first).toEqual({ window: { seconds: 86_400 }, templates: [orderUpdate], updatedAt: expect.any(Number) as number });

  expect(await client.channel.update({ window: { seconds: 86_400 }, templates: [orderUpdate] })).toEqual(first);
  expect(await client.channel.update({ window: { seconds: 86_400 } })).toEqual(first);

  const windowOff = await client.channel.update({ window: null });
  expect(windowOff).toEqual({ window: null, templates: [orderUpdate], updatedAt: expect.any(Number) as number });
  expect(windowOff.updatedAt).toBeGreaterThanOrEqual(first.updatedAt);
});

test('a refused input is a BadRequestError naming the field, and nothing is stored', async () => {
  const client = sdkClient((await createTestIntegration()).key);
  const stored = await client.channel.update({ templates: [orderUpdate] });
  const refusals: Array<[Parameters<typeof client.channel.update>[0], string]> = [
    [{}, 'body: must name window, templates or both'],
    [{ window: { seconds: 59 } }, 'window.seconds'],
    [{ templates: [orderUpdate, { ...orderUpdate, language: 'EN-us' }] }, 'templates[1]: duplicates templates[0]'],
    [{ templates: [{ ...orderUpdate, preview: '{{order}} by {{eta}}' }] }, 'templates[0].preview: placeholder {{eta}} names no param'],
    [{ templates: [{ ...orderUpdate, preview: 'Shipped.' }] }, "templates[0].preview: does not use param 'order'"],
  ];
  for (const [input, field] of refusals) {
    const refused = await client.channel.update(input).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(BadRequestError);
    expect(refused).toMatchObject({ code: 'invalid_request' });
    expect((refused as Error).message).toContain(field);
  }
  expect(await client.channel.update({ templates: [orderUpdate] })).toEqual(stored);
});

test("an inactive integration's key is refused (403)", async () => {
  const client = sdkClient((await createTestIntegration({ active: false })).key);
  await expect(client.channel.update({ window: null })).rejects.toBeInstanceOf(ForbiddenError);
});
