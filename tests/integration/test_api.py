"""`vslint serve` over real HTTP against the simulator's violations estate: every endpoint,
the findings filters, walking `next` to the end (every finding exactly once), ETag and 304,
the bearer token, JSON errors for bad parameters, unknown routes and wrong methods, a 413 for
a big body, /metrics accepted by promtool, the inventory pages, SIGHUP reloading a [check]
setting (and refusing a broken file), and SIGTERM exiting 0."""
import json
import re
import shutil
import signal
import subprocess
import time

import pytest

from apilib import TOKEN, WAIVER, serving
from simlib import run_ok, sanitized, vcenter

@pytest.fixture(scope='module')
def srv(violations_sim, module_workspace):
    """vslint serve of the violations estate (one waiver, a token file), once polled. What the
    first poll left is read at once, before any test asks for another poll."""
    with serving(module_workspace, [vcenter(module_workspace, violations_sim.url)], WAIVER) as s:
        s.first = s.get('/api/v1/findings?limit=1000').json()
        s.first_new = s.get('/api/v1/findings?status=new').json()
        yield s


@pytest.fixture(scope='module')
def allf(srv):
    """Every finding after the first poll."""
    return srv.first['findings']


def walk(srv, first, key):
    """Follows next links; returns every item, the pages' totals and the number of pages."""
    items, totals, url, pages = [], set(), first, 0
    while url and pages < 200:
        a = srv.get(url)
        assert a.status == 200, 'page %s' % url
        d = a.json()
        items += d[key]
        totals.add(d['total'])
        url = d.get('next')
        pages += 1
    return items, totals, pages


def fingerprints(findings):
    return sorted(x['fingerprint'] for x in findings)


def test_healthz(srv):
    assert srv.get('/healthz').json() == {'status': 'ok'}


def test_readyz_once_polled(srv):
    assert srv.get('/readyz').status == 200


# ---- findings -------------------------------------------------------------------------------

def test_findings_on_one_page(srv, allf):
    assert len(allf) > 10, 'the violations estate has findings'
    assert srv.first['total'] == len(allf)
    assert 'next' not in srv.first, 'a next link on the only page'


def test_findings_critical_first(allf):
    order = {'critical': 0, 'warning': 1, 'info': 2}
    sev = [order[x['severity']] for x in allf]
    assert sev == sorted(sev)


def test_walk_small_pages(srv, allf):
    """Every finding exactly once, the total steady."""
    items, totals, pages = walk(srv, '/api/v1/findings?limit=7', 'findings')
    fps = [x['fingerprint'] for x in items]
    assert sorted(fps) == fingerprints(allf)
    assert len(fps) == len(set(fps)), 'duplicates'
    assert totals == {len(allf)}
    assert pages == (len(allf) + 6) // 7


def test_filter_keeps_to_its_pages(srv, allf):
    """Filters compose with paging and keep the filter in next."""
    items, _, _ = walk(srv, '/api/v1/findings?severity=critical&limit=3', 'findings')
    assert fingerprints(items) == fingerprints(x for x in allf if x['severity'] == 'critical')


def test_severity_means_that_level_and_above(srv, allf):
    a = srv.get('/api/v1/findings?severity=warning').json()['findings']
    assert fingerprints(a) == fingerprints(x for x in allf
                                           if x['severity'] in ('warning', 'critical'))


def test_check_filter(srv, allf):
    a = srv.get('/api/v1/findings?check=datastore-free-space').json()['findings']
    assert a and all(x['check'] == 'datastore-free-space' for x in a)
    assert len(a) == len([x for x in allf if x['check'] == 'datastore-free-space'])


def test_object_filter(srv):
    """A substring of the name, case-insensitive."""
    a = srv.get('/api/v1/findings?object=FREE-CRIT').json()['findings']
    assert sorted({x['object']['name'] for x in a}) == ['ds-free-crit']


def test_vcenter_filter(srv, allf):
    assert srv.get('/api/v1/findings?vcenter=lab').json()['total'] == len(allf)
    assert srv.get('/api/v1/findings?vcenter=other').json()['total'] == 0


