"""The e-mail digest, delivered to a real SMTP server on loopback (aiosmtpd) and read back with
Python's MIME parser: both parts present and saying the same, the subject's counts, what is new
and resolved after the simulator's estate changed between two polls, STARTTLS with a test CA and
a login, a refused delivery retried and delivered once, and `vslint serve` sending a missed
digest once on start and nothing twice across a restart."""
import json
import os
import re
import sqlite3
import subprocess
import time
import urllib.request

import pytest

from apilib import Serve, free_port, server_section
from maillib import (TEXT_HEADINGS, MailServer, finding_items_html, finding_items_text,
                     html_sections, parse, sentences_text, make_certificate, text_sections)
from simlib import PASSWORD, Estate, VimClient, display_name, run_ok, vslint

SEVERE = ('warning', 'critical')


def digest_section(server, extra='', url=None):
    """A [digest] section sending through server (or to url)."""
    return ('\n[digest]\nsmtp_url = %s\nfrom = vslint@example.com\n'
            'to = storage@example.com, oncall@example.com\nstarttls = optional\n'
            'public_url = https://vslint.example.com/\ntimezone = UTC\n'
            % (url or server.url)) + extra


@pytest.fixture
def mail():
    servers = []

    def start(**kw):
        servers.append(MailServer(**kw))
        return servers[-1]

    yield start
    for s in servers:
        s.stop()


@pytest.fixture
def est(start_sim, workspace):
    """A violations estate of this test's own, polled once."""
    e = Estate(start_sim('violations'), workspace)
    e.findings = e.check()
    return e


def listed(findings):
    """(check, object, vCenter) of the findings a digest lists: open, unwaived, warning and up."""
    return sorted((x['check'], display_name(x), x['vcenter']) for x in findings
                  if x['status'] in ('new', 'open') and x['severity'] in SEVERE)


def bodies(msg):
    return msg.get_body(('plain',)).get_content(), msg.get_body(('html',)).get_content()


def digests_rows(db):
    con = sqlite3.connect(db)
    try:
        return con.execute('SELECT slot_ms, window_from_ms, window_to_ms FROM digests'
                           ' ORDER BY id').fetchall()
    finally:
        con.close()


def test_digest_parts_agree_and_count(est, mail):
    server = mail()
    conf = est.config(digest_section(server))
    run_ok('digest', '-c', conf)
    assert len(server.messages) == 1
    mail_from, rcpt, raw = server.messages[0]
    assert mail_from == 'vslint@example.com'
    assert sorted(rcpt) == ['oncall@example.com', 'storage@example.com']
    msg = parse(raw)
    for h in ('Date', 'Message-ID', 'MIME-Version', 'From', 'To', 'Subject'):
        assert msg[h], h
    assert msg.get_content_type() == 'multipart/alternative'
    assert [p.get_content_type() for p in msg.iter_parts()] == ['text/plain', 'text/html']
    for p in msg.iter_parts():
        assert p['Content-Transfer-Encoding'] == 'quoted-printable'
    # RFC 5322: 7-bit, every line within 78 characters (998 is the hard limit).
    for line in raw.split(b'\r\n'):
        assert len(line) <= 78, line
        assert max(line or b'\0') < 128

    want = listed(est.findings)
    crit = sum(1 for x in est.findings
               if x['status'] in ('new', 'open') and x['severity'] == 'critical')
    assert want and crit
    # The first digest: everything open is new, nothing resolved yet.
    assert str(msg['Subject']) == 'vslint: %d new, 0 resolved, %d open (%d critical)' % (
        len(want), len(want), crit)

    text, html = bodies(msg)
    assert max(len(l) for l in text.splitlines()) <= 80
    ts, hs = text_sections(text), html_sections(html)
    assert hs.scripts == 0 and hs.remote == []
    assert sorted(finding_items_text(ts['new'])) == want
    assert sorted(finding_items_html(hs, 'new')) == want
    # Open findings: the same objects in both parts, grouped under their checks.
    open_html = sorted(o for o in hs.sections['open']['objects'] if o)
    checks = {x[0] for x in want}
    # "    * NAME (VCENTER): message": the name may hold " (" itself ("datastore1 (esx-01)").
    open_text = sorted(re.match(r'\* (.*) \([^()]+\): ', l.strip()).group(1) for l in ts['open']
                       if l.startswith('    * '))
    assert open_text == open_html == sorted(x[1] for x in want)
    for c in checks:
        assert any(l.startswith('  %s: ' % c) for l in ts['open']), c
    # The sentences of the sections without items agree too.
    assert sentences_text(ts['resolved']).endswith('Nothing was fixed.')
    assert 'Nothing was fixed.' in hs.sections['resolved']['sentences']
    assert 'All 1 vCenter polled on time.' in sentences_text(ts['vcenters'])
    assert 'All 1 vCenter polled on time.' in hs.sections['vcenters']['sentences']
    runway_text = sentences_text(ts['runway'])
    assert runway_text in hs.sections['runway']['sentences'] or hs.sections['runway']['rows']
    # The score as docs/openapi.yaml defines it, from the findings and the stored objects.
    inv = est.inventory()['vcenters'][0]
    objects = len(inv['datastores']) + len(inv['hosts']) + len(inv['vms'])
    unwaived = [x for x in est.findings if x['status'] in ('new', 'open')]
    penalty = sum({'critical': 10, 'warning': 3, 'info': 1}[x['severity']] for x in unwaived)
    score = round(100 * (1 - min(1, penalty / (10 * objects))))
    assert 'Score %d of 100 (the first digest' % score in sentences_text(ts['score'])
    assert any(s.startswith('Score %d of 100' % score) for s in hs.sections['score']['sentences'])
    # Links to the dashboard's filtered views (web/app.js reads the fragment).
    assert 'https://vslint.example.com/#status=new' in text
    assert 'href="https://vslint.example.com/#check=' in html
    # One digest recorded, its window ending at the send.
    rows = digests_rows(est.ws.db)
    assert len(rows) == 1 and rows[0][0] is None and rows[0][1] == 0


