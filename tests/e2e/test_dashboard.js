#!/usr/bin/env node
/* Browser test of the dashboard: starts the vCenter simulator (scenario "violations") and the
 * real `vslint serve`, opens the page in headless Chromium (Debian's, driven by playwright-core)
 * and checks what an administrator sees: the tiles, the planted findings, a filter, a row's
 * remediation, the datastore chart, the token prompt, a narrow window. Saves screenshots.
 *
 * The checks are grouped into named steps, the test's cases: a step fails when one of its
 * checks fails or it throws (then the steps after it are skipped). Each page's JavaScript
 * errors, console errors and failed requests are a case of their own.
 *
 * Environment (set by tests/e2e/meson.build): VSLINT, VCSIM, SOURCE_ROOT, E2E_SCREENSHOT;
 * E2E_RESULTS, a file for the cases as JUnit XML; CHROMIUM overrides /usr/bin/chromium.
 * Exit 0 when every case passed, 1 otherwise. */
'use strict';

const assert = require('assert');
const { spawn } = require('child_process');
const crypto = require('crypto');
const fs = require('fs');
const path = require('path');
const {
  ROOT, VSLINT, children, work, newCase, check, eq, step, startSim, freePort, writeFile, tail,
  stop, loadPlaywright, launch, watch, run,
} = require('./e2elib');

const SHOT = process.env.E2E_SCREENSHOT || path.join(ROOT, 'build/e2e-dashboard.png');
const UNITY_SIM = process.env.UNITY_SIM || path.join(ROOT, 'build/tests/sim/unity-vslint');

/* vslint serve on a fresh port; resolves once /readyz answers 200. */
async function startServe(name, conf, token) {
  const log = path.join(work, name + '.log');
  const out = fs.openSync(log, 'w');
  const proc = spawn(VSLINT, ['serve', '-c', conf], { stdio: ['ignore', out, out] });
  fs.closeSync(out);
  children.push(proc);
  const base = 'http://' + /^listen = (.*)$/m.exec(fs.readFileSync(conf, 'utf8'))[1];
  const headers = token ? { Authorization: 'Bearer ' + token } : {};
  const until = Date.now() + 120000;
  while (Date.now() < until) {
    if (proc.exitCode !== null) break;
    try {
      const r = await fetch(base + '/readyz', { headers });
      if (r.status === 200) return { proc, base, log };
    } catch (e) { /* not listening yet */ }
    await new Promise((res) => setTimeout(res, 200));
  }
  throw new Error('vslint serve (' + name + ') never became ready; its log:\n' + tail(log));
}


async function getJSON(base, p, token) {
  const r = await fetch(base + p, { headers: token ? { Authorization: 'Bearer ' + token } : {} });
  assert.strictEqual(r.status, 200, p + ' answered ' + r.status);
  return r.json();
}


async function loaded(page, atLeast) {
  await page.waitForFunction((n) => Number(document.body.dataset.loaded || 0) >= n, atLeast || 1,
    { timeout: 30000 });
}

/* The findings table as a user reads it: one object per visible row (the check as its id,
 * which the row carries; the cell shows its title). */
function rows(page) {
  return page.$$eval('#findings tbody tr.finding', (trs) => trs.map((tr) => ({
    severity: tr.children[1].innerText.trim(),
    check: tr.dataset.check,
    title: tr.children[2].innerText.trim(),
    object: tr.children[3].firstChild ? tr.children[3].firstChild.textContent.trim() : '',
    visible: tr.offsetParent !== null,
  })));
}

/* Waits until the findings table has n rows of `sel` (or 15 s). */
function rowsShown(page, n, sel) {
  return page.waitForFunction(([k, s]) => document.querySelectorAll('#findings tbody ' + s).length === k,
    [n, sel || 'tr.finding'], { timeout: 15000 }).catch(() => {});
}

/* Neither the page nor any table inside it scrolls sideways: px of overflow, 0 when none. */
function overflow(page) {
  return page.evaluate(() => {
    const doc = document.documentElement.scrollWidth - document.documentElement.clientWidth;
    const inner = [...document.querySelectorAll('.scroll, .chart, .filters')]
      .map((e) => e.scrollWidth - e.clientWidth);
    return Math.max(doc, ...inner);
  });
}

