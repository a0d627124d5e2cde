// The embeddable client (deniable-embed.js / .mjs, built by tools/build_embed.py) against the
// survey page's modules and the calibrated fixtures.
//
// Exact: both builds load (the ES module, and the classic script in a fresh context, where it
// sets the global Deniable) with the same API and the manifest's version; from the same seeded
// byte stream the embed's fromConfig makes exactly the reports deniable.js makes, for every case
// of mechanisms.json and designs.json (every mechanism and survey design the browser client
// has); and it accepts exactly the design configurations Python accepts, with Python's epsilon.
//
// Calibrated: the chi-square tests of both fixture files (and the per-bit tests of
// mechanisms.json) on the embed's own default path, crypto.getRandomValues, once per case. The
// fixtures' critical values are at alpha_per_test, which each of them splits over twice as many
// tests (seeded and crypto): mechanisms.json's chi-square and per-bit cases spend
// (chi + bits) * alpha_per_test < 1e-6 / 2 and designs.json's 1e-6 / 2, so this file spends
// less than 1e-6 in all (the probability that a correct sampler fails any of its tests). The
// seeded runs of mechanisms.test.mjs and designs.test.mjs are the power checks: the equality
// above makes the embed's reports theirs, and they reject each case's wrong configuration.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import vm from 'node:vm';
import * as modules from '../../src/deniable/server/static/deniable.js';
import { fingerprint as moduleFingerprint } from '../../src/deniable/server/static/client_state.js';
import { canonicalJSON } from '../../src/deniable/server/static/json.js';
import * as esm from '../../src/deniable/server/static/dist/deniable-embed.mjs';
import { chiSquare, loadFixtures, seededBytes, TEST_SEED } from './helpers.mjs';

const DIST = new URL('../../src/deniable/server/static/dist/', import.meta.url);
const manifest = JSON.parse(fs.readFileSync(new URL('deniable-embed.json', DIST), 'utf8'));

/** The classic script run as a platform's page runs it: a script (no module system) that sets the global. */
function classic() {
  assert.equal(globalThis.Deniable, undefined);
  vm.runInThisContext(fs.readFileSync(new URL('deniable-embed.js', DIST), 'utf8'), { filename: 'deniable-embed.js' });
  return globalThis.Deniable;
}

const BUILDS = { module: esm.default, classic: classic() };
const mechanisms = loadFixtures();
const designs = loadFixtures('designs.json');
const CASES = [...mechanisms.chi_square, ...mechanisms.bits, ...designs.chi_square];
// a configuration goes to the embed as JSON text, as a platform's script holds it: its own parseJSON
// then knows which numbers are floats (2.0), which the fingerprint and Kuk's check of cards read
const text = (config) => canonicalJSON(config);

test('both builds load with the same API, the manifest\'s version and exports', () => {
  for (const [name, D] of Object.entries(BUILDS)) {
    assert.equal(D.version, manifest.version, name);
    assert.deepEqual(Object.keys(D).sort(), [...manifest.exports].sort(), name);
    assert.deepEqual([...D.MECHANISMS], [...modules.MECHANISMS], name);
  }
  assert.equal(esm.version, manifest.version);
  assert.equal(esm.randomize, esm.default.randomize);
});

for (const [build, D] of Object.entries(BUILDS)) {
  test(`${build}: the same seeded bytes give deniable.js's reports, for every fixture case`, () => {
    for (const c of CASES) {
      const values = new Array(Math.min(2000, Number(c.n))).fill(c.value);
      const expected = modules.fromConfig(c.config, { randomBytes: seededBytes(c.name) }).privatizeMany(values);
      const got = D.fromConfig(c.config, { randomBytes: seededBytes(c.name) }).privatizeMany(values);
      assert.equal(D.stringify(got), modules.stringify(expected), c.name);
      // one report at a time, as local mode draws it
      const one = D.randomize(text(c.config), c.value, { randomBytes: seededBytes(`${c.name}:one`) });
      const alone = modules.fromConfig(c.config, { randomBytes: seededBytes(`${c.name}:one`) }).privatize(c.value);
      assert.equal(D.stringify(one.report), modules.stringify(modules.reportToWire(alone, 2)), c.name);
      assert.equal(one.fingerprint, moduleFingerprint(c.config), c.name);
    }
  });
}

test('the embed accepts exactly the design configs Python accepts, with its epsilon', () => {
  const D = BUILDS.classic;
  const disagree = [];
  for (const { config, accepted, epsilon } of designs.configs) {
    let built = null;
    try {
      built = D.fromConfig(text(config));
    } catch (e) {
      assert.equal(e.name, 'DeniableError', `${D.stringify(config.params)}: ${e}`);
    }
    if ((built !== null) !== accepted) disagree.push(D.stringify(config.params));
    if (!accepted || built === null) continue;
    const { epsilon: own } = D.fromConfig(text({ ...config, epsilon: null }));
    const same = epsilon === null ? own === Infinity : Math.abs(own - epsilon) <= 1e-12 * Math.max(1, epsilon);
    if (!same) disagree.push(`${D.stringify(config.params)}: epsilon ${own}, Python ${epsilon}`);
  }
  assert.deepEqual(disagree, []);
});

