"""What the dashboard asks of the API for the morning question, over real HTTP against the
simulator's violations estate: findings since a time (`since=`), in another order (`sort=`,
with pages that walk every finding exactly once), the summary's new and resolved counts in the
last 24 h and since the last digest, the affected objects per kind, and the plan of one host.
Times before today are planted in the real SQLite file, as test_api_history.py does."""
import datetime
import sqlite3
import urllib.parse

import pytest

from apilib import WAIVER, Serve, behind_the_daemon, free_port, server_section, serving
from simlib import vcenter

DAY_MS = 86400000
HOUR_MS = 3600000


def iso(ms):
    return datetime.datetime.fromtimestamp(ms / 1000, datetime.timezone.utc).strftime(
        '%Y-%m-%dT%H:%M:%SZ')


def now_ms():
    return int(datetime.datetime.now(datetime.timezone.utc).timestamp() * 1000)


@pytest.fixture(scope='module')
def srv(violations_sim, module_workspace):
    """The violations estate once polled; then three of its open findings made older by hand
    (first seen 2, 3 and 40 days ago) and one resolved finding planted (fixed 3 h ago), so the
    windows have something on both sides of them."""
    with serving(module_workspace, [vcenter(module_workspace, violations_sim.url)], WAIVER) as s:
        s.db = module_workspace.db
        with behind_the_daemon(s.db) as con:
            now = now_ms()
            fps = [r[0] for r in con.execute(
                "SELECT fingerprint FROM findings WHERE status = 'open'"
                " ORDER BY fingerprint LIMIT 3")]
            for fp, days in zip(fps, (2, 3, 40)):
                con.execute("UPDATE findings SET first_seen_ms = ? WHERE fingerprint = ?",
                            (now - days * DAY_MS, fp))
            con.execute(
                "INSERT INTO findings (fingerprint, check_id, vcenter, object_type, object_name,"
                " severity, status, message, first_seen_ms, last_seen_ms, resolved_at_ms,"
                " resolution) VALUES ('planted-fixed', 'snapshots', 'lab', 'vm', 'vm-fixed',"
                " 'warning', 'resolved', 'planted', ?, ?, ?, 'fixed')",
                (now - 5 * DAY_MS, now - 3 * HOUR_MS, now - 3 * HOUR_MS))
        s.aged = dict(zip(fps, (2, 3, 40)))
        s.all = s.get('/api/v1/findings?limit=1000').json()['findings']
        yield s


def first_seen_ms(f):
    return int(datetime.datetime.strptime(f['first_seen'], '%Y-%m-%dT%H:%M:%SZ').replace(
        tzinfo=datetime.timezone.utc).timestamp() * 1000)


# ---- since= ----------------------------------------------------------------------------------

def test_since_keeps_what_was_first_seen_after(srv):
    t = now_ms() - 2 * DAY_MS - HOUR_MS  # between the 2-day-old one and the 3-day-old one
    got = srv.get('/api/v1/findings?limit=1000&since=' + iso(t)).json()
    fps = {f['fingerprint'] for f in got['findings']}
    aged = srv.aged
    assert [fp for fp, d in aged.items() if d == 2][0] in fps
    assert not fps & {fp for fp, d in aged.items() if d > 2}, 'older findings kept'
    assert got['total'] == len(srv.all) - 2
    assert all(first_seen_ms(f) >= t - 1000 for f in got['findings'])


def test_since_a_date_is_its_midnight(srv):
    d = (datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(days=10)).date()
    got = srv.get('/api/v1/findings?limit=1000&since=' + d.isoformat()).json()
    forty = [fp for fp, days in srv.aged.items() if days == 40][0]
    assert got['total'] == len(srv.all) - 1
    assert forty not in {f['fingerprint'] for f in got['findings']}


def test_since_with_status_resolved_is_when_fixed(srv):
    """With status=resolved, since= means resolved since: the planted fix of 3 h ago is in
    the last 4 h and not in the last 2 h, though it was first seen 5 days ago."""
    four = srv.get('/api/v1/findings?status=resolved&since=' + iso(now_ms() - 4 * HOUR_MS))
    assert [f['fingerprint'] for f in four.json()['findings']] == ['planted-fixed']
    two = srv.get('/api/v1/findings?status=resolved&since=' + iso(now_ms() - 2 * HOUR_MS))
    assert two.json()['findings'] == [] and two.json()['total'] == 0


