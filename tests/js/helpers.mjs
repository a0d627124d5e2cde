// Shared helpers of the node tests: a reproducible random-bytes source, the fixture loader and
// the chi-square statistic of reports against a fixture case.
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import { test } from 'node:test';
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

/**
 * The calibrated chi-square tests of a fixture's cases, from each random source, and each case's
 * power check: `draw(config, c, source, label)` gives the reports; the same test on the case's
 * wrong config must reject (`describe(c)` names that config).
 */
export function chiSquareTests(fixtures, sources, draw, describe) {
  for (const c of fixtures.chi_square) {
    for (const source of sources) {
      test(`chi-square ${c.name} (${source}, n=${c.n}, df=${c.df})`, () => {
        const { statistic, detail } = chiSquare(draw(c.config, c, source, c.name), c);
        assert.ok(
          statistic <= c.critical,
          `chi2=${statistic.toFixed(2)} > critical ${c.critical.toFixed(2)} at alpha=${fixtures.alpha_per_test}; ` +
            `${detail}; seed ${TEST_SEED}`,
        );
      });
    }
    test(`power: chi-square ${c.name} rejects ${describe(c)}`, () => {
      const { statistic } = chiSquare(draw(c.wrong_config, c, 'seeded', `${c.name}:wrong`), c);
      assert.ok(statistic > c.critical, `wrong config passed: chi2=${statistic} <= ${c.critical}`);
    });
  }
}
