"""`vslint check` end to end through a configuration file: the clean estate has no finding;
thresholds, severities and enablement are overridable; waivers (active and expired) mark
findings waived without hiding them; --fail-on sets the exit status; JUnit output is read by
an independent JUnit parser and SARIF validates against the official 2.1.0 schema; a second
poll after an admin fixes a planted violation marks that finding resolved and leaves the
others' first_seen alone."""
import json
import os
import sqlite3
import subprocess
import time
from types import SimpleNamespace

import pytest

from simlib import Estate, Sim, VimClient, of, run_ok, vslint

TOOLS = os.path.join(os.environ.get('SOURCE_ROOT', '.'), 'tests', 'tools')


def node(script, path):
    return subprocess.run(['node', os.path.join(TOOLS, script), path], capture_output=True,
                          text=True, timeout=120)


def catalogue():
    return json.loads(run_ok('checks', '--format', 'json').stdout)['checks']


# What the catalogue said before issue 22 that its seeds do not say; none may come back.
MISCITATIONS = ('works best on VMFS6', 'elsewhere are the guide\'s default', '4x the throughput',
                'not backups', 'snapshots and replication at risk', 'should by ',
                'the pool capacity rule of the Unity guide', 'guide requires eagerzeroedthick')


def test_catalogue_quotes_and_owns():
    """Every check names the seed passages it rests on (document, section, the seed's words)
    and, apart, what vslint adds; the thresholds the seeds do not give are said to be
    vslint's, and none of the old mis-citations is left."""
    cat = catalogue()
    by_id = {ck['id']: ck for ck in cat}
    for ck in cat:
        assert isinstance(ck['own'], str) and len(ck['own']) > 40, ck['id']
        assert ck['sources'] or ck['id'] == 'host-coverage', ck['id']
        for src in ck['sources']:
            assert set(src) == {'document', 'section', 'quote'}, ck['id']
            assert src['document'] in ck['reference'], (ck['id'], src['document'])
        text = json.dumps(ck)
        for bad in MISCITATIONS:
            assert bad not in text, (ck['id'], bad)
    assert 'never mentions VMFS3' in by_id['vmfs-version']['own']
    assert [s['section'] for s in by_id['vmfs-version']['sources']] == ['§3.7.2', '§3.7.2']
    assert '300 to 800 MB/s' in by_id['multipath-policy']['rationale']
    for check, threshold in (('thin-overcommit', '150 %'), ('pool-subscription', '150 %'),
                             ('datastore-alarms', '70 % and 90 %'), ('pvscsi-controller', '3 disks'),
                             ('snapshots', '7 days')):
        own = by_id[check]['own']
        assert threshold in own and "vslint's" in own, (check, own)
    assert any('The default virtual disk format is thick provision lazy zeroed.' in s['quote']
               for s in by_id['vdisk-format']['sources'])


def test_findings_doc_shows_every_quote_and_own():
    """docs/findings.md shows each check's quotes (with document and section) and its own, as
    the catalogue has them, so the page cannot tell a reader something the checks no longer
    say."""
    with open(os.path.join(os.environ.get('SOURCE_ROOT', '.'), 'docs', 'findings.md')) as fh:
        doc = ' '.join(fh.read().split())
    for ck in catalogue():
        assert '**%s**' % ck['id'] in doc, ck['id']
        for src in ck['sources']:
            assert '> "%s" > (%s %s)' % (' '.join(src['quote'].split()), src['document'],
                                         src['section']) in doc, (ck['id'], src['section'])
        assert "vslint's own: " + ' '.join(ck['own'].split()) in doc, ck['id']


def test_checks_text_shows_quotes_and_own():
    """`vslint checks ID` prints the seed's words, quoted and attributed, then vslint's own."""
    out = run_ok('checks', 'snapshots').stdout
    assert 'Quote (000_5bd48962a767ee9e.txt §4.2): "Be aware that snapshots increase the ' \
        'overall CPU load on the system' in out, out
    assert "vslint's own: The seed speaks of the array's snapshots" in out, out
    assert out.index('Quote (') < out.index("vslint's own: ") < out.index('Fix: '), out


