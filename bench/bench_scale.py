#!/usr/bin/env python3
"""Scale benchmark: vslint at 5,000, 20,000 and 100,000 VMs against the synthetic responder
(tests/sim/synth/, vcsim-synth), with, side by side for each size:

- the wire floor: the requests vslint's poll sends, sent by curl one after another, answers
  discarded; the floor is curl's own transfer time (%{time_total}), summed;
- `vslint collect` (fetch, parse, store): wall time and peak RSS (/usr/bin/time);
- a govmomi client (bench/govmomi/, Debian's packaged govmomi) reading the same properties in
  the same pages, and making the same per-host and alarm reads: wall time and peak RSS;
- all checks, two figures side by side, from `vslint check --offline -v` (whose debug lines
  say what each step cost): the checks' own run (the engine running every check over the
  loaded estate, no I/O), and the whole command (load the snapshot, run every check, record
  the findings' history, read them back and write the JSON report), with the load and the
  history write apart; wall and CPU (user + sys) time, CPU being steadier on a busy machine
  (--checks-only measures nothing else, after one untimed collect);
- a steady-state incremental poll after 1 % of objects changed (the responder's POST
  /synth/mutate), against a full poll: time and bytes of each as vslint counts them
  (`incremental()`; --no-incremental skips it, --incremental-only measures nothing else);
- the HTTP API under wrk: requests/s, p50 and p99 of /api/v1/summary and a filtered findings
  page, with the daemon idle and while polls write back to back.

Nothing is asserted: the figures go to docs/performance.md. Run by hand (bench/run.sh), not in
the test suite. Usage:
  bench/bench_scale.py [--sizes 5000,20000,100000] [--runs 3] [--gzip] [--build build]
                       [--checks-only] [--site-rules]

--site-rules measures nothing else, after one untimed collect: `vslint check --offline -v`
with and without 20 site rules (dist/rules/'s four, five times over with their own ids and
parameters), the site rules' own step as its debug line times it, and `vslint export`; then
the provisioning gate's p50 (`POST /api/v1/gate` to `vslint serve`, 20 requests after its first
poll) without and with the 20 rules. bench_gate_site_rules(bins, conf, n, work) runs that part
alone on a database already collected.
"""
import argparse
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, 'tests', 'integration'))
from apilib import free_port  # noqa: E402  (the integration tests' helper)
ENV = ('<?xml version="1.0" encoding="UTF-8"?><soapenv:Envelope '
       'xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/" '
       'xmlns:xsd="http://www.w3.org/2001/XMLSchema" '
       'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns="urn:vim25">'
       '<soapenv:Body>%s</soapenv:Body></soapenv:Envelope>')
USER, PASSWORD = 'vslint', 'vslint-secret'
MAX_OBJECTS = 500
TOKEN = 'bench-token-0123456789abcdef'
FINDINGS_PAGE = '/api/v1/findings?severity=warning&check=multipath-policy&limit=50'


def log(*a):
    print(*a, file=sys.stderr, flush=True)


# ---- what vslint reads, from its sources ------------------------------------------------------

def vslint_reads():
    """The poll's reads, in order (vsphere/collect.c `reads[]`) with the property paths of each
    (vsphere/decode.c, vsphere/alarms.c), and the host advanced option it queries."""
    src = (open(os.path.join(ROOT, 'vsphere', 'decode.c')).read() +
           open(os.path.join(ROOT, 'vsphere', 'alarms.c')).read())
    arrays = {n: re.findall(r'"([^"]+)"', b) for n, b in
              re.findall(r'const char \*const (vim_\w+_paths)\[\] = \{(.*?)\};', src, re.S)}
    col = open(os.path.join(ROOT, 'vsphere', 'collect.c')).read()
    table = re.search(r'static const struct type_read reads\[\] = \{(.*?)\n\};', col, re.S).group(1)
    reads = [{'type': t, 'paths': arrays[a]}
             for t, a in re.findall(r'\{"(\w+)", (vim_\w+_paths), ', table)]
    option = re.search(r'host_option_names\[\] = \{"([^"]+)"', col).group(1)
    esxcli = re.findall(r'\{"storage [^"]+", "([^"]+)",\s*"([^"]+)"', col)
    return reads, option, esxcli


def retrieve_body(vtype, paths, view):
    return ('<RetrievePropertiesEx><_this type="PropertyCollector">propertyCollector</_this>'
            '<specSet><propSet><type>%s</type>%s</propSet><objectSet><obj type="ContainerView">'
            '%s</obj><skip>true</skip><selectSet xsi:type="TraversalSpec"><name>view</name>'
            '<type>ContainerView</type><path>view</path><skip>false</skip></selectSet>'
            '</objectSet></specSet><options><maxObjects>%d</maxObjects></options>'
            '</RetrievePropertiesEx>' % (vtype, ''.join('<pathSet>%s</pathSet>' % p for p in paths),
                                          view, MAX_OBJECTS))


def objects_body(vtype, morefs, paths):
    return ('<RetrievePropertiesEx><_this type="PropertyCollector">propertyCollector</_this>'
            '<specSet><propSet><type>%s</type>%s</propSet>%s</specSet><options><maxObjects>%d'
            '</maxObjects></options></RetrievePropertiesEx>' % (
                vtype, ''.join('<pathSet>%s</pathSet>' % p for p in paths),
                ''.join('<objectSet><obj type="%s">%s</obj><skip>false</skip></objectSet>' %
                        (vtype, m) for m in morefs), MAX_OBJECTS))


def continue_body(token):
    return ('<ContinueRetrievePropertiesEx><_this type="PropertyCollector">propertyCollector'
            '</_this><token>%s</token></ContinueRetrievePropertiesEx>' % token)


def view_body(vtype):
    return ('<CreateContainerView><_this type="ViewManager">ViewManager</_this><container '
            'type="Folder">group-d1</container><type>%s</type><recursive>true</recursive>'
            '</CreateContainerView>' % vtype)


# ---- discovery (not timed): the morefs the per-host and alarm requests name ---------------------

