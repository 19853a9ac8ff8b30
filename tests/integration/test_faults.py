"""vCenter misbehaving: a truncated answer, malformed XML, an HTTP 500 page, a dropped
connection, a page lost with its connection, and vslint killed with SIGKILL in the middle of a
poll. Each failure gives one
clear error line and exit status 2, and the previous snapshot stays exactly as it was; a
connection dropped before the request was handled is retried and loses nothing; after
kill -9 the database passes PRAGMA integrity_check and still holds the previous snapshot."""
import json
import re
import signal
import sqlite3
import subprocess
import time
from types import SimpleNamespace

import pytest

from simlib import VSLINT, Estate, Sim, run_ok, vslint

# kind -> the phrase of its error line: the same scenario again (same morefs), answering its
# 3rd property read badly.
BAD_ANSWERS = {
    'truncate': 'transfer closed',
    'malformed': 'bad response: line',
    'http500': 'HTTP 500',
}


def inventory(conf):
    """The stored inventory without snapshot times, which the simulator sets relative to its
    own start (every simulator run plants "10 days ago" anew)."""
    vc = json.loads(run_ok('inventory', '-c', conf, '--format', 'json').stdout)['vcenters'][0]
    for vm in vc['vms']:
        for s in vm['snapshots']:
            s.pop('created', None)
    return {k: vc[k] for k in ('datastores', 'storage_pods', 'dvswitches', 'hosts', 'vms')}


def fingerprints(conf):
    return sorted(x['fingerprint'] for x in json.loads(run_ok(
        'check', '-c', conf, '--offline', '--format', 'json', '--fail-on', 'never').stdout)[
            'findings'])


@pytest.fixture(scope='module')
def previous(module_workspace):
    """A good poll of the violations scenario (page size 5): the snapshot every fault must
    leave as it was. Its simulator is gone; each test polls a new one into a copy."""
    with Sim('violations', page_size=5) as sim:
        est = Estate(sim, module_workspace)
        run_ok('collect', '-c', est.conf)
        counts = sim.truth()['counts']
    return SimpleNamespace(est=est, counts=counts, inventory=inventory(est.conf),
                           fingerprints=fingerprints(est.conf))


def poll_copy(previous, ws, *flags, scenario='violations', page_size=5):
    """Starts a simulator with flags, points a copy of the previous snapshot's database at it:
    (simulator, configuration). The caller stops the simulator."""
    est = previous.est.copy(ws)
    sim = Sim(scenario, page_size=page_size, extra=list(flags))
    return sim, ws.write_config([dict(est.vc, url=sim.url)])


def collect_faulty(previous, ws, fault):
    """`vslint collect` of a copy of the previous snapshot from the violations scenario
    answering with -fault fault: (the finished process, the configuration)."""
    sim, conf = poll_copy(previous, ws, '-fault', fault)
    try:
        return vslint('collect', '-c', conf), conf
    finally:
        sim.stop()


@pytest.fixture(scope='module')
def bad_answers(previous, new_workspace):
    """kind -> what a poll answered badly left behind (collected once per kind, on first use)."""
    class Outcomes(dict):
        def __missing__(self, kind):
            res, conf = collect_faulty(previous, new_workspace(), '%s:3' % kind)
            self[kind] = SimpleNamespace(conf=conf, res=res)
            return self[kind]
    return Outcomes()


@pytest.mark.parametrize('kind', BAD_ANSWERS)
def test_bad_answer_one_error_line(bad_answers, kind):
    res = bad_answers[kind].res
    lines = [l for l in res.stderr.splitlines() if l.strip()]
    assert res.returncode == 2
    assert len(lines) == 1, lines
    assert BAD_ANSWERS[kind] in lines[0] and 'vcenter lab' in lines[0], lines


@pytest.mark.parametrize('kind', BAD_ANSWERS)
def test_bad_answer_keeps_snapshot(previous, bad_answers, kind):
    assert inventory(bad_answers[kind].conf) == previous.inventory


