"""vslint record (a capture a user sends back) and vcsim-replay (tests/sim/replay/), which serves
a capture as the vCenter it was recorded from: the stored captures of tests/captures/ give the
findings of their live run, no secret is in an archive, --anonymize leaves no original name,
IQN, WWN or address (the originals taken from the simulator and the live inventory), and a
replayed capture gives the live poll's findings."""
import collections
import gzip
import io
import json
import os
import re
import secrets
import signal
import sqlite3
import stat
import subprocess
import tarfile
import time
import urllib.request

import pytest

from simlib import (VSLINT, Replay, Sim, UnitySim, check_estate, finding_keys, record, run_ok,
                    vslint, vcenter)

CAPTURES = os.path.join(os.environ.get('SOURCE_ROOT', '.'), 'tests', 'captures')


def members(path):
    """The archive's members: name -> bytes."""
    with tarfile.open(path, 'r:gz') as t:
        return {m.name: t.extractfile(m).read() for m in t.getmembers() if m.isfile()}


@pytest.mark.parametrize('name', ['violations', 'edges'])
def test_stored_capture_gives_its_findings(workspace, name):
    """A capture in tests/captures/, replayed, gives the findings its live run gave (judged at
    its recording time, so that ages stay those of that day)."""
    d = os.path.join(CAPTURES, name)
    with open(os.path.join(d, 'capture.json')) as f:
        about = json.load(f)
    with open(os.path.join(d, 'expected.json')) as f:
        expected = json.load(f)
    assert len(expected) == about['findings'] > 0
    env = {'VSLINT_TEST_NOW_MS': str(about['now_ms'])}
    with Replay(os.path.join(d, 'capture.tar.gz')) as rep:
        arrays = [rep.array_url] if about['unity'] else []
        got = finding_keys(check_estate(workspace, rep.url, name=about['vcenter'],
                                        arrays=arrays, env=env))
        log = rep.log()
    assert got == expected
    # Every request vslint made had its recorded answer.
    assert 'no recorded answer' not in log, log[-2000:]


def test_record_removes_secrets(workspace):
    """No password, session cookie or CSRF token anywhere in the archive (searched in every
    member and in the uncompressed tar as a whole); the Login's password and user name are
    said to be removed; the archive is its owner's only (0600); nothing is left stored."""
    password = 'pw-' + secrets.token_hex(12)
    pwfile = workspace.password_file(password, name='sim-password')
    # User names say who runs the estate: the vCenter's, its parts, and the array's.
    name, domain = 'jsmith' + secrets.token_hex(3), 'CORP' + secrets.token_hex(3)
    user, array_user = domain + '\\' + name, 'arrayop' + secrets.token_hex(3)
    with Sim('violations', extra=['-password-file', pwfile, '-user', user]) as sim, \
            UnitySim(extra=['-password-file', pwfile, '-user', array_user]) as unity:
        out = os.path.join(workspace.dir, 'cap.tar.gz')
        scratch = os.path.join(workspace.dir, 'tmp')
        os.mkdir(scratch)
        # What another user may have left where the archive goes: a readable file at its name
        # and a symlink at the name a temporary file once had. Neither is written through.
        victim = os.path.join(workspace.dir, 'victim')
        with open(victim, 'w') as f:
            f.write('untouched')
        os.symlink(victim, out + '.tmp')
        with open(out, 'w') as f:
            f.write('old')
        os.chmod(out, 0o644)
        res = record(workspace, sim.url, out, arrays=[unity.url], password=password,
                     env={'TMPDIR': scratch}, user=user, array_user=array_user)
        with urllib.request.urlopen(sim.url.rsplit('/sdk', 1)[0] + '/vslint-sim/sessions',
                                    timeout=30) as r:
            cookies = json.loads(r.read())
        issued = unity.control()['issued']
    assert 'requests and answers of vcenter lab and its arrays' in res.stdout
    assert cookies and len(issued) >= 2
    assert stat.S_IMODE(os.stat(out).st_mode) == 0o600
    with open(victim) as f:
        assert f.read() == 'untouched'
    assert sorted(os.listdir(workspace.dir)).count('cap.tar.gz.tmp') == 1
    assert not [n for n in os.listdir(workspace.dir) if n.startswith('cap.tar.gz.')
                and n != 'cap.tar.gz.tmp']
    # Nothing is stored: the scratch database the rows went to is gone, and no database was
    # made where the configuration says.
    assert os.listdir(scratch) == []
    assert not os.path.exists(workspace.db)
    with open(out, 'rb') as f:
        whole = gzip.decompress(f.read())
    files = members(out)
    for secret in [password, user, name, domain, array_user] + cookies + issued:
        assert secret.encode() not in whole, secret
        for name, body in files.items():
            assert secret.encode() not in body, (secret, name)
    login = [b for n, b in files.items() if n.endswith('-Login.request.xml')]
    assert len(login) == 1
    assert b'<password>(removed)</password>' in login[0]
    assert b'<userName>(removed)</userName>' in login[0]
    answer = [b for n, b in files.items() if n.endswith('-Login.answer.xml')][0]
    assert b'<key>(removed)</key>' in answer
    # Alarms are read only for the fields the checks use: who last changed one (the
    # simulator's say VSPHERE.LOCAL\\Administrator) and their actions are not read at all.
    for unread in [b'lastModifiedUser', b'Administrator', b'<action', b'SendEmailAction']:
        assert unread not in whole, unread
    assert b'info.expression' in whole
    readme = files['vslint-capture/README.md'].decode()
    assert 'password' in readme and 'vmware_soap_session' in readme
    manifest = files['vslint-capture/manifest.tsv'].decode().splitlines()
    protos = {line.split('\t')[2] for line in manifest}
    assert protos == {'soap', 'get', 'rest'}
    # In order: the first request reads the SDK's versions, the Login comes before any read.
    methods = [line.split('\t')[3] for line in manifest]
    assert methods[0] == 'GET' and methods.index('Login') < methods.index('RetrievePropertiesEx')