class Soap:
    """A plain client for discovery: streams answers, keeps what the caller asks for."""

    def __init__(self, url):
        self.url = url
        self.cookie = None

    def call(self, body, on_chunk=None):
        req = urllib.request.Request(self.url, data=(ENV % body).encode(), headers={
            'Content-Type': 'text/xml; charset=utf-8', 'SOAPAction': '"urn:vim25/7.0.3.0"'})
        if self.cookie:
            req.add_header('Cookie', self.cookie)
        try:
            r = urllib.request.urlopen(req, timeout=3600)
        except urllib.error.HTTPError as e:
            raise RuntimeError('SOAP fault: %s' % e.read()[:1000])
        with r:
            if r.headers.get('Set-Cookie'):
                self.cookie = r.headers['Set-Cookie'].split(';')[0]
            if on_chunk is None:
                return r.read().decode()
            while True:
                chunk = r.read(1 << 20)
                if not chunk:
                    return ''
                on_chunk(chunk.decode('utf-8', 'surrogateescape'))

    def login(self):
        self.call('<Login><_this type="SessionManager">SessionManager</_this><userName>%s'
                  '</userName><password>%s</password></Login>' % (USER, PASSWORD))


def discover(url):
    """Hosts (moref, option manager, iSCSI manager, iSCSI HBAs, whether it has SAN LUNs, its
    managed method executer) and alarms, read in a stream with constant memory."""
    s = Soap(url)
    s.login()
    view = re.search(r'>([^<]+)</returnval>', s.call(view_body('HostSystem'))).group(1)
    hosts = []
    buf = ['']

    def on_chunk(text):
        buf[0] += text
        parts = buf[0].split('<objects>')
        for obj in parts[1:-1]:
            hosts.append(host_facts(obj))
        buf[0] = '<objects>' + parts[-1] if len(parts) > 1 else parts[0]

    body = retrieve_body('HostSystem', ['configManager.advancedOption',
                                        'configManager.iscsiManager',
                                        'config.storageDevice.hostBusAdapter',
                                        'config.storageDevice.scsiLun'], view)
    while True:
        token = [None]
        buf[0] = ''

        def chunk_and_token(text, token=token):
            if token[0] is None:
                m = re.search(r'<token>([^<]+)</token>', buf[0][:4096] + text[:4096])
                if m:
                    token[0] = m.group(1)
            on_chunk(text)
        s.call(body, chunk_and_token)
        last = buf[0].split('</returnval>')[0]
        if '<objects>' in last:
            hosts.append(host_facts(last))
        if not token[0]:
            break
        body = continue_body(token[0])
    for h in hosts:
        if h['san']:
            h['mme'] = re.search(r'>([^<]+)</returnval>', s.call(
                '<RetrieveManagedMethodExecuter><_this type="HostSystem">%s</_this>'
                '</RetrieveManagedMethodExecuter>' % h['moref'])).group(1)
    alarms = re.findall(r'<returnval type="Alarm">([^<]+)<', s.call(
        '<GetAlarm><_this type="AlarmManager">AlarmManager</_this></GetAlarm>'))
    return hosts, alarms


def host_facts(obj):
    def ref(name):
        m = re.search(r'<name>%s</name><val[^>]*>([^<]+)<' % re.escape(name), obj)
        return m.group(1) if m else None
    return {
        'moref': re.search(r'<obj type="HostSystem">([^<]+)<', obj).group(1),
        'options': ref('configManager.advancedOption'),
        'iscsi': ref('configManager.iscsiManager'),
        'hbas': re.findall(r'type="HostInternetScsiHba"><key>[^<]*</key><device>([^<]+)<', obj),
        'san': '<localDisk>false</localDisk>' in obj,
    }


# ---- the floor: the same requests, by curl --------------------------------------------------------

def cfg_quote(s):
    return '"%s"' % s.replace('\\', '\\\\').replace('"', '\\"')


