"""[array NAME] sections: vslint reads a Dell EMC Unity's pools and LUNs (the Unity responder,
tests/sim/unity/) beside the vCenter simulator's violations scenario, joins the LUNs to the
datastores by WWN and naa. name, and judges the pools (pool-free-space, pool-subscription)."""
import json
import os
import signal
import time
import sqlite3

import pytest

from apilib import serving
from simlib import PASSWORD, USER, UnitySim, run_ok, vcenter, vslint


def array_section(ws, url, name='unity1', **keys):
    lines = ['[array %s]' % name, 'type = unity', 'url = %s' % url, 'user = %s' % USER,
             'password_file = %s' % ws.password_file()]
    lines += ['%s = %s' % kv for kv in keys.items()]
    return '\n'.join(lines) + '\n'


def by_check(findings, check):
    return {f['object']['name']: f for f in findings if f['check'] == check}


@pytest.fixture(scope='module')
def unity():
    with UnitySim() as u:
        yield u


@pytest.fixture(scope='module')
def estate(violations_sim, unity, module_workspace):
    """The violations scenario as vCenter "lab" and the responder as array "unity1", polled once
    by `vslint check`."""
    ws = module_workspace
    conf = ws.write_config([vcenter(ws, violations_sim.url)],
                           extra=array_section(ws, unity.url))
    res = vslint('check', '-c', conf, '--format', 'json', '--fail-on', 'never')
    assert res.returncode == 0, res.stderr
    return dict(ws=ws, conf=conf, findings=json.loads(res.stdout)['findings'])


def test_pool_at_8_percent_behind_a_datastore_at_60_percent_is_critical(estate):
    pools = by_check(estate['findings'], 'pool-free-space')
    f = pools['unity1/pool-low']
    assert f['severity'] == 'critical'
    assert f['object']['type'] == 'array_pool'
    assert 'ds-pool-low' in f['message'] and '8.0 % free' in f['message']
    ev = f['evidence']
    assert ev['datastores'] == ['ds-pool-low']
    assert ev['alert_threshold_pct'] == 70
    assert round(ev['free_pct'], 1) == 8.0
    # vCenter sees 60 % free on that datastore: datastore-free-space alone says nothing.
    assert 'ds-pool-low' not in by_check(estate['findings'], 'datastore-free-space')


def test_compliant_twin_pool_is_silent(estate):
    names = {f['object']['name'] for f in estate['findings'] if f['check'].startswith('pool-')}
    assert 'unity1/pool-ok' not in names
    assert 'unity1/pool-thick' not in names  # oversubscribed on paper, but by thick LUNs


def test_each_threshold_and_the_subscription_ratio(estate):
    pools = by_check(estate['findings'], 'pool-free-space')
    assert pools['unity1/pool-warn']['severity'] == 'warning'
    assert pools['unity1/pool-warn']['evidence']['alert_threshold_pct'] == 60
    snap = pools['unity1/pool-snap']
    assert snap['severity'] == 'critical'
    assert snap['evidence']['level'] == 'snapshots_invalidated'
    assert 'invalidates snapshots and replication sessions' in snap['message']
    sub = by_check(estate['findings'], 'pool-subscription')
    assert set(sub) == {'unity1/pool-over'}
    assert sub['unity1/pool-over']['severity'] == 'warning'
    assert round(sub['unity1/pool-over']['evidence']['subscribed_pct']) == 200


def test_pool_on_no_datastore_is_not_joined(estate):
    names = {f['object']['name'] for f in estate['findings']}
    assert 'unity1/pool-unjoined' not in names  # 2 % free, but backs no datastore of lab


def test_array_rows_are_stored_and_the_session_closed(estate, unity):
    db = sqlite3.connect(estate['ws'].db)
    try:
        pools = db.execute("SELECT count(*) FROM array_pools WHERE vcenter = 'unity1'").fetchone()
        luns = db.execute("SELECT count(*) FROM array_luns WHERE vcenter = 'unity1'").fetchone()
        naa = db.execute("SELECT naa, thin FROM array_luns WHERE id = 'sv_1'").fetchone()
        kind = db.execute("SELECT kind FROM vcenters WHERE name = 'unity1'").fetchone()
        dump = '\n'.join(db.iterdump())
    finally:
        db.close()
    assert pools == (9,) and luns == (30,)  # 30 LUNs over pages of 10: paging followed
    assert naa == ('naa.600601600000000000000000000000d1', 1)
    assert kind == ('unity',)
    assert PASSWORD not in dump
    seen = unity.control()
    assert seen.get('csrf_rejected', 0) == 0 and seen.get('missing_rest_client_header', 0) == 0
    assert seen['logouts'] == seen['logins'] >= 1 and seen['sessions'] == 0


def test_datastore_free_space_names_the_pool(violations_sim, unity, workspace):
    # ds-pool-low holds 60 % free: with warn_free_pct above that it is judged, and its
    # evidence names the pool behind it and the pool's free space.
    conf = workspace.write_config([vcenter(workspace, violations_sim.url)],
                                  extra=array_section(workspace, unity.url)
                                  + '[check datastore-free-space]\nwarn_free_pct = 70\n')
    res = vslint('check', '-c', conf, '--format', 'json', '--fail-on', 'never')
    assert res.returncode == 0, res.stderr
    f = by_check(json.loads(res.stdout)['findings'], 'datastore-free-space')
    pools = f['ds-pool-low']['evidence']['pools']
    assert [(p['array'], p['name']) for p in pools] == [('unity1', 'pool-low')]
    assert round(pools[0]['free_pct'], 1) == 8.0
    assert 'pools' not in f['ds-lab-01']['evidence']  # on no configured array


