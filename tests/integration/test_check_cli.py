#!/usr/bin/env python3
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
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from simlib import Sim, Workspace, Failures, VimClient, vslint, USER, of  # noqa: E402

TOOLS = os.path.join(os.environ.get('SOURCE_ROOT', '.'), 'tests', 'tools')


def node(script, path):
    return subprocess.run(['node', os.path.join(TOOLS, script), path], capture_output=True,
                          text=True, timeout=120)


def findings(res):
    return json.loads(res.stdout)['findings']


def main():
    f = Failures('check cli')
    ws = Workspace()
    try:
        pw = ws.password_file()
        with Sim('clean') as sim:
            conf = ws.write_config([{'name': 'clean', 'url': sim.url, 'user': USER,
                                     'password_file': pw}])
            res = vslint('check', '-c', conf, '--format', 'json')
            f.eq('clean exit status (%s)' % res.stderr.strip(), res.returncode, 0)
            fs = findings(res) if res.returncode == 0 else []
            f.eq('clean findings', [(x['check'], x['object']['name']) for x in fs], [])
            res = vslint('check', '-c', conf)
            f.true('clean text summary: ' + res.stdout, '0 critical, 0 warning, 0 info' in res.stdout)

        os.unlink(ws.db)
        with Sim('violations') as sim:
            vc = {'name': 'lab', 'url': sim.url, 'user': USER, 'password_file': pw}
            conf = ws.write_config([vc])
            res = vslint('check', '-c', conf, '--format', 'json', '--fail-on', 'never')
            f.eq('violations --fail-on never', res.returncode, 0)
            base = findings(res)
            f.true('violations has findings', len(base) > 10)
            f.true('every finding is new on the first run',
                   all(x['status'] == 'new' for x in base))
            f.true('ds-free-warn flagged as warning',
                   of(base, 'datastore-free-space').get('ds-free-warn', {}).get('severity') == 'warning')
            for level, want in (('info', 1), ('warning', 1), ('critical', 1)):
                res = vslint('check', '-c', conf, '--offline', '--fail-on', level)
                f.eq('--fail-on %s exit status' % level, res.returncode, want)
            res = vslint('check', '-c', conf, '--offline', '--fail-on', 'sometimes')
            f.eq('bad --fail-on', res.returncode, 2)

            # JUnit, read by an independent parser.
            jpath = os.path.join(ws.dir, 'report.xml')
            res = vslint('check', '-c', conf, '--offline', '--format', 'junit', '-o', jpath)
            f.eq('junit exit status', res.returncode, 1)
            p = node('parse-junit.js', jpath)
            f.eq('junit parses (%s)' % p.stdout[:300], p.returncode, 0)
            if p.returncode == 0:
                j = json.loads(p.stdout)
                unwaived_warn = [x for x in base if x['severity'] in ('warning', 'critical')]
                f.eq('junit failures = findings at or above warning', j['failed'],
                     len(unwaived_warn))
                f.eq('junit suites = one per check', len(j['suites']),
                     len(json.loads(vslint('checks', '--format', 'json').stdout)['checks']))

            # SARIF, validated against the official schema.
            spath = os.path.join(ws.dir, 'report.sarif')
            res = vslint('check', '-c', conf, '--offline', '--format', 'sarif', '-o', spath)
            p = node('validate-sarif.js', spath)
            f.eq('sarif validates (%s)' % p.stdout[:500], (p.returncode, p.stdout.strip()),
                 (0, 'valid'))
            with open(spath) as fh:
                sarif = json.load(fh)
            f.eq('sarif results = findings', len(sarif['runs'][0]['results']), len(base))

            # Overrides, disabled checks and waivers through the configuration.
            extra = '\n'.join([
                '[check datastore-free-space]', 'warn_free_pct = 15', '',
                '[check thin-overcommit]', 'severity = critical', '',
                '[check snapshots]', 'enabled = false', '',
                '[waiver]', 'check = vms-per-datastore', 'object = ds-crow*',
                'reason = migration to the new array in progress', 'expires = 2099-12-31', '',
                '[waiver]', 'check = datastore-size', 'object = ds-size-small',
                'reason = was fine last year', 'expires = 2020-01-31', ''])
            conf = ws.write_config([vc], extra)
            res = vslint('config-check', '-c', conf)
            f.eq('override config is valid (%s)' % res.stderr.strip(), res.returncode, 0)
            res = vslint('check', '-c', conf, '--offline', '--format', 'json', '--fail-on', 'never')
            over = findings(res)
            free = of(over, 'datastore-free-space')
            f.true('warn_free_pct=15 silences ds-free-warn (20%% free): %s' % sorted(free),
                   'ds-free-warn' not in free)
            f.true('warn_free_pct=15 still flags ds-free-crit', 'ds-free-crit' in free)
            thin = of(over, 'thin-overcommit')
            f.eq('severity override', thin.get('ds-overcommit', {}).get('severity'), 'critical')
            f.eq('disabled check', [x for x in over if x['check'] == 'snapshots'], [])
            crowd = of(over, 'vms-per-datastore').get('ds-crowded', {})
            f.eq('active waiver -> waived', crowd.get('status'), 'waived')
            f.eq('waiver reason shown', (crowd.get('waiver') or {}).get('reason'),
                 'migration to the new array in progress')
            small = of(over, 'datastore-size').get('ds-size-small', {})
            f.true('expired waiver does not apply: %r' % small.get('status'),
                   small.get('status') in ('open', 'new'))
            text = vslint('check', '-c', conf, '--offline', '--fail-on', 'never').stdout
            f.true('text shows the waived finding', 'WAIVED' in text and 'ds-crowded' in text)
            f.true('text notes the expired waiver', 'expired on 2020-01-31' in text)
            # A waived finding does not fail the run: only vms-per-datastore, only ds-crowded.
            only = ws.write_config([vc], '\n'.join([
                '[waiver]', 'check = vms-per-datastore', 'object = ds-crowded', 'reason = r',
                'expires = 2099-01-01', '']) + ''.join(
                '\n[check %s]\nenabled = false\n' % c['id']
                for c in json.loads(vslint('checks', '--format', 'json').stdout)['checks']
                if c['id'] != 'vms-per-datastore'))
            res = vslint('check', '-c', only, '--offline', '--fail-on', 'info')
            f.eq('only waived findings -> exit 0 (%s)' % res.stdout.strip()[-200:],
                 res.returncode, 0)

            # History: an admin deletes vm-snap-old's snapshots; the next poll resolves that
            # finding and leaves every other finding's first_seen as it was.
            conf = ws.write_config([vc])
            before = {x['fingerprint']: x for x in findings(
                vslint('check', '-c', conf, '--offline', '--format', 'json', '--fail-on', 'never'))}
            inv = json.loads(vslint('inventory', '-c', conf, '--format', 'json').stdout)
            vm = [v for v in inv['vcenters'][0]['vms'] if v['name'] == 'vm-snap-old'][0]
            f.eq('RemoveAllSnapshots_Task', VimClient(sim.url).remove_all_snapshots(vm['moref']),
                 'success')
            time.sleep(1.1)
            res = vslint('check', '-c', conf, '--format', 'json', '--fail-on', 'never')
            after = {x['fingerprint']: x for x in findings(res)}
            snap = [k for k, x in before.items()
                    if x['check'] == 'snapshots' and x['object']['name'] == 'vm-snap-old']
            f.eq('vm-snap-old had one snapshots finding', len(snap), 1)
            f.eq('summary counts the resolved finding',
                 json.loads(res.stdout)['summary'].get('resolved_this_run'), 1)
            db = sqlite3.connect(ws.db)
            for k in snap:
                f.true('fixed finding no longer open', k not in after)
                row = db.execute('SELECT status, resolved_at_ms FROM findings WHERE '
                                 'fingerprint = ?', (k,)).fetchone()
                f.true('fixed finding stored as resolved with a time: %r' % (row,),
                       row is not None and row[0] == 'resolved' and row[1] is not None)
            db.close()
            for k, x in before.items():
                if k in snap:
                    continue
                f.eq('first_seen of %s %s' % (x['check'], x['object']['name']),
                     after.get(k, {}).get('first_seen'), x['first_seen'])
                f.true('%s %s no longer new' % (x['check'], x['object']['name']),
                       after.get(k, {}).get('status') in ('open', 'waived'))
    finally:
        ws.cleanup()
    f.finish()


if __name__ == '__main__':
    main()
