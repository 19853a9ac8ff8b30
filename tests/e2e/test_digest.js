#!/usr/bin/env node
/* Browser test of the e-mail digest's HTML part: polls the simulator (scenario "violations"),
 * has `vslint digest --dry-run` write the message, takes the HTML part out with Python's
 * standard MIME parser, and opens it in headless Chromium (Debian's, driven by playwright-core)
 * in light and dark mode, as a mail client that renders HTML would. Checks what a reader sees:
 * the subject as the heading, the sections in order, the new findings' rows, no script and no
 * request for anything remote, text legible against the background in both modes, nothing wider
 * than a phone. Keeps screenshots of both modes with the test output (E2E_SHOT_DIR).
 *
 * Environment (tests/e2e/meson.build): VSLINT, VCSIM, SOURCE_ROOT, E2E_SHOT_DIR, E2E_RESULTS
 * (the cases as JUnit XML); CHROMIUM overrides /usr/bin/chromium. Exit 0 when every case
 * passed, 1 otherwise. */
'use strict';

const { spawnSync } = require('child_process');
const fs = require('fs');
const path = require('path');
const lib = require('./e2elib');

const { ROOT, VSLINT, newCase, check, eq, step } = lib;
const SHOT_DIR = process.env.E2E_SHOT_DIR || path.join(ROOT, 'build/test-results');
const SECTIONS = ['vcenters', 'new', 'resolved', 'open', 'waivers', 'runway', 'score'];

function run(cmd, args, input) {
  const r = spawnSync(cmd, args, { input, encoding: 'utf8', maxBuffer: 64 << 20 });
  if (r.status !== 0) throw new Error(cmd + ' ' + args.join(' ') + ' exited ' + r.status + ': ' + r.stderr);
  return r.stdout;
}

/* The subject and the HTML part, as Python's email package (policy.default) reads them. */
function htmlPart(message) {
  const py = 'import email, email.policy, json, sys\n' +
    'm = email.message_from_binary_file(sys.stdin.buffer, policy=email.policy.default)\n' +
    'print(json.dumps({"subject": str(m["Subject"]),' +
    ' "html": m.get_body(("html",)).get_content()}))\n';
  return JSON.parse(run('/usr/bin/python3', ['-c', py], message));
}

/* WCAG contrast ratio of two computed colours "rgb(r, g, b)". */
function contrast(a, b) {
  const lum = (c) => {
    const [r, g, bl] = c.match(/\d+(\.\d+)?/g).slice(0, 3).map(Number).map((v) => {
      const s = v / 255;
      return s <= 0.03928 ? s / 12.92 : Math.pow((s + 0.055) / 1.055, 2.4);
    });
    return 0.2126 * r + 0.7152 * g + 0.0722 * bl;
  };
  const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p);
  return (x + 0.05) / (y + 0.05);
}

/* What the reader sees: colours resolved against the canvas of the colour scheme in force. */
function looks(page) {
  return page.evaluate(() => {
    const probe = document.createElement('div');
    probe.style.background = 'Canvas';
    document.body.append(probe);
    const canvas = getComputedStyle(probe).backgroundColor;
    probe.remove();
    const col = (sel) => { const e = document.querySelector(sel); return e && getComputedStyle(e).color; };
    const badge = document.querySelector('h2#new + p + table span, h2#new + table span');
    return {
      canvas,
      body: getComputedStyle(document.body).backgroundColor,
      h1: col('h1'),
      cell: col('td'),
      badge: badge && { fg: getComputedStyle(badge).color, bg: getComputedStyle(badge).backgroundColor },
      scrollWidth: document.documentElement.scrollWidth,
    };
  });
}

async function main() {
  const sim = await lib.startSim();
  const pw = lib.writeFile('password', 'vslint-secret\n', 0o600);
  const db = path.join(lib.work, 'vslint.db');
  const conf = lib.writeFile('vslint.conf',
    '[database]\npath = ' + db + '\n\n[vcenter lab]\nurl = ' + sim.url + '\nuser = vslint\n' +
    'password_file = ' + pw + '\n\n[digest]\nsmtp_url = smtp://127.0.0.1:9\n' +
    'from = vslint@example.com\nto = storage@example.com\ntimezone = UTC\n' +
    'public_url = https://vslint.example.com/\n');
  let mail;
  await step('vslint digest --dry-run writes a message with an HTML part', async () => {
    run(VSLINT, ['check', '-c', conf, '--fail-on', 'never']);
    mail = htmlPart(run(VSLINT, ['digest', '-c', conf, '--dry-run']));
    check('the subject carries the counts', /^vslint: \d+ new, 0 resolved, \d+ open \(\d+ critical\)$/
      .test(mail.subject), mail.subject);
    fs.mkdirSync(SHOT_DIR, { recursive: true });
    fs.writeFileSync(path.join(SHOT_DIR, 'digest.html'), mail.html);
  });
  if (!mail) return;

  const ctx = await lib.launch(lib.loadPlaywright().chromium);
  try {
    const page = await ctx.newPage();
    lib.watch(page, 'digest');
    const requests = [];
    page.on('request', (r) => requests.push(r.url()));
    for (const scheme of ['light', 'dark']) {
      await step('the digest reads in ' + scheme + ' mode', async () => {
        await page.emulateMedia({ colorScheme: scheme });
        await page.setViewportSize({ width: 1000, height: 900 });
        await page.setContent(mail.html, { waitUntil: 'load' });
        eq('the heading is the subject', (await page.textContent('h1')).trim(), mail.subject);
        eq('the sections, in order', (await page.$$eval('h2', (hs) => hs.map((h) => h.id))).join(' '),
          SECTIONS.join(' '));
        const n = Number(/^vslint: (\d+) new/.exec(mail.subject)[1]);
        eq('one row per new finding', await page.$$eval('h2#new ~ table', (ts) =>
          ts[0].querySelectorAll('tr').length), n);
        check('ds-crowded is among the open findings',
          (await page.textContent('body')).includes('ds-crowded'));
        eq('no script', await page.$$eval('script', (s) => s.length), 0);
        const l = await looks(page);
        const bg = /rgba\(0, 0, 0, 0\)/.test(l.body) ? l.canvas : l.body;
        check('the background follows the scheme (' + bg + ')',
          scheme === 'dark' ? contrast(bg, 'rgb(0, 0, 0)') < 2 : contrast(bg, 'rgb(255, 255, 255)') < 1.1, bg);
        check('the heading is legible (' + l.h1 + ' on ' + bg + ')', contrast(l.h1, bg) >= 7,
          contrast(l.h1, bg).toFixed(2));
        check('table text is legible (' + l.cell + ' on ' + bg + ')', contrast(l.cell, bg) >= 7,
          contrast(l.cell, bg).toFixed(2));
        check('a severity badge is legible', l.badge && contrast(l.badge.fg, l.badge.bg) >= 4.5,
          JSON.stringify(l.badge));
        const shot = path.join(SHOT_DIR, 'digest-' + scheme + '.png');
        await page.screenshot({ path: shot, fullPage: true });
        console.log('screenshot: ' + shot);
        await page.setViewportSize({ width: 390, height: 844 });
        check('nothing is wider than a phone', (await looks(page)).scrollWidth <= 390,
          (await looks(page)).scrollWidth);
      });
    }
    await step('nothing remote is requested', async () => {
      eq('requests made', JSON.stringify(requests), '[]');
    });
  } finally {
    await ctx.close();
  }
}

lib.run('test_digest.js', 'e2e.digest', main);
