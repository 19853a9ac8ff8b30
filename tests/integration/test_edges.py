"""vslint collect against the simulator's `edges` scenario (tests/sim/scenario_edges.go): what
real estates hold and the other scenarios do not (spanned and local VMFS volumes, mounts, VMs
whose datastores include an ISO image's, every kind of host bus adapter, HPP and PowerPath
devices, standby and off paths, one iSCSI IQN per volume, scoped SATP claim rules, names with
markup characters and non-ASCII letters) must be stored and shown exactly as the simulator holds
it (its -truth dump, computed from its own object map), and the planted facts the scenario's
header lists must be there."""
import sqlite3
from types import SimpleNamespace

import pytest

from simlib import Estate, Sim, run_ok

ODD = '"Prod" & <Ops> \'Ñandú\''
GIB = 1 << 30
RULE_FIELDS = ('satp', 'vendor', 'model', 'psp', 'psp_options', 'rule_group', 'device', 'driver',
               'transport', 'claim_options', 'options', 'description')


@pytest.fixture(scope='module')
def edges(new_workspace):
    """The edges estate collected once: the simulator's truth, the stored inventory of its one
    vCenter, the text inventory and the findings of `vslint check --offline` on it."""
    ws = new_workspace()
    with Sim('edges') as sim:
        est = Estate(sim, ws, 'sim')
        run_ok('collect', '-c', est.conf)
        return SimpleNamespace(ws=ws, truth=sim.truth(), vc=est.inventory()['vcenters'][0],
                               text=run_ok('inventory', '-c', est.conf).stdout,
                               findings=est.check('--offline'))


def by(items, key):
    return {i[key]: i for i in items}


def null(s):
    """The truth writes "" for what vCenter did not send; the inventory null."""
    return s if s != '' else None


def pairs(truth, stored):
    """(truth object, stored object) by moref; one the store lacks fails the test."""
    got = by(stored, 'moref')
    assert [t['name'] for t in truth if t['moref'] not in got] == [], 'not stored'
    return [(t, got[t['moref']]) for t in truth]


# ---- the stored inventory equals the simulator's truth ----------------------------------------

def test_datastores(edges):
    got, want = {}, {}
    for t, g in pairs(edges.truth['datastores'], edges.vc['datastores']):
        keys = ('name', 'type', 'capacity', 'free_space', 'vmfs_major', 'vm_count', 'vmfs_local',
                'vmfs_ssd', 'extents')
        got[t['name']] = dict({k: g[k] for k in keys}, vmfs_version=g['vmfs_version'],
                              unmap_priority=g['unmap_priority'],
                              hosts=sorted((m['host'], m['mounted'], m['accessible'])
                                           for m in g['hosts']))
        want[t['name']] = dict({k: t[k] for k in keys}, vmfs_version=null(t['vmfs_version']),
                               unmap_priority=null(t['unmap_priority']),
                               hosts=sorted((m['host'], m['mounted'], m['accessible'])
                                            for m in t['hosts']))
    assert got == want


def test_adapters(edges):
    def adapters(x, driver):
        return sorted((a['device'], a['type'], driver(a['driver']), a['model']) for a in x['hbas'])
    got, want = {}, {}
    for t, g in pairs(edges.truth['hosts'], edges.vc['hosts']):
        got[t['name']] = adapters(g, lambda d: d)
        want[t['name']] = adapters(t, null)
    assert got == want


def test_luns(edges):
    def lun(x, local, text):
        return dict({k: text(x[k]) for k in ('policy', 'satp', 'policy_type', 'multipath_plugin')},
                    local=local, paths=sorted((p['name'], p['state'], p['adapter'])
                                              for p in x['paths']))
    got, want = {}, {}
    for t, g in pairs(edges.truth['hosts'], edges.vc['hosts']):
        got[t['name']] = {x['canonical_name']: lun(x, x['local'], lambda v: v) for x in g['luns']}
        want[t['name']] = {x['canonical_name']: lun(x, x['local_disk'], null) for x in t['luns']}
    assert got == want


def target_key(x):
    return (x['kind'], x['address'], x['port'], x['iscsi_name'] or '')


def test_iscsi_targets(edges):
    def delayed_ack(options):
        return [(o['value'], o['inherited']) for o in options if o['key'] == 'DelayedAck']
    got, want = {}, {}
    for t, g in pairs(edges.truth['hosts'], edges.vc['hosts']):
        for h in g['iscsi_hbas']:
            for x in h['targets']:
                got[(t['name'], h['device']) + target_key(x)] = (
                    x['discovery_method'], x['parent'], delayed_ack(x['options']))
        for h in t['iscsi_hbas']:
            for x in h['targets']:
                want[(t['name'], h['device']) + target_key(x)] = (
                    null(x['discovery_method']), null(x['parent']),
                    [(x['delayed_ack']['value'], x['delayed_ack']['inherited'])])
    assert got == want


