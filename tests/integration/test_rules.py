"""Site rules (docs/rules.md) against the violations estate: the example rules of dist/rules/
find their planted objects and leave the compliant twins alone; `vslint check` records site
findings with history, waivers and parameter overrides like built-in ones and lists them in
JSON, SARIF and JUnit; hostile or broken rules are refused or stopped, each with its file named,
while every built-in finding stays as it was and the exit status is not 2; a rule that fails
keeps its earlier findings open and unverified; `vslint rules test` exits 0/1/2 and
`config-check` validates the rules directory."""
import json
import os
import shutil
import xml.etree.ElementTree as ET

import pytest

from simlib import run_ok, vslint

EXAMPLES = os.path.join(os.environ.get('SOURCE_ROOT', '.'), 'dist', 'rules')


def rules_dir(ws, files, name='rules.d'):
    """A rules directory in ws holding files ({name: text} or example file names)."""
    d = os.path.join(ws.dir, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    for fname, text in files.items():
        if text is None:
            shutil.copy(os.path.join(EXAMPLES, fname), d)
        else:
            with open(os.path.join(d, fname), 'wb') as f:
                f.write(text if isinstance(text, bytes) else text.encode())
    return d


def conf(est, d, extra=''):
    return est.config('\n[rules]\ndir = %s\n%s\n' % (d, extra), name='rules.conf')


def check_json(conf_path, *extra):
    res = vslint('check', '-c', conf_path, '--offline', '--format', 'json', '--fail-on',
                 'never', *extra)
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout), res.stderr


def names(findings, check):
    return {f['object']['name'] for f in findings if f['check'] == check}


def rules_test(conf_path, *files):
    return vslint('rules', 'test', '-c', conf_path, *files)


@pytest.fixture(scope='module')
def est(lab, module_workspace):
    """A copy of the violations snapshot this module's `check --offline` runs write to."""
    return lab.copy(module_workspace)


# ---- the example rules ----------------------------------------------------------------------

@pytest.mark.parametrize('rule,found,silent', [
    ('thin-disk-max-size.sql', {'vm-thin-overcommit'}, {'vm-reclaim-ok', 'vm-bigdisk'}),
    ('datastore-free-floor.sql', {'ds-free-crit', 'ds-free-snaprisk', 'ds-pod-low-2'},
     {'ds-free-warn', 'ds-free-ok', 'ds-nfs-lab-1'}),
    ('no-lsi-parallel.sql', {'vm-many-disks-lsi', 'vm-os-lsi', 'vm-lsi-700gib'},
     {'vm-big-lsi', 'vm-bigdisk'}),
])
def test_example_rule_finds_its_planted_objects(est, rule, found, silent):
    res = rules_test(est.conf, os.path.join(EXAMPLES, rule))
    assert res.returncode == 1, res.stderr
    got = {line.split(': ', 1)[0].split()[-1] for line in res.stdout.splitlines()}
    assert got == found
    assert not got & silent


def test_example_san_lun_paths(est):
    """Every SAN LUN of the estate has two paths or fewer; with min_paths = 2 only those with
    fewer than two remain, the ones multipath-redundancy calls critical for too few paths."""
    rule = os.path.join(EXAMPLES, 'san-lun-paths.sql')
    res = rules_test(est.conf, rule)
    assert res.returncode == 1
    lines = res.stdout.splitlines()
    assert lines and all('the site wants 4' in l for l in lines)
    assert all(' lun ' in l for l in lines)
    c = conf(est, rules_dir(est.ws, {'san-lun-paths.sql': None}),
             '[check site-san-lun-paths]\nmin_paths = 2\n')
    few = rules_test(c).stdout.splitlines()
    assert len(few) < len(lines)
    assert all(' critical ' in l for l in few)


# ---- first-class findings -------------------------------------------------------------------

