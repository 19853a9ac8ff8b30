"""The host checks (multipath-policy, multipath-redundancy, device-identifier, satp-claim-rule,
iscsi-delayed-ack, host-coverage) on the simulator's `edges` scenario, the estate of real-world
cases: local devices that do not say so, HPP and PowerPath devices, ALUA standby and off paths,
two paths through one HBA, one iSCSI IQN per volume found by a send target, claim rules scoped
to a device, a driver, a transport or a claim option. Written from the spec in the header of
tests/sim/scenario_edges_hosts.go, not from vslint's output: each check must flag exactly the
planted cases, with the planted evidence, and none of the compliant twins."""
import pytest

from simlib import Estate, Sim, evidence_has, finding, ids_of, of, rows_of, silent

CHECKS = ('multipath-policy', 'multipath-redundancy', 'device-identifier', 'satp-claim-rule',
          'iscsi-delayed-ack', 'host-coverage')


def naa(s):
    return 'naa.600601600000000000000000000000' + s


VOL = 'iqn.2001-05.com.equallogic:0-8a0906-edge-vol'
POWERPATH = 'naa.60000970000197601234533030303441'
SAS = 'naa.5000c500a1b2c3d4'
NVME = 'eui.0025388b91c3a1b2'
MPX = 'mpx.vmhba0:C0:T0:L0'
RAID = 'naa.600508b1001c4d5e6f70000000000001'
HPP_TWO, HPP_ONE = 'eui.00a0b1c2d3e4f501', 'eui.00a0b1c2d3e4f502'


@pytest.fixture(scope='module')
def edges(new_workspace):
    """The findings of one `vslint check` of the edges estate."""
    with Sim('edges') as sim:
        return Estate(sim, new_workspace(), 'edges').check()


# check -> {object name: (object type, severity, detail)}: every finding the spec plants for
# these checks on the whole edges estate.
WANT = {
    'multipath-policy': {},
    'multipath-redundancy': {
        'esx-edge-01 ' + naa('c2'): ('lun', 'critical', naa('c2')),      # one adapter
        'esx-edge-01 ' + naa('c3'): ('lun', 'critical', naa('c3')),      # active + off
        'esx-edge-nvmeof ' + HPP_ONE: ('lun', 'critical', HPP_ONE),      # HPP, one path
    },
    'device-identifier': {},
    'satp-claim-rule': {
        ('esx-edge-rules', 'VMW_SATP_ALUA/DGC'): ('host', 'warning', 'VMW_SATP_ALUA/DGC'),
        ('esx-edge-rules', 'VMW_SATP_SYMM/EMC'): ('host', 'warning', 'VMW_SATP_SYMM/EMC'),
        ('esx-edge-rules', 'VMW_SATP_ALUA/NETAPP'): ('host', 'warning', 'VMW_SATP_ALUA/NETAPP'),
        ('esx-edge-rules', 'VMW_SATP_DEFAULT_AA/HITACHI'):
            ('host', 'warning', 'VMW_SATP_DEFAULT_AA/HITACHI'),
    },
    'iscsi-delayed-ack': {
        'esx-edge-iscsi vmhba64 10.0.5.10:3260': ('iscsi_target', 'warning',
                                                  'vmhba64/10.0.5.10:3260'),
        'esx-edge-iscsi-b vmhba64': ('iscsi_hba', 'warning', 'vmhba64'),
    },
    'host-coverage': {
        ('esx-edge-01', 'plug-ins'): ('host', 'info', 'plug-ins'),
        ('esx-edge-nvmeof', 'plug-ins'): ('host', 'info', 'plug-ins'),
    },
}

