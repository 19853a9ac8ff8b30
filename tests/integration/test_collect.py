"""vslint collect against the simulator's `violations` scenario: what vslint stores must equal
what the simulator holds (its -truth dump, computed from its own object map), with the
simulator's page size at 100 and forced down to 5 to prove ContinueRetrievePropertiesEx paging,
once more with the session expiring in the middle of a paged read (re-login, full poll), and
with gzip-compressed answers.
The password must appear in no output and no file vslint wrote."""
import glob
import json
import re
from types import SimpleNamespace

import pytest

from simlib import PASSWORD, Sim, inventory_counts, vcenter, vslint

# name -> simulator flags: every way of reading the same estate must store the same inventory.
READS = {
    'page-size-100': dict(page_size=100),
    'page-size-5': dict(page_size=5),
    # The session expires in the middle of the paged VM read: vslint logs in again and stores
    # the same, complete inventory.
    'session-expires': dict(page_size=5, extra=['-expire-session-after', '20']),
    # vCenter compresses its answers when asked (vslint always asks; -v reports both sizes).
    'gzip': dict(page_size=100, extra=['-gzip']),
}


class Reads(dict):
    """Each way of reading, collected once (on first use) into its own workspace. The simulator
    is stopped before the tests look: they see what vslint stored and printed."""

    def __init__(self, new_workspace):
        super().__init__()
        self.new_workspace = new_workspace

    def __missing__(self, name):
        ws = self.new_workspace()
        flags = READS[name]
        verbose = ['-v'] if name == 'gzip' else []
        with Sim('violations', **flags) as sim:
            conf = ws.write_config([vcenter(ws, sim.url, 'sim', max_objects=1000)])
            res = vslint('collect', '-c', conf, *verbose)
            truth = sim.truth()
        self[name] = SimpleNamespace(ws=ws, res=res, truth=truth,
                                     inv=vslint('inventory', '-c', conf, '--format', 'json'),
                                     text=vslint('inventory', '-c', conf))
        return self[name]


@pytest.fixture(scope='module')
def reads(new_workspace):
    return Reads(new_workspace)


@pytest.fixture(scope='module', params=list(READS))
def read(request, reads):
    return reads[request.param]


@pytest.fixture
def stored(read):
    """The stored inventory of the one vCenter."""
    assert read.inv.returncode == 0, read.inv.stderr
    return json.loads(read.inv.stdout)['vcenters'][0]


def test_collect_succeeds(read):
    assert read.res.returncode == 0, read.res.stderr.strip()[-500:]


def test_collect_prints_what_it_stored(read):
    assert read.res.stdout.startswith('vcenter sim: stored in '), read.res.stdout
    assert ' %d vms' % read.truth['counts']['vm'] in read.res.stdout, read.res.stdout


def test_relogin_logged(reads):
    r = reads['session-expires']
    assert 'session expired during the poll; logging in again' in r.res.stderr, r.res.stderr


def test_gzip_answers(reads):
    m = re.search(r'(\d+) bytes on the wire, (\d+) bytes of XML', reads['gzip'].res.stderr)
    assert m is not None, 'gzip: sizes not reported'
    assert int(m.group(1)) * 4 < int(m.group(2)), \
        'the answers did not come compressed (%s wire, %s XML)' % m.groups()


def test_counts(read, stored):
    counts = inventory_counts(stored)
    assert {k: counts.get(k) for k in read.truth['counts']} == read.truth['counts']


def compared(truth, stored, fields):
    """{name: fields(stored object, truth object) or "missing"} and {name: fields(truth object,
    truth object)}, matched by moref: one assert shows every difference."""
    got = by(stored, 'moref')
    return ({t['name']: fields(got[t['moref']], t) if t['moref'] in got else 'missing'
             for t in truth},
            {t['name']: fields(t, t) for t in truth})


def by(items, key):
    return {i[key]: i for i in items}


