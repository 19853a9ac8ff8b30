"""One failure stays one failure: another process holding the database's write lock longer than
the busy timeout leaves every read endpoint, `vslint inventory` and `vslint check --offline`
answering; a stalled vCenter costs at most its `timeout`; with two vCenters, one stopped
(SIGSTOP) in the middle of a poll, the other keeps polling on schedule; a full disk at start or
during a poll keeps the last snapshot served and says why."""
import json
import os
import re
import signal
import sqlite3
import sys
import threading
import time

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from simlib import Sim, Workspace, vcenter, vslint  # noqa: E402
from apilib import TOKEN, serving  # noqa: E402

BUSY_TIMEOUT_S = 5  # db/db-private.h DB_BUSY_MS


class Locker:
    """Another process's connection (Python's sqlite3 module) holding the write lock:
    `BEGIN EXCLUSIVE` and a write, as an admin's `sqlite3` or a careless backup tool would."""

    def __init__(self, path):
        self.conn = sqlite3.connect(path, isolation_level=None, timeout=30)
        self.conn.execute('BEGIN EXCLUSIVE')
        self.conn.execute("UPDATE vcenters SET last_error = 'held by a test' WHERE 0")
        self.since = time.time()

    def held_s(self):
        return time.time() - self.since

    def release(self):
        self.conn.execute('ROLLBACK')
        self.conn.close()


def read_endpoints(srv, fingerprint):
    return ['/api/v1/summary', '/api/v1/findings?limit=5', '/api/v1/findings/' + fingerprint,
            '/api/v1/checks', '/api/v1/history', '/api/v1/inventory/datastores',
            '/api/v1/inventory/hosts', '/api/v1/inventory/vms?limit=5', '/metrics']


@pytest.fixture(scope='module')
def locked(lab, new_workspace):
    """The lab estate's database, copied; `vslint serve` started on it (interval 1 h) while a
    Locker holds the write lock, and every read endpoint asked while cold, then again after the
    busy timeout; `vslint inventory` and `vslint check --offline` run under the lock."""
    ws = new_workspace()
    est = lab.copy(ws)
    fp = lab.findings[0]['fingerprint']
    lock = Locker(ws.db)
    out = {'answers': [], 'late': []}
    try:
        with serving(ws, [dict(est.vc, interval=3600)], ready=False) as srv:
            for path in read_endpoints(srv, fp):
                t0 = time.time()
                a = srv.get(path)
                out['answers'].append((path, a.status, time.time() - t0, a.body))
            t0 = time.time()
            out['inventory'] = vslint('inventory', '-c', est.conf, '--format', 'json')
            out['inventory_s'] = time.time() - t0
            out['check'] = vslint('check', '--offline', '-c', est.conf, '--format', 'json',
                                  '--fail-on', 'never')
            # Still held, well past the busy timeout: asked again.
            while lock.held_s() < BUSY_TIMEOUT_S + 1:
                time.sleep(0.2)
            for path in read_endpoints(srv, fp):
                out['late'].append((path, srv.get(path).status))
            out['held_s'] = lock.held_s()
            lock.release()
            lock = None
            out['logs'] = srv.logs()
    finally:
        if lock:
            lock.release()
    return out


def test_read_endpoints_answer_while_another_process_holds_the_lock(locked):
    bad = [(p, s, b[:200]) for p, s, _, b in locked['answers'] if s != 200]
    assert not bad, bad
    slow = [(p, round(t, 2)) for p, _, t, _ in locked['answers'] if t > 2]
    assert not slow, 'waited for the lock: %s' % slow


def test_read_endpoints_still_answer_past_the_busy_timeout(locked):
    assert locked['held_s'] > BUSY_TIMEOUT_S
    bad = [(p, s) for p, s in locked['late'] if s != 200]
    assert not bad, bad