/* The dashboard as an administrator uses it, step by step, on one page. */
async function dashboard(page, base, api) {
  const { summary, checks, crit, all } = api;

  await step('GET / serves the dashboard', async () => {
    const resp = await page.goto(base + '/');
    if (!resp || resp.status() !== 200) {
      throw new Error('GET / answered ' + (resp && resp.status()) + ': vslint serve does not ' +
        'serve the dashboard (web/assets.h: api_asset_find)');
    }
    eq('GET / content type', resp.headers()['content-type'], 'text/html; charset=utf-8');
    await loaded(page);
  });

  await step('the tiles show the figures of the API', async () => {
    const sev = summary.findings.by_severity;
    eq('critical tile', await page.textContent('#t-critical'), String(sev.critical));
    eq('warning tile', await page.textContent('#t-warning'), String(sev.warning));
    eq('info tile', await page.textContent('#t-info'), String(sev.info));
    eq('new tile', await page.textContent('#t-new'), String(summary.findings.by_status.new));
    eq('waived tile', await page.textContent('#t-waived'),
      String(summary.findings.by_status.waived));
    eq('score tile', await page.textContent('#t-score'), String(summary.score));
    check('some critical findings are planted', sev.critical > 0 && sev.warning > 0);
    eq('new in 24 h tile', await page.textContent('#t-new24'), String(summary.changes.last_24h.new));
    eq('resolved in 24 h tile', await page.textContent('#t-resolved24'),
      String(summary.changes.last_24h.resolved));
    const aff = summary.affected.datastore;
    eq('affected datastores', await page.textContent('#t-affected li[data-kind="datastore"]'),
      aff.affected + ' of ' + aff.of + ' datastores');
    // Open criticals make the score red whatever its number (87 used to be amber "fair").
    eq('the score band is red with open criticals',
      await page.getAttribute('[data-tile="score"]', 'data-band'), 'poor');
    const colour = (sel) => page.$eval(sel, (e) => getComputedStyle(e).borderLeftColor);
    eq('the score tile has the critical colour', await colour('[data-tile="score"]'),
      await colour('[data-tile="critical"]'));
    check('the score is defined on the page', /red with any open critical finding/.test(
      await page.textContent('#score-def')));
    // Zero is grey, not the severity's colour: the waived tile (0 here) against the critical.
    eq('waived tile is 0 here', await page.textContent('#t-waived'), '0');
    check('a zero tile is grey', await page.$eval('[data-tile="waived"]', (e) => e.classList.contains('zero')));
    check('a non-zero tile is not', !(await page.$eval('[data-tile="critical"]', (e) => e.classList.contains('zero'))));
  });

  await step('the vCenter is listed as ok with its last poll', async () => {
    const vc = await page.$eval('#vcenters tbody tr[data-vcenter="lab"]', (tr) => tr.innerText);
    check('vCenter "lab" is listed as ok', /\bok\b/.test(vc), vc);
    check('vCenter "lab" shows how long ago it was polled', /\d+ (s|min) ago/.test(vc), vc);
    const abs = await page.getAttribute('#vcenters tbody tr[data-vcenter="lab"] td[data-label="Last poll"] time', 'title');
    check('the absolute time is on hover', /^\d{4}-\d\d-\d\d \d\d:\d\d$/.test(abs || ''), abs);
    check('the freshness banner is hidden while the data is fresh', !(await page.isVisible('#fresh')));
    check('the header says how old the data is', /^data from \d+ (s|min) ago$/.test(
      (await page.textContent('#updated')).trim()), await page.textContent('#updated'));
  });

  await step('the gaps banner names what the last poll could not read, why, and on which hosts', async () => {
    // The scenario plants one host that refuses esxcli (NoPermission, Host.Config.Settings).
    const line = '#gaps div[data-vcenter="lab"][data-gap="esxcli"]';
    check('the gaps banner is shown', await page.isVisible('#gaps'));
    eq('one line: the one kind of gap', await page.$$eval('#gaps div', (d) => d.length), 1);
    eq('the line says how many hosts, what and the privilege',
      (await page.$eval(line, (d) => d.firstChild.textContent + d.childNodes[1].textContent +
        d.childNodes[2].textContent)).trim(),
      'lab: 1 host: esxcli not permitted (needs Host.Config.Settings)');
    check('the host names wait for a click', !(await page.isVisible(line + ' details[open]')) &&
      !(await page.$eval(line + ' details', (d) => d.open)));
    await page.click(line + ' details summary');
    check('a click shows the host', await page.isVisible(line + ' details[open]'));
    eq('the host is named', (await page.$eval(line + ' details', (d) => d.lastChild.textContent)).trim(),
      'esx-san-noesxcli');
    check('the vCenter\'s fault is on hover', /NoPermission fault/.test(await page.getAttribute(line, 'title')));
    // The banner is rebuilt on each refresh: the host list a user opened stays open.
    const n = await page.evaluate(() => Number(document.body.dataset.loaded || 0));
    await page.click('#refresh');
    await loaded(page, n + 1);
    check('the host list is still open after a refresh', await page.isVisible(line + ' details[open]'));
    await page.click(line + ' details summary');
    check('a second click closes it', !(await page.$eval(line + ' details', (d) => d.open)));
  });

  await step('findings are grouped by check, worst first, with counts and titles', async () => {
    const per = {};
    for (const f of all.findings) per[f.check] = (per[f.check] || 0) + 1;
    const g = await page.$$eval('#findings tbody tr.group', (trs) => trs.map((tr) => ({
      check: tr.dataset.check, count: Number(tr.dataset.count), text: tr.innerText,
      sev: tr.querySelector('.sev').textContent })));
    eq('one group per check with findings', g.length, Object.keys(per).length);
    check('each group counts its check\'s findings', g.every((x) => per[x.check] === x.count),
      JSON.stringify(g.map((x) => [x.check, x.count, per[x.check]])));
    const rank = { critical: 0, warning: 1, info: 2 };
    check('worst severity first', g.every((x, i) => !i || rank[g[i - 1].sev] <= rank[x.sev]),
      JSON.stringify(g.map((x) => x.sev)));
    const dfs = checks.checks.find((c) => c.id === 'datastore-free-space');
    const grp = g.find((x) => x.check === 'datastore-free-space') || {};
    check('a group shows its check\'s title, not its id', (grp.text || '').includes(dfs.title), grp.text);
    eq('no finding rows while the groups are closed', (await rows(page)).length, 0);
    await page.click('#findings tr.group[data-check="datastore-free-space"] button.expand');
    const r = await rows(page);
    eq('an opened group shows its findings', r.length, per['datastore-free-space']);
    check('they are its check\'s', r.every((x) => x.check === 'datastore-free-space'));
    const opt = await page.$eval('#f-check option[value="datastore-free-space"]', (o) => o.textContent);
    eq('the check filter names the check with its count', opt,
      dfs.title + ' (' + per['datastore-free-space'] + ')');
  });

  await step('a finding\'s fix names its own object; refresh keeps the detail open', async () => {
    const btn = page.locator('#findings tbody tr.finding[data-object="ds-free-crit"] button.expand');
    await btn.click();
    const detail = page.locator('#' + await btn.getAttribute('aria-controls'));
    const fix = (await detail.locator('pre.remediation').innerText()).replace(/\s+/g, ' ');
    check('the fix names ds-free-crit', fix.includes('-Datastore ds-free-crit'), fix);
    check('the fix has no <ds> left', !fix.includes('<ds>'), fix);
    const ev = await detail.locator('ul.evidence').innerText();
    check('evidence bytes in GiB', /capacity_bytes: 600 GiB/.test(ev), ev);
    check('a plan link for everything', await detail.locator('button.plan').count() >= 1);
    // The seed's own words the check rests on, as /api/v1/checks gives them.
    const quotes = (await detail.locator('blockquote.quote').allInnerTexts()).join(' ');
    const dfsQuote = checks.checks.find((c) => c.id === 'datastore-free-space').sources[0].quote;
    check('the detail quotes the seed', quotes.replace(/\s+/g, ' ').includes(dfsQuote.slice(0, 60)),
      quotes.slice(0, 200));
    // The same row element after a refresh: it was kept, not rebuilt.
    await page.$eval('#findings tr.finding[data-object="ds-free-crit"]', (tr) => { tr.dataset.mark = 'kept'; });
    const n = await page.evaluate(() => Number(document.body.dataset.loaded || 0));
    await page.click('#refresh');
    await loaded(page, n + 1);
    check('the detail is still open after a refresh', await detail.isVisible());
    eq('the row was kept, not rebuilt', await page.$eval(
      '#findings tr.finding[data-object="ds-free-crit"]', (tr) => tr.dataset.mark || ''), 'kept');
    await btn.click();
    await page.click('#findings tr.group[data-check="datastore-free-space"] button.expand');
  });

  await step('one row per finding on request, sortable by a column', async () => {
    await page.selectOption('#f-view', 'flat');
    await rowsShown(page, Math.min(all.total, 100));
    check('the view is in the URL', page.url().includes('view=flat'), page.url());
    await page.click('#findings th button.sort[data-sort="object"]');
    const want = (await getJSON(base, '/api/v1/findings?limit=100&sort=object')).findings
      .map((f) => f.object.name);
    await page.waitForFunction((w) => {
      const t = [...document.querySelectorAll('#findings tbody tr.finding')].map((tr) => tr.dataset.object);
      return JSON.stringify(t) === JSON.stringify(w);
    }, want, { timeout: 15000 }).catch(() => {});
    const got = (await rows(page)).map((x) => x.object);
    eq('sorted by object as the API sorts it', JSON.stringify(got), JSON.stringify(want));
    check('the names are in order', got.every((x, i) => !i || Buffer.from(got[i - 1]) <= Buffer.from(x)));
    eq('the header says ascending', await page.getAttribute('#findings th:has(button[data-sort="object"])', 'aria-sort'), 'ascending');
    await page.click('#findings th button.sort[data-sort="object"]');
    await page.waitForFunction((w) => {
      const t = document.querySelector('#findings tbody tr.finding');
      return t && t.dataset.object === w;
    }, want.length ? [...want].reverse()[0] : '', { timeout: 15000 }).catch(() => {});
    const rev = (await rows(page)).map((x) => x.object);
    check('a second click reverses it', rev[0] >= rev[rev.length - 1] && rev[0] !== got[0], JSON.stringify(rev.slice(0, 3)));
    // Back to the default order for the steps that follow.
    await page.click('#findings th button.sort[data-sort="severity"]');
    await page.waitForFunction(() => !/sort=/.test(location.hash), null, { timeout: 5000 }).catch(() => {});
  });

  await step('the planted findings are listed and the compliant twin is not', async () => {
    const r = await rows(page);
    eq('rows shown without filter', r.length, Math.min(all.total, 100));
    eq('count heading', (await page.textContent('#count')).trim(), '(' + all.total + ')');
    const crowded = r.find((x) => x.object === 'ds-crowded');
    check('ds-crowded is listed', !!crowded, JSON.stringify(r.map((x) => x.object)));
    if (crowded) {
      eq('ds-crowded check', crowded.check, 'vms-per-datastore');
      eq('ds-crowded severity', crowded.severity, 'warning');
    }
    const fcrit = r.find((x) => x.object === 'ds-free-crit');
    check('ds-free-crit is listed', !!fcrit);
    if (fcrit) {
      eq('ds-free-crit check', fcrit.check, 'datastore-free-space');
      eq('ds-free-crit severity', fcrit.severity, 'critical');
    }
    check('the compliant twin ds-free-ok has no finding',
      !r.some((x) => x.object === 'ds-free-ok'));
  });

  await step('a name with blanks, & < > " \' and non-ASCII letters shows unchanged', async () => {
    const odd = 'ds "Q3" & <Ops> \'Ñandú\'';
    const r = await rows(page);
    const row = r.find((x) => x.object === odd);
    check('the odd-named datastore is listed as written', !!row,
      JSON.stringify(r.map((x) => x.object).filter((o) => /Q3/.test(o))));
    if (row) eq('its check', row.check, 'datastore-free-space');
    await page.click('#ds-all');
    const bar = await page.$$eval('#ds-chart li[data-datastore]', (lis, n) =>
      lis.filter((li) => li.dataset.datastore === n).map((li) => li.textContent), odd);
    check('its bar in the chart names it as written', bar.length === 1 && bar[0].includes(odd),
      JSON.stringify(bar));
    // Markup in a name is text, never markup: no element was made of "<Ops>".
    eq('no <ops> element', await page.$$eval('ops', (e) => e.length), 0);
  });

  await step('the datastore chart colours bars by free space, fullest first', async () => {
    const bars = await page.$$eval('#ds-chart li[data-datastore]', (lis) => lis.map((li) => {
      const used = li.querySelector('.used');
      return {
        name: li.dataset.datastore, level: li.dataset.level,
        colour: getComputedStyle(used).backgroundColor,
        fill: used.getBoundingClientRect().width /
          li.querySelector('.track').getBoundingClientRect().width,
      };
    }));
    const bar = (n) => bars.find((b) => b.name === n) || {};
    eq('ds-free-crit bar level', bar('ds-free-crit').level, 'critical');
    eq('ds-free-warn bar level', bar('ds-free-warn').level, 'warning');
    eq('ds-free-ok bar level', bar('ds-free-ok').level, 'ok');
    check('ds-free-crit bar is 92 % full',
      Math.abs((bar('ds-free-crit').fill || 0) - 0.92) < 0.01, bar('ds-free-crit').fill);
    const badge = await page.$eval('.sev.critical', (e) => getComputedStyle(e).color);
    eq('ds-free-crit bar has the critical colour', bar('ds-free-crit').colour, badge);
    check('warning and ok bars differ in colour',
      bar('ds-free-warn').colour !== bar('ds-free-ok').colour &&
      bar('ds-free-warn').colour !== badge);
    const fullest = bars.length ? bars[0].name : '';
    eq('the fullest datastore comes first', fullest, 'ds-free-snaprisk');
  });

  await step('an opened datastore shows the array pool behind it', async () => {
    const li = '#ds-chart li[data-datastore="ds-pool-low"]';
    const summaryText = await page.textContent(li + ' details.pools summary');
    eq('ds-pool-low names its pool', summaryText, 'on array pool unity1/pool-low');
    check('the pool figures are hidden until opened',
      !(await page.isVisible(li + ' details.pools .pool')));
    await page.click(li + ' details.pools summary');
    const text = await page.textContent(li + ' details.pools .pool');
    // 8 % of 10 TiB is 819.2 GiB, which the dashboard prints to three digits.
    eq('ds-pool-low pool line', text, 'unity1/pool-low: 8.0 % free (819 GiB of 10.0 TiB)');
    eq('a datastore on no array has no pools',
      await page.$$eval('#ds-chart li[data-datastore="ds-lab-01"] details.pools', (d) => d.length), 0);
    // vCenter sees 60 % free: the datastore bar itself is fine, the pool is not.
    eq('ds-pool-low bar level', await page.$eval(li, (e) => e.dataset.level), 'ok');
  });

  await step('the pools list shows every pool of /api/v1/inventory/pools, least free first', async () => {
    const shown = await page.$$eval('#pools tbody tr[data-pool]', (trs) => trs.map((tr) => ({
      pool: tr.dataset.pool, level: tr.dataset.level,
      datastores: tr.children[4].innerText.trim(),
    })));
    eq('one row per pool', shown.length, api.pools.pools.length);
    eq('the least free pool comes first', shown.length && shown[0].pool, 'unity1/pool-unjoined');
    const low = shown.find((r) => r.pool === 'unity1/pool-low') || {};
    eq('pool-low level', low.level, 'critical');
    eq('pool-low backs ds-pool-low', low.datastores, 'ds-pool-low');
    const ok = shown.find((r) => r.pool === 'unity1/pool-ok') || {};
    eq('pool-ok level', ok.level, 'ok');
    const arr = await page.$eval('#vcenters tbody tr[data-vcenter="unity1"]', (tr) => tr.innerText);
    check('the array is listed with the vCenters, ok', /unity array/.test(arr) && /\bok\b/.test(arr), arr);
  });

  await step('the history charts draw the last 30 days of /api/v1/history', async () => {
    const h = api.history;
    const today = h.days[h.days.length - 1];
    const dots = (sel) => page.$$eval(sel + ' circle.dot', (cs) => cs.map((c) => ({
      series: c.dataset.series, date: c.dataset.date, value: Number(c.dataset.value),
      shown: c.getBoundingClientRect().width > 0,
    })));
    const score = await dots('#hist-score');
    const withData = h.days.filter((d) => d.score !== null).map((d) => d.date);
    eq('score points: one per day with a score', score.length, withData.length);
    check('some days of the 30 have no data (before the first poll)', withData.length < h.days.length);
    const last = score[score.length - 1] || {};
    eq("today's score point", last.date + ' ' + last.value, today.date + ' ' + summary.score);
    check('the score points are drawn', score.length > 0 && score.every((d) => d.shown));
    const sev = await dots('#hist-findings');
    check('no point for a day without data', sev.every((d) => withData.includes(d.date)),
      JSON.stringify(sev.map((d) => d.date)));
    check('the chart says since when it collects', /^collecting since /.test(
      await page.textContent('#hist-since')), await page.textContent('#hist-since'));
    for (const s of ['critical', 'warning', 'info']) {
      const pts = sev.filter((d) => d.series === s);
      eq(s + ' points: one per day with data', pts.length, withData.length);
      eq(s + ' today, as the tile says', pts.length && pts[pts.length - 1].value,
        summary.findings.by_severity[s]);
    }
    const changes = await dots('#hist-changes');
    const lastNew = changes.filter((d) => d.series === 'new').pop() || {};
    eq("today's new findings point", lastNew.date + ' ' + lastNew.value, today.date + ' ' + today.new);
    check('new and resolved only on days with data', changes.every((d) => withData.includes(d.date)));
    const lab = h.polls.find((p) => p.vcenter === 'lab');
    const polls = (await dots('#hist-polls')).filter((d) => d.series === 'lab');
    const fullDays = lab ? lab.days.filter((d) => d.full.polls > 0) : [];
    check('the polls chart has a point for each of lab\'s days with a full read',
      lab && fullDays.length > 0 && polls.length === fullDays.length, JSON.stringify(polls));
    if (lab && polls.length) {
      eq("lab's mean full read duration today", polls[polls.length - 1].value,
        fullDays[fullDays.length - 1].full.mean_ms);
    }
    const label = await page.getAttribute('#hist-score svg', 'aria-label');
    check('the score chart reads its value to a screen reader',
      (label || '').includes('score ' + summary.score + ' today'), label);
    const legend = await page.$$eval('#hist-findings .legend li', (li) => li.map((x) => x.textContent));
    eq('the findings legend', JSON.stringify(legend), '["critical","warning","info"]');
    const colour = (sel) => page.$eval(sel, (e) => getComputedStyle(e).stroke);
    const crit = await page.$eval('.sev.critical', (e) => getComputedStyle(e).color);
    eq('critical line has the critical colour', await colour('#hist-findings g[data-series="critical"] path'), crit);
  });

  await step('a datastore opened shows its capacity chart with the thresholds and projection',
    async () => {
      // Ten days of history planted in the real database (nobody waits ten days): ds-free-ok
      // lost 1 % of its 600 GiB a day down to its 40 % free now, so the warning line (30 %)
      // is 10 days away and the critical one (10 %) 30 days; then a poll records today's point
      // and the runway.
      const GIB = 2 ** 30, CAP = 600 * GIB;
      const plant = require('child_process').spawnSync('/usr/bin/python3', ['-c', [
        'import sqlite3, sys, time',
        'con = sqlite3.connect(sys.argv[1])',
        'now = int(time.time() * 1000)',
        'm, = con.execute("SELECT moref FROM datastores WHERE name = \'ds-free-ok\'").fetchone()',
        'con.executemany("INSERT INTO capacity_history (vcenter, kind, moref, t_ms, capacity,'
          + ' free_space) VALUES (\'lab\', \'datastore\', ?, ?, ?, ?)", [(m, now - d * 86400000,'
          + ' ' + CAP + ', ' + CAP + ' // 100 * (40 + d)) for d in range(10, 0, -1)])',
        'con.commit()'].join('\n'), api.db], { encoding: 'utf8' });
      eq('history planted', plant.status, 0);
      const hdr = { Authorization: 'Bearer ' + api.token };
      const r = await fetch(base + '/api/v1/polls?vcenter=lab', { method: 'POST', headers: hdr });
      eq('poll queued', r.status, 202);
      let ds = null;
      for (const until = Date.now() + 60000; Date.now() < until;) {
        const doc = await getJSON(base, '/api/v1/inventory/datastores?limit=1000');
        ds = doc.datastores.find((d) => d.name === 'ds-free-ok');
        if (ds && ds.runway.days_to_critical !== null) break;
        await new Promise((res) => setTimeout(res, 300));
      }
      eq('the API gives ds-free-ok 30 days to critical', ds && ds.runway.days_to_critical, 30);
      const n = await page.evaluate(() => Number(document.body.dataset.loaded || 0));
      await page.click('#refresh');
      await loaded(page, n + 1);
      await page.click('#ds-chart li[data-datastore="ds-free-ok"] button.open');
      await page.waitForSelector('#ds-capacity svg g[data-series="projection"]', { timeout: 15000 })
        .catch(() => {});
      const c = await page.$eval('#ds-capacity', (fig) => {
        const line = (n) => {
          const l = fig.querySelector('line.threshold[data-threshold="' + n + '"]');
          return l ? { y: Number(l.getAttribute('y1')), value: Number(l.dataset.value),
            colour: getComputedStyle(l).stroke } : null;
        };
        const path = (n) => {
          const p = fig.querySelector('g[data-series="' + n + '"] path');
          return p ? { d: p.getAttribute('d'), len: p.getTotalLength() } : null;
        };
        return { hidden: fig.hidden, caption: fig.querySelector('figcaption').textContent,
          warning: line('warning'), critical: line('critical'), history: path('history'),
          projection: path('projection'), text: fig.querySelector('p.runway').textContent,
          label: fig.querySelector('svg').getAttribute('aria-label') };
      });
      check('the chart is shown', !c.hidden);
      eq('its caption', c.caption, 'Free space of ds-free-ok');
      check('warning threshold line at 30 % of capacity', c.warning &&
        c.warning.value === Math.trunc(0.30 * CAP), JSON.stringify(c.warning));
      check('critical threshold line at 10 % of capacity', c.critical &&
        c.critical.value === Math.trunc(0.10 * CAP), JSON.stringify(c.critical));
      check('the critical line is drawn below the warning line', c.warning && c.critical &&
        c.critical.y > c.warning.y, JSON.stringify([c.warning, c.critical]));
      const crit = await page.$eval('.sev.critical', (e) => getComputedStyle(e).color);
      eq('the critical line has the critical colour', c.critical && c.critical.colour, crit);
      // 10 planted, the first poll's and the one asked for above
      check('the history is a line through 12 points', c.history &&
        (c.history.d.match(/[ML]/g) || []).length === 12 && c.history.len > 0,
        JSON.stringify(c.history));
      check('the projection is drawn', c.projection && c.projection.len > 0,
        JSON.stringify(c.projection));
      check('the projection crosses the critical line', (() => {
        if (!c.projection || !c.critical) return false;
        const ys = c.projection.d.split(/[ML]/).filter(Boolean).map((p) => Number(p.split(' ')[1]));
        return ys.length === 2 && ys[0] < c.critical.y && ys[1] > c.critical.y;
      })(), c.projection && c.projection.d);
      check('the runway is written out', /10 days to warning, 30 days to critical/.test(c.text),
        c.text);
      check('a screen reader hears it', /30 days to critical/.test(c.label || ''), c.label);
      eq('the opened name says expanded', await page.getAttribute(
        '#ds-chart li[data-datastore="ds-free-ok"] button.open', 'aria-expanded'), 'true');
      await page.screenshot({ path: SHOT.replace(/\.png$/, '-capacity.png'), fullPage: true });
    });

  await step('a click on the Critical tile shows the critical findings only', async () => {
    await page.click('[data-tile="critical"] a');
    await rowsShown(page, crit.total);
    eq('the severity filter follows the tile', await page.inputValue('#f-severity'), 'critical');
    const r = await rows(page);
    eq('rows after severity=critical', r.length, crit.total);
    check('only critical rows after the filter', r.every((x) => x.severity === 'critical'),
      JSON.stringify(r.map((x) => x.severity)));
    check('the planted warning ds-crowded is gone', !r.some((x) => x.object === 'ds-crowded'));
    check('ds-free-crit is still there', r.some((x) => x.object === 'ds-free-crit'));
    check('the filter is in the URL', page.url().includes('severity=critical'), page.url());
  });

  await step('the Resolved in 24 h tile opens the findings fixed, as it counts them', async () => {
    await page.click('[data-tile="resolved24"] a');
    await page.waitForFunction(() => location.hash.includes('resolution=fixed'));
    check('the tile asks for fixed findings', page.url().includes('resolution=fixed'), page.url());
    eq('the status filter follows the tile', await page.inputValue('#f-status'), 'resolved');
    await page.click('[data-tile="critical"] a');
    await rowsShown(page, crit.total);
  });

  await step('a finding opened with the keyboard shows remediation, rationale and evidence',
    async () => {
      const btn = page.locator('#findings tbody tr.finding', { hasText: 'ds-free-crit' })
        .locator('button.expand');
      await btn.focus();
      await page.keyboard.press('Enter');
      eq('expand button says expanded', await btn.getAttribute('aria-expanded'), 'true');
      const detailId = await btn.getAttribute('aria-controls');
      const detail = page.locator('#' + detailId);
      check('details row is visible', await detail.isVisible());
      const dfs = checks.checks.find((c) => c.id === 'datastore-free-space');
      const shown = (await detail.locator('pre.remediation').innerText()).replace(/\s+/g, ' ')
        .trim();
      eq('remediation shown for ds-free-crit, with its name', shown, dfs.remediation
        .replace(/<ds>/g, 'ds-free-crit').replace(/\s+/g, ' ').trim());
      const dtext = await detail.innerText();
      check('rationale shown', dtext.includes(dfs.rationale.slice(0, 40)));
      check('evidence shown', /free_pct/.test(dtext), dtext.slice(0, 300));

      await page.screenshot({ path: SHOT, fullPage: true });
      console.log('screenshot: ' + SHOT);
    });

  await step('the object search finds ds-crowded', async () => {
    await page.selectOption('#f-severity', '');
    await page.selectOption('#f-view', 'flat');
    await page.fill('#f-object', 'crowd');
    await page.waitForFunction(() => {
      const t = document.querySelectorAll('#findings tbody tr.finding');
      return t.length === 1 && t[0].innerText.includes('ds-crowded');
    }, null, { timeout: 15000 }).catch(() => {});
    const r = await rows(page);
    eq('object search "crowd"', JSON.stringify(r.map((x) => x.object)), '["ds-crowded"]');
    await page.click('#filters button[type="reset"]');
  });

  await step('"Poll now" asks for the token, refuses a wrong one, accepts the right one',
    async () => {
      await page.click('#poll-now');
      await page.waitForSelector('#token-form:not([hidden])', { timeout: 10000 })
        .catch(() => {});
      check('the token field appears after a 401', await page.isVisible('#token'));
      await page.fill('#token', 'not-the-token');
      await page.click('#token-form button[type="submit"]');
      await loaded(page, 2);
      await page.click('#poll-now');
      await page.waitForFunction(
        () => /rejected/.test(document.getElementById('status').textContent),
        null, { timeout: 10000 }).catch(() => {});
      check('a wrong token is reported', /rejected/.test(await page.textContent('#status')),
        await page.textContent('#status'));
      await page.fill('#token', api.token);
      await page.click('#token-form button[type="submit"]');
      await page.click('#poll-now');
      await page.waitForFunction(
        () => /Poll queued/.test(document.getElementById('status').textContent),
        null, { timeout: 10000 }).catch(() => {});
      const banner = await page.textContent('#status');
      check('poll accepted with the token', /Poll queued for lab/.test(banner), banner);
    });
}

