"""vslint against the synthetic responder (tests/sim/synth/, vcsim-synth), the scale harness
that generates an estate of any size from a seed instead of building it: at 300 VMs, paged
by 40 objects and gzip-compressed, `vslint collect` must store exactly the counts the
responder says it generated, `vslint check` must run on it, the same seed must give the same
answers, and the mutation hook (POST /synth/mutate) must change what a poll reads."""
import json
import os
import re
import subprocess
import urllib.error
import urllib.request

import pytest

from simlib import (PASSWORD, USER, VSLINT, Responder, Workspace, inventory_counts, run_ok,
                    sanitized, vcenter, vslint)

SYNTH = os.environ.get('VCSIM_SYNTH', 'build/tests/sim/vcsim-synth')
VMS = 300


class Synth(Responder):
    """A running vcsim-synth with the counts it says it generated."""

    def __init__(self, *extra):
        super().__init__(SYNTH, ['-vms', str(VMS), '-page-size', '40',
                                 '-stop-after-seconds', '300'] + list(extra), 'vcsim-synth')
        self.counts = self.truth()['counts']

    def base(self):
        return self.url[:-len('/sdk')]


@pytest.fixture(scope='module')
def synth():
    with Synth() as s:
        yield s


@pytest.fixture(scope='module')
def polled(synth):
    """The estate collected once, and its stored inventory."""
    ws = Workspace()
    conf = ws.write_config([vcenter(ws, synth.url, 'synth', max_objects=100)])
    res = vslint('collect', '-c', conf, '-v')
    inv = json.loads(run_ok('inventory', '-c', conf, '--format', 'json').stdout)['vcenters'][0]
    yield ws, conf, res, inv
    ws.cleanup()


def test_collect_succeeds(polled):
    res = polled[2]
    assert res.returncode == 0, res.stderr[-1000:]
    assert ' %d vms' % VMS in res.stdout, res.stdout


def test_stores_the_generated_counts(synth, polled):
    assert inventory_counts(polled[3]) == synth.counts


def test_every_read_answered(polled):
    """No gap: options, iSCSI bindings, both esxcli commands and the alarms were all read."""
    inv = polled[3]
    assert inv['gaps'] == []
    assert all(h['options'].get('VMFS3.EnableBlockDelete') in ('0', '1') for h in inv['hosts'])
    assert len(inv['alarms']) == 4


def test_answers_were_paged_and_compressed(polled):
    m = re.search(r'(\d+) requests, (\d+) bytes on the wire, (\d+) bytes of XML', polled[2].stderr)
    assert m, polled[2].stderr[-1000:]
    # 300 VMs in pages of 40 are 8 requests alone.
    assert int(m.group(1)) > 30
    assert int(m.group(2)) * 4 < int(m.group(3))


def test_check_runs(polled):
    ws, conf = polled[0], polled[1]
    res = run_ok('check', '-c', conf, '--offline', '--format', 'json', '--fail-on', 'never')
    findings = json.loads(res.stdout)['findings']
    checks = {f['check'] for f in findings}
    # The generator plants a few of these at any size (Fixed LUNs, snapshot chains, LSI
    # controllers with many disks).
    assert {'multipath-policy', 'snapshots', 'pvscsi-controller'} <= checks, checks


def soap(url, body, cookie=None):
    env = ('<?xml version="1.0" encoding="UTF-8"?><soapenv:Envelope '
           'xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/" '
           'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns="urn:vim25">'
           '<soapenv:Body>%s</soapenv:Body></soapenv:Envelope>' % body)
    req = urllib.request.Request(url, data=env.encode(), headers={
        'Content-Type': 'text/xml; charset=utf-8', 'SOAPAction': '"urn:vim25/7.0.3.0"'})
    if cookie:
        req.add_header('Cookie', cookie)
    with urllib.request.urlopen(req, timeout=30) as r:
        return r.read().decode(), r.headers.get('Set-Cookie')


def first_vm_page(url):
    _, cookie = soap(url, '<Login><_this type="SessionManager">SessionManager</_this><userName>'
                     '%s</userName><password>%s</password></Login>' % (USER, PASSWORD))
    cookie = cookie.split(';')[0]
    view = re.search(r'>([^<]+)</returnval>', soap(
        url, '<CreateContainerView><_this type="ViewManager">ViewManager</_this><container '
        'type="Folder">group-d1</container><type>VirtualMachine</type><recursive>true'
        '</recursive></CreateContainerView>', cookie)[0]).group(1)
    page = soap(url, '<RetrievePropertiesEx><_this type="PropertyCollector">propertyCollector'
                '</_this><specSet><propSet><type>VirtualMachine</type><pathSet>config.hardware'
                '.device</pathSet><pathSet>snapshot</pathSet></propSet><objectSet><obj type='
                '"ContainerView">%s</obj><skip>true</skip><selectSet xsi:type="TraversalSpec">'
                '<type>ContainerView</type><path>view</path></selectSet></objectSet></specSet>'
                '<options><maxObjects>25</maxObjects></options></RetrievePropertiesEx>' % view,
                cookie)[0]
    # Snapshot times are relative to the responder's start: compare the rest.
    return re.sub(r'<createTime>[^<]*</createTime>', '', re.sub(r'<token>\d+</token>', '', page))