def test_status_new_after_first_poll(srv, allf):
    """Every unwaived finding is new after the first poll."""
    assert srv.first_new['total'] == len([x for x in allf if x['status'] != 'waived'])


def test_status_waived(srv):
    a = srv.get('/api/v1/findings?status=waived').json()
    assert [x['object']['name'] for x in a['findings']] == ['ds-size-small']
    assert a['findings'] and a['findings'][0]['waiver']['reason'] == 'lab tier'


def test_finding_by_fingerprint(srv, allf):
    one = allf[0]
    a = srv.get('/api/v1/findings/' + one['fingerprint'])
    assert (a.status, a.json().get('fingerprint')) == (200, one['fingerprint'])


def test_unknown_fingerprint(srv):
    a = srv.get('/api/v1/findings/ffffffffffffffff')
    assert (a.status, a.json()['error']['code']) == (404, 'not_found')


def test_etag_304(srv):
    a = srv.get('/api/v1/findings?severity=critical')
    etag = a.headers.get('etag')
    assert etag, 'findings carry no ETag'
    b = srv.get('/api/v1/findings?severity=critical', headers={'If-None-Match': etag})
    assert (b.status, b.body) == (304, '')


def test_etag_of_another_answer(srv):
    etag = srv.get('/api/v1/findings?severity=critical').headers.get('etag')
    b = srv.get('/api/v1/findings?severity=warning', headers={'If-None-Match': etag})
    assert b.status == 200


# ---- errors ---------------------------------------------------------------------------------

