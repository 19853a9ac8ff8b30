#!/usr/bin/env python3
"""vslint collect against the simulator's `violations` scenario: what vslint stores must equal
what the simulator holds (its -truth dump, computed from its own object map), with the
simulator's page size at 100 and forced down to 5 to prove ContinueRetrievePropertiesEx paging,
once more with the session expiring in the middle of a paged read (re-login, full poll), and
with gzip-compressed answers.
The password must appear in no output and no file vslint wrote."""
import glob
import json
import re
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from simlib import Sim, Workspace, Failures, vslint, PASSWORD, USER  # noqa: E402


def by(items, key):
    return {i[key]: i for i in items}


def compare(f, truth, inv):
    vc = inv['vcenters'][0]
    hosts = vc['hosts']
    counts = {
        'datastore': len(vc['datastores']),
        'storage_pod': len(vc['storage_pods']),
        'vm': len(vc['vms']),
        'host': len(hosts),
        'dvswitch': len(vc['dvswitches']),
        'iscsi_hba': sum(len(h['iscsi_hbas']) for h in hosts),
        'lun': sum(len(h['luns']) for h in hosts),
        'lun_path': sum(len(l['paths']) for h in hosts for l in h['luns']),
        'vnic': sum(len(h['vnics']) for h in hosts),
        'vdisk': sum(len(v['disks']) for v in vc['vms']),
    }
    for k, want in truth['counts'].items():
        f.eq('count of %s' % k, counts.get(k), want)

    got_ds = by(vc['datastores'], 'moref')
    for t in truth['datastores']:
        g = got_ds.get(t['moref'])
        if not g:
            f.true('datastore %s missing' % t['name'], False)
            continue
        for k in ('name', 'type', 'capacity', 'free_space', 'vmfs_major', 'parent', 'vm_count'):
            f.eq('datastore %s %s' % (t['name'], k), g[k], t[k])
        # govmomi omits a zero `uncommitted` from the wire (omitempty), so 0 arrives as
        # "not reported", which vslint stores as null.
        f.eq('datastore %s uncommitted' % t['name'], g['uncommitted'],
             t['uncommitted'] if t['uncommitted'] else None)

    got_pods = by(vc['storage_pods'], 'moref')
    for t in truth['storage_pods']:
        g = got_pods.get(t['moref'])
        if not g:
            f.true('storage pod %s missing' % t['name'], False)
            continue
        for k in ('name', 'capacity', 'free_space'):
            f.eq('pod %s %s' % (t['name'], k), g[k], t[k])
        f.eq('pod %s members' % t['name'], sorted(g['datastores']), sorted(t['datastores']))

    got_dvs = by(vc['dvswitches'], 'moref')
    for t in truth['dvswitches']:
        g = got_dvs.get(t['moref'], {})
        for k in ('name', 'uuid', 'max_mtu'):
            f.eq('dvs %s %s' % (t['name'], k), g.get(k), t[k])

    got_hosts = by(hosts, 'moref')
    for t in truth['hosts']:
        g = got_hosts.get(t['moref'])
        if not g:
            f.true('host %s missing' % t['name'], False)
            continue
        hn = t['name']
        f.eq('host %s name' % hn, g['name'], hn)
        ebd = g['options'].get('VMFS3.EnableBlockDelete')
        f.eq('host %s EnableBlockDelete' % hn, None if ebd is None else int(ebd),
             t['enable_block_delete'])
        gv = by(g['vnics'], 'device')
        for tv in t['vnics']:
            v = gv.get(tv['device'], {})
            f.eq('host %s vnic %s mtu' % (hn, tv['device']), v.get('mtu'), tv['mtu'])
            f.eq('host %s vnic %s portgroup' % (hn, tv['device']), v.get('portgroup'),
                 tv['portgroup'] or None)
            f.eq('host %s vnic %s dvs' % (hn, tv['device']), v.get('dvs_uuid'), tv['dvs_uuid'])
        gs = by(g['vswitches'], 'name')
        for ts in t['vswitches']:
            f.eq('host %s vswitch %s mtu' % (hn, ts['name']), gs.get(ts['name'], {}).get('mtu'),
                 ts['mtu'])
        gh = by(g['iscsi_hbas'], 'device')
        for th in t['iscsi_hbas']:
            h = gh.get(th['device'])
            if not h:
                f.true('host %s iscsi %s missing' % (hn, th['device']), False)
                continue
            what = 'host %s %s' % (hn, th['device'])
            f.eq(what + ' iscsi_name', h['iscsi_name'], th['iscsi_name'])
            f.eq(what + ' bound vnics', sorted(h['bound_vnics']), sorted(th['bound_vnics']))
            da = [o for o in h['options'] if o['key'] == 'DelayedAck']
            f.eq(what + ' DelayedAck', [(o['value'], o['inherited']) for o in da],
                 [(th['delayed_ack']['value'], th['delayed_ack']['inherited'])])
            gt = {(x['kind'], x['address'], x['port']): x for x in h['targets']}
            f.eq(what + ' target count', len(h['targets']), len(th['targets']))
            for tt in th['targets']:
                x = gt.get((tt['kind'], tt['address'], tt['port']))
                if not x:
                    f.true('%s target %s:%s missing' % (what, tt['address'], tt['port']), False)
                    continue
                da = [o for o in x['options'] if o['key'] == 'DelayedAck']
                f.eq('%s target %s DelayedAck' % (what, tt['address']),
                     [(o['value'], o['inherited']) for o in da],
                     [(tt['delayed_ack']['value'], tt['delayed_ack']['inherited'])])
        gl = by(g['luns'], 'canonical_name')
        for tl in t['luns']:
            l = gl.get(tl['canonical_name'])
            if not l:
                f.true('host %s lun %s missing' % (hn, tl['canonical_name']), False)
                continue
            what = 'host %s lun %s' % (hn, tl['canonical_name'])
            for k in ('local', 'policy', 'satp', 'iops_limit'):
                f.eq('%s %s' % (what, k), l[k], tl[k])
            f.eq(what + ' paths', sorted((p['name'], p['state']) for p in l['paths']),
                 sorted((p['name'], p['state']) for p in tl['paths']))
        # SATP claim rules: every one the host's esxcli lists, system and user, fields it
        # leaves empty stored as null; asked only of hosts with SAN LUNs, and nothing stored
        # for a host that refuses esxcli (the truth lists none for it).
        rule_keys = ('satp', 'vendor', 'model', 'psp', 'psp_options', 'rule_group')
        want_rules = [tuple(r[k] or None for k in rule_keys) for r in t['satp_rules']]
        if not any(not tl['local'] for tl in t['luns']):
            want_rules = []
        order = lambda r: tuple(x or '' for x in r)  # noqa: E731
        f.eq('host %s satp rules' % hn,
             sorted((tuple(r[k] for k in rule_keys) for r in g['satp_rules']), key=order),
             sorted(want_rules, key=order))
    f.true('satp rules were compared (esx-san-1 has user rules)',
           any(r['rule_group'] == 'user' for t in truth['hosts'] if t['name'] == 'esx-san-1'
               for r in t['satp_rules']))

    got_vms = by(vc['vms'], 'moref')
    for t in truth['vms']:
        g = got_vms.get(t['moref'])
        if not g:
            f.true('vm %s missing' % t['name'], False)
            continue
        vn = t['name']
        for k in ('name', 'template', 'power_state', 'hw_version', 'ft_state', 'host'):
            f.eq('vm %s %s' % (vn, k), g[k], t[k])
        f.eq('vm %s controllers' % vn,
             sorted((c['key'], c['type'], c['shared_bus']) for c in g['controllers']),
             sorted((c['key'], c['type'], c['shared_bus']) for c in t['controllers']))
        gd = by(g['disks'], 'key')
        f.eq('vm %s disk count' % vn, len(g['disks']), len(t['disks']))
        for td in t['disks']:
            d = gd.get(td['key'], {})
            for k in ('label', 'file_name', 'datastore', 'capacity_bytes', 'controller_key'):
                f.eq('vm %s disk %s %s' % (vn, td['key'], k), d.get(k), td[k])
            # The truth says "rdm"; vslint tells physical from virtual compatibility mode.
            fmt = d.get('format') or ''
            f.eq('vm %s disk %s format' % (vn, td['key']),
                 'rdm' if fmt.startswith('rdm-') else fmt, td['format'])
        f.eq('vm %s snapshots' % vn,
             sorted((s['name'], s['depth']) for s in g['snapshots']),
             sorted((s['name'], s['depth']) for s in t['snapshots']))


