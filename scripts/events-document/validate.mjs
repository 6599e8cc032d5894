// Validates the events document and the events the tests received (make test,
// scripts/check-events-document.sh):
// 1. docs/api/events.yaml with the AsyncAPI parser, made for it: the AsyncAPI 3 schema and
//    its rules (references that resolve, operations on channels that exist...); any
//    diagnostic of severity error fails;
// 2. every event in SAMPLES (JSON files, one CloudEvent each, in a directory per test that
//    recorded them: the point and order services' events tests) against the payload schema of the message its `type` names; an event of
//    a type the document does not list fails, and so does a message no event exercised.
// Usage: node validate.mjs DOCUMENT SAMPLES_DIR
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";

import { Parser } from "@asyncapi/parser";
import Ajv from "ajv";
import addFormats from "ajv-formats";

const [documentPath, samplesDir] = process.argv.slice(2);
const failures = [];

const parser = new Parser();
const { document, diagnostics } = await parser.parse(readFileSync(documentPath, "utf8"));
for (const d of diagnostics.filter((d) => d.severity === 0)) {
  failures.push(`${documentPath}: ${d.message} at ${d.path.join(".")}`);
}
if (!document) {
  failures.forEach((f) => console.error(`check-events-document: ${f}`));
  process.exit(1);
}

// The messages by name (the CloudEvent `type`), each with its payload schema as written,
// references resolved by the parser.
const ajv = new Ajv({ allErrors: true, strict: false });
addFormats(ajv);
const validators = new Map();
for (const message of document.allMessages()) {
  validators.set(message.name(), ajv.compile(message.payload().json()));
}

const seen = new Set();
const files = existsSync(samplesDir)
  ? readdirSync(samplesDir, { recursive: true }).filter((f) => f.endsWith(".json")).sort()
  : [];
if (files.length === 0) {
  failures.push(`${samplesDir}: no events recorded (run the point and order services' events tests first)`);
}
for (const file of files) {
  const event = JSON.parse(readFileSync(join(samplesDir, file), "utf8"));
  const validate = validators.get(event.type);
  if (!validate) {
    failures.push(`${file}: type ${JSON.stringify(event.type)} is no message of ${documentPath}`);
    continue;
  }
  seen.add(event.type);
  if (!validate(event)) {
    failures.push(`${file} (${event.type}): ${ajv.errorsText(validate.errors)}`);
  }
}
for (const name of validators.keys()) {
  if (!seen.has(name)) {
    failures.push(`${documentPath}: no recorded event is a ${name}; the tests must send one`);
  }
}

failures.forEach((f) => console.error(`check-events-document: ${f}`));
if (failures.length > 0) process.exit(1);
console.log(`${files.length} events, each valid against its message of ${documentPath} (${validators.size} messages)`);
