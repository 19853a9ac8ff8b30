/* vslint dashboard: reads the JSON API (/api/v1/...) and renders the summary, the findings with
 * their filters, the per-vCenter poll status and the datastore fill chart. No framework and no
 * external resources: the page is served by vslint itself, often on an isolated network. */
'use strict';

(function () {
  const REFRESH_MS = 30000;
  const PAGE = 100;
  const TOKEN_KEY = 'vslint-token';
  const FILTERS = ['severity', 'check', 'vcenter', 'status', 'unverified', 'since', 'object', 'host',
    'sort', 'view', 'resolution'];
  const GROUP_ROWS = 50;     // rows shown in an opened group before "show all"
  const GROUPED_MAX = 3000;  // findings read to group (3 pages of 1000)
  const DS_SHOWN = 15;       // datastores shown before "show all"
  const DAY_MS = 86400000;

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
    summary: null,         // the last /api/v1/summary
    total: 0,              // the findings matching the filters (the API's total)
    openGroups: new Set(), // check ids whose group is open; kept across refreshes
    openGaps: new Set(),   // gaps banner lines whose hosts are shown (vCenter, what, reason)
    allGroups: new Set(),  // check ids whose group shows every row
    shown: '',             // what the findings table was last drawn from: unchanged, not redrawn
    dsAll: false,          // every datastore shown, not only the first DS_SHOWN
    pollFollow: null,      // {before: {name: finished}, until}: a poll asked for, followed to its end
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
      const e = new Error(path.split('?')[0] + ': ' + (err && err.message ? err.message : 'HTTP ' + resp.status));
      e.status = resp.status;
      throw e;
    }
    return body;
  }

  // A text answer (the plan) with the token, saved as a file: a link cannot carry the token.
  async function download(path, name) {
    const t = token();
    const resp = await fetch(path, { headers: t ? { Authorization: 'Bearer ' + t } : {}, cache: 'no-cache' });
    if (resp.status === 401) {
      showTokenForm(t ? 'The token was rejected.' : '');
      throw new AuthError('this server needs a bearer token');
    }
    if (!resp.ok) throw new Error(path.split('?')[0] + ': HTTP ' + resp.status);
    const url = URL.createObjectURL(await resp.blob());
    const a = el('a', { href: url, download: name });
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10000);
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

  // "3 min ago", the absolute time on hover: what a person reading at 8 am asks first.
  function timeEl(v) {
    const d = toDate(v);
    if (!d) return document.createTextNode('–');
    return el('time', { datetime: d.toISOString(), title: fmtTime(v) }, fmtAgo(v));
  }

  function isoMinute(ms) {
    return new Date(Math.floor(ms / 60000) * 60000).toISOString().replace(/\.\d+Z$/, 'Z');
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
    setBanner(message || 'Enter the bearer token to continue: the contents of the file that ' +
      'token_file= names in [server] of vslint.conf (scripts/demo.sh writes .demo/token).', 'error');
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

  // The score's band: red with any open critical whatever the number, so a large estate's
  // criticals are never shown as "fair"; amber with warnings or below 90; green otherwise.
  function scoreBand(score, sev) {
    if (score === null) return null;
    if ((sev.critical || 0) > 0 || score < 70) return 'poor';
    if ((sev.warning || 0) > 0 || score < 90) return 'fair';
    return 'good';
  }

  // GET /api/v1/summary (docs/openapi.yaml, Summary).
  function renderSummary(s) {
    state.summary = s;
    const counts = s.findings || {};
    const sev = counts.by_severity || {};
    const st = counts.by_status || {};
    const set = (id, v) => {
      $(id).textContent = String(v ?? 0);
      // Zero is grey: only what needs attention is coloured.
      const tile = $(id).closest('.tile');
      if (tile) tile.classList.toggle('zero', !v);
    };
    set('t-critical', sev.critical);
    set('t-warning', sev.warning);
    set('t-info', sev.info);
    set('t-new', st.new);
    set('t-waived', st.waived);
    set('t-unverified', st.unverified);
    const ch = s.changes || {};
    const day = ch.last_24h || {};
    set('t-new24', day.new);
    set('t-resolved24', day.resolved);
    const dig = ch.since_digest;
    $('t-new24-hint').textContent = dig ? 'since the last digest: ' + dig.new : 'in the last 24 h';
    $('t-resolved24-hint').textContent = dig ? 'since the last digest: ' + dig.resolved : 'fixed in the last 24 h';
    const score = typeof s.score === 'number' ? s.score : null;
    $('t-score').textContent = score === null ? '–' : String(score);
    const tile = document.querySelector('[data-tile="score"]');
    tile.classList.remove('good', 'fair', 'poor');
    const band = scoreBand(score, sev);
    if (band) tile.classList.add(band);
    tile.dataset.band = band || '';
    $('t-score-hint').textContent = band === 'poor' && sev.critical ? 'red: ' + sev.critical + ' critical open' :
      band === 'fair' && sev.warning ? 'amber: warnings open' : 'of 100';
    const poll = $('poll-now');
    if (s.poll_now === false) {
      // No token configured: the server refuses every write, so the button cannot work.
      poll.disabled = true;
      poll.dataset.why = 'no-token';
      poll.title = 'Off: this server has no token (token_file= in [server] of its configuration); it polls on its schedule';
    }
    renderAffected(s.affected || {}, s.objects || {});
    fillCheckCounts(counts.by_check || {});
    renderVcenters(s.vcenters || [], s.arrays || []);
    renderFreshness(s.vcenters || [], s.arrays || []);
    renderGaps(s.vcenters || []);
  }

  // What each vCenter's last poll could not read, one line per kind and reason with the hosts
  // it concerns on demand: a refusal names the privilege the account lacks, which is the fix.
  const GAP_NAMES = { esxcli: 'esxcli', 'iscsi-bindings': 'iSCSI port bindings',
    options: 'advanced options', alarms: 'alarms' };
  function renderGaps(vcenters) {
    const lines = [];
    for (const v of vcenters) {
      for (const g of v.gaps || []) {
        const what = GAP_NAMES[g.what] || g.what;
        // "other": the errors beyond the 20 the server lists per vCenter, its error says how many.
        const why = g.privilege ? what + ' not permitted (needs ' + g.privilege + ')' :
          g.what === 'other' ? g.error : what + ' not read: ' + g.error;
        // A stale vCenter's gaps are those of its last successful read: say when that was.
        const asOf = v.stale && v.last_success ? ' (as of ' + fmtTime(v.last_success) + ')' : '';
        const line = el('div', { 'data-vcenter': v.name, 'data-gap': g.what },
          el('strong', {}, v.name), ': ',
          (g.hosts ? g.hosts + (g.hosts === 1 ? ' host' : ' hosts') + ': ' + why : why) + asOf);
        if (g.hosts) {
          const more = g.hosts - g.host_names.length;
          const key = JSON.stringify([v.name, g.what, g.privilege || g.error]);
          const d = el('details', { class: 'gap-hosts' }, el('summary', {}, 'which'),
            g.host_names.join(', ') + (more > 0 ? ' and ' + more + ' more' : ''));
          // Kept open across the 30 s refresh, as the findings' groups are.
          d.open = state.openGaps.has(key);
          d.addEventListener('toggle', () => {
            if (d.open) state.openGaps.add(key); else state.openGaps.delete(key);
          });
          line.append(' ', d);
        }
        if (g.privilege) line.title = g.error;
        lines.push(line);
      }
    }
    const banner = $('gaps');
    banner.replaceChildren(...lines);
    banner.hidden = !lines.length;
  }

  // "12 of 40 datastores": per kind, the objects with an open finding.
  function renderAffected(aff) {
    const names = { datastore: ['datastore', 'datastores'], host: ['host', 'hosts'], vm: ['VM', 'VMs'] };
    const ul = el('ul', { class: 'affected' });
    for (const k of ['datastore', 'host', 'vm']) {
      const a = aff[k];
      if (!a) continue;
      ul.append(el('li', { 'data-kind': k, class: a.affected ? 'hit' : '' },
        el('strong', {}, String(a.affected)), ' of ' + a.of + ' ' + names[k][a.of === 1 ? 0 : 1]));
    }
    const others = Object.entries(aff).filter(([k, a]) => !names[k] && a.affected);
    for (const [k, a] of others) {
      ul.append(el('li', { 'data-kind': k, class: 'hit' }, el('strong', {}, String(a.affected)),
        ' ' + k.replace(/_/g, ' ') + (a.affected === 1 ? '' : 's')));
    }
    $('t-affected').replaceChildren(ul);
  }

  // The check filter lists titles with their open counts, most first.
  function fillCheckCounts(byCheck) {
    const select = $('f-check');
    if (!state.checks) return; // loadChecks() fills it when the catalogue is in
    const keep = select.value;
    const total = (id) => Object.values(byCheck[id] || {}).reduce((a, b) => a + b, 0);
    const ids = Object.keys(state.checks || {}).sort((a, b) => total(b) - total(a) ||
      title(a).localeCompare(title(b)));
    select.replaceChildren(el('option', { value: '' }, 'all'),
      ...ids.map((id) => el('option', { value: id }, title(id) + ' (' + total(id) + ')')));
    if (keep && !ids.includes(keep)) select.append(el('option', { value: keep }, keep));
    select.value = keep;
  }

  function title(id) {
    const c = state.checks && state.checks[id];
    return (c && c.title) || id;
  }

  // One line per vCenter or array whose data is not fresh, across the page; the tiles dim,
  // because what they count is that old.
  function renderFreshness(vcenters, arrays) {
    const lines = [];
    let newest = 0;
    for (const v of vcenters.concat(arrays)) {
      const ok = toDate(v.last_success);
      if (ok) newest = Math.max(newest, ok.getTime());
      const lp = v.last_poll;
      const failing = lp && !lp.ok;
      if (!v.stale && !v.stalled && !failing) continue;
      const age = ok ? 'data ' + fmtAgo(v.last_success).replace(/ ago$/, '') + ' old' : 'no data yet';
      const why = v.stalled ? 'stalled: no answer for ' + fmtDuration((v.quiet_s || 0) * 1000) :
        v.error || (failing ? 'the last poll failed' : 'stale');
      lines.push(el('div', { 'data-vcenter': v.name }, el('strong', {}, v.name), ': ' + age + ': ' + why));
    }
    const banner = $('fresh');
    banner.replaceChildren(...lines);
    banner.hidden = !lines.length;
    $('tiles').classList.toggle('dim', lines.length > 0);
    const upd = $('updated');
    if (newest) {
      upd.replaceChildren('data from ', timeEl(newest));
    } else {
      upd.textContent = 'no poll finished yet';
    }
    upd.title = 'page read ' + fmtTime(Date.now());
  }

  // Arrays ([array NAME]) are sources polled like vCenters: the same rows, named as arrays,
  // after the vCenters; only vCenters are offered as a findings filter.
  function renderVcenters(vcenters, arrays) {
    const tbody = $('vcenters').querySelector('tbody');
    const list = vcenters.concat(arrays || []);
    tbody.replaceChildren();
    fillSelect($('f-vcenter'), vcenters.map((v) => [v.name, v.name]));
    document.body.classList.toggle('one-vcenter', vcenters.length <= 1);
    if (!list.length) {
      tbody.append(el('tr', {}, el('td', { colspan: 6, class: 'muted' }, 'No vCenter configured.')));
      return;
    }
    for (const v of list) {
      const lp = v.last_poll; // null until this process has finished a poll of it
      let status;
      if (v.stalled) status = el('span', { class: 'state stale' }, 'stalled');
      else if (v.stale) status = el('span', { class: 'state stale' }, 'stale');
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
      // Incremental mode waits on the vCenter's changes: there is no next poll time to show,
      // and a time in the past would read as a missed poll.
      const next = v.mode === 'incremental' && !v.stale ? el('span', { class: 'muted' }, 'follows changes') :
        timeEl(v.next_poll);
      const last = lp ? el('span', {}, timeEl(lp.finished || lp.started), lp.ok ? null : el('span', { class: 'err' }, ' failed')) :
        timeEl(null);
      tbody.append(el('tr', { 'data-vcenter': v.name, 'data-stale': v.stale ? 'true' : 'false' },
        el('th', { scope: 'row' }, v.name, v.type ? el('span', { class: 'muted' }, ' (' + v.type + ' array)') : null,
          v.url ? el('div', { class: 'muted url' }, v.url) : null),
        statusCell,
        el('td', { class: 'nowrap', 'data-label': 'Last poll' }, last),
        el('td', { class: 'nowrap', 'data-label': 'Duration' }, fmtDuration(lp && lp.duration_ms)),
        el('td', { class: 'nowrap', 'data-label': 'Last success' }, timeEl(v.last_success)),
        el('td', { class: 'nowrap', 'data-label': 'Next poll' }, next)));
    }
  }

  /* ---------- findings ---------- */

  async function loadChecks() {
    if (state.checks) return;
    const doc = await api('/api/v1/checks');
    state.checks = {};
    for (const c of doc.checks || []) state.checks[c.id] = c;
    fillCheckCounts((state.summary && state.summary.findings && state.summary.findings.by_check) || {});
    const fs = state.checks['datastore-free-space'];
    for (const p of (fs && fs.parameters) || []) {
      if (p.name === 'warn_free_pct') state.thresholds.warn = p.default;
      if (p.name === 'crit_free_pct') state.thresholds.crit = p.default;
    }
  }

  // The filters as API parameters: the page's own "since" values become UTC times (to the
  // minute, so a refresh asks the same URL and the server's cache answers).
  function apiParams() {
    const f = filters();
    delete f.view;
    // resolution (fixed or disabled) is a resolved finding's: kept only with status=resolved.
    if (f.status !== 'resolved') delete f.resolution;
    if (f.since === '24h') f.since = isoMinute(Date.now() - DAY_MS);
    else if (f.since === 'digest') {
      const d = state.summary && state.summary.changes && state.summary.changes.since_digest;
      if (d) f.since = d.from; else delete f.since;
    }
    return f;
  }

  const grouped = () => ($('f-view').value || 'grouped') === 'grouped';

  async function loadFindings(opts) {
    const seq = ++state.seq;
    let rows, total, next;
    if (opts && opts.more) {
      const doc = await api(state.next);
      if (seq !== state.seq) return;
      rows = state.findings.concat(doc.findings || []);
      total = doc.total;
      next = doc.next || null;
    } else if (grouped()) {
      // Groups need every matching finding (up to GROUPED_MAX): pages of 1000.
      let path = '/api/v1/findings?' + new URLSearchParams(Object.assign(apiParams(), { limit: '1000' }));
      rows = [];
      for (let n = 0; path && rows.length < GROUPED_MAX; n++) {
        const doc = await api(path);
        if (seq !== state.seq) return;
        rows.push(...(doc.findings || []));
        total = doc.total;
        path = doc.next || null;
      }
      next = null;
    } else {
      // A refresh keeps as many rows as were shown, so "show more" is not undone every 30 s.
      const limit = Math.min(1000, Math.max(PAGE, state.findings.length));
      const doc = await api('/api/v1/findings?' + new URLSearchParams(Object.assign(apiParams(), { limit: String(limit) })));
      if (seq !== state.seq) return;
      rows = doc.findings || [];
      total = doc.total;
      next = doc.next || null;
    }
    state.findings = rows;
    state.next = next;
    state.total = typeof total === 'number' ? total : rows.length;
    renderFindings();
  }

  // The message without the object's name in front: the Object column says it already.
  function shortMessage(f) {
    const m = f.message || '';
    const name = (f.object && f.object.name) || '';
    if (name && m.startsWith(name) && m.length > name.length + 2) {
      const rest = m.slice(name.length).replace(/^[:,]?\s+/, '');
      return rest.charAt(0).toUpperCase() + rest.slice(1);
    }
    return m;
  }

  const SEV_RANK = { critical: 0, warning: 1, info: 2 };

  // The findings by check: worst severity first, then the most findings.
  function groups(list) {
    const by = new Map();
    for (const f of list) {
      let g = by.get(f.check);
      if (!g) by.set(f.check, g = { check: f.check, title: f.title || title(f.check), rows: [], worst: f.severity, objects: new Set() });
      g.rows.push(f);
      if (SEV_RANK[f.severity] < SEV_RANK[g.worst]) g.worst = f.severity;
      g.objects.add(f.vcenter + '/' + ((f.object && (f.object.moref || f.object.name)) || '') + '/' + ((f.host && f.host.moref) || ''));
    }
    const out = [...by.values()];
    if (!($('f-sort').value || '').replace('-', '').match(/^(first_seen|last_seen|object)$/)) {
      out.sort((a, b) => SEV_RANK[a.worst] - SEV_RANK[b.worst] || b.rows.length - a.rows.length ||
        a.title.localeCompare(b.title));
      if ($('f-sort').value === 'check') out.sort((a, b) => (a.check < b.check ? -1 : a.check > b.check ? 1 : 0));
      if ($('f-sort').value === '-check') out.sort((a, b) => (a.check < b.check ? 1 : a.check > b.check ? -1 : 0));
    }
    return out;
  }

  // Rows are kept by key (a fingerprint, or "g:" and a check id) and redrawn only when what
  // they show changed: an open detail, the focus and a selection inside it survive a refresh.
  const rowCache = new Map();

  function keyed(key, sig, make) {
    const have = rowCache.get(key);
    if (have && have.sig === sig) return have.nodes;
    const nodes = make();
    rowCache.set(key, { sig, nodes });
    return nodes;
  }

  function renderFindings() {
    const sig = JSON.stringify([grouped(), state.findings, [...state.openGroups], [...state.allGroups], state.total]);
    if (sig === state.shown) return; // nothing changed: leave the table as the user has it
    state.shown = sig;
    const tbody = $('findings').querySelector('tbody');
    const nodes = [];
    const used = new Set();
    const findingNodes = (f) => {
      used.add(f.fingerprint);
      return keyed(f.fingerprint, JSON.stringify(f), () => findingRow(f));
    };
    $('findings').classList.toggle('grouped', grouped());
    if (grouped()) {
      for (const g of groups(state.findings)) {
        const open = state.openGroups.has(g.check);
        const gsig = JSON.stringify([g.rows.length, g.worst, g.objects.size, open, g.title]);
        used.add('g:' + g.check);
        nodes.push(...keyed('g:' + g.check, gsig, () => groupRow(g, open)));
        if (!open) continue;
        const all = state.allGroups.has(g.check) || g.rows.length <= GROUP_ROWS;
        for (const f of all ? g.rows : g.rows.slice(0, GROUP_ROWS)) nodes.push(...findingNodes(f));
        if (!all) {
          const more = el('button', { type: 'button', class: 'link' }, 'Show all ' + g.rows.length);
          more.addEventListener('click', () => { state.allGroups.add(g.check); renderFindings(); });
          nodes.push(el('tr', { class: 'group-more' }, el('td', { colspan: 8 }, more)));
        }
      }
    } else {
      for (const f of state.findings) nodes.push(...findingNodes(f));
    }
    for (const k of [...rowCache.keys()]) if (!used.has(k)) rowCache.delete(k);
    tbody.replaceChildren(...nodes);
    const n = state.findings.length;
    const tot = state.total;
    const what = grouped() ? ' in ' + groups(state.findings).length + ' checks' : '';
    $('count').textContent = n === tot ? '(' + tot + what + ')' : '(showing ' + n + ' of ' + tot + what + ')';
    $('empty').hidden = n > 0;
    $('more').hidden = !state.next || grouped();
    // A tile sets its filters in place of the others, and keeps the view the user chose. The
    // tiles are not rebuilt with the table: their listener is added once.
    for (const a of document.querySelectorAll('#tiles a.tile-link:not([data-bound])')) {
      a.dataset.bound = '1';
      a.addEventListener('click', (ev) => {
        ev.preventDefault();
        const p = new URLSearchParams(a.getAttribute('href').slice(1));
        const view = $('f-view').value;
        if (view && !p.has('view')) p.set('view', view);
        history.replaceState(null, '', '#' + p.toString());
        readHash();
        refilter();
        $('h-findings').scrollIntoView({ block: 'start' });
      });
    }
    for (const b of document.querySelectorAll('#findings th button.sort')) {
      const k = b.dataset.sort, cur = $('f-sort').value || 'severity';
      const dir = cur === k ? 'ascending' : cur === '-' + k ? 'descending' : null;
      const th = b.closest('th');
      if (dir) th.setAttribute('aria-sort', dir); else th.removeAttribute('aria-sort');
    }
  }

  function groupRow(g, open) {
    const btn = el('button', { type: 'button', class: 'expand', 'aria-expanded': open ? 'true' : 'false',
      'aria-label': (open ? 'Close ' : 'Open ') + g.title },
    el('span', { class: 'chev', 'aria-hidden': 'true' }, '▸'));
    const row = el('tr', { class: 'group', 'data-check': g.check, 'data-count': g.rows.length },
      el('td', { class: 'btn' }, btn),
      el('td', { 'data-label': 'Severity' }, el('span', { class: 'sev ' + g.worst }, g.worst)),
      el('td', { colspan: 6, class: 'gtitle' }, el('strong', {}, g.title),
        el('span', { class: 'muted' }, ' · ' + g.rows.length + ' finding' + (g.rows.length === 1 ? '' : 's') +
          ' on ' + g.objects.size + ' object' + (g.objects.size === 1 ? '' : 's'))));
    const flip = () => {
      if (state.openGroups.has(g.check)) state.openGroups.delete(g.check); else state.openGroups.add(g.check);
      renderFindings();
      const b = $('findings').querySelector('tr.group[data-check="' + CSS.escape(g.check) + '"] button.expand');
      if (b) b.focus();
    };
    btn.addEventListener('click', (ev) => { ev.stopPropagation(); flip(); });
    row.addEventListener('click', () => { if (!window.getSelection().toString()) flip(); });
    return [row];
  }

  function findingRow(f) {
    const open = state.expanded.has(f.fingerprint);
    const detailId = 'd-' + f.fingerprint;
    const obj = f.object || {};
    const check = (state.checks && state.checks[f.check]) || {};
    const btn = el('button', {
      type: 'button', class: 'expand', 'aria-expanded': open ? 'true' : 'false',
      'aria-controls': detailId, 'aria-label': 'Details for ' + (obj.name || f.check),
    }, el('span', { class: 'chev', 'aria-hidden': 'true' }, '▸'));
    const row = el('tr', { class: 'finding', 'data-fingerprint': f.fingerprint, 'data-severity': f.severity,
      'data-check': f.check, 'data-object': obj.name || obj.moref || '' },
      // data-label names the column in the narrow (one card per finding) layout.
      el('td', { class: 'btn' }, btn),
      el('td', { 'data-label': 'Severity' }, el('span', { class: 'sev ' + f.severity }, f.severity)),
      el('td', { class: 'check', 'data-label': 'Check', title: f.check }, f.title || check.title || f.check),
      el('td', { class: 'obj', 'data-label': 'Object' }, obj.name || obj.moref || '',
        obj.type ? el('div', { class: 'muted' }, obj.type.replace(/_/g, ' ') +
          (f.host && !obj.moref ? ' on ' + (f.host.name || f.host.moref) : '')) : null),
      el('td', { class: 'nowrap vc', 'data-label': 'vCenter' }, f.vcenter || ''),
      el('td', { class: 'msg', 'data-label': 'Message' }, shortMessage(f)),
      el('td', { class: 'nowrap', 'data-label': 'Status' }, f.status || '',
        f.waiver ? el('div', { class: 'muted' }, 'until ' + (f.waiver.expires || '?')) : null,
        // Kept as last seen: the latest poll could not read what it needs (details say why).
        f.unverified ? el('div', { class: 'unverified', title: f.unverified.reason || '' },
          'unverified since ', timeEl(f.unverified.since)) : null),
      el('td', { class: 'nowrap', 'data-label': 'First seen' }, timeEl(f.first_seen)));
    const detail = el('tr', { class: 'detail', id: detailId }, el('td', { colspan: 8 }, renderDetail(f, check)));
    detail.hidden = !open;
    btn.addEventListener('click', (ev) => { ev.stopPropagation(); toggle(f.fingerprint, btn, detail); });
    row.addEventListener('click', () => {
      if (!window.getSelection().toString()) toggle(f.fingerprint, btn, detail);
    });
    return [row, detail];
  }

  function toggle(fp, btn, detail) {
    const open = btn.getAttribute('aria-expanded') !== 'true';
    btn.setAttribute('aria-expanded', open ? 'true' : 'false');
    detail.hidden = !open;
    if (open) state.expanded.add(fp); else state.expanded.delete(fp);
  }

  // The remediation with this finding's own names in place of <vm>, <ds>, <naa>, <host>...:
  // from the object, its host and the evidence; a placeholder nothing names stays as it is.
  function fillFix(text, f) {
    const obj = f.object || {};
    const ev = (f.evidence && typeof f.evidence === 'object') ? f.evidence : {};
    const str = (v) => (typeof v === 'string' && v ? v : null);
    const is = (t) => obj.type === t ? obj.name : null;
    const host = (f.host && f.host.name) || is('host');
    const names = {
      vm: is('vm') || str(ev.vm),
      datastore: is('datastore') || str(ev.datastore),
      ds: is('datastore') || str(ev.datastore),
      pod: is('storage_pod') || str(ev.pod),
      host,
      naa: is('lun') || str(ev.device) || str(ev.canonical_name),
      device: is('lun') || str(ev.device),
      eui: is('lun'),
      vmk: is('vmknic') || str(ev.vmknic),
      pool: is('array_pool') || str(ev.pool),
    };
    // Only a name a shell and PowerShell both read as one plain word is filled in: the fix is
    // copied into a terminal, and a VM named "x; Remove-VM ..." must not become a command. Any
    // other name leaves its placeholder, and the plan (quoted for its shell) has it.
    const plain = (v) => typeof v === 'string' && /^[A-Za-z0-9._:@+-]+$/.test(v);
    return text.replace(/<([a-z-]+)>/g, (m, k) => (plain(names[k]) ? names[k] : m));
  }

  // Evidence in a person's units: bytes as GiB, percentages, durations.
  function fmtEvidence(k, v) {
    if (typeof v === 'number') {
      if (/(_bytes|^capacity|^free_space|^uncommitted|^size)$/.test(k) || /_bytes$/.test(k)) return fmtBytes(v);
      if (/_pct$/.test(k)) return (Math.round(v * 10) / 10) + ' %';
      if (/_ms$/.test(k)) return fmtDuration(v);
      if (/_gb$/.test(k)) return v + ' GB';
      return String(v);
    }
    if (v && typeof v === 'object') return JSON.stringify(v);
    return String(v);
  }

  function renderDetail(f, check) {
    const dl = el('dl');
    const item = (term, ...value) => {
      if (value.every((v) => v === null || v === undefined || v === '')) return;
      dl.append(el('dt', {}, term), el('dd', {}, ...value));
    };
    item('Check', (f.title || check.title || f.check) + ' (' + f.check + ')');
    item('Message', f.message);
    item('Why', check.rationale);
    // A disk linked clones hang off must never be consolidated: the check says so in its
    // message, and the generic fix (consolidate) is not offered beside it.
    const clones = f.evidence && Array.isArray(f.evidence.linked_clones) && f.evidence.linked_clones.length;
    if (check.remediation && !clones) {
      const pre = el('pre', { class: 'remediation' }, fillFix(check.remediation, f));
      const copy = el('button', { type: 'button', class: 'copy' }, 'Copy');
      copy.addEventListener('click', (ev) => {
        ev.stopPropagation();
        const done = () => { copy.textContent = 'Copied'; setTimeout(() => { copy.textContent = 'Copy'; }, 1500); };
        if (navigator.clipboard && window.isSecureContext) {
          navigator.clipboard.writeText(pre.textContent).then(done, () => selectText(pre));
        } else {
          selectText(pre);
        }
      });
      item('Fix', pre, el('div', { class: 'fix-actions' }, copy, ...planLinks(f)));
    }
    // The seed's own words (r22a's sources, when the server has them) and what vslint adds.
    const sources = Array.isArray(check.sources) ? check.sources.filter((x) => x && x.quote) : [];
    if (sources.length) {
      item('Source', ...sources.map((x) => el('blockquote', { class: 'quote' }, x.quote,
        el('footer', { class: 'muted' }, [x.document, x.section].filter(Boolean).join(', ')))));
    } else {
      item('Reference', check.reference);
    }
    if (typeof check.own === 'string' && check.own) item('vslint adds', check.own);
    const ev = f.evidence && typeof f.evidence === 'object' ? Object.entries(f.evidence) : [];
    if (ev.length) {
      item('Evidence', el('ul', { class: 'evidence' }, ...ev.map(([k, v]) =>
        el('li', {}, el('code', {}, k), ': ', fmtEvidence(k, v)))));
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

  function selectText(node) {
    const r = document.createRange();
    r.selectNodeContents(node);
    const s = window.getSelection();
    s.removeAllRanges();
    s.addRange(r);
  }

  // "Plan for this host" and "plan for everything": GET /api/v1/plan, saved as a script.
  function planLinks(f) {
    const host = (f.host && f.host.name) || (f.object && f.object.type === 'host' ? f.object.name : null);
    const mk = (label, q, file) => {
      const b = el('button', { type: 'button', class: 'link plan', 'data-plan': q }, label);
      b.addEventListener('click', (ev) => {
        ev.stopPropagation();
        download('/api/v1/plan' + (q ? '?' + q : ''), file).catch((e) => {
          if (!(e instanceof AuthError)) setBanner(e.message, 'error');
        });
      });
      return b;
    };
    const out = [];
    if (host) {
      out.push(mk('Plan for ' + host, new URLSearchParams({ vcenter: f.vcenter, host }).toString(),
        'vslint-plan-' + host.replace(/[^A-Za-z0-9._-]/g, '_') + '.sh'));
    }
    out.push(mk('Plan for everything', '', 'vslint-plan.sh'));
    return out;
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
      el('span', { class: 'key critical', 'aria-hidden': 'true' }), 'red below ' + crit + ' % free; ',
      el('span', { class: 'key mark-key', 'aria-hidden': 'true' }), 'the dashed marks are those two thresholds. Fullest first.');
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
    // The ones at risk first; the rest on "show all" (200 bars are 6,000 px).
    const ol = el('ol', { class: 'bars' });
    const shown = state.dsAll ? rows : rows.slice(0, DS_SHOWN);
    for (const r of shown) {
      const usedPct = r.freePct === null ? 0 : Math.max(0, Math.min(100, 100 - r.freePct));
      const figures = r.freePct === null ? 'capacity unknown' :
        fmtBytes(r.cap - r.free) + ' of ' + fmtBytes(r.cap) + ' used, ' + pctNear(r.freePct, [warn, crit]) + ' % free';
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
      const li = el('li', { 'data-datastore': r.d.name, 'data-key': r.d.vcenter + '/' + r.d.moref,
        'data-level': r.level, title: r.label + ': ' + figures },
        el('span', { class: 'name' }, open, r.d.accessible === false ? el('span', { class: 'err' }, ' inaccessible') : null),
        track,
        el('span', { class: 'figures' }, figures, runwayNote(r.d.runway, r.level)));
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
    const more = [];
    if (rows.length > DS_SHOWN) {
      const b = el('button', { type: 'button', id: 'ds-all' }, state.dsAll ? 'Show the ' + DS_SHOWN + ' fullest' : 'Show all ' + rows.length);
      b.addEventListener('click', () => { state.dsAll = !state.dsAll; renderDatastores(list); });
      more.push(el('p', {}, b));
    }
    chart.replaceChildren(ol, ...more);
    // The capacity chart opens in place, under its datastore's bar.
    const fig = $('ds-capacity');
    const at = state.openDatastore && [...ol.children].find((li) => li.dataset.key === state.openDatastore);
    if (at) at.after(el('li', { class: 'capacity-slot charts' }, fig)); else if (!fig.hidden) fig.hidden = true;
    if (state.openDatastore) {
      const d = list.find((x) => x.vcenter + '/' + x.moref === state.openDatastore);
      if (d) loadCapacity(d).catch(() => {});
    }
  }

  /* A percentage to one decimal, unless that rounds onto a threshold it is not at: 9.9995 %
   * is below 10 % and must not read "10.0 %" beside "already below critical". */
  function pctNear(v, thresholds) {
    const one = v.toFixed(1);
    const t = thresholds.find((x) => Number(one) === x && v !== x);
    return t === undefined ? one : (v < t ? 'just under ' : 'just over ') + t;
  }

  /* " · 12 days to critical" when the critical line is in sight within a quarter; a datastore
   * already below it says so rather than "0 days". */
  function runwayNote(rw, level) {
    if (level === 'critical' || (rw && rw.days_to_critical === 0)) {
      return el('span', { class: 'runway' }, ' · already below critical');
    }
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
    const li = document.querySelector('#ds-chart li[data-key="' + CSS.escape(state.openDatastore) + '"]');
    if (li) li.after(el('li', { class: 'capacity-slot charts' }, $('ds-capacity')));
    for (const slot of document.querySelectorAll('#ds-chart li.capacity-slot')) if (!slot.children.length) slot.remove();
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
    // No array configured: the section is hidden rather than shown empty.
    $('pools-section').hidden = !list.length;
    if (!list.length) return;
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
    // The left margin holds "1.5 s" or "850 ms" whole at the chart's smallest size.
    const W = 320, H = 140, L = 52, R = 10, T = 8, B = 20;
    const all = series.flatMap((s) => s.values.filter((v) => typeof v === 'number'));
    const yMax = opts.max !== undefined ? opts.max : Math.max(1, ...all);
    // x by the date, not by the index: a day without data is a gap, not a squeezed point.
    const day = (d) => Date.parse(d + 'T00:00:00Z') / DAY_MS;
    const d0 = day(dates[0]), span = Math.max(1, day(dates[dates.length - 1]) - d0);
    const x = (i) => L + (dates.length > 1 ? ((day(dates[i]) - d0) * (W - L - R)) / span : (W - L - R) / 2);
    const y = (v) => T + (H - T - B) * (1 - v / yMax);
    const fmt = opts.format || String;
    const chart = svg('svg', { viewBox: '0 0 ' + W + ' ' + H, role: 'img',
      'aria-label': opts.label + ': ' + series.map((s) => s.name + ' ' +
        fmt(s.values[s.values.length - 1] ?? '–') + ' today').join(', ') });
    chart.append(svg('line', { class: 'axis', x1: L, y1: H - B, x2: W - R, y2: H - B }),
      svg('line', { class: 'axis', x1: L, y1: T, x2: L, y2: H - B }),
      svg('text', { class: 'tick', x: L - 4, y: T + 8, 'text-anchor': 'end', text: fmt(yMax) }),
      svg('text', { class: 'tick', x: L - 4, y: H - B, 'text-anchor': 'end', text: fmt(0) }),
      svg('text', { class: 'tick', x: L, y: H - 4, text: fmtDay(dates[0]) }),
      dates.length > 1 ? svg('text', { class: 'tick', x: W - R, y: H - 4, 'text-anchor': 'end', text: fmtDay(dates[dates.length - 1]) }) : null);
    for (const s of series) {
      let d = '';
      s.values.forEach((v, i) => {
        if (typeof v !== 'number') return;
        // A line joins consecutive days only: across a gap it starts again.
        const joined = d && typeof s.values[i - 1] === 'number' && day(dates[i]) - day(dates[i - 1]) === 1;
        d += (joined ? 'L' : 'M') + x(i).toFixed(1) + ' ' + y(v).toFixed(1);
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

  function fmtDay(d) {
    const t = new Date(d + 'T00:00:00Z');
    return t.toLocaleDateString(undefined, { month: 'short', day: 'numeric', timeZone: 'UTC' });
  }

  // GET /api/v1/history (docs/openapi.yaml, History): one entry per day, oldest first. Only
  // the days with data are drawn: a day before the first poll is not "zero findings".
  async function loadHistory() {
    const h = await api('/api/v1/history?days=30');
    const days = (h.days || []).filter((d) => d.score !== null);
    $('hist-since').textContent = days.length ? 'collecting since ' + fmtDay(days[0].date) +
      (days.length < 30 ? ' (' + days.length + ' day' + (days.length === 1 ? '' : 's') + ' with data)' : '') : 'no data yet';
    if (!days.length) return;
    const dates = days.map((d) => d.date);
    lineChart($('hist-score'), dates, [{ name: 'score', cls: 'score', values: days.map((d) => d.score) }],
      { label: 'Score', max: 100 });
    lineChart($('hist-findings'), dates, ['critical', 'warning', 'info'].map((sev) =>
      ({ name: sev, cls: sev, values: days.map((d) => (d.findings || {})[sev] ?? 0) })),
    { label: 'Open findings' });
    lineChart($('hist-changes'), dates, [
      { name: 'new', cls: 'new', values: days.map((d) => d.new ?? null) },
      { name: 'resolved', cls: 'resolved', values: days.map((d) => d.resolved ?? null) }],
    { label: 'New and resolved findings per day' });
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

  // A selection inside the findings (someone copying a command) pauses the timed refresh.
  function selecting() {
    const sel = window.getSelection();
    if (!sel || sel.isCollapsed || !sel.toString()) return false;
    const n = sel.anchorNode;
    return !!(n && (n.nodeType === 1 ? n : n.parentNode).closest('#findings'));
  }

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
    document.body.dataset.loaded = String(Number(document.body.dataset.loaded || 0) + 1);
  }

  function schedule() {
    clearInterval(state.timer);
    state.timer = setInterval(() => { if (!document.hidden && !selecting()) refresh(); }, REFRESH_MS);
  }

  // Poll now, then follow the poll: the summary is read every 2 s until every source queued
  // has finished a poll after this one was asked for (or 5 minutes), then the page refreshes.
  async function pollNow() {
    const btn = $('poll-now');
    btn.disabled = true;
    let following = false;
    try {
      const before = {};
      for (const v of ((state.summary && state.summary.vcenters) || []).concat((state.summary && state.summary.arrays) || [])) {
        before[v.name] = v.last_poll ? v.last_poll.finished : null;
      }
      const doc = await api('/api/v1/polls', { method: 'POST' });
      const names = (doc && doc.queued) || [];
      setBanner('Poll queued' + (names.length ? ' for ' + names.join(', ') : '') +
        '; the page refreshes when it is done.', 'ok');
      following = true;
      followPoll(names, before, Date.now() + 300000);
    } catch (e) {
      if (e.status === 403) {
        // No token is configured: nothing may write, so the button cannot work here.
        btn.title = 'This server accepts no writes: set token_file= in [server] of its configuration';
        btn.dataset.why = 'no-token';
        setBanner('Poll now is off: this server has no token (token_file= in [server]); it polls on its schedule.', 'error');
        return;
      }
      if (!(e instanceof AuthError)) setBanner(e.message, 'error');
    } finally {
      if (!following && btn.dataset.why !== 'no-token') btn.disabled = false;
    }
  }

  async function followPoll(names, before, until) {
    const btn = $('poll-now');
    try {
      const s = await api('/api/v1/summary');
      const all = (s.vcenters || []).concat(s.arrays || []);
      const done = names.every((n) => {
        const v = all.find((x) => x.name === n);
        return !v || (!v.polling && v.last_poll && v.last_poll.finished !== before[n]);
      });
      if (!done && Date.now() < until) {
        setTimeout(() => followPoll(names, before, until), 2000);
        return;
      }
      setBanner(done ? 'Poll finished for ' + names.join(', ') + '.' : 'The poll is taking long; the page keeps refreshing.', done ? 'ok' : '');
      btn.disabled = false;
      refresh();
    } catch (e) {
      btn.disabled = false;
      if (!(e instanceof AuthError)) setBanner(e.message, 'error');
    }
  }

  function refilter() {
    writeHash();
    state.findings = [];
    state.shown = '';
    loadFindings().catch((e) => { if (!(e instanceof AuthError)) setBanner(e.message, 'error'); });
  }

  function init() {
    readHash();
    let debounce = null;
    $('filters').addEventListener('change', (ev) => { if (ev.target.id !== 'f-object') refilter(); });
    $('filters').addEventListener('submit', (ev) => { ev.preventDefault(); refilter(); });
    $('f-object').addEventListener('input', () => { clearTimeout(debounce); debounce = setTimeout(refilter, 250); });
    $('filters').addEventListener('reset', () => setTimeout(() => { $('f-sort').value = ''; $('f-resolution').value = ''; refilter(); }, 0));
    for (const b of document.querySelectorAll('#findings th button.sort')) {
      // A second click on the same column reverses it.
      b.addEventListener('click', () => {
        const k = b.dataset.sort, cur = $('f-sort').value || 'severity';
        $('f-sort').value = cur === k ? '-' + k : k === 'severity' ? '' : k;
        refilter();
      });
    }
    $('more').addEventListener('click', () => loadFindings({ more: true }).catch((e) => setBanner(e.message, 'error')));
    $('refresh').addEventListener('click', () => { refresh(); schedule(); });
    $('poll-now').addEventListener('click', pollNow);
    $('token-form').addEventListener('submit', useToken);
    $('token-forget').addEventListener('click', forgetToken);
    document.addEventListener('visibilitychange', () => { if (!document.hidden && !selecting()) refresh(); });
    window.addEventListener('hashchange', () => { readHash(); refilter(); });
    refresh();
    schedule();
  }

  init();
})();
