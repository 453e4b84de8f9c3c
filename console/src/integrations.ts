/**
 * Integrations: every member sees the list (status, key prefix, replies topic and the service's
 * topic check); admins create, deactivate/activate, re-key and end a CLI rotation's overlap early.
 * The key is minted in the browser (keys.ts), shown once, and only its hash is written
 * (docs/data-model.md, "Integrations"). Writes are exactly what firestore.rules accept.
 * Every member also sees each integration's health, read live from the roll-up's document
 * `integrationHealth/{integrationId}` (docs/decisions.md#integration-health; docs/data-model.md, "Integration health").
 * This module renders and wires the view; its Firestore reads and writes are integrations-data.ts.
 */
import { announce, h, notice, replace, timeElement } from './dom';
import { describeError } from './errors';
import { formatAge, formatTime, HEALTH_STATUSES, healthProblemText, healthStaleSeconds, topicProblem } from './format';
import type { IssuedKey } from './keys';
import { ATTACHMENT_CONTENT_TYPES, ATTACHMENT_MAX_BYTES, ATTACHMENT_MAX_COUNT, capabilityProblem, contentTypeLabel, limitsText, type AttachmentCapability } from './attachments';
import {
  createIntegration,
  endKeyOverlap,
  rekeyIntegration,
  saveOperationsTopic,
  setIntegrationActive,
  setReplyAttachments,
  setReplyLifecycle,
  subscribeHealth,
  subscribeIntegrations,
  subscribeOperations,
  type Integration,
  type IntegrationHealth,
} from './integrations-data';
import type { View } from './view';
import type { Session } from './session';
import { CONSOLE_LIMITS } from '../../functions/src/contract';
import { formatWindow, LIFECYCLE_WINDOW_MAX_SECONDS, LIFECYCLE_WINDOW_MIN_SECONDS, lifecycleProblem, lifecycleText, type LifecycleCapability } from './lifecycle';

const ADMINS_ONLY = 'only workspace admins may create or change integrations, and only the fields the contract lists';

/** The body of an integration's health panel for its roll-up document (or its absence). */
function healthBody(data: IntegrationHealth | undefined): HTMLElement[] {
  if (data === undefined) return [notice('empty', 'Health not computed yet: the roll-up runs every minute.')];
  const counts = data.counts;
  const computedAt = data.computedAtMs;
  const staleSeconds = healthStaleSeconds(computedAt, Date.now());
  const oldest = data.oldestClaimable;
  const lastError = data.lastError;
  const item = (key: string, label: string, value: number | undefined, bad = false) =>
    h('div', { class: `count${bad && (value ?? 0) > 0 ? ' count-bad' : ''}`, 'data-count': key }, h('dt', {}, label), h('dd', {}, String(value ?? 0)));
  const problems = data.problems;
  return [
    problems.length === 0
      ? h('p', { class: 'health-problems muted', 'data-health': 'problems' }, 'No open problems.')
      : h(
          'div',
          { class: 'health-problems', role: 'alert', 'data-health': 'problems' },
          h('strong', {}, 'Unhealthy'),
          data.unhealthy ? h('span', {}, ' since ', timeElement(data.unhealthy.sinceMs)) : null,
          h('ul', {}, ...problems.map((p) => h('li', { 'data-problem': p.code ?? '' }, healthProblemText(p)))),
        ),
    h(
      'dl',
      { class: 'health-counts', 'aria-label': 'Replies created in the last 24 hours, by status now' },
      ...HEALTH_STATUSES.map((s) => item(s, s, counts[s], s === 'failed' || s === 'unknown')),
      item('total', 'total', data.total),
    ),
    h(
      'dl',
      { class: 'health-facts' },
      h('dt', {}, 'Oldest claimable'),
      h(
        'dd',
        { 'data-health': 'oldest' },
        oldest === null
          ? h('span', { class: 'muted' }, 'none waiting')
          : h('span', { 'data-age-seconds': oldest.ageSeconds ?? 0 }, `waiting ${formatAge(oldest.ageSeconds ?? 0)}`, ' (since ', timeElement(oldest.sinceMs), ')'),
      ),
      h('dt', {}, 'Last sent'),
      h('dd', { 'data-health': 'last-sent' }, data.lastSent ? timeElement(data.lastSent.atMs) : h('span', { class: 'muted' }, 'never')),
      h('dt', {}, 'Last error'),
      h(
        'dd',
        { 'data-health': 'last-error' },
        lastError === null
          ? h('span', { class: 'muted' }, 'none')
          : h('span', {}, h('code', {}, lastError.code ?? '?'), ' ', h('span', { class: `badge status-${lastError.status ?? 'failed'}` }, lastError.status ?? '?'), ' at ', timeElement(lastError.atMs)),
      ),
      h('dt', {}, 'As of'),
      h(
        'dd',
        { 'data-health': 'computed-at' },
        timeElement(computedAt),
        ' ',
        data.active === false ? h('span', { class: 'muted' }, '(quiet: recomputed every 10 minutes) ') : null,
        staleSeconds !== undefined ? h('span', { class: 'badge badge-failed' }, `stale: no roll-up for ${formatAge(staleSeconds)}`) : null,
      ),
    ),
  ];
}

