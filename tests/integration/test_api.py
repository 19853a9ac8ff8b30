#!/usr/bin/env python3
"""`vslint serve` over real HTTP against the simulator's violations estate: every endpoint,
the findings filters, walking `next` to the end (every finding exactly once), ETag and 304,
the bearer token, JSON errors for bad parameters, unknown routes and wrong methods, a 413 for
a big body, /metrics accepted by promtool, the inventory pages, SIGHUP reloading a [check]
setting (and refusing a broken file), and SIGTERM exiting 0."""
import json
import os
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from simlib import Sim, Workspace, Failures, vslint, USER  # noqa: E402
from apilib import Serve, TOKEN, free_port, server_section, write_token  # noqa: E402


def walk(srv, first, key, f, what):
    """Follows next links; returns every item and the pages' totals."""
    items, totals, url, pages = [], set(), first, 0
    while url and pages < 200:
        a = srv.get(url)
        f.eq('%s page %s status' % (what, url), a.status, 200)
        if a.status != 200:
            break
        d = a.json()
        items += d[key]
        totals.add(d['total'])
        url = d.get('next')
        pages += 1
    return items, totals, pages


def findings_checks(srv, f):
    base = srv.get('/api/v1/findings?limit=1000').json()
    allf = base['findings']
    f.true('violations estate has findings', len(allf) > 10)
    f.eq('total = findings on one page', base['total'], len(allf))
    f.true('no next on the only page', 'next' not in base)
    # Critical first.
    order = {'critical': 0, 'warning': 1, 'info': 2}
    sev = [order[x['severity']] for x in allf]
    f.eq('findings are ordered critical first', sev, sorted(sev))

    # Walk small pages: every finding exactly once, total steady.
    items, totals, pages = walk(srv, '/api/v1/findings?limit=7', 'findings', f, 'limit=7')
    fps = [x['fingerprint'] for x in items]
    f.eq('walk: every finding once', sorted(fps), sorted(x['fingerprint'] for x in allf))
    f.eq('walk: no duplicates', len(fps), len(set(fps)))
    f.eq('walk: total on every page', totals, {len(allf)})
    f.eq('walk: pages', pages, (len(allf) + 6) // 7)

    # Filters compose with paging and keep the filter in next.
    items, totals, _ = walk(srv, '/api/v1/findings?severity=critical&limit=3', 'findings', f,
                            'critical')
    want = sorted(x['fingerprint'] for x in allf if x['severity'] == 'critical')
    f.eq('severity=critical walk', sorted(x['fingerprint'] for x in items), want)
    a = srv.get('/api/v1/findings?severity=warning').json()['findings']
    f.eq('severity=warning means warning and above',
         sorted(x['fingerprint'] for x in a),
         sorted(x['fingerprint'] for x in allf if x['severity'] in ('warning', 'critical')))
    a = srv.get('/api/v1/findings?check=datastore-free-space').json()['findings']
    f.true('check filter', a and all(x['check'] == 'datastore-free-space' for x in a))
    f.eq('check filter count', len(a), len([x for x in allf if x['check'] == 'datastore-free-space']))
    a = srv.get('/api/v1/findings?object=FREE-CRIT').json()['findings']
    f.eq('object substring, case-insensitive', sorted({x['object']['name'] for x in a}),
         ['ds-free-crit'])
    a = srv.get('/api/v1/findings?vcenter=lab').json()
    f.eq('vcenter=lab total', a['total'], len(allf))
    a = srv.get('/api/v1/findings?vcenter=other').json()
    f.eq('vcenter=other total', a['total'], 0)
    a = srv.get('/api/v1/findings?status=new').json()
    f.eq('every unwaived finding is new after the first poll', a['total'],
         len([x for x in allf if x['status'] != 'waived']))
    a = srv.get('/api/v1/findings?status=waived').json()
    f.eq('waived: the configured waiver', [x['object']['name'] for x in a['findings']],
         ['ds-size-small'])
    f.true('waived shows the reason', a['findings'] and
           a['findings'][0]['waiver']['reason'] == 'lab tier')

    # One finding.
    one = allf[0]
    a = srv.get('/api/v1/findings/' + one['fingerprint'])
    f.eq('finding by fingerprint', (a.status, a.json().get('fingerprint')), (200, one['fingerprint']))
    a = srv.get('/api/v1/findings/ffffffffffffffff')
    f.eq('unknown fingerprint', (a.status, a.json()['error']['code']), (404, 'not_found'))

    # ETag / 304.
    a = srv.get('/api/v1/findings?severity=critical')
    etag = a.headers.get('etag')
    f.true('findings carry an ETag', bool(etag))
    b = srv.get('/api/v1/findings?severity=critical', headers={'If-None-Match': etag})
    f.eq('If-None-Match with the same ETag: 304', (b.status, b.body), (304, ''))
    b = srv.get('/api/v1/findings?severity=warning', headers={'If-None-Match': etag})
    f.eq('another answer: 200, not 304', b.status, 200)
    return allf


def errors_checks(srv, f):
    cases = [
        ('/api/v1/findings?severity=urgent', 400, 'severity'),
        ('/api/v1/findings?limit=-1', 400, 'limit'),
        ('/api/v1/findings?limit=1001', 400, 'limit'),
        ('/api/v1/findings?limit=ten', 400, 'limit'),
        ('/api/v1/findings?cursor=garbage', 400, 'cursor'),
        ('/api/v1/findings?cursor=00ff', 400, 'cursor'),
        ('/api/v1/findings?status=gone', 400, 'status'),
        ('/api/v1/findings?check=no-such-check', 400, 'check'),
        ('/api/v1/findings?sevrity=critical', 400, 'sevrity'),
        ('/api/v1/inventory/vms?cursor=5B5D', 400, 'cursor'),
        ('/api/v1/inventory/vms?limit=0', 400, 'limit'),
        ('/api/v1/nothing', 404, None),
        ('/api/v2/findings', 404, None),
        ('/static/nothing.js', 404, None),
    ]
    for path, status, param in cases:
        a = srv.get(path)
        f.eq('%s status' % path, a.status, status)
        try:
            err = a.json()['error']
        except (ValueError, KeyError):
            f.true('%s: error JSON, got %r' % (path, a.body[:200]), False)
            continue
        f.true('%s: error code and message' % path, bool(err.get('code')) and bool(err.get('message')))
        if param:
            f.true('%s names parameter %s: %r' % (path, param, err['message']),
                   ('parameter %s' % param) in err['message'])
    # The dashboard is served at / (embedded from web/), the API stays JSON.
    a = srv.get('/')
    f.eq('/ serves the dashboard', (a.status, (a.headers.get('content-type') or '').split(';')[0]),
         (200, 'text/html'))
    f.true('/ is the vslint page', '<title>vslint</title>' in a.body)
    a = srv.request('DELETE', '/api/v1/findings')
    f.eq('DELETE findings: 405', a.status, 405)
    f.eq('405 Allow header', a.headers.get('allow'), 'GET, HEAD')
    f.eq('405 code', a.json()['error']['code'], 'method_not_allowed')
    a = srv.get('/api/v1/polls')
    f.eq('GET polls: 405', (a.status, a.headers.get('allow')), (405, 'POST'))
    a = srv.post('/api/v1/polls', token=TOKEN, data=b'x' * 100000)
    f.eq('100 kB body: 413', a.status, 413)
    f.eq('413 code', a.json()['error']['code'] if a.body else None, 'payload_too_large')
    a = srv.get('/healthz', headers={'X-Big': 'y' * 60000})
    f.true('60 kB header refused with 4xx (got %s)' % a.status, 400 <= a.status < 500)
    f.eq('server still answers after a huge header', srv.get('/healthz').status, 200)


def auth_checks(srv, f):
    a = srv.post('/api/v1/polls')
    f.eq('POST without token: 401', a.status, 401)
    f.eq('401 error code', a.json()['error']['code'], 'unauthorized')
    f.true('401 WWW-Authenticate', a.headers.get('www-authenticate', '').startswith('Bearer'))
    a = srv.post('/api/v1/polls', token='wrong-token-wrong-token')
    f.eq('POST with a wrong token: 401', a.status, 401)
    a = srv.post('/api/v1/polls', token=TOKEN)
    f.eq('POST with the token: 202', (a.status, a.json()), (202, {'queued': ['lab']}))
    a = srv.post('/api/v1/polls?vcenter=nope', token=TOKEN)
    f.eq('POST polls for an unknown vCenter: 400', a.status, 400)
    f.eq('reads need no token by default', srv.get('/api/v1/summary').status, 200)
    f.true('the token is never logged', TOKEN not in srv.logs())


def inventory_checks(srv, sim, f):
    truth = sim.truth() if os.path.exists(sim.truth_path) else None
    for kind in ('datastores', 'hosts', 'vms'):
        full = srv.get('/api/v1/inventory/%s?limit=1000' % kind).json()
        items, totals, _ = walk(srv, '/api/v1/inventory/%s?limit=5' % kind, kind, f, kind)
        f.true('%s: some' % kind, len(full[kind]) > 0)
        f.eq('%s: walk = one big page' % kind, items, full[kind])
        f.eq('%s: total' % kind, totals, {len(full[kind])})
        keys = [(x['vcenter'], x['name'] or '', x['moref']) for x in items]
        f.eq('%s: sorted by vcenter, name, moref' % kind, keys, sorted(keys))
    vms = srv.get('/api/v1/inventory/vms?limit=1000').json()['vms']
    f.true('VMs carry their disks', any(v['disks'] for v in vms))
    ds = {d['name']: d for d in srv.get('/api/v1/inventory/datastores?limit=1000').json()['datastores']}
    f.true('ds-free-crit stored with capacity and free space',
           ds.get('ds-free-crit', {}).get('capacity', 0) > ds.get('ds-free-crit', {}).get('free_space', 0) > 0)


def metrics_checks(srv, allf, f):
    a = srv.get('/metrics')
    f.eq('/metrics status', a.status, 200)
    f.true('/metrics content type', a.headers.get('content-type', '').startswith('text/plain; version=0.0.4'))
    promtool = shutil.which('promtool')
    f.true('promtool is installed (Debian package prometheus; scripts/install-deps.sh)', bool(promtool))
    if promtool:
        p = subprocess.run([promtool, 'check', 'metrics'], input=a.body, capture_output=True,
                           text=True, timeout=60)
        f.eq('promtool check metrics (%s)' % (p.stdout + p.stderr)[:500], p.returncode, 0)
    samples = {}
    for line in a.body.splitlines():
        if line and not line.startswith('#'):
            name, value = line.rsplit(' ', 1)
            samples[name] = float(value)
    crit = len([x for x in allf if x['severity'] == 'critical' and x['status'] != 'waived'
                and x['check'] == 'datastore-free-space'])
    f.eq('findings metric for datastore-free-space critical',
         samples.get('vslint_findings{check="datastore-free-space",severity="critical"}'), float(crit))
    f.eq('poll success of lab', samples.get('vslint_poll_success{vcenter="lab"}'), 1.0)
    f.true('age of last success present', 'vslint_last_success_age_seconds{vcenter="lab"}' in samples)
    f.true('datastore free bytes of ds-free-crit',
           any(k.startswith('vslint_datastore_free_bytes{vcenter="lab",datastore="ds-free-crit"')
               for k in samples))
    f.true('datastore capacity bytes', any(k.startswith('vslint_datastore_capacity_bytes{') for k in samples))


def main():
    f = Failures('api')
    ws = Workspace()
    srv = None
    try:
        pw = ws.password_file()
        token_file = write_token(ws)
        port = free_port()
        with Sim('violations') as sim:
            vc = {'name': 'lab', 'url': sim.url, 'user': USER, 'password_file': pw}
            waiver = ('\n[waiver]\ncheck = datastore-size\nobject = ds-size-small\n'
                      'reason = lab tier\nexpires = 2099-12-31\n')
            server = server_section(port, token_file)
            conf = ws.write_config([vc], extra=server + waiver)
            srv = Serve(conf, port, ws.dir)
            srv.wait_ready()
            f.eq('/healthz', srv.get('/healthz').json(), {'status': 'ok'})
            f.eq('/readyz once polled', srv.get('/readyz').status, 200)

            allf = findings_checks(srv, f)
            errors_checks(srv, f)
            auth_checks(srv, f)
            inventory_checks(srv, sim, f)
            metrics_checks(srv, allf, f)

            # The catalogue is the CLI's.
            cli = json.loads(vslint('checks', '--format', 'json').stdout)
            f.eq('/api/v1/checks = vslint checks --format json', srv.get('/api/v1/checks').json(), cli)

            # Summary: counts agree with the findings, the score follows its formula.
            s = srv.summary()
            sev = s['findings']['by_severity']
            unwaived = [x for x in allf if x['status'] != 'waived']
            f.eq('summary by severity', sev,
                 {k: len([x for x in unwaived if x['severity'] == k])
                  for k in ('critical', 'warning', 'info')})
            n = sum(s['objects'].values())
            want = round(100 * (1 - min(1, (10 * sev['critical'] + 3 * sev['warning'] + sev['info'])
                                        / (10 * max(n, 1)))))
            f.eq('score formula', s['score'], want)
            f.true('score below 100 on the violations estate', s['score'] < 100)
            lab = s['vcenters'][0]
            f.eq('summary vCenter', (lab['name'], lab['stale'], lab['error'], lab['polled_once']),
                 ('lab', False, None, True))
            f.true('summary last poll duration', lab['last_poll']['duration_ms'] >= 0)

            # SIGHUP: a broken file is refused and the server goes on as before.
            with open(conf) as fh:
                good = fh.read()
            with open(conf, 'w') as fh:
                fh.write(good + '\n[check vms-per-datastore]\nmax_vms = banana\n')
            srv.signal(signal.SIGHUP)
            time.sleep(1.0)
            f.true('bad reload logged with the key: ' + srv.logs()[-500:],
                   'max_vms' in srv.logs() and 'keeping the running configuration' in srv.logs())
            f.eq('server still answers after a bad reload', srv.get('/api/v1/summary').status, 200)

            # SIGHUP with a real change: disable datastore-free-space; after the reload and a
            # poll its findings are resolved.
            with open(conf, 'w') as fh:
                fh.write(good + '\n[check datastore-free-space]\nenabled = false\n')
            srv.signal(signal.SIGHUP)
            deadline = time.time() + 20
            while time.time() < deadline and 'reloaded' not in srv.logs():
                time.sleep(0.1)
            f.true('reload logged', 'reloaded' in srv.logs())
            srv.poll_and_wait('lab')
            a = srv.get('/api/v1/findings?check=datastore-free-space').json()
            f.eq('after reload + poll: datastore-free-space has no open finding', a['total'], 0)
            a = srv.get('/api/v1/findings?check=datastore-free-space&status=resolved').json()
            f.true('... and its findings are resolved', a['total'] > 0)
            f.true('other checks still report', srv.get('/api/v1/findings').json()['total'] > 0)

            rc = srv.stop()
            f.eq('SIGTERM: exit status 0', rc, 0)
            f.true('SIGTERM logged', 'stopping' in srv.logs())
            srv = None
    finally:
        if srv:
            srv.stop()
        ws.cleanup()
    f.finish()


if __name__ == '__main__':
    main()
