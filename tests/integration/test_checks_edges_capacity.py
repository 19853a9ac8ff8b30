"""The capacity, placement and space checks (datastore-size, vms-per-datastore, space-reclaim,
nfs-server-redundancy, and the LUNs every datastore check names) on the simulator's `edges`
scenario: real-estate edge cases, each with a compliant twin, as tests/sim/scenario_edges.go's
header plants them (written from that spec, not from vslint's output). Every planted case must
be flagged with its planted severity and evidence, and no twin may be."""
from types import SimpleNamespace

import pytest

from checkcases import twin_and_evidence_cases
from simlib import Estate, Sim, finding, ids_of, of, rows_of, silent

GIB = 1 << 30

# check -> {object name: (object type, severity)}: everything each check flags on `edges`.
WANT = {
    'datastore-size': {
        'ds-edge-499': ('datastore', 'warning'),       # below the 500 GB band
        'ds-edge-760': ('datastore', 'warning'),       # above the 750 GB band
        'ds-edge-span': ('datastore', 'warning'),      # 1200 GiB over two LUNs
    },
    'vms-per-datastore': {
        'ds-edge-26vms': ('datastore', 'warning'),     # 26 VMs live there
    },
    'space-reclaim': {
        'ds-edge-unmap-none': ('datastore', 'warning'),  # VMFS6, automatic UNMAP off
        'esx-edge-noebd': ('host', 'warning'),           # EnableBlockDelete=0: one for the host
        'vm-edge-thin5-b': ('vm', 'info'),               # vmx-10, thin on VMFS5
        'vm-edge-old5-ebd': ('vm', 'info'),              # vmx-10, thin on VMFS5, host fine
    },
    'nfs-server-redundancy': {
        'cluster-edges-nas1': ('cluster', 'warning'),    # three NFS datastores, one server
    },
    'vmfs-version': {
        'ds-edge-vmfs5': ('datastore', 'warning'),
        'ds-edge-reclaim5': ('datastore', 'warning'),
    },
}

TWINS = {
    'datastore-size': ['ds-edge-500', 'ds-edge-750', 'ds-edge-1000', 'ds-edge-single',
                       'datastore1 (esx-edge-01)', 'datastore1 (esx-edge-noebd)', 'ds-edge-nfs',
                       'ds-edge-vsan', 'ds-edge-vvol'],
    'vms-per-datastore': ['ds-edge-iso', 'ds-edge-4vms'],
    'space-reclaim': ['ds-edge-unmap-low', 'ds-edge-single', 'datastore1 (esx-edge-noebd)',
                      'ds-edge-reclaim5', 'ds-edge-reclaim6', 'esx-edge-01', 'esx-edge-02',
                      'vm-edge-thin5-a', 'tmpl-edge-thin5', 'vm-edge-lazy5', 'vm-edge-thin6',
                      'vm-edge-local6', 'vm-edge-nfs', 'vm-edge-vsan'],
    'nfs-server-redundancy': ['cluster-edges', 'cluster-edges-nas2', 'cluster-clean'],
}

EVIDENCE = {
    'datastore-size': {
        'ds-edge-499': {'capacity_bytes': 499 * GIB, 'level': 'below_band'},
        'ds-edge-760': {'capacity_bytes': 760 * GIB, 'level': 'above_band'},
        'ds-edge-span': {'capacity_bytes': 1200 * GIB, 'level': 'above_band'},
    },
    'vms-per-datastore': {
        'ds-edge-26vms': {'vms': 26, 'powered_on': 26, 'vms_with_other_files_only': 0},
    },
    'space-reclaim': {
        'ds-edge-unmap-none': {'unmap_priority': 'none', 'vmfs_major': 6},
        'esx-edge-noebd': {'enable_block_delete': 0},
        'vm-edge-thin5-b': {'hw_version': 10, 'host': 'esx-edge-noebd', 'enable_block_delete': 0},
        'vm-edge-old5-ebd': {'hw_version': 10, 'host': 'esx-edge-01', 'enable_block_delete': 1},
    },
    'nfs-server-redundancy': {
        'cluster-edges-nas1': {'nas_server': 'nas-a.example.com', 'nas_servers': 1},
    },
}


@pytest.fixture(scope='module')
def edges(new_workspace):
    """The edges estate polled once by `vslint check`, its inventory, and the estate itself for
    `check --offline` runs with other thresholds on the stored snapshot."""
    ws = new_workspace()
    with Sim('edges') as sim:
        est = Estate(sim, ws, 'sim')
        findings = est.check()
        inv = est.inventory()['vcenters'][0]
    return SimpleNamespace(est=est, findings=findings, inv=inv,
                           ds={d['name']: d for d in inv['datastores']})


def extents_of(edges, name):
    return [x['disk_name'] for x in edges.ds[name]['extents']]


@pytest.mark.parametrize('check', WANT)
def test_flags_exactly_the_planted(edges, check):
    got = of(edges.findings, check)
    assert {n: (x['object']['type'], x['severity']) for n, x in got.items()} == WANT[check]
    assert len([x for x in edges.findings if x['check'] == check]) == len(got)


