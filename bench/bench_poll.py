#!/usr/bin/env python3
"""Poll benchmark: vslint's full poll (fetch, parse, store) against the floor, a plain HTTP
client that sends the same SOAP requests and only downloads the answers.

Usage: bench/bench_poll.py [--vms 20000] [--runs 3] [--build build]
Prints one table: floor and vslint wall time (median of runs), the ratio, bytes on the wire,
requests, vslint's peak RSS, and the time of `vslint check --offline` (all checks + history)
over the same snapshot. Nothing is asserted: these are figures to compare across changes.
"""
import argparse
import http.cookiejar
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ENV = ('<?xml version="1.0" encoding="UTF-8"?><soapenv:Envelope '
       'xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/" '
       'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns="urn:vim25">'
       '<soapenv:Body>%s</soapenv:Body></soapenv:Envelope>')


def paths():
    src = open(os.path.join(ROOT, 'vsphere', 'decode.c')).read()
    return {n: re.findall(r'"([^"]+)"', b)
            for n, b in re.findall(r'vim_(\w+)_paths\[\] = \{(.*?)\};', src, re.S)}


class Floor:
    """The same requests vslint's collector makes, answers read and thrown away."""

    def __init__(self, url):
        self.url = url
        self.opener = urllib.request.build_opener(
            urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
        self.bytes = 0
        self.requests = 0

    def call(self, body, keep_all=False):
        req = urllib.request.Request(self.url, data=(ENV % body).encode(), headers={
            'Content-Type': 'text/xml; charset=utf-8', 'SOAPAction': '"urn:vim25/6.5"'})
        parts = []
        head = b''
        tail = b''
        try:
            r = self.opener.open(req)
        except urllib.error.HTTPError as e:  # SOAP faults come with HTTP 500
            r = e
        with r:
            while True:
                chunk = r.read(1 << 16)
                if not chunk:
                    break
                self.bytes += len(chunk)
                if keep_all:
                    parts.append(chunk)
                if len(head) < 4096:
                    head += chunk[:4096]
                tail = chunk[-4096:]
        self.requests += 1
        # The token may come before or after the objects: keep both ends.
        return (b''.join(parts) if keep_all else head + tail).decode('utf-8', 'replace')

    def run(self):
        p = paths()
        self.call('<Login><_this type="SessionManager">SessionManager</_this><userName>vslint'
                  '</userName><password>vslint-secret</password></Login>')
        hosts = []
        for key, vtype in (('storage_pod', 'StoragePod'), ('datastore', 'Datastore'),
                           ('dvswitch', 'DistributedVirtualSwitch'), ('host', 'HostSystem'),
                           ('vm', 'VirtualMachine')):
            v = re.search(r'>([^<]+)</returnval>', self.call(
                '<CreateContainerView><_this type="ViewManager">ViewManager</_this>'
                '<container type="Folder">group-d1</container><type>%s</type>'
                '<recursive>true</recursive></CreateContainerView>' % vtype)).group(1)
            body = ('<RetrievePropertiesEx><_this type="PropertyCollector">propertyCollector'
                    '</_this><specSet><propSet><type>%s</type>%s</propSet><objectSet><obj '
                    'type="ContainerView">%s</obj><skip>true</skip><selectSet xsi:type='
                    '"TraversalSpec"><name>view</name><type>ContainerView</type><path>view'
                    '</path><skip>false</skip></selectSet></objectSet></specSet><options>'
                    '<maxObjects>500</maxObjects></options></RetrievePropertiesEx>' %
                    (vtype, ''.join('<pathSet>%s</pathSet>' % x for x in p[key]), v))
            while True:
                tail = self.call(body, keep_all=(vtype == 'HostSystem'))
                if vtype == 'HostSystem':
                    hosts += tail.split('<objects>')[1:]
                m = re.search(r'<token>([^<]+)</token>', tail)
                if not m:
                    break
                body = ('<ContinueRetrievePropertiesEx><_this type="PropertyCollector">'
                        'propertyCollector</_this><token>%s</token>'
                        '</ContinueRetrievePropertiesEx>' % m.group(1))
            self.call('<DestroyView><_this type="ContainerView">%s</_this></DestroyView>' % v)
        # The per-host reads vslint makes: one advanced option, iSCSI bindings, esxcli.
        for h in hosts:
            moref = re.search(r'<obj type="HostSystem">([^<]+)<', h).group(1)
            om = re.search(r'advancedOption</name><val[^>]*>([^<]+)<', h)
            if om:
                self.call('<QueryOptions><_this type="OptionManager">%s</_this><name>'
                          'VMFS3.EnableBlockDelete</name></QueryOptions>' % om.group(1))
            im = re.search(r'iscsiManager</name><val[^>]*>([^<]+)<', h)
            for hba in re.findall(r'type="HostInternetScsiHba"><key>[^<]*</key><device>([^<]+)<',
                                  h):
                self.call('<QueryBoundVnics><_this type="IscsiManager">%s</_this><iScsiHbaName>'
                          '%s</iScsiHbaName></QueryBoundVnics>' % (im.group(1), hba))
            if '<localDisk>false</localDisk>' in h:
                mme = re.search(r'>([^<]+)</returnval>', self.call(
                    '<RetrieveManagedMethodExecuter><_this type="HostSystem">%s</_this>'
                    '</RetrieveManagedMethodExecuter>' % moref))
                for moid, method in (('ha-cli-handler-storage-nmp-device',
                                      'vim.EsxCLI.storage.nmp.device.list'),
                                     ('ha-cli-handler-storage-nmp-satp-rule',
                                      'vim.EsxCLI.storage.nmp.satp.rule.list')):
                    if mme:
                        self.call('<ExecuteSoap><_this type="ReflectManagedMethodExecuter">%s'
                                  '</_this><moid>%s</moid><version>urn:vim25/5.0</version>'
                                  '<method>%s</method></ExecuteSoap>' % (mme.group(1), moid,
                                                                          method))
        return self


def median_time(fn, runs):
    times = []
    for _ in range(runs):
        t0 = time.monotonic()
        fn()
        times.append(time.monotonic() - t0)
    return statistics.median(times), times


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--vms', type=int, default=20000)
    ap.add_argument('--runs', type=int, default=3)
    ap.add_argument('--build', default=os.path.join(ROOT, 'build'))
    a = ap.parse_args()
    vslint = os.path.join(a.build, 'vslint')
    sim_bin = os.path.join(a.build, 'tests', 'sim', 'vcsim-vslint')
    work = tempfile.mkdtemp(prefix='vslint-bench-')
    t0 = time.monotonic()
    sim = subprocess.Popen([sim_bin, '-scenario', 'scale:%d' % a.vms, '-page-size', '0'],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    url = sim.stdout.readline().strip()
    print('simulator scale:%d ready in %.1f s at %s' % (a.vms, time.monotonic() - t0, url))
    try:
        with open(os.path.join(work, 'pw'), 'w') as f:
            f.write('vslint-secret\n')
        conf = os.path.join(work, 'vslint.conf')
        with open(conf, 'w') as f:
            f.write('[database]\npath = %s/v.db\n[vcenter bench]\nurl = %s\nuser = vslint\n'
                    'password_file = %s/pw\nmax_objects = 500\ntimeout = 600\n' % (work, url, work))
        floor = [None]

        def run_floor():
            floor[0] = Floor(url).run()
        ft, fts = median_time(run_floor, a.runs)

        rss = []

        def run_vslint():
            r = subprocess.run(['/usr/bin/time', '-f', '%M', vslint, 'collect', '-c', conf],
                               capture_output=True, text=True)
            if r.returncode != 0:
                sys.exit('vslint collect failed: ' + r.stderr)
            rss.append(int(r.stderr.strip().splitlines()[-1]))
        vt, vts = median_time(run_vslint, a.runs)

        def run_check():
            subprocess.run([vslint, 'check', '-c', conf, '--offline', '--fail-on', 'never',
                            '--format', 'json', '-o', os.devnull], check=True)
        ct, _ = median_time(run_check, a.runs)

        print()
        print('%-44s %s' % ('estate', '%d VMs' % a.vms))
        print('%-44s %.2f s  (runs: %s)' % ('floor: plain client, same requests',
                                            ft, ', '.join('%.2f' % x for x in fts)))
        print('%-44s %.1f MB in %d requests' % ('  bytes downloaded', floor[0].bytes / 1e6,
                                                floor[0].requests))
        print('%-44s %.2f s  (runs: %s)' % ('vslint collect (fetch, parse, store)',
                                            vt, ', '.join('%.2f' % x for x in vts)))
        print('%-44s %.2fx' % ('  ratio to the floor (target <= 1.25x)', vt / ft))
        print('%-44s %.1f MB  (target < 64 MB)' % ('  vslint peak RSS', max(rss) / 1024))
        print('%-44s %.2f s' % ('vslint check --offline (load, all checks, record)', ct))
    finally:
        sim.terminate()
        sim.wait()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == '__main__':
    main()
