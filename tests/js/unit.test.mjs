// Deterministic tests of deniable.js: exact integer sampling on scripted random words,
// config validation, the report shapes, and the big-integer JSON helpers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  DeniableError,
  fromConfig,
  idempotencyKey,
  parseJSON,
  secureRandomBytes,
  stringify,
  uniformGroup,
  assignQuestion,
} from '../../src/deniable/server/static/deniable.js';
import { loadFixtures, seededBytes } from './helpers.mjs';

const fixtures = loadFixtures();
const byName = Object.fromEntries(fixtures.chi_square.map((c) => [c.name, c]));

/** randomBytes that serves the given 32-bit words (little endian) in order, then zeros. */
function scripted(words) {
  const bytes = [];
  for (const w of words) bytes.push(w & 0xff, (w >>> 8) & 0xff, (w >>> 16) & 0xff, (w >>> 24) & 0xff);
  let at = 0;
  return (n) => {
    const out = new Uint8Array(n);
    for (let i = 0; i < n && at < bytes.length; i++) out[i] = bytes[at++];
    return out;
  };
}

const binary = (denominator, yes) => ({
  format: 'deniable.mechanism',
  version: 1,
  mechanism: 'binary-rr',
  domain: [false, true],
  params: { denominator, yes_numerators: yes },
});

test('uniform draws reject words at or above the largest multiple of D (D = 3)', () => {
  // limit = floor(2^32 / 3) * 3 = 4294967295: the word 0xffffffff is redrawn
  const yes = (words, value) => fromConfig(binary(3, [1, 2]), { randomBytes: scripted(words) }).privatize(value);
  assert.equal(yes([0xffffffff, 4], true), true); // 4 % 3 = 1 < 2
  assert.equal(yes([0xffffffff, 4], false), false); // 1 < 1 is false
  assert.equal(yes([0xfffffffe], true), false); // accepted: 4294967294 % 3 = 2, and 2 < 2 is false
  assert.equal(yes([0xfffffffd], true), true); // 4294967293 % 3 = 1 < 2
  assert.equal(yes([2], true), false); // 2 < 2 is false: thresholds are strict
  assert.equal(yes([0], false), true);
});

test('denominators above 2^32 use 64-bit words (low word first) and exact BigInt comparison', () => {
  const c = byName['binary-denominator-2^63'];
  const [yf] = c.config.params.yes_numerators;
  assert.equal(typeof yf, 'bigint', 'parseJSON keeps integers above 2^53 exact');
  const word = (v) => [Number(v & 0xffffffffn), Number(v >> 32n)];
  const run = (v) => fromConfig(c.config, { randomBytes: scripted(word(v)) }).privatize(false);
  assert.equal(run(yf - 1n), true); // u < yes numerator -> "yes"
  assert.equal(run(yf), false);
  // 2^63 divides 2^64: no rejection, u mod 2^63
  assert.equal(run((1n << 63n) + yf - 1n), true);
});

test('JSON numbers that lost precision are refused, not rounded', () => {
  const c = byName['binary-denominator-2^63'];
  const lossy = JSON.parse(JSON.stringify(c.config, (k, v) => (typeof v === 'bigint' ? Number(v) : v)));
  assert.throws(() => fromConfig(lossy), (e) => e instanceof DeniableError && /lost precision/.test(e.message));
});

test('GRR maps the draw r to the truth (r < a) or to the other category (r - a) // b', () => {
  const cfg = { format: 'deniable.mechanism', version: 1, mechanism: 'grr', domain: ['A', 'B', 'C'], params: { truth_numerator: 4, other_numerator: 1 } };
  const out = (r, v) => fromConfig(cfg, { randomBytes: scripted([r]) }).privatize(v);
  // D = 6: 0..3 keep, 4 -> first other, 5 -> second other
  assert.deepEqual([0, 3, 4, 5].map((r) => out(r, 'B')), ['B', 'B', 'A', 'C']);
  assert.deepEqual([4, 5].map((r) => out(r, 'A')), ['B', 'C']);
  assert.deepEqual([4, 5].map((r) => out(r, 'C')), ['A', 'B']);
});