/* With the simulator gone, a poll fails: the banner across the page names the vCenter and
 * what went wrong, and the tiles dim. */
async function simulatorStopped(page, base, api, sim) {
  await step('with the simulator stopped, the banner names the vCenter and the tiles dim', async () => {
    await stop(sim.proc);
    const hdr = { Authorization: 'Bearer ' + api.token };
    let lab = null;
    for (const until = Date.now() + 60000; Date.now() < until;) {
      // Asked again until a poll after the stop has failed (one may still be running).
      await fetch(base + '/api/v1/polls?vcenter=lab', { method: 'POST', headers: hdr });
      await new Promise((res) => setTimeout(res, 1000));
      const s = await getJSON(base, '/api/v1/summary');
      lab = s.vcenters.find((v) => v.name === 'lab');
      if (lab && lab.last_poll && !lab.last_poll.ok) break;
    }
    check('the API says the poll failed', lab && lab.last_poll && !lab.last_poll.ok, JSON.stringify(lab));
    const n = await page.evaluate(() => Number(document.body.dataset.loaded || 0));
    await page.click('#refresh');
    await loaded(page, n + 1);
    check('the freshness banner is shown', await page.isVisible('#fresh'));
    const text = await page.textContent('#fresh div[data-vcenter="lab"]').catch(() => '');
    check('it names lab, the age of its data and the error',
      /^lab: data \d+ (s|min) old: .+/.test(text || '') && (text || '').includes(lab && lab.error ? lab.error.slice(0, 20) : '?'),
      text);
    check('the tiles are dimmed', await page.$eval('#tiles', (e) => e.classList.contains('dim') &&
      Number(getComputedStyle(e).opacity) < 1));
    check('the Unity array, still answering, is not in the banner',
      !(await page.$('#fresh div[data-vcenter="unity1"]')));
    await page.screenshot({ path: SHOT.replace(/\.png$/, '-stale.png'), fullPage: false });
  });
}

