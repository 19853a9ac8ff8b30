"""`vslint plan` and GET /api/v1/plan against the simulator's violations estate: the esxcli plan
passes a parser built from VMware's ESXCLI reference (esxcli_ref.py) and `bash -n`; its steps
are the planted violations a host setting fixes, grouped by host, and nothing else; the rest
are tasks; the PowerCLI plan holds the same steps and is well formed; waived findings are not
planned; the API serves the same text; and the plan's commands, run through the simulator's
esxcli (the SOAP path vslint reads esxcli through), turn the findings they fix into resolved
ones on the next poll, after which the plan has no step left. The sh script itself also runs,
each host's part with an esxcli that goes to the simulator (esxcli_shim.py): it reads each
value first, changes only what is wrong, a second run changes nothing, and a failing step is
reported."""
import json
import os
import re
import shutil
import subprocess

import pytest

from apilib import serving
from esxcli_ref import COMMANDS, PlanError, esxcli_commands, host_sections, parse_command, \
    soap_name
from simlib import VimClient, Workspace, run_ok, vcenter, vslint

LUN = 'naa.60060160a0b0000000000000000000a%d'
EST = 'naa.60060160e5e5000000000000000000e%d'  # esx-estates' LUNs (scenario_estates.go)
PE_MRU = 'naa.60060160a0b0000000000000000000f3'
# The planted violations of tests/sim/scenario_violations.go whose fix is a host setting, as
# the changes each host's section must make (the header comment of that file is the spec).
# ds-unmap-none is mounted on the lab hosts: its reclaim priority is set from the first by
# name, esx-iscsi-a.
WANT = {
    'esx-san-1': {
        ('storage nmp device set', (('device', LUN % 1), ('psp', 'VMW_PSP_RR'))),
        ('storage nmp psp roundrobin deviceconfig set',
         (('device', LUN % 1), ('iops', '1'), ('type', 'iops'))),
        ('storage nmp psp roundrobin deviceconfig set',
         (('device', LUN % 2), ('iops', '1'), ('type', 'iops'))),
        # the VVol protocol endpoint on MRU (scenario_seeds.go), tuned as a LUN (000 §3.9)
        ('storage nmp device set', (('device', PE_MRU), ('psp', 'VMW_PSP_RR'))),
        ('storage nmp psp roundrobin deviceconfig set',
         (('device', PE_MRU), ('iops', '1'), ('type', 'iops'))),
        ('storage nmp satp rule add', (('model', 'VRAID'), ('psp', 'VMW_PSP_RR'),
                                       ('psp-option', 'iops=1'), ('satp', 'VMW_SATP_ALUA'),
                                       ('vendor', 'DGC'))),
    },
    'esx-iscsi-a': {
        ('iscsi adapter param set', (('adapter', 'vmhba64'), ('key', 'DelayedAck'),
                                     ('value', 'false'))),
        ('network vswitch standard set', (('mtu', '9000'), ('vswitch-name', 'vSwitch-iscsi'))),
        ('network ip interface set', (('interface-name', 'vmk1'), ('mtu', '9000'))),
        ('storage vmfs reclaim config set', (('reclaim-priority', 'low'),
                                             ('volume-label', 'ds-unmap-none'))),
    },
    'esx-iscsi-b': {
        ('iscsi adapter discovery sendtarget param set',
         (('adapter', 'vmhba64'), ('address', '10.0.0.20:3260'), ('key', 'DelayedAck'),
          ('value', 'false'))),
        ('network vswitch standard set', (('mtu', '9000'), ('vswitch-name', 'vSwitch-iscsi'))),
    },
    # vmk1 1500, unbound, on an iSCSI target's subnet (scenario_iscsi_nics.go)
    'esx-nobind': {
        ('network vswitch standard set', (('mtu', '9000'), ('vswitch-name', 'vSwitch-iscsi'))),
        ('network ip interface set', (('interface-name', 'vmk1'), ('mtu', '9000'))),
    },
    'esx-noblockdelete': {
        ('system settings advanced set', (('int-value', '1'),
                                          ('option', '/VMFS3/EnableBlockDelete'))),
    },
    # VMW_PSP_FIXED, and Round Robin switching by bytes. Not its latency Round Robin (a task:
    # accepted, never switched back to an IOPS limit) nor its vendor PSPs (not judged).
    'esx-estates': {
        ('storage nmp device set', (('device', EST % 4), ('psp', 'VMW_PSP_RR'))),
        ('storage nmp psp roundrobin deviceconfig set',
         (('device', EST % 4), ('iops', '1'), ('type', 'iops'))),
        ('storage nmp psp roundrobin deviceconfig set',
         (('device', EST % 6), ('iops', '1'), ('type', 'iops'))),
    },
}
# Planted violations a host setting does not fix: tasks, never commands.
TASKS = ['ds-free-crit', 'ds-size-huge', 'ds-crowded', 'vm-snap-old', 'vm-ft-lazy',
         'ds-overcommit', 'vm-reclaim-old', LUN % 5, EST % 5,
         'naa.60060160a0b0000000000000000000f1']  # paths to one storage processor


