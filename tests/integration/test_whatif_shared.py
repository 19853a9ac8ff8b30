"""The estate the gate and placement share in `vslint serve` (api/estates.c), on the `gate`
scenario of a simulator of this module's own: loaded once however many requests ask at once
(vslint_estate_builds_total in /metrics), loaded again after a poll wrote (a placement sees the
new snapshot), and giving the answers `vslint gate --offline` gives on the same database."""
import json
import re
import threading
import time
import urllib.parse

import pytest

from apilib import serving
from simlib import Sim, vcenter, vslint


@pytest.fixture(scope='module')
def sim():
    with Sim('gate') as s:
        yield s


@pytest.fixture(scope='module')
def srv(sim, module_workspace):
    """A daemon whose estate builds take 1 s (VSLINT_DEBUG_ESTATE_BUILD_MS), so that requests
    sent together all arrive while the first one builds."""
    mp = pytest.MonkeyPatch()
    mp.setenv('VSLINT_DEBUG_ESTATE_BUILD_MS', '1000')
    try:
        with serving(module_workspace, [vcenter(module_workspace, sim.url, 'lab',
                                                interval=3600)]) as s:
            mp.undo()
            yield s
    finally:
        mp.undo()


def builds(s):
    m = re.search(r'^vslint_estate_builds_total (\d+)$', s.get('/metrics').body, re.M)
    assert m, 'no vslint_estate_builds_total in /metrics'
    return int(m.group(1))


def gate(s, body):
    a = s.post('/api/v1/gate', data=json.dumps(body).encode(),
               headers={'Content-Type': 'application/json'})
    assert a.status == 200, a.body
    return a.json()


def placement(s, **query):
    a = s.get('/api/v1/placement?' + urllib.parse.urlencode(query))
    assert a.status == 200, a.body
    return a.json()


def together(n, fn):
    """fn() on n threads released at once; their results in thread order."""
    out, start = [None] * n, threading.Barrier(n)

    def run(i):
        start.wait()
        out[i] = fn()
    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return out


def test_concurrent_cold_requests_build_once(srv):
    """Eight placements at once on a daemon that has not built its estate yet (more than its
    four HTTP threads): one build, and the same answer for all; eight more find it built."""
    assert builds(srv) == 0
    answers = together(8, lambda: placement(srv, disks_gb='12', limit='50'))
    assert builds(srv) == 1
    assert all(without_age(a) == without_age(answers[0]) for a in answers)
    assert answers[0]['candidates'], answers[0]
    again = together(8, lambda: placement(srv, disks_gb='12', limit='50'))
    assert all(without_age(a) == without_age(again[0]) for a in again)
    assert builds(srv) == 1


CASES = [
    {'datastore': 'ds-gate-free', 'disks_gb': [12]},
    {'datastore': 'ds-gate-free', 'disks_gb': [18]},
    {'datastore': 'ds-gate-vms', 'disks_gb': [1], 'vms': 2, 'disk_format': 'thin'},
    {'datastore_cluster': 'pod-gate', 'disks_gb': [20, 4]},
    {'datastore': 'ds-gate-thin', 'disks_gb': [12], 'disk_format': 'thin'},
    {'datastore': 'ds-gate-roomy', 'disks_gb': [10], 'ft': True, 'fail_on': 'info'},
    {'datastore': 'ds-gate-dead', 'disks_gb': [1]},
]


def cli_args(body):
    args = ['--datastore', body['datastore']] if 'datastore' in body else \
        ['--datastore-cluster', body['datastore_cluster']]
    args += ['--disk-gb', ','.join(str(g) for g in body['disks_gb'])]
    for key, flag in (('vms', '--vms'), ('disk_format', '--disk-format'),
                      ('fail_on', '--fail-on')):
        if key in body:
            args += [flag, str(body[key])]
    if body.get('ft'):
        args.append('--ft')
    return args


