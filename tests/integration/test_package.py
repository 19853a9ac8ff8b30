"""The Debian package (debian/, scripts/package.sh): it builds with dpkg-buildpackage, lintian
reports no error and no warning that debian/*lintian-overrides does not explain, and installed
into a throw-away root with `dpkg --root` it puts the binary, the conffile (0640 root:vslint),
the systemd unit (enabled, verified by systemd-analyze, exposure as README reports), the vslint
user, /var/lib/vslint, the man pages and the completion in place, and no simulator.
Then, installed on this machine with `dpkg -i` (see the comment above the `system` fixture for
why), as an administrator meets it: the conffile given to group vslint, `config-check` saying
the same as root and as vslint on the README's layout with strict_permissions, `check` as root
leaving the database to vslint, `serve` as the unit runs it with a reload, a reinstall keeping
the administrator's stricter conffile mode and a dpkg-statoverride, purge removing
/var/lib/vslint and naming what it left, a reinstall after purge starting afresh, and every
/usr/share/doc/vslint path the installed text names being there.
Runs when dpkg-buildpackage and lintian are installed (scripts/install-deps.sh installs them)."""
import grp
import os
import re
import shutil
import subprocess
import tempfile

import pytest

SOURCE_ROOT = os.environ.get('SOURCE_ROOT', '.')
TOOLS = ('dpkg-buildpackage', 'lintian', 'dpkg', 'systemd-analyze', 'systemd-sysusers')
pytestmark = pytest.mark.skipif(not all(shutil.which(t) for t in TOOLS),
                                reason='needs %s (scripts/install-deps.sh)' % ', '.join(TOOLS))


def meson_version():
    with open(os.path.join(SOURCE_ROOT, 'meson.build')) as f:
        return re.search(r"^\s*version\s*:\s*'([^']+)'", f.read(), re.M).group(1)


def run(*args, **kw):
    return subprocess.run(list(args), capture_output=True, text=True, timeout=900, **kw)


@pytest.fixture(scope='module')
def built():
    """scripts/package.sh into a temporary directory: {dir, deb, changes}."""
    out = tempfile.mkdtemp(prefix='vslint-deb-')
    res = run(os.path.join(SOURCE_ROOT, 'scripts', 'package.sh'),
              env=dict(os.environ, OUT=out), cwd=SOURCE_ROOT)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    arch = run('dpkg-architecture', '-qDEB_HOST_ARCH').stdout.strip()
    base = os.path.join(out, 'vslint_%s_%s' % (meson_version(), arch))
    yield {'dir': out, 'deb': base + '.deb', 'changes': base + '.changes'}
    shutil.rmtree(out, ignore_errors=True)


@pytest.fixture(scope='module')
def installed(built):
    """The package installed with `dpkg --root` into an empty root (its libraries are not
    there: dependencies are forced; maintainer scripts run chrootless with DPKG_ROOT)."""
    root = tempfile.mkdtemp(prefix='vslint-root-')
    for d in ('var/lib/dpkg/info', 'var/lib/dpkg/updates', 'etc'):
        os.makedirs(os.path.join(root, d))
    for name, text in (('var/lib/dpkg/status', ''), ('etc/passwd', 'root:x:0:0::/root:/bin/sh\n'),
                       ('etc/group', 'root:x:0:\n')):
        with open(os.path.join(root, name), 'w') as f:
            f.write(text)
    res = run('dpkg', '--root=' + root, '--force-depends', '--force-script-chrootless',
              '--log=/dev/null', '-i', built['deb'])
    assert res.returncode == 0, res.stdout + res.stderr
    yield root
    shutil.rmtree(root, ignore_errors=True)


def test_the_deb_is_named_by_meson_builds_version(built):
    assert os.path.exists(built['deb']), os.listdir(built['dir'])
    assert run('dpkg-deb', '-f', built['deb'], 'Version').stdout.strip() == meson_version()


