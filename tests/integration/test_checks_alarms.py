"""vmfs-version and datastore-alarms against the simulator: on `violations` each flags exactly
what the header of tests/sim/scenario_violations.go plants (written from that spec, not from
vslint's output) and none of the twins, the alarms vCenter defines are in the inventory, the
alarm thresholds follow datastore-free-space's configured ones; on `clean` nothing at all is
flagged; a vCenter whose AlarmManager refuses to answer (-refuse-alarms) is a gap, not "no
alarm": datastore-alarms then says nothing."""
import pytest

from simlib import Estate, finding, of, run_ok, silent

VMFS = 'vmfs-version'
ALARMS = 'datastore-alarms'

# object name -> severity, from the spec.
# scenario_estates.go: ds-legacy is the ESXi 6.0 host's shared VMFS5, "datastore1
# (esx-legacy-60)" its local VMFS3 boot datastore, "datastore1 (esx-estates)" a local VMFS5 one
# (not judged).
WANT_VMFS = {'ds-vmfs5': 'warning', 'ds-vmfs3': 'critical', 'ds-legacy': 'warning',
             'datastore1 (esx-legacy-60)': 'critical'}
MAJOR = {'ds-vmfs5': 5, 'ds-vmfs3': 3, 'ds-legacy': 5, 'datastore1 (esx-legacy-60)': 3}
TWINS_VMFS = ['ds-lab-01', 'ds-clean-01', 'ds-nfs-clean', 'ds-pod-ok-1', 'ds-alarm-own-ok',
              'datastore1 (esx-estates)']

# object name -> evidence level (all warnings), from the spec.
WANT_ALARMS = {
    'ds-alarm-disabled': 'disabled',      # only the root's disabled default covers it
    'ds-alarm-high': 'thresholds',        # its folder's alarm warns at 80 %, red at 95 %
    'ds-alarm-provisioned': 'disabled',   # its own alarm watches disk.provisioned, not usage
    'ds-alarm-and': 'disabled',           # its own alarm ANDs usage with a state
    # (scenario_seeds.go) fld-pods' alarm is disabled on its datastore cluster pod-alarm-off
    'ds-alarm-pod-off': 'disabled',
}
TWINS_ALARMS = ['ds-alarm-folder-ok', 'ds-alarm-nested-ok', 'ds-alarm-own-ok', 'ds-alarm-pod-ok',
                'ds-alarm-split', 'ds-vmfs5', 'ds-vmfs3', 'ds-free-crit', 'ds-pod-low-1',
                'ds-nfs-clean', 'ds-clean-01', 'ds-pod-ok-1',
                # its cluster's declaredAlarmState entry says disabled = false
                'ds-alarm-pod-on']


def morefs(sim):
    return {d['name']: d['moref'] for d in sim.truth()['datastores']}


def assert_vmfs(fs, sim):
    got = of(fs, VMFS)
    assert {n: x['severity'] for n, x in got.items()} == WANT_VMFS
    moref = morefs(sim)
    for name, x in got.items():
        assert x['object'] == {'type': 'datastore', 'moref': moref[name], 'name': name}
        assert x['evidence'].get('vmfs_major') == MAJOR[name]
    assert 'no longer supports' in got['ds-vmfs3']['message']
    assert 'no longer supports' in got['datastore1 (esx-legacy-60)']['message']


def test_clean_flags_nothing(clean):
    assert [(x['check'], x['object']['name']) for x in clean.findings] == []
    assert clean.inventory()['vcenters'][0]['alarm_managers'] == ['AlarmManager']


def test_vmfs_version_flags_exactly_the_planted(lab):
    assert_vmfs(lab.findings, lab.sim)


@pytest.mark.parametrize('name', TWINS_VMFS)
def test_vmfs_version_twin_silent(lab, name):
    silent(lab.findings, VMFS, name)


def test_alarms_flag_exactly_the_planted(lab):
    got = of(lab.findings, ALARMS)
    assert {n: (x['severity'], x['evidence'].get('level')) for n, x in got.items()} == \
        {n: ('warning', lvl) for n, lvl in WANT_ALARMS.items()}
    assert len([x for x in lab.findings if x['check'] == ALARMS]) == len(got)
    moref = morefs(lab.sim)
    for name, x in got.items():
        assert x['object'] == {'type': 'datastore', 'moref': moref[name], 'name': name}
        assert (x['evidence'].get('want_warn_pct'), x['evidence'].get('want_red_pct')) == (70, 90)


@pytest.mark.parametrize('name', TWINS_ALARMS)
def test_alarms_twin_silent(lab, name):
    silent(lab.findings, ALARMS, name)


def test_alarm_too_high(lab):
    high = finding(lab.findings, ALARMS, 'ds-alarm-high')
    ev = high['evidence']
    assert (ev['warn_pct'], ev['red_pct']) == (80, 95)
    assert sorted((a['name'], a['entity_name'], a['enabled']) for a in ev['alarms']) == \
        [('Datastore usage (lax)', 'fld-alarm-high', True),
         ('Datastore usage on disk', 'Datacenters', False)]
    assert ev['path'] == ['Datacenters', 'DC-remote', 'datastore', 'fld-alarm-high']
    assert '80 %' in high['message'] and '95 %' in high['message']


def test_alarm_disabled(lab):
    dis = finding(lab.findings, ALARMS, 'ds-alarm-disabled')
    assert [(a['name'], a['enabled'], a['warn_pct'], a['red_pct'])
            for a in dis['evidence']['alarms']] == [('Datastore usage on disk', False, 75, 85)]


def test_alarm_on_provisioned_space_is_named(lab):
    prov = finding(lab.findings, ALARMS, 'ds-alarm-provisioned')
    assert [(a['name'], a['counter']) for a in prov['evidence']['not_usage_alarms']] == \
        [('Datastore overcommitment', 'disk.provisioned.latest')]


