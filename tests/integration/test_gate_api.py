"""POST /api/v1/gate and GET /api/v1/placement of a running `vslint serve` on the `gate` scenario,
and `vslint gate --server` asking it: the same answers as the CLI, JSON errors (never an
"allowed") for unknown names and malformed bodies, placement ranked by the headroom
docs/openapi.yaml defines (recomputed here from the planted facts), the stale-snapshot rule, the
token, and every answer checked against docs/openapi.yaml by the independent validator."""
import json
import os
import re
import sqlite3
import subprocess
import textwrap

import pytest

from apilib import TOKEN, serving, write_token
from simlib import VSLINT, vcenter, vslint

ROOT = os.environ.get('SOURCE_ROOT', '.')
GIB = 2 ** 30
RECORD = []


@pytest.fixture(scope='module')
def srv(gate_sim, module_workspace):
    ws = module_workspace
    with serving(ws, [vcenter(ws, gate_sim.url, 'lab', interval=3600)], record=RECORD) as s:
        yield s


def post(s, body, **kw):
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    return s.post('/api/v1/gate', data=data, headers={'Content-Type': 'application/json'}, **kw)


def reasons(ans):
    return [(r['check'] or r['code'], r['object_type'], r['object']) for r in ans['reasons']]


GATE = {
    'free space stays at 30 %': ({'datastore': 'ds-gate-free', 'disks_gb': [12]}, []),
    'free space crosses 30 %': ({'datastore': 'ds-gate-free', 'disks_gb': [18]},
                                [('datastore-free-space', 'datastore', 'ds-gate-free')]),
    'VM count crosses 25': ({'datastore': 'ds-gate-vms', 'disks_gb': [1], 'vms': 2,
                             'disk_format': 'thin'},
                            [('vms-per-datastore', 'datastore', 'ds-gate-vms')]),
    'datastore cluster crosses 30 %': ({'datastore_cluster': 'pod-gate', 'disks_gb': [20, 4]},
                                       [('datastore-free-space', 'storage_pod', 'pod-gate')]),
    'overcommit crosses 150 %': ({'datastore': 'ds-gate-thin', 'disks_gb': [12],
                                  'disk_format': 'thin'},
                                 [('thin-overcommit', 'datastore', 'ds-gate-thin')]),
    'overcommit stays under': ({'datastore': 'ds-gate-thin', 'disks_gb': [3],
                                'disk_format': 'thin'}, []),
    # FT on ESXi 6.5+ supports lazy disks: vdisk-format's info denies only at fail_on info.
    'FT on lazy disks': ({'datastore': 'ds-gate-roomy', 'disks_gb': [10], 'ft': True}, []),
    'FT on lazy disks, failing on info': ({'datastore': 'ds-gate-roomy', 'disks_gb': [10],
                                           'ft': True, 'fail_on': 'info'},
                                          [('vdisk-format', 'vm', 'proposed VM')]),
    'a shared bus on lazy disks': ({'datastore': 'ds-gate-roomy', 'disks_gb': [10],
                                    'shared_bus': True},
                                   [('vdisk-format', 'vm', 'proposed VM')]),
    'fail_on critical': ({'datastore': 'ds-gate-free', 'disks_gb': [18], 'fail_on': 'critical'},
                         []),
}


@pytest.mark.parametrize('name', GATE)
def test_gate(srv, name):
    body, want = GATE[name]
    a = post(srv, body)
    assert a.status == 200, a.body
    ans = a.json()
    assert ans['allowed'] is (want == [])
    assert reasons(ans) == want
    assert ans['vcenter'] == 'lab' and ans['snapshot_age_s'] >= 0 and ans['max_age_s'] == 7200


def test_gate_dead_path(srv):
    ans = post(srv, {'datastore': 'ds-gate-dead', 'disks_gb': [1]}).json()
    assert not ans['allowed']
    assert [(r['check'], r['object_type'], r['host']) for r in ans['reasons']] == [
        ('multipath-redundancy', 'lun', 'esx-gate-01')]


