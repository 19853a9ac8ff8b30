#!/usr/bin/env python3
"""The API under wrk on a large estate, idle and while polls write, for one or more vslint
binaries alternated (e.g. main's and a branch's), so that a shared machine's load falls on both.

    python3 bench/bench_api.py --vms 20000 --rounds 2 old=/tmp/vslint-main new=build/vslint

It starts the synthetic responder (tests/sim/synth) with --vms VMs, fills one database with
`vslint collect` and `vslint check --offline` of the first binary (or copies --db), then per
round and binary: `vslint serve` on a copy of it, waits for its first poll, runs wrk on
/api/v1/summary, a findings page and /metrics idle, then again while polls run back to back
(POST /api/v1/polls), counting the answers the cache rendered meanwhile (its misses, from
/metrics' vslint_api_answers_total). With --incremental the vCenter is followed (incremental = true) and the
second phase runs while its rounds commit, quiet ones (each confirms the snapshot) and, with
--mutate-every S, one in S seconds that applies POST /synth/mutate?pct=--mutate-pct changes.
Prints p50 / p99 / requests a second and the load average. wrk saturates the daemon, so its p99
is mostly time spent queued behind other requests; with --paced RATE each request is also asked
by one keep-alive client at RATE requests a second (a few dashboards and a Prometheus scrape,
not a flood), its latency counted from when it was due, so a stall counts for every request it
delays: p50 / p99 / max of that per path, idle and while writing. Nothing is asserted."""
import argparse
import http.client
import os
import threading
import urllib.request
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_scale import (PASSWORD, USER, Poller, free_port, stop, wait_first_poll,  # noqa: E402
                         wrk)

PATHS = [('summary', '/api/v1/summary'),
         ('findings page', '/api/v1/findings?severity=warning&limit=100'),
         ('metrics', '/metrics')]
TOKEN = 'bench-token-0123456789abcdef'


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def load():
    with open('/proc/loadavg') as f:
        return float(f.read().split()[0])


def config(work, name, db, url, port, incremental=False):
    conf = os.path.join(work, name + '.conf')
    with open(conf, 'w') as f:
        f.write('[database]\npath = %s\n\n[server]\nlisten = 127.0.0.1:%d\ntoken_file = %s\n\n'
                '[vcenter synth]\nurl = %s\nuser = %s\npassword_file = %s\nmax_objects = 500\n'
                'timeout = 3600\ninterval = 86400\n' % (db, port, os.path.join(work, 'token'),
                                                        url, USER, os.path.join(work, 'pw')))
        if incremental:
            f.write('incremental = true\n')
    return conf


class Mutator(threading.Thread):
    """POST /synth/mutate?pct=P to the synthetic responder every `every` seconds: rounds that
    apply changes (and evaluate) among the quiet ones."""

    def __init__(self, base, every, pct):
        super().__init__(daemon=True)
        self.base, self.every, self.pct = base, every, pct
        self.stop = threading.Event()
        self.polls = 0  # mutations made, reported where the polls are

    def run(self):
        while not self.stop.wait(self.every):
            req = urllib.request.Request('%s/synth/mutate?pct=%d' % (self.base, self.pct),
                                         data=b'', method='POST')
            urllib.request.urlopen(req, timeout=30).read()
            self.polls += 1


def renders(base):
    """vslint_api_answers_total{how="rendered"} of /metrics: the answers the cache missed."""
    with urllib.request.urlopen(base + '/metrics', timeout=30) as r:
        for line in r.read().decode().splitlines():
            if line.startswith('vslint_api_answers_total{how="rendered"}'):
                return int(float(line.rsplit(' ', 1)[1]))
    return 0


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100.0 * (len(xs) - 1))))] if xs else float('nan')


def paced(base, path, seconds, rate):
    """One keep-alive client asking path at rate requests a second for seconds; each latency
    from the time the request was due (not sent), in ms."""
    host, port = base[len('http://'):].split(':')
    conn = http.client.HTTPConnection(host, int(port), timeout=30)
    lat, errors, t0 = [], 0, time.monotonic()
    for i in range(int(seconds * rate)):
        due = t0 + i / rate
        wait = due - time.monotonic()
        if wait > 0:
            time.sleep(wait)
        try:
            conn.request('GET', path)
            r = conn.getresponse()
            r.read()
            if r.status != 200:
                errors += 1
        except (OSError, http.client.HTTPException):
            errors += 1  # counted as slow as it was, not left out
            conn.close()
            conn = http.client.HTTPConnection(host, int(port), timeout=30)
        lat.append((time.monotonic() - due) * 1000.0)
    conn.close()
    return {'p50': pct(lat, 50), 'p99': pct(lat, 99), 'max': max(lat) if lat else float('nan'),
            'n': len(lat), 'errors': errors, 'load': load()}


def measure(a, base, path):
    """wrk on path, with the load average before and the answers rendered meanwhile."""
    la, r0 = load(), renders(base)
    out = wrk(base + path, a.seconds, threads=2, conns=a.conns)
    return dict(out, load=la, renders=renders(base) - r0)  # (the /metrics read after counts)


