"""Hostile and broken clients over HTTPS, against the real `vslint serve` with a test
certificate, over raw sockets wrapped by Python's ssl module (so the test controls the bytes
inside TLS): every malformed request gets one JSON answer at once, on a new connection and on a
kept-alive one; a head trickled after the handshake is answered 408 at header_timeout, a
handshake that never finishes is closed then; HTTPS connections count against the per-address
limit (a held connection, and a kept-alive one after its answer), and another address is
served meanwhile; real answers (gzip, a body POSTed, a findings page and /metrics larger than a
TLS record) arrive whole."""
import gzip
import json
import socket
import ssl
import time

import pytest

from apilib import self_signed_cert, serving
from simlib import vcenter
# serve is a pytest fixture: imported, it is this module's too.
from test_hostile_clients import MALFORMED, check_error, parse, serve  # noqa: F401
from test_hostile_clients import served_beside_the_flood

CTX = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
CTX.check_hostname = False
CTX.verify_mode = ssl.CERT_NONE


def tls_connect(port, source='127.0.0.1', timeout=5):
    raw = socket.socket()
    raw.settimeout(timeout)
    raw.bind((source, 0))
    raw.connect(('127.0.0.1', port))
    return CTX.wrap_socket(raw, server_hostname='localhost')


def read_all(s):
    """What arrives until the server closes; (bytes, how it ended)."""
    out = b''
    try:
        while True:
            d = s.recv(65536)
            if not d:
                return out, 'closed'
            out += d
    except socket.timeout:
        return out, 'timeout'
    except (ssl.SSLError, ConnectionResetError, BrokenPipeError):
        return out, 'reset'


def tls_exchange(port, data, timeout=5, source='127.0.0.1'):
    """Sends data over a new TLS connection, reads until the server closes; (answer bytes,
    seconds, how it ended)."""
    s = tls_connect(port, source, timeout)
    t0 = time.time()
    try:
        s.sendall(data)
        out, end = read_all(s)
    finally:
        s.close()
    return out, time.time() - t0, end


def read_answer(s):
    """One answer on a kept-alive connection: (status, headers, body)."""
    buf = b''
    while b'\r\n\r\n' not in buf:
        d = s.recv(65536)
        assert d, 'closed before an answer: %r' % buf
        buf += d
    status, headers, body, _ = parse(buf)
    want = int(headers.get('content-length', 0))
    while len(body) < want:
        d = s.recv(65536)
        assert d, 'closed %d bytes into a body of %d' % (len(body), want)
        body += d
    assert len(body) == want, 'more than the answer arrived: %r' % body[want:want + 100]
    return status, headers, body


GOOD = b'GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n'


def kept_alive_then(port, data, timeout=5):
    """On a new connection, GOOD is answered 200 and the connection kept open; then data is
    sent: (what arrives until the server closes, how it ended, seconds since data was sent)."""
    s = tls_connect(port, timeout=timeout)
    try:
        s.sendall(GOOD)
        status, headers, _ = read_answer(s)
        assert status == 200 and headers.get('connection') != 'close', (status, headers)
        t0 = time.time()
        s.sendall(data)
        out, end = read_all(s)
    finally:
        s.close()
    return out, end, time.time() - t0


def test_malformed_https_requests_get_one_json_answer_at_once(serve):
    srv = serve(tls=True)
    for what, req, want_status, want_code in MALFORMED:
        out, secs, _ = tls_exchange(srv.port, req)
        check_error(what, out, want_status, want_code)
        assert secs < 2, '%s: answered after %.1f s' % (what, secs)
    # A well-formed request is answered and its connection stays open for the next one.
    s = tls_connect(srv.port)
    try:
        for _ in range(3):
            s.sendall(GOOD)
            status, headers, body = read_answer(s)
            assert (status, json.loads(body)) == (200, {'status': 'ok'})
            assert headers.get('connection') != 'close', headers
    finally:
        s.close()
    logs = srv.logs()
    assert 'Content-Length is not a number of bytes' in logs
    assert '<html' not in logs and 'TCP_' not in logs, logs[-2000:]


