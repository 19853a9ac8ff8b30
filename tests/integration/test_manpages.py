"""The man pages and the bash completion against the code: every command, option and
configuration key the binary knows is in vslint(1) / vslint.conf(5), and everything the pages
name is something the binary accepts; the completion offers exactly the commands, each
command's options, the --format values, check ids and vCenter names. What the binary knows is
asked of the binary itself (its overview, getopt's refusals, the configuration loader's
"known keys" messages); the pages are the roff the build made (docs/man/)."""
import json
import os
import re
import string
import subprocess
import tempfile

import pytest

from simlib import VSLINT, vslint

SOURCE_ROOT = os.environ.get('SOURCE_ROOT', '.')
MAN_DIR = os.path.join(os.path.dirname(os.path.abspath(VSLINT)), 'docs', 'man')
COMPLETION = os.path.join(SOURCE_ROOT, 'dist', 'bash-completion', 'vslint')
BASH_COMPLETION = '/usr/share/bash-completion/bash_completion'


def roff_sections(page):
    """{section name: plain text lines} of a built man page (roff from scdoc)."""
    path = os.path.join(MAN_DIR, page)
    assert os.path.exists(path), '%s was not built (scdoc missing? scripts/install-deps.sh)' % path
    sections, cur = {}, None
    with open(path, encoding='utf-8') as f:
        for line in f:
            line = line.rstrip('\n')
            m = re.match(r'^\.S[HS] (.*)$', line)
            if m:
                cur = plain(m.group(1)).strip('"')
                sections[cur] = []
            elif cur is not None:
                sections[cur].append(line)
    return sections


def plain(s):
    s = re.sub(r'\\f[BIRP]', '', s)
    return s.replace('\\&', '').replace('\\-', '-').replace('\\(em', '-').replace('\\e', '\\')


def items(lines):
    """The tagged items of a section (scdoc writes each one's term, then its text in .RS), as
    plain text."""
    return [plain(line) for i, line in enumerate(lines[:-1])
            if lines[i + 1].startswith('.RS') and not line.startswith('.')]


# ---- the binary's view ----------------------------------------------------------------------

def commands():
    """The commands `vslint --help` lists."""
    out = vslint('--help').stdout
    block = out.split('Commands:\n', 1)[1].split('\n\n', 1)[0]
    return [line.split()[0] for line in block.splitlines() if line.strip()]


def source_long_options():
    """Long options in the getopt tables of the code: the candidates to try on each command."""
    found = set()
    for top, dirs, files in os.walk(SOURCE_ROOT):
        dirs[:] = [d for d in dirs if d not in ('tests', 'build', 'build-asan', 'node_modules')
                   and not d.startswith('.')]
        for name in files:
            if name.endswith('.c'):
                with open(os.path.join(top, name), encoding='utf-8', errors='replace') as f:
                    found |= set(re.findall(r'\{"([a-z][a-z-]*)",\s*(?:no|required|optional)_argument',
                                            f.read()))
    return found


def accepts(cmd, opt, tmp):
    """Whether `vslint CMD OPT ARG` gets past getopt (any later error is fine)."""
    res = subprocess.run([VSLINT, cmd, opt, os.path.join(tmp, 'nonexistent')],
                         capture_output=True, text=True, cwd=tmp, timeout=30)
    return not re.search(r'unrecognized option|invalid option', res.stderr)


# ---- the page's view ------------------------------------------------------------------------

def man1():
    s = roff_sections('vslint.1')
    cmds = {}
    for item in items(s['COMMANDS']):
        name = item.split()[0]
        cmds[name] = set(re.findall(r'(?<![\w-])(--?[a-z][a-z-]*)', item[len(name):]))
    # OPTIONS: "-c, --config FILE": the short form of each long one.
    short_of, long_opts = {}, set()
    for item in items(s['OPTIONS']):
        names = re.findall(r'(?<![\w-])(--?[a-z][a-z-]*)', item.split(' ')[0] + ' ' + item)
        longs = [n for n in names if n.startswith('--')]
        shorts = [n for n in names if not n.startswith('--')]
        long_opts |= set(longs[:1])
        if shorts and longs:
            short_of[shorts[0]] = longs[0]
    # A command's options as long names: its synopsis may use the short form.
    for name, opts in cmds.items():
        cmds[name] = {short_of.get(o, o) for o in opts}
    return cmds, short_of, long_opts


