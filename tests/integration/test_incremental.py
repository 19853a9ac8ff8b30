"""Incremental polling ([vcenter] incremental = true): after its first full read, `vslint serve`
follows the simulator's changes with WaitForUpdatesEx and re-reads only the objects that changed.
Each kind of change made in the simulator (through its SOAP API or its control endpoint, both of
which notify the property collector's filters) must reach the API within a few rounds and
without another full read: the simulator counts the RetrievePropertiesEx calls over a
ContainerView (a full read makes one per type) apart from those naming objects by moref."""
import json
import os
import re
import time

import pytest

from apilib import serving, until
from simlib import Responder, Sim, VimClient, run_ok, vcenter

SYNTH = os.environ.get('VCSIM_SYNTH', 'build/tests/sim/vcsim-synth')


@pytest.fixture(scope='module')
def srv(sim, module_workspace):
    vc = vcenter(module_workspace, sim.url, 'lab', interval=3600, incremental='true')
    with serving(module_workspace, [vc]) as s:
        s.sim = sim  # its log goes with a timeout's
        until(lambda: s.vcenter('lab')['mode'] == 'incremental', 'the follower to start', s)
        yield s


@pytest.fixture(scope='module')
def vim(sim):
    return VimClient(sim.url)


def vms(srv):
    return {v['name']: v for v in srv.get('/api/v1/inventory/vms?limit=1000').json()['vms']}


def hosts(srv):
    return {h['name']: h for h in srv.get('/api/v1/inventory/hosts?limit=1000').json()['hosts']}


def datastores(srv):
    return {d['name']: d for d in
            srv.get('/api/v1/inventory/datastores?limit=1000').json()['datastores']}


def open_findings(srv, check, name):
    """The open (not resolved) findings of check that name name anywhere."""
    items = srv.get('/api/v1/findings?limit=1000&check=' + check).json()['findings']
    return [f for f in items if f['status'] != 'resolved' and name in json.dumps(f)]


@pytest.fixture
def no_full_read(sim, srv):
    """Asserts that what the test does is read without a full read, and with some object
    read by moref."""
    before = sim.stats()
    yield
    after = sim.stats()
    assert after['retrieve_view'] == before['retrieve_view'], (before, after)
    assert after['retrieve_objects'] > before['retrieve_objects'], (before, after)
    assert srv.vcenter('lab')['mode'] == 'incremental'


def test_status_shows_the_mode(srv):
    v = srv.vcenter('lab')
    assert v['mode'] == 'incremental'
    assert v['collector_version']
    assert re.match(r'^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$', v['last_full_read'])
    ready = srv.get('/readyz').json()
    assert [x['mode'] for x in ready['vcenters']] == ['incremental']
    metrics = srv.get('/metrics').body
    assert 'vslint_poll_mode{vcenter="lab"} 1\n' in metrics
    assert re.search(r'^vslint_last_full_read_timestamp_seconds\{vcenter="lab"\} \d+',
                     metrics, re.M)


def test_quiet_rounds_keep_the_snapshot_current(srv):
    """Rounds that bring no change still say the snapshot is current: the summary's
    last_success and the gate's snapshot age (read from the database) follow the rounds, not
    the last full read, so a quiet estate is neither stale nor refused by the gate."""
    import calendar
    full = calendar.timegm(time.strptime(srv.vcenter('lab')['last_full_read'],
                                         '%Y-%m-%dT%H:%M:%SZ'))
    while time.time() < full + 13:
        time.sleep(0.5)
    v = srv.vcenter('lab')
    assert v['mode'] == 'incremental' and not v['stale']
    last = calendar.timegm(time.strptime(v['last_success'], '%Y-%m-%dT%H:%M:%SZ'))
    assert time.time() - last <= 8, v  # a round ends every 5 s at most
    ans = srv.post('/api/v1/gate', data=json.dumps({'datastore': 'ds-lab-02', 'disks_gb': [1],
                                                    'max_age_s': 9}).encode(),
                   headers={'Content-Type': 'application/json'}).json()
    assert ans['snapshot_age_s'] <= 8, ans
    assert 'stale_snapshot' not in [r['code'] for r in ans['reasons']], ans['reasons']


