#!/usr/bin/env python3
"""vmfs-version and datastore-alarms against the simulator: on `violations` each flags exactly
what the header of tests/sim/scenario_violations.go plants (written from that spec, not from
vslint's output) and none of the twins, the alarms vCenter defines are in the inventory, the
alarm thresholds follow datastore-free-space's configured ones; on `clean` nothing at all is
flagged; a vCenter whose AlarmManager refuses to answer (-refuse-alarms) is a gap, not "no
alarm": datastore-alarms then says nothing."""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from simlib import Sim, Workspace, Failures, vslint, USER, run_check, of  # noqa: E402

VMFS = 'vmfs-version'
ALARMS = 'datastore-alarms'

# object name -> severity, from the spec.
WANT_VMFS = {'ds-vmfs5': 'warning', 'ds-vmfs3': 'critical'}
TWINS_VMFS = ['ds-lab-01', 'ds-clean-01', 'ds-nfs-clean', 'ds-pod-ok-1', 'ds-alarm-own-ok']

# object name -> evidence level (all warnings), from the spec.
WANT_ALARMS = {
    'ds-alarm-disabled': 'disabled',      # only the root's disabled default covers it
    'ds-alarm-high': 'thresholds',        # its folder's alarm warns at 80 %, red at 95 %
    'ds-alarm-provisioned': 'disabled',   # its own alarm watches disk.provisioned, not usage
    'ds-alarm-and': 'disabled',           # its own alarm ANDs usage with a state
}
TWINS_ALARMS = ['ds-alarm-folder-ok', 'ds-alarm-nested-ok', 'ds-alarm-own-ok', 'ds-alarm-pod-ok',
                'ds-alarm-split', 'ds-vmfs5', 'ds-vmfs3', 'ds-free-crit', 'ds-pod-low-1',
                'ds-nfs-clean', 'ds-clean-01', 'ds-pod-ok-1']


def inventory(conf):
    return json.loads(vslint('inventory', '-c', conf, '--format', 'json').stdout)['vcenters'][0]


def check_vmfs(f, fs, truth, what):
    got = of(fs, VMFS)
    f.eq('%s: %s flagged' % (what, VMFS), {n: x['severity'] for n, x in got.items()}, WANT_VMFS)
    for name in TWINS_VMFS:
        f.true('%s: %s: twin %s flagged' % (what, VMFS, name), name not in got)
    moref = {d['name']: d['moref'] for d in truth['datastores']}
    for name, x in got.items():
        f.eq('%s: %s object' % (what, name), x['object'],
             {'type': 'datastore', 'moref': moref[name], 'name': name})
        f.eq('%s: %s vmfs_major' % (what, name), x['evidence'].get('vmfs_major'),
             int(name[len('ds-vmfs'):]))
    if 'ds-vmfs3' in got:
        f.true('ds-vmfs3: says VMFS3 is unsupported: ' + got['ds-vmfs3']['message'],
               'no longer supports' in got['ds-vmfs3']['message'])


def check_alarms(f, fs, truth):
    got = of(fs, ALARMS)
    f.eq('%s flagged' % ALARMS, {n: (x['severity'], x['evidence'].get('level'))
                                 for n, x in got.items()},
         {n: ('warning', lvl) for n, lvl in WANT_ALARMS.items()})
    for name in TWINS_ALARMS:
        f.true('%s: twin %s flagged: %s' % (ALARMS, name, got.get(name, {}).get('message')),
               name not in got)
    f.eq('one finding per datastore', len([x for x in fs if x['check'] == ALARMS]), len(got))
    moref = {d['name']: d['moref'] for d in truth['datastores']}
    for name, x in got.items():
        f.eq('%s object' % name, x['object'], {'type': 'datastore', 'moref': moref[name],
                                              'name': name})
        f.eq('%s wants 70 / 90' % name,
             (x['evidence'].get('want_warn_pct'), x['evidence'].get('want_red_pct')), (70, 90))
    high = got.get('ds-alarm-high')
    if high:
        ev = high['evidence']
        f.eq('ds-alarm-high: warns at / red at', (ev['warn_pct'], ev['red_pct']), (80, 95))
        f.eq('ds-alarm-high: covering alarms',
             sorted((a['name'], a['entity_name'], a['enabled']) for a in ev['alarms']),
             [('Datastore usage (lax)', 'fld-alarm-high', True),
              ('Datastore usage on disk', 'Datacenters', False)])
        f.eq('ds-alarm-high: path', ev['path'],
             ['Datacenters', 'DC-remote', 'datastore', 'fld-alarm-high'])
        f.true('ds-alarm-high: message gives both thresholds: ' + high['message'],
               '80 %' in high['message'] and '95 %' in high['message'])
    dis = got.get('ds-alarm-disabled')
    if dis:
        f.eq('ds-alarm-disabled: covering alarms',
             [(a['name'], a['enabled'], a['warn_pct'], a['red_pct'])
              for a in dis['evidence']['alarms']],
             [('Datastore usage on disk', False, 75, 85)])
    prov = got.get('ds-alarm-provisioned')
    if prov:
        f.eq('ds-alarm-provisioned: its alarm is named as not a usage alarm',
             [(a['name'], a['counter']) for a in prov['evidence']['not_usage_alarms']],
             [('Datastore overcommitment', 'disk.provisioned.latest')])