def test_inventory_command_reads_under_the_lock(locked):
    res = locked['inventory']
    assert res.returncode == 0, res.stderr
    inv = json.loads(res.stdout)
    assert inv['vcenters'] and inv['vcenters'][0]['name'] == 'lab', res.stdout[:300]
    assert locked['inventory_s'] < 2, 'waited %.1f s for the lock' % locked['inventory_s']


def test_offline_check_answers_under_the_lock(locked):
    res = locked['check']
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)['findings'], 'no findings printed'
    assert 'locked' in res.stderr and 'as last recorded' in res.stderr, res.stderr


# ---- a stalled vCenter costs its timeout, once ---------------------------------------------

def stopped_collect(when, timeout=3, scenario='violations', page_size=100):
    """`vslint collect -v` of a simulator (timeout=3) that is stopped with SIGSTOP before the
    collect starts (when is None), or as soon as the collect logs a line containing when (for
    example the read before the VMs': then it is stopped in the middle of a read, however fast
    this machine is): exit status, the seconds from the stop to the collect's exit, and its
    log."""
    sim, ws = Sim(scenario, page_size=page_size), Workspace()
    try:
        conf = ws.write_config([vcenter(ws, sim.url, 'lab', timeout=timeout)])
        if when is None:
            sim.proc.send_signal(signal.SIGSTOP)
        t0 = time.time()
        import subprocess
        p = subprocess.Popen([os.environ.get('VSLINT', 'build/vslint'), 'collect', '-v', '-c',
                              conf], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        err = ''
        if when is not None:
            for line in p.stderr:
                err += line
                if when in line:
                    sim.proc.send_signal(signal.SIGSTOP)
                    t0 = time.time()
                    break
        out, rest = p.communicate(timeout=60)
        return p.returncode, time.time() - t0, err + rest
    finally:
        sim.proc.send_signal(signal.SIGCONT)
        sim.stop()
        ws.cleanup()


def test_stalled_vcenter_costs_one_timeout():
    """Stopped before the collect connects: the service version document and the service
    content each waited the whole timeout (6 s for timeout=3)."""
    rc, wall, err = stopped_collect(None)
    assert rc == 2, err
    assert 'timed out' in err, err
    assert wall < 3 + 1.5, 'a stalled vCenter with timeout=3 took %.1f s' % wall


def test_vcenter_stalled_mid_poll_costs_one_timeout():
    """4,000 VMs in pages of 10: stopped when the hosts are read, so in the VMs' 400 pages
    (read at the same time as the hosts, on the poll's other stream: none of them whole)."""
    rc, wall, err = stopped_collect('HostSystem objects', scenario='scale:4000', page_size=10)
    assert rc == 2, err
    assert 'timed out' in err, err
    before = [l for l in err.splitlines() if 'HostSystem objects' in l]
    assert before and not re.search(r'read [1-9][0-9]* VirtualMachine objects', err), err
    # The poll's error is the words of the request that timed out (curl's), whichever of the
    # poll's connections it was on: the others' were cut for it.
    assert re.search(r'poll failed: \S+: timed out \(Operation timed out after \d+ '
                     r'(ms|milliseconds)', err), err
    assert wall < 3 + 1.5, 'a vCenter stalled mid-read with timeout=3 took %.1f s' % wall


# ---- two vCenters, one stopped in the middle of a poll --------------------------------------

@pytest.fixture(scope='module')
def one_stopped(new_workspace):
    """Serving "a" (4,000 VMs in pages of 2: a poll takes several seconds; timeout 25 s) and "b"
    (clean), both read in full every 10 s (incremental = false: b's full polls are what is
    counted). "a" is stopped (SIGSTOP) 0.8 s into a poll, and for 22 s the summary, b's
    findings and /readyz are asked every half second."""
    ws = new_workspace()
    sim_a, sim_b = Sim('scale:4000', page_size=2), Sim('clean')
    seen = []
    try:
        with serving(ws, [vcenter(ws, sim_a.url, 'a', interval=10, timeout=25,
                                  incremental='false'),
                          vcenter(ws, sim_b.url, 'b', interval=10, incremental='false')]) as srv:
            srv.post('/api/v1/polls?vcenter=a', token=TOKEN)
            deadline = time.time() + 10
            while not srv.vcenter('a')['polling'] and time.time() < deadline:
                time.sleep(0.02)
            time.sleep(0.8)
            sim_a.proc.send_signal(signal.SIGSTOP)
            t_stop = time.time()
            # a's poll in flight: its poller and the threads it started (named after it)
            for _ in range(50):
                threads = thread_nice(srv.proc.pid)
                if len([t for t in threads if t[0] == 'poll:a']) >= 2:
                    break
                time.sleep(0.1)
            while time.time() - t_stop < 22:
                s, f, r = (srv.get('/api/v1/summary'), srv.get('/api/v1/findings?vcenter=b'),
                           srv.get('/readyz'))
                seen.append((time.time() - t_stop, s.status, f.status, r.status,
                             s.json() if s.status == 200 else s.body,
                             r.json() if r.status == 200 else r.body))
                time.sleep(0.5)
            logs = srv.logs()
    finally:
        sim_a.proc.send_signal(signal.SIGCONT)
        sim_a.stop()
        sim_b.stop()
    return seen, t_stop, logs, threads


def thread_nice(pid):
    """(name, nice value) of each thread of pid, as `top -H` shows them; the main thread's
    first."""
    out = []
    for tid in sorted(os.listdir('/proc/%d/task' % pid), key=lambda t: t != str(pid)):
        try:
            with open('/proc/%d/task/%s/stat' % (pid, tid)) as f:
                stat = f.read()
        except FileNotFoundError:  # ended meanwhile
            continue
        name = stat[stat.index('(') + 1:stat.rindex(')')]
        out.append((name, int(stat[stat.rindex(')') + 2:].split()[16])))
    return out


def test_polls_run_at_a_lower_cpu_priority_than_the_answers(one_stopped):
    """A poll is background work, an answer is waited for: the pollers (one a vCenter, named
    "poll:NAME" in `top -H`) and the threads a poll starts (the staging writer, the hosts'
    stream, which inherit the name) are 5 nicer than the daemon; the HTTP threads and the heap
    trimmer (which holds the allocator's locks the HTTP threads wait for) are not."""
    threads = one_stopped[3]
    base = threads[0][1]  # the daemon's own (a test run under nice starts it nicer)
    if base + 5 > 19:
        pytest.skip('the daemon runs at nice %d: no room to be 5 nicer' % base)
    polls = [(name, n) for name, n in threads if name.startswith('poll:')]
    others = [(name, n) for name, n in threads if not name.startswith('poll:')]
    # b's poller, a's poller and at least a's staging writer, a's poll being in flight
    assert len([1 for name, _ in polls if name == 'poll:a']) >= 2, threads
    assert [1 for name, _ in polls if name == 'poll:b'], threads
    assert all(n == base + 5 for _, n in polls), threads
    assert [1 for name, _ in others if name == 'MHD-worker'], threads
    assert [1 for name, _ in others if name == 'heap-trim'], threads
    assert all(n == base for _, n in others), threads


def test_other_vcenter_keeps_polling_on_schedule(one_stopped):
    seen, t_stop, logs, _ = one_stopped
    stamp = time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime(t_stop))
    polls = set()
    for _, _, _, _, summary, _ in seen:
        b = [v for v in summary['vcenters'] if v['name'] == 'b'][0]
        assert not b['stale'], 'b went stale while a was stopped: %s' % b['error']
        lp = b['last_poll']
        if lp['started'] >= stamp:
            assert lp['ok'], lp
            polls.add(lp['started'])
    assert len(polls) >= 2, 'b polled %d times in 22 s at interval 10 s: %s' % (
        len(polls), logs[-1500:])


