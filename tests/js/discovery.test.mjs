// discovery.js (free-text answers): BLAKE2b, items and buckets as Python computes them, and
// calibrated chi-square tests of the reports' exact distribution.
//
// Alpha: the calibrated tests of this file spend 1e-6 in all, split evenly (Bonferroni) over
// fixtures.n_tests (every report part of every case, from the seeded and the crypto source);
// critical values, merged bins and the buckets each report is classified by come from Python
// (tests/js/fixtures/make_discovery_fixtures.py), so a wrong hash in JS shows as a wrong
// distribution. Power check: each test must reject the case's wrong config (the flip or keep
// numerator 20% off; the generator asserts power >= 1 - 1e-9).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { DeniableError, parseJSON, stringify } from '../../src/deniable/server/static/deniable.js';
import { blake2b, fromDiscoveryConfig, sketchFromConfig } from '../../src/deniable/server/static/discovery.js';
import { describeAlphabet } from '../../src/deniable/server/static/format.js';
import { foreignText, normalizeAnswer } from '../../src/deniable/server/static/free_text.js';
import { shownValue } from '../../src/deniable/server/static/free_text_results.js';
import { seededBytes, TEST_SEED } from './helpers.mjs';

const fixtures = parseJSON(fs.readFileSync(new URL('./fixtures/discovery.json', import.meta.url), 'utf8'));
const hex = (bytes) => Buffer.from(bytes).toString('hex');
const fromHex = (text) => new Uint8Array(Buffer.from(text, 'hex'));
const utf8 = (text) => new TextEncoder().encode(text);

test('BLAKE2b: RFC 7693 Appendix A and the BLAKE2 keyed test vectors', () => {
  assert.equal(hex(blake2b(utf8('abc'))),
    'ba80a53f981c4d0d6a2797b69f12f6e94c212f14685ac4b74b12bb6fdbffa2d1' +
    '7d87c5392aab792dc252d5de4533cc9518d38aa8dbf1925ab92386edd4009923');
  assert.equal(hex(blake2b(new Uint8Array(0))),
    '786a02f742015903c6c6fd852552d272912f4740e15847618a86e217f71f5419' +
    'd25e1031afee585313896444934eb04b903a685b1448b755d56f701afe9be2ce');
  // blake2b-kat.txt (keyed, key 00..3f): the empty input and 00..fe (two blocks)
  const key = Uint8Array.from({ length: 64 }, (_, i) => i);
  assert.equal(hex(blake2b(new Uint8Array(0), { key })),
    '10ebb67700b1868efb4417987acf4690ae9d972fb7a590c2f02871799aaa4786' +
    'b5e996e8f0f4eb981fc214b005f42d2ff4233499391653df7aefcbc13fc51568');
  assert.equal(hex(blake2b(Uint8Array.from({ length: 255 }, (_, i) => i), { key })),
    '142709d62e28fcccd0af97fad0f8465b971e82201dc51070faa0372aa43e9248' +
    '4be1c1e73ba10906d5d1853db6a4106e0a7bf9800d373d6dee2d46d62ef2a461');
  // an exact multiple of the block size (128 bytes) is one block, marked last
  assert.equal(hex(blake2b(new Uint8Array(128), { digestLength: 8 })).length, 16);
});

test("BLAKE2b with a key, a short digest and a personalization, as Python's hashlib.blake2b", () => {
  // hashlib.blake2b(b'hello', digest_size=8, key=bytes([7]) * 32, person=b'deniable:value')
  const out = blake2b(utf8('hello'), { digestLength: 8, key: new Uint8Array(32).fill(7), personal: utf8('deniable:value') });
  assert.equal(hex(out), 'e5629d90d523cfa0');
});

test('items: text cut at a character boundary and marked, integers offset big-endian (as deniable.heavy.items)', () => {
  for (const c of fixtures.items) {
    const config = { ...fixtures.chi_square[0].config, kind: c.kind, max_length: c.max_length };
    const device = fromDiscoveryConfig(config);
    assert.equal(hex(device.item(c.value)), c.item, `${c.kind} ${c.value} (max_length ${c.max_length})`);
  }
});