def test_an_unreadable_optional_type_costs_only_itself(violations_sim, workspace):
    """The Ethernet ports answered with broken JSON: the poll succeeds, the
    pools and LUNs are fresh (pool-free-space judges them, with no array error), the log
    names the type left out, and the iSCSI paths' SPs, which need the ports, are not judged
    where they were judged before."""
    with UnitySim() as u:
        conf = workspace.write_config([vcenter(workspace, violations_sim.url)],
                                      extra=array_section(workspace, u.url))
        first = json.loads(run_ok('check', '-c', conf, '--format', 'json',
                                  '--fail-on', 'never').stdout)['findings']
        assert 'array_port' in {f['object']['type'] for f in first
                                if f['check'] == 'iscsi-jumbo-frames'}
        u.control(broken='ethernetPort')
        res = vslint('check', '-c', conf, '--format', 'json', '--fail-on', 'never')
    assert res.returncode == 0, res.stderr
    assert 'ethernetPort instances not read' in res.stderr, res.stderr
    findings = json.loads(res.stdout)['findings']
    f = by_check(findings, 'pool-free-space')['unity1/pool-low']
    assert f['severity'] == 'critical' and f['evidence']['array_error'] is None
    assert not [f for f in findings if f['check'] == 'iscsi-jumbo-frames'
                and f['object']['type'] == 'array_port' and f['status'] == 'open'
                and not f.get('unverified')]


def test_failing_array_is_one_line_keeps_its_snapshot_and_hides_no_vcenter_finding(
        violations_sim, workspace):
    with UnitySim() as u:
        conf = workspace.write_config([vcenter(workspace, violations_sim.url)],
                                      extra=array_section(workspace, u.url))
        first = json.loads(run_ok('check', '-c', conf, '--format', 'json',
                                  '--fail-on', 'never').stdout)['findings']
        assert 'unity1/pool-low' in by_check(first, 'pool-free-space')
        u.control(fault='malformed', at='0')
        res = vslint('check', '-c', conf, '--format', 'json', '--fail-on', 'never')
    assert res.returncode == 2  # the run failed: an array could not be polled
    lines = [l for l in res.stderr.splitlines() if 'unity1' in l]
    assert len(lines) == 1, res.stderr
    assert 'array unity1: poll failed' in lines[0] and 'not JSON' in lines[0]
    findings = json.loads(res.stdout)['findings']
    # The vCenter's own findings are all there, and the pool's, from the last snapshot.
    assert 'ds-free-crit' in by_check(findings, 'datastore-free-space')
    f = by_check(findings, 'pool-free-space')['unity1/pool-low']
    assert f['severity'] == 'critical'
    assert 'not JSON' in f['evidence']['array_error']
    # The array unreachable altogether: the same, one line.
    res = vslint('check', '-c', conf, '--format', 'json', '--fail-on', 'never')
    assert res.returncode == 2
    lines = [l for l in res.stderr.splitlines() if 'unity1' in l]
    assert len(lines) == 1 and 'cannot connect' in lines[0], res.stderr
    assert 'unity1/pool-low' in by_check(json.loads(res.stdout)['findings'], 'pool-free-space')


@pytest.mark.parametrize('fault, timeout, want, logs_out', [
    # Every read's connection closes without an answer (one drop alone is retried by libcurl
    # on a new connection, harmlessly: these reads are GETs).
    ('drop:0', 60, 'request failed', False),
    ('slow:1', 2, 'timed out', False),         # the answer never comes within timeout=
    ('http500:2', 60, 'HTTP 500: Internal error.', True),
    # 200 with no body: said so, not a parser's line and column of nothing.
    ('empty:2', 60, 'the answer is empty (HTTP 200, no JSON)', True),
])
def test_array_faults_are_one_clear_line(violations_sim, workspace, fault, timeout, want,
                                         logs_out):
    """... and a poll that failed while the array answered logs out (its session would stay
    open until the array's idle timeout, one more each retry); one whose array did not answer
    does not ask it again."""
    with UnitySim(['-fault', fault]) as u:
        conf = workspace.write_config([vcenter(workspace, violations_sim.url)],
                                      extra=array_section(workspace, u.url, timeout=timeout))
        res = vslint('collect', '-c', conf)
        seen = u.control()
    assert seen['logins'] == 1, seen
    assert seen.get('logouts', 0) == (1 if logs_out else 0), seen
    assert res.returncode == 2
    lines = [l for l in res.stderr.splitlines() if 'unity1' in l]
    assert len(lines) == 1 and 'array unity1: poll failed' in lines[0], res.stderr
    assert want in lines[0], lines[0]
    assert 'vcenter lab: stored' in res.stdout  # the vCenter was polled all the same


@pytest.mark.parametrize('paging', ['both', 'links', 'count', 'none'])
def test_every_page_is_read_whatever_the_array_says_of_the_next(violations_sim, workspace,
                                                                 paging):
    """Arrays differ in what a page says of the next: a "next" link, an entryCount, both or
    neither. The responder caps pages at 10 (vslint asks for 500): the 30 LUNs come in three
    full pages and every one is stored, poll after poll, with no poll read twice (before, a
    page without links ended the read after 10 LUNs, and with entryCount every poll was
    "changed while being read")."""
    with UnitySim(['-paging', paging]) as u:
        conf = workspace.write_config([vcenter(workspace, violations_sim.url)],
                                      extra=array_section(workspace, u.url))
        runs = [run_ok('collect', '-c', conf) for _ in range(2)]
        seen = u.control()
    for res in runs:
        assert 'array unity1: stored' in res.stdout and '9 array_pools, 30 array_luns' in \
            res.stdout, res.stdout + res.stderr
        assert 'polling again' not in res.stderr, res.stderr
    db = sqlite3.connect(workspace.db)
    try:
        luns = {r[0] for r in db.execute(
            "SELECT name FROM array_luns WHERE vcenter = 'unity1'")}
    finally:
        db.close()
    want = {'lun-ds-pool-%s' % p for p in ('low', 'ok', 'warn', 'snap', 'over', 'thick')}
    want |= {'lun-unjoined'} | {'lun-filler-%02d' % i for i in range(23)}
    assert luns == want
    # A poll reads the login's page, then the pools', the LUNs' (3 pages) and one page each of
    # the FC ports, Ethernet ports, iSCSI portals, NAS servers, file interfaces, file systems,
    # NFS shares and storage resources. With neither links nor count, an empty page says a
    # list ended, one more read for each of the 10 lists; with either, no page is read past
    # the end.
    per_poll = 1 + {'none': 22}.get(paging, 12)
    assert seen['pages'] == 2 * per_poll, seen