@pytest.mark.parametrize('kind', BAD_ANSWERS)
def test_bad_answer_recorded(bad_answers, kind):
    last = json.loads(run_ok('inventory', '-c', bad_answers[kind].conf, '--format',
                             'json').stdout)['vcenters'][0]['last_poll']
    assert last is not None and last['ok'] is False and \
        BAD_ANSWERS[kind] in (last['error'] or ''), last


@pytest.mark.parametrize('kind', BAD_ANSWERS)
def test_bad_answer_keeps_findings(previous, bad_answers, kind):
    assert fingerprints(bad_answers[kind].conf) == previous.fingerprints


def test_answer_broken_off_mid_page_names_the_method(previous, workspace):
    """The connection drops halfway through a streamed page (the 3rd ContinueRetrievePropertiesEx:
    its first objects already parsed and handed to the database's writer): one error line
    naming the method and how much of its answer arrived, exit status 2, and the previous
    snapshot stays whole (the objects of the broken page and of the pages before it are not
    stored)."""
    res, conf = collect_faulty(previous, workspace, 'truncate:3:ContinueRetrievePropertiesEx')
    lines = [l for l in res.stderr.splitlines() if l.strip()]
    assert res.returncode == 2, res.stderr
    assert len(lines) == 1, lines
    assert re.search(r'vcenter lab: poll failed: \S+: the answer to ContinueRetrievePropertiesEx '
                     r'broke off after \d+ bytes: request failed \(transfer closed', lines[0]), \
        lines[0]
    assert inventory(conf) == previous.inventory
    assert fingerprints(conf) == previous.fingerprints


# A full poll reads the hosts (then their per-host reads) on a second connection and thread while
# the VMs and everything else are read on the first: a bad answer on either stream, the other
# one running, -> the phrase of the error line that must name it.
STREAM_FAULTS = {
    'malformed:1:RetrievePropertiesEx:HostSystem': 'bad response: line',
    'truncate:2:ContinueRetrievePropertiesEx:HostSystem':
        'the answer to ContinueRetrievePropertiesEx broke off after',
    'http500:1:RetrievePropertiesEx:VirtualMachine': 'HTTP 500',
    'malformed:3:ContinueRetrievePropertiesEx:VirtualMachine': 'bad response: line',
}


@pytest.mark.parametrize('fault', STREAM_FAULTS)
def test_bad_answer_on_one_stream_ends_the_poll(previous, workspace, fault):
    """The stream that got the bad answer ends the whole poll with its error, in one line (not
    the other stream's having been stopped for it, which is no fact about vCenter), exit status
    2; the previous snapshot and its findings stay, and the failure is recorded."""
    res, conf = collect_faulty(previous, workspace, fault)
    lines = [l for l in res.stderr.splitlines() if l.strip()]
    assert res.returncode == 2, res.stderr
    assert len(lines) == 1, lines
    assert 'vcenter lab: poll failed: ' in lines[0] and STREAM_FAULTS[fault] in lines[0], lines
    assert inventory(conf) == previous.inventory
    assert fingerprints(conf) == previous.fingerprints
    last = json.loads(run_ok('inventory', '-c', conf, '--format', 'json').stdout)[
        'vcenters'][0]['last_poll']
    assert last['ok'] is False and STREAM_FAULTS[fault] in (last['error'] or ''), last


def test_a_read_cut_short_says_how_far_it_got(previous, workspace):
    """`collect -v` logs each paged read's end. A read that failed on its 3rd page (pages of
    5) says it stopped, after how many objects and why; before, it logged "read 0
    VirtualMachine objects", as if the vCenter had none."""
    sim, conf = poll_copy(previous, workspace, '-fault',
                          'malformed:3:ContinueRetrievePropertiesEx:VirtualMachine')
    try:
        res = vslint('collect', '-v', '-c', conf)
    finally:
        sim.stop()
    assert res.returncode == 2, res.stderr
    m = re.search(r'the read of VirtualMachine objects stopped after (\d+): (.*)', res.stderr)
    assert m, res.stderr
    assert 10 <= int(m[1]) < previous.counts['vm'] and 'bad response' in m[2], m[0]
    assert not re.search(r'read \d+ VirtualMachine objects', res.stderr), res.stderr