def without_age(ans):
    """ans without the snapshot's age, which moves on with the clock (and with every incremental
    round that confirms the snapshot) between two requests on the same estate: a gate's answer
    has it at the top, a placement's once per vCenter in "snapshots" (the answers of a batch
    under load, a second apart, differed there)."""
    out = {k: v for k, v in ans.items() if k != 'snapshot_age_s'}
    if 'snapshots' in out:
        out['snapshots'] = [{k: v for k, v in s.items() if k != 'snapshot_age_s'}
                            for s in out['snapshots']]
    return out


@pytest.mark.parametrize('body', CASES, ids=[json.dumps(c) for c in CASES])
def test_shared_answers_are_the_offline_gates(srv, body):
    """Each answer of the daemon, from the shared estate (asked twice: the second one reads
    what the first left), is `vslint gate --offline`'s on the same database, which loads its
    own."""
    first, second = gate(srv, body), gate(srv, body)
    r = vslint('gate', '-c', srv.conf, '--offline', '--format', 'json', *cli_args(body))
    assert r.returncode == (0 if first['allowed'] else 1), r.stderr
    offline = json.loads(r.stdout)
    assert without_age(first) == without_age(offline)
    assert without_age(second) == without_age(offline)


def test_a_poll_builds_the_estate_again(srv, sim):
    """The simulator's datastore fills up, the daemon polls: the next placement and gate judge
    the new snapshot (one build more), and once it is emptied and polled again, the old
    answer comes back."""
    body = {'datastore': 'ds-gate-free', 'disks_gb': [12]}
    before = gate(srv, body)
    names = [c['datastore'] for c in placement(srv, disks_gb='12', limit='50')['candidates']]
    assert before['allowed'] and 'ds-gate-free' in names
    n = builds(srv)
    sim.control('datastore', name='ds-gate-free', free_pct=5)
    try:
        srv.poll_and_wait('lab')
        after = gate(srv, body)
        assert not after['allowed']
        assert after['before']['free_pct'] == pytest.approx(5, abs=0.01)
        assert ('datastore-free-space', 'ds-gate-free') in [
            (x['check'], x['object']) for x in after['reasons']]
        ans = placement(srv, disks_gb='12', limit='50')
        assert 'ds-gate-free' not in [c['datastore'] for c in ans['candidates']]
        assert 'ds-gate-free' in [c['datastore'] for c in ans['rejected']]
        assert builds(srv) == n + 1
    finally:
        sim.control('datastore', name='ds-gate-free', free_pct=32)
        srv.poll_and_wait('lab')
    assert without_age(gate(srv, body)) == without_age(before)
    assert builds(srv) == n + 2


def test_a_write_that_changes_no_snapshot_builds_nothing(srv):
    """`vslint check --offline` beside the daemon records findings without polling: the
    database moved on, the stored snapshot did not, and the estate is not loaded again."""
    before = placement(srv, disks_gb='12', limit='50')
    n = builds(srv)
    r = vslint('check', '-c', srv.conf, '--offline', '--fail-on', 'never', '-o', '/dev/null')
    assert r.returncode == 0, r.stderr
    after = placement(srv, disks_gb='12', limit='50')
    assert {k: v for k, v in after.items() if k != 'snapshots'} == \
        {k: v for k, v in before.items() if k != 'snapshots'}
    assert builds(srv) == n


def test_rounds_that_change_nothing_keep_the_estate_and_its_age_fresh(srv):
    """The daemon follows the simulator (incremental rounds): a round that finds nothing
    changed confirms the snapshot without a new one. The shared estate is not loaded again,
    and the answers' snapshot age is the last confirmation's, not the build's."""
    body = {'datastore': 'ds-gate-roomy', 'disks_gb': [1]}
    gate(srv, body)
    n = builds(srv)
    status = srv.vcenter('lab')
    assert status['mode'] == 'incremental', status
    time.sleep(14)
    ans = gate(srv, body)
    assert builds(srv) == n
    assert ans['snapshot_age_s'] <= 8, ans['snapshot_age_s']
