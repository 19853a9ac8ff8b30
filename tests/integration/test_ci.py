"""The pipelines people run (docs/ci.md): SARIF as GitHub code scanning accepts it (a
repository-relative physicalLocation on every result, the same on every run, one run and
category per vCenter, rule help with the fix), GitLab's Code Quality report, GitHub Actions
annotations with names that would break them, and the example pipelines of dist/ci/ whose
commands are run here, outside the CI platforms, against the simulator and a daemon."""
import json
import os
import re
import shutil
import subprocess
import urllib.parse

import pytest

from apilib import TOKEN, serving
from simlib import PASSWORD, USER, VSLINT, Estate, vcenter, vslint

SOURCE_ROOT = os.environ.get('SOURCE_ROOT', '.')
TOOLS = os.path.join(SOURCE_ROOT, 'tests', 'tools')
EXAMPLES = os.path.join(SOURCE_ROOT, 'dist', 'ci')


def node(*args):
    return subprocess.run(['node'] + [os.path.join(TOOLS, args[0])] + list(args[1:]),
                          capture_output=True, text=True, timeout=120)


def report(conf, fmt, *extra, cwd=None):
    res = subprocess.run([os.path.abspath(VSLINT), 'check', '-c', conf, '--offline', '--format',
                          fmt, '--fail-on', 'never'] + list(extra),
                         capture_output=True, text=True, timeout=300, cwd=cwd)
    assert res.returncode == 0, res.stderr
    return res.stdout


def results(doc):
    return [r for run in doc['runs'] for r in run['results']]


@pytest.fixture(scope='module')
def two(violations_sim, clean_sim, new_workspace):
    """Two vCenters in one configuration: "lab" (the violations scenario) and "calm" (the clean
    one), polled once; then the SARIF of two offline runs, and the JSON findings."""
    ws = new_workspace()
    conf = ws.write_config([vcenter(ws, violations_sim.url, 'lab'),
                            vcenter(ws, clean_sim.url, 'calm')])
    res = vslint('check', '-c', conf, '--format', 'json', '--fail-on', 'never')
    assert res.returncode == 0, res.stderr
    findings = json.loads(res.stdout)['findings']
    return dict(ws=ws, conf=conf, findings=findings,
                sarif=[json.loads(report(conf, 'sarif')) for _ in range(2)])


def test_sarif_validates_against_the_schema(two, tmp_path):
    path = tmp_path / 'r.sarif'
    path.write_text(json.dumps(two['sarif'][0]))
    p = node('validate-sarif.js', str(path))
    assert (p.returncode, p.stdout.strip()) == (0, 'valid'), p.stdout[:500]


def test_every_result_has_a_repository_relative_artifact(two):
    """Code scanning rejects a result without physicalLocation.artifactLocation.uri; the URI
    must be relative (no scheme, no leading slash) with a region that starts on a line."""
    rs = results(two['sarif'][0])
    assert len(rs) == len(two['findings']) > 10
    for r in rs:
        pl = r['locations'][0]['physicalLocation']
        uri = pl['artifactLocation']['uri']
        assert uri and not re.match(r'^[A-Za-z][A-Za-z0-9+.-]*:', uri) and not uri.startswith('/'), uri
        assert pl['artifactLocation']['uriBaseId'] == '%SRCROOT%'
        assert isinstance(pl['region']['startLine'], int) and pl['region']['startLine'] >= 1
        assert r['locations'][0]['logicalLocations'][0]['name']  # kept


def test_uris_are_stable_across_runs(two):
    a, b = ({r['partialFingerprints']['vslintFingerprint/v1']:
             r['locations'][0]['physicalLocation']['artifactLocation']['uri']
             for r in results(doc)} for doc in two['sarif'])
    assert a == b and len(a) > 10


def test_uri_names_the_object(two):
    """The path is vsphere/VCENTER/TYPE/NAME, each segment percent-encoded: decoding gives the
    finding's own vCenter, type and object back."""
    by_fp = {f['fingerprint']: f for f in two['findings']}
    for r in results(two['sarif'][0]):
        f = by_fp[r['partialFingerprints']['vslintFingerprint/v1']]
        segs = [urllib.parse.unquote(s) for s in
                r['locations'][0]['physicalLocation']['artifactLocation']['uri'].split('/')]
        assert segs[:2] == ['vsphere', f['vcenter']]
        assert segs[-2:] == [f['object']['type'], f['object']['name']]
        if f.get('host') and not f['object'].get('moref'):
            assert segs[2:4] == ['host', f['host']['name']]


