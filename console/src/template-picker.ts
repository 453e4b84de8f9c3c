/**
 * The template picker, shared by the thread's composer and the New conversation form: the channel's
 * templates by name and language, one field per param of the chosen one (with its limit counted in
 * code points, as the rules count), and a live preview filled in with what is typed (the text the
 * customer reads). What it checks and fills is template-format.ts's (pure).
 */
import { h, replace } from './dom';
import { codePointLength } from '../../functions/src/contract';
import type { ChannelTemplateView } from './integration-channel-format';
import { fillPreview, paramMaxLength, paramProblem, templateChoice, templateKey, templateLabel, templateProblem, type TemplateChoice } from './template-format';

export interface TemplatePicker {
  el: HTMLElement;
  /** The channel's templates (followed live): the choice and what was typed stay while the chosen template stays the same. */
  setTemplates(templates: readonly ChannelTemplateView[]): void;
  /** The template reply to write, or why it cannot be written yet. */
  read(): { choice: TemplateChoice } | { problem: string };
  /** Empties the params (after a send). */
  clear(): void;
  setDisabled(disabled: boolean): void;
  /** Moves keyboard focus to the first param whose value is refused (or the template's list). */
  focusProblem(): void;
}

/** `prefix` makes the ids unique on the page (`reply`, `start`); `onChange` runs on every choice and keystroke. */
export function templatePicker(prefix: string, onChange: () => void = () => undefined): TemplatePicker {
  const select = h('select', { id: `${prefix}-template`, name: 'template' });
  const fields = h('div', { class: 'template-params' });
  const preview = h('p', { class: 'template-preview wrap', id: `${prefix}-template-preview` });
  const el = h(
    'div',
    { class: 'template-picker' },
    h('label', { for: `${prefix}-template` }, 'Template'),
    select,
    fields,
    h('p', { class: 'muted', id: `${prefix}-preview-label` }, 'Preview (what the customer reads):'),
    preview,
  );
  preview.setAttribute('aria-labelledby', `${prefix}-preview-label`);
  let templates: readonly ChannelTemplateView[] = [];
  /** What was typed, by template key and param: switching templates back and forth keeps it. */
  const values = new Map<string, Record<string, string>>();
  let shownFields = '';
  let disabled = false;

  const chosen = (): ChannelTemplateView | undefined => templates.find((t) => templateKey(t) === select.value);
  const valuesOf = (t: ChannelTemplateView): Record<string, string> => {
    const key = templateKey(t);
    const existing = values.get(key);
    if (existing !== undefined) return existing;
    const fresh: Record<string, string> = {};
    values.set(key, fresh);
    return fresh;
  };

  function updatePreview(): void {
    const t = chosen();
    preview.textContent = t === undefined ? '' : fillPreview(t.preview, valuesOf(t));
  }

  function paramField(t: ChannelTemplateView, index: number): HTMLElement {
    const param = t.params[index];
    if (param === undefined) return h('span', {});
    const id = `${prefix}-param-${index}`;
    const max = paramMaxLength(param);
    const typed = valuesOf(t);
    const counter = h('span', { class: 'muted', id: `${id}-counter` }, `${codePointLength(typed[param.name] ?? '')} / ${max}`);
    const input = h('input', { type: 'text', id, name: param.name, value: typed[param.name] ?? '', autocomplete: 'off', 'aria-describedby': `${id}-counter`, disabled });
    input.addEventListener('input', () => {
      typed[param.name] = input.value;
      const n = codePointLength(input.value);
      counter.textContent = `${n} / ${max}`;
      counter.classList.toggle('over', n > max);
      updatePreview();
      onChange();
    });
    return h('div', { class: 'template-param' }, h('label', { for: id }, param.name), input, counter);
  }

  function renderFields(): void {
    const t = chosen();
    const shape = t === undefined ? '' : JSON.stringify(t);
    if (shape === shownFields) return;
    shownFields = shape;
    replace(fields, ...(t === undefined ? [] : t.params.map((_, i) => paramField(t, i))));
    updatePreview();
  }

  select.addEventListener('change', () => {
    renderFields();
    onChange();
  });

  return {
    el,
    setTemplates(next) {
      const before = select.value;
      templates = next;
      replace(select, ...next.map((t) => h('option', { value: templateKey(t) }, templateLabel(t))));
      if (next.some((t) => templateKey(t) === before)) select.value = before;
      renderFields();
    },
    read() {
      const t = chosen();
      if (t === undefined) return { problem: 'Choose a template.' };
      const typed = valuesOf(t);
      const problem = templateProblem(t, typed);
      return problem === undefined ? { choice: templateChoice(t, typed) } : { problem };
    },
    clear() {
      values.clear();
      shownFields = '';
      renderFields();
    },
    focusProblem() {
      const t = chosen();
      const index = t === undefined ? -1 : t.params.findIndex((p) => paramProblem(p, valuesOf(t)[p.name] ?? '') !== undefined);
      (index < 0 ? select : (fields.querySelector<HTMLInputElement>(`#${prefix}-param-${index}`) ?? select)).focus();
    },
    setDisabled(value) {
      disabled = value;
      select.disabled = value;
      for (const input of fields.querySelectorAll('input')) input.disabled = value;
    },
  };
}
