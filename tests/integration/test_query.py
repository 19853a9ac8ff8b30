"""`vslint query` and `vslint export` over the public views (docs/schema.md), on the violations
estate polled by `vslint check`: the views have exactly the columns docs/schema.md lists (read
from the document and from the CSV headers vslint writes, so neither can drift from the other);
CSV is RFC 4180 as Python's csv module reads it, with commas, quotes, line breaks and UTF-8 in
values; JSON, JSON lines and the table agree with it; --vcenter restricts every view; a query
that writes, attaches, reads a stored table or holds two statements is refused with its reason
and changes nothing; export writes every view, each as many rows as the inventory holds."""
import csv
import io
import json
import os
import re
import sqlite3
import subprocess

import pytest

from simlib import run_ok, vslint

SCHEMA_MD = os.path.join(os.environ.get('SOURCE_ROOT', '.'), 'docs', 'schema.md')
ODD = 'ds "Q3" & <Ops> \'Ñandú\''


def documented_views():
    """{view: [columns]} from docs/schema.md: each '## vsl_NAME' heading and the first cell of
    each row of the table under it."""
    views, current = {}, None
    with open(SCHEMA_MD, encoding='utf-8') as f:
        for line in f:
            m = re.match(r'## (vsl_\w+)\s*$', line)
            if m:
                current = views.setdefault(m.group(1), [])
                continue
            if line.startswith('## '):
                current = None
            m = re.match(r'\| (\w+) \| (text|integer|real) \|', line)
            if current is not None and m:
                current.append(m.group(1))
    return views


def query(est, sql, fmt='csv', *extra):
    return run_ok('query', '-c', est.conf, '--format', fmt, *extra, sql).stdout


def rows(est, sql, *extra):
    return list(csv.DictReader(io.StringIO(query(est, sql, 'csv', *extra), newline='')))


@pytest.fixture(scope='module')
def exported(lab, module_workspace):
    out = os.path.join(module_workspace.dir, 'export')
    res = run_ok('export', '-c', lab.conf, '--output', out)
    return out, res.stdout


def read_csv(path):
    with open(path, encoding='utf-8', newline='') as f:
        return list(csv.reader(f))


def test_docs_list_every_view_with_columns():
    views = documented_views()
    assert 'vsl_vms' in views and len(views) >= 14
    assert views['vsl_vms'][:9] == ['vcenter', 'moref', 'name', 'power_state', 'template',
                                    'host_name', 'cluster_name', 'hardware_version', 'guest_id']
    assert all(views.values()), [v for v, c in views.items() if not c]


def test_views_have_exactly_the_documented_columns(exported):
    out, _ = exported
    files = sorted(f[:-4] for f in os.listdir(out) if f.endswith('.csv'))
    docs = documented_views()
    assert files == sorted(docs)
    for view, columns in docs.items():
        assert read_csv(os.path.join(out, view + '.csv'))[0] == columns, view


def test_issue_columns_of_the_main_views():
    """The columns issue 21 names, in its order, lead each of the four main views."""
    want = {
        'vsl_vm_disks': ['vcenter', 'vm_moref', 'vm_name', 'label', 'datastore_moref',
                         'datastore_name', 'capacity_bytes', 'format', 'controller_type',
                         'controller_key', 'sharing'],
        'vsl_datastores': ['vcenter', 'moref', 'name', 'type', 'capacity_bytes', 'free_bytes',
                           'uncommitted_bytes', 'accessible', 'local', 'vmfs_version',
                           'storage_pod_name', 'vm_count'],
        'vsl_hosts': ['vcenter', 'moref', 'name', 'cluster_name', 'connection_state', 'version'],
    }
    docs = documented_views()
    for view, columns in want.items():
        assert docs[view][:len(columns)] == columns, view


def test_export_has_every_row(lab, exported):
    out, stdout = exported
    inv = lab.inventory()
    vcs = inv['vcenters'] if 'vcenters' in inv else inv
    con = sqlite3.connect('file:%s?mode=ro' % lab.ws.db, uri=True)
    try:
        for view, table in [('vsl_vms', 'vms'), ('vsl_datastores', 'datastores'),
                            ('vsl_hosts', 'hosts'), ('vsl_vm_disks', 'vdisks'),
                            ('vsl_luns', 'luns'), ('vsl_lun_paths', 'lun_paths'),
                            ('vsl_findings', 'findings'), ('vsl_polls', 'polls')]:
            want = con.execute('SELECT count(*) FROM %s' % table).fetchone()[0]
            assert want > 0, table
            assert len(read_csv(os.path.join(out, view + '.csv'))) - 1 == want, view
            assert re.search(r'%s\.csv +%d rows' % (view, want), stdout), stdout
    finally:
        con.close()
    assert vcs
    assert not [f for f in os.listdir(out) if f.endswith('.tmp')]


def test_csv_round_trips_awkward_values(lab):
    got = rows(lab, "SELECT 'a,b' AS comma, 'say \"hi\"' AS quote, 'one' || char(10) || 'two' "
                    "AS lines, 'Grüße ✓' AS utf8, ' padded ' AS blanks, NULL AS none_, "
                    "42 AS n")
    assert got == [{'comma': 'a,b', 'quote': 'say "hi"', 'lines': 'one\ntwo',
                    'utf8': 'Grüße ✓', 'blanks': ' padded ', 'none_': '', 'n': '42'}]