def changes(section):
    return {(' '.join(c['cmd']), tuple(sorted(c['args'].items()))) for c in section['changes']}


def plan(conf, *args):
    return run_ok('plan', '-c', conf, *args).stdout


def tasks_part(text):
    """The lines after the tasks' header."""
    return text.split('# ==== Tasks for a person', 1)[1].split('\n', 1)[1]


@pytest.fixture(scope='module')
def esx_plan(lab):
    return plan(lab.conf, '--offline')


@pytest.fixture(scope='module')
def ps_plan(lab):
    return plan(lab.conf, '--offline', '--format', 'powercli')


def test_every_esxcli_command_is_in_the_reference(esx_plan):
    cmds = esxcli_commands(esx_plan)
    # A read of the current value before each change: as many of one as of the other.
    reads = [c for c in cmds if c['cmd'][-1] in ('get', 'list')]
    sets = [c for c in cmds if c['cmd'][-1] in ('set', 'add')]
    assert len(reads) == len(sets) == sum(len(w) for w in WANT.values())
    assert len(reads) + len(sets) == len(cmds)


@pytest.mark.parametrize('line, why', [
    ('esxcli storage nmp device sett --device=naa.1', 'unknown esxcli command'),
    ('esxcli storage nmp device set --device=naa.1 --policy=VMW_PSP_RR', 'no option --policy'),
    ('esxcli storage nmp device set --psp=VMW_PSP_RR', '--device is required'),
    ('esxcli storage nmp device set --device=naa.1 --psp=RR', 'not one of'),
    ('esxcli network ip interface set --interface-name=vmk1 --mtu=90000', 'whole number'),
    ('esxcli storage vmfs reclaim config set --volume-label=x --reclaim-priority=fast',
     'not one of'),
    ('esxcli --formatter=yaml storage nmp device list', 'not one of'),
])
def test_the_parser_rejects_what_esxcli_would(line, why):
    """The parser can fail: each of these is wrong the way esxcli would say."""
    with pytest.raises(PlanError, match=why):
        esxcli_commands(line + '\n')


def test_the_plan_is_valid_sh(esx_plan, tmp_path):
    path = tmp_path / 'plan.sh'
    path.write_text(esx_plan)
    for sh in ('bash', 'dash', 'busybox'):
        exe = shutil.which(sh)
        if not exe:
            continue
        cmd = [exe, 'sh', '-n', str(path)] if sh == 'busybox' else [exe, '-n', str(path)]
        res = subprocess.run(cmd, capture_output=True, text=True)
        assert res.returncode == 0, '%s -n: %s' % (sh, res.stderr)
    # Without a host it lists the hosts it has steps for and changes nothing.
    res = subprocess.run(['sh', str(path)], capture_output=True, text=True)
    assert res.returncode == 0
    assert res.stdout.split('\n')[1:-1] == sorted(WANT)
    # On a machine that is not the host named, it refuses before any esxcli runs.
    res = subprocess.run(['sh', str(path), 'esx-san-1'], capture_output=True, text=True,
                         env=dict(os.environ, PATH='/usr/bin:/bin'))
    assert res.returncode == 2 and 'not esx-san-1' in res.stderr


