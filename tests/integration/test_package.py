"""The Debian package (debian/, scripts/package.sh): it builds with dpkg-buildpackage, lintian
reports no error and no warning that debian/*lintian-overrides does not explain, and installed
into a throw-away root with `dpkg --root` it puts the binary, the conffile (0640 root:vslint),
the systemd unit (enabled, verified by systemd-analyze, exposure as README reports), the vslint
user, /var/lib/vslint, the man pages and the completion in place, and no simulator.
Runs when dpkg-buildpackage and lintian are installed (scripts/install-deps.sh installs them)."""
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