def test_gate_is_a_read_without_token(srv):
    """auth = writes: the gate changes nothing, so no token is needed."""
    assert post(srv, {'datastore': 'ds-gate-free', 'disks_gb': [1]}).status == 200


ERRORS = {
    'unknown datastore': ({'datastore': 'ds-nope', 'disks_gb': [1]}, 404, 'not_found',
                          'no datastore named ds-nope'),
    'unknown datastore cluster': ({'datastore_cluster': 'pod-nope', 'disks_gb': [1]}, 404,
                                  'not_found', 'no datastore cluster named pod-nope'),
    'unknown vcenter': ({'datastore': 'ds-gate-free', 'disks_gb': [1], 'vcenter': 'nope'}, 404,
                        'not_found', 'no vCenter nope'),
    'not JSON': (b'{"datastore": ', 400, 'bad_request', 'not JSON'),
    'empty body': (b'', 400, 'bad_request', 'JSON object'),
    'an array': ([1], 400, 'bad_request', 'JSON object'),
    'unknown field': ({'datastore': 'ds-gate-free', 'disks_gb': [1], 'disk_gb': [1]}, 400,
                      'bad_request', 'disk_gb: unknown field'),
    'two targets': ({'datastore': 'a', 'datastore_cluster': 'b', 'disks_gb': [1]}, 400,
                    'bad_request', 'exactly one'),
    'no disks': ({'datastore': 'ds-gate-free'}, 400, 'bad_request', 'disks_gb: required'),
    'disk of 0': ({'datastore': 'ds-gate-free', 'disks_gb': [0]}, 400, 'bad_request',
                  'above 0'),
    'vms as text': ({'datastore': 'ds-gate-free', 'disks_gb': [1], 'vms': '2'}, 400,
                    'bad_request', 'vms: must be a whole number'),
    'bad format': ({'datastore': 'ds-gate-free', 'disks_gb': [1], 'disk_format': 'fat'}, 400,
                   'bad_request', 'disk_format'),
    'ft and shared bus': ({'datastore': 'ds-gate-free', 'disks_gb': [1], 'ft': True,
                           'shared_bus': True}, 400, 'bad_request', 'not both'),
}


@pytest.mark.parametrize('name', ERRORS)
def test_gate_errors(srv, name):
    body, status, code, words = ERRORS[name]
    a = post(srv, body)
    assert a.status == status, a.body
    ans = a.json()
    assert 'allowed' not in ans
    assert ans['error']['code'] == code and words in ans['error']['message']


def test_gate_takes_only_post(srv):
    a = srv.get('/api/v1/gate')
    assert a.status == 405 and a.headers['allow'] == 'POST'


# ---- placement ----------------------------------------------------------------------------------

def headroom(free_pct, vms=1, provisioned=None, pod_free=None):
    """docs/openapi.yaml's headroom under the default thresholds (30 % free, 25 VMs, 150 %)."""
    provisioned = 100 - free_pct if provisioned is None else provisioned
    terms = [100 * (free_pct - 30) / 70, 100 * (25 - vms) / 25, 100 * (150 - provisioned) / 150]
    if pod_free is not None:
        terms.append(100 * (pod_free - 30) / 70)
    return min(terms)


# One VM with one 6 GiB lazy disk (1 % of 600 GiB) on each datastore of cluster-gate.
EXPECTED = {
    'ds-gate-roomy': headroom(69),
    'ds-gate-free': headroom(31),
    'ds-gate-vms': headroom(59, vms=25),
    'ds-gate-thin': headroom(49, provisioned=51 + 99),
    'ds-gate-pod-a': headroom(39, pod_free=(372 - 6) / 12),
}
FREE_AFTER = {'ds-gate-roomy': 69, 'ds-gate-free': 31, 'ds-gate-vms': 59, 'ds-gate-thin': 49,
              'ds-gate-pod-a': 39}


