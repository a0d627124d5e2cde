// Calibrated statistical tests: deniable.js draws reports with the exact output distribution
// of the Python mechanism it was configured from.
//
// Alpha: this file spends 1e-6 in all (the probability that a correct sampler fails any of
// its calibrated tests), split evenly (Bonferroni) over fixtures.n_tests tests; the per-test
// critical values come from scipy (tests/js/fixtures/make_fixtures.py, which also merges the
// chi-square bins to >= 5 expected counts). Every test has a power check: the same test on a
// config with one probability 20% off must fail (the generator asserts power >= 1 - 1e-9).
//
// Sources: the "seeded" runs use a reproducible AES-CTR byte stream (DENIABLE_TEST_SEED), the
// "crypto" runs the default crypto.getRandomValues path that browsers use.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fromConfig, MECHANISMS, uniformGroup } from '../../src/deniable/server/static/deniable.js';
import { memoryStore, persistentClient } from '../../src/deniable/server/static/client_state.js';
import { chiSquare, chiSquareTests, loadFixtures, seededBytes, TEST_SEED } from './helpers.mjs';

const fixtures = loadFixtures();
const SOURCES = ['seeded', 'crypto'];

function mechanism(config, source, label) {
  return fromConfig(config, source === 'seeded' ? { randomBytes: seededBytes(label) } : {});
}

function draw(config, c, source, label) {
  return mechanism(config, source, label).privatizeMany(new Array(Number(c.n)).fill(c.value));
}

test('fixture accounting: the calibrated tests below are the n_tests alpha is split over', () => {
  const planned = 2 * fixtures.chi_square.length + 2 * fixtures.bits.length + fixtures.bits.length + 2 + fixtures.memo.length;
  assert.equal(planned, fixtures.n_tests);
  assert.ok(Math.abs(fixtures.alpha_per_test * fixtures.n_tests - 1e-6) < 1e-15);
});

test("deniable.js implements exactly the registry's browser mechanisms, each with a fixture case", () => {
  assert.deepEqual([...MECHANISMS].sort(), fixtures.browser_mechanisms);
  const cases = [...fixtures.chi_square, ...fixtures.bits, ...loadFixtures('designs.json').chi_square];
  const covered = new Set(cases.map((c) => c.config.mechanism));
  for (const id of MECHANISMS) assert.ok(covered.has(id), `no fixture case for ${id}`);
});

chiSquareTests(fixtures, SOURCES, draw, (c) => c.wrong_param);

/** Per-bit counts and the 2x2 tables of the fixture's pairs, from hex reports. */
function bitCounts(reports, k, pairs) {
  const ones = new Float64Array(k);
  const cells = pairs.map(() => new Float64Array(4));
  for (const hex of reports) {
    const bit = (i) => (parseInt(hex.substr(2 * (i >> 3), 2), 16) >> (7 - (i & 7))) & 1;
    for (let i = 0; i < k; i++) ones[i] += bit(i);
    pairs.forEach((pair, j) => {
      cells[j][2 * bit(pair.bits[0]) + bit(pair.bits[1])] += 1;
    });
    const spare = hex.length * 4 - k;
    assert.equal(parseInt(hex.slice(-2), 16) & ((1 << spare) - 1), 0, `padding bits set in ${hex}`);
  }
  return { ones, cells };
}

/** Bits whose claimed rate lies outside the two-sided Wilson interval at z. */
function wilsonMisses(ones, n, rates, z) {
  const misses = [];
  rates.forEach((rate, i) => {
    const lam = ones[i] / n;
    const centre = (lam + (z * z) / (2 * n)) / (1 + (z * z) / n);
    const half = (z * Math.sqrt((lam * (1 - lam)) / n + (z * z) / (4 * n * n))) / (1 + (z * z) / n);
    if (rate < centre - half || rate > centre + half) {
      misses.push(`bit ${i}: rate ${lam.toFixed(5)} vs claimed ${rate.toFixed(5)} (+-${half.toFixed(5)})`);
    }
  });
  return misses;
}

