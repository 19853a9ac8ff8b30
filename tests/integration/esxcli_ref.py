"""The esxcli commands a `vslint plan` may contain, with their options as VMware's ESXCLI
command reference gives them (developer.broadcom.com/xapis/esxcli-command-reference/latest/,
namespaces esxcli_storage, esxcli_iscsi, esxcli_network, esxcli_system), and a parser that
finds every esxcli invocation in a plan and rejects a namespace, an option or a value not in
this table. The option names are the reference's long names; over SOAP (govc host.esxcli,
PowerCLI Get-EsxCli -V2) each is the argument named by its long name without dashes."""
import re
import shlex


def _int(lo, hi):
    def check(v):
        if not re.fullmatch(r'[0-9]+', v) or not lo <= int(v) <= hi:
            raise ValueError('%r is not a whole number in %d-%d' % (v, lo, hi))
    return check


def _one_of(*values):
    def check(v):
        if v not in values:
            raise ValueError('%r is not one of %s' % (v, ', '.join(values)))
    return check


def _match(pattern, what):
    def check(v):
        if not re.fullmatch(pattern, v):
            raise ValueError('%r is not %s' % (v, what))
    return check


ANY = None
DEVICE = _match(r'(naa|eui|t10|mpx|sym)\.[^\s]+', 'a device name')
ADAPTER = _match(r'vmhba[0-9]+', 'an adapter name (vmhbaN)')
PORTAL = _match(r'[^\s:]+:[0-9]+', 'address:port')
IQN = _match(r'(iqn|eui|naa)\.[^\s]+', 'an iSCSI name')
PSP = _one_of('VMW_PSP_RR', 'VMW_PSP_MRU', 'VMW_PSP_FIXED')
ISCSI_KEYS = _one_of('DelayedAck', 'LoginTimeout', 'NoopOutInterval', 'NoopOutTimeout',
                     'RecoveryTimeout', 'FirstBurstLength', 'MaxBurstLength',
                     'MaxRecvDataSegment', 'MaxOutstandingR2T', 'HeaderDigest', 'DataDigest',
                     'ErrorRecoveryLevel', 'InitialLoginRetryMax', 'LoginRetryMax')
BOOL = _one_of('true', 'false')
FLAG = 'flag'  # an option without a value

