// Reports from deniable.js for the Python tests: reads {"config", "values", "seed"?} as JSON on
// stdin and writes the JSON array of reports (one per value) to stdout. With "seed" the
// random bytes come from a reproducible AES-CTR stream, otherwise from crypto.getRandomValues.
import { fromConfig, parseJSON, stringify } from '../../src/deniable/server/static/deniable.js';
import { seededBytes } from './helpers.mjs';

let text = '';
process.stdin.setEncoding('utf8');
for await (const chunk of process.stdin) text += chunk;
const request = parseJSON(text);
const options = request.seed === undefined ? {} : { randomBytes: seededBytes('cli', String(request.seed)) };
const mechanism = fromConfig(request.config, options);
process.stdout.write(stringify(mechanism.privatizeMany(request.values)));
