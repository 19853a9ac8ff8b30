"""Honest history: a finding is resolved only when its check ran and read everything it needs.
Polls the simulator twice with a host's esxcli refused (or the host not responding) the second
time, and checks that the host's findings stay open with their first_seen, marked unverified
with the reason, that nothing is reported resolved, and that they are verified again once the
host can be read. Runs under pytest, or as a plain script."""
import json
import os
import sys
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from simlib import Sim, Workspace, vslint  # noqa: E402

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
    res = vslint('check', '-c', conf, '--format', 'json', '--fail-on', 'never')
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    return doc['findings'], doc['summary']


def on_host(findings):
    """The findings on HOST and its LUNs, by (check, object name)."""
    return {(x['check'], x['object']['name']): x for x in findings
            if (x.get('host') or {}).get('name') == HOST and x['check'] != 'host-coverage'}


def coverage(findings):
    return [x for x in findings
            if x['check'] == 'host-coverage' and x['object']['name'] == HOST]


class Estate:
    def __init__(self):
        self.sim = Sim('violations')
        self.ws = Workspace()
        self.conf = self.ws.write_config([{'name': 'lab', 'url': self.sim.url, 'user': 'vslint',
                                           'password_file': self.ws.password_file()}])

    def close(self):
        self.sim.stop()
        self.ws.cleanup()


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


def test_esxcli_refused_keeps_findings_unverified():
    est = Estate()
    try:
        unverified_then_verified(est, {'esxcli': 'refuse'}, {'esxcli': 'allow'}, 'NoPermission',
                                 NEED_ESXCLI)
    finally:
        est.close()


def test_host_not_responding_is_not_judged():
    est = Estate()
    try:
        unverified_then_verified(est, {'connection': 'notResponding'},
                                 {'connection': 'connected'}, 'notResponding', ON_HOST)
    finally:
        est.close()


def test_disconnected_host_gets_one_finding():
    est = Estate()
    try:
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
    finally:
        est.close()


if __name__ == '__main__':
    failed = 0
    for name, fn in sorted(globals().items()):
        if name.startswith('test_') and callable(fn):
            try:
                fn()
                print('ok   %s' % name)
            except Exception as e:  # report every case, then fail once
                failed += 1
                print('FAIL %s: %r' % (name, e))
    sys.exit(1 if failed else 0)