def task(vim, method, type_, moref):
    """Runs method on the object and waits for its task: 'success' or 'error'."""
    resp = vim.call('<%s><_this type="%s">%s</_this></%s>' % (method, type_, moref, method))
    return vim.wait_task(re.search(r'>(task-[^<]+)<', resp).group(1))


def test_power_off_a_vm(srv, vim, no_full_read):
    vm = next(v for v in vms(srv).values() if v['power_state'] == 'poweredOn')
    assert task(vim, 'PowerOffVM_Task', 'VirtualMachine', vm['moref']) == 'success'
    until(lambda: vms(srv)[vm['name']]['power_state'] == 'poweredOff', 'the VM off', srv)


def test_remove_a_snapshot(srv, vim, no_full_read):
    assert open_findings(srv, 'snapshots', 'vm-snap-old')
    vm = vms(srv)['vm-snap-old']
    assert vim.remove_all_snapshots(vm['moref']) == 'success'
    until(lambda: not open_findings(srv, 'snapshots', 'vm-snap-old'),
          'the snapshot finding resolved', srv)


def test_fill_a_datastore(srv, sim, no_full_read):
    assert not open_findings(srv, 'datastore-free-space', 'ds-free-ok')
    sim.control('datastore', name='ds-free-ok', free_pct=1)
    until(lambda: open_findings(srv, 'datastore-free-space', 'ds-free-ok'),
          'a free-space finding', srv)
    d = datastores(srv)['ds-free-ok']
    assert d['free_space'] == pytest.approx(d['capacity'] * 0.01, rel=0.01)


def test_remove_a_vm(srv, vim, no_full_read):
    assert open_findings(srv, 'snapshots', 'vm-snap-chain')
    vm = vms(srv)['vm-snap-chain']
    if vm['power_state'] == 'poweredOn':
        assert task(vim, 'PowerOffVM_Task', 'VirtualMachine', vm['moref']) == 'success'
    assert task(vim, 'Destroy_Task', 'VirtualMachine', vm['moref']) == 'success'
    until(lambda: 'vm-snap-chain' not in vms(srv), 'the VM gone', srv)
    until(lambda: not open_findings(srv, 'snapshots', 'vm-snap-chain'),
          'its finding resolved', srv)


def test_add_a_vm(srv, sim, no_full_read):
    """A VM created in vCenter (the control endpoint registers it as the simulator's own
    CreateVM_Task does) enters the inventory with its disks and its datastore's VM count, and
    its finding opens: four disks on an LSI Logic controller want PVSCSI."""
    ds = datastores(srv)['ds-lab-02']
    assert 'vm-added' not in vms(srv)
    sim.control('vm', name='vm-added', host='esx-san-1', datastore='ds-lab-02', disks=4, gib=40,
                controller='lsilogic', format='thin', guest='rhel8_64Guest')
    vm = until(lambda: vms(srv).get('vm-added'), 'the new VM', srv)
    assert vm['host'] == hosts(srv)['esx-san-1']['moref']
    # config.guestId as the VM was created with, read by moref in an incremental round
    guest = run_ok('query', '-c', srv.conf, '--format', 'json',
                   "SELECT guest_id FROM vsl_vms WHERE name = 'vm-added'").stdout
    assert json.loads(guest) == [{'guest_id': 'rhel8_64Guest'}]
    assert vm['power_state'] == 'poweredOn'
    assert [(d['datastore'], d['capacity_bytes'], d['format']) for d in vm['disks']] == \
        [(ds['moref'], 40 << 30, 'thin')] * 4
    until(lambda: datastores(srv)['ds-lab-02']['vm_count'] == ds['vm_count'] + 1,
          'the datastore counting it', srv)
    until(lambda: open_findings(srv, 'pvscsi-controller', 'vm-added'), 'its finding', srv)


