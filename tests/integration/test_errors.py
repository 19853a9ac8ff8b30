#!/usr/bin/env python3
"""What an administrator sees when things go wrong: a wrong password, an unreachable URL, an
untrusted certificate and a broken configuration each give one clear error line on stderr and
exit status 2; the password is never printed; a trusted CA or an explicit insecure=true works."""
import glob
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from simlib import Sim, Workspace, Failures, vslint, PASSWORD, USER  # noqa: E402

WRONG = 'not-the-password-42'


def error_lines(res):
    return [l for l in res.stderr.splitlines() if l.strip()]


def one_error(f, what, res, must_contain):
    lines = error_lines(res)
    f.eq(what + ': exit status', res.returncode, 2)
    f.eq(what + ': error lines (%r)' % lines, len(lines), 1)
    f.true(what + ': %r should contain %r' % (lines, must_contain),
           bool(lines) and must_contain in lines[0])


def main():
    f = Failures('errors')
    ws = Workspace()
    try:
        with Sim('clean', tls=False) as sim:
            # A wrong password: the fault is named, the password is not.
            pw = ws.password_file(WRONG, 'wrong')
            conf = ws.write_config([{'name': 'lab', 'url': sim.url, 'user': USER,
                                     'password_file': pw}])
            res = vslint('collect', '-c', conf)
            one_error(f, 'wrong password', res, "login rejected for user 'vslint'")
            f.true('wrong password names the vCenter', 'vcenter lab' in res.stderr)
            f.true('wrong password leaks', WRONG not in res.stdout + res.stderr)
            for path in glob.glob(ws.dir + '/vslint.db*'):
                with open(path, 'rb') as fh:
                    f.true('password stored in ' + path, WRONG.encode() not in fh.read())

            # The right password from the environment works.
            conf = ws.write_config([{'name': 'lab', 'url': sim.url, 'user': USER,
                                     'password_env': 'VSLINT_TEST_PW'}])
            res = vslint('collect', '-c', conf, env={'VSLINT_TEST_PW': PASSWORD})
            f.eq('password_env collect (%s)' % res.stderr.strip(), res.returncode, 0)
            res = vslint('collect', '-c', conf, env={'VSLINT_TEST_PW': ''})
            one_error(f, 'password_env unset', res, 'VSLINT_TEST_PW')

        # Nothing listens on port 1.
        pw = ws.password_file()
        conf = ws.write_config([{'name': 'gone', 'url': 'http://127.0.0.1:1/sdk', 'user': USER,
                                 'password_file': pw, 'timeout': 10}])
        res = vslint('collect', '-c', conf)
        one_error(f, 'unreachable', res, 'cannot connect')
        f.true('unreachable names the URL', 'http://127.0.0.1:1/sdk' in res.stderr)
        # vslint check in a pipeline: the run failed (2), the reason on stderr, JSON intact.
        res = vslint('check', '-c', conf, '--format', 'json')
        one_error(f, 'check, unreachable', res, 'vcenter gone: poll failed')
        f.true('check, unreachable: stdout is still JSON', res.stdout.lstrip().startswith('{'))

        with Sim('clean', tls=True) as sim:
            f.true('TLS simulator URL is https: ' + sim.url, sim.url.startswith('https://'))
            conf = ws.write_config([{'name': 'tls', 'url': sim.url, 'user': USER,
                                     'password_file': pw}])
            res = vslint('collect', '-c', conf)
            one_error(f, 'untrusted certificate', res, 'TLS certificate not trusted')
            f.true('untrusted certificate suggests ca_file', 'ca_file=' in res.stderr)

            conf = ws.write_config([{'name': 'tls', 'url': sim.url, 'user': USER,
                                     'password_file': pw, 'ca_file': sim.cert_path}])
            res = vslint('collect', '-c', conf)
            f.eq('trusted with ca_file (%s)' % res.stderr.strip(), res.returncode, 0)

            conf = ws.write_config([{'name': 'tls', 'url': sim.url, 'user': USER,
                                     'password_file': pw, 'insecure': 'true'}])
            res = vslint('collect', '-c', conf)
            f.eq('insecure=true (%s)' % res.stderr.strip(), res.returncode, 0)

        # A broken configuration names file, line and key, and polls nothing.
        conf = ws.write_config([{'name': 'x', 'url': 'https://vc/sdk', 'user': USER,
                                 'password_file': pw, 'insecure': 'perhaps'}])
        res = vslint('collect', '-c', conf)
        one_error(f, 'bad config', res, conf + ':8: [vcenter x] insecure: ')
        res = vslint('config-check', '-c', conf)
        f.eq('config-check bad status', res.returncode, 2)
        conf = ws.write_config([{'name': 'x', 'url': 'https://vc/sdk', 'user': USER,
                                 'password_file': pw}])
        res = vslint('config-check', '-c', conf)
        f.eq('config-check good', (res.returncode, res.stdout), (0, 'configuration OK\n'))
        res = vslint('collect')
        one_error(f, 'no -c', res, 'use -c FILE')
        res = vslint('collect', '--help')
        f.true('collect --help explains -c', res.returncode == 0 and '--config' in res.stdout)
    finally:
        ws.cleanup()
    f.finish()


if __name__ == '__main__':
    main()
