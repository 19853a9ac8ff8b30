"""The vCenter role of docs/vcenter-role.md and the scripts that create it.

The document's table is the list: dist/vcenter-role.sh (govc) and dist/vcenter-role.ps1
(PowerCLI) must grant exactly its privileges, each one a privilege vSphere has, and the table
must name every vSphere method vslint calls, so that a new call cannot slip in without saying
what it needs. govc is not packaged by Debian (golang-github-vmware-govmomi-dev has no govc/),
so the shell script runs in its -n mode, which prints the govc commands it would run; nor is
PowerShell here, so the .ps1 is compared by its list.
"""
import glob
import os
import re
import shlex
import subprocess

from simlib import run_ok

SOURCE_ROOT = os.environ.get('SOURCE_ROOT', '.')
DOC = os.path.join(SOURCE_ROOT, 'docs', 'vcenter-role.md')
SCRIPT = os.path.join(SOURCE_ROOT, 'dist', 'vcenter-role.sh')
PS1 = os.path.join(SOURCE_ROOT, 'dist', 'vcenter-role.ps1')
# The privilege list govmomi's simulator serves, recorded from an ESXi host (Debian's
# golang-github-vmware-govmomi-dev, which tests/sim builds with).
GOVMOMI_PRIVILEGES = ('/usr/share/gocode/src/github.com/vmware/govmomi/simulator/esx/'
                      'authorization_manager.go')


def role_section():
    text = open(DOC, encoding='utf-8').read()
    assert '\n## The role\n' in text, 'docs/vcenter-role.md has no "## The role" section'
    return text.split('\n## The role\n', 1)[1].split('\n## ', 1)[0]


def doc_privileges():
    """The first cells of the role table, in order."""
    ids = [m.group(1) for m in re.finditer(r'^\| `([A-Za-z.]+)` \|', role_section(), re.M)]
    assert ids, 'no privilege rows in the table of docs/vcenter-role.md'
    return ids


def dry_run(*args):
    res = subprocess.run(['bash', SCRIPT, '-n', *args], capture_output=True, text=True,
                         timeout=30)
    assert res.returncode == 0, res.stderr
    return [shlex.split(l) for l in res.stdout.splitlines()]


def test_the_script_is_valid_bash():
    res = subprocess.run(['bash', '-n', SCRIPT], capture_output=True, text=True, timeout=30)
    assert res.returncode == 0, res.stderr


def test_the_doc_names_the_read_only_privileges_iscsi_s_and_esxcli_s():
    ids = doc_privileges()
    assert len(ids) == len(set(ids)), ids
    # The built-in Read-only role is these three; IscsiManager.QueryBoundVnics needs
    # Host.Config.Storage, esxcli through vCenter Host.Config.Settings.
    assert ids == ['System.Anonymous', 'System.View', 'System.Read', 'Host.Config.Storage',
                   'Host.Config.Settings']


def test_the_govc_script_creates_exactly_the_documented_role_and_assigns_it_at_the_root():
    user, role = r'EXAMPLE\vslint svc', 'vslint-test'
    lines = dry_run(user, role)
    assert len(lines) == 2, lines
    create, permit = lines
    assert create[:4] == ['+', 'govc', 'role.create', role], create
    assert create[4:] == doc_privileges()
    # The account name survives the quoting the script prints (a backslash and a space).
    assert permit == ['+', 'govc', 'permissions.set', '-principal', user, '-role', role,
                      '-propagate=true', '/']


def test_the_govc_script_s_default_role_name_is_the_documented_one():
    create, permit = dry_run('vslint@vsphere.local')
    assert create[3] == 'vslint-reader' and 'default `vslint-reader`' in open(DOC).read()
    assert permit[4:7] == ['vslint@vsphere.local', '-role', 'vslint-reader']


