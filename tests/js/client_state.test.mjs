// The browser's kept states against tests/vectors/client_state.json, which the Python code made
// (tests/vectors/make_client_state.py): the same state format, streams, fingerprints, derived
// secrets and cohorts, and the same memoized draws, so a state moves between Python and a browser.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import {
  DeniableError, stringify,
} from '../../src/deniable/server/static/deniable.js';
import {
  fingerprint, memoryStore, persistentClient, stream, surveyFingerprint, surveyState,
} from '../../src/deniable/server/static/client_state.js';
import { canonicalJSON, parseJSON } from '../../src/deniable/server/static/json.js';
import { seededBytes } from './helpers.mjs';

const vectors = parseJSON(fs.readFileSync(new URL('../vectors/client_state.json', import.meta.url), 'utf8'));
const fromHex = (hex) => Uint8Array.from(hex.match(/../g), (h) => parseInt(h, 16));
const hex = (bytes) => Buffer.from(bytes).toString('hex');
const shown = (value) => (typeof value === 'bigint' ? value.toString() : value);

test("canonicalJSON writes what Python's json.dumps(sort_keys=True, separators=(',', ':')) writes", () => {
  for (const { value, text } of vectors.canonical) assert.equal(canonicalJSON(value), text);
});

test('a secret stream is SHAKE-256 of HMAC-SHA256(secret, label parts joined by NUL), as ClientState.source', () => {
  const secret = fromHex(vectors.secret);
  for (const { label, bytes } of vectors.streams) {
    const s = stream(secret, ...label);
    assert.equal(hex(s.bytes(5)) + hex(s.bytes(43)), bytes, label.join('/'));
  }
});

test('a survey state is SurveyState: same fingerprint, device key, question secrets, cohorts and memoized draws', async () => {
  const { definition, fingerprint: print, state, questions } = vectors.survey;
  assert.equal(surveyFingerprint(definition), print);
  const store = memoryStore();
  await store.update(definition.id, () => state);
  const kept = await surveyState(definition, { store, randomBytes: seededBytes('survey') });
  assert.equal(kept.device, state.fields.device);
  for (const q of questions) {
    const question = definition.questions.find((o) => o.id === q.id);
    const client = await kept.client(question);
    if (q.cohort !== undefined) assert.equal(client.cohort, q.cohort, q.id);
    if (q.buckets !== undefined) assert.deepEqual(client.privatize(q.draws[0].value).buckets, q.buckets, q.id);
    for (const { value, permanent } of q.draws) assert.equal(shown(client.permanent(value)), permanent, `${q.id} ${stringify(value)}`);
  }
  assert.equal(await kept.client(definition.questions.find((o) => o.id === 'q-design')), null);
});

test('a new survey state is written in the format Python reads, and refused for other questions', async () => {
  const { definition, fingerprint: print } = vectors.survey;
  const store = memoryStore();
  const kept = await surveyState(definition, { store, randomBytes: seededBytes('fresh') });
  const data = await store.update(definition.id, (old) => old);
  assert.deepEqual(Object.keys(data).sort(), ['fields', 'fingerprint', 'format', 'mechanism', 'secret', 'version']);
  assert.deepEqual([data.format, data.version, data.mechanism, data.fingerprint], ['deniable.client-state', 1, `survey ${definition.id}`, print]);
  assert.match(data.secret, /^[0-9a-f]{64}$/);
  assert.deepEqual(data.fields, { device: kept.device });
  const changed = { ...definition, questions: definition.questions.slice(1) };
  await assert.rejects(surveyState(changed, { store }), (e) => e instanceof DeniableError && e.field === 'state');
});

test('a configuration state is what m.client(state=...) keeps: same fingerprint and memoized draws', async () => {
  for (const c of vectors.mechanisms) {
    assert.equal(fingerprint(c.config), c.fingerprint, c.name);
    const store = memoryStore();
    await store.update('k', () => c.state);
    const client = await persistentClient(c.config, { key: 'k', store, randomBytes: seededBytes(c.name) });
    if (c.cohort !== undefined) assert.equal(client.cohort, c.cohort, c.name);
    if (c.buckets !== undefined) assert.deepEqual(client.privatize(c.draws[0].value).buckets, c.buckets, c.name);
    for (const { value, permanent } of c.draws) assert.equal(shown(client.permanent(value)), permanent, `${c.name} ${stringify(value)}`);
  }
});

test('states written by earlier versions of the page keep their secret, cohort and memoized draws', async () => {
  const legacy = JSON.parse(fs.readFileSync(new URL('./fixtures/legacy_states.json', import.meta.url), 'utf8'));
  for (const { name, record, draws } of legacy.states) {
    const config = vectors.mechanisms.find((c) => c.name === name).config;
    const store = memoryStore();
    await store.update('k', () => record);
    const client = await persistentClient(config, { key: 'k', store, randomBytes: seededBytes(name) });
    assert.equal(client.cohort, record.cohort, name);
    for (const { value, permanent } of draws) assert.equal(shown(client.permanent(value)), permanent, `${name} ${stringify(value)}`);
    assert.deepEqual(await store.update('k', (old) => old), record, 'the record is left as it was');
    // in a survey's state, the question keeps that record; the survey's state takes the old device key
    const definition = { id: 's', questions: [{ id: 'q', mechanism: config }] };
    await store.update('s/q', () => record);
    await store.update('s#device', () => ({ format: 'deniable.device-key', version: 1, device: 'b2xkLWRldmljZS1rZXktMQ' }));
    const kept = await surveyState(definition, { store, randomBytes: seededBytes(`${name}-survey`) });
    assert.equal(kept.device, 'b2xkLWRldmljZS1rZXktMQ');
    const question = await kept.client(definition.questions[0]);
    for (const { value, permanent } of draws) assert.equal(shown(question.permanent(value)), permanent, `${name} in a survey`);
  }
});
