#!/usr/bin/env python3
"""The one table of issue 23: for each size of the path-dense synthetic estate (tests/sim/synth),
measured in one run side by side:

- the wire floor (curl sending vslint's requests, bench_scale.Floor), which also captures every
  answer once to files;
- the expat anchor: a parse-only pass of expat over those captured answers (build/bench/
  expat-count, bench/expat_count.c: callbacks that only count), wall and CPU;
- `vslint collect` (fetch, parse, store) against the responder: wall, CPU, peak RSS; run
  interleaved with the expat pass (expat, collect, expat, collect, ...) so that both see the
  same load, medians reported;
- the govmomi client reading the same properties (bench/govmomi): wall, peak RSS;
- whole `vslint check --offline` in the default (text) format (load, checks, history, report):
  wall, CPU, peak RSS;
- `vslint serve` after its first poll: GET /api/v1/placement, p50/p99 with 1 client and with 8
  clients at once (each request on a new connection, as pipeline jobs with curl ask), failures
  counted (a dropped connection, an answer cut short or an error status is a failure, not a
  latency); the daemon's CPU per placement with 1 client (steadier than wall time on a busy
  machine); the daemon's RSS before and after the 8 clients; then POST /api/v1/gate on one
  datastore, p50/p99 and the daemon's CPU per gate;
- GET /api/v1/summary under wrk (8 connections, keep-alive as wrk does by default) and the same
  with "Connection: close" on every request: requests/s of each and their ratio (before the
  placements, whose handlers outlive a client that gave up);
- the daemon's peak RSS over all of it.

Everything is measured through the CLI and HTTP as a user would, so the table picks up whatever
changes behind them. Nothing is asserted: the figures go to docs/performance.md with the load
average, which the table prints before and after each size. Run by hand (bench/run.sh --table
...), not in the test suite. Usage:
  bench/perf_table.py [--sizes 20000,100000] [--runs 3] [--gzip] [--no-govmomi] [--build build]
                      [--placement-requests 10] [--api-seconds 5] [--json FILE]
"""
import argparse
import http.client
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_scale as bs  # noqa: E402  (the scale benchmark's floor, timing and wrk helpers)

PLACEMENT = '/api/v1/placement?disks_gb=100,20&vms=1&disk_format=thin&limit=10'


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def load_avg():
    return '%.1f/%.1f/%.1f' % os.getloadavg()


def expat(bins, manifest):
    """One parse-only pass of expat over the captured answers: its own figures (wall, CPU,
    bytes, elements) and the peak RSS /usr/bin/time saw."""
    t, m, r = bs.timed([bins['expat'], manifest])
    f = dict(zip(r.stdout.split()[0::2], r.stdout.split()[1::2]))
    return {'wall': float(f['wall']), 'cpu': float(f['cpu']), 'parse': float(f['parse']),
            'bytes': int(f['bytes']), 'elements': int(f['elements']),
            'answers': int(f['answers']), 'rss': m, 'process_wall': t}


def pctl(xs, p):
    """The p-th percentile (nearest rank) of xs, or None when empty."""
    if not xs:
        return None
    s = sorted(xs)
    return s[min(len(s) - 1, max(0, int(round(p / 100 * len(s) + 0.5)) - 1))]