def test_changes_between_polls_are_new_and_resolved(est, mail):
    server = mail()
    conf = est.config(digest_section(server))
    run_ok('digest', '-c', conf)
    before = {(x['check'], display_name(x)) for x in est.findings}
    assert ('snapshots', 'vm-snap-old') in before
    assert ('datastore-free-space', 'ds-crowded') not in before

    # An admin deletes vm-snap-old's snapshots; ds-crowded fills to 20 % free.
    inv = est.inventory()
    vm = [v for vc in inv['vcenters'] for v in vc['vms'] if v['name'] == 'vm-snap-old'][0]
    assert VimClient(est.sim.url).remove_all_snapshots(vm['moref']) == 'success'
    req = urllib.request.Request(est.sim.url.replace('/sdk', '/vslint-sim/datastore?')
                                 + 'name=ds-crowded&free_pct=20', data=b'', method='POST')
    with urllib.request.urlopen(req, timeout=30) as r:
        assert r.status == 204
    est.check()

    run_ok('digest', '-c', conf)
    assert len(server.messages) == 2
    msg = server.parsed(1)
    text, html = bodies(msg)
    ts, hs = text_sections(text), html_sections(html)
    new = [('datastore-free-space', 'ds-crowded', 'lab')]
    resolved = [('snapshots', 'vm-snap-old', 'lab')]
    assert finding_items_text(ts['new']) == new
    assert finding_items_html(hs, 'new') == new
    assert finding_items_text(ts['resolved']) == resolved
    assert finding_items_html(hs, 'resolved') == resolved
    n_open = len(listed(est.check('--offline')))
    assert str(msg['Subject']).startswith('vslint: 1 new, 1 resolved, %d open (' % n_open)
    # The second window starts where the first ended.
    rows = digests_rows(est.ws.db)
    assert len(rows) == 2 and rows[1][1] == rows[0][2]


def test_dry_run_prints_and_records_nothing(est, mail):
    server = mail()
    conf = est.config(digest_section(server))
    res = run_ok('digest', '-c', conf, '--dry-run')
    msg = parse(res.stdout.encode())
    assert msg.get_content_type() == 'multipart/alternative'
    assert str(msg['Subject']).startswith('vslint: %d new' % len(listed(est.findings)))
    time.sleep(0.5)
    assert server.messages == [] and digests_rows(est.ws.db) == []