def test_csv_of_stored_names(lab):
    """The odd datastore name (quotes, &, <>, non-ASCII) comes back from the view unchanged."""
    got = rows(lab, 'SELECT name, capacity_bytes, free_bytes FROM vsl_datastores ORDER BY name')
    names = [r['name'] for r in got]
    assert ODD in names
    assert all(int(r['capacity_bytes']) > 0 for r in got)


def test_json_jsonl_and_table_agree(lab):
    sql = 'SELECT name, vm_count, accessible FROM vsl_datastores ORDER BY name'
    as_json = json.loads(query(lab, sql, 'json'))
    as_jsonl = [json.loads(l) for l in query(lab, sql, 'jsonl').splitlines()]
    assert as_json == as_jsonl
    assert [r['name'] for r in as_json] == [r['name'] for r in rows(lab, sql)]
    assert all(isinstance(r['vm_count'], int) for r in as_json)
    table = query(lab, sql, 'table').splitlines()
    assert re.match(r'name +vm_count +accessible$', table[0]), table[0]
    assert set(table[1]) <= {'-', ' '}
    assert len(table) == 2 + len(as_json)
    # Aligned: every row's second column starts where the header's does.
    col = table[0].index('vm_count')
    assert all(line[col - 2:col] == '  ' for line in table[2:] if len(line) > col), table


def test_empty_result_still_has_the_header(lab):
    """The header alone, ended CRLF as RFC 4180 writes lines (read as bytes: text mode would
    turn CRLF into LF before the test sees it)."""
    res = subprocess.run([os.environ['VSLINT'], 'query', '-c', lab.conf, '--format', 'csv',
                          "SELECT name, moref FROM vsl_vms WHERE name = 'no such'"],
                         capture_output=True, timeout=60)
    assert res.returncode == 0 and res.stdout == b'name,moref\r\n'
    assert json.loads(query(lab, "SELECT name FROM vsl_vms WHERE 0", 'json')) == []


def test_vcenter_restricts_every_view(lab):
    all_vms = rows(lab, 'SELECT DISTINCT vcenter FROM vsl_vms')
    assert [r['vcenter'] for r in all_vms] == ['lab']
    assert rows(lab, 'SELECT count(*) AS n FROM vsl_vms', '--vcenter', 'lab')[0]['n'] != '0'
    res = vslint('query', '-c', lab.conf, '--vcenter', 'nope', 'SELECT 1')
    assert res.returncode == 2
    assert 'nope' in res.stderr


def test_cluster_and_host_names_are_joined(lab):
    got = rows(lab, 'SELECT name, host_name, cluster_name FROM vsl_vms WHERE host_name IS NOT '
                    'NULL')
    assert got and all(r['host_name'] for r in got)
    assert any(r['cluster_name'] for r in got)
    fmt = {r['format'] for r in rows(lab, 'SELECT DISTINCT format FROM vsl_vm_disks')}
    assert fmt and fmt <= {'thin', 'lazy', 'eager', 'rdm', 'other'}
    assert 'eager' in fmt or 'lazy' in fmt


@pytest.mark.parametrize('sql,says', [
    ("DELETE FROM findings", "DELETE is not allowed"),
    ("SELECT * FROM vcenters", "reading vcenters is not allowed"),
    ("SELECT 1; DELETE FROM vsl_vms", "second statement"),
    ("ATTACH DATABASE '/tmp/x.db' AS x", "ATTACH is not allowed"),
    ("PRAGMA journal_mode = DELETE", "PRAGMA is not allowed"),
    ("SELECT nosuch FROM vsl_vms", "no such column: nosuch"),
])
def test_refused_queries_say_why_and_change_nothing(lab, sql, says):
    before = os.stat(lab.ws.db).st_mtime_ns
    res = vslint('query', '-c', lab.conf, sql)
    assert res.returncode == 2
    assert says in res.stderr, res.stderr
    assert res.stdout == ''
    assert os.stat(lab.ws.db).st_mtime_ns == before


def test_query_needs_one_statement_argument(lab):
    res = vslint('query', '-c', lab.conf)
    assert res.returncode == 2 and 'one SQL statement' in res.stderr


def test_vsl_vms_guest_id_is_the_simulators(lab):
    """vsl_vms.guest_id is each VM's config.guestId as the simulator was built with it (its
    truth file), and a rule's WHERE over it picks the VMs of one guest OS."""
    want = {v['moref']: v['guest_id'] for v in lab.sim.truth()['vms']}
    got = {r['moref']: r['guest_id'] for r in rows(lab, 'SELECT moref, guest_id FROM vsl_vms')}
    assert got == want
    assert {'other3xLinux64Guest', 'rhel8_64Guest', 'windows2019srv_64Guest'} <= set(got.values())
    windows = rows(lab, "SELECT name FROM vsl_vms WHERE guest_id LIKE 'windows%' ORDER BY name")
    assert [r['name'] for r in windows] == ['vm-mscs-eager', 'vm-mscs-thin']
