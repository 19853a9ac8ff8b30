"""The shipped systemd unit's system call filter (dist/vslint.service) around the real daemon.

systemd builds a seccomp filter from the unit's SystemCallFilter= lines (systemd.exec(5)): the
first line decides the mode (a list of allowed calls, plus @default; or, starting with ~, a list
of denied ones), later lines add to or remove from the list, @groups stand for the calls
`systemd-analyze syscall-filter @group` lists (groups inside groups expanded). A call the filter
refuses kills the process with SIGSYS, or fails with SystemCallErrorNumber= when the unit sets
one. SystemCallArchitectures=native refuses (kills) the calls of any other ABI.

Here that filter is built the same way from the unit file itself, loaded in the child before it
execs, and the daemon run as the unit's ExecStart= runs it (with the unit's LimitNOFILE=) against
the simulator: it must poll the vCenter, stay alive, answer /api/v1/summary, have its poller at a
lower priority and exit 0 on SIGTERM; `vslint check` must finish under the same filter. As root
the tests run the daemon as the unit's User= (nobody when this machine has no such user), as the
unit does: root's processes make calls the unit's never do (SQLite gives root's WAL and journal
files to the database's owner with fchown, which @privileged holds). Only the filter, the
architectures, the user and the open-file limit are reproduced: not PrivateUsers=, the
namespaces, nor systemd's other seccomp-based settings (RestrictAddressFamilies=,
MemoryDenyWriteExecute=, RestrictRealtime=, RestrictNamespaces=, LockPersonality=). The harness
is checked first: a call the unit forbids (sched_setaffinity, @resources) must be refused as the
unit says.
Skipped without python3-seccomp (scripts/deps.list) or systemd-analyze."""
import errno
import json
import os
import pwd
import resource
import shlex
import shutil
import signal
import subprocess
import sys
import time
import urllib.request

import pytest

from apilib import free_port, server_section
from simlib import VSLINT, vcenter

try:
    import seccomp
except ImportError:
    seccomp = None

SOURCE_ROOT = os.environ.get('SOURCE_ROOT', '.')
UNIT = os.path.join(SOURCE_ROOT, 'dist', 'vslint.service')

pytestmark = [
    pytest.mark.skipif(seccomp is None,
                       reason='needs python3-seccomp (scripts/deps.list: apt-get install '
                              'python3-seccomp)'),
    pytest.mark.skipif(not shutil.which('systemd-analyze'),
                       reason='needs systemd-analyze (the systemd package) to expand the '
                              "unit's @groups"),
]


def service_settings(path):
    """The [Service] section's assignments, in order: [(key, value)]."""
    settings, section, pending = [], None, ''
    with open(path) as f:
        for raw in f:
            line = pending + raw.rstrip('\n')
            pending = ''
            if line.endswith('\\'):
                pending = line[:-1] + ' '
                continue
            line = line.strip()
            if not line or line[0] in '#;':
                continue
            if line.startswith('['):
                section = line
            elif section == '[Service]' and '=' in line:
                key, value = line.split('=', 1)
                settings.append((key.strip(), value.strip()))
    return settings


_groups = {}


def expand(name):
    """The system calls name stands for: itself, or for @group what `systemd-analyze
    syscall-filter @group` lists, groups inside it expanded in turn."""
    if not name.startswith('@'):
        return {name}
    if name not in _groups:
        res = subprocess.run(['systemd-analyze', 'syscall-filter', '--no-pager', name],
                             capture_output=True, text=True, timeout=60)
        lines = res.stdout.splitlines()
        assert res.returncode == 0 and lines and lines[0].strip() == name, \
            'systemd-analyze syscall-filter %s: %s%s' % (name, res.stdout, res.stderr)
        calls = set()
        for line in lines[1:]:
            word = line.strip()
            if not line.startswith((' ', '\t')) or not word or word.startswith('#'):
                continue
            calls |= expand(word)
        _groups[name] = calls
    return _groups[name]


def errno_of(value):
    """SystemCallErrorNumber='s (or a call's :ERRNO's) number; None for kill."""
    if value in ('', 'kill'):
        return None
    if value.isdigit():
        return int(value)
    number = getattr(errno, value, None)
    assert isinstance(number, int), 'unknown errno name %r in the unit' % value
    return number


