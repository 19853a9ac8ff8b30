"""`vslint serve --log journal` sends each line to the systemd journal with structured fields:
the poller of a vCenter tags its lines VSLINT_VCENTER=NAME (so `journalctl VSLINT_VCENTER=prod`
finds them), with PRIORITY= and SYSLOG_IDENTIFIER=vslint. journald is not running here: the
test binds its own datagram socket over /run/systemd/journal in a private mount namespace and
reads what libsystemd's sd_journal_sendv sends there (the journal's native protocol)."""
import os
import shutil
import socket
import subprocess
import tempfile
import time

import pytest

from simlib import VSLINT

UNSHARE = shutil.which('unshare')


def parse(datagram):
    """KEY=value lines of the native protocol (no binary fields are sent for short lines)."""
    fields = {}
    for line in datagram.decode().split('\n'):
        if '=' in line:
            k, v = line.split('=', 1)
            fields.setdefault(k, v)
    return fields


def journal_lines(conf, seconds, args=('--log', 'journal')):
    tmp = tempfile.mkdtemp(prefix='vslint-journal-')
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(os.path.join(tmp, 'socket'))
    sock.settimeout(0.2)
    script = ('mount -t tmpfs tmpfs /run/systemd && mkdir /run/systemd/journal && '
              'mount --bind "$1" /run/systemd/journal && shift && exec "$@"')
    proc = subprocess.Popen([UNSHARE, '--mount', '--propagation', 'private', 'sh', '-c',
                             script, 'sh', tmp, VSLINT, 'serve', '-c', conf] + list(args),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    got = []
    try:
        until = time.time() + seconds
        while time.time() < until:
            try:
                got.append(parse(sock.recv(65536)))
            except socket.timeout:
                pass
    finally:
        proc.terminate()
        out, err = proc.communicate(timeout=30)
        sock.close()
        shutil.rmtree(tmp, ignore_errors=True)
    return got, err


@pytest.fixture
def unreachable_vcenter(workspace):
    """A vCenter on a port where nothing listens: its first poll fails at once."""
    s = socket.socket()
    s.bind(('127.0.0.1', 0))
    port = s.getsockname()[1]
    s.close()
    conf = workspace.write_config(
        [{'name': 'prod', 'url': 'http://127.0.0.1:%d/sdk' % port, 'user': 'u',
          'password_file': workspace.password_file(), 'interval': 10}],
        extra='\n[server]\nlisten = 127.0.0.1:%d\n' % port)
    return conf


def test_a_failed_poll_is_logged_with_its_vcenter_and_priority(unreachable_vcenter):
    if not UNSHARE or subprocess.run([UNSHARE, '--mount', 'true']).returncode != 0:
        pytest.fail('unshare --mount is needed to stand in for journald (util-linux, root)')
    lines, err = journal_lines(unreachable_vcenter, 4)
    failed = [f for f in lines if 'poll failed' in f.get('MESSAGE', '')]
    assert failed, 'no "poll failed" line reached the journal socket: %r %s' % (lines, err)
    f = failed[0]
    assert f['VSLINT_VCENTER'] == 'prod'
    assert f['PRIORITY'] == '3'  # LOG_ERR
    assert f['SYSLOG_IDENTIFIER'] == 'vslint'
    assert 'VSLINT_CHECK' not in f
    # The main thread's lines (serving, stopping) are about no vCenter in particular.
    serving = [f for f in lines if f.get('MESSAGE', '').startswith('serving http')]
    assert serving and 'VSLINT_VCENTER' not in serving[0] and serving[0]['PRIORITY'] == '6'
    assert 'poll failed' not in err, 'journal lines went to stderr too'


def test_stderr_logging_sends_nothing_to_the_journal(unreachable_vcenter):
    if not UNSHARE or subprocess.run([UNSHARE, '--mount', 'true']).returncode != 0:
        pytest.fail('unshare --mount is needed to stand in for journald (util-linux, root)')
    lines, err = journal_lines(unreachable_vcenter, 3, args=())
    assert lines == []
    assert 'vcenter prod: poll failed' in err


def test_journal_without_a_journal_falls_back_to_stderr(unreachable_vcenter):
    """Without journald's socket (a container, a machine without systemd) `--log journal`
    says so once and logs to stderr, instead of losing every line. The test mounts an empty /run
    in a private mount namespace, so that it holds wherever it runs."""
    if not UNSHARE or subprocess.run([UNSHARE, '--mount', 'true']).returncode != 0:
        pytest.fail('unshare --mount is needed to hide the journal (util-linux, root)')
    script = 'mount -t tmpfs tmpfs /run && exec "$@"'
    proc = subprocess.Popen([UNSHARE, '--mount', '--propagation', 'private', 'sh', '-c', script,
                             'sh', VSLINT, 'serve', '-c', unreachable_vcenter, '--log', 'journal'],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(3)
    proc.terminate()
    _, err = proc.communicate(timeout=30)
    assert 'no journal at /run/systemd/journal/socket' in err and 'logging to stderr' in err, err
    assert 'vcenter prod: poll failed' in err, err