def test_one_run_and_category_per_vcenter(two):
    """Runs of several vCenters must not close each other's alerts: each run has its own
    automationDetails.id, holds only its vCenter's results, and a vCenter without findings
    still has its (empty) run, which is what closes its fixed alerts."""
    runs = two['sarif'][0]['runs']
    ids = [run['automationDetails']['id'] for run in runs]
    assert sorted(ids) == ['vslint/calm/', 'vslint/lab/']
    for run in runs:
        vc = run['automationDetails']['id'].split('/')[1]
        assert {r['properties']['vcenter'] for r in run['results']} <= {vc}
    calm = [run for run in runs if run['automationDetails']['id'] == 'vslint/calm/'][0]
    assert calm['results'] == []


def test_rules_carry_help_tags_and_their_index(two):
    catalogue = {c['id']: c for c in json.loads(vslint('checks', '--format', 'json').stdout)['checks']}
    for run in two['sarif'][0]['runs']:
        rules = run['tool']['driver']['rules']
        assert {r['id'] for r in rules} >= set(catalogue)
        for rule in rules:
            if rule['id'] not in catalogue:
                continue
            assert catalogue[rule['id']]['remediation'] in rule['help']['markdown']
            assert rule['help']['text']
            assert isinstance(rule['properties']['tags'], list) and rule['properties']['tags']
        for r in run['results']:
            assert rules[r['ruleIndex']]['id'] == r['ruleId']


def test_config_location(two):
    """--sarif-location config: the configuration file, relative to the current directory,
    at the line of the finding's [vcenter NAME] section."""
    ws = two['ws']
    with open(two['conf']) as fh:
        lines = fh.read().splitlines()
    want = {name: lines.index('[vcenter %s]' % name) + 1 for name in ('lab', 'calm')}
    doc = json.loads(report(os.path.basename(two['conf']), 'sarif', '--sarif-location', 'config',
                            cwd=ws.dir))
    rs = results(doc)
    assert rs
    for r in rs:
        pl = r['locations'][0]['physicalLocation']
        assert pl['artifactLocation']['uri'] == os.path.basename(two['conf'])
        assert pl['region']['startLine'] == want[r['properties']['vcenter']]
    # The same with an absolute path under the current directory.
    doc2 = json.loads(report(two['conf'], 'sarif', '--sarif-location', 'config', cwd=ws.dir))
    assert [r['locations'] for r in results(doc2)] == [r['locations'] for r in rs]


def test_config_location_outside_the_repository_is_refused(two, tmp_path):
    res = subprocess.run([os.path.abspath(VSLINT), 'check', '-c', two['conf'], '--offline',
                          '--format', 'sarif', '--sarif-location', 'config'],
                         capture_output=True, text=True, timeout=300, cwd=str(tmp_path))
    assert res.returncode == 2
    assert 'not under the current directory' in res.stderr, res.stderr


def test_config_location_climbing_out_is_refused(two):
    """A relative path that leaves the current directory is no file of the repository."""
    ws = two['ws']
    sub = os.path.join(ws.dir, 'sub')
    os.makedirs(sub, exist_ok=True)
    res = subprocess.run([os.path.abspath(VSLINT), 'check', '-c',
                          os.path.join('..', os.path.basename(two['conf'])), '--offline',
                          '--format', 'sarif', '--sarif-location', 'config'],
                         capture_output=True, text=True, timeout=300, cwd=sub)
    assert res.returncode == 2 and 'leaves the current directory' in res.stderr, res.stderr


def test_a_long_waiver_reason_still_suppresses(two, new_workspace):
    """A waiver whose reason is long non-ASCII text (cut to fit, perhaps inside a character)
    still makes a suppression: the finding must not reach code scanning as an open alert."""
    ws = new_workspace()
    shutil.copy(two['ws'].db, ws.db)
    with open(two['conf']) as fh:
        text = fh.read().replace(two['ws'].db, ws.db)
    conf = os.path.join(ws.dir, 'waived.conf')
    with open(conf, 'w') as fh:
        fh.write(text + '\n[waiver]\ncheck = datastore-free-space\nobject = ds-free-crit\n'
                 'reason = %s\nexpires = 2099-12-31\n' % ('é' * 700))
    doc = json.loads(report(conf, 'sarif'))
    waived = [r for r in results(doc) if r['ruleId'] == 'datastore-free-space' and
              r['locations'][0]['logicalLocations'][0]['name'] == 'ds-free-crit']
    assert len(waived) == 1 and waived[0]['suppressions'][0]['kind'] == 'external', waived