def test_lun_created_between_pages_is_read_again(violations_sim, workspace):
    """The entryCount of the first page no longer matches what the pages held (a LUN went
    between two pages): the poll is read once more, at once, and stores the new list, rather
    than a snapshot with a hole."""
    with UnitySim(['-paging', 'count', '-fault', 'droplun:3']) as u:
        conf = workspace.write_config([vcenter(workspace, violations_sim.url)],
                                      extra=array_section(workspace, u.url))
        res = run_ok('collect', '-c', conf)
    assert '29 lun instances read where the first page counted 30; they changed while ' \
        'being read; polling again' in res.stderr, res.stderr
    assert '9 array_pools, 29 array_luns' in res.stdout, res.stdout


def test_session_refused_mid_poll_logs_in_again(violations_sim, workspace):
    with UnitySim(['-fault', '401:2']) as u:
        conf = workspace.write_config([vcenter(workspace, violations_sim.url)],
                                      extra=array_section(workspace, u.url))
        out = run_ok('collect', '-c', conf).stdout
        seen = u.control()
    assert 'array unity1: stored' in out and '9 array_pools, 30 array_luns' in out
    assert seen['logins'] == 2 and seen['faults'] == 1


def test_wrong_password_is_a_login_error(violations_sim, workspace):
    with UnitySim() as u:
        ws = workspace
        sec = array_section(ws, u.url).replace(ws.password_file(),
                                               ws.password_file('wrong', name='bad'))
        conf = ws.write_config([vcenter(ws, violations_sim.url)], extra=sec)
        res = vslint('collect', '-c', conf)
    assert res.returncode == 2
    line = [l for l in res.stderr.splitlines() if 'unity1' in l]
    assert len(line) == 1 and 'HTTP 401' in line[0] and 'user name or password' in line[0]
    assert 'wrong' not in res.stderr


def test_pinned_thumbprint_over_https(violations_sim, workspace):
    import hashlib
    import ssl
    cert = os.path.join(workspace.dir, 'unity.pem')
    with UnitySim(['-tls', '-cert-out', cert]) as u:
        with open(cert) as f:
            der = ssl.PEM_cert_to_DER_cert(f.read())
        digest = hashlib.sha256(der).hexdigest().upper()
        tp = 'SHA256:' + ':'.join(digest[i:i + 2] for i in range(0, 64, 2))
        conf = workspace.write_config([vcenter(workspace, violations_sim.url)],
                                      extra=array_section(workspace, u.url, thumbprint=tp))
        assert 'array unity1: stored' in run_ok('collect', '-c', conf).stdout
        bad = workspace.write_config(
            [vcenter(workspace, violations_sim.url)], name='bad.conf',
            extra=array_section(workspace, u.url, thumbprint='SHA256:' + ':'.join(['AB'] * 32)))
        res = vslint('collect', '-c', bad)
    assert res.returncode == 2
    assert 'not the pinned thumbprint' in res.stderr and 'array certificate' in res.stderr


@pytest.mark.parametrize('section, want', [
    ('[array u]\nurl = https://u\nuser = a\npassword_env = X\n', "[array u] type: missing"),
    ('[array u]\ntype = powerstore\nurl = https://u\nuser = a\npassword_env = X\n',
     "'powerstore' is not an array type vslint reads (unity)"),
    ('[array u]\ntype = unity\nuser = a\npassword_env = X\n', "[array u] url: missing"),
    ('[array u]\ntype = unity\nurl = https://u\nuser = a\n', "[array u] password_file: missing"),
    ('[array u]\ntype = unity\nurl = https://u\nuser = a\npassword_env = X\nmax_objects = 5\n',
     "[array u] max_objects: unknown key"),
    ('[array lab]\ntype = unity\nurl = https://u\nuser = a\npassword_env = X\n',
     "[array lab]: vCenter 'lab' is already defined on line"),
    ('[array u]\ntype = unity\nurl = https://u\nuser = a\npassword_env = X\ninterval = 5\n',
     "[array u] interval: '5' is not a whole number from 10 to 86400"),
])
def test_config_check_errors(workspace, section, want):
    conf = workspace.write_config([vcenter(workspace, 'https://vc.example.com/sdk')],
                                  extra=section)
    res = vslint('config-check', '-c', conf)
    assert res.returncode == 2
    assert want in res.stderr, res.stderr


def test_insecure_array_is_warned_about(workspace):
    conf = workspace.write_config(
        [vcenter(workspace, 'https://vc.example.com/sdk')],
        extra=array_section(workspace, 'https://u.example.com', insecure='true'))
    res = run_ok('config-check', '-c', conf)
    assert "[array unity1] insecure: warning: the array's certificate" in res.stderr