@pytest.mark.parametrize('value', ['yesterday', '24h', '2026-13-01', '2026-02-30',
                                   '2026-12-01T25:00:00Z', '2026-12-01T10:00:00',
                                   '2026-12-01T10:00:00+01:00', '1969-12-31',
                                   '2026-12-01T-1:30Z', '2026-+1-01', '2026-12- 1'])
def test_since_refuses_what_is_not_a_utc_time(srv, value):
    a = srv.get('/api/v1/findings?since=' + urllib.parse.quote(value))
    assert a.status == 400, value
    err = a.json()['error']
    assert err['code'] == 'bad_parameter'
    assert "parameter since: '%s' is not a UTC time" % value in err['message'], err


# ---- sort= -----------------------------------------------------------------------------------

def sev_rank(f):
    return {'critical': 0, 'warning': 1, 'info': 2}[f['severity']]


@pytest.mark.parametrize('sort,key,rev', [
    ('first_seen', lambda f: (f['first_seen'], f['fingerprint']), False),
    ('-first_seen', lambda f: (f['first_seen'], f['fingerprint']), True),
    ('last_seen', lambda f: (f['last_seen'], f['fingerprint']), False),
    ('-last_seen', lambda f: (f['last_seen'], f['fingerprint']), True),
    ('check', lambda f: (f['check'], f['fingerprint']), False),
    ('-check', lambda f: (f['check'], f['fingerprint']), True),
    ('object', lambda f: (f['object']['name'].encode(), f['fingerprint']), False),
    ('-object', lambda f: (f['object']['name'].encode(), f['fingerprint']), True),
    ('-severity', lambda f: (sev_rank(f), f['fingerprint']), True),
])
def test_sort_orders_every_page(srv, sort, key, rev):
    """Walked in pages of 7, every finding once, in the order asked for across the pages."""
    items, url, pages = [], '/api/v1/findings?limit=7&sort=' + sort, 0
    while url and pages < 100:
        d = srv.get(url).json()
        items += d['findings']
        url = d.get('next')
        assert url is None or 'sort=' + sort in url, 'the next link keeps the order'
        pages += 1
    fps = [f['fingerprint'] for f in items]
    assert len(fps) == len(set(fps)) == len(srv.all)
    assert items == sorted(items, key=key, reverse=rev)


def test_newest_first_puts_the_aged_last(srv):
    got = srv.get('/api/v1/findings?limit=1000&sort=-first_seen').json()['findings']
    last3 = [f['fingerprint'] for f in got[-3:]]
    by_age = sorted(srv.aged, key=lambda fp: srv.aged[fp])
    assert last3 == by_age, 'oldest (40 days) last'


def test_sort_severity_is_the_default_order(srv):
    a = srv.get('/api/v1/findings?limit=1000&sort=severity').json()['findings']
    assert [f['fingerprint'] for f in a] == [f['fingerprint'] for f in srv.all]


def test_sort_and_since_together(srv):
    t = now_ms() - 10 * DAY_MS
    got = srv.get('/api/v1/findings?limit=1000&sort=first_seen&since=' + iso(t)).json()
    assert got['total'] == len(srv.all) - 1
    assert got['findings'][0]['fingerprint'] == [fp for fp, d in srv.aged.items() if d == 3][0]


@pytest.mark.parametrize('value', ['newest', 'first_seen,check', '--check', 'Severity', '-'])
def test_sort_refuses_an_unknown_order(srv, value):
    a = srv.get('/api/v1/findings?sort=' + value)
    assert a.status == 400, value
    err = a.json()['error']
    assert "parameter sort: '%s' is not one of severity, first_seen, last_seen, check, object" % value \
        in err['message']


def test_a_cursor_of_another_order_is_refused(srv):
    nxt = srv.get('/api/v1/findings?limit=3&sort=check').json()['next']
    cursor = nxt.split('cursor=')[1].split('&')[0]
    for other in ('object', '-check', 'severity'):
        a = srv.get('/api/v1/findings?limit=3&sort=%s&cursor=%s' % (other, cursor))
        assert a.status == 400, other
        assert 'parameter cursor' in a.json()['error']['message']