def test_steps_are_the_planted_violations_grouped_by_host(esx_plan):
    sections = host_sections(esx_plan)
    assert sorted(sections) == sorted(WANT)
    for host, want in WANT.items():
        assert changes(sections[host]) == want, host
        assert sections[host]['steps'] == len(want)


def test_each_step_names_its_finding_and_source(esx_plan, lab):
    by_fp = {f['fingerprint']: f for f in lab.findings}
    fixed = re.findall(r'# Fixes (\S+) finding ([0-9a-f]{16}) on (\S+) (.+) \((\w+)\)',
                       esx_plan)
    assert fixed
    for check, fp, otype, name, sev in fixed:
        f = by_fp[fp]
        assert (f['check'], f['object']['type'], f['object']['name'], f['severity']) == \
            (check, otype, name, sev)
    steps = esx_plan.count('\n# Step ')
    assert esx_plan.count('#   Source: 000_5bd48962a767ee9e.txt') >= steps
    assert re.search(r'Source: 000_5bd48962a767ee9e.txt §3.3; 001_7ad49caae9099bf2.txt', esx_plan)


def test_findings_no_setting_fixes_are_tasks(esx_plan):
    tasks = tasks_part(esx_plan)
    commands = esx_plan.split('# ==== Tasks for a person', 1)[0]
    for name in TASKS:
        assert name in tasks, name
        assert not re.search(r'(?m)^[^#].*%s' % re.escape(name), commands), name
    # The DVS whose MTU is below its vmknic's is set in vCenter: a task, not a step.
    assert re.search(r'iscsi-jumbo-frames: vmknic vmk1 on host esx-iscsi-dvs', tasks)
    # Every task line is a comment.
    assert all(line.startswith('#') for line in tasks.strip().split('\n'))


def test_check_and_vcenter_filters(lab):
    only = plan(lab.conf, '--offline', '--check', 'multipath-policy')
    sections = host_sections(only)
    assert list(sections) == ['esx-estates', 'esx-san-1']
    assert {c['cmd'][2] for c in sections['esx-san-1']['changes']} == {'device', 'psp'}
    # esx-estates' latency Round Robin: accepted, a task to read, not a command.
    assert 'Tasks for a person (1)' in only and EST % 5 in tasks_part(only)
    res = vslint('plan', '-c', lab.conf, '--offline', '--check', 'no-such-check')
    assert res.returncode == 2 and "no check 'no-such-check'" in res.stderr and not res.stdout
    res = vslint('plan', '-c', lab.conf, '--offline', '--vcenter', 'nope')
    assert res.returncode == 2 and 'no [vcenter nope]' in res.stderr and not res.stdout
    res = vslint('plan', '-c', lab.conf, '--format', 'bash')
    assert res.returncode == 2 and '--format must be esxcli or powercli' in res.stderr


def test_a_failed_poll_writes_no_plan():
    ws = Workspace()
    try:
        conf = ws.write_config([vcenter(ws, 'http://127.0.0.1:9/sdk', 'gone')])
        res = vslint('plan', '-c', conf)
        assert res.returncode == 2
        assert not res.stdout
        assert 'vcenter gone: poll failed' in res.stderr and 'no plan' in res.stderr
    finally:
        ws.cleanup()


def test_waived_findings_are_not_planned(lab, workspace):
    est = lab.copy(workspace)
    conf = est.config('\n[waiver]\ncheck = multipath-policy\nobject = %s\n'
                      'reason = migrating off this LUN\nexpires = 2099-12-31\n' % (LUN % 1))
    run_ok('check', '-c', conf, '--offline', '--format', 'json', '--fail-on', 'never')
    text = plan(conf, '--offline')
    assert LUN % 1 not in text.split('# ==== Tasks', 1)[0].split('vsl_host_1()', 1)[1]
    assert LUN % 2 in text
    assert 'Not planned: 1 waived finding(s)' in text


