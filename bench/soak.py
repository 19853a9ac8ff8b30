#!/usr/bin/env python3
"""The daemon's RSS over "a week" of incremental rounds, accelerated (issue 23: after a week of
rounds on a 20,000-VM estate, within 10 % of the RSS after the first hour). Nothing is asserted:
the curve and the verdict go to docs/performance.md. Run by hand, in the background.

  bench/soak.py [--vms 20000] [--rounds 3000] [--minutes 0] [--hour-rounds 180]
                [--every 20] [--what-if-every 10] [--csv FILE] [--build build]

`vslint serve -v` follows the synthetic responder (tests/sim/synth) incrementally; each round
about 1 % of the objects change (POST /synth/mutate?pct=1) and the script waits for the daemon's
"changed objects applied" line; every --what-if-every rounds a placement and a gate ask (the
shared estate is built again after each change). The RSS (and its high-water mark, VmHWM) is
read every --every rounds and written to --csv as it goes, so a run stopped early keeps its
curve. The "hour" is --hour-rounds rounds (180: one every 20 s, what incremental = true does on
a busy vCenter); the verdict compares the last sample with the sample at the hour. --minutes
ends the run after that long (0: after --rounds), with the verdict on the rounds made.
"""
import argparse
import json
import os
import re
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_estate as be  # noqa: E402  (the estate, serve() and the HTTP helpers)


def mem_mb(pid):
    """VmRSS and VmHWM of pid, in MB."""
    with open('/proc/%d/status' % pid) as f:
        s = f.read()
    return tuple(int(re.search(r'%s:\s+(\d+)' % k, s).group(1)) / 1024 for k in ('VmRSS', 'VmHWM'))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--vms', type=int, default=20000)
    ap.add_argument('--rounds', type=int, default=3000)
    ap.add_argument('--minutes', type=float, default=0)
    ap.add_argument('--hour-rounds', type=int, default=180)
    ap.add_argument('--every', type=int, default=20)
    ap.add_argument('--what-if-every', type=int, default=10)
    ap.add_argument('--csv', default='soak.csv')
    ap.add_argument('--build', default=os.path.join(be.ROOT, 'build'))
    a = ap.parse_args()
    a.vslint = os.path.join(a.build, 'vslint')
    a.synth = os.path.join(a.build, 'tests', 'sim', 'vcsim-synth')
    a.db = None
    work = tempfile.mkdtemp(prefix='vslint-soak-')
    est = be.Estate(a, work, a.vms, 100, incremental=True)
    synth = est.url[:-len('/sdk')]
    be.log('[soak] %s' % est.desc)
    srv, log_path = be.serve(a, est, verbose=True)
    samples = []  # (round, seconds, rss, hwm)
    t0 = time.time()
    try:
        deadline = time.time() + 3600
        while json.loads(be.http(est.base + '/api/v1/summary')[1])['vcenters'][0].get('mode') \
                != 'incremental' and time.time() < deadline:
            time.sleep(0.5)
        ds = be.a_datastore(est.base)
        gate = json.dumps({'datastore': ds, 'disks_gb': [40]}).encode()
        logf = open(log_path)
        out = open(a.csv, 'w')
        out.write('round,seconds,rss_mb,hwm_mb\n')
        t0, end = time.time(), time.time() + a.minutes * 60 if a.minutes else None
        i = 0
        while i < a.rounds and (end is None or time.time() < end):
            i += 1
            be.http(synth + '/synth/mutate?pct=1', data=b'')
            applied, t = False, time.time()
            while not applied and time.time() - t < 300:
                applied = 'changed objects applied' in logf.read()
                if not applied:
                    time.sleep(0.05)
            if not applied:
                raise RuntimeError('round %d was not applied' % i)
            if i % a.what_if_every == 0:
                be.http(est.base + be.PLACEMENT)
                be.http(est.base + '/api/v1/gate', data=gate)
            if i == 1 or i == a.hour_rounds or i % a.every == 0:
                rss, hwm = mem_mb(srv.pid)
                samples.append((i, time.time() - t0, rss, hwm))
                out.write('%d,%.0f,%.1f,%.1f\n' % samples[-1])
                out.flush()
                be.log('[soak] round %d: RSS %.1f MB, high-water %.1f MB (%.0f s)' %
                       (i, rss, hwm, time.time() - t0))
        if samples[-1][0] != i:
            rss, hwm = mem_mb(srv.pid)
            samples.append((i, time.time() - t0, rss, hwm))
            out.write('%d,%.0f,%.1f,%.1f\n' % samples[-1])
        out.close()
    finally:
        be.stop(srv)
        est.stop()
        shutil.rmtree(work, ignore_errors=True)
    report(a, samples)


def report(a, samples):
    last = samples[-1]
    print('soak: %d VMs, %d incremental rounds (1 %% of the objects each) in %.0f s; a placement '
          'and a gate every %d' % (a.vms, last[0], last[1], a.what_if_every))
    print('%8s %8s %10s %10s' % ('round', 's', 'RSS MB', 'HWM MB'))
    step = max(1, len(samples) // 25)  # at most about 25 lines of the curve
    for k, s in enumerate(samples):
        if k % step == 0 or s is last or s[0] == a.hour_rounds:
            print('%8d %8.0f %10.1f %10.1f' % s)
    hour = [s for s in samples if s[0] == a.hour_rounds]
    if not hour:
        print('verdict: n/a (the run ended before round %d, "the hour")' % a.hour_rounds)
        return
    h = hour[0]
    after = [s[2] for s in samples if s[0] >= h[0]]
    growth = (last[2] - h[2]) / h[2] * 100
    print('RSS after the hour (round %d): %.1f MB; at the end (round %d): %.1f MB (%+.1f %%); '
          'from the hour on: %.1f-%.1f MB; high-water %.1f -> %.1f MB'
          % (h[0], h[2], last[0], last[2], growth, min(after), max(after), h[3], last[3]))
    print('verdict: %s (goal: within 10 %% of the hour\'s RSS)' %
          ('met' if abs(growth) <= 10 else 'MISSED'))


if __name__ == '__main__':
    main()