def man5():
    """{section: {key: entry text}} of vslint.conf(5)."""
    s = roff_sections('vslint.conf.5')
    out = {}
    for name, lines in s.items():
        m = re.match(r'^\[(.*)\]$', name)
        if not m:
            continue
        out[m.group(1)] = {it.split(' = ')[0]: it for it in items(lines) if ' = ' in it}
    return out


# ---- vslint(1) ------------------------------------------------------------------------------

def test_every_command_is_in_the_page_and_no_other():
    cmds, _, _ = man1()
    assert sorted(cmds) == sorted(commands())


def test_every_option_of_every_command_is_in_its_entry():
    """Each candidate option (from the code's getopt tables, the page and the help texts) is
    tried on each command: accepted exactly when the page lists it for that command."""
    cmds, short_of, long_opts = man1()
    candidates = source_long_options() | long_opts
    for cmd in commands():
        candidates |= set(re.findall(r'(?<![\w-])--([a-z][a-z-]*)', vslint('help', cmd).stdout))
    candidates = {c if c.startswith('--') else '--' + c for c in candidates}
    with tempfile.TemporaryDirectory() as tmp:
        problems = []
        for cmd in commands():
            if cmd == 'help':
                continue
            documented = cmds[cmd] | {'--help'}
            for opt in sorted(candidates - {'--version'}):
                if accepts(cmd, opt, tmp) != (opt in documented):
                    problems.append('vslint %s %s: %s' % (
                        cmd, opt, 'accepted but not in its entry of vslint(1)'
                        if opt not in documented else 'in vslint(1) but refused'))
            for letter in string.ascii_letters:
                short = '-' + letter
                want = short_of.get(short) in documented or short == '-h'
                if accepts(cmd, short, tmp) != want:
                    problems.append('vslint %s %s: %s' % (
                        cmd, short, 'in vslint(1) but refused' if want
                        else 'accepted but not in vslint(1)'))
    assert not problems, '\n'.join(problems)


def test_every_documented_option_is_used_by_some_command():
    cmds, short_of, long_opts = man1()
    used = set().union(*cmds.values()) | {'--help', '--version'}
    assert long_opts <= used, 'documented but no command lists them: %s' % (long_opts - used)


def test_version_is_the_one_meson_build_declares():
    with open(os.path.join(SOURCE_ROOT, 'meson.build')) as f:
        version = re.search(r"version\s*:\s*'([^']+)'", f.read()).group(1)
    assert vslint('--version').stdout.strip() == 'vslint ' + version


# ---- vslint.conf(5) -------------------------------------------------------------------------

BASE = '[vcenter lab]\nurl = https://vc.example/sdk\nuser = u\npassword_env = VSLINT_PW\n'
ARRAY = '[array u1]\ntype = unity\nurl = https://u1.example\nuser = u\npassword_env = VSLINT_PW\n'


def config_check(tmp, text):
    path = os.path.join(tmp, 'vslint.conf')
    with open(path, 'w') as f:
        f.write(text)
    return vslint('config-check', '-c', path, env={'VSLINT_PW': 'secret'})


def known_keys(tmp, section):
    """The keys the loader knows in section, from its "unknown key" message."""
    res = config_check(tmp, BASE + '[%s]\nzz_not_a_key = 1\n' % section)
    m = re.search(r'unknown key \(known keys: ([^)]*)\)', res.stderr)
    assert m, res.stderr
    return set(m.group(1).split(', '))


def checks():
    return json.loads(vslint('checks', '--format', 'json').stdout)['checks']


def test_every_section_and_key_is_in_the_page_and_no_other():
    page = man5()
    with tempfile.TemporaryDirectory() as tmp:
        res = config_check(tmp, BASE + '[zz]\nx = 1\n')
        expected = re.search(r'expected (.*)\)', res.stderr).group(1)
        sections = re.findall(r'\[([^]]+)\]', expected)
        want = {}
        for sect in sections:
            probe = {'vcenter NAME': 'vcenter other', 'check ID': 'check snapshots'}.get(sect, sect)
            want[sect] = known_keys(tmp, probe)
            if sect == 'check ID':
                want[sect] = {'enabled', 'severity'}  # every check's own; thresholds below
        for c in checks():
            params = {p['name'] for p in c.get('parameters', [])}
            got = known_keys(tmp, 'check ' + c['id'])
            assert got == {'enabled', 'severity'} | params, c['id']
            if params:
                want['check ' + c['id']] = params
    assert {s: set(k) for s, k in page.items()} == want