def test_serve_polls_the_array_and_serves_pools(violations_sim, unity, workspace):
    with serving(workspace, [vcenter(workspace, violations_sim.url)],
                 extra=array_section(workspace, unity.url)) as srv:
        srv.poll_and_wait('lab')  # after the array's first poll too: both joined
        s = srv.summary()
        arrays = {a['name']: a for a in s['arrays']}
        assert arrays['unity1']['type'] == 'unity' and not arrays['unity1']['stale']
        assert 'unity1' not in {v['name'] for v in s['vcenters']}
        pools = srv.get('/api/v1/inventory/pools?limit=100').json()['pools']
        low = [p for p in pools if p['name'] == 'pool-low'][0]
        assert low['array'] == 'unity1'
        assert [d['name'] for d in low['datastores']] == ['ds-pool-low']
        assert low['thin_lun_count'] == 1
        dss = srv.get('/api/v1/inventory/datastores?limit=1000').json()['datastores']
        ds = [d for d in dss if d['name'] == 'ds-pool-low'][0]
        assert [(p['array'], p['name']) for p in ds['pools']] == [('unity1', 'pool-low')]
        assert [d for d in dss if d['name'] == 'ds-lab-01'][0]['pools'] == []
        # NFS and VVol datastores join their pools as the checks see them, both ways (the
        # join's SQL is longer than the 1 KiB an inventory field's expression once held).
        by_name = {p['name']: p for p in pools}
        assert [d['name'] for d in by_name['pool-nfs-low']['datastores']] == ['ds-nas-a1']
        assert [d['name'] for d in by_name['pool-vvol-low']['datastores']] == ['ds-vvol-low']
        assert [d['name'] for d in by_name['pool-ok']['datastores']] == [
            'ds-nas-a2', 'ds-nas-b1', 'ds-nas-b2', 'ds-nas-c1', 'ds-pool-ok', 'ds-vvol-ok']
        assert by_name['pool-unjoined']['datastores'] == []
        for name, pool in (('ds-nas-a1', 'pool-nfs-low'), ('ds-vvol-low', 'pool-vvol-low')):
            ds = [d for d in dss if d['name'] == name][0]
            assert [(p['array'], p['name']) for p in ds['pools']] == [('unity1', pool)]
        f = srv.get('/api/v1/findings?check=pool-free-space').json()['findings']
        assert 'unity1/pool-low' in {x['object']['name'] for x in f}
        # In /metrics the array is an "array", not a "vcenter" (the alert rules tell them apart).
        metrics = srv.get('/metrics').body
        assert 'vslint_poll_success{array="unity1"} 1' in metrics.splitlines(), metrics[:3000]
        assert 'vslint_poll_success{vcenter="lab"} 1' in metrics.splitlines()
        assert 'vcenter="unity1"' not in metrics
        # The array fails: stale, one error, backing off; its pools and the vCenter stay.
        unity.control(fault='drop', at='0')
        try:
            a = srv.poll_and_wait('unity1')
        finally:
            unity.control(fault='')
        a = {x['name']: x for x in srv.summary()['arrays']}['unity1']
        assert a['stale'] and a['consecutive_failures'] == 1 and a['backoff_s'] >= 300
        assert 'request failed' in a['error'] and '\n' not in a['error']
        assert not srv.vcenter('lab')['stale']
        f = srv.get('/api/v1/findings?check=pool-free-space').json()['findings']
        assert 'unity1/pool-low' in {x['object']['name'] for x in f}
        assert srv.get('/api/v1/inventory/pools?limit=100').json()['total'] == 9
        logged = [l for l in srv.logs().splitlines() if 'array unity1: poll failed' in l]
        assert len(logged) == 1, srv.logs()[-2000:]
        # And recovers.
        assert not srv.poll_and_wait('unity1')['stale']


@pytest.mark.parametrize('datastore, disk_format, allowed', [
    ('ds-pool-ok', 'lazy', False),    # thin LUN: 150 GiB thick takes the pool under 30 %
    ('ds-pool-ok', 'eager', False),
    ('ds-pool-ok', 'thin', True),     # thin: nothing taken now
    ('ds-pool-thick', 'lazy', True),  # thick LUN: its space is the pool's already
])
def test_gate_counts_pool_space_of_thick_disks(violations_sim, workspace, datastore,
                                               disk_format, allowed):
    """The gate uses pool free space where an array says it: with pool-ok and pool-thick at
    31 % free of 10 TiB, a 150 GiB thick disk on a thin LUN takes its size from the pool too
    (29.5 % left) and is denied by pool-free-space; the datastores keep 35 % free."""
    with UnitySim() as u:
        for pool in ('pool_2', 'pool_7'):
            u.control(pool=pool, free_pct=31)
        conf = workspace.write_config([vcenter(workspace, violations_sim.url)],
                                      extra=array_section(workspace, u.url))
        res = vslint('gate', '-c', conf, '--datastore', datastore, '--disk-gb', '150',
                     '--disk-format', disk_format, '--format', 'json')
    assert res.returncode == (0 if allowed else 1), res.stdout + res.stderr
    ans = json.loads(res.stdout)
    pool_reasons = [r for r in ans['reasons'] if r.get('check') == 'pool-free-space']
    assert ans['allowed'] is allowed
    if allowed:
        assert pool_reasons == []
    else:
        assert [r['object'] for r in pool_reasons] == ['unity1/pool-ok']
        assert '29.' in pool_reasons[0]['message']


def test_serve_gate_forgets_the_pools_of_a_removed_array(violations_sim, workspace):
    """POST /api/v1/gate judges by the running configuration: once the array is removed from
    it (SIGHUP), its pools stop counting, although their rows stay in the database."""
    body = json.dumps({'datastore': 'ds-pool-ok', 'disks_gb': [150],
                       'disk_format': 'lazy'}).encode()
    hdrs = {'Content-Type': 'application/json'}
    with UnitySim() as u:
        u.control(pool='pool_2', free_pct=31)
        with serving(workspace, [vcenter(workspace, violations_sim.url)],
                     extra=array_section(workspace, u.url)) as srv:
            srv.poll_and_wait('lab')
            srv.poll_and_wait('unity1')
            ans = srv.post('/api/v1/gate', data=body, headers=hdrs).json()
            assert ans['allowed'] is False
            assert [r['object'] for r in ans['reasons']
                    if r.get('check') == 'pool-free-space'] == ['unity1/pool-ok']
            with open(srv.conf) as fh:
                conf = fh.read()
            with open(srv.conf, 'w') as fh:
                fh.write(conf[:conf.index('[array unity1]')])
            srv.signal(signal.SIGHUP)
            deadline = time.time() + 20
            while time.time() < deadline and 'reloaded' not in srv.logs():
                time.sleep(0.1)
            assert 'reloaded' in srv.logs(), srv.logs()[-1000:]
            ans = srv.post('/api/v1/gate', data=body, headers=hdrs).json()
            assert ans['allowed'] is True, ans
            assert [r for r in ans['reasons'] if r.get('check') == 'pool-free-space'] == []


