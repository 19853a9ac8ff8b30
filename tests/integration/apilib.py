"""Helpers for the HTTP API tests: start `vslint serve` on a free port, wait for /readyz, make
requests with urllib and (optionally) record every answer for the OpenAPI contract check.
Standard library only."""
import contextlib
import json
import os
import signal
import socket
import sqlite3
import subprocess
import time
import urllib.error
import urllib.request

from simlib import VSLINT

TOKEN = 'test-token-0123456789abcdef'
# What every writer of the daemon adds to a transaction that changes findings (db/changes.c).
COUNT_A_CHANGE = ("INSERT INTO data_changes (what, n) VALUES ('findings', 1)"
                  " ON CONFLICT (what) DO UPDATE SET n = n + 1")
# The waiver the API tests configure: ds-size-small is a lab tier.
WAIVER = ('\n[waiver]\ncheck = datastore-size\nobject = ds-size-small\n'
          'reason = lab tier\nexpires = 2099-12-31\n')


@contextlib.contextmanager
def behind_the_daemon(db):
    """A connection to a served database, to plant or remove rows by hand. What it commits
    on leaving counts a change, in the same transaction, as every writer of the daemon does:
    the API keeps its rendered answers until the content stamp moves (docs/design.md), so a
    row planted without that is seen only once a poll happens to change something."""
    con = sqlite3.connect(db)
    try:
        yield con
        con.execute(COUNT_A_CHANGE)
        con.commit()
    finally:
        con.close()


def free_port():
    s = socket.socket()
    s.bind(('127.0.0.1', 0))
    port = s.getsockname()[1]
    s.close()
    return port


def self_signed_cert(ws, cn='localhost'):
    """A fresh self-signed P-256 certificate for cn in the workspace, made by openssl, its key
    readable by its owner only: (cert, key) paths, for [server] tls_cert and tls_key."""
    cert, key = os.path.join(ws.dir, 'cert.pem'), os.path.join(ws.dir, 'key.pem')
    p = subprocess.run(['openssl', 'req', '-x509', '-newkey', 'ec', '-pkeyopt',
                        'ec_paramgen_curve:P-256', '-nodes', '-subj', '/CN=' + cn, '-days', '2',
                        '-keyout', key, '-out', cert], capture_output=True, text=True)
    assert p.returncode == 0, 'openssl made no certificate: ' + p.stderr[-300:]
    os.chmod(key, 0o600)
    return cert, key


def server_section(port, token_file=None, auth_all=False):
    lines = ['[server]', 'listen = 127.0.0.1:%d' % port]
    if token_file:
        lines.append('token_file = %s' % token_file)
    if auth_all:
        lines.append('auth = all')
    return '\n'.join(lines) + '\n'


def write_token(ws, token=TOKEN):
    path = os.path.join(ws.dir, 'token')
    with open(path, 'w') as f:
        f.write(token + '\n')
    os.chmod(path, 0o600)
    return path


class Answer:
    def __init__(self, status, headers, body):
        self.status = status
        self.headers = {k.lower(): v for k, v in headers.items()}
        self.body = body

    def json(self):
        return json.loads(self.body)


