"""The database's care (docs/operations.md): `vslint db backup` while polls write (the copy
opens, passes integrity_check, holds a whole committed poll, mode 0600, replaces its target
only when good), `vslint db check`, and the files every command refuses with one clear line
and leaves unchanged: another program's SQLite file, a database from a newer vslint, random
bytes."""
import hashlib
import os
import subprocess
import sqlite3
import stat
import threading

import pytest

from simlib import Estate, vslint


def digest(path):
    with open(path, 'rb') as fh:
        return hashlib.sha256(fh.read()).hexdigest()


def conf_for(ws, db_path, name='other.conf'):
    """A configuration whose [database] path is db_path, with a vCenter nobody polls."""
    path = os.path.join(ws.dir, name)
    with open(path, 'w') as fh:
        fh.write('[database]\npath = %s\n\n[vcenter nowhere]\nurl = https://127.0.0.1:9/sdk\n'
                 'user = x\npassword_env = VSLINT_TEST_NO_PASSWORD\n' % db_path)
    return path


@pytest.fixture(params=['plain', 'wal', 'versioned'])
def foreign(request, new_workspace):
    """Another program's SQLite file (one table x): in rollback-journal mode, in WAL mode, and
    with a user_version of its own (3, which vslint's schemas also use)."""
    ws = new_workspace()
    path = os.path.join(ws.dir, 'other-program.db')
    con = sqlite3.connect(path)
    if request.param == 'wal':
        con.execute('PRAGMA journal_mode = WAL')
    con.execute('CREATE TABLE x (a)')
    con.execute("INSERT INTO x VALUES ('keep me')")
    if request.param == 'versioned':
        con.execute('PRAGMA user_version = 3')
    con.commit()
    con.close()
    return path, conf_for(ws, path)


def side_files(path):
    return sorted(f for f in os.listdir(os.path.dirname(path))
                  if f.startswith(os.path.basename(path) + '-'))


@pytest.mark.parametrize('cmd', [['inventory'], ['check', '--offline'], ['db', 'check'],
                                 ['collect']])
def test_another_programs_database_is_refused_and_left_alone(foreign, cmd):
    path, conf = foreign
    before = digest(path)
    sides = side_files(path)
    res = vslint(*(cmd[:1] + ['-c', conf] + cmd[1:]))
    assert res.returncode == 2, (res.returncode, res.stderr)
    assert path in res.stderr and 'not a vslint database' in res.stderr, res.stderr
    assert len(res.stderr.strip().splitlines()) == 1, res.stderr
    assert digest(path) == before
    assert side_files(path) == sides
    con = sqlite3.connect(path)
    assert [r[0] for r in con.execute("SELECT name FROM sqlite_master")] == ['x']
    con.close()