# ---- thin on thin (000 §3.7.2), scenario_seeds.go --------------------------------------------

def test_disk_provisioned_otherwise_than_its_lun_is_info(estate):
    """In-guest reclaim "DOES require thin provisioning be used on both the storage and the
    virtual disks": the array says ds-pool-ok's LUN is thin and ds-pool-thick's thick."""
    got = {f['object']['name']: f for f in estate['findings']
           if f['check'] == 'space-reclaim' and f.get('detail') == 'thin-on-thin'}
    assert sorted(got) == ['vm-thick-on-thin', 'vm-thin-on-thick']
    thick = got['vm-thick-on-thin']
    assert thick['severity'] == 'info'
    assert 'lazyzeroedthick on a thin LUN of ds-pool-ok' in thick['message']
    assert [(d['datastore'], d['format'], d['lun_thin']) for d in thick['evidence']['disks']] == \
        [('ds-pool-ok', 'lazyzeroedthick', True)]
    assert 'thin on a thick LUN of ds-pool-thick' in got['vm-thin-on-thick']['message']


@pytest.mark.parametrize('vm', ['vm-thin-on-thin', 'vm-thick-on-thick'])
def test_disk_provisioned_as_its_lun_is_silent(estate, vm):
    assert [f for f in estate['findings']
            if f['check'] == 'space-reclaim' and f['object']['name'] == vm] == []


def test_thin_on_thin_needs_the_array(lab):
    """Without an [array] section the LUNs' provisioning is unknown: nothing is said."""
    assert [f['object']['name'] for f in lab.findings
            if f['check'] == 'space-reclaim' and f.get('detail') == 'thin-on-thin'] == []


# ---- both storage processors, told by the array's fcPort list (scenario_seeds.go) ------------

def test_paths_to_one_sp_told_by_the_array(estate):
    """LUN ...f5's two paths end at ports 58:cc:f0:98:49:20/21, which no WWN convention places
    and the array's fcPort list puts on spa: critical, naming SP A. ...f6 reaches spa and spb."""
    naa = 'naa.60060160a0b0' + '0' * 18
    got = by_check(estate['findings'], 'multipath-redundancy')
    f = got[naa + 'f5']
    assert f['severity'] == 'critical'
    assert 'all to one storage processor (SP A)' in f['message']
    assert 'fcPort' in f['evidence']['storage_processors_how']
    assert [p['storage_processor'] for p in f['evidence']['paths']] == ['SP A', 'SP A']
    assert naa + 'f6' not in got
    assert naa + 'f2' not in got and naa + 'f1' in got  # the convention still tells those


def test_array_ports_are_stored(estate):
    """Each fcPort's port WWN (the last 8 bytes of Unisphere's wwn, lower case) and SP."""
    db = sqlite3.connect(estate['ws'].db)
    try:
        rows = db.execute("SELECT id, wwpn, sp FROM array_ports WHERE vcenter = 'unity1'"
                          " ORDER BY id").fetchall()
    finally:
        db.close()
    assert ('spa_iom_0_fc0', '58:cc:f0:98:49:20:0b:2a', 'spa') in rows
    assert ('spb_fc4', '50:06:01:68:47:e4:1e:49', 'spb') in rows
    assert len([r for r in rows if r[1]]) == 8
    assert ('spa_eth3', None, 'spa') in rows  # an Ethernet port: no WWN


# ---- iSCSI: the storage processor and MTU behind each portal (scenario_seeds.go) -------------

NAA = 'naa.60060160a0b0' + '0' * 18


def test_iscsi_paths_to_one_sp_told_by_the_portals(estate):
    """LUN ...e5's paths end at 10.0.1.21 and 10.0.1.22, portals the array puts on spa_eth2 and
    spa_eth3, both SP A: critical, naming SP A. ...e6 reaches 10.0.1.21 and 10.0.1.23 (SP B)."""
    got = by_check(estate['findings'], 'multipath-redundancy')
    f = got[NAA + 'e5']
    assert f['severity'] == 'critical'
    assert f['object']['name'] == NAA + 'e5' and 'esx-iscsi-a' in f['message']
    assert 'all to one storage processor (SP A)' in f['message']
    # iSCSI has portals to add, not zones: the fix says so.
    assert 'iSCSI portals on both storage processors' in f['message']
    assert 'zone' not in f['message']
    assert 'iscsiPortal' in f['evidence']['storage_processors_how']
    assert [(p['target_address'], p['target_iqn'], p['storage_processor'])
            for p in f['evidence']['paths']] == [
        ('10.0.1.21:3260', 'iqn.1992-04.com.emc:cx.lab.a0', 'SP A'),
        ('10.0.1.22:3260', 'iqn.1992-04.com.emc:cx.lab.a1', 'SP A')]
    assert NAA + 'e6' not in got


def test_iscsi_paths_without_the_array_are_not_judged_on_sps(lab):
    """Without the array an iSCSI target's IQN and address name no SP: ...e5 is not judged."""
    assert not [f for f in lab.findings if f['check'] == 'multipath-redundancy'
                and f['object']['name'] in (NAA + 'e5', NAA + 'e6')]


