#!/usr/bin/env python3
"""The estate the gate and placement share (api/estates.c), measured on a running `vslint
serve` over the synthetic responder (tests/sim/synth, vcsim-synth), and the daemon's RSS over
a long run of incremental rounds. Nothing is asserted: the figures go to docs/performance.md.
Run by hand, not in the test suite.

  bench/bench_estate.py [--sizes 20000:100,100000:25] [--requests 20] [--build build]
      For each size VMS:VMS_PER_DATASTORE (20,000 VMs at 100 a datastore: 200 datastores;
      100,000 at 25: 4,000): one `vslint collect`, then `vslint serve`, and side by side the
      first placement (which builds the shared estate), placement p50/p99 at 1 client and at
      8 clients at once, the daemon's RSS before and at most while the 8 ask, the gate p50,
      `vslint gate --offline` (which loads its own estate), and how often the daemon built
      its estate (vslint_estate_builds_total: 1 unless a poll wrote meanwhile).

  bench/bench_estate.py --sizes 100000:25 --db /work/b23d-data/v-100000.db
      The same on a copy of a database a collect of that estate made before (its vCenter
      named "synth"): no responder, no collect; the daemon's vCenter is unreachable, so its
      polls fail at once and it serves the stored snapshot (a 100,000-VM collect takes
      minutes: make the database once, `vslint collect`, and reuse it).

  The daemon's RSS over thousands of incremental rounds: bench/soak.py.
"""
import argparse
import http.client as http_client
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, 'tests', 'integration'))
from apilib import free_port  # noqa: E402  (the integration tests' helper)

USER, PASSWORD = 'vslint', 'vslint-secret'


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def http(url, data=None, timeout=600):
    req = urllib.request.Request(url, data=data, method='POST' if data is not None else 'GET',
                                 headers={'Content-Type': 'application/json'} if data else {})
    t = time.time()
    with urllib.request.urlopen(req, timeout=timeout) as r:
        body = r.read()
    return time.time() - t, body


def rss_mb(pid):
    with open('/proc/%d/status' % pid) as f:
        return int(re.search(r'VmRSS:\s+(\d+)', f.read()).group(1)) / 1024


def cpu_s(pid):
    """The process's user + system CPU time so far, in seconds."""
    with open('/proc/%d/stat' % pid) as f:
        fields = f.read().rsplit(')', 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf('SC_CLK_TCK')


def builds(base):
    _, body = http(base + '/metrics')
    return int(re.search(rb'^vslint_estate_builds_total (\d+)$', body, re.M).group(1))


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


class Estate:
    """A vcsim-synth of n VMs at per_ds a datastore, and the configuration to poll it."""

    def __init__(self, a, work, n, per_ds, incremental=False):
        self.work, self.n = work, n
        db = os.path.join(work, 'v-%d.db' % n)
        if getattr(a, 'db', None):
            # A stored estate: nobody answers at this address, the polls fail at once.
            shutil.copyfile(a.db, db)
            self.sim, self.url, self.desc = None, 'http://127.0.0.1:1/sdk', 'stored: ' + a.db
        else:
            self.sim = subprocess.Popen([a.synth, '-vms', str(n), '-vms-per-datastore',
                                         str(per_ds)], stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, text=True)
            self.url = self.sim.stdout.readline().strip()
            self.desc = self.sim.stderr.readline().strip().split('estate: ', 1)[-1]
        pw = os.path.join(work, 'pw')
        with open(pw, 'w') as f:
            f.write(PASSWORD + '\n')
        os.chmod(pw, 0o600)
        self.port = free_port()
        self.base = 'http://127.0.0.1:%d' % self.port
        self.conf = os.path.join(work, 'v-%d.conf' % n)
        with open(self.conf, 'w') as f:
            # header_timeout: until the front door stops counting the wait for a worker
            # against it (issue 23), 8 clients at once would be cut off while queued.
            f.write('[database]\npath = %s\n\n[server]\nlisten = 127.0.0.1:%d\n'
                    'header_timeout = 600\n\n'
                    '[vcenter synth]\nurl = %s\nuser = %s\npassword_file = %s\n'
                    'max_objects = 500\ntimeout = 3600\ninterval = %d\n%s'
                    % (db, self.port, self.url, USER, pw,
                       20 if incremental else 86400,
                       'incremental = true\n' if incremental else ''))

    def stop(self):
        if self.sim:
            self.sim.send_signal(signal.SIGTERM)
            self.sim.wait()


def serve(a, est, verbose=False):
    logf = open(os.path.join(est.work, 'serve-%d.log' % est.n), 'w')
    srv = subprocess.Popen([a.vslint, 'serve'] + (['-v'] if verbose else []) + ['-c', est.conf],
                           stdout=logf, stderr=logf)
    deadline = time.time() + 3600
    while time.time() < deadline:
        try:
            v = json.loads(http(est.base + '/api/v1/summary')[1])['vcenters'][0]
            if v.get('last_poll') and not v['polling']:
                return srv, logf.name
        except (OSError, ValueError, KeyError, IndexError):
            pass
        if srv.poll() is not None:
            raise RuntimeError('vslint serve ended: ' + open(logf.name).read()[-2000:])
        time.sleep(0.2)
    raise RuntimeError('vslint serve never finished its first poll')


def stop(proc):
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=120)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