def test_lintian_reports_no_error_and_no_unexplained_warning(built):
    res = run('lintian', '--fail-on', 'error,warning', '--pedantic', built['changes'])
    bad = [l for l in res.stdout.splitlines() if re.match(r'^[EW]: ', l)]
    assert res.returncode == 0 and not bad, res.stdout + res.stderr
    # Every override says why, in the comment above it.
    for path in ('debian/vslint.lintian-overrides', 'debian/source/lintian-overrides'):
        full = os.path.join(SOURCE_ROOT, path)
        if not os.path.exists(full):
            continue
        lines = open(full).read().splitlines()
        for i, line in enumerate(lines):
            if line and not line.startswith('#'):
                assert i > 0 and lines[i - 1].startswith('#'), '%s: no reason for %r' % (path, line)


def test_files_modes_and_no_simulator(built):
    listing = run('dpkg-deb', '-c', built['deb']).stdout
    files = {}
    for line in listing.splitlines():
        mode, owner, _, _, _, name = line.split(None, 5)
        files[name.split(' -> ')[0].lstrip('.')] = (mode, owner)
    want = {
        '/usr/bin/vslint': '-rwxr-xr-x',
        '/etc/vslint/vslint.conf': '-rw-r-----',
        '/lib/systemd/system/vslint.service': '-rw-r--r--',
        '/usr/lib/sysusers.d/vslint.conf': '-rw-r--r--',
        '/usr/lib/tmpfiles.d/vslint.conf': '-rw-r--r--',
        '/usr/share/man/man1/vslint.1.gz': '-rw-r--r--',
        '/usr/share/man/man5/vslint.conf.5.gz': '-rw-r--r--',
        '/usr/share/bash-completion/completions/vslint': '-rw-r--r--',
        '/usr/share/doc/vslint/examples/vslint.rules.yml': '-rw-r--r--',
        '/usr/share/doc/vslint/examples/vslint.json': '-rw-r--r--',
        '/usr/share/doc/vslint/examples/rules/thin-disk-max-size.sql': '-rw-r--r--',
        '/usr/share/doc/vslint/examples/rules/san-lun-paths.sql': '-rw-r--r--',
        '/usr/share/doc/vslint/examples/github-actions.yml': '-rw-r--r--',
        '/usr/share/doc/vslint/examples/gitlab-ci.yml': '-rw-r--r--',
        '/usr/share/doc/vslint/examples/Jenkinsfile': '-rw-r--r--',
        '/usr/share/doc/vslint/examples/vslint-backup.timer': '-rw-r--r--',
        '/usr/share/doc/vslint/examples/vcenter-role.sh': '-rw-r--r--',
        '/usr/share/doc/vslint/docs/ci.md': '-rw-r--r--',
        '/usr/share/doc/vslint/docs/operations.md': '-rw-r--r--',
        '/usr/share/doc/vslint/docs/rules.md': '-rw-r--r--',
    }
    for name, mode in want.items():
        assert name in files, name
        assert files[name] == (mode, 'root/root'), (name, files[name])
    assert not [f for f in files if re.search(r'vcsim|/sim/|gocache|test', f)]
    conffiles = run('dpkg-deb', '--info', built['deb'], 'conffiles').stdout.split()
    assert conffiles == ['/etc/vslint/vslint.conf']


def test_installed_root_has_the_user_the_group_readable_conffile_and_the_state_dir(installed):
    passwd = open(os.path.join(installed, 'etc/passwd')).read()
    group = open(os.path.join(installed, 'etc/group')).read()
    user = re.search(r'^vslint:x:(\d+):(\d+):[^:]*:/var/lib/vslint:(\S+)$', passwd, re.M)
    assert user, passwd
    gid = int(re.search(r'^vslint:x:(\d+):', group, re.M).group(1))
    st = os.stat(os.path.join(installed, 'etc/vslint/vslint.conf'))
    assert (st.st_uid, st.st_gid, st.st_mode & 0o7777) == (0, gid, 0o640)
    st = os.stat(os.path.join(installed, 'var/lib/vslint'))
    assert (st.st_uid, st.st_gid, st.st_mode & 0o7777) == (int(user.group(1)), gid, 0o750)