def test_sarif_location_value_checked(two):
    res = vslint('check', '-c', two['conf'], '--offline', '--format', 'sarif',
                 '--sarif-location', 'repo')
    assert res.returncode == 2 and 'sarif-location' in res.stderr, res.stderr


# ---- GitLab Code Quality ---------------------------------------------------------------------

GITLAB_SEVERITY = {'info': 'info', 'warning': 'major', 'critical': 'critical'}


def test_gitlab_report(two):
    issues = json.loads(report(two['conf'], 'gitlab'))
    unwaived = [f for f in two['findings'] if f['status'] != 'waived']
    assert len(issues) == len(unwaived) > 10
    by_fp = {f['fingerprint']: f for f in unwaived}
    for i in issues:
        assert i['description'] and i['check_name'] and i['fingerprint']
        assert i['severity'] in ('info', 'minor', 'major', 'critical', 'blocker')
        assert i['location']['path'] and i['location']['lines']['begin'] >= 1
        f = by_fp[i['fingerprint']]
        assert (i['check_name'], i['severity'], i['description']) == (
            f['check'], GITLAB_SEVERITY[f['severity']], f['message'])
    fps = [i['fingerprint'] for i in issues]
    assert len(set(fps)) == len(fps)
    again = json.loads(report(two['conf'], 'gitlab'))
    assert [(i['fingerprint'], i['location']) for i in again] == \
        [(i['fingerprint'], i['location']) for i in issues]


# ---- GitHub annotations ---------------------------------------------------------------------

NASTY = 'vm 100% ::error::x,y\nline2'


@pytest.fixture(scope='module')
def nasty(sim, new_workspace):
    """A VM whose name holds "%", "::", "," and a newline, with an info finding (five disks on
    LSI Logic: pvscsi-controller), polled."""
    sim.control('vm', name=NASTY, host='esx-iscsi-a', datastore='ds-free-ok', disks='5',
                controller='lsilogic')
    ws = new_workspace()
    est = Estate(sim, ws)
    est.findings = est.check()
    return est


def unescape(s):
    return s.replace('%0A', '\n').replace('%0D', '\r').replace('%3A', ':').replace(
        '%2C', ',').replace('%25', '%')


def test_github_annotations_escape_names(nasty):
    out = report(nasty.conf, 'github')
    mine = [f for f in nasty.findings if f['object']['name'] == NASTY]
    assert mine, 'the odd VM has no finding: %s' % sorted({f['object']['name'] for f in nasty.findings})
    lines = out.splitlines()
    cmds = [ln for ln in lines if ln.startswith('::')]
    assert len(cmds) == len([f for f in nasty.findings if f['status'] != 'waived'])
    # No line is a piece of a name: every line is a command or the closing count.
    assert all(ln.startswith('::') or ln.startswith('vslint: ') for ln in lines), lines[:5]
    hits = [ln for ln in cmds if 'vm 100%25' in ln]
    assert len(hits) == len(mine)
    for ln in hits:
        m = re.match(r'^::(error|warning|notice) (?P<props>[^:]*)::(?P<msg>.*)$', ln)
        assert m, ln
        props = dict(p.split('=', 1) for p in m.group('props').split(','))
        assert unescape(props['title']).endswith(NASTY)
        assert NASTY in unescape(m.group('msg'))


# ---- the text report in a terminal ------------------------------------------------------------

# The control characters a name can carry through vCenter's XML (XML 1.0 refuses the other C0
# controls: an ESC arrives as U+FFFD): a carriage return that would overwrite the line in a
# terminal, a newline, CSI as the C1 control U+009B ("clear the screen" after it), and the
# line separator U+2028 (a line break to Unicode-aware viewers).
CONTROLS = 'vm ctl\rover\u009b2J\nnext\u2028last'


