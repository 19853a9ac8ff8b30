#!/usr/bin/env python3
"""Makes (or remakes) tests/captures/NAME/ from a scenario of the simulator, the way a user's
capture becomes a test (docs/captures.md): `vslint record` of the running scenario (and of the
Unity responder with --unity) into capture.tar.gz, a live `vslint check` of the same estate
whose findings become expected.json, and capture.json saying how it was made. Both runs judge
the estate at one fixed time (VSLINT_TEST_NOW_MS, a test hook) so that ages, such as a
snapshot's, are the same whenever the capture is replayed. Run from the repository's top after
scripts/build.sh:

    tests/captures/make.py NAME SCENARIO [--unity]
"""
import argparse
import json
import os
import shutil
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '..', 'integration'))

from simlib import (Replay, Sim, UnitySim, Workspace, check_estate,  # noqa: E402
                    finding_keys, record)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('name')
    ap.add_argument('scenario')
    ap.add_argument('--unity', action='store_true', help='record the Unity responder too')
    a = ap.parse_args()
    out = os.path.join(HERE, a.name)
    ws = Workspace()
    now_ms = int(time.time() * 1000)
    env = {'VSLINT_TEST_NOW_MS': str(now_ms)}
    unity = UnitySim() if a.unity else None
    try:
        with Sim(a.scenario) as sim:
            arrays = [unity.url] if unity else []
            capture = os.path.join(ws.dir, 'capture.tar.gz')
            record(ws, sim.url, capture, arrays=arrays, env=env)
            live = finding_keys(check_estate(ws, sim.url, arrays=arrays, env=env, db='live.db'))
        with Replay(capture) as rep:
            arrays = [rep.array_url] if unity else []
            replayed = finding_keys(check_estate(ws, rep.url, arrays=arrays, env=env,
                                                 db='replay.db'))
        if replayed != live:
            sys.exit('the replay of the capture does not give the live findings: not written')
        os.makedirs(out, exist_ok=True)
        shutil.copy(capture, os.path.join(out, 'capture.tar.gz'))
        with open(os.path.join(out, 'expected.json'), 'w') as f:
            json.dump(live, f, indent=1, sort_keys=True)
            f.write('\n')
        with open(os.path.join(out, 'capture.json'), 'w') as f:
            json.dump({'scenario': a.scenario, 'vcenter': 'lab', 'unity': a.unity,
                       'now_ms': now_ms, 'findings': len(live),
                       'made_by': 'tests/captures/make.py %s %s%s' % (
                           a.name, a.scenario, ' --unity' if a.unity else '')},
                      f, indent=1, sort_keys=True)
            f.write('\n')
        print('%s: %d findings' % (out, len(live)))
    finally:
        if unity:
            unity.stop()
        ws.cleanup()


if __name__ == '__main__':
    main()
