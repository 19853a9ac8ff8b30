"""`vslint config-check --connect`: the probe of each vCenter and array against the real
simulators. Each outcome a user meets the first time vslint sees their vCenter: the certificate
and the trust (a right and a wrong pin, a self-signed and an expired certificate, a CA that
verifies), the login (a wrong password), the reads an account may be refused (esxcli on the
host that refuses it, the alarms), an array that is unreachable; the JSON report parsed; no
password in any output and no database opened."""
import contextlib
import datetime
import hashlib
import json
import os
import socket
import ssl
import threading

import pytest

from simlib import PASSWORD, Sim, UnitySim, vcenter, vslint
from test_arrays import array_section


def probe(conf, *args):
    return vslint('config-check', '-c', conf, '--connect', *args, timeout=300)


def probe_json(conf, *args):
    res = probe(conf, '--format', 'json', *args)
    assert res.stdout.strip(), (res.returncode, res.stderr)
    return res, json.loads(res.stdout)


def problem_lines(res):
    return [l for l in res.stdout.splitlines() if l.startswith('problem: ')]


def fingerprint(pem_path):
    """The SHA-256 fingerprint of a PEM certificate, computed here (not by vslint), in the form
    `openssl x509 -fingerprint -sha256` prints."""
    with open(pem_path) as f:
        der = ssl.PEM_cert_to_DER_cert(f.read())
    d = hashlib.sha256(der).hexdigest().upper()
    return ':'.join(d[i:i + 2] for i in range(0, 64, 2))


def pinned(ws, sim, path=None, **keys):
    """A [vcenter] section for a TLS simulator, its certificate pinned: the probe logs in only
    over TLS."""
    url = sim.url if path is None else sim.url.rsplit('/sdk', 1)[0] + path
    return vcenter(ws, url, thumbprint=fingerprint(sim.cert_path), **keys)


def assert_no_password(res, *passwords):
    for pw in passwords + (PASSWORD,):
        assert pw not in res.stdout and pw not in res.stderr


@pytest.fixture(scope='module')
def violations():
    with Sim('violations', tls=True) as sim:
        yield sim


@pytest.fixture(scope='module')
def clean_tls():
    with Sim('clean', tls=True) as sim:
        yield sim


# The violations scenario: five hosts, esx-san-noesxcli refuses esxcli with NoPermission.

def test_esxcli_refused_on_one_host_is_one_problem_naming_host_config_settings(violations,
                                                                               workspace):
    conf = workspace.write_config([pinned(workspace, violations)])
    res = probe(conf, '--hosts', '100')
    assert res.returncode == 1, res.stdout + res.stderr
    lines = problem_lines(res)
    assert len(lines) == 1, res.stdout
    line = lines[0]
    assert line.startswith('problem: vcenter lab: host esx-san-noesxcli: esxcli: ')
    assert 'NoPermission' in line and 'Host.Config.Settings' in line
    assert 'fix: give the role of user vslint the privilege Host.Config.Settings' in line
    # Every other host's esxcli was read; the refusing one says so in its own line.
    truth = violations.truth()
    hosts = {l.split(':')[0].strip(): l for l in res.stdout.splitlines() if l.startswith('    ')}
    assert sorted(hosts) == sorted(h['name'] for h in truth['hosts'])
    assert 'esxcli NOT READ' in hosts['esx-san-noesxcli']
    assert 'esxcli read' in hosts['esx-san-1']
    assert 'iSCSI bindings read' in hosts['esx-iscsi-a']
    assert 'configuration OK' in res.stdout.splitlines()[0]
    assert res.stdout.splitlines()[-1] == '1 problem'
    # Stores nothing: no database file appears.
    assert not os.path.exists(workspace.db)
    assert_no_password(res)


