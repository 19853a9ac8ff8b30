#!/usr/bin/env python3
"""satp-claim-rule against the simulator: on `violations` it flags exactly what the header of
tests/sim/scenario_violations.go plants (esx-san-1, whose DGC rule sets Round Robin without an
IOPS limit) with the planted evidence, and none of the twins (the other lab hosts with the DGC
rule, esx-san-1's own VMAX LUN under 001's rule, esx-san-noesxcli whose rules are unknown); on
`clean` it flags nothing; [check satp-claim-rule] iops changes what is flagged."""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from simlib import Sim, Workspace, Failures, vslint, USER, run_check  # noqa: E402

CHECK = 'satp-claim-rule'
NAA = 'naa.60060160a0b0' + '0' * 18
SYM = 'sym.000192601234533031323334'


def flagged(fs):
    """(host, detail) -> finding, for this check's findings."""
    return {(x['object']['name'], x['detail']): x for x in fs if x['check'] == CHECK}


def check_violations(f, fs, truth, inv):
    got = flagged(fs)
    f.eq('violations: flagged (host, SATP/vendor)', sorted(got), [('esx-san-1', 'VMW_SATP_ALUA/DGC')])
    x = got.get(('esx-san-1', 'VMW_SATP_ALUA/DGC'))
    if not x:
        return
    moref = {h['name']: h['moref'] for h in truth['hosts']}['esx-san-1']
    f.eq('object', x['object'], {'type': 'host', 'moref': moref, 'name': 'esx-san-1'})
    f.eq('severity', x['severity'], 'warning')
    f.eq('message', x['message'],
         'host esx-san-1 has no SATP claim rule giving VMW_SATP_ALUA LUNs from DGC Round Robin '
         'with iops=1; LUNs presented later will get the default policy')
    ev = x['evidence']
    f.eq('evidence satp/vendor', (ev['satp'], ev['vendor']), ('VMW_SATP_ALUA', 'DGC'))
    # Every SAN LUN of esx-san-1 but the VMAX one is an ALUA DGC LUN without a rule.
    san = sorted(l['canonical_name'] for l in
                 {h['name']: h for h in truth['hosts']}['esx-san-1']['luns'] if not l['local'])
    want_luns = [n for n in san if n != SYM]
    f.true('the planted LUNs a1..a5 are among them',
           all(NAA + s in want_luns for s in ('a1', 'a2', 'a3', 'a4', 'a5')))
    f.eq('evidence luns_total', ev['luns_total'], len(want_luns))
    f.eq('evidence luns_uncovered', ev['luns_uncovered'], len(want_luns))
    f.eq('evidence luns (first 25)', ev['luns'], want_luns[:25])
    f.eq('evidence commands', ev['commands'],
         ['esxcli storage nmp satp rule add -s "VMW_SATP_ALUA" -V "DGC" -M "VRAID" '
          '-P "VMW_PSP_RR" -O "iops=1"'])
    # The rules that apply and fall short: the system ALUA rule (MRU) and the planted user
    # rule (Round Robin, no options).
    f.eq('evidence rules',
         sorted((r['rule_group'], r['vendor'], r['psp'], r['psp_options']) for r in ev['rules']),
         [('system', None, 'VMW_PSP_MRU', None), ('user', 'DGC', 'VMW_PSP_RR', None)])

    # Twins, named so a failure says which one went wrong.
    for host in ('esx-iscsi-a', 'esx-iscsi-b', 'esx-iscsi-dvs', 'esx-noblockdelete',
                 'esx-clean-01', 'esx-iscsi-clean'):
        f.eq('twin %s: findings' % host, [d for (h, d) in got if h == host], [])
    f.true("esx-san-1's VMAX LUN (001's rule) is not flagged",
           ('esx-san-1', 'VMW_SATP_SYMM/EMC') not in got)
    # esx-san-noesxcli is silent because its rules are unknown, not because it has a rule.
    hosts = {h['name']: h for h in inv['vcenters'][0]['hosts']}
    nx = hosts['esx-san-noesxcli']
    f.eq('esx-san-noesxcli: no finding', [d for (h, d) in got if h == 'esx-san-noesxcli'], [])
    f.eq('esx-san-noesxcli: no rules stored', nx['satp_rules'], [])
    f.eq('esx-san-noesxcli: its esxcli gap', [g['what'] for g in nx['gaps']], ['esxcli'])
    f.true('esx-san-1: its user rules are stored',
           sum(r['rule_group'] == 'user' for r in hosts['esx-san-1']['satp_rules']) == 2)


def main():
    f = Failures('satp-claim-rule')
    ws = Workspace()
    try:
        pw = ws.password_file()
        with Sim('clean') as sim:
            conf = ws.write_config([{'name': 'clean', 'url': sim.url, 'user': USER,
                                     'password_file': pw}])
            fs = run_check(f, 'clean', conf)
            f.eq('clean: findings', sorted(flagged(fs)), [])
            inv = json.loads(vslint('inventory', '-c', conf, '--format', 'json').stdout)
            f.true('clean: every host has its rules stored',
                   all(h['satp_rules'] for h in inv['vcenters'][0]['hosts']))

        os.unlink(ws.db)
        with Sim('violations') as sim:
            vc = {'name': 'lab', 'url': sim.url, 'user': USER, 'password_file': pw}
            conf = ws.write_config([vc])
            fs = run_check(f, 'violations', conf)
            inv = json.loads(vslint('inventory', '-c', conf, '--format', 'json').stdout)
            check_violations(f, fs, sim.truth(), inv)

            # iops = 1000 accepts Round Robin's default, which esx-san-1's rule leaves.
            conf = ws.write_config([vc], '\n[check satp-claim-rule]\niops = 1000\n')
            fs = run_check(f, 'iops = 1000', conf, '--offline')
            f.eq('iops = 1000: flagged', sorted(flagged(fs)), [])
            # Turned off like any other check.
            conf = ws.write_config([vc], '\n[check satp-claim-rule]\nenabled = false\n')
            fs = run_check(f, 'enabled = false', conf, '--offline')
            f.eq('enabled = false: flagged', sorted(flagged(fs)), [])
            f.true('enabled = false: the other checks still run',
                   any(x['check'] == 'multipath-policy' for x in fs))
    finally:
        ws.cleanup()
    f.finish()


if __name__ == '__main__':
    main()
