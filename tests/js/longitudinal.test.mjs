// Deterministic tests of deniable.js's longitudinal mechanisms (L-GRR, L-OSUE, dBitFlip,
// 1BitMean) kept by persistentClient, and of the device key of surveys that run in rounds.
// (Their calibrated distribution tests are in mechanisms.test.mjs.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DeniableError, fromConfig, stringify } from '../../src/deniable/server/static/deniable.js';
import { base64url, deviceKey, memoryStore, persistentClient } from '../../src/deniable/server/static/client_state.js';
import { loadFixtures, seededBytes } from './helpers.mjs';

const fixtures = loadFixtures();
// the first memo case of each mechanism (without output perturbation)
const memo = Object.fromEntries(fixtures.memo.filter((c) => c.config.params.flip_numerator === undefined)
  .map((c) => [c.config.mechanism, c]));
const perturbed = fixtures.memo.filter((c) => c.config.params.flip_numerator !== undefined);
const LONGITUDINAL = ['l-grr', 'l-osue', 'dbitflip', 'one-bit-mean'];
const valuesOf = (c) => (c.config.mechanism === 'one-bit-mean' ? [-1, -0.2, 0.5, 0.9, 1] : fromConfig(c.config).domain);

// hand-written configs wide enough that two devices' memoized draws differ except with
// negligible probability
const wide = {
  'l-osue': { mechanism: 'l-osue', domain: 64, params: { bits: 32, perm_p_numerator: 2 ** 31, perm_q_numerator: 2 ** 30, irr_p_numerator: 3 * 2 ** 30 } },
  dbitflip: { mechanism: 'dbitflip', domain: 1000, params: { d: 8, truth_numerator: 3, other_numerator: 1 } },
};
const config = (c) => ({ format: 'deniable.mechanism', version: 1, ...c });

for (const id of LONGITUDINAL) {
  const c = memo[id];
  test(`${id}: a kept state gives the same memoized draws to every client made from it`, async () => {
    const store = memoryStore();
    const first = await persistentClient(c.config, { key: 's/q', store, randomBytes: seededBytes(`${id}-a`) });
    const again = await persistentClient(c.config, { key: 's/q', store, randomBytes: seededBytes(`${id}-b`) });
    const values = valuesOf(c);
    const mine = values.map((v) => stringify(first.permanent(v)));
    assert.deepEqual(values.map((v) => stringify(again.permanent(v))), mine);
    assert.deepEqual(values.map((v) => stringify(first.permanent(v))), mine);
    // the state (Python's format) holds a secret, nothing about the values reported
    const kept = await store.update('s/q', (old) => old);
    assert.deepEqual(Object.keys(kept).sort(), ['fields', 'fingerprint', 'format', 'mechanism', 'secret', 'version']);
    assert.deepEqual(kept.fields, {});
    assert.ok(!JSON.stringify(kept).includes('"x"'));
  });

  test(`${id}: a state kept for another configuration is refused`, async () => {
    const store = memoryStore();
    await persistentClient(c.config, { key: 's/q', store, randomBytes: seededBytes('one') });
    await assert.rejects(
      persistentClient(fixtures.memo.find((o) => o.config.mechanism !== id).config, { key: 's/q', store }),
      (e) => e instanceof DeniableError && e.field === 'state',
    );
    await assert.rejects(persistentClient(c.wrong_config, { key: 's/q', store }), (e) => e.field === 'state');
  });
}

test('dbitflip: a device sends at most d + 1 distinct reports, and only the slot it is in changes them', async () => {
  const c = memo.dbitflip;
  const d = Number(c.config.params.d);
  const client = await persistentClient(c.config, { key: 'k', store: memoryStore(), randomBytes: seededBytes('slots') });
  const seen = new Map();
  for (let day = 0; day < 30; day++) {
    for (const v of [0, 1, 2, 3]) {
      const r = client.privatize(v);
      const key = stringify(r);
      if (!seen.has(v)) seen.set(v, key);
      assert.equal(key, seen.get(v), `value ${v} changed its report on day ${day}`);
    }
  }
  const sampled = JSON.parse(seen.get(0)).buckets;
  // values outside the sampled buckets share the "no slot" answers: d + 1 reports at most
  assert.ok(new Set(seen.values()).size <= d + 1);
  const outside = [0, 1, 2, 3].filter((v) => !sampled.includes(v)).map((v) => seen.get(v));
  assert.equal(new Set(outside).size, Math.min(1, outside.length));
});

test('one-bit-mean: reports repeat while the value stays on the same side of the device\'s rounding threshold', async () => {
  const c = memo['one-bit-mean'];
  const client = await persistentClient(c.config, { key: 'k', store: memoryStore(), randomBytes: seededBytes('alpha') });
  const m = fromConfig(c.config);
  for (const v of [-0.7, 0.1, 0.5, 0.93]) {
    const reports = new Set();
    // a change of 1e-12 crosses the device's threshold with probability about 1e-12 per value
    for (const w of [v, v + 1e-12, v - 1e-12, v, v]) reports.add(client.privatize(w));
    assert.equal(reports.size, 1, `value ${v}`);
  }
  // out-of-range values are clipped to the range's ends, which never round
  assert.equal(client.privatize(5), client.privatize(1));
  assert.equal(client.privatize(-5), client.privatize(-1));
  assert.throws(() => m.privatize(Number.NaN), (e) => e instanceof DeniableError && e.field === 'value');
  assert.throws(() => m.privatize('0.5'), (e) => e.field === 'value');
  assert.throws(() => fromConfig({ ...c.config, domain: [1, -1] }), (e) => e.field === 'domain');
  assert.throws(() => fromConfig({ ...c.config, domain: ['a', 'b'] }), (e) => e.field === 'domain');
});

