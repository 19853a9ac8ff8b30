"""The vCenter role of docs/vcenter-role.md and the scripts that create it.

The document's table is the list: dist/vcenter-role.sh (govc) and dist/vcenter-role.ps1
(PowerCLI) must grant exactly its privileges, each one a privilege vSphere has, and the table
must name every vSphere method vslint calls, so that a new call cannot slip in without saying
what it needs. govc is not packaged by Debian (golang-github-vmware-govmomi-dev has no govc/),
so the shell script runs in its -n mode, which prints the govc commands it would run; nor is
PowerShell here, so the .ps1 is compared by its list.
"""
import glob
import json
import os
import re
import shlex
import subprocess

from simlib import Estate, of, run_ok, vcenter, vslint

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


def dry_run(*args, script=SCRIPT):
    res = subprocess.run(['bash', script, '-n', *args], capture_output=True, text=True,
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


# ---- the role against the simulator's authorization (tests/sim/authz.go) ----

def soap_values(xml_text, tag):
    """The text of every element named tag (any namespace) in a SOAP answer."""
    import xml.etree.ElementTree as ET
    root = ET.fromstring(xml_text)
    return [e.text or '' for e in root.iter() if e.tag.rsplit('}', 1)[-1] == tag]


def service_content(client):
    import xml.etree.ElementTree as ET
    out = client.call('<RetrieveServiceContent><_this type="ServiceInstance">ServiceInstance'
                      '</_this></RetrieveServiceContent>')
    rv = [e for e in ET.fromstring(out).iter() if e.tag.endswith('}returnval')][0]
    return {c.tag.rsplit('}', 1)[-1]: (c.get('type'), c.text) for c in rv}


def role_id(client, am, name):
    """The id of role name in the AuthorizationManager's roleList, as govc looks it up."""
    import xml.etree.ElementTree as ET
    out = client.call(
        '<RetrievePropertiesEx><_this type="PropertyCollector">propertyCollector</_this>'
        '<specSet><propSet><type>AuthorizationManager</type><pathSet>roleList</pathSet>'
        '</propSet><objectSet><obj type="AuthorizationManager">%s</obj></objectSet></specSet>'
        '<options/></RetrievePropertiesEx>' % am)
    for role in ET.fromstring(out).iter():
        if role.tag.rsplit('}', 1)[-1] != 'AuthorizationRole':
            continue
        fields = {c.tag.rsplit('}', 1)[-1]: c.text for c in role}
        if fields.get('name') == name:
            return int(fields['roleId'])
    raise AssertionError('no role %r in %s' % (name, out[:2000]))


def apply_role_script(url, user, role, script=SCRIPT):
    """Makes, as the administrator, the AuthorizationManager calls dist/vcenter-role.sh's govc
    commands make (govc is not packaged here): role.create ROLE PRIVILEGE... is
    AddAuthorizationRole, permissions.set -principal USER -role ROLE -propagate=true / is
    SetEntityPermissions on the root folder. The commands are the script's own (its -n output),
    so a change of the script changes what the account is given."""
    from xml.sax.saxutils import escape
    from simlib import VimClient
    admin = VimClient(url)
    sc = service_content(admin)
    am = sc['authorizationManager'][1]
    root_type, root = sc['rootFolder']
    for cmd in dry_run(user, role, script=script):
        assert cmd[:2] == ['+', 'govc'], cmd
        if cmd[2] == 'role.create':
            admin.call('<AddAuthorizationRole><_this type="AuthorizationManager">%s</_this>'
                       '<name>%s</name>%s</AddAuthorizationRole>' % (
                           am, escape(cmd[3]),
                           ''.join('<privIds>%s</privIds>' % escape(p) for p in cmd[4:])))
        elif cmd[2] == 'permissions.set':
            opts = dict(zip(cmd[3:-1:2], cmd[4:-1:2]))
            assert cmd[-1] == '/' and set(opts) == {'-principal', '-role'}, cmd
            assert cmd[7] == '-propagate=true', cmd
            rid = role_id(admin, am, opts['-role'])
            admin.call('<SetEntityPermissions><_this type="AuthorizationManager">%s</_this>'
                       '<entity type="%s">%s</entity><permission><entity type="%s">%s</entity>'
                       '<principal>%s</principal><group>false</group><roleId>%d</roleId>'
                       '<propagate>true</propagate></permission></SetEntityPermissions>' % (
                           am, root_type, root, root_type, root, escape(opts['-principal']),
                           rid))
        else:
            raise AssertionError('the script runs a govc command this test does not know: %s'
                                 % cmd)


def account_estate(sim, ws, user, name='lab'):
    est = Estate(sim, ws, name)
    est.vc['user'] = user
    est.conf = ws.write_config([est.vc])
    return est


def gaps_of(inv):
    """(host name or '', what, error) of every gap of an inventory document."""
    out = [('', g['what'], g['error']) for v in inv['vcenters'] for g in v.get('gaps', [])]
    for v in inv['vcenters']:
        for h in v.get('hosts', []):
            out += [(h['name'], g['what'], g['error']) for g in h.get('gaps', [])]
    return sorted(out)


def comparable(findings):
    """What a user reads of each finding, without the times and the number of the poll that
    found it (the account's database holds its refused poll first; ages in days to the
    minute: two polls a few seconds apart see the same snapshot ages)."""
    def fix(v):
        if isinstance(v, float):
            return round(v, 3)
        if isinstance(v, dict):
            return {k: fix(x) for k, x in v.items()}
        if isinstance(v, list):
            return [fix(x) for x in v]
        return v
    return sorted(json.dumps(fix({k: v for k, v in f.items()
                                  if k not in ('first_seen', 'last_seen', 'first_seen_by')}),
                              sort_keys=True)
                  for f in findings)


REFUSED = 'NoPermission fault (needs %s): Permission to perform this operation was denied.'


def test_an_account_with_the_scripts_role_reads_what_the_administrator_reads(
        start_sim, workspace, new_workspace):
    """The account gets nothing but what dist/vcenter-role.sh gives it: before, the simulator
    refuses its first view (System.View); after, its poll has the administrator's gaps (the one
    host of the scenario that refuses esxcli to everyone) and gives the administrator's
    findings."""
    sim = start_sim('violations', extra=['-account', 'vslint-svc'])
    est = account_estate(sim, workspace, 'vslint-svc')
    res = vslint('collect', '-c', est.conf)
    assert res.returncode != 0, res.stdout
    assert 'NoPermission' in res.stderr and 'System.View' in res.stderr, res.stderr[-1000:]
    assert 'authz: vslint-svc may not CreateContainerView' in sim.log()

    apply_role_script(sim.url, 'vslint-svc', 'vslint-reader')
    findings = est.check()
    inv = est.inventory()
    assert gaps_of(inv) == [('esx-san-noesxcli', 'esxcli', REFUSED % 'Host.Config.Settings')]
    admin = Estate(sim, new_workspace(), 'lab')
    admin_findings = admin.check()
    assert gaps_of(inv) == gaps_of(admin.inventory())
    assert len(findings) > 50 and comparable(findings) == comparable(admin_findings)
    assert 'may not' not in sim.log().split('authz: vslint-svc may not CreateContainerView')[1]


def test_a_read_only_account_misses_exactly_the_bound_vmknics_and_esxcli(start_sim, workspace):
    """A plain Read-only account (the built-in role, at the root): every host with SAN LUNs
    refuses esxcli (Host.Config.Settings), every host with an iSCSI adapter its port bindings
    (Host.Config.Storage); everything else is read, and host-coverage names each host."""
    sim = start_sim('violations', extra=['-account', 'ro:ReadOnly'])
    truth = sim.truth()
    san = {h['name'] for h in truth['hosts'] if any(not l['local'] for l in h['luns'])}
    iscsi = {h['name'] for h in truth['hosts'] if h['iscsi_hbas']}
    assert len(san) == 16 and len(iscsi) == 8, (san, iscsi)
    est = account_estate(sim, workspace, 'ro')
    findings = est.check()
    want = sorted([(h, 'esxcli', REFUSED % 'Host.Config.Settings') for h in san] +
                  [(h, 'iscsi-bindings', REFUSED % 'Host.Config.Storage') for h in iscsi])
    inv = est.inventory()
    assert gaps_of(inv) == want
    # What it did read: every host's advanced options (no gap about alarms either, above).
    assert {h['name'] for v in inv['vcenters'] for h in v['hosts']
            if (h.get('options') or {}).get('VMFS3.EnableBlockDelete') in ('0', '1')} == \
        {h['name'] for h in truth['hosts']}
    coverage = of(findings, 'host-coverage')
    assert set(coverage) == san | iscsi
    for h in iscsi:
        text = json.dumps(coverage[h])
        assert 'esxcli' in text and 'iscsi-bindings' in text and 'Host.Config.Storage' in text
    assert 'Host.Config.Settings' in json.dumps(coverage['esx-clean-01'])


def test_the_summary_groups_a_read_only_accounts_gaps_by_kind_and_privilege(start_sim, workspace):
    """/api/v1/summary says per vCenter what its last poll could not read: one entry per kind
    and reason, with the privilege, how many hosts and which (the dashboard's banner)."""
    from apilib import serving
    sim = start_sim('violations', extra=['-account', 'ro:ReadOnly'])
    truth = sim.truth()
    iscsi = sorted(h['name'] for h in truth['hosts'] if h['iscsi_hbas'])
    # esxcli is asked of the hosts with SAN LUNs (the NFS-only hosts have none to read).
    every = sorted(h['name'] for h in truth['hosts'] if any(not l['local'] for l in h['luns']))
    vc = dict(vcenter(workspace, sim.url, 'lab'), user='ro')
    with serving(workspace, [vc]) as srv:
        v = srv.vcenter('lab')
        assert v['gaps'] == [
            {'what': 'esxcli', 'error': REFUSED % 'Host.Config.Settings',
             'privilege': 'Host.Config.Settings', 'hosts': 16, 'host_names': every},
            {'what': 'iscsi-bindings', 'error': REFUSED % 'Host.Config.Storage',
             'privilege': 'Host.Config.Storage', 'hosts': 8, 'host_names': iscsi}]
        only = srv.get('/api/v1/summary?vcenter=lab').json()
        assert only['vcenters'][0]['gaps'] == v['gaps']
        # The account given the script's role while the daemon runs: its next poll reads the
        # bindings and esxcli, and the summary says so (nothing left of the last answer).
        apply_role_script(sim.url, 'ro', 'vslint-reader')
        v = srv.poll_and_wait('lab')
        assert v['last_poll']['ok'] and v['gaps'] == [
            {'what': 'esxcli', 'error': REFUSED % 'Host.Config.Settings',
             'privilege': 'Host.Config.Settings', 'hosts': 1,
             'host_names': ['esx-san-noesxcli']}]
        assert srv.get('/api/v1/summary?vcenter=lab').json()['vcenters'][0]['gaps'] == v['gaps']


def test_a_privilege_deleted_from_the_script_becomes_that_gap_on_each_host_concerned(
        start_sim, workspace):
    """The script says: delete the Host.Config.Storage line to keep it out of the role, and
    vslint records the iscsi-bindings gap on each host concerned instead. The role made from the
    script so edited, in the simulator: exactly that."""
    text = open(SCRIPT, encoding='utf-8').read()
    assert text.count('\n    Host.Config.Storage\n') == 1
    edited = os.path.join(workspace.dir, 'vcenter-role.sh')
    with open(edited, 'w', encoding='utf-8') as f:
        f.write(text.replace('\n    Host.Config.Storage\n', '\n'))
    sim = start_sim('violations', extra=['-account', 'vslint-svc'])
    apply_role_script(sim.url, 'vslint-svc', 'vslint-reader', script=edited)
    iscsi = {h['name'] for h in sim.truth()['hosts'] if h['iscsi_hbas']}
    est = account_estate(sim, workspace, 'vslint-svc')
    est.check()
    assert gaps_of(est.inventory()) == sorted(
        [('esx-san-noesxcli', 'esxcli', REFUSED % 'Host.Config.Settings')] +
        [(h, 'iscsi-bindings', REFUSED % 'Host.Config.Storage') for h in iscsi])


def test_the_simulator_refuses_what_a_role_does_not_grant_as_vcenter_does(start_sim):
    """The simulator's own authorization, through SOAP: a method the role lacks gets
    NoPermission with the object and the privilegeId; an object the account may not read comes
    back with its properties in missingSet (NoPermission, System.Read); a method outside the
    simulator's privilege table is refused; the nearest permission decides (No access on one
    host under Read-only at the root); a wrong password is InvalidLogin for an account too."""
    from simlib import VimClient
    sim = start_sim('violations', extra=['-account', 'ro:ReadOnly', '-account', 'nobody'])
    host = [h for h in sim.truth()['hosts'] if h['name'] == 'esx-clean-01'][0]['moref']
    read = ('<RetrievePropertiesEx><_this type="PropertyCollector">propertyCollector</_this>'
            '<specSet><propSet><type>HostSystem</type><pathSet>name</pathSet></propSet>'
            '<objectSet><obj type="HostSystem">%s</obj></objectSet></specSet><options/>'
            '</RetrievePropertiesEx>' % host)
    esxcli = ('<ExecuteSoap><_this type="ReflectManagedMethodExecuter">ha-mme-%s</_this>'
              '<moid>ha-cli-handler-storage-nmp-device</moid><version>urn:vim25/5.0</version>'
              '<method>vim.EsxCLI.storage.nmp.device.list</method></ExecuteSoap>' % host)

    def refused(client, body):
        try:
            client.call(body)
        except RuntimeError as e:
            return str(e)
        raise AssertionError('not refused: ' + body)

    ro = VimClient(sim.url, user='ro')
    assert soap_values(ro.call(read), 'val') == ['esx-clean-01']
    fault = refused(ro, esxcli)
    assert 'NoPermissionFault' in fault
    assert soap_values(fault.split(': ', 1)[1], 'privilegeId') == ['Host.Config.Settings']
    assert soap_values(fault.split(': ', 1)[1], 'object') == [host]
    # PowerOnVM_Task is in no role vslint needs, and not in the simulator's table.
    vm = sim.truth()['vms'][0]['moref']
    assert 'NoPermissionFault' in refused(
        ro, '<PowerOnVM_Task><_this type="VirtualMachine">%s</_this></PowerOnVM_Task>' % vm)
    # The administrator is not held to a permission.
    admin = VimClient(sim.url)
    assert 'ExecuteSoapResponse' in admin.call(esxcli)

    # The nearest permission decides: No access on one host, Read-only above it.
    sc = service_content(admin)
    am = sc['authorizationManager'][1]
    admin.call('<SetEntityPermissions><_this type="AuthorizationManager">%s</_this>'
               '<entity type="HostSystem">%s</entity><permission><principal>ro</principal>'
               '<group>false</group><roleId>%d</roleId><propagate>true</propagate></permission>'
               '</SetEntityPermissions>' % (am, host, role_id(admin, am, 'NoAccess')))
    out = ro.call(read)
    assert soap_values(out, 'val') == [] and soap_values(out, 'privilegeId') == ['System.Read']
    other = [h for h in sim.truth()['hosts'] if h['name'] == 'esx-clean-02'][0]['moref']
    assert soap_values(ro.call(read.replace(host, other)), 'val') == ['esx-clean-02']

    nobody = VimClient(sim.url, user='nobody')
    out = nobody.call(read)
    assert soap_values(out, 'val') == [] and soap_values(out, 'path') == ['name']
    assert soap_values(out, 'privilegeId') == ['System.Read']
    try:
        VimClient(sim.url, user='ro', password='not-the-password')
        raise AssertionError('logged in with a wrong password')
    except RuntimeError as e:
        assert 'InvalidLoginFault' in str(e)


def test_the_simulator_lets_in_only_through_a_checked_login(start_sim):
    """A session cookie no checked Login gave (forged, or of a session the simulator forgot)
    is NotAuthenticated, not the administrator; Login is the only way in (LoginByToken and
    the like are refused); a restricted account's request the simulator cannot read is
    refused, not let through unchecked."""
    import urllib.error
    import urllib.request
    from simlib import VimClient
    sim = start_sim('violations', extra=['-account', 'ro:ReadOnly'])
    vm = sim.truth()['vms'][0]['moref']
    power = '<PowerOnVM_Task><_this type="VirtualMachine">%s</_this></PowerOnVM_Task>' % vm

    def raw(body, cookie):
        req = urllib.request.Request(sim.url, data=(VimClient.ENV % body).encode(), headers={
            'Content-Type': 'text/xml; charset=utf-8', 'SOAPAction': '"urn:vim25/6.5"',
            'Cookie': 'vmware_soap_session="%s"' % cookie})
        import ssl
        ctx = ssl.create_default_context()
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
        try:
            return urllib.request.urlopen(req, timeout=60, context=ctx).read().decode()
        except urllib.error.HTTPError as e:
            return e.read().decode()

    assert 'NotAuthenticatedFault' in raw(power, 'forged-cookie')
    assert 'authz: PowerOnVM_Task with a session cookie no checked Login gave' in sim.log()
    for login in ('LoginByToken', 'LoginExtensionByCertificate'):
        out = raw('<%s><_this type="SessionManager">SessionManager</_this></%s>' % (login, login),
                  'forged-cookie')
        assert 'InvalidLoginFault' in out and 'accepts only Login' in out, out[:2000]
    ro = VimClient(sim.url, user='ro')
    try:
        ro.call('<RetrieveServiceContent><_this type="ServiceInstance">ServiceInstance')
        raise AssertionError('an unreadable request of a restricted account passed')
    except RuntimeError as e:
        assert 'could not read the request' in str(e), str(e)[:2000]
