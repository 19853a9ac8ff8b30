"""Honest history: a finding is resolved only when its check ran and read everything it needs.
Polls the simulator twice with a host's esxcli refused (or the host not responding) the second
time, and checks that the host's findings stay open with their first_seen, marked unverified
with the reason, that nothing is reported resolved, and that they are verified again once the
host can be read. (A check that fails half-way: tests/unit/test_findings.c.)"""
import json
import time
import urllib.request

import pytest

from simlib import Estate, run_ok

HOST = 'esx-san-1'
# The host-level findings of the violations scenario on esx-san-1, by (check, object name).
# multipath-policy and satp-claim-rule need esxcli; multipath-redundancy and
# device-identifier only the host's configuration.
NAA = 'naa.60060160a0b0000000000000000000'
ON_HOST = {
    ('multipath-policy', NAA + 'a1'), ('multipath-policy', NAA + 'a2'),
    ('multipath-redundancy', NAA + 'a4'), ('multipath-redundancy', NAA + 'a5'),
    ('device-identifier', 'sym.000192601234533031323334'),
    ('satp-claim-rule', HOST),
    # the seeds' rules whole (tests/sim/scenario_seeds.go): paths to one storage processor, and
    # a VVol protocol endpoint on MRU, both as vCenter itself reports them
    ('multipath-redundancy', NAA + 'f1'), ('multipath-policy', NAA + 'f3'),
}
# What esxcli alone tells: a2's Round Robin IOPS limit of 1000 and the host's claim rules. a1 is
# on MRU, which vCenter itself reports: still judged (and verified) without esxcli.
NEED_ESXCLI = {('multipath-policy', NAA + 'a2'), ('satp-claim-rule', HOST)}


def control(sim, **params):
    """Changes the running estate (tests/sim/control.go)."""
    query = '&'.join('%s=%s' % kv for kv in params.items())
    req = urllib.request.Request(sim.url.replace('/sdk', '/vslint-sim/host?') + query,
                                 data=b'', method='POST')
    with urllib.request.urlopen(req, timeout=30) as r:
        assert r.status == 204


def check(conf):
    """One `vslint check` (a poll, then the checks): findings and summary."""
    doc = json.loads(run_ok('check', '-c', conf, '--format', 'json', '--fail-on', 'never').stdout)
    return doc['findings'], doc['summary']


def on_host(findings):
    """The findings on HOST and its LUNs, by (check, object name)."""
    return {(x['check'], x['object']['name']): x for x in findings
            if (x.get('host') or {}).get('name') == HOST and x['check'] != 'host-coverage'}


def coverage(findings):
    return [x for x in findings
            if x['check'] == 'host-coverage' and x['object']['name'] == HOST]


@pytest.fixture
def est(start_sim, workspace):
    """A violations estate of this test's own: the tests change it."""
    return Estate(start_sim('violations'), workspace)


def unverified_then_verified(est, change, undo, reason_has, needs):
    """Poll, change the host, poll (findings kept unverified), undo, poll (verified again)."""
    first, _ = check(est.conf)
    before = on_host(first)
    assert set(before) == ON_HOST, sorted(before)
    assert not coverage(first)
    time.sleep(1.1)  # a later second, so a refreshed last_seen would show

    control(est.sim, name=HOST, **change)
    second, summary = check(est.conf)
    after = on_host(second)
    # Nothing was seen fixed: every finding is still there, open, with its history.
    assert summary['resolved_this_run'] == 0
    assert set(after) == ON_HOST, sorted(after)
    for key, x in after.items():
        b = before[key]
        assert x['first_seen'] == b['first_seen'], key
        assert x['status'] == 'open', (key, x['status'])  # no longer "new", never "resolved"
        assert x['resolved_at'] is None, key
        if key in needs:
            # Kept exactly as last seen, and saying since when and why.
            assert x['last_seen'] == b['last_seen'], key
            assert x['message'] == b['message'], key
            assert x['unverified'] is not None, key
            assert x['unverified']['since'] > b['last_seen'], key
            assert reason_has in x['unverified']['reason'], (key, x['unverified'])
        else:
            # Read in this poll: verified and refreshed.
            assert x['unverified'] is None, key
            assert x['last_seen'] > b['last_seen'], key
    assert summary['by_status']['unverified'] == len(needs)
    # The host itself is reported once, saying what could not be read.
    cov = coverage(second)
    assert len(cov) == 1, cov
    assert reason_has in cov[0]['message'], cov[0]['message']

    # A third poll while the host is still unreadable keeps "since" where it was.
    time.sleep(1.1)
    third, summary = check(est.conf)
    again = on_host(third)
    assert summary['resolved_this_run'] == 0
    for key, x in again.items():
        assert x['first_seen'] == before[key]['first_seen'], key
        if key in needs:
            assert x['unverified']['since'] == after[key]['unverified']['since'], key

    control(est.sim, name=HOST, **undo)
    fourth, summary = check(est.conf)
    back = on_host(fourth)
    assert summary['resolved_this_run'] == 1  # the host-coverage finding: really fixed
    assert set(back) == ON_HOST
    for key, x in back.items():
        assert x['unverified'] is None, key
        assert x['first_seen'] == before[key]['first_seen'], key
        assert x['status'] == 'open', key
    assert not coverage(fourth)


def test_esxcli_refused_keeps_findings_unverified(est):
    unverified_then_verified(est, {'esxcli': 'refuse'}, {'esxcli': 'allow'}, 'NoPermission',
                             NEED_ESXCLI)


def test_host_not_responding_is_not_judged(est):
    unverified_then_verified(est, {'connection': 'notResponding'}, {'connection': 'connected'},
                             'notResponding', ON_HOST)


def test_disconnected_host_gets_one_finding(est):
    control(est.sim, name=HOST, connection='disconnected')
    findings, _ = check(est.conf)
    # Not judged on its stale configuration: none of its host-level findings appear...
    assert on_host(findings) == {}
    # ...and it gets one finding of its own, a warning naming the checks it escapes.
    cov = coverage(findings)
    assert len(cov) == 1
    assert cov[0]['severity'] == 'warning'
    assert 'disconnected' in cov[0]['message']
    assert 'multipath-redundancy' in cov[0]['evidence']['checks_not_verified']
    assert cov[0]['host']['name'] == HOST
