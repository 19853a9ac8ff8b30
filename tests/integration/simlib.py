"""Helpers for integration tests: start the vCenter simulator harness, write a vslint
configuration, run the vslint binary, poll an estate. Standard library only; conftest.py makes
fixtures of them."""
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import tempfile

VSLINT = os.environ.get('VSLINT', 'build/vslint')


def sanitized():
    """Whether vslint was built with AddressSanitizer: its memory figures mean nothing then
    (shadow memory and the quarantine add hundreds of MB)."""
    with open(VSLINT, 'rb') as f:
        return b'__asan_init' in f.read()
VCSIM = os.environ.get('VCSIM', 'build/tests/sim/vcsim-vslint')
UNITY_SIM = os.environ.get('UNITY_SIM', 'build/tests/sim/unity-vslint')
VCSIM_REPLAY = os.environ.get('VCSIM_REPLAY', 'build/tests/sim/vcsim-replay')
PASSWORD = 'vslint-secret'
USER = 'vslint'


class Responder:
    """A responder process that prints its URL on its first line of output and (with truth)
    writes the JSON it says it holds to -truth FILE: started by the subclasses, stopped by
    stop() or at the end of a `with` block."""

    def __init__(self, binary, args, what, workdir=None, truth=True):
        self.workdir = workdir or tempfile.mkdtemp(prefix='vslint-sim-')
        self.truth_path = (os.path.join(self.workdir, 'truth-%s.json' % os.getpid())
                           if truth else None)
        # Its log goes to a file: a pipe nobody reads fills up (the simulator logs every
        # WaitForUpdatesEx round) and then blocks the simulator.
        self.log_path = os.path.join(self.workdir, 'log-%s.txt' % os.getpid())
        cmd = [binary] + (['-truth', self.truth_path] if truth else []) + list(args)
        with open(self.log_path, 'w') as log:
            self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=log, text=True)
        self.url = self.proc.stdout.readline().strip()
        if not self.url.startswith('http'):
            self.proc.wait()
            raise RuntimeError('%s did not start: %r %s' % (what, self.url, self.log()[-2000:]))

    def log(self):
        """What the simulator logged so far."""
        with open(self.log_path, errors='replace') as f:
            return f.read()

    def truth(self):
        with open(self.truth_path) as f:
            return json.load(f)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        shutil.rmtree(self.workdir, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


class Sim(Responder):
    """The govmomi simulator harness (tests/sim/) running a scenario."""

    def __init__(self, scenario='violations', page_size=100, tls=False, workdir=None,
                 extra=()):
        workdir = workdir or tempfile.mkdtemp(prefix='vslint-sim-')
        self.cert_path = os.path.join(workdir, 'sim-cert.pem') if tls else None
        args = ['-scenario', scenario, '-page-size', str(page_size), '-stop-after-seconds', '900']
        if tls:
            args += ['-tls', '-cert-out', self.cert_path]
        super().__init__(VCSIM, args + list(extra), 'simulator', workdir)

    def control(self, what, **params):
        """POST /vslint-sim/WHAT?params (tests/sim/control.go): changes the running estate."""
        import urllib.parse
        import urllib.request
        req = urllib.request.Request('%s/vslint-sim/%s?%s' % (
            self.url.rsplit('/sdk', 1)[0], what, urllib.parse.urlencode(params)),
            method='POST', data=b'')
        with urllib.request.urlopen(req, timeout=30) as r:
            assert r.status == 204

    def stats(self):
        """GET /vslint-sim/stats: the RetrievePropertiesEx calls over a ContainerView
        (retrieve_view: full reads) and over objects by moref (retrieve_objects)."""
        import json
        import urllib.request
        with urllib.request.urlopen(self.url.rsplit('/sdk', 1)[0] + '/vslint-sim/stats',
                                    timeout=30) as r:
            return json.loads(r.read())


class UnitySim(Responder):
    """A running Unity responder (tests/sim/unity/): its URL, and its control endpoint, which
    plants faults (fault=KIND&at=N: the Nth instances read, at=0 every one) and says what the
    array saw (logins, logouts, CSRF refusals)."""

    def __init__(self, extra=()):
        super().__init__(UNITY_SIM, ['-stop-after-seconds', '900'] + list(extra),
                         'unity responder', truth=False)

    def control(self, **query):
        import urllib.parse
        import urllib.request
        data = urllib.parse.urlencode(query).encode() if query else None
        url = self.url + '/_vslint/control' + ('?' + data.decode() if data else '')
        req = urllib.request.Request(url, method='POST' if query else 'GET')
        with urllib.request.urlopen(req, timeout=10) as r:
            return json.loads(r.read().decode())


class Replay(Responder):
    """vcsim-replay (tests/sim/replay/) serving a capture of `vslint record` (a .tar.gz or the
    directory it unpacks to): url is its /sdk, array_url the base its arrays' REST answers are
    under."""

    def __init__(self, capture, extra=()):
        super().__init__(VCSIM_REPLAY, ['-capture', capture, '-stop-after-seconds', '900'] +
                         list(extra), 'replay', truth=False)
        self.array_url = self.url.rsplit('/sdk', 1)[0]


def finding_keys(findings):
    """What a capture's findings are compared by (tests/captures/*/expected.json): per finding
    its check, fingerprint, severity, object, detail and message, sorted by fingerprint."""
    keys = ('check', 'fingerprint', 'severity', 'object', 'detail', 'message')
    return sorted(({k: f[k] for k in keys} for f in findings), key=lambda f: f['fingerprint'])


def record(ws, url, out, name='lab', arrays=(), anonymize=False, env=None, password=PASSWORD,
           user=USER, array_user=USER):
    """`vslint record` of the vCenter at url (as user, with password) and of arrays (their base
    URLs, as array_user), into out; the finished process (exit 0 asserted)."""
    pw = ws.password_file(password, name='record-password')
    extra = ''.join('[array a%d]\ntype = unity\nurl = %s\nuser = %s\npassword_file = %s\n\n'
                    % (i + 1, a, array_user, pw) for i, a in enumerate(arrays))
    vc = dict(vcenter(ws, url, name), password_file=pw, user=user)
    conf = ws.write_config([vc], extra, name='record.conf')
    return run_ok('record', '-c', conf, '--vcenter', name, '--output', out,
                  *(['--anonymize'] if anonymize else []), env=env)


def check_estate(ws, url, name='lab', arrays=(), env=None, db='check.db'):
    """`vslint check --format json` of the vCenter at url and arrays into a fresh database in
    ws: the findings."""
    extra = ''.join('[array a%d]\ntype = unity\nurl = %s\nuser = %s\npassword_file = %s\n\n'
                    % (i + 1, a, USER, ws.password_file()) for i, a in enumerate(arrays))
    conf = ws.write_config([vcenter(ws, url, name)], extra, name=db + '.conf')
    with open(conf) as f:
        text = f.read().replace('path = %s' % ws.db, 'path = %s' % os.path.join(ws.dir, db))
    with open(conf, 'w') as f:
        f.write(text)
    res = run_ok('check', '-c', conf, '--format', 'json', '--fail-on', 'never', env=env)
    return json.loads(res.stdout)['findings']


class Workspace:
    """A temporary directory with a password file, a config and a database path."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix='vslint-it-')
        self.db = os.path.join(self.dir, 'vslint.db')
        self.conf = os.path.join(self.dir, 'vslint.conf')

    def password_file(self, password=PASSWORD, name='password'):
        path = os.path.join(self.dir, name)
        with open(path, 'w') as f:
            f.write(password + '\n')
        os.chmod(path, 0o600)
        return path

    def write_config(self, vcenters, extra='', name='vslint.conf'):
        """vcenters: list of dicts with name, url and any other keys of [vcenter NAME]; the
        file is the workspace's configuration (self.conf) unless another name is given."""
        path = os.path.join(self.dir, name)
        lines = ['[database]', 'path = %s' % self.db, '']
        for vc in vcenters:
            lines.append('[vcenter %s]' % vc['name'])
            for k, v in vc.items():
                if k != 'name':
                    lines.append('%s = %s' % (k, v))
            lines.append('')
        with open(path, 'w') as f:
            f.write('\n'.join(lines) + extra)
        return path

    def cleanup(self):
        shutil.rmtree(self.dir, ignore_errors=True)


def vslint(*args, env=None, timeout=600):
    full_env = dict(os.environ)
    if env:
        full_env.update(env)
    return subprocess.run([VSLINT] + list(args), capture_output=True, text=True,
                          timeout=timeout, env=full_env)


def run_ok(*args, **kw):
    """vslint ARGS, which must exit 0; the finished process."""
    res = vslint(*args, **kw)
    assert res.returncode == 0, 'vslint %s: exit status %d: %s' % (
        args[0], res.returncode, res.stderr.strip()[-500:])
    return res


def vcenter(ws, url, name='lab', **keys):
    """A [vcenter NAME] section for Workspace.write_config: the URL, the simulator's user and a
    password file in ws, and any other keys."""
    return dict(name=name, url=url, user=USER, password_file=ws.password_file(), **keys)


class Estate:
    """One vCenter of a running simulator, configured in a workspace with the right password:
    the vslint commands a test runs on it."""

    def __init__(self, sim, ws, name='lab'):
        self.sim = sim
        self.ws = ws
        self.vc = vcenter(ws, sim.url, name)
        self.conf = ws.write_config([self.vc])

    def config(self, extra, name='extra.conf'):
        """Another configuration of the same vCenter and database, with extra appended."""
        return self.ws.write_config([self.vc], extra, name=name)

    def check(self, *extra, conf=None):
        """`vslint check --format json --fail-on never` (plus extra), which must exit 0: the
        findings."""
        res = run_ok('check', '-c', conf or self.conf, '--format', 'json', '--fail-on', 'never',
                     *extra)
        return json.loads(res.stdout)['findings']

    def inventory(self):
        """`vslint inventory --format json`: the stored inventory."""
        return json.loads(run_ok('inventory', '-c', self.conf, '--format', 'json').stdout)

    def copy(self, ws):
        """The same vCenter over a copy of this estate's database in ws, for a test that writes
        to it (another configuration's `check --offline` records history)."""
        src, dst = sqlite3.connect(self.ws.db), sqlite3.connect(ws.db)
        try:
            src.backup(dst)
        finally:
            src.close()
            dst.close()
        return Estate(self.sim, ws, self.vc['name'])

    def check_with(self, ws, thresholds):
        """The findings of `check --offline` over a copy of this estate's database in ws (no
        second poll), with a [check ID] section for each of thresholds ({check ID: {key:
        value}})."""
        est = self.copy(ws)
        lines = ['']
        for check, values in thresholds.items():
            lines += ['[check %s]' % check] + ['%s = %s' % kv for kv in values.items()] + ['']
        return est.check('--offline', conf=est.config('\n'.join(lines)))


class VimClient:
    """A minimal SOAP client for tests that change the simulated estate the way an admin
    would (e.g. delete a VM's snapshots), independent of vslint's own client."""

    ENV = ('<?xml version="1.0" encoding="UTF-8"?><soapenv:Envelope '
           'xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/" '
           'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns="urn:vim25">'
           '<soapenv:Body>%s</soapenv:Body></soapenv:Envelope>')

    def __init__(self, url, user=USER, password=PASSWORD):
        import http.cookiejar
        import ssl
        import urllib.request
        self.url = url
        ctx = ssl.create_default_context()
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
        self.opener = urllib.request.build_opener(
            urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()),
            urllib.request.HTTPSHandler(context=ctx))
        self.call('<Login><_this type="SessionManager">SessionManager</_this>'
                  '<userName>%s</userName><password>%s</password></Login>' % (user, password))

    def call(self, body):
        import urllib.error
        import urllib.request
        req = urllib.request.Request(self.url, data=(self.ENV % body).encode(),
                                     headers={'Content-Type': 'text/xml; charset=utf-8',
                                              'SOAPAction': '"urn:vim25/6.5"'})
        try:
            return self.opener.open(req, timeout=60).read().decode()
        except urllib.error.HTTPError as e:
            raise RuntimeError('SOAP fault: ' + e.read().decode()[:2000])

    def wait_task(self, task):
        import re
        import time
        for _ in range(100):
            resp = self.call('<RetrievePropertiesEx><_this type="PropertyCollector">'
                             'propertyCollector</_this><specSet><propSet><type>Task</type>'
                             '<pathSet>info.state</pathSet></propSet><objectSet>'
                             '<obj type="Task">%s</obj></objectSet></specSet><options/>'
                             '</RetrievePropertiesEx>' % task)
            state = re.search(r'<val[^>]*>(\w+)</val>', resp)
            if state and state.group(1) in ('success', 'error'):
                return state.group(1)
            time.sleep(0.1)
        return 'timeout'

    def remove_all_snapshots(self, vm_moref):
        import re
        resp = self.call('<RemoveAllSnapshots_Task><_this type="VirtualMachine">%s</_this>'
                         '</RemoveAllSnapshots_Task>' % vm_moref)
        task = re.search(r'<returnval type="Task">([^<]+)<', resp).group(1)
        return self.wait_task(task)

    def esxcli(self, host_moref, cmd):
        """Runs one esxcli command (esxcli_ref.parse_command's {'cmd', 'args'}) on a host
        through vCenter, as govc host.esxcli and PowerCLI's Get-EsxCli do:
        RetrieveManagedMethodExecuter on the host, then ExecuteSoap with the command's moid and
        method and one argument per option, named without dashes, its value
        "<name>VALUE</name>". Returns the answer's response document; raises RuntimeError with
        esxcli's message when the command failed."""
        import re
        from xml.sax.saxutils import escape
        resp = self.call('<RetrieveManagedMethodExecuter><_this type="HostSystem">%s</_this>'
                         '</RetrieveManagedMethodExecuter>' % escape(host_moref))
        mme = re.search(r'<returnval type="ReflectManagedMethodExecuter">([^<]+)<', resp).group(1)
        ns = cmd['cmd'][:-1]
        args = ''
        for opt, value in cmd['args'].items():
            name = opt.replace('-', '')
            value = 'true' if value is True else value
            args += '<argument><name>%s</name><val>%s</val></argument>' % (
                name, escape('<%s>%s</%s>' % (name, escape(value), name)))
        resp = self.call(
            '<ExecuteSoap><_this type="ReflectManagedMethodExecuter">%s</_this>'
            '<moid>ha-cli-handler-%s</moid><version>urn:vim25/5.0</version>'
            '<method>vim.EsxCLI.%s</method>%s</ExecuteSoap>'
            % (escape(mme), '-'.join(ns), '.'.join(cmd['cmd']), args))
        fault = re.search(r'<faultMsg>([^<]*)</faultMsg>', resp)
        if fault:
            raise RuntimeError('esxcli %s: %s' % (' '.join(cmd['cmd']), fault.group(1)))
        m = re.search(r'<response>([^<]*)</response>', resp)
        return m.group(1) if m else ''


