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
read every --every rounds, with the allocator's heap in use and held (/metrics'
vslint_heap_in_use_bytes and vslint_heap_held_bytes: a leak grows the first, fragmentation only
the second; empty where the daemon does not report them) and the daemon's CPU time so far, and
written to --csv as it goes, so a run stopped early keeps its curve. The "hour" is --hour-rounds rounds (180: one every 20 s, what incremental = true does on
a busy vCenter); the verdict compares the last sample with the sample at the hour. --minutes
ends the run after that long (0: after --rounds), with the verdict on the rounds made; so
does SIGTERM (a background run ignores Ctrl-C), after the round in flight.
"""
import argparse
import json
import os
import re
import shutil
import signal
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


def heap_mb(base):
    """The daemon's heap in use and held, in MB, from /metrics (None, None: not reported)."""
    body = be.http(base + '/metrics')[1].decode()
    return tuple(float(m.group(1)) / 1048576 if m else None for m in
                 (re.search(r'^vslint_heap_%s_bytes (\d+)$' % k, body, re.M)
                  for k in ('in_use', 'held')))


def sample(i, t0, pid, base):
    """One row of the curve: round, seconds, RSS, high-water, heap in use, heap held, CPU s."""
    rss, hwm = mem_mb(pid)
    use, held = heap_mb(base)
    return (i, time.time() - t0, rss, hwm, use, held, be.cpu_s(pid))


def csv_row(s):
    return '%d,%.0f,%.1f,%.1f,%s,%s,%.1f\n' % (s[:4] + tuple(
        '' if v is None else '%.1f' % v for v in s[4:6]) + (s[6],))


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
    samples = []  # sample()'s rows
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
        out.write('round,seconds,rss_mb,hwm_mb,heap_in_use_mb,heap_held_mb,cpu_s\n')
        t0, end = time.time(), time.time() + a.minutes * 60 if a.minutes else None
        i, stop = 0, []
        signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
        while i < a.rounds and (end is None or time.time() < end) and not stop:
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
                samples.append(sample(i, t0, srv.pid, est.base))
                out.write(csv_row(samples[-1]))
                out.flush()
                be.log('[soak] round %d: RSS %.1f MB, high-water %.1f MB, heap in use %s MB '
                       '(%.0f s)' % (i, samples[-1][2], samples[-1][3],
                                     csv_row(samples[-1]).split(',')[4], samples[-1][1]))
        if samples[-1][0] != i:
            samples.append(sample(i, t0, srv.pid, est.base))
            out.write(csv_row(samples[-1]))
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
    print('%8s %8s %10s %10s %12s %12s %8s' % ('round', 's', 'RSS MB', 'HWM MB', 'in use MB',
                                              'held MB', 'CPU s'))
    step = max(1, len(samples) // 25)  # at most about 25 lines of the curve
    for k, s in enumerate(samples):
        if k % step == 0 or s is last or s[0] == a.hour_rounds:
            print('%8d %8.0f %10.1f %10.1f %12s %12s %8.1f' % (s[:4] + tuple(
                '-' if v is None else '%.1f' % v for v in s[4:6]) + (s[6],)))
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