def test_check_records_site_findings_with_history(est):
    d = rules_dir(est.ws, {'thin-disk-max-size.sql': None, 'datastore-free-floor.sql': None})
    c = conf(est, d)
    first, stderr = check_json(c)
    assert first['rule_errors'] == []
    assert names(first['findings'], 'site-datastore-free-floor') == \
        {'ds-free-crit', 'ds-free-snaprisk', 'ds-pod-low-2'}
    f = [x for x in first['findings'] if x['check'] == 'site-thin-disk-max-size'][0]
    assert f['object']['name'] == 'vm-thin-overcommit' and f['severity'] == 'warning'
    assert f['title'] == 'No thin disk larger than the site\'s limit'
    assert f['status'] == 'new'
    assert f['evidence']['datastore'] == 'ds-overcommit'
    second, _ = check_json(c)
    again = {x['fingerprint']: x for x in second['findings']}
    assert again[f['fingerprint']]['first_seen'] == f['first_seen']
    # The floor lowered to 20 GiB: ds-free-crit (48 GiB free) is fixed, ds-free-snaprisk
    # (18 GiB) is not.
    lowered = conf(est, d, '[check site-datastore-free-floor]\nmin_free_gb = 20\n')
    third, _ = check_json(lowered)
    assert names(third['findings'], 'site-datastore-free-floor') == {'ds-free-snaprisk'}
    resolved = vslint('query', '-c', lowered, '--format', 'json',
                      "SELECT object_name, status, resolution FROM vsl_findings WHERE "
                      "check_id = 'site-datastore-free-floor' ORDER BY object_name")
    got = {r['object_name']: (r['status'], r['resolution']) for r in json.loads(resolved.stdout)}
    assert got['ds-free-crit'] == ('resolved', 'fixed')
    assert got['ds-free-snaprisk'][0] == 'open'


def test_waiver_on_a_site_rule(est):
    d = rules_dir(est.ws, {'datastore-free-floor.sql': None}, name='waiver.d')
    c = conf(est, d, '[waiver]\ncheck = site-datastore-free-floor\nobject = ds-free-crit\n'
                     'reason = being migrated\nexpires = 2099-12-31\n')
    doc, _ = check_json(c)
    st = {x['object']['name']: x['status'] for x in doc['findings']
          if x['check'] == 'site-datastore-free-floor'}
    assert st['ds-free-crit'] == 'waived'
    assert st['ds-free-snaprisk'] != 'waived'


def test_parameter_override_is_validated_like_a_builtin(est):
    d = rules_dir(est.ws, {'thin-disk-max-size.sql': None}, name='params.d')
    res = vslint('config-check', '-c', conf(est, d, '[check site-thin-disk-max-size]\n'
                                                    'max_gb = lots\n'))
    assert res.returncode == 2
    assert "[check site-thin-disk-max-size] max_gb: 'lots' is not a number" in res.stderr
    res = vslint('config-check', '-c', conf(est, d, '[check site-thin-disk-max-size]\n'
                                                    'max_tb = 1\n'))
    assert res.returncode == 2 and 'unknown key' in res.stderr and 'max_gb' in res.stderr
    res = vslint('config-check', '-c', conf(est, d, '[check site-no-such-rule]\nenabled = no\n'))
    assert res.returncode == 2 and "no check 'site-no-such-rule'" in res.stderr
    doc, _ = check_json(conf(est, d, '[check site-thin-disk-max-size]\nmax_gb = 2000\n'))
    assert names(doc['findings'], 'site-thin-disk-max-size') == set()


def test_sarif_and_junit_list_site_rules(est):
    d = rules_dir(est.ws, {'thin-disk-max-size.sql': None,
                           'broken.sql': '-- id: site-broken\n-- title: t\n-- severity: info\n'
                                         'SELECT 1 AS object_type\n'}, name='formats.d')
    c = conf(est, d)
    sarif = json.loads(vslint('check', '-c', c, '--offline', '--format', 'sarif',
                              '--fail-on', 'never').stdout)
    run = sarif['runs'][0]
    ids = [r['id'] for r in run['tool']['driver']['rules']]
    assert 'site-thin-disk-max-size' in ids and 'site-broken' in ids
    res = [r for r in run['results'] if r['ruleId'] == 'site-thin-disk-max-size']
    assert res and ids[res[0]['ruleIndex']] == 'site-thin-disk-max-size'
    notes = run['invocations'][0]['toolExecutionNotifications']
    assert [n['descriptor']['id'] for n in notes] == ['site-broken']
    assert 'object_moref' in notes[0]['message']['text']
    assert notes[0]['locations'][0]['physicalLocation']['artifactLocation']['uri'].endswith(
        'broken.sql')
    junit = ET.fromstring(vslint('check', '-c', c, '--offline', '--format', 'junit',
                                 '--fail-on', 'warning').stdout)
    suites = {s.get('name'): s for s in junit.iter('testsuite')}
    assert suites['site-thin-disk-max-size'].find('testcase/failure') is not None
    broken = suites['site-broken'].findall('testcase/failure')
    assert [f.get('type') for f in broken] == ['rule-error']


# ---- hostile and broken rules ---------------------------------------------------------------