def test_everything_answers_while_one_vcenter_is_stopped(one_stopped):
    bad = [(round(t, 1), s, f, r) for t, s, f, r, _, _ in one_stopped[0] if (s, f, r) != (200,) * 3]
    assert not bad, bad


def test_readyz_names_the_stalled_vcenter(one_stopped):
    seen = one_stopped[0]
    a = [v for v in seen[-1][4]['vcenters'] if v['name'] == 'a'][0]
    assert a['polling'] and a['stalled'] and a['quiet_s'] >= 15, a
    problems = seen[-1][5]['problems']
    assert any(p.startswith('vcenter a: stalled: no answer for') for p in problems), problems
    assert not any('vcenter b' in p for p in problems), problems


# ---- a full disk ------------------------------------------------------------------------------

class SmallDisk:
    """A 3 MiB tmpfs holding the database (mounting needs root: the tests skip without it), and
    a file that fills it to the last byte and can be removed."""

    def __init__(self):
        import subprocess
        import tempfile
        self.dir = tempfile.mkdtemp(prefix='vslint-disk-')
        res = subprocess.run(['mount', '-t', 'tmpfs', '-o', 'size=3m,mode=0700', 'tmpfs',
                              self.dir], capture_output=True, text=True)
        if res.returncode != 0:
            os.rmdir(self.dir)
            pytest.skip('cannot mount a small tmpfs (needs root): %s' % res.stderr.strip())
        self.filler = os.path.join(self.dir, 'filler')

    def fill(self):
        with open(self.filler, 'ab', buffering=0) as f:
            try:
                while True:
                    f.write(b'\0' * 4096)
            except OSError:
                pass
            try:  # tmpfs takes the odd byte more
                while True:
                    f.write(b'\0')
            except OSError:
                pass

    def free(self):
        os.unlink(self.filler)

    def close(self):
        import subprocess
        subprocess.run(['umount', self.dir])
        os.rmdir(self.dir)