PLACEMENT = '/api/v1/placement?disks_gb=40&limit=10'


def a_datastore(base):
    _, body = http(base + '/api/v1/inventory/datastores?limit=1&fields=name')
    return json.loads(body)['datastores'][0]['name']


def bench_size(a, work, n, per_ds):
    est = Estate(a, work, n, per_ds)
    res = {'vms': n, 'estate': est.desc}
    try:
        log('[%d VMs] %s' % (n, est.desc))
        if est.sim:
            t = time.time()
            subprocess.run([a.vslint, 'collect', '-c', est.conf], check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            log('[%d VMs] collect (not reported) %.1f s' % (n, time.time() - t))
        srv, serve_log = serve(a, est, verbose=a.verbose)
        try:
            base = est.base
            time.sleep(2)  # the evaluation after the first poll has committed
            res['rss_idle'] = rss_mb(srv.pid)
            res['builds_before'] = builds(base)
            res['cold'], body = http(base + PLACEMENT)
            ans = json.loads(body)
            # total_rejected since rejected_limit (main before it listed every one).
            res['datastores'] = ans['total_candidates'] + ans.get('total_rejected',
                                                                  len(ans['rejected']))
            c0 = cpu_s(srv.pid)
            one = [http(base + PLACEMENT)[0] for _ in range(a.requests)]
            res['p1'] = (statistics.median(one), pct(one, 99))
            res['p1_cpu'] = (cpu_s(srv.pid) - c0) / a.requests
            res['rss_built'] = rss_mb(srv.pid)  # the shared estate is held from here on
            peak, done = [res['rss_built']], threading.Event()

            summaries = []

            def sample():
                while not done.is_set():
                    peak.append(rss_mb(srv.pid))
                    time.sleep(0.02)

            def summary():
                # What a dashboard or a monitor asks meanwhile: before issue 23's fix, one that
                # landed on a libmicrohttpd thread running a placement waited for it.
                while not done.is_set():
                    try:
                        summaries.append(http(base + '/api/v1/summary')[0])
                    except (OSError, http_client.HTTPException):
                        summaries.append(float('inf'))
                    time.sleep(0.1)
            times, lock = [], threading.Lock()

            dropped = []

            def client():
                for _ in range(max(1, a.requests // 4)):
                    try:
                        t, _ = http(base + PLACEMENT)
                    except (OSError, http_client.HTTPException) as e:  # a cut answer too
                        dropped.append(str(e))
                        continue
                    with lock:
                        times.append(t)
            s = threading.Thread(target=sample)
            s.start()
            sm = threading.Thread(target=summary)
            sm.start()
            cs = [threading.Thread(target=client) for _ in range(8)]
            for c in cs:
                c.start()
            for c in cs:
                c.join()
            done.set()
            s.join()
            sm.join()
            res['summary8'] = (statistics.median(summaries), pct(summaries, 99),
                               max(summaries), len(summaries))
            res['p8'] = (statistics.median(times), pct(times, 99)) if times else \
                (float('nan'), float('nan'))
            res['dropped8'] = len(dropped)
            res['per_client'] = max(1, a.requests // 4)
            res['rss_peak8'] = max(peak)
            ds = a_datastore(base)
            body = json.dumps({'datastore': ds, 'disks_gb': [40]}).encode()
            c0 = cpu_s(srv.pid)
            g = [http(base + '/api/v1/gate', data=body)[0] for _ in range(a.requests)]
            res['gate'] = (statistics.median(g), pct(g, 99))
            res['gate_cpu'] = (cpu_s(srv.pid) - c0) / a.requests
            res['builds'] = builds(base) - res['builds_before']
            t = time.time()
            subprocess.run([a.vslint, 'gate', '-c', est.conf, '--offline', '--datastore', ds,
                            '--disk-gb', '40'], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
            res['gate_offline'] = time.time() - t
        finally:
            stop(srv)
            if a.verbose:
                for line in open(serve_log):
                    if 'what-if estate' in line or 'applied' in line or 'read in full' in line:
                        log('[%d VMs] serve: %s' % (n, line.rstrip()))
    finally:
        est.stop()
    log('[%d VMs] %s' % (n, json.dumps(res)))
    return res


def report(results):
    def row(label, cells):
        print('%-52s %s' % (label, ''.join('%-24s' % c for c in cells)))
    ms = '%.0f / %.0f ms'
    row('', ['%d VMs, %d datastores' % (r['vms'], r['datastores']) for r in results])
    row('first placement (builds the shared estate)', ['%.2f s' % r['cold'] for r in results])
    row('placement p50 / p99, 1 client', [ms % (r['p1'][0] * 1e3, r['p1'][1] * 1e3)
                                          for r in results])
    row("  the daemon's CPU per placement (steadier)", ['%.0f ms' % (r['p1_cpu'] * 1e3)
                                                      for r in results])
    row('placement p50 / p99, 8 clients at once', [ms % (r['p8'][0] * 1e3, r['p8'][1] * 1e3)
                                                   for r in results])
    row('  answers cut or dropped, 8 clients', ['%d of %d' % (r['dropped8'], 8 * r['per_client'])
                                              for r in results])
    row('  summary p50 / p99 / max meanwhile (n)', ['%.0f / %.0f / %.0f ms (%d)' % (
        r['summary8'][0] * 1e3, r['summary8'][1] * 1e3, r['summary8'][2] * 1e3, r['summary8'][3])
        for r in results])
    row('RSS idle -> estate built -> peak, 8 clients', ['%.0f -> %.0f -> %.0f MB (+%.0f)' % (
        r['rss_idle'], r['rss_built'], r['rss_peak8'], r['rss_peak8'] - r['rss_built'])
        for r in results])
    row('gate p50 / p99 (daemon)', [ms % (r['gate'][0] * 1e3, r['gate'][1] * 1e3)
                                    for r in results])
    row("  the daemon's CPU per gate", ['%.0f ms' % (r['gate_cpu'] * 1e3) for r in results])
    row('`vslint gate --offline` (loads its own)', ['%.2f s' % r['gate_offline']
                                                   for r in results])
    row('estate builds during the run', ['%d' % r['builds'] for r in results])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--sizes', default='20000:100,100000:25')
    ap.add_argument('--requests', type=int, default=20)
    ap.add_argument('--build', default=os.path.join(ROOT, 'build'))
    ap.add_argument('--verbose', action='store_true', help='vslint serve -v (its log in the work dir)')
    ap.add_argument('--db', help='a stored database of the one size given (see above)')
    ap.add_argument('--vslint', help='the vslint binary (default: BUILD/vslint), e.g. main\'s '
                    'to compare')
    a = ap.parse_args()
    a.vslint = a.vslint or os.path.join(a.build, 'vslint')
    a.synth = os.path.join(a.build, 'tests', 'sim', 'vcsim-synth')
    for b in (a.vslint, a.synth):
        if not os.path.exists(b):
            sys.exit('%s not built: scripts/build.sh' % b)
    work = tempfile.mkdtemp(prefix='vslint-bench-estate-')
    try:
        report([bench_size(a, work, int(s.split(':')[0]), int(s.split(':')[1]))
                for s in a.sizes.split(',')])
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == '__main__':
    main()