def test_satp_rules(edges):
    """Every field of every rule; esxcli is asked only on hosts with SAN LUNs."""
    def order(rule):
        return tuple(x or '' for x in rule)
    got, want = {}, {}
    for t, g in pairs(edges.truth['hosts'], edges.vc['hosts']):
        got[t['name']] = sorted((tuple(r[k] for k in RULE_FIELDS) for r in g['satp_rules']),
                                key=order)
        san = any(x['local_disk'] is False for x in t['luns'])
        want[t['name']] = sorted((tuple(null(r[k]) for k in RULE_FIELDS)
                                  for r in t['satp_rules'] if san), key=order)
    assert got == want


def test_vms(edges):
    def vm(x):
        return (x['name'], x['vm_path_name'], sorted(x['datastores']),
                sorted((d['datastore'], d['capacity_bytes']) for d in x['disks']))
    assert len(edges.vc['vms']) == len(edges.truth['vms'])
    assert {t['moref']: vm(g) for t, g in pairs(edges.truth['vms'], edges.vc['vms'])} == \
        {t['moref']: vm(t) for t in edges.truth['vms']}


# ---- the planted facts, as a user of the inventory finds them ---------------------------------

@pytest.fixture(scope='module')
def named(edges):
    vc = edges.vc
    return SimpleNamespace(ds=by(vc['datastores'], 'name'), hosts=by(vc['hosts'], 'name'),
                           vms=by(vc['vms'], 'name'))


def lun(named, host, name):
    return by(named.hosts[host]['luns'], 'canonical_name')[name]


def test_spanned_volume(named):
    span = named.ds['ds-edge-span']
    assert len(span['extents']) == 2
    assert {(x['disk_name'], h) for x in span['extents'] for h in ('esx-edge-01', 'esx-edge-02')
            if x['disk_name'] in by(named.hosts[h]['luns'], 'canonical_name')} == \
        {(x['disk_name'], h) for x in span['extents'] for h in ('esx-edge-01', 'esx-edge-02')}
    assert len(named.ds['ds-edge-single']['extents']) == 1


def test_local_boot_volume(named):
    boot = named.ds['datastore1 (esx-edge-01)']
    assert (boot['vmfs_local'], boot['extents'], [m['host'] for m in boot['hosts']]) == \
        (True, [{'disk_name': 'mpx.vmhba0:C0:T0:L0', 'partition': 3}],
         [named.hosts['esx-edge-01']['moref']])
    mpx = lun(named, 'esx-edge-01', 'mpx.vmhba0:C0:T0:L0')
    assert (mpx['satp'], [p['adapter'] for p in mpx['paths']]) == ('VMW_SATP_LOCAL', ['vmhba0'])
    assert named.ds['ds-edge-single']['vmfs_local'] is False


def test_adapter_types(named):
    types = {a['device']: a['type'] for a in named.hosts['esx-edge-01']['hbas']}
    assert types == {'vmhba0': 'HostParallelScsiHba', 'vmhba1': 'HostBlockHba',
                     'vmhba2': 'HostFibreChannelHba', 'vmhba3': 'HostFibreChannelHba',
                     'vmhba4': 'HostSerialAttachedHba', 'vmhba5': 'HostPcieHba'}


def test_devices_and_plugins(named):
    sas = lun(named, 'esx-edge-01', 'naa.5000c500a1b2c3d4')
    assert (sas['local'], sas['satp'], [p['adapter'] for p in sas['paths']]) == \
        (None, 'VMW_SATP_LOCAL', ['vmhba4'])
    nvme = lun(named, 'esx-edge-01', 'eui.0025388b91c3a1b2')
    assert (nvme['multipath_plugin'], nvme['policy_type'], nvme['satp']) == \
        ('HPP', 'HostMultipathInfoHppLogicalUnitPolicy', None)
    pp = lun(named, 'esx-edge-01', 'naa.60000970000197601234533030303441')
    assert (pp['multipath_plugin'], pp['policy'], pp['paths']) == ('PowerPath', None, [])


def test_path_states_and_adapters(named):
    def paths(name):
        return sorted((p['state'], p['adapter'])
                      for p in lun(named, 'esx-edge-01', 'naa.600601600000000000000000000000' + name)
                      ['paths'])
    assert paths('c1') == [('active', 'vmhba2'), ('active', 'vmhba3'), ('standby', 'vmhba2'),
                             ('standby', 'vmhba3')]
    assert paths('c2') == [('active', 'vmhba2'), ('active', 'vmhba2')]
    assert paths('c3') == [('active', 'vmhba2'), ('off', 'vmhba3')]