# Compliant twins the spec names (also implied by the exact sets; listed so that a failure names
# what went wrong).
LOCAL = [MPX, SAS, NVME]
TWINS = {
    'multipath-policy': ['esx-edge-01 ' + n for n in LOCAL + [POWERPATH, naa('c1')]] +
                        ['esx-edge-nvmeof ' + n for n in (HPP_TWO, HPP_ONE, RAID)],
    'multipath-redundancy': ['esx-edge-01 ' + n for n in LOCAL + [POWERPATH, naa('c1')]] +
                            ['esx-edge-nvmeof ' + n for n in (HPP_TWO, RAID)] +
                            ['esx-edge-rules ' + naa(s) for s in ('a1', 'f1', 'e1')],
    'device-identifier': ['esx-edge-01 ' + n for n in LOCAL + [POWERPATH]] +
                         ['esx-edge-nvmeof ' + RAID],
    'iscsi-delayed-ack': ['esx-edge-iscsi vmhba64 10.0.5.20:3260', 'esx-edge-iscsi vmhba64',
                          'esx-edge-iscsi-b vmhba64 10.0.6.10:3260',
                          'esx-edge-iscsi-b vmhba64 10.0.6.20:3260',
                          'esx-edge-rules vmhba64'],
}
# satp-claim-rule twins: (host, SATP/vendor) groups that must not be flagged.
RULE_TWINS = [('esx-edge-01', 'VMW_SATP_ALUA/DGC'), ('esx-edge-01', 'VMW_SATP_LOCAL/SEAGATE'),
              ('esx-edge-nvmeof', 'VMW_SATP_DEFAULT_AA/HP'),
              ('esx-edge-rules', 'VMW_SATP_ALUA/3PARdata')]


def keyed(findings, check):
    """A check's findings by display name, or by (host, detail) for findings on a host, which
    may have several."""
    if check in ('satp-claim-rule', 'host-coverage'):
        return {(x['object']['name'], x['detail']): x for x in findings if x['check'] == check}
    return of(findings, check)


@pytest.mark.parametrize('check', CHECKS)
def test_flags_exactly_the_planted(edges, check):
    got = keyed(edges, check)
    assert {n: (x['object']['type'], x['severity'], x.get('detail')) for n, x in got.items()} \
        == WANT[check]
    assert len([x for x in edges if x['check'] == check]) == len(got), \
        'more than one finding for an object'


@pytest.mark.parametrize('check,name,want', rows_of(WANT), ids=ids_of(rows_of(WANT)))
def test_planted_flagged(edges, check, name, want):
    x = keyed(edges, check).get(name)
    assert x is not None, '%s not flagged by %s' % (name, check)
    assert (x['object']['type'], x['severity'], x.get('detail')) == want
    assert x['message']


@pytest.mark.parametrize('check,name', rows_of(TWINS), ids=ids_of(rows_of(TWINS)))
def test_twin_silent(edges, check, name):
    silent(edges, check, name)


@pytest.mark.parametrize('host,group', RULE_TWINS, ids=['%s:%s' % r for r in RULE_TWINS])
def test_claim_rule_twin_silent(edges, host, group):
    x = keyed(edges, 'satp-claim-rule').get((host, group))
    assert x is None, 'compliant %s %s flagged: %s' % (host, group, x['message'])


# ---- multipath-redundancy: standby is usable, off is not, one HBA is not redundant ----------

EVIDENCE = {
    'multipath-redundancy': {
        'esx-edge-01 ' + naa('c2'): {'paths_total': 2, 'paths_usable': 2, 'adapters': ['vmhba2'],
                                     'min_adapters': 2, 'multipath_plugin': 'NMP'},
        'esx-edge-01 ' + naa('c3'): {'paths_total': 2, 'paths_usable': 1, 'paths_disabled': 1,
                                     'paths_dead': 0},
        'esx-edge-nvmeof ' + HPP_ONE: {'paths_total': 1, 'paths_usable': 1,
                                       'multipath_plugin': 'HPP', 'adapters': ['vmhba6']},
    },
}


@pytest.mark.parametrize('check,name,want', rows_of(EVIDENCE), ids=ids_of(rows_of(EVIDENCE)))
def test_evidence(edges, check, name, want):
    evidence_has(edges, check, name, want)


def test_one_adapter_said_in_the_message(edges):
    x = finding(edges, 'multipath-redundancy', 'esx-edge-01 ' + naa('c2'))
    assert 'all through one adapter (vmhba2)' in x['message']


def test_off_path_switched_back_on(edges):
    ev = finding(edges, 'multipath-redundancy', 'esx-edge-01 ' + naa('c3'))['evidence']
    off = [p['name'] for p in ev['paths'] if p['state'] == 'off']
    assert [p['adapter'] for p in ev['paths'] if p['state'] == 'off'] == ['vmhba3']
    assert [c for c in ev['commands'] if '--state=active' in c] == [
        'esxcli storage core path set --state=active --path=' + off[0]]


def test_hpp_remediation_fits(edges):
    """HPP's paths get HPP's commands: `esxcli storage nmp` does not know its devices."""
    cmds = finding(edges, 'multipath-redundancy', 'esx-edge-nvmeof ' + HPP_ONE)['evidence'][
        'commands']
    assert cmds[0] == 'esxcli storage hpp path list --device=' + HPP_ONE
    assert [c for c in cmds if ' nmp ' in c] == []


