"""Operators' mistakes, as `vslint config-check`, `vslint collect` and `vslint serve` show them:
long values load, a broken file lists at most 20 problems, a NUL byte, a missing ca_file and an
unusable listen address fail config-check; secret files others can read are warned about (and
refused with strict_permissions), judged for the service account whoever runs the command;
root's one-shot commands leave the service's database to it, and the daemon names the file it
cannot open, its owner and the fix; the database is private whatever the umask; insecure=true
warns at every start; a pinned certificate thumbprint is the safe way to trust a self-signed
vCenter, a wrong pin names both fingerprints, and a certificate for another name says so."""
import grp
import hashlib
import os
import pwd
import ssl
import stat
import subprocess
import time

import pytest

from simlib import Sim, vslint, USER, VSLINT
from apilib import Serve, free_port, server_section


def config(ws, extra_vc='', extra='', password_mode=0o600):
    pw = ws.password_file()
    os.chmod(pw, password_mode)
    with open(ws.conf, 'w') as f:
        f.write('[database]\npath = %s\n\n[vcenter lab]\nurl = https://127.0.0.1:1/sdk\n'
                'user = %s\npassword_file = %s\n%s\n%s' % (ws.db, USER, pw, extra_vc, extra))
    return ws.conf


def start_logs(conf, port, ws):
    """What `vslint serve` with conf (listening on port) logs as it starts; it is stopped."""
    srv = Serve(conf, port, ws.dir)
    try:
        srv.wait_up()
        time.sleep(0.3)
        return srv.logs()
    finally:
        srv.stop()


def lines(res):
    return [l for l in res.stderr.splitlines() if l.strip()]


def test_long_values_load(workspace):
    reason = 'archive tier, sized by the backup vendor; ' * 12  # ~500 characters
    conf = config(workspace, extra='[waiver]\ncheck = snapshots\nobject = vm-*\nreason = %s\n'
                            'expires = 2099-01-31\n' % reason)
    res = vslint('config-check', '-c', conf)
    assert (res.returncode, res.stdout) == (0, 'configuration OK\n'), res.stderr


def test_many_problems_are_capped(workspace):
    conf = config(workspace, extra_vc=''.join('key%d = 1\n' % i for i in range(30)))
    res = vslint('config-check', '-c', conf)
    assert res.returncode == 2
    errs = lines(res)
    assert len(errs) == 21, errs
    assert errs[-1] == conf + ': and 10 more problems', errs[-1]


def test_nul_byte_is_an_error(workspace):
    conf = config(workspace)
    with open(conf, 'ab') as f:
        f.write(b'max_objects = 5\x0000\n')
    with open(conf, 'rb') as f:
        nul_line = f.read().count(b'\n')
    res = vslint('config-check', '-c', conf)
    assert res.returncode == 2
    assert '%s:%d: a NUL byte in the line' % (conf, nul_line) in res.stderr, res.stderr


def test_missing_ca_file_and_bad_listen_fail_config_check(workspace):
    conf = config(workspace, extra_vc='ca_file = %s/no-such-ca.pem\n' % workspace.dir,
                  extra='[server]\nlisten = 10.0.0:8080\n')
    res = vslint('config-check', '-c', conf)
    assert res.returncode == 2
    assert ('[vcenter lab] ca_file: cannot read %s/no-such-ca.pem: No such file'
            % workspace.dir) in res.stderr, res.stderr
    assert "[server] listen: '10.0.0:8080' is not ADDRESS:PORT" in res.stderr, res.stderr


def test_secret_files_readable_by_others(workspace):
    conf = config(workspace, password_mode=0o644)
    res = vslint('config-check', '-c', conf)
    assert res.returncode == 0 and res.stdout == 'configuration OK\n'
    assert ':7: [vcenter lab] password_file: warning: ' in res.stderr, res.stderr
    assert 'is readable by everyone (mode 0644)' in res.stderr

    token = os.path.join(workspace.dir, 'token')
    with open(token, 'w') as f:
        f.write('0123456789abcdef0123\n')
    os.chmod(token, 0o644)
    conf = config(workspace, password_mode=0o600,
                  extra='[server]\ntoken_file = %s\nstrict_permissions = true\n' % token)
    res = vslint('config-check', '-c', conf)
    assert res.returncode == 2
    assert '[server] token_file: %s is readable by everyone' % token in res.stderr
    assert 'strict_permissions is on' in res.stderr

    # The daemon says it at start, in its log.
    os.chmod(token, 0o600)
    port = free_port()
    conf = config(workspace, password_mode=0o604, extra=server_section(port))
    logs = start_logs(conf, port, workspace)
    assert 'password_file: warning: ' in logs, logs


