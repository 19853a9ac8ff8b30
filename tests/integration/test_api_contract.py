#!/usr/bin/env python3
"""The API keeps to docs/openapi.yaml: drive a running `vslint serve` through every operation
(successes, pages, 304s and each documented error), record every answer, and have independent
npm tools (@seriousme/openapi-schema-validator for the document, openapi-backend for the
answers) check them. A deliberately wrong answer must be caught, so this test can fail."""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
from simlib import Sim, Workspace, Failures, USER  # noqa: E402
from apilib import Serve, TOKEN, free_port, server_section, write_token  # noqa: E402

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
    g('/api/v1/summary?bogus=1')
    first = g('/api/v1/findings?limit=5').json()
    url = first.get('next')
    while url:
        url = g(url).json().get('next')
    for q in ('severity=critical', 'severity=info&check=snapshots', 'status=waived',
              'status=resolved', 'status=new&limit=1000', 'object=ds', 'vcenter=nope'):
        g('/api/v1/findings?' + q)
    for q in ('severity=urgent', 'limit=-1', 'cursor=garbage', 'check=nope', 'x=1'):
        g('/api/v1/findings?' + q)
    a = g('/api/v1/findings')
    g('/api/v1/findings', headers={'If-None-Match': a.headers.get('etag', '')})
    fp = first['findings'][0]['fingerprint']
    a = g('/api/v1/findings/' + fp)
    g('/api/v1/findings/' + fp, headers={'If-None-Match': a.headers.get('etag', '')})
    g('/api/v1/findings/0000000000000000')
    for kind in ('datastores', 'hosts', 'vms'):
        a = g('/api/v1/inventory/%s?limit=3' % kind)
        g(a.json()['next'])
        g('/api/v1/inventory/%s?limit=1000&vcenter=lab' % kind)
        g('/api/v1/inventory/%s?cursor=zz' % kind)
        g('/api/v1/inventory/%s' % kind, headers={'If-None-Match': a.headers.get('etag', '')})
    g('/api/v1/inventory/clusters')
    srv.post('/api/v1/polls')
    srv.post('/api/v1/polls', token='not-the-token-not-the-token')
    srv.post('/api/v1/polls?vcenter=nope', token=TOKEN)
    srv.post('/api/v1/polls', token=TOKEN, data=b'{' * 20000)
    srv.post('/api/v1/polls', token=TOKEN)
    srv.post('/api/v1/polls?vcenter=lab', token=TOKEN)
    srv.request('DELETE', '/api/v1/findings')


def main():
    f = Failures('api contract')
    ws = Workspace()
    try:
        pw = ws.password_file()
        port = free_port()
        record = []
        with Sim('violations') as sim:
            waiver = ('\n[waiver]\ncheck = datastore-size\nobject = ds-size-small\n'
                      'reason = lab tier\nexpires = 2099-12-31\n')
            conf = ws.write_config([{'name': 'lab', 'url': sim.url, 'user': USER,
                                     'password_file': pw}],
                                   extra=server_section(port, write_token(ws)) + waiver)
            srv = Serve(conf, port, ws.dir, record=record)
            try:
                srv.wait_ready()
                exercise(srv)
            finally:
                f.eq('serve exit status', srv.stop(), 0)
        statuses = sorted({r['status'] for r in record})
        # Every status the document describes for these routes must have been seen; a 503 from
        # /readyz may be seen too when the first poll is slow (e.g. under AddressSanitizer).
        wanted = [200, 202, 304, 400, 401, 404, 405, 413]
        f.true('statuses exercised: %s, want at least %s' % (statuses, wanted),
               set(wanted) <= set(statuses) and set(statuses) <= set(wanted) | {503})
        answers = os.path.join(ws.dir, 'answers.jsonl')
        with open(answers, 'w') as fh:
            for r in record:
                fh.write(json.dumps(r) + '\n')
        p = validate(answers)
        f.eq('every answer matches docs/openapi.yaml:\n' + p.stdout[-4000:] + p.stderr[-2000:],
             p.returncode, 0)
        f.true('validator counted the answers: ' + p.stdout[-200:],
               ('%d answers checked' % len(record)) in p.stdout)

        # The validator must catch drift: an undocumented field, a wrong type, an undocumented
        # status.
        for name, mutate in (
                ('extra field', lambda b: dict(b, surprise=1)),
                ('wrong type', lambda b: dict(b, total='many'))):
            bad = [dict(r) for r in record if r['path'].startswith('/api/v1/findings?limit=5')]
            bad[0]['body'] = json.dumps(mutate(json.loads(bad[0]['body'])))
            with open(answers, 'w') as fh:
                fh.write(json.dumps(bad[0]) + '\n')
            p = validate(answers)
            f.eq('validator rejects an answer with a %s (%s)' % (name, p.stdout[-300:]),
                 p.returncode, 1)
        bad = dict(record[0], status=418)
        with open(answers, 'w') as fh:
            fh.write(json.dumps(bad) + '\n')
        f.eq('validator rejects an undocumented status', validate(answers).returncode, 1)
    finally:
        ws.cleanup()
    f.finish()


if __name__ == '__main__':
    main()