/* Until no vCenter or array is being polled and each has been polled once (at most 60 s). */
async function quiet(api) {
  for (const until = Date.now() + 60000; Date.now() < until;) {
    const s = await getJSON(api.base, '/api/v1/summary');
    if (s.vcenters.concat(s.arrays || []).every((v) => v.polled_once && !v.polling)) return;
    await new Promise((res) => setTimeout(res, 250));
  }
}

/* Three hundred findings of one check (a big estate's identical datastore lines) are one
 * group line; opened, it shows 50 and then all on request. Planted in the real database and
 * removed again, so the steps after see the estate as it was. */
async function manyFindings(page, api) {
  const sql = (code) => require('child_process').spawnSync('/usr/bin/python3', ['-c', [
    'import sqlite3, sys, time', 'con = sqlite3.connect(sys.argv[1])',
    'now = int(time.time() * 1000)', code,
    // What every writer of the daemon adds (db/changes.c): the API keeps its answers until
    // the content stamp moves, so rows planted without it are seen only after a poll changes
    // something.
    'con.execute("INSERT INTO data_changes (what, n) VALUES (\'findings\', 1)'
    + ' ON CONFLICT (what) DO UPDATE SET n = n + 1")', 'con.commit()'].join('\n'), api.db],
  { encoding: 'utf8' });
  await step('three hundred findings of one check are one group, opened 50 at a time', async () => {
    const before = api.all.findings.filter((f) => f.check === 'datastore-size').length;
    const g = '#findings tr.group[data-check="datastore-size"]';
    // Planted rows are not what any check produced: an evaluation of lab (the Unity array's
    // first poll ending late, or a scheduled poll) marks them resolved. So plant when no
    // source is being polled, and when one was evaluated between the plant and the page's
    // read anyway (the planted rows are no longer open in the database), plant again: the
    // count asserted is the page's answer to a database that holds the 300 open rows.
    let count = null, openRows = '?';
    try {
      await quiet(api);
      for (let attempt = 1; attempt <= 3; attempt++) {
        const plant = sql('con.execute("DELETE FROM findings WHERE fingerprint LIKE \'bulk%\'")\n'
          + 'con.executemany("INSERT INTO findings (fingerprint, check_id, vcenter,'
          + ' object_type, object_moref, object_name, severity, status, message, first_seen_ms,'
          + ' last_seen_ms) VALUES (?, \'datastore-size\', \'lab\', \'datastore\', ?, ?,'
          + ' \'warning\', \'open\', \'planted\', ?, ?)", [(\'bulk%012d\' % i,'
          + ' \'datastore-bulk-%d\' % i, \'ds-bulk-%03d\' % i, now, now) for i in range(300)])');
        check('300 findings planted', plant.status === 0, plant.stderr);
        await page.evaluate(() => history.replaceState(null, '', location.pathname));
        await page.reload();
        await loaded(page);
        count = await page.getAttribute(g, 'data-count');
        const open = require('child_process').spawnSync('/usr/bin/python3', ['-c',
          'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT count(*) FROM'
          + ' findings WHERE fingerprint LIKE \'bulk%\' AND status = \'open\'").fetchone()[0])',
          api.db], { encoding: 'utf8' });
        openRows = open.stdout.trim();
        if (openRows === '300') break;
        console.log('# an evaluation resolved the planted findings (' + open.stdout.trim()
          + ' open, attempt ' + attempt + '): planting again');
        await quiet(api);
      }
      eq('one group line for the check', await page.$$eval(g, (t) => t.length), 1);
      check('it counts them all', count === String(before + 300),
        'got ' + count + ', want ' + (before + 300) + ' (planted rows open in the database: '
        + openRows + ')');
      eq('the groups are still one per check', await page.$$eval('#findings tr.group', (t) => t.length),
        new Set(api.all.findings.map((f) => f.check)).size);
      await page.click(g + ' button.expand');
      eq('an opened group shows 50 rows', (await rows(page)).length, 50);
      await page.click('#findings tr.group-more button');
      eq('"show all" shows every one', (await rows(page)).length, before + 300);
      eq('no sideways scrolling with 300 rows open (px over)', await overflow(page), 0);
    } finally {
      sql('con.execute("DELETE FROM findings WHERE fingerprint LIKE \'bulk%\'")');
      await page.reload();
      await loaded(page);
    }
  });
}