class UnitFilter:
    """The seccomp filter the unit's settings make (see the module's comment)."""

    def __init__(self, settings):
        self.allow_list = None  # None: no SystemCallFilter= (or it was reset)
        self.listed = {}  # call -> its own errno (a deny list's NAME:ERRNO) or None
        self.errno = None  # SystemCallErrorNumber=; None kills
        self.archs = None  # SystemCallArchitectures=, None when not set
        self.nofile = None  # LimitNOFILE= as (soft, hard)
        for key, value in settings:
            if key == 'SystemCallFilter':
                self._filter_line(value)
            elif key == 'SystemCallErrorNumber':
                self.errno = errno_of(value)
            elif key == 'SystemCallArchitectures':
                self.archs = value.split() if value else None
            elif key == 'LimitNOFILE':
                soft, _, hard = value.partition(':')
                self.nofile = (int(soft), int(hard or soft))

    def _filter_line(self, value):
        if not value:
            self.allow_list, self.listed = None, {}
            return
        invert = value.startswith('~')
        if invert:
            value = value[1:]
        if self.allow_list is None:
            self.allow_list = not invert
            if self.allow_list:  # an allow list always lets the @default calls through
                self.listed = dict.fromkeys(expand('@default'))
        for word in value.split():
            name, _, err = word.partition(':')
            for call in expand(name):
                # Listed in the mode's sense: allowed in an allow list, denied in a deny list.
                if invert != self.allow_list:
                    self.listed[call] = errno_of(err) if err else None
                else:
                    self.listed.pop(call, None)

    def refused(self, err=None):
        err = self.errno if err is None else err
        return seccomp.KILL_PROCESS if err is None else seccomp.ERRNO(err)

    def build(self):
        """The libseccomp filter (not loaded yet); the calls this architecture does not have
        are skipped, as systemd skips them."""
        if self.allow_list is None:
            flt = seccomp.SyscallFilter(seccomp.ALLOW)
        elif self.allow_list:
            flt = seccomp.SyscallFilter(self.refused())
        else:
            flt = seccomp.SyscallFilter(seccomp.ALLOW)
        # The native architecture's filter is there from the start; another ABI's calls meet
        # the bad-architecture action, which kills as systemd's does.
        flt.set_attr(seccomp.Attr.ACT_BADARCH, seccomp.KILL_PROCESS)
        for arch in self.archs or ():
            if arch != 'native':
                flt.add_arch(getattr(seccomp.Arch, arch.upper().replace('-', '_')))
        for call, err in sorted(self.listed.items()):
            try:
                seccomp.resolve_syscall(seccomp.Arch.NATIVE, call)
            except (ValueError, RuntimeError):
                continue
            action = seccomp.ALLOW if self.allow_list else self.refused(err)
            try:
                flt.add_rule(action, call)
            except (ValueError, RuntimeError):
                continue  # a pseudo call libseccomp cannot place here
        return flt

    def preexec(self):
        """A preexec_fn: the unit's open-file limit, then the filter, in the child (which
        subprocess has made the unit's user already)."""
        flt = self.build()
        nofile = self.nofile

        def load():
            if nofile:
                hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
                if os.geteuid() == 0 or hard == resource.RLIM_INFINITY or hard >= nofile[1]:
                    resource.setrlimit(resource.RLIMIT_NOFILE, nofile)
                else:  # not root: the most this user's hard limit allows
                    resource.setrlimit(resource.RLIMIT_NOFILE, (min(nofile[0], hard), hard))
            flt.load()
        return load


@pytest.fixture(scope='module')
def unit():
    settings = service_settings(UNIT)
    flt = UnitFilter(settings)
    assert flt.allow_list is not None, 'the unit has no SystemCallFilter='
    execstart = shlex.split(dict(settings)['ExecStart'])
    user = {}
    if os.geteuid() == 0:
        try:
            pw = pwd.getpwnam(dict(settings).get('User', 'nobody'))
        except KeyError:
            pw = pwd.getpwnam('nobody')
        user = {'user': pw.pw_uid, 'group': pw.pw_gid, 'extra_groups': []}
    return {'filter': flt, 'execstart': execstart, 'user': user}


def run_as_unit(unit, ws, args, popen=False, **kw):
    """args run as the unit runs its command: as its user (the workspace given to that user)
    under its limits and filter."""
    if unit['user']:
        for top, dirs, files in os.walk(ws.dir):
            for name in [top] + [os.path.join(top, n) for n in dirs + files]:
                os.chown(name, unit['user']['user'], unit['user']['group'])
    kw.update(unit['user'], preexec_fn=unit['filter'].preexec())
    return subprocess.Popen(args, **kw) if popen else subprocess.run(args, **kw)


def died(rc):
    if rc == -signal.SIGSYS:
        return 'killed by SIGSYS (exit %d): it made a system call the filter forbids' % rc
    return 'exit status %s' % rc