def placement(base, clients, per_client, timeout):
    """clients threads asking GET /api/v1/placement per_client times each, a new connection per
    request: (latencies in ms of the answered requests, failures as 'what' strings)."""
    lat, fails = [], []
    lock = threading.Lock()

    def one():
        for _ in range(per_client):
            req = urllib.request.Request(base + PLACEMENT,
                                         headers={'Authorization': 'Bearer ' + bs.TOKEN})
            t0 = time.monotonic()
            try:
                with urllib.request.urlopen(req, timeout=timeout) as r:
                    body = r.read()
                    json.loads(body)
                    ok = r.status == 200
                    what = 'status %d' % r.status
            except urllib.error.HTTPError as e:
                ok, what = False, 'status %d' % e.code
            except (OSError, ValueError, http.client.HTTPException) as e:
                ok, what = False, type(e).__name__
            dt = (time.monotonic() - t0) * 1000
            with lock:
                if ok:
                    lat.append(dt)
                else:
                    fails.append(what)

    ts = [threading.Thread(target=one) for _ in range(clients)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return lat, fails


def cpu_s(pid):
    """The process's user + system CPU time so far, in seconds."""
    with open('/proc/%d/stat' % pid) as f:
        fields = f.read().rsplit(')', 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf('SC_CLK_TCK')


def gates(base, n, timeout):
    """n POST /api/v1/gate of a 40 GiB VM on the first datastore: latencies in ms."""
    auth = {'Authorization': 'Bearer ' + bs.TOKEN}
    with urllib.request.urlopen(urllib.request.Request(
            base + '/api/v1/inventory/datastores?limit=1&fields=name', headers=auth),
            timeout=timeout) as r:
        ds = json.loads(r.read())['datastores'][0]['name']
    body = json.dumps({'datastore': ds, 'disks_gb': [40]}).encode()
    lat = []
    for _ in range(n):
        req = urllib.request.Request(base + '/api/v1/gate', data=body, method='POST',
                                     headers=dict(auth, **{'Content-Type': 'application/json'}))
        t0 = time.monotonic()
        with urllib.request.urlopen(req, timeout=timeout) as r:
            json.loads(r.read())
        lat.append((time.monotonic() - t0) * 1000)
    return lat


def bench_serve(a, n, bins, conf, port):
    base = 'http://127.0.0.1:%d' % port
    srv = subprocess.Popen([bins['vslint'], 'serve', '-c', conf], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
    out = {}
    try:
        bs.wait_first_poll(base)
        out['rss_idle'] = bs.vm_mb(srv.pid, 'VmRSS')
        # Before the placements: a placement the client gave up on keeps its handler busy.
        for name, hdr in (('keepalive', None), ('close', 'Connection: close')):
            out['summary_' + name] = wrk(base + '/api/v1/summary', a.api_seconds, hdr)
            log('[%d VMs] summary, %s: %s' % (n, name, out['summary_' + name]))
        for clients in (1, 8):
            per = a.placement_requests if clients == 1 else max(1, a.placement_requests * 4 //
                                                                 clients)
            before = bs.vm_mb(srv.pid, 'VmRSS')
            t0, c0 = time.monotonic(), cpu_s(srv.pid)
            lat, fails = placement(base, clients, per, a.placement_timeout)
            out['placement_%d' % clients] = {
                'p50': pctl(lat, 50), 'p99': pctl(lat, 99), 'answered': len(lat),
                'failed': len(fails), 'fail_kinds': sorted(set(fails)),
                'seconds': time.monotonic() - t0, 'rss_before': before,
                'rss_after': bs.vm_mb(srv.pid, 'VmRSS'),
                'cpu_ms': (cpu_s(srv.pid) - c0) * 1000 / max(1, clients * per)}
            log('[%d VMs] placement, %d client(s): %s' % (n, clients,
                                                          out['placement_%d' % clients]))
        c0 = cpu_s(srv.pid)
        lat = gates(base, a.placement_requests, a.placement_timeout)
        out['gate'] = {'p50': pctl(lat, 50), 'p99': pctl(lat, 99),
                       'cpu_ms': (cpu_s(srv.pid) - c0) * 1000 / len(lat)}
        log('[%d VMs] gate: %s' % (n, out['gate']))
        out['rss_peak'] = bs.vm_mb(srv.pid)
    finally:
        bs.stop(srv)
    return out


def wrk(url, seconds, header=None, threads=2, conns=8):
    cmd = ['wrk', '-t%d' % threads, '-c%d' % conns, '-d%ds' % seconds, '--latency']
    if header:
        cmd += ['-H', header]
    r = subprocess.run(cmd + [url], capture_output=True, text=True)
    out = r.stdout
    m = re.search(r'Requests/sec:\s+([\d.]+)', out)
    if not m:
        log('wrk %s said no requests/s (exit %d): %s' % (' '.join(cmd[4:]), r.returncode,
                                                         (out + r.stderr)[-1000:]))
    errs = re.search(r'Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)', out)
    non2xx = re.search(r'Non-2xx or 3xx responses: (\d+)', out)
    return {'rps': float(m.group(1)) if m else 0.0,
            'socket_errors': sum(int(x) for x in errs.groups()) if errs else 0,
            'non2xx': int(non2xx.group(1)) if non2xx else 0}


def bench_size(a, n, bins, work):
    res = {'vms': n, 'load_before': load_avg()}
    reads, option, esxcli = bs.vslint_reads()
    paths_json = os.path.join(work, 'paths.json')
    sim, url, truth = bs.start_synth(a, n, bins, work, res)
    capture = os.path.join(work, 'answers-%d' % n)
    try:
        conf, pw, port = bs.write_setup(work, n, url, res, truth)
        log('[%d VMs] %s; load %s' % (n, res['estate'], res['load_before']))

        log('[%d VMs] discovery (not timed), then the floor with every answer captured ...' % n)
        hosts, alarms = bs.discover(url)
        os.makedirs(capture)
        fl = bs.Floor(url, work, a.gzip, capture=capture).run(reads, option, esxcli, hosts,
                                                              alarms)
        res.update(floor=fl.total, floor_requests=fl.requests, floor_mb=fl.bytes / 1e6)
        log('[%d VMs] floor %.2f s, %d requests, %.1f MB' % (n, fl.total, fl.requests,
                                                             fl.bytes / 1e6))
        manifest = os.path.join(capture, 'manifest')
        expat(bins, manifest)  # once untimed: the answers into the page cache

        res['expat'], res['collect'] = [], []
        for _ in range(a.runs):
            e = expat(bins, manifest)
            res['expat'].append(e)
            log('[%d VMs] expat %.2f s (CPU %.2f s, in XML_Parse %.2f s), %d answers, %.1f MB, '
                '%d elements' % (n, e['wall'], e['cpu'], e['parse'], e['answers'],
                                 e['bytes'] / 1e6, e['elements']))
            t, m, r = bs.timed([bins['vslint'], 'collect', '-c', conf])
            res['collect'].append({'wall': t, 'cpu': bs.cpu_of(r), 'rss': m})
            log('[%d VMs] vslint collect %.2f s (CPU %.2f s), %.1f MB: %s' % (
                n, t, bs.cpu_of(r), m, r.stdout.strip()))

        if not a.no_govmomi:
            t, m, r = bs.timed([bins['govmomi'], '-url', url, '-user', bs.USER, '-password-file',
                                pw, '-paths', paths_json, '-max-objects', str(bs.MAX_OBJECTS)])
            res['govmomi'] = {'wall': t, 'rss': m}
            log('[%d VMs] govmomi %.2f s, %.1f MB' % (n, t, m))

        res['check'] = []
        for _ in range(a.runs):
            # The default format (text), as a person runs it.
            t, m, r = bs.timed([bins['vslint'], 'check', '-c', conf, '--offline', '--fail-on',
                                'never', '-o', os.devnull])
            res['check'].append({'wall': t, 'cpu': bs.cpu_of(r), 'rss': m})
            log('[%d VMs] check --offline %.2f s (CPU %.2f s), %.1f MB' % (n, t, bs.cpu_of(r), m))

        res['serve'] = bench_serve(a, n, bins, conf, port)
        res['synth_rss'] = bs.vm_mb(sim.pid)
    finally:
        sim.send_signal(signal.SIGTERM)
        sim.wait()
        shutil.rmtree(capture, ignore_errors=True)
        for f in os.listdir(work):
            if f.startswith('v-%d.db' % n):
                os.unlink(os.path.join(work, f))
    res['load_after'] = load_avg()
    return res


def med_of(rows, k):
    return bs.med([r[k] for r in rows])


def report(results, a):
    w = 26
    lines = []

    def row(label, cells):
        lines.append('%-44s' % label + ''.join('%*s' % (w, c) for c in cells))

    def ms(v):
        return '-' if v is None else '%.0f' % v

    row('', ['%d VMs' % r['vms'] for r in results])
    row('load average before / after', ['%s / %s' % (r['load_before'].split('/')[0],
                                                     r['load_after'].split('/')[0])
                                        for r in results])
    row('hosts / datastores / LUN paths', ['%d / %d / %d' % (
        r['counts']['host'], r['counts']['datastore'], r['counts']['lun_path']) for r in results])
    row('XML answers: MB, requests', ['%.0f MB, %d' % (r['floor_mb'], r['floor_requests'])
                                      for r in results])
    row('floor: curl, same requests', ['%.2f s' % r['floor'] for r in results])
    row('expat anchor: parse only, wall (CPU)', ['%.2f s (%.2f)' % (med_of(r['expat'], 'wall'),
                                                                   med_of(r['expat'], 'cpu'))
                                                 for r in results])
    row('vslint collect: wall (CPU)', ['%.2f s (%.2f)' % (med_of(r['collect'], 'wall'),
                                                         med_of(r['collect'], 'cpu'))
                                       for r in results])
    row('  / expat, wall (target <= 1.0x)', ['%.2fx' % (med_of(r['collect'], 'wall') /
                                                        med_of(r['expat'], 'wall'))
                                             for r in results])
    row('  / expat, CPU', ['%.2fx' % (med_of(r['collect'], 'cpu') / med_of(r['expat'], 'cpu'))
                          for r in results])
    row('  peak RSS (target < 64 MB)', ['%.1f MB' % max(c['rss'] for c in r['collect'])
                                        for r in results])
    if not a.no_govmomi:
        row('govmomi client: wall, peak RSS', ['%.1f s, %.0f MB' % (r['govmomi']['wall'],
                                                                    r['govmomi']['rss'])
                                               for r in results])
    row('check --offline: wall (CPU), peak RSS', ['%.2f s (%.2f), %.0f MB' % (
        med_of(r['check'], 'wall'), med_of(r['check'], 'cpu'), max(c['rss'] for c in r['check']))
        for r in results])
    for c in (1, 8):
        row('placement, %d client%s: p50 / p99 ms' % (c, 's' if c > 1 else ''),
            ['%s / %s' % (ms(r['serve']['placement_%d' % c]['p50']),
                          ms(r['serve']['placement_%d' % c]['p99'])) for r in results])
        row('  answered / failed', ['%d / %d%s' % (
            r['serve']['placement_%d' % c]['answered'], r['serve']['placement_%d' % c]['failed'],
            (' (%s)' % ','.join(r['serve']['placement_%d' % c]['fail_kinds']))
            if r['serve']['placement_%d' % c]['failed'] else '') for r in results])
    row("  the daemon's CPU per placement, 1 client", ['%.0f ms' % r['serve']['placement_1'][
        'cpu_ms'] for r in results])
    row('gate: p50 / p99 ms (target < 500 at 100k)', ['%s / %s' % (
        ms(r['serve']['gate']['p50']), ms(r['serve']['gate']['p99'])) for r in results])
    row("  the daemon's CPU per gate", ['%.0f ms' % r['serve']['gate']['cpu_ms']
                                       for r in results])
    row('  daemon RSS grown by the 8 clients', ['%+.0f MB' % (
        r['serve']['placement_8']['rss_after'] - r['serve']['placement_8']['rss_before'])
        for r in results])
    def summary(r):
        ka, close = r['serve']['summary_keepalive']['rps'], r['serve']['summary_close']['rps']
        return '%.0f / %.0f%s' % (ka, close, ' (%.2fx)' % (ka / close) if ka and close else '')
    row('summary req/s: keep-alive / close', [summary(r) for r in results])
    row('daemon RSS: after 1st poll / peak', ['%.0f / %.0f MB' % (r['serve']['rss_idle'],
                                                                  r['serve']['rss_peak'])
                                              for r in results])
    row('responder peak RSS', ['%.0f MB' % r['synth_rss'] for r in results])
    row('runs (medians shown), interleaved', ['%d' % len(r['collect']) for r in results])
    return '\n'.join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    bs.common_args(ap, '20000,100000')
    ap.add_argument('--placement-requests', type=int, default=10,
                    help='requests of the single client; 8 clients ask 4x as many in all')
    ap.add_argument('--placement-timeout', type=float, default=60,
                    help="a placement request's client-side timeout, seconds")
    a = ap.parse_args()
    for tool in ('curl', 'wrk', '/usr/bin/time'):
        if not shutil.which(tool):
            sys.exit('%s is missing: apt-get install curl wrk time' % tool)
    bins = bs.binaries(a, ('vslint', 'synth', 'expat'))
    results = bs.each_size(a, 'vslint-table-', lambda n, work: bench_size(a, n, bins, work))
    print()
    print('vslint, issue 23 table, %s, %d cores, answers %s, pages of %d objects' % (
        time.strftime('%Y-%m-%d %H:%M'), os.cpu_count(),
        'gzip-compressed' if a.gzip else 'uncompressed', bs.MAX_OBJECTS))
    print(report(results, a))


if __name__ == '__main__':
    main()