def test_change_a_vmknic_mtu(srv, sim, no_full_read):
    # esx-iscsi-a: vmk1 at MTU 1500 on a vSwitch at 9000; jumbo frames end to end resolve it.
    assert open_findings(srv, 'iscsi-jumbo-frames', 'esx-iscsi-a')
    sim.control('host', name='esx-iscsi-a', vnic='vmk1', mtu=9000)
    until(lambda: not open_findings(srv, 'iscsi-jumbo-frames', 'esx-iscsi-a'),
          'the MTU finding resolved', srv)


def test_remove_a_host(srv, vim, no_full_read):
    # The one host without VMs (vCenter refuses to remove a host that has some).
    name = 'esx-san-noesxcli'
    assert open_findings(srv, '', name)
    assert task(vim, 'Destroy_Task', 'HostSystem', hosts(srv)[name]['moref']) == 'success'
    until(lambda: name not in hosts(srv), 'the host gone', srv)
    until(lambda: not open_findings(srv, '', name), 'its findings resolved', srv)


def test_the_log_says_each_full_read_and_is_quiet_between(srv):
    """After the changes above: one info line for the full read (objects, bytes), and none for
    the rounds that applied changes (those are summed once an hour; -v shows each)."""
    logs = srv.logs()
    full = re.findall(r'vcenter lab: read in full in [\d.]+ s: (\d+) objects, (\d+) bytes', logs)
    assert len(full) == 1, logs[-3000:]
    assert int(full[0][0]) > 0 and int(full[0][1]) > 0
    assert 'changed objects applied' not in logs, logs[-3000:]


@pytest.mark.parametrize('control', ['sessions', 'collector-version'])
def test_fallback_reads_everything_again(srv, sim, control):
    """A lost session, or a version the collector no longer knows, is a full read again, and
    then changes are followed again."""
    before, inventory = sim.stats(), (sorted(vms(srv)), sorted(hosts(srv)))
    last_full = srv.vcenter('lab')['last_full_read']
    time.sleep(1.1)  # last_full_read has second resolution
    sim.control(control)
    until(lambda: srv.vcenter('lab')['last_full_read'] != last_full, 'a full read', srv)
    until(lambda: srv.vcenter('lab')['mode'] == 'incremental', 'following again', srv)
    assert sim.stats()['retrieve_view'] > before['retrieve_view']
    assert (sorted(vms(srv)), sorted(hosts(srv))) == inventory
    if control == 'collector-version':
        assert 'InvalidCollectorVersion' in srv.logs()
    # and changes are followed again, by moref
    before = sim.stats()
    full = control == 'sessions'
    sim.control('datastore', name='ds-free-ok', free_pct=50 if full else 1)
    until(lambda: bool(open_findings(srv, 'datastore-free-space', 'ds-free-ok')) != full,
          'the datastore change', srv)
    assert sim.stats()['retrieve_view'] == before['retrieve_view']


def test_host_reads_on_their_own_interval(workspace):
    """What the property collector cannot follow (here an esxcli answer: a LUN's Round Robin
    IOPS limit set through esxcli changes no property) is read again per host every
    host_reads_every seconds, by moref and without a full read."""
    naa = 'naa.60060160a0b0000000000000000000a2'  # RR iops=1000 on esx-san-1: a warning
    with Sim('violations') as own:
        vc = vcenter(workspace, own.url, 'own', interval=3600, incremental='true',
                     host_reads_every=10)
        with serving(workspace, [vc]) as s:
            s.sim = own
            until(lambda: s.vcenter('own')['mode'] == 'incremental', 'the follower', s)
            assert open_findings(s, 'multipath-policy', naa)
            inventory = hosts(s)
            before, last_full = own.stats(), s.vcenter('own')['last_full_read']
            VimClient(own.url).esxcli(inventory['esx-san-1']['moref'], {
                'cmd': ['storage', 'nmp', 'psp', 'roundrobin', 'deviceconfig', 'set'],
                'args': {'device': naa, 'type': 'iops', 'iops': '1'}})
            until(lambda: not open_findings(s, 'multipath-policy', naa),
                  'the IOPS finding resolved', s, timeout=40)
            after = own.stats()
            assert after['retrieve_view'] == before['retrieve_view'], (before, after)
            assert after['retrieve_objects'] > before['retrieve_objects'], (before, after)
            assert s.vcenter('own')['last_full_read'] == last_full
            assert s.vcenter('own')['mode'] == 'incremental'
            assert 'reading %d hosts again (host_reads_every 10 s)' % len(inventory) \
                in s.logs()


