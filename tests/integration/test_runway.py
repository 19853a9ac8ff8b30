"""Capacity runway against the simulator: every successful poll records each datastore's and
datastore cluster's capacity; a datastore the simulator fills, with ten days of earlier history
planted in the workspace's database (nobody waits ten days), gets a critical datastore-runway
finding, and the inventory API, /metrics and the capacity series show its numbers; a flat one
gets no finding and says it is not growing; one with a day of history says it has too little."""
import re
import sqlite3
import time
import urllib.request

import pytest

from apilib import TOKEN, serving
from simlib import vcenter

GIB = 1 << 30
CAP = 600 * GIB  # the clean scenario's datastores: 600 GiB, 50 % free
DAY_MS = 86400000


def sim_control(sim, what, **params):
    q = '&'.join('%s=%s' % kv for kv in params.items())
    req = urllib.request.Request('%s/vslint-sim/%s?%s' % (sim.url.rsplit('/sdk', 1)[0], what, q),
                                 method='POST', data=b'')
    with urllib.request.urlopen(req, timeout=10) as r:
        assert r.status == 204


def history(db, name):
    con = sqlite3.connect(db)
    try:
        return con.execute(
            "SELECT h.t_ms, h.capacity, h.free_space FROM capacity_history h JOIN datastores d"
            " ON d.vcenter = h.vcenter AND d.moref = h.moref WHERE d.name = ? ORDER BY h.t_ms",
            (name,)).fetchall()
    finally:
        con.close()


def plant(db, name, points):
    """points: (days ago, free bytes) of datastore name, at capacity CAP (days may be fractions)."""
    now = int(time.time() * 1000)
    rows = [(now - int(days * DAY_MS), free) for days, free in points]
    con = sqlite3.connect(db)
    try:
        moref, = con.execute("SELECT moref FROM datastores WHERE name = ?", (name,)).fetchone()
        con.executemany(
            "INSERT INTO capacity_history (vcenter, kind, moref, t_ms, capacity, free_space)"
            " VALUES ('lab', 'datastore', ?, ?, ?, ?)", [(moref, t, CAP, f) for t, f in rows])
        con.commit()
    finally:
        con.close()
    return [t for t, _ in rows]


@pytest.fixture(scope='module')
def srv(start_sim_module, module_workspace):
    sim = start_sim_module
    # Read in full at each poll (incremental = false): test_retention_drops_old_points sets
    # the previous success by hand, which a following round would overwrite every few seconds.
    with serving(module_workspace, [vcenter(module_workspace, sim.url, interval=3600,
                                            incremental='false')],
                 '\n[database]\ncapacity_retention = 31\n') as s:
        s.sim = sim
        s.db = module_workspace.db
        yield s


@pytest.fixture(scope='module')
def start_sim_module():
    from simlib import Sim
    with Sim('clean') as sim:
        yield sim


