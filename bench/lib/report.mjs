/**
 * The markdown report of a bench run (bench/results/*.md) and the target checks, from the
 * merged JSON result. Every timing figure is a ratio against a baseline measured in the same run:
 * median over repetitions, with the spread (p25–p75 and min–max) beside it.
 */

const fmt = (x, digits = 2) => (x === null || x === undefined || Number.isNaN(x) ? '–' : Number(x).toFixed(digits));
const spread = (s, digits = 2) => (s?.p25 !== undefined ? `${fmt(s.p25, digits)}–${fmt(s.p75, digits)} (${fmt(s.min, digits)}–${fmt(s.max, digits)})` : '–');
const mb = (bytes) => `${(bytes / 1e6).toFixed(1)} MB`;
const kb = (bytes) => `${(bytes / 1e3).toFixed(1)} kB`;
/** What index.js alone may load: itself, the operation catalogue (data only), the lazy wrapper, the region, and the runtime hook (platform/http/runtime.ts) with its small imports. */
const INDEX_MODULES = ['index.js', 'operations.js', 'platform/lazy.js', 'platform/region.js', 'platform/http/runtime.js', 'platform/http/request-id.js', 'platform/http/respond.js', 'platform/http/types.js', 'rules/errors.js', 'platform/failures.js'];
/** The code of the delivery and integration triggers, which no HTTP function needs. */
const TRIGGER_CODE = ['deliveries/triggers.js', 'deliveries/outbox.js', 'deliveries/sweep.js', 'deliveries/publisher.js', 'deliveries/sequencing.js', 'integrations/triggers.js', 'integrations/topics.js', 'platform/pubsub.js'];
/** The spread fields of a ratio summary, for a row whose headline is another figure of the same run. */
const pairedSpread = (s) => (s ? { p25: s.p25, p75: s.p75, min: s.min, max: s.max } : {});
const verdict = (ok) => (ok === null ? 'n/a' : ok ? '**met**' : '**missed**');

