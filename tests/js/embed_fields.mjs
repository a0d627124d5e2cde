// Field texts from deniable-embed.js (the classic build, as a platform's page loads it) for the
// Python tests: reads {"config": <JSON text>, "values": [...]} on stdin and writes the JSON array
// of what local mode writes into the host's field for each value (crypto.getRandomValues).
import fs from 'node:fs';
import vm from 'node:vm';

vm.runInThisContext(fs.readFileSync(new URL('../../src/deniable/server/static/dist/deniable-embed.js', import.meta.url), 'utf8'));
const { Deniable } = globalThis;
let text = '';
process.stdin.setEncoding('utf8');
for await (const chunk of process.stdin) text += chunk;
const request = JSON.parse(text);
const out = request.values.map((value) => {
  let written = null;
  Deniable.local({ config: request.config, value, field: (t) => { written = t; } });
  return written;
});
process.stdout.write(JSON.stringify(out));