// the calibrated tests, on crypto.getRandomValues (the classic build for one file, the module for the other)
for (const c of mechanisms.chi_square) {
  test(`chi-square ${c.name} (embed, crypto, n=${c.n}, df=${c.df})`, () => {
    const reports = BUILDS.classic.fromConfig(c.config).privatizeMany(new Array(Number(c.n)).fill(c.value));
    const { statistic, detail } = chiSquare(reports, c);
    assert.ok(statistic <= c.critical, `chi2=${statistic.toFixed(2)} > ${c.critical.toFixed(2)}; ${detail}`);
  });
}
for (const c of designs.chi_square) {
  test(`chi-square design ${c.name} (embed, crypto, n=${c.n}, df=${c.df})`, () => {
    const reports = BUILDS.module.fromConfig(c.config).privatizeMany(new Array(Number(c.n)).fill(c.value));
    const { statistic, detail } = chiSquare(reports, c);
    assert.ok(statistic <= c.critical, `chi2=${statistic.toFixed(2)} > ${c.critical.toFixed(2)}; ${detail}`);
  });
}
for (const c of mechanisms.bits) {
  test(`per-bit rates ${c.name} (embed, crypto, n=${c.n}, Wilson, Bonferroni over bits)`, () => {
    const n = Number(c.n);
    const k = c.rates.length;
    const reports = BUILDS.classic.fromConfig(c.config).privatizeMany(new Array(n).fill(c.value));
    const ones = new Float64Array(k);
    for (const hex of reports) {
      for (let i = 0; i < k; i++) ones[i] += (parseInt(hex.substr(2 * (i >> 3), 2), 16) >> (7 - (i & 7))) & 1;
    }
    const z = c.z_critical;
    const misses = c.rates.filter((rate, i) => {
      const lam = ones[i] / n;
      const centre = (lam + (z * z) / (2 * n)) / (1 + (z * z) / n);
      const half = (z * Math.sqrt((lam * (1 - lam)) / n + (z * z) / (4 * n * n))) / (1 + (z * z) / n);
      return rate < centre - half || rate > centre + half;
    });
    assert.deepEqual(misses, []);
  });
}

// ------------------------------------------------------------------ local mode's field

const GRR = '{"format":"deniable.mechanism","version":1,"mechanism":"grr","domain":["a","b","c"],'
  + '"epsilon":1.0986122886681098,"params":{"other_numerator":1,"truth_numerator":3}}';

test('local mode writes the report and the fingerprint, nothing else, into the host field', () => {
  const D = BUILDS.classic;
  const written = [];
  const result = D.local({ config: GRR, value: 'b', field: (text, r) => written.push([text, r]) });
  assert.equal(written.length, 1);
  const [text] = written[0];
  const data = JSON.parse(text);
  assert.deepEqual(Object.keys(data), ['format', 'version', 'fingerprint', 'report']);
  assert.equal(data.format, 'deniable.report');
  assert.equal(data.fingerprint, moduleFingerprint(modules.parseJSON(GRR)));
  assert.ok(['a', 'b', 'c'].includes(data.report));
  assert.deepEqual(D.readField(text), { fingerprint: data.fingerprint, report: data.report });
  assert.equal(result.text, text);
  // an element with a value (a platform's input) gets the same text
  const input = { value: '' };
  D.local({ config: GRR, value: 'a', field: input, randomBytes: seededBytes('input') });
  assert.equal(D.readField(input.value).fingerprint, data.fingerprint);
});

test('wide report fields travel as decimal strings (wire version 2) in the field', () => {
  const olh = mechanisms.chi_square.find((c) => c.config.mechanism === 'olh');
  const { report } = BUILDS.module.randomize(olh.config, olh.value, { randomBytes: seededBytes('olh-field') });
  assert.equal(typeof report.seed, 'string');
  assert.match(report.seed, /^\d+$/);
});

test('bad input is refused naming the field', () => {
  const D = BUILDS.module;
  assert.throws(() => D.local({ config: GRR, value: 'b', field: 42 }), (e) => e.name === 'DeniableError' && e.field === 'field');
  assert.throws(() => D.randomize(GRR, 'z'), (e) => e.field === 'value');
  assert.throws(() => D.readField('{"format":"other"}'), (e) => e.field === 'field');
  assert.throws(() => D.readField('not json'), (e) => e.field === 'field');
  assert.throws(() => D.randomize('{"format":"deniable.mechanism","version":9}', 1), (e) => e.field === 'version');
});

test(`seed ${TEST_SEED}: the calibrated cases above cover every mechanism and design model`, () => {
  const covered = new Set(CASES.map((c) => c.config.mechanism));
  assert.deepEqual([...covered].sort(), [...modules.MECHANISMS].sort());
  const models = new Set(designs.chi_square.map((c) => c.config.params.model));
  assert.deepEqual([...models].sort(), ['CDM', 'CDMsym', 'Crosswise', 'Custom', 'FR', 'Kuk', 'Mangat', 'SLD', 'Triangular', 'UQTknown', 'UQTunknown', 'Warner']);
});

test('server mode resends the very same body after a network error and a 5xx answer', async () => {
  const survey = JSON.stringify({
    id: 's', questions: [{ id: 'q', type: 'categorical', mechanism: JSON.parse(GRR) }],
  });
  const posts = [];
  const answers = [() => { throw new TypeError('network down'); }, () => ({ status: 503 }), () => ({ status: 201 })];
  const transport = async (url, init = {}) => {
    if (init.method !== 'POST') return { ok: true, status: 200, text: async () => survey };
    posts.push(init.body);
    const { status } = answers[posts.length - 1]();
    return { ok: status < 400, status, text: async () => '{}' };
  };
  const result = await BUILDS.module.submit({ server: 'https://deniable.example.org', survey: 's', answers: { q: 'a' }, fetch: transport });
  assert.equal(result.status, 201);
  assert.equal(posts.length, 3);
  assert.ok(posts.every((b) => b === result.body));
  assert.ok(['a', 'b', 'c'].includes(JSON.parse(result.body).reports.q));
});