ERRORS = [
    ('/api/v1/findings?severity=urgent', 400, 'severity'),
    ('/api/v1/findings?limit=-1', 400, 'limit'),
    ('/api/v1/findings?limit=1001', 400, 'limit'),
    ('/api/v1/findings?limit=ten', 400, 'limit'),
    ('/api/v1/findings?limit=%2B5', 400, 'limit'),
    ('/api/v1/findings?limit=%205', 400, 'limit'),
    ('/api/v1/findings?limit=5&limit=6', 400, 'limit'),
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


@pytest.mark.parametrize('path,status,param', ERRORS, ids=[e[0] for e in ERRORS])
def test_json_error(srv, path, status, param):
    a = srv.get(path)
    assert a.status == status
    try:
        err = a.json()['error']
    except (ValueError, KeyError):
        pytest.fail('no error JSON: %r' % a.body[:200])
    assert err.get('code') and err.get('message'), err
    if param:
        assert ('parameter %s' % param) in err['message'], err['message']


def test_dashboard_served(srv):
    """The dashboard is served at / (embedded from web/), the API stays JSON."""
    a = srv.get('/')
    assert (a.status, (a.headers.get('content-type') or '').split(';')[0]) == (200, 'text/html')
    assert '<title>vslint</title>' in a.body


def test_wrong_method(srv):
    a = srv.request('DELETE', '/api/v1/findings')
    assert a.status == 405
    assert a.headers.get('allow') == 'GET, HEAD'
    assert a.json()['error']['code'] == 'method_not_allowed'


def test_get_polls(srv):
    a = srv.get('/api/v1/polls')
    assert (a.status, a.headers.get('allow')) == (405, 'POST')


def test_big_body(srv):
    a = srv.post('/api/v1/polls', token=TOKEN, data=b'x' * 100000)
    assert a.status == 413
    assert (a.json()['error']['code'] if a.body else None) == 'payload_too_large'


def test_huge_header(srv):
    a = srv.get('/healthz', headers={'X-Big': 'y' * 60000})
    assert 400 <= a.status < 500, 'a 60 kB header answered %s' % a.status
    assert srv.get('/healthz').status == 200, 'the server no longer answers'


# ---- the token ------------------------------------------------------------------------------

def test_post_without_token(srv):
    a = srv.post('/api/v1/polls')
    assert a.status == 401
    assert a.json()['error']['code'] == 'unauthorized'
    assert a.headers.get('www-authenticate', '').startswith('Bearer')


def test_post_with_wrong_token(srv):
    assert srv.post('/api/v1/polls', token='wrong-token-wrong-token').status == 401


def test_post_with_token(srv):
    a = srv.post('/api/v1/polls', token=TOKEN)
    assert (a.status, a.json()) == (202, {'queued': ['lab']})


def test_post_polls_unknown_vcenter(srv):
    assert srv.post('/api/v1/polls?vcenter=nope', token=TOKEN).status == 400


def test_reads_need_no_token(srv):
    assert srv.get('/api/v1/summary').status == 200


def test_token_never_logged(srv):
    assert TOKEN not in srv.logs()


# ---- inventory ------------------------------------------------------------------------------

@pytest.mark.parametrize('kind', ['datastores', 'hosts', 'vms'])
def test_inventory_pages(srv, kind):
    full = srv.get('/api/v1/inventory/%s?limit=1000' % kind).json()
    items, totals, _ = walk(srv, '/api/v1/inventory/%s?limit=5' % kind, kind)
    assert len(full[kind]) > 0
    assert items == full[kind], 'walking pages of 5 differs from one big page'
    assert totals == {len(full[kind])}
    keys = [(x['vcenter'], x['name'] or '', x['moref']) for x in items]
    assert keys == sorted(keys), 'not sorted by vcenter, name, moref'


def test_vms_carry_disks(srv):
    vms = srv.get('/api/v1/inventory/vms?limit=1000').json()['vms']
    assert any(v['disks'] for v in vms)


def test_datastore_sizes(srv):
    ds = {d['name']: d for d in
          srv.get('/api/v1/inventory/datastores?limit=1000').json()['datastores']}
    crit = ds.get('ds-free-crit', {})
    assert crit.get('capacity', 0) > crit.get('free_space', 0) > 0, crit


# ---- /metrics -------------------------------------------------------------------------------

@pytest.fixture(scope='module')
def metrics(srv):
    a = srv.get('/metrics')
    a.samples = {}
    for line in a.body.splitlines():
        if line and not line.startswith('#'):
            name, value = line.rsplit(' ', 1)
            a.samples[name] = float(value)
    return a


def test_metrics_answer(metrics):
    assert metrics.status == 200
    assert metrics.headers.get('content-type', '').startswith('text/plain; version=0.0.4')


def test_promtool_accepts_metrics(metrics):
    promtool = shutil.which('promtool')
    assert promtool, 'promtool is missing (Debian package prometheus; scripts/install-deps.sh)'
    p = subprocess.run([promtool, 'check', 'metrics'], input=metrics.body, capture_output=True,
                       text=True, timeout=60)
    # The one lint problem accepted: issue 8 names the runway gauge in days (what a person
    # plans by, and what the rules and the dashboard say), where promtool's convention wants
    # seconds. Exit status 3 is "lint problems only"; anything else still fails.
    accepted = 'vslint_datastore_runway_days use base unit "seconds" instead of "days"'
    problems = [l for l in (p.stdout + p.stderr).splitlines() if l.strip() and l != accepted]
    assert p.returncode in (0, 3) and not problems, (p.stdout + p.stderr)[:500]


def test_findings_metric(metrics, allf):
    crit = len([x for x in allf if x['severity'] == 'critical' and x['status'] != 'waived'
                and x['check'] == 'datastore-free-space'])
    assert metrics.samples.get(
        'vslint_findings{check="datastore-free-space",severity="critical"}') == float(crit)


def test_poll_metrics(metrics):
    assert metrics.samples.get('vslint_poll_success{vcenter="lab"}') == 1.0
    assert 'vslint_last_success_age_seconds{vcenter="lab"}' in metrics.samples


def test_datastore_metrics(metrics):
    assert any(k.startswith('vslint_datastore_free_bytes{vcenter="lab",datastore="ds-free-crit"')
               for k in metrics.samples)
    assert any(k.startswith('vslint_datastore_capacity_bytes{') for k in metrics.samples)


def test_heap_metrics(metrics):
    """An administrator tells a leak from fragmentation by the heap in use against the heap the
    allocator holds (glibc's figures), and SQLite's part of it: all there, whole numbers of
    bytes, in use within what is held, SQLite's page cache within all of SQLite's memory.
    Nothing is compared with the RSS or asserted nonzero for the page cache: those depend on
    the allocator's and SQLite's bookkeeping (the page cache figure is a lower bound)."""
    if sanitized():
        pytest.skip('AddressSanitizer\'s malloc is not glibc\'s: no heap figures')
    names = ('vslint_heap_in_use_bytes', 'vslint_heap_held_bytes',
             'vslint_sqlite_memory_bytes{part="all"}',
             'vslint_sqlite_memory_bytes{part="page_cache"}')
    raw = {}
    for line in metrics.body.splitlines():
        if line and not line.startswith('#'):
            name, value = line.rsplit(' ', 1)
            if name in names:
                raw[name] = value
    assert set(raw) == set(names), ([n for n in names if n not in raw], metrics.body[-2000:])
    for name, value in raw.items():
        assert re.fullmatch(r'\d+', value), (name, value)
    use, held, sql, cache = (int(raw[n]) for n in names)
    assert 0 < use <= held, (use, held)
    assert sql >= cache >= 0, (sql, cache)


# ---- catalogue and summary ------------------------------------------------------------------

def test_catalogue_is_the_cli_one(srv):
    assert srv.get('/api/v1/checks').json() == json.loads(
        run_ok('checks', '--format', 'json').stdout)


def test_summary_counts(srv, allf):
    """The summary's counts agree with the findings."""
    unwaived = [x for x in allf if x['status'] != 'waived']
    assert srv.summary()['findings']['by_severity'] == \
        {k: len([x for x in unwaived if x['severity'] == k])
         for k in ('critical', 'warning', 'info')}


def test_score(srv):
    """The score follows its formula, and is below 100 on the violations estate."""
    s = srv.summary()
    sev = s['findings']['by_severity']
    n = sum(s['objects'].values())
    assert s['score'] == round(100 * (1 - min(1, (10 * sev['critical'] + 3 * sev['warning'] +
                                                  sev['info']) / (10 * max(n, 1)))))
    assert s['score'] < 100


def test_summary_vcenter(srv):
    lab = srv.summary()['vcenters'][0]
    assert (lab['name'], lab['stale'], lab['error'], lab['polled_once']) == \
        ('lab', False, None, True)
    assert lab['last_poll']['duration_ms'] >= 0


# ---- SIGHUP and SIGTERM, on a server of their own -------------------------------------------

@pytest.fixture(scope='module')
def reloading(violations_sim, new_workspace):
    ws = new_workspace()
    with serving(ws, [vcenter(ws, violations_sim.url)], WAIVER) as s:
        with open(s.conf) as fh:
            s.good = fh.read()
        yield s


def test_bad_reload_refused(reloading):
    """SIGHUP with a broken file: refused, logged with the key; the server goes on as before."""
    with open(reloading.conf, 'w') as fh:
        fh.write(reloading.good + '\n[check vms-per-datastore]\nmax_vms = banana\n')
    reloading.signal(signal.SIGHUP)
    time.sleep(1.0)
    logs = reloading.logs()
    assert 'max_vms' in logs and 'keeping the running configuration' in logs, logs[-500:]
    assert reloading.get('/api/v1/summary').status == 200


def test_reload_applies_change(reloading):
    """SIGHUP with a real change: datastore-free-space disabled; after the reload and a poll
    its findings are resolved."""
    with open(reloading.conf, 'w') as fh:
        fh.write(reloading.good + '\n[check datastore-free-space]\nenabled = false\n')
    reloading.signal(signal.SIGHUP)
    deadline = time.time() + 20
    while time.time() < deadline and 'reloaded' not in reloading.logs():
        time.sleep(0.1)
    assert 'reloaded' in reloading.logs(), 'reload not logged'
    reloading.poll_and_wait('lab')
    assert reloading.get('/api/v1/findings?check=datastore-free-space').json()['total'] == 0
    assert reloading.get('/api/v1/findings?check=datastore-free-space&status=resolved').json()[
        'total'] > 0
    assert reloading.get('/api/v1/findings').json()['total'] > 0, 'other checks stopped'


def test_sigterm(reloading):
    assert reloading.stop() == 0
    assert 'stopping' in reloading.logs()