test('every mechanism returns the wire JSON form of its report', () => {
  const shapes = {
    'binary-rr': (r) => typeof r === 'boolean',
    grr: (r, m) => m.domain.includes(r),
    sue: (r, m) => typeof r === 'string' && r.length === 2 * Math.ceil(m.k / 8) && /^[0-9a-f]+$/.test(r),
    oue: (r, m) => typeof r === 'string' && r.length === 2 * Math.ceil(m.k / 8) && /^[0-9a-f]+$/.test(r),
    blh: (r) => Object.keys(r).join() === 'seed,value' && Number.isInteger(r.seed) && (r.value === 0 || r.value === 1),
    olh: (r, m) => Number.isInteger(r.seed) && r.value >= 0 && r.value < Number(m.config.params.g),
    hadamard: (r, m) => Number.isInteger(r) && r >= 0 && r < Number(m.config.params.K),
    subset: (r, m) => r.length === Number(m.config.params.omega) && r.every((v, i) => v >= 0 && v < m.k && (i === 0 || r[i - 1] < v)),
    rappor: (r, m) => Object.keys(r).join() === 'cohort,bits' && Number.isInteger(r.cohort) && r.cohort >= 0 &&
      r.cohort < Number(m.config.params.num_cohorts) && Number.isInteger(r.bits) && r.bits >= 0 &&
      r.bits < 2 ** Number(m.config.params.num_bits),
    'l-grr': (r, m) => m.domain.includes(r),
    'l-osue': (r, m) => typeof r === 'string' && r.length === 2 * Math.ceil(m.k / 8) && /^[0-9a-f]+$/.test(r),
    dbitflip: (r, m) => Object.keys(r).join() === 'buckets,bits' && r.buckets.length === Number(m.config.params.d) &&
      r.buckets.every((v, i) => Number.isInteger(v) && v >= 0 && v < m.k && (i === 0 || r.buckets[i - 1] < v)) &&
      r.bits.length === r.buckets.length && r.bits.every((b) => b === 0 || b === 1),
    'one-bit-mean': (r) => r === 0 || r === 1,
    'haar-hrr': (r, m) => Object.keys(r).join() === 'level,index,bit' && r.level >= 1 && r.index >= 0 &&
      r.index < 2 ** (r.level - 1) && (r.bit === 0 || r.bit === 1) && 2 ** r.level <= Number(m.config.params.bins),
    'hierarchical-histogram': (r, m) => Object.keys(r).join() === 'level,report' && r.level >= 1 &&
      r.level <= m.config.params.levels.length && typeof r.report === 'string',
    'set-valued': (r, m) => Number.isInteger(r) && r >= 0 && r < m.k + Number(m.config.params.ell),
    // UE: the hex of the d + ell keys' +1 bits then their -1 bits; GRR: 2 j + (sign == +1), j < d + ell
    pckv: (r, m) => {
      const keys = m.k + Number(m.config.params.ell);
      return m.config.params.variant === 'ue'
        ? typeof r === 'string' && r.length === 4 * Math.ceil(keys / 8) && /^[0-9a-f]+$/.test(r)
        : Number.isInteger(r) && r >= 0 && r < 2 * keys;
    },
  };
  const asValues = (m) => (m.kind === 'set' ? m.domain.map((v) => [v])
    : m.kind === 'keyvalue' ? m.domain.map((v) => [[v, 0.5]]) : m.domain);
  const seen = new Set();
  for (const c of fixtures.chi_square) {
    const m = fromConfig(c.config, { randomBytes: seededBytes(`shape:${c.name}`) });
    seen.add(m.mechanism);
    for (const value of asValues(m)) {
      for (const r of m.privatizeMany(new Array(50).fill(value))) assert.ok(shapes[m.mechanism](r, m), `${c.name}: ${stringify(r)}`);
    }
    // a null epsilon in a config: infinite (an answer of the survey design reveals the truth)
    if (c.config.epsilon === null) {
      assert.equal(m.epsilon, Infinity, c.name);
      continue;
    }
    assert.equal(m.epsilon, c.config.epsilon); // Python's exact ln rounded up, reported as is
    // without the claim, the client's own float is rounded up: never below Python's, within 1e-13
    const unclaimed = fromConfig({ ...c.config, epsilon: undefined }, { randomBytes: seededBytes('eps') });
    assert.ok(unclaimed.epsilon >= c.config.epsilon && unclaimed.epsilon - c.config.epsilon < 1e-13 * Math.max(1, c.config.epsilon),
      `${c.name}: ${unclaimed.epsilon} vs ${c.config.epsilon}`);
  }
  assert.deepEqual([...seen].sort(), Object.keys(shapes).sort());
});