def test_every_number_has_its_range_and_default_and_the_ranges_hold():
    """An integer key reads "key = MIN-MAX (default: N)"; MAX is accepted, MAX+1 refused."""
    page = man5()
    checked = 0
    with tempfile.TemporaryDirectory() as tmp:
        for sect, keys in page.items():
            if sect.startswith('check') or sect == 'waiver':
                continue
            for key, entry in keys.items():
                m = re.match(r'^\S+ = (\d+)-(\d+) \(default: (\d+)\)$', entry)
                if not m and re.search(r'= \d+-\d+', entry):
                    pytest.fail('%s: no default: %r' % (key, entry))
                if not m:
                    continue
                lo, hi, dflt = (int(x) for x in m.groups())
                assert lo <= dflt <= hi, entry
                section = '[vcenter lab]' if sect == 'vcenter NAME' else '[%s]' % sect
                head = BASE if sect == 'vcenter NAME' else BASE + section + '\n'
                if sect == 'digest':  # its required keys
                    head += ('smtp_url = smtp://127.0.0.1\nfrom = a@example.com\n'
                             'to = b@example.com\n')
                if sect == 'array NAME':  # a whole array section, its required keys set
                    head = BASE + ARRAY
                ok = config_check(tmp, head + '%s = %d\n' % (key, hi))
                bad = config_check(tmp, head + '%s = %d\n' % (key, hi + 1))
                assert 'configuration OK' in ok.stdout, (entry, ok.stderr)
                assert '] %s: ' % key in bad.stderr and bad.returncode == 2, (entry, bad.stderr)
                checked += 1
    assert checked >= 7
    # The thresholds of the checks carry the catalogue's defaults and ranges.
    for c in checks():
        for p in c.get('parameters', []):
            entry = page['check ' + c['id']][p['name']]
            assert '(default: %g)' % p['default'] in entry, entry
            assert ' = %g-%g' % (p['min'], p['max']) in entry, entry


# ---- bash completion ------------------------------------------------------------------------

def complete(line, conf=None):
    """What Tab offers after `line` (the last word being completed), as a sorted list."""
    words = line.split(' ')
    script = '\n'.join([
        'source %s' % BASH_COMPLETION,
        'source %s' % COMPLETION,
        'COMP_WORDS=(%s)' % ' '.join("'%s'" % w for w in words),
        'COMP_CWORD=%d' % (len(words) - 1),
        "COMP_LINE='%s'" % line,
        'COMP_POINT=${#COMP_LINE}',
        '_vslint vslint %s %s' % ("'%s'" % words[-1], "'%s'" % words[-2]),
        'printf "%s\\n" "${COMPREPLY[@]}"',
    ])
    env = dict(os.environ, PATH=os.path.dirname(os.path.abspath(VSLINT)) + ':' + os.environ['PATH'])
    res = subprocess.run(['bash', '--norc', '--noprofile', '-c', script], capture_output=True,
                         text=True, env=env, timeout=60)
    assert res.returncode == 0, res.stderr
    return sorted(w for w in res.stdout.split('\n') if w)


def test_completion_offers_every_command():
    assert os.path.exists(BASH_COMPLETION), 'apt-get install bash-completion'
    assert complete('vslint ') == sorted(commands())
    assert complete('vslint help ') == sorted(c for c in commands() if c != 'help')


def test_completion_offers_each_commands_options():
    cmds, _, _ = man1()
    for cmd, opts in cmds.items():
        if cmd == 'help':
            continue
        assert complete('vslint %s --' % cmd) == sorted(opts | {'--help'}), cmd