def test_object_names_cannot_forge_the_plain_text(est, mail):
    """Anyone who may name a VM writes into the digest: a name with newlines must not start a
    line of the plain-text part, where it could print a fake section or item. Its control
    characters are shown escaped, on the item's own line; the Subject stays one line of
    counts."""
    # (XML 1.0 cannot carry ESC and the like; tests/unit/test_digest.c has them.)
    forged = 'web01\n\nRESOLVED (12)\n  * [critical] datastore-free-space: ALL FIXED\r\tend'
    # 4 disks on an LSI Logic controller: a pvscsi-controller finding (info) on that VM.
    est.sim.control('vm', name=forged, host='esx-clean-01', datastore='ds-clean-01', disks=4,
                    controller='lsilogic')
    findings = est.check()
    assert forged in {display_name(x) for x in findings}, \
        [display_name(x) for x in findings if 'web01' in display_name(x)]
    server = mail()
    conf = est.config(digest_section(server, 'min_severity = info\n'))
    res = run_ok('digest', '-c', conf, '--dry-run')
    msg = parse(res.stdout.encode())
    text, html = bodies(msg)
    headings = set(TEXT_HEADINGS.values())
    for line in text.splitlines():
        if line and not line.startswith(' '):
            head = re.sub(r' \(\d+\)$', '', line)
            head = re.sub(r', [A-Z]+ AND ABOVE$', '', head)
            assert head in headings or line == '-- ' or line.startswith(
                ('vslint', 'Since the previous', 'The first digest', 'Score ', 'Dashboard: ')), \
                'a line of the text part not written by vslint: %r' % line
        # Nor at any indent: the forged heading and item never start a line.
        assert not line.lstrip().startswith(('RESOLVED (12)', '* [critical] datastore-free-space: '
                                             'ALL FIXED')), line
        assert '\t' not in line and '\r' not in line
    escaped = 'web01\\n\\nRESOLVED (12)\\n  * [critical] datastore-free-space: ALL FIXED\\r\\tend'
    # In the new section the item is wrapped (its continuation lines indented), in the open
    # section the name is written whole.
    assert '  * [info] pvscsi-controller: web01\\n\\nRESOLVED (12)\\n' in text, text
    assert '    * ' + escaped + ' (lab): ' in text, text
    # The Subject is the counts, on one line; the HTML part escapes the name its own way.
    assert '\n' not in str(msg['Subject']) and str(msg['Subject']).startswith('vslint: ')
    assert 'RESOLVED (12)' in html and '<h2 id="resolved"' in html
    assert html.count('<h2 id="resolved"') == 1


def test_starttls_optional_with_a_password_is_refused(workspace, mail):
    """starttls = optional with SMTP credentials would let whoever strips STARTTLS from the
    server's answer be offered the password in plain text: config-check refuses it, naming the
    key and its line; over smtps://, or without credentials, optional is accepted."""
    pw = workspace.password_file('smtp-pw', name='smtp.password')
    vc = [dict(name='lab', url='https://vc/sdk', user='u', password_file=workspace.password_file())]
    digest = ('[digest]\nsmtp_url = %s\nfrom = vslint@example.com\nto = storage@example.com\n'
              'starttls = optional\n%s')
    conf = workspace.write_config(vc, digest % ('smtp://127.0.0.1:25',
                                                'user = digest\npassword_file = %s\n' % pw))
    with open(conf) as f:
        lineno = f.read().splitlines().index('starttls = optional') + 1
    res = vslint('config-check', '-c', conf)
    assert res.returncode == 2
    assert '%s:%d: [digest] starttls: optional is refused with user= and password_file=' % (
        conf, lineno) in res.stderr, res.stderr
    assert 'in plain text' in res.stderr
    # And so is `vslint digest`: nothing is sent.
    server = mail()
    conf2 = workspace.write_config(vc, digest % (server.url, 'user = digest\npassword_file = %s\n'
                                                 % pw), name='send.conf')
    res = vslint('digest', '-c', conf2)
    assert res.returncode == 2 and 'starttls: optional is refused' in res.stderr, res.stderr
    assert server.messages == [] and server.logins == []
    for url, extra in (('smtps://127.0.0.1:465', 'user = digest\npassword_file = %s\n' % pw),
                       ('smtp://127.0.0.1:25', '')):
        conf = workspace.write_config(vc, digest % (url, extra), name='ok.conf')
        res = vslint('config-check', '-c', conf)
        assert res.returncode == 0, res.stderr