def placement(s, query):
    a = s.get('/api/v1/placement?' + query)
    assert a.status == 200, a.body
    return a.json()


def test_placement_ranks_by_headroom(srv):
    ans = placement(srv, 'disks_gb=6&vms=1&disk_format=lazy&cluster=cluster-gate')
    want = sorted(EXPECTED, key=lambda d: (-round(EXPECTED[d], 2), -FREE_AFTER[d]))
    assert [c['datastore'] for c in ans['candidates']] == want
    for c in ans['candidates']:
        assert c['headroom'] == pytest.approx(EXPECTED[c['datastore']], abs=0.01), c['datastore']
    assert ans['total_candidates'] == 5


def test_placement_says_why_the_others_are_refused(srv):
    ans = placement(srv, 'disks_gb=6&cluster=cluster-gate')
    got = {r['datastore']: [x['check'] or x['code'] for x in r['reasons']]
           for r in ans['rejected']}
    # ds-gate-other is mounted on no host of cluster-gate: not a place for it at all.
    assert got == {'ds-gate-dead': ['multipath-redundancy'],
                   'ds-gate-partial': ['not_on_every_host'],
                   'ds-gate-pod-b': ['datastore-free-space']}


def test_placement_without_cluster_and_limit(srv):
    ans = placement(srv, 'disks_gb=6&limit=2')
    # Without a cluster, a datastore mounted on one host is a place like any other.
    assert [c['datastore'] for c in ans['candidates']] == ['ds-gate-other', 'ds-gate-partial']
    assert ans['total_candidates'] == 7


def test_placement_in_a_datastore_cluster(srv):
    ans = placement(srv, 'disks_gb=6&datastore_cluster=pod-gate')
    assert [c['datastore'] for c in ans['candidates']] == ['ds-gate-pod-a']
    assert [r['datastore'] for r in ans['rejected']] == ['ds-gate-pod-b']


def test_placement_thin_proposal_ranked_by_overcommit(srv):
    """600 GiB thin: ds-gate-thin is rejected for overcommit, the others keep their free space."""
    ans = placement(srv, 'disks_gb=600&disk_format=thin&cluster=cluster-gate')
    rejected = {r['datastore']: [x['check'] for x in r['reasons']] for r in ans['rejected']}
    assert rejected['ds-gate-thin'] == ['thin-overcommit']
    roomy = [c for c in ans['candidates'] if c['datastore'] == 'ds-gate-roomy'][0]
    assert roomy['after']['free_bytes'] == 600 * GIB * 70 // 100
    assert roomy['headroom'] == pytest.approx(100 * (150 - 130) / 150, abs=0.01)
    assert roomy['limited_by'] == 'thin-overcommit:max_overcommit_pct'


