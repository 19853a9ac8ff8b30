#!/usr/bin/env python3
"""Writes the SOAP seed corpus (tests/fuzz/corpus/fuzz_soap/seed-*) from the captured answers in
tests/unit/data/: each is the fuzz target's two control bytes (decoder, chunking) and a document,
the big captures cut down to their first objects. Run from anywhere; rewrites only seed-* files."""
import os
import re

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, '..', 'unit', 'data')
OUT = os.path.join(HERE, 'corpus', 'fuzz_soap')

# selector byte: 0 datastore, 1 host, 2 vm, 3 storage pod, 4 dvswitch, 5 esxcli, 6 options, 7 all
# (capture, selector, indexes of the <objects> to keep or None for all): the kept objects carry
# what the decoders branch on (NFS and VMFS info, an iSCSI adapter, snapshot trees, an RDM).
SEEDS = [
    ('datastore.xml', 0, [0, 3]),
    ('host.xml', 1, [3]),
    ('vm.xml', 2, [11, 83]),
    ('storage_pod.xml', 3, None),
    ('dvswitch.xml', 4, None),
    ('esxcli-nmp.xml', 5, None),
    ('query-options.xml', 6, None),
    ('bound-vnics.xml', 6, None),
    ('vm.xml', 7, [4]),
    ('esxcli-satp-rules.xml', 5, None),
    # Alarms: an Or with a state member, an And, a yellow-only one; containers.
    ('alarms.xml', 7, [3, 5, 9]),
    ('folders.xml', 7, [0, 2, 7]),
    # edges: a spanned, a local boot and an oddly named datastore; the host with local SAS,
    # NVMe under HPP, a PowerPath device and ALUA standby paths; a VM with an ISO image.
    ('edges-datastore.xml', 0, [4, 6, 23]),
    ('edges-host.xml', 1, [4]),
    ('edges-vm.xml', 2, [16, 47]),
    ('edges-esxcli-satp-rules.xml', 5, None),
]


def cut(text, keep):
    """The envelope with only the <objects> elements whose indexes are in keep."""
    if keep is None:
        return text
    objs = list(re.finditer('<objects>.*?</objects>', text, re.S))
    return (text[:objs[0].start()] + ''.join(objs[i].group(0) for i in keep) +
            text[objs[-1].end():])


def main():
    for name in os.listdir(OUT):
        if name.startswith('seed-'):
            os.unlink(os.path.join(OUT, name))
    for i, (name, sel, keep) in enumerate(SEEDS):
        with open(os.path.join(DATA, name), encoding='utf-8') as f:
            doc = cut(f.read(), keep).encode()
        # Second byte: one chunk boundary for the first seeds, more for the others.
        ctl = i % 4
        base = os.path.splitext(name)[0]
        with open(os.path.join(OUT, 'seed-%d-%s' % (sel, base)), 'wb') as f:
            f.write(bytes([sel, ctl]) + doc)


if __name__ == '__main__':
    main()
