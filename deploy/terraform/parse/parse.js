// Prints {"<file path>": <HCL parsed to JSON>, ...} for every .tf file under the given directory.
//
//   node parse.js ../modules
'use strict';
const fs = require('fs');
const path = require('path');
const { parse } = require('@cdktf/hcl2json');

function files(dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? files(p) : e.name.endsWith('.tf') ? [p] : [];
  });
}

(async () => {
  const root = process.argv[2];
  const out = {};
  for (const f of files(root).sort()) {
    out[path.relative(root, f)] = await parse(f, fs.readFileSync(f, 'utf8'));
  }
  process.stdout.write(JSON.stringify(out));
})().catch((e) => {
  console.error(e.message || e);
  process.exit(1);
});
