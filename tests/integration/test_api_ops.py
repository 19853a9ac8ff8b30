"""`vslint serve` as an operator sees it: /readyz stays 503 until every vCenter has finished a
first poll (a vCenter that never answers counts once its poll times out), SIGTERM during a poll
in flight still exits 0; two vCenters are polled and reported side by side; a vCenter whose
simulator is stopped turns stale with the error while its findings keep being served, backs
off, and recovers when a simulator comes back on the same port; HTTPS with auth = all.
Each story is a chain of module fixtures, one per moment of it, that records what the server
answered then; the tests read those records."""
import socket
import threading
import time
from types import SimpleNamespace

import pytest

from apilib import TOKEN, Serve, free_port, self_signed_cert, serving
from simlib import Sim, vcenter


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


# ---- readiness: a vCenter that never answers ------------------------------------------------

@pytest.fixture(scope='module')
def hung(clean_sim, new_workspace):
    """Serving "a" (the clean estate) and "hung" (a silent port, timeout 3 s), just started:
    what /readyz and /healthz answer before the hung poll times out."""
    silent = Silent()
    ws = new_workspace()
    try:
        with serving(ws, [vcenter(ws, clean_sim.url, 'a'),
                          vcenter(ws, 'http://127.0.0.1:%d/sdk' % silent.port, 'hung',
                                  timeout=3)], ready=False) as srv:
            srv.early = SimpleNamespace(readyz=srv.get('/readyz'), healthz=srv.get('/healthz'))
            yield srv
    finally:
        silent.close()


@pytest.fixture(scope='module')
def hung_ready(hung):
    """Once ready: how long it took, and the hung vCenter's status."""
    t0 = time.time()
    hung.wait_ready(timeout=30)
    return SimpleNamespace(seconds=time.time() - t0, hung=hung.vcenter('hung'))


@pytest.fixture(scope='module')
def hung_stopped(hung_ready, hung):
    """SIGTERM while a poll of the hung vCenter is in flight."""
    hung.post('/api/v1/polls?vcenter=hung', token=TOKEN)
    deadline = time.time() + 5
    while time.time() < deadline and not hung.vcenter('hung')['polling']:
        time.sleep(0.05)
    polling = hung.vcenter('hung')['polling']
    t0 = time.time()
    rc = hung.stop()
    return SimpleNamespace(polling=polling, rc=rc, seconds=time.time() - t0)


def test_readyz_503_until_every_vcenter_polled(hung):
    a = hung.early.readyz
    assert a.status == 503
    assert 'hung' in a.json()['error']['message'], 'the 503 does not name the vCenter waited for'


def test_healthz_while_not_ready(hung):
    assert hung.early.healthz.status == 200


def test_ready_after_hung_poll_times_out(hung_ready):
    assert hung_ready.seconds < 20, 'ready after %.1f s' % hung_ready.seconds


def test_hung_vcenter_stale(hung_ready):
    h = hung_ready.hung
    assert (h['stale'], h['polled_once']) == (True, True)
    assert h['error'], 'no error says why'


def test_hung_vcenter_retried_after_its_interval(hung_ready):
    assert hung_ready.hung['backoff_s'] == 300


def test_sigterm_during_poll(hung_stopped):
    """The poll ends (at most its timeout) and the daemon exits 0."""
    assert hung_stopped.polling, 'hung was not being polled'
    assert hung_stopped.rc == 0
    assert hung_stopped.seconds < 15, 'exit after %.1f s' % hung_stopped.seconds


# ---- two vCenters, one of them going away and coming back -----------------------------------

@pytest.fixture(scope='module')
def two(clean_sim, new_workspace):
    """Serving "a" (violations, on a port a simulator can come back to, interval 10 s, polled in
    full: the backoff counted here is the full poll's; following changes, a's outage would be
    noticed by the round in flight and read again at once, one failure more) and "b"
    (clean)."""
    ws = new_workspace()
    sim_port = free_port()
    story = SimpleNamespace(start_a=lambda: Sim('violations', extra=(
        '-listen', '127.0.0.1:%d' % sim_port)))
    story.sim_a = story.start_a()
    try:
        with serving(ws, [vcenter(ws, story.sim_a.url, 'a', interval=10, incremental='false'),
                          vcenter(ws, clean_sim.url, 'b')]) as srv:
            story.srv = srv
            yield story
    finally:
        story.sim_a.stop()


def total(srv, path):
    return srv.get(path).json()['total']


def test_summary_lists_both(two):
    assert [v['name'] for v in two.srv.summary()['vcenters']] == ['a', 'b']


def test_both_polled_fresh(two):
    assert all(v['polled_once'] and not v['stale'] and v['last_poll']['ok']
               for v in two.srv.summary()['vcenters'])


def test_findings_by_vcenter(two):
    ta = total(two.srv, '/api/v1/findings?vcenter=a')
    tb = total(two.srv, '/api/v1/findings?vcenter=b')
    assert ta > 10, 'a (violations) has findings'
    assert tb == 0, 'b (clean) has none'
    assert ta + tb == total(two.srv, '/api/v1/findings')
    assert all(x['vcenter'] == 'a' for x in
               two.srv.get('/api/v1/findings?vcenter=a&limit=1000').json()['findings'])