# (namespace words..., verb) -> {long option: (short option or None, value check, required)}
COMMANDS = {
    ('storage', 'nmp', 'device', 'list'): {
        'device': ('-d', DEVICE, False)},
    ('storage', 'nmp', 'device', 'set'): {
        'device': ('-d', DEVICE, True), 'psp': ('-P', PSP, False),
        'default': ('-E', FLAG, False), 'force': ('-f', FLAG, False)},
    ('storage', 'nmp', 'psp', 'roundrobin', 'deviceconfig', 'get'): {
        'device': ('-d', DEVICE, True)},
    ('storage', 'nmp', 'psp', 'roundrobin', 'deviceconfig', 'set'): {
        'device': ('-d', DEVICE, True),
        'type': ('-t', _one_of('bytes', 'default', 'iops', 'latency'), False),
        'iops': ('-I', _int(1, 1000000), False), 'bytes': ('-B', _int(1, 2 ** 31), False),
        'useano': ('-U', BOOL, False), 'cfgfile': ('-g', FLAG, False)},
    ('storage', 'nmp', 'satp', 'rule', 'list'): {
        'satp': ('-s', _match(r'VMW_SATP_[A-Z0-9_]+', 'a SATP'), False)},
    ('storage', 'nmp', 'satp', 'rule', 'add'): {
        'satp': ('-s', _match(r'VMW_SATP_[A-Z0-9_]+', 'a SATP'), True),
        'vendor': ('-V', ANY, False), 'model': ('-M', ANY, False), 'psp': ('-P', PSP, False),
        'psp-option': ('-O', _match(r'iops=[0-9]+|bytes=[0-9]+|policy=\w+', 'PSP options'),
                       False),
        'option': ('-o', ANY, False), 'claim-option': ('-c', ANY, False),
        'description': ('-e', ANY, False), 'device': ('-d', DEVICE, False),
        'driver': ('-D', ANY, False), 'transport': ('-R', ANY, False),
        'type': ('-t', _one_of('vendor', 'device', 'driver', 'transport'), False),
        'force': ('-f', FLAG, False), 'boot': ('-b', FLAG, False)},
    ('iscsi', 'adapter', 'param', 'get'): {
        'adapter': ('-A', ADAPTER, True)},
    ('iscsi', 'adapter', 'param', 'set'): {
        'adapter': ('-A', ADAPTER, True), 'key': ('-k', ISCSI_KEYS, True),
        'value': ('-v', ANY, False), 'default': ('-D', FLAG, False)},
    ('iscsi', 'adapter', 'discovery', 'sendtarget', 'param', 'get'): {
        'adapter': ('-A', ADAPTER, True), 'address': ('-a', PORTAL, True)},
    ('iscsi', 'adapter', 'discovery', 'sendtarget', 'param', 'set'): {
        'adapter': ('-A', ADAPTER, True), 'address': ('-a', PORTAL, True),
        'key': ('-k', ISCSI_KEYS, True), 'value': ('-v', ANY, False),
        'default': ('-D', FLAG, False), 'inherit': ('-i', FLAG, False)},
    ('iscsi', 'adapter', 'target', 'portal', 'param', 'get'): {
        'adapter': ('-A', ADAPTER, True), 'address': ('-a', PORTAL, True),
        'name': ('-n', IQN, True)},
    ('iscsi', 'adapter', 'target', 'portal', 'param', 'set'): {
        'adapter': ('-A', ADAPTER, True), 'address': ('-a', PORTAL, True),
        'name': ('-n', IQN, True), 'key': ('-k', ISCSI_KEYS, True),
        'value': ('-v', ANY, False), 'default': ('-D', FLAG, False),
        'inherit': ('-i', FLAG, False)},
    ('network', 'vswitch', 'standard', 'list'): {
        'vswitch-name': ('-v', ANY, False)},
    ('network', 'vswitch', 'standard', 'set'): {
        'vswitch-name': ('-v', ANY, True), 'mtu': ('-m', _int(1280, 9000), False),
        'cdp-status': ('-c', _one_of('down', 'listen', 'advertise', 'both'), False)},
    ('network', 'ip', 'interface', 'list'): {
        'netstack': ('-N', ANY, False)},
    ('network', 'ip', 'interface', 'set'): {
        'interface-name': ('-i', _match(r'vmk[0-9]+', 'a vmknic'), True),
        'mtu': ('-m', _int(1280, 9000), False), 'enabled': ('-e', BOOL, False),
        'netstack': ('-N', ANY, False)},
    ('system', 'settings', 'advanced', 'list'): {
        'option': ('-o', _match(r'(/[A-Za-z0-9_]+)+', 'an option path'), False),
        'tree': ('-t', ANY, False), 'delta': ('-d', FLAG, False)},
    ('system', 'settings', 'advanced', 'set'): {
        'option': ('-o', _match(r'(/[A-Za-z0-9_]+)+', 'an option path'), True),
        'int-value': ('-i', _match(r'-?[0-9]+', 'a whole number'), False),
        'string-value': ('-s', ANY, False), 'default': ('-d', FLAG, False)},
    ('storage', 'vmfs', 'reclaim', 'config', 'get'): {
        'volume-label': ('-l', ANY, False), 'volume-uuid': ('-u', ANY, False)},
    ('storage', 'vmfs', 'reclaim', 'config', 'set'): {
        'volume-label': ('-l', ANY, False), 'volume-uuid': ('-u', ANY, False),
        'reclaim-priority': ('-p', _one_of('none', 'low', 'medium', 'high'), False),
        'reclaim-method': ('-m', _one_of('priority', 'fixed'), False),
        'reclaim-bandwidth': ('-b', _int(1, 2000), False),
        'reclaim-granularity': ('-g', _int(1, 2 ** 31), False)},
}

# esxcli's own options, before the namespace.
GLOBAL = {'--formatter': _one_of('keyvalue', 'csv', 'xml', 'json', 'tree', 'table', 'simple')}

SEPARATORS = set('();<>|&\n')


class PlanError(Exception):
    pass


