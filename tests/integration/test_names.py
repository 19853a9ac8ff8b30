"""Names as admins write them: the violations scenario plants a datastore named
`ds "Q3" & <Ops> 'Ñandú'` (blanks, & < > " ' and non-ASCII letters) with a free-space warning.
The name must come back unchanged from every output: `vslint check` as JSON, SARIF, JUnit and
text, the findings API with a filter on it, the inventory, and a waiver that names it. (SOAP,
SQLite and the inventory JSON of the edges scenario: test_edges.py; the dashboard:
tests/e2e/test_dashboard.js.)"""
import json
import urllib.parse
import xml.etree.ElementTree as ET

import pytest

from apilib import serving
from simlib import of, run_ok, vslint

ODD = 'ds "Q3" & <Ops> \'Ñandú\''
CHECK = 'datastore-free-space'


def report(lab, fmt, fail_on='never'):
    """`vslint check --offline` in fmt: exit 0, or 1 for findings at fail_on."""
    res = vslint('check', '-c', lab.conf, '--offline', '--format', fmt, '--fail-on', fail_on)
    assert res.returncode in ((0, 1) if fail_on != 'never' else (0,)), res.stderr
    return res.stdout


@pytest.fixture(scope='module')
def odd(lab):
    """The odd datastore's finding, as the JSON report has it."""
    x = of(lab.findings, CHECK).get(ODD)
    assert x is not None, sorted(of(lab.findings, CHECK))
    return x


def test_json(odd):
    assert odd['object']['name'] == ODD
    assert odd['severity'] == 'warning'
    assert ODD in odd['message']


def test_sarif(lab, odd):
    doc = json.loads(report(lab, 'sarif'))
    names = [loc['name'] for r in doc['runs'][0]['results'] if r['ruleId'] == CHECK
             for loc in r['locations'][0]['logicalLocations']]
    assert ODD in names
    msgs = [r['message']['text'] for r in doc['runs'][0]['results']]
    assert odd['message'] in msgs


def test_junit(lab, odd):
    root = ET.fromstring(report(lab, 'junit', 'warning').encode('utf-8'))
    cases = {c.get('name'): c for c in root.iter('testcase') if c.get('classname') == CHECK}
    assert 'lab/' + ODD in cases, sorted(cases)
    failure = cases['lab/' + ODD].find('failure')
    assert failure is not None and failure.get('message') == odd['message']


def test_text(lab, odd):
    lines = [ln for ln in report(lab, 'text').splitlines() if ODD in ln]
    assert len(lines) == 1, lines
    assert lines[0].startswith('WARNING') and odd['message'] in lines[0]


def test_inventory(lab):
    inv = lab.inventory()['vcenters'][0]
    assert ODD in [d['name'] for d in inv['datastores']]
    text = run_ok('inventory', '-c', lab.conf).stdout
    assert ODD in text


def test_inventory_table_columns_line_up_with_multibyte_names(lab):
    """The text inventory pads names by the columns a terminal shows, not by bytes: the odd
    name's Ñ and ú take two bytes each but one column, so its TYPE starts where every other
    row's does (a byte-padded row started it two columns early)."""
    inv = lab.inventory()['vcenters'][0]
    types = {d['name']: d['type'] for d in inv['datastores']}
    text = run_ok('inventory', '-c', lab.conf).stdout
    rows = {}
    for row in text.splitlines():
        for name in types:
            if row.startswith('    ' + name + ' ') and len(name) <= 32:
                rows[name] = row
    assert ODD in rows and len(rows) > 1, rows
    for name, row in rows.items():
        assert row[4 + 32:4 + 33] == ' ' and row[4 + 33:].startswith(types[name]), (name, row)


def test_api_filter_and_fingerprint(lab, odd, workspace):
    est = lab.copy(workspace)
    with serving(workspace, [est.vc]) as srv:
        q = urllib.parse.urlencode({'object': 'Ñandú', 'check': CHECK})
        page = srv.get('/api/v1/findings?' + q).json()
        assert [x['object']['name'] for x in page['findings']] == [ODD]
        one = srv.get('/api/v1/findings/' + odd['fingerprint']).json()
        assert one['object']['name'] == ODD


def test_waiver_names_it(lab, workspace):
    est = lab.copy(workspace)
    conf = est.config('\n[waiver]\ncheck = %s\nobject = %s\nreason = quarterly close, '
                      'CHG-42 & <done>\nexpires = 2099-12-31\n' % (CHECK, ODD))
    x = of(est.check('--offline', conf=conf), CHECK)[ODD]
    assert x['status'] == 'waived'
    assert x['waiver']['reason'] == 'quarterly close, CHG-42 & <done>'
