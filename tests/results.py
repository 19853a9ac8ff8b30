#!/usr/bin/env python3
"""Counts the test cases of a `meson test` run: each test's JUnit XML in RESULTS_DIR/NAME.xml
(cmocka cases, pytest cases, the browser test's steps, the fuzz inputs replayed), for the tests
meson ran (TESTLOG, meson-logs/testlog.json). A test that wrote no results, or whose exit
status failed after all its cases passed (a crash, a timeout, a sanitizer report at exit),
counts as one more failure. Prints each failed case, `N skipped` when some were, then
`N passed, N failed` as the last line. Exit status 0 when nothing failed.
Usage: results.py TESTLOG RESULTS_DIR"""
import json
import os
import sys
import xml.etree.ElementTree as ET

PASSED = ('OK', 'EXPECTEDFAIL')


def cases(path):
    """(case name, outcome, message) of a JUnit file; outcome is passed, failed or skipped. A
    case listed more than once (pytest adds a teardown error as a second entry) counts once,
    failed if any entry failed."""
    seen = {}
    for tc in ET.parse(path).getroot().iter('testcase'):
        name = '::'.join(x for x in (tc.get('classname'), tc.get('name')) if x)
        bad = tc.find('failure')
        if bad is None:
            bad = tc.find('error')
        if bad is not None:
            # pytest's message is one line; cmocka's text is the assertion, then file:line.
            lines = [l.strip() for l in (bad.get('message') or bad.text or '').splitlines()]
            outcome = ('failed', ' / '.join([l for l in lines if l][:2]))
        elif tc.find('skipped') is not None:
            outcome = ('skipped', '')
        else:
            outcome = ('passed', '')
        if seen.get(name, ('passed',))[0] != 'failed':
            seen[name] = outcome
    return [(name, o, msg) for name, (o, msg) in seen.items()]


def main(testlog, results_dir):
    count = {'passed': 0, 'failed': 0, 'skipped': 0}
    failures = []
    try:
        with open(testlog) as f:
            tests = [json.loads(line) for line in f if line.strip()]
    except OSError as e:
        print('no test ran: %s: %s' % (testlog, e.strerror))
        tests = []
    if not tests:
        print('0 passed, 1 failed')
        return 1
    for t in tests:
        # meson names a test "PROJECT:SUITE / NAME".
        name, result = t['name'].split(' / ')[-1], t['result']
        path = os.path.join(results_dir, name + '.xml')
        try:
            found = cases(path)
        except (OSError, ET.ParseError) as e:
            found = None
            why = 'no results (%s)' % (e.strerror if isinstance(e, OSError) else e)
        if found is None or not found:
            if result == 'SKIP':
                count['skipped'] += 1
            else:
                count['failed'] += 1
                failures.append('%s: %s, exit %s' % (name, why if found is None else
                                                     'no cases in its results', result))
            continue
        for case, outcome, msg in found:
            count[outcome] += 1
            if outcome == 'failed':
                failures.append('%s: %s%s' % (name, case, ': ' + msg if msg else ''))
        if result not in PASSED + ('SKIP',) and not any(o == 'failed' for _, o, _ in found):
            count['failed'] += 1
            failures.append('%s: %s after its cases passed (see its log)' % (name, result))
    for f in failures:
        print('FAILED ' + f[:300])
    if count['skipped']:
        print('%d skipped' % count['skipped'])
    # The last line is exactly "N passed, N failed": CI reads it.
    print('%d passed, %d failed' % (count['passed'], count['failed']))
    return 1 if count['failed'] else 0


if __name__ == '__main__':
    sys.exit(main(*sys.argv[1:]))