def test_database_is_private_whatever_the_umask(workspace):
    port = free_port()
    conf = config(workspace, extra=server_section(port))
    old = os.umask(0)
    try:
        srv = Serve(conf, port, workspace.dir)
    finally:
        os.umask(old)
    try:
        srv.wait_ready()
        files = [workspace.db + s for s in ('', '-wal', '-shm')]
        modes = {p: stat.S_IMODE(os.stat(p).st_mode) for p in files if os.path.exists(p)}
        assert set(modes) == set(files), modes
        assert all(m == 0o600 for m in modes.values()), {p: oct(m) for p, m in modes.items()}
    finally:
        srv.stop()


def test_insecure_warns_at_every_start(workspace):
    port = free_port()
    conf = config(workspace, extra_vc='insecure = true\n', extra=server_section(port))
    res = vslint('collect', '-c', conf)
    assert '[vcenter lab] insecure: warning: ' in res.stderr, res.stderr
    logs = start_logs(conf, port, workspace)
    assert '[vcenter lab] insecure: warning: ' in logs, logs


def fingerprint(pem_path):
    with open(pem_path) as f:
        der = ssl.PEM_cert_to_DER_cert(f.read())
    return ':'.join('%02X' % b for b in hashlib.sha256(der).digest())


def test_pinned_thumbprint(workspace):
    with Sim('clean', tls=True) as sim:
        right = fingerprint(sim.cert_path)
        # openssl prints the same fingerprint an operator would copy.
        out = subprocess.run(['openssl', 'x509', '-noout', '-fingerprint', '-sha256', '-in',
                              sim.cert_path], capture_output=True, text=True).stdout
        assert out.strip().split('=', 1)[1] == right, out
        pw = workspace.password_file()
        conf = workspace.write_config([{'name': 'pinned', 'url': sim.url, 'user': USER,
                                 'password_file': pw, 'thumbprint': 'SHA256:' + right}])
        res = vslint('collect', '-c', conf)
        assert res.returncode == 0, res.stderr
        assert res.stderr.strip() == '', res.stderr  # no insecure warning

        wrong = ':'.join(['00'] * 32)
        conf = workspace.write_config([{'name': 'pinned', 'url': sim.url, 'user': USER,
                                 'password_file': pw, 'thumbprint': 'SHA256:' + wrong}])
        res = vslint('collect', '-c', conf)
        assert res.returncode == 2
        assert len(lines(res)) == 1, res.stderr
        assert 'SHA256:' + right in res.stderr and 'SHA256:' + wrong in res.stderr, res.stderr
        assert 'not the pinned thumbprint' in res.stderr


def test_name_mismatch_is_named(workspace):
    # The simulator's certificate names localhost, 127.0.0.1 and ::1; served on 127.0.0.2
    # with its CA trusted, only the name is wrong.
    with Sim('clean', tls=True, extra=('-listen', '127.0.0.2:0')) as sim:
        assert '127.0.0.2' in sim.url
        pw = workspace.password_file()
        conf = workspace.write_config([{'name': 'named', 'url': sim.url, 'user': USER,
                                 'password_file': pw, 'ca_file': sim.cert_path}])
        res = vslint('collect', '-c', conf)
        assert res.returncode == 2
        assert 'certificate name mismatch' in res.stderr, res.stderr
        assert 'not trusted' not in res.stderr, res.stderr



# The service account of these tests: Debian's `daemon` (uid 1), as the package's `vslint` is
# the unit's; [server] service_user names it. Giving files away needs root (CI runs as root).
SERVICE = 'daemon'