def test_same_seed_same_answers(synth):
    other = Synth()
    different = Synth('-seed', '2')
    try:
        mine = first_vm_page(synth.url)
        assert mine.count('<objects>') == 25
        assert first_vm_page(other.url) == mine
        assert first_vm_page(different.url) != mine
    finally:
        other.stop()
        different.stop()


def test_unknown_property_is_a_fault(synth):
    """As on vCenter, a property the type does not have fails the whole call."""
    _, cookie = soap(synth.url, '<Login><_this type="SessionManager">SessionManager</_this>'
                     '<userName>%s</userName><password>%s</password></Login>' % (USER, PASSWORD))
    with pytest.raises(urllib.error.HTTPError) as e:
        soap(synth.url, '<RetrievePropertiesEx><_this type="PropertyCollector">propertyCollector'
             '</_this><specSet><propSet><type>Datastore</type><pathSet>info.vmfs.extent</pathSet>'
             '</propSet><objectSet><obj type="Datastore">datastore-1</obj></objectSet></specSet>'
             '<options/></RetrievePropertiesEx>', cookie.split(';')[0])
    assert 'InvalidProperty' in e.value.read().decode()


def test_wrong_password_rejected(synth):
    ws = Workspace()
    try:
        conf = ws.write_config([dict(name='synth', url=synth.url, user=USER,
                                     password_file=ws.password_file('not-the-password'))])
        res = vslint('collect', '-c', conf)
        assert res.returncode != 0
        assert 'login rejected' in res.stderr
    finally:
        ws.cleanup()


def test_mutation_hook_changes_what_a_poll_reads():
    """POST /synth/mutate?pct=N changes about N % of VMs (power state) and datastores (free
    space): the hook the incremental-polling benchmark will use."""
    s = Synth()
    ws = Workspace()
    try:
        conf = ws.write_config([vcenter(ws, s.url, 'synth')])
        run_ok('collect', '-c', conf)
        before = json.loads(run_ok('inventory', '-c', conf, '--format', 'json').stdout)
        req = urllib.request.Request(s.base() + '/synth/mutate?pct=10', data=b'', method='POST')
        assert urllib.request.urlopen(req, timeout=10).status == 204
        run_ok('collect', '-c', conf)
        after = json.loads(run_ok('inventory', '-c', conf, '--format', 'json').stdout)
        power = {v['moref']: v['power_state'] for v in before['vcenters'][0]['vms']}
        flipped = sum(v['power_state'] != power[v['moref']] for v in after['vcenters'][0]['vms'])
        assert 10 <= flipped <= 60, flipped  # about 10 % of 300
    finally:
        ws.cleanup()
        s.stop()


def test_pages_larger_than_memory_stream():
    """A page of hosts is parsed as it arrives, also when it is prefetched on the second
    connection: 120 hosts with 512 LUN paths each, in pages of 60 (about 58 MB of XML a
    page), are all stored, and the collect's peak RSS stays well under one page (it buffered
    the prefetched page whole: 83 MB here, 491 MB at 100,000 VMs)."""
    s = Synth('-vms', '1200', '-vms-per-host', '10', '-page-size', '0', '-gzip=false')
    ws = Workspace()
    try:
        conf = ws.write_config([vcenter(ws, s.url, 'synth', max_objects=60)])
        # GNU time measures vslint alone. The ru_maxrss of a child that pytest waits for is
        # not vslint's: Python starts it with vfork, and at exec Linux carries the parent's
        # peak RSS over into the new program's, so it read max(pytest's peak, vslint's) and
        # failed once other test files had grown pytest past the bound.
        res = subprocess.run(['/usr/bin/time', '-f', '%M', VSLINT, 'collect', '-c', conf],
                             capture_output=True, text=True, timeout=600)
        assert res.returncode == 0, res.stderr[-1000:]
        peak_kib = int(res.stderr.strip().splitlines()[-1])
        if not sanitized():
            assert peak_kib < 45 * 1024, peak_kib
        # Parsed after the measure: this inventory is what makes pytest itself big.
        inv = json.loads(run_ok('inventory', '-c', conf, '--format', 'json').stdout)
        assert inventory_counts(inv['vcenters'][0]) == s.counts
        assert s.counts['host'] == 120 and s.counts['lun_path'] > 60000
    finally:
        ws.cleanup()
        s.stop()