def test_starttls_with_a_test_ca_and_login(est, mail):
    ca, cert, key = make_certificate(est.ws.dir)
    server = mail(tls=(cert, key), user='digest-user', password='smtp-Secr3t-pw')
    pw = est.ws.password_file('smtp-Secr3t-pw', name='smtp.password')
    # Without the CA the certificate is refused, nothing is delivered and nothing recorded.
    extra = 'user = digest-user\npassword_file = %s\nattempts = 1\n' % pw
    conf = est.config(digest_section(server, extra).replace('starttls = optional\n', ''),
                      name='noca.conf')
    res = vslint('digest', '-c', conf)
    assert res.returncode == 2
    assert 'giving up' in res.stderr
    assert server.messages == [] and digests_rows(est.ws.db) == []

    conf = est.config(digest_section(server, extra + 'ca_file = %s\n' % ca)
                      .replace('starttls = optional\n', ''), name='tls.conf')
    res = run_ok('digest', '-c', conf, '-v')
    assert len(server.messages) == 1
    assert server.logins[-1] == ('digest-user', 'smtp-Secr3t-pw')
    raw = server.messages[0][2]
    # The password is nowhere but on the wire, inside TLS.
    assert b'smtp-Secr3t-pw' not in raw
    assert 'smtp-Secr3t-pw' not in res.stderr + res.stdout
    for f in os.listdir(est.ws.dir):
        if f.startswith('vslint.db'):
            with open(os.path.join(est.ws.dir, f), 'rb') as fh:
                assert b'smtp-Secr3t-pw' not in fh.read(), f


def test_starttls_required_refuses_a_plain_server(est, mail):
    server = mail()
    conf = est.config(digest_section(server, 'attempts = 1\n')
                      .replace('starttls = optional\n', 'starttls = required\n'))
    res = vslint('digest', '-c', conf)
    assert res.returncode == 2
    assert 'STARTTLS' in res.stderr or 'TLS' in res.stderr, res.stderr
    assert server.messages == [] and digests_rows(est.ws.db) == []


def test_refused_then_accepted_is_delivered_once(est, mail):
    server = mail(refuse=2)
    conf = est.config(digest_section(server, 'retry_min = 1\nretry_max = 2\nattempts = 4\n'))
    res = run_ok('digest', '-c', conf)
    assert server.refused == 2
    assert len(server.messages) == 1
    failures = [l for l in res.stderr.splitlines() if 'delivery to' in l]
    assert len(failures) == 2, res.stderr
    assert 'attempt 1' in failures[0] and 'retrying in 1 s' in failures[0]
    assert 'attempt 2' in failures[1] and 'retrying in 2 s' in failures[1]
    assert '451' in failures[0]
    assert len(digests_rows(est.ws.db)) == 1


def test_refused_every_time_loses_nothing(est, mail):
    server = mail(refuse=10)
    conf = est.config(digest_section(server, 'retry_min = 1\nattempts = 2\n'))
    res = vslint('digest', '-c', conf)
    assert res.returncode == 2 and server.messages == []
    assert digests_rows(est.ws.db) == []
    # The next digest covers the same window: everything is still new.
    server2 = mail()
    run_ok('digest', '-c', est.config(digest_section(server2), name='second.conf'))
    assert str(server2.parsed()['Subject']).startswith(
        'vslint: %d new' % len(listed(est.findings)))


def wait_for(cond, timeout):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if cond():
            return True
        time.sleep(0.2)
    return cond()


