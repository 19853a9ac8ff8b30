"""A database that stays the same size (docs/operations.md, "How the database stays small"):
`vslint serve` prunes after a poll what is past retention (resolved findings, digests but the
last, polls thinned to one a day) and never an open finding or a poll one names; /metrics says
the database's size, its rows per table and the last pruning. The long soak is
tests/unit/test_prune.c (a simulated clock)."""
import os
import sqlite3
import time

from apilib import serving, until
from simlib import vcenter

DAY_MS = 86400000


def samples(srv):
    text = srv.get('/metrics').body
    out = {}
    for line in text.splitlines():
        if line and not line.startswith('#'):
            name, value = line.rsplit(' ', 1)
            out[name] = float(value)
    return out


def test_serve_prunes_past_retention_and_says_so(lab, violations_sim, new_workspace):
    ws = new_workspace()
    lab.copy(ws)
    old = int(time.time() * 1000) - 500 * DAY_MS
    old = old - old % DAY_MS + 3600000  # 01:00 of a UTC day 500 days ago
    con = sqlite3.connect(ws.db)
    ids = []
    for i in range(10):
        cur = con.execute(
            "INSERT INTO polls (vcenter, started_ms, finished_ms, ok, mode, rounds)"
            " VALUES ('lab', ?, ?, 1, 'incremental', 1)", (old + i * 60000, old + i * 60000 + 40))
        ids.append(cur.lastrowid)
    for fp, status, resolved in (('old-open', 'open', None), ('old-resolved', 'resolved', old)):
        con.execute(
            "INSERT INTO findings (fingerprint, check_id, vcenter, severity, status,"
            " first_seen_ms, last_seen_ms, resolved_at_ms, first_poll)"
            " VALUES (?, 'retired-check', 'lab', 'warning', ?, ?, ?, ?, ?)",
            (fp, status, old, old, resolved, ids[0]))
    for i in range(3):
        con.execute("INSERT INTO digests (slot_ms, window_from_ms, window_to_ms, sent_ms)"
                    " VALUES (?, ?, ?, ?)", (old + i, old + i, old + i + 1, old + i))
    con.commit()
    con.close()

    with serving(ws, [vcenter(ws, violations_sim.url)]) as s:
        m = until(lambda: (lambda x: x if 'vslint_database_last_prune_rows{table="polls"}' in x
                           else None)(samples(s)), 'a pruning on /metrics', s)
        # The old day keeps its last poll and the one the open finding names; the resolved
        # finding and two of the three digests go.
        assert m['vslint_database_last_prune_rows{table="polls"}'] == 8
        assert m['vslint_database_last_prune_rows{table="findings"}'] == 1
        assert m['vslint_database_last_prune_rows{table="digests"}'] == 2
        assert abs(m['vslint_database_last_prune_timestamp_seconds'] - time.time()) < 120
        con = sqlite3.connect('file:%s?mode=ro' % ws.db, uri=True)
        rows = {t: con.execute('SELECT count(*) FROM %s' % t).fetchone()[0]
                for t in ('polls', 'findings', 'digests', 'capacity_history')}
        kept = [r[0] for r in con.execute(
            'SELECT id FROM polls WHERE finished_ms < ? ORDER BY id', (old + DAY_MS,))]
        opened = con.execute("SELECT status, first_poll FROM findings"
                             " WHERE fingerprint = 'old-open'").fetchone()
        gone = con.execute("SELECT count(*) FROM findings"
                           " WHERE fingerprint = 'old-resolved'").fetchone()[0]
        con.close()
        assert kept == [ids[0], ids[-1]]
        assert opened == ('open', ids[0]) and gone == 0
        m = samples(s)
        for t, n in rows.items():
            assert m['vslint_database_rows{table="%s"}' % t] == n, t
        size = os.path.getsize(ws.db)
        assert m['vslint_database_size_bytes{file="main"}'] == size
        assert 'vslint_database_size_bytes{file="wal"}' in m
        assert 0 <= m['vslint_database_free_bytes'] < size