def service_layout(ws, dbfile_owner=None):
    """A state directory owned by the service account, a configuration and password file laid
    out as the README says (root:GROUP 0640): (conf, state dir, db path)."""
    svc = pwd.getpwnam(SERVICE)
    gname = grp.getgrgid(svc.pw_gid).gr_name
    os.chmod(ws.dir, 0o755)
    state = os.path.join(ws.dir, 'state')
    os.mkdir(state, 0o750)
    os.chown(state, svc.pw_uid, svc.pw_gid)
    db = os.path.join(state, 'vslint.db')
    pw = ws.password_file()
    os.chown(pw, 0, svc.pw_gid)
    os.chmod(pw, 0o640)
    with open(ws.conf, 'w') as f:
        f.write('[database]\npath = %s\n\n[vcenter lab]\nurl = https://127.0.0.1:1/sdk\n'
                'user = %s\npassword_file = %s\n\n[server]\nservice_user = %s\n'
                'strict_permissions = true\n' % (db, USER, pw, SERVICE))
    os.chown(ws.conf, 0, svc.pw_gid)
    os.chmod(ws.conf, 0o640)
    return ws.conf, state, db, svc, gname


def as_service(*args):
    return subprocess.run(['runuser', '-u', SERVICE, '--', VSLINT] + list(args),
                          capture_output=True, text=True, timeout=120)


def test_root_and_the_service_account_agree_on_the_readme_layout(workspace):
    if os.geteuid() != 0:
        pytest.skip('needs root to give files to the service account')
    conf, _, _, _, gname = service_layout(workspace)
    # root:GROUP 0640 is right for the service account: no warning as root or as it, even with
    # strict_permissions, and a one-shot command as root is not refused.
    for res in (vslint('config-check', '-c', conf), as_service('config-check', '-c', conf)):
        assert (res.returncode, res.stdout, res.stderr) == (0, 'configuration OK\n', ''), res
    res = vslint('inventory', '-c', conf)
    assert res.returncode == 0 and 'warning' not in res.stderr, res.stderr
    # root:root 0600, the old advice, is a file the service cannot read: config-check says so
    # as root, as it does as the service account.
    pw = os.path.join(workspace.dir, 'password')
    os.chown(pw, 0, 0)
    os.chmod(pw, 0o600)
    res = vslint('config-check', '-c', conf)
    assert res.returncode == 2, res.stderr
    assert ('[vcenter lab] password_file: %s cannot be read by %s, the account vslint serve runs '
            'as (mode 0600): chown root:%s %s && chmod 0640 %s' % (pw, SERVICE, gname, pw, pw)
            in res.stderr), res.stderr
    assert as_service('config-check', '-c', conf).returncode == 2
    # Readable by everyone: with strict_permissions one-shot commands warn, config-check refuses.
    os.chown(pw, 0, pwd.getpwnam(SERVICE).pw_gid)
    os.chmod(pw, 0o644)
    res = vslint('inventory', '-c', conf)
    assert res.returncode == 0, res.stderr
    assert 'password_file: warning: %s is readable by everyone (mode 0644)' % pw in res.stderr
    res = vslint('config-check', '-c', conf)
    assert res.returncode == 2 and 'strict_permissions is on' in res.stderr, res.stderr


def test_root_on_the_service_database_leaves_it_to_the_service(workspace):
    if os.geteuid() != 0:
        pytest.skip('needs root to give files to the service account')
    conf, _, db, svc, _ = service_layout(workspace)
    res = vslint('inventory', '-c', conf)
    assert res.returncode == 0, res.stderr
    for name in (db, db + '-wal', db + '-shm'):
        st = os.stat(name)
        assert (st.st_uid, st.st_gid, st.st_mode & 0o777) == (svc.pw_uid, svc.pw_gid, 0o600), name
    res = as_service('inventory', '-c', conf)
    assert res.returncode == 0, res.stderr


def test_the_daemon_names_the_database_file_its_owner_and_the_fix(workspace):
    if os.geteuid() != 0:
        pytest.skip('needs root to give files to the service account')
    conf, _, db, _, _ = service_layout(workspace)
    # What `vslint check` as root made before this fix: a root:root 0600 database.
    with open(db, 'w'):
        pass
    os.chmod(db, 0o600)
    res = subprocess.run(['runuser', '-u', SERVICE, '--', VSLINT, 'serve', '-c', conf],
                         capture_output=True, text=True, timeout=60)
    assert res.returncode == 2, res.stderr
    assert ('%s belongs to root:root (mode 0600) and vslint runs as %s: as root, chown %s: %s '
            '%s-wal %s-shm' % (db, SERVICE, SERVICE, db, db, db)) in res.stderr, res.stderr
    assert 'runuser -u %s -- vslint' % SERVICE in res.stderr
