"""A real SMTP server on loopback for the digest tests (Debian's python3-aiosmtpd), and a reader
of the digest as a mail client sees it: Python's standard MIME parser (email.policy.default),
and the sections of its plain text and HTML parts."""
import email
import email.policy
import html.parser
import os
import re
import ssl
import subprocess
import threading

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult

from apilib import free_port


class MailServer:
    """aiosmtpd on 127.0.0.1. refuse=N answers the first N messages 451 (try again later);
    tls=(cert, key) offers STARTTLS and requires it; user/password require that login."""

    def __init__(self, refuse=0, tls=None, user=None, password=None, port=None):
        self.messages = []  # (mail_from, rcpt_tos, raw bytes), in order of arrival
        self.refused = 0
        self.logins = []    # (login, password) each AUTH presented
        self._refuse = refuse
        self._user, self._password = user, password
        self.lock = threading.Lock()
        self.port = port or free_port()
        kw = {}
        if tls:
            ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
            ctx.load_cert_chain(*tls)
            kw.update(tls_context=ctx, require_starttls=True)
        if user:
            kw.update(authenticator=self._auth, auth_required=True)
        self.controller = Controller(self, hostname='127.0.0.1', port=self.port, **kw)
        self.controller.start()
        self.url = 'smtp://127.0.0.1:%d' % self.port

    def _auth(self, server, session, envelope, mechanism, auth_data):
        login = auth_data.login.decode() if auth_data.login else ''
        password = auth_data.password.decode() if auth_data.password else ''
        with self.lock:
            self.logins.append((login, password))
        return AuthResult(success=login == self._user and password == self._password)

    async def handle_DATA(self, server, session, envelope):
        with self.lock:
            if self._refuse > 0:
                self._refuse -= 1
                self.refused += 1
                return '451 4.3.0 Mailbox busy, try again later'
            self.messages.append((envelope.mail_from, list(envelope.rcpt_tos),
                                  bytes(envelope.original_content or envelope.content)))
        return '250 OK'

    def parsed(self, i=-1):
        return parse(self.messages[i][2])

    def stop(self):
        self.controller.stop()


def parse(raw):
    return email.message_from_bytes(raw, policy=email.policy.default)


def make_certificate(workdir):
    """A CA and a certificate for 127.0.0.1 signed by it (openssl): (ca, cert, key) paths."""
    ca_key, ca = os.path.join(workdir, 'ca.key'), os.path.join(workdir, 'ca.pem')
    key, csr, cert = (os.path.join(workdir, n) for n in ('smtp.key', 'smtp.csr', 'smtp.pem'))
    ext = os.path.join(workdir, 'ext.cnf')
    with open(ext, 'w') as f:
        f.write('subjectAltName = IP:127.0.0.1, DNS:localhost\n')

    def run(*args):
        subprocess.run(['openssl'] + list(args), check=True, capture_output=True)

    run('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', ca_key, '-out', ca,
        '-days', '2', '-subj', '/CN=vslint test CA')
    run('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', csr,
        '-subj', '/CN=127.0.0.1')
    run('x509', '-req', '-in', csr, '-CA', ca, '-CAkey', ca_key, '-CAcreateserial',
        '-out', cert, '-days', '2', '-extfile', ext)
    return ca, cert, key


class _Html(html.parser.HTMLParser):
    """The digest's HTML as a reader sees it: per section (each <h2 id>), its table rows as
    lists of cell texts, the bold text of each row (the object), and its sentences (<p>)."""

    def __init__(self):
        super().__init__()
        self.sections = {}
        self.cur = None
        self.row = self.cell = self.strong = self.para = None
        self.scripts = 0
        self.remote = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == 'script':
            self.scripts += 1
        for k in ('src', 'background'):
            if a.get(k):
                self.remote.append(a[k])
        if tag == 'link':
            self.remote.append(a.get('href'))
        if tag == 'h2':
            self.cur = a.get('id')
            self.sections[self.cur] = {'rows': [], 'objects': [], 'sentences': []}
        elif tag == 'tr':
            self.row = []
            self.strong_text = None
        elif tag == 'td' and self.row is not None:
            self.cell = ''
        elif tag == 'strong':
            self.strong = ''
        elif tag == 'p':
            self.para = ''

    def handle_endtag(self, tag):
        sec = self.sections.get(self.cur)
        if tag == 'td' and self.cell is not None and self.row is not None:
            self.row.append(self.cell.strip())
            self.cell = None
        elif tag == 'tr' and self.row is not None:
            if sec is not None and self.row:
                sec['rows'].append(self.row)
                sec['objects'].append(self.strong_text)
            self.row = None
        elif tag == 'strong' and self.strong is not None:
            self.strong_text = self.strong.strip()
            self.strong = None
        elif tag == 'p' and self.para is not None:
            if sec is not None:
                sec['sentences'].append(' '.join(self.para.split()))
            self.para = None

    def handle_data(self, data):
        if self.cell is not None:
            self.cell += data
        if self.strong is not None:
            self.strong += data
        if self.para is not None:
            self.para += data


def html_sections(text):
    p = _Html()
    p.feed(text)
    return p


def finding_items_html(sections, sid):
    """(check, object, vcenter) of each row of a new/resolved table: severity, check, object
    (bold) with its vCenter under it, message."""
    sec = sections.sections[sid]
    out = []
    for row, obj in zip(sec['rows'], sec['objects']):
        vc = row[2][len(obj):].strip()
        out.append((row[1], obj, vc))
    return out


TEXT_HEADINGS = {
    'vcenters': 'VCENTERS THAT FAILED TO POLL OR ARE STALE',
    'new': 'NEW SINCE THE PREVIOUS DIGEST',
    'resolved': 'RESOLVED SINCE THE PREVIOUS DIGEST',
    'open': 'OPEN FINDINGS',
    'waivers': 'WAIVERS EXPIRING IN THE NEXT 14 DAYS',
    'runway': 'DATASTORES WITH THE SHORTEST RUNWAY',
    'score': 'SCORE',
}


def text_sections(text):
    """{section id: [lines]} of the plain text part, by its upper-case headings."""
    by_heading = {v: k for k, v in TEXT_HEADINGS.items()}
    out, cur = {}, None
    for line in text.splitlines():
        if line and not line.startswith(' '):
            head = re.sub(r' \(\d+\)$', '', line)
            head = re.sub(r', [A-Z]+ AND ABOVE$', '', head)
            if head in by_heading:
                cur = by_heading[head]
                out[cur] = []
                continue
            if line == '-- ':
                cur = None
        if cur:
            out[cur].append(line)
    return out


def finding_items_text(lines):
    """(check, object, vcenter) of each "  * [severity] check: object (vcenter)" item, its
    heading continued on lines indented by 4."""
    items, cur = [], None
    for line in lines + ['']:
        if line.startswith('  * ['):
            cur = line[4:]
            continue
        if cur is not None and line.startswith('    ') and not line.startswith('      '):
            cur += ' ' + line.strip()
            continue
        if cur is not None:
            m = re.match(r'\[(\w+)\] ([\w-]+): (.*) \(([^()]+)\)$', cur)
            assert m, cur
            items.append((m.group(2), m.group(3), m.group(4)))
            cur = None
    return items


def sentences_text(lines):
    """The two-space indented sentences of a section that has no items, joined."""
    return ' '.join(' '.join(l.split()) for l in lines if l.strip())