def test_kept_alive_https_requests_are_each_checked(serve):
    srv = serve(tls=True)
    for what, req, want_status, want_code in MALFORMED:
        if len(req) > 16384:
            continue  # huge heads: the same path as on a new connection, above
        out, end, secs = kept_alive_then(srv.port, req)
        check_error('kept alive, ' + what, out, want_status, want_code)
        assert end == 'closed' and secs < 2, (what, end)
    # Pipelined: the good request's answer first, then the refusal, one head each.
    out, _, _ = tls_exchange(srv.port, GOOD + b'GET /healthz%00 HTTP/1.1\r\nHost: x\r\n\r\n')
    first, _, rest = out.partition(b'{"status":"ok"}')
    assert first.startswith(b'HTTP/1.1 200 ') and b'\r\nContent-Length: 15\r\n' in first, out
    check_error('pipelined %00', rest, 400, 'bad_request')
    # A good request followed by bytes that are not HTTP: answered, then closed.
    out, end, _ = kept_alive_then(srv.port, b'\x00\xff\xfe\x16\x03')
    assert out == b'' and end in ('closed', 'reset'), (out, end)


def test_binary_garbage_over_https_is_closed(serve):
    srv = serve(tls=True)
    for junk in (b'\x00\xff\xfe', bytes(range(256))):
        out, secs, end = tls_exchange(srv.port, junk)
        assert out == b'' and end in ('closed', 'reset') and secs < 2, (out, secs, end)


def test_slow_https_heads_and_handshakes_are_cut_at_header_timeout(serve):
    srv = serve('header_timeout = 2\ntimeout = 30\n', tls=True)
    # A head trickled a line every 0.3 s after the handshake: 408 in JSON over TLS.
    s = tls_connect(srv.port)
    s.settimeout(0.2)
    t0 = time.time()
    s.sendall(b'GET /healthz HTTP/1.1\r\nHost: x\r\n')
    out, end = b'', None
    while time.time() - t0 < 8 and end is None:
        try:
            s.sendall(b'X-Slow: 1\r\n')
            d = s.recv(65536)
            if not d:
                end = 'closed'
            out += d
        except socket.timeout:
            pass
        except (ssl.SSLError, OSError):
            end = 'reset'
        time.sleep(0.3)
    secs = time.time() - t0
    s.close()
    assert 1.5 < secs < 4.5, 'held %.1f s' % secs
    check_error('trickled head', out, 408, 'request_timeout')
    # A kept-alive connection whose next request never ends: closed header_timeout after
    # the previous answer.
    _, end, secs = kept_alive_then(srv.port, b'GET /healthz HTTP/1.1\r\n', timeout=8)
    assert end in ('closed', 'reset') and 1.5 < secs < 4.5, (end, secs)
    # TCP without a handshake, and half a ClientHello: closed at header_timeout, no answer.
    for first in (b'', b'\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03'):
        raw = socket.create_connection(('127.0.0.1', srv.port), timeout=8)
        try:
            t0 = time.time()
            raw.sendall(first)
            out = raw.recv(4096)
        except ConnectionResetError:
            out = b''
        finally:
            raw.close()
        assert out == b'' and 1.5 < time.time() - t0 < 4.5, (first, out, time.time() - t0)
    assert 'no TLS handshake within header_timeout' in srv.logs()


def handshake_ok(port, source='127.0.0.1'):
    try:
        s = tls_connect(port, source, timeout=3)
    except (ssl.SSLError, OSError):
        return None
    return s


def test_another_address_is_served_while_one_holds_https_connections(serve):
    srv = serve(tls=True)
    held = []
    try:
        # 100 connections from one address: the first 16 (max_connections_per_address) are
        # taken, each holding half a head; the others are closed before any handshake.
        refused = 0
        for _ in range(100):
            s = handshake_ok(srv.port)
            if s is None:
                refused += 1
                continue
            s.sendall(b'GET /healthz HTTP/1.1\r\n')
            held.append(s)
        assert (len(held), refused) == (16, 84)
        _, _, body, _ = served_beside_the_flood(srv, lambda source: tls_exchange(
            srv.port, b'GET /api/v1/summary HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n',
            source=source))
        assert json.loads(body)['score'] == 100, body[:300]
    finally:
        for s in held:
            s.close()