def serve_and_measure(a, label, binary, work, seed_db, url):
    db = os.path.join(work, 'serve.db')
    for suffix in ('', '-wal', '-shm'):
        if os.path.exists(db + suffix):
            os.unlink(db + suffix)
    shutil.copy(seed_db, db)
    port = free_port()
    base = 'http://127.0.0.1:%d' % port
    srv = subprocess.Popen([binary, 'serve', '-c', config(work, label, db, url, port,
                                                          a.incremental)],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    out = {}
    try:
        wait_first_poll(base)
        for name, path in PATHS:
            out[(name, 'idle')] = measure(a, base, path)
            log('%s %s idle: %s' % (label, name, out[(name, 'idle')]))
            if a.paced:
                out[(name, 'idle', 'paced')] = paced(base, path, a.seconds, a.paced)
                log('%s %s idle, paced: %s' % (label, name, out[(name, 'idle', 'paced')]))
        if a.incremental:
            p = Mutator(url[:-len('/sdk')], a.mutate_every, a.mutate_pct)
            if a.mutate_every > 0:
                p.start()
        else:
            p = Poller(base, TOKEN)
            p.start()
        time.sleep(1.0)
        for name, path in PATHS:
            out[(name, 'polling')] = measure(a, base, path)
            log('%s %s while polling: %s' % (label, name, out[(name, 'polling')]))
            if a.paced:
                out[(name, 'polling', 'paced')] = paced(base, path, a.seconds, a.paced)
                log('%s %s while polling, paced: %s' % (label, name,
                                                        out[(name, 'polling', 'paced')]))
        p.stop.set()
        if p.is_alive():
            p.join()
        out['polls'] = p.polls
    finally:
        stop(srv)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('binaries', nargs='+', help='LABEL=PATH of a vslint binary')
    ap.add_argument('--vms', type=int, default=20000)
    ap.add_argument('--rounds', type=int, default=2)
    ap.add_argument('--seconds', type=int, default=5)
    ap.add_argument('--conns', type=int, default=4)
    ap.add_argument('--paced', type=float, default=0,
                    help='also ask each path from one keep-alive client at this many requests '
                         'a second (latency from when each was due)')
    ap.add_argument('--db', help='a database of this estate to start from (copied)')
    ap.add_argument('--save-db', help='keep a copy of the filled database here (for --db)')
    ap.add_argument('--synth', default='build/tests/sim/vcsim-synth')
    ap.add_argument('--incremental', action='store_true',
                    help='follow the vCenter: measure while its incremental rounds commit')
    ap.add_argument('--mutate-every', type=float, default=0,
                    help='with --incremental: seconds between changes made in the estate')
    ap.add_argument('--mutate-pct', type=int, default=1,
                    help='with --mutate-every: percent of VMs each change touches (whole)')
    a = ap.parse_args()
    bins = [b.split('=', 1) for b in a.binaries]
    work = tempfile.mkdtemp(prefix='vslint-bench-api-')
    with open(os.path.join(work, 'pw'), 'w') as f:
        f.write(PASSWORD + '\n')
    with open(os.path.join(work, 'token'), 'w') as f:
        f.write(TOKEN + '\n')
    os.chmod(os.path.join(work, 'pw'), 0o600)
    os.chmod(os.path.join(work, 'token'), 0o600)
    sim = subprocess.Popen([a.synth, '-vms', str(a.vms), '-gzip=false'],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    url = sim.stdout.readline().strip()
    results = []
    try:
        seed = os.path.join(work, 'seed.db')
        if a.db:
            shutil.copy(a.db, seed)
        else:
            conf = config(work, 'seed', seed, url, free_port())
            log('filling %s with %d VMs ...' % (seed, a.vms))
            subprocess.run([bins[0][1], 'collect', '-c', conf], check=True,
                           stdout=subprocess.DEVNULL)
            subprocess.run([bins[0][1], 'check', '-c', conf, '--offline', '--fail-on', 'never',
                            '--format', 'json', '-o', os.devnull], check=True)
            if a.save_db:
                shutil.copy(seed, a.save_db)
        for rnd in range(a.rounds):
            for label, binary in (bins if rnd % 2 == 0 else bins[::-1]):
                results.append((label, serve_and_measure(a, label, binary, work, seed, url)))
    finally:
        sim.send_signal(signal.SIGTERM)
        sim.wait()
        shutil.rmtree(work, ignore_errors=True)
    print('%d VMs, wrk -t2 -c%d -d%ds, runs in the order measured%s' % (
        a.vms, a.conns, a.seconds,
        ', writing: incremental rounds%s' % (' and a change every %g s' % a.mutate_every
                                             if a.mutate_every else ' (quiet)')
        if a.incremental else ', writing: full polls back to back'))
    def table(what, cell, key, after=None):
        """One row per binary and request: cell(result) idle and while writing."""
        print('| binary | request | idle %s | polls writing %s |' % (what, what))
        print('|---|---|---|---|')
        for label, out in results:
            for name, _ in PATHS:
                cells = []
                for when in ('idle', 'polling'):
                    r = out[key(name, when)]
                    cells.append(cell(r) + (' %d errors' % r['errors'] if r['errors'] else ''))
                print('| %s | %s | %s | %s |' % (label, name, cells[0], cells[1]))
            if after:
                after(label, out)

    table('p50 / p99 / req/s (load) renders',
          lambda r: '%.1f / %.1f ms / %.0f (%.1f) %d' % (r['p50'], r['p99'], r['rps'], r['load'],
                                                       r['renders']),
          lambda name, when: (name, when),
          lambda label, out: print('| %s | %s while measuring | %d | |' % (
              label, 'changes made' if a.incremental else 'polls finished', out['polls'])))
    if a.paced:
        print()
        print('one keep-alive client at %g requests/s for %d s, latency from when each was due'
              % (a.paced, a.seconds))
        table('p50 / p99 / max ms (load)',
              lambda r: '%.2f / %.2f / %.1f (%.1f)' % (r['p50'], r['p99'], r['max'], r['load']),
              lambda name, when: (name, when, 'paced'))


if __name__ == '__main__':
    main()
