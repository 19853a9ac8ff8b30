"""`vslint gate` against the `gate` scenario (tests/sim/scenario_gate.go), whose datastores sit
just under each threshold: a proposal that crosses free space, the VM count, the datastore
cluster's free space or thin overcommit is denied with that check's reason, one that stays
under is allowed; a datastore on a LUN with a dead path is refused; shared buses need eager
disks, Fault Tolerance (6.5 and later) only at --fail-on info; thresholds and waivers in force change the answer; the figures before
and after are the planted ones moved by the proposal; exit codes and the stale-snapshot rule.
The expected values come from the scenario's planted facts, not from vslint's output."""
import json
import sqlite3

import pytest

from simlib import Estate, vcenter, vslint

GIB = 2 ** 30
CAP = 600 * GIB


def pct(p):
    return CAP // 100 * p


@pytest.fixture(scope='module')
def est(gate_sim, module_workspace):
    """The gate estate as vCenter "lab", polled once by `vslint check`."""
    e = Estate(gate_sim, module_workspace, 'lab')
    e.findings = e.check()
    return e


def gate(conf, *args):
    """`vslint gate --format json` (offline unless told): (exit status, answer or None, stderr)."""
    res = vslint('gate', '-c', conf, '--format', 'json', *args)
    return res.returncode, (json.loads(res.stdout) if res.stdout.strip() else None), res.stderr


def offline(est, *args, conf=None):
    return gate(conf or est.conf, '--offline', *args)


def reasons(ans):
    return [(r['check'] or r['code'], r['object_type'], r['object']) for r in ans['reasons']]


# (arguments, allowed, the reasons (check, object type, object) when denied)
CASES = {
    'free space stays at exactly 30 %': (
        ['--datastore', 'ds-gate-free', '--disk-gb', '12'], True, []),
    'free space crosses 30 %': (
        ['--datastore', 'ds-gate-free', '--disk-gb', '10,8'], False,
        [('datastore-free-space', 'datastore', 'ds-gate-free')]),
    'thin takes no free space now': (
        ['--datastore', 'ds-gate-free', '--disk-gb', '100', '--disk-format', 'thin'], True, []),
    'VM count reaches 25': (
        ['--datastore', 'ds-gate-vms', '--disk-gb', '1', '--disk-format', 'thin'], True, []),
    'VM count crosses 25': (
        ['--datastore', 'ds-gate-vms', '--disk-gb', '1', '--disk-format', 'thin', '--vms', '2'],
        False, [('vms-per-datastore', 'datastore', 'ds-gate-vms')]),
    'datastore cluster stays above 30 %': (
        ['--datastore-cluster', 'pod-gate', '--disk-gb', '6'], True, []),
    'datastore cluster crosses 30 %': (
        ['--datastore-cluster', 'pod-gate', '--disk-gb', '24'], False,
        [('datastore-free-space', 'storage_pod', 'pod-gate')]),
    'overcommit stays under 150 %': (
        ['--datastore', 'ds-gate-thin', '--disk-gb', '3', '--disk-format', 'thin'], True, []),
    'overcommit crosses 150 %': (
        ['--datastore', 'ds-gate-thin', '--disk-gb', '12', '--disk-format', 'thin'], False,
        [('thin-overcommit', 'datastore', 'ds-gate-thin')]),
    'a dead path behind the datastore': (
        ['--datastore', 'ds-gate-dead', '--disk-gb', '1'], False,
        [('multipath-redundancy', 'lun', None)]),
    # FT since ESXi 6.5 supports thin disks: vdisk-format says so as info, below the default
    # --fail-on warning; a pipeline that fails on info is refused.
    'Fault Tolerance on thin disks': (
        ['--datastore', 'ds-gate-roomy', '--disk-gb', '10', '--disk-format', 'thin', '--ft'],
        True, []),
    'Fault Tolerance on thin disks, failing on info': (
        ['--datastore', 'ds-gate-roomy', '--disk-gb', '10', '--disk-format', 'thin', '--ft',
         '--fail-on', 'info'],
        False, [('vdisk-format', 'vm', 'proposed VM')]),
    'Fault Tolerance on eager disks': (
        ['--datastore', 'ds-gate-roomy', '--disk-gb', '10', '--disk-format', 'eager', '--ft'],
        True, []),
    'a shared bus on lazy disks': (
        ['--datastore', 'ds-gate-roomy', '--disk-gb', '10', '--shared-bus'], False,
        [('vdisk-format', 'vm', 'proposed VM')]),
    'more than is free': (
        ['--datastore', 'ds-gate-roomy', '--disk-gb', '500'], False,
        [('no_space', 'datastore', 'ds-gate-roomy'),
         ('datastore-free-space', 'datastore', 'ds-gate-roomy')]),
}


@pytest.mark.parametrize('name', CASES)
def test_proposal(est, name):
    args, allowed, want = CASES[name]
    rc, ans, err = offline(est, *args)
    assert rc == (0 if allowed else 1), err
    assert ans['allowed'] is allowed
    got = [(c, t, o if t != 'lun' else None) for c, t, o in reasons(ans)]
    assert got == want


