// Server mode of deniable-embed.js (the ES module build) for the Python tests: reads
// {"server", "survey", "answers"} on stdin, runs Deniable.submit, writes {ok, status, body, response}
// (or {error, field} when the embed refuses) to stdout.
import { submit } from '../../src/deniable/server/static/dist/deniable-embed.mjs';

let text = '';
process.stdin.setEncoding('utf8');
for await (const chunk of process.stdin) text += chunk;
const request = JSON.parse(text);
try {
  process.stdout.write(JSON.stringify(await submit(request)));
} catch (e) {
  process.stdout.write(JSON.stringify({ error: e.message, field: e.field ?? null }));
}