def test_array_port_below_jumbo_behind_a_hosts_portal_is_a_warning(estate):
    """000 §3.4.1 asks MTU 9000 of the array: spa_eth3 (MTU 1500) carries portal 10.0.1.22,
    a path of esx-iscsi-a. spb_eth4 has MTU 1500 too but no host sends to its portal
    10.0.1.25; spa_eth2 and spb_eth2 carry 9000."""
    got = {f['object']['name']: f for f in estate['findings']
           if f['check'] == 'iscsi-jumbo-frames' and f['object']['type'] == 'array_port'}
    assert sorted(got) == ['unity1/spa_eth3']
    f = got['unity1/spa_eth3']
    assert f['severity'] == 'warning'
    assert f['message'].startswith('Ethernet port spa_eth3 (SP A) of array unity1, behind iSCSI '
                                   'portal 10.0.1.22 that esx-iscsi-a sends to, has MTU 1500, '
                                   'below 9000')
    ev = f['evidence']
    assert (ev['port_mtu'], ev['required_mtu'], ev['storage_processor']) == (1500, 9000, 'SP A')
    assert ev['hosts'] == ['esx-iscsi-a']
    assert ev['portals'] == [{'id': 'if_5', 'address': '10.0.1.22',
                              'iqn': 'iqn.1992-04.com.emc:cx.lab.a1'}]


def test_array_ports_are_not_judged_without_the_array(lab):
    assert not [f for f in lab.findings if f['object']['type'] == 'array_port']


def test_portals_are_stored(estate):
    db = sqlite3.connect(estate['ws'].db)
    try:
        rows = db.execute("SELECT i.id, i.address, i.iqn, p.sp, p.mtu FROM array_portals i"
                          " JOIN array_ports p ON p.vcenter = i.vcenter AND p.id = i.port"
                          " WHERE i.vcenter = 'unity1' ORDER BY i.id").fetchall()
    finally:
        db.close()
    assert rows[:2] == [('if_4', '10.0.1.21', 'iqn.1992-04.com.emc:cx.lab.a0', 'spa', 9000),
                        ('if_5', '10.0.1.22', 'iqn.1992-04.com.emc:cx.lab.a1', 'spa', 1500)]
    assert len(rows) == 5


# ---- NAS servers on both SPs (000 §3.8, scenario_seeds.go) -----------------------------------

def test_nas_servers_all_homed_on_one_sp_are_a_warning(estate):
    """cluster-nas-onesp mounts ds-nas-a1 (10.0.3.10) and ds-nas-a2 (10.0.3.11): two addresses,
    but the array's NAS servers behind them, nas-spa-1 and nas-spa-2, are both homed on SP A."""
    got = by_check(estate['findings'], 'nfs-server-redundancy')
    f = got['cluster-nas-onesp']
    assert f['severity'] == 'warning' and f['object']['type'] == 'cluster'
    assert ('cluster cluster-nas-onesp mounts 2 NFS datastore(s) (ds-nas-a1, ds-nas-a2) from NAS '
            'servers unity1/nas-spa-1, unity1/nas-spa-2, all placed on SP A') in f['message']
    ev = f['evidence']
    assert (ev['home_sp'], ev['nas_servers']) == ('SP A', 2)
    assert [(d['name'], d['remote_host'], d['nas_server'], d['home_sp'])
            for d in ev['datastores']] == [('ds-nas-a1', '10.0.3.10', 'nas-spa-1', 'spa'),
                                           ('ds-nas-a2', '10.0.3.11', 'nas-spa-2', 'spa')]
    # ds-nas-b2's server nas-spb-1 runs on SP A after a failover, but is placed on SP B.
    assert 'cluster-nas-twosp' not in got
    # One address is one NAS server, with or without the array.
    assert got['cluster-lab']['evidence']['nas_server'] == 'nas-lab.example.com'


def test_nas_servers_sps_need_the_array(lab):
    got = {f['object']['name'] for f in lab.findings if f['check'] == 'nfs-server-redundancy'}
    assert 'cluster-nas-onesp' not in got and 'cluster-lab' in got


# ---- pool free space behind NFS and VVol datastores (000 §1.1.1, scenario_seeds.go) ----------

def test_pool_behind_an_nfs_datastore_is_judged(estate):
    """ds-nas-a1 is mounted from 10.0.3.10:/ds-nas-a1, the share of file system ds-nas-a1 in
    pool-nfs-low (9 % free): critical, naming the datastore. vCenter shows it 50 % free."""
    f = by_check(estate['findings'], 'pool-free-space')['unity1/pool-nfs-low']
    assert f['severity'] == 'critical'
    assert f['message'].startswith('pool pool-nfs-low of array unity1 has 9.0 % free')
    assert f['message'].endswith('it backs ds-nas-a1')
    assert f['evidence']['datastores'] == ['ds-nas-a1']
    assert 'ds-nas-a1' not in by_check(estate['findings'], 'datastore-free-space')


def test_pool_behind_a_vvol_datastore_is_judged(estate):
    """ds-vvol-low's URL holds the UUID of the array's VVol datastore vvol-low (written there as
    RFC 4122 does), whose pool pool-vvol-low has 20 % free: warning."""
    f = by_check(estate['findings'], 'pool-free-space')['unity1/pool-vvol-low']
    assert f['severity'] == 'warning'
    assert '20.0 % free' in f['message'] and f['message'].endswith('it backs ds-vvol-low')
    assert f['evidence']['datastores'] == ['ds-vvol-low']


def test_pool_of_an_unmounted_share_on_a_mounted_server_is_not_joined(estate):
    """fs-unmounted (pool-unjoined, 2 % free) is exported by nas-spa-1, whose address
    ds-nas-a1 is mounted from, but at a path no datastore mounts."""
    names = {f['object']['name'] for f in estate['findings']}
    assert 'unity1/pool-unjoined' not in names and 'unity1/pool-ok' not in names