def check_inventory(f, vc):
    f.eq('inventory: alarm manager read', vc['alarm_managers'], ['AlarmManager'])
    f.eq('inventory: no alarms gap', [g for g in vc['gaps'] if g['what'] == 'alarms'], [])
    alarms = {a['name']: a for a in vc['alarms']}
    d = alarms.get('Datastore usage on disk', {})
    f.eq('inventory: the default alarm',
         (d.get('system_name'), d.get('enabled'), d.get('entity_type'), d.get('entity_name')),
         ('alarm.DatastoreDiskUsageAlarm', False, 'Folder', 'Datacenters'))
    f.eq('inventory: its condition',
         [(m['object_type'], m['counter'], m['operator'], m['yellow'], m['red'])
          for m in d.get('metrics', [])],
         [('Datastore', 'disk.used.latest', 'isAbove', 7500, 8500)])
    lax = alarms.get('Datastore usage (lax)', {})
    f.eq('inventory: an Or keeps its metric, drops its state condition',
         [(m['counter'], m['yellow'], m['red']) for m in lax.get('metrics', [])],
         [('disk.used.latest', 8000, 9500)])
    f.eq('inventory: an And counts no metric alone',
         alarms.get('Datastore usage while accessible', {}).get('metrics'), [])
    f.eq('inventory: a pod alarm is defined on the pod',
         (alarms.get('Datastore usage (pod)', {}).get('entity_type'),
          alarms.get('Datastore usage (pod)', {}).get('entity_name')), ('StoragePod', 'pod-alarm'))
    f.eq('inventory: split alarms leave a threshold unset',
         [(m['yellow'], m['red']) for n in ('Datastore usage warning', 'Datastore usage critical')
          for m in alarms.get(n, {}).get('metrics', [])], [(7000, None), (None, 9000)])
    ents = {e['name']: e for e in vc['entities']}
    f.true('inventory: the containers are stored',
           all(n in ents for n in ('Datacenters', 'DC0', 'DC-remote', 'fld-alarm-high',
                                   'fld-alarm-ok-sub', 'pod-alarm')))
    f.eq('inventory: the root folder has no parent', ents.get('Datacenters', {}).get('parent', 1),
         None)
    f.true('inventory: VM and host folders are not', 'vm' not in ents and 'host' not in ents)
    ds = {x['name']: x for x in vc['datastores']}
    f.eq('inventory: a nested datastore names its folder',
         ds.get('ds-alarm-nested-ok', {}).get('parent'),
         ents.get('fld-alarm-ok-sub', {}).get('moref'))


def main():
    f = Failures('alarms and vmfs checks')
    ws = Workspace()
    try:
        pw = ws.password_file()
        with Sim('clean') as sim:
            conf = ws.write_config([{'name': 'clean', 'url': sim.url, 'user': USER,
                                     'password_file': pw}])
            fs = run_check(f, 'clean', conf)
            f.eq('clean: no finding at all', [(x['check'], x['object']['name']) for x in fs], [])
            vc = inventory(conf)
            f.eq('clean: its root alarm was read', vc['alarm_managers'], ['AlarmManager'])

        os.unlink(ws.db)
        with Sim('violations') as sim:
            truth = sim.truth()
            vc = {'name': 'lab', 'url': sim.url, 'user': USER, 'password_file': pw}
            conf = ws.write_config([vc])
            fs = run_check(f, 'violations', conf)
            check_vmfs(f, fs, truth, 'violations')
            check_alarms(f, fs, truth)
            check_inventory(f, inventory(conf))

            # datastore-alarms follows datastore-free-space's thresholds: warning below 15 %
            # free and critical below 5 % want 85 % / 95 %, which ds-alarm-high's alarm meets.
            conf = ws.write_config([vc], '\n[check datastore-free-space]\nwarn_free_pct = 15\n'
                                   'crit_free_pct = 5\n')
            fs = run_check(f, 'free space 15/5', conf, '--offline')
            got = of(fs, ALARMS)
            f.eq('free space 15/5: flagged', sorted(got),
                 sorted(n for n in WANT_ALARMS if n != 'ds-alarm-high'))
            f.eq('free space 15/5: wanted thresholds',
                 {(x['evidence']['want_warn_pct'], x['evidence']['want_red_pct'])
                  for x in got.values()}, {(85, 95)})
            # vmfs-version's own threshold: VMFS5 accepted, VMFS3 never.
            conf = ws.write_config([vc], '\n[check vmfs-version]\nmin_version = 5\n')
            fs = run_check(f, 'min_version = 5', conf, '--offline')
            f.eq('min_version = 5: flagged', {n: x['severity'] for n, x in of(fs, VMFS).items()},
                 {'ds-vmfs3': 'critical'})

        os.unlink(ws.db)
        with Sim('violations', extra=['-refuse-alarms']) as sim:
            truth = sim.truth()
            conf = ws.write_config([{'name': 'lab', 'url': sim.url, 'user': USER,
                                     'password_file': pw}])
            fs = run_check(f, 'refused', conf)
            f.eq('refused: datastore-alarms says nothing', sorted(of(fs, ALARMS)), [])
            check_vmfs(f, fs, truth, 'refused')
            vc = inventory(conf)
            gaps = [g for g in vc['gaps'] if g['what'] == 'alarms']
            f.eq('refused: one alarms gap about the vCenter', [g['object'] for g in gaps], [''])
            f.true('refused: the gap says why: %r' % gaps,
                   bool(gaps) and 'NoPermission' in gaps[0]['error'])
            f.eq('refused: no alarm manager read', vc['alarm_managers'], [])
            f.eq('refused: no alarms stored', vc['alarms'], [])
            text = vslint('inventory', '-c', conf).stdout
            f.true('refused: the text inventory says the alarms were not read',
                   'not read: alarms:' in text and 'Alarms: not read' in text)
    finally:
        ws.cleanup()
    f.finish()


if __name__ == '__main__':
    main()
