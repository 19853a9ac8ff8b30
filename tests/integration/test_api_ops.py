#!/usr/bin/env python3
"""`vslint serve` as an operator sees it: /readyz stays 503 until every vCenter has finished a
first poll (a vCenter that never answers counts once its poll times out), SIGTERM during a poll
in flight still exits 0; two vCenters are polled and reported side by side; a vCenter whose
simulator is stopped turns stale with the error while its findings keep being served, backs
off, and recovers when a simulator comes back on the same port; HTTPS with auth = all."""
import os
import socket
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(__file__))
from simlib import Sim, Workspace, Failures, USER  # noqa: E402
from apilib import Serve, TOKEN, free_port, server_section, write_token  # noqa: E402


class Silent:
    """A TCP server that accepts connections and never answers: a hung vCenter."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(('127.0.0.1', 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.conns = []
        self.stopped = False
        threading.Thread(target=self.run, daemon=True).start()

    def run(self):
        while not self.stopped:
            try:
                c, _ = self.sock.accept()
                self.conns.append(c)
            except OSError:
                return

    def close(self):
        self.stopped = True
        self.sock.close()
        for c in self.conns:
            c.close()


def metric(srv, name):
    for line in srv.get('/metrics').body.splitlines():
        if line.startswith(name + ' '):
            return float(line.rsplit(' ', 1)[1])
    return None


def readiness(ws, pw, token_file, f):
    silent = Silent()
    port = free_port()
    try:
        with Sim('clean') as sim:
            conf = ws.write_config(
                [{'name': 'a', 'url': sim.url, 'user': USER, 'password_file': pw},
                 {'name': 'hung', 'url': 'http://127.0.0.1:%d/sdk' % silent.port, 'user': USER,
                  'password_file': pw, 'timeout': 3}],
                extra=server_section(port, token_file))
            srv = Serve(conf, port, ws.dir)
            srv.wait_up()
            a = srv.get('/readyz')
            f.eq('/readyz before the hung vCenter answered: 503', a.status, 503)
            f.true('503 names the vCenter waited for: ' + a.body,
                   a.status == 503 and 'hung' in a.json()['error']['message'])
            f.eq('/healthz meanwhile', srv.get('/healthz').status, 200)
            t0 = time.time()
            srv.wait_ready(timeout=30)
            f.true('ready after the hung poll timed out (%.1f s)' % (time.time() - t0),
                   time.time() - t0 < 20)
            hung = srv.vcenter('hung')
            f.eq('hung: stale, polled once', (hung['stale'], hung['polled_once']), (True, True))
            f.true('hung: error says why: %r' % hung['error'], bool(hung['error']))
            f.eq('hung: first retry after its interval', hung['backoff_s'], 300)
            # SIGTERM while a poll is in flight: the poll ends (at most its timeout), exit 0.
            srv.post('/api/v1/polls?vcenter=hung', token=TOKEN)
            deadline = time.time() + 5
            while time.time() < deadline and not srv.vcenter('hung')['polling']:
                time.sleep(0.05)
            f.true('hung is being polled', srv.vcenter('hung')['polling'])
            t0 = time.time()
            rc = srv.stop()
            f.eq('SIGTERM during a poll: exit 0', rc, 0)
            f.true('... within the poll timeout (%.1f s)' % (time.time() - t0), time.time() - t0 < 15)
    finally:
        silent.close()


def two_vcenters(ws, pw, token_file, f):
    port = free_port()
    sim_port = free_port()
    sim_a = Sim('violations', extra=('-listen', '127.0.0.1:%d' % sim_port))
    sim_b = Sim('clean')
    srv = None
    try:
        conf = ws.write_config(
            [{'name': 'a', 'url': sim_a.url, 'user': USER, 'password_file': pw, 'interval': 10},
             {'name': 'b', 'url': sim_b.url, 'user': USER, 'password_file': pw}],
            extra=server_section(port, token_file))
        srv = Serve(conf, port, ws.dir)
        srv.wait_ready()
        s = srv.summary()
        f.eq('summary lists both vCenters', [v['name'] for v in s['vcenters']], ['a', 'b'])
        f.true('both polled, fresh', all(v['polled_once'] and not v['stale'] and v['last_poll']['ok']
                                         for v in s['vcenters']))
        ta = srv.get('/api/v1/findings?vcenter=a').json()['total']
        tb = srv.get('/api/v1/findings?vcenter=b').json()['total']
        total = srv.get('/api/v1/findings').json()['total']
        f.true('a (violations) has findings', ta > 10)
        f.eq('b (clean) has none', tb, 0)
        f.eq('findings: a + b = all', ta + tb, total)
        f.true('every finding of vcenter=a is a\'s',
               all(x['vcenter'] == 'a' for x in srv.get('/api/v1/findings?vcenter=a&limit=1000').json()['findings']))
        inv_a = srv.get('/api/v1/inventory/datastores?vcenter=a').json()['total']
        inv_b = srv.get('/api/v1/inventory/datastores?vcenter=b').json()['total']
        inv = srv.get('/api/v1/inventory/datastores').json()['total']
        f.eq('datastores: a + b = all', inv_a + inv_b, inv)
        f.eq('summary?vcenter=b lists only b', [v['name'] for v in srv.get('/api/v1/summary?vcenter=b').json()['vcenters']], ['b'])
        a = srv.post('/api/v1/polls', token=TOKEN)
        f.eq('POST /polls queues both', (a.status, a.json()), (202, {'queued': ['a', 'b']}))
        # Let those polls finish before a's simulator goes: a fresh, successful poll of a.
        before = srv.poll_and_wait('a')
        f.eq('a polled fine before the outage', before['last_poll']['ok'], True)

        # a's simulator goes away.
        sim_a.stop()
        va = srv.poll_and_wait('a')
        f.eq('a stale after a failed poll', (va['stale'], va['last_poll']['ok']), (True, False))
        f.true('a error names the cause: %r' % va['error'], bool(va['error']))
        f.eq('a last_success unchanged', va['last_success'], before['last_success'])
        f.eq('a first backoff = its interval', va['backoff_s'], 10)
        f.eq('a findings still served', srv.get('/api/v1/findings?vcenter=a').json()['total'], ta)
        f.eq('b unaffected', srv.vcenter('b')['stale'], False)
        f.eq('metric poll_success a = 0', metric(srv, 'vslint_poll_success{vcenter="a"}'), 0.0)
        f.eq('metric poll_stale a = 1', metric(srv, 'vslint_poll_stale{vcenter="a"}'), 1.0)
        f.eq('metric poll_success b = 1', metric(srv, 'vslint_poll_success{vcenter="b"}'), 1.0)
        va = srv.poll_and_wait('a')
        f.eq('a second failure: backoff doubles', (va['backoff_s'], va['consecutive_failures']), (20, 2))
        f.true('the failure is logged with the vCenter', 'vcenter a: poll failed' in srv.logs())

        # A simulator comes back on the same port.
        sim_a = Sim('violations', extra=('-listen', '127.0.0.1:%d' % sim_port))
        va = srv.poll_and_wait('a')
        f.eq('a recovered', (va['stale'], va['error'], va['backoff_s'], va['last_poll']['ok']),
             (False, None, 0, True))
        f.true('a last_success moved on', va['last_success'] > before['last_success'] or
               va['last_success'] == before['last_success'])
        f.eq('metric poll_success a = 1 again', metric(srv, 'vslint_poll_success{vcenter="a"}'), 1.0)
        f.true('recovery logged', 'vcenter a: polling again' in srv.logs())
        rc = srv.stop()
        srv = None
        f.eq('SIGTERM: exit 0', rc, 0)
    finally:
        if srv:
            srv.stop()
        sim_a.stop()
        sim_b.stop()


def tls_auth_all(ws, pw, token_file, f):
    port = free_port()
    cert, key = os.path.join(ws.dir, 'cert.pem'), os.path.join(ws.dir, 'key.pem')
    p = subprocess.run(['openssl', 'req', '-x509', '-newkey', 'ec', '-pkeyopt',
                        'ec_paramgen_curve:P-256', '-nodes', '-keyout', key, '-out', cert,
                        '-days', '2', '-subj', '/CN=127.0.0.1'], capture_output=True, text=True)
    f.eq('openssl made a certificate (%s)' % p.stderr[-300:], p.returncode, 0)
    with Sim('clean') as sim:
        extra = server_section(port, token_file, auth_all=True) + \
            'tls_cert = %s\ntls_key = %s\n' % (cert, key)
        conf = ws.write_config([{'name': 'a', 'url': sim.url, 'user': USER, 'password_file': pw}],
                               extra=extra)
        srv = Serve(conf, port, ws.dir, tls=True)
        try:
            srv.wait_ready(token=TOKEN)
            f.eq('https /healthz without a token', srv.get('/healthz').status, 200)
            for path in ('/readyz', '/api/v1/summary', '/metrics', '/api/v1/nothing'):
                a = srv.get(path)
                f.eq('auth = all: %s without a token' % path, a.status, 401)
            f.eq('auth = all: summary with the token', srv.get('/api/v1/summary', token=TOKEN).status, 200)
            f.eq('auth = all: wrong token', srv.get('/api/v1/summary', token='x' * 27).status, 401)
            plain = Serve.__new__(Serve)
            plain.base, plain.ctx, plain.record = 'http://127.0.0.1:%d' % port, None, None
            try:
                got = plain.get('/healthz').status
            except OSError as e:
                got = type(e).__name__
            f.true('plain HTTP to the HTTPS port does not answer 200 (got %s)' % got, got != 200)
            f.eq('https still answers', srv.get('/healthz').status, 200)
        finally:
            f.eq('TLS server SIGTERM: exit 0', srv.stop(), 0)


def main():
    f = Failures('api ops')
    ws = Workspace()
    try:
        pw = ws.password_file()
        token_file = write_token(ws)
        readiness(ws, pw, token_file, f)
        os.unlink(ws.db)
        two_vcenters(ws, pw, token_file, f)
        tls_auth_all(ws, pw, token_file, f)
    finally:
        ws.cleanup()
    f.finish()


if __name__ == '__main__':
    main()