def test_json_report_counts_what_the_simulator_holds(violations, workspace):
    conf = workspace.write_config([pinned(workspace, violations)])
    res, doc = probe_json(conf, '--hosts', '100')
    assert res.returncode == 1 and doc['status'] == 1
    truth = violations.truth()
    [src] = doc['sources']
    assert src['kind'] == 'vcenter' and src['name'] == 'lab' and src['status'] == 1
    assert src['certificate']['sha256'] == fingerprint(violations.cert_path)
    assert src['trust'] == 'thumbprint' and src['verified'] is True
    assert src['login'] == {'user': 'vslint', 'ok': True}
    assert src['product']['api_version'] and src['product']['version']
    assert src['visible']['hosts'] == len(truth['hosts'])
    assert src['visible']['datastores'] == len(truth['datastores'])
    assert src['visible']['vms'] == len(truth['vms'])
    assert src['hosts']['sampled'] == src['hosts']['visible'] == len(truth['hosts'])
    by_name = {h['name']: h for h in src['hosts']['sample']}
    refused = by_name['esx-san-noesxcli']['esxcli']
    assert refused['read'] is False and 'NoPermission' in refused['error']
    # esxcli's answers on each host: a device per SAN LUN, every claim rule the host has.
    for h in truth['hosts']:
        if h['name'] != 'esx-san-noesxcli':
            got = by_name[h['name']]['esxcli']
            san = [l for l in h['luns'] if l['local'] is not True]
            if got == {'read': False, 'error': None}:  # not asked: a host without SAN LUNs
                assert not san, h['name']
                continue
            assert got['rows'] == len([l for l in h['luns'] if l['local'] is not True]), h['name']
            assert got['claim_rules'] == len(h['satp_rules']), h['name']
    assert src['alarms']['read'] is True and src['alarms']['alarms'] > 0
    [p] = doc['problems']
    assert (p['object'], p['what'], p['privilege']) == ('esx-san-noesxcli', 'esxcli',
                                                        'Host.Config.Settings')
    assert not os.path.exists(workspace.db)


def test_hosts_sample_reads_only_n_hosts(violations, workspace):
    conf = workspace.write_config([pinned(workspace, violations)])
    truth = violations.truth()
    res, doc = probe_json(conf, '--hosts', '2')
    hosts = doc['sources'][0]['hosts']
    assert hosts['sampled'] == 2 and len(hosts['sample']) == 2
    assert hosts['visible'] == len(truth['hosts'])
    # The default: 10 hosts, spread over the list, when there are more.
    assert len(truth['hosts']) > 10
    res = probe(conf)
    assert '  hosts: per-host reads of 10 of %d (a sample: --hosts)' % len(truth['hosts']) in \
        res.stdout.splitlines()
    assert len([l for l in res.stdout.splitlines() if l.startswith('    esx-')]) == 10
    res = probe(conf, '--hosts', 'many')
    assert res.returncode == 2 and '--hosts must be a whole number' in res.stderr


def test_refused_alarms_are_a_problem_naming_system_view(workspace):
    with Sim('clean', tls=True, extra=['-refuse-alarms']) as sim:
        conf = workspace.write_config([pinned(workspace, sim)])
        res = probe(conf)
    assert res.returncode == 1, res.stdout + res.stderr
    [line] = problem_lines(res)
    assert line.startswith('problem: vcenter lab: alarms: ')
    assert 'NoPermission' in line and 'System.View' in line
    assert '  alarms: NOT READ' in res.stdout


def test_wrong_password_exits_2_and_prints_no_password(violations, workspace):
    vc = pinned(workspace, violations)
    vc['password_file'] = workspace.password_file('not-the-password-42', name='bad')
    conf = workspace.write_config([vc])
    res = probe(conf)
    assert res.returncode == 2, res.stdout + res.stderr
    [line] = problem_lines(res)
    assert line.startswith('problem: vcenter lab: login: ') and 'InvalidLogin' in line
    assert 'check user = and the password' in line
    assert '  login: vslint: REFUSED' in res.stdout
    assert_no_password(res, 'not-the-password-42')
    res, doc = probe_json(conf)
    assert doc['status'] == 2 and doc['sources'][0]['login']['ok'] is False
    assert_no_password(res, 'not-the-password-42')