/* At 1280, 1400 and 1920 px nothing scrolls sideways, with a group and a finding open. */
async function widths(ctx, base) {
  const page = await ctx.newPage();
  watch(page, 'widths');
  for (const w of [1280, 1400, 1920]) {
    await step('at ' + w + ' px wide nothing scrolls sideways', async () => {
      await page.setViewportSize({ width: w, height: 900 });
      await page.goto(base + '/');
      await loaded(page);
      await page.click('#findings tr.group[data-check="datastore-free-space"] button.expand');
      await page.click('#findings tr.finding[data-object="ds-free-crit"] button.expand');
      eq('no sideways scrolling at ' + w + ' px (px over)', await overflow(page), 0);
      const main = await page.$eval('main', (m) => { const r = m.getBoundingClientRect(); return [r.left, innerWidth - r.right]; });
      check('the content is centred at ' + w + ' px', Math.abs(main[0] - main[1]) <= 2, JSON.stringify(main));
      const ticks = await page.$$eval('#hist-polls svg text.tick', (ts) => ts.map((t) => {
        const b = t.getBBox();
        return b.x;
      }));
      check('the duration axis labels are not clipped on the left', ticks.every((x) => x >= 0), JSON.stringify(ticks));
      const shot = SHOT.replace(/\.png$/, '-' + w + '.png');
      await page.screenshot({ path: shot, fullPage: true });
      console.log('screenshot: ' + shot);
    });
  }
  await page.close();
}

