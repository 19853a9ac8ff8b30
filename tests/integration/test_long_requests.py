"""Long requests (placement, the gate, the plan) of a running `vslint serve` run on threads of
vslint's own while their connections wait (api/work.c), not on libmicrohttpd's four, so that
every other connection is served meanwhile: summaries and /metrics are answered while
placements run, a large answer read slowly arrives whole, a client that leaves mid-placement
costs nothing, SIGTERM with placements in flight answers them and exits 0, and more than the
queue holds are answered 503 with Retry-After.

A placement on the small `gate` estate takes milliseconds: the test build (meson -Dtest_hooks)
makes it take longer with VSLINT_DEBUG_HANDLER_DELAY_MS, only for the path named in
VSLINT_DEBUG_HANDLER_DELAY_PATH (every handler's, in a build before that variable)."""
import http.client
import json
import os
import signal
import socket
import threading
import time

import pytest

from apilib import serving
from simlib import Sim, vcenter, vslint

PLACEMENT = '/api/v1/placement?disks_gb=12&limit=5'


@pytest.fixture(scope='module')
def sim():
    with Sim('gate') as s:
        yield s


@pytest.fixture
def slow_placements(monkeypatch):
    """slow_placements(ms): placements take ms more in the daemons started after it."""
    def set_delay(ms):
        monkeypatch.setenv('VSLINT_DEBUG_HANDLER_DELAY_MS', str(ms))
        monkeypatch.setenv('VSLINT_DEBUG_HANDLER_DELAY_PATH', '/api/v1/placement')
    return set_delay


class Asked:
    """One request on its own connection, on a thread: status, headers, the JSON body (or the
    exception that cut it short) and when the answer was whole (time.monotonic())."""

    def __init__(self, port, path, method='GET', body=None, source='127.0.0.1'):
        self.status = self.headers = self.json = self.error = self.done = None
        self.thread = threading.Thread(target=self._run, args=(port, path, method, body, source))
        self.thread.start()

    def _run(self, port, path, method, body, source):
        # source: the client's address (any of 127.0.0.0/8 on Linux), for the per-address share
        c = http.client.HTTPConnection('127.0.0.1', port, timeout=60, source_address=(source, 0))
        try:
            c.request(method, path, body=body, headers={'Connection': 'close'})
            r = c.getresponse()
            data = r.read()
            self.status, self.headers = r.status, dict(r.getheaders())
            self.json = json.loads(data)
        except Exception as e:  # noqa: BLE001 (the test reports what cut it)
            self.error = e
        finally:
            self.done = time.monotonic()
            c.close()

    def wait(self, timeout=60):
        self.thread.join(timeout)
        assert not self.thread.is_alive(), 'no answer within %d s' % timeout
        return self


def ask(port, path):
    return Asked(port, path).wait()


def ask_and_leave(port, n, after):
    """n clients each send a placement and close their connection after seconds."""
    gone = []
    for _ in range(n):
        s = socket.create_connection(('127.0.0.1', port))
        s.sendall(('GET %s HTTP/1.1\r\nHost: x\r\n\r\n' % PLACEMENT).encode())
        gone.append(s)
    time.sleep(after)
    for s in gone:
        s.close()


def placed(a):
    """Whether a is a whole placement answer."""
    return a.error is None and a.status == 200 and 'candidates' in a.json


