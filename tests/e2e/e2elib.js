/* What the browser tests (tests/e2e/test_*.js) share: their cases (named steps of checks,
 * written as JUnit XML for scripts/test.sh), the simulator and other processes they start,
 * headless Chromium through playwright-core, and the run that ties them together (a watchdog,
 * the cleanup, the exit status). */
'use strict';

const { spawn } = require('child_process');
const fs = require('fs');
const net = require('net');
const os = require('os');
const path = require('path');
const readline = require('readline');

const ROOT = process.env.SOURCE_ROOT || path.resolve(__dirname, '../..');
const VSLINT = process.env.VSLINT || path.join(ROOT, 'build/vslint');
const VCSIM = process.env.VCSIM || path.join(ROOT, 'build/tests/sim/vcsim-vslint');
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const DEADLINE_MS = 240000;
let suite = 'test', classname = 'e2e';

/* ---------- cases: named steps of checks, each reporting every mismatch ---------- */

const cases = [];
let current = null; /* the case of the step running */
let aborted = null; /* the name of the step that threw: the steps after it are skipped */

function newCase(name) {
  const c = { name, failures: [], checked: 0, skipped: null };
  cases.push(c);
  return c;
}

/* A check of the step running, or of the case `into` (a page's error watch). */
function check(what, cond, detail, into) {
  const c = into || current || newCase('checks outside any step');
  c.checked++;
  if (!cond) c.failures.push(what + (detail !== undefined ? ': ' + detail : ''));
}
function eq(what, got, want) {
  check(what, got === want, 'got ' + JSON.stringify(got) + ', want ' + JSON.stringify(want));
}

async function step(name, fn) {
  const c = newCase(name);
  if (aborted) {
    c.skipped = 'not run: step "' + aborted + '" did not finish';
    return;
  }
  current = c;
  try {
    await fn();
  } catch (e) {
    c.failures.push('aborted: ' + (e && e.stack ? e.stack : e));
    aborted = name;
  } finally {
    current = null;
  }
}

const failed = () => cases.filter((c) => !c.skipped && c.failures.length);

/* The cases as JUnit XML in E2E_RESULTS (when set), for scripts/test.sh to count. */
function writeResults() {
  const file = process.env.E2E_RESULTS;
  if (!file) return;
  const esc = (s) => String(s).replace(/[\x00-\x08\x0b\x0c\x0e-\x1f]|\x1b\[[0-9;]*m/g, '')
    .replace(/[<>&"]/g, (ch) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;' })[ch]);
  const skipped = cases.filter((c) => c.skipped).length;
  const out = ['<?xml version="1.0" encoding="UTF-8"?>', '<testsuites>',
    '  <testsuite name="' + suite + '" tests="' + cases.length + '" failures="' +
    failed().length + '" skipped="' + skipped + '">'];
  for (const c of cases) {
    out.push('    <testcase classname="' + classname + '" name="' + esc(c.name) + '">');
    if (c.skipped) out.push('      <skipped message="' + esc(c.skipped) + '"/>');
    else if (c.failures.length) {
      out.push('      <failure message="' + esc(c.failures[0].split('\n')[0]) + '">' +
        esc(c.failures.join('\n')) + '</failure>');
    }
    out.push('    </testcase>');
  }
  out.push('  </testsuite>', '</testsuites>', '');
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, out.join('\n'));
}

/* ---------- processes ---------- */

const children = [];
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'vslint-e2e-'));

/* The vCenter simulator on the violations scenario, or another responder (bin, args) that
 * prints its URL on its first line, such as the Unity responder. */