test('an alphabet: values in it have their items; another character is refused as Python refuses it', () => {
  const base = fixtures.chi_square.find((c) => c.name === 'pem-cms-alphabet').config;
  for (const c of fixtures.alphabet_items) {
    const device = fromDiscoveryConfig({ ...base, max_length: c.max_length, alphabet: c.alphabet });
    assert.equal(device.alphabet, c.alphabet);
    if (c.item !== undefined) {
      assert.equal(hex(device.item(c.value)), c.item, c.value);
      assert.equal(device.foreign(c.value), null);
      continue;
    }
    assert.equal(device.foreign(c.value), c.character, c.value);
    const expected = `value: has the character ${stringify(c.character)}, not in the alphabet; got ${stringify(c.value.slice(0, 60))}`;
    assert.throws(() => device.privatize(c.value), (e) => e instanceof DeniableError && e.field === 'value' && e.message === expected);
    if (!/[\\\t]/.test(c.value) && c.value.length < 50) {
      // Python's words (its repr quotes with ' where JSON quotes with ")
      assert.equal(expected.replace(/"/g, "'"), c.python_message.replace('values[0] ', 'value: '));
    }
  }
  const batch = fixtures.alphabet_batch;
  assert.throws(() => fromDiscoveryConfig(batch.config).privatizeMany(batch.values),
    (e) => e.field === `values[${batch.index}]` && e.message.includes(`has the character ${stringify(batch.character)}`));
  // without an alphabet every character is taken
  const free = fromDiscoveryConfig(fixtures.chi_square[0].config);
  assert.equal(free.alphabet, null);
  assert.equal(free.foreign('ab😀'), null);
});

test('a bad alphabet in a config is refused naming alphabet, as Python refuses it', () => {
  for (const c of fixtures.alphabet_configs) {
    assert.throws(() => fromDiscoveryConfig(c.config), (e) => e instanceof DeniableError && e.field === 'alphabet',
      `${stringify(c.config.alphabet)} (${c.config.kind}, ${c.config.method}): Python says ${c.python_message}`);
  }
});

test('the pages name an alphabet by ranges and single characters', () => {
  assert.equal(describeAlphabet('abcdefghijklmnopqrstuvwxyz'), 'a–z');
  assert.equal(describeAlphabet('zyxwvutsrqponmlkjihgfedcba0123456789-_ '), '“-”, 0–9, “_”, a–z, space');
  assert.equal(describeAlphabet('xy'), '“x”, “y”');
  // the survey page's words for a refused character: the other case or the bare letter suggested
  const letters = 'abcdefghijklmnopqrstuvwxyz';
  assert.equal(foreignText('V', letters), 'has the character “V”, not in the alphabet (type “v”); only these characters are allowed: a–z');
  assert.match(foreignText('É', letters), /“É”, not in the alphabet \(type “e”\)/);
  assert.match(foreignText('v', 'UVW'), /\(type “V”\)/);
  assert.match(foreignText('😀', letters), /“😀”, not in the alphabet; only/);
});

test("sketch buckets and SFP pieces are Python's", () => {
  const sketch = sketchFromConfig(fixtures.hash_sketch);
  for (const c of fixtures.hashes) assert.equal(sketch.bucket(c.row, fromHex(c.key)), c.bucket, `${c.key} row ${c.row}`);
  for (const c of fixtures.pieces) {
    const piece = blake2b(fromHex(c.item), { digestLength: 1, key: sketch.seed, personal: utf8('deniable:sfp') })[0];
    assert.equal(piece, c.piece);
  }
});

test('configs: a wrong epsilon, method or sketch is refused naming the field', () => {
  const config = fixtures.chi_square[0].config;
  assert.throws(() => fromDiscoveryConfig({ ...config, epsilon: config.epsilon * 1.01 }), /epsilon/);
  assert.throws(() => fromDiscoveryConfig({ ...config, method: 'treehist' }), /method/);
  assert.throws(() => fromDiscoveryConfig({ ...config, version: 2 }), /version/);
  assert.throws(() => fromDiscoveryConfig({ ...config, sketch: { ...config.sketch, mechanism: 'olh' } }), /sketch\.mechanism/);
  assert.throws(() => fromDiscoveryConfig(config).privatize(3), /value/);
});

test('the survey page sends answers trimmed and NFC; the results page shows control characters escaped', () => {
  assert.equal(normalizeAnswer('  cafe\u0301 '), 'café');
  assert.equal(shownValue({ value: 'emac\u001cvQ', truncated: false }), 'emac\\x1cvQ');
  assert.equal(shownValue({ value: '<script>aler', truncated: true }), '<script>aler… (begins with)');
  assert.equal(shownValue({ value: -5, truncated: false }), '-5');
});

function popcount8(x) {
  let c = 0;
  for (let v = x; v; v &= v - 1) c++;
  return c;
}

/** The cell of a sketch report, classified with Python's buckets (never discovery.js's own hash). */
function cell(report, buckets, level) {
  const b = buckets[level === null ? 0 : level - 1][report.row];
  const prefix = level === null ? '' : `${level},`;
  if ('bits' in report) {
    const bytes = fromHex(report.bits);
    let d = 0;
    bytes.forEach((x, k) => {
      const onehot = (b >> 3) === k ? 1 << (b & 7) : 0;
      d += popcount8(x ^ onehot);
    });
    return `${prefix}${report.row},${d}`;
  }
  const agree = popcount8(report.index & b) % 2 === report.bit ? 1 : 0;
  return `${prefix}${report.row},${report.index},${agree}`;
}

function chiSquare(reports, partName, part) {
  const index = new Map(part.cells.map((key, i) => [key, i]));
  const observed = new Float64Array(part.group_probs.length);
  for (const r of reports) {
    const key = cell(r[partName], part.buckets, partName === 'word' ? null : r.level);
    const i = index.get(key);
    if (i === undefined) return { statistic: Infinity, detail: `impossible cell ${key}` };
    observed[part.groups[i]] += 1;
  }
  let statistic = 0;
  part.group_probs.forEach((p, g) => {
    const expected = p * reports.length;
    statistic += (observed[g] - expected) ** 2 / expected;
  });
  return { statistic, detail: '' };
}

for (const c of fixtures.chi_square) {
  for (const source of ['seeded', 'crypto']) {
    test(`${c.name} (${source}): reports follow the exact distribution; the wrong config is rejected`, () => {
      const options = (label) => (source === 'seeded' ? { randomBytes: seededBytes(`${c.name}:${label}`) } : {});
      const values = new Array(Number(c.n)).fill(c.value);
      const reports = fromDiscoveryConfig(c.config, options('right')).privatizeMany(values);
      const wrong = fromDiscoveryConfig(c.wrong_config, options('wrong')).privatizeMany(values);
      for (const [name, part] of Object.entries(c.parts)) {
        const right = chiSquare(reports, name, part);
        assert.ok(right.statistic <= part.critical,
          `${name}: chi2 ${right.statistic.toFixed(1)} > ${part.critical.toFixed(1)} (df ${part.df}, alpha ${fixtures.alpha_per_test}, seed ${TEST_SEED}) ${right.detail}`);
        const off = chiSquare(wrong, name, part);
        assert.ok(off.statistic > part.critical, `${name}: power check: the wrong config passed (chi2 ${off.statistic.toFixed(1)})`);
      }
    });
  }
}

test('fixture accounting: the calibrated tests above are the n_tests alpha is split over', () => {
  const planned = 2 * fixtures.chi_square.reduce((s, c) => s + Object.keys(c.parts).length, 0);
  assert.equal(planned, fixtures.n_tests);
  assert.ok(Math.abs(fixtures.alpha_per_test * fixtures.n_tests - 1e-6) < 1e-15);
});