test('l-grr and l-osue: the memoized first round is refreshed by the second round only', async () => {
  for (const id of ['l-grr', 'l-osue']) {
    const c = memo[id];
    const client = await persistentClient(c.config, { key: 'k', store: memoryStore(), randomBytes: seededBytes(`irr-${id}`) });
    const value = fromConfig(c.config).domain[1];
    const prr = client.permanent(value);
    const reports = Array.from({ length: 200 }, () => stringify(client.privatize(value)));
    // L-GRR keeps the first round's category w.p. p2 (about 0.6 here) and L-OSUE each bit w.p.
    // p2: the permanent response is the most frequent report (binomial tails below 1e-9)
    const counts = new Map();
    for (const r of reports) counts.set(r, (counts.get(r) ?? 0) + 1);
    const top = [...counts.entries()].sort((x, y) => y[1] - x[1])[0][0];
    assert.equal(top, stringify(prr), id);
  }
});

test('two devices (two states) draw different memoized responses', async () => {
  for (const spec of Object.values(wide)) {
    const [a, b] = await Promise.all(['dev-a', 'dev-b'].map((label) => persistentClient(config(spec), {
      key: 'k', store: memoryStore(), randomBytes: seededBytes(label),
    })));
    // L-OSUE: 64 first-round bits; dBitFlip: 8 of 1000 buckets. Equal w.p. < 2^-40
    assert.notEqual(stringify(a.privatize(3)), stringify(b.privatize(3)), spec.mechanism);
  }
});

test('device key: 128 CSPRNG bits as 22 base64url characters, kept and reused', async () => {
  const store = memoryStore();
  const bytes = seededBytes('device');
  const key = await deviceKey('survey#device', { store, randomBytes: bytes });
  assert.match(key, /^[A-Za-z0-9_-]{22}$/);
  assert.equal(Buffer.from(key, 'base64url').length, 16);
  assert.equal(Buffer.from(key, 'base64url').toString('base64url'), key);
  assert.equal(await deviceKey('survey#device', { store, randomBytes: seededBytes('other') }), key);
  assert.notEqual(await deviceKey('other#device', { store, randomBytes: seededBytes('other') }), key);
  await store.update('bad#device', () => ({ format: 'deniable.device-key', version: 1, device: 'short' }));
  await assert.rejects(deviceKey('bad#device', { store }), (e) => e.field === 'state');
  await assert.rejects(deviceKey('', { store }), (e) => e.field === 'key');
});

test('base64url equals node\'s for every length mod 3', () => {
  const bytes = seededBytes('b64');
  for (const n of [0, 1, 2, 3, 16, 17, 31, 32]) {
    const b = bytes(n);
    assert.equal(base64url(b), Buffer.from(b).toString('base64url'), `n=${n}`);
  }
});

test('output perturbation: the memoized draws stay, the reports flip afresh, one report is below epsilon_perm', async () => {
  assert.deepEqual(perturbed.map((c) => c.config.mechanism).sort(), ['dbitflip', 'one-bit-mean']);
  for (const c of perturbed) {
    const client = await persistentClient(c.config, { key: 'k', store: memoryStore(), randomBytes: seededBytes(`flip-${c.name}`) });
    assert.ok(client.epsilon < client.epsilonPermanent, c.name);
    assert.equal(client.epsilon, c.config.epsilon);
    const kept = stringify(client.permanent(c.value));
    const reports = new Set();
    for (let i = 0; i < 200; i++) {
      reports.add(stringify(client.privatize(c.value)));
      assert.equal(stringify(client.permanent(c.value)), kept);
    }
    // gamma >= 0.1 per bit: 200 equal reports have probability below 0.9^200 < 1e-9
    assert.ok(reports.size > 1, c.name);
  }
});

test('one-bit-mean: every value of the range rounds (fractions below 2^-53 included), for any number of points', () => {
  // values whose grid position is below 1 have fractions finer than 2^-53: the threshold is
  // floor(fraction 2^53) 2^11, as deniable.randomness.fixed_point computes it
  const bytes = seededBytes('grid');
  for (const points of [2, 3, 4, 11, 1000]) {
    const m = fromConfig(config({ mechanism: 'one-bit-mean', domain: [-3.5, 1e6], params: { high_numerator: 3, low_numerator: 1, points } }),
      { randomBytes: bytes });
    const values = [];
    for (let i = 0; i <= 4000; i++) values.push(-3.5 + (i / 4000) ** 7 * (1e6 + 3.5));
    values.push(-3.5 + 1e-9, 1e6 - 1e-6, 0, Number.MIN_VALUE, -1e300, 1e300);
    const reports = m.privatizeMany(values);
    assert.ok(reports.every((r) => r === 0 || r === 1), `points=${points}`);
  }
});