# ---- iscsi-delayed-ack: one IQN per volume, inherited from the send target -----------------

def test_every_iqn_on_the_portal_named(edges):
    x = finding(edges, 'iscsi-delayed-ack', 'esx-edge-iscsi vmhba64 10.0.5.10:3260')
    ev = x['evidence']
    iqns = [VOL + str(i) for i in (1, 2, 3)]
    assert all(i in x['message'] for i in iqns)
    assert sorted((t['kind'], t.get('iscsi_name'), t['delayed_ack_from']) for t in ev['targets']) \
        == [('send', None, 'own')] + [('static', i, 'send target 10.0.5.10:3260') for i in iqns]
    assert ev['commands'][0] == ('esxcli iscsi adapter discovery sendtarget param set '
                                 '--adapter=vmhba64 --address=10.0.5.10:3260 --key=DelayedAck '
                                 '--value=false')
    assert sorted(ev['commands'][1:]) == [
        'esxcli iscsi adapter target portal param set --adapter=vmhba64 '
        '--address=10.0.5.10:3260 --name=%s --key=DelayedAck --value=false' % i for i in iqns]
    assert ev['command'] == ev['commands'][0]


def test_targets_follow_their_send_target_not_the_adapter(edges):
    """esx-edge-iscsi-b's adapter is true; the volumes its send target (false) found are not
    among the targets that follow the adapter."""
    ev = finding(edges, 'iscsi-delayed-ack', 'esx-edge-iscsi-b vmhba64')['evidence']
    assert ev['targets_inheriting'] == ['10.0.6.20:3260']
    assert [t['iscsi_name'] for t in ev['inheriting']] == ['iqn.1992-04.com.emc:cx.edge.b0']


# ---- satp-claim-rule: a scoped rule covers only its scope -----------------------------------

SCOPED = {
    'VMW_SATP_ALUA/DGC': ([naa('e2')], 'device ' + naa('e1')),
    'VMW_SATP_SYMM/EMC': ([naa('f2')], 'driver lpfc'),
    'VMW_SATP_ALUA/NETAPP': ([naa('a2')], 'transport iscsi'),
    'VMW_SATP_DEFAULT_AA/HITACHI': ([naa('b1')], 'claim option tpgs_on'),
}


@pytest.mark.parametrize('group', sorted(SCOPED))
def test_scoped_rule_covers_only_its_scope(edges, group):
    x = keyed(edges, 'satp-claim-rule')[('esx-edge-rules', group)]
    luns, scope = SCOPED[group]
    assert x['evidence']['luns'] == luns
    assert [r['scope'] for r in x['evidence']['rules_out_of_scope']] == [scope]
    assert x['evidence']['rules_out_of_scope'][0]['leaves_out'] == luns
    assert scope in x['message']


# ---- host-coverage: devices of another plug-in than NMP are said, not flagged ---------------

def test_powerpath_said_not_guessed(edges):
    ev = keyed(edges, 'host-coverage')[('esx-edge-01', 'plug-ins')]['evidence']
    assert [(d['device'], d['plugin'], d['paths_reported']) for d in ev['devices']] == \
        [(POWERPATH, 'PowerPath', False)]
    assert ev['checks_not_verified'] == ['multipath-redundancy']
    assert ev['checks_not_applicable'] == ['multipath-policy', 'satp-claim-rule']


def test_hpp_said(edges):
    ev = keyed(edges, 'host-coverage')[('esx-edge-nvmeof', 'plug-ins')]['evidence']
    assert sorted((d['device'], d['plugin'], d['policy']) for d in ev['devices']) == \
        [(HPP_TWO, 'HPP', 'LB-RR'), (HPP_ONE, 'HPP', 'LB-RR')]
    assert ev['checks_not_verified'] == []


def test_no_nmp_fix_for_other_plugins(edges):
    """No finding anywhere offers an `esxcli storage nmp` command for an HPP or PowerPath
    device."""
    others = (POWERPATH, NVME, HPP_TWO, HPP_ONE)
    bad = [(x['check'], x['object']['name']) for x in edges
           for c in (x['evidence'] or {}).get('commands') or []
           if ' nmp ' in c and any(d in c for d in others)]
    assert bad == []