@pytest.mark.parametrize('query,status,words', [
    ('vms=1', 400, 'parameter disks_gb: required'),
    ('disks_gb=abc', 400, 'parameter disks_gb'),
    ('disks_gb=1&disk_format=fat', 400, 'parameter disk_format'),
    ('disks_gb=1&vms=0', 400, 'parameter vms'),
    ('disks_gb=1&limit=0', 400, 'parameter limit'),
    ('disks_gb=1&rejected_limit=-1', 400, "parameter rejected_limit: '-1' is not a whole number"),
    ('disks_gb=1&rejected_limit=some', 400, 'from 0 to 1000000, or all'),
    # Digits or all, nothing strtol would also take, and empty is not the default (issue 23).
    ('disks_gb=1&rejected_limit=%2B5', 400, "parameter rejected_limit: '+5' is not a whole"),
    ('disks_gb=1&rejected_limit=%205', 400, "parameter rejected_limit: ' 5' is not a whole"),
    ('disks_gb=1&rejected_limit=-0', 400, "parameter rejected_limit: '-0' is not a whole"),
    ('disks_gb=1&rejected_limit=', 400, "parameter rejected_limit: '' is not a whole number"),
    ('disks_gb=1&rejected_limit=5x', 400, "parameter rejected_limit: '5x' is not a whole"),
    ('disks_gb=1&vms=%2B2', 400, "parameter vms: '+2' is not a whole number from 1 to"),
    ('disks_gb=1&vms=', 400, "parameter vms: '' is not a whole number from 1 to"),
    ('disks_gb=1&max_age_s=%2060', 400, "parameter max_age_s: ' 60' is not a whole number"),
    # Given twice: the first was taken and the second dropped without a word (issue 23).
    ('disks_gb=1&rejected_limit=all&rejected_limit=5', 400,
     'parameter rejected_limit: given more than once'),
    ('disks_gb=1&vms=2&vms=3', 400, 'parameter vms: given more than once'),
    ('disks_gb=1&disks_gb=2', 400, 'parameter disks_gb: given more than once'),
    ('disks_gb=1&bogus=1', 400, 'parameter bogus: unknown parameter'),
    ('disks_gb=1&cluster=nope', 404, 'no cluster named nope'),
    ('disks_gb=1&datastore_cluster=nope', 404, 'no datastore cluster named nope'),
    ('disks_gb=1&vcenter=nope', 404, 'no vCenter nope'),
])
def test_placement_errors(srv, query, status, words):
    a = srv.get('/api/v1/placement?' + query)
    assert a.status == status, a.body
    assert words in a.json()['error']['message']


# ---- vslint gate --server -----------------------------------------------------------------------

def cli(s, *args):
    return vslint('gate', '--server', s.base, *args)


def test_cli_server_allowed_and_denied(srv):
    assert cli(srv, '--datastore', 'ds-gate-free', '--disk-gb', '12').returncode == 0
    res = cli(srv, '--datastore', 'ds-gate-free', '--disk-gb', '18', '--format', 'json')
    assert res.returncode == 1
    assert reasons(json.loads(res.stdout)) == [('datastore-free-space', 'datastore',
                                                'ds-gate-free')]


def test_cli_server_errors_exit_2(srv):
    res = cli(srv, '--datastore', 'ds-nope', '--disk-gb', '1')
    assert res.returncode == 2 and res.stdout == ''
    assert res.stderr.strip() == ('vslint: error: %s/api/v1/gate answered 404: no datastore '
                                  'named ds-nope' % srv.base)
    res = vslint('gate', '--server', 'http://127.0.0.1:9', '--datastore', 'x', '--disk-gb', '1')
    assert res.returncode == 2 and 'cannot ask http://127.0.0.1:9/api/v1/gate' in res.stderr


def readme_terraform_program():
    """The shell program of the README's Terraform `external` data source, as Terraform runs
    it (a `<<-EOT` heredoc loses its common indentation)."""
    with open(os.path.join(ROOT, 'README.md')) as f:
        m = re.search(r'program = \["sh", "-c", <<-EOT\n(.*?)\n\s*EOT', f.read(), re.S)
    assert m, 'the README has no Terraform external data source'
    return textwrap.dedent(m.group(1))


@pytest.mark.parametrize('fmt,allowed', [('thin', 'true'), ('lazy', 'false')])
def test_readme_terraform_program(srv, tmp_path, fmt, allowed):
    """The README's program prints a flat object of strings and exits 0 either way, so the
    precondition (not the data source) stops a denied plan. pod-gate stands for pod-prod: two
    VMs with 100 + 20 GiB take all of ds-gate-pod-a's 240 GiB when thick."""
    prog = readme_terraform_program().replace('pod-prod', 'pod-gate')
    prog = prog.replace('--disk-format thin', '--disk-format ' + fmt)
    env = dict(os.environ, VSLINT_URL=srv.base, VSLINT_TOKEN_FILE=write_token_file(tmp_path),
               PATH=os.path.dirname(os.path.abspath(VSLINT)) + ':' + os.environ['PATH'])
    res = subprocess.run(['sh', '-c', prog], capture_output=True, text=True, env=env,
                         timeout=60)
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    assert all(isinstance(v, str) for v in out.values())
    assert out['allowed'] == allowed
    assert (out['reasons'] == '') == (allowed == 'true')