def synth_post(base, path):
    import urllib.request
    urllib.request.urlopen(urllib.request.Request(base + path, data=b'', method='POST'),
                           timeout=10)


def synth_stats(base):
    import urllib.request
    with urllib.request.urlopen(base + '/synth/stats', timeout=10) as r:
        return json.loads(r.read().decode())


def test_synthetic_responder_follows_changes(workspace, new_workspace):
    """The synthetic responder (tests/sim/synth, the scale harness) has property filters and
    WaitForUpdatesEx too: with pages of 40 objects the first UpdateSet comes truncated, and
    after POST /synth/mutate?pct=10 the changed VMs and datastores reach the API by moref,
    without a full read, and agree with what a full read of the same estate stores."""
    synth = Responder(SYNTH, ['-vms', '300', '-stop-after-seconds', '300'], 'vcsim-synth')
    base = synth.url[:-len('/sdk')]
    try:
        vc = vcenter(workspace, synth.url, 'synth', interval=3600, incremental='true',
                     max_objects=40)
        with serving(workspace, [vc]) as s:
            until(lambda: s.vcenter('synth')['mode'] == 'incremental', 'the follower', s)
            power = {n: v['power_state'] for n, v in vms(s).items()}
            free = {n: d['free_space'] for n, d in datastores(s).items()}
            assert len(power) == 300
            before = synth_stats(base)
            synth_post(base, '/synth/mutate?pct=10')
            until(lambda: any(v['power_state'] != power[n] for n, v in vms(s).items()),
                  'the changed VMs', s)
            after = synth_stats(base)
            assert after['retrieve_view'] == before['retrieve_view'], (before, after)
            assert after['retrieve_objects'] > before['retrieve_objects'], (before, after)
            flipped = [n for n, v in vms(s).items() if v['power_state'] != power[n]]
            emptier = [n for n, d in datastores(s).items() if d['free_space'] < free[n]]
            assert 10 <= len(flipped) <= 60, flipped  # about 10 % of 300
            assert emptier
            # A full read of the same estate, by another vslint, stores the same.
            other = new_workspace()
            conf = other.write_config([vcenter(other, synth.url, 'synth', max_objects=40)])
            run_ok('collect', '-c', conf)
            inv = json.loads(run_ok('inventory', '-c', conf, '--format', 'json').stdout)
            full = inv['vcenters'][0]
            assert {v['name']: v['power_state'] for v in full['vms']} == \
                {n: v['power_state'] for n, v in vms(s).items()}
            assert {d['name']: d['free_space'] for d in full['datastores']} == \
                {n: d['free_space'] for n, d in datastores(s).items()}
    finally:
        synth.stop()


def test_rounds_are_summed_in_one_line_an_hour(sim, new_workspace, monkeypatch):
    """The hour's summary of the incremental rounds (rounds, those with changes, objects changed,
    bytes), here after 3 s (VSLINT_TEST_ROUND_SUMMARY_MS, a test build's hook): one line per
    period, not one per round."""
    monkeypatch.setenv('VSLINT_TEST_ROUND_SUMMARY_MS', '3000')
    ws = new_workspace()
    vc = vcenter(ws, sim.url, 'lab', interval=3600, incremental='true')
    with serving(ws, [vc]) as s:
        s.sim = sim
        until(lambda: s.vcenter('lab')['mode'] == 'incremental', 'the follower to start', s)
        sim.control('datastore', name='ds-free-ok', free_pct=33)
        pat = (r'vcenter lab: following changes: (\d+) rounds in the last \d+ min, (\d+) with '
               r'changes \((\d+) changed objects applied\), (\d+) bytes')
        line = until(lambda: [m for m in re.findall(pat, s.logs()) if int(m[1]) > 0],
                     'a summary with the change', s, timeout=30)
        rounds, changed, objects, nbytes = (int(x) for x in line[0])
        assert rounds >= changed >= 1 and objects >= 1 and nbytes > 0, line
