// Free-text reports from discovery.js for the Python tests: reads {"config", "values", "seed"?} as
// JSON on stdin and writes the JSON array of reports (one per value) to stdout. With "seed" the
// random bytes come from a reproducible AES-CTR stream, otherwise from crypto.getRandomValues.
import { parseJSON, stringify } from '../../src/deniable/server/static/deniable.js';
import { fromDiscoveryConfig } from '../../src/deniable/server/static/discovery.js';
import { seededBytes } from './helpers.mjs';

let text = '';
process.stdin.setEncoding('utf8');
for await (const chunk of process.stdin) text += chunk;
const request = parseJSON(text);
const options = request.seed === undefined ? {} : { randomBytes: seededBytes('discovery-cli', String(request.seed)) };
process.stdout.write(stringify(fromDiscoveryConfig(request.config, options).privatizeMany(request.values)));