def test_vmfs_versions_and_sizes(named):
    ds = named.ds
    assert (ds['ds-edge-vmfs5']['vmfs_major'], ds['ds-edge-vmfs5']['vmfs_version'],
            ds['ds-edge-vmfs5']['unmap_priority']) == (5, '5.81', None)
    assert (ds['ds-edge-unmap-none']['unmap_priority'], ds['ds-edge-unmap-low']['unmap_priority'],
            ds['ds-edge-unmap-low']['vmfs_ssd']) == ('none', 'low', True)
    assert {g: ds['ds-edge-%d' % g]['capacity'] for g in (499, 500, 750, 760, 1000)} == \
        {g: g * GIB for g in (499, 500, 750, 760, 1000)}
    assert [(d['datastore'], d['capacity_bytes']) for d in named.vms['vm-edge-bigdisks']['disks']] \
        == [(ds['ds-edge-1000']['moref'], 400 * GIB)] * 2
    assert [ds[n]['type'] for n in ('ds-edge-nfs', 'ds-edge-vsan', 'ds-edge-vvol')] == \
        ['NFS', 'vsan', 'VVOL']
    apd = {m['host']: m['accessible'] for m in ds['ds-edge-apd']['hosts']}
    assert apd == {named.hosts['esx-edge-01']['moref']: True,
                   named.hosts['esx-edge-02']['moref']: False}


def test_where_vms_live(edges, named):
    ds, vms = named.ds, edges.vc['vms']
    for n in ('nfs', 'vsan', 'vvol'):
        assert named.vms['vm-edge-' + n]['vm_path_name'] == \
            '[ds-edge-%s] vm-edge-%s/vm-edge-%s.vmx' % (n, n, n)
    assert len([v for v in vms if v['vm_path_name'].startswith('[ds-edge-26vms] ')]) == 26
    # 30 VMs have an ISO image on ds-edge-iso; none lives there.
    assert len([v for v in vms if ds['ds-edge-iso']['moref'] in v['datastores']]) == 30
    assert ds['ds-edge-iso']['vm_count'] == 30
    assert [v['name'] for v in vms if v['vm_path_name'].startswith('[ds-edge-iso]')] == []
    assert named.vms['vm-edge-noiso']['datastores'] == [ds['ds-edge-4vms']['moref']]


def test_iscsi_iqn_per_volume(named):
    targets = by(named.hosts['esx-edge-iscsi']['iscsi_hbas'], 'device')['vmhba64']['targets']
    portal = [t for t in targets if t['kind'] == 'static' and t['address'] == '10.0.5.10']
    assert sorted(t['iscsi_name'] for t in portal) == \
        ['iqn.2001-05.com.equallogic:0-8a0906-edge-vol%d' % i for i in (1, 2, 3)]
    assert {(t['discovery_method'], t['parent']) for t in portal} == \
        {('sendTargetMethod', '10.0.5.10:3260')}
    send = [t for t in targets if t['kind'] == 'send']
    assert [(o['value'], o['inherited']) for t in send for o in t['options']
            if o['key'] == 'DelayedAck'] == [('true', False)]


def test_scoped_claim_rules(named):
    rules = [r for r in named.hosts['esx-edge-01']['satp_rules'] if r['rule_group'] == 'user']
    assert [(r['satp'], r['device']) for r in rules if r['device']] == \
        [('VMW_SATP_ALUA', 'naa.600601600000000000000000000000c1')]
    assert [r['driver'] for r in rules if r['driver']] == ['lsi_msgpt3']
    assert [(r['transport'], r['claim_options'], r['options']) for r in rules if r['transport']] \
        == [('fc', 'tpgs_on', 'reset_on_attempted_reserve')]


# ---- names with markup characters and non-ASCII letters --------------------------------------

def test_odd_names_in_json(named):
    vm = named.vms['vm ' + ODD]
    assert (vm['vm_path_name'], vm['host'], vm['datastores']) == \
        ('[ds %s] vm %s/vm %s.vmx' % (ODD, ODD, ODD), named.hosts['esx ' + ODD]['moref'],
         [named.ds['ds ' + ODD]['moref']])


def test_odd_names_in_sqlite(edges):
    con = sqlite3.connect(edges.ws.db)
    try:
        assert {t: con.execute('SELECT count(*) FROM %s WHERE name = ?' % t, (n,)).fetchone()[0]
                for t, n in (('hosts', 'esx ' + ODD), ('datastores', 'ds ' + ODD),
                             ('vms', 'vm ' + ODD))} == {'hosts': 1, 'datastores': 1, 'vms': 1}
    finally:
        con.close()


def test_odd_names_in_text(edges):
    assert 'ds ' + ODD in edges.text
    assert 'vm ' + ODD in edges.text


def test_checks_run(edges):
    """The checks run on this estate (what they find is theirs to say)."""
    assert isinstance(edges.findings, list)