@pytest.fixture(scope='module')
def full_disk(violations_sim, new_workspace):
    """The lab estate polled once into a database on a small disk; the disk filled; `vslint
    serve` started on it (full at start), the disk freed and a poll asked; filled again and a
    poll asked (full during a poll); freed and a poll asked; then four more polls."""
    disk = SmallDisk()
    ws = new_workspace()
    ws.db = os.path.join(disk.dir, 'vslint.db')
    vc = vcenter(ws, violations_sim.url, 'lab', interval=3600)
    out = {}
    try:
        conf = ws.write_config([vc])
        res = vslint('check', '-c', conf, '--format', 'json', '--fail-on', 'never')
        assert res.returncode == 0, res.stderr
        out['findings'] = len(json.loads(res.stdout)['findings'])
        out['db_size'] = os.path.getsize(ws.db)
        disk.fill()
        with serving(ws, [vc]) as srv:
            out['start'] = dict(summary=srv.get('/api/v1/summary'), readyz=srv.get('/readyz'),
                                findings=srv.get('/api/v1/findings?limit=1000'),
                                vms=srv.get('/api/v1/inventory/vms'))
            disk.free()
            out['resumed'] = srv.poll_and_wait('lab')
            out['resumed_summary'] = srv.summary()
            disk.fill()
            out['mid'] = srv.poll_and_wait('lab')
            out['mid_summary'] = srv.summary()
            out['mid_readyz'] = srv.get('/readyz')
            out['mid_findings'] = srv.get('/api/v1/findings?limit=1000')
            disk.free()
            out['again'] = srv.poll_and_wait('lab')
            out['again_summary'] = srv.summary()
            for _ in range(4):
                srv.poll_and_wait('lab')
            out['wal'] = os.path.getsize(ws.db + '-wal') if os.path.exists(ws.db + '-wal') else 0
            out['db_after'] = os.path.getsize(ws.db)
            out['logs'] = srv.logs()
        # A new database on a full disk: no empty file left behind.
        os.unlink(ws.db)
        for side in ('-wal', '-shm'):
            if os.path.exists(ws.db + side):
                os.unlink(ws.db + side)
        disk.fill()
        out['new_on_full'] = vslint('collect', '-c', conf)
        out['new_left'] = os.path.exists(ws.db) and os.path.getsize(ws.db)
    finally:
        disk.close()
    return out


