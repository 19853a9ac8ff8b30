"""The API keeps to docs/openapi.yaml: drive a running `vslint serve` through every operation
(successes, pages, 304s and each documented error), record every answer, and have independent
npm tools (@seriousme/openapi-schema-validator for the document, openapi-backend for the
answers) check them. A deliberately wrong answer must be caught, so this test can fail."""
import json
import os
import subprocess

import pytest

from apilib import TOKEN, WAIVER, serving
from simlib import UnitySim, vcenter

ROOT = os.environ.get('SOURCE_ROOT', '.')
TOOLS = os.path.join(ROOT, 'tests', 'tools')
SPEC = os.path.join(ROOT, 'docs', 'openapi.yaml')


def validate(path):
    return subprocess.run(['node', os.path.join(TOOLS, 'validate-openapi.js'), SPEC, path],
                          capture_output=True, text=True, timeout=120)


def exercise(srv):
    g = srv.get
    g('/healthz')
    g('/readyz')
    g('/metrics')
    g('/api/v1/checks')
    g('/api/v1/summary')
    g('/api/v1/summary?vcenter=lab')
    g('/api/v1/summary?vcenter=unity1')
    g('/api/v1/summary?bogus=1')
    g('/api/v1/history')
    g('/api/v1/history?days=1&vcenter=lab')
    g('/api/v1/history?days=0')
    first = g('/api/v1/findings?limit=5').json()
    url = first.get('next')
    while url:
        url = g(url).json().get('next')
    for q in ('severity=critical', 'severity=info&check=snapshots', 'status=waived',
              'status=resolved', 'status=new&limit=1000', 'object=ds', 'vcenter=nope',
              'since=2026-01-01', 'since=2026-01-01T07:30:00Z&sort=-first_seen&limit=3',
              'sort=object&limit=3', 'status=resolved&since=2026-01-01T00:00Z'):
        g('/api/v1/findings?' + q)
    for q in ('severity=urgent', 'limit=-1', 'cursor=garbage', 'check=nope', 'x=1',
              'since=yesterday', 'sort=newest'):
        g('/api/v1/findings?' + q)
    a = g('/api/v1/findings')
    g('/api/v1/findings', headers={'If-None-Match': a.headers.get('etag', '')})
    fp = first['findings'][0]['fingerprint']
    a = g('/api/v1/findings/' + fp)
    g('/api/v1/findings/' + fp, headers={'If-None-Match': a.headers.get('etag', '')})
    g('/api/v1/findings/0000000000000000')
    for kind in ('datastores', 'hosts', 'vms', 'pools'):
        a = g('/api/v1/inventory/%s?limit=3' % kind)
        g(a.json()['next'])
        g('/api/v1/inventory/%s?limit=1000&vcenter=%s' % (kind, 'unity1' if kind == 'pools' else 'lab'))
        g('/api/v1/inventory/%s?cursor=zz' % kind)
        g('/api/v1/inventory/%s' % kind, headers={'If-None-Match': a.headers.get('etag', '')})
    g('/api/v1/inventory/clusters')
    a = g('/api/v1/inventory/datastores/history?vcenter=lab&datastore=ds-crowded')
    g('/api/v1/inventory/datastores/history?vcenter=lab&datastore=ds-crowded',
      headers={'If-None-Match': a.headers.get('etag', '')})
    g('/api/v1/inventory/datastores/history?vcenter=lab&moref=' + a.json()['moref'])
    g('/api/v1/inventory/datastores/history?vcenter=lab&datastore=pod-free-low')
    g('/api/v1/inventory/datastores/history?vcenter=lab&datastore=no-such')
    g('/api/v1/inventory/datastores/history?vcenter=lab')
    g('/api/v1/plan')
    g('/api/v1/plan?format=powercli&check=multipath-policy&vcenter=lab')
    g('/api/v1/plan?format=bash')
    g('/api/v1/plan?host=esx')
    srv.post('/api/v1/polls')
    srv.post('/api/v1/polls', token='not-the-token-not-the-token')
    srv.post('/api/v1/polls?vcenter=nope', token=TOKEN)
    srv.post('/api/v1/polls', token=TOKEN, data=b'{' * 20000)
    srv.post('/api/v1/polls', token=TOKEN)
    srv.post('/api/v1/polls?vcenter=lab', token=TOKEN)
    srv.request('DELETE', '/api/v1/findings')


@pytest.fixture(scope='module')
def recorded(violations_sim, module_workspace):
    """Every answer of a server driven through every operation, and its exit status."""
    ws = module_workspace
    record = []
    # With an array, so that pools and the datastores' pools are in the answers checked.
    with UnitySim() as unity:
        array = ('[array unity1]\ntype = unity\nurl = %s\nuser = vslint\npassword_file = %s\n'
                 % (unity.url, ws.password_file()))
        with serving(ws, [vcenter(ws, violations_sim.url)], WAIVER + array,
                     record=record) as srv:
            srv.poll_and_wait('lab')  # the array's first poll is in: the pools are joined
            exercise(srv)
            srv.exit_status = srv.stop()
    return srv, record


def write_answers(path, answers):
    with open(path, 'w') as fh:
        for r in answers:
            fh.write(json.dumps(r) + '\n')
    return path


def test_serve_exit_status(recorded):
    assert recorded[0].exit_status == 0


def test_statuses_exercised(recorded):
    """Every status the document describes for these routes must have been seen; a 503 from
    /readyz may be seen too when the first poll is slow (e.g. under AddressSanitizer)."""
    statuses = sorted({r['status'] for r in recorded[1]})
    wanted = [200, 202, 304, 400, 401, 404, 405, 413]
    assert set(wanted) <= set(statuses) and set(statuses) <= set(wanted) | {503}, statuses


def test_every_answer_matches_openapi(recorded, tmp_path):
    p = validate(write_answers(tmp_path / 'answers.jsonl', recorded[1]))
    assert p.returncode == 0, p.stdout[-4000:] + p.stderr[-2000:]
    assert ('%d answers checked' % len(recorded[1])) in p.stdout, \
        'the validator did not count the answers: ' + p.stdout[-200:]


# The validator must catch drift: an undocumented field, a wrong type, an undocumented status.
DRIFT = {
    'extra field': lambda b: dict(b, surprise=1),
    'wrong type': lambda b: dict(b, total='many'),
}


@pytest.mark.parametrize('name', DRIFT)
def test_validator_rejects_drift(recorded, tmp_path, name):
    bad = [dict(r) for r in recorded[1] if r['path'].startswith('/api/v1/findings?limit=5')]
    bad[0]['body'] = json.dumps(DRIFT[name](json.loads(bad[0]['body'])))
    p = validate(write_answers(tmp_path / 'answers.jsonl', bad[:1]))
    assert p.returncode == 1, p.stdout[-300:]


def test_validator_rejects_undocumented_status(recorded, tmp_path):
    bad = dict(recorded[1][0], status=418)
    assert validate(write_answers(tmp_path / 'answers.jsonl', [bad])).returncode == 1