def originals(sim, ws, url, unity_url):
    """What --anonymize must replace, from the simulator's truth and the live inventory (never
    from the archive): names, IQNs, IPv4 addresses and WWNs (hex with and without colons, and
    the decimal long vSphere writes)."""
    t = sim.truth()
    found = {}
    for kind in ('datastores', 'storage_pods', 'hosts', 'dvswitches', 'vms'):
        for o in t[kind]:
            found[o['name']] = kind
    for h in t['hosts']:
        for v in h['vnics']:
            if v.get('ip'):
                found[v['ip']] = 'address'
        for hba in h['iscsi_hbas']:
            found[hba['iscsi_name']] = 'iqn'
            for tg in hba['targets']:
                found[tg['address']] = 'address'
                if tg['iscsi_name']:
                    found[tg['iscsi_name']] = 'iqn'
        for lun in h['luns']:
            for p in lun['paths']:
                if p['target_wwpn']:
                    w = p['target_wwpn']
                    found[w] = found[w.replace(':', '')] = found[w.upper()] = 'wwn'
                    v = int(w.replace(':', ''), 16)
                    found[str(v - (1 << 64) if v >= 1 << 63 else v)] = 'wwn'
    # The array's pools and LUNs, as the live poll stored them.
    conf = ws.write_config([vcenter(ws, url)], '[array a1]\ntype = unity\nurl = %s\nuser = '
                           'vslint\npassword_file = %s\n' % (unity_url, ws.password_file()),
                           name='live.conf')
    run_ok('collect', '-c', conf)
    rows = json.loads(run_ok('query', '-c', conf, '--format', 'json',
                             'SELECT name FROM vsl_pools').stdout)
    for r in rows:
        found[r['name']] = 'pool'
    # Loopback addresses and a netmask-like value are not the estate's.
    found.pop('127.0.0.1', None)
    return found