@pytest.fixture(scope='module')
def controls(sim, nasty, new_workspace):
    """A VM with control characters in its name and an info finding (pvscsi-controller), polled
    with the odd VM of `nasty` beside it (after `nasty`'s own poll, whatever the tests' order)."""
    sim.control('vm', name=CONTROLS, host='esx-iscsi-a', datastore='ds-free-ok', disks='5',
                controller='lsilogic')
    sim.control('vm', name=NASTY + '-2', host='esx-iscsi-a', datastore='ds-free-ok', disks='5',
                controller='lsilogic')
    ws = new_workspace()
    est = Estate(sim, ws)
    est.findings = est.check()
    return est


def test_text_report_escapes_control_characters(controls):
    r"""`vslint check`'s text, read in a terminal or a CI log: a name's control characters are
    shown as escapes (\n, \r, \u009B, \u2028), so no name breaks its finding's line in two or
    sends the terminal an escape sequence; every line is still one of the report's own."""
    res = subprocess.run([os.path.abspath(VSLINT), 'check', '-c', controls.conf, '--offline',
                          '--fail-on', 'never'], capture_output=True, timeout=120)
    assert res.returncode == 0, res.stderr
    for raw in (b'\r', '\u009b'.encode(), '\u2028'.encode()):
        assert raw not in res.stdout, raw
    out = res.stdout.decode()
    lines = out.splitlines()
    own = ('CRITICAL  ', 'WARNING   ', 'INFO      ', 'WAIVED    ', ' ' * 10, 'note: ',
           'The run was incomplete')
    strays = [ln for ln in lines if ln and not ln.startswith(own) and
              not re.match(r'^\d+ critical, \d+ warning, \d+ info', ln)]
    assert not strays, strays[:5]
    shown = CONTROLS.replace('\r', '\\r').replace('\u009b', '\\u009B').replace(
        '\n', '\\n').replace('\u2028', '\\u2028')
    assert [ln for ln in lines if shown + ' has 5 disks' in ln], [ln for ln in lines if 'ctl' in ln]
    assert [ln for ln in lines if 'vm 100% ::error::x,y\\nline2-2 has 5 disks' in ln]


def test_github_levels(two):
    out = report(two['conf'], 'github')
    want = {'critical': 'error', 'warning': 'warning', 'info': 'notice'}
    got = sorted(ln.split(' ', 1)[0][2:] for ln in out.splitlines() if ln.startswith('::'))
    assert got == sorted(want[f['severity']] for f in two['findings'] if f['status'] != 'waived')


# ---- The example pipelines, their commands run here -----------------------------------------

def jobs(name):
    p = node('ci-jobs.js', os.path.join(EXAMPLES, name))
    assert p.returncode == 0, p.stderr
    return {j['job']: j for j in json.loads(p.stdout)}


@pytest.fixture(scope='module')
def repo(violations_sim, tmp_path_factory):
    """A repository as the examples expect it: vslint/vslint.conf, the shipped example with
    the simulator's URL and user, on plain HTTP (so without ca_file); its password_env stays."""
    top = tmp_path_factory.mktemp('repo')
    os.mkdir(top / 'vslint')
    with open(os.path.join(EXAMPLES, 'vslint.conf')) as fh:
        text = fh.read()
    assert 'password_env = VSLINT_PASSWORD' in text
    text = re.sub(r'(?m)^url = .*$', 'url = ' + violations_sim.url, text)
    text = re.sub(r'(?m)^user = .*$', 'user = ' + USER, text)
    text = re.sub(r'(?m)^ca_file = .*\n', '', text)
    (top / 'vslint' / 'vslint.conf').write_text(text)
    return top


def run_job(job, top, values):
    """A job's script in bash -e at the repository's top, its env with the platform's
    expressions (${{ secrets.X }}, ${{ vars.X }}, ${{ inputs.x }}) and bound credentials taken
    from values, vslint on PATH. The finished process."""
    env = {k: v for k, v in os.environ.items() if not k.startswith('VSLINT')}
    env['PATH'] = os.path.dirname(os.path.abspath(VSLINT)) + ':' + env['PATH']
    for k, v in job['env'].items():
        if v is None or (isinstance(v, str) and '${{' in v):
            key = v.strip('${} ') if v else k
            assert key in values, 'the test has no value for %s (%s)' % (k, v)
            env[k] = values[key]
        else:
            env[k] = str(v)
    for k in ('RUNNER_TEMP', 'CI_PROJECT_DIR'):
        env.setdefault(k, str(top))
    env.update(values.get('extra_env', {}))
    return subprocess.run(['bash', '-e', '-c', job['script']], cwd=str(top), env=env,
                          capture_output=True, text=True, timeout=600)