def run(page_size, expire_after=0, gzip=False):
    f = Failures('collect violations page-size %d%s%s' % (
        page_size, ', session expired on read %d' % expire_after if expire_after else '',
        ', gzip' if gzip else ''))
    ws = Workspace()
    extra = ['-expire-session-after', str(expire_after)] if expire_after else []
    if gzip:
        extra.append('-gzip')
    try:
        with Sim('violations', page_size=page_size, extra=extra) as sim:
            pw = ws.password_file()
            conf = ws.write_config([{'name': 'sim', 'url': sim.url, 'user': USER,
                                     'password_file': pw, 'max_objects': 1000}])
            res = vslint('collect', '-c', conf, *(['-v'] if gzip else []))
            f.eq('collect exit status (stderr: %s)' % res.stderr.strip()[-500:], res.returncode, 0)
            if gzip:
                # -v reports both sizes: compressed on the wire, the XML after decoding.
                m = re.search(r'(\d+) bytes on the wire, (\d+) bytes of XML', res.stderr)
                f.true('gzip: sizes reported', m is not None)
                if m:
                    f.true('gzip: the answers came compressed (%s wire, %s XML)' % m.groups(),
                           int(m.group(1)) * 4 < int(m.group(2)))
            f.true('collect prints what it stored: %r' % res.stdout,
                   res.stdout.startswith('vcenter sim: stored in '))
            if expire_after:
                f.true('the re-login is logged: %r' % res.stderr,
                       'session expired during the poll; logging in again' in res.stderr)
            truth = sim.truth()
            f.true('collect reports the VM count: %r' % res.stdout,
                   ' %d vms' % truth['counts']['vm'] in res.stdout)
            inv = vslint('inventory', '-c', conf, '--format', 'json')
            f.eq('inventory exit status', inv.returncode, 0)
            doc = json.loads(inv.stdout)
            compare(f, truth, doc)
            text = vslint('inventory', '-c', conf)
            f.eq('inventory text exit status', text.returncode, 0)
            f.true('text inventory names the planted datastore ds-crowded',
                   'ds-crowded' in text.stdout)
            for out in (res.stdout, res.stderr, inv.stdout, text.stdout):
                f.true('password in output', PASSWORD not in out)
            for path in glob.glob(ws.dir + '/vslint.db*'):
                with open(path, 'rb') as fh:
                    f.true('password in %s' % path, PASSWORD.encode() not in fh.read())
    finally:
        ws.cleanup()
    f.finish()


if __name__ == '__main__':
    run(100)
    run(5)
    # The session expires in the middle of the paged VM read: vslint logs in again and
    # stores the same, complete inventory.
    run(5, expire_after=20)
    # vCenter compresses its answers when asked (vslint always asks).
    run(100, gzip=True)