def test_datastores(read, stored):
    def fields(x, t):
        d = {k: x[k] for k in ('name', 'type', 'capacity', 'free_space', 'vmfs_major', 'parent',
                               'vm_count')}
        # govmomi omits a zero `uncommitted` from the wire (omitempty), so the truth's 0 arrives
        # as "not reported", which vslint stores as null.
        d['uncommitted'] = (t['uncommitted'] or None) if x is t else x['uncommitted']
        return d
    got, want = compared(read.truth['datastores'], stored['datastores'], fields)
    assert got == want


def test_storage_pods(read, stored):
    def fields(x, t):
        return {'name': x['name'], 'capacity': x['capacity'], 'free_space': x['free_space'],
                'members': sorted(x['datastores'])}
    got, want = compared(read.truth['storage_pods'], stored['storage_pods'], fields)
    assert got == want


def test_dvswitches(read, stored):
    got_dvs = by(stored['dvswitches'], 'moref')
    fields = ('name', 'uuid', 'max_mtu')
    assert {t['name']: {k: got_dvs.get(t['moref'], {}).get(k) for k in fields}
            for t in read.truth['dvswitches']} == \
        {t['name']: {k: t[k] for k in fields} for t in read.truth['dvswitches']}


def host_pairs(read, stored):
    """(truth host, stored host) by moref; a host missing from the store fails the test."""
    got = by(stored['hosts'], 'moref')
    missing = [t['name'] for t in read.truth['hosts'] if t['moref'] not in got]
    assert missing == [], 'hosts not stored'
    return [(t, got[t['moref']]) for t in read.truth['hosts']]


def test_host_options_and_network(read, stored):
    got, want = {}, {}
    for t, g in host_pairs(read, stored):
        ebd = g['options'].get('VMFS3.EnableBlockDelete')
        gv, gs = by(g['vnics'], 'device'), by(g['vswitches'], 'name')
        got[t['name']] = {
            'name': g['name'],
            'product_version': g['product_version'],
            'EnableBlockDelete': None if ebd is None else int(ebd),
            'vnics': {tv['device']: (gv.get(tv['device'], {}).get('mtu'),
                                     gv.get(tv['device'], {}).get('portgroup'),
                                     gv.get(tv['device'], {}).get('dvs_uuid'),
                                     gv.get(tv['device'], {}).get('ip'),
                                     gv.get(tv['device'], {}).get('subnet_mask'))
                      for tv in t['vnics']},
            'vswitches': {ts['name']: gs.get(ts['name'], {}).get('mtu') for ts in t['vswitches']},
        }
        want[t['name']] = {
            'name': t['name'],
            'product_version': t['product_version'],
            'EnableBlockDelete': t['enable_block_delete'],
            'vnics': {tv['device']: (tv['mtu'], tv['portgroup'] or None, tv['dvs_uuid'],
                                     tv['ip'], tv['subnet_mask'])
                      for tv in t['vnics']},
            'vswitches': {ts['name']: ts['mtu'] for ts in t['vswitches']},
        }
    assert got == want


def delayed_ack(options):
    return [(o['value'], o['inherited']) for o in options if o['key'] == 'DelayedAck']


def test_iscsi_adapters(read, stored):
    got, want = {}, {}
    for t, g in host_pairs(read, stored):
        gh = by(g['iscsi_hbas'], 'device')
        for th in t['iscsi_hbas']:
            what = '%s %s' % (t['name'], th['device'])
            want[what] = {
                'iscsi_name': th['iscsi_name'],
                'bound vnics': sorted(th['bound_vnics']),
                'DelayedAck': [(th['delayed_ack']['value'], th['delayed_ack']['inherited'])],
                'target count': len(th['targets']),
                'targets': {'%s:%s' % (tt['address'], tt['port']):
                            [(tt['delayed_ack']['value'], tt['delayed_ack']['inherited'])]
                            for tt in th['targets']},
            }
            h = gh.get(th['device'])
            if not h:
                got[what] = 'missing'
                continue
            gt = {(x['kind'], x['address'], x['port']): x for x in h['targets']}
            got[what] = {
                'iscsi_name': h['iscsi_name'],
                'bound vnics': sorted(h['bound_vnics']),
                'DelayedAck': delayed_ack(h['options']),
                'target count': len(h['targets']),
                'targets': {'%s:%s' % (tt['address'], tt['port']):
                            delayed_ack(gt[(tt['kind'], tt['address'], tt['port'])]['options'])
                            if (tt['kind'], tt['address'], tt['port']) in gt else 'missing'
                            for tt in th['targets']},
            }
    assert got == want


