"""satp-claim-rule against the simulator: on `violations` it flags exactly what the header of
tests/sim/scenario_violations.go plants (esx-san-1, whose DGC rule sets Round Robin without an
IOPS limit) with the planted evidence, and none of the twins (the other lab hosts with the DGC
rule, esx-san-1's own VMAX LUN under 001's rule, esx-san-noesxcli whose rules are unknown); on
`clean` it flags nothing; [check satp-claim-rule] iops changes what is flagged."""
import pytest

CHECK = 'satp-claim-rule'
NAA = 'naa.60060160a0b0' + '0' * 18
SYM = 'sym.000192601234533031323334'


def flagged(fs):
    """(host, detail) -> finding, for this check's findings."""
    return {(x['object']['name'], x['detail']): x for x in fs if x['check'] == CHECK}


PLANTED = ('esx-san-1', 'VMW_SATP_ALUA/DGC')
# Lab hosts with the DGC rule that gives Round Robin with iops=1, or without SAN LUNs.
TWINS = ('esx-iscsi-a', 'esx-iscsi-b', 'esx-iscsi-dvs', 'esx-noblockdelete', 'esx-clean-01',
         'esx-iscsi-clean')


@pytest.fixture(scope='module')
def planted(lab):
    x = flagged(lab.findings).get(PLANTED)
    assert x is not None, '%s %s not flagged' % PLANTED
    return x


@pytest.fixture(scope='module')
def truth_hosts(violations_sim):
    return {h['name']: h for h in violations_sim.truth()['hosts']}


@pytest.fixture(scope='module')
def stored_hosts(lab):
    return {h['name']: h for h in lab.inventory()['vcenters'][0]['hosts']}


def test_clean_estate_is_silent(clean):
    assert sorted(flagged(clean.findings)) == []


def test_clean_estate_rules_stored(clean):
    """Every host of the clean estate has its rules stored."""
    assert all(h['satp_rules'] for h in clean.inventory()['vcenters'][0]['hosts'])


def test_flags_exactly_the_planted(lab):
    assert sorted(flagged(lab.findings)) == [PLANTED]


def test_object(planted, truth_hosts):
    assert planted['object'] == {'type': 'host', 'moref': truth_hosts['esx-san-1']['moref'],
                                 'name': 'esx-san-1'}


def test_severity(planted):
    assert planted['severity'] == 'warning'


def test_message(planted):
    assert planted['message'] == (
        'host esx-san-1 has no SATP claim rule giving VMW_SATP_ALUA LUNs from DGC Round Robin '
        'with iops=1; LUNs presented later will get the default policy')


def test_evidence_satp_vendor(planted):
    ev = planted['evidence']
    assert (ev['satp'], ev['vendor']) == ('VMW_SATP_ALUA', 'DGC')


def test_evidence_luns(planted, truth_hosts):
    """Every SAN LUN of esx-san-1 but the VMAX one is an ALUA DGC LUN without a rule."""
    ev = planted['evidence']
    san = sorted(l['canonical_name'] for l in truth_hosts['esx-san-1']['luns'] if not l['local'])
    want_luns = [n for n in san if n != SYM]
    assert all(NAA + s in want_luns for s in ('a1', 'a2', 'a3', 'a4', 'a5')), \
        'the planted LUNs a1..a5 are among them'
    assert ev['luns_total'] == len(want_luns)
    assert ev['luns_uncovered'] == len(want_luns)
    assert ev['luns'] == want_luns[:25]


def test_evidence_commands(planted):
    assert planted['evidence']['commands'] == [
        'esxcli storage nmp satp rule add -s "VMW_SATP_ALUA" -V "DGC" -M "VRAID" '
        '-P "VMW_PSP_RR" -O "iops=1"']


def test_evidence_rules(planted):
    """The rules that apply and fall short: the system ALUA rule (MRU) and the planted user rule
    (Round Robin, no options)."""
    assert sorted((r['rule_group'], r['vendor'], r['psp'], r['psp_options'])
                  for r in planted['evidence']['rules']) == \
        [('system', None, 'VMW_PSP_MRU', None), ('user', 'DGC', 'VMW_PSP_RR', None)]


@pytest.mark.parametrize('host', TWINS)
def test_twin_silent(lab, host):
    assert [d for (h, d) in flagged(lab.findings) if h == host] == []


def test_vmax_lun_under_its_rule_silent(lab):
    """esx-san-1's VMAX LUN is covered by 001's rule."""
    assert ('esx-san-1', 'VMW_SATP_SYMM/EMC') not in flagged(lab.findings)


def test_host_refusing_esxcli(lab, stored_hosts):
    """esx-san-noesxcli is silent because its rules are unknown, not because it has a rule."""
    nx = stored_hosts['esx-san-noesxcli']
    assert [d for (h, d) in flagged(lab.findings) if h == 'esx-san-noesxcli'] == []
    assert nx['satp_rules'] == []
    assert [g['what'] for g in nx['gaps']] == ['esxcli']


def test_user_rules_stored(stored_hosts):
    assert sum(r['rule_group'] == 'user' for r in stored_hosts['esx-san-1']['satp_rules']) == 2


@pytest.fixture
def copied(lab, workspace):
    return lab.copy(workspace)


def test_iops_override(copied):
    """iops = 1000 accepts Round Robin's default, which esx-san-1's rule leaves."""
    fs = copied.check('--offline', conf=copied.config('\n[check satp-claim-rule]\niops = 1000\n'))
    assert sorted(flagged(fs)) == []


def test_disabled(copied):
    """Turned off like any other check; the other checks still run."""
    fs = copied.check('--offline',
                      conf=copied.config('\n[check satp-claim-rule]\nenabled = false\n'))
    assert sorted(flagged(fs)) == []
    assert any(x['check'] == 'multipath-policy' for x in fs)