def parse_command(words, where=''):
    """One esxcli command line (the words after "esxcli") checked against the table: a dict
    with cmd (the tuple of namespace words and verb) and args (long option -> value, True for
    a flag). PlanError says what is wrong and where."""
    words = list(words)
    while words and words[0].startswith('--') and words[0].split('=')[0] in GLOBAL:
        name, _, value = words.pop(0).partition('=')
        try:
            GLOBAL[name](value)
        except ValueError as e:
            raise PlanError('%sesxcli %s: %s' % (where, name, e))
    ns = []
    while words and not words[0].startswith('-'):
        ns.append(words.pop(0))
    cmd = tuple(ns)
    if cmd not in COMMANDS:
        raise PlanError('%sunknown esxcli command: esxcli %s' % (where, ' '.join(ns)))
    spec = COMMANDS[cmd]
    shorts = {v[0]: k for k, v in spec.items() if v[0]}
    args = {}
    while words:
        w = words.pop(0)
        if w.startswith('--'):
            name, eq, value = w[2:].partition('=')
            if name not in spec:
                raise PlanError('%sesxcli %s: no option --%s' % (where, ' '.join(cmd), name))
        elif w in shorts:
            name, eq, value = shorts[w], '', ''
        else:
            raise PlanError('%sesxcli %s: unexpected %r' % (where, ' '.join(cmd), w))
        check = spec[name][1]
        if check == FLAG:
            if eq:
                raise PlanError('%sesxcli %s: --%s takes no value' % (where, ' '.join(cmd), name))
            args[name] = True
            continue
        if not eq:
            if not words:
                raise PlanError('%sesxcli %s: --%s needs a value' % (where, ' '.join(cmd), name))
            value = words.pop(0)
        if check:
            try:
                check(value)
            except ValueError as e:
                raise PlanError('%sesxcli %s --%s: %s' % (where, ' '.join(cmd), name, e))
        if name in args:
            raise PlanError('%sesxcli %s: --%s given twice' % (where, ' '.join(cmd), name))
        args[name] = value
    for name, (_, _, required) in spec.items():
        if required and name not in args:
            raise PlanError('%sesxcli %s: --%s is required' % (where, ' '.join(cmd), name))
    return {'cmd': cmd, 'args': args}


def tokens(script):
    """The shell words and separators of a script, comments dropped, quotes removed."""
    lex = shlex.shlex(script.replace('\\\n', ' '), posix=True, punctuation_chars='();<>|&\n')
    lex.whitespace = ' \t\r'
    lex.whitespace_split = True
    lex.commenters = '#'
    return list(lex)


def is_separator(t):
    return t and all(c in SEPARATORS for c in t)


def esxcli_commands(script):
    """Every esxcli invocation of a sh script, in order, each parsed by parse_command()."""
    toks = tokens(script)
    out = []
    for i, t in enumerate(toks):
        if t != 'esxcli':
            continue
        words = []
        for w in toks[i + 1:]:
            if is_separator(w):
                break
            words.append(w)
        out.append(parse_command(words, where='command %d: ' % (len(out) + 1)))
    return out


def host_sections(script):
    """{host name: [the changing esxcli commands of its section (those vsl_do runs)]}, from
    the "# ==== Host NAME (vCenter V): N step(s) ====" headers and the vsl_host_N functions."""
    sections = {}
    current = None
    for block in re.split(r'(?m)^(?=# ==== )', script):
        m = re.match(r'# ==== Host (.*) \(vCenter [^)]*\): ([0-9]+) step\(s\) ====\n', block)
        if not m:
            continue
        current = m.group(1)
        body = block.split('\ncase ')[0]
        cmds = []
        toks = tokens(body)
        for i, t in enumerate(toks):
            if t == 'vsl_do':
                j = toks.index('esxcli', i)
                words = []
                for w in toks[j + 1:]:
                    if is_separator(w):
                        break
                    words.append(w)
                cmds.append(parse_command(words, where='%s: ' % current))
        sections[current] = {'steps': int(m.group(2)), 'changes': cmds}
    return sections


def soap_name(option):
    """The SOAP argument (and PowerCLI -V2 key) of a long option: its name without dashes."""
    return option.replace('-', '')