function startSim(bin, args) {
  const proc = spawn(bin || VCSIM, args || ['-scenario', 'violations', '-page-size', '100',
    '-stop-after-seconds', '600'], { stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(proc);
  let err = '';
  proc.stderr.on('data', (d) => { err = (err + d).slice(-4000); });
  return new Promise((resolve, reject) => {
    const rl = readline.createInterface({ input: proc.stdout });
    rl.once('line', (line) => {
      if (line.startsWith('http')) resolve({ proc, url: line.trim() });
      else reject(new Error('simulator printed ' + JSON.stringify(line) + ': ' + err));
    });
    proc.once('exit', (code) => reject(new Error('simulator exited ' + code + ': ' + err)));
  });
}

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

function writeFile(name, text, mode) {
  const p = path.join(work, name);
  fs.writeFileSync(p, text, { mode: mode || 0o644 });
  return p;
}

function tail(file) {
  try { return fs.readFileSync(file, 'utf8').split('\n').slice(-30).join('\n'); } catch (e) { return ''; }
}

function stop(proc, timeoutMs) {
  return new Promise((resolve) => {
    if (proc.exitCode !== null || proc.signalCode !== null) return resolve(proc.exitCode);
    const t = setTimeout(() => proc.kill('SIGKILL'), timeoutMs || 20000);
    proc.once('exit', (code, sig) => { clearTimeout(t); resolve(sig ? sig : code); });
    proc.kill('SIGTERM');
  });
}

/* ---------- the browser ---------- */

function loadPlaywright() {
  const dir = path.join(ROOT, 'tests/tools/node_modules/playwright-core');
  if (!fs.existsSync(dir)) {
    throw new Error('playwright-core is not installed: run `npm install` in tests/tools ' +
      '(scripts/test.sh does)');
  }
  if (!fs.existsSync(CHROMIUM)) {
    throw new Error(CHROMIUM + ' is missing: apt-get install chromium (scripts/install-deps.sh)');
  }
  return require(dir);
}

async function launch(chromium) {
  const profile = fs.mkdtempSync(path.join(work, 'chromium-'));
  // A persistent context is a fresh --user-data-dir that playwright-core manages; the flags
  // keep Chromium from reaching out to the network on its own.
  return chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1280, height: 900 },
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

/* Every JavaScript error, console error (but those matching `expected`) and failed request on
 * the page is a failure of the page's own case. */
function watch(page, label, expected) {
  const c = newCase(label + ': no JavaScript error, console error or failed request');
  page.on('pageerror', (e) => check(label + ': no JavaScript error', false, e.message, c));
  page.on('console', (m) => {
    if (m.type() === 'error' && !(expected && expected.test(m.text()))) {
      check(label + ': no console error', false, m.text(), c);
    }
  });
  page.on('requestfailed', (r) => check(label + ': request ' + r.url() + ' succeeds', false,
    r.failure() && r.failure().errorText, c));
}

async function cleanup() {
  for (const p of children) await stop(p, 5000);
  if (!failed().length && !process.env.E2E_KEEP) fs.rmSync(work, { recursive: true, force: true });
}

/* Writes the results, prints the failed cases and exits. */
function finish() {
  writeResults();
  const bad = failed();
  const checked = cases.reduce((n, c) => n + c.checked, 0);
  if (bad.length) {
    console.log(suite + ': ' + bad.length + ' of ' + cases.length + ' cases failed:');
    for (const c of bad) {
      console.log('  ' + c.name + ':');
      for (const f of c.failures) console.log('    ' + f);
    }
    console.log('work directory kept: ' + work);
    process.exit(1);
  }
  console.log(suite + ': ' + cases.length + ' cases (' + checked + ' checks) passed');
}

/* Runs main() (async) as the test called name (its JUnit suite; cases in classname), with a
 * watchdog, then stops every process started, writes the results and exits. */
function run(name, cls, main) {
  suite = name;
  classname = cls;
  const watchdog = setTimeout(() => {
    (current || newCase('the test finishes in time')).failures.push(
      'gave up after ' + DEADLINE_MS / 1000 + ' s');
    cleanup().then(finish);
  }, DEADLINE_MS);

  main().then(async () => {
    clearTimeout(watchdog);
    await cleanup();
    finish();
  }, async (e) => {
    clearTimeout(watchdog);
    newCase('the test runs to its end').failures.push(e && e.stack ? e.stack : String(e));
    await cleanup();
    finish();
  });
}

module.exports = {
  ROOT, VSLINT, VCSIM, CHROMIUM, children, work, newCase, check, eq, step, startSim, freePort,
  writeFile, tail, stop, loadPlaywright, launch, watch, run,
};