def test_unknown_source_and_options_without_connect(violations, workspace):
    conf = workspace.write_config([pinned(workspace, violations)])
    res = probe(conf, '--vcenter', 'nope')
    assert res.returncode == 2 and "no [vcenter nope] or [array nope]" in res.stderr
    res = vslint('config-check', '-c', conf, '--format', 'json')
    assert res.returncode == 2 and 'options of config-check --connect' in res.stderr


# TLS: the simulator's own self-signed certificate.

def test_self_signed_certificate_is_refused_and_its_printed_thumbprint_pins_it(clean_tls,
                                                                              workspace):
    want = fingerprint(clean_tls.cert_path)
    conf = workspace.write_config([vcenter(workspace, clean_tls.url)])
    res = probe(conf)
    assert res.returncode == 2, res.stdout + res.stderr
    assert '(self-signed)' in res.stdout
    assert '  thumbprint = %s' % want in res.stdout.splitlines()
    [line] = problem_lines(res)
    assert line.startswith('problem: vcenter lab: tls: ') and 'not trusted' in line
    assert 'pin it: thumbprint = %s' % want in line
    # The line it printed, pasted into the section as is, is a pin vslint accepts.
    pinned = [l.strip() for l in res.stdout.splitlines() if l.startswith('  thumbprint = ')][0]
    path = workspace.write_config([vcenter(workspace, clean_tls.url)], name='pinned.conf')
    with open(path) as f:
        text = f.read()
    with open(path, 'w') as f:
        f.write(text.replace('[vcenter lab]\n', '[vcenter lab]\n%s\n' % pinned))
    res = probe(path)
    assert res.returncode == 0, res.stdout + res.stderr
    assert 'the certificate is the pinned one' in res.stdout
    assert res.stdout.splitlines()[-1] == 'everything readable'


def test_wrong_pin_exits_2_naming_the_certificate_shown(clean_tls, workspace):
    want = fingerprint(clean_tls.cert_path)
    conf = workspace.write_config([vcenter(workspace, clean_tls.url,
                                           thumbprint=':'.join(['AB'] * 32))])
    res, doc = probe_json(conf)
    assert res.returncode == 2 and doc['status'] == 2
    src = doc['sources'][0]
    assert src['trust'] == 'thumbprint' and src['verified'] is False
    assert src['certificate']['sha256'] == want and src['certificate']['self_signed'] is True
    [p] = doc['problems']
    assert p['what'] == 'tls' and 'not the pinned thumbprint' in p['cause']
    assert want in p['fix']
    assert 'login' not in src  # nothing was sent to a server that failed the pin


def test_insecure_is_not_verified_nor_refused(clean_tls, workspace):
    """insecure = true judges nothing: verified is null, not true, and the text says so."""
    conf = workspace.write_config([vcenter(workspace, clean_tls.url, insecure='true')])
    res, doc = probe_json(conf)
    src = doc['sources'][0]
    assert src['trust'] == 'insecure' and src['verified'] is None, src
    res = probe(conf)
    assert '  trust: NOT VERIFIED (insecure = true): anyone in the path can pose as this ' \
        'server' in res.stdout.splitlines()


# TLS: certificates made here, served by a TLS front on loopback that relays to a plain-HTTP
# simulator.