export function integrationsView(session: Session): View {
  const { services, role } = session;
  const isAdmin = role === 'admin';

  const keyPanel = h('div', { id: 'key-panel' });

  /** One live health panel per listed integration; it outlives the card's re-renders. */
  const health = new Map<string, { el: HTMLElement; unsubscribe: () => void }>();
  function healthPanel(integrationId: string): HTMLElement {
    const known = health.get(integrationId);
    if (known) return known.el;
    const headingId = `health-${integrationId}`;
    const body = h('div', { class: 'health-body', 'aria-busy': 'true' }, notice('loading', 'Loading health…'));
    const el = h('section', { class: 'health', 'aria-labelledby': headingId }, h('h4', { id: headingId }, 'Health: replies of the last 24 h'), body);
    const unsubscribe = subscribeHealth(
      session,
      integrationId,
      (data) => {
        body.removeAttribute('aria-busy');
        replace(body, ...healthBody(data));
      },
      (err) => {
        body.removeAttribute('aria-busy');
        replace(body, notice('error', describeError(err, 'only members of the workspace may read integration health')));
      },
    );
    health.set(integrationId, { el, unsubscribe });
    return el;
  }

  const list = h('div', { id: 'integration-list', 'aria-busy': 'true' }, notice('loading', 'Loading integrations…'));

  /** Shows a freshly minted key once; "Done" (or leaving the view) removes it from the page. */
  function showKey(title: string, issued: IssuedKey): void {
    const copied = h('span', { class: 'muted', role: 'status' });
    const code = h('code', { id: 'new-key', class: 'key' }, issued.key);
    const copy = h('button', { type: 'button', id: 'copy-key' }, 'Copy key');
    copy.addEventListener('click', () => {
      navigator.clipboard.writeText(code.textContent ?? '').then(
        () => replace(copied, 'Copied.'),
        () => {
          // No clipboard permission (e.g. plain http on another host): select it for Ctrl+C.
          getSelection()?.selectAllChildren(code);
          replace(copied, 'Selected: press Ctrl+C (⌘C) to copy.');
        },
      );
    });
    const done = h('button', { type: 'button', class: 'secondary', onclick: () => replace(keyPanel) }, 'Done, hide the key');
    replace(
      keyPanel,
      h(
        'section',
        { class: 'card key-once', 'aria-labelledby': 'key-title' },
        h('h2', { id: 'key-title' }, title),
        h('p', {}, 'Copy this key into your connector now. It is shown only this once: the console stores only its SHA-256 hash, so nobody can show it again (re-key to get a new one).'),
        code,
        h('div', { class: 'row' }, copy, done, copied),
      ),
    );
    copy.focus();
  }

  function createForm(): HTMLElement {
    if (!isAdmin) {
      return notice('info', 'You are an operator: only workspace admins can create, deactivate or re-key integrations.');
    }
    const error = h('div', {});
    const name = h('input', { id: 'integration-name', name: 'name', required: true, maxlength: CONSOLE_LIMITS.integrationName, autocomplete: 'off' });
    const topic = h('input', {
      id: 'integration-topic',
      name: 'topic',
      autocomplete: 'off',
      spellcheck: 'false',
      placeholder: `projects/${services.projectId || 'my-project'}/topics/connector-notifications`,
      'aria-describedby': 'topic-help',
    });
    const submit = h('button', { type: 'submit' }, 'Create integration');
    const form = h(
      'form',
      { class: 'card', id: 'create-integration', 'aria-labelledby': 'create-title' },
      h('h2', { id: 'create-title' }, 'New integration'),
      h('label', { for: 'integration-name' }, 'Name'),
      name,
      h('label', { for: 'integration-topic' }, 'Replies topic (optional)'),
      topic,
      h('p', { id: 'topic-help', class: 'muted' }, 'The Pub/Sub topic the service notifies of replies to deliver; the service needs roles/pubsub.publisher on it. Leave empty to disable replies.'),
      submit,
      error,
    );
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      const topicValue = topic.value.trim();
      const topicWhy = topicProblem(topicValue);
      if (topicWhy !== undefined) {
        replace(error, notice('error', topicWhy));
        topic.focus();
        return;
      }
      submit.disabled = true;
      replace(error, notice('loading', 'Creating…'));
      void (async () => {
        try {
          const issued = await createIntegration(session, name.value.trim(), topicValue);
          const created = name.value.trim();
          form.reset();
          replace(error);
          showKey(`Key for “${created}”`, issued);
          announce('Integration created; its key is shown once.');
        } catch (err) {
          replace(error, notice('error', describeError(err, ADMINS_ONLY)));
        } finally {
          submit.disabled = false;
        }
      })();
    });
    return form;
  }

  function card(row: Integration): HTMLElement {
    const { name, active, replies, previousKey: previous, keyRevoked: revoked } = row;
    const error = h('div', {});
    const act = (label: string, deniedWhy: string, write: () => Promise<void>) =>
      h('button', {
        type: 'button',
        class: 'secondary',
        onclick: (event: Event) => {
          const button = event.currentTarget as HTMLButtonElement;
          button.disabled = true;
          replace(error);
          write().then(
            () => {
              button.disabled = false;
            },
            (err: unknown) => {
              button.disabled = false;
              replace(error, notice('error', describeError(err, deniedWhy)));
            },
          );
        },
      }, label);

    const topicStatus = !replies.enabled
      ? h('span', { class: 'muted' }, 'replies disabled')
      : replies.topicStatus === undefined
        ? h('span', { class: 'badge badge-pending' }, 'checking…')
        : h('span', { class: `badge badge-topic-${replies.topicStatus}` }, replies.topicStatus);

    const actions = isAdmin
      ? h(
          'div',
          { class: 'row actions' },
          act(active ? 'Deactivate' : 'Activate', ADMINS_ONLY, () => setIntegrationActive(session, row.id, !active)),
          act('Re-key', ADMINS_ONLY, async () => {
            if (!confirm(`Re-key “${name}”? The current key stops working within 30 seconds (no overlap; for an overlap use the CLI's rotate).`)) return;
            const issued = await rekeyIntegration(session, row.id);
            showKey(`New key for “${name}”`, issued);
          }),
          previous ? act('End overlap now', ADMINS_ONLY, () => endKeyOverlap(session, row.id)) : null,
        )
      : null;

    return h(
      'article',
      { class: 'card integration', 'data-integration': row.id, 'aria-labelledby': `int-${row.id}` },
      h('h3', { id: `int-${row.id}` }, name, ' ', h('span', { class: `badge ${active ? 'badge-ok' : 'badge-off'}` }, active ? 'active' : 'inactive')),
      h(
        'dl',
        {},
        h('dt', {}, 'ID'),
        h('dd', {}, h('code', {}, row.id)),
        h('dt', {}, 'Key'),
        h('dd', {}, revoked ? h('span', { class: 'badge badge-failed' }, `revoked (${revoked.reason ?? 'by the service'}): re-key`) : h('code', {}, `${row.keyPrefix}…`)),
        previous ? h('dt', {}, 'Previous key') : null,
        previous ? h('dd', {}, h('code', {}, `${previous.prefix ?? ''}…`), ` works until ${formatTime(previous.expiresAt)}`) : null,
        row.sourcePaused ? h('dt', {}, 'Source') : null,
        row.sourcePaused ? h('dd', {}, 'paused (incoming messages refused)') : null,
        h('dt', {}, 'Replies topic'),
        h('dd', {}, replies.enabled && replies.topic ? h('code', { class: 'wrap' }, replies.topic) : h('span', { class: 'muted' }, 'none')),
        h('dt', {}, 'Topic status'),
        h('dd', {}, topicStatus, replies.topicMessage ? h('span', { class: 'muted topic-message' }, ` ${replies.topicMessage}`) : null),
      ),
      attachmentsPanel(row.id, row.attachments),
      lifecyclePanel(row.id, row.lifecycle),
      healthPanel(row.id),
      actions,
      error,
    );
  }

  /**
   * Reply attachments (`replies.attachments`): every member sees what the integration accepts;
   * admins set the file types, the size per file and the files per reply, or turn it off (text
   * only, exactly as before). Checked here as the rules check it (attachments.ts).
   */
  function attachmentsPanel(integrationId: string, current: AttachmentCapability | undefined): HTMLElement {
    const summary = h('p', { class: 'attachments-capability', 'data-capability': current ? 'on' : 'off' }, current ? `Replies may carry files: ${limitsText(current)}` : 'Replies are text only.');
    const section = h('section', { class: 'attachments-settings', 'aria-labelledby': `att-${integrationId}` }, h('h4', { id: `att-${integrationId}` }, 'Reply attachments'), summary);
    if (!isAdmin) return section;
    const problem = h('div', {});
    const boxes = ATTACHMENT_CONTENT_TYPES.map((type) => {
      const box = h('input', { type: 'checkbox', name: 'contentTypes', value: type, checked: current?.contentTypes.includes(type) ?? false });
      return { type, box, label: h('label', { class: 'checkbox' }, box, ` ${contentTypeLabel(type)}`) };
    });
    const maxMb = h('input', { type: 'number', name: 'maxMegabytes', min: 0.1, max: ATTACHMENT_MAX_BYTES / (1024 * 1024), step: 0.1, required: true, value: current ? Math.round((current.maxBytes / (1024 * 1024)) * 10) / 10 : 10, id: `att-mb-${integrationId}` });
    const maxCount = h('input', { type: 'number', name: 'maxCount', min: 1, max: ATTACHMENT_MAX_COUNT, step: 1, required: true, value: current?.maxCount ?? 3, id: `att-count-${integrationId}` });
    const save = h('button', { type: 'submit' }, current ? 'Save attachments' : 'Allow attachments');
    const off = current
      ? h('button', {
          type: 'button',
          class: 'secondary',
          onclick: () => {
            replace(problem);
            setReplyAttachments(session, integrationId, undefined).then(
              () => announce('Replies of this integration are text only again.'),
              (err: unknown) => replace(problem, notice('error', describeError(err, ADMINS_ONLY))),
            );
          },
        }, 'Text only')
      : null;
    const form = h(
      'form',
      { class: 'attachments-form', 'aria-label': `Reply attachments of ${integrationId}` },
      h('fieldset', {}, h('legend', {}, 'File types'), ...boxes.map((b) => b.label)),
      h('div', { class: 'row' }, h('label', { for: `att-mb-${integrationId}` }, 'Max MB per file'), maxMb, h('label', { for: `att-count-${integrationId}` }, 'Files per reply'), maxCount),
      h('div', { class: 'row' }, save, off),
      problem,
    );
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      const capability: AttachmentCapability = {
        contentTypes: boxes.filter((b) => b.box.checked).map((b) => b.type),
        maxBytes: Math.round(Number(maxMb.value) * 1024 * 1024),
        maxCount: Number(maxCount.value),
      };
      const why = capabilityProblem(capability);
      if (why !== undefined) {
        replace(problem, notice('error', why));
        return;
      }
      save.disabled = true;
      replace(problem);
      setReplyAttachments(session, integrationId, capability).then(
        () => {
          save.disabled = false;
          editor.open = false;
          announce(`Replies may carry files: ${limitsText(capability)}`);
        },
        (err: unknown) => {
          save.disabled = false;
          replace(problem, notice('error', describeError(err, `${ADMINS_ONLY}; attachments are 1 to ${ATTACHMENT_CONTENT_TYPES.length} of the listed types, at most 10 MB per file and 1 to ${ATTACHMENT_MAX_COUNT} files`)));
        },
      );
    });
    const editor = h('details', { class: 'attachments-edit', 'data-editor': `attachments:${JSON.stringify(current ?? null)}` }, h('summary', {}, current ? 'Change' : 'Allow files in replies'), form);
    section.append(editor);
    return section;
  }

  /**
   * After the send (`replies.lifecycle`): every member sees whether operators may edit or unsend
   * a sent reply and within which window; admins tick edits and unsends and set each window (the
   * channel's own, in seconds: 60 to 604800), or turn both off. Checked as the rules check it
   * (lifecycle.ts).
   */
  function lifecyclePanel(integrationId: string, current: LifecycleCapability | undefined): HTMLElement {
    const summary = h('p', { class: 'lifecycle-capability', 'data-lifecycle': current ? 'on' : 'off' }, lifecycleText(current));
    const section = h('section', { class: 'lifecycle-settings', 'aria-labelledby': `life-${integrationId}` }, h('h4', { id: `life-${integrationId}` }, 'After the send'), summary);
    if (!isAdmin) return section;
    const problem = h('div', {});
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
    const save = h('button', { type: 'submit' }, 'Save');
    const off = current
      ? h('button', {
          type: 'button',
          class: 'secondary',
          onclick: () => {
            replace(problem);
            setReplyLifecycle(session, integrationId, undefined).then(
              () => announce('No edits or unsends after sending for this integration.'),
              (err: unknown) => replace(problem, notice('error', describeError(err, ADMINS_ONLY))),
            );
          },
        }, 'Turn off')
      : null;
    const form = h(
      'form',
      // The console's own check says what is wrong (the browser's would block the submit with a tooltip only).
      { class: 'lifecycle-form', 'aria-label': `After the send of ${integrationId}`, novalidate: true },
      h('p', { class: 'muted' }, `The channel's own windows: ${formatWindow(LIFECYCLE_WINDOW_MIN_SECONDS)} to ${formatWindow(LIFECYCLE_WINDOW_MAX_SECONDS)} (e.g. 900 for 15 minutes).`),
      ...kinds.map((k) => k.row),
      h('div', { class: 'row' }, save, off),
      problem,
    );
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      const capability: LifecycleCapability = {};
      for (const k of kinds) {
        if (k.box.checked) capability[k.kind] = { windowSeconds: Number(k.seconds.value) };
      }
      const why = lifecycleProblem(capability);
      if (why !== undefined) {
        replace(problem, notice('error', why));
        return;
      }
      save.disabled = true;
      replace(problem);
      setReplyLifecycle(session, integrationId, capability).then(
        () => {
          save.disabled = false;
          editor.open = false;
          announce(lifecycleText(capability));
        },
        (err: unknown) => {
          save.disabled = false;
          replace(problem, notice('error', describeError(err, `${ADMINS_ONLY}; edits and unsends each take a window of ${LIFECYCLE_WINDOW_MIN_SECONDS} to ${LIFECYCLE_WINDOW_MAX_SECONDS} seconds`)));
        },
      );
    });
    const editor = h('details', { class: 'lifecycle-edit', 'data-editor': `lifecycle:${JSON.stringify(current ?? null)}` }, h('summary', {}, current ? 'Change' : 'Allow edits or unsends'), form);
    section.append(editor);
    return section;
  }

  /**
   * Every snapshot re-renders the cards (a topic check or a health change included). An editor the
   * admin has open in the card's previous rendering keeps its draft and stays open, unless what it
   * edits changed underneath (then the fresh, closed one shows the new value; a successful save
   * closes it the same way).
   */
  function keepOpenEditors(previous: HTMLElement | undefined, fresh: HTMLElement): HTMLElement {
    for (const open of previous?.querySelectorAll<HTMLDetailsElement>('details[data-editor][open]') ?? []) {
      const counterpart = [...fresh.querySelectorAll<HTMLDetailsElement>('details[data-editor]')].find((el) => el.dataset.editor === open.dataset.editor);
      counterpart?.replaceWith(open);
    }
    return fresh;
  }

  const unsubscribe = subscribeIntegrations(
    session,
    (rows) => {
      list.removeAttribute('aria-busy');
      const listed = new Set(rows.map((r) => r.id));
      for (const [id, panel] of health) {
        if (!listed.has(id)) {
          panel.unsubscribe();
          health.delete(id);
        }
      }
      if (rows.length === 0) replace(list, notice('empty', isAdmin ? 'No integrations yet: create the first one above.' : 'No integrations yet.'));
      else {
        const previous = new Map([...list.querySelectorAll<HTMLElement>('article.integration')].map((el) => [el.dataset.integration, el]));
        replace(list, ...rows.map((row) => keepOpenEditors(previous.get(row.id), card(row))));
      }
    },
    (err) => {
      list.removeAttribute('aria-busy');
      replace(list, notice('error', describeError(err, 'only members of the workspace may read its integrations')));
    },
  );

  /**
   * The workspace's operations topic (admins; docs/operations.md#operational-events): where the
   * service publishes operational events, and the failure it recorded on the settings, if any.
   */
  let unsubscribeOperations = (): void => {};
  function operationsForm(): HTMLElement | null {
    if (!isAdmin) return null;
    const status = h('div', { 'data-operations': 'status' });
    const input = h('input', { id: 'operations-topic', name: 'topic', autocomplete: 'off', spellcheck: 'false', placeholder: `projects/${services.projectId || 'my-project'}/topics/support-operations` });
    const submit = h('button', { type: 'submit' }, 'Save');
    const form = h(
      'form',
      { class: 'card', id: 'operations-settings', 'aria-labelledby': 'operations-title' },
      h('h2', { id: 'operations-title' }, 'Operations topic'),
      h('label', { for: 'operations-topic' }, 'Pub/Sub topic for operational events (optional)'),
      input,
      h('p', { class: 'muted' }, 'delivery.exhausted, conversation.blocked, integration.unhealthy/recovered and erasure.done are published here; the service needs roles/pubsub.publisher on it. Empty: no events.'),
      submit,
      status,
    );
    unsubscribeOperations = subscribeOperations(
      session,
      (data) => {
        if (document.activeElement !== input) input.value = data?.topic ?? '';
        replace(status, data?.topicStatus ? notice('error', `Events cannot be published: ${data.topicStatus}${data.topicMessage ? ` (${data.topicMessage})` : ''}`) : null);
      },
      (err) => replace(status, notice('error', describeError(err, 'only workspace admins may read the operations settings'))),
    );
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      const value = input.value.trim();
      const topicWhy = topicProblem(value);
      if (topicWhy !== undefined) {
        replace(status, notice('error', topicWhy));
        return;
      }
      submit.disabled = true;
      saveOperationsTopic(session, value)
        .then(() => announce('Operations topic saved.'))
        .catch((err: unknown) => replace(status, notice('error', describeError(err, 'only workspace admins may set the operations topic'))))
        .finally(() => {
          submit.disabled = false;
        });
    });
    return form;
  }

  const el = h(
    'div',
    { class: 'integrations' },
    h('h1', {}, 'Integrations'),
    keyPanel,
    createForm(),
    operationsForm(),
    h('p', { class: 'muted' }, 'Re-keying here revokes the old key within 30 s. For a rotation where both keys work for a while, use npm run integrations -- rotate; an admin can end that overlap early here.'),
    h('h2', {}, 'All integrations'),
    list,
  );
  return {
    el,
    destroy() {
      unsubscribe();
      unsubscribeOperations();
      for (const panel of health.values()) panel.unsubscribe();
      health.clear();
      replace(keyPanel); // the key never outlives the view
    },
  };
}