CMDLETS = {'Get-VMHost', 'Get-EsxCli', 'Write-Host', 'Write-Warning', 'Where-Object'}


def strip_ps(text):
    """PowerShell code without its comments and single-quoted strings."""
    out = []
    for line in text.split('\n'):
        line = re.sub(r"'(?:[^']|'')*'", "''", line)
        out.append(line.split('#', 1)[0])
    return '\n'.join(out)


def test_powercli_plan_is_well_formed(ps_plan, tmp_path):
    if shutil.which('pwsh'):
        path = tmp_path / 'plan.ps1'
        path.write_text(ps_plan)
        res = subprocess.run(['pwsh', '-NoProfile', '-Command',
                              '$e = $null; [System.Management.Automation.Language.Parser]::'
                              'ParseFile("%s", [ref]$null, [ref]$e) | Out-Null; '
                              'if ($e.Count) { $e; exit 1 }' % path],
                             capture_output=True, text=True)
        assert res.returncode == 0, res.stdout + res.stderr
    code = strip_ps(ps_plan)
    for o, c in ('{}', '()', '[]'):
        depth = 0
        for ch in code:
            depth += (ch == o) - (ch == c)
            assert depth >= 0, 'unbalanced %s%s' % (o, c)
        assert depth == 0, 'unbalanced %s%s' % (o, c)
    assert set(re.findall(r'\b[A-Z][a-z]+-[A-Z][A-Za-z]+\b', code)) <= CMDLETS
    for host in WANT:
        assert "Get-VMHost -Name '%s'" % host in ps_plan
    assert ps_plan.count('Get-EsxCli -VMHost $vmhost -V2') == len(WANT)
    # Every Get-EsxCli -V2 call is a command of the reference, with its options' names.
    calls = re.findall(r"\$esxcli\.([a-z.]+)\.Invoke\((?:@\{([^}]*)\})?\)", ps_plan)
    sets = 0
    for path, args in calls:
        cmd = tuple(path.split('.'))
        assert cmd in COMMANDS, path
        keys = {k.strip() for k in re.findall(r"(\w+) =", args or '')}
        assert keys <= {soap_name(o) for o in COMMANDS[cmd]}, (path, keys)
        sets += cmd[-1] in ('set', 'add')
    assert sets == sum(len(w) for w in WANT.values())
    # Each change is guarded by a read of the current value.
    assert len(calls) == 2 * sets


def test_api_serves_the_same_plan(violations_sim, workspace):
    with serving(workspace, [vcenter(workspace, violations_sim.url)]) as srv:
        a = srv.get('/api/v1/plan')
        assert a.status == 200
        ctype = {k.lower(): v for k, v in a.headers.items()}['content-type']
        assert ctype == 'text/plain; charset=utf-8'
        cli = plan(srv.conf, '--offline')
        # The first line holds the time and what was planned; the rest is the same.
        assert a.body.split('\n', 2)[2] == cli.split('\n', 2)[2]
        ps = srv.get('/api/v1/plan?format=powercli&check=satp-claim-rule&vcenter=lab')
        assert ps.status == 200 and 'satp.rule.add.Invoke' in ps.body
        assert 'nmp.device.set' not in ps.body
        for query, param in (('format=bash', 'format'), ('check=nope', 'check'),
                             ('color=red', 'color')):
            bad = srv.get('/api/v1/plan?' + query)
            assert bad.status == 400, query
            err = bad.json()['error']
            assert param in err['message'], err