async function narrow(ctx, base) {
  const page = await ctx.newPage();
  watch(page, 'narrow');
  await step('at 390 px wide the page does not scroll sideways', async () => {
    await page.setViewportSize({ width: 390, height: 800 });
    await page.goto(base + '/');
    await loaded(page);
    const width = await page.evaluate(() => document.documentElement.scrollWidth);
    check('no sideways scrolling at 390 px', width <= 390, width + ' px wide');
    await page.click('#findings tr.group[data-check="datastore-free-space"] button.expand');
    eq('no sideways scrolling at 390 px with a group open (px over)', await overflow(page), 0);
    const card = await page.$eval('#findings tr.finding', (tr) => tr.getBoundingClientRect().height);
    check('a finding is a compact card on a phone', card < 140, card + ' px tall');
    const shot = SHOT.replace(/\.png$/, '-narrow.png');
    await page.screenshot({ path: shot, fullPage: false });
    console.log('screenshot: ' + shot);
  });
  await page.close();
}

/* With [server] auth = all, the page itself still loads (it holds no data), asks for the token
 * and then shows the findings. */
async function authAll(ctx, base, token, total) {
  const page = await ctx.newPage();
  // The 401s it provokes are logged by Chromium as console errors.
  watch(page, 'auth=all', /./);
  await step('with auth = all the page asks for the token, then shows the findings', async () => {
    const resp = await page.goto(base + '/#view=flat');
    eq('auth=all: the page loads without a token', resp && resp.status(), 200);
    await page.waitForSelector('#token-form:not([hidden])', { timeout: 15000 }).catch(() => {});
    check('auth=all: the token field appears', await page.isVisible('#token'));
    await page.fill('#token', token);
    await page.click('#token-form button[type="submit"]');
    await page.waitForFunction(
      (n) => document.querySelectorAll('#findings tbody tr.finding').length === n,
      Math.min(total, 100), { timeout: 15000 }).catch(() => {});
    eq('auth=all: findings shown after the token', (await rows(page)).length,
      Math.min(total, 100));
  });
  await page.close();
}