def test_serve_sends_a_missed_digest_once_and_not_again_after_restart(est, mail):
    server = mail()
    # The daemon last sent the digest due yesterday at at=, then was down when today's was due
    # two minutes ago.
    now = time.time()
    slot = int((now - 120) // 60 * 60)
    at = time.strftime('%H:%M', time.gmtime(slot))
    yesterday_ms = (slot - 86400) * 1000
    con = sqlite3.connect(est.ws.db)
    con.execute('INSERT INTO digests (slot_ms, window_from_ms, window_to_ms, sent_ms, score)'
                ' VALUES (?, ?, ?, ?, 90)', (yesterday_ms, yesterday_ms - 86400000,
                                             yesterday_ms, yesterday_ms))
    con.commit()
    con.close()
    port = free_port()
    conf = est.config(server_section(port) + digest_section(server, 'at = %s\n' % at),
                      name='serve.conf')
    for run in (1, 2):
        srv = Serve(conf, port, est.ws.dir)
        try:
            if run == 1:
                assert wait_for(lambda: len(server.messages) == 1, 60)
            else:
                time.sleep(4)  # time enough to send it again, which it must not
        finally:
            srv.proc.send_signal(15)
            srv.proc.wait(timeout=60)
        assert len(server.messages) == 1, run
    with open(srv.log_path) as f:
        log = f.read()
    assert 'was not sent; sending it now' not in log  # the second start missed nothing
    rows = digests_rows(est.ws.db)
    assert len(rows) == 2
    assert rows[1][0] == slot * 1000 and rows[1][1] == yesterday_ms
    msg = server.parsed(0)
    assert 'Score' in str(msg.get_body(('plain',)).get_content())
    text = msg.get_body(('plain',)).get_content()
    assert 'since the previous digest (90)' in text or 'unchanged since the previous' in text


BAD_DIGEST = [
    ('smtp_url = http://mail.example.com', 'smtp_url', "is not an smtp:// or smtps:// URL"),
    ('starttls = maybe', 'starttls', "is not required or optional"),
    ('to = storage@example.com, not an address', 'to',
     "'not an address' is not an e-mail address"),
    ('to = ,', 'to', 'no address'),
    ('from = vslint', 'from', 'is not an e-mail address'),
    ('at = 25:00', 'at', 'is not a time of day HH:MM'),
    ('at = 6:30', 'at', 'is not a time of day HH:MM'),
    ('timezone = Mars/Olympus_Mons', 'timezone', 'is not a time zone of /usr/share/zoneinfo'),
    ('timezone = ../../etc/passwd', 'timezone', 'is not a time zone'),
    ('min_severity = loud', 'min_severity', 'is not info, warning or critical'),
    ('send_when_empty = perhaps', 'send_when_empty', 'is not true or false'),
    ('password_file = /nonexistent/pw', 'password_file', 'cannot read /nonexistent/pw'),
    ('retry_min = 0', 'retry_min', 'is not a whole number from 1 to 86400'),
]


@pytest.mark.parametrize('line,key,problem', BAD_DIGEST, ids=[b[1] + ':' + b[0] for b in BAD_DIGEST])
def test_config_check_names_the_bad_key_and_line(workspace, line, key, problem):
    conf = workspace.write_config(
        [dict(name='lab', url='https://vc/sdk', user='u', password_file=workspace.password_file())],
        '[digest]\nsmtp_url = smtp://127.0.0.1:25\nfrom = vslint@example.com\n'
        'to = storage@example.com\n' + line + '\n')
    with open(conf) as f:
        lineno = f.read().splitlines().index(line) + 1
    res = vslint('config-check', '-c', conf)
    assert res.returncode == 2
    assert '%s:%d: [digest] %s: ' % (conf, lineno, key) in res.stderr, res.stderr
    assert problem in res.stderr, res.stderr


def test_config_check_wants_the_required_keys(workspace):
    conf = workspace.write_config(
        [dict(name='lab', url='https://vc/sdk', user='u', password_file=workspace.password_file())],
        '[digest]\nuser = mailer\n')
    res = vslint('config-check', '-c', conf)
    assert res.returncode == 2
    for key in ('smtp_url', 'from', 'to', 'password_file'):
        assert '[digest] %s: missing' % key in res.stderr, res.stderr
    good = workspace.write_config(
        [dict(name='lab', url='https://vc/sdk', user='u', password_file=workspace.password_file())],
        '[digest]\nsmtp_url = smtps://mail.example.com\nfrom = vslint@example.com\n'
        'to = a@example.com,b@example.com\nat = 07:05\ntimezone = America/New_York\n'
        'min_severity = critical\n', name='good.conf')
    res = vslint('config-check', '-c', good)
    assert res.returncode == 0 and 'configuration OK' in res.stdout, res.stderr


def test_digest_without_a_digest_section(est):
    res = vslint('digest', '-c', est.conf)
    assert res.returncode == 2
    assert 'has no [digest] section' in res.stderr


def test_server_down_then_up_is_delivered_once(est, mail):
    """A refused connection (nothing listening yet) is retried until the server is back."""
    import threading
    port = free_port()
    conf = est.config(digest_section(None, 'retry_min = 1\nretry_max = 1\nattempts = 10\n',
                                     url='smtp://127.0.0.1:%d' % port))
    started = []

    def later():
        time.sleep(2.5)
        started.append(MailServer(port=port))

    t = threading.Thread(target=later)
    t.start()
    res = run_ok('digest', '-c', conf)
    t.join()
    try:
        assert len(started[0].messages) == 1
        failures = [l for l in res.stderr.splitlines() if 'delivery to' in l]
        assert failures and all('retrying in 1 s' in l for l in failures), res.stderr
        assert 'onnect' in failures[0], failures[0]
        assert len(digests_rows(est.ws.db)) == 1
    finally:
        started[0].stop()


def test_only_what_was_seen_fixed_is_resolved(est, mail):
    """A host whose esxcli is refused keeps its findings (unverified), and a disabled check's
    findings are closed as "disabled": neither is a fix, so the next digest resolves nothing."""
    server = mail()
    conf = est.config(digest_section(server))
    run_ok('digest', '-c', conf)
    assert ('snapshots', 'vm-snap-old') in {(x['check'], display_name(x)) for x in est.findings}
    req = urllib.request.Request(est.sim.url.replace('/sdk', '/vslint-sim/host?')
                                 + 'name=esx-san-1&esxcli=refuse', data=b'', method='POST')
    with urllib.request.urlopen(req, timeout=30) as r:
        assert r.status == 204
    off = est.config(digest_section(server, '\n[check snapshots]\nenabled = false\n'),
                     name='off.conf')
    after = est.check(conf=off)
    assert not any(x['check'] == 'snapshots' for x in after)
    run_ok('digest', '-c', off)
    msg = server.parsed(1)
    text, html = bodies(msg)
    ts, hs = text_sections(text), html_sections(html)
    assert finding_items_text(ts['resolved']) == []
    assert finding_items_html(hs, 'resolved') == []
    assert 'Nothing was fixed.' in hs.sections['resolved']['sentences']
    assert ' 0 resolved, ' in str(msg['Subject'])
    # What the refused host brings is the host-coverage warning, and nothing else is new.
    new = finding_items_text(ts['new'])
    assert new == finding_items_html(hs, 'new')
    assert {c for c, _, _ in new} <= {'host-coverage'}, new


def test_serve_sends_at_the_time_of_day(est, mail):
    """at= the next minute (in a zone far from UTC, to show the zone is used): the daemon sends
    once when it comes, records that slot, and a restart right after sends nothing."""
    server = mail()
    tz = 'Asia/Kolkata'  # UTC+05:30, no daylight saving
    now = time.time()
    slot = (int(now) // 60 + 1) * 60
    if slot - now < 10:
        slot += 60
    at = time.strftime('%H:%M', time.gmtime(slot + 5 * 3600 + 1800))
    port = free_port()
    conf = est.config(server_section(port) + digest_section(server, 'at = %s\n' % at)
                      .replace('timezone = UTC', 'timezone = ' + tz), name='serve.conf')
    srv = Serve(conf, port, est.ws.dir)
    try:
        time.sleep(max(0, slot - time.time() - 3))
        assert server.messages == []  # not before its time
        assert wait_for(lambda: len(server.messages) == 1, 30)
        sent_at = time.time()
        assert sent_at >= slot
    finally:
        srv.proc.send_signal(15)
        srv.proc.wait(timeout=60)
    rows = digests_rows(est.ws.db)
    assert len(rows) == 1 and rows[0][0] == slot * 1000
    srv = Serve(conf, port, est.ws.dir)
    try:
        time.sleep(4)
    finally:
        srv.proc.send_signal(15)
        srv.proc.wait(timeout=60)
    assert len(server.messages) == 1 and len(digests_rows(est.ws.db)) == 1