def test_clean_estate_passes(clean):
    res = vslint('check', '-c', clean.conf, '--format', 'json')
    assert res.returncode == 0, res.stderr.strip()
    assert [(x['check'], x['object']['name']) for x in json.loads(res.stdout)['findings']] == []


def test_clean_text_summary(clean):
    res = vslint('check', '-c', clean.conf)
    assert '0 critical, 0 warning, 0 info' in res.stdout, res.stdout


def test_violations_have_findings(lab):
    assert len(lab.findings) > 10


def test_every_finding_new_on_the_first_run(lab):
    assert [x['fingerprint'] for x in lab.findings if x['status'] != 'new'] == []


def test_ds_free_warn_is_a_warning(lab):
    assert of(lab.findings, 'datastore-free-space').get('ds-free-warn', {}).get('severity') == \
        'warning'


@pytest.fixture(scope='module')
def stored(lab, module_workspace):
    """A copy of the violations snapshot for `check --offline` runs with its configuration."""
    return lab.copy(module_workspace)


@pytest.mark.parametrize('level,want', [('info', 1), ('warning', 1), ('critical', 1),
                                        ('sometimes', 2)])
def test_fail_on(stored, level, want):
    assert vslint('check', '-c', stored.conf, '--offline', '--fail-on', level).returncode == want


def test_junit_report(lab, stored):
    """JUnit, read by an independent parser: a failure per finding at or above warning, a suite
    per check."""
    jpath = os.path.join(stored.ws.dir, 'report.xml')
    res = vslint('check', '-c', stored.conf, '--offline', '--format', 'junit', '-o', jpath)
    assert res.returncode == 1
    p = node('parse-junit.js', jpath)
    assert p.returncode == 0, p.stdout[:300]
    j = json.loads(p.stdout)
    assert j['failed'] == len([x for x in lab.findings if x['severity'] in ('warning', 'critical')])
    assert len(j['suites']) == len(catalogue())


@pytest.fixture(scope='module')
def sarif(stored):
    spath = os.path.join(stored.ws.dir, 'report.sarif')
    vslint('check', '-c', stored.conf, '--offline', '--format', 'sarif', '-o', spath)
    return spath


def test_sarif_validates(sarif):
    """SARIF, validated against the official schema."""
    p = node('validate-sarif.js', sarif)
    assert (p.returncode, p.stdout.strip()) == (0, 'valid'), p.stdout[:500]


def test_sarif_result_per_finding(lab, sarif):
    with open(sarif) as fh:
        assert len(json.load(fh)['runs'][0]['results']) == len(lab.findings)


def test_sarif_rule_help_quotes_the_seeds(sarif):
    """A code-scanning tool shows a rule's help beside its results: it holds the fix, every
    seed quote the rule rests on (named by document and section) and what vslint adds on its
    own; the rule's properties carry the same sources as the catalogue."""
    with open(sarif) as fh:
        rules = {r['id']: r for r in json.load(fh)['runs'][0]['tool']['driver']['rules']}
    for ck in catalogue():
        rule = rules[ck['id']]
        help_text = rule['help']['text']
        assert help_text.startswith(ck['remediation']), ck['id']
        for src in ck['sources']:
            assert 'Source, %s %s: "%s"' % (src['document'], src['section'], src['quote']) \
                in help_text, (ck['id'], src['section'])
        assert "vslint's own: " + ck['own'] in help_text, ck['id']
        assert rule['properties']['sources'] == ck['sources'], ck['id']
    vmfs = rules['vmfs-version']['help']['text']
    assert 'Virtual machine hardware must be version 11 (ESXi 6.0) or greater' in vmfs


OVERRIDES = '\n'.join([
    '[check datastore-free-space]', 'warn_free_pct = 15', '',
    '[check thin-overcommit]', 'severity = critical', '',
    '[check snapshots]', 'enabled = false', '',
    '[waiver]', 'check = vms-per-datastore', 'object = ds-crow*',
    'reason = migration to the new array in progress', 'expires = 2099-12-31', '',
    '[waiver]', 'check = datastore-size', 'object = ds-size-small',
    'reason = was fine last year', 'expires = 2020-01-31', ''])