def test_summary_and_metrics_answered_while_placements_run(sim, workspace, slow_placements):
    """Six placements of 5 s each are in flight (more than libmicrohttpd's four threads): six
    summaries and /metrics, each on its own connection, are all answered before the first
    placement is (before, those landing on a thread running a placement waited for it). The
    placements are answered whole although they take longer than `timeout` (3 s): a suspended
    connection is not idle."""
    slow_placements(5000)
    with serving(workspace, [vcenter(workspace, sim.url, 'lab', interval=3600)],
                 extra='timeout = 3\n') as srv:
        placements = [Asked(srv.port, PLACEMENT) for _ in range(6)]
        time.sleep(0.5)
        others = []
        for p in ['/api/v1/summary', '/metrics'] * 3:
            c = http.client.HTTPConnection('127.0.0.1', srv.port, timeout=60)
            c.request('GET', p)
            r = c.getresponse()
            body = r.read()
            others.append((p, r.status, body, time.monotonic()))
            c.close()
        for a in placements:
            a.wait()
        first_placement = min(a.done for a in placements)
        for p, status, body, done in others:
            assert status == 200, (p, body[:200])
            assert done < first_placement, \
                '%s answered %.1f s after the first placement' % (p, done - first_placement)
        assert b'vslint_http_long_requests' in others[1][2], others[1][2][-2000:]
        assert all(placed(a) for a in placements), [(a.status, a.error) for a in placements]


def read_answers(s, buf, n, chunk, pause):
    """n HTTP/1.1 answers with Content-Length, buf (bytes read already) and then read from s,
    chunk bytes at a time with pause seconds between reads: [(status, body)], shorter when the
    server closed first."""
    out = []
    while len(out) < n:
        head_end = buf.find(b'\r\n\r\n')
        if head_end >= 0:
            head = buf[:head_end].decode('latin1').split('\r\n')
            length = [int(l.split(':', 1)[1]) for l in head
                      if l.lower().startswith('content-length:')]
            assert length, head
            if len(buf) >= head_end + 4 + length[0]:
                out.append((int(head[0].split()[1]), buf[head_end + 4:head_end + 4 + length[0]]))
                buf = buf[head_end + 4 + length[0]:]
                continue
        try:
            d = s.recv(chunk)
        except (ConnectionResetError, socket.timeout):
            d = b''
        if not d:
            break
        buf += d
        time.sleep(pause)
    return out


def test_large_answer_read_slowly_arrives_whole_while_placements_run(workspace,
                                                                      slow_placements):
    """A client reads five inventory pages of 300 KB each (1.5 MB, asked at once on one
    connection) at about 300 KB/s while eight placements of 5 s run: every byte arrives. Before,
    the page's libmicrohttpd thread ran a placement meanwhile, the answer stalled for longer
    than `timeout` (3 s) and the connection was cut mid-answer."""
    slow_placements(5000)
    with Sim('scale:3000') as big, \
            serving(workspace, [vcenter(workspace, big.url, 'lab', interval=3600)],
                    extra='timeout = 3\n') as srv:
        want = srv.get('/api/v1/inventory/vms?limit=1000')
        assert want.status == 200 and len(want.body) > 250000, len(want.body)
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8192)
        s.connect(('127.0.0.1', srv.port))
        s.settimeout(30)
        req = b'GET /api/v1/inventory/vms?limit=1000 HTTP/1.1\r\nHost: x\r\n\r\n'
        s.sendall(req * 4 + req.replace(b'\r\n\r\n', b'\r\nConnection: close\r\n\r\n'))
        begun = s.recv(16384)  # the first answer has begun
        placements = [Asked(srv.port, PLACEMENT) for _ in range(8)]
        try:
            answers = read_answers(s, begun, 5, 16384, 0.05)
        finally:
            s.close()
        assert len(answers) == 5, '%d whole answers of 5' % len(answers)
        for status, body in answers:
            assert status == 200 and json.loads(body) == json.loads(want.body)
        for a in placements:
            a.wait()
        assert all(placed(a) or a.status == 503 for a in placements), \
            [(a.status, a.error) for a in placements]


def sockets(pid):
    """The sockets pid holds (its databases, opened by each thread on first use, are not)."""
    fds = '/proc/%d/fd' % pid
    n = 0
    for fd in os.listdir(fds):
        try:
            n += os.readlink(os.path.join(fds, fd)).startswith('socket:')
        except FileNotFoundError:
            pass
    return n


