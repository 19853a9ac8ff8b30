"""What a client can do to get less: `fields=` keeps only the members it names in each item of a
findings or inventory page, and `Accept-Encoding: gzip` gets answers of 1 KiB or more
compressed. Real HTTP to `vslint serve` on the lab estate."""
import gzip
import json
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from apilib import serving  # noqa: E402


@pytest.fixture(scope='module')
def srv(lab, new_workspace):
    ws = new_workspace()
    est = lab.copy(ws)
    with serving(ws, [dict(est.vc, interval=3600)]) as s:
        yield s


def test_fields_keep_only_what_is_named(srv):
    full = srv.get('/api/v1/findings?limit=20').json()
    less = srv.get('/api/v1/findings?limit=20&fields=fingerprint,severity').json()
    assert less['total'] == full['total']
    assert less['findings'] == [{'fingerprint': f['fingerprint'], 'severity': f['severity']}
                                for f in full['findings']]


def test_fields_follow_the_next_link(srv):
    a = srv.get('/api/v1/inventory/vms?limit=5&fields=name').json()
    assert 'fields=name' in a['next']
    b = srv.get(a['next']).json()
    assert b['vms'] and all(list(v) == ['name'] for v in b['vms']), b['vms']


def test_unknown_field_is_a_400(srv):
    a = srv.get('/api/v1/inventory/datastores?fields=name,capcity')
    assert a.status == 400
    assert a.json()['error']['message'] == "parameter fields: no field 'capcity'"


def test_empty_field_name_is_a_400(srv):
    assert srv.get('/api/v1/findings?fields=severity,,check').status == 400


def test_gzip_when_accepted(srv):
    plain = srv.get('/api/v1/findings?limit=200')
    import urllib.request
    req = urllib.request.Request(srv.base + '/api/v1/findings?limit=200',
                                 headers={'Accept-Encoding': 'gzip'})
    with urllib.request.urlopen(req, timeout=30) as r:
        headers = {k.lower(): v for k, v in r.headers.items()}
        raw = r.read()
    assert headers.get('content-encoding') == 'gzip', headers
    assert 'Accept-Encoding' in headers.get('vary', '')
    assert len(raw) < len(plain.body.encode()) / 3, (len(raw), len(plain.body))
    assert json.loads(gzip.decompress(raw)) == plain.json()
    assert headers['etag'] != plain.headers['etag'], 'one tag for two representations'


def test_no_gzip_unless_asked(srv):
    a = srv.get('/api/v1/findings?limit=200')
    assert 'content-encoding' not in a.headers
    b = srv.get('/api/v1/findings?limit=200', headers={'Accept-Encoding': 'gzip;q=0, br'})
    assert 'content-encoding' not in b.headers
    json.loads(b.body)


def test_small_answers_are_not_compressed(srv):
    a = srv.get('/healthz', headers={'Accept-Encoding': 'gzip'})
    assert 'content-encoding' not in a.headers and json.loads(a.body) == {'status': 'ok'}
