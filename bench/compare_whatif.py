#!/usr/bin/env python3
"""Placement and gate answers of two vslint binaries, each serving a copy of one stored
database (its vCenter unreachable, as bench_estate.py --db): the same candidates, rejections
and reasons in the same order, the snapshot's age and the counts of rejections aside. Run by
hand before and after a change to checks/whatif.c; nothing is asserted but the last line.

  bench/compare_whatif.py DB OLD_VSLINT NEW_VSLINT
      NEW_VSLINT is asked with rejected_limit=all (OLD_VSLINT, from before the parameter,
      listed every rejection).
"""
import json, os, shutil, subprocess, sys, tempfile, time, urllib.request
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                'tests', 'integration'))
from apilib import free_port  # noqa: E402  (the integration tests' helper)
if len(sys.argv) != 4:
    sys.exit(__doc__)
db_src, bins = sys.argv[1], sys.argv[2:4]
top = tempfile.mkdtemp(prefix='vslint-compare-whatif-')
QUERIES = ['disks_gb=40&limit=1000', 'disks_gb=200&disk_format=thin&limit=1000',
           'disks_gb=100,100&vms=3&disk_format=eager&limit=1000&fail_on=info',
           'disks_gb=5&vms=40&ft=true&limit=1000', 'disks_gb=1&shared_bus=true&disk_format=lazy&limit=1000']
def get(url, data=None):
    req = urllib.request.Request(url, data=data, headers={'Content-Type': 'application/json'} if data else {})
    with urllib.request.urlopen(req, timeout=1200) as r:
        return json.loads(r.read())
out = []
for k, b in enumerate(bins):
    work = os.path.join(top, 'w%d' % k)
    shutil.rmtree(work, ignore_errors=True); os.makedirs(work)
    db = work + '/v.db'; shutil.copyfile(db_src, db)
    open(work + '/pw', 'w').write('x\n'); os.chmod(work + '/pw', 0o600)
    port = free_port()
    conf = work + '/v.conf'
    open(conf, 'w').write('[database]\npath = %s\n\n[server]\nlisten = 127.0.0.1:%d\nheader_timeout = 600\n\n'
        '[vcenter synth]\nurl = http://127.0.0.1:1/sdk\nuser = u\npassword_file = %s\ninterval = 86400\n' % (db, port, work + '/pw'))
    srv = subprocess.Popen([b, 'serve', '-c', conf], stdout=open(work + '/log', 'w'), stderr=subprocess.STDOUT)
    base = 'http://127.0.0.1:%d' % port
    for _ in range(600):
        try:
            v = get(base + '/api/v1/summary')['vcenters'][0]
            if v.get('last_poll') is not None or not v['polling']:
                break
        except Exception:
            pass
        time.sleep(0.5)
    res = []
    for q in QUERIES:
        t = time.time()
        a = get(base + '/api/v1/placement?' + q + ('&rejected_limit=all' if k == 1 else ''))
        print(b, q, '%.1f s' % (time.time() - t), len(a['rejected']), a['total_candidates'], file=sys.stderr)
        for key in ('total_rejected', 'rejected_truncated', 'rejected_by_reason'):
            a.pop(key, None)
        for s in a['snapshots']:
            s.pop('snapshot_age_s')
        res.append(a)
    names = [r['datastore'] for r in res[0]['rejected'][:3]] + [c['datastore'] for c in res[0]['candidates'][:3]]
    for n in names:
        for body in ({'datastore': n, 'disks_gb': [40]}, {'datastore': n, 'disks_gb': [900], 'disk_format': 'eager', 'vms': 2}):
            a = get(base + '/api/v1/gate', json.dumps(body).encode())
            a.pop('snapshot_age_s')
            res.append(a)
    srv.terminate(); srv.wait()
    out.append(res)
same = all(json.dumps(x, sort_keys=True) == json.dumps(y, sort_keys=True) for x, y in zip(out[0], out[1]))
print('answers', len(out[0]), 'identical' if same else 'DIFFER')
for i, (x, y) in enumerate(zip(out[0], out[1])):
    if x != y:
        for name, ans in (('a', x), ('b', y)):
            with open(os.path.join(top, '%s%d.json' % (name, i)), 'w') as f:
                f.write(json.dumps(ans, indent=1, sort_keys=True))
        print('differ: %d (%s/a%d.json, b%d.json)' % (i, top, i, i))
if same:
    shutil.rmtree(top, ignore_errors=True)
