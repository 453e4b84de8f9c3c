/**
 * Privacy (admins only; docs/console.md#privacy): the workspace's retention period, the erasure of
 * one customer (with its audit and whether the connector confirmed it purged its own copies), and
 * the export of one customer (downloadable for 7 days). An erasure is offered only after the view
 * counted what it deletes, and never for an id that matches nothing; a thread's "Erase this
 * customer's data…" opens it pre-filled (`#/privacy/erase/<integrationId>/<externalCustomerId>`).
 * Everything is read and written under firestore.rules (`settings/retention`, `erasures/{id}`,
 * `exports/{id}`: docs/data-model.md); the service does the work and writes the audit fields the
 * view shows live. This module renders and wires the view; its reads and writes are privacy-data.ts.
 */
import { announce, h, notice, replace, timeElement } from './dom';
import { describeError } from './errors';
import { connectorConfirmation, erasurePreviewText, erasureStatusLabel, exportDownload, parseErasureRoute, parseRetentionDays, RETENTION_MAX_DAYS, retentionLabel } from './privacy-format';
import {
  ERASED_KINDS,
  fetchExport,
  previewErasure,
  requestErasure,
  requestExport,
  setRetention,
  subscribeErasures,
  subscribeExports,
  subscribeIntegrationNames,
  subscribeRetention,
  type CustomerExport,
  type CustomerRequest,
  type Erasure,
} from './privacy-data';
import type { View } from './view';
import type { Session } from './session';
import { CONSOLE_LIMITS } from '../../functions/src/contract';

const ADMINS_ONLY = 'only workspace admins may change retention or request erasures and exports, with exactly the fields the contract lists';