def test_anonymize_leaves_no_original(workspace):
    """--anonymize: no name, IQN, WWN or address of the estate is left in any file, nor the
    vCenter's configured name or URL; and the capture still replays to the live findings (the
    same checks on the same objects, by moref), since names are replaced consistently."""
    with Sim('violations') as sim, UnitySim() as unity:
        out = os.path.join(workspace.dir, 'anon.tar.gz')
        record(workspace, sim.url, out, name='vc-zeta-prod', arrays=[unity.url], anonymize=True)
        want = originals(sim, workspace, sim.url, unity.url)
        live = check_estate(workspace, sim.url, arrays=[unity.url], db='live2.db')
    assert sum(1 for k in want.values() if k == 'wwn') > 4
    assert sum(1 for k in want.values() if k == 'iqn') > 4
    assert sum(1 for k in want.values() if k == 'pool') > 2
    files = members(out)
    port = sim.url.split(':')[2].split('/')[0]
    leaks = []
    for orig, kind in sorted(want.items()):
        rx = re.compile(r'(?<![A-Za-z0-9])' + re.escape(orig) + r'(?![A-Za-z0-9])')
        for name, body in files.items():
            m = rx.search(body.decode('utf-8', 'replace'))
            if m:
                leaks.append((kind, orig, name))
                break
    assert leaks == []
    for name, body in files.items():
        assert b'vc-zeta-prod' not in body and (':%s' % port).encode() not in body, name
    readme = files['vslint-capture/README.md'].decode()
    assert 'Kept: managed object ids' in readme
    with Replay(out) as rep:
        replayed = check_estate(workspace, rep.url, arrays=[rep.array_url], db='anon.db')

    def judged(findings):
        return sorted((f['check'], f['severity'], f['object']['type'], f['object'].get('moref'))
                      for f in findings)
    assert judged(replayed) == judged(live)
    names = {f['object']['name'] for f in replayed}
    assert not names & set(want), names & set(want)


def test_live_poll_and_replay_agree(workspace):
    """A capture made now from the clean scenario replays to what the live poll gives, and
    `vslint collect` against the replay stores the same inventory counts."""
    with Sim('clean') as sim:
        out = os.path.join(workspace.dir, 'clean.tar.gz')
        record(workspace, sim.url, out)
        live = finding_keys(check_estate(workspace, sim.url, db='live.db'))
        conf = workspace.write_config([vcenter(workspace, sim.url)], name='c1.conf')
        live_counts = run_ok('collect', '-c', conf).stdout.split(':', 1)[1]
    with Replay(out) as rep:
        replayed = finding_keys(check_estate(workspace, rep.url, db='replay.db'))
        conf = workspace.write_config([vcenter(workspace, rep.url)], name='c2.conf')
        rep_counts = run_ok('collect', '-c', conf).stdout.split(':', 1)[1]
    assert replayed == live
    # "stored in 0.12 s: 4 datastores, ...": the counts after the duration.
    assert rep_counts.split(':', 1)[1] == live_counts.split(':', 1)[1]


def test_replay_faults_an_unrecorded_request(workspace):
    """A request the capture does not hold gets a SOAP fault naming its method; a Login with
    any password is accepted (the capture holds none)."""
    cap = os.path.join(CAPTURES, 'edges', 'capture.tar.gz')
    with Replay(cap) as rep:
        def post(body):
            env = ('<?xml version="1.0" encoding="UTF-8"?><soapenv:Envelope xmlns:soapenv='
                   '"http://schemas.xmlsoap.org/soap/envelope/" xmlns="urn:vim25">'
                   '<soapenv:Body>%s</soapenv:Body></soapenv:Envelope>' % body)
            req = urllib.request.Request(rep.url, data=env.encode(), method='POST',
                                         headers={'Content-Type': 'text/xml'})
            try:
                with urllib.request.urlopen(req, timeout=30) as r:
                    return r.status, r.read().decode()
            except urllib.error.HTTPError as e:
                return e.code, e.read().decode()
        status, body = post('<CurrentTime><_this type="ServiceInstance">ServiceInstance'
                            '</_this></CurrentTime>')
        assert status == 500 and 'no recorded answer for CurrentTime' in body
        status, body = post('<Login><_this type="SessionManager">SessionManager</_this>'
                            '<userName>someone</userName><password>anything-at-all</password>'
                            '</Login>')
        assert status == 200 and 'LoginResponse' in body


def test_record_errors(workspace):
    """Bad use says what is wrong and writes no archive."""
    conf = workspace.write_config([vcenter(workspace, 'http://127.0.0.1:9/sdk')])
    out = os.path.join(workspace.dir, 'x.tar.gz')
    res = vslint('record', '-c', conf, '--vcenter', 'nope', '--output', out)
    assert res.returncode == 2 and 'no [vcenter nope]' in res.stderr
    res = vslint('record', '-c', conf, '--vcenter', 'lab')
    assert res.returncode == 2 and '--output' in res.stderr
    res = vslint('record', '-c', conf, '--vcenter', 'lab', '--output', out)
    assert res.returncode == 2 and 'vcenter lab: cannot read it' in res.stderr
    assert not os.path.exists(out) and not os.path.exists(out + '.tmp')