HEAD = '-- id: %s\n-- title: hostile\n-- severity: warning\n'
OK_COLS = "SELECT 'vm' AS object_type, moref AS object_moref, name AS object_name, 'x' AS message"
HOSTILE = {
    'write.sql': (HEAD % 'site-write') + 'DELETE FROM findings',
    'attach.sql': (HEAD % 'site-attach') + "ATTACH DATABASE '/tmp/vsl-evil.db' AS evil",
    'pragma.sql': (HEAD % 'site-pragma') + 'PRAGMA writable_schema = ON',
    'two.sql': (HEAD % 'site-two') + OK_COLS + ' FROM vsl_vms; DELETE FROM vcenters',
    'table.sql': (HEAD % 'site-table') + OK_COLS + ' FROM vms',
    'extension.sql': (HEAD % 'site-extension') + OK_COLS + ", load_extension('/tmp/x.so') "
                                                           'FROM vsl_vms',
    'endless.sql': (HEAD % 'site-endless') +
    "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n) SELECT 'vm' AS "
    "object_type, NULL AS object_moref, 'n' AS object_name, 'x' AS message FROM n "
    "WHERE x < 0",
    'many.sql': (HEAD % 'site-many') + OK_COLS + ' FROM vsl_vms',
    'latin1.sql': (HEAD % 'site-latin1').encode() + b"-- rationale: caf\xe9\n" +
    OK_COLS.encode() + b' FROM vsl_vms',
    'columns.sql': (HEAD % 'site-columns') + "SELECT name AS object_name FROM vsl_vms",
    'header.sql': '-- title: no id\n-- severity: warning\n' + OK_COLS + ' FROM vsl_vms',
    'builtin.sql': (HEAD % 'datastore-free-space') + OK_COLS + ' FROM vsl_vms',
    'dup-a.sql': (HEAD % 'site-dup') + OK_COLS + ' FROM vsl_vms WHERE 0',
    'dup-b.sql': (HEAD % 'site-dup') + OK_COLS + ' FROM vsl_vms WHERE 0',
}
SAYS = {
    'write.sql': 'DELETE is not allowed', 'attach.sql': 'ATTACH is not allowed',
    'pragma.sql': 'PRAGMA is not allowed', 'two.sql': 'second statement',
    'table.sql': 'reading vms is not allowed', 'extension.sql': 'load_extension',
    'endless.sql': 'time limit', 'many.sql': 'more than 5 rows', 'latin1.sql': 'not UTF-8',
    'columns.sql': 'no column object_type', 'header.sql': "no '-- id:' line",
    'builtin.sql': "built-in check", 'dup-b.sql': 'also the id of',
}


def test_hostile_rules_are_refused_and_the_builtins_stay_complete(est, lab):
    d = rules_dir(est.ws, HOSTILE, name='hostile.d')
    c = conf(est, d, 'timeout = 1\nmax_findings = 5\n')
    doc, stderr = check_json(c)
    errors = {os.path.basename(e['file']): e for e in doc['rule_errors']}
    for fname, says in SAYS.items():
        assert fname in errors, (fname, stderr)
        assert says in errors[fname]['error'], (fname, errors[fname])
        assert os.path.join(d, fname) in stderr, fname
    assert errors['latin1.sql']['line'] == 4
    assert errors['two.sql']['line'] == 4
    assert 'dup-a.sql' not in errors
    builtin = {(x['check'], x['fingerprint']) for x in lab.findings}
    now = {(x['check'], x['fingerprint']) for x in doc['findings']
           if not x['check'].startswith('site-')}
    assert now == builtin
    assert not os.path.exists('/tmp/vsl-evil.db')
    # Nothing was deleted: the vCenters and findings are all there.
    assert json.loads(run_ok('query', '-c', c, '--format', 'json',
                             'SELECT count(*) AS n FROM vsl_polls').stdout)[0]['n'] > 0