test('seeds wider than 53 bits stay exact: BigInt in the report, a JSON integer on the wire', () => {
  // k = 2^16 with g = 2^20 needs a 16 + 39 = 55-bit seed
  const cfg = { format: 'deniable.mechanism', version: 1, mechanism: 'olh', domain: 65536, params: { g: 1 << 20, truth_numerator: 3000, other_numerator: 1, hash: 'toeplitz-gf2' } };
  const r = fromConfig(cfg, { randomBytes: seededBytes('wide') }).privatize(65535);
  assert.equal(typeof r.seed, 'bigint');
  assert.ok(r.seed < 1n << 55n);
  assert.equal(stringify(r), `{"seed":${r.seed},"value":${r.value}}`);
});

test('sampling never calls Math.random', () => {
  const original = Math.random;
  Math.random = () => {
    throw new Error('Math.random called');
  };
  try {
    for (const c of fixtures.chi_square) {
      const m = fromConfig(c.config);
      m.privatizeMany(m.kind === 'set' ? m.domain.map((v) => [v])
        : m.kind === 'keyvalue' ? m.domain.map((v) => [[v, -0.5]]) : m.domain);
    }
    idempotencyKey();
  } finally {
    Math.random = original;
  }
});

test('bad configs and values raise DeniableError naming the field', () => {
  const good = byName['grr-letters'].config;
  const bad = (patch, field) => {
    const cfg = { ...good, ...patch };
    assert.throws(() => fromConfig(cfg), (e) => e instanceof DeniableError && e.field === field, `${stringify(patch)} -> ${field}`);
  };
  bad({ format: 'other' }, 'format');
  bad({ version: 3 }, 'version');
  bad({ mechanism: 'cms' }, 'mechanism');
  bad({ params: [] }, 'params');
  bad({ domain: ['only'] }, 'domain');
  bad({ params: { truth_numerator: 5 } }, 'params.other_numerator');
  bad({ params: { truth_numerator: 1.5, other_numerator: 1 } }, 'params.truth_numerator');
  bad({ params: { truth_numerator: 1, other_numerator: 2 } }, 'params');
  bad({ epsilon: 3 }, 'epsilon');
  // set-valued: the whole report's exact epsilon (GRR's amplified, computed here), or the oracle's,
  // which configurations stored before the amplified budget claim; anything else is refused
  const sv = byName['set-valued-grr'].config;
  const ell = Number(sv.params.ell);
  const { truth_numerator: a, other_numerator: b } = sv.params.oracle.params;
  const own = fromConfig({ ...sv, epsilon: undefined }).epsilon; // the device's ln, rounded up
  assert.ok(own >= sv.epsilon && own - sv.epsilon < 1e-13, `${own} vs ${sv.epsilon}`);
  assert.ok(Math.abs(sv.epsilon - Math.log1p((Number(a) / Number(b) - 1) / ell)) < 1e-9);
  assert.equal(fromConfig({ ...sv, epsilon: sv.params.oracle.epsilon }).epsilon, sv.params.oracle.epsilon);
  assert.throws(() => fromConfig({ ...sv, epsilon: sv.epsilon * 0.9 }), (e) => e.field === 'epsilon');
  const had = byName['hadamard-k6'].config;
  assert.throws(() => fromConfig({ ...had, params: { ...had.params, K: 16 } }), (e) => e.field === 'params.K');
  const m = fromConfig(good);
  assert.throws(() => m.privatize('E'), (e) => e.field === 'value' && /not in the domain/.test(e.message));
  assert.throws(() => fromConfig(byName['binary-warner-eps1'].config).privatize(1), (e) => e.field === 'value');
});

