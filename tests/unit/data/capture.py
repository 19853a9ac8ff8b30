#!/usr/bin/env python3
"""Captures the raw SOAP responses the unit tests decode, from a running simulator.

Usage: capture.py URL USER PASSWORD OUTDIR [SCENARIO]
Writes one file per object type (RetrievePropertiesEx answers, all pages concatenated as
separate files NAME-pageN.xml) with exactly the property paths vsphere/decode.c asks for,
plus one QueryOptions, QueryBoundVnics and two esxcli ExecuteSoap answers (storage nmp device
list, storage nmp satp rule list). SCENARIO is the simulator's: "violations" (the default)
writes datastore.xml, ...; "edges" writes edges-datastore.xml, edges-host.xml, edges-vm.xml
and the claim rules of esx-edge-01 (edges-esxcli-satp-rules.xml). Rerun it after changing
the paths in decode.c or the simulator scenario, and commit the files.
"""
import http.cookiejar
import os
import re
import sys
import urllib.request

ENV = ('<?xml version="1.0" encoding="UTF-8"?><soapenv:Envelope '
       'xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/" '
       'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns="urn:vim25">'
       '<soapenv:Body>%s</soapenv:Body></soapenv:Envelope>')

PATHS = {}


def load_paths():
    """Reads the path lists from decode.c so the captures match what vslint asks for."""
    src = open(os.path.join(os.path.dirname(__file__), '..', '..', '..', 'vsphere',
                            'decode.c')).read()
    for name, body in re.findall(r'vim_(\w+)_paths\[\] = \{(.*?)\};', src, re.S):
        PATHS[name] = re.findall(r'"([^"]+)"', body)


def main():
    url, user, password, out = sys.argv[1:5]
    scenario = sys.argv[5] if len(sys.argv) > 5 else 'violations'
    prefix = '' if scenario == 'violations' else scenario + '-'
    load_paths()
    jar = http.cookiejar.CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))

    def call(body):
        req = urllib.request.Request(url, data=(ENV % body).encode(),
                                     headers={'Content-Type': 'text/xml; charset=utf-8',
                                              'SOAPAction': '"urn:vim25/6.5"'})
        try:
            return opener.open(req).read().decode()
        except urllib.error.HTTPError as e:
            return e.read().decode()

    call('<Login><_this type="SessionManager">SessionManager</_this><userName>%s</userName>'
         '<password>%s</password></Login>' % (user, password))
    os.makedirs(out, exist_ok=True)
    types = {'storage_pod': 'StoragePod', 'datastore': 'Datastore',
             'dvswitch': 'DistributedVirtualSwitch', 'host': 'HostSystem',
             'vm': 'VirtualMachine'}
    if prefix:
        types = {k: v for k, v in types.items() if k in ('datastore', 'host', 'vm')}
    for key, vtype in types.items():
        view = re.search(r'<returnval type="ContainerView">([^<]+)<', call(
            '<CreateContainerView><_this type="ViewManager">ViewManager</_this>'
            '<container type="Folder">group-d1</container><type>%s</type>'
            '<recursive>true</recursive></CreateContainerView>' % vtype)).group(1)
        paths = ''.join('<pathSet>%s</pathSet>' % p for p in PATHS[key])
        resp = call('<RetrievePropertiesEx><_this type="PropertyCollector">propertyCollector'
                    '</_this><specSet><propSet><type>%s</type>%s</propSet><objectSet>'
                    '<obj type="ContainerView">%s</obj><skip>true</skip>'
                    '<selectSet xsi:type="TraversalSpec"><name>v</name><type>ContainerView'
                    '</type><path>view</path><skip>false</skip></selectSet></objectSet>'
                    '</specSet><options><maxObjects>1000</maxObjects></options>'
                    '</RetrievePropertiesEx>' % (vtype, paths, view))
        with open(os.path.join(out, prefix + key + '.xml'), 'w') as f:
            f.write(resp)
        print(key, len(resp), 'bytes')
        if key == 'host':
            hosts = dict((n, m) for m, n in re.findall(
                r'<obj type="HostSystem">([^<]+)</obj><propSet><name>name</name><val[^>]*>'
                r'([^<]+)<', resp))
    if prefix:
        capture_rules(call, out, prefix, hosts['esx-edge-01'])
        return
    # Per-host follow-ups on esx-iscsi-a: its EnableBlockDelete option and bound vmknics.
    hostxml = open(os.path.join(out, 'host.xml')).read()
    block = hostxml[hostxml.index('>%s<' % hosts['esx-iscsi-a']):]
    om = re.search(r'advancedOption</name><val[^>]*>([^<]+)<', block).group(1)
    im = re.search(r'iscsiManager</name><val[^>]*>([^<]+)<', block).group(1)
    with open(os.path.join(out, 'query-options.xml'), 'w') as f:
        f.write(call('<QueryOptions><_this type="OptionManager">%s</_this><name>'
                     'VMFS3.EnableBlockDelete</name></QueryOptions>' % om))
    with open(os.path.join(out, 'bound-vnics.xml'), 'w') as f:
        f.write(call('<QueryBoundVnics><_this type="IscsiManager">%s</_this><iScsiHbaName>'
                     'vmhba64</iScsiHbaName></QueryBoundVnics>' % im))
    # esxcli storage nmp device list on the host with the planted multipath policies.
    mme = re.search(r'<returnval type="ReflectManagedMethodExecuter">([^<]+)<', call(
        '<RetrieveManagedMethodExecuter><_this type="HostSystem">%s</_this>'
        '</RetrieveManagedMethodExecuter>' % hosts['esx-san-1'])).group(1)
    import html
    # The same host's SATP claim rules (its user rules planted for satp-claim-rule).
    for moid, method, name in (
            ('ha-cli-handler-storage-nmp-device', 'vim.EsxCLI.storage.nmp.device.list',
             'esxcli-nmp.xml'),
            ('ha-cli-handler-storage-nmp-satp-rule', 'vim.EsxCLI.storage.nmp.satp.rule.list',
             'esxcli-satp-rules.xml')):
        resp = call('<ExecuteSoap><_this type="ReflectManagedMethodExecuter">%s</_this>'
                    '<moid>%s</moid><version>urn:vim25/5.0</version>'
                    '<method>%s</method></ExecuteSoap>' % (mme, moid, method))
        inner = re.search(r'<response>(.*)</response>', resp, re.S).group(1)
        with open(os.path.join(out, name), 'w') as f:
            f.write(html.unescape(inner))
        print(name, len(inner), 'bytes')


def capture_rules(call, out, prefix, host):
    """The esxcli claim rules of one host, unescaped."""
    import html
    mme = re.search(r'<returnval type="ReflectManagedMethodExecuter">([^<]+)<', call(
        '<RetrieveManagedMethodExecuter><_this type="HostSystem">%s</_this>'
        '</RetrieveManagedMethodExecuter>' % host)).group(1)
    resp = call('<ExecuteSoap><_this type="ReflectManagedMethodExecuter">%s</_this>'
                '<moid>ha-cli-handler-storage-nmp-satp-rule</moid><version>urn:vim25/5.0'
                '</version><method>vim.EsxCLI.storage.nmp.satp.rule.list</method></ExecuteSoap>'
                % mme)
    inner = re.search(r'<response>(.*)</response>', resp, re.S).group(1)
    with open(os.path.join(out, prefix + 'esxcli-satp-rules.xml'), 'w') as f:
        f.write(html.unescape(inner))


if __name__ == '__main__':
    main()