def make_certs(d, expired):
    """A CA and a certificate for 127.0.0.1 it signed (expired yesterday when expired): the
    paths (ca, cert, key)."""
    pytest.importorskip('cryptography')
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID
    import ipaddress

    now = datetime.datetime.now(datetime.timezone.utc)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, 'probe test CA')])
    ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name)
          .public_key(ca_key.public_key()).serial_number(x509.random_serial_number())
          .not_valid_before(now - datetime.timedelta(days=30))
          .not_valid_after(now + datetime.timedelta(days=30))
          .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
          .sign(ca_key, hashes.SHA256()))
    key = ec.generate_private_key(ec.SECP256R1())
    until = now - datetime.timedelta(days=1) if expired else now + datetime.timedelta(days=2)
    cert = (x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, 'vcenter.test')]))
            .issuer_name(ca_name).public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(days=10)).not_valid_after(until)
            .add_extension(x509.SubjectAlternativeName(
                [x509.IPAddress(ipaddress.ip_address('127.0.0.1'))]), critical=False)
            .sign(ca_key, hashes.SHA256()))
    paths = [os.path.join(d, n) for n in ('ca.pem', 'cert.pem', 'key.pem')]
    with open(paths[0], 'wb') as f:
        f.write(ca.public_bytes(serialization.Encoding.PEM))
    with open(paths[1], 'wb') as f:
        f.write(cert.public_bytes(serialization.Encoding.PEM))
    with open(paths[2], 'wb') as f:
        f.write(key.private_bytes(serialization.Encoding.PEM,
                                  serialization.PrivateFormat.PKCS8,
                                  serialization.NoEncryption()))
    return paths


class TlsFront:
    """A TLS server on 127.0.0.1 presenting cert, relaying each connection's bytes to the
    plain-HTTP server at url: the simulator behind the certificate a test chose."""

    def __init__(self, cert, key, url, path='/sdk'):
        self.ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.ctx.load_cert_chain(cert, key)
        hostport = url.split('//', 1)[1].split('/', 1)[0]
        host, port = hostport.rsplit(':', 1)
        self.target = (host, int(port))
        self.upstream = 0  # bytes relayed to the simulator: what the client sent past TLS
        self.sock = socket.create_server(('127.0.0.1', 0))
        self.url = 'https://127.0.0.1:%d%s' % (self.sock.getsockname()[1], path)
        threading.Thread(target=self.accept, daemon=True).start()

    def accept(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self.serve, args=(conn,), daemon=True).start()

    def serve(self, conn):
        try:
            tls = self.ctx.wrap_socket(conn, server_side=True)
        except (ssl.SSLError, OSError):
            conn.close()  # the client refused the certificate
            return
        up = socket.create_connection(self.target)
        threading.Thread(target=self.pump, args=(up, tls), daemon=True).start()
        self.pump(tls, up, count=True)

    def pump(self, src, dst, count=False):
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                if count:
                    self.upstream += len(data)
                dst.sendall(data)
        except OSError:
            pass
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def close(self):
        self.sock.close()


@pytest.fixture(scope='module')
def clean_plain():
    with Sim('clean') as sim:
        yield sim


@contextlib.contextmanager
def fronted(sim, ws, expired):
    """The simulator behind a certificate made here (expired or not), signed by a CA made
    here: (url, ca, cert) while the front runs."""
    ca, cert, key = make_certs(ws.dir, expired=expired)
    front = TlsFront(cert, key, sim.url)
    try:
        yield front.url, ca, cert
    finally:
        front.close()


def test_certificate_a_ca_file_verifies(clean_plain, workspace):
    with fronted(clean_plain, workspace, expired=False) as (url, ca, cert):
        res = probe(workspace.write_config([vcenter(workspace, url, ca_file=ca)]))
    assert res.returncode == 0, res.stdout + res.stderr
    assert '  certificate: CN=vcenter.test' in res.stdout.splitlines()
    assert '  issuer: CN=probe test CA' in res.stdout.splitlines()
    assert '  trust: verified with ca_file =' in res.stdout.splitlines()
    assert '  thumbprint = %s' % fingerprint(cert) in res.stdout.splitlines()