def test_the_unit_is_enabled_but_waits_for_a_vcenter(installed, tmp_path):
    link = os.path.join(installed, 'etc/systemd/system/multi-user.target.wants/vslint.service')
    assert os.readlink(link) == '/lib/systemd/system/vslint.service'
    unit = open(os.path.join(installed, 'lib/systemd/system/vslint.service')).read()
    cond = re.search(r'^ExecCondition=(.*)$', unit, re.M).group(1).replace('\\\\', '\\')
    example = os.path.join(installed, 'etc/vslint/vslint.conf')
    configured = tmp_path / 'configured.conf'
    configured.write_text(open(example).read() + '\n[vcenter prod]\nurl = https://vc/sdk\n')
    assert run('sh', '-c', cond.replace('/etc/vslint/vslint.conf', example)).returncode == 1
    assert run('sh', '-c', cond.replace('/etc/vslint/vslint.conf', str(configured))).returncode == 0
    # The example itself is a configuration vslint reads; it names no vCenter yet.
    res = run(os.path.join(installed, 'usr/bin/vslint'), 'config-check', '-c', example)
    assert res.returncode == 2 and 'no [vcenter NAME] section' in res.stderr, res.stderr


def test_the_installed_binary_prints_meson_builds_version(installed):
    res = run(os.path.join(installed, 'usr/bin/vslint'), '--version')
    assert res.stdout.strip() == 'vslint ' + meson_version()


def unit_for_host(installed, tmp_path):
    """The installed unit with ExecStart= pointing into the root, so systemd-analyze finds it."""
    unit = open(os.path.join(installed, 'lib/systemd/system/vslint.service')).read()
    path = tmp_path / 'vslint.service'
    path.write_text(unit.replace('/usr/bin/vslint', os.path.join(installed, 'usr/bin/vslint')))
    return str(path)


def test_systemd_analyze_verify_accepts_the_unit(installed, tmp_path):
    env = dict(os.environ, MANPATH=os.path.join(installed, 'usr/share/man'))
    res = run('systemd-analyze', 'verify', unit_for_host(installed, tmp_path), env=env)
    assert res.returncode == 0 and not res.stderr.strip(), res.stderr


def test_systemd_analyze_security_exposure_is_what_the_readme_says(installed, tmp_path):
    res = run('systemd-analyze', 'security', '--offline=true', '--no-pager',
              unit_for_host(installed, tmp_path))
    m = re.search(r'Overall exposure level for \S+: (\d+\.\d)', res.stdout)
    assert m, res.stdout[-2000:] + res.stderr
    readme = open(os.path.join(SOURCE_ROOT, 'README.md')).read()
    said = re.search(r'`systemd-analyze security` rates its exposure (\d+\.\d)', readme)
    assert said, 'README.md does not report the exposure figure'
    assert m.group(1) == said.group(1)
    assert float(m.group(1)) <= 2.0


# ---- installed on this system, as an administrator meets it ----------------------------------
#
# Why the real system and not a throw-away root: what issue 28 is about happens between root,
# the vslint user and files dpkg, systemd-sysusers and vslint itself create (runuser needs the
# user in this system's passwd; config-check judges files for an account that must exist; the
# conffile's handling on reinstall is dpkg's own). `dpkg --root` with an empty root runs the
# maintainer scripts chrootless and has no users or libraries to run the binary as vslint; a
# debootstrapped chroot would take minutes of mirror traffic per run. So the package is
# installed with `dpkg -i` into the machine running the tests (CI runs them as root on a
# throw-away machine), and purged afterwards with the user removed. Skipped when not root, when
# a vslint package is already installed (never touch a real installation) or without runuser.
# The daemon is run as the unit runs it (User=vslint, `serve --log=journal`), by runuser, since
# no systemd is PID 1 here.

CONF = '/etc/vslint/vslint.conf'
PASSWORD_FILE = '/etc/vslint/prod.password'


def installed_here():
    res = run('dpkg-query', '-W', '-f=${Status}', 'vslint')
    return res.returncode == 0 and 'installed' in res.stdout and 'not-installed' not in res.stdout


def as_vslint(*args, **kw):
    return run('runuser', '-u', 'vslint', '--', '/usr/bin/vslint', *args, **kw)