def test_running_the_plan_through_esxcli_resolves_its_findings(start_sim, workspace):
    from simlib import Estate
    sim = start_sim('violations')
    est = Estate(sim, workspace)
    before = {f['fingerprint']: f for f in est.check()}
    text = plan(est.conf, '--offline')
    planned = set(re.findall(r'# Fixes \S+ finding ([0-9a-f]{16})', text.split('# ==== Tasks')[0]))
    tasks = set(re.findall(r'finding ([0-9a-f]{16})\)', tasks_part(text)))
    assert planned and tasks and planned <= set(before) and tasks <= set(before)
    hosts = host_morefs(est)
    client = VimClient(sim.url)
    for host, section in host_sections(text).items():
        for cmd in section['changes']:
            client.esxcli(hosts[host], cmd)
    res = run_ok('check', '-c', est.conf, '--format', 'json', '--fail-on', 'never')
    report = json.loads(res.stdout)
    after = {f['fingerprint'] for f in report['findings']}
    assert not planned & after, [before[fp]['message'] for fp in planned & after]
    assert tasks <= after
    assert report['summary']['resolved_this_run'] == len(planned)
    again = plan(est.conf, '--offline')
    assert 'Steps: 0 on 0 host(s)' in again and host_sections(again) == {}
    assert esxcli_commands(again) == []


def test_the_simulator_refuses_a_bad_esxcli_change(start_sim):
    """The emulation can fail: a wrong device or value is esxcli's error, and nothing changes."""
    sim = start_sim('violations')
    hosts = {h['name']: h['moref'] for h in sim.truth()['hosts']}
    client = VimClient(sim.url)
    bad = parse_command(['storage', 'nmp', 'psp', 'roundrobin', 'deviceconfig', 'set',
                         '--device=naa.6006016000000000000000000000dead', '--type=iops',
                         '--iops=1'])
    with pytest.raises(RuntimeError, match='Unknown device'):
        client.esxcli(hosts['esx-san-1'], bad)
    mru = parse_command(['storage', 'nmp', 'psp', 'roundrobin', 'deviceconfig', 'set',
                         '--device=' + LUN % 1, '--type=iops', '--iops=1'])
    with pytest.raises(RuntimeError, match='not using the Round Robin'):
        client.esxcli(hosts['esx-san-1'], mru)


def host_morefs(est):
    """{host name: moref} of the estate's stored inventory."""
    return {h['name']: h['moref'] for h in est.inventory()['vcenters'][0]['hosts']}


def esxcli_shim(tmp_path):
    """A directory whose `esxcli` is esxcli_shim.py, for PATH."""
    shim_dir = tmp_path / 'bin'
    shim_dir.mkdir()
    (shim_dir / 'esxcli').write_text('#!/bin/sh\nexec /usr/bin/python3 %s "$@"\n' % os.path.join(
        os.path.dirname(os.path.abspath(__file__)), 'esxcli_shim.py'))
    (shim_dir / 'esxcli').chmod(0o755)
    return str(shim_dir)


def run_on_host(script, host, moref, sim, shim_dir):
    env = dict(os.environ, PATH=shim_dir + ':/usr/bin:/bin', VSLINT_PLAN_ANY_HOST='1',
               VSLINT_SIM_URL=sim.url, VSLINT_SIM_HOST=moref)
    return subprocess.run(['sh', script, host], capture_output=True, text=True, env=env,
                          timeout=300)


def summary_of(out):
    m = re.search(r'vslint plan: ([0-9]+) changed, ([0-9]+) already right, ([0-9]+) failed',
                  out)
    assert m, out
    return tuple(int(x) for x in m.groups())