def test_dropped_connection_retried(previous, workspace):
    """A connection closed before the server handled the request (an idle keep-alive connection
    closing under us): the request is retried and the poll is complete. The second
    RetrievePropertiesEx (the Datastore view) goes over the connection that logged in, so it is
    a reused one, as in that race. (Named by type: the hosts are read at the same time, on
    their own connection, so the order of the reads of different types is not fixed.)"""
    res, conf = collect_faulty(previous, workspace, 'drop:1:RetrievePropertiesEx:Datastore')
    assert res.returncode == 0, res.stderr.strip()
    assert ' %d datastores' % previous.counts['datastore'] in res.stdout, res.stdout.strip()
    assert inventory(conf) == previous.inventory


def test_lost_page_polled_again(previous, workspace):
    """The server handles a ContinueRetrievePropertiesEx, then the connection dies without an
    answer; curl re-sends it on a new connection and gets the page after the lost one. vslint
    sees the reconnection, does not store a snapshot with a hole, and polls again. (The 3rd
    Continue of the Datastore read is the 3rd on its prefetch connection: reused.)"""
    res, conf = collect_faulty(previous, workspace,
                               'lose:3:ContinueRetrievePropertiesEx:Datastore')
    assert res.returncode == 0, res.stderr.strip()
    assert 'a page may have been lost; polling again' in res.stderr, res.stderr
    assert ' %d datastores' % previous.counts['datastore'] in res.stdout, res.stdout.strip()
    assert inventory(conf) == previous.inventory


def test_lost_alarm_page_polled_again(previous, workspace):
    """The same loss in the alarm read: with max_objects below the alarms' batch of 500 (2
    here), the Alarm objects come over pages, and the 2nd ContinueRetrievePropertiesEx of them
    (the 1st over a reused prefetch connection) is handled and lost. The poll is run again and
    stored whole, not stored with the alarms as a gap ("unverified")."""
    sim, conf = poll_copy(previous, workspace, '-fault',
                          'lose:2:ContinueRetrievePropertiesEx:Alarm')
    with open(conf) as f:
        text = f.read()
    with open(conf, 'w') as f:
        f.write(text.replace('[vcenter lab]\n', '[vcenter lab]\nmax_objects = 2\n', 1))
    try:
        res = vslint('collect', '-c', conf)
    finally:
        sim.stop()
    assert res.returncode == 0, res.stderr.strip()
    assert 'a page may have been lost; polling again' in res.stderr, res.stderr
    vc = json.loads(run_ok('inventory', '-c', conf, '--format', 'json').stdout)['vcenters'][0]
    assert [g for g in vc['gaps'] if g['what'] == 'alarms'] == [], vc['gaps']
    assert inventory(conf) == previous.inventory


def test_endless_token_ends_the_poll(previous, workspace):
    """A server that answers every ContinueRetrievePropertiesEx with a token for another page
    (and, past the last object, no object) would keep the poll alive forever, bytes arriving
    all the while so it is never stalled: the read ends with a clear error after a bounded
    number of empty pages, and the previous snapshot stays."""
    sim, conf = poll_copy(previous, workspace, '-endless-token')
    try:
        started = time.monotonic()
        res = vslint('collect', '-c', conf, timeout=120)
        took = time.monotonic() - started
    finally:
        sim.stop()
    assert res.returncode == 2, res.stderr
    lines = [l for l in res.stderr.splitlines() if 'vcenter lab' in l]
    assert len(lines) == 1, res.stderr
    assert 'does not end: 16 pages in a row with no object, each with a token for another' \
        in lines[0], lines[0]
    assert took < 60, took
    assert inventory(conf) == previous.inventory