def test_expired_certificate_exits_2_and_says_renew(clean_plain, workspace):
    with fronted(clean_plain, workspace, expired=True) as (url, ca, cert):
        res = probe(workspace.write_config([vcenter(workspace, url, ca_file=ca)]))
        # Pinned, the same certificate is accepted (a pin does not judge dates), and the
        # report still shows it expired.
        res_pin = probe(workspace.write_config(
            [vcenter(workspace, url, thumbprint=fingerprint(cert))], name='pin.conf'))
    assert res.returncode == 2, res.stdout + res.stderr
    valid = [l for l in res.stdout.splitlines() if l.startswith('  valid: ')]
    assert len(valid) == 1 and valid[0].endswith('(EXPIRED)')
    [line] = problem_lines(res)
    assert line.startswith('problem: vcenter lab: tls: ') and 'expired' in line
    assert 'fix: renew the certificate' in line
    assert res_pin.returncode == 0, res_pin.stdout + res_pin.stderr
    assert any(l.startswith('  valid: ') and l.endswith('(EXPIRED)')
               for l in res_pin.stdout.splitlines())


# Arrays.

def test_array_pools_luns_ports_match_what_collect_stores(violations, workspace):
    ca, cert, key = make_certs(workspace.dir, expired=False)
    with UnitySim() as u:
        front = TlsFront(cert, key, u.url, path='')
        try:
            conf = workspace.write_config([pinned(workspace, violations)],
                                          extra=array_section(workspace, front.url, ca_file=ca))
            res, doc = probe_json(conf, '--vcenter', 'unity1')
            collected = vslint('collect', '-c', conf, '--vcenter', 'unity1')
        finally:
            front.close()
    assert res.returncode == 0, res.stdout + res.stderr
    [src] = doc['sources']
    assert src['kind'] == 'array' and src['login']['ok'] is True
    read = src['read']
    # `vslint collect` stores the same reads through the database: the counts it prints.
    assert collected.returncode == 0, collected.stderr
    assert ': %d array_pools, %d array_luns\n' % (read['pools'], read['luns']) in collected.stdout
    assert read['pools'] > 0 and read['luns'] > 0 and read['ports'] > 0