def test_nfs_and_vvol_pools_need_the_array(lab):
    assert not [f for f in lab.findings if f['check'] == 'pool-free-space']


# ---- NFS datastores whose NAS server is in doubt (issue 22's leftovers) ----------------------

def infos_on(findings, name):
    return [f for f in findings if f['check'] == 'pool-free-space'
            and f['object']['type'] == 'datastore' and f['object']['name'] == name]


def test_nas_server_is_found_by_address_when_no_share_holds_the_path(estate):
    """cluster-nas-reused mounts ds-nas-c1 from nas-spa-2 (10.0.3.11, SP A) and ds-nas-c2 from
    10.0.3.20:/vol/ds-nas-c2: nas-spb-1's address (SP B), though none of its shares holds that
    path. The address alone finds the server (the share only chooses between servers at one
    address): the cluster is on SP A and SP B, no finding, and ds-nas-c2's pool is not judged,
    which is said without blaming a reused address."""
    got = by_check(estate['findings'], 'nfs-server-redundancy')
    assert 'cluster-nas-reused' not in got
    [f] = infos_on(estate['findings'], 'ds-nas-c2')
    assert f['severity'] == 'info'
    assert f['message'] == (
        'NFS datastore ds-nas-c2: the array pool behind it is not judged: NAS server '
        'unity1/nas-spb-1 serves it at 10.0.3.20, but none of its NFS shares holds '
        '/vol/ds-nas-c2: which of its file systems the datastore is on is not known, so no pool '
        'is judged for it')
    assert 'reused' not in f['message']
    ev = f['evidence']
    assert (ev['remote_host'], ev['remote_path'], ev['nas_server'], ev['nas_servers']) == (
        '10.0.3.20', '/vol/ds-nas-c2', 'unity1/nas-spb-1', 1)
    # ds-nas-c1 is nas-spa-2's share at nas-spa-2's address: joined, nothing to say.
    assert infos_on(estate['findings'], 'ds-nas-c1') == []


def test_nfs_datastore_mounted_by_name_raises_no_finding(estate):
    """ds-nas-dns is mounted from nas-spb-1.lab.example.com:/ds-nas-dns, and the array exports a
    share ds-nas-dns: a share of that name is no proof that the name is the array's (a filer
    may export /vmware as a Unity does), and vslint resolves no names. No finding, no pool."""
    assert infos_on(estate['findings'], 'ds-nas-dns') == []
    assert infos_on(estate['findings'], 'ds-nfs-lab-1') == []
    assert 'ds-nas-dns' not in [d for f in by_check(estate['findings'], 'pool-free-space').values()
                                for d in f['evidence'].get('datastores', [])]
    for f in by_check(estate['findings'], 'nfs-server-redundancy').values():
        for d in f['evidence']['datastores']:
            if d['name'] == 'ds-nas-dns':
                assert d['nas_server_unknown'] == (
                    'the datastore is mounted by the name nas-spb-1.lab.example.com, which '
                    'vslint does not resolve: it is not matched to a NAS server of the '
                    'configured arrays')


def check_with(violations_sim, unity_sim, ws):
    """`vslint check` of the violations scenario with unity_sim as unity1: its findings."""
    conf = ws.write_config([vcenter(ws, violations_sim.url)],
                           extra=array_section(ws, unity_sim.url))
    res = vslint('check', '-c', conf, '--format', 'json', '--fail-on', 'never')
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)['findings']


def test_nfs_datastore_in_a_folder_of_a_share_joins_that_shares_pool(violations_sim, workspace):
    """With nas-spb-1 exporting a share vol (its file system in pool-unjoined, 2 % free),
    ds-nas-c2's /vol/ds-nas-c2 is a folder in it: the share is found by its first component,
    and pool-unjoined is judged critical for ds-nas-c2."""
    with UnitySim(['-vol-share']) as u:
        findings = check_with(violations_sim, u, workspace)
    f = by_check(findings, 'pool-free-space')['unity1/pool-unjoined']
    assert f['severity'] == 'critical' and f['evidence']['datastores'] == ['ds-nas-c2']
    assert infos_on(findings, 'ds-nas-c2') == []


def test_nas_server_without_shares_read_keeps_its_sp_and_says_shares_not_read(
        violations_sim, workspace):
    """A Unity that serves no nfsShare type (vslint leaves it out): every NFS datastore still
    finds its NAS server by address, so cluster-nas-onesp is still all on SP A; no pool is
    judged for the NFS datastores, and each says the shares were not read, not that its
    address is reused."""
    with UnitySim(['-no-shares']) as u:
        findings = check_with(violations_sim, u, workspace)
    g = by_check(findings, 'nfs-server-redundancy')['cluster-nas-onesp']
    assert [d['nas_server'] for d in g['evidence']['datastores']] == ['nas-spa-1', 'nas-spa-2']
    assert 'unity1/pool-nfs-low' not in by_check(findings, 'pool-free-space')
    [f] = infos_on(findings, 'ds-nas-a1')
    assert f['message'] == (
        'NFS datastore ds-nas-a1: the array pool behind it is not judged: NAS server '
        'unity1/nas-spa-1 serves it at 10.0.3.10, but the file systems and NFS shares of array '
        'unity1 were not read (shares not read: see the log of its poll): which file system '
        'holds /ds-nas-a1 is not known, so no pool is judged for it')
    for f in findings:
        assert 'reused' not in f['message']


@pytest.fixture(scope='module')
def dr_unity():
    """The production array's file side replicated to a second Unity: same NAS server names,
    addresses and shares, every file system in pool-dr (2 % free), isReplicationDestination."""
    with UnitySim(['-role', 'dr']) as u:
        yield u


