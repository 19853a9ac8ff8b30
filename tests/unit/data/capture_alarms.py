#!/usr/bin/env python3
"""Captures the SOAP answers test_alarms.c decodes, from a simulator running `violations`.

Usage: capture_alarms.py URL USER PASSWORD OUTDIR
Writes alarms.xml (GetAlarm, then RetrievePropertiesEx of every Alarm's info), folders.xml,
datacenters.xml and clusters.xml (the containers and clusters through a view, with the paths
vsphere/alarms.c asks for) and perf-counters.xml (PerformanceManager.perfCounter). Rerun it after changing the alarms of the
scenario or those paths, and commit the files.
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

PC = '<_this type="PropertyCollector">propertyCollector</_this>'


def paths(name):
    src = open(os.path.join(os.path.dirname(__file__), '..', '..', '..', 'vsphere',
                            'alarms.c')).read()
    body = re.search(r'vim_%s_paths\[\] = \{(.*?)\};' % name, src, re.S).group(1)
    return ''.join('<pathSet>%s</pathSet>' % p for p in re.findall(r'"([^"]+)"', body))


def main():
    url, user, password, out = sys.argv[1:5]
    opener = urllib.request.build_opener(
        urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))

    def call(body):
        req = urllib.request.Request(url, data=(ENV % body).encode(),
                                     headers={'Content-Type': 'text/xml; charset=utf-8',
                                              'SOAPAction': '"urn:vim25/6.5"'})
        return opener.open(req).read().decode()

    def save(name, text):
        with open(os.path.join(out, name), 'w') as f:
            f.write(text)
        print(name, len(text), 'bytes')

    call('<Login><_this type="SessionManager">SessionManager</_this><userName>%s</userName>'
         '<password>%s</password></Login>' % (user, password))
    os.makedirs(out, exist_ok=True)
    alarms = re.findall(r'<returnval type="Alarm">([^<]+)<', call(
        '<GetAlarm><_this type="AlarmManager">AlarmManager</_this></GetAlarm>'))
    sets = ''.join('<objectSet><obj type="Alarm">%s</obj><skip>false</skip></objectSet>' % a
                   for a in alarms)
    save('alarms.xml', call('<RetrievePropertiesEx>%s<specSet><propSet><type>Alarm</type>'
                            '<pathSet>info</pathSet></propSet>%s</specSet><options/>'
                            '</RetrievePropertiesEx>' % (PC, sets)))
    for vtype, name, file in (('Folder', 'folder', 'folders.xml'),
                              ('Datacenter', 'datacenter', 'datacenters.xml'),
                              ('ClusterComputeResource', 'cluster', 'clusters.xml')):
        view = re.search(r'<returnval type="ContainerView">([^<]+)<', call(
            '<CreateContainerView><_this type="ViewManager">ViewManager</_this>'
            '<container type="Folder">group-d1</container><type>%s</type>'
            '<recursive>true</recursive></CreateContainerView>' % vtype)).group(1)
        save(file, call('<RetrievePropertiesEx>%s<specSet><propSet><type>%s</type>%s</propSet>'
                        '<objectSet><obj type="ContainerView">%s</obj><skip>true</skip>'
                        '<selectSet xsi:type="TraversalSpec"><name>v</name><type>ContainerView'
                        '</type><path>view</path><skip>false</skip></selectSet></objectSet>'
                        '</specSet><options/></RetrievePropertiesEx>'
                        % (PC, vtype, paths(name), view)))
    save('perf-counters.xml', call(
        '<RetrievePropertiesEx>%s<specSet><propSet><type>PerformanceManager</type><pathSet>'
        'perfCounter</pathSet></propSet><objectSet><obj type="PerformanceManager">PerfMgr</obj>'
        '<skip>false</skip></objectSet></specSet><options/></RetrievePropertiesEx>' % PC))


if __name__ == '__main__':
    main()
