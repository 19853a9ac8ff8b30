/* vslint dashboard: reads the JSON API (/api/v1/...) and renders the summary, the findings with
 * their filters, the per-vCenter poll status and the datastore fill chart. No framework and no
 * external resources: the page is served by vslint itself, often on an isolated network. */
'use strict';

(function () {
  const REFRESH_MS = 30000;
  const PAGE = 100;
  const TOKEN_KEY = 'vslint-token';
  const FILTERS = ['severity', 'check', 'vcenter', 'status', 'unverified', 'object', 'host'];

  const $ = (id) => document.getElementById(id);
  const state = {
    checks: null,          // id -> catalogue entry (/api/v1/checks)
    findings: [],          // rows shown, in API order
    next: null,            // the API's link to the following page, or null
    expanded: new Set(),   // fingerprints whose details are open; kept across refreshes
    seq: 0,                // drops answers to findings requests that a newer one replaced
    thresholds: { warn: 30, crit: 10 },
    openDatastore: null,   // "vcenter/moref" of the datastore whose capacity chart is open
    openLabel: null,
    timer: null,
  };

  /* ---------- API access ---------- */

  class AuthError extends Error {}

  function token() {
    try { return sessionStorage.getItem(TOKEN_KEY) || ''; } catch (e) { return ''; }
  }

  async function api(path, options) {
    const opts = Object.assign({ headers: {} }, options || {});
    opts.headers = Object.assign({ Accept: 'application/json' }, opts.headers);
    const t = token();
    if (t) opts.headers.Authorization = 'Bearer ' + t;
    // "no-cache" revalidates with the server's ETag: a 304 is cheap, stale data is never shown.
    opts.cache = 'no-cache';
    const resp = await fetch(path, opts);
    if (resp.status === 401) {
      showTokenForm(t ? 'The token was rejected.' : '');
      throw new AuthError('this server needs a bearer token');
    }
    let body = null;
    const text = await resp.text();
    if (text) {
      try { body = JSON.parse(text); } catch (e) { body = null; }
    }
    if (!resp.ok) {
      const err = body && body.error;
      throw new Error(path.split('?')[0] + ': ' + (err && err.message ? err.message : 'HTTP ' + resp.status));
    }
    return body;
  }

  // Every row of /api/v1/inventory/KIND, following its pages (at most 50 of 1000 rows).
  async function inventoryAll(kind) {
    const all = [];
    let path = '/api/v1/inventory/' + kind + '?limit=1000';
    for (let pages = 0; path && pages < 50; pages++) {
      const doc = await api(path);
      all.push(...(doc[kind] || []));
      path = doc.next || null;
    }
    return all;
  }

  /* ---------- small helpers ---------- */

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k === 'class') node.className = v;
      else if (k === 'text') node.textContent = v;
      else node.setAttribute(k, v === true ? '' : String(v));
    }
    for (const c of children) {
      if (c === null || c === undefined) continue;
      node.append(c instanceof Node ? c : String(c));
    }
    return node;
  }

  function toDate(v) {
    if (v === null || v === undefined || v === '') return null;
    const d = typeof v === 'number' ? new Date(v < 1e11 ? v * 1000 : v) : new Date(v);
    return isNaN(d.getTime()) ? null : d;
  }

  function pad(n) { return String(n).padStart(2, '0'); }

  function fmtTime(v) {
    const d = toDate(v);
    if (!d) return '–';
    return d.getFullYear() + '-' + pad(d.getMonth() + 1) + '-' + pad(d.getDate()) + ' ' +
      pad(d.getHours()) + ':' + pad(d.getMinutes());
  }

  function fmtAgo(v) {
    const d = toDate(v);
    if (!d) return '';
    const s = Math.round((Date.now() - d.getTime()) / 1000);
    const abs = Math.abs(s);
    const txt = abs < 60 ? abs + ' s' : abs < 3600 ? Math.round(abs / 60) + ' min' :
      abs < 172800 ? Math.round(abs / 3600) + ' h' : Math.round(abs / 86400) + ' days';
    return s >= 0 ? txt + ' ago' : 'in ' + txt;
  }

  function timeEl(v) {
    const d = toDate(v);
    if (!d) return document.createTextNode('–');
    return el('time', { datetime: d.toISOString(), title: fmtAgo(v) }, fmtTime(v));
  }

  function fmtDuration(ms) {
    if (ms === null || ms === undefined || isNaN(ms)) return '–';
    return ms < 1000 ? Math.round(ms) + ' ms' : (ms / 1000).toFixed(ms < 10000 ? 1 : 0) + ' s';
  }

  function fmtBytes(b) {
    if (b === null || b === undefined) return '?';
    const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
    let i = 0;
    while (b >= 1024 && i < units.length - 1) { b /= 1024; i++; }
    return (b >= 100 || i === 0 ? Math.round(b) : b.toFixed(1)) + ' ' + units[i];
  }

  function setBanner(text, kind) {
    const b = $('status');
    b.hidden = !text;
    b.textContent = text || '';
    b.className = 'banner' + (kind ? ' ' + kind : '');
  }

  /* ---------- token ---------- */

  function showTokenForm(message) {
    const form = $('token-form');
    if (form.hidden) {
      form.hidden = false;
      $('token').focus();
    }
    setBanner(message || 'Enter the bearer token to continue.', 'error');
  }

  function useToken(ev) {
    ev.preventDefault();
    const v = $('token').value.trim();
    if (!v) return;
    try { sessionStorage.setItem(TOKEN_KEY, v); } catch (e) { /* private mode: lost on reload */ }
    $('token').value = '';
    $('token-form').hidden = true;
    setBanner('');
    refresh();
  }

  function forgetToken() {
    try { sessionStorage.removeItem(TOKEN_KEY); } catch (e) { /* nothing stored */ }
    $('token').value = '';
  }

  /* ---------- filters (mirrored in the URL fragment, so a view can be bookmarked) ---------- */

  function filters() {
    const f = {};
    for (const k of FILTERS) {
      const v = $('f-' + k).value.trim();
      if (v) f[k] = v;
    }
    return f;
  }

  function readHash() {
    const p = new URLSearchParams(location.hash.replace(/^#/, ''));
    for (const k of FILTERS) {
      const v = p.get(k) || '';
      const input = $('f-' + k);
      if (input.tagName === 'SELECT' && v && ![...input.options].some((o) => o.value === v)) {
        input.append(el('option', { value: v }, v)); // a check or vCenter not loaded yet
      }
      input.value = v;
    }
  }

  function writeHash() {
    const q = new URLSearchParams(filters()).toString();
    history.replaceState(null, '', q ? '#' + q : location.pathname + location.search);
  }

  function fillSelect(select, values) {
    const keep = select.value;
    const have = new Set([...select.options].map((o) => o.value));
    for (const [value, label] of values) {
      if (!have.has(value)) select.append(el('option', { value }, label));
    }
    select.value = keep;
  }

  /* ---------- summary ---------- */

  // GET /api/v1/summary (docs/openapi.yaml, Summary): {"score", "objects", "findings":
  // {"total", "by_severity", "by_status", "by_check"}, "vcenters": [VcenterStatus]}.
  function renderSummary(s) {
    const counts = s.findings || {};
    const sev = counts.by_severity || {};
    const st = counts.by_status || {};
    const set = (id, v) => { $(id).textContent = String(v ?? 0); };
    set('t-critical', sev.critical);
    set('t-warning', sev.warning);
    set('t-info', sev.info);
    set('t-new', st.new);
    set('t-waived', st.waived);
    set('t-unverified', st.unverified);
    const score = typeof s.score === 'number' ? s.score : null;
    $('t-score').textContent = score === null ? '–' : String(score);
    const tile = document.querySelector('[data-tile="score"]');
    tile.classList.remove('good', 'fair', 'poor');
    if (score !== null) tile.classList.add(score >= 90 ? 'good' : score >= 70 ? 'fair' : 'poor');
    const o = s.objects;
    if (o) {
      $('t-score-hint').textContent = 'of 100, over ' + (o.datastores + o.hosts + o.vms) + ' objects';
      $('t-score-hint').title = o.datastores + ' datastores, ' + o.hosts + ' hosts, ' + o.vms + ' VMs';
    }
    renderVcenters(s.vcenters || [], s.arrays || []);
  }

  // Arrays ([array NAME]) are sources polled like vCenters: the same rows, named as arrays,
  // after the vCenters; only vCenters are offered as a findings filter.
  function renderVcenters(vcenters, arrays) {
    const tbody = $('vcenters').querySelector('tbody');
    const list = vcenters.concat(arrays || []);
    tbody.replaceChildren();
    fillSelect($('f-vcenter'), vcenters.map((v) => [v.name, v.name]));
    if (!list.length) {
      tbody.append(el('tr', {}, el('td', { colspan: 6, class: 'muted' }, 'No vCenter configured.')));
      return;
    }
    for (const v of list) {
      const lp = v.last_poll; // null until this process has finished a poll of it
      let status;
      if (v.stale) status = el('span', { class: 'state stale' }, 'stale');
      else if (!v.polled_once || !lp) status = el('span', { class: 'state pending' }, 'first poll pending');
      else if (!lp.ok) status = el('span', { class: 'state stale' }, 'failed');
      else status = el('span', { class: 'state ok' }, 'ok');
      const statusCell = el('td', { 'data-label': 'Status' }, status);
      if (v.polling) statusCell.append(el('span', { class: 'muted' }, ' · polling now'));
      if (v.error) statusCell.append(el('div', { class: 'err' }, v.error));
      if (v.consecutive_failures > 0) {
        statusCell.append(el('div', { class: 'muted' }, v.consecutive_failures + ' failed in a row' +
          (v.backoff_s ? ', next try in up to ' + fmtDuration(v.backoff_s * 1000) : '')));
      }
      tbody.append(el('tr', { 'data-vcenter': v.name, 'data-stale': v.stale ? 'true' : 'false' },
        el('th', { scope: 'row' }, v.name, v.type ? el('span', { class: 'muted' }, ' (' + v.type + ' array)') : null,
          v.url ? el('div', { class: 'muted' }, v.url) : null),
        statusCell,
        el('td', { class: 'nowrap', 'data-label': 'Last poll' }, timeEl(lp && (lp.finished || lp.started))),
        el('td', { class: 'nowrap', 'data-label': 'Duration' }, fmtDuration(lp && lp.duration_ms)),
        el('td', { class: 'nowrap', 'data-label': 'Last success' }, timeEl(v.last_success)),
        el('td', { class: 'nowrap', 'data-label': 'Next poll' }, timeEl(v.next_poll))));
    }
  }

  /* ---------- findings ---------- */

  async function loadChecks() {
    if (state.checks) return;
    const doc = await api('/api/v1/checks');
    state.checks = {};
    for (const c of doc.checks || []) state.checks[c.id] = c;
    fillSelect($('f-check'), (doc.checks || []).map((c) => [c.id, c.id]));
    const fs = state.checks['datastore-free-space'];
    for (const p of (fs && fs.parameters) || []) {
      if (p.name === 'warn_free_pct') state.thresholds.warn = p.default;
      if (p.name === 'crit_free_pct') state.thresholds.crit = p.default;
    }
  }

  async function loadFindings(opts) {
    const seq = ++state.seq;
    let path;
    if (opts && opts.more) {
      path = state.next;
    } else {
      // A refresh keeps as many rows as were shown, so "show more" is not undone every 30 s.
      const limit = Math.min(1000, Math.max(PAGE, state.findings.length));
      const q = new URLSearchParams(Object.assign(filters(), { limit: String(limit) }));
      path = '/api/v1/findings?' + q.toString();
    }
    const doc = await api(path);
    if (seq !== state.seq) return; // the filters changed while this was in flight
    const rows = doc.findings || [];
    state.findings = opts && opts.more ? state.findings.concat(rows) : rows;
    state.next = doc.next || null;
    renderFindings(doc.total);
  }

  function renderFindings(total) {
    const tbody = $('findings').querySelector('tbody');
    // A refresh rebuilds the rows: put the keyboard focus back on the same finding's button.
    const focused = document.activeElement && document.activeElement.closest &&
      document.activeElement.closest('#findings tr.finding');
    const refocus = focused ? focused.dataset.fingerprint : null;
    tbody.replaceChildren();
    for (const f of state.findings) {
      const open = state.expanded.has(f.fingerprint);
      const detailId = 'd-' + f.fingerprint;
      const obj = f.object || {};
      const check = (state.checks && state.checks[f.check]) || {};
      const btn = el('button', {
        type: 'button', class: 'expand', 'aria-expanded': open ? 'true' : 'false',
        'aria-controls': detailId, 'aria-label': 'Details for ' + (obj.name || f.check),
      }, el('span', { class: 'chev', 'aria-hidden': 'true' }, '▸'));
      const row = el('tr', { class: 'finding', 'data-fingerprint': f.fingerprint, 'data-severity': f.severity },
        // data-label names the column in the narrow (one card per finding) layout.
        el('td', { class: 'btn' }, btn),
        el('td', { 'data-label': 'Severity' }, el('span', { class: 'sev ' + f.severity }, f.severity)),
        el('td', { class: 'nowrap', 'data-label': 'Check', title: f.title || check.title || '' }, f.check),
        el('td', { class: 'obj', 'data-label': 'Object' }, obj.name || obj.moref || '',
          obj.type ? el('div', { class: 'muted' }, obj.type +
            (f.host && !obj.moref ? ' on ' + (f.host.name || f.host.moref) : '')) : null),
        el('td', { class: 'nowrap', 'data-label': 'vCenter' }, f.vcenter || ''),
        el('td', { class: 'msg', 'data-label': 'Message' }, f.message || ''),
        el('td', { class: 'nowrap', 'data-label': 'Status' }, f.status || '',
          f.waiver ? el('div', { class: 'muted' }, 'until ' + (f.waiver.expires || '?')) : null,
          // Kept as last seen: the latest poll could not read what it needs (details say why).
          f.unverified ? el('div', { class: 'unverified', title: f.unverified.reason || '' },
            'unverified since ', timeEl(f.unverified.since)) : null),
        el('td', { class: 'nowrap', 'data-label': 'First seen' }, timeEl(f.first_seen)));
      const detail = el('tr', { class: 'detail', id: detailId }, el('td', { colspan: 8 }, renderDetail(f, check)));
      detail.hidden = !open;
      btn.addEventListener('click', (ev) => { ev.stopPropagation(); toggle(f.fingerprint, btn, detail); });
      row.addEventListener('click', (ev) => {
        if (!window.getSelection().toString()) toggle(f.fingerprint, btn, detail);
      });
      tbody.append(row, detail);
    }
    if (refocus) {
      const b = tbody.querySelector('tr.finding[data-fingerprint="' + CSS.escape(refocus) + '"] button.expand');
      if (b) b.focus();
    }
    const n = state.findings.length;
    const tot = typeof total === 'number' ? total : n;
    $('count').textContent = n === tot ? '(' + tot + ')' : '(showing ' + n + ' of ' + tot + ')';
    $('empty').hidden = n > 0;
    $('more').hidden = !state.next;
  }

  function toggle(fp, btn, detail) {
    const open = btn.getAttribute('aria-expanded') !== 'true';
    btn.setAttribute('aria-expanded', open ? 'true' : 'false');
    detail.hidden = !open;
    if (open) state.expanded.add(fp); else state.expanded.delete(fp);
  }

  function renderDetail(f, check) {
    const dl = el('dl');
    const item = (term, ...value) => {
      if (value.every((v) => v === null || v === undefined || v === '')) return;
      dl.append(el('dt', {}, term), el('dd', {}, ...value));
    };
    item('Check', (f.title || check.title || f.check) + ' (' + f.check + ')');
    item('Why', check.rationale);
    item('Remediation', check.remediation ? el('pre', { class: 'remediation' }, check.remediation) : null);
    item('Reference', check.reference);
    const ev = f.evidence && typeof f.evidence === 'object' ? Object.entries(f.evidence) : [];
    if (ev.length) {
      item('Evidence', el('ul', { class: 'evidence' }, ...ev.map(([k, v]) =>
        el('li', {}, el('code', {}, k), ': ', typeof v === 'object' ? JSON.stringify(v) : String(v)))));
    }
    if (f.unverified) {
      item('Not verified', 'since ', timeEl(f.unverified.since), ': ' + (f.unverified.reason || '') +
        '. The finding is kept as it was last seen until this can be read again.');
    }
    if (f.waiver) item('Waiver', (f.waiver.reason || '') + (f.waiver.expires ? ' (expires ' + f.waiver.expires + ')' : ''));
    item('Object', [f.object && f.object.type, f.object && (f.object.moref || f.object.name)].filter(Boolean).join(' ') +
      (f.detail ? ' · ' + f.detail : ''));
    if (f.host) item('Host', (f.host.name || '') + ' (' + f.host.moref + ')');
    item('Seen', timeEl(f.first_seen), ' → ', timeEl(f.last_seen),
      f.resolved_at ? el('span', {}, ', resolved ', timeEl(f.resolved_at),
        f.resolution === 'disabled' ? ' (its check was disabled)' : '') : null);
    item('Fingerprint', el('code', {}, f.fingerprint));
    return dl;
  }

  /* ---------- datastore fill chart ---------- */

  async function loadDatastores() {
    // The configured thresholds travel in the evidence of datastore-free-space findings; the
    // catalogue's defaults apply when there is none.
    try {
      const fs = await api('/api/v1/findings?check=datastore-free-space&limit=1');
      const ev = fs && fs.findings && fs.findings[0] && fs.findings[0].evidence;
      if (ev && typeof ev.warn_free_pct === 'number') state.thresholds.warn = ev.warn_free_pct;
      if (ev && typeof ev.crit_free_pct === 'number') state.thresholds.crit = ev.crit_free_pct;
    } catch (e) {
      if (e instanceof AuthError) throw e;
    }
    renderDatastores(await inventoryAll('datastores'));
  }

  function renderDatastores(list) {
    const { warn, crit } = state.thresholds;
    const chart = $('ds-chart');
    $('ds-legend').replaceChildren('Used capacity; the bar turns ',
      el('span', { class: 'key warning', 'aria-hidden': 'true' }), 'amber below ' + warn + ' % free and ',
      el('span', { class: 'key critical', 'aria-hidden': 'true' }), 'red below ' + crit + ' % free. Fullest first.');
    if (!list.length) {
      chart.replaceChildren(el('p', { class: 'muted' }, 'No datastores stored yet.'));
      return;
    }
    const multi = new Set(list.map((d) => d.vcenter)).size > 1;
    const rows = list.map((d) => {
      const cap = d.capacity, free = d.free_space;
      const known = typeof cap === 'number' && cap > 0 && typeof free === 'number';
      const freePct = known ? (free * 100) / cap : null;
      const level = !known ? 'ok' : free * 100 < crit * cap ? 'critical' : free * 100 < warn * cap ? 'warning' : 'ok';
      return { d, cap, free, freePct, level, label: d.name + (multi && d.vcenter ? ' (' + d.vcenter + ')' : '') };
    }).sort((a, b) => (a.freePct ?? 101) - (b.freePct ?? 101) || a.label.localeCompare(b.label));

    // One row per datastore: name, a bar (CSS, so it reflows in a narrow window) with the two
    // thresholds marked, and the figures. role="meter" lets a screen reader read the fill.
    const ol = el('ol', { class: 'bars' });
    for (const r of rows) {
      const usedPct = r.freePct === null ? 0 : Math.max(0, Math.min(100, 100 - r.freePct));
      const figures = r.freePct === null ? 'capacity unknown' :
        fmtBytes(r.cap - r.free) + ' of ' + fmtBytes(r.cap) + ' used, ' + r.freePct.toFixed(1) + ' % free';
      const used = el('div', { class: 'used ' + r.level });
      used.style.width = usedPct.toFixed(2) + '%';
      const track = el('div', {
        class: 'track', role: 'meter', 'aria-valuemin': 0, 'aria-valuemax': 100,
        'aria-valuenow': usedPct.toFixed(1), 'aria-label': r.label + ' used',
        'aria-valuetext': figures,
      }, used);
      for (const t of [warn, crit]) {
        const mark = el('div', { class: 'mark', 'aria-hidden': 'true' });
        mark.style.left = (100 - t) + '%';
        track.append(mark);
      }
      // The name opens the datastore's capacity chart (its history and where it is heading).
      const open = el('button', { type: 'button', class: 'link open', 'aria-controls': 'ds-capacity',
        'aria-expanded': String(state.openDatastore === r.d.vcenter + '/' + r.d.moref),
        title: 'Capacity history and runway of ' + r.label }, r.label);
      open.addEventListener('click', () => openDatastore(r.d, r.label));
      const li = el('li', { 'data-datastore': r.d.name, 'data-level': r.level, title: r.label + ': ' + figures },
        el('span', { class: 'name' }, open, r.d.accessible === false ? el('span', { class: 'err' }, ' inaccessible') : null),
        track,
        el('span', { class: 'figures' }, figures, runwayNote(r.d.runway)));
      // The array pools behind it, when a configured array holds its LUNs: a thin LUN fills
      // its pool whatever the datastore shows. Opened on demand.
      const pools = r.d.pools || [];
      if (pools.length) {
        const items = pools.map((p) => {
          const known = typeof p.size_total === 'number' && p.size_total > 0 && typeof p.size_free === 'number';
          return el('div', { class: 'pool', 'data-pool': p.array + '/' + (p.name || p.id) }, p.array + '/' + (p.name || p.id) + ': ' +
            (known ? ((p.size_free * 100) / p.size_total).toFixed(1) + ' % free (' + fmtBytes(p.size_free) +
              ' of ' + fmtBytes(p.size_total) + ')' : 'size unknown'));
        });
        li.append(el('details', { class: 'pools' },
          el('summary', {}, pools.length === 1 ? 'on array pool ' + pools[0].array + '/' + (pools[0].name || pools[0].id)
            : 'on ' + pools.length + ' array pools'),
          ...items));
      }
      ol.append(li);
    }
    chart.replaceChildren(ol);
    if (state.openDatastore) {
      const d = list.find((x) => x.vcenter + '/' + x.moref === state.openDatastore);
      if (d) loadCapacity(d).catch(() => {});
    }
  }

  /* " · 12 days to critical" when the critical line is in sight within a quarter. */
  function runwayNote(rw) {
    if (!rw || typeof rw.days_to_critical !== 'number' || rw.days_to_critical > 90) return null;
    return el('span', { class: 'runway' }, ' · ' + rw.days_to_critical + ' day' +
      (rw.days_to_critical === 1 ? '' : 's') + ' to critical');
  }

  function runwayText(rw) {
    if (!rw) return '';
    const days = (n, what) => (typeof n === 'number' ? n + ' day' + (n === 1 ? '' : 's') + ' to ' + what : null);
    const parts = [days(rw.days_to_warning, 'warning'), days(rw.days_to_critical, 'critical')].filter(Boolean);
    let t = parts.length ? parts.join(', ') : '';
    if (typeof rw.growth_gb_per_day === 'number') {
      t += (t ? '; ' : '') + (rw.growth_gb_per_day >= 0 ? 'growing ' : 'shrinking ') +
        fmtBytes(Math.abs(rw.growth_gb_per_day) * 1073741824) + ' a day';
    }
    t += (t ? ' ' : '') + 'over ' + rw.history_days + ' days of history';
    if (rw.reason) t += ' (' + rw.reason + ')';
    return t;
  }

  async function openDatastore(d, label) {
    state.openDatastore = d.vcenter + '/' + d.moref;
    state.openLabel = label;
    for (const b of document.querySelectorAll('#ds-chart button.open')) {
      b.setAttribute('aria-expanded', String(b.textContent === label));
    }
    try {
      await loadCapacity(d);
      $('ds-capacity').scrollIntoView({ block: 'nearest' });
    } catch (e) {
      if (!(e instanceof AuthError)) setBanner(e.message, 'error');
    }
  }

  // GET /api/v1/inventory/datastores/history (docs/openapi.yaml, CapacitySeries).
  async function loadCapacity(d) {
    const s = await api('/api/v1/inventory/datastores/history?vcenter=' + encodeURIComponent(d.vcenter) +
      '&moref=' + encodeURIComponent(d.moref));
    capacityChart($('ds-capacity'), s, state.openLabel || d.name);
  }

  /* ---------- array pools ---------- */

  async function loadPools() {
    renderPools(await inventoryAll('pools'));
  }

  // One row per pool, least free first, with the datastores it backs; levels as the
  // pool-free-space check's defaults (30 / 10 / 5 % free).
  function renderPools(list) {
    const tbody = $('pools').querySelector('tbody');
    tbody.replaceChildren();
    if (!list.length) {
      tbody.append(el('tr', {}, el('td', { colspan: 5, class: 'muted' }, 'No array configured, or none polled yet.')));
      return;
    }
    const rows = list.map((p) => {
      const known = typeof p.size_total === 'number' && p.size_total > 0 && typeof p.size_free === 'number';
      return { p, freePct: known ? (p.size_free * 100) / p.size_total : null };
    }).sort((a, b) => (a.freePct ?? 101) - (b.freePct ?? 101));
    for (const { p, freePct } of rows) {
      const level = freePct === null ? 'ok' : freePct < 10 ? 'critical' : freePct < 30 ? 'warning' : 'ok';
      const sub = typeof p.size_subscribed === 'number' && p.size_total > 0 ?
        Math.round((p.size_subscribed * 100) / p.size_total) + ' %' : '–';
      const dss = (p.datastores || []).map((d) => d.name || d.moref);
      tbody.append(el('tr', { 'data-pool': p.array + '/' + (p.name || p.id), 'data-level': level },
        el('th', { scope: 'row' }, p.name || p.id, el('div', { class: 'muted' }, p.array)),
        el('td', { 'data-label': 'Free', class: 'nowrap' }, el('span', { class: 'state ' + (level === 'ok' ? 'ok' : 'stale') },
          freePct === null ? 'unknown' : freePct.toFixed(1) + ' %'),
          freePct === null ? null : el('div', { class: 'muted' }, fmtBytes(p.size_free) + ' of ' + fmtBytes(p.size_total))),
        el('td', { 'data-label': 'Subscribed', class: 'nowrap' }, sub,
          el('div', { class: 'muted' }, (p.thin_lun_count || 0) + ' thin of ' + (p.lun_count || 0) + ' LUNs')),
        el('td', { 'data-label': 'Alerts at', class: 'nowrap' },
          typeof p.alert_threshold === 'number' ? p.alert_threshold + ' % used' : '–'),
        el('td', { 'data-label': 'Datastores' }, dss.length ? dss.join(', ') : el('span', { class: 'muted' }, 'none of a configured vCenter'))));
    }
  }

  /* ---------- history charts (SVG, drawn here: no chart library) ---------- */

  const SVG_NS = 'http://www.w3.org/2000/svg';

  function svg(tag, attrs, ...children) {
    const node = document.createElementNS(SVG_NS, tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === 'text') node.textContent = v; else node.setAttribute(k, String(v));
    }
    for (const c of children) if (c) node.append(c);
    return node;
  }

  /* A line chart of one value per day: series [{name, cls, values: [number|null per day]}],
   * dates the x axis. Each point is a circle carrying data-series, data-date and data-value,
   * with a <title> a pointer or a screen reader reads. */
  function lineChart(fig, dates, series, opts) {
    const W = 320, H = 140, L = 34, R = 6, T = 8, B = 20;
    const all = series.flatMap((s) => s.values.filter((v) => typeof v === 'number'));
    const yMax = opts.max !== undefined ? opts.max : Math.max(1, ...all);
    const x = (i) => L + (dates.length > 1 ? (i * (W - L - R)) / (dates.length - 1) : 0);
    const y = (v) => T + (H - T - B) * (1 - v / yMax);
    const fmt = opts.format || String;
    const chart = svg('svg', { viewBox: '0 0 ' + W + ' ' + H, role: 'img',
      'aria-label': opts.label + ': ' + series.map((s) => s.name + ' ' +
        fmt(s.values[s.values.length - 1] ?? '–') + ' today').join(', ') });
    chart.append(svg('line', { class: 'axis', x1: L, y1: H - B, x2: W - R, y2: H - B }),
      svg('line', { class: 'axis', x1: L, y1: T, x2: L, y2: H - B }),
      svg('text', { class: 'tick', x: L - 4, y: T + 8, 'text-anchor': 'end', text: fmt(yMax) }),
      svg('text', { class: 'tick', x: L - 4, y: H - B, 'text-anchor': 'end', text: fmt(0) }),
      svg('text', { class: 'tick', x: L, y: H - 4, text: dates[0].slice(5) }),
      svg('text', { class: 'tick', x: W - R, y: H - 4, 'text-anchor': 'end', text: dates[dates.length - 1].slice(5) }));
    for (const s of series) {
      let d = '';
      s.values.forEach((v, i) => {
        if (typeof v !== 'number') return;
        d += (d && typeof s.values[i - 1] === 'number' ? 'L' : 'M') + x(i).toFixed(1) + ' ' + y(v).toFixed(1);
      });
      const g = svg('g', { class: 's-' + s.cls, 'data-series': s.name });
      if (d) g.append(svg('path', { class: 'line', d }));
      s.values.forEach((v, i) => {
        if (typeof v !== 'number') return;
        g.append(svg('circle', { class: 'dot', cx: x(i).toFixed(1), cy: y(v).toFixed(1), r: 2.5,
          'data-series': s.name, 'data-date': dates[i], 'data-value': v },
        svg('title', { text: s.name + ', ' + dates[i] + ': ' + fmt(v) })));
      });
      chart.append(g);
    }
    const legend = el('ul', { class: 'legend' }, ...series.map((s) =>
      el('li', {}, el('span', { class: 'key s-' + s.cls, 'aria-hidden': 'true' }), s.name)));
    fig.replaceChildren(fig.querySelector('figcaption'), chart, legend);
  }

  /* One datastore's free space over time: the recorded points (a line), the projection at the
   * measured rate (dashed), and the warning and critical thresholds (horizontal lines, each with
   * data-threshold and data-value, its free space in bytes). */
  function capacityChart(fig, s, label) {
    const W = 640, H = 220, L = 56, R = 8, T = 10, B = 22;
    const pts = (s.points || []).filter((p) => typeof p.free_space === 'number')
      .map((p) => ({ t: toDate(p.t).getTime(), v: p.free_space }));
    const proj = (s.projection || []).map((p) => ({ t: toDate(p.t).getTime(), v: p.free_space }));
    const last = (s.points || [])[(s.points || []).length - 1] || {};
    const thr = s.thresholds || {};
    const caption = el('figcaption', {}, 'Free space of ' + label);
    fig.hidden = false;
    if (!pts.length) {
      fig.replaceChildren(caption, el('p', { class: 'muted' }, 'No capacity history recorded yet.'));
      return;
    }
    const all = pts.concat(proj);
    const t0 = Math.min(...all.map((p) => p.t)), t1 = Math.max(...all.map((p) => p.t), t0 + 86400000);
    const yMax = Math.max(1, last.capacity || 0, ...all.map((p) => p.v));
    const x = (t) => L + ((t - t0) * (W - L - R)) / (t1 - t0);
    const y = (v) => T + (H - T - B) * (1 - v / yMax);
    const path = (list) => list.map((p, i) => (i ? 'L' : 'M') + x(p.t).toFixed(1) + ' ' + y(p.v).toFixed(1)).join('');
    const day = (t) => new Date(t).toISOString().slice(0, 10);
    const chart = svg('svg', { viewBox: '0 0 ' + W + ' ' + H, role: 'img',
      'aria-label': 'Free space of ' + label + ': ' + fmtBytes(pts[pts.length - 1].v) + ' now; ' + runwayText(s.runway) });
    chart.append(svg('line', { class: 'axis', x1: L, y1: H - B, x2: W - R, y2: H - B }),
      svg('line', { class: 'axis', x1: L, y1: T, x2: L, y2: H - B }),
      svg('text', { class: 'tick', x: L - 4, y: T + 8, 'text-anchor': 'end', text: fmtBytes(yMax) }),
      svg('text', { class: 'tick', x: L - 4, y: H - B, 'text-anchor': 'end', text: '0' }),
      svg('text', { class: 'tick', x: L, y: H - 4, text: day(t0) }),
      svg('text', { class: 'tick', x: W - R, y: H - 4, 'text-anchor': 'end', text: day(t1) }));
    for (const [name, pct] of [['warning', s.warn_free_pct], ['critical', s.crit_free_pct]]) {
      const v = thr[name + '_bytes'];
      if (typeof v !== 'number') continue;
      chart.append(svg('g', { class: 's-' + name },
        svg('line', { class: 'threshold', 'data-threshold': name, 'data-value': v,
          x1: L, x2: W - R, y1: y(v).toFixed(1), y2: y(v).toFixed(1) },
        svg('title', { text: name + ' below ' + pct + ' % free (' + fmtBytes(v) + ')' })),
        svg('text', { class: 'tick', x: W - R - 2, y: (y(v) - 3).toFixed(1), 'text-anchor': 'end',
          text: name + ' ' + pct + ' %' })));
    }
    chart.append(svg('g', { class: 's-history', 'data-series': 'history' },
      svg('path', { class: 'line', d: path(pts) })));
    if (proj.length > 1) {
      chart.append(svg('g', { class: 's-projection', 'data-series': 'projection' },
        svg('path', { class: 'line', d: path(proj) })));
    }
    const legend = el('ul', { class: 'legend' },
      el('li', {}, el('span', { class: 'key s-history', 'aria-hidden': 'true' }), 'free space'),
      proj.length > 1 ? el('li', {}, el('span', { class: 'key s-projection', 'aria-hidden': 'true' }), 'projection') : null);
    fig.replaceChildren(caption, chart, legend, el('p', { class: 'runway muted' }, runwayText(s.runway)));
  }

  // GET /api/v1/history (docs/openapi.yaml, History): one entry per day, oldest first.
  async function loadHistory() {
    const h = await api('/api/v1/history?days=30');
    const days = h.days || [];
    if (!days.length) return;
    const dates = days.map((d) => d.date);
    lineChart($('hist-score'), dates, [{ name: 'score', cls: 'score', values: days.map((d) => d.score) }],
      { label: 'Score', max: 100 });
    lineChart($('hist-findings'), dates, ['critical', 'warning', 'info'].map((sev) =>
      ({ name: sev, cls: sev, values: days.map((d) => (d.findings || {})[sev] ?? 0) })),
    { label: 'Open findings' });
    // Full reads only: an incremental round costs milliseconds and says nothing of how long
    // reading the whole estate takes (a day of rounds alone draws no point).
    const byDate = (list) => Object.fromEntries(list.filter((p) => p.full && p.full.polls)
      .map((p) => [p.date, p.full.mean_ms]));
    const polls = (h.polls || []).map((vc, i) => {
      const m = byDate(vc.days || []);
      return { name: vc.vcenter, cls: 'vc' + (i % 4), values: dates.map((dt) => m[dt] ?? null) };
    });
    if (polls.length) {
      lineChart($('hist-polls'), dates, polls, { label: 'Mean full read duration', format: (v) => fmtDuration(v) });
    } else {
      $('hist-polls').replaceChildren($('hist-polls').querySelector('figcaption'),
        el('p', { class: 'muted' }, 'No polls in these days.'));
    }
  }

  /* ---------- refresh loop ---------- */

  async function refresh() {
    $('refresh').disabled = true;
    const jobs = [
      api('/api/v1/summary').then(renderSummary),
      loadChecks().then(() => loadFindings()),
      loadDatastores(),
      loadPools(),
      loadHistory(),
    ];
    const results = await Promise.allSettled(jobs);
    $('refresh').disabled = false;
    const failed = results.filter((r) => r.status === 'rejected').map((r) => r.reason);
    if (failed.some((e) => e instanceof AuthError)) return; // the token form says it
    if (failed.length) {
      setBanner('Could not load everything: ' + failed.map((e) => e.message).join('; '), 'error');
    } else if ($('status').classList.contains('error')) {
      setBanner('');
    }
    $('updated').textContent = 'updated ' + new Date().toLocaleTimeString();
    document.body.dataset.loaded = String(Number(document.body.dataset.loaded || 0) + 1);
  }

  function schedule() {
    clearInterval(state.timer);
    state.timer = setInterval(() => { if (!document.hidden) refresh(); }, REFRESH_MS);
  }

  async function pollNow() {
    const btn = $('poll-now');
    btn.disabled = true;
    try {
      const doc = await api('/api/v1/polls', { method: 'POST' });
      const names = (doc && doc.queued) || [];
      setBanner('Poll queued' + (names.length ? ' for ' + names.join(', ') : '') +
        '; the page refreshes when it is done.', 'ok');
      setTimeout(refresh, 5000);
    } catch (e) {
      if (!(e instanceof AuthError)) setBanner(e.message, 'error');
    } finally {
      btn.disabled = false;
    }
  }

  function refilter() {
    writeHash();
    state.findings = [];
    loadFindings().catch((e) => { if (!(e instanceof AuthError)) setBanner(e.message, 'error'); });
  }

  function init() {
    readHash();
    let debounce = null;
    $('filters').addEventListener('change', (ev) => { if (ev.target.id !== 'f-object') refilter(); });
    $('filters').addEventListener('submit', (ev) => { ev.preventDefault(); refilter(); });
    $('f-object').addEventListener('input', () => { clearTimeout(debounce); debounce = setTimeout(refilter, 250); });
    $('filters').addEventListener('reset', () => setTimeout(refilter, 0));
    $('more').addEventListener('click', () => loadFindings({ more: true }).catch((e) => setBanner(e.message, 'error')));
    $('refresh').addEventListener('click', () => { refresh(); schedule(); });
    $('poll-now').addEventListener('click', pollNow);
    $('token-form').addEventListener('submit', useToken);
    $('token-forget').addEventListener('click', forgetToken);
    document.addEventListener('visibilitychange', () => { if (!document.hidden) refresh(); });
    window.addEventListener('hashchange', () => { readHash(); refilter(); });
    refresh();
    schedule();
  }

  init();
})();