def test_unreachable_array_exits_2_with_one_line(violations, workspace):
    s = socket.create_server(('127.0.0.1', 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there now
    conf = workspace.write_config([pinned(workspace, violations)],
                                  extra=array_section(workspace, 'https://127.0.0.1:%d' % port))
    res = probe(conf)
    assert res.returncode == 2, res.stdout + res.stderr
    lines = problem_lines(res)
    arr = [l for l in lines if l.startswith('problem: array unity1: ')]
    assert len(arr) == 1 and 'cannot connect' in arr[0] and 'fix: check url =' in arr[0]
    # The vCenter was probed all the same: its one problem is esxcli's.
    assert [l for l in lines if l.startswith('problem: vcenter lab: ')] == [
        l for l in lines if 'esx-san-noesxcli' in l]
    assert_no_password(res)


def test_a_server_that_never_answers_costs_the_configured_timeout(workspace):
    """A vCenter address that takes the connection but never speaks (the TLS handshake
    stalls): the probe gives up after the section's timeout, not the default 60 s."""
    import time
    s = socket.create_server(('127.0.0.1', 0), backlog=8)  # listening, never accepting
    try:
        url = 'https://127.0.0.1:%d/sdk' % s.getsockname()[1]
        conf = workspace.write_config([vcenter(workspace, url, timeout=2)])
        t0 = time.monotonic()
        res = probe(conf)
        took = time.monotonic() - t0
    finally:
        s.close()
    assert res.returncode == 2, res.stdout + res.stderr
    [line] = problem_lines(res)
    assert line.startswith('problem: vcenter lab: connect: ') and 'timed out' in line
    assert 'timeout = sets how long vslint waits' in line
    assert 2 <= took < 8, took


# Accounts held to a role: the simulator's -account NAME[:ROLE] (tests/sim/authz.go).

def sim_has_accounts():
    import subprocess
    from simlib import VCSIM
    res = subprocess.run([VCSIM, '-help'], capture_output=True, text=True, timeout=30)
    return '-account' in res.stderr + res.stdout


needs_accounts = pytest.mark.skipif(not sim_has_accounts(),
                                    reason='the simulator has no -account (role enforcement)')


@needs_accounts
def test_a_read_only_account_is_told_each_host_s_missing_privileges(workspace):
    """The built-in Read-only role at the root: every host with SAN LUNs refuses esxcli
    (Host.Config.Settings), every host with an iSCSI adapter its port bindings
    (Host.Config.Storage); nothing else is a problem."""
    with Sim('violations', tls=True, extra=['-account', 'ro:ReadOnly']) as sim:
        vc = pinned(workspace, sim)
        vc['user'] = 'ro'
        res, doc = probe_json(workspace.write_config([vc]), '--hosts', '100')
        truth = sim.truth()
    assert res.returncode == 1 and doc['status'] == 1, res.stdout + res.stderr
    got = sorted((p['object'], p['what'], p['privilege']) for p in doc['problems'])
    want = sorted(
        [(h['name'], 'esxcli', 'Host.Config.Settings') for h in truth['hosts']
         if any(l['local'] is not True for l in h['luns'])] +
        [(h['name'], 'iscsi-bindings', 'Host.Config.Storage') for h in truth['hosts']
         if h['iscsi_hbas']])
    assert got == want
    assert all('the privilege %s' % p['privilege'] in p['fix']
               for p in doc['problems'])
    src = doc['sources'][0]
    assert src['visible']['hosts'] == len(truth['hosts'])
    assert src['alarms']['read'] is True


@needs_accounts
def test_an_account_without_a_role_logs_in_and_reads_nothing(workspace):
    """An account vCenter knows but that holds no permission: the login succeeds (exit 1, not
    2), and each read says the privilege it lacks."""
    with Sim('violations', tls=True, extra=['-account', 'nobody']) as sim:
        vc = pinned(workspace, sim)
        vc['user'] = 'nobody'
        res = probe(workspace.write_config([vc]))
    assert res.returncode == 1, res.stdout + res.stderr
    assert '  login: nobody: logged in' in res.stdout.splitlines()
    lines = problem_lines(res)
    assert lines and all('(needs System.' in l for l in lines), res.stdout
    assert any(l.startswith('problem: vcenter lab: hosts: ') for l in lines), res.stdout
    # No host list, so no per-host line pretending there were none.
    assert not any(l.startswith('  hosts: ') for l in res.stdout.splitlines()), res.stdout


@needs_accounts
def test_a_host_the_account_may_not_read_is_a_problem_not_an_empty_host(workspace):
    """No access on one host under Read-only at the root: vCenter lists the host but answers
    none of its properties, and the probe says so instead of reporting its reads as made."""
    from simlib import VimClient
    from test_role import role_id, service_content  # main's, with the simulator's -account
    with Sim('clean', tls=True, extra=['-account', 'ro:ReadOnly']) as sim:
        host = [h for h in sim.truth()['hosts'] if h['name'] == 'esx-clean-01'][0]['moref']
        admin = VimClient(sim.url)
        am = service_content(admin)['authorizationManager'][1]
        admin.call('<SetEntityPermissions><_this type="AuthorizationManager">%s</_this>'
                   '<entity type="HostSystem">%s</entity><permission><principal>ro</principal>'
                   '<group>false</group><roleId>%d</roleId><propagate>true</propagate>'
                   '</permission></SetEntityPermissions>'
                   % (am, host, role_id(admin, am, 'NoAccess')))
        vc = pinned(workspace, sim)
        vc['user'] = 'ro'
        res, doc = probe_json(workspace.write_config([vc]), '--hosts', '100')
    hidden = [p for p in doc['problems'] if p['what'] == 'host']
    assert [(p['object'], p['privilege']) for p in hidden] == [(host, 'System.Read')], doc
    [h] = [h for h in doc['sources'][0]['hosts']['sample'] if h['moref'] == host]
    assert h['read'] is False and 'options' not in h
    assert res.returncode == 1


def test_damaged_database_and_a_rule_do_not_stop_the_probe(violations, workspace):
    """With a [rules] section, the probe parses the rules but opens no database: a damaged
    database file does not stop the vCenter being tried (docs: "opening no database")."""
    from test_rules import rules_dir
    with open(workspace.db, 'wb') as f:
        f.write(b'this is not an SQLite database' * 100)
    before = open(workspace.db, 'rb').read()
    d = rules_dir(workspace, {'datastore-free-floor.sql': None})
    conf = workspace.write_config([pinned(workspace, violations)],
                                  '\n[rules]\ndir = %s\n' % d)
    res, doc = probe_json(conf, '--hosts', '0')
    assert doc['sources'][0]['login'] == {'user': 'vslint', 'ok': True}, res.stderr
    assert open(workspace.db, 'rb').read() == before


def test_url_with_userinfo_is_refused_without_echoing_it(workspace):
    conf = workspace.write_config([vcenter(workspace, 'https://u:s3cr3tpw@vc.example.com/sdk')])
    res = vslint('config-check', '-c', conf)
    assert res.returncode == 2, res.stdout + res.stderr
    assert '[vcenter lab] url: the URL holds a user name or password' in res.stderr
    assert 's3cr3tpw' not in res.stdout + res.stderr
    res = probe(conf)
    assert res.returncode == 2 and 's3cr3tpw' not in res.stdout + res.stderr


def test_http_url_is_warned_about_like_insecure(workspace):
    conf = workspace.write_config([vcenter(workspace, 'http://vc.example.com/sdk')])
    res = vslint('config-check', '-c', conf)
    assert res.returncode == 0, res.stdout + res.stderr
    assert '[vcenter lab] url: warning: http:// sends the password' in res.stderr
    conf = workspace.write_config([vcenter(workspace, 'https://vc.example.com/sdk')])
    assert 'url: warning' not in vslint('config-check', '-c', conf).stderr


def test_a_login_answered_with_an_error_page_is_not_called_refused(violations, workspace):
    """Only the server's no to the user and password is REFUSED; an error page in its place
    is "no usable answer", with the cause."""
    import http.server

    class Broken(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            body = b'<html>proxy error</html>'
            self.send_response(502)
            self.send_header('Content-Length', str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        do_POST = do_GET

        def log_message(self, *args):
            pass

    srv = http.server.ThreadingHTTPServer(('127.0.0.1', 0), Broken)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    ca, cert, key = make_certs(workspace.dir, expired=False)
    front = TlsFront(cert, key, 'http://127.0.0.1:%d' % srv.server_address[1], path='')
    try:
        conf = workspace.write_config([pinned(workspace, violations)],
                                      extra=array_section(workspace, front.url, ca_file=ca))
        res = probe(conf, '--vcenter', 'unity1')
        res_json, doc = probe_json(conf, '--vcenter', 'unity1')
    finally:
        front.close()
        srv.shutdown()
        srv.server_close()
    assert res.returncode == 2, res.stdout + res.stderr
    assert 'REFUSED' not in res.stdout
    [line] = [l for l in res.stdout.splitlines() if l.startswith('  login: ')]
    assert line.startswith('  login: vslint: no usable answer: ') and '502' in line, line
    login = doc['sources'][0]['login']
    assert login['ok'] is False and login['refused'] is False and '502' in login['error']


def test_wrong_pin_sends_nothing_past_the_handshake(clean_plain, workspace):
    """A pin the certificate fails stops the connection before any request: the TLS front
    relays no byte to the simulator (so no password crossed), while a right pin does."""
    ca, cert, key = make_certs(workspace.dir, expired=False)
    front = TlsFront(cert, key, clean_plain.url)
    try:
        res = probe(workspace.write_config([vcenter(workspace, front.url,
                                                    thumbprint=':'.join(['AB'] * 32))]))
        assert res.returncode == 2, res.stdout + res.stderr
        assert front.upstream == 0
        res = probe(workspace.write_config([vcenter(workspace, front.url,
                                                    thumbprint=fingerprint(cert))]))
        assert res.returncode == 0, res.stdout + res.stderr
        assert front.upstream > 0
    finally:
        front.close()


def test_name_mismatch_suggests_the_name_in_url_or_a_pin(clean_plain, workspace):
    """A certificate the CA signed but for another name: the fix is the url = name or a pin,
    not ca_file = (which is already right)."""
    with fronted(clean_plain, workspace, expired=False) as (url, ca, cert):
        url = url.replace('127.0.0.1', 'localhost')  # the certificate is for 127.0.0.1 only
        res = probe(workspace.write_config([vcenter(workspace, url, ca_file=ca)]))
    assert res.returncode == 2, res.stdout + res.stderr
    [line] = problem_lines(res)
    assert line.startswith('problem: vcenter lab: tls: '), line
    fix = line.split('; fix: ', 1)[1]
    assert 'is not for the host in url =' in fix and 'CN=vcenter.test' in fix, fix
    assert 'thumbprint = %s' % fingerprint(cert) in fix and 'ca_file' not in fix


@pytest.mark.parametrize('n', ['-1', '100001', 'x'])
def test_hosts_out_of_range_is_a_usage_error(violations, workspace, n):
    conf = workspace.write_config([pinned(workspace, violations)])
    res = probe(conf, '--hosts', n)
    assert res.returncode == 2, res.stdout + res.stderr
    assert '--hosts' in res.stderr and not res.stdout.strip()


def test_hosts_0_reads_no_host(violations, workspace):
    conf = workspace.write_config([pinned(workspace, violations)])
    res, doc = probe_json(conf, '--hosts', '0')
    hosts = doc['sources'][0]['hosts']
    assert hosts['sampled'] == 0 and hosts['sample'] == [] and hosts['visible'] > 0


def test_a_latin1_byte_in_the_url_keeps_the_source_and_its_problem(violations, workspace):
    """A byte that is not UTF-8 (a Latin-1 é in url =) is shown as '?': the source and its
    problem stay in both reports, which agree with the exit status."""
    conf = workspace.write_config([pinned(workspace, violations, path='/sdk/x')])
    with open(conf, 'rb') as f:
        data = f.read()
    with open(conf, 'wb') as f:
        f.write(data.replace(b'/sdk/x', b'/sdk/\xe9'))
    res, doc = probe_json(conf)
    assert res.returncode == doc['status'] != 0, res.stdout + res.stderr
    [src] = doc['sources']
    assert src['url'].endswith('/sdk/?') and src['status'] == doc['status']
    assert len(doc['problems']) >= 1
    res = probe(conf)
    assert res.returncode == doc['status']
    assert len(problem_lines(res)) == len(doc['problems'])
    assert res.stdout.splitlines()[-1].endswith('problem' if len(doc['problems']) == 1
                                                 else 'problems')


def test_http_url_is_a_problem_and_no_login_is_made(clean_plain, workspace):
    """url = http:// would send the password in clear: the probe says so as a problem, does
    not log in (exit 2), and judges no trust (verified null)."""
    conf = workspace.write_config([vcenter(workspace, clean_plain.url)])
    res = probe(conf)
    assert res.returncode == 2, res.stdout + res.stderr
    [line] = problem_lines(res)
    assert line.startswith('problem: vcenter lab: login: url = is http://: the password would '
                           'cross the network in clear'), line
    assert 'fix: use https://' in line
    assert '  login: ' not in res.stdout
    res, doc = probe_json(conf)
    [src] = doc['sources']
    assert src['certificate'] is None and src['verified'] is None and 'login' not in src
    assert doc['status'] == 2