def test_a_failed_rule_keeps_its_findings_open_and_unverified(est):
    d = rules_dir(est.ws, {'datastore-free-floor.sql': None}, name='flaky.d')
    c = conf(est, d)
    doc, _ = check_json(c)
    fp = {x['fingerprint'] for x in doc['findings'] if x['check'] == 'site-datastore-free-floor'}
    assert len(fp) == 3
    with open(os.path.join(d, 'datastore-free-floor.sql'), 'a') as f:
        f.write('\nAND nosuch = 1\n')
    res = vslint('check', '-c', c, '--offline', '--format', 'json', '--fail-on', 'critical')
    assert res.returncode == 1, res.stderr  # the open critical findings, not 2
    doc = json.loads(res.stdout)
    assert [e['id'] for e in doc['rule_errors']] == ['site-datastore-free-floor']
    assert 'nosuch' in doc['rule_errors'][0]['error']
    kept = [x for x in doc['findings'] if x['fingerprint'] in fp]
    assert len(kept) == 3
    assert all(x['status'] in ('new', 'open') for x in kept)
    assert all('site rule site-datastore-free-floor failed' in x['unverified']['reason']
               for x in kept)


# ---- rules test and config-check ------------------------------------------------------------

def test_rules_test_exit_codes(est):
    quiet = rules_dir(est.ws, {'quiet.sql': (HEAD % 'site-quiet') + OK_COLS +
                               " FROM vsl_vms WHERE name = 'no such'"}, name='quiet.d')
    res = rules_test(est.conf, os.path.join(quiet, 'quiet.sql'))
    assert res.returncode == 0, res.stderr
    assert res.stdout == '' and 'site-quiet: 0 findings' in res.stderr
    res = rules_test(est.conf, os.path.join(EXAMPLES, 'no-lsi-parallel.sql'))
    assert res.returncode == 1
    bad = rules_dir(est.ws, {'columns.sql': HOSTILE['columns.sql']}, name='bad.d')
    res = rules_test(est.conf, os.path.join(bad, 'columns.sql'))
    assert res.returncode == 2
    assert '%s:4: the query returns no column object_type' % os.path.join(bad, 'columns.sql') \
        in res.stderr
    # Without files: the configuration's directory.
    res = rules_test(conf(est, bad))
    assert res.returncode == 2 and 'columns.sql:4:' in res.stderr


def test_config_check_validates_the_rules_directory(est):
    good = rules_dir(est.ws, {'thin-disk-max-size.sql': None}, name='good.d')
    assert run_ok('config-check', '-c', conf(est, good)).stdout.strip() == 'configuration OK'
    bad = rules_dir(est.ws, {'table.sql': HOSTILE['table.sql'],
                             'header.sql': HOSTILE['header.sql']}, name='bad2.d')
    res = vslint('config-check', '-c', conf(est, bad))
    assert res.returncode == 2
    assert '%s:1: the header has no' % os.path.join(bad, 'header.sql') in res.stderr
    assert '%s:4: reading vms is not allowed' % os.path.join(bad, 'table.sql') in res.stderr
    missing = conf(est, os.path.join(est.ws.dir, 'no-such-dir'))
    assert run_ok('config-check', '-c', missing).stdout.strip() == 'configuration OK'


def test_checks_lists_site_rules_after_the_catalogue(est):
    d = rules_dir(est.ws, {'thin-disk-max-size.sql': None, 'san-lun-paths.sql': None},
                  name='list.d')
    c = conf(est, d)
    doc = json.loads(run_ok('checks', '-c', c, '--format', 'json').stdout)['checks']
    builtin = json.loads(run_ok('checks', '--format', 'json').stdout)['checks']
    assert [x['id'] for x in doc[:len(builtin)]] == [x['id'] for x in builtin]
    site = doc[len(builtin):]
    assert [x['id'] for x in site] == ['site-san-lun-paths', 'site-thin-disk-max-size']
    assert all(x['source'] == 'site' and x['file'].startswith(d) for x in site)
    assert site[1]['parameters'] == [{'name': 'max_gb', 'default': 500.0, 'min': -1e15,
                                      'max': 1e15, 'unit': 'GiB',
                                      'help': 'thin disks larger than this are reported'}]
    assert all('source' not in x for x in builtin)
    text = run_ok('checks', '-c', c, 'site-thin-disk-max-size').stdout
    assert 'site-thin-disk-max-size  (warning, site rule %s/thin-disk-max-size.sql)' % d in text
    assert '[check site-thin-disk-max-size] max_gb = 500 GiB' in text