@pytest.mark.parametrize('check,name,want', rows_of(WANT), ids=ids_of(rows_of(WANT)))
def test_planted_case_flagged(edges, check, name, want):
    x = finding(edges.findings, check, name)
    assert (x['object']['type'], x['severity']) == want
    assert x.get('message')


test_compliant_twin_silent, test_evidence = twin_and_evidence_cases('edges', TWINS, EVIDENCE)


# ---- every datastore check names every LUN of a spanned volume --------------------------------

@pytest.fixture(scope='module')
def lowered(edges, module_workspace):
    """Thresholds that flag every datastore, on a copy of the snapshot: 50 % free is below a
    60 % warning, 50 % used is above a 10 % overcommit, every VM's datastore holds more than 0."""
    return edges.est.check_with(module_workspace, {
        'datastore-free-space': {'warn_free_pct': 60},
        'thin-overcommit': {'max_overcommit_pct': 10},
        'vms-per-datastore': {'max_vms': 0}})


@pytest.mark.parametrize('check', ['datastore-free-space', 'thin-overcommit',
                                   'vms-per-datastore'])
def test_spanned_volume_names_both_luns(edges, lowered, check):
    assert len(extents_of(edges, 'ds-edge-span')) == 2
    x = finding(lowered, check, 'ds-edge-span')
    assert x['evidence'].get('extents') == extents_of(edges, 'ds-edge-span')
    assert finding(lowered, check, 'ds-edge-single')['evidence'].get('extents') == \
        extents_of(edges, 'ds-edge-single')
    # An NFS export has no LUN: no extents, rather than an empty list.
    assert 'extents' not in finding(lowered, check, 'ds-edge-nfs')['evidence']


@pytest.mark.parametrize('check,name', [('datastore-size', 'ds-edge-span'),
                                        ('vmfs-version', 'ds-edge-vmfs5'),
                                        ('space-reclaim', 'ds-edge-unmap-none'),
                                        ('vms-per-datastore', 'ds-edge-26vms')])
def test_datastore_finding_names_its_luns(edges, check, name):
    assert finding(edges.findings, check, name)['evidence'].get('extents') == \
        extents_of(edges, name)


# ---- where VMs live, and which datastore types are counted -------------------------------------

@pytest.mark.parametrize('name,vms', [('ds-edge-nfs', 1), ('ds-edge-4vms', 5),
                                      ('datastore1 (esx-edge-noebd)', 1), ('ds-edge-26vms', 26)])
def test_vms_counted_where_they_live(lowered, name, vms):
    """NFS and local VMFS are counted; ds-edge-4vms holds the configurations of the four ISO
    VMs and vm-edge-noiso."""
    assert finding(lowered, 'vms-per-datastore', name)['evidence'].get('vms') == vms


@pytest.mark.parametrize('name', ['ds-edge-iso', 'ds-edge-vsan', 'ds-edge-vvol'])
def test_vms_not_counted(lowered, name):
    """Thirty VMs mount an ISO image from ds-edge-iso and none lives there; vSAN and vVol are
    not judged."""
    silent(lowered, 'vms-per-datastore', name)


# ---- space-reclaim: one finding per host, listing its VMs --------------------------------------

def test_reclaim_host_lists_exactly_its_vmfs5_thin_disks(edges):
    x = finding(edges.findings, 'space-reclaim', 'esx-edge-noebd')
    assert (x.get('host') or {}).get('name') == 'esx-edge-noebd'
    got = [(v.get('vm'), [d.get('datastore') for d in v.get('disks', [])])
           for v in x['evidence'].get('vms', [])]
    assert sorted(got) == [('vm-edge-thin5-a', ['ds-edge-reclaim5']),
                           ('vm-edge-thin5-b', ['ds-edge-reclaim5'])]
    assert len(of(edges.findings, 'space-reclaim')) == \
        len([f for f in edges.findings if f['check'] == 'space-reclaim']), 'one per object'


# ---- nfs-server-redundancy: per cluster -------------------------------------------------------

def test_nfs_cluster_finding(edges):
    x = finding(edges.findings, 'nfs-server-redundancy', 'cluster-edges-nas1')
    clusters = {c['name']: c['moref'] for c in edges.inv['entities']
                if c['type'] == 'ClusterComputeResource'}
    assert x['object']['moref'] == clusters['cluster-edges-nas1']
    assert sorted(d['name'] for d in x['evidence'].get('datastores', [])) == \
        ['ds-edge-nas-shared', 'ds-edge-nas1-a', 'ds-edge-nas1-b']
    assert 'nas-a.example.com' in x['message']


def test_clusters_in_inventory(edges):
    """A finding can name a cluster because the snapshot has every cluster by name."""
    clusters = sorted(c['name'] for c in edges.inv['entities']
                      if c['type'] == 'ClusterComputeResource')
    assert clusters == ['cluster-clean', 'cluster-edges', 'cluster-edges-nas1',
                        'cluster-edges-nas2']
    by_moref = {c['moref']: c['name'] for c in edges.inv['entities']}
    assert {h['name']: by_moref.get(h['parent']) for h in edges.inv['hosts']
            if h['name'].startswith('esx-edge-nas')} == \
        {'esx-edge-nas1': 'cluster-edges-nas1', 'esx-edge-nas2': 'cluster-edges-nas2'}