def test_a_database_another_program_holds_is_refused_unchanged(new_workspace):
    """A file whose owner holds an exclusive lock: refused unchanged, never opened for writing
    (which would switch it to WAL): read as it is on disk, or, when it cannot be read, refused
    for that."""
    import subprocess
    import sys
    ws = new_workspace()
    path = os.path.join(ws.dir, 'busy.db')
    con = sqlite3.connect(path)
    con.execute('CREATE TABLE x (a)')
    con.commit()
    con.close()
    before = digest(path)
    holder = subprocess.Popen([sys.executable, '-c', (
        'import sqlite3, time; c = sqlite3.connect(%r, isolation_level=None); '
        'c.execute("BEGIN EXCLUSIVE"); print("held", flush=True); time.sleep(12)') % path],
        stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == 'held'
        res = vslint('collect', '-c', conf_for(ws, path))
    finally:
        holder.kill()
        holder.wait()
    assert res.returncode == 2, res.stderr
    assert path in res.stderr and ('nothing was changed' in res.stderr or
                                   'not a vslint database' in res.stderr), res.stderr
    assert digest(path) == before
    assert side_files(path) == [] or side_files(path) == ['busy.db-journal']


def test_newer_database_is_refused(lab, new_workspace):
    ws = new_workspace()
    est = lab.copy(ws)
    con = sqlite3.connect(ws.db)
    con.execute('PRAGMA user_version = 999')
    con.commit()
    con.close()
    before = digest(ws.db)
    for cmd in (['inventory'], ['check', '--offline'], ['db', 'check']):
        res = vslint(*(cmd[:1] + ['-c', est.conf] + cmd[1:]))
        assert res.returncode == 2, (cmd, res.stderr)
        assert ws.db in res.stderr and 'newer vslint' in res.stderr and '999' in res.stderr, \
            res.stderr
    assert digest(ws.db) == before


def test_random_bytes_are_refused(new_workspace):
    ws = new_workspace()
    path = os.path.join(ws.dir, 'noise.db')
    with open(path, 'wb') as fh:
        fh.write(os.urandom(8192))
    before = digest(path)
    res = vslint('db', 'check', '-c', conf_for(ws, path))
    assert res.returncode == 2 and path in res.stderr, res.stderr
    assert 'not a database' in res.stderr, res.stderr
    assert digest(path) == before


def test_new_database_carries_vslints_application_id(lab):
    con = sqlite3.connect(lab.ws.db)
    assert con.execute('PRAGMA application_id').fetchone()[0] == 0x76736c74
    con.close()


def test_db_check_of_a_sound_database(lab):
    res = vslint('db', 'check', '-c', lab.conf)
    assert res.returncode == 0, res.stderr
    assert 'integrity ok' in res.stdout and lab.ws.db in res.stdout, res.stdout


def test_db_check_of_a_damaged_database(lab, new_workspace):
    """Garbage over the middle of the file: check says so (exit 1 with the restore hint, or 2
    when SQLite cannot read it at all), and changes nothing."""
    ws = new_workspace()
    est = lab.copy(ws)
    size = os.path.getsize(ws.db)
    with open(ws.db, 'r+b') as fh:
        fh.seek(size // 2 - (size // 2) % 4096)
        fh.write(b'\xa5' * 8192)
    before = digest(ws.db)
    res = vslint('db', 'check', '-c', est.conf)
    assert res.returncode in (1, 2), res.stdout + res.stderr
    out = res.stdout + res.stderr
    assert ('restore' in out and 'damaged' in out) or 'malformed' in out, out
    assert digest(ws.db) == before


def test_backup_is_whole_private_and_checked(lab, new_workspace):
    ws = new_workspace()
    out = os.path.join(ws.dir, 'nightly.db')
    res = vslint('db', 'backup', '-c', lab.conf, out)
    assert res.returncode == 0, res.stderr
    assert 'integrity ok' in res.stdout, res.stdout
    assert stat.S_IMODE(os.stat(out).st_mode) == 0o600
    assert not [f for f in os.listdir(ws.dir) if '.partial-' in f]
    src, cp = sqlite3.connect(lab.ws.db), sqlite3.connect(out)
    try:
        assert cp.execute('PRAGMA integrity_check').fetchone()[0] == 'ok'
        assert cp.execute('PRAGMA journal_mode').fetchone()[0] == 'delete'
        for table in ('polls', 'findings', 'vms', 'datastores', 'hosts'):
            q = 'SELECT count(*) FROM %s' % table
            assert cp.execute(q).fetchone() == src.execute(q).fetchone(), table
        q = 'SELECT fingerprint, first_seen_ms, status FROM findings ORDER BY fingerprint'
        assert cp.execute(q).fetchall() == src.execute(q).fetchall()
    finally:
        src.close()
        cp.close()
    # The copy is a database vslint reads as it reads its own.
    restored = Estate(lab.sim, ws, 'lab')
    with open(restored.conf) as fh:
        text = fh.read()
    with open(restored.conf, 'w') as fh:
        fh.write(text.replace(ws.db, out))
    res = vslint('check', '-c', restored.conf, '--offline', '--format', 'json',
                 '--fail-on', 'never')
    assert res.returncode == 0, res.stderr


def test_failed_backup_leaves_the_target_alone(foreign, new_workspace):
    """A backup of something that is not a vslint database fails and keeps OUT as it was."""
    _, conf = foreign
    ws = new_workspace()
    out = os.path.join(ws.dir, 'last-good.db')
    with open(out, 'wb') as fh:
        fh.write(b'yesterday')
    res = vslint('db', 'backup', '-c', conf, out)
    assert res.returncode == 2 and 'not a vslint database' in res.stderr, res.stderr
    with open(out, 'rb') as fh:
        assert fh.read() == b'yesterday'
    assert not [f for f in os.listdir(ws.dir) if '.partial-' in f]


def test_backup_removes_what_a_killed_backup_left(lab, new_workspace):
    """A backup killed before its rename leaves OUT.partial-PID; the next backup to OUT removes
    it once that process is gone, and leaves alone one whose process still runs (a backup in
    progress) and files that only look alike."""
    ws = new_workspace()
    out = os.path.join(ws.dir, 'nightly.db')
    sleeper = subprocess.Popen(['sleep', '60'])
    gone = subprocess.Popen(['true'])
    gone.wait()
    try:
        dead = out + '.partial-%d' % gone.pid
        live = out + '.partial-%d' % sleeper.pid
        other = os.path.join(ws.dir, 'weekly.db.partial-%d' % gone.pid)
        odd = out + '.partial-12x'
        for f in (dead, live, other, odd):
            with open(f, 'wb') as fh:
                fh.write(b'half a copy')
        res = vslint('db', 'backup', '-c', lab.conf, out)
        assert res.returncode == 0, res.stderr
        assert not os.path.exists(dead)
        for f in (live, other, odd):
            assert os.path.exists(f), f
    finally:
        sleeper.kill()
        sleeper.wait()


def test_backup_over_the_database_itself_is_refused(lab):
    before = digest(lab.ws.db)
    res = vslint('db', 'backup', '-c', lab.conf, lab.ws.db)
    assert res.returncode == 2 and 'the database itself' in res.stderr, res.stderr
    assert digest(lab.ws.db) == before


def test_backup_while_polls_write(lab, new_workspace):
    """Backups taken while `vslint collect` writes polls one after another: each copy opens,
    passes integrity_check, and holds a whole poll: its last poll is one the source had
    committed by the end of the backup, and that poll's snapshot is complete (as many VMs as
    every poll stores)."""
    ws = new_workspace()
    est = lab.copy(ws)
    con = sqlite3.connect(ws.db)
    vms = con.execute('SELECT count(*) FROM vms').fetchone()[0]
    con.close()
    assert vms > 10
    stop = threading.Event()
    polls = []

    def poll():
        while not stop.is_set():
            polls.append(vslint('collect', '-c', est.conf).returncode)

    t = threading.Thread(target=poll)
    t.start()
    try:
        for i in range(6):
            out = os.path.join(ws.dir, 'copy-%d.db' % i)
            res = vslint('db', 'backup', '-c', est.conf, out)
            assert res.returncode == 0, res.stderr
            con = sqlite3.connect(ws.db)
            last_src = con.execute('SELECT max(id) FROM polls').fetchone()[0]
            con.close()
            cp = sqlite3.connect(out)
            assert cp.execute('PRAGMA integrity_check').fetchone()[0] == 'ok'
            last = cp.execute('SELECT max(id) FROM polls').fetchone()[0]
            assert last <= last_src
            assert cp.execute('SELECT count(*) FROM vms').fetchone()[0] == vms
            cp.close()
    finally:
        stop.set()
        t.join()
    assert polls and set(polls) == {0}, polls
