// Reads a JUnit XML report with a real consumer, the pinned test-results-parser
// of tools/junit (as the test views of CI services read them), and prints what
// it found as JSON: the totals and each case's name and status. Run by
// junit_test.go with NODE_PATH=tools/junit/node_modules.
const { parse } = require('test-results-parser');
const result = parse({ type: 'junit', files: [process.argv[2]] });
const out = { total: result.total, passed: result.passed, failed: result.failed, skipped: result.skipped, suites: [] };
for (const s of result.suites) {
  out.suites.push({ name: s.name, total: s.total, passed: s.passed, failed: s.failed, skipped: s.skipped,
    cases: s.cases.map((c) => ({ name: c.name, status: c.status, failure: c.failure || '' })) });
}
process.stdout.write(JSON.stringify(out, null, 1) + '\n');