def test_kill_9_mid_poll(previous, workspace):
    """kill -9 in the middle of a large poll: the database opens, passes integrity_check and
    holds the previous complete snapshot. The snapshot transaction is open from the first
    object read to the commit, so a kill at any point of a poll that takes a couple of seconds
    lands inside it."""
    sim, conf = poll_copy(previous, workspace, scenario='scale:10000', page_size=100)
    try:
        proc = subprocess.Popen([VSLINT, 'collect', '-c', conf], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE)
        time.sleep(0.4)
        killed = proc.poll() is None
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    finally:
        sim.stop()
    assert killed, 'the poll ended before the kill (exit %s)' % proc.returncode
    db = sqlite3.connect(workspace.db)
    try:
        assert db.execute('PRAGMA integrity_check').fetchone()[0] == 'ok'
        n = db.execute("SELECT count(*) FROM vms WHERE vcenter = 'lab'").fetchone()[0]
    finally:
        db.close()
    assert n == previous.counts['vm'], 'the previous snapshot is gone'
    assert inventory(conf) == previous.inventory


@pytest.mark.parametrize('row,scenario', [(60, 'violations'), (20000, 'scale:10000')])
def test_database_refusing_a_row_ends_the_poll_as_a_database_error(previous, workspace,
                                                                  monkeypatch, row, scenario):
    """The database refuses a row of a full poll (the test build's VSLINT_DEBUG_STAGE_FAIL_ROW
    makes the writer thread's insert of that row fail as a full disk would): found once every
    row is handed over (the violations scenario's rows fit in one of the writer's blocks), or
    in the middle of the read (10,000 VMs: the sink is told at its next row, and the read of
    vCenter stops there). Either way one error line calls it a database error and names the
    table and the row, not vCenter's last words; exit status 2; the previous snapshot, its
    findings and the history's record of the failure are as after any failed poll."""
    monkeypatch.setenv('VSLINT_DEBUG_STAGE_FAIL_ROW', str(row))
    sim, conf = poll_copy(previous, workspace, scenario=scenario,
                          page_size=5 if scenario == 'violations' else 100)
    try:
        res = vslint('collect', '-c', conf)
    finally:
        sim.stop()
    monkeypatch.delenv('VSLINT_DEBUG_STAGE_FAIL_ROW')
    lines = [l for l in res.stderr.splitlines() if l.strip()]
    assert res.returncode == 2, res.stderr
    assert len(lines) == 1, lines
    want = (r'vcenter lab: poll failed: cannot write the database: cannot stage row %d of the '
            r'poll \([a-z_]+\): database or disk is full$' % row)
    assert re.search(want, lines[0]), lines[0]
    assert inventory(conf) == previous.inventory
    assert fingerprints(conf) == previous.fingerprints
    last = json.loads(run_ok('inventory', '-c', conf, '--format', 'json').stdout)[
        'vcenters'][0]['last_poll']
    assert last['ok'] is False and 'database or disk is full' in last['error'], last


def test_writer_failure_logged_with_the_vcenter(previous, workspace, monkeypatch):
    """The writer thread's own log line (with -v) names the vCenter whose poll it writes: with
    several vCenters polled by one daemon, a bare "db: lun_paths: ..." named none."""
    monkeypatch.setenv('VSLINT_DEBUG_STAGE_FAIL_ROW', '60')
    sim, conf = poll_copy(previous, workspace)
    try:
        res = vslint('collect', '-v', '-c', conf)
    finally:
        sim.stop()
    assert res.returncode == 2, res.stderr
    assert re.search(r'vcenter lab: db writer: cannot stage row 60 of the poll \([a-z_]+\): '
                     r'database or disk is full', res.stderr), res.stderr[-2000:]
