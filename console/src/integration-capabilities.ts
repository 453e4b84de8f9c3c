/**
 * What an integration's replies may do, on its card: carry files (`replies.attachments`) and be
 * edited or unsent after the send (`replies.lifecycle`). Every member sees each setting; admins
 * change it in an editor (closed until opened) that checks it as the rules do and saves it, or
 * turn it off.
 */
import { announce, h, notice, replace, type Child } from './dom';
import { describeError } from './errors';
import { ATTACHMENT_CONTENT_TYPES, ATTACHMENT_MAX_BYTES, ATTACHMENT_MAX_COUNT, capabilityProblem, contentTypeLabel, limitsText, type AttachmentCapability } from './attachments';
import { ADMINS_ONLY, type IntegrationsContext } from './integration-context';
import { setReplyAttachments, setReplyLifecycle } from './integrations-data';
import { formatWindow, LIFECYCLE_WINDOW_MAX_SECONDS, LIFECYCLE_WINDOW_MIN_SECONDS, lifecycleProblem, lifecycleText, type LifecycleCapability } from './lifecycle';

/** One setting's editor: its form's fields and labels, how it reads, checks and writes the value, and what it announces. */
export interface SettingEditor<C> {
  /** The setting's name: the classes `<name>-form` and `<name>-edit`, and the editor's `data-editor`. */
  name: 'attachments' | 'lifecycle' | 'starts';
  current: C | undefined;
  formAttrs: { 'aria-label': string; novalidate?: true };
  fields: Child[];
  saveLabel: string;
  offLabel: string;
  offAnnouncement: string;
  openLabel: string;
  read(): C;
  problem(value: C): string | undefined;
  write(value: C | undefined): Promise<void>;
  savedAnnouncement(value: C): string;
  deniedWhy: string;
}

/**
 * The admin's editor of a setting: a closed <details> whose form saves the value (closing it) or
 * turns the setting off, with the refusal's reason. Its `data-editor` names the value it edits, so
 * that an open editor survives a re-render of its card unless the value changed (integrations.ts).
 */
export function settingEditor<C>(editor: SettingEditor<C>): HTMLElement {
  const problem = h('div', {});
  const save = h('button', { type: 'submit' }, editor.saveLabel);
  const off =
    editor.current === undefined
      ? null
      : h('button', {
          type: 'button',
          class: 'secondary',
          onclick: () => {
            replace(problem);
            editor.write(undefined).then(
              () => announce(editor.offAnnouncement),
              (err: unknown) => replace(problem, notice('error', describeError(err, ADMINS_ONLY))),
            );
          },
        }, editor.offLabel);
  const form = h('form', { class: `${editor.name}-form`, ...editor.formAttrs }, ...editor.fields, h('div', { class: 'row' }, save, off), problem);
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const value = editor.read();
    const why = editor.problem(value);
    if (why !== undefined) {
      replace(problem, notice('error', why));
      return;
    }
    save.disabled = true;
    replace(problem);
    editor.write(value).then(
      () => {
        save.disabled = false;
        details.open = false;
        announce(editor.savedAnnouncement(value));
      },
      (err: unknown) => {
        save.disabled = false;
        replace(problem, notice('error', describeError(err, editor.deniedWhy)));
      },
    );
  });
  const details = h('details', { class: `${editor.name}-edit`, 'data-editor': `${editor.name}:${JSON.stringify(editor.current ?? null)}` }, h('summary', {}, editor.current ? 'Change' : editor.openLabel), form);
  return details;
}

/**
 * Reply attachments (`replies.attachments`): every member sees what the integration accepts;
 * admins set the file types, the size per file and the files per reply, or turn it off (text
 * only, exactly as before). Checked here as the rules check it (attachments.ts).
 */