def test_gate_says_which_site_rules_it_did_not_evaluate(est):
    """The what-if gate judges only the built-in capacity and density checks: with site rules
    configured its answer names them as not evaluated, in JSON and in text."""
    d = rules_dir(est.ws, {'thin-disk-max-size.sql': None, 'no-lsi-parallel.sql': None},
                  name='gate.d')
    args = ['--offline', '--allow-stale', '--datastore', 'ds-lab-01', '--disk-gb', '40']
    res = vslint('gate', '-c', conf(est, d), '--format', 'json', *args)
    assert res.returncode in (0, 1), res.stderr
    ans = json.loads(res.stdout)
    assert ans['site_rules_not_evaluated'] == ['site-no-lsi-parallel', 'site-thin-disk-max-size']
    text = vslint('gate', '-c', conf(est, d), *args).stdout
    assert 'not evaluated: site rule site-thin-disk-max-size' in text
    plain = json.loads(vslint('gate', '-c', est.conf, '--format', 'json', *args).stdout)
    assert 'site_rules_not_evaluated' not in plain


def test_digest_lists_site_findings(est):
    """The digest reads the recorded findings: a site rule's are there with its message, in
    the text part and the HTML part alike."""
    import email
    d = rules_dir(est.ws, {'datastore-free-floor.sql': None}, name='digest.d')
    c = conf(est, d, '\n[digest]\nsmtp_url = smtp://127.0.0.1:9\nfrom = vslint@example.com\n'
                     'to = storage@example.com\ntimezone = UTC\n')
    check_json(c)
    msg = email.message_from_string(run_ok('digest', '-c', c, '--dry-run').stdout)
    parts = {p.get_content_type(): p.get_payload(decode=True).decode()
             for p in msg.walk() if not p.is_multipart()}
    for kind in ('text/plain', 'text/html'):
        assert 'ds-free-snaprisk has 18.0 GiB free, under the site floor of 50 GiB' in \
            parts[kind], kind


def test_daemon_serves_site_rules_and_names_a_broken_one(violations_sim, workspace):
    """`vslint serve`: /api/v1/checks lists the site rules after the catalogue with "source":
    "site" and their file; their findings filter by check; /readyz lists a broken rule as a
    problem (FILE:LINE: cause) while staying ready; the log says it too."""
    from apilib import serving, until
    from simlib import vcenter
    d = rules_dir(workspace, {'thin-disk-max-size.sql': None,
                              'columns.sql': HOSTILE['columns.sql']}, name='api.d')
    record = []
    with serving(workspace, [vcenter(workspace, violations_sim.url)],
                 extra='\n[rules]\ndir = %s\n' % d, record=record) as srv:
        checks = srv.get('/api/v1/checks').json()['checks']
        site = [c for c in checks if c.get('source') == 'site']
        # A rule whose header loads is listed even when its query fails.
        assert [c['id'] for c in site] == ['site-columns', 'site-thin-disk-max-size']
        assert site[1]['file'] == os.path.join(d, 'thin-disk-max-size.sql')
        assert checks[-1]['id'] == 'site-thin-disk-max-size'

        def found():
            page = srv.get('/api/v1/findings?check=site-thin-disk-max-size').json()
            return [x['object']['name'] for x in page['findings']] == ['vm-thin-overcommit']
        until(found, 'the site rule finding', srv)
        ready = srv.get('/readyz')
        assert ready.status == 200
        want = '%s:4: the query returns no column object_type' % os.path.join(d, 'columns.sql')
        assert any(want in p for p in ready.json()['problems']), ready.json()
        assert '%s:4: site rule site-columns: the query returns no column object_type' % \
            os.path.join(d, 'columns.sql') in srv.logs()
        gate = srv.post('/api/v1/gate', data=json.dumps(
            {'datastore': 'ds-lab-01', 'disks_gb': [40]}).encode()).json()
        assert gate['site_rules_not_evaluated'] == ['site-columns', 'site-thin-disk-max-size']
        placement = srv.get('/api/v1/placement?disks_gb=40').json()
        assert placement['site_rules_not_evaluated'] == ['site-columns',
                                                         'site-thin-disk-max-size']
        metrics = srv.get('/metrics').body
        assert '\nvslint_site_rule_errors 1\n' in metrics
        assert 'vslint_site_rule_failed{rule="site-columns",file="%s"} 1' % \
            os.path.join(d, 'columns.sql') in metrics
    # Every answer with site rules in it matches docs/openapi.yaml.
    import subprocess
    answers = os.path.join(workspace.dir, 'answers.jsonl')
    with open(answers, 'w') as fh:
        for r in record:
            fh.write(json.dumps(r) + '\n')
    root = os.environ.get('SOURCE_ROOT', '.')
    p = subprocess.run(['node', os.path.join(root, 'tests', 'tools', 'validate-openapi.js'),
                        os.path.join(root, 'docs', 'openapi.yaml'), answers],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-2000:]
    assert '%d answers checked' % len(record) in p.stdout