# ---- the summary's windows and affected objects ---------------------------------------------

def test_summary_new_and_resolved_in_the_last_24_hours(srv):
    """New: open and unwaived, first seen in the last 24 h (the three aged ones are not);
    resolved: fixed in the last 24 h (the planted one)."""
    s = srv.summary()
    day = s['changes']['last_24h']
    open_unwaived = [f for f in srv.all if f['status'] in ('new', 'open')]
    assert day['new'] == len(open_unwaived) - 3
    assert day['resolved'] == 1
    frm = datetime.datetime.strptime(day['from'], '%Y-%m-%dT%H:%M:%SZ').replace(
        tzinfo=datetime.timezone.utc).timestamp() * 1000
    assert abs(now_ms() - DAY_MS - frm) < 2 * 60000
    assert s['changes']['since_digest'] is None, 'no digest was ever sent'


def test_summary_since_the_last_digest(srv):
    """A digest recorded 2.5 days ago: since then the 2-day-old finding is new too, the
    3-day-old one is not."""
    con = sqlite3.connect(srv.db)
    try:
        end = now_ms() - 60 * HOUR_MS
        con.execute("INSERT INTO digests (slot_ms, window_from_ms, window_to_ms, sent_ms,"
                    " message_id, new_count, resolved_count, open_count, critical_count, score)"
                    " VALUES (?, ?, ?, ?, '<planted@test>', 0, 0, 0, 0, 50)",
                    (end, end - DAY_MS, end, end))
        con.commit()
    finally:
        con.close()
    s = srv.summary()
    dig = s['changes']['since_digest']
    open_unwaived = [f for f in srv.all if f['status'] in ('new', 'open')]
    assert dig['from'] == iso(end)
    assert dig['new'] == len(open_unwaived) - 2
    assert dig['resolved'] == 1
    assert s['changes']['last_24h']['new'] == len(open_unwaived) - 3


def test_summary_affected_objects_per_kind(srv):
    s = srv.summary()
    aff = s['affected']
    open_unwaived = [f for f in srv.all if f['status'] in ('new', 'open')]
    ds = {f['object']['moref'] for f in open_unwaived if f['object']['type'] == 'datastore'}
    assert aff['datastore'] == {'affected': len(ds), 'of': s['objects']['datastores']}
    assert 0 < aff['datastore']['affected'] < aff['datastore']['of']
    vms = {f['object']['moref'] for f in open_unwaived if f['object']['type'] == 'vm'}
    assert aff['vm'] == {'affected': len(vms), 'of': s['objects']['vms']}
    assert aff['host']['of'] == s['objects']['hosts']
    luns = {(f['host'] or {}).get('moref', '') + '/' + f['object']['name']
            for f in open_unwaived if f['object']['type'] == 'lun'}
    if luns:
        assert aff['lun'] == {'affected': len(luns), 'of': None}


# ---- opened and resolved per day ------------------------------------------------------------

def test_history_new_and_resolved_per_day(srv):
    """Per UTC day, the findings first seen then (the aged ones on their days) and the planted
    fix on the day it was fixed; the 40-day-old one is outside the 30 days."""
    h = srv.get('/api/v1/history?days=30').json()
    day = lambda ms: datetime.datetime.fromtimestamp(ms / 1000, datetime.timezone.utc).date().isoformat()
    want_new, want_fixed = {}, {}
    for f in srv.all:
        if f['status'] != 'waived':
            want_new[f['first_seen'][:10]] = want_new.get(f['first_seen'][:10], 0) + 1
    con = sqlite3.connect(srv.db)
    try:
        first, fixed = con.execute("SELECT first_seen_ms, resolved_at_ms FROM findings"
                                   " WHERE fingerprint = 'planted-fixed'").fetchone()
    finally:
        con.close()
    want_new[day(first)] = want_new.get(day(first), 0) + 1
    want_fixed[day(fixed)] = 1
    got_new = {d['date']: d['new'] for d in h['days'] if d['new']}
    got_fixed = {d['date']: d['resolved'] for d in h['days'] if d['resolved']}
    dates = {d['date'] for d in h['days']}
    assert got_new == {k: v for k, v in want_new.items() if k in dates}
    assert got_fixed == want_fixed
    assert len([k for k in want_new if k not in dates]) == 1, 'the 40-day-old one is outside'