/** Rows of the summary table: [#, figure, ratio summary, target, met, absolute figures]. */
function summaryRows(r) {
  const rows = [];
  const add = (n, figure, s, target, ok, absolute = '', digits = 2) => rows.push([n, figure, s ? `**${fmt(s.median, digits)}**` : '–', s ? spread(s, digits) : '–', target, verdict(ok), absolute]);

  if (r.stack?.overhead) {
    for (const [op, o] of Object.entries(r.stack.overhead.ops)) {
      // The floor is the no-op that also writes its one request log line: every endpoint must log
      // its request, so that line is part of the platform's price, not the service's overhead.
      const r = o.ratioToLoggedNoop;
      add('1', `Overhead: ${op} / (logged no-op function + direct transaction)`, r, '<= 1.2', r.median <= 1.2, `${fmt(o.opMs.median, 1)} ms vs ${fmt(o.loggedNoopMs.median, 1)} + ${fmt(o.directTxMs.median, 1)} ms; against the unlogged no-op ${fmt(o.ratio.median)}`);
    }
  }
  if (r.starts?.startSequencing) {
    // A start's sequencing (the start trigger's takeStart) against a reply's (the reply trigger's sequenceAndPublish).
    const q = r.starts.startSequencing;
    const rwr = (x) => `${x.counts.docsRead.median} / ${x.counts.docsWritten.median} / ${x.counts.roundTrips.median}`;
    add('1', `Sequencing: taking a start (takeStart, then its publish) / sequencing an operator reply (sequenceAndPublish), in-process, paired by round (${q.rounds} rounds)`, q.ratio, '<= 1', q.ratio.median <= 1, `${fmt(q.start.ms.median, 1)} vs ${fmt(q.reply.ms.median, 1)} ms; their transactions replayed directly: ${fmt(q.directRatio.median)} (${spread(q.directRatio)}); reads / writes / round trips ${rwr(q.start)} vs ${rwr(q.reply)}`);
  }
  if (r.store?.counts) {
    const ops = Object.entries(r.store.counts).filter(([name]) => !name.includes('cold'));
    const oneTx = ops.every(([, c]) => c.counts.transactions.max <= 1 && c.counts.attempts.max <= 1);
    // The attachment check is a read without a transaction: its one read is the operation's own.
    const noAuthReads = ops.filter(([name]) => !name.includes('multipart')).every(([name, c]) => c.counts.docsReadOutsideTx.max === (name.startsWith('attachment') ? 1 : 0));
    add('2', 'Transactions per operation (max over runs, every operation)', null, '1', oneTx, ops.map(([n, c]) => `${n}: ${c.counts.transactions.max}`).join('; '));
    add('2', 'Reads outside the transaction, warm key cache (every JSON operation)', null, '0', noAuthReads, `cold key cache: ${r.store.counts['message (cold key cache)'].counts.docsReadOutsideTx.median} reads (${r.store.counts['message (cold key cache)'].counts.queries.median} queries)`);
    // docs/decisions.md, "Delivery: one read wave": one read wave and the commit; the attachment
    // check is a read alone.
    const deliveryOps = ops.filter(([name]) => !name.startsWith('message'));
    const floor = (name) => (name.startsWith('attachment') ? 1 : 2);
    const oneWave = deliveryOps.every(([name, c]) => c.counts.roundTrips.max <= floor(name));
    add('2', 'Round trips per delivery operation (max over runs): one read wave and the commit (the attachment check: one read)', null, '2 (attachment: 1)', oneWave, deliveryOps.map(([n, c]) => `${n}: ${c.counts.roundTrips.max}`).join('; '));
  }
  if (r.store?.counts && r.previous?.counts) {
    // The committed results of the run before (bench/results/latest.json at HEAD): the same
    // Firestore work per operation is what "costs what it cost before" means (counts are exact).
    // Documents read and written and transactions must stay equal; round trips and RPCs may only
    // fall (one read wave per delivery operation: docs/decisions.md, "Delivery: one read wave"),
    // and where they fell the row says so.
    const fields = ['transactions', 'roundTrips', 'rpcs', 'docsRead', 'docsWritten'];
    const mayFall = new Set(['roundTrips', 'rpcs']);
    const changes = (name) => {
      const now = r.store.counts[name]?.counts;
      const before = r.previous.counts[name];
      if (!now || !before) return null;
      return fields.filter((f) => now[f].median !== before[f]).map((f) => ({ f, before: before[f], now: now[f].median, ok: mayFall.has(f) && now[f].median < before[f] }));
    };
    const diff = (name) => {
      const changed = changes(name);
      if (changed === null) return r.previous.counts[name] ? `${name}: not in both runs` : null;
      return changed.every((c) => c.ok) ? null : `${name}: ${changed.map((c) => `${c.f} ${c.before} -> ${c.now}`).join(', ')}`;
    };
    const fell = (name) => (changes(name) ?? []).filter((c) => c.ok).map((c) => `${c.f} ${c.before} -> ${c.now}`).join(', ');
    const show = (name) => `${r.store.counts[name].counts.docsRead.median} / ${r.store.counts[name].counts.docsWritten.median} / ${r.store.counts[name].counts.roundTrips.median}`;
    const claim = diff('claim');
    add('2', `Claim of a reply without attachments: reads / writes / transactions equal, round trips / RPCs not more, now vs the committed previous run (commit ${r.previous.commit})`, null, 'equal (round trips: not more)', claim === null, claim ?? `${show('claim')} (reads / writes / round trips)${fell('claim') ? `; ${fell('claim')}` : ', as before'}`);
    // The cost per delivery (claim, start, complete, fail) has a target; incoming messages are reported.
    const group = (names, target, checked) => {
      const diffs = names.map(diff).filter((d) => d !== null);
      const fewer = names.map((n) => (fell(n) ? `${n}: ${fell(n)}` : null)).filter((d) => d !== null);
      const same = names.filter((n) => r.previous.counts[n] && !fell(n));
      return [target, checked ? diffs.length === 0 : null, diffs.length === 0 ? [same.length > 0 ? `equal for ${same.join(', ')}` : null, fewer.length > 0 ? `fewer: ${fewer.join('; ')}` : null].filter(Boolean).join('; ') : diffs.join('; ')];
    };
    const names = Object.keys(r.store.counts);
    add('2', `Delivery operations' Firestore work (the cost per delivery), now vs the committed previous run (commit ${r.previous.commit})`, null, ...group(names.filter((n) => !n.startsWith('message')), 'equal (round trips: not more)', true));
    add('2', `Incoming messages' Firestore work, now vs the committed previous run (commit ${r.previous.commit})`, null, ...group(names.filter((n) => n.startsWith('message')), 'report', false));
  }
  if (r.store?.scale) {
    const scale = r.store.scale;
    const first = scale[0];
    for (const step of scale.slice(1)) {
      const timeRatio = step.timeRatio;
      // Medians: a delivery that happens to refresh the key cache (every 20 s) reads 2 more documents.
      const same = ['docsRead', 'docsWritten', 'roundTrips', 'rpcs', 'transactions'].every((f) => step.counts[f].median === first.counts[f].median);
      add('3', `Cost per delivery, ${step.conversations} vs ${first.conversations} conversations: time`, timeRatio, '~1 (flat: <= 1.25)', timeRatio.median <= 1.25, `${fmt(step.ms.median, 1)} vs ${fmt(first.ms.median, 1)} ms (claim+start+complete in-process)${step.directRatio ? `; the same transactions replayed directly: ${fmt(step.directRatio.median)}x` : ''}`);
      add('3', `Cost per delivery, ${step.conversations} vs ${first.conversations} conversations: reads / writes / round trips`, null, 'equal', same, `${step.counts.docsRead.median} / ${step.counts.docsWritten.median} / ${step.counts.roundTrips.median} vs ${first.counts.docsRead.median} / ${first.counts.docsWritten.median} / ${first.counts.roundTrips.median}`);
    }
  }
  if (r.store?.scale?.[0]?.toOldShape) {
    // docs/decisions.md, "Delivery: one read wave": the handlers (new) against the same three
    // transactions replayed directly in the shape they had before (3 + 2 + 4 round trips).
    for (const step of r.store.scale) {
      const t = step.toOldShape;
      add('3', `ms per delivery (claim + start + complete, in-process), ${step.conversations} conversations / the same 3 transactions in the old shape replayed directly`, t, '<= 0.75', t.median <= 0.75, `${fmt(step.ms.median, 1)} vs ${fmt(step.oldShapeMs.median, 1)} ms; round trips per delivery ${step.counts.roundTrips.median} vs ${step.oldShapeRoundTrips ? `${step.oldShapeRoundTrips.median} (${step.oldShapeRoundTrips.min}–${step.oldShapeRoundTrips.max})` : '–'}`);
      // The floor of the row above: no handler at all, only the round trips saved.
      const floor = step.directToOldShape;
      if (floor) add('3', `Its floor: the same 3 transactions in the new shape / in the old shape, both replayed directly (no handler), ${step.conversations} conversations`, floor, 'report', null, `${fmt(step.directMs.median, 1)} vs ${fmt(step.oldShapeMs.median, 1)} ms; the handlers add ${fmt(step.ms.median - step.directMs.median, 1)} ms per delivery`);
    }
  }
  if (r.stack?.throughput) {
    const t = r.stack.throughput;
    const raw = t.rawTxPerSecond;
    add('3', `Throughput: deliveries/s / raw direct transactions/s, 4 loops (${t.replies} replies, ${t.conversations} conversations, ${t.connectors} connectors)`, t.ratioToRawTx, 'report', null, `${fmt(t.deliveriesPerSecond, 2)} deliveries/s vs ${fmt(raw.fourLoops.median, 1)} tx/s (1 loop: ${fmt(raw.oneLoop.median, 1)}; 4 loops of start only: ${fmt(raw.fourLoopsStartOnly.median, 1)})`, 3);
    add('3', 'Throughput: deliveries/s / (raw tx/s, 4 loops / 3), the floor of 3 transactions per delivery', t.ratioToRawDeliveries, 'report', null, `by tenth of the drain: ${t.deliveriesPerSecondByTenth ? spread(t.deliveriesPerSecondByTenth, 2) : '–'} deliveries/s`);
    if (t.noopDrain) {
      add('3', "Throughput: deliveries/s / the no-op drain's notifications/s (the same notifications through Pub/Sub to 4 subscribers, 3 round trips to the no-op function each: the emulator's own part)", { median: t.ratioToNoopDrain }, 'report', null, `${fmt(t.deliveriesPerSecond, 2)} vs ${fmt(t.noopDrain.perSecond, 1)}/s`, 3);
      add('3', "Throughput: deliveries/s / both floors together (the no-op drain's time per notification + the 3 raw transactions' time per delivery, on the same two cores)", { median: t.ratioToCombinedFloor }, 'report', null, `${fmt(t.deliveriesPerSecond, 2)} vs ${fmt(t.combinedFloorPerSecond, 1)}/s`, 3);
    }
    add('3', `Throughput: all ${t.replies} replies sequenced (triggers) and drained (connectors)${t.scaledDown ? ' (quick: scaled down)' : ''}`, null, `${t.replies} sent`, t.sequencingFinished && t.drainFinished && t.orderViolations === 0, `sequenced ${t.sequenced}/${t.replies} in ${fmt(t.sequencingSeconds, 0)} s; sent ${t.delivered}/${t.replies} in ${fmt(t.drainSeconds, 0)} s${t.drainFinished ? '' : ' (time limit)'}; ${t.orderViolations} order violations`);
  }
  if (r.stack?.recovery) {
    const v = r.stack.recovery;
    add('3', `Recovery: connectors down ${v.downSeconds} s while ${v.repliesPerSecond} replies/s arrive, then started (${v.connectors} runPullLoops): catch-up time / (backlog / floor rate)`, { median: v.catchUpRatio }, 'report', null, `${v.backlog} replies caught up in ${fmt(v.catchUpSeconds, 1)} s vs ${fmt(v.idealSeconds, 1)} s at the floor (${fmt(v.floorDeliveriesPerSecond, 1)} deliveries/s)${v.caughtUp ? '' : ' (time limit)'}`);
    add('3', 'Recovery: every reply written (backlog and arrivals) sent exactly once and in order', null, '0 / 0 / 0', v.caughtUp && v.notSent === 0 && v.sentTwice === 0 && v.orderViolations === 0, `${v.written} written; ${v.notSent} not sent, ${v.sentTwice} sent twice, ${v.orderViolations} out of order`);
  }
  if (r.stack?.replyLatency) {
    const l = r.stack.replyLatency;
    add('3', `Reply written -> notification pulled / floor (a document -> one trigger that only publishes -> pulled), p50 of ${l.rounds} rounds`, { median: l.ratioP50, ...pairedSpread(l.pairedRatio) }, '<= 1.3', l.ratioP50 <= 1.3, `p50 ${fmt(l.replyMs.median, 1)} vs ${fmt(l.floorMs.median, 1)} ms; p95 ${fmt(l.replyP95Ms, 1)} vs ${fmt(l.floorP95Ms, 1)} ms (ratio ${fmt(l.ratioP95)}); spread: the paired per-round ratios`);
  }
  if (r.stack?.throughput?.notificationToSentMs) {
    const t = r.stack.throughput;
    add('3', 'Under load (the drain): notification -> sent with processDelivery and a zero-latency provider / 3 sequential round trips to the no-op function (same drain), p50', { median: t.notificationToSentRatioP50 }, 'report', null, `p50 ${fmt(t.notificationToSentMs.median, 1)} vs ${fmt(t.noopTripleMs.median, 1)} ms; p95 ${fmt(t.notificationToSentP95Ms, 1)} vs ${fmt(t.noopTripleP95Ms, 1)} ms`);
    if (t.chainGapMs) {
      add('3', "The drain: a conversation's reply sent -> its next reply sent / notification -> sent (same drain), p50", { median: t.chainGapRatioP50 }, '<= 3', t.chainGapRatioP50 <= 3, `p50 ${fmt(t.chainGapMs.median, 1)} vs ${fmt(t.notificationToSentMs.median, 1)} ms; p95 ${fmt(t.chainGapP95Ms, 1)} ms; ${t.processDeliveryOutcomes.followedNext ?? 0} deliveries taken from a complete's \`next\``);
    }
  }
  if (r.store?.pending) {
    const [small, large] = r.store.pending;
    if (small && large) {
      const what = `Catch-up list (a page of 10), ${large.finishedPerConversation} vs ${small.finishedPerConversation} finished deliveries per conversation`;
      add('3', `${what}: time`, large.timeRatio, '~1 (flat: <= 1.25)', large.timeRatio.median <= 1.25, `${fmt(large.ms.median, 1)} vs ${fmt(small.ms.median, 1)} ms; the Firestore query alone: ${fmt(large.queryRatio.median, 2)}x (${fmt(large.queryMs.median, 1)} vs ${fmt(small.queryMs.median, 1)} ms; the emulator scans where production reads an index range)`);
      add('3', `${what}: docs read`, null, 'equal', large.docsRead.median === small.docsRead.median, `${large.docsRead.median} vs ${small.docsRead.median}`);
    }
  }
  if (r.store?.multipart) {
    const m = r.store.multipart;
    add('4', `Multipart (3 images, ${mb(m.requestBytes)}): handler CPU per MB / SHA-256 CPU per MB`, m.cpuRatio, 'report (floor 1)', null, `${fmt(m.handlerCpuMsPerMB.median, 1)} vs ${fmt(m.sha256CpuMsPerMB.median, 1)} ms/MB` + (m.multipartParseCpuRatio ? `; of which multipart parsing ${fmt(m.multipartParseCpuRatio.median)}x, image inspection (hashing) ${fmt(m.inspectImagesCpuRatio.median)}x` : ''));
    add('4', 'Multipart: peak extra RSS / request size', m.rssRatio, '<= 2', m.rssRatio.median <= 2, `peak +${mb(m.peakExtraRssBytes.median)}`);
    add('4', 'Multipart: peak extra arrayBuffers (sampled) / request size', m.arrayBuffersRatio, '<= 2', m.arrayBuffersRatio.median <= 2, `peak +${mb(m.peakExtraArrayBuffersBytes.median)}`);
  }
  if (r.store?.upload) {
    const u = r.store.upload;
    add('4', `Console upload (one file, ${mb(u.requestBytes)} request): handler CPU per MB / SHA-256 CPU per MB`, u.cpuRatio, 'report (floor 1)', null, `${fmt(u.handlerCpuMsPerMB.median, 1)} vs ${fmt(u.sha256CpuMsPerMB.median, 1)} ms/MB; of which multipart parsing ${fmt(u.multipartParseCpuRatio.median)}x, sniffing ${fmt(u.sniffCpuRatio.median)}x; peak extra RSS / request size ${fmt(u.rssRatio.median)}`);
  }
  if (r.framework?.multipartMemory) {
    const m = r.framework.multipartMemory;
    const single = (x) => ({ median: x, p25: x, p75: x, min: x, max: x });
    add('4', `Multipart on the functions framework: peak RSS at the configured concurrency (${m.concurrency} x ${mb(m.requestBytes)}) / memory limit (${m.memory})`, single(m.peakToLimitRatio), '<= 0.8, all 201', m.peakToLimitRatio <= 0.8 && m.allAccepted, `peak ${mb(m.peakAtConcurrencyBytes)}; idle ${mb(m.idleRssBytes)}; ${m.runs.map((x) => `${x.n}: ${mb(x.peakRssBytes)} (${x.accepted}/${x.n} accepted)`).join(', ')}`);
    add('4', 'Multipart on the functions framework: extra RSS per upload in flight / request size (slope over N)', single(m.perUploadExtraRatio), 'report', null, `${mb(m.perUploadExtraBytes)} per upload`);
  }
  if (r.stack?.attachmentFetch) {
    const a = r.stack.attachmentFetch;
    add('4', `Attachment fetch (${mb(a.bytes)}): POST /v1/deliveries/attachment through Hosting / the same object read directly from the store (HTTP)`, a.ratioToDirect, '<= 1.3', a.ratioToDirect.median <= 1.3, `${fmt(a.fetchMs.median, 1)} vs ${fmt(a.directMs.median, 1)} ms; the store's in-process read ${fmt(a.inProcessReadMs.median, 1)} ms (fetch / that: ${fmt(a.ratioToInProcessRead.median, 1)})`);
    add('4', `Attachment fetch (${mb(a.bytes)}) / the no-op function serving the same file through Hosting (the platform's floor)`, a.ratioToNoopFile, 'report', null, `${fmt(a.fetchMs.median, 1)} vs ${fmt(a.noopFileMs.median, 1)} ms; the no-op / the direct read: ${fmt(a.noopFileToDirect.median)} through Hosting${a.noopNoHostingToDirect ? `, ${fmt(a.noopNoHostingToDirect.median)} at the Functions emulator's own address (${fmt(a.noopFileNoHostingMs.median, 1)} ms)` : ''}`);
  }
  if (r.framework?.attachmentMemory) {
    const m = r.framework.attachmentMemory;
    const single = (x) => ({ median: x, p25: x, p75: x, min: x, max: x });
    add('4', `Attachment fetch on the functions framework: peak RSS at the configured concurrency (${m.concurrency} x ${mb(m.fileBytes)}) / memory limit (${m.memory})`, single(m.peakToLimitRatio), '<= 0.8, all 200', m.peakToLimitRatio <= 0.8 && m.allComplete, `peak ${mb(m.peakAtConcurrencyBytes)}; idle ${mb(m.idleRssBytes)}; ${m.runs.map((x) => `${x.n}: ${mb(x.peakRssBytes)} (${x.ok}/${x.n} complete)`).join(', ')}`);
    add('4', 'Attachment fetch on the functions framework: extra RSS per fetch in flight / file size (slope over N)', single(m.perFetchExtraRatio), 'report', null, `${mb(m.perFetchExtraBytes)} per fetch`);
    if (m.fetchToDirect !== undefined) {
      const q = (v, p) => [...v].sort((x, y) => x - y)[Math.min(v.length - 1, Math.floor(p * v.length))];
      const paired = m.pairedFetchToDirect;
      add('4', `Attachment fetch on the functions framework (no emulator proxy), one at a time / the same object read directly from the store (HTTP)`, { median: m.fetchToDirect, p25: q(paired, 0.25), p75: q(paired, 0.75), min: Math.min(...paired), max: Math.max(...paired) }, 'report', null, `${fmt(m.fetchMs, 1)} vs ${fmt(m.directMs, 1)} ms (medians of ${paired.length}); spread: the paired per-request ratios`);
    }
  }
  if (r.images) {
    for (const [name, c] of Object.entries(r.images.cases)) {
      if (name === c.against) continue;
      add('4', `inspectImage: ${name} / ${c.against}`, c.ratio, '~1 (<= 1.2)', c.ratio.median <= 1.2, `${fmt(c.micros.median, 1)} µs`);
    }
    const ba = r.images.beforeAfter;
    for (const [name, c] of Object.entries(ba?.cases ?? {})) {
      const same = c.verdicts.after === c.verdicts.before;
      // Header-only files show the header work alone (reported); a 1 MB file is what a request carries.
      const whole = name.includes('MB');
      const target = whole ? '~1 (<= 1.2), same verdict' : 'report, same verdict';
      add('4', `inspectImage + SHA-256 before/after: ${name}, now / the hand-written parsers of ${ba.rev}`, c.ratio, target, same && (!whole || c.ratio.median <= 1.2), `${fmt(c.micros.median, 1)} µs; ${c.verdicts.after}${same ? '' : ` (was ${c.verdicts.before})`}`);
    }
  }
  if (r.coldstart) {
    const targets = Object.entries(r.coldstart.targets).filter(([name]) => name !== 'baseline');
    const base = r.coldstart.targets.baseline;
    for (const [name, c] of targets) {
      const target = c.http ? '<= 1.2' : 'report';
      const met = (s) => (c.http ? s.median <= 1.2 : null);
      add('5', `Cold start: ${name} / firebase-functions + firebase-admin, wall time`, c.timeRatio, target, met(c.timeRatio), `${fmt(c.loadMs.median, 0)} vs ${fmt(base.loadMs.median, 0)} ms; ${c.moduleCount.median} vs ${base.moduleCount.median} modules`);
      add('5', `Cold start: ${name} / firebase-functions + firebase-admin, CPU time`, c.cpuRatio, target, met(c.cpuRatio), `${fmt(c.loadCpuMs.median, 0)} vs ${fmt(base.loadCpuMs.median, 0)} ms CPU`);
      add('5', `Cold start: ${name} / firebase-functions + firebase-admin, RSS`, c.rssRatio, target, met(c.rssRatio), `+${mb(c.rssBytes.median)} vs +${mb(base.rssBytes.median)}`);
    }
    const cache = r.coldstart.compileCache;
    if (cache !== undefined) {
      add('5', "npm test's compile cache (NODE_COMPILE_CACHE): a delivery function's module loading, primed / none, CPU time", cache.cpuRatio, 'report', null, `${fmt(cache.loadCpuMs.median, 0)} vs ${fmt(cache.plainLoadCpuMs.median, 0)} ms CPU`);
      add('5', "npm test's compile cache (NODE_COMPILE_CACHE): a delivery function's module loading, primed / none, wall time", cache.timeRatio, 'report', null, '');
    }
    const http = targets.filter(([, c]) => c.http);
    add('5', '@google-cloud/pubsub loaded by the HTTP functions (require.cache)', null, 'no', http.every(([, c]) => !c.pubsubLoaded), http.map(([n, c]) => `${n.replace(/ \(.*/, '')}: ${c.pubsubLoaded ? 'yes' : 'no'}`).join('; '));
    // Per-function loading (functions/src/platform/lazy.ts): which of the service's own modules each target loaded.
    const own = (pick) => targets.find(([n]) => n.startsWith(pick))?.[1];
    const [indexOnly, msgs, deliveries, triggers] = ['index.js alone', 'messages', 'claim/', 'delivery triggers'].map(own);
    if ([indexOnly, msgs, deliveries, triggers].every((c) => c?.ownModules)) {
      const has = (c, prefix) => c.ownModules.some((m) => m.startsWith(prefix));
      const checks = [
        [`index.js alone: ${indexOnly.ownModules.join(', ')}`, indexOnly.ownModules.every((m) => INDEX_MODULES.includes(m))],
        ['HTTP functions: no trigger, outbox or publishing code', [msgs, deliveries].every((c) => !TRIGGER_CODE.some((m) => has(c, m)))],
        ['deliveries: no messages/ code (multipart, busboy, images)', !deliveries.busboyLoaded && !has(deliveries, 'messages/')],
        ['delivery triggers: no endpoint or pipeline code (beyond what index.js loads)', !has(triggers, 'deliveries/http') && !has(triggers, 'messages/') && !triggers.ownModules.some((m) => m.startsWith('platform/http/') && !INDEX_MODULES.includes(m))],
      ];
      add('5', 'Each function loads only its own code (require.cache)', null, 'yes', checks.every(([, ok]) => ok), checks.map(([what, ok]) => `${what}${ok ? '' : ' (NOT MET)'}`).join('; ') + `; own modules: messages ${msgs.ownModules.length}, deliveries ${deliveries.ownModules.length}, triggers ${triggers.ownModules.length}`);
    }
  }
  if (r.privacy?.erasure) {
    const e = r.privacy.erasure;
    const what = `Erasure of one customer (${e.targetMessages} messages in ${e.targetConversations} conversations) among ${e.otherMessages.large} / among ${e.otherMessages.small} other customers' messages`;
    add('7', `${what}: time`, e.timeRatio, '<= 1.25', e.timeRatio.median <= 1.25, `${fmt(e.large.ms.median / 1000, 2)} vs ${fmt(e.small.ms.median / 1000, 2)} s; ${e.large.steps.median} vs ${e.small.steps.median} steps; the erasure's collection-group query alone grew ${fmt(e.groupQueryScan.ratio)}x (${fmt(e.groupQueryScan.beforeMs, 1)} -> ${fmt(e.groupQueryScan.afterMs, 1)} ms) when the large workspace's ${e.otherMessages.large} messages were written (the emulator has no index; production reads an index range)`);
    add('7', `${what}: documents read`, e.docsReadRatio, '<= 1.25', e.docsReadRatio.median <= 1.25, `${e.large.docsRead.median} vs ${e.small.docsRead.median} (billed, at the Admin SDK); ${e.large.deleted.median} vs ${e.small.deleted.median} deleted`);
  }
  if (r.privacy?.retention) {
    const t = r.privacy.retention;
    add('7', `Retention job: documents deleted per second / raw batched deletes per second (${t.documents} documents, 500 per batch)`, t.ratio, '>= 0.5', t.ratio.median >= 0.5, `${fmt(t.jobDeletesPerSecond.median, 0)} vs ${fmt(t.rawDeletesPerSecond.median, 0)} per second; the job read ${t.runs[0].jobReads} documents in ${t.runs[0].jobRuns} run(s)`);
    if (t.readThenDeleteToRaw) add('7', 'Retention: the same documents found by the same queries, then deleted blind / raw batched deletes (what reading costs on the emulator)', t.readThenDeleteToRaw, 'report', null, `${fmt(t.readThenDeletePerSecond.median, 0)} vs ${fmt(t.rawDeletesPerSecond.median, 0)} per second; the job / read-then-delete: ${fmt(t.ratioToReadThenDelete.median)}`);
    if (t.withFiles) {
      const f = t.withFiles;
      add('7', `Retention job with files (${f.documents} documents, ${f.objects} messages naming one stored image each): documents deleted per second / raw batched deletes of the same documents`, f.ratio, 'report', null, `${fmt(f.jobDocumentsPerSecond.median, 0)} vs ${fmt(f.rawDeletesPerSecond.median, 0)} per second`);
      add('7', 'Retention job with files / the same documents deleted in batches and their objects removed blind, 16 at a time', f.ratioToRawWithObjects, 'report', null, `${fmt(f.jobDocumentsPerSecond.median, 0)} vs ${fmt(f.rawWithObjectsPerSecond.median, 0)} documents per second`);
    }
  }
  if (r.sdk) {
    add('6', 'SDK: deliveries.start / hand-written fetch, per call', r.sdk.ratio, '<= 1.1', r.sdk.ratio.median <= 1.1, `${fmt(r.sdk.sdkStartMicros.median, 0)} vs ${fmt(r.sdk.fetchMicros.median, 0)} µs`);
    const p = r.sdk.package;
    add('6', 'SDK package: unpacked size / its runtime JavaScript (dist/*.js)', { median: p.unpackedToRuntimeJs }, 'report', null, `${kb(p.unpackedBytes)} unpacked, ${p.files} files, ${kb(p.tarballBytes)} tarball, ${p.runtimeDependencies} runtime dependencies`);
  }
  return rows;
}

function table(header, rows) {
  return [`| ${header.join(' | ')} |`, `|${header.map(() => '---').join('|')}|`, ...rows.map((r) => `| ${r.join(' | ')} |`)].join('\n');
}

/** Same operation in the counts table (in-process figures). */
const IN_PROCESS = { message: 'message, existing conversation', claim: 'claim', start: 'start', complete: 'complete', fail: 'fail (failed)' };

function overheadTable(overhead, counts) {
  const rows = Object.entries(overhead.ops).map(([op, o]) => {
    const inProcess = counts?.[IN_PROCESS[op]];
    return [
      op,
      `${fmt(o.ratioToLoggedNoop.median)} (${spread(o.ratioToLoggedNoop)})`,
      `${fmt(o.ratio.median)} (${spread(o.ratio)})`,
      fmt(o.opMs.median, 1),
      fmt(o.noopMs.median, 1),
      fmt(o.loggedNoopMs?.median, 1),
      fmt(o.directTxMs.median, 1),
      inProcess?.directTxMs ? `${fmt(inProcess.inProcessRatio)} (${fmt(inProcess.ms.median, 1)} / ${fmt(inProcess.directTxMs.median, 1)} ms)` : '–',
      `\`${o.directTx}\``,
    ];
  });
  return [
    table(['Operation', 'op / (logged no-op + tx)', 'op / (unlogged no-op + tx)', 'op ms', 'no-op ms', 'logged no-op ms', 'direct tx ms', 'in-process handler / direct tx (store session)', 'Direct transaction'], rows),
    '',
    `${overhead.requestsPerOpPerRep} requests of each kind per repetition, ${overhead.reps} repetitions. The logged no-op (the headline's floor) also writes one request log line, as every endpoint must: the difference between the two no-ops is what the emulator charges for a log line. The in-process column runs the handler without HTTP and without the functions emulator.`,
  ].join('\n');
}

function countsTable(counts) {
  const rows = Object.entries(counts).map(([name, c]) => {
    const k = c.counts;
    const range = (s) => (s.min === s.max ? `${s.median}` : `${s.median} (${s.min}–${s.max})`);
    return [name, range(k.transactions), range(k.attempts), range(k.roundTrips), range(k.rpcs), range(k.docsRead), range(k.docsReadOutsideTx), range(k.docsWritten), `${fmt(c.ms.median, 1)}`, `\`${c.pattern}\``];
  });
  return table(['Operation (in-process)', 'Transactions', 'Attempts', 'Round trips (sequential)', 'RPCs', 'Docs read (billed)', 'of which outside the tx', 'Docs written', 'ms', 'Transaction (reads by wave -> commit)'], rows);
}

function scaleTable(scale) {
  const op = (s, name) => (s.opTimeRatio ? fmt(s.opTimeRatio[name].median) : '–');
  const rows = scale.map((s) => [s.conversations, s.deliveriesInWorkspace, s.measuredDeliveries, `${fmt(s.ms.median, 1)} (${fmt(s.ms.p25, 1)}–${fmt(s.ms.p75, 1)})`, `${fmt(s.timeRatio.median)} (${spread(s.timeRatio)})`, `${op(s, 'claim')} / ${op(s, 'start')} / ${op(s, 'complete')}`, s.queryOnlyMs ? `${fmt(s.queryOnlyMs.median, 1)} ms, ${fmt(s.queryOnlyRatio.median)}x` : '–', s.directMs ? `${fmt(s.directMs.median, 1)} ms, ${fmt(s.directRatio.median)}x` : '–', s.counts.roundTrips.median, s.counts.docsRead.median, s.counts.docsWritten.median, s.counts.transactions.median, s.keyCacheRefreshes]);
  return table(['Conversations', 'Deliveries in workspace', 'Deliveries measured', 'ms per delivery (p25–p75)', 'Time / smallest workspace, paired by round', 'claim / start / complete, same', "Claim's queue document read alone (no transaction)", 'The same 3 transactions replayed directly / smallest workspace', 'Round trips', 'Docs read', 'Docs written', 'Transactions', 'Key cache refreshes (+2 reads)'], rows);
}

export function renderMarkdown(r) {
  const lines = [];
  lines.push(`# Bench results (${r.mode})`);
  lines.push('');
  lines.push(`${r.date}, commit ${r.commit}${r.workingTreeDirty ? ' (working tree had uncommitted changes)' : ''}, Node ${r.machine.node}, ${r.machine.cpus} CPUs. ` +
    `Run time ${r.benchSeconds} s (plus ${fmt(r.totalSeconds - r.benchSeconds, 0)} s waiting for the shared emulator lock). How to read this: [bench/README.md](../README.md).`);
  if (r.mode === 'quick') lines.push('', '**Quick mode: smaller sizes and fewer repetitions (smoke test); the throughput drain is scaled down. Not the reference figures.**');
  lines.push('');
  lines.push('Ratios: median over repetitions; spread: p25–p75 (min–max) of the same per-repetition ratios.');
  lines.push('');
  lines.push(table(['#', 'Figure', 'Ratio', 'Spread', 'Target', 'Met', 'Absolute (medians)'], summaryRows(r)));
  if (r.stack?.overhead) {
    lines.push('', '## Overhead detail (HTTP through Hosting, medians of the repetitions)', '');
    lines.push(overheadTable(r.stack.overhead, r.store?.counts));
  }
  if (r.starts?.startSequencing) {
    const q = r.starts.startSequencing;
    lines.push('', '## Taking a start vs sequencing a reply (in-process, starts session: Firestore and Pub/Sub, no triggers)', '');
    const k = (c, f) => (c[f].min === c[f].max ? `${c[f].median}` : `${c[f].median} (${c[f].min}–${c[f].max})`);
    const row = (name, x, ms = '–', tx = '–') => [name, k(x.counts, 'transactions'), k(x.counts, 'attempts'), k(x.counts, 'roundTrips'), k(x.counts, 'rpcs'), k(x.counts, 'docsRead'), k(x.counts, 'docsWritten'), ms, tx, `\`${x.directTx}\``];
    const rows = [
      row('start taken (`takeStart`, then its publish)', q.start, `${fmt(q.start.ms.median, 1)} (${spread(q.start.ms, 1)})`, fmt(q.start.directTxMs.median, 1)),
      row('reply sequenced (`sequenceAndPublish`)', q.reply, `${fmt(q.reply.ms.median, 1)} (${spread(q.reply.ms, 1)})`, fmt(q.reply.directTxMs.median, 1)),
      ...['claim', 'start', 'complete'].flatMap((op) => ['start', 'reply'].filter((kind) => q.deliveryOps[kind]?.[op]).map((kind) => row(`${op} of a ${kind === 'start' ? 'start' : 'reply'}${op === 'complete' && kind === 'start' ? ' (joins the thread)' : ''}`, q.deliveryOps[kind][op]))),
    ];
    lines.push(table(['Operation', 'Transactions', 'Attempts', 'Round trips (sequential)', 'RPCs', 'Docs read (billed)', 'Docs written', 'ms (p25–p75 (min–max))', 'its transaction replayed directly, ms', 'Transaction (reads by wave -> commit)'], rows));
    lines.push('', `${q.rounds} rounds, alternating which goes first. Counts include the publish's outbox delete (one RPC, one write) after the commit. Ratio start / reply, paired by round: ${fmt(q.ratio.median)} (${spread(q.ratio)}); of their transactions replayed directly: ${fmt(q.directRatio.median)} (${spread(q.directRatio)}).`);
  }
  if (r.store?.counts) {
    lines.push('', '## Firestore per operation (counted at the Admin SDK, handlers in-process, warm unless noted)', '');
    lines.push(countsTable(r.store.counts));
  }
  if (r.store?.scale) {
    lines.push('', '## Cost per delivery as the workspace grows (claim + start + complete, in-process)', '');
    lines.push(scaleTable(r.store.scale));
  }
  if (r.store?.txCosts) {
    // docs/decisions.md, "What fewer round trips buy on the emulator".
    lines.push('', "## The emulator's transaction costs (direct transactions, against the smallest one)", '');
    const rows = Object.entries(r.store.txCosts).map(([name, c]) => [`\`${name}\``, fmt(c.ms.median, 2), `${fmt(c.toBase.median)} (${spread(c.toBase)})`]);
    lines.push(table(['Transaction', 'ms (median)', '/ read 1 -> commit 0, paired'], rows));
  }
  if (r.stack?.throughput) {
    const t = r.stack.throughput;
    const raw = t.rawTxPerSecond;
    lines.push('', '## Throughput drain', '');
    lines.push(
      `${t.replies} replies in ${t.conversations} conversations (${t.replies / t.conversations} each)${t.scaledDown ? ' (scaled down: quick mode)' : ''}, written as the console writes them (${fmt(t.writeRepliesMs / 1000, 1)} s). ` +
        `Stage 1, the emulated reply and outbox triggers: ${t.sequenced}/${t.replies} sequenced into deliveries and notified in ${fmt(t.sequencingSeconds, 1)} s (${fmt(t.repliesSequencedPerSecond, 1)}/s)${t.sequencingFinished ? '' : ', stopped at the time limit'}. ` +
        `Stage 2, ${t.connectors} connectors (the SDK's \`runPullLoop\` with up to ${t.concurrencyPerConnector} deliveries in flight each): ` +
        `${t.delivered}/${t.replies} sent in ${fmt(t.drainSeconds, 1)} s, ${fmt(t.deliveriesPerSecond, 2)} deliveries/s${t.drainFinished ? '' : ', stopped at the time limit'}; ` +
        `${t.statusSentInFirestore} deliveries are \`sent\` in Firestore (those sent in time plus ${(t.deliveredIncludingInFlightAtLimit ?? t.delivered) - t.delivered} in flight at the limit), ${t.orderViolations} sent out of order. processDelivery outcomes: ${Object.entries(t.processDeliveryOutcomes).map(([k, v]) => `${k} ${v}`).join(', ')}.`,
    );
    lines.push(
      '',
      `Raw direct transactions (claim, start, complete replayed; own documents per loop), per second: 1 loop ${fmt(raw.oneLoop.median, 1)} (${spread(raw.oneLoop, 1)}), ` +
        `4 loops ${fmt(raw.fourLoops.median, 1)} (${spread(raw.fourLoops, 1)}), 4 loops of start only ${fmt(raw.fourLoopsStartOnly.median, 1)} (${spread(raw.fourLoopsStartOnly, 1)}).`,
    );
    if (t.steps) {
      lines.push('', "### Where a conversation's chain waits (every call as the connectors saw it)", '');
      const step = (name, f) => [name, f.n, fmt(f.p50, 1), fmt(f.p95, 1)];
      lines.push(
        table(
          ['Step', 'n', 'p50 ms', 'p95 ms'],
          [
            step("a conversation's first reply: the drain's start -> its claim answered ready sent", t.steps.firstReplyWaitMs),
            step("the previous reply's complete answered -> this reply's claim answered ready sent", t.steps.waitAfterPreviousMs),
            step('claim (ready)', t.steps.claimReadyMs),
            step('start', t.steps.startMs),
            step('complete', t.steps.completeMs),
            step('claims answered anything but ready', t.steps.claimNotReadyMs),
          ],
        ),
      );
      lines.push('', `Calls by answer: ${Object.entries(t.steps.answers).map(([k, v]) => `${k}: ${v}`).join('; ')}.`);
    }
    if (t.drainCpuSeconds && Object.keys(t.drainCpuSeconds).length > 0) {
      const total = Object.values(t.drainCpuSeconds).reduce((a, b) => a + b, 0);
      lines.push('', `### CPU during the drain, by process (${fmt(total, 1)} s of CPU in ${fmt(t.drainSeconds, 1)} s on ${r.machine?.cpus ?? 2} cores)`, '');
      lines.push(table(['Process', 'CPU s', 'ms per delivery', 'share'], Object.entries(t.drainCpuSeconds).map(([role, sec]) => [role, fmt(sec, 2), fmt((sec * 1000) / t.delivered, 1), `${fmt((100 * sec) / total, 0)} %`])));
      if (t.noopDrain?.cpuSeconds) lines.push('', `The no-op drain's CPU: ${Object.entries(t.noopDrain.cpuSeconds).map(([role, sec]) => `${role} ${fmt(sec, 2)} s`).join(', ')} (${t.noopDrain.handled} notifications in ${fmt(t.noopDrain.seconds, 1)} s).`);
      if (t.workerWarmUpSeconds !== undefined) lines.push('', `Before the drain, ${t.connectors * t.concurrencyPerConnector} Functions emulator workers of each delivery function were started (${fmt(t.workerWarmUpSeconds, 1)} s; bench/README.md, Throughput).`);
    }
  }
  const errors = [...(r.failures ?? []), ...Object.entries({ ...r.store?.errors, ...r.starts?.errors, ...r.stack?.errors, ...r.framework?.errors, ...r.privacy?.errors }).map(([k, v]) => `${k}: ${v}`)];
  if (errors.length > 0) lines.push('', '## Failures', '', ...errors.map((e) => `- ${e}`));
  const retried = (r.store?.retried503 ?? 0) + (r.stack?.overhead?.retried503 ?? 0);
  if (retried > 0) lines.push('', `${retried} measured request(s) got a 503 (the emulator's "Transaction lock timeout") and were retried; only successful attempts are in the figures.`);
  lines.push('', '## Time per step (s)', '');
  lines.push(table(['Step', 'Seconds'], Object.entries(r.secondsByStep).map(([k, v]) => [k, v ?? '–'])));
  lines.push('');
  return lines.join('\n');
}