export function attachmentsPanel(ctx: IntegrationsContext, integrationId: string, current: AttachmentCapability | undefined): HTMLElement {
  const summary = h('p', { class: 'attachments-capability', 'data-capability': current ? 'on' : 'off' }, current ? `Replies may carry files: ${limitsText(current)}` : 'Replies are text only.');
  // Unnamed, so not a landmark: every card has one, and same-named regions repeated per
  // integration are noise in a screen reader's landmarks (axe landmark-unique); its h4 heads it.
  const section = h('section', { class: 'attachments-settings' }, h('h4', { id: `att-${integrationId}` }, 'Reply attachments'), summary);
  if (!ctx.isAdmin) return section;
  const boxes = ATTACHMENT_CONTENT_TYPES.map((type) => {
    const box = h('input', { type: 'checkbox', name: 'contentTypes', value: type, checked: current?.contentTypes.includes(type) ?? false });
    return { type, box, label: h('label', { class: 'checkbox' }, box, ` ${contentTypeLabel(type)}`) };
  });
  const maxMb = h('input', { type: 'number', name: 'maxMegabytes', min: 0.1, max: ATTACHMENT_MAX_BYTES / (1024 * 1024), step: 0.1, required: true, value: current ? Math.round((current.maxBytes / (1024 * 1024)) * 10) / 10 : 10, id: `att-mb-${integrationId}` });
  const maxCount = h('input', { type: 'number', name: 'maxCount', min: 1, max: ATTACHMENT_MAX_COUNT, step: 1, required: true, value: current?.maxCount ?? 3, id: `att-count-${integrationId}` });
  section.append(
    settingEditor<AttachmentCapability>({
      name: 'attachments',
      current,
      formAttrs: { 'aria-label': `Reply attachments of ${integrationId}` },
      fields: [
        h('fieldset', {}, h('legend', {}, 'File types'), ...boxes.map((b) => b.label)),
        h('div', { class: 'row' }, h('label', { for: `att-mb-${integrationId}` }, 'Max MB per file'), maxMb, h('label', { for: `att-count-${integrationId}` }, 'Files per reply'), maxCount),
      ],
      saveLabel: current ? 'Save attachments' : 'Allow attachments',
      offLabel: 'Text only',
      offAnnouncement: 'Replies of this integration are text only again.',
      openLabel: 'Allow files in replies',
      read: () => ({
        contentTypes: boxes.filter((b) => b.box.checked).map((b) => b.type),
        maxBytes: Math.round(Number(maxMb.value) * 1024 * 1024),
        maxCount: Number(maxCount.value),
      }),
      problem: capabilityProblem,
      write: (value) => setReplyAttachments(ctx.session, integrationId, value),
      savedAnnouncement: (value) => `Replies may carry files: ${limitsText(value)}`,
      deniedWhy: `${ADMINS_ONLY}; attachments are 1 to ${ATTACHMENT_CONTENT_TYPES.length} of the listed types, at most 10 MB per file and 1 to ${ATTACHMENT_MAX_COUNT} files`,
    }),
  );
  return section;
}

/**
 * After the send (`replies.lifecycle`): every member sees whether operators may edit or unsend
 * a sent reply and within which window; admins tick edits and unsends and set each window (the
 * channel's own, in seconds: 60 to 604800), or turn both off. Checked as the rules check it
 * (lifecycle.ts).
 */
export function lifecyclePanel(ctx: IntegrationsContext, integrationId: string, current: LifecycleCapability | undefined): HTMLElement {
  const summary = h('p', { class: 'lifecycle-capability', 'data-lifecycle': current ? 'on' : 'off' }, lifecycleText(current));
  // Unnamed, not a landmark: as attachmentsPanel's.
  const section = h('section', { class: 'lifecycle-settings' }, h('h4', { id: `life-${integrationId}` }, 'After the send'), summary);
  if (!ctx.isAdmin) return section;
  const kinds = (['edit', 'unsend'] as const).map((kind) => {
    const box = h('input', { type: 'checkbox', name: kind, id: `life-${kind}-${integrationId}`, checked: current?.[kind] !== undefined });
    const seconds = h('input', {
      type: 'number',
      name: `${kind}WindowSeconds`,
      id: `life-${kind}-window-${integrationId}`,
      min: LIFECYCLE_WINDOW_MIN_SECONDS,
      max: LIFECYCLE_WINDOW_MAX_SECONDS,
      step: 1,
      value: current?.[kind]?.windowSeconds ?? (kind === 'edit' ? 900 : 3600),
    });
    const label = kind === 'edit' ? 'Edits' : 'Unsends';
    return {
      kind,
      box,
      seconds,
      row: h('div', { class: 'row' }, h('label', { class: 'checkbox', for: `life-${kind}-${integrationId}` }, box, ` ${label}`), h('label', { for: `life-${kind}-window-${integrationId}` }, `${label}: window in seconds`), seconds),
    };
  });
  section.append(
    settingEditor<LifecycleCapability>({
      name: 'lifecycle',
      current,
      // The console's own check says what is wrong (the browser's would block the submit with a tooltip only).
      formAttrs: { 'aria-label': `After the send of ${integrationId}`, novalidate: true },
      fields: [
        h('p', { class: 'muted' }, `The channel's own windows: ${formatWindow(LIFECYCLE_WINDOW_MIN_SECONDS)} to ${formatWindow(LIFECYCLE_WINDOW_MAX_SECONDS)} (e.g. 900 for 15 minutes).`),
        ...kinds.map((k) => k.row),
      ],
      saveLabel: 'Save',
      offLabel: 'Turn off',
      offAnnouncement: 'No edits or unsends after sending for this integration.',
      openLabel: 'Allow edits or unsends',
      read: () => {
        const capability: LifecycleCapability = {};
        for (const k of kinds) {
          if (k.box.checked) capability[k.kind] = { windowSeconds: Number(k.seconds.value) };
        }
        return capability;
      },
      problem: lifecycleProblem,
      write: (value) => setReplyLifecycle(ctx.session, integrationId, value),
      savedAnnouncement: lifecycleText,
      deniedWhy: `${ADMINS_ONLY}; edits and unsends each take a window of ${LIFECYCLE_WINDOW_MIN_SECONDS} to ${LIFECYCLE_WINDOW_MAX_SECONDS} seconds`,
    }),
  );
  return section;
}