def test_inventory_by_vcenter(two):
    assert total(two.srv, '/api/v1/inventory/datastores?vcenter=a') + \
        total(two.srv, '/api/v1/inventory/datastores?vcenter=b') == \
        total(two.srv, '/api/v1/inventory/datastores')


def test_summary_of_one_vcenter(two):
    assert [v['name'] for v in two.srv.get('/api/v1/summary?vcenter=b').json()['vcenters']] == \
        ['b']


def test_post_polls_queues_both(two):
    a = two.srv.post('/api/v1/polls', token=TOKEN)
    assert (a.status, a.json()) == (202, {'queued': ['a', 'b']})


@pytest.fixture(scope='module')
def outage(two):
    """A fresh, successful poll of a; then a's simulator goes away and a is polled again."""
    o = SimpleNamespace(before=two.srv.poll_and_wait('a'),
                        findings=total(two.srv, '/api/v1/findings?vcenter=a'))
    two.sim_a.stop()
    o.a = two.srv.poll_and_wait('a')
    o.findings_after = total(two.srv, '/api/v1/findings?vcenter=a')
    o.b = two.srv.vcenter('b')
    o.metrics = {n: metric(two.srv, n) for n in (
        'vslint_poll_success{vcenter="a"}', 'vslint_poll_stale{vcenter="a"}',
        'vslint_poll_success{vcenter="b"}')}
    return o


def test_polled_fine_before_the_outage(outage):
    assert outage.before['last_poll']['ok'] is True


def test_outage_makes_stale(outage):
    assert (outage.a['stale'], outage.a['last_poll']['ok']) == (True, False)
    assert outage.a['error'], 'no error names the cause'


def test_outage_keeps_last_success(outage):
    assert outage.a['last_success'] == outage.before['last_success']


def test_outage_first_backoff_is_the_interval(outage):
    assert outage.a['backoff_s'] == 10


def test_outage_findings_still_served(outage):
    assert outage.findings_after == outage.findings


def test_outage_leaves_other_vcenter_alone(outage):
    assert outage.b['stale'] is False


@pytest.mark.parametrize('name,want', [('vslint_poll_success{vcenter="a"}', 0.0),
                                       ('vslint_poll_stale{vcenter="a"}', 1.0),
                                       ('vslint_poll_success{vcenter="b"}', 1.0)])
def test_outage_metrics(outage, name, want):
    assert outage.metrics[name] == want


@pytest.fixture(scope='module')
def second_failure(outage, two):
    return SimpleNamespace(a=two.srv.poll_and_wait('a'), logs=two.srv.logs())


def test_second_failure_doubles_backoff(second_failure):
    assert (second_failure.a['backoff_s'], second_failure.a['consecutive_failures']) == (20, 2)


def test_failure_logged_with_the_vcenter(second_failure):
    assert 'vcenter a: poll failed' in second_failure.logs


@pytest.fixture(scope='module')
def recovered(second_failure, outage, two):
    """A simulator comes back on the same port; a is polled again."""
    two.sim_a = two.start_a()
    a = two.srv.poll_and_wait('a')
    return SimpleNamespace(a=a, before=outage.before, logs=two.srv.logs(),
                           success=metric(two.srv, 'vslint_poll_success{vcenter="a"}'))


def test_recovered(recovered):
    a = recovered.a
    assert (a['stale'], a['error'], a['backoff_s'], a['last_poll']['ok']) == (False, None, 0, True)


def test_recovery_moves_last_success_on(recovered):
    assert recovered.a['last_success'] >= recovered.before['last_success']


def test_recovery_metric(recovered):
    assert recovered.success == 1.0


def test_recovery_logged(recovered):
    assert 'vcenter a: polling again' in recovered.logs


def test_two_vcenters_sigterm(recovered, two):
    assert two.srv.stop() == 0


# ---- HTTPS with auth = all ------------------------------------------------------------------

@pytest.fixture(scope='module')
def tls(clean_sim, new_workspace):
    ws = new_workspace()
    with serving(ws, [vcenter(ws, clean_sim.url, 'a')], auth_all=True,
                 tls=self_signed_cert(ws, '127.0.0.1')) as srv:
        yield srv


def test_https_healthz_needs_no_token(tls):
    assert tls.get('/healthz').status == 200


@pytest.mark.parametrize('path', ['/readyz', '/api/v1/summary', '/metrics', '/api/v1/nothing'])
def test_auth_all_needs_the_token(tls, path):
    assert tls.get(path).status == 401


def test_auth_all_with_the_token(tls):
    assert tls.get('/api/v1/summary', token=TOKEN).status == 200


def test_auth_all_wrong_token(tls):
    assert tls.get('/api/v1/summary', token='x' * 27).status == 401


def test_plain_http_to_https_port(tls):
    plain = Serve.__new__(Serve)
    plain.base, plain.ctx, plain.record = 'http://127.0.0.1:%d' % tls.port, None, None
    try:
        got = plain.get('/healthz').status
    except OSError as e:
        got = type(e).__name__
    assert got != 200, 'plain HTTP to the HTTPS port answered 200'
    assert tls.get('/healthz').status == 200, 'https no longer answers'


def test_tls_sigterm(tls):
    assert tls.stop() == 0