def test_kept_alive_https_connections_count_until_they_close(serve):
    srv = serve('max_connections_per_address = 3\nmax_connections = 5\n', tls=True)
    held = []
    try:
        # Three kept-alive connections, each answered once, are the address's three places.
        for _ in range(3):
            s = tls_connect(srv.port)
            s.sendall(GOOD)
            assert read_answer(s)[0] == 200
            held.append(s)
        assert handshake_ok(srv.port) is None, 'a 4th connection from 127.0.0.1 was taken'
        # Two more from another address fill max_connections; a third address gets no place.
        other = [tls_connect(srv.port, '127.0.0.2') for _ in range(2)]
        for s in other:
            s.sendall(GOOD)
            assert read_answer(s)[0] == 200
        assert handshake_ok(srv.port, '127.0.0.3') is None, 'a 6th connection was taken'
        for s in other:
            s.close()
        # Closed connections give their places back (the relay and libmicrohttpd count each
        # once): 127.0.0.3, then 127.0.0.1 again once its three are closed.
        deadline = time.time() + 3
        while True:
            s = handshake_ok(srv.port, '127.0.0.3')
            if s or time.time() > deadline:
                break
            time.sleep(0.1)
        assert s, 'closed connections kept their places'
        s.close()
        for s in held:
            s.close()
        held = []
        time.sleep(0.5)
        for _ in range(2):
            out, _, _ = tls_exchange(srv.port, GOOD.replace(b'\r\n\r\n', b'\r\nConnection: close'
                                                                        b'\r\n\r\n'))
            assert parse(out)[0] == 200, out[:300]
    finally:
        for s in held:
            s.close()


# ---- real answers over HTTPS ----------------------------------------------------------------

@pytest.fixture(scope='module')
def https(lab, violations_sim, module_workspace):
    """`vslint serve` over HTTPS on a copy of the polled violations estate."""
    ws = module_workspace
    lab.copy(ws)
    with serving(ws, [vcenter(ws, violations_sim.url, 'lab', interval=3600)],
                 tls=self_signed_cert(ws)) as srv:
        yield srv


def get_kept_alive(port, paths, headers=b''):
    """GETs each of paths on one kept-alive connection: [(status, headers, body)]."""
    s = tls_connect(port, timeout=10)
    try:
        got = []
        for p in paths:
            s.sendall(b'GET %s HTTP/1.1\r\nHost: localhost\r\n%s\r\n' % (p.encode(), headers))
            got.append(read_answer(s))
        return got
    finally:
        s.close()


def test_large_answers_arrive_whole_plain_and_gzip(https, lab):
    path = '/api/v1/findings?limit=1000'
    (st, h, plain), = get_kept_alive(https.port, [path])
    (gst, gh, packed), = get_kept_alive(https.port, [path], b'Accept-Encoding: gzip\r\n')
    assert st == gst == 200
    assert len(plain) > 16384, 'the findings page is no larger than one TLS record'
    assert gh.get('content-encoding') == 'gzip' and 'content-encoding' not in h, (h, gh)
    assert gzip.decompress(packed) == plain
    page = json.loads(plain)
    # The CLI's findings of the same estate (`vslint check`), not the server's.
    assert sorted(f['fingerprint'] for f in page['findings']) == \
        sorted(f['fingerprint'] for f in lab.findings)
    # /metrics, several times on one connection, each whole.
    answers = get_kept_alive(https.port, ['/metrics'] * 3 + ['/api/v1/summary'])
    for st, h, body in answers[:3]:
        assert st == 200 and h['content-type'].startswith('text/plain'), h
        text = body.decode()
        assert text.endswith('\n') and 'vslint_findings' in text, text[-300:]
    st, h, body = answers[3]
    assert st == 200 and json.loads(body)['findings']['total'] == len(lab.findings)


def test_post_with_a_body_over_https(https):
    name = 'no-such-datastore-' + 'x' * 400
    body = json.dumps({'datastore': name, 'disks_gb': [1] * 64}, indent=100).encode()
    assert len(body) > 4000
    s = tls_connect(https.port)
    try:
        # The head and the body in separate writes, the body in small pieces.
        s.sendall(b'POST /api/v1/gate HTTP/1.1\r\nHost: localhost\r\nContent-Type: '
                  b'application/json\r\nContent-Length: %d\r\n\r\n' % len(body))
        for i in range(0, len(body), 1000):
            s.sendall(body[i:i + 1000])
        st, h, answer = read_answer(s)
        # The same connection serves the next request.
        s.sendall(GOOD)
        assert read_answer(s)[0] == 200
    finally:
        s.close()
    assert h['content-type'] == 'application/json'
    assert st == 404 and name in json.loads(answer)['error']['message'], answer
