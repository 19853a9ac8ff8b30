"""Software iSCSI through one NIC (issue 27 item 2) against the simulator: the hosts of
tests/sim/scenario_iscsi_nics.go's header (written from that spec, not from vslint's output),
each with its compliant twin, on `violations`. multipath-redundancy counts a software iSCSI
adapter's bound vmknics as its independent elements, so one bound vmknic with two portals is not
redundant; iscsi-jumbo-frames judges, when nothing is bound, the vmknic on a target's subnet."""
import pytest

from checkcases import twin_and_evidence_cases
from simlib import finding, of

HOSTS = ('esx-1nic', 'esx-2nic', 'esx-nobind', 'esx-nobind-ok')


def lun(s):
    return 'naa.60060160a5c5' + '0' * 18 + s


# check -> {object name: severity}: what scenario_iscsi_nics.go plants, from its spec.
WANT = {
    'multipath-redundancy': {
        'esx-1nic ' + lun('c1'): 'critical',   # both paths on vmk1, the only one bound
    },
    'iscsi-jumbo-frames': {
        'esx-nobind vmk1': 'warning',            # MTU 1500, on target 10.0.23.20's subnet
    },
}

TWINS = {
    'multipath-redundancy': ['esx-2nic ' + lun('c2'),    # one path per bound vmknic
                             'esx-nobind ' + lun('c3'),    # unbound: not judged on NICs
                             'esx-nobind-ok ' + lun('c4')],
    'iscsi-jumbo-frames': ['esx-nobind vmk2', 'esx-nobind-ok vmk1',
                           'esx-nobind-ok vmk2', 'esx-nobind vmk0',
                           'esx-1nic vmk1', 'esx-2nic vmk1',
                           'esx-2nic vmk2'],
}

EVIDENCE = {
    'multipath-redundancy': {
        'esx-1nic ' + lun('c1'): {
            'paths_total': 2, 'paths_usable': 2, 'vmknic': 'vmk1',
            'adapters': ['vmhba64 vmk1']},
    },
    'iscsi-jumbo-frames': {
        'esx-nobind vmk1': {
            'selected_by': 'target subnet', 'adapter': 'vmhba64', 'target': '10.0.23.20',
            'vmknic_ip': '10.0.23.5', 'subnet_mask': '255.255.255.0', 'bound_to': [],
            'vmknic_mtu': 1500, 'switch_mtu': 9000, 'switch_name': 'vSwitch-iscsi'},
    },
}


@pytest.mark.parametrize('check', WANT)
def test_flags_exactly_the_planted(lab, check):
    """Of these hosts' objects, exactly the planted ones."""
    got = {n: x['severity'] for n, x in of(lab.findings, check).items()
           if n.split(' ', 1)[0] in HOSTS}
    assert got == WANT[check]


test_compliant_twin_silent, test_evidence = twin_and_evidence_cases('lab', TWINS, EVIDENCE)


def test_one_nic_paths_in_the_evidence(lab):
    """Both paths, to two portals, through the one adapter (their targets are there too)."""
    x = finding(lab.findings, 'multipath-redundancy', 'esx-1nic ' + lun('c1'))
    assert [(p['name'], p['state'], p['adapter']) for p in x['evidence']['paths']] == [
        ('vmhba64:C0:T0:L1', 'active', 'vmhba64'), ('vmhba64:C0:T1:L1', 'active', 'vmhba64')]


def test_one_nic_named_in_the_message(lab):
    """What the user reads: the one NIC, and what to do about it."""
    x = finding(lab.findings, 'multipath-redundancy', 'esx-1nic ' + lun('c1'))
    assert 'vmk1 is the only vmknic bound to software iSCSI adapter vmhba64' in x['message']
    assert 'bind a second vmknic' in x['message']


def test_unbound_vmknic_says_how_it_was_chosen(lab):
    x = finding(lab.findings, 'iscsi-jumbo-frames', 'esx-nobind vmk1')
    assert "carries vmhba64's iSCSI to 10.0.23.20, on its subnet 10.0.23.5/255.255.255.0" \
        in x['message']
    assert 'no port binding' in x['message']


def test_clean_iscsi_host_binds_two_nics_and_stays_silent(clean):
    """The clean scenario's iSCSI host, replanted with two bound vmknics (one path channel
    each), is not flagged by either check."""
    for check in ('multipath-redundancy', 'iscsi-jumbo-frames'):
        assert [n for n in of(clean.findings, check) if n.startswith('esx-iscsi-clean')] == []
