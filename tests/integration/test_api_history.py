"""GET /api/v1/history: per day, the score and the open findings by severity at the day's end,
computed from the findings' first_seen and resolved_at, and per vCenter its polls per day;
today's entry agrees with /api/v1/summary. Days before are planted in the database."""
import datetime
import sqlite3

import pytest

from apilib import COUNT_A_CHANGE, WAIVER, serving
from simlib import vcenter

DAY_MS = 86400000


@pytest.fixture(scope='module')
def srv(violations_sim, module_workspace):
    with serving(module_workspace, [vcenter(module_workspace, violations_sim.url)], WAIVER) as s:
        s.db = module_workspace.db
        yield s


def today():
    return datetime.datetime.now(datetime.timezone.utc).date()


def test_thirty_days_oldest_first_ending_today(srv):
    h = srv.get('/api/v1/history').json()
    dates = [d['date'] for d in h['days']]
    assert len(dates) == 30
    assert dates[-1] == today().isoformat()
    assert dates == [(today() - datetime.timedelta(days=29 - i)).isoformat() for i in range(30)]
    assert len(srv.get('/api/v1/history?days=7').json()['days']) == 7


def test_today_agrees_with_the_summary(srv):
    s = srv.summary()
    h = srv.get('/api/v1/history?days=2').json()
    t = h['days'][-1]
    assert t['findings'] == s['findings']['by_severity']
    assert t['score'] == s['score']
    assert t['objects'] == sum(s['objects'].values())
    # Yesterday nothing had been polled yet: no score, nothing open.
    assert h['days'][0]['score'] is None
    assert h['days'][0]['findings'] == {'critical': 0, 'warning': 0, 'info': 0}


def test_the_polls_of_today_per_vcenter(srv):
    h = srv.get('/api/v1/history').json()
    assert [p['vcenter'] for p in h['polls']] == ['lab']
    days = h['polls'][0]['days']
    assert [d['date'] for d in days] == [today().isoformat()]
    d = days[0]
    assert d['polls'] >= 1 and d['failed'] == 0 and 0 < d['mean_ms'] <= d['max_ms']
    # This server reads in full every time: every poll is a full one.
    assert d['full']['polls'] == d['polls'] and d['incremental']['polls'] == 0
    con = sqlite3.connect(srv.db)
    try:
        (last,) = con.execute("SELECT max(finished_ms) FROM polls WHERE vcenter = 'lab'"
                              " AND ok = 1").fetchone()
    finally:
        con.close()
    assert d['last_full'] == datetime.datetime.fromtimestamp(
        last // 1000, datetime.timezone.utc).strftime('%Y-%m-%dT%H:%M:%SZ')


def test_past_days_come_from_first_seen_and_resolved_at(srv):
    """A critical finding first seen 5 days ago and resolved 2 days ago is open on days -5 to
    -3, and a poll 6 days ago gives those days a score. That day's polls are counted apart by
    mode; an incremental round after the full read (its counts are only what it changed)
    leaves the objects of the full read."""
    con = sqlite3.connect(srv.db)
    try:
        now = int(datetime.datetime.now(datetime.timezone.utc).timestamp() * 1000)
        start = now - now % DAY_MS
        con.execute(
            "INSERT INTO findings (fingerprint, check_id, vcenter, object_type, object_name,"
            " severity, status, message, first_seen_ms, last_seen_ms, resolved_at_ms, resolution)"
            " VALUES ('planted-history', 'snapshots', 'lab', 'vm', 'vm-old', 'critical',"
            " 'resolved', 'planted', ?, ?, ?, 'fixed')",
            (start - 5 * DAY_MS + 1000, start - 2 * DAY_MS + 500, start - 2 * DAY_MS + 1000))
        con.execute(
            "INSERT INTO polls (vcenter, started_ms, finished_ms, ok, counts_json) VALUES"
            " ('lab', ?, ?, 1, '{\"datastores\":2,\"hosts\":3,\"vms\":5}')",
            (start - 6 * DAY_MS, start - 6 * DAY_MS + 1234))
        con.execute(
            "INSERT INTO polls (vcenter, started_ms, finished_ms, ok, error) VALUES"
            " ('lab', ?, ?, 0, 'refused')", (start - 6 * DAY_MS + 5000, start - 6 * DAY_MS + 5100))
        con.execute(
            "INSERT INTO polls (vcenter, started_ms, finished_ms, ok, counts_json, mode, version)"
            " VALUES ('lab', ?, ?, 1, '{\"changed\":{\"VirtualMachine\":1}}', 'incremental',"
            " '42')", (start - 6 * DAY_MS + 6000, start - 6 * DAY_MS + 6040))
        con.execute(COUNT_A_CHANGE)
        con.commit()
        days = srv.get('/api/v1/history?days=8').json()
    finally:
        con.execute("DELETE FROM findings WHERE fingerprint = 'planted-history'")
        con.execute("DELETE FROM polls WHERE finished_ms < ?", (start - DAY_MS,))
        con.execute(COUNT_A_CHANGE)
        con.commit()
        con.close()
    by = {d['date']: d for d in days['days']}
    ago = lambda n: (today() - datetime.timedelta(days=n)).isoformat()
    assert by[ago(7)]['score'] is None
    assert by[ago(6)]['objects'] == 10 and by[ago(6)]['findings']['critical'] == 0
    assert by[ago(6)]['score'] == 100
    for n in (5, 4, 3):
        assert by[ago(n)]['findings']['critical'] == 1, n
        assert by[ago(n)]['score'] == 90, n  # round(100 * (1 - 10 / (10 * 10)))
    assert by[ago(2)]['findings']['critical'] == 0
    polls = {d['date']: d for d in days['polls'][0]['days']}
    full = datetime.datetime.fromtimestamp((start - 6 * DAY_MS + 1234) // 1000,
                                           datetime.timezone.utc)
    assert polls[ago(6)] == {
        'date': ago(6), 'polls': 3, 'failed': 1, 'mean_ms': 458, 'max_ms': 1234,
        'full': {'polls': 2, 'failed': 1, 'mean_ms': 667, 'max_ms': 1234},
        'incremental': {'polls': 1, 'failed': 0, 'mean_ms': 40, 'max_ms': 40},
        'last_full': full.strftime('%Y-%m-%dT%H:%M:%SZ')}


@pytest.mark.parametrize('query', ['days=0', 'days=367', 'days=x', 'days=+5', 'days=%205', 'days=5x',
                                   'bogus=1'])
def test_bad_parameters_are_400(srv, query):
    r = srv.get('/api/v1/history?' + query)
    assert r.status == 400
    assert r.json()['error']['code'] == 'bad_parameter'
