"""Upgrades from every release: tests/data/releases/VERSION/ holds a database written by that
release's own binary (how, in its README), and the current build must open it, migrate it and
keep every finding's fingerprint, first_seen, status, waiver and resolution, the capacity
history and the polls; after a poll of the same estate its open findings are those a fresh
database gets. (A newer database refused by this build, and another program's file:
test_db_care.py.)"""
import glob
import json
import os
import re
import shutil
import sqlite3
import time

import pytest

from simlib import vcenter, vslint

RELEASES = os.path.join(os.environ.get('SOURCE_ROOT', '.'), 'tests', 'data', 'releases')
VERSIONS = sorted(os.path.basename(d) for d in glob.glob(os.path.join(RELEASES, 'v*')))

CAPACITY = 'vcenter, kind, moref, t_ms, capacity, free_space, uncommitted'
# The findings' columns every release has had and an upgrade must keep as they were.
KEPT = ('fingerprint', 'check_id', 'vcenter', 'object_type', 'object_moref', 'object_name',
        'detail', 'severity', 'status', 'message', 'first_seen_ms', 'last_seen_ms',
        'resolved_at_ms', 'waiver_reason', 'waiver_expires')


def rows(path, sql):
    con = sqlite3.connect(path)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def test_every_release_has_a_database():
    assert VERSIONS, 'no tests/data/releases/v*/'
    for v in VERSIONS:
        assert os.path.exists(os.path.join(RELEASES, v, 'vslint.db')), v


@pytest.fixture(scope='module', params=VERSIONS)
def upgraded(request, violations_sim, new_workspace):
    """A release's database, copied, with its configuration (waiver included) pointed at the
    violations simulator, read as it was, then opened once by this build (`vslint inventory`
    migrates it and evaluates nothing)."""
    ws = new_workspace()
    src = os.path.join(RELEASES, request.param)
    shutil.copy(os.path.join(src, 'vslint.db'), ws.db)
    with open(os.path.join(src, 'extra.conf')) as fh:
        extra = fh.read()
    conf = ws.write_config([vcenter(ws, violations_sim.url, 'lab')], extra)
    before = dict(
        version=rows(ws.db, 'PRAGMA user_version')[0][0],
        findings=rows(ws.db, 'SELECT %s FROM findings ORDER BY fingerprint' % ', '.join(KEPT)),
        polls=rows(ws.db, 'SELECT id, vcenter, started_ms, finished_ms, ok FROM polls ORDER BY id'),
        capacity=rows(ws.db, 'SELECT %s FROM capacity_history ORDER BY 1, 2, 3, 4' % CAPACITY))
    res = vslint('inventory', '-c', conf, '--format', 'json')
    assert res.returncode == 0, res.stderr
    return dict(ws=ws, conf=conf, before=before, version=request.param,
                inventory=json.loads(res.stdout))


def test_schema_migrated(upgraded):
    now = rows(upgraded['ws'].db, 'PRAGMA user_version')[0][0]
    res = vslint('db', 'check', '-c', upgraded['conf'])
    assert res.returncode == 0, res.stderr
    current = int(re.search(r'this vslint: (\d+)', res.stdout).group(1))
    assert upgraded['before']['version'] <= now == current
    assert rows(upgraded['ws'].db, 'PRAGMA integrity_check') == [('ok',)]
    assert rows(upgraded['ws'].db, 'PRAGMA application_id')[0][0] == 0x76736c74


def test_findings_kept(upgraded):
    b = upgraded['before']['findings']
    assert len(b) > 10 and {r[8] for r in b} >= {'open', 'waived', 'resolved'}
    assert rows(upgraded['ws'].db, 'SELECT %s FROM findings ORDER BY fingerprint' %
                ', '.join(KEPT)) == b


def test_polls_and_capacity_history_kept(upgraded):
    b = upgraded['before']
    assert b['polls'] and b['capacity']
    db = upgraded['ws'].db
    assert rows(db, 'SELECT id, vcenter, started_ms, finished_ms, ok FROM polls ORDER BY id') == \
        b['polls']
    assert rows(db, 'SELECT %s FROM capacity_history ORDER BY 1, 2, 3, 4' % CAPACITY) == \
        b['capacity']


def test_inventory_reads_the_old_snapshot(upgraded):
    names = {d['name'] for d in upgraded['inventory']['vcenters'][0]['datastores']}
    assert 'ds-free-crit' in names, sorted(names)[:10]


def iso(ms):
    return time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime(ms // 1000))


def test_last_seen_read_as_it_was(upgraded):
    """Version 13 takes an open finding's last_seen from its vCenter's last evaluation instead
    of rewriting its row each time: until this build evaluates, every finding reads the
    last_seen its release wrote, through the view site rules and exports read."""
    want = {r[0]: iso(r[11]) for r in upgraded['before']['findings']}
    res = vslint('query', '-c', upgraded['conf'], '--format', 'json',
                 'SELECT fingerprint, last_seen FROM vsl_findings')
    assert res.returncode == 0, res.stderr
    assert {r['fingerprint']: r['last_seen'] for r in json.loads(res.stdout)} == want


def open_set(findings):
    return sorted((f['check'], f['object']['name'], f.get('detail') or '', f['severity'])
                  for f in findings if f['status'] != 'resolved')


def test_after_a_poll_equals_a_fresh_database(upgraded, violations_sim, new_workspace):
    """The upgraded database, polled once by this build, holds the findings a fresh database
    holds after the same poll, and a finding both know keeps the first_seen its release gave
    it (its fingerprint is the same when the object's moref is)."""
    res = vslint('check', '-c', upgraded['conf'], '--format', 'json', '--fail-on', 'never')
    assert res.returncode == 0, res.stderr
    after = json.loads(res.stdout)['findings']
    ws = new_workspace()
    with open(os.path.join(RELEASES, upgraded['version'], 'extra.conf')) as fh:
        extra = fh.read()
    fresh_conf = ws.write_config([vcenter(ws, violations_sim.url, 'lab')], extra)
    res = vslint('check', '-c', fresh_conf, '--format', 'json', '--fail-on', 'never')
    assert res.returncode == 0, res.stderr
    fresh = json.loads(res.stdout)['findings']
    assert open_set(after) == open_set(fresh)
    old_first = {r[0]: r[10] for r in upgraded['before']['findings'] if r[12] is None}
    now_first = dict(rows(upgraded['ws'].db, 'SELECT fingerprint, first_seen_ms FROM findings '
                                             'WHERE resolved_at_ms IS NULL'))
    both = set(old_first) & set(now_first)
    assert len(both) > 10, 'the release and this build name few of the same objects'
    assert {fp: now_first[fp] for fp in both} == {fp: old_first[fp] for fp in both}
    # Seen by this evaluation, open or waived: last seen now, as the report says, whether
    # or not the row was written.
    shown = {f['fingerprint']: f['last_seen'] for f in after if f['status'] != 'resolved'}
    res = vslint('query', '-c', upgraded['conf'], '--format', 'json',
                 "SELECT fingerprint, last_seen FROM vsl_findings WHERE status <> 'resolved'")
    assert res.returncode == 0, res.stderr
    assert {r['fingerprint']: r['last_seen'] for r in json.loads(res.stdout)} == shown
