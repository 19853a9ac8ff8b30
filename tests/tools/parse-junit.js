// Parses a JUnit XML file with test-results-parser (an independent JUnit reader used by CI
// reporting tools) and prints its totals as JSON: {"total","passed","failed","skipped",
// "suites":[{"name","total","failed","skipped"}]}. Exit 1 when it cannot parse the file.
'use strict';
const { parse } = require('test-results-parser');
try {
  const r = parse({ type: 'junit', files: [process.argv[2]] });
  console.log(JSON.stringify({
    total: r.total, passed: r.passed, failed: r.failed, skipped: r.skipped,
    suites: r.suites.map(s => ({ name: s.name, total: s.total, failed: s.failed, skipped: s.skipped })),
  }));
} catch (e) {
  console.log('unparseable: ' + e.message);
  process.exit(1);
}