def test_full_disk_at_start_serves_the_last_snapshot(full_disk):
    st = full_disk['start']
    assert (st['summary'].status, st['findings'].status, st['vms'].status) == (200, 200, 200)
    assert len(st['findings'].json()['findings']) == full_disk['findings']
    assert st['vms'].json()['total'] > 0
    db = st['summary'].json()['database']
    assert db['writable'] is False and db['error'], db
    assert st['readyz'].status == 200
    assert any(p.startswith('database: ') and 'read-only' in p
               for p in st['readyz'].json()['problems']), st['readyz'].body
    assert 'cannot write' in full_disk['logs'] and 'read-only' in full_disk['logs']


def test_polling_resumes_when_space_returns(full_disk):
    assert full_disk['resumed']['last_poll']['ok'], full_disk['resumed']
    assert full_disk['resumed_summary']['database'] == {'writable': True, 'error': None}
    assert 'writable again' in full_disk['logs']


def test_full_disk_during_a_poll(full_disk):
    mid = full_disk['mid']
    assert not mid['last_poll']['ok'] and mid['stale'], mid
    assert 'No space left' in mid['error'] or 'full' in mid['error'], mid['error']
    assert full_disk['mid_summary']['database']['writable'] is False
    assert any(p.startswith('database: ') for p in full_disk['mid_readyz'].json()['problems'])
    assert full_disk['mid_findings'].status == 200
    assert len(full_disk['mid_findings'].json()['findings']) == full_disk['findings']
    assert full_disk['again']['last_poll']['ok'] and not full_disk['again']['stale']
    assert full_disk['again_summary']['database']['writable'] is True


def test_wal_stays_bounded(full_disk):
    """Seven polls later the WAL holds less than the database (it grew to ~5x before)."""
    assert full_disk['wal'] < full_disk['db_after'], (full_disk['wal'], full_disk['db_after'])


def test_no_empty_database_left_on_a_full_disk(full_disk):
    res = full_disk['new_on_full']
    assert res.returncode == 2
    assert full_disk['new_left'] is False, 'left a %r-byte database' % full_disk['new_left']


# ---- keyset pages while polls write ---------------------------------------------------------

def test_pages_while_polls_write(violations_sim, new_workspace):
    """Walking the VMs 3 at a time while polls replace the snapshot again and again gives the
    rows of one page of 1000, in order, none twice, none missing: a cursor is a position in the
    sort order (vcenter, name, moref), read through an index, not an offset. Full reads
    (incremental = false): following changes, a poll asked for starts when the round in flight
    ends, up to 5 s later, and the walk is shorter than that."""
    ws = new_workspace()
    with serving(ws, [vcenter(ws, violations_sim.url, 'lab', interval=3600,
                              incremental='false')]) as srv:
        full = srv.get('/api/v1/inventory/vms?limit=1000').json()['vms']
        before = srv.vcenter('lab')['last_poll']['finished']
        stop = threading.Event()

        def keep_polling():
            while not stop.is_set():
                srv.post('/api/v1/polls?vcenter=lab', token=TOKEN)
                time.sleep(0.2)

        t = threading.Thread(target=keep_polling)
        t.start()
        try:
            walked, path, pages = [], '/api/v1/inventory/vms?limit=3', 0
            while path:
                a = srv.get(path)
                assert a.status == 200, a.body
                body = a.json()
                walked += body['vms']
                path = body.get('next')
                pages += 1
                time.sleep(0.1)
        finally:
            stop.set()
            t.join()
        after = srv.vcenter('lab')['last_poll']['finished']
    assert after > before, 'no poll finished during the walk'
    keys = [(v['vcenter'], v['name'] or '', v['moref']) for v in walked]
    assert len(keys) == len(set(keys)), 'a VM twice'
    assert keys == [(v['vcenter'], v['name'] or '', v['moref']) for v in full]
    assert pages >= len(full) // 3