def test_the_govc_script_refuses_a_flag_for_an_account_and_takes_no_third_argument():
    for args in (['-n', '--', '-principal'], ['-n', 'u', 'r', 'secret']):
        res = subprocess.run(['bash', SCRIPT, *args], capture_output=True, text=True,
                             timeout=30)
        assert res.returncode == 2, (args, res.stdout, res.stderr)
        assert res.stdout == ''
        assert 'usage' in res.stderr or 'USER must be' in res.stderr
        assert 'secret' not in res.stdout + res.stderr


def test_the_powercli_script_grants_exactly_the_documented_privileges():
    text = open(PS1, encoding='utf-8').read()
    block = re.search(r'^\$Privileges = @\((.*?)^\)', text, re.M | re.S)
    assert block, 'no $Privileges = @( ... ) in dist/vcenter-role.ps1'
    ids = re.findall(r"^\s*'([^']+)'\s*$", block.group(1), re.M)
    assert ids == doc_privileges()
    # The role goes to the root folder, propagated; the password is prompted for.
    assert re.search(r'New-VIPermission .*-Entity \$root .*-Propagate:\$true', text)
    assert '$root = Get-Folder -Server $vc -NoRecursion' in text
    assert 'Get-Credential' in text and not re.search(r'(?i)\[string\]\$Password', text)


def test_every_documented_privilege_is_one_vsphere_has():
    known = set(re.findall(r'"([A-Z][A-Za-z]*(?:\.[A-Za-z]+)+)"',
                           open(GOVMOMI_PRIVILEGES, encoding='utf-8').read()))
    assert 'System.Read' in known, GOVMOMI_PRIVILEGES
    assert [p for p in doc_privileges() if p not in known] == []


def test_the_doc_names_every_vsphere_method_vslint_calls():
    """A vim_invoke() of a method the role's table does not name fails here: say what it needs."""
    called = set()
    for path in glob.glob(os.path.join(SOURCE_ROOT, '*', '*.c')):
        if '/tests/' in path:
            continue
        src = open(path, encoding='utf-8').read()
        called |= set(re.findall(r'vim_invoke\(\s*[\w>.-]+,\s*"(\w+)"', src))
        # The per-host queries go through a table: {what, error, "Method", "Manager", ...}.
        called |= set(re.findall(r'"(Query\w+)",\s*"\w+Manager"', src))
        called |= set(re.findall(r'"(ha-cli-handler-[\w-]+)"', src))
    assert {'Login', 'RetrievePropertiesEx', 'ExecuteSoap', 'QueryOptions',
            'QueryBoundVnics', 'ha-cli-handler-storage-nmp-device'} <= called, called
    section = role_section()
    assert [m for m in sorted(called) if '`%s`' % m not in section and
            not re.search(r'[.`]%s`' % re.escape(m), section)] == []


def test_the_package_ships_both_scripts_as_examples():
    examples = open(os.path.join(SOURCE_ROOT, 'debian', 'vslint.examples')).read().split()
    for path in ('dist/vcenter-role.sh', 'dist/vcenter-role.ps1'):
        assert path in examples
        assert os.path.isfile(os.path.join(SOURCE_ROOT, path))


def test_checking_the_account_as_the_doc_says_shows_the_host_that_refused_esxcli(lab):
    """docs/vcenter-role.md's "Checking it": `vslint inventory | grep 'not read:'` after a poll
    names each refused read under its host. In the violations scenario one host refuses esxcli
    with NoPermission, as a host does to an account without Host.Config.Settings."""
    assert "vslint inventory -c /etc/vslint/vslint.conf | grep 'not read:'" in open(DOC).read()
    out = run_ok('inventory', '-c', lab.conf).stdout
    host, not_read = None, []
    for line in out.splitlines():
        m = re.match(r'^    (\S+)  \(', line)
        if m:
            host = m.group(1)
        elif 'not read:' in line:
            not_read.append((host, line.strip()))
    assert [(h, l.split(':')[1].strip()) for h, l in not_read] == [('esx-san-noesxcli',
                                                                     'esxcli')], out
    assert 'NoPermission' in not_read[0][1]