def test_completion_offers_the_format_values_each_command_accepts():
    for cmd in ('check', 'inventory', 'checks'):
        err = vslint(cmd, '--format', 'zz', '-c', '/nonexistent').stderr
        if cmd == 'checks':
            err = vslint(cmd, '--format', 'zz').stderr
        m = re.search(r'--format must be (.*), not', err) or re.search(r'--format must be (.*)$',
                                                                       err, re.M)
        assert m, err
        accepted = sorted(re.split(r', | or ', m.group(1)))
        assert complete('vslint %s --format ' % cmd) == accepted, cmd
        assert complete('vslint %s -f ' % cmd) == accepted, cmd


def test_completion_offers_levels_log_targets_check_ids_and_vcenters():
    assert complete('vslint check --fail-on ') == ['critical', 'info', 'never', 'warning']
    assert complete('vslint serve --log ') == ['journal', 'stderr', 'syslog']
    ids = sorted(c['id'] for c in checks())
    assert complete('vslint checks ') == ids
    assert complete('vslint checks multipath-') == [i for i in ids if i.startswith('multipath-')]
    with tempfile.TemporaryDirectory() as tmp:
        conf = os.path.join(tmp, 'v.conf')
        with open(conf, 'w') as f:
            f.write('[vcenter prod]\nurl = x\n\n [vcenter lab-2]\n[server]\n')
        assert complete('vslint check -c %s --vcenter ' % conf) == ['lab-2', 'prod']


# ---- help, vslint(1) and the README name the same routes and commands -------------------------

def served_routes():
    """'METHOD PATH' of each route `vslint help serve` lists, which it prints from the router's
    own table (api/http.c), plus the dashboard."""
    out = vslint('help', 'serve').stdout
    block = out.split('HTTP routes', 1)[1].split('\n\n', 1)[0]
    return {' '.join(m) for m in re.findall(r'^  (GET|POST) +(/\S*)', block, re.M)}


def man_routes():
    lines = roff_sections('vslint.1')['HTTP API']
    return {re.sub(r'\?.*$', '', it) for it in items(lines)} | {'GET /'}


def readme():
    with open(os.path.join(SOURCE_ROOT, 'README.md'), encoding='utf-8') as f:
        return f.read()


def readme_routes():
    text = readme()
    table = text.split('| path | what it answers |\n|---|---|\n', 1)[1].split('\n\n', 1)[0]
    routes = set()
    for row in table.splitlines():
        cell = row.split('|')[1].strip().split('`')[1]
        routes.add(re.split(r'[?\[]', cell, 1)[0])
    # The dashboard is its own paragraph, not a row: "served at `/`".
    if re.search(r'served at `/`', text):
        routes.add('GET /')
    return routes


def test_the_routes_of_help_man_page_and_readme_are_the_routers():
    served = served_routes()
    assert 'GET /api/v1/inventory/{datastores,hosts,vms,pools}' in served, served
    assert 'GET /api/v1/inventory/datastores/history' in served and 'GET /api/v1/history' in served
    assert man_routes() == served, (sorted(man_routes() - served), sorted(served - man_routes()))
    assert readme_routes() == served, (sorted(readme_routes() - served),
                                       sorted(served - readme_routes()))


def test_the_readme_lists_the_commands_help_lists():
    cmds = set(re.findall(r'^\| `vslint ([a-z-]+)', readme(), re.M))
    assert cmds == set(commands()), (sorted(cmds - set(commands())),
                                     sorted(set(commands()) - cmds))


def test_help_help_and_every_commands_help_answer():
    for cmd in commands():
        res = vslint('help', cmd)
        assert res.returncode == 0 and res.stdout.startswith('Usage: vslint ' + cmd), (cmd, res)
    assert vslint('help', 'no-such').returncode == 2


def test_the_page_says_collect_and_check_read_the_arrays():
    s = roff_sections('vslint.1')
    for item_text in ('collect', 'check'):
        entry = entry_text(s['COMMANDS'], item_text)
        assert '[array' in entry, (item_text, entry)


def entry_text(lines, name):
    """The plain text of the item of a section whose term starts with name."""
    out, inside = [], False
    for i, line in enumerate(lines):
        if not line.startswith('.') and i + 1 < len(lines) and lines[i + 1].startswith('.RS'):
            inside = plain(line).split()[0] == name
        elif inside and not line.startswith('.'):
            out.append(plain(line))
    return ' '.join(out)
