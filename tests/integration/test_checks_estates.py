"""Real estates, real exceptions (issue 27) against the simulator: the configurations of
tests/sim/scenario_estates.go's header (written from that spec, not from vslint's output), each
with its compliant twin, on `violations`. Vendor path policies and latency Round Robin are not
judged as if they were VMware's (multipath-policy, satp-claim-rule, host-coverage's evidence);
non-disk SAN devices are not judged at all; a local VMFS5 boot datastore is not a finding;
consolidation needed and orphaned deltas are; snapshots by design are exempt or info; a
multi-writer disk must be eager-zeroed; FT is critical only where legacy FT can run;
pvscsi-controller counts only emulated controllers' disks, in GiB."""
import pytest

from checkcases import twin_and_evidence_cases
from simlib import finding, of

GIB = 1 << 30


def est(s):
    """A LUN of esx-estates, as its findings name it."""
    return 'esx-estates naa.60060160e5e5' + '0' * 18 + s


# check -> {object name: severity}: what scenario_estates.go plants, from its spec.
WANT = {
    'snapshot-consolidation': {
        'vm-orphan-delta': 'warning',    # a delta of its own disk, no snapshot
        'vm-orphan-named': 'warning',    # a -000002.vmdk without a reported parent
        'vm-orphan-low': 'critical',     # on ds-free-warn, 20 % free
        'vm-consolidate': 'warning',     # runtime.consolidationNeeded
    },
    'multipath-policy': {
        est('e4'): 'warning',            # VMW_PSP_FIXED: VMware's own, still judged
        est('e5'): 'info',               # Round Robin by latency: accepted
        est('e6'): 'warning',            # Round Robin by bytes
    },
    'multipath-redundancy': {
        est('ea'): 'critical',           # a disk with one path
    },
}

TWINS = {
    # the snapshot explains the delta; linked clones; a replica; the golden image
    'snapshot-consolidation': ['vm-delta-snap', 'vm-lc-01', 'vm-lc-02', 'vm-replica',
                               'vm-golden', 'vm-snap-old', 'vm-clean-05'],
    'snapshots': ['vm-replica', 'vm-delta-snap', 'vm-lc-01'],
    # vendor PSPs; non-disk devices
    'multipath-policy': [est('e1'), est('e2'), est('e3'), est('e7'), est('e8'), est('e9')],
    'multipath-redundancy': [est('e7'), est('e8'), est('e9')],
    'device-identifier': [est('e7'), est('e8'), est('e9')],
    # the latency claim rule covers DGC; vendor PSPs and non-disks are not grouped
    'satp-claim-rule': ['esx-estates'],
    'vmfs-version': ['datastore1 (esx-estates)'],
    'vdisk-format': ['vm-mw-eager', 'vm-ft-eager'],
    'pvscsi-controller': ['vm-nvme-heavy', 'vm-os-lsi', 'vm-lsi-700gib'],
}

EVIDENCE = {
    'snapshot-consolidation': {
        'vm-orphan-delta': {'consolidation_needed': False, 'snapshots': 0, 'orphaned_deltas': 1,
                            'low_datastore': None, 'linked_clones': []},
        'vm-orphan-low': {'low_datastore': 'ds-free-warn', 'orphaned_deltas': 1},
        'vm-consolidate': {'consolidation_needed': True, 'snapshots': 1, 'orphaned_deltas': 0},
    },
    'multipath-policy': {
        est('e5'): {'limit_type': 'latency', 'psp': 'VMW_PSP_RR'},
        est('e6'): {'limit_type': 'bytes'},
    },
    'snapshots': {
        'vm-golden': {'linked_clones': ['vm-lc-01', 'vm-lc-02'], 'too_old': True},
    },
    'vdisk-format': {
        'vm-ft-legacy': {'host_version': '6.0.0', 'legacy_ft_possible': True},
        'vm-ft-lazy': {'host_version': '6.5.0', 'legacy_ft_possible': False},
    },
}


@pytest.mark.parametrize('check', WANT)
def test_flags_exactly_the_planted(lab, check):
    """Of the estates' objects (and, for snapshot-consolidation, of the whole estate: it is
    new), exactly the planted ones."""
    got = {n: x['severity'] for n, x in of(lab.findings, check).items()
           if check == 'snapshot-consolidation' or n.startswith('esx-estates ')}
    assert got == WANT[check]


test_compliant_twin_silent, test_evidence = twin_and_evidence_cases('lab', TWINS, EVIDENCE)