def test_client_gone_mid_placement_leaves_the_daemon_healthy(sim, workspace, slow_placements):
    """One client asks a placement (3 s) and waits; four more ask one and leave half a second
    in. A summary asked then is answered before the waiting client's placement (before, it
    waited behind the abandoned placements on libmicrohttpd's threads), that placement and the
    next are answered whole, and once the abandoned ones are done the daemon holds no more
    sockets than before them."""
    slow_placements(3000)
    with serving(workspace, [vcenter(workspace, sim.url, 'lab', interval=3600)],
                 extra='timeout = 3\n') as srv:
        pid = srv.proc.pid
        before = sockets(pid)
        waiting = Asked(srv.port, PLACEMENT)
        time.sleep(0.1)
        ask_and_leave(srv.port, 4, 0.5)
        summary = ask(srv.port, '/api/v1/summary')
        waiting.wait()
        assert summary.status == 200, (summary.status, summary.error)
        assert summary.done < waiting.done, \
            'the summary came %.1f s after the placement' % (summary.done - waiting.done)
        assert placed(waiting), (waiting.status, waiting.error, waiting.json)
        deadline = time.time() + 20
        while sockets(pid) > before and time.time() < deadline:
            time.sleep(0.2)
        assert sockets(pid) <= before, (sockets(pid), before)
        assert placed(ask(srv.port, PLACEMENT))
        assert 'panic' not in srv.logs().lower(), srv.logs()[-2000:]


def test_sigterm_with_placements_in_flight_answers_them_and_exits_0(sim, workspace,
                                                                    slow_placements):
    """Eight placements of 3 s are in flight (two running, six waiting) when SIGTERM comes:
    each client gets a whole answer, a placement or 503 "stopping" with Retry-After, and the
    daemon exits 0 well within the 30 s grace. Before, the requests waiting behind a running
    one on libmicrohttpd's threads were dropped without an answer."""
    slow_placements(3000)
    with serving(workspace, [vcenter(workspace, sim.url, 'lab', interval=3600)],
                 extra='max_connections_per_address = 64\n') as srv:
        placements = [Asked(srv.port, PLACEMENT) for _ in range(8)]
        time.sleep(0.7)
        t0 = time.monotonic()
        srv.proc.send_signal(signal.SIGTERM)
        rc = srv.proc.wait(timeout=40)
        took = time.monotonic() - t0
        for a in placements:
            a.wait()
        assert rc == 0, srv.logs()[-2000:]
        assert took < 15, 'stopped in %.1f s' % took
        for a in placements:
            assert a.error is None, [(a.status, a.error) for a in placements]
            assert placed(a) or (a.status == 503 and a.json['error']['code'] == 'stopping' and
                                 a.headers.get('Retry-After') == '2'), (a.status, a.json)
        assert sum(placed(a) for a in placements) >= 2


def test_full_queue_answers_503_with_retry_after(sim, workspace, slow_placements):
    """22 placements of 2 s at once, from two addresses (each may hold half the queue): two
    run, sixteen wait, and the four beyond get 503 "busy" with Retry-After at once, before any
    placement is answered. Before, all 22 waited on libmicrohttpd's threads and the daemon
    never said it was full."""
    slow_placements(2000)
    with serving(workspace, [vcenter(workspace, sim.url, 'lab', interval=3600)],
                 extra='max_connections_per_address = 64\n') as srv:
        placements = []
        for i in range(22):
            placements.append(Asked(srv.port, PLACEMENT, source='127.0.0.%d' % (2 + i % 2)))
            time.sleep(0.01)
        for a in placements:
            a.wait()
        busy = [a for a in placements if a.status == 503]
        done = [a for a in placements if placed(a)]
        assert len(busy) == 4 and len(done) == 18, [(a.status, a.error) for a in placements]
        for a in busy:
            assert a.json['error']['code'] == 'busy', a.json
            assert a.headers.get('Retry-After') == '2', a.headers
            assert a.done < min(d.done for d in done)
        m = srv.get('/metrics').body
        assert 'vslint_http_long_requests_refused_total 4' in m, m[-2000:]