# ---- interrupted records, failed exchanges, and the leak hunt --------------------------------

def wait_for(pred, what, timeout=60, every=0.1):
    """Returns once pred() is true (asked every `every` seconds); fails after timeout."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return
        time.sleep(every)
    raise AssertionError('timed out waiting for ' + what)


@pytest.mark.parametrize('sig', [signal.SIGINT, signal.SIGTERM])
def test_interrupted_record_leaves_nothing(workspace, sig):
    """A record interrupted in the middle of the read (the simulator holds a property read
    unanswered) leaves no scratch database (its rows are not anonymized) in $TMPDIR or the
    working directory, and no archive, whole or partial, beside --output; it ends by the
    signal and says it was interrupted."""
    scratch, outdir, cwd = (os.path.join(workspace.dir, d) for d in ('tmp', 'out', 'cwd'))
    for d in (scratch, outdir, cwd):
        os.mkdir(d)
    with Sim('clean', extra=['-fault', 'stall:3']) as sim:
        conf = workspace.write_config([vcenter(workspace, sim.url)], name='rec.conf')
        proc = subprocess.Popen(
            [os.path.abspath(VSLINT), 'record', '-c', conf, '--vcenter', 'lab', '--output',
             os.path.join(outdir, 'cap.tar.gz')], cwd=cwd, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True, env=dict(os.environ, TMPDIR=scratch))
        try:
            wait_for(lambda: 'injecting fault stall' in sim.log(), 'the stalled read')
            assert proc.poll() is None
            proc.send_signal(sig)
            _, err = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    assert proc.returncode == -sig, (proc.returncode, err)
    assert 'interrupted (%s): no archive written' % sig.name in err, err
    assert os.listdir(scratch) == []
    assert os.listdir(cwd) == []
    assert os.listdir(outdir) == []


def test_record_interrupted_while_writing_leaves_no_archive(workspace):
    """Interrupted while it writes the archive (a scale estate takes most of a second to
    compress), a record removes the half-written file beside --output: nothing is left."""
    outdir = os.path.join(workspace.dir, 'out')
    os.mkdir(outdir)
    with Sim('scale:3000') as sim:
        conf = workspace.write_config([vcenter(workspace, sim.url)], name='rec.conf')
        proc = subprocess.Popen(
            [VSLINT, 'record', '-c', conf, '--vcenter', 'lab', '--output',
             os.path.join(outdir, 'cap.tar.gz')], stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True)
        try:
            wait_for(lambda: os.listdir(outdir) or proc.poll() is not None,
                     'the archive being written', timeout=300, every=0.005)
            written = os.listdir(outdir)
            proc.send_signal(signal.SIGINT)
            _, err = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    assert len(written) == 1 and written[0].startswith('cap.tar.gz.'), written
    assert proc.returncode == -signal.SIGINT, (proc.returncode, err)
    assert 'interrupted (SIGINT): no archive written' in err
    assert os.listdir(outdir) == []


def normalized(text, *urls):
    """text with the responders' URLs (which differ between the live run and the replay) and
    durations (libcurl's timeouts' too) taken out."""
    for u in urls:
        text = text.replace(u, 'URL')
    text = re.sub(r'after \d+ milliseconds', 'after T milliseconds', text)
    return re.sub(r'\d+\.\d+ s\b', 'T s', text)


def array_sections(ws, arrays, keys=''):
    """[array aN] sections for the Unity responders at arrays, with more keys (lines)."""
    return ''.join('[array a%d]\ntype = unity\nurl = %s\nuser = vslint\npassword_file = %s\n%s\n'
                   % (i + 1, a, ws.password_file(), keys) for i, a in enumerate(arrays))


def collect_outcome(ws, url, arrays=(), db='c.db', array_keys=''):
    """`vslint collect` of url (and arrays): its exit status, its output, and the gaps it
    stored, with the URLs taken out."""
    extra = array_sections(ws, arrays, array_keys)
    path = os.path.join(ws.dir, db)
    conf = ws.write_config([vcenter(ws, url)], extra, name=db + '.conf')
    with open(conf) as f:
        text = f.read().replace('path = %s' % ws.db, 'path = %s' % path)
    with open(conf, 'w') as f:
        f.write(text)
    res = vslint('collect', '-c', conf)
    with sqlite3.connect(path) as c:
        gaps = sorted(c.execute("SELECT object, what, error FROM gaps WHERE vcenter = 'lab'"))
    urls = (url, url.rsplit('/sdk', 1)[0]) + tuple(arrays)
    return (res.returncode, normalized(res.stdout + res.stderr, *urls),
            [tuple(normalized(str(x), *urls) for x in g) for g in gaps])


def unanswered(log):
    """The replay's "no recorded answer for ..." lines: (METHOD, BODY) for a SOAP request,
    (the rest of the line, '') for any other."""
    missed = []
    for rest in re.findall(r'no recorded answer for (.*)', log):
        m = re.match(r'(\w+): (.*)', rest)
        missed.append((m[1], m[2]) if m else (rest, ''))
    return missed


# The reads of each host, all made on the host stream's connection.
PER_HOST_METHODS = {'QueryOptions', 'QueryBoundVnics', 'RetrieveManagedMethodExecuter',
                    'ExecuteSoap'}


def host_stream_request(method, body):
    """Whether a SOAP request is one of the host stream's: a per-host read, or the view and
    read of the hosts (HostSystem their only type)."""
    if method in PER_HOST_METHODS:
        return True
    if method == 'RetrievePropertiesEx':
        return set(re.findall(r'<propSet><type>(\w+)</type>', body)) == {'HostSystem'}
    if method == 'CreateContainerView':
        return set(re.findall(r'<type>(\w+)</type>', body)) == {'HostSystem'}
    return False


# The first read of the datastores, by type: the hosts are read at the same time on a second
# connection, so which read is the poll's 2nd is timing.
@pytest.mark.parametrize('fault,ends', [
    ('truncate:1:RetrievePropertiesEx:Datastore', 'closed after'),
    ('malformed:1:RetrievePropertiesEx:Datastore', 'vslint stopped reading after'),
    ('http500:1:RetrievePropertiesEx:Datastore', None),
    ('refuse-alarms', None),
])
def test_failed_vcenter_exchange_replays_as_it_failed(workspace, fault, ends):
    """A read the vCenter answers badly (cut short, malformed XML, HTTP 500 without SOAP, a
    NoPermission fault) is in the capture as vslint saw it, and `vslint collect` against the
    replay fails (or stores its gap) with the very words it does against the live
    simulator. A read that fails still writes the archive, its README says where, and the
    exit status is 2. (The hosts' reads, on their own connection, stop when the datastores' read
    fails, wherever they had got to: the replay may be asked for one the recording did not
    get to, and refuses it; the poll still fails with the recorded failure, the main
    stream's.)"""
    extra = ['-refuse-alarms'] if fault == 'refuse-alarms' else ['-fault', fault]
    out = os.path.join(workspace.dir, 'failed.tar.gz')
    with Sim('clean', extra=extra) as sim:
        conf = workspace.write_config([vcenter(workspace, sim.url)], name='rec.conf')
        res = vslint('record', '-c', conf, '--vcenter', 'lab', '--output', out)
    with Sim('clean', extra=extra) as sim:
        live = collect_outcome(workspace, sim.url, db='live.db')
    with Replay(out) as rep:
        replayed = collect_outcome(workspace, rep.url, db='replay.db')
        log = rep.log()
    assert replayed == live
    missed = unanswered(log)
    if fault == 'refuse-alarms':
        assert not missed, missed
    else:
        # Only the host stream's: a main-stream request without its answer is still caught.
        assert all(host_stream_request(m, body) for m, body in missed), missed
    files = members(out)
    manifest = [line.split('\t') for line in
                files['vslint-capture/manifest.tsv'].decode().splitlines()]
    assert all(len(f) == 9 for f in manifest)
    readme = files['vslint-capture/README.md'].decode()
    if fault == 'refuse-alarms':
        # A gap, not a failure: the poll stores it, and so the record succeeds.
        assert res.returncode == 0, res.stderr
        assert live[0] == 0 and [g for g in live[2] if g[1] == 'alarms'], live
        faults = [f for f in manifest if f[3] == 'GetAlarm']
        assert faults and faults[0][5] == '500' and faults[0][8] == '-'
        assert b'NoPermission' in files['vslint-capture/' + faults[0][7]]
        assert 'The read failed' not in readme
        return
    assert live[0] == 2, live
    assert res.returncode == 2 and 'vcenter lab: cannot read it' in res.stderr, res.stderr
    assert 'README says where' in res.stderr
    bad = [f for f in manifest if f[5] != '200' or f[8] != '-']
    # The failed read, then perhaps the hosts' read it stopped (an answer vslint stopped
    # reading, not one vCenter broke).
    assert bad and all(f[5] == '200' and f[8].startswith('vslint stopped reading after')
                       for f in bad[1:]), bad
    failed = bad[0]
    assert failed[3] == 'RetrievePropertiesEx'
    if ends:
        assert failed[8].startswith(ends), failed
    else:
        assert failed[5] == '500' and failed[8] == '-', failed
    why = live[1].split('poll failed: URL: ', 1)[1].strip()
    assert '## The read failed\n\nIt ended with: vcenter: %s' % why in readme, (why, readme)
    assert '- %s vcenter RetrievePropertiesEx /sdk: HTTP %s' % (failed[0], failed[5]) in readme


@pytest.mark.parametrize('fault', ['http500', 'malformed', 'empty', 'slow', '401', 'huge'])
def test_failed_array_exchange_replays_as_it_failed(workspace, fault):
    """The same for an array: its first pool read answered with HTTP 500, broken JSON,
    nothing at all, an answer over the client's 64 MiB limit, or not answered within the
    array's timeout is recorded, and a collect against the replay reports the array's failure
    in the live run's words; the record writes the archive with the vCenter's read and the
    array's up to the failure, and exits 2. A session that ends in the middle (401) is one the
    poll logs in again after: the refused read and the read again are both in the capture, and
    the replay goes the same way."""
    out = os.path.join(workspace.dir, 'arr.tar.gz')
    keys = 'timeout = 2\n' if fault == 'slow' else ''
    with Sim('violations') as sim, UnitySim() as unity:
        unity.control(fault=fault, at=1)
        res = record_status(workspace, sim.url, out, arrays=[unity.url], array_keys=keys)
        unity.control(fault=fault, at=1)
        live = collect_outcome(workspace, sim.url, arrays=[unity.url], db='live.db',
                               array_keys=keys)
    with Replay(out) as rep:
        replayed = collect_outcome(workspace, rep.url, arrays=[rep.array_url], db='replay.db',
                                   array_keys=keys)
        log = rep.log()
    assert replayed == live
    assert 'no recorded answer' not in log, log[-2000:]
    files = members(out)
    readme = files['vslint-capture/README.md'].decode()
    manifest = [line.split('\t') for line in
                files['vslint-capture/manifest.tsv'].decode().splitlines()]
    pool = [f for f in manifest if f[1] == 'array1' and '/pool/' in f[4]]
    if fault == '401':
        assert live[0] == 0 and res.returncode == 0, (live, res.stderr)
        assert [(f[5], f[8]) for f in pool] == [('401', '-'), ('200', '-')], pool
        assert '- %s array1 GET %s: HTTP 401\n' % (pool[0][0], pool[0][4]) in readme
        assert 'The read failed' not in readme
        return
    assert live[0] == 2 and 'array a1' in live[1], live
    assert res.returncode == 2 and 'array a1 (array1): cannot read it' in res.stderr, res.stderr
    assert '## The read failed\n\nIt ended with: array1: /api/types/pool/instances' in readme
    assert len(pool) == 1, pool
    if fault == 'slow':
        assert pool[0][5] == '0' and pool[0][8] == 'timed out after 0 bytes', pool
        return
    if fault == 'huge':
        # An answer larger than the client keeps (64 MiB): the replay serves what vslint
        # kept and more after it, so that the replayed run refuses it as too big too, not
        # as broken JSON cut where the recording stopped.
        assert 'larger than 64 MiB' in live[1], live
        assert pool[0][5] == '200' and pool[0][8].startswith('vslint stopped reading after '), pool
        return
    assert pool[0][8] == '-' and pool[0][5] == ('500' if fault == 'http500' else '200')


def test_anonymized_capture_leaves_no_unanswered_array_host(workspace):
    """An array that never answered teaches the anonymizer nothing, yet its host is in the
    failure curl reports ("Could not resolve host: unity-prod.invalid"), which the README
    quotes: --anonymize replaces (and then removes) every configured host, so neither the
    name nor its first label is in any file of the archive, README included."""
    out = os.path.join(workspace.dir, 'gone.tar.gz')
    with Sim('violations') as sim:
        extra = array_sections(workspace, ['https://unity-prod.invalid/'])
        conf = workspace.write_config([vcenter(workspace, sim.url)], extra, name='gone.conf')
        res = vslint('record', '-c', conf, '--vcenter', 'lab', '--output', out, '--anonymize')
    assert res.returncode == 2, res.stderr
    # The failure names the host where vslint says it (stderr is the user's own terminal).
    assert 'unity-prod.invalid' in res.stderr, res.stderr
    files = members(out)
    readme = files['vslint-capture/README.md'].decode()
    assert '## The read failed\n\nIt ended with: array1: ' in readme, readme
    assert 'Could not resolve host' in readme, readme
    for name, body in files.items():
        assert b'unity-prod' not in body, (name, body[:2000])


def record_status(ws, url, out, arrays=(), array_keys=''):
    """`vslint record` as simlib.record() runs it, whatever its exit status."""
    extra = array_sections(ws, arrays, array_keys)
    conf = ws.write_config([vcenter(ws, url)], extra, name='record-any.conf')
    return vslint('record', '-c', conf, '--vcenter', 'lab', '--output', out)


# What says whose an estate is, besides its names: a host's FQDN has its short name and its
# domain, an e-mail address its domain; each is searched for alone too.
FQDN_RE = re.compile(r'[A-Za-z][A-Za-z0-9-]*(?:\.[A-Za-z0-9-]+){2,}')
EMAIL_RE = re.compile(r'[A-Za-z0-9._%+-]+@([A-Za-z0-9.-]+\.[A-Za-z]+)')


def needles_of(kind, value):
    """(kind, text) pairs to search for, for one identifying value of the truth."""
    out = {(kind, value)}
    for m in EMAIL_RE.finditer(value):
        out.add(('email', m.group(0)))
        out.add(('domain', m.group(1)))
    for m in FQDN_RE.finditer(EMAIL_RE.sub('', value)):
        short, domain = m.group(0).split('.', 1)
        out |= {('fqdn', m.group(0)), ('short name', short), ('domain', domain)}
    if kind == 'nfs_path':
        out |= {('nfs_path part', p) for p in value.split('/') if len(p) > 3}
    return out


def find_leak(text, needle):
    """Where needle is in text, case-insensitively, as a value of its own (not inside a longer
    word): for a name of 3 characters or fewer (`lt`, `id`), only as a whole XML element's or
    JSON string's value, or a datastore path's part, since it is also a word of the API."""
    n = re.escape(needle)
    if len(needle) <= 3:
        rx = r'>%s<|"%s"(?!\s*:)|\[%s\]|/%s[/.]' % (n, n, n, n)
    else:
        rx = r'(?<![A-Za-z0-9])%s(?![A-Za-z0-9])' % n
    m = re.search(rx, text, re.IGNORECASE)
    return text[max(0, m.start() - 80):m.end() + 80] if m else None


def check_as(ws, url, arrays, user, array_user, pwfile, db):
    """`vslint check --format json` of url and arrays with these accounts: the findings, or
    what vslint said when it failed."""
    extra = ''.join('[array a%d]\ntype = unity\nurl = %s\nuser = %s\npassword_file = %s\n\n'
                    % (i + 1, a, array_user, pwfile) for i, a in enumerate(arrays))
    conf = ws.write_config([dict(vcenter(ws, url), user=user, password_file=pwfile)], extra,
                           name=db + '.conf')
    with open(conf) as f:
        text = f.read().replace('path = %s' % ws.db, 'path = %s' % os.path.join(ws.dir, db))
    with open(conf, 'w') as f:
        f.write(text)
    res = vslint('check', '-c', conf, '--format', 'json', '--fail-on', 'never')
    return json.loads(res.stdout)['findings'] if res.returncode == 0 else res.stderr.strip()


def test_anonymized_capture_leaks_nothing_the_estate_says(workspace):
    """The leak hunt, independent of the anonymizer: every identifying value of the leaky
    scenario, as the simulator's own truth lists it (host FQDNs in mixed case, iSCSI aliases,
    VMFS volume labels, the NFS server's DNS name and its path's site, snapshot names and
    descriptions, an alarm's name and e-mail, MACs, addresses, IQNs), with each FQDN's short
    name and domain, and the array's names as its responder lists them, is searched for
    case-insensitively in the whole decompressed archive; so are the password (raw, XML- and
    JSON-escaped; it holds <&">'\\ and non-ASCII), the session cookies and the array's tokens,
    the users and their parts, and the vCenter's configured name. The anonymized capture
    replayed gives the live run's findings, check by check."""
    password = 'pw<&">\'\\ñ€' + secrets.token_hex(6)
    pwfile = workspace.password_file(password, name='leaky-password')
    user = 'svc-vslint-%s@Corp.Example.com' % secrets.token_hex(3)
    array_user = 'unity-op-' + secrets.token_hex(3)
    out = os.path.join(workspace.dir, 'leaky.tar.gz')
    with Sim('leaky', extra=['-password-file', pwfile, '-user', user]) as sim, \
            UnitySim(extra=['-leaky', '-password-file', pwfile, '-user', array_user]) as unity:
        record(workspace, sim.url, out, name='vc-frankfurt-prod', arrays=[unity.url],
               anonymize=True, password=password, user=user, array_user=array_user)
        with urllib.request.urlopen(sim.url.rsplit('/sdk', 1)[0] + '/vslint-sim/sessions',
                                    timeout=30) as r:
            cookies = json.loads(r.read())
        control = unity.control()
        truth = sim.truth()['identifying']
        live = check_as(workspace, sim.url, [unity.url], user, array_user, pwfile, 'live.db')
    kinds = {t['kind'] for t in truth}
    # The scenario plants each of these; the stock names of folders and resource pools
    # (vm, host, Resources) are words of the API, kept by design.
    assert {'host', 'iscsi_alias', 'volume_label', 'nfs_server', 'nfs_path', 'snapshot',
            'snapshot_description', 'email', 'mac', 'vm', 'datastore', 'iqn'} <= kinds, kinds
    needles = set()
    for t in truth:
        if t['kind'] not in ('Folder', 'ResourcePool'):
            needles |= needles_of(t['kind'], t['value'])
    for name in control['names']:
        needles |= needles_of('array object', name)
    assert ('short name', 'ESX-Prod01') in needles and ('domain', 'Corp.Example.com') in needles
    secret_values = [('password', password),
                     ('password, XML-escaped', password.replace('&', '&amp;').replace(
                         '<', '&lt;').replace('>', '&gt;').replace('"', '&quot;').replace(
                         "'", '&apos;')),
                     ('password, XML-escaped', password.replace('&', '&amp;').replace(
                         '<', '&lt;').replace('>', '&gt;').replace('"', '&#34;').replace(
                         "'", '&#39;')),
                     ('password, JSON-escaped', json.dumps(password)[1:-1]),
                     ('password, JSON-escaped', json.dumps(password, ensure_ascii=False)[1:-1]),
                     ('user', user), ('user', user.split('@')[0]),
                     ('user domain', user.split('@')[1]), ('array user', array_user),
                     ('vcenter name', 'vc-frankfurt-prod')]
    secret_values += [('session cookie', c) for c in cookies]
    secret_values += [('array cookie or token', t) for t in control['issued']]
    assert cookies and control['issued']
    with open(out, 'rb') as f:
        whole = gzip.decompress(f.read())
    text = whole.decode('utf-8', 'replace')
    leaks = []
    for kind, value in sorted(needles):
        where = find_leak(text, value)
        if where:
            leaks.append((kind, value, where))
    for kind, value in secret_values:
        if value.encode() in whole or value.lower() in text.lower():
            leaks.append((kind, value, ''))
    with Replay(out) as rep:
        replayed = check_as(workspace, rep.url, [rep.array_url], 'anyone', 'anyone', pwfile,
                            'replay.db')
        log = rep.log()

    def per_check(findings):
        if isinstance(findings, str):
            return findings
        return sorted(collections.Counter(f['check'] for f in findings).items())
    assert isinstance(live, list), live
    assert {'snapshots', 'iscsi-delayed-ack', 'datastore-free-space'} <= {
        f['check'] for f in live}, per_check(live)
    # Both are reported at once: what leaked, and whether the capture still replays.
    problems = ['leak: %s %r: ...%s...' % l for l in leaks]
    if per_check(replayed) != per_check(live):
        problems.append('the replay gives %s, the live run %s' % (per_check(replayed),
                                                                 per_check(live)))
    if 'no recorded answer' in log:
        problems.append('the replay had no answer: ' + log[-1000:])
    assert problems == [], '\n'.join(problems)