@pytest.fixture(scope='module')
def system(built, sim):
    if os.geteuid() != 0 or not shutil.which('runuser'):
        pytest.skip('installs the package on this machine: needs root and runuser')
    if installed_here() or os.path.exists('/etc/vslint') or os.path.exists('/var/lib/vslint'):
        pytest.skip('vslint is installed on this machine already: not touching it')
    had_user = run('getent', 'passwd', 'vslint').returncode == 0
    res = run('dpkg', '-i', built['deb'])
    assert res.returncode == 0, res.stdout + res.stderr
    try:
        yield {'deb': built['deb'], 'sim': sim}
    finally:
        run('dpkg', '--purge', 'vslint')
        shutil.rmtree('/etc/vslint', ignore_errors=True)
        shutil.rmtree('/var/lib/vslint', ignore_errors=True)
        if not had_user:
            run('userdel', 'vslint')
            run('groupdel', 'vslint')


def configure(sim, listen=None):
    """The README's steps: the vCenter in the conffile, its password file made with
    `install -m 0640 -g vslint`."""
    with open(CONF) as f:
        text = f.read()
    text += '\n[vcenter prod]\nurl = %s\nuser = %s\npassword_file = %s\n' % (
        sim.url, 'vslint', PASSWORD_FILE)
    if listen:
        text += '\n[server]\nlisten = %s\nstrict_permissions = true\n' % listen
    with open(CONF, 'w') as f:
        f.write(text)
    res = subprocess.run(['install', '-m', '0640', '-g', 'vslint', '/dev/stdin', PASSWORD_FILE],
                         input='vslint-secret\n', capture_output=True, text=True, timeout=30)
    assert res.returncode == 0, res.stderr


def owner(path):
    import grp
    import pwd
    st = os.stat(path)
    return '%s:%s %04o' % (pwd.getpwuid(st.st_uid).pw_name, grp.getgrgid(st.st_gid).gr_name,
                           st.st_mode & 0o7777)


def test_system_install_gives_the_conffile_to_group_vslint(system):
    assert owner(CONF) == 'root:vslint 0640'
    assert owner('/var/lib/vslint') == 'vslint:vslint 0750'


def test_system_config_check_agrees_as_root_and_as_vslint(system):
    from apilib import free_port
    system['port'] = free_port()
    configure(system['sim'], listen='127.0.0.1:%d' % system['port'])
    both = (run('vslint', 'config-check', '-c', CONF), as_vslint('config-check', '-c', CONF))
    for res in both:
        # The test's simulator speaks http://, which config-check warns about (the password
        # would cross the network in clear): that warning, and nothing else.
        lines = res.stderr.splitlines()
        assert (res.returncode, res.stdout) == (0, 'configuration OK\n'), res
        assert len(lines) == 1 and 'url: warning: http:// sends the password' in lines[0], res
    assert both[0].stderr == both[1].stderr


def test_system_root_check_leaves_the_database_to_vslint(system):
    res = run('vslint', 'check', '-c', CONF, '--fail-on', 'never')
    assert res.returncode == 0, res.stderr
    assert 'warning' not in res.stderr, res.stderr
    for suffix in ('', '-wal', '-shm'):
        assert owner('/var/lib/vslint/vslint.db' + suffix) == 'vslint:vslint 0600', suffix
    res = as_vslint('check', '-c', CONF, '--offline', '--fail-on', 'never')
    assert res.returncode == 0, res.stderr