def test_clients_that_left_do_not_hold_the_queue(sim, workspace, slow_placements):
    """Eight clients each ask a placement (3 s) and close within 0.3 s: two run (a running
    handler is not cut), and the six that waited are skipped once a thread is free, counted in
    /metrics, so a live client asking then is answered after the running two and its own, not
    after all eight. Before, every abandoned placement ran to its end (the reviewer's live
    placement came after 14.2 s)."""
    slow_placements(3000)
    with serving(workspace, [vcenter(workspace, sim.url, 'lab', interval=3600)],
                 extra='max_connections_per_address = 64\n') as srv:
        ask_and_leave(srv.port, 8, 0.3)
        time.sleep(0.2)
        t0 = time.monotonic()
        live = Asked(srv.port, PLACEMENT).wait()
        took = live.done - t0
        assert placed(live), (live.status, live.error, live.json)
        m = srv.get('/metrics').body
        assert 'vslint_http_long_requests_abandoned_total 6\n' in m, m[-2000:]
        assert 'vslint_http_long_requests{state="waiting"} 0\n' in m, m[-2000:]
        # Behind the eight it would come after four rounds of two and its own (15 s); behind
        # the two that ran, after about 6 s.
        assert took < 10, 'the live placement came after %.1f s' % took


def test_gate_cli_waits_while_the_queue_is_full(sim, workspace, slow_placements):
    """20 placements of 1.5 s from two other addresses fill both threads and the queue; `vslint gate --server` asked
    then is answered 503 busy with Retry-After, says on stderr that it waits, tries again and
    gives the gate's answer once the queue has room. Before, it exited 2 at the first 503."""
    slow_placements(1500)
    with serving(workspace, [vcenter(workspace, sim.url, 'lab', interval=3600)],
                 extra='max_connections_per_address = 64\n') as srv:
        placements = []
        for i in range(20):  # two addresses: each may hold half the queue
            placements.append(Asked(srv.port, PLACEMENT, source='127.0.0.%d' % (2 + i % 2)))
            time.sleep(0.01)
        time.sleep(0.3)
        res = vslint('gate', '--server', 'http://127.0.0.1:%d' % srv.port,
                     '--datastore', 'ds-gate-free', '--disk-gb', '12', timeout=120)
        for a in placements:
            a.wait()
        assert res.returncode == 0, (res.returncode, res.stderr)
        assert ('/api/v1/gate answered 503: 16 placement, gate or plan requests wait already; '
                'try again in 2 s; trying again in 2 s (try 2 of 5)') in res.stderr, res.stderr
        assert sum(placed(a) for a in placements) == 18, [(a.status, a.error) for a in placements]


def test_one_address_holds_at_most_half_the_queue(sim, workspace, slow_placements):
    """12 placements of 2 s from one address: two run, eight wait (half the queue), the two
    beyond get 503 "busy" with Retry-After naming the address's share, and a placement from
    another address asked then still gets a place and its answer. Before, one address could
    fill the whole queue (max_connections_per_address = the queue) and refuse everyone."""
    slow_placements(2000)
    with serving(workspace, [vcenter(workspace, sim.url, 'lab', interval=3600)],
                 extra='max_connections_per_address = 64\n') as srv:
        placements = []
        for _ in range(12):
            placements.append(Asked(srv.port, PLACEMENT, source='127.0.0.2'))
            time.sleep(0.01)
        time.sleep(0.3)
        other = Asked(srv.port, PLACEMENT, source='127.0.0.3')
        for a in placements:
            a.wait()
        other.wait()
        busy = [a for a in placements if a.status == 503]
        assert len(busy) == 2 and sum(placed(a) for a in placements) == 10, \
            [(a.status, a.error) for a in placements]
        for a in busy:
            assert a.json['error'] == {
                'code': 'busy',
                'message': '8 placement, gate or plan requests from this address wait already '
                           '(half of the queue); try again in 2 s'}, a.json
            assert a.headers.get('Retry-After') == '2', a.headers
        assert placed(other), (other.status, other.error, other.json)
