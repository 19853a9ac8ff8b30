#!/usr/bin/env python3
"""Incremental polling against a full read, on the govmomi simulator's scale:N estate: bytes and
time of `vslint collect`, then of the incremental rounds of `vslint serve` ([vcenter]
incremental = true) after 1 % of the VMs were powered off (docs/performance.md).

usage: VCSIM=build/tests/sim/vcsim-vslint VSLINT=build/vslint \
       /usr/bin/python3 bench/incremental_vcsim.py [N]      (N VMs, default 5000)"""
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'tests',
                                'integration'))
from simlib import Sim, VimClient, Workspace, vcenter, VSLINT
from apilib import serving
N = int(sys.argv[1]) if len(sys.argv) > 1 else 5000
t = time.time()
with Sim('scale:%d' % N, page_size=500) as sim:
    print('sim built in %.1f s' % (time.time() - t), flush=True)
    ws = Workspace()
    vc = vcenter(ws, sim.url, 'big', interval=3600, incremental='true', timeout=300)
    conf = ws.write_config([vc], name='collect.conf')
    t = time.time()
    res = subprocess.run([VSLINT, 'collect', '-v', '-c', conf], capture_output=True, text=True)
    full_s = time.time() - t
    m = re.search(r'(\d+) requests, (\d+) bytes on the wire', res.stderr)
    print('full read: %.2f s wall, %s requests, %s bytes' % (full_s, m.group(1), m.group(2)), flush=True)
    with serving(ws, [vc], extra='') as srv:
        deadline = time.time() + 600
        while srv.vcenter('big')['mode'] != 'incremental' and time.time() < deadline:
            time.sleep(0.5)
        before = sim.stats()
        vms = [v for v in srv.get('/api/v1/inventory/vms?limit=1000').json()['vms']
               if v['power_state'] == 'poweredOn'][:N // 100]
        vim = VimClient(sim.url)
        t = time.time()
        tasks = [re.search(r'>(task-[^<]+)<', vim.call(
            '<PowerOffVM_Task><_this type="VirtualMachine">%s</_this></PowerOffVM_Task>'
            % v['moref'])).group(1) for v in vms]
        print('mode', srv.vcenter('big')['mode'], 'tasks', set(vim.wait_task(tk) for tk in tasks))
        print('%d VMs powered off in %.1f s' % (len(vms), time.time() - t), flush=True)
        deadline = time.time() + 240
        while time.time() < deadline:
            lines = re.findall(r'(\d+) changed objects applied in (\d+) ms \((\d+) bytes\)', srv.logs())
            if sum(int(a) for a, _, _ in lines) >= len(vms):
                break
            time.sleep(1)
        print('all applied %.1f s after the changes' % (time.time() - t))
        after = sim.stats()
        objs = sum(int(a) for a, _, _ in lines)
        ms = sum(int(b) for _, b, _ in lines)
        by = sum(int(c) for _, _, c in lines)
        print('incremental: %d rounds, %d objects, %d ms applying, %d bytes; view reads %d -> %d'
              % (len(lines), objs, ms, by, before['retrieve_view'], after['retrieve_view']))
    ws.cleanup()