class Floor:
    """vslint's requests sent by curl; `total` sums curl's %{time_total}."""

    def __init__(self, url, workdir, gzip, capture=None):
        """capture: a directory to keep every answer in (decompressed, one file each, in the
        order sent), listed one a line in capture/manifest: what the expat anchor parses."""
        self.url = url
        self.capture = capture
        self.captured = []
        self.jar = os.path.join(workdir, 'floor-cookies')
        self.workdir = workdir
        self.gzip = gzip
        self.total = 0.0
        self.requests = 0
        self.bytes = 0

    def common(self):
        a = ['-s', '-b', self.jar, '-c', self.jar, '-H', 'Content-Type: text/xml; charset=utf-8',
             '-H', 'SOAPAction: "urn:vim25/7.0.3.0"', '-H', 'Expect:']
        return a + (['--compressed'] if self.gzip else [])

    def keep_as(self):
        """The file the next answer is kept in, or None when nothing is captured."""
        if self.capture is None:
            return None
        path = os.path.join(self.capture, '%05d.xml' % len(self.captured))
        self.captured.append(path)
        return path

    def one(self, body, keep=4096):
        """One request; returns the first `keep` bytes of the answer (a page's token comes
        before its objects), reading and dropping the rest (or keeping it, see capture)."""
        kept = self.keep_as()
        sink = open(kept, 'wb') if kept else None
        p = subprocess.Popen(['curl'] + self.common() + [
            '-w', '%{stderr}%{time_total} %{size_download}\n', '--data-binary', '@-', self.url],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        p.stdin.write((ENV % body).encode())
        p.stdin.close()
        head = b''
        while True:
            chunk = p.stdout.read(1 << 20)
            if not chunk:
                break
            if sink:
                sink.write(chunk)
            if len(head) < keep:
                head += chunk[:keep - len(head)]
        err = p.stderr.read().decode()
        p.wait()
        if sink:
            sink.close()
        t, n = err.strip().split()[-2:]
        self.total += float(t)
        self.bytes += int(n)
        self.requests += 1
        return head.decode('utf-8', 'replace')

    def batch(self, bodies):
        """Independent requests in one curl process (one connection), answers discarded."""
        cfg = os.path.join(self.workdir, 'floor-batch.cfg')
        with open(cfg, 'w') as f:
            for i, body in enumerate(bodies):
                if i:
                    f.write('next\n')
                f.write('url = %s\noutput = %s\nwrite-out = "%%{time_total} '
                        '%%{size_download}\\n"\ndata-binary = %s\n' % (
                            self.url, cfg_quote(self.keep_as() or '/dev/null'),
                            cfg_quote(ENV % body)))
                f.write('silent\ncookie = %s\ncookie-jar = %s\nheader = "Content-Type: text/xml; charset=utf-8"\n'
                        'header = "SOAPAction: \\"urn:vim25/7.0.3.0\\""\nheader = "Expect:"\n%s'
                        % (cfg_quote(self.jar), cfg_quote(self.jar),
                           'compressed\n' if self.gzip else ''))
        out = subprocess.run(['curl', '-s', '-K', cfg], capture_output=True, text=True).stdout
        for line in out.split('\n'):
            if line.strip():
                t, n = line.split()
                self.total += float(t)
                self.bytes += int(n)
                self.requests += 1

    def run(self, reads, option, esxcli, hosts, alarms):
        if os.path.exists(self.jar):
            os.unlink(self.jar)
        # vimServiceVersions.xml, the service content, the login.
        r = subprocess.run(['curl', '-s', '-o', self.keep_as() or '/dev/null', '-w',
                            '%{time_total} %{size_download}', self.url + '/vimServiceVersions.xml'],
                           capture_output=True, text=True)
        t, n = r.stdout.split()
        self.total, self.bytes, self.requests = float(t), int(n), 1
        self.one('<RetrieveServiceContent><_this type="ServiceInstance">ServiceInstance</_this>'
                 '</RetrieveServiceContent>')
        self.one('<Login><_this type="SessionManager">SessionManager</_this><userName>%s'
                 '</userName><password>%s</password></Login>' % (USER, PASSWORD))
        for rd in reads:
            view = re.search(r'>([^<]+)</returnval>', self.one(view_body(rd['type']))).group(1)
            body = retrieve_body(rd['type'], rd['paths'], view)
            while True:
                m = re.search(r'<token>([^<]+)</token>', self.one(body))
                if not m:
                    break
                body = continue_body(m.group(1))
            self.one('<DestroyView><_this type="ContainerView">%s</_this></DestroyView>' % view)
        # The per-host reads and the alarm reads: nothing in them depends on an answer read in
        # this pass (discovery learned the morefs), so they go in one curl process.
        bodies = []
        for h in hosts:
            if h['options']:
                bodies.append('<QueryOptions><_this type="OptionManager">%s</_this><name>%s</name>'
                              '</QueryOptions>' % (h['options'], option))
            for hba in h['hbas']:
                bodies.append('<QueryBoundVnics><_this type="IscsiManager">%s</_this>'
                              '<iScsiHbaName>%s</iScsiHbaName></QueryBoundVnics>' % (h['iscsi'], hba))
            if h['san']:
                bodies.append('<RetrieveManagedMethodExecuter><_this type="HostSystem">%s</_this>'
                              '</RetrieveManagedMethodExecuter>' % h['moref'])
                for moid, method in esxcli:
                    bodies.append('<ExecuteSoap><_this type="ReflectManagedMethodExecuter">%s'
                                  '</_this><moid>%s</moid><version>urn:vim25/5.0</version>'
                                  '<method>%s</method></ExecuteSoap>' % (h['mme'], moid, method))
        bodies.append(objects_body('Folder', ['group-d1'], ['name', 'parent', 'childType']))
        bodies.append('<GetAlarm><_this type="AlarmManager">AlarmManager</_this></GetAlarm>')
        bodies.append(objects_body('Alarm', alarms, ['info']))
        bodies.append(objects_body('PerformanceManager', ['PerfMgr'], ['perfCounter']))
        bodies.append('<Logout><_this type="SessionManager">SessionManager</_this></Logout>')
        self.batch(bodies)
        if self.capture is not None:
            with open(os.path.join(self.capture, 'manifest'), 'w') as f:
                f.write(''.join(p + '\n' for p in self.captured))
        return self


# ---- timing helpers ---------------------------------------------------------------------------

def timed(cmd, **kw):
    """Runs cmd under /usr/bin/time: (wall seconds, peak RSS in MB, the finished process)."""
    r = subprocess.run(['/usr/bin/time', '-f', 'TIME %e %M %U %S'] + cmd, capture_output=True,
                       text=True, **kw)
    m = re.findall(r'TIME ([\d.]+) (\d+)', r.stderr)
    if r.returncode != 0 or not m:
        raise RuntimeError('%s failed (%d): %s' % (cmd[0], r.returncode, r.stderr[-2000:]))
    return float(m[-1][0]), int(m[-1][1]) / 1024, r


def med(xs):
    return statistics.median(xs)


def cpu_of(r):
    """The user + sys seconds /usr/bin/time (timed()) reported for a finished process."""
    m = re.findall(r'TIME [\d.]+ \d+ ([\d.]+) ([\d.]+)', r.stderr)
    return float(m[-1][0]) + float(m[-1][1])


# What `vslint check -v` says each step of an evaluation cost: (wall s, CPU s) of each.
CHECK_STEPS = {
    'load': r'db: loaded the estate of vCenter .* in ([\d.]+) s, CPU ([\d.]+) s',
    'own': r'checks: \d+ checks ran over vCenter .* in ([\d.]+) s, CPU ([\d.]+) s',
    'record': r'db: recorded \d+ findings of vCenter .* in ([\d.]+) s, CPU ([\d.]+) s',
}


def check_steps(stderr):
    steps = {}
    for k, rx in CHECK_STEPS.items():
        m = re.search(rx, stderr)
        if not m:
            raise RuntimeError('vslint check -v said nothing matching %r: %s' % (rx, stderr[-2000:]))
        steps[k] = (float(m.group(1)), float(m.group(2)))
    return steps


def bench_checks(bins, conf, n, runs):
    """`vslint check --offline -v`, runs times: the whole command's wall, CPU and peak RSS, and
    the steps its debug lines time (CHECK_STEPS), each a list over the runs."""
    res = {k: [] for k in ('checks', 'checks_cpu', 'checks_rss', 'load', 'load_cpu', 'own',
                           'own_cpu', 'record', 'record_cpu')}
    for _ in range(runs):
        t, m, r = timed([bins['vslint'], 'check', '-v', '-c', conf, '--offline', '--fail-on',
                         'never', '--format', 'json', '-o', os.devnull])
        steps = check_steps(r.stderr)
        res['checks'].append(t)
        res['checks_cpu'].append(cpu_of(r))
        res['checks_rss'].append(m)
        for k, (wall, cpu) in steps.items():
            res[k].append(wall)
            res[k + '_cpu'].append(cpu)
        log("[%d VMs] vslint check --offline %.2f s (CPU %.2f s), %.1f MB; checks' own run "
            "%.2f s (CPU %.2f s), load %.2f s, history %.2f s" % (
                n, t, res['checks_cpu'][-1], m, steps['own'][0], steps['own'][1],
                steps['load'][0], steps['record'][0]))
    return res


SITE_STEP = r'site rules: (\d+) rules ran over vCenter .* \((\d+) findings\) in ([\d.]+) s, CPU ([\d.]+) s'


# Each copy's parameter is its default + step * k, step 10 unless listed here. min_paths goes
# 4, 3, 2, 1, 0: raised by 10 a copy (14 to 44 paths, on LUNs of 4), four copies each gave
# 25,600 findings, stopped at the 10,000-finding cap and failed, so the figure timed the cap's
# error path (10,000 findings built, then dropped) four times instead of rules a site runs.
SITE_PARAM_STEP = {'min_paths': -1}


def site_rules_dir(work, copies=5):
    """dist/rules/'s rules, copies times each under ids of their own and their params scaled,
    in work/rules.d: 4 x copies site rules."""
    src = os.path.join(ROOT, 'dist', 'rules')
    d = os.path.join(work, 'rules.d')
    os.makedirs(d, exist_ok=True)
    for fname in sorted(os.listdir(src)):
        with open(os.path.join(src, fname)) as f:
            text = f.read()
        for k in range(copies):
            t = re.sub(r'^-- id: (\S+)', lambda m: '-- id: %s-%d' % (m.group(1), k), text,
                       flags=re.M)
            t = re.sub(r'^(-- param: (\w+) = )(\d+)',
                       lambda m: '%s%d' % (m.group(1), int(m.group(3)) +
                                           SITE_PARAM_STEP.get(m.group(2), 10) * k),
                       t, flags=re.M)
            with open(os.path.join(d, '%d-%s' % (k, fname)), 'w') as f:
                f.write(t)
    return d


def bench_site_rules(bins, conf, n, runs, work):
    """`vslint check --offline -v` without and with 20 site rules, runs times each: wall and
    CPU of the whole command, the site rules' own step; and `vslint export`'s wall time."""
    d = site_rules_dir(work)
    with_rules = conf + '.rules'
    with open(conf) as f, open(with_rules, 'w') as g:
        g.write(f.read() + '\n[rules]\ndir = %s\ntimeout = 60\n' % d)
    res = {k: [] for k in ('plain', 'plain_cpu', 'rules', 'rules_cpu', 'site', 'site_cpu',
                           'site_findings', 'export', 'export_rss')}
    for _ in range(runs):
        t, m, r = timed([bins['vslint'], 'check', '-v', '-c', conf, '--offline', '--fail-on',
                         'never', '--format', 'json', '-o', os.devnull])
        res['plain'].append(t)
        res['plain_cpu'].append(cpu_of(r))
        t, m, r = timed([bins['vslint'], 'check', '-v', '-c', with_rules, '--offline',
                         '--fail-on', 'never', '--format', 'json', '-o', os.devnull])
        step = re.search(SITE_STEP, r.stderr)
        if not step or int(step.group(1)) != 20:
            raise RuntimeError('no site rules step with 20 rules: %s' % r.stderr[-2000:])
        res['rules'].append(t)
        res['rules_cpu'].append(cpu_of(r))
        res['site'].append(float(step.group(3)))
        res['site_cpu'].append(float(step.group(4)))
        res['site_findings'].append(int(step.group(2)))
        out = os.path.join(work, 'export')
        t, m, r = timed([bins['vslint'], 'export', '-c', conf, '--output', out])
        res['export'].append(t)
        res['export_rss'].append(m)
        log('[%d VMs] check %.2f s (CPU %.2f), with 20 site rules %.2f s (CPU %.2f), their step '
            '%.2f s (CPU %.2f, %d findings); export %.2f s, %.1f MB' % (
                n, res['plain'][-1], res['plain_cpu'][-1], res['rules'][-1], res['rules_cpu'][-1],
                res['site'][-1], res['site_cpu'][-1], res['site_findings'][-1], t, m))
    return res


def gate_p50(bins, conf, port, n, requests=20):
    """`vslint serve -c conf` after its first poll: POST /api/v1/gate (40 GiB on the VMFS
    datastore with the most free space) requests times, one after another, timed at the client:
    the median and the slowest in seconds, and the answer's site_rules_not_evaluated."""
    base = 'http://127.0.0.1:%d' % port
    token = 'bench-token-0123456789abcdef'
    ds = subprocess.run([bins['vslint'], 'query', '-c', conf, '--format', 'json',
                         "SELECT name FROM vsl_datastores WHERE type = 'VMFS' "
                         "ORDER BY free_bytes DESC LIMIT 1"], capture_output=True, text=True,
                        check=True)
    body = json.dumps({'datastore': json.loads(ds.stdout)[0]['name'], 'disks_gb': [40]}).encode()
    srv = subprocess.Popen([bins['vslint'], 'serve', '-c', conf], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
    times, ans = [], None
    try:
        wait_first_poll(base)
        cpu0 = proc_cpu(srv.pid)
        for _ in range(requests):
            req = urllib.request.Request(base + '/api/v1/gate', data=body, method='POST')
            req.add_header('Authorization', 'Bearer ' + token)
            req.add_header('Content-Type', 'application/json')
            t0 = time.monotonic()
            with urllib.request.urlopen(req, timeout=120) as r:
                ans = json.loads(r.read())
            times.append(time.monotonic() - t0)
        cpu = (proc_cpu(srv.pid) - cpu0) / requests
    finally:
        stop(srv)
    log('[%d VMs] POST /api/v1/gate x%d: p50 %.3f s, max %.3f s, daemon CPU %.3f s a request, '
        '%d site rules not evaluated' % (n, requests, med(times), max(times), cpu,
                                         len(ans.get('site_rules_not_evaluated', []))))
    return {'p50': med(times), 'max': max(times), 'cpu': cpu,
            'not_evaluated': len(ans.get('site_rules_not_evaluated', []))}


def proc_cpu(pid):
    """The user + system CPU seconds process pid has used so far (/proc/PID/stat)."""
    with open('/proc/%d/stat' % pid) as f:
        fields = f.read().rsplit(')', 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf('SC_CLK_TCK')


def bench_gate_site_rules(bins, conf, n, work):
    """The provisioning gate's p50 over HTTP without and with 20 site rules (issue 21: under 1 s
    at 20,000 VMs). Callable on its own after a collect into conf's database."""
    d = site_rules_dir(work)
    with_rules = conf + '.rules'
    with open(conf) as f, open(with_rules, 'w') as g:
        g.write(f.read() + '\n[rules]\ndir = %s\ntimeout = 60\n' % d)
    with open(conf) as f:
        port = int(re.search(r'listen = 127\.0\.0\.1:(\d+)', f.read()).group(1))
    return {'gate_plain': gate_p50(bins, conf, port, n),
            'gate_rules': gate_p50(bins, with_rules, port, n)}


def spread(xs):
    return '%.2f-%.2f' % (min(xs), max(xs)) if len(xs) > 1 else ''


def http_json(url, method='GET', token=None, timeout=30):
    req = urllib.request.Request(url, method=method, data=b'' if method == 'POST' else None)
    if token:
        req.add_header('Authorization', 'Bearer ' + token)
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return json.loads(r.read() or b'null')


def wrk(url, seconds, threads=2, conns=8):
    out = subprocess.run(['wrk', '-t%d' % threads, '-c%d' % conns, '-d%ds' % seconds, '--latency',
                          url], capture_output=True, text=True).stdout

    def ms(label):
        m = re.search(r'^\s+%s\s+([\d.]+)(us|ms|s)\s*$' % label, out, re.M)
        v, unit = float(m.group(1)), m.group(2)
        return v / 1000 if unit == 'us' else v * 1000 if unit == 's' else v
    rps = float(re.search(r'Requests/sec:\s+([\d.]+)', out).group(1))
    non2xx = re.search(r'Non-2xx or 3xx responses: (\d+)', out)
    return {'rps': rps, 'p50': ms('50%'), 'p99': ms('99%'),
            'errors': int(non2xx.group(1)) if non2xx else 0}


class Poller(threading.Thread):
    """Keeps polls running back to back in `vslint serve` (POST /api/v1/polls, then wait for it
    to finish) until stopped; counts them and the time they ran."""

    def __init__(self, base, token):
        super().__init__(daemon=True)
        self.base, self.token = base, token
        self.stop = threading.Event()
        self.polls = 0

    def vc(self):
        return http_json(self.base + '/api/v1/summary')['vcenters'][0]

    def run(self):
        while not self.stop.is_set():
            before = (self.vc().get('last_poll') or {}).get('finished')
            http_json(self.base + '/api/v1/polls', 'POST', self.token)
            while True:
                time.sleep(0.05)
                v = self.vc()
                if not v['polling'] and (v.get('last_poll') or {}).get('finished') != before:
                    break
            self.polls += 1


# ---- one size ---------------------------------------------------------------------------------

def start_synth(a, n, bins, work, res):
    """The responder at n VMs (with a truth file): the process and its URL; the estate's
    description goes to res['estate']."""
    truth = os.path.join(work, 'truth-%d.json' % n)
    sim = subprocess.Popen([bins['synth'], '-vms', str(n), '-truth', truth,
                            '-gzip=%s' % ('true' if a.gzip else 'false')],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    url = sim.stdout.readline().strip()
    res['estate'] = sim.stderr.readline().strip().split('estate: ', 1)[-1]
    return sim, url, truth


def write_setup(work, n, url, res, truth):
    """The password and token files and a configuration of vslint for the responder at url,
    its database in work: (conf, password file, the API's port). The estate's counts go to
    res['counts'] (from truth) and the paths the poll reads to work/paths.json."""
    reads, option, _ = vslint_reads()
    with open(os.path.join(work, 'paths.json'), 'w') as f:
        json.dump({'reads': reads, 'option': option}, f)
    with open(truth) as f:
        res['counts'] = json.load(f)['counts']
    pw = os.path.join(work, 'pw')
    with open(pw, 'w') as f:
        f.write(PASSWORD + '\n')
    os.chmod(pw, 0o600)
    token_file = os.path.join(work, 'token')
    with open(token_file, 'w') as f:
        f.write(TOKEN + '\n')
    os.chmod(token_file, 0o600)
    port = free_port()
    conf = os.path.join(work, 'v-%d.conf' % n)
    with open(conf, 'w') as f:
        f.write('[database]\npath = %s\n\n[server]\nlisten = 127.0.0.1:%d\ntoken_file = %s\n\n'
                '[vcenter synth]\nurl = %s\nuser = %s\npassword_file = %s\nmax_objects = %d\n'
                'timeout = 3600\ninterval = 86400\n' % (os.path.join(work, 'v-%d.db' % n), port,
                                                        token_file, url, USER, pw, MAX_OBJECTS))
    return conf, pw, port


def bench_size(a, n, bins, work):
    res = {'vms': n}
    reads, option, esxcli = vslint_reads()
    paths_json = os.path.join(work, 'paths.json')
    sim, url, truth = start_synth(a, n, bins, work, res)
    try:
        conf, pw, port = write_setup(work, n, url, res, truth)
        runs = a.runs if n <= a.full_runs_up_to else 1

        log('[%d VMs] %s' % (n, res['estate']))
        if a.site_rules:
            t, m, r = timed([bins['vslint'], 'collect', '-c', conf])
            log('[%d VMs] vslint collect (not reported) %.2f s: %s' % (n, t, r.stdout.strip()))
            res.update(bench_site_rules(bins, conf, n, runs, work))
            res.update(bench_gate_site_rules(bins, conf, n, work))
            return res
        if a.checks_only:
            t, m, r = timed([bins['vslint'], 'collect', '-c', conf])
            log('[%d VMs] vslint collect (not reported) %.2f s: %s' % (n, t, r.stdout.strip()))
            res.update(bench_checks(bins, conf, n, runs))
            return res
        log('[%d VMs] discovery (not timed) ...' % n)
        hosts, alarms = discover(url)
        floors = []
        for _ in range(runs):
            fl = Floor(url, work, a.gzip).run(reads, option, esxcli, hosts, alarms)
            floors.append(fl.total)
            log('[%d VMs] floor %.2f s, %d requests, %.1f MB' % (n, fl.total, fl.requests,
                                                                 fl.bytes / 1e6))
        res['floor'] = floors
        res['floor_requests'] = fl.requests
        res['floor_mb'] = fl.bytes / 1e6

        col, rss = [], []
        for _ in range(runs):
            t, m, r = timed([bins['vslint'], 'collect', '-c', conf])
            col.append(t)
            rss.append(m)
            log('[%d VMs] vslint collect %.2f s, %.1f MB: %s' % (n, t, m, r.stdout.strip()))
        res['collect'], res['collect_rss'] = col, rss

        if not a.no_govmomi:
            gt, grss = [], []
            for _ in range(runs):
                t, m, r = timed([bins['govmomi'], '-url', url, '-user', USER, '-password-file', pw,
                                 '-paths', paths_json, '-max-objects', str(MAX_OBJECTS)])
                gt.append(t)
                grss.append(m)
                log('[%d VMs] govmomi %.2f s, %.1f MB: %s' % (n, t, m, r.stdout.strip()))
            res['govmomi'], res['govmomi_rss'] = gt, grss

        res.update(bench_checks(bins, conf, n, runs))
        res['incremental'] = incremental(a, bins, url, conf)

        res['api'] = bench_api(a, n, bins, conf, port)
        res['synth_rss'] = vm_mb(sim.pid)
    finally:
        sim.send_signal(signal.SIGTERM)
        sim.wait()
    return res


def incremental(a, bins, url, conf, pct=1):
    """The cost of a steady-state incremental poll after pct % of objects changed, against a
    full poll, both as vslint counts them: `vslint collect -v` (a full read: wall time, bytes on
    the wire), then `vslint serve` with [vcenter] incremental = true, which reads everything
    once, follows the responder's property filter, and logs each round it applies ("N changed
    objects applied in T ms (B bytes)": T from the WaitForUpdatesEx answer to the commit, B
    every byte of the round, the answer's included). The change: POST /synth/mutate?pct=N
    (about N % of the VMs flip their power state, of the datastores lose free space, and their
    datastore clusters' sums follow). None with --no-incremental."""
    if a.no_incremental:
        return None
    t, _, r = timed([bins['vslint'], 'collect', '-v', '-c', conf])
    m = re.search(r'(\d+) requests, (\d+) bytes on the wire', r.stderr)
    res = {'full_s': t, 'full_requests': int(m.group(1)), 'full_bytes': int(m.group(2))}
    inc_conf = conf + '.incremental'
    with open(conf) as f, open(inc_conf, 'w') as g:
        g.write(f.read() + 'incremental = true\n')  # [vcenter synth] is the last section
    port = int(re.search(r'listen = 127.0.0.1:(\d+)', open(conf).read()).group(1))
    base, synth = 'http://127.0.0.1:%d' % port, url[:-len('/sdk')]
    serve_log = inc_conf + '.log'
    with open(serve_log, 'w') as lf:
        # -v: each round's "N changed objects applied" line is a debug line.
        srv = subprocess.Popen([bins['vslint'], 'serve', '-v', '-c', inc_conf], stdout=lf,
                               stderr=lf)
    try:
        deadline = time.time() + 3600
        while time.time() < deadline:
            try:
                if http_json(base + '/api/v1/summary')['vcenters'][0].get('mode') == \
                        'incremental':
                    break
            except (OSError, ValueError, KeyError, IndexError):
                pass
            if srv.poll() is not None:
                raise RuntimeError('vslint serve ended: ' + open(serve_log).read()[-2000:])
            time.sleep(0.5)
        else:
            raise RuntimeError('vslint serve never followed changes: ' +
                               open(serve_log).read()[-2000:])
        stats = http_json(synth + '/synth/stats')
        urllib.request.urlopen(urllib.request.Request(
            synth + '/synth/mutate?pct=%d' % pct, data=b'', method='POST'), timeout=10)
        t0, rounds = time.time(), []
        while time.time() - t0 < 600 and not rounds:
            time.sleep(0.2)
            rounds = re.findall(r'(\d+) changed objects applied in (\d+) ms \((\d+) bytes\)',
                                open(serve_log).read())
        after = http_json(synth + '/synth/stats')
    finally:
        srv.send_signal(signal.SIGTERM)
        srv.wait()
    if not rounds:
        raise RuntimeError('no incremental round applied: ' + open(serve_log).read()[-2000:])
    res.update(objects=sum(int(x[0]) for x in rounds),
               inc_s=sum(int(x[1]) for x in rounds) / 1000,
               inc_bytes=sum(int(x[2]) for x in rounds), rounds=len(rounds),
               inc_requests=after['requests'] - stats['requests'],
               view_reads=after['retrieve_view'] - stats['retrieve_view'])
    log('incremental: %d objects in %d rounds, %.3f s, %d bytes, %d requests (%d view reads); '
        'full read %.2f s, %d bytes' % (res['objects'], res['rounds'], res['inc_s'],
                                        res['inc_bytes'], res['inc_requests'],
                                        res['view_reads'], t, res['full_bytes']))
    return res


def bench_incremental_size(a, n, bins, work):
    """--incremental-only: the responder at n VMs and the incremental measurement alone."""
    sim = subprocess.Popen([bins['synth'], '-vms', str(n),
                            '-gzip=%s' % ('true' if a.gzip else 'false')],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    url = sim.stdout.readline().strip()
    res = {'vms': n, 'estate': sim.stderr.readline().strip().split('estate: ', 1)[-1]}
    try:
        pw = os.path.join(work, 'pw')
        with open(pw, 'w') as f:
            f.write(PASSWORD + '\n')
        os.chmod(pw, 0o600)
        conf = os.path.join(work, 'v-%d.conf' % n)
        with open(conf, 'w') as f:
            f.write('[database]\npath = %s\n\n[server]\nlisten = 127.0.0.1:%d\n\n'
                    '[vcenter synth]\nurl = %s\nuser = %s\npassword_file = %s\nmax_objects = %d\n'
                    'timeout = 3600\ninterval = 86400\n' % (os.path.join(work, 'v-%d.db' % n),
                                                            free_port(), url, USER, pw,
                                                            MAX_OBJECTS))
        log('[%d VMs] %s' % (n, res['estate']))
        res['incremental'] = incremental(a, bins, url, conf)
        res['synth_rss'] = vm_mb(sim.pid)
    finally:
        sim.send_signal(signal.SIGTERM)
        sim.wait()
    return res


def incremental_cells(results):
    """The report's rows for the incremental measurement."""
    def cell(r, what):
        i = r.get('incremental')
        if i is None:
            return 'n/a'
        if what == 'time':
            return '%.3f s (%.1f%%)' % (i['inc_s'], 100 * i['inc_s'] / i['full_s'])
        if what == 'bytes':
            return '%.2f MB (%.1f%%)' % (i['inc_bytes'] / 1e6,
                                         100 * i['inc_bytes'] / i['full_bytes'])
        if what == 'full':
            return '%.2f s, %.0f MB' % (i['full_s'], i['full_bytes'] / 1e6)
        return '%d obj %d req %d view' % (i['objects'], i['inc_requests'], i['view_reads'])
    return [('full poll: vslint collect (time, bytes)', [cell(r, 'full') for r in results]),
            ('incremental poll, 1 % changed: time', [cell(r, 'time') for r in results]),
            ('  bytes (target both < 5 % of full)', [cell(r, 'bytes') for r in results]),
            ('  objects, requests, view reads', [cell(r, 'what') for r in results])]


def vm_mb(pid, field='VmHWM'):
    """A memory figure of pid's /proc status in MB: its peak RSS, or field (VmRSS: now); None
    when it is gone."""
    try:
        with open('/proc/%d/status' % pid) as f:
            return int(re.search(r'%s:\s+(\d+)' % field, f.read()).group(1)) / 1024
    except OSError:
        return None


def bench_api(a, n, bins, conf, port):
    base = 'http://127.0.0.1:%d' % port
    token = TOKEN
    srv = subprocess.Popen([bins['vslint'], 'serve', '-c', conf], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
    out = {}
    try:
        wait_first_poll(base)
        total = http_json(base + FINDINGS_PAGE)['total']
        out['findings_total'] = total
        for name, path in (('summary', '/api/v1/summary'), ('findings', FINDINGS_PAGE)):
            out[name] = wrk(base + path, a.api_seconds)
            log('[%d VMs] wrk %s idle: %s' % (n, name, out[name]))
        for name, path in (('summary', '/api/v1/summary'), ('findings', FINDINGS_PAGE)):
            p = Poller(base, token)
            p.start()
            time.sleep(0.5)
            out[name + '_polling'] = wrk(base + path, a.api_seconds)
            p.stop.set()
            p.join()
            out[name + '_polling']['polls'] = p.polls
            log('[%d VMs] wrk %s while polling: %s' % (n, name, out[name + '_polling']))
    finally:
        stop(srv)
    return out


def wait_first_poll(base):
    """Until `vslint serve` at base is ready and its first poll (and its checks) finished."""
    for _ in range(6000):
        try:
            with urllib.request.urlopen(base + '/readyz', timeout=5) as r:
                if r.status == 200:
                    break
        except (urllib.error.URLError, ConnectionError):
            pass
        time.sleep(0.1)
    for _ in range(6000):
        if not http_json(base + '/api/v1/summary')['vcenters'][0]['polling']:
            break
        time.sleep(0.1)


def stop(proc, timeout=300):
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


# ---- report -----------------------------------------------------------------------------------

def checks_rows(row, results):
    """The rows of the checks' figures: wall (CPU) medians, the checks' own run first."""
    def cell(r, k):
        return '%.2f s (CPU %.2f)' % (med(r[k]), med(r[k + '_cpu']))

    row("all checks (target < 1 s at 100k):", [''] * len(results))
    row("  the checks' own run (engine, no I/O)", [cell(r, 'own') for r in results])
    row("  whole `vslint check --offline`", [cell(r, 'checks') for r in results])
    row("    of which: load the estate", [cell(r, 'load') for r in results])
    row("    of which: record the findings' history", [cell(r, 'record') for r in results])
    row("    peak RSS", ['%.0f MB' % max(r['checks_rss']) for r in results])


def report(results, a):
    cols = [r['vms'] for r in results]
    w = 22
    lines = []

    def row(label, cells):
        lines.append('%-46s' % label + ''.join('%*s' % (w, c) for c in cells))

    row('', ['%d VMs' % c for c in cols])
    row('hosts / datastores / LUN paths', ['%d / %d / %d' % (r['counts']['host'], r['counts']['datastore'],
                                                             r['counts']['lun_path']) for r in results])
    row('bytes of XML, requests', ['%.0f MB, %d' % (r['floor_mb'], r['floor_requests'])
                                   for r in results])
    row('floor: curl, same requests (time_total sum)', ['%.2f s' % med(r['floor']) for r in results])
    row('vslint collect (fetch, parse, store)', ['%.2f s' % med(r['collect']) for r in results])
    row('  ratio to the floor (target <= 1.0x)', ['%.2fx' % (med(r['collect']) / med(r['floor']))
                                                  for r in results])
    row('  peak RSS (target < 64 MB at 100k)', ['%.1f MB' % max(r['collect_rss']) for r in results])
    if not a.no_govmomi:
        row('govmomi client, same reads', ['%.2f s' % med(r['govmomi']) for r in results])
        row('  vslint / govmomi (target <= 0.5)', ['%.2f' % (med(r['collect']) / med(r['govmomi']))
                                                   for r in results])
        row('  govmomi peak RSS', ['%.1f MB' % max(r['govmomi_rss']) for r in results])
    checks_rows(row, results)
    for label, cells in incremental_cells(results):
        row(label, cells)
    for name, label in (('summary', '/api/v1/summary'), ('findings', 'findings page')):
        for suffix, what in (('', 'idle'), ('_polling', 'polls writing')):
            row('%s, %s: req/s' % (label, what), ['%.0f' % r['api'][name + suffix]['rps']
                                                  for r in results])
            row('  p50 / p99', ['%.2f / %.2f ms' % (r['api'][name + suffix]['p50'],
                                                    r['api'][name + suffix]['p99'])
                                for r in results])
    row('responder peak RSS', ['%.0f MB' % r['synth_rss'] for r in results])
    runs = ['%d' % len(r['collect']) for r in results]
    row('runs (medians shown)', runs)
    return '\n'.join(lines)


def binaries(a, need):
    """The programs run, by name, in a.build; exits when one of need is not built. Builds the
    govmomi client unless a.no_govmomi."""
    bins = {'vslint': os.path.join(a.build, 'vslint'),
            'synth': os.path.join(a.build, 'tests', 'sim', 'vcsim-synth'),
            'expat': os.path.join(a.build, 'bench', 'expat-count'),
            'govmomi': os.path.join(a.build, 'bench', 'govmomi-poll')}
    for k in need:
        if not os.path.exists(bins[k]):
            sys.exit('%s not built: scripts/build.sh%s' % (
                bins[k], ' (expat-count needs libexpat1-dev)' if k == 'expat' else ''))
    if not a.no_govmomi:
        subprocess.run(['sh', os.path.join(ROOT, 'tests', 'sim', 'build.sh'), bins['govmomi'],
                        os.path.join(a.build, 'bench', 'gocache'),
                        os.path.join(ROOT, 'bench', 'govmomi')], check=True)
    return bins


def each_size(a, prefix, one):
    """one(n, work) for each of a.sizes in a new directory work (removed after): the list of
    what each returned, also written to a.json when asked."""
    work = tempfile.mkdtemp(prefix=prefix)
    results = []
    try:
        for n in [int(x) for x in a.sizes.split(',')]:
            results.append(one(n, work))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if a.json:
        with open(a.json, 'w') as f:
            json.dump(results, f, indent=1)
    return results


def common_args(ap, sizes):
    """The options this benchmark and bench/perf_table.py share."""
    ap.add_argument('--sizes', default=sizes)
    ap.add_argument('--runs', type=int, default=3)
    ap.add_argument('--gzip', action='store_true', help='the responder compresses (as vCenter)')
    ap.add_argument('--no-govmomi', action='store_true')
    ap.add_argument('--api-seconds', type=int, default=5)
    ap.add_argument('--build', default=os.path.join(ROOT, 'build'))
    ap.add_argument('--json', help='also write the raw figures here')


def main():
    global MAX_OBJECTS
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    common_args(ap, '5000,20000,100000')
    ap.add_argument('--full-runs-up-to', type=int, default=20000,
                    help='sizes above this get one run of each measurement')
    ap.add_argument('--max-objects', type=int, default=500,
                    help='maxObjects per page, for vslint (max_objects=), govmomi and the floor')
    ap.add_argument('--no-incremental', action='store_true',
                    help='skip the incremental poll measurement')
    ap.add_argument('--checks-only', action='store_true',
                    help="only the checks' figures (after one collect that is not reported)")
    ap.add_argument('--site-rules', action='store_true',
                    help='only check with and without 20 site rules, and export')
    ap.add_argument('--incremental-only', action='store_true',
                    help='only the full and incremental polls of vslint (no floor, govmomi, '
                         'checks or API)')
    a = ap.parse_args()
    MAX_OBJECTS = a.max_objects
    for tool in ('/usr/bin/time',) if a.site_rules else ('curl', 'wrk', '/usr/bin/time'):
        if not shutil.which(tool):
            sys.exit('%s is missing: apt-get install curl wrk time' % tool)
    bins = binaries(a, ('vslint', 'synth'))
    def one(n, work):
        if a.incremental_only:
            return bench_incremental_size(a, n, bins, work)
        r = bench_size(a, n, bins, work)
        for f in os.listdir(work):
            if f.startswith('v-%d.db' % n):
                os.unlink(os.path.join(work, f))
        return r
    results = each_size(a, 'vslint-bench-', one)
    print()
    print('vslint scale benchmark, %s, %d cores (load average %.1f at the end), answers %s, '
          'pages of %d objects' % (time.strftime('%Y-%m-%d'), os.cpu_count(), os.getloadavg()[0],
                                   'gzip-compressed' if a.gzip else 'uncompressed', MAX_OBJECTS))
    if a.site_rules:
        for r in results:
            print('%d VMs: check --offline %.2f s (CPU %.2f s); with 20 site rules %.2f s (CPU '
                  '%.2f s); the site rules\' step %.2f s (CPU %.2f s, %d findings); export %.2f s '
                  '(%.1f MB); medians of %d runs' % (
                      r['vms'], med(r['plain']), med(r['plain_cpu']), med(r['rules']),
                      med(r['rules_cpu']), med(r['site']), med(r['site_cpu']),
                      r['site_findings'][0], med(r['export']), med(r['export_rss']),
                      len(r['plain'])))
            print('%d VMs: POST /api/v1/gate p50 %.3f s (max %.3f s, CPU %.3f s); with 20 site '
                  'rules p50 %.3f s (max %.3f s, CPU %.3f s, %d named not evaluated)' % (
                      r['vms'], r['gate_plain']['p50'], r['gate_plain']['max'],
                      r['gate_plain']['cpu'], r['gate_rules']['p50'], r['gate_rules']['max'],
                      r['gate_rules']['cpu'], r['gate_rules']['not_evaluated']))
        return
    if a.checks_only:
        w = 22
        lines = []
        print('%-46s' % '' + ''.join('%*s' % (w, '%d VMs' % r['vms']) for r in results))
        checks_rows(lambda label, cells: lines.append('%-46s' % label + ''.join(
            '%*s' % (w, c) for c in cells)), results)
        print('\n'.join(lines))
        print('%-46s' % 'runs (medians shown)' + ''.join('%*d' % (w, len(r['checks']))
                                                         for r in results))
        return
    if a.incremental_only:
        w = 22
        print('%-46s' % '' + ''.join('%*s' % (w, '%d VMs' % r['vms']) for r in results))
        for label, cells in incremental_cells(results):
            print('%-46s' % label + ''.join('%*s' % (w, c) for c in cells))
        return
    print(report(results, a))


if __name__ == '__main__':
    main()