async function main() {
  let sim, unity, token, config, serve, api, ctx;
  await step('the simulator, vslint serve and Chromium start', async () => {
    const { chromium } = loadPlaywright();
    sim = await startSim();
    // The Unity responder: its pools back the violations scenario's ds-pool-* datastores.
    unity = await startSim(UNITY_SIM, ['-stop-after-seconds', '600']);
    token = crypto.randomBytes(24).toString('hex');
    const tokenFile = writeFile('token', token + '\n', 0o600);
    const pw = writeFile('password', 'vslint-secret\n', 0o600);
    config = (port, extra) => [
      '[database]', 'path = ' + path.join(work, 'vslint.db'), '',
      '[vcenter lab]', 'url = ' + sim.url, 'user = vslint', 'password_file = ' + pw,
      'interval = 300', '',
      '[array unity1]', 'type = unity', 'url = ' + unity.url, 'user = vslint',
      'password_file = ' + pw, '',
      '[server]', 'listen = 127.0.0.1:' + port, 'token_file = ' + tokenFile, extra || '', '']
      .join('\n');
    const conf = writeFile('vslint.conf', config(await freePort()));
    serve = await startServe('serve', conf);
    api = {
      token,
      summary: await getJSON(serve.base, '/api/v1/summary'),
      checks: await getJSON(serve.base, '/api/v1/checks'),
      crit: await getJSON(serve.base, '/api/v1/findings?severity=critical&limit=1000'),
      all: await getJSON(serve.base, '/api/v1/findings?limit=1000'),
      history: await getJSON(serve.base, '/api/v1/history?days=30'),
      pools: await getJSON(serve.base, '/api/v1/inventory/pools?limit=1000'),
      db: path.join(work, 'vslint.db'),
      base: serve.base,
    };
    ctx = await launch(chromium);
  });
  if (!ctx) return;
  try {
    const page = await ctx.newPage();
    // The 401s of "poll now" are expected here; Chromium logs each as a console error.
    watch(page, 'dashboard', /401/);
    await dashboard(page, serve.base, api);
    await manyFindings(page, api);
    await widths(ctx, serve.base);
    await narrow(ctx, serve.base);
    await simulatorStopped(page, serve.base, api, sim);
    await page.close();

    await step('vslint serve exits 0 on SIGTERM', async () => {
      eq('vslint serve exits 0 on SIGTERM', await stop(serve.proc), 0);
    });
    let serveAll;
    await step('vslint serve with auth = all starts', async () => {
      const confAll = writeFile('vslint-all.conf', config(await freePort(), 'auth = all'));
      serveAll = await startServe('serve-all', confAll, token);
    });
    if (serveAll) {
      await authAll(ctx, serveAll.base, token, api.all.total);
      await stop(serveAll.proc);
    }
  } finally {
    await ctx.close();
  }
}

run('test_dashboard.js', 'e2e.dashboard', main);
