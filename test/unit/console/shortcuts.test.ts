/** The Conversations view's keyboard shortcuts, as decisions (console/src/shortcuts.ts): which key does what where, and where j/k go. */
import { shortcutFor, SHORTCUTS, stepIndex, type KeyPress } from '../../../console/src/shortcuts';

const press = (key: string, over: Partial<KeyPress> = {}): KeyPress => ({
  key,
  ctrlKey: false,
  metaKey: false,
  altKey: false,
  isComposing: false,
  focus: 'other',
  threadOpen: true,
  characterKeys: true,
  ...over,
});

test('outside text fields: j/k move, r replies, ? shows the list, Esc closes the open thread', () => {
  expect(shortcutFor(press('j'))).toBe('next');
  expect(shortcutFor(press('k'))).toBe('previous');
  expect(shortcutFor(press('r'))).toBe('reply');
  expect(shortcutFor(press('?'))).toBe('help');
  expect(shortcutFor(press('Escape'))).toBe('close-thread');
  // Enter is the focused link's own (native), and other keys are nobody's.
  for (const key of ['Enter', 'J', 'K', 'R', 'x', ' ', 'Tab', 'ArrowDown', '/']) expect(shortcutFor(press(key))).toBeUndefined();
});

test('without an open thread, r and Esc do nothing; j, k and ? still work', () => {
  const noThread = { threadOpen: false };
  expect(shortcutFor(press('r', noThread))).toBeUndefined();
  expect(shortcutFor(press('Escape', noThread))).toBeUndefined();
  expect(shortcutFor(press('j', noThread))).toBe('next');
  expect(shortcutFor(press('k', noThread))).toBe('previous');
  expect(shortcutFor(press('?', noThread))).toBe('help');
});

test('while typing, letters are text: in the composer only Esc counts (it leaves the composer), in other fields nothing', () => {
  for (const key of ['j', 'k', 'r', '?', 'Enter']) {
    expect(shortcutFor(press(key, { focus: 'composer' }))).toBeUndefined();
    expect(shortcutFor(press(key, { focus: 'field' }))).toBeUndefined();
  }
  expect(shortcutFor(press('Escape', { focus: 'composer' }))).toBe('leave-composer');
  expect(shortcutFor(press('Escape', { focus: 'composer', threadOpen: false }))).toBe('leave-composer');
  // Esc in another field (an edit form, a select) is that field's.
  expect(shortcutFor(press('Escape', { focus: 'field' }))).toBeUndefined();
});

test('nothing with Ctrl, Meta or Alt held, or while an input method composes (Shift is part of ?)', () => {
  for (const key of ['j', 'k', 'r', '?', 'Escape']) {
    expect(shortcutFor(press(key, { ctrlKey: true }))).toBeUndefined();
    expect(shortcutFor(press(key, { metaKey: true }))).toBeUndefined();
    expect(shortcutFor(press(key, { altKey: true }))).toBeUndefined();
    expect(shortcutFor(press(key, { isComposing: true }))).toBeUndefined();
  }
});

test('turned off (WCAG 2.1.4), the single-key shortcuts do nothing; Esc, not a character key, still works', () => {
  const off = { characterKeys: false };
  for (const key of ['j', 'k', 'r', '?']) expect(shortcutFor(press(key, off))).toBeUndefined();
  expect(shortcutFor(press('Escape', off))).toBe('close-thread');
  expect(shortcutFor(press('Escape', { ...off, focus: 'composer' }))).toBe('leave-composer');
});

test('j/k step from the focused row and stop at either end', () => {
  expect(stepIndex(0, -1, 3, 1)).toBe(1);
  expect(stepIndex(1, -1, 3, 1)).toBe(2);
  expect(stepIndex(2, -1, 3, 1)).toBe(2);
  expect(stepIndex(2, -1, 3, -1)).toBe(1);
  expect(stepIndex(0, -1, 3, -1)).toBe(0);
  // The focused row wins over the selected one.
  expect(stepIndex(0, 2, 3, 1)).toBe(1);
});

test('with no row focused, the first press lands on the selected row, or the first', () => {
  expect(stepIndex(-1, 2, 5, 1)).toBe(2);
  expect(stepIndex(-1, 2, 5, -1)).toBe(2);
  expect(stepIndex(-1, -1, 5, 1)).toBe(0);
  expect(stepIndex(-1, -1, 5, -1)).toBe(0);
  // A stale index (the list shrank) counts as none.
  expect(stepIndex(7, 9, 5, 1)).toBe(0);
  expect(stepIndex(-1, 3, 2, 1)).toBe(0);
});

test('an empty list: nowhere to go', () => {
  expect(stepIndex(-1, -1, 0, 1)).toBeUndefined();
  expect(stepIndex(0, 0, 0, -1)).toBeUndefined();
});

test('the listed shortcuts are the ones shortcutFor knows (Enter being the link’s own)', () => {
  const keyOf = (listed: string) => (listed === 'Esc' ? 'Escape' : listed);
  for (const { keys } of SHORTCUTS) {
    for (const key of keys) {
      if (key === 'Enter') continue;
      expect({ key, action: shortcutFor(press(keyOf(key))) }).toEqual({ key, action: expect.any(String) });
    }
  }
});