export function privacyView(session: Session): View {
  const { user } = session;
  if (session.role !== 'admin') {
    // The rules refuse every read and write of this view to operators; say so instead of showing controls.
    return { el: h('div', { class: 'privacy' }, h('h1', {}, 'Privacy'), notice('info', 'Only workspace admins manage retention, erasures and exports.')), destroy() {} };
  }
  const unsubscribers: Array<() => void> = [];
  const integrationNames = new Map<string, string>();
  const nameOf = (id: string) => integrationNames.get(id) ?? id;

  // ------------------------------------------------------------------------------- retention
  const retentionNow = h('p', { id: 'retention-now', 'aria-live': 'polite' }, notice('loading', 'Loading…'));
  const retentionError = h('div', {});
  const keepForever = h('input', { type: 'radio', name: 'retention', id: 'retention-forever', value: 'forever', class: 'inline' });
  const deleteAfter = h('input', { type: 'radio', name: 'retention', id: 'retention-days', value: 'days', class: 'inline' });
  const days = h('input', { type: 'number', id: 'retention-days-value', min: 1, max: RETENTION_MAX_DAYS, step: 1, inputmode: 'numeric', 'aria-label': 'Days', class: 'days' });
  const saveRetention = h('button', { type: 'submit' }, 'Save retention');
  const retentionForm = h(
    'form',
    { class: 'card', id: 'retention', 'aria-labelledby': 'retention-title', novalidate: true },
    h('h2', { id: 'retention-title' }, 'Retention'),
    retentionNow,
    h(
      'fieldset',
      { class: 'choices' },
      h('legend', { class: 'sr-only' }, 'Retention period'),
      h('div', { class: 'choice' }, keepForever, h('label', { for: 'retention-forever', class: 'inline' }, 'Keep forever')),
      h('div', { class: 'choice' }, deleteAfter, h('label', { for: 'retention-days', class: 'inline' }, 'Delete after'), days, h('span', {}, 'days')),
    ),
    h(
      'p',
      { class: 'muted' },
      `Messages, their images and attachments, finished deliveries with their attempt logs, and event records older than this (by creation time) are deleted by the service, existing ones included. Unfinished deliveries are never deleted. 1 to ${RETENTION_MAX_DAYS} days.`,
    ),
    saveRetention,
    retentionError,
  );
  days.addEventListener('focus', () => {
    deleteAfter.checked = true;
  });
  retentionForm.addEventListener('submit', (event) => {
    event.preventDefault();
    const forever = keepForever.checked;
    const parsed = forever ? undefined : parseRetentionDays(days.value);
    if (!forever && typeof parsed !== 'number') {
      replace(retentionError, notice('error', parsed ?? 'Choose “Keep forever” or a number of days.'));
      days.focus();
      return;
    }
    saveRetention.disabled = true;
    replace(retentionError, notice('loading', 'Saving…'));
    setRetention(session, forever ? undefined : (parsed as number)).then(
      () => {
        saveRetention.disabled = false;
        replace(retentionError);
        announce(`Retention saved: ${retentionLabel(forever ? undefined : (parsed as number))}.`);
      },
      (err: unknown) => {
        saveRetention.disabled = false;
        replace(retentionError, notice('error', describeError(err, ADMINS_ONLY)));
      },
    );
  });
  unsubscribers.push(
    subscribeRetention(
      session,
      (current) => {
        replace(retentionNow, h('strong', { 'data-retention': current ?? 'forever' }, retentionLabel(current)));
        // The form follows the stored value unless the admin is editing it.
        if (!retentionForm.contains(document.activeElement)) {
          keepForever.checked = current === undefined;
          deleteAfter.checked = current !== undefined;
          days.value = current === undefined ? '' : String(current);
        }
      },
      (err) => replace(retentionNow, notice('error', describeError(err, 'only members of the workspace may read its retention'))),
    ),
  );

  // --------------------------------------------------------------------- one customer: request
  const integrationSelect = h('select', { id: 'privacy-integration', required: true });
  const customer = h('input', { id: 'privacy-customer', required: true, maxlength: CONSOLE_LIMITS.externalCustomerId, autocomplete: 'off', spellcheck: 'false', 'aria-describedby': 'privacy-customer-help' });
  const requestError = h('div', {});
  const confirmPanel = h('div', { id: 'erase-confirm' });
  const eraseButton = h('button', { type: 'button', id: 'erase-start', class: 'danger' }, 'Erase customer…');
  const exportButton = h('button', { type: 'button', id: 'export-start', class: 'secondary' }, 'Export customer');

  /** The request both documents carry: exactly the four fields the rules accept. */
  function readRequest(): CustomerRequest | undefined {
    const integrationId = integrationSelect.value;
    const externalCustomerId = customer.value.trim();
    if (integrationId === '') {
      replace(requestError, notice('error', 'Choose the integration the customer writes through.'));
      integrationSelect.focus();
      return undefined;
    }
    if (externalCustomerId === '' || externalCustomerId.length > CONSOLE_LIMITS.externalCustomerId) {
      replace(requestError, notice('error', `Enter the customer’s id in that integration (1 to ${CONSOLE_LIMITS.externalCustomerId} characters), as the connector sends it in sender.externalId.`));
      customer.focus();
      return undefined;
    }
    return { integrationId, externalCustomerId };
  }

  /** Offers "Erase permanently" for `request` with what it deletes in words (`text`), focused. */
  function offerErasure(request: CustomerRequest, text: string): void {
    const confirmButton = h('button', { type: 'button', id: 'erase-confirm-button', class: 'danger' }, 'Erase permanently');
    const cancel = h('button', { type: 'button', class: 'secondary', onclick: () => replace(confirmPanel) }, 'Cancel');
    confirmButton.addEventListener('click', () => {
      confirmButton.disabled = true;
      requestErasure(session, request).then(
        () => {
          replace(confirmPanel);
          customer.value = '';
          announce('Erasure requested: the service is erasing the customer.');
        },
        (err: unknown) => {
          confirmButton.disabled = false;
          replace(requestError, notice('error', describeError(err, ADMINS_ONLY)));
        },
      );
    });
    replace(
      confirmPanel,
      h(
        'div',
        { class: 'card confirm', role: 'alertdialog', 'aria-labelledby': 'erase-confirm-title', 'aria-describedby': 'erase-preview' },
        h('h3', { id: 'erase-confirm-title' }, 'Erase this customer?'),
        h('p', { id: 'erase-preview' }, h('strong', {}, text)),
        h(
          'p',
          { id: 'erase-confirm-text' },
          'Customer ',
          h('code', { class: 'wrap' }, request.externalCustomerId),
          ` of “${nameOf(request.integrationId)}”: their messages, images and attachments, the conversations in which they are the only customer (with the replies, deliveries and attempt logs) and the customer record are deleted. Replies not sent yet fail as “erased”. This cannot be undone.`,
        ),
        h('div', { class: 'row' }, confirmButton, cancel),
      ),
    );
    confirmButton.focus();
  }

  /** Which preview the panel shows: a preview that returns after another one started (or the form changed) is dropped. */
  let previewSeq = 0;

  /**
   * Counts what erasing the form's customer would delete (privacy-data.ts `previewErasure`) and
   * only then offers the confirmation; an id that matches nothing is said so and nothing is offered,
   * so no erasure document is written for it.
   */
  function previewAndConfirm(): void {
    const request = readRequest();
    if (request === undefined) return;
    replace(requestError);
    const seq = ++previewSeq;
    eraseButton.disabled = true;
    replace(confirmPanel, notice('loading', 'Counting what the erasure would delete…'));
    previewErasure(session, request).then(
      (preview) => {
        if (seq !== previewSeq) return;
        eraseButton.disabled = false;
        const said = erasurePreviewText(preview, request.externalCustomerId, nameOf(request.integrationId));
        if (said.kind === 'erase') {
          offerErasure(request, said.text);
          return;
        }
        replace(confirmPanel, h('div', { id: 'erase-nothing' }, notice('error', said.text)));
        customer.focus();
      },
      (err: unknown) => {
        if (seq !== previewSeq) return;
        eraseButton.disabled = false;
        // Without the counts nothing is offered: the admin sees why and may try again.
        replace(confirmPanel);
        replace(requestError, notice('error', `The erasure could not be previewed, so it is not offered: ${describeError(err, 'only workspace admins may read the customer, its conversations and messages')}`));
      },
    );
  }

  eraseButton.addEventListener('click', previewAndConfirm);
  // A confirmation stands for the customer it counted: editing the form withdraws it.
  const withdraw = () => {
    previewSeq += 1;
    eraseButton.disabled = false;
    replace(confirmPanel);
  };
  customer.addEventListener('input', withdraw);
  integrationSelect.addEventListener('change', withdraw);

  exportButton.addEventListener('click', () => {
    const request = readRequest();
    if (request === undefined) return;
    exportButton.disabled = true;
    replace(requestError, notice('loading', 'Requesting the export…'));
    requestExport(session, request).then(
      () => {
        exportButton.disabled = false;
        replace(requestError);
        announce('Export requested: it appears under Exports when ready.');
      },
      (err: unknown) => {
        exportButton.disabled = false;
        replace(requestError, notice('error', describeError(err, ADMINS_ONLY)));
      },
    );
  });

  const requestCard = h(
    'section',
    { class: 'card', id: 'customer-request', 'aria-labelledby': 'customer-title' },
    h('h2', { id: 'customer-title' }, 'One customer: erase or export'),
    h('label', { for: 'privacy-integration' }, 'Integration'),
    integrationSelect,
    h('label', { for: 'privacy-customer' }, 'External customer id'),
    customer,
    h('p', { id: 'privacy-customer-help', class: 'muted' }, 'The id the connector sends as sender.externalId (e.g. the email address or the chat user id).'),
    h('div', { class: 'row' }, eraseButton, exportButton),
    confirmPanel,
    requestError,
  );

  /** The customer an erasure address named (`#/privacy/erase/…`), until the integrations are listed. */
  let pendingErasure: CustomerRequest | undefined;
  let integrationsListed = false;

  /** Pre-fills the form with the named customer, brings it into view and previews the erasure. */
  function startNamedErasure(): void {
    const named = pendingErasure;
    if (named === undefined || !integrationsListed) return;
    pendingErasure = undefined;
    if (!integrationNames.has(named.integrationId)) {
      replace(requestError, notice('error', `The conversation’s integration ${named.integrationId} is not among the workspace’s integrations: choose one.`));
      integrationSelect.focus();
      return;
    }
    integrationSelect.value = named.integrationId;
    customer.value = named.externalCustomerId;
    requestCard.scrollIntoView({ block: 'start' });
    customer.focus();
    previewAndConfirm();
  }

  unsubscribers.push(
    subscribeIntegrationNames(
      session,
      (integrations) => {
        const chosen = integrationSelect.value;
        integrationNames.clear();
        const options = integrations.map(({ id, name }) => {
          integrationNames.set(id, name);
          return h('option', { value: id }, `${name} (${id})`);
        });
        replace(integrationSelect, h('option', { value: '' }, options.length === 0 ? 'No integrations' : 'Choose…'), ...options);
        if (chosen !== '' && integrationNames.has(chosen)) integrationSelect.value = chosen;
        else if (options.length === 1) integrationSelect.value = integrations[0]?.id ?? '';
        integrationsListed = true;
        startNamedErasure();
      },
      (err) => replace(requestError, notice('error', describeError(err, 'only members of the workspace may read its integrations'))),
    ),
  );

  // ------------------------------------------------------------------------------ erasures
  const erasureList = h('div', { id: 'erasure-list', 'aria-busy': 'true' }, notice('loading', 'Loading erasures…'));

  function erasureRow(erasure: Erasure): HTMLElement {
    const { id, audit, counts } = erasure;
    const confirmation = connectorConfirmation(audit, Date.now());
    const status = audit.status ?? 'requested';
    return h(
      'article',
      { class: 'card erasure', 'data-erasure': id, 'data-status': status, 'aria-labelledby': `erasure-${id}` },
      h(
        'h3',
        { id: `erasure-${id}` },
        h('code', { class: 'wrap' }, erasure.externalCustomerId),
        ' ',
        h('span', { class: `badge erasure-${status}` }, erasureStatusLabel(audit.status)),
      ),
      h(
        'dl',
        {},
        h('dt', {}, 'Integration'),
        h('dd', {}, nameOf(erasure.integrationId)),
        h('dt', {}, 'Requested'),
        h('dd', {}, timeElement(erasure.requestedAtMs), erasure.requestedBy === user.uid ? ' by you' : null),
        h('dt', {}, 'Started'),
        h('dd', { 'data-field': 'started' }, timeElement(audit.startedAt)),
        h('dt', {}, 'Finished'),
        h('dd', { 'data-field': 'finished' }, timeElement(audit.finishedAt)),
        h('dt', {}, 'Deleted'),
        h(
          'dd',
          {},
          h(
            'ul',
            { class: 'erasure-counts', 'aria-label': 'Deleted, by kind' },
            ...ERASED_KINDS.map((kind) =>
              h('li', { 'data-count': kind }, h('strong', {}, String(counts[kind] ?? 0)), ` ${kind}`),
            ),
          ),
        ),
        h('dt', {}, 'Connector'),
        h(
          'dd',
          { 'data-field': 'connector', 'data-confirmed': confirmation.kind === 'confirmed' ? 'true' : 'false' },
          confirmation.kind === 'confirmed'
            ? h('span', {}, h('span', { class: 'badge badge-ok' }, 'connector confirmed'), ' at ', timeElement(confirmation.at))
            : confirmation.kind === 'waiting'
              ? h('span', {}, h('span', { class: 'badge badge-pending' }, `waiting ${confirmation.age}`), ' since ', timeElement(confirmation.since))
              : h('span', { class: 'muted' }, 'told once the erasure is done'),
        ),
      ),
    );
  }

  let erasureRows: Erasure[] = [];
  const renderErasures = () => {
    if (erasureRows.length === 0) replace(erasureList, notice('empty', 'No erasures yet.'));
    else replace(erasureList, ...erasureRows.map(erasureRow));
  };
  // "Waiting 3 min" grows without a new snapshot: re-render the list every 30 s.
  const waitingTicker = setInterval(() => {
    if (erasureRows.length > 0 && !erasureList.contains(document.activeElement)) renderErasures();
  }, 30_000);
  unsubscribers.push(() => clearInterval(waitingTicker));
  unsubscribers.push(
    subscribeErasures(
      session,
      (erasures) => {
        erasureList.removeAttribute('aria-busy');
        erasureRows = erasures;
        renderErasures();
      },
      (err) => {
        erasureList.removeAttribute('aria-busy');
        replace(erasureList, notice('error', describeError(err, 'only workspace admins may read erasures')));
      },
    ),
  );

  // ------------------------------------------------------------------------------- exports
  const exportList = h('div', { id: 'export-list', 'aria-busy': 'true' }, notice('loading', 'Loading exports…'));

  /** Fetches the export's file (privacy-data.ts) and saves it as a file. */
  async function saveExport(exportId: string, status: HTMLElement): Promise<void> {
    replace(status, notice('loading', 'Downloading…'));
    const url = URL.createObjectURL(await fetchExport(session, exportId));
    const a = h('a', { href: url, download: `export-${exportId}.jsonl`, class: 'sr-only' });
    document.body.append(a);
    a.click();
    a.remove();
    // Revoked after the click has handed the file to the browser.
    setTimeout(() => URL.revokeObjectURL(url), 60_000);
    replace(status);
    announce('Export downloaded.');
  }

  function exportRow(row: CustomerExport): HTMLElement {
    const { id, state } = row;
    const download = exportDownload(state, Date.now());
    const downloadStatus = h('span', { class: 'download-status' });
    const downloadButton = h('button', { type: 'button', class: 'secondary', 'data-download': id }, 'Download (JSON Lines)');
    downloadButton.addEventListener('click', () => {
      downloadButton.disabled = true;
      saveExport(id, downloadStatus).then(
        () => {
          downloadButton.disabled = false;
        },
        (err: unknown) => {
          downloadButton.disabled = false;
          replace(downloadStatus, notice('error', `The download failed: ${err instanceof Error ? err.message : String(err)}`));
        },
      );
    });
    return h(
      'article',
      { class: 'card export', 'data-export': id, 'data-status': state.status ?? 'requested', 'aria-labelledby': `export-${id}` },
      h('h3', { id: `export-${id}` }, h('code', { class: 'wrap' }, row.externalCustomerId), ' ', h('span', { class: 'badge' }, state.status ?? 'requested')),
      h(
        'dl',
        {},
        h('dt', {}, 'Integration'),
        h('dd', {}, nameOf(row.integrationId)),
        h('dt', {}, 'Requested'),
        h('dd', {}, timeElement(row.requestedAtMs)),
        h('dt', {}, 'File'),
        h(
          'dd',
          { 'data-field': 'download' },
          download.kind === 'ready'
            ? h('span', {}, downloadButton, ' until ', timeElement(download.until), ' ', downloadStatus)
            : download.kind === 'expired'
              ? h('span', { class: 'muted' }, 'expired (downloads are kept 7 days): request a new export')
              : download.kind === 'failed'
                ? h('span', { class: 'badge badge-failed' }, `failed: ${download.code}`)
                : h('span', { class: 'muted' }, 'being prepared…'),
        ),
      ),
    );
  }

  unsubscribers.push(
    subscribeExports(
      session,
      (exports) => {
        exportList.removeAttribute('aria-busy');
        if (exports.length === 0) replace(exportList, notice('empty', 'No exports yet.'));
        else replace(exportList, ...exports.map(exportRow));
      },
      (err) => {
        exportList.removeAttribute('aria-busy');
        replace(exportList, notice('error', describeError(err, 'only workspace admins may read exports')));
      },
    ),
  );

  const el = h(
    'div',
    { class: 'privacy' },
    h('h1', {}, 'Privacy'),
    retentionForm,
    requestCard,
    h('h2', {}, 'Erasures'),
    erasureList,
    h('h2', {}, 'Exports'),
    exportList,
  );
  return {
    el,
    route(parts) {
      const named = parseErasureRoute(parts);
      if (named === undefined) return;
      pendingErasure = named;
      startNamedErasure();
    },
    destroy() {
      for (const unsubscribe of unsubscribers) unsubscribe();
    },
  };
}
