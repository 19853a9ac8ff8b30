"""Monitoring as code: dist/prometheus/vslint.rules.yml passes `promtool check rules` and its
unit tests (tests/monitoring/vslint.rules.test.yml, `promtool test rules`); every query of
dist/grafana/vslint.json is PromQL that promtool parses, and the dashboard and the rules name
only metrics that a running `vslint serve` exports on /metrics (plus the short allow-list
below, each entry saying why)."""
import copy
import json
import os
import re
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.request

import pytest

from simlib import VSLINT

SOURCE_ROOT = os.environ.get('SOURCE_ROOT', '.')
RULES = os.path.join(SOURCE_ROOT, 'dist', 'prometheus', 'vslint.rules.yml')
RULES_TEST = os.path.join(SOURCE_ROOT, 'tests', 'monitoring', 'vslint.rules.test.yml')
DASHBOARD = os.path.join(SOURCE_ROOT, 'dist', 'grafana', 'vslint.json')
PROMTOOL = shutil.which('promtool')

# Metrics the rules and the dashboard may name that /metrics does not export.
ALLOWED = {
    # Prometheus's own: 1 while a target is scraped (VslintDown).
    'up',
}
# Grafana's variables, replaced by something PromQL-shaped before promtool reads a query.
GRAFANA_VARS = {'$__rate_interval': '5m', '$__interval': '1m', '$__range': '1d'}
KEYWORDS = {'by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'offset', 'bool',
            'and', 'or', 'unless', 'inf', 'nan', 'atan2'}


def promtool(*args):
    assert PROMTOOL, 'promtool is missing: apt-get install prometheus (scripts/install-deps.sh)'
    return subprocess.run([PROMTOOL] + list(args), capture_output=True, text=True, timeout=120)


def metric_names(expr):
    """The metric names a PromQL expression reads: identifiers outside label matchers, grouping
    clauses, strings and durations that are not functions or keywords."""
    e = re.sub(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'', '""', expr)
    e = re.sub(r'\{[^}]*\}', ' ', e)
    e = re.sub(r'\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)', ' ', e)
    e = re.sub(r'\[[^\]]*\]', ' ', e)
    names = set()
    for m in re.finditer(r'[a-zA-Z_:][a-zA-Z0-9_:]*', e):
        word, rest = m.group(0), e[m.end():].lstrip()
        if rest.startswith('(') or word.lower() in KEYWORDS:
            continue
        if re.match(r'^\d', e[max(0, m.start() - 1):m.start()]):  # 5m, 1e3
            continue
        names.add(word)
    return names


def dashboard_queries(dash):
    """(where, expr) of every query: panel targets (rows' panels too) and template variables."""
    out = []

    def walk(panels):
        for p in panels:
            for t in p.get('targets', []):
                if t.get('expr'):
                    out.append(('panel %r %s' % (p.get('title'), t.get('refId')), t['expr']))
            walk(p.get('panels', []))
    walk(dash.get('panels', []))
    for v in dash.get('templating', {}).get('list', []):
        q = v.get('query')
        q = q.get('query') if isinstance(q, dict) else q
        m = re.match(r'^label_values\((.*),\s*\w+\)$', q or '')
        if v.get('type') == 'query':
            assert m, 'variable %s: only label_values(SELECTOR, label) is expected' % v['name']
            out.append(('variable ' + v['name'], m.group(1)))
    return out


def promql(expr):
    """expr with Grafana's variables replaced: $x in a regex matcher matches anything."""
    for k, v in GRAFANA_VARS.items():
        expr = expr.replace(k, v)
    return re.sub(r'\$\{?\w+\}?', '.*', expr)


def rule_exprs():
    """(alert, expr) of the rules file; PyYAML may be absent, so the file's own layout is read:
    `expr:` followed by the expression on the same line or as a folded block."""
    out, lines = [], open(RULES).read().split('\n')
    alert = None
    for i, line in enumerate(lines):
        m = re.match(r'^\s*- alert: (\S+)', line)
        if m:
            alert = m.group(1)
        m = re.match(r'^(\s*)expr: ?(.*)$', line)
        if m:
            if m.group(2).strip() in ('>', '|', '>-', '|-'):
                block = []
                for nxt in lines[i + 1:]:
                    if nxt.strip() and len(nxt) - len(nxt.lstrip()) <= len(m.group(1)):
                        break
                    block.append(nxt.strip())
                out.append((alert, ' '.join(block).strip()))
            else:
                out.append((alert, m.group(2).strip()))
    return out


