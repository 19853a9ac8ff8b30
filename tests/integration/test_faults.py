#!/usr/bin/env python3
"""vCenter misbehaving: a truncated answer, malformed XML, an HTTP 500 page, a dropped
connection, a page lost with its connection, and vslint killed with SIGKILL in the middle of a
poll. Each failure gives one
clear error line and exit status 2, and the previous snapshot stays exactly as it was; a
connection dropped before the request was handled is retried and loses nothing; after
kill -9 the database passes PRAGMA integrity_check and still holds the previous snapshot."""
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from simlib import Sim, Workspace, Failures, vslint, USER, VSLINT  # noqa: E402


def inventory(conf):
    """The stored inventory without snapshot times, which the simulator sets relative to its
    own start (every simulator run plants "10 days ago" anew)."""
    vc = json.loads(vslint('inventory', '-c', conf, '--format', 'json').stdout)['vcenters'][0]
    for vm in vc['vms']:
        for s in vm['snapshots']:
            s.pop('created', None)
    return {k: vc[k] for k in ('datastores', 'storage_pods', 'dvswitches', 'hosts', 'vms')}


def main():
    f = Failures('faults')
    ws = Workspace()
    try:
        pw = ws.password_file()
        with Sim('violations', page_size=5) as sim:
            conf = ws.write_config([{'name': 'lab', 'url': sim.url, 'user': USER,
                                     'password_file': pw}])
            res = vslint('collect', '-c', conf)
            f.eq('first poll (%s)' % res.stderr.strip(), res.returncode, 0)
            good = inventory(conf)
            counts = sim.truth()['counts']
        findings_before = json.loads(vslint('check', '-c', conf, '--offline', '--format', 'json',
                                            '--fail-on', 'never').stdout)['findings']

        cases = [
            ('truncate', 'transfer closed'),
            ('malformed', "bad response: line"),
            ('http500', 'HTTP 500'),
        ]
        for kind, phrase in cases:
            # The same scenario again (same morefs), answering its 3rd property read badly.
            with Sim('violations', page_size=5, extra=['-fault', '%s:3' % kind]) as sim:
                conf = ws.write_config([{'name': 'lab', 'url': sim.url, 'user': USER,
                                         'password_file': pw}])
                res = vslint('collect', '-c', conf)
            lines = [l for l in res.stderr.splitlines() if l.strip()]
            f.eq('%s: exit status' % kind, res.returncode, 2)
            f.eq('%s: one error line (%r)' % (kind, lines), len(lines), 1)
            f.true('%s: the line says what happened: %r' % (kind, lines),
                   bool(lines) and phrase in lines[0] and 'vcenter lab' in lines[0])
            f.true('%s: the previous snapshot is kept' % kind, inventory(conf) == good)
            inv = json.loads(vslint('inventory', '-c', conf, '--format', 'json').stdout)
            last = inv['vcenters'][0]['last_poll']
            f.true('%s: the failed poll is recorded: %r' % (kind, last),
                   last is not None and last['ok'] is False and phrase in (last['error'] or ''))
            res = vslint('check', '-c', conf, '--offline', '--format', 'json', '--fail-on',
                         'never')
            f.eq('%s: findings of the kept snapshot' % kind,
                 sorted(x['fingerprint'] for x in json.loads(res.stdout)['findings']),
                 sorted(x['fingerprint'] for x in findings_before))

        # A connection closed before the server handled the request (an idle keep-alive
        # connection closing under us): the request is retried and the poll is complete.
        # The second RetrievePropertiesEx (the Datastore view) goes over the connection that
        # logged in, so it is a reused one, as in that race.
        with Sim('violations', page_size=5,
                 extra=['-fault', 'drop:2:RetrievePropertiesEx']) as sim:
            conf = ws.write_config([{'name': 'lab', 'url': sim.url, 'user': USER,
                                     'password_file': pw}])
            res = vslint('collect', '-c', conf)
            f.eq('drop: retried, exit status (%s)' % res.stderr.strip(), res.returncode, 0)
            f.true('drop: every datastore stored: %s' % res.stdout.strip(),
                   ' %d datastores' % counts['datastore'] in res.stdout)
            f.true('drop: the stored inventory is complete', inventory(conf) == good)

        # The server handles a ContinueRetrievePropertiesEx, then the connection dies without
        # an answer; curl re-sends it on a new connection and gets the page after the lost one.
        # vslint sees the reconnection, does not store a snapshot with a hole, and polls again.
        # (The 3rd Continue is the 2nd on the prefetch connection of the Datastore read: reused.)
        with Sim('violations', page_size=5,
                 extra=['-fault', 'lose:3:ContinueRetrievePropertiesEx']) as sim:
            conf = ws.write_config([{'name': 'lab', 'url': sim.url, 'user': USER,
                                     'password_file': pw}])
            res = vslint('collect', '-c', conf)
            f.eq('lose: exit status (%s)' % res.stderr.strip(), res.returncode, 0)
            f.true('lose: the second poll is logged: %r' % res.stderr,
                   'a page may have been lost; polling again' in res.stderr)
            f.true('lose: every datastore stored: %s' % res.stdout.strip(),
                   ' %d datastores' % counts['datastore'] in res.stdout)
            f.true('lose: the stored inventory is complete', inventory(conf) == good)

        # kill -9 in the middle of a large poll: the database opens, passes integrity_check
        # and holds the previous complete snapshot.
        # The snapshot transaction is open from the first object read to the commit, so a
        # kill at any point of a poll that takes a couple of seconds lands inside it.
        with Sim('scale:10000', page_size=100) as sim:
            conf = ws.write_config([{'name': 'lab', 'url': sim.url, 'user': USER,
                                     'password_file': pw}])
            proc = subprocess.Popen([VSLINT, 'collect', '-c', conf], stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE)
            time.sleep(0.4)
            killed = proc.poll() is None
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            f.true('the poll was killed in flight (exit %s)' % proc.returncode, killed)
            db = sqlite3.connect(ws.db)
            f.eq('integrity_check after kill -9', db.execute('PRAGMA integrity_check').fetchone()[0],
                 'ok')
            n = db.execute("SELECT count(*) FROM vms WHERE vcenter = 'lab'").fetchone()[0]
            db.close()
            f.eq('the previous snapshot is still there (VMs)', n, counts['vm'])
            f.true('inventory after kill -9 is the previous snapshot', inventory(conf) == good)
    finally:
        ws.cleanup()
    f.finish()


if __name__ == '__main__':
    main()