def write_token_file(tmp_path):
    path = tmp_path / 'token'
    path.write_text(TOKEN + '\n')
    path.chmod(0o600)
    return str(path)


# ---- the stale-snapshot rule, served ------------------------------------------------------------

@pytest.fixture(scope='module')
def stale_srv(gate_sim, new_workspace):
    """A daemon whose only snapshot is made three hours old after its first poll (interval
    3600: max_age 7200 s, and no poll comes before the tests end)."""
    ws = new_workspace()
    with serving(ws, [vcenter(ws, gate_sim.url, 'lab', interval=3600)], record=RECORD) as s:
        con = sqlite3.connect(ws.db)
        with con:
            con.execute('UPDATE vcenters SET last_success_ms = last_success_ms - 10800000')
        con.close()
        yield s


def test_served_stale_snapshot_denies(stale_srv):
    ans = post(stale_srv, {'datastore': 'ds-gate-roomy', 'disks_gb': [1]}).json()
    assert not ans['allowed'] and reasons(ans) == [('stale_snapshot', 'vcenter', 'lab')]
    assert ans['snapshot_age_s'] >= 10800


def test_served_stale_snapshot_allowed_when_asked(stale_srv):
    ans = post(stale_srv, {'datastore': 'ds-gate-roomy', 'disks_gb': [1],
                           'allow_stale': True}).json()
    assert ans['allowed']
    ans = post(stale_srv, {'datastore': 'ds-gate-roomy', 'disks_gb': [1],
                           'max_age_s': 86400}).json()
    assert ans['allowed']


def test_served_stale_cli(stale_srv):
    assert cli(stale_srv, '--datastore', 'ds-gate-roomy', '--disk-gb', '1').returncode == 1
    assert cli(stale_srv, '--datastore', 'ds-gate-roomy', '--disk-gb', '1',
               '--allow-stale').returncode == 0


def test_served_stale_placement_rejects_all(stale_srv):
    ans = placement(stale_srv, 'disks_gb=1')
    assert ans['candidates'] == [] and len(ans['rejected']) == 9
    assert all(r['reasons'][0]['code'] == 'stale_snapshot' for r in ans['rejected'])
    assert ans['total_rejected'] == 9
    # Each kind counts the datastores that have a reason of it, once each: stale ones all 9.
    kinds = {}
    for r in ans['rejected']:
        for k in {(x['code'], x['check']) for x in r['reasons']}:
            kinds[k] = kinds.get(k, 0) + 1
    assert ans['rejected_by_reason'][0] == {'code': 'stale_snapshot', 'check': None,
                                            'datastores': 9}
    assert {(k['code'], k['check']): k['datastores'] for k in ans['rejected_by_reason']} == kinds
    counts = [k['datastores'] for k in ans['rejected_by_reason']]
    assert counts == sorted(counts, reverse=True)


def test_served_placement_lists_rejected_up_to_the_limit(stale_srv):
    '''rejected_limit lists the first rejected datastores of the full list and counts the rest;
    0 lists none; all (and the default 100 here) every one.'''
    every = placement(stale_srv, 'disks_gb=1&rejected_limit=all')
    assert [r['datastore'] for r in every['rejected']] == \
        [r['datastore'] for r in placement(stale_srv, 'disks_gb=1')['rejected']]
    assert every['rejected_truncated'] is False
    for n in (0, 3, 9):
        ans = placement(stale_srv, 'disks_gb=1&rejected_limit=%d' % n)
        assert ans['rejected'] == every['rejected'][:n]
        assert ans['total_rejected'] == 9 and ans['total_candidates'] == 0
        # Cut short is said, not left to the client to work out (issue 23).
        assert ans['rejected_truncated'] is (n < 9)
        assert ans['rejected_by_reason'] == every['rejected_by_reason']


