// Shared helpers of the node tests: a reproducible random-bytes source and the fixture loader.
import crypto from 'node:crypto';
import fs from 'node:fs';
import { parseJSON } from '../../src/deniable/server/static/deniable.js';

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

/** tests/js/fixtures/mechanisms.json, with big integers kept exact (BigInt). */
export function loadFixtures() {
  const url = new URL('./fixtures/mechanisms.json', import.meta.url);
  return parseJSON(fs.readFileSync(url, 'utf8'));
}
