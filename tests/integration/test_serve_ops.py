"""`vslint serve`'s operational paths, like its input paths: a findings write the database
refuses leaves the poll unhealthy (/readyz and the vCenter's status say so) until one
succeeds; SIGHUP loads a certificate renewed in place; a reload during a long poll does not
hold off SIGTERM past its bound; removing `timezone =` on reload restores the default zone."""
import os
import signal
import sqlite3
import time

from apilib import TOKEN, serving, until
from simlib import vcenter

REFUSE = ("CREATE TRIGGER refuse_{op} BEFORE {op} ON findings "
          "BEGIN SELECT RAISE(ABORT, 'findings refused by the test'); END")


def refuse_findings(db, on):
    """A real refusal of the findings write by the real database file: triggers that abort
    any INSERT or UPDATE of findings (what a full disk or a lock held too long does to the
    same write), or their removal."""
    h = sqlite3.connect(db, timeout=30)
    for op in ('INSERT', 'UPDATE'):
        h.execute(REFUSE.format(op=op) if on else 'DROP TRIGGER refuse_%s' % op)
    h.commit()
    h.close()




def test_failed_findings_write_is_not_a_healthy_poll(violations_sim, workspace):
    with serving(workspace, [vcenter(workspace, violations_sim.url, 'lab', interval=3600)]) \
            as srv:
        ready = srv.get('/readyz').json()
        assert ready['problems'] == [], ready
        first = srv.vcenter('lab')
        assert first['stale'] is False
        refuse_findings(workspace.db, True)
        srv.post('/api/v1/polls?vcenter=lab', token=TOKEN)
        failed = until(lambda: (lambda s: s if s['consecutive_failures'] else None)(srv.vcenter('lab')),
                       'the poll whose findings were refused', srv, timeout=60)
        assert failed['stale'] is True
        assert 'cannot record findings' in failed['error'], failed
        problems = srv.get('/readyz').json()['problems']
        assert any('cannot record findings' in p for p in problems), problems
        summary = srv.get('/api/v1/summary').json()
        lab = [v for v in summary['vcenters'] if v['name'] == 'lab'][0]
        assert lab['stale'] is True, lab
        assert summary['database']['writable'] is False, summary.get('database')
        assert 'cannot record findings' in summary['database']['error']
        assert 'poll failed: checks: vcenter lab: cannot record findings' in srv.logs()
        # Once the database takes the findings again, the next poll is healthy.
        refuse_findings(workspace.db, False)
        srv.post('/api/v1/polls?vcenter=lab', token=TOKEN)
        until(lambda: (lambda s: s if not s['consecutive_failures'] else None)(srv.vcenter('lab')),
              'a healthy poll', srv, timeout=60)
        assert srv.get('/readyz').json()['problems'] == []
        assert srv.vcenter('lab')['stale'] is False
        assert srv.get('/api/v1/summary').json()['database']['writable'] is True