def test_github_check_job(repo):
    """The check job: the password from the secret, SARIF written with a location on every
    result, annotations in the log; the violations estate has critical findings, so the step
    fails with exit status 1, as GitHub shows it."""
    job = jobs('github-actions.yml')['check']
    res = run_job(job, repo, {'secrets.VCENTER_PASSWORD': PASSWORD})
    assert res.returncode == 1, res.stderr
    assert '::error ' in res.stdout
    with open(repo / 'vslint.sarif') as fh:
        doc = json.load(fh)
    assert results(doc) and all(r['locations'][0]['physicalLocation']['artifactLocation']['uri']
                                for r in results(doc))
    assert PASSWORD not in res.stdout + res.stderr


def test_github_check_job_without_the_secret(repo):
    """A missing secret is an empty variable: the run cannot log in, exit status 2."""
    res = run_job(jobs('github-actions.yml')['check'], repo, {'secrets.VCENTER_PASSWORD': ''})
    assert res.returncode == 2, (res.returncode, res.stderr)
    assert 'VSLINT_PASSWORD' in res.stderr, res.stderr


def test_gitlab_check_job(repo):
    job = jobs('gitlab-ci.yml')['vslint:check']
    assert job['artifacts']['reports']['codequality'] == 'gl-code-quality-report.json'
    res = run_job(job, repo, {'VSLINT_PASSWORD': PASSWORD,
                              'extra_env': {'VSLINT_PASSWORD': PASSWORD}})
    assert res.returncode == 1, res.stderr
    with open(repo / 'gl-code-quality-report.json') as fh:
        issues = json.load(fh)
    assert issues and all(set(i) >= {'description', 'check_name', 'fingerprint', 'severity',
                                     'location'} for i in issues)


def test_jenkins_check_stage(repo):
    """The JUnit file for the publisher; exit status 1 (findings) is left to the publisher
    (returnStatus), only 2 fails the stage."""
    job = jobs('Jenkinsfile')['vslint check']
    assert job['returnStatus']
    res = run_job(job, repo, {'VSLINT_PASSWORD': PASSWORD})
    assert res.returncode == 1, res.stderr
    p = node('parse-junit.js', str(repo / 'vslint-junit.xml'))
    assert p.returncode == 0 and json.loads(p.stdout)['failed'] > 0, p.stdout[:300]


@pytest.fixture(scope='module')
def daemon(gate_sim, new_workspace):
    """`vslint serve` of the gate scenario with auth = all: the gate needs the token."""
    ws = new_workspace()
    with serving(ws, [vcenter(ws, gate_sim.url, 'gate')], auth_all=True) as srv:
        yield srv


@pytest.mark.parametrize('example,job', [('github-actions.yml', 'gate'),
                                         ('gitlab-ci.yml', 'vslint:gate'),
                                         ('Jenkinsfile', 'vslint gate')])
@pytest.mark.parametrize('disk_gb,want', [('5', 0), ('900', 1)])
def test_gate_job(daemon, repo, example, job, disk_gb, want):
    """The gate against the daemon with only its token: a small request passes (exit 0, the
    provisioning job runs), one that would fill pod-gate fails the job (exit 1)."""
    j = jobs(example)[job]
    vals = {'vars.VSLINT_URL': daemon.base, 'secrets.VSLINT_TOKEN': TOKEN, 'VSLINT_TOKEN': TOKEN,
            'inputs.datastore_cluster': 'pod-gate', 'inputs.vms': '1', 'inputs.disk_gb': disk_gb,
            'extra_env': {'VSLINT_URL': daemon.base, 'VSLINT_TOKEN': TOKEN,
                          'DATASTORE_CLUSTER': 'pod-gate', 'VMS': '1', 'DISK_GB': disk_gb}}
    res = run_job(j, repo, vals)
    assert res.returncode == want, (res.stdout[-500:], res.stderr[-500:])
    assert TOKEN not in res.stdout + res.stderr


def test_gitlab_provisioning_needs_the_gate():
    assert jobs('gitlab-ci.yml')['provision']['needs'] == ['vslint:gate']
