import { closesAtAfterConnectorClosed, closesAtAfterMessage, effectiveClosesAt, isWindowClosed, WINDOW_MARGIN_MS, windowClosesAt } from '../../../functions/src/rules/window';

const T0 = 1_767_225_600_000;
const DAY = 86_400;

describe('windowClosesAt', () => {
  test("the customer's sentAt plus the window, less the minute of margin", () => {
    expect(windowClosesAt(T0, DAY)).toBe(T0 + DAY * 1000 - 60_000);
    expect(WINDOW_MARGIN_MS).toBe(60_000);
  });
});

describe('closesAtAfterMessage', () => {
  test('the first customer message opens the window from its own sentAt', () => {
    expect(closesAtAfterMessage({ closesAt: null, latestSentAt: null }, T0, DAY)).toBe(windowClosesAt(T0, DAY));
  });

  test('a newer message moves it forward from its sentAt', () => {
    const before = { closesAt: windowClosesAt(T0, DAY), latestSentAt: T0 };
    expect(closesAtAfterMessage(before, T0 + 3_600_000, DAY)).toBe(windowClosesAt(T0 + 3_600_000, DAY));
  });

  test('an older message arriving late never moves it back', () => {
    const before = { closesAt: windowClosesAt(T0, DAY), latestSentAt: T0 };
    expect(closesAtAfterMessage(before, T0 - 3_600_000, DAY)).toBe(windowClosesAt(T0, DAY));
    expect(closesAtAfterMessage(before, T0, DAY)).toBe(windowClosesAt(T0, DAY));
  });

  test("an older message does not reopen a window the connector closed", () => {
    const before = { closesAt: T0 + 1000, latestSentAt: T0 };
    expect(closesAtAfterMessage(before, T0 - 5000, DAY)).toBe(T0 + 1000);
  });

  test('without a stored window, the latest sentAt known opens it (a window declared after the customer wrote)', () => {
    expect(closesAtAfterMessage({ closesAt: null, latestSentAt: T0 + 5000 }, T0, DAY)).toBe(windowClosesAt(T0 + 5000, DAY));
  });
});

describe('isWindowClosed', () => {
  const stored = (closesAt: number | null) => ({ closesAt, lastCustomerSentAt: null });
  test('never closed when the integration declares no window', () => {
    expect(isWindowClosed(null, stored(null), T0)).toBe(false);
    expect(isWindowClosed(null, stored(T0 - 1), T0)).toBe(false);
  });

  test('closed at closesAt and after, open before', () => {
    expect(isWindowClosed(DAY, stored(T0 + 1), T0)).toBe(false);
    expect(isWindowClosed(DAY, stored(T0), T0)).toBe(true);
    expect(isWindowClosed(DAY, stored(T0 - 1), T0)).toBe(true);
  });

  test('closed when a window is declared and no customer has written (a conversation the desk started)', () => {
    expect(isWindowClosed(DAY, stored(null), T0)).toBe(true);
  });

  test("without a stored window, the customer's latest sentAt opens it (written before the declaration, or taken with a channel cached from before it)", () => {
    const wroteAnHourAgo = { closesAt: null, lastCustomerSentAt: T0 - 3_600_000 };
    expect(effectiveClosesAt(wroteAnHourAgo, DAY)).toBe(windowClosesAt(T0 - 3_600_000, DAY));
    expect(isWindowClosed(DAY, wroteAnHourAgo, T0)).toBe(false);
    expect(isWindowClosed(3_600, wroteAnHourAgo, T0)).toBe(true);
  });

  test('a stored window wins over the fallback (the connector closed it, or an older message arrived late)', () => {
    expect(isWindowClosed(DAY, { closesAt: T0 - 1, lastCustomerSentAt: T0 - 1000 }, T0)).toBe(true);
    expect(effectiveClosesAt({ closesAt: T0 + 5, lastCustomerSentAt: T0 }, DAY)).toBe(T0 + 5);
  });
});

describe('closesAtAfterConnectorClosed', () => {
  test("the connector's window_closed closes it now", () => {
    expect(closesAtAfterConnectorClosed(T0 + DAY * 1000, T0)).toBe(T0);
    expect(closesAtAfterConnectorClosed(null, T0)).toBe(T0);
  });

  test('an earlier end stays', () => {
    expect(closesAtAfterConnectorClosed(T0 - 1000, T0)).toBe(T0 - 1000);
  });
});