def test_a_long_read_does_not_hold_a_poll_back(violations_sim, new_workspace):
    """Another reader in the middle of a long read transaction (an administrator's sqlite3
    shell, a backup tool, an estate load at 100,000 VMs) when a poll commits: the poll's WAL
    checkpoint waits for that reader 0.2 s at most, not the 5 s busy timeout (during which it
    also held off every other writer), and the poll is reported as soon as it is evaluated. The
    reader's snapshot is still the one it began with; once it is gone, the next poll truncates
    the WAL."""
    ws = new_workspace()
    with serving(ws, [vcenter(ws, violations_sim.url, 'lab', interval=3600,
                              incremental='false')]) as srv:
        reader = sqlite3.connect(ws.db, isolation_level=None)
        try:
            reader.execute('BEGIN')
            polls = reader.execute('SELECT count(*) FROM polls').fetchone()[0]
            v = srv.poll_and_wait('lab')
            still = reader.execute('SELECT count(*) FROM polls').fetchone()[0]
            held_wal = os.path.getsize(ws.db + '-wal')
        finally:
            reader.close()
        # The reader gone, the next poll's checkpoint truncates the WAL (the daemon's own
        # readers are idle between answers).
        srv.poll_and_wait('lab')
        wal_after = os.path.getsize(ws.db + '-wal')
    assert held_wal > 0, 'the WAL was truncated under a reader of an older snapshot'
    assert wal_after == 0, 'the WAL is %d bytes after a poll with no reader' % wal_after
    lp = v['last_poll']
    assert lp['ok'], v

    def secs(iso):
        return time.mktime(time.strptime(iso, '%Y-%m-%dT%H:%M:%SZ'))
    # From the end of the read (start + duration) to the status saying it finished: the
    # evaluation and the checkpoint. Times have second resolution, hence up to 1 s more.
    held = secs(lp['finished']) - secs(lp['started']) - lp['duration_ms'] / 1000.0
    assert held < 3, 'the poll was reported %.1f s after its read ended' % held
    assert still == polls, 'the reader saw the new poll inside its transaction'


# ---- a database the HTTP threads cannot open ------------------------------------------------

def test_failed_open_is_answered_503_and_remembered(lab, new_workspace):
    """The file is swapped for one that is not a database before any HTTP thread opened it:
    each read answers 503 at once, in JSON, the log says so once (not once per request), and
    2 s after the file is back the answers are 200 again."""
    ws = new_workspace()
    est = lab.copy(ws)
    with serving(ws, [dict(est.vc, interval=3600)]) as srv:
        os.rename(ws.db, ws.db + '.real')
        with open(ws.db, 'w') as f:
            f.write('not a database\n' * 1000)
        try:
            answers = []
            for _ in range(8):
                t0 = time.time()
                a = srv.get('/api/v1/summary')
                answers.append((a.status, time.time() - t0, a.body))
        finally:
            os.replace(ws.db + '.real', ws.db)
        time.sleep(2.2)
        after = srv.get('/api/v1/summary').status
        logs = srv.logs()
    assert all(s == 503 for s, _, _ in answers), answers
    assert all(t < 1 for _, t, _ in answers), [round(t, 2) for _, t, _ in answers]
    err = json.loads(answers[0][2])['error']
    assert err['code'] == 'database_unavailable' and 'not a database' in err['message'], err
    assert logs.count('http: cannot open database') == 1, logs[-2000:]
    assert after == 200