def test_history_recorded_across_polls(srv):
    before = history(srv.db, 'ds-clean-01')
    assert len(before) >= 1
    assert before[-1][1:] == (CAP, CAP // 100 * 50)
    srv.poll_and_wait('lab')
    after = history(srv.db, 'ds-clean-01')
    assert len(after) == len(before) + 1
    assert after[-1][0] > before[-1][0]
    con = sqlite3.connect(srv.db)
    kinds = dict(con.execute("SELECT kind, count(DISTINCT moref) FROM capacity_history"
                             " GROUP BY kind").fetchall())
    con.close()
    assert kinds == {'datastore': 6, 'storage_pod': 1}


@pytest.fixture(scope='module')
def filled(srv):
    """ds-clean-01 filled to 20 % free after ten days of losing 3 % of its capacity a day;
    ds-clean-02 flat at 50 % for ten days; ds-clean-03 with only today's polls."""
    plant(srv.db, 'ds-clean-01', [(d, CAP // 100 * (20 + 3 * d)) for d in range(10, 0, -1)])
    plant(srv.db, 'ds-clean-02', [(d, CAP // 100 * 50) for d in range(10, 0, -1)])
    sim_control(srv.sim, 'datastore', name='ds-clean-01', free=CAP // 100 * 20)
    srv.poll_and_wait('lab')
    return srv


def datastores(srv):
    return {d['name']: d for d in srv.get('/api/v1/inventory/datastores').json()['datastores']}


def test_filling_datastore_is_critical(filled):
    f = [x for x in filled.get('/api/v1/findings?check=datastore-runway').json()['findings']]
    assert [x['object']['name'] for x in f] == ['ds-clean-01']
    x = f[0]
    assert x['severity'] == 'critical'
    ev = x['evidence']
    # 20 % free, 10 % is the critical line, 3 % of capacity a day: 3.3 days
    assert ev['days_to_critical'] == 3
    assert ev['days_to_warning'] == 0  # already below 30 %
    assert ev['growth_gb_per_day'] == pytest.approx(0.03 * 600, rel=1e-3)
    assert ev['history_days'] == pytest.approx(10, abs=0.1)
    assert 'in 3 days' in x['message']


def test_inventory_shows_the_runway(filled):
    ds = datastores(filled)
    r = ds['ds-clean-01']['runway']
    assert set(r) == {'days_to_warning', 'days_to_critical', 'growth_gb_per_day', 'history_days'}
    assert (r['days_to_warning'], r['days_to_critical']) == (0, 3)
    assert r['growth_gb_per_day'] == pytest.approx(18, rel=1e-3)
    flat = ds['ds-clean-02']['runway']
    assert flat == {'days_to_warning': None, 'days_to_critical': None, 'growth_gb_per_day': 0.0,
                    'history_days': pytest.approx(10, abs=0.1), 'reason': 'not growing'}
    young = ds['ds-clean-03']['runway']
    assert young['days_to_critical'] is None and young['growth_gb_per_day'] is None
    assert young['reason'] == 'less than 3 days of history'
    # Every datastore has one, and no figure is negative.
    for d in ds.values():
        for k in ('days_to_warning', 'days_to_critical', 'history_days'):
            assert d['runway'][k] is None or d['runway'][k] >= 0


def test_metrics_carry_the_finite_days(filled):
    text = filled.get('/metrics').body
    lines = [l for l in text.splitlines() if l.startswith('vslint_datastore_runway_days{')]
    got = {}
    for l in lines:
        m = re.match(r'vslint_datastore_runway_days\{vcenter="lab",datastore="([^"]+)",'
                     r'moref="[^"]+",threshold="(warning|critical)"\} (\d+)$', l)
        assert m, l
        got[(m.group(1), m.group(2))] = int(m.group(3))
    assert got == {('ds-clean-01', 'warning'): 0, ('ds-clean-01', 'critical'): 3}
    assert '# TYPE vslint_datastore_runway_days gauge' in text


def test_capacity_series_with_projection(filled):
    a = filled.get('/api/v1/inventory/datastores/history?vcenter=lab&datastore=ds-clean-01')
    assert a.status == 200
    s = a.json()
    assert s['name'] == 'ds-clean-01' and s['kind'] == 'datastore'
    assert len(s['points']) == len(history(filled.db, 'ds-clean-01'))
    assert s['points'][-1]['free_space'] == CAP // 100 * 20
    assert s['runway']['days_to_critical'] == 3
    assert s['thresholds'] == {'warning_bytes': int(0.30 * CAP), 'critical_bytes': int(0.10 * CAP)}
    p = s['projection']
    assert len(p) == 2 and p[0]['t'] == s['points'][-1]['t']
    assert p[0]['free_space'] == CAP // 100 * 20
    assert p[1]['free_space'] < s['thresholds']['critical_bytes'] < p[0]['free_space']
    flat = filled.get('/api/v1/inventory/datastores/history?vcenter=lab&datastore=ds-clean-02')
    assert flat.json()['projection'] == []


@pytest.mark.parametrize('query,status', [
    ('vcenter=lab', 400),
    ('datastore=ds-clean-01', 400),
    ('vcenter=lab&datastore=no-such', 404),
    ('vcenter=nope&datastore=ds-clean-01', 404),
    ('vcenter=lab&datastore=ds-clean-01&bogus=1', 400),
])
def test_capacity_series_bad_requests(srv, query, status):
    a = srv.get('/api/v1/inventory/datastores/history?' + query)
    assert a.status == status
    assert a.json()['error']['code'] in ('bad_parameter', 'not_found')


def test_grown_datastore_starts_over(filled):
    """Growing ds-clean-01 to 1200 GiB: its history before says nothing about now."""
    sim_control(filled.sim, 'datastore', name='ds-clean-01', capacity=2 * CAP,
                free=CAP + CAP // 100 * 20)
    filled.poll_and_wait('lab')
    r = datastores(filled)['ds-clean-01']['runway']
    assert r['days_to_critical'] is None
    assert re.fullmatch(r'capacity changed 0\.0 days ago', r['reason']), r
    f = filled.get('/api/v1/findings?check=datastore-runway&status=resolved').json()['findings']
    assert len(f) == 1


def test_retention_drops_old_points(srv):
    """[database] capacity_retention = 31: a poll drops what is older, and keeps the latest
    point of each UTC day of what is older than 30 days."""
    t = plant(srv.db, 'ds-nfs-clean', [(40, CAP // 2), (30.8, CAP // 2), (30.5, CAP // 2),
                                       (30.2, CAP // 2), (20, CAP // 2)])
    # The poll thins what crossed 30 days since the previous success; the points were planted
    # behind its back, so that success is put two days back, before they crossed (else, before
    # 04:48 UTC, all three lie on a day the poll takes as thinned already).
    con = sqlite3.connect(srv.db)
    try:
        con.execute("UPDATE vcenters SET last_success_ms = ? WHERE name = 'lab'",
                    (int(time.time() * 1000) - 2 * DAY_MS,))
        con.commit()
    finally:
        con.close()
    srv.poll_and_wait('lab')
    latest_of_day = {}
    for x in t[1:4]:
        latest_of_day[x // DAY_MS] = max(x, latest_of_day.get(x // DAY_MS, 0))
    kept = [x for x, _, _ in history(srv.db, 'ds-nfs-clean') if x < t[4] + DAY_MS]
    assert kept == sorted(latest_of_day.values()) + [t[4]]


def test_datastore_cluster_history_follows_its_members(srv):
    """A member of pod-ok filled to 30 % free: the cluster's next point sums its members."""
    sim_control(srv.sim, 'datastore', name='ds-pod-ok-1', free=CAP // 100 * 30)
    srv.poll_and_wait('lab')
    a = srv.get('/api/v1/inventory/datastores/history?vcenter=lab&datastore=pod-ok')
    assert a.status == 200
    s = a.json()
    assert s['kind'] == 'storage_pod'
    assert len(s['points']) >= 2
    assert (s['points'][-1]['capacity'], s['points'][-1]['free_space']) == (
        2 * CAP, CAP // 100 * 30 + CAP // 100 * 50)
    assert s['points'][-2]['free_space'] == 2 * (CAP // 100 * 50)
    assert s['runway']['reason'] == 'less than 3 days of history'