def inventory_counts(inv):
    """How many objects of each kind (the names of the simulators' truth "counts") one
    vCenter's stored inventory (`vslint inventory --format json`) holds."""
    hosts, vms = inv['hosts'], inv['vms']
    return {
        'datastore': len(inv['datastores']),
        'storage_pod': len(inv['storage_pods']),
        'vm': len(vms),
        'host': len(hosts),
        'dvswitch': len(inv['dvswitches']),
        'iscsi_hba': sum(len(h['iscsi_hbas']) for h in hosts),
        'lun': sum(len(h['luns']) for h in hosts),
        'lun_path': sum(len(l['paths']) for h in hosts for l in h['luns']),
        'vnic': sum(len(h['vnics']) for h in hosts),
        'vdisk': sum(len(v['disks']) for v in vms),
        'snapshot': sum(len(v['snapshots']) for v in vms),
    }


def display_name(x):
    """A finding's object as a human names it: a part of a host (a LUN, a vmknic, an adapter,
    which has no moref of its own) is "HOST PART"."""
    host = x.get('host')
    if host and not x['object'].get('moref'):
        return '%s %s' % (host['name'], x['object']['name'])
    return x['object']['name']


def of(findings, check):
    """The findings of one check, by display_name()."""
    return {display_name(x): x for x in findings if x['check'] == check}


def finding(findings, check, name):
    """The finding of check on the object name, which must be there."""
    x = of(findings, check).get(name)
    assert x is not None, '%s not flagged by %s' % (name, check)
    return x


def silent(findings, check, name):
    """Asserts that check did not flag the object name (a compliant twin)."""
    x = of(findings, check).get(name)
    assert x is None, 'compliant %s flagged: %s' % (name, x['message'])


def evidence_has(findings, check, name, want):
    """Asserts that the evidence of check's finding on name holds want's keys and values."""
    e = finding(findings, check, name)['evidence']
    assert {k: e.get(k) for k in want} == want


def rows_of(table):
    """The rows of a {check: {object name: want}} table as (check, name, want), or of a
    {check: [object names]} table as (check, name): for pytest.mark.parametrize."""
    return [(check, name, v[name]) if isinstance(v, dict) else (check, name)
            for check, v in table.items() for name in v]


def ids_of(rows):
    """"check:object" names of rows_of()'s rows, so a failing case names what it is about."""
    return ['%s:%s' % r[:2] for r in rows]