# ---- a token for everything, and one name on two vCenters ----------------------------------------

@pytest.fixture(scope='module')
def twin_srv(gate_sim, new_workspace):
    """auth = all, and the gate simulator configured twice, as vCenters lab and lab2."""
    ws = new_workspace()
    vcs = [vcenter(ws, gate_sim.url, n, interval=3600) for n in ('lab', 'lab2')]
    with serving(ws, vcs, auth_all=True, record=RECORD) as s:
        s.ws = ws
        yield s


def test_auth_all_needs_the_token(twin_srv):
    assert post(twin_srv, {'datastore': 'ds-gate-free', 'disks_gb': [1]}).status == 401
    res = cli(twin_srv, '--datastore', 'ds-gate-free', '--vcenter', 'lab', '--disk-gb', '1')
    assert res.returncode == 2 and 'answered 401' in res.stderr
    res = cli(twin_srv, '--datastore', 'ds-gate-free', '--vcenter', 'lab', '--disk-gb', '1',
              '--token-file', write_token(twin_srv.ws))
    assert res.returncode == 0, res.stderr


def test_a_name_on_two_vcenters_is_ambiguous(twin_srv):
    a = post(twin_srv, {'datastore': 'ds-gate-free', 'disks_gb': [1]}, token=TOKEN)
    assert a.status == 400 and 'allowed' not in a.json()
    assert a.json()['error']['code'] == 'ambiguous_name'
    assert 'lab, lab2' in a.json()['error']['message']
    a = post(twin_srv, {'datastore': 'ds-gate-free', 'disks_gb': [1], 'vcenter': 'lab2'},
             token=TOKEN)
    assert a.status == 200 and a.json()['vcenter'] == 'lab2'


def test_placement_over_two_vcenters(twin_srv):
    a = twin_srv.get('/api/v1/placement?disks_gb=6&cluster=cluster-gate', token=TOKEN)
    ans = a.json()
    assert ans['total_candidates'] == 10
    assert [(c['datastore'], c['vcenter']) for c in ans['candidates'][:2]] == [
        ('ds-gate-roomy', 'lab'), ('ds-gate-roomy', 'lab2')]


def test_no_snapshot_yet_is_503(new_workspace):
    """A vCenter that was never polled successfully: nothing to judge, and no "allowed"."""
    ws = new_workspace()
    down = vcenter(ws, 'http://127.0.0.1:9/sdk', 'down', timeout=2)
    with serving(ws, [down], record=RECORD) as s:
        for a in (post(s, {'datastore': 'ds-gate-free', 'disks_gb': [1]}),
                  s.get('/api/v1/placement?disks_gb=1')):
            assert a.status == 503 and 'allowed' not in a.json()
            assert a.json()['error']['code'] == 'no_snapshot'


# ---- the contract ---------------------------------------------------------------------------------

def test_every_answer_matches_openapi(tmp_path):
    """Runs last in this file: every answer above, checked against docs/openapi.yaml."""
    assert {200, 400, 401, 404, 405, 503} <= {r['status'] for r in RECORD}
    path = tmp_path / 'answers.jsonl'
    with open(path, 'w') as fh:
        for r in RECORD:
            fh.write(json.dumps(r) + '\n')
    p = subprocess.run(['node', os.path.join(ROOT, 'tests', 'tools', 'validate-openapi.js'),
                        os.path.join(ROOT, 'docs', 'openapi.yaml'), str(path)],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stdout[-4000:] + p.stderr[-2000:]
    assert '%d answers checked' % len(RECORD) in p.stdout
