// The CloudNativePG documents (postgresql.cnpg.io/v1) of rendered manifests, checked against
// the operator's published API as @kubernetes-models/cloudnative-pg (pinned in package.json)
// carries it, two ways:
// - its validators (the API's JSON schema: types, enums, patterns, required fields);
// - its TypeScript types: each document is written as a typed constant into OUT/check.ts,
//   which check-deploy.sh compiles with tsc, so that a key the API does not define (a
//   misspelt one) fails, which the validators accept.
//
//   node validate.mjs OUT RENDER.yaml...
//
// Exits 1 with each finding; prints how many documents of each kind it read.
import { readFileSync, writeFileSync } from "node:fs";

import yaml from "js-yaml";
import * as cnpg from "@kubernetes-models/cloudnative-pg/postgresql.cnpg.io/v1";

const KINDS = ["Cluster", "Database", "ScheduledBackup"];
const [out, ...renders] = process.argv.slice(2);
const errors = [];
const counted = Object.fromEntries(KINDS.map((kind) => [kind, 0]));
const typed = [];
for (const path of renders) {
  for (const doc of yaml.loadAll(readFileSync(path, "utf8"))) {
    if (!doc || doc.apiVersion !== "postgresql.cnpg.io/v1") continue;
    const where = `${path}: ${doc.kind} ${doc.metadata?.name}`;
    if (!KINDS.includes(doc.kind)) {
      errors.push(`${where}: no check for this kind here`);
      continue;
    }
    counted[doc.kind] += 1;
    try {
      new cnpg[doc.kind](doc).validate();
    } catch (e) {
      errors.push(`${where}: ${e.message}`);
    }
    typed.push(`// ${where}\nexport const doc${typed.length}: I${doc.kind} = ${JSON.stringify(doc, null, 2)};`);
  }
}
for (const kind of KINDS) {
  if (counted[kind] === 0) errors.push(`no ${kind} in ${renders.join(", ")}`);
}
writeFileSync(
  `${out}/check.ts`,
  `import type { ${KINDS.map((kind) => `I${kind}`).join(", ")} } from "@kubernetes-models/cloudnative-pg/postgresql.cnpg.io/v1";\n\n` +
    typed.join("\n\n") +
    "\n",
);
for (const e of errors) console.error(`cloudnative-pg: ${e}`);
console.log(`cloudnative-pg: ${KINDS.map((kind) => `${counted[kind]} ${kind}`).join(", ")} read`);
process.exit(errors.length ? 1 : 0);
