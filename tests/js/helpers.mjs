// Shared helpers of the node tests: a reproducible random-bytes source, the fixture loader and
// the chi-square statistic of reports against a fixture case.
import crypto from 'node:crypto';
import fs from 'node:fs';
import { parseJSON, stringify } from '../../src/deniable/server/static/deniable.js';

/** The run's seed: DENIABLE_TEST_SEED (as for the Python tests) or the default. */
export const TEST_SEED = process.env.DENIABLE_TEST_SEED ?? '20261122';

/**
 * A deterministic random-bytes function (AES-256-CTR keystream keyed by the seed and a label).
 * Cryptographically strong bits, reproducible across runs: failing tests can be replayed.
 */
export function seededBytes(label, seed = TEST_SEED) {
  const key = crypto.createHash('sha256').update(`deniable-js-test:${seed}:${label}`).digest();
  const cipher = crypto.createCipheriv('aes-256-ctr', key, Buffer.alloc(16));
  return (n) => new Uint8Array(cipher.update(Buffer.alloc(n)));
}

/** A fixture file of tests/js/fixtures (mechanisms.json by default), with big integers kept exact (BigInt). */
export function loadFixtures(name = 'mechanisms.json') {
  const url = new URL(`./fixtures/${name}`, import.meta.url);
  return parseJSON(fs.readFileSync(url, 'utf8'));
}

/** Pearson chi-square of the reports against the fixture's merged groups. */
export function chiSquare(reports, c) {
  const index = new Map(c.outputs.map((key, i) => [key, i]));
  const observed = new Float64Array(c.group_probs.length);
  for (const r of reports) {
    const i = index.get(stringify(r));
    if (i === undefined) return { statistic: Infinity, detail: `impossible report ${stringify(r)}` };
    observed[c.groups[i]] += 1;
  }
  let statistic = 0;
  let worst = { score: -1 };
  c.group_probs.forEach((p, g) => {
    const expected = p * reports.length;
    const term = (observed[g] - expected) ** 2 / expected;
    statistic += term;
    if (term > worst.score) worst = { score: term, g, observed: observed[g], expected };
  });
  const detail = `worst group ${worst.g}: observed ${worst.observed}, expected ${worst.expected.toFixed(1)}`;
  return { statistic, detail };
}
