// For the Python tests: reads {"configs": [...], "values": [...]} as JSON on stdin and writes, per
// config, either {"reports": [...]} (deniable.js built it and randomized the values) or
// {"error": "..."} (deniable.js refused it), as one JSON array.
import { fromConfig, parseJSON, stringify } from '../../src/deniable/server/static/deniable.js';

let text = '';
process.stdin.setEncoding('utf8');
for await (const chunk of process.stdin) text += chunk;
const request = parseJSON(text);
const out = request.configs.map((config) => {
  try {
    return { reports: fromConfig(config).privatizeMany(request.values) };
  } catch (error) {
    return { error: String(error.message ?? error) };
  }
});
process.stdout.write(stringify(out));
