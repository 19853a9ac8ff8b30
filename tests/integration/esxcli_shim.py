"""`esxcli` for running a vslint plan's sh script against the simulator: the command line is
checked against the ESXCLI table (esxcli_ref.py), then run on the host VSLINT_SIM_HOST (a
moref) of the simulator at VSLINT_SIM_URL through vCenter's esxcli, the ExecuteSoap path that
govc host.esxcli and PowerCLI use; what the simulator answers is printed as esxcli's keyvalue
formatter prints it (STRUCT.FIELD.TYPE=VALUE, record after record). A failed command prints
esxcli's message on stderr and exits 1, as esxcli does. Only --formatter=keyvalue is printed:
the plan reads nothing else."""
import html
import os
import sys
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from esxcli_ref import PlanError, parse_command  # noqa: E402
from simlib import VimClient  # noqa: E402

XSI_TYPE = '{http://www.w3.org/2001/XMLSchema-instance}type'


def records(doc):
    root = ET.fromstring(html.unescape(doc).encode())
    if root.get(XSI_TYPE) == 'ArrayOfDataObject':
        return list(root)
    return [root]


def main(argv):
    formatter = None
    if argv and argv[0].startswith('--formatter='):
        formatter = argv[0].split('=', 1)[1]
    try:
        cmd = parse_command(argv)
    except PlanError as e:
        print('Error: %s' % e, file=sys.stderr)
        return 1
    try:
        doc = VimClient(os.environ['VSLINT_SIM_URL']).esxcli(os.environ['VSLINT_SIM_HOST'], cmd)
    except RuntimeError as e:
        print(str(e), file=sys.stderr)
        return 1
    if cmd['cmd'][-1] not in ('get', 'list'):
        return 0
    if formatter != 'keyvalue':
        print('esxcli_shim: only --formatter=keyvalue is printed', file=sys.stderr)
        return 1
    for rec in records(doc):
        typ = rec.get(XSI_TYPE, 'Object')
        for f in rec:
            print('%s.%s.string=%s' % (typ, f.tag, f.text or ''))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
