// The survey page's mapping of a key-value question's values onto PCKV's [-1, 1], for the Python tests:
// reads {"low", "high", "values"} as JSON on stdin and writes the JSON array of unitValue(x, low, high).
import { unitValue } from '../../src/deniable/server/static/keyvalue_question.js';

let text = '';
process.stdin.setEncoding('utf8');
for await (const chunk of process.stdin) text += chunk;
const { low, high, values } = JSON.parse(text);
process.stdout.write(JSON.stringify(values.map((x) => unitValue(x, low, high))));