def test_luns(read, stored):
    def fields(x):
        return dict({k: x[k] for k in ('local', 'policy', 'satp', 'iops_limit', 'lun_type',
                                       'protocol_endpoint')},
                    paths=sorted((p['name'], p['state'], p['target_wwpn'] or None)
                                 for p in x['paths']))
    got, want = {}, {}
    for t, g in host_pairs(read, stored):
        gl = by(g['luns'], 'canonical_name')
        for tl in t['luns']:
            what = '%s %s' % (t['name'], tl['canonical_name'])
            want[what] = fields(tl)
            got[what] = fields(gl[tl['canonical_name']]) if tl['canonical_name'] in gl \
                else 'missing'
    assert got == want


def test_satp_rules(read, stored):
    """Every rule the host's esxcli lists, system and user, fields it leaves empty stored as
    null; asked only of hosts with SAN LUNs, and nothing stored for a host that refuses esxcli
    (the truth lists none for it)."""
    rule_keys = ('satp', 'vendor', 'model', 'psp', 'psp_options', 'rule_group')
    order = lambda r: tuple(x or '' for x in r)  # noqa: E731
    got, want = {}, {}
    for t, g in host_pairs(read, stored):
        rules = [tuple(r[k] or None for k in rule_keys) for r in t['satp_rules']]
        if not any(not tl['local'] for tl in t['luns']):
            rules = []
        want[t['name']] = sorted(rules, key=order)
        got[t['name']] = sorted((tuple(r[k] for k in rule_keys) for r in g['satp_rules']),
                                key=order)
    assert got == want


def test_satp_rules_compared(read):
    """The comparison above is not empty: esx-san-1 has user rules."""
    assert any(r['rule_group'] == 'user' for t in read.truth['hosts'] if t['name'] == 'esx-san-1'
               for r in t['satp_rules'])


def test_vms(read, stored):
    def fields(x, t):
        d = {k: x[k] for k in ('name', 'template', 'power_state', 'hw_version', 'ft_state',
                               'host', 'consolidation_needed', 'guest_id')}
        d['managed_by'] = x['managed_by'] or ''  # the truth's "" is none
        d['controllers'] = sorted((c['key'], c['type'], c['shared_bus'])
                                  for c in x['controllers'])
        d['disk count'] = len(x['disks'])
        gd = by(x['disks'], 'key')
        d['disks'] = {}
        for td in t['disks']:
            disk = gd.get(td['key'], {})
            dd = {k: disk.get(k) for k in ('label', 'file_name', 'datastore', 'capacity_bytes',
                                           'controller_key')}
            # backing.parent and backing.sharing; the truth's "" is none.
            dd['parent'] = disk.get('parent') or ''
            dd['sharing'] = disk.get('sharing') or ''
            # The truth says "rdm"; vslint tells physical from virtual compatibility mode.
            fmt = disk.get('format') or ''
            dd['format'] = 'rdm' if fmt.startswith('rdm-') else fmt
            d['disks'][td['key']] = dd
        d['snapshots'] = sorted((s['name'], s['depth']) for s in x['snapshots'])
        return d
    got, want = compared(read.truth['vms'], stored['vms'], fields)
    assert got == want


def test_text_inventory(read):
    assert read.text.returncode == 0, read.text.stderr
    assert 'ds-crowded' in read.text.stdout, 'the planted datastore ds-crowded is not named'


def test_password_not_printed(read):
    for out in (read.res.stdout, read.res.stderr, read.inv.stdout, read.text.stdout):
        assert PASSWORD not in out


def test_password_not_stored(read):
    files = glob.glob(read.ws.dir + '/vslint.db*')
    assert files
    for path in files:
        with open(path, 'rb') as fh:
            assert PASSWORD.encode() not in fh.read(), path