def test_dead_path_reason_names_the_lun_and_its_host(est):
    _, ans, _ = offline(est, '--datastore', 'ds-gate-dead', '--disk-gb', '1')
    (r,) = ans['reasons']
    assert r['severity'] == 'critical' and r['host'] == 'esx-gate-01'
    assert r['object'].startswith('naa.') and 'dead' in r['message']


def test_figures_before_and_after_thick(est):
    _, ans, _ = offline(est, '--datastore', 'ds-gate-free', '--disk-gb', '10,8', '--vms', '1')
    b, a = ans['before'], ans['after']
    assert (b['capacity_bytes'], b['free_bytes'], b['vms']) == (CAP, pct(32), 0)
    assert (a['free_bytes'], a['uncommitted_bytes'], a['vms']) == (pct(32) - 18 * GIB, 0, 1)
    assert a['free_pct'] == pytest.approx(29.0, abs=0.01)


def test_figures_after_thin_add_to_uncommitted(est):
    _, ans, _ = offline(est, '--datastore', 'ds-gate-thin', '--disk-gb', '2,1', '--vms', '3',
                        '--disk-format', 'thin')
    assert ans['after']['free_bytes'] == ans['before']['free_bytes'] == pct(50)
    assert ans['after']['uncommitted_bytes'] == 594 * GIB + 9 * GIB
    assert ans['after']['provisioned_pct'] == pytest.approx((300 + 603) / 6, abs=0.01)


def test_datastore_cluster_placed_where_storage_drs_would(est):
    _, ans, _ = offline(est, '--datastore-cluster', 'pod-gate', '--disk-gb', '24')
    assert ans['placed_on'] == 'ds-gate-pod-a'  # 40 % free against ds-gate-pod-b's 22 %
    pod_before = ans['before']['datastore_cluster']
    pod_after = ans['after']['datastore_cluster']
    assert (pod_before['capacity_bytes'], pod_before['free_bytes']) == (2 * CAP, pct(62))
    assert pod_after['free_bytes'] == pct(62) - 24 * GIB


def test_text_answer(est):
    res = vslint('gate', '-c', est.conf, '--offline', '--datastore', 'ds-gate-free',
                 '--disk-gb', '18')
    assert res.returncode == 1
    assert res.stdout.startswith('DENIED: 1 VM(s)')
    assert 'reason: datastore-free-space (warning): ds-gate-free has 29.0 % free' in res.stdout
    assert 'before: 192 GB free of 600 GB' in res.stdout
    assert 'after:  174 GB free of 600 GB' in res.stdout


def test_fail_on_critical_lets_a_warning_through(est):
    rc, ans, _ = offline(est, '--datastore', 'ds-gate-free', '--disk-gb', '18',
                         '--fail-on', 'critical')
    assert rc == 0 and ans['allowed'] and ans['fail_on'] == 'critical'


def test_fail_on_critical_still_denies_a_dead_path(est):
    rc, ans, _ = offline(est, '--datastore', 'ds-gate-dead', '--disk-gb', '1',
                         '--fail-on', 'critical')
    assert rc == 1 and not ans['allowed']


def test_waiver_changes_the_answer(est):
    conf = est.config('\n[waiver]\ncheck = datastore-free-space\nobject = ds-gate-free\n'
                      'reason = being grown this week\nexpires = 2099-12-31\n', name='waiver.conf')
    rc, ans, _ = offline(est, '--datastore', 'ds-gate-free', '--disk-gb', '18', conf=conf)
    assert rc == 0 and ans['allowed'] and ans['reasons'] == []
    (w,) = ans['waived']
    assert (w['check'], w['object'], w['waiver_reason']) == (
        'datastore-free-space', 'ds-gate-free', 'being grown this week')


def test_expired_waiver_does_not(est):
    conf = est.config('\n[waiver]\ncheck = datastore-free-space\nobject = ds-gate-*\n'
                      'reason = old\nexpires = 2020-01-01\n', name='expired.conf')
    rc, ans, _ = offline(est, '--datastore', 'ds-gate-free', '--disk-gb', '18', conf=conf)
    assert rc == 1 and ans['waived'] == []


def test_waiver_on_the_lun(est):
    conf = est.config('\n[waiver]\ncheck = multipath-redundancy\nobject = esx-gate-01 naa.*\n'
                      'reason = path repair booked\nexpires = 2099-12-31\n', name='lunw.conf')
    rc, ans, _ = offline(est, '--datastore', 'ds-gate-dead', '--disk-gb', '1', conf=conf)
    assert rc == 0 and [w['check'] for w in ans['waived']] == ['multipath-redundancy']


def test_configured_threshold_is_in_force(est):
    conf = est.config('\n[check datastore-free-space]\nwarn_free_pct = 20\n', name='t.conf')
    rc, ans, _ = offline(est, '--datastore', 'ds-gate-free', '--disk-gb', '18', conf=conf)
    assert rc == 0 and ans['allowed']
    # Headroom is measured to the configured threshold: (29 - 20) / (100 - 20).
    assert ans['headroom'] == pytest.approx(100 * 9 / 80, abs=0.01)