def test_the_harness_refuses_what_the_unit_forbids(unit):
    """sched_setaffinity is in @resources, which the unit denies, though the kernel lets any
    process set its own affinity: under the filter it kills, or fails with the unit's
    SystemCallErrorNumber=. And the filter lets a Python process start and exit."""
    flt = unit['filter']
    assert 'sched_setaffinity' not in flt.listed and 'clone3' in flt.listed
    code = ('import os\ntry:\n    os.sched_setaffinity(0, os.sched_getaffinity(0))\n'
            'except OSError as e:\n    print(e.errno)\nelse:\n    print("allowed")\n')
    plain = subprocess.run([sys.executable, '-S', '-c', code], capture_output=True, text=True,
                           timeout=60)
    assert (plain.returncode, plain.stdout.strip()) == (0, 'allowed'), plain
    res = subprocess.run([sys.executable, '-S', '-c', code], capture_output=True, text=True,
                         timeout=60, preexec_fn=flt.preexec(), **unit['user'])
    if flt.errno is None:
        assert res.returncode == -signal.SIGSYS, (res.returncode, res.stdout, res.stderr)
    else:
        assert (res.returncode, res.stdout.strip()) == (0, str(flt.errno)), res


def thread_nice(pid):
    """{thread name: its nice value} of a process's threads (the greatest for a shared name)."""
    out = {}
    task = '/proc/%d/task' % pid
    for tid in os.listdir(task):
        try:
            with open(os.path.join(task, tid, 'stat')) as f:
                stat = f.read()
        except OSError:
            continue  # a thread that ended
        name = stat[stat.index('(') + 1:stat.rindex(')')]
        nice = int(stat[stat.rindex(')') + 2:].split()[16])  # field 19, nice
        out[name] = max(out.get(name, nice), nice)
    return out


def test_serve_polls_under_the_units_filter(unit, clean_sim, workspace):
    port = free_port()
    conf = workspace.write_config([vcenter(workspace, clean_sim.url, 'lab')],
                                  extra=server_section(port))
    args = [VSLINT if a == '/usr/bin/vslint' else conf if a == '/etc/vslint/vslint.conf' else a
            for a in unit['execstart']]
    assert args[:2] == [VSLINT, 'serve'] and conf in args, unit['execstart']
    log_path = os.path.join(workspace.dir, 'serve.log')
    with open(log_path, 'w') as log:
        proc = run_as_unit(unit, workspace, args, popen=True, stdout=log,
                           stderr=subprocess.STDOUT)

    def logs():
        with open(log_path, errors='replace') as f:
            return f.read()[-3000:]

    try:
        lab, deadline = None, time.time() + 90
        while time.time() < deadline:
            if proc.poll() is not None:
                pytest.fail('vslint serve under the unit\'s filter died: %s\n%s'
                            % (died(proc.returncode), logs()))
            try:
                with urllib.request.urlopen('http://127.0.0.1:%d/api/v1/summary' % port,
                                            timeout=10) as r:
                    summary = json.loads(r.read())
                lab = [v for v in summary['vcenters'] if v['name'] == 'lab'][0]
                if (lab.get('last_poll') or {}).get('finished'):
                    break
            except OSError:
                pass
            time.sleep(0.2)
        else:
            pytest.fail('no poll of lab finished in 90 s: %s\n%s' % (lab, logs()))
        assert lab['last_poll']['ok'] is True, (lab, logs())
        assert lab['polled_once'], lab
        # A second later the pollers are at their wait and the daemon still answers.
        time.sleep(1)
        assert proc.poll() is None, 'died after its poll: %s\n%s' % (died(proc.returncode),
                                                                     logs())
        with urllib.request.urlopen('http://127.0.0.1:%d/healthz' % port, timeout=10) as r:
            assert r.status == 200
        # The unit lets the poller lower its own priority (what `top -H` shows): not refused
        # with EPERM either (unless the tests run at nice 19 already, where none is lower).
        nice = thread_nice(proc.pid)
        assert nice['poll:lab'] > nice['vslint'] or nice['vslint'] == 19, nice
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    # The unit's KillSignal=SIGTERM: the polls finish and it exits 0.
    assert proc.returncode == 0, '%s\n%s' % (died(proc.returncode), logs())


def test_check_runs_under_the_units_filter(unit, clean_sim, workspace):
    """One poll and an evaluation, its checks on two threads (clone3/clone)."""
    conf = workspace.write_config([vcenter(workspace, clean_sim.url, 'lab')])
    res = run_as_unit(unit, workspace,
                      [VSLINT, 'check', '-c', conf, '--format', 'json', '--fail-on', 'never'],
                      capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, '%s\n%s' % (died(res.returncode), res.stderr[-3000:])
    assert isinstance(json.loads(res.stdout)['findings'], list)
