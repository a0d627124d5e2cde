// Deterministic tests of deniable.js's RAPPOR: the hashes, the Bloom filters Python computes,
// and the persistent client that keeps permanent responses (repeated collection).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { DeniableError, fromConfig, stringify } from '../../src/deniable/server/static/deniable.js';
import { hmacSha256, memoryStore, persistentClient } from '../../src/deniable/server/static/client_state.js';
import { md5 } from '../../src/deniable/server/static/vendor/noble-hashes/legacy.js';
import { sha256 } from '../../src/deniable/server/static/vendor/noble-hashes/sha2.js';
import { loadFixtures, seededBytes } from './helpers.mjs';

const fixtures = loadFixtures();
const allOnes = (n) => new Uint8Array(n).fill(0xff);

test('sha256 and md5 equal node:crypto on every padding boundary', () => {
  const bytes = seededBytes('hash-inputs');
  for (const n of [0, 1, 3, 55, 56, 57, 63, 64, 65, 119, 120, 128, 1000]) {
    const input = bytes(n);
    assert.equal(Buffer.from(sha256(input)).toString('hex'), crypto.createHash('sha256').update(input).digest('hex'), `sha256 n=${n}`);
    assert.equal(Buffer.from(md5(input)).toString('hex'), crypto.createHash('md5').update(input).digest('hex'), `md5 n=${n}`);
  }
  for (const [k, n] of [[0, 0], [32, 5], [64, 100], [100, 64]]) {
    const [key, msg] = [bytes(k), bytes(n)];
    assert.equal(Buffer.from(hmacSha256(key, msg)).toString('hex'), crypto.createHmac('sha256', key).update(msg).digest('hex'), `hmac ${k}/${n}`);
  }
  // RFC 1321 A.5 and FIPS 180-2 B.1
  assert.equal(Buffer.from(md5(new TextEncoder().encode('message digest'))).toString('hex'), 'f96b697d7cb7938d525a2f31aaf161d0');
  assert.equal(Buffer.from(sha256(new TextEncoder().encode('abc'))).toString('hex'),
    'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
});

for (const c of fixtures.rappor_blooms) {
  test(`Bloom filters equal Python's: ${c.name}`, () => {
    // p = 0, q = 1 and f = 2^-31: with 0xff random bytes no bit is noised, the cohort is the last
    const m = fromConfig(c.config, { randomBytes: allOnes });
    m.domain.forEach((value, i) => {
      const report = m.privatize(value);
      assert.equal(report.cohort, c.cohort);
      assert.equal(BigInt(report.bits), BigInt(c.blooms[i]), `category ${stringify(value)}`);
    });
  });
}

const config = (overrides = {}) => {
  const base = fixtures.rappor_blooms.find((c) => c.name === 'rappor-bloom-sha256-100').config;
  const params = { ...base.params, half_f_numerator: 2 ** 30, ...overrides };
  return { ...base, epsilon: undefined, params };
};

test('a kept state gives the same cohort and permanent responses; another state does not', async () => {
  const store = memoryStore();
  const first = await persistentClient(config(), { key: 'survey-1/q1', store, randomBytes: seededBytes('kept-a') });
  const again = await persistentClient(config(), { key: 'survey-1/q1', store, randomBytes: seededBytes('kept-b') });
  const other = await persistentClient(config(), { key: 'survey-2/q1', store, randomBytes: seededBytes('kept-c') });
  assert.equal(again.cohort, first.cohort);
  const values = ['x', 'y', 'é', 'long value'];
  const mine = values.map((v) => first.permanent(v));
  assert.deepEqual(values.map((v) => again.permanent(v)), mine);
  assert.deepEqual(values.map((v) => first.permanent(v)), mine);
  // 4 x 100 bits, each a fair coin w.p. f = 1/2: equal by chance w.p. < 2^-100
  assert.notDeepEqual(values.map((v) => other.permanent(v)), mine);
  // the state (Python's format) holds a secret and the cohort, nothing about the values reported
  const kept = await store.update('survey-1/q1', (old) => old);
  assert.deepEqual(Object.keys(kept).sort(), ['fields', 'fingerprint', 'format', 'mechanism', 'secret', 'version']);
  assert.deepEqual(kept.fields, { cohort: first.cohort });
});

test('without an instantaneous step (p = 0, q = 1) every report is the kept permanent response', async () => {
  const store = memoryStore();
  const reports = [];
  for (let day = 0; day < 5; day++) {
    const client = await persistentClient(config(), { key: 'daily', store, randomBytes: seededBytes(`day-${day}`) });
    reports.push(stringify(client.privatize('y')));
  }
  assert.equal(new Set(reports).size, 1);
});

test('a state kept for another configuration is refused, and only memoizing mechanisms persist', async () => {
  const store = memoryStore();
  await persistentClient(config(), { key: 's', store });
  await assert.rejects(persistentClient(config({ half_f_numerator: 2 ** 29 }), { key: 's', store }),
    (e) => e instanceof DeniableError && e.field === 'state' && /another mechanism configuration/.test(e.message));
  await assert.rejects(persistentClient(config(), { store }), (e) => e instanceof DeniableError && e.field === 'key');
  const grr = { format: 'deniable.mechanism', version: 1, mechanism: 'grr', domain: ['a', 'b'], params: { truth_numerator: 3, other_numerator: 1 } };
  await assert.rejects(persistentClient(grr, { key: 'g', store }), (e) => e instanceof DeniableError && e.field === 'mechanism');
});

test('rappor configs are checked field by field', () => {
  const bad = (params, field) => assert.throws(() => fromConfig({ ...config(), params: { ...config().params, ...params } }),
    (e) => e instanceof DeniableError && e.field === field);
  bad({ hash: 'sha1(cohort, hash_no, value)' }, 'params.hash');
  bad({ num_bits: 257 }, 'params.num_bits');
  bad({ num_hashes: 9 }, 'params.num_hashes');
  bad({ q_numerator: 0 }, 'params');
  const { hash, ...old } = config().params; // a config without params.hash means deniable's own hashing
  assert.equal(hash, 'sha256(cohort NUL type NUL value)');
  assert.equal(stringify(fromConfig({ ...config(), params: old }, { randomBytes: allOnes }).privatize('x')),
    stringify(fromConfig(config(), { randomBytes: allOnes }).privatize('x')));
});