# ---- the plan of one host --------------------------------------------------------------------

def test_plan_of_one_host(srv):
    hosts = sorted({f['host']['name'] for f in srv.all if f.get('host')})
    assert len(hosts) >= 2, 'the violations estate has findings on several hosts'
    every = srv.get('/api/v1/plan').body
    one = srv.get('/api/v1/plan?host=' + hosts[0])
    assert one.status == 200
    text = one.body
    assert 'hosts named like ' + hosts[0] in text
    others = [h for h in hosts[1:] if not h.startswith(hosts[0]) and hosts[0] not in h]
    assert any(h in every for h in others)
    for h in others:
        assert ('"%s"' % h) not in text and ("'%s'" % h) not in text, h


# ---- a few hundred findings: ties in the sort key ------------------------------------------

@pytest.fixture(scope='module')
def bulk(srv):
    """300 open findings of one check planted with one first_seen and last_seen (ties in
    every key but the object name and fingerprint), as a big estate's 200 identical datastore
    lines are: pages must still hold each finding exactly once, in order."""
    with behind_the_daemon(srv.db) as con:
        t = now_ms() - 5 * HOUR_MS
        con.executemany(
            "INSERT INTO findings (fingerprint, check_id, vcenter, object_type, object_moref,"
            " object_name, severity, status, message, first_seen_ms, last_seen_ms)"
            " VALUES (?, 'datastore-size', 'lab', 'datastore', ?, ?, 'warning', 'open',"
            " 'planted', ?, ?)",
            [('bulk%012d' % i, 'datastore-bulk-%d' % i, 'ds-bulk-%03d' % (i % 150), t, t)
             for i in range(300)])
    yield srv.get('/api/v1/findings?limit=1000').json()['findings']
    with behind_the_daemon(srv.db) as con:
        con.execute("DELETE FROM findings WHERE fingerprint LIKE 'bulk%'")


@pytest.mark.parametrize('sort', ['first_seen', '-first_seen', 'last_seen', 'check', '-check',
                                  'object', '-object', '-severity'])
def test_ties_page_exactly_once(srv, bulk, sort):
    items, url, pages = [], '/api/v1/findings?limit=17&sort=' + sort, 0
    while url and pages < 100:
        d = srv.get(url).json()
        assert d['total'] == len(bulk)
        items += d['findings']
        url = d.get('next')
        pages += 1
    fps = [f['fingerprint'] for f in items]
    assert len(bulk) >= 300
    assert len(fps) == len(set(fps)) == len(bulk)
    assert pages == (len(bulk) + 16) // 17
    desc = sort.startswith('-')
    key = {'first_seen': 'first_seen', 'last_seen': 'last_seen', 'check': 'check',
           'object': 'object', 'severity': 'severity'}[sort.lstrip('-')]
    get = {'object': lambda f: f['object']['name'].encode(), 'severity': sev_rank}.get(
        key, lambda f: f[key])
    assert items == sorted(items, key=lambda f: (get(f), f['fingerprint']), reverse=desc)


def test_bulk_counts_in_the_summary(srv, bulk):
    s = srv.summary()
    assert s['findings']['by_check']['datastore-size']['warning'] >= 300
    # 300 findings on 300 datastores (by moref), though only 150 names
    assert s['affected']['datastore']['affected'] >= 300


# ---- poll now, known before it is pressed ---------------------------------------------------

def test_summary_says_whether_poll_now_can_work(srv, violations_sim, tmp_path):
    """With a token, poll_now is true; a server without one says false, and indeed refuses."""
    assert srv.summary()['poll_now'] is True
    port = free_port()
    conf = tmp_path / 'vslint.conf'
    pw = tmp_path / 'password'
    pw.write_text('vslint-secret\n')
    pw.chmod(0o600)
    conf.write_text('[database]\npath = %s\n\n[vcenter lab]\nurl = %s\nuser = vslint\n'
                    'password_file = %s\n\n%s' % (tmp_path / 'v.db', violations_sim.url, pw,
                                                  server_section(port)))
    s = Serve(str(conf), port, str(tmp_path))
    try:
        s.wait_ready()
        assert s.summary()['poll_now'] is False
        assert s.post('/api/v1/polls').status == 403
    finally:
        assert s.stop() == 0
