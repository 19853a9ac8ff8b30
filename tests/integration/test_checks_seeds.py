"""The seeds' rules taken whole (issue 22), against the violations scenario's objects of
tests/sim/scenario_seeds.go (written from that spec, not from vslint's output): what a user
reads in the findings. The exact sets of findings per check, the twins and the evidence are in
test_checks_hosts.py's tables with the other planted objects."""
from simlib import finding


def naa(s):
    return 'naa.60060160a0b0' + '0' * 18 + s


def host_luns(estate):
    """(host name, canonical name) -> the LUN in `vslint inventory`."""
    return {(h['name'], x['canonical_name']): x
            for h in estate.inventory()['vcenters'][0]['hosts'] for x in h['luns']}


def test_paths_to_one_storage_processor_name_it(lab):
    """000 §3.1.1: half of each SP's ports in each fabric. Two HBAs whose paths both end at SP A
    ports (WWNs 50:06:01:60 and 50:06:01:61) are one SP failure from losing the LUN."""
    x = finding(lab.findings, 'multipath-redundancy', 'esx-san-1 ' + naa('f1'))
    assert 'all to one storage processor (SP A)' in x['message']
    paths = x['evidence']['paths']
    assert sorted((p['target_wwpn'], p['storage_processor']) for p in paths) == [
        ('50:06:01:60:47:e4:1e:49', 'SP A'), ('50:06:01:61:47:e4:1e:49', 'SP A')]
    assert 'WWN convention' in x['evidence']['storage_processors_how']


def test_stored_path_targets(lab):
    """The target port of each path is in the inventory, as the simulator sends it."""
    luns = host_luns(lab)
    got = sorted(p['target_wwpn'] for p in luns[('esx-san-1', naa('f2'))]['paths'])
    assert got == ['50:06:01:60:47:e4:1e:49', '50:06:01:68:47:e4:1e:49']
    assert [p['target_wwpn'] for p in luns[('esx-san-1', naa('a3'))]['paths']] == [None, None]


def test_protocol_endpoint_judged_as_a_lun(lab):
    """000 §3.9: protocol endpoint devices "are used for tuning as described in section 3.3":
    a PE on MRU is flagged like a LUN and called what it is; the PE on RR iops=1 is not."""
    x = finding(lab.findings, 'multipath-policy', 'esx-san-1 ' + naa('f3'))
    assert 'VVol protocol endpoint' in x['message']
    luns = host_luns(lab)
    assert luns[('esx-san-1', naa('f3'))]['protocol_endpoint'] is True
    assert luns[('esx-san-1', naa('a3'))]['protocol_endpoint'] is None