@pytest.fixture(scope='module')
def overridden(lab, new_workspace):
    """Overrides, disabled checks and waivers through the configuration, on a copy."""
    est = lab.copy(new_workspace())
    conf = est.config(OVERRIDES)
    return SimpleNamespace(conf=conf, config_check=vslint('config-check', '-c', conf),
                           findings=est.check('--offline', conf=conf),
                           text=vslint('check', '-c', conf, '--offline', '--fail-on',
                                       'never').stdout)


def test_override_config_valid(overridden):
    assert overridden.config_check.returncode == 0, overridden.config_check.stderr.strip()


def test_threshold_override(overridden):
    """warn_free_pct = 15 silences ds-free-warn (20 % free) and still flags ds-free-crit."""
    free = of(overridden.findings, 'datastore-free-space')
    assert 'ds-free-warn' not in free, sorted(free)
    assert 'ds-free-crit' in free, sorted(free)


def test_severity_override(overridden):
    assert of(overridden.findings, 'thin-overcommit').get('ds-overcommit', {}).get(
        'severity') == 'critical'


def test_disabled_check(overridden):
    assert [x for x in overridden.findings if x['check'] == 'snapshots'] == []


def test_active_waiver(overridden):
    crowd = of(overridden.findings, 'vms-per-datastore').get('ds-crowded', {})
    assert crowd.get('status') == 'waived'
    assert (crowd.get('waiver') or {}).get('reason') == 'migration to the new array in progress'


def test_expired_waiver(overridden):
    small = of(overridden.findings, 'datastore-size').get('ds-size-small', {})
    assert small.get('status') in ('open', 'new'), small.get('status')


def test_text_shows_waived_finding(overridden):
    assert 'WAIVED' in overridden.text and 'ds-crowded' in overridden.text


def test_text_notes_expired_waiver(overridden):
    assert 'expired on 2020-01-31' in overridden.text


def test_only_waived_findings_pass(lab, workspace):
    """A waived finding does not fail the run: only vms-per-datastore, only ds-crowded."""
    est = lab.copy(workspace)
    only = est.config('\n'.join([
        '[waiver]', 'check = vms-per-datastore', 'object = ds-crowded', 'reason = r',
        'expires = 2099-01-01', '']) + ''.join(
        '\n[check %s]\nenabled = false\n' % c['id']
        for c in catalogue() if c['id'] != 'vms-per-datastore'))
    res = vslint('check', '-c', only, '--offline', '--fail-on', 'info')
    assert res.returncode == 0, res.stdout.strip()[-200:]


@pytest.fixture(scope='module')
def fixed(new_workspace):
    """History: an admin deletes vm-snap-old's snapshots on an estate of its own; the next poll
    resolves that finding and leaves every other finding's first_seen as it was."""
    ws = new_workspace()
    with Sim('violations') as sim:
        est = Estate(sim, ws)
        est.check()
        before = {x['fingerprint']: x for x in est.check('--offline')}
        vm = [v for v in est.inventory()['vcenters'][0]['vms'] if v['name'] == 'vm-snap-old'][0]
        task = VimClient(sim.url).remove_all_snapshots(vm['moref'])
        time.sleep(1.1)
        after = json.loads(run_ok('check', '-c', est.conf, '--format', 'json', '--fail-on',
                                  'never').stdout)
    snap = [k for k, x in before.items()
            if x['check'] == 'snapshots' and x['object']['name'] == 'vm-snap-old']
    return SimpleNamespace(ws=ws, task=task, before=before, snap=snap, summary=after['summary'],
                           after={x['fingerprint']: x for x in after['findings']})


def test_snapshots_removed(fixed):
    assert fixed.task == 'success', 'RemoveAllSnapshots_Task'


def test_one_finding_fixed(fixed):
    assert len(fixed.snap) == 1, 'vm-snap-old had %d snapshots findings' % len(fixed.snap)
    assert fixed.summary.get('resolved_this_run') == 1, 'the summary does not count it'