for (const c of fixtures.bits) {
  const n = Number(c.n);
  const k = c.rates.length;
  for (const source of SOURCES) {
    test(`per-bit rates ${c.name} (${source}, n=${n}, k=${k}, Wilson, Bonferroni over bits)`, () => {
      const reports = mechanism(c.config, source, c.name).privatizeMany(new Array(n).fill(c.value));
      assert.ok(reports.every((r) => typeof r === 'string' && /^[0-9a-f]+$/.test(r) && r.length === 2 * Math.ceil(k / 8)));
      const { ones } = bitCounts(reports, k, []);
      const misses = wilsonMisses(ones, n, c.rates, c.z_critical);
      assert.deepEqual(misses, [], `seed ${TEST_SEED}`);
    });
  }
  test(`pairwise independence ${c.name}: joint 2x2 tables of bit pairs (seeded)`, () => {
    const reports = mechanism(c.config, 'seeded', `${c.name}:pairs`).privatizeMany(new Array(n).fill(c.value));
    const { cells } = bitCounts(reports, k, c.pairs);
    c.pairs.forEach((pair, j) => {
      let statistic = 0;
      pair.probs.forEach((p, cell) => {
        statistic += (cells[j][cell] - p * n) ** 2 / (p * n);
      });
      assert.ok(statistic <= c.pair_critical, `bits ${pair.bits}: chi2=${statistic} > ${c.pair_critical}; cells ${cells[j]}`);
    });
  });
  test(`power: per-bit rates ${c.name} reject q 20% off`, () => {
    const reports = mechanism(c.wrong_config, 'seeded', `${c.name}:wrong`).privatizeMany(new Array(n).fill(c.value));
    const { ones } = bitCounts(reports, k, []);
    assert.ok(wilsonMisses(ones, n, c.rates, c.z_critical).length > 0, 'wrong config passed every bit');
  });
  test(`power: pair test ${c.name} rejects dependent bits (bit j copied from bit i)`, () => {
    const reports = mechanism(c.config, 'seeded', `${c.name}:dependent`).privatizeMany(new Array(n).fill(c.value));
    const [i, j] = c.pairs[0].bits;
    const copied = reports.map((hex) => {
      const bytes = hex.match(/../g).map((b) => parseInt(b, 16));
      const bit = (bytes[i >> 3] >> (7 - (i & 7))) & 1;
      bytes[j >> 3] = (bytes[j >> 3] & ~(1 << (7 - (j & 7)))) | (bit << (7 - (j & 7)));
      return bytes.map((b) => b.toString(16).padStart(2, '0')).join('');
    });
    const { cells } = bitCounts(copied, k, [c.pairs[0]]);
    let statistic = 0;
    c.pairs[0].probs.forEach((p, cell) => {
      statistic += (cells[0][cell] - p * n) ** 2 / (p * n);
    });
    assert.ok(statistic > c.pair_critical);
  });
}

// The group a two-group survey design's device draws: uniform on {1, 2} with the exact sampler.
function groupChiSquare(groups, probs) {
  const observed = [0, 0];
  for (const g of groups) observed[g - 1] += 1;
  return probs.reduce((s, p, i) => s + (observed[i] - p * groups.length) ** 2 / (p * groups.length), 0);
}

const groupCase = fixtures.group;
const groupDraws = {};
for (const source of SOURCES) {
  test(`chi-square uniformGroup(2) (${source}, n=${groupCase.n}, df=1)`, () => {
    const options = source === 'seeded' ? { randomBytes: seededBytes('group') } : {};
    // one pool per draw, as on a device (one draw per respondent)
    const groups = Array.from({ length: groupCase.n }, () => uniformGroup(2, options));
    assert.ok(groups.every((g) => g === 1 || g === 2));
    groupDraws[source] = groups;
    const statistic = groupChiSquare(groups, groupCase.probs);
    assert.ok(statistic <= groupCase.critical, `chi2=${statistic.toFixed(2)} > ${groupCase.critical.toFixed(2)}; seed ${TEST_SEED}`);
  });
}
test('power: the group test rejects a 5% bias', () => {
  const groups = groupDraws.seeded ?? Array.from({ length: groupCase.n }, () => uniformGroup(2, { randomBytes: seededBytes('group') }));
  assert.ok(groupChiSquare(groups, groupCase.wrong_probs) > groupCase.critical);
});

// Memoizing clients: n devices, each with a fresh kept state (persistentClient, in memory),
// make one report each. A device's memoized draws come from its secret's keyed streams, the
// rest from the CSPRNG; over devices the report has the one-time distribution of the fixture.
async function devices(config, c, label) {
  const randomBytes = seededBytes(label);
  const reports = [];
  for (let i = 0; i < Number(c.n); i++) {
    const client = await persistentClient(config, { key: 'device', store: memoryStore(), randomBytes });
    reports.push(client.privatize(c.value));
  }
  return reports;
}

for (const c of fixtures.memo) {
  test(`chi-square ${c.name}: one report from each of n=${c.n} kept clients (seeded, df=${c.df})`, async () => {
    const { statistic, detail } = chiSquare(await devices(c.config, c, c.name), c);
    assert.ok(statistic <= c.critical, `chi2=${statistic.toFixed(2)} > critical ${c.critical.toFixed(2)}; ${detail}; seed ${TEST_SEED}`);
  });
  test(`power: chi-square ${c.name} rejects ${c.wrong_param}`, async () => {
    const { statistic } = chiSquare(await devices(c.wrong_config, c, `${c.name}:wrong`), c);
    assert.ok(statistic > c.critical, `wrong config passed: chi2=${statistic} <= ${c.critical}`);
  });
}