test('parseJSON agrees with JSON.parse and keeps big integers exact; stringify round-trips', () => {
  const text = '{"a": [1, -2.5e3, 0.1, "x\\"y\\u00e9", true, false, null], "big": 18446744073709551615, "neg": -9007199254740993, "safe": 9007199254740991, "o": {}}';
  const v = parseJSON(text);
  assert.deepEqual(v.a, JSON.parse(text).a);
  assert.equal(v.big, 18446744073709551615n);
  assert.equal(v.neg, -9007199254740993n);
  assert.equal(v.safe, 9007199254740991);
  assert.deepEqual(parseJSON(stringify(v)), v);
  const proto = parseJSON('{"__proto__": {"polluted": 1}}');
  assert.equal(Object.getPrototypeOf(proto), Object.prototype);
  assert.deepEqual(Object.keys(proto), ['__proto__']);
  for (const broken of ['{', '[1,]', '{"a" 1}', '01', '"open', '[1] x', 'tru']) {
    assert.throws(() => parseJSON(broken), SyntaxError, broken);
  }
});

test('idempotency keys: UUID v4 text, 36 chars of [0-9a-f-] (fits the 8..128 [A-Za-z0-9_-] contract)', () => {
  const re = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
  assert.match(idempotencyKey(), re);
  assert.match(idempotencyKey(seededBytes('uuid')), re);
  assert.notEqual(idempotencyKey(), idempotencyKey());
});

test('secureRandomBytes serves more than the 64 KiB getRandomValues limit', () => {
  const b = secureRandomBytes(200000);
  assert.equal(b.length, 200000);
  assert.ok(b.subarray(150000).some((x) => x !== 0));
});

test('survey-design channels: an answer impossible under one truth never comes, and reveals it', () => {
  // Mangat, p = 0.7: P(yes | carrier) = 1, P(yes | non-carrier) = 3/10
  const m = fromConfig(binary(10, [3, 10]), { randomBytes: seededBytes('mangat') });
  assert.equal(m.epsilon, Infinity);
  assert.ok(m.privatizeMany(new Array(2000).fill(true)).every((r) => r === true));
  // Warner with p = 0.3: P(yes | true) = 3/10 < P(yes | false) = 7/10, epsilon = ln(7/3)
  assert.ok(Math.abs(fromConfig(binary(10, [7, 3])).epsilon - Math.log(7 / 3)) < 1e-12);
  // a channel that carries no information, or numerators outside [0, denominator], is refused
  assert.throws(() => fromConfig(binary(10, [4, 4])), (e) => e instanceof DeniableError && e.field === 'params');
  assert.throws(() => fromConfig(binary(10, [3, 11])), (e) => e instanceof DeniableError && e.field === 'params');
});

test('uniformGroup draws 1 + (u mod k) from the exact sampler, redrawing words at or above the limit', () => {
  // k = 2: 2^32 is a multiple of 2, no rejection; k = 3: the word 0xffffffff is redrawn
  assert.equal(uniformGroup(2, { randomBytes: scripted([4]) }), 1);
  assert.equal(uniformGroup(2, { randomBytes: scripted([5]) }), 2);
  assert.equal(uniformGroup(3, { randomBytes: scripted([0xffffffff, 5]) }), 3);
  assert.throws(() => uniformGroup(1), (e) => e instanceof DeniableError && e.field === 'k');
});

test('assignQuestion draws u mod d from the exact sampler (allocation: sample), redrawing at or above the limit', () => {
  assert.equal(assignQuestion(1, { randomBytes: scripted([]) }), 0);
  assert.equal(assignQuestion(3, { randomBytes: scripted([7]) }), 1);
  // 3 * floor(2^32 / 3) = 0xffffffff: that word is redrawn
  assert.equal(assignQuestion(3, { randomBytes: scripted([0xffffffff, 0xfffffffe]) }), 0xfffffffe % 3);
  const counts = [0, 0, 0, 0, 0];
  for (let i = 0; i < 5000; i++) counts[assignQuestion(5)] += 1; // the platform CSPRNG
  assert.ok(counts.every((c) => c > 800 && c < 1200), `${counts}`); // 200 is 7 sd of Binomial(5000, 1/5)
  assert.throws(() => assignQuestion(0), (e) => e instanceof DeniableError && e.field === 'd');
});