def test_fixed_finding_resolved(fixed):
    db = sqlite3.connect(fixed.ws.db)
    try:
        for k in fixed.snap:
            assert k not in fixed.after, 'the fixed finding is still open'
            row = db.execute('SELECT status, resolved_at_ms FROM findings WHERE fingerprint = ?',
                             (k,)).fetchone()
            assert row is not None and row[0] == 'resolved' and row[1] is not None, row
    finally:
        db.close()


def others(fixed, field):
    """"check object fingerprint" -> field, before and after, of the findings not fixed."""
    names = {k: '%s %s %s' % (x['check'], x['object']['name'], k)
             for k, x in fixed.before.items() if k not in fixed.snap}
    return ({names[k]: fixed.after.get(k, {}).get(field) for k in names},
            {names[k]: fixed.before[k][field] for k in names})


def test_other_findings_keep_first_seen(fixed):
    after, before = others(fixed, 'first_seen')
    assert after == before


def test_other_findings_no_longer_new(fixed):
    after, _ = others(fixed, 'status')
    assert {k: s for k, s in after.items() if s not in ('open', 'waived')} == {}


def test_damaged_evidence_reads_as_empty(lab, workspace):
    """A finding whose stored evidence was damaged by hand is reported with evidence {}: the
    JSON report stays one valid document (it was written verbatim, and jq failed on it all).
    A trigger puts the damage back each time the evaluation rewrites the row, as an admin's
    repeated edit would."""
    est = lab.copy(workspace)
    fp = lab.findings[0]['fingerprint']
    con = sqlite3.connect(workspace.db)
    con.execute("CREATE TRIGGER damage AFTER UPDATE ON findings WHEN new.fingerprint = '%s' "
                "BEGIN UPDATE findings SET evidence_json = '{\"a\":1,,\"b\"}' "
                "WHERE fingerprint = new.fingerprint; END" % fp)
    con.execute("UPDATE findings SET evidence_json = '{\"a\":1,,\"b\"}' WHERE fingerprint = ?",
                (fp,))
    con.commit()
    con.close()
    res = vslint('check', '-c', est.conf, '--offline', '--format', 'json', '--fail-on', 'never')
    assert res.returncode == 0, res.stderr.strip()
    con = sqlite3.connect(workspace.db)
    stored = con.execute('SELECT evidence_json FROM findings WHERE fingerprint = ?',
                         (fp,)).fetchone()[0]
    con.close()
    assert stored == '{"a":1,,"b"}', stored
    by_fp = {x['fingerprint']: x for x in json.loads(res.stdout)['findings']}
    assert by_fp[fp]['evidence'] == {}, by_fp[fp]
    assert by_fp[lab.findings[1]['fingerprint']]['evidence'] != {}


@pytest.mark.parametrize('level', ['info', 'warning', 'critical'])
def test_exit_agrees_with_report(lab, workspace, level):
    """The exit status is what the printed document says: 1 exactly when it lists an unwaived
    finding at --fail-on or above, with every critical finding waived and the rest not."""
    est = lab.copy(workspace)
    crit = {x['check'] for x in lab.findings if x['severity'] == 'critical'}
    other = {x['check'] for x in lab.findings if x['severity'] != 'critical'} - crit
    assert crit and other, (crit, other)
    conf = est.config(''.join('[waiver]\ncheck = %s\nobject = *\nreason = r\nexpires = '
                              '2099-01-01\n\n' % c for c in sorted(crit)))
    res = vslint('check', '-c', conf, '--offline', '--format', 'json', '--fail-on', level)
    found = json.loads(res.stdout)['findings']
    assert [x for x in found if x['severity'] == 'critical' and x['status'] != 'waived'] == []
    rank = {'info': 0, 'warning': 1, 'critical': 2}
    failing = [x for x in found
               if x['status'] != 'waived' and rank[x['severity']] >= rank[level]]
    assert res.returncode == (1 if failing else 0), (level, res.returncode, res.stderr)
    assert (level == 'critical') == (not failing), (level, len(failing))