def test_disabled_check_does_not_deny(est):
    conf = est.config('\n[check vms-per-datastore]\nenabled = false\n', name='d.conf')
    rc, _, _ = offline(est, '--datastore', 'ds-gate-vms', '--disk-gb', '1', '--vms', '5',
                       conf=conf)
    assert rc == 0


def test_polls_first_without_offline(est):
    rc, ans, err = gate(est.conf, '--datastore', 'ds-gate-free', '--disk-gb', '12')
    assert rc == 0, err
    assert ans['snapshot_age_s'] <= 5 and ans['max_age_s'] == 600  # 2 x interval 300


# ---- errors: exit 2 and one line saying which -------------------------------------------------

ERRORS = {
    'unknown datastore': (['--datastore', 'ds-nope', '--disk-gb', '1'],
                          'no datastore named ds-nope'),
    'unknown datastore cluster': (['--datastore-cluster', 'pod-nope', '--disk-gb', '1'],
                                  'no datastore cluster named pod-nope'),
    'unknown vcenter': (['--datastore', 'ds-gate-free', '--disk-gb', '1', '--vcenter', 'nope'],
                        'no [vcenter nope]'),
    'no target': (['--disk-gb', '1'], 'give --datastore NAME or --datastore-cluster NAME'),
    'two targets': (['--datastore', 'a', '--datastore-cluster', 'b', '--disk-gb', '1'],
                    'give --datastore NAME or --datastore-cluster NAME'),
    'no disks': (['--datastore', 'ds-gate-free'], '--disk-gb G[,G...] is required'),
    'bad disk size': (['--datastore', 'ds-gate-free', '--disk-gb', '10,x'],
                      "--disk-gb: 'x' is not a number of GiB"),
    'zero disk': (['--datastore', 'ds-gate-free', '--disk-gb', '0'], "'0' is not a size in GiB"),
    'bad vms': (['--datastore', 'ds-gate-free', '--disk-gb', '1', '--vms', '0'],
                '--vms must be a whole number from 1 to 10000'),
    'bad format': (['--datastore', 'ds-gate-free', '--disk-gb', '1', '--disk-format', 'fat'],
                   '--disk-format must be thin, lazy or eager'),
    'ft and shared bus': (['--datastore', 'ds-gate-free', '--disk-gb', '1', '--ft',
                           '--shared-bus'], '--ft and --shared-bus'),
    'fail-on never': (['--datastore', 'ds-gate-free', '--disk-gb', '1', '--fail-on', 'never'],
                      'not never'),
}


@pytest.mark.parametrize('name', ERRORS)
def test_error_exit_2_with_one_line(est, name):
    args, want = ERRORS[name]
    res = vslint('gate', '-c', est.conf, '--offline', *args)
    assert res.returncode == 2
    assert res.stdout == ''
    assert want in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1, res.stderr


def test_no_snapshot_is_an_error(workspace, gate_sim):
    e = Estate(gate_sim, workspace, 'lab')
    res = vslint('gate', '-c', e.conf, '--offline', '--datastore', 'ds-gate-free',
                 '--disk-gb', '1')
    assert res.returncode == 2 and 'no snapshot' in res.stderr, res.stderr


# ---- the stale-snapshot rule --------------------------------------------------------------------

def age_snapshot(db, seconds):
    con = sqlite3.connect(db)
    with con:
        con.execute('UPDATE vcenters SET last_success_ms = last_success_ms - ?',
                    (seconds * 1000,))
    con.close()


@pytest.fixture
def aged(est, workspace):
    """A copy of the estate whose snapshot is three hours old (max_age is 600 s)."""
    copy = est.copy(workspace)
    age_snapshot(workspace.db, 3 * 3600)
    return copy


def test_stale_snapshot_denies(aged):
    rc, ans, _ = offline(aged, '--datastore', 'ds-gate-roomy', '--disk-gb', '1')
    assert rc == 1
    assert reasons(ans) == [('stale_snapshot', 'vcenter', 'lab')]
    assert ans['snapshot_age_s'] >= 3 * 3600 and ans['max_age_s'] == 600


def test_stale_snapshot_allowed_when_asked(aged):
    rc, ans, _ = offline(aged, '--datastore', 'ds-gate-roomy', '--disk-gb', '1', '--allow-stale')
    assert rc == 0 and ans['allowed']


def test_max_age_sets_the_limit(aged):
    rc, _, _ = offline(aged, '--datastore', 'ds-gate-roomy', '--disk-gb', '1',
                       '--max-age', str(4 * 3600))
    assert rc == 0


def test_unreachable_vcenter_judged_on_its_stale_snapshot(aged, workspace):
    """Without --offline the gate polls; a vCenter that cannot be polled is judged on its last
    snapshot, which is too old."""
    conf = workspace.write_config([vcenter(workspace, 'http://127.0.0.1:9/sdk', 'lab',
                                           timeout=2)], name='down.conf')
    rc, ans, err = gate(conf, '--datastore', 'ds-gate-roomy', '--disk-gb', '1')
    assert rc == 1, err
    assert 'vcenter lab: poll failed' in err
    assert reasons(ans) == [('stale_snapshot', 'vcenter', 'lab')]
