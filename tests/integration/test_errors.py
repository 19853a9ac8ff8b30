"""What an administrator sees when things go wrong: a wrong password, an unreachable URL, an
untrusted certificate and a broken configuration each give one clear error line on stderr and
exit status 2; the password is never printed; a trusted CA or an explicit insecure=true works."""
import glob

import pytest

from simlib import PASSWORD, USER, Sim, vslint

WRONG = 'not-the-password-42'


def one_error(res, must_contain):
    """Exit status 2 and one line on stderr, which says must_contain."""
    lines = [l for l in res.stderr.splitlines() if l.strip()]
    assert res.returncode == 2, res.stderr
    assert len(lines) == 1, lines
    assert must_contain in lines[0], lines


def config(ws, url, **keys):
    return ws.write_config([dict(name=keys.pop('name', 'lab'), url=url, user=USER, **keys)])


@pytest.fixture(scope='module')
def tls_sim():
    with Sim('clean', tls=True) as sim:
        yield sim


def test_wrong_password(clean_sim, workspace):
    """The fault is named, and the vCenter; the password is not."""
    res = vslint('collect', '-c', config(workspace, clean_sim.url,
                                         password_file=workspace.password_file(WRONG, 'wrong')))
    one_error(res, "login rejected for user 'vslint'")
    assert 'vcenter lab' in res.stderr
    assert WRONG not in res.stdout + res.stderr


def test_wrong_password_not_stored(clean_sim, workspace):
    vslint('collect', '-c', config(workspace, clean_sim.url,
                                   password_file=workspace.password_file(WRONG, 'wrong')))
    for path in glob.glob(workspace.dir + '/vslint.db*'):
        with open(path, 'rb') as fh:
            assert WRONG.encode() not in fh.read(), path


def test_password_env(clean_sim, workspace):
    res = vslint('collect', '-c', config(workspace, clean_sim.url, password_env='VSLINT_TEST_PW'),
                 env={'VSLINT_TEST_PW': PASSWORD})
    assert res.returncode == 0, res.stderr.strip()


def test_password_env_unset(clean_sim, workspace):
    res = vslint('collect', '-c', config(workspace, clean_sim.url, password_env='VSLINT_TEST_PW'),
                 env={'VSLINT_TEST_PW': ''})
    one_error(res, 'VSLINT_TEST_PW')


@pytest.fixture
def unreachable(workspace):
    """Nothing listens on port 1."""
    return config(workspace, 'http://127.0.0.1:1/sdk', name='gone', timeout=10,
                  password_file=workspace.password_file())


def test_unreachable(unreachable):
    res = vslint('collect', '-c', unreachable)
    one_error(res, 'cannot connect')
    assert 'http://127.0.0.1:1/sdk' in res.stderr, 'the URL is not named'


def test_check_unreachable(unreachable):
    """vslint check in a pipeline: the run failed (2), the reason on stderr, JSON intact."""
    res = vslint('check', '-c', unreachable, '--format', 'json')
    one_error(res, 'vcenter gone: poll failed')
    assert res.stdout.lstrip().startswith('{'), res.stdout


def test_tls_simulator_is_https(tls_sim):
    assert tls_sim.url.startswith('https://'), tls_sim.url


def test_untrusted_certificate(tls_sim, workspace):
    res = vslint('collect', '-c', config(workspace, tls_sim.url, name='tls',
                                         password_file=workspace.password_file()))
    one_error(res, 'TLS certificate not trusted')
    assert 'ca_file=' in res.stderr, 'no ca_file suggested'


def test_trusted_with_ca_file(tls_sim, workspace):
    res = vslint('collect', '-c', config(workspace, tls_sim.url, name='tls',
                                         password_file=workspace.password_file(),
                                         ca_file=tls_sim.cert_path))
    assert res.returncode == 0, res.stderr.strip()


def test_insecure_true(tls_sim, workspace):
    res = vslint('collect', '-c', config(workspace, tls_sim.url, name='tls',
                                         password_file=workspace.password_file(),
                                         insecure='true'))
    assert res.returncode == 0, res.stderr.strip()


@pytest.fixture
def bad_config(workspace):
    return config(workspace, 'https://vc/sdk', name='x', password_file=workspace.password_file(),
                  insecure='perhaps')


def test_bad_config_names_file_line_and_key(bad_config):
    """A broken configuration names file, line and key, and polls nothing."""
    one_error(vslint('collect', '-c', bad_config), bad_config + ':8: [vcenter x] insecure: ')


def test_config_check_bad(bad_config):
    assert vslint('config-check', '-c', bad_config).returncode == 2


def test_config_check_good(workspace):
    res = vslint('config-check', '-c', config(workspace, 'https://vc/sdk', name='x',
                                              password_file=workspace.password_file()))
    assert (res.returncode, res.stdout) == (0, 'configuration OK\n')


def test_collect_without_config():
    one_error(vslint('collect'), 'use -c FILE')


def test_collect_help():
    res = vslint('collect', '--help')
    assert res.returncode == 0 and '--config' in res.stdout, 'collect --help does not explain -c'