def test_running_the_script_twice_changes_once_and_resolves(start_sim, workspace, tmp_path):
    """The sh script itself, each host's part run as on that host, with an esxcli that goes to
    the simulator's esxcli (esxcli_shim.py): each step reads the value, changes it only when
    it is not right, and the second run changes nothing."""
    from simlib import Estate
    sim = start_sim('violations')
    est = Estate(sim, workspace)
    est.check()
    script = tmp_path / 'plan.sh'
    script.write_text(plan(est.conf, '--offline'))
    shim_dir = esxcli_shim(tmp_path)
    hosts = host_morefs(est)
    # esx-iscsi-a's and esx-nobind's vSwitch already carries 9000 (the scenarios' spec): that
    # step reads it and leaves it; every other step changes its value.
    already = {'esx-iscsi-a': 1, 'esx-nobind': 1}
    for host, want in WANT.items():
        res = run_on_host(str(script), host, hosts[host], sim, shim_dir)
        assert res.returncode == 0, res.stdout + res.stderr
        right = already.get(host, 0)
        assert summary_of(res.stdout) == (len(want) - right, right, 0), res.stdout
    for host, want in WANT.items():
        res = run_on_host(str(script), host, hosts[host], sim, shim_dir)
        assert res.returncode == 0, res.stdout + res.stderr
        assert summary_of(res.stdout) == (0, len(want), 0), res.stdout
        assert 'changing:' not in res.stdout
    report = json.loads(run_ok('check', '-c', est.conf, '--format', 'json', '--fail-on',
                               'never').stdout)
    planned = set(re.findall(r'# Fixes \S+ finding ([0-9a-f]{16})', script.read_text()))
    assert planned and not planned & {f['fingerprint'] for f in report['findings']}
    assert report['summary']['resolved_this_run'] == len(planned)


def test_a_failing_step_is_reported_and_the_rest_still_run(start_sim, workspace, tmp_path):
    """A step esxcli refuses (here the host refuses esxcli altogether) says FAILED, and the
    script exits 1 after trying the others."""
    import urllib.request
    from simlib import Estate
    sim = start_sim('violations')
    est = Estate(sim, workspace)
    est.check()
    script = tmp_path / 'plan.sh'
    script.write_text(plan(est.conf, '--offline', '--check', 'multipath-policy'))
    shim_dir = esxcli_shim(tmp_path)
    hosts = host_morefs(est)
    control = sim.url.replace('/sdk', '/vslint-sim/host?name=esx-san-1&esxcli=refuse')
    urllib.request.urlopen(urllib.request.Request(control, method='POST'), timeout=10)
    res = run_on_host(str(script), 'esx-san-1', hosts['esx-san-1'], sim, shim_dir)
    assert res.returncode == 1
    # a1's two steps, a2's one and the protocol endpoint f3's two (scenario_seeds.go)
    assert summary_of(res.stdout) == (0, 0, 5)
    assert res.stderr.count('FAILED:') == 5


def test_edges_plan_runs_clean_and_resolves(start_sim, workspace, tmp_path):
    """The edges scenario (an EqualLogic-style portal with one IQN per volume found by a send
    target, claim rules for four arrays, a model with a blank): the plan parses, is valid sh, and run twice on every host
    against the simulator it fixes every planned finding once and then changes nothing."""
    from simlib import Estate
    sim = start_sim('edges')
    est = Estate(sim, workspace, 'edges')
    est.check()
    text = plan(est.conf, '--offline')
    esxcli_commands(text)
    script = tmp_path / 'plan.sh'
    script.write_text(text)
    for sh in ('bash', 'dash'):
        if shutil.which(sh):
            assert subprocess.run([sh, '-n', str(script)]).returncode == 0, sh
    shim_dir = esxcli_shim(tmp_path)
    hosts = host_morefs(est)
    sections = host_sections(text)
    assert sections
    for run in (1, 2):
        for host, section in sections.items():
            res = run_on_host(str(script), host, hosts[host], sim, shim_dir)
            assert res.returncode == 0, res.stdout + res.stderr
            changed, right, failed = summary_of(res.stdout)
            assert changed + right == section['steps'] and failed == 0
            assert changed > 0 if run == 1 else changed == 0, res.stdout
    report = json.loads(run_ok('check', '-c', est.conf, '--format', 'json', '--fail-on',
                               'never').stdout)
    planned = set(re.findall(r'# Fixes \S+ finding ([0-9a-f]{16})', text))
    assert planned and not planned & {f['fingerprint'] for f in report['findings']}
    assert report['summary']['resolved_this_run'] == len(planned)
    assert 'Steps: 0 on 0 host(s)' in plan(est.conf, '--offline')
