"""scripts/check-layers.sh keeps the layers pointing down (docs/design.md): it passes on the
tree as it is, and fails, naming the file, the line and the header, on a planted wrong-way
include (db/ including a check, a check including SQL's layer, vsphere/ including the daemon)."""
import os
import shutil
import subprocess

import pytest

ROOT = os.environ.get('SOURCE_ROOT', os.path.join(os.path.dirname(__file__), '..', '..'))
SCRIPT = os.path.join(ROOT, 'scripts', 'check-layers.sh')
LAYERS = ('util', 'model', 'vsphere', 'db', 'checks', 'web', 'api', 'daemon')


def run(root):
    return subprocess.run(['bash', SCRIPT, root], capture_output=True, text=True)


def test_the_tree_keeps_its_layers():
    res = run(ROOT)
    assert res.returncode == 0, res.stdout
    assert res.stdout.strip() == 'layers OK'


@pytest.fixture
def tree(tmp_path):
    """A copy of the sources of every layer, to plant includes in."""
    for layer in LAYERS:
        shutil.copytree(os.path.join(ROOT, layer), tmp_path / layer,
                        ignore=shutil.ignore_patterns('*.png', '*.svg', '*.css', '*.js'))
    return tmp_path


@pytest.mark.parametrize('where,header', [
    ('db/findings.c', 'checks/engine.h'),
    ('checks/snapshots.c', 'db/db.h'),
    ('vsphere/decode.c', 'daemon/config.h'),
    ('model/estate.h', 'checks/check.h'),
    ('api/handlers.c', 'vsphere/session.h'),
])
def test_a_wrong_way_include_fails(tree, where, header):
    path = tree / where
    lines = path.read_text().splitlines(keepends=True)
    at = next(i for i, ln in enumerate(lines) if ln.startswith('#include'))
    lines.insert(at, '#include "%s"\n' % header)
    path.write_text(''.join(lines))
    res = run(str(tree))
    assert res.returncode == 1
    assert res.stdout.strip() == '%s:%d: %s/ may not include %s' % (
        where, at + 1, where.split('/')[0], header)
