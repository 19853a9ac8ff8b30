// Validates a SARIF file against the official SARIF 2.1.0 JSON schema (shipped in
// @microsoft/jest-sarif) with Ajv, an independent JSON Schema validator. The schema is
// written in JSON Schema draft-04, hence ajv-draft-04.
// Usage: node validate-sarif.js FILE.sarif ; prints "valid" or the errors, exit 0/1.
'use strict';
const fs = require('fs');
const path = require('path');
const Ajv = require('ajv-draft-04');
const addFormats = require('ajv-formats');

const schemaPath = path.join(path.dirname(require.resolve('@microsoft/jest-sarif/package.json')),
  'lib', 'schemas', 'sarif-2.1.0-rtm.5.json');
const schema = JSON.parse(fs.readFileSync(schemaPath, 'utf8'));
// The official schema's language pattern has a stray ']' that only non-unicode RegExps accept.
const ajv = new Ajv({ allErrors: true, strict: false, unicodeRegExp: false });
addFormats(ajv);
const validate = ajv.compile(schema);
const doc = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
if (validate(doc)) {
  console.log('valid');
  process.exit(0);
}
console.log(JSON.stringify(validate.errors.slice(0, 20), null, 1));
process.exit(1);