@pytest.fixture(scope='module')
def lab_inventory(lab):
    return lab.inventory()['vcenters'][0]


def test_inventory_alarm_manager_read(lab_inventory):
    vc = lab_inventory
    assert vc['alarm_managers'] == ['AlarmManager']
    assert [g for g in vc['gaps'] if g['what'] == 'alarms'] == []


def test_inventory_alarms(lab_inventory):
    alarms = {a['name']: a for a in lab_inventory['alarms']}
    d = alarms.get('Datastore usage on disk', {})
    assert (d.get('system_name'), d.get('enabled'), d.get('entity_type'), d.get('entity_name')) \
        == ('alarm.DatastoreDiskUsageAlarm', False, 'Folder', 'Datacenters')
    assert [(m['object_type'], m['counter'], m['operator'], m['yellow'], m['red'])
            for m in d.get('metrics', [])] == \
        [('Datastore', 'disk.used.latest', 'isAbove', 7500, 8500)]
    lax = alarms.get('Datastore usage (lax)', {})
    # An Or keeps its metric and drops its state condition; an And counts no metric alone.
    assert [(m['counter'], m['yellow'], m['red']) for m in lax.get('metrics', [])] == \
        [('disk.used.latest', 8000, 9500)]
    assert alarms.get('Datastore usage while accessible', {}).get('metrics') == []
    pod = alarms.get('Datastore usage (pod)', {})
    assert (pod.get('entity_type'), pod.get('entity_name')) == ('StoragePod', 'pod-alarm')
    # Split alarms leave a threshold unset.
    assert [(m['yellow'], m['red']) for n in ('Datastore usage warning', 'Datastore usage critical')
            for m in alarms.get(n, {}).get('metrics', [])] == [(7000, None), (None, 9000)]


def test_inventory_containers(lab_inventory):
    ents = {e['name']: e for e in lab_inventory['entities']}
    for n in ('Datacenters', 'DC0', 'DC-remote', 'fld-alarm-high', 'fld-alarm-ok-sub',
              'pod-alarm'):
        assert n in ents
    assert ents['Datacenters'].get('parent', 1) is None  # the root folder has no parent
    assert 'vm' not in ents and 'host' not in ents      # VM and host folders are not stored
    ds = {x['name']: x for x in lab_inventory['datastores']}
    assert ds['ds-alarm-nested-ok']['parent'] == ents['fld-alarm-ok-sub']['moref']


def test_alarms_follow_free_space_thresholds(lab, workspace):
    """Warning below 15 % free and critical below 5 % want 85 % / 95 %, which ds-alarm-high's
    alarm meets."""
    fs = lab.check_with(workspace, {'datastore-free-space': {'warn_free_pct': 15,
                                                             'crit_free_pct': 5}})
    got = of(fs, ALARMS)
    assert sorted(got) == sorted(n for n in WANT_ALARMS if n != 'ds-alarm-high')
    assert {(x['evidence']['want_warn_pct'], x['evidence']['want_red_pct'])
            for x in got.values()} == {(85, 95)}


def test_vmfs_min_version(lab, workspace):
    """VMFS5 accepted, VMFS3 never."""
    fs = lab.check_with(workspace, {'vmfs-version': {'min_version': 5}})
    assert {n: x['severity'] for n, x in of(fs, VMFS).items()} == \
        {'ds-vmfs3': 'critical', 'datastore1 (esx-legacy-60)': 'critical'}


@pytest.fixture(scope='module')
def refused(module_workspace):
    from simlib import Sim
    with Sim('violations', extra=['-refuse-alarms']) as sim:
        est = Estate(sim, module_workspace)
        est.findings = est.check()
        yield est


def test_refused_alarms_say_nothing(refused):
    assert sorted(of(refused.findings, ALARMS)) == []
    assert_vmfs(refused.findings, refused.sim)


def test_refused_alarms_are_a_gap(refused):
    vc = refused.inventory()['vcenters'][0]
    gaps = [g for g in vc['gaps'] if g['what'] == 'alarms']
    assert [g['object'] for g in gaps] == ['']
    assert 'NoPermission' in gaps[0]['error']
    assert vc['alarm_managers'] == []
    assert vc['alarms'] == []
    text = run_ok('inventory', '-c', refused.conf).stdout
    assert 'not read: alarms:' in text and 'Alarms: not read' in text


def test_alarm_disabled_on_a_datastore_cluster(lab):
    """vSphere 7's DisableAlarm on a datastore cluster turns an alarm defined above it off for
    the cluster's datastores: the alarm is enabled, yet it covers nothing there."""
    x = finding(lab.findings, ALARMS, 'ds-alarm-pod-off')
    assert '"Datastore usage (pods)", defined on fld-pods, is disabled on pod-alarm-off' in \
        x['message']
    pods = [a for a in x['evidence']['alarms'] if a['name'] == 'Datastore usage (pods)']
    assert [(a['enabled'], a['entity_name'], a['disabled_on_name']) for a in pods] == \
        [(True, 'fld-pods', 'pod-alarm-off')]


def test_alarms_disabled_on_an_entity_are_in_the_inventory(lab):
    """`vslint inventory` lists the (entity, alarm) pairs whose declaredAlarmState says
    disabled: pod-alarm-off's, not pod-alarm-on's (its entry says disabled = false)."""
    vc = lab.inventory()['vcenters'][0]
    ent = {x['name']: x['moref'] for x in vc['entities']}
    alarm = {x['name']: x['moref'] for x in vc['alarms']}
    assert vc['alarms_disabled'] == [{'entity': ent['pod-alarm-off'],
                                      'alarm': alarm['Datastore usage (pods)']}]
