"""The findings' history says how each change was read: after `vslint serve`'s first full read,
changes made in the simulator reach it through WaitForUpdatesEx rounds, and those rounds are
polls of their own in the history (mode 'incremental', with the collector's version), while
the full read stays the only 'full' one. A finding opened or resolved by a round names that
round and its mode (first_seen_by, resolved_by); /api/v1/history counts the day's polls by
mode, with the time of the last full read. The simulator counts the full reads
(RetrievePropertiesEx over a ContainerView): none may be added by the rounds."""
import datetime
import json
import sqlite3
import time

import pytest

from apilib import serving, until
from simlib import VimClient, vcenter

@pytest.fixture(scope='module')
def srv(sim, module_workspace):
    vc = vcenter(module_workspace, sim.url, 'lab', interval=3600, incremental='true')
    with serving(module_workspace, [vc]) as s:
        s.db = module_workspace.db
        s.sim = sim
        until(lambda: s.vcenter('lab')['mode'] == 'incremental', 'the follower to start', s)
        yield s


def findings(srv, check, name, status=''):
    """The findings of check about the object name (status: '' for the unresolved ones)."""
    items = srv.get('/api/v1/findings?limit=1000&check=%s%s' % (
        check, '&status=' + status if status else '')).json()['findings']
    return [f for f in items if f['object']['name'] == name]


def poll_row(srv, poll):
    con = sqlite3.connect(srv.db)
    try:
        con.row_factory = sqlite3.Row
        return dict(con.execute('SELECT * FROM polls WHERE id = ?', (poll,)).fetchone())
    finally:
        con.close()


def today_polls(srv):
    h = srv.get('/api/v1/history?days=1&vcenter=lab').json()
    assert [p['vcenter'] for p in h['polls']] == ['lab'], h['polls']
    (day,) = h['polls'][0]['days']
    assert day['date'] == h['days'][-1]['date']
    return day


def test_the_first_read_is_the_one_full_poll(srv):
    day = today_polls(srv)
    assert day['full'] == {'polls': 1, 'failed': 0, 'mean_ms': day['full']['mean_ms'],
                           'max_ms': day['full']['max_ms']}
    assert day['full']['mean_ms'] > 0
    # The status's last full read and the history's agree to the second or so (the status
    # is taken after the checks ran).
    last_full = datetime.datetime.strptime(day['last_full'], '%Y-%m-%dT%H:%M:%SZ')
    status = datetime.datetime.strptime(srv.vcenter('lab')['last_full_read'],
                                        '%Y-%m-%dT%H:%M:%SZ')
    assert datetime.timedelta(0) <= status - last_full <= datetime.timedelta(seconds=5)
    # What the full read found names it.
    (f,) = findings(srv, 'snapshots', 'vm-snap-old')
    assert f['first_seen_by']['mode'] == 'full'
    assert f['resolved_by'] is None
    assert poll_row(srv, f['first_seen_by']['poll'])['mode'] == 'full'
    assert poll_row(srv, f['first_seen_by']['poll'])['version'] is None


def test_changes_read_incrementally_are_named_in_the_history(srv):
    sim = srv.sim
    before = sim.stats()
    (snap,) = findings(srv, 'snapshots', 'vm-snap-old')
    full_poll = snap['first_seen_by']['poll']
    assert not findings(srv, 'datastore-free-space', 'ds-free-ok')

    # A snapshot removed: its finding resolves in a round.
    vms = srv.get('/api/v1/inventory/vms?limit=1000').json()['vms']
    moref = next(v['moref'] for v in vms if v['name'] == 'vm-snap-old')
    assert VimClient(sim.url).remove_all_snapshots(moref) == 'success'
    (resolved,) = until(lambda: findings(srv, 'snapshots', 'vm-snap-old', 'resolved'),
                        'the snapshot finding resolved', srv)
    assert resolved['fingerprint'] == snap['fingerprint']
    assert resolved['first_seen_by'] == {'poll': full_poll, 'mode': 'full'}
    assert resolved['resolved_by']['mode'] == 'incremental'
    assert resolved['resolved_by']['poll'] > full_poll
    row = poll_row(srv, resolved['resolved_by']['poll'])
    assert row['mode'] == 'incremental' and row['ok'] == 1 and row['version']
    assert json.loads(row['counts_json'])['changed'].get('VirtualMachine', 0) >= 1

    # A datastore filled: a finding opens in a round, and says so (in the finding's own
    # answer too).
    sim.control('datastore', name='ds-free-ok', free_pct=1)
    (opened,) = until(lambda: findings(srv, 'datastore-free-space', 'ds-free-ok'),
                      'a free-space finding', srv)
    assert opened['first_seen_by']['mode'] == 'incremental'
    assert opened['first_seen_by']['poll'] >= resolved['resolved_by']['poll']
    assert opened['resolved_by'] is None
    one = srv.get('/api/v1/findings/' + opened['fingerprint']).json()
    assert one['first_seen_by'] == opened['first_seen_by']
    row = poll_row(srv, opened['first_seen_by']['poll'])
    assert row['mode'] == 'incremental' and row['ok'] == 1
    assert json.loads(row['counts_json'])['changed'].get('Datastore', 0) >= 1
    # fields= keeps the new members too.
    page = srv.get('/api/v1/findings?check=datastore-free-space&fields=fingerprint,'
                   'first_seen_by,resolved_by').json()['findings']
    assert {'fingerprint': opened['fingerprint'], 'first_seen_by': opened['first_seen_by'],
            'resolved_by': None} in page

    # No full read was made for either.
    after = sim.stats()
    assert after['retrieve_view'] == before['retrieve_view'], (before, after)
    assert srv.vcenter('lab')['mode'] == 'incremental'

    # Today: the one full read, and the rounds that brought the two changes.
    day = today_polls(srv)
    assert day['full']['polls'] == 1 and day['full']['failed'] == 0
    assert day['incremental']['polls'] >= 1 and day['incremental']['failed'] == 0
    assert day['polls'] == day['full']['polls'] + day['incremental']['polls']
    # The full read is still the last one.
    assert day['last_full'] == datetime.datetime.fromtimestamp(
        poll_row(srv, full_poll)['finished_ms'] // 1000,
        datetime.timezone.utc).strftime('%Y-%m-%dT%H:%M:%SZ')


def test_quiet_rounds_are_not_polls(srv):
    """Rounds that bring nothing (one every few seconds) add no poll; the snapshot's age
    still follows them (last_success)."""
    before = today_polls(srv)
    time.sleep(12)  # two rounds or more
    after = today_polls(srv)
    assert after['incremental']['polls'] == before['incremental']['polls']
    assert after['full']['polls'] == 1
    last = datetime.datetime.strptime(srv.vcenter('lab')['last_success'],
                                      '%Y-%m-%dT%H:%M:%SZ').replace(
                                          tzinfo=datetime.timezone.utc)
    assert (datetime.datetime.now(datetime.timezone.utc) - last).total_seconds() <= 8