def test_system_serve_as_the_unit_runs_it_and_reload(system):
    import signal
    import time
    import urllib.request
    log = tempfile.TemporaryFile(mode='w+')
    # The unit's ExecStart= (--log=journal); with no journald here it says so and logs to
    # stderr, where the assertions below read it.
    proc = subprocess.Popen(['runuser', '-u', 'vslint', '--', '/usr/bin/vslint', 'serve', '-c',
                             CONF, '--log=journal'], stdout=log, stderr=subprocess.STDOUT)
    url = 'http://127.0.0.1:%d' % system['port']
    try:
        deadline = time.time() + 60
        while time.time() < deadline:
            try:
                with urllib.request.urlopen(url + '/readyz', timeout=5) as r:
                    if r.status == 200:
                        break
            except OSError:
                time.sleep(0.5)
        else:
            log.seek(0)
            pytest.fail('serve never ready: ' + log.read()[-3000:])
        # runuser's child is the daemon: signal it, as systemctl reload does.
        child = run('pgrep', '-P', str(proc.pid)).stdout.split()
        target = int(child[0]) if child else proc.pid
        os.kill(target, signal.SIGHUP)
        deadline = time.time() + 30
        text = ''
        while time.time() < deadline and 'reloaded ' + CONF not in text:
            time.sleep(0.5)
            log.seek(0)
            text = log.read()
        assert 'reloaded ' + CONF in text, text[-3000:]
        assert 'vcenter prod: read in full in' in text, text[-3000:]
        if not os.path.exists('/run/systemd/journal/socket'):
            assert 'no journal at /run/systemd/journal/socket' in text, text[-3000:]
        assert 'warning' not in text, text[-3000:]
        with urllib.request.urlopen(url + '/api/v1/summary', timeout=5) as r:
            assert r.status == 200
    finally:
        child = run('pgrep', '-P', str(proc.pid)).stdout.split()
        for pid in child or [str(proc.pid)]:
            os.kill(int(pid), signal.SIGTERM)
        proc.wait(timeout=60)


def test_system_reinstall_keeps_the_administrators_stricter_conffile(system):
    os.chmod(CONF, 0o440)
    res = run('dpkg', '-i', system['deb'])
    assert res.returncode == 0, res.stdout + res.stderr
    assert owner(CONF) == 'root:vslint 0440'
    assert 'prod' in open(CONF).read()
    # A dpkg-statoverride wins, even one that looks like the shipped root:root 0640 (which
    # postinst would otherwise give to group vslint).
    res = run('dpkg-statoverride', '--update', '--add', 'root', 'root', '0640', CONF)
    assert res.returncode == 0, res.stderr
    try:
        res = run('dpkg', '-i', system['deb'])
        assert res.returncode == 0, res.stdout + res.stderr
        assert owner(CONF) == 'root:root 0640'
    finally:
        run('dpkg-statoverride', '--remove', CONF)
        os.chown(CONF, 0, grp.getgrnam('vslint').gr_gid)


def test_system_purge_removes_the_state_and_names_what_it_left(system):
    res = run('dpkg', '--purge', 'vslint')
    assert res.returncode == 0, res.stdout + res.stderr
    assert not os.path.exists('/var/lib/vslint')
    assert not os.path.exists(CONF)
    assert os.path.exists(PASSWORD_FILE)
    said = res.stdout + res.stderr
    assert 'left what an administrator made in /etc/vslint' in said and PASSWORD_FILE in said, said
    # A reinstall after the purge starts without the old database.
    res = run('dpkg', '-i', system['deb'])
    assert res.returncode == 0, res.stdout + res.stderr
    assert os.listdir('/var/lib/vslint') == []
    assert owner(CONF) == 'root:vslint 0640'


def test_system_installed_text_points_at_shipped_files(system):
    """Every /usr/share/doc/vslint path the help, the man page and the example configuration
    name is there, and so is every docs/ file the installed README links to."""
    doc = '/usr/share/doc/vslint'
    texts = [run('vslint', 'help', c).stdout for c in ('serve', 'inventory', 'check', 'collect')]
    texts.append(open(CONF).read())
    named = set()
    for t in texts:
        named |= set(re.findall(r'(/usr/share/doc/vslint/[\w./-]*\w)', t))
    assert doc + '/docs/openapi.yaml' in named and doc + '/docs/inventory.md' in named, named
    assert doc + '/docs/arrays.md' in named, named
    readme = open(os.path.join(doc, 'README.md')).read()
    for rel in set(re.findall(r'`?(docs/[\w.-]+\.(?:md|yaml))', readme)):
        named.add(os.path.join(doc, rel))
    missing = sorted(p for p in named if not os.path.exists(p))
    assert not missing, missing