def two_arrays(violations_sim, unity, dr, ws):
    """`vslint check` of the violations scenario with unity as unity1 and dr as unity-dr."""
    conf = ws.write_config([vcenter(ws, violations_sim.url)],
                           extra=array_section(ws, unity.url) + '\n' +
                           array_section(ws, dr.url, name='unity-dr'))
    res = vslint('check', '-c', conf, '--format', 'json', '--fail-on', 'never')
    assert res.returncode == 0, res.stderr
    return conf, json.loads(res.stdout)['findings']


def test_replication_destination_does_not_take_the_production_datastores(
        violations_sim, unity, dr_unity, workspace):
    """With the DR array configured too, ds-nas-a1 (10.0.3.10:/ds-nas-a1) matches a NAS server
    of each array by address and share; the DR one is a replication destination, so the
    production datastore joins the production pool (pool-nfs-low, 9 % free: critical) and is
    not judged by pool-dr (2 % free), which backs nothing."""
    ws = workspace
    with serving(ws, [vcenter(ws, violations_sim.url)],
                 extra=array_section(ws, unity.url) + '\n' +
                 array_section(ws, dr_unity.url, name='unity-dr')) as srv:
        srv.poll_and_wait('lab')  # after both arrays' first polls (/readyz waits for them)
        findings = srv.get('/api/v1/findings?limit=1000').json()['findings']
        dss = {d['name']: d for d in
               srv.get('/api/v1/inventory/datastores?limit=1000').json()['datastores']}
        pools = {p['name']: p for p in
                 srv.get('/api/v1/inventory/pools?limit=100').json()['pools']}
    got = by_check(findings, 'pool-free-space')
    f = got['unity1/pool-nfs-low']
    assert f['severity'] == 'critical' and f['evidence']['datastores'] == ['ds-nas-a1']
    assert not [n for n in got if n.startswith('unity-dr/')]
    assert infos_on(findings, 'ds-nas-a1') == []
    # The NAS servers behind cluster-nas-onesp are the production ones, homed on SP A.
    g = by_check(findings, 'nfs-server-redundancy')['cluster-nas-onesp']
    assert [d['array'] for d in g['evidence']['datastores']] == ['unity1', 'unity1']
    # The inventory shows the same join, both ways.
    assert [(p['array'], p['name']) for p in dss['ds-nas-a1']['pools']] == [
        ('unity1', 'pool-nfs-low')]
    assert [(p['array'], p['name']) for p in dss['ds-nas-b1']['pools']] == [('unity1', 'pool-ok')]
    assert pools['pool-dr']['array'] == 'unity-dr' and pools['pool-dr']['datastores'] == []


def test_two_arrays_serving_one_share_at_one_address_prefer_the_vcenters(
        violations_sim, unity, workspace):
    """The same two arrays, but the DR array's NAS servers do not say they are replication
    destinations: each share is served at one address by two arrays (a private address and
    share name reused at another site). The production array holds LUNs behind this vCenter's
    datastores and the other none: the production NAS server is this vCenter's, and serves."""
    with UnitySim(['-role', 'dr', '-dr-destination=false']) as dr:
        _, findings = two_arrays(violations_sim, unity, dr, workspace)
    pools = by_check(findings, 'pool-free-space')
    assert pools['unity1/pool-nfs-low']['evidence']['datastores'] == ['ds-nas-a1']
    assert 'unity-dr/pool-dr' not in pools and infos_on(findings, 'ds-nas-a1') == []
    g = by_check(findings, 'nfs-server-redundancy')['cluster-nas-onesp']
    assert [d['array'] for d in g['evidence']['datastores']] == ['unity1', 'unity1']


def test_two_arrays_of_the_vcenter_serving_one_share_at_one_address_join_neither(
        violations_sim, unity, workspace):
    """As above, but the second array holds a LUN of the vCenter's ds-pool-ok too: both are the
    vCenter's arrays, and which one serves ds-nas-a1 cannot be told. Neither pool judges it,
    nor is a NAS server's SP taken for cluster-nas-onesp's, and the info finding says why."""
    with UnitySim(['-role', 'dr', '-dr-destination=false', '-dr-vmfs']) as dr:
        _, findings = two_arrays(violations_sim, unity, dr, workspace)
    pools = by_check(findings, 'pool-free-space')
    assert 'unity1/pool-nfs-low' not in pools
    # pool-dr backs ds-pool-ok through its LUN (2 % free: critical), not ds-nas-a1.
    assert pools['unity-dr/pool-dr']['evidence']['datastores'] == ['ds-pool-ok']
    [f] = infos_on(findings, 'ds-nas-a1')
    assert f['severity'] == 'info'
    assert ('10.0.3.10 is an interface address of 2 NAS servers of the configured arrays '
            '(unity-dr/nas-spa-1 and others), none of them known to be a replication '
            'destination, and the share /ds-nas-a1 does not tell them apart') in f['message']
    assert 'cluster-nas-onesp' not in by_check(findings, 'nfs-server-redundancy')


def test_array_refusing_the_replication_flag_keeps_its_nas_servers(violations_sim, workspace):
    """An array that refuses nasServer reads naming isReplicationDestination (an older OE): the
    NAS servers are read again without it, so cluster-nas-onesp is still judged all on SP A
    (not dropped with the whole type), the flag unknown."""
    with UnitySim(['-no-replication-field']) as u:
        findings = check_with(violations_sim, u, workspace)
    g = by_check(findings, 'nfs-server-redundancy')['cluster-nas-onesp']
    assert [d['nas_server'] for d in g['evidence']['datastores']] == ['nas-spa-1', 'nas-spa-2']
    assert by_check(findings, 'pool-free-space')['unity1/pool-nfs-low']['evidence'][
        'datastores'] == ['ds-nas-a1']
