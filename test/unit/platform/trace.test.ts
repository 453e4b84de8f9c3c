/** W3C trace context and the log fields (docs/operations.md#tracing). */
import { formatTraceparent, parseTraceparent, spanIdOf, traceLogFields } from '../../../functions/src/platform/trace';
import { traceIdOfDelivery } from '../../../functions/src/rules/record';
import { withTraceFields } from '../../../functions/src/platform/log';

describe('parseTraceparent', () => {
  const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
  const SPAN = '00f067aa0ba902b7';
  test('a valid header gives its trace and parent span', () => {
    expect(parseTraceparent(`00-${TRACE}-${SPAN}-01`)).toEqual({ traceId: TRACE, spanId: SPAN });
    expect(parseTraceparent(`00-${TRACE}-${SPAN}-00`)).toEqual({ traceId: TRACE, spanId: SPAN });
    // A future version may append fields.
    expect(parseTraceparent(`01-${TRACE}-${SPAN}-01-future`)).toEqual({ traceId: TRACE, spanId: SPAN });
  });
  test.each([
    undefined,
    '',
    'garbage',
    `00-${TRACE.toUpperCase()}-${SPAN}-01`,
    `00-${'0'.repeat(32)}-${SPAN}-01`,
    `00-${TRACE}-${'0'.repeat(16)}-01`,
    `ff-${TRACE}-${SPAN}-01`,
    `00-${TRACE}-${SPAN}-01-extra`,
    `00-${TRACE.slice(1)}-${SPAN}-01`,
    `00-${TRACE}-${SPAN}-01${'x'.repeat(600)}`,
  ])('%s is malformed: ignored', (value) => {
    expect(parseTraceparent(value)).toBeNull();
  });
  test('format and parse round-trip', () => {
    expect(parseTraceparent(formatTraceparent(TRACE, SPAN))).toEqual({ traceId: TRACE, spanId: SPAN });
  });
});

describe('derived ids', () => {
  test('a delivery`s trace id is stable, 32 hex digits, and differs per delivery', () => {
    expect(traceIdOfDelivery('d_1')).toMatch(/^[0-9a-f]{32}$/);
    expect(traceIdOfDelivery('d_1')).toBe(traceIdOfDelivery('d_1'));
    expect(traceIdOfDelivery('d_1')).not.toBe(traceIdOfDelivery('d_2'));
    expect(spanIdOf('d_1@1')).toMatch(/^[0-9a-f]{16}$/);
    expect(spanIdOf('d_1@1')).not.toBe(spanIdOf('d_1@2'));
  });
});

describe('the log fields', () => {
  test('a line naming a delivery names its trace; a traceId wins; a spanId becomes the span', () => {
    const trace = traceIdOfDelivery('d_1');
    expect(withTraceFields({ deliveryId: 'd_1' })).toMatchObject({ traceId: trace, 'logging.googleapis.com/trace': expect.stringMatching(new RegExp(`^projects/[^/]+/traces/${trace}$`)) });
    expect(withTraceFields({ deliveryId: 'd_1', traceId: 'a'.repeat(32), spanId: 'b'.repeat(16) })).toMatchObject({
      'logging.googleapis.com/trace': expect.stringMatching(/traces\/a{32}$/),
      'logging.googleapis.com/spanId': 'b'.repeat(16),
    });
    expect(withTraceFields({ workspaceId: 'w' })).toEqual({ workspaceId: 'w' });
    expect(Object.keys(traceLogFields('a'.repeat(32)))).toEqual(['logging.googleapis.com/trace']);
  });
});