@pytest.fixture(scope='module')
def exported(module_workspace):
    """Metric names on the /metrics of a real `vslint serve` (its vCenter unreachable: the
    names, from the # TYPE lines, do not depend on what is polled)."""
    s = socket.socket()
    s.bind(('127.0.0.1', 0))
    port = s.getsockname()[1]
    s.close()
    ws = module_workspace
    conf = ws.write_config([{'name': 'prod', 'url': 'http://127.0.0.1:9/sdk', 'user': 'u',
                             'password_file': ws.password_file()}],
                           extra='\n[server]\nlisten = 127.0.0.1:%d\n' % port)
    proc = subprocess.Popen([VSLINT, 'serve', '-c', conf], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        text = None
        for _ in range(100):
            try:
                with urllib.request.urlopen('http://127.0.0.1:%d/metrics' % port, timeout=5) as r:
                    text = r.read().decode()
                if 'vslint_poll_success{' in text:
                    break
            except OSError:
                pass
            time.sleep(0.1)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    assert text, 'vslint serve did not answer /metrics'
    return set(re.findall(r'^# TYPE (\S+) ', text, re.M))


def test_rules_pass_promtool_check():
    res = promtool('check', 'rules', RULES)
    assert res.returncode == 0, res.stdout + res.stderr
    assert 'SUCCESS: 6 rules found' in res.stdout


def test_rules_unit_tests_pass():
    res = promtool('test', 'rules', RULES_TEST)
    assert res.returncode == 0, res.stdout + res.stderr
    assert 'SUCCESS' in res.stdout


def test_the_alerts_the_issue_asks_for_exist():
    alerts = {a for a, _ in rule_exprs()}
    assert {'VslintDown', 'VslintVcenterNotPolled', 'VslintNewCriticalFindings',
            'VslintScoreFalling', 'VslintDatastoreRunwayShort'} <= alerts


def test_every_dashboard_query_is_promql():
    """promtool parses each query as the expression of a recording rule."""
    with open(DASHBOARD) as f:
        queries = dashboard_queries(json.load(f))
    assert len(queries) >= 15
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, 'queries.yml')
        with open(path, 'w') as f:
            f.write('groups:\n  - name: dashboard\n    rules:\n')
            for i, (where, expr) in enumerate(queries):
                f.write('      - record: dashboard:query_%d\n        expr: %s\n' % (
                    i, json.dumps(promql(expr))))
        res = promtool('check', 'rules', path)
    assert res.returncode == 0, res.stdout + res.stderr


def unknown_metrics(queries, exported):
    return ['%s: %s' % (where, name) for where, expr in queries
            for name in sorted(metric_names(promql(expr))) if name not in exported | ALLOWED]


def test_dashboard_and_rules_name_only_exported_metrics(exported):
    assert {'vslint_score', 'vslint_findings', 'vslint_poll_success',
            'vslint_poll_interval_seconds'} <= exported
    with open(DASHBOARD) as f:
        queries = dashboard_queries(json.load(f))
    assert unknown_metrics(queries, exported) == []
    assert unknown_metrics(rule_exprs(), exported) == []
    # The allow-list holds nothing that is exported by now (then it is no longer future).
    assert not (ALLOWED & exported), 'exported now: drop from ALLOWED %s' % (ALLOWED & exported)


def test_a_query_naming_a_metric_vslint_does_not_export_fails(exported):
    with open(DASHBOARD) as f:
        dash = json.load(f)
    bad = copy.deepcopy(dash)
    target = next(p for p in bad['panels'] if p.get('targets'))['targets'][0]
    target['expr'] = 'sum by (vcenter) (rate(vslint_polls_total{instance=~"$instance"}[5m]))'
    assert unknown_metrics(dashboard_queries(bad), exported) == [
        "panel 'Score' A: vslint_polls_total"]
    assert metric_names('vslint_score offset 1d - on (instance) vslint_score >= 10') == {
        'vslint_score'}
    assert metric_names('histogram_quantile(0.9, sum by (le) (rate(x_bucket{a="b"}[5m])))') == {
        'x_bucket'}


def test_dashboard_is_a_grafana_10_dashboard(exported):
    with open(DASHBOARD) as f:
        dash = json.load(f)
    assert 36 <= dash['schemaVersion'] <= 39  # Grafana 9.x-10.x
    assert dash['uid'] == 'vslint' and dash['title']
    variables = {v['name'] for v in dash['templating']['list']}
    assert {'datasource', 'instance', 'vcenter'} <= variables
    ids, covered = set(), set()
    for p in dash['panels']:
        assert p['id'] not in ids, 'duplicate panel id %s' % p['id']
        ids.add(p['id'])
        assert p['type'] in ('row', 'stat', 'timeseries', 'bargauge', 'table', 'gauge')
        g = p['gridPos']
        assert g['x'] + g['w'] <= 24 and g['w'] > 0 and g['h'] > 0
        for t in p.get('targets', []):
            assert t['datasource'] == {'type': 'prometheus', 'uid': '${datasource}'}
            for var in re.findall(r'\$\{?(\w+)', t['expr']):
                assert var in variables or '$' + var in GRAFANA_VARS, var
            covered |= metric_names(promql(t['expr']))
    # What the issue asks to see: score, findings, poll health and duration, datastore fill.
    assert {'vslint_score', 'vslint_findings', 'vslint_poll_success',
            'vslint_poll_duration_seconds', 'vslint_datastore_free_bytes',
            'vslint_datastore_capacity_bytes'} <= covered
