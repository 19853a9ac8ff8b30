// Checks recorded HTTP answers of a running vslint against docs/openapi.yaml with independent
// tools: @seriousme/openapi-schema-validator checks the document itself against the OpenAPI
// 3.0 schema, and openapi-backend (Ajv underneath) matches each request to an operation and
// validates the answer's status, Content-Type, headers and body against it.
// Usage: node validate-openapi.js SPEC.yaml ANSWERS.jsonl
//   each line: {"method","path" (with query),"headers":{request},"status","response_headers":{},
//               "body" (text)}
// Prints one line per problem and a closing count; exit 0 only when every answer matches.
'use strict';
const fs = require('fs');
const yaml = require('js-yaml');
const { Validator } = require('@seriousme/openapi-schema-validator');
const { OpenAPIBackend } = require('openapi-backend');

async function main() {
  const [specPath, answersPath] = process.argv.slice(2);
  const spec = yaml.load(fs.readFileSync(specPath, 'utf8'));
  const problems = [];

  const sv = new Validator();
  const res = await sv.validate(JSON.parse(JSON.stringify(spec)));
  if (!res.valid)
    problems.push('the document is not valid OpenAPI: ' + JSON.stringify(res.errors).slice(0, 2000));

  const api = new OpenAPIBackend({ definition: spec, quick: false, strict: true, validate: true,
                                   ajvOpts: { strict: false } });
  await api.init();

  const lines = fs.readFileSync(answersPath, 'utf8').split('\n').filter((l) => l.trim());
  let checked = 0;
  for (const line of lines) {
    const a = JSON.parse(line);
    const what = `${a.method} ${a.path} -> ${a.status}`;
    const [pathOnly, qs] = a.path.split('?');
    const query = {};
    for (const [k, v] of new URLSearchParams(qs || '')) query[k] = v;
    const req = { method: a.method.toLowerCase(), path: pathOnly, query, headers: a.headers || {} };
    const op = api.matchOperation(req);
    checked++;
    if (!op) {
      // Unknown routes are answered 404 with the error shape; nothing else may go undocumented.
      if (a.status === 404 || a.status === 405) {
        const err = api.validateResponse(JSON.parse(a.body), 'getFinding', 404);
        if (err.errors && err.errors.length)
          problems.push(`${what}: error body does not match Error: ${JSON.stringify(err.errors)}`);
        continue;
      }
      problems.push(`${what}: no operation in the document matches`);
      continue;
    }
    const resp = op.responses && op.responses[String(a.status)];
    if (!resp) {
      problems.push(`${what}: status ${a.status} is not documented for ${op.operationId}`);
      continue;
    }
    const ctype = ((a.response_headers || {})['content-type'] || '').split(';')[0].trim();
    const documented = resp.content ? Object.keys(resp.content) : [];
    if (documented.length === 0) {
      if (a.body && a.body.length)
        problems.push(`${what}: documented without a body, got ${a.body.length} bytes`);
    } else if (!documented.includes(ctype)) {
      problems.push(`${what}: Content-Type ${ctype || '(none)'} is not one of ${documented}`);
    } else if (ctype === 'application/json') {
      let body;
      try {
        body = JSON.parse(a.body);
      } catch (e) {
        problems.push(`${what}: body is not JSON`);
        continue;
      }
      const v = api.validateResponse(body, op, a.status);
      if (v.errors && v.errors.length)
        problems.push(`${what}: ${JSON.stringify(v.errors.slice(0, 5))}`);
    }
    if (resp.headers) {
      const hv = api.validateResponseHeaders(a.response_headers || {}, op, { statusCode: a.status });
      if (hv.errors && hv.errors.length)
        problems.push(`${what}: headers: ${JSON.stringify(hv.errors.slice(0, 5))}`);
    }
  }
  for (const p of problems) console.log(p);
  console.log(`${checked} answers checked against the document, ${problems.length} problems`);
  process.exit(problems.length || checked === 0 ? 1 : 0);
}

main().catch((e) => {
  console.log('validator crashed: ' + (e && e.stack ? e.stack : e));
  process.exit(1);
});