class Serve:
    """A running `vslint serve -c conf`; its stderr goes to a log file in the workspace."""

    def __init__(self, conf, port, workdir, record=None, tls=False):
        self.conf = conf
        self.port = port
        self.base = '%s://127.0.0.1:%d' % ('https' if tls else 'http', port)
        self.ctx = None
        if tls:
            import ssl
            self.ctx = ssl.create_default_context()
            self.ctx.check_hostname = False
            self.ctx.verify_mode = ssl.CERT_NONE
        self.log_path = os.path.join(workdir, 'serve-%d.log' % port)
        self.log = open(self.log_path, 'w')
        self.record = record  # a list that every answer is appended to, or None
        self.proc = subprocess.Popen([VSLINT, 'serve', '-c', conf], stdout=self.log,
                                     stderr=subprocess.STDOUT)

    def wait_up(self, timeout=30, token=None):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError('vslint serve exited %s: %s' % (self.proc.returncode,
                                                                   self.logs()[-2000:]))
            try:
                # Only once this server says it listens: a 200 before that can come from
                # another test's server that took the port free_port() found (this one then
                # exits, "address already in use", and a test would talk to the wrong server).
                if 'serving http' in self.logs() and \
                        self.get('/healthz', token=token).status == 200:
                    return
            except OSError:
                pass
            time.sleep(0.1)
        raise RuntimeError('vslint serve did not answer /healthz: ' + self.logs()[-2000:])

    def wait_ready(self, timeout=60, token=None):
        deadline = time.time() + timeout
        self.wait_up(timeout, token)
        while time.time() < deadline:
            if self.get('/readyz', token=token).status == 200:
                return
            time.sleep(0.1)
        raise RuntimeError('vslint serve not ready: ' + self.logs()[-2000:])

    def logs(self):
        if not self.log.closed:
            self.log.flush()
        with open(self.log_path) as f:
            return f.read()

    def request(self, method, path, token=None, headers=None, data=None):
        h = dict(headers or {})
        if token:
            h['Authorization'] = 'Bearer ' + token
        req = urllib.request.Request(self.base + path, method=method, headers=h, data=data)
        try:
            with urllib.request.urlopen(req, timeout=30, context=self.ctx) as r:
                a = Answer(r.status, dict(r.headers), r.read().decode())
        except urllib.error.HTTPError as e:
            a = Answer(e.code, dict(e.headers), e.read().decode())
        if self.record is not None:
            self.record.append({'method': method, 'path': path, 'headers': h,
                                'status': a.status, 'response_headers': a.headers,
                                'body': a.body})
        return a

    def get(self, path, **kw):
        return self.request('GET', path, **kw)

    def post(self, path, **kw):
        return self.request('POST', path, data=kw.pop('data', b''), **kw)

    def summary(self, token=None):
        return self.get('/api/v1/summary', token=token).json()

    def vcenter(self, name, token=None):
        """The summary's entry of a source: a vCenter, or an array (listed under "arrays")."""
        s = self.summary(token)
        for v in s['vcenters'] + s.get('arrays', []):
            if v['name'] == name:
                return v
        return None

    def poll_and_wait(self, name, token=TOKEN, timeout=60):
        """POST /polls for one vCenter and wait until a poll that started after it finished.
        Returns that vCenter's status."""
        # Times have second resolution: after a second's pause, a poll started at or after t0
        # can only be one this request caused.
        time.sleep(1.05)
        t0 = time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())
        a = self.post('/api/v1/polls?vcenter=' + name, token=token)
        if a.status != 202:
            raise RuntimeError('POST /polls: %s %s' % (a.status, a.body))
        deadline = time.time() + timeout
        while time.time() < deadline:
            v = self.vcenter(name, token)
            lp = v.get('last_poll') or {}
            if not v['polling'] and lp.get('started', '') >= t0:
                return v
            time.sleep(0.1)
        raise RuntimeError('no poll of %s finished: %s' % (name, self.logs()[-2000:]))

    def signal(self, sig):
        self.proc.send_signal(sig)

    def stop(self, timeout=40):
        """SIGTERM; returns the exit status."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                return 'killed after %d s' % timeout
        self.log.close()
        return self.proc.returncode


@contextlib.contextmanager
def serving(ws, vcenters, extra='', auth_all=False, tls=None, record=None, ready=True):
    """`vslint serve` of vcenters (sections for ws.write_config) with a token file on a free
    port, [server] tls_cert and tls_key from tls (a pair of paths) and extra appended. Yields
    the Serve once /readyz answers 200 (with ready=False, once /healthz does); SIGTERM after."""
    port = free_port()
    server = server_section(port, write_token(ws), auth_all=auth_all)
    if tls:
        server += 'tls_cert = %s\ntls_key = %s\n' % tls
    srv = Serve(ws.write_config(vcenters, extra=server + extra), port, ws.dir, record=record,
                tls=bool(tls))
    try:
        if ready:
            srv.wait_ready(token=TOKEN if auth_all else None)
        else:
            srv.wait_up()
        yield srv
    finally:
        srv.stop()


def until(fn, what, srv, timeout=20):
    """fn()'s first true value, asked every 0.2 s; after timeout seconds an AssertionError naming
    what, with the end of srv's log and, when the server has one (srv.sim), the simulator's.
    The default suits an incremental round: one waits at most 5 s, and a change is applied in the
    round that brings it."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        v = fn()
        if v:
            return v
        time.sleep(0.2)
    sim = getattr(srv, 'sim', None)
    raise AssertionError('timed out waiting for %s; log: %s%s' % (
        what, srv.logs()[-3000:], '\nsimulator: ' + sim.log()[-3000:] if sim else ''))