def test_orphaned_delta_names_the_delta_and_its_parent(lab):
    x = finding(lab.findings, 'snapshot-consolidation', 'vm-orphan-delta')
    (d,) = x['evidence']['delta_disks']
    assert d['file_name'] == '[ds-estates] vm-orphan-delta/vm-orphan-delta-000001.vmdk'
    assert d['parent'] == '[ds-estates] vm-orphan-delta/vm-orphan-delta.vmdk'
    assert d['orphaned'] is True
    assert 'no snapshot' in x['message']
    x = finding(lab.findings, 'snapshot-consolidation', 'vm-orphan-low')
    assert 'ds-free-warn' in x['message'] and 'free-space thresholds' in x['message']


def test_golden_image_is_never_told_to_consolidate(lab):
    """The snapshot its linked clones depend on: info, and the message says keep it."""
    x = finding(lab.findings, 'snapshots', 'vm-golden')
    assert x['severity'] == 'info'
    assert 'do not delete or consolidate' in x['message']
    assert 'delete or consolidate snapshots' not in x['message']


def test_vendor_psps_named_by_host_coverage(lab):
    """host-coverage says which devices were left to their vendor's PSP, so that silence is
    not read as compliance; VMware's own policies are not named."""
    x = finding(lab.findings, 'host-coverage', 'esx-estates')
    assert x['severity'] == 'info' and x.get('detail') == 'plug-ins'
    got = {d['device']: (d['plugin'], d['policy'], d['vendor_psp'])
           for d in x['evidence']['devices']}
    assert got == {
        est('e1')[12:]: ('NMP', 'NIMBLE_PSP_DIRECTED', True),
        est('e2')[12:]: ('NMP', 'DELL_PSP_EQL_ROUTED', True),
        est('e3')[12:]: ('NMP', 'HTI_PSP_HDLM_EXLBK', True),
    }
    assert 'NIMBLE_PSP_DIRECTED' in x['message']
    assert x['evidence']['checks_not_applicable'] == ['multipath-policy', 'satp-claim-rule']


def test_latency_is_accepted_not_warned(lab):
    x = finding(lab.findings, 'multipath-policy', est('e5'))
    assert 'accepted' in x['message']
    assert not any('--psp=VMW_PSP_RR' in c for c in x['evidence']['commands'])


def test_satp_claim_rule_on_the_estates_host(lab):
    """esx-estates' DGC rule switches by latency (covered), and its vendor-PSP and non-disk
    devices make no group of their own; the lab host whose DGC rule has no IOPS limit is still
    flagged (the twin)."""
    got = {x.get('detail') for x in lab.findings
           if x['check'] == 'satp-claim-rule' and x['object']['name'] == 'esx-estates'}
    assert got == set()
    assert any(x['check'] == 'satp-claim-rule' and x['object']['name'] == 'esx-san-1'
               for x in lab.findings)


def test_local_vmfs5_skipped_local_vmfs3_critical(lab):
    got = of(lab.findings, 'vmfs-version')
    assert 'datastore1 (esx-estates)' not in got
    assert got['datastore1 (esx-legacy-60)']['severity'] == 'critical'


def test_fault_tolerance_by_host_version(lab):
    """Legacy FT (ESXi 6.0) needs eager disks: critical. FT on 6.5: info, quoting the guide."""
    legacy = finding(lab.findings, 'vdisk-format', 'vm-ft-legacy')
    assert legacy['severity'] == 'critical' and 'older than 6.5' in legacy['message']
    current = finding(lab.findings, 'vdisk-format', 'vm-ft-lazy')
    assert current['severity'] == 'info'
    assert '"Best practice is to use the default virtual disk format unless specific needs ' \
           'dictate the use of thick provisioned eager zeroed' in current['message']


def test_multi_writer_needs_eager_zeroed(lab):
    x = finding(lab.findings, 'vdisk-format', 'vm-mw-lazy')
    assert x['severity'] == 'critical'
    assert [(d['format'], d['reason']) for d in x['evidence']['disks_not_eager_zeroed']] == \
        [('lazyzeroedthick', 'multi-writer')]
    assert 'KB 1034165' in x['message']


def test_pvscsi_counts_emulated_disks_in_gib(lab, module_workspace):
    """700 GiB on LSI Logic is not more than 750 GiB; at 650 GiB it is, and the NVMe VM and the
    OS-on-LSI VM stay silent whatever the threshold (their LSI disks are 0 and 40 GiB)."""
    fs = lab.check_with(module_workspace, {'pvscsi-controller': {'max_disk_gb': 650}})
    got = of(fs, 'pvscsi-controller')
    assert got['vm-lsi-700gib']['evidence']['emulated_disk_bytes'] == 700 * GIB
    assert 'vm-nvme-heavy' not in got and 'vm-os-lsi' not in got
