// client_state.js -- a device's kept state for repeated collection, shared with Python.
//
// A memoizing mechanism (RAPPOR's permanent response, L-GRR, L-OSUE, dBitFlip, 1BitMean) keeps
// its lifetime promise only while the device keeps the randomness it drew once. The browser keeps
// it in IndexedDB in the format of Python's deniable._client_state, so a state can move between a
// browser and a Python device (`Client(url, state=path)`) and gives the same permanent responses:
//
//   {"format": "deniable.client-state", "version": 1, "mechanism": <name>, "fingerprint": <hex>,
//    "secret": <64 hex digits: 32 bytes from the CSPRNG>, "fields": {...}}
//
// surveyState(survey): one state per survey (mechanism "survey <id>", fingerprint
// surveyFingerprint(survey), fields {"device": <device key>}), as deniable.client.SurveyState.
// A memoizing question's secret is the first 32 bytes of stream(secret, "question", <question id>)
// and RAPPOR's cohort a uniform integer drawn from stream(secret, "cohort", <question id>); the
// question's kept client derives its memoized draws from its secret as `m.client(secret=...)` does.
// persistentClient(cfg, {key}): one state per configuration (mechanism the wire id, fingerprint
// the configuration's, fields {"cohort"} for RAPPOR), as `m.client(state=...)`.
//
// stream(secret, ...label) is SHAKE-256 of HMAC-SHA256(secret, the label's parts joined by NUL)
// (ClientState.source), read in order; the samplers read it exactly as Python's do
// (sampling.js: lazyBits, uniformBelowMany). tests/vectors/client_state.json holds states, secrets,
// cohorts and memoized draws made by the Python code; tests/js/client_state.test.mjs checks them here.
//
// States written by earlier versions of this page (one record per survey and question, with the
// configuration's JSON text in "config" and "cohort" beside the secret; the device key under
// "<survey id>#device") are still read: such a question keeps its own secret and its earlier
// derivation (a SHA-256 counter stream, categories labelled by their JSON), because deriving its
// draws anew would give a second permanent response that could be averaged with the first; the
// survey's state takes over the device key, so the server's per-device budget goes on. Those
// question states stay in this browser (Python does not read them).
import { hmac } from './vendor/noble-hashes/hmac.js';
import { sha256 } from './vendor/noble-hashes/sha2.js';
import { shake256 } from './vendor/noble-hashes/sha3.js';
import {
  DeniableError, fromConfig, internals, MAX_GETRANDOM, secureRandomBytes, uniformBelowSmall, utf8, WordPool,
} from './deniable.js';
import { canonicalJSON, stringify } from './json.js';
import { digest, fingerprint, toHex } from './fingerprint.js';

export { fingerprint };

export const STATE_FORMAT = 'deniable.client-state';
export const STATE_VERSION = 1;
export const DEVICE_KEY_FORMAT = 'deniable.device-key';
const SECRET_BYTES = 32;
const DEVICE_KEY = /^[A-Za-z0-9_-]{22,128}$/;

const fromHex = (hex) => Uint8Array.from(hex.match(/../g), (h) => parseInt(h, 16));

/** HMAC-SHA256 (RFC 2104) of a message (Uint8Array) under a key (Uint8Array). */
export const hmacSha256 = (key, message) => hmac(sha256, key, message);

// ------------------------------------------------------------------ stores

/**
 * Kept states in the browser's IndexedDB (database `name`, one record per key). `update(key, fn)`
 * runs `fn(stored or undefined)` and stores its result (unless undefined) in one readwrite
 * transaction, so two tabs never both create a state.
 */
export function indexedDBStore(name = 'deniable-client-state') {
  const open = () => new Promise((resolve, reject) => {
    const request = globalThis.indexedDB.open(name, 1);
    request.onupgradeneeded = () => request.result.createObjectStore('states');
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
  });
  return {
    async update(key, fn) {
      const db = await open();
      try {
        return await new Promise((resolve, reject) => {
          const tx = db.transaction('states', 'readwrite');
          const states = tx.objectStore('states');
          let result;
          let failure = null;
          const get = states.get(key);
          get.onsuccess = () => {
            try {
              result = fn(get.result);
              if (result !== undefined) states.put(result, key);
            } catch (error) {
              failure = error;
              tx.abort();
            }
          };
          tx.oncomplete = () => resolve(result);
          tx.onabort = () => reject(failure ?? tx.error);
          tx.onerror = () => reject(failure ?? tx.error);
        });
      } finally {
        db.close();
      }
    },
  };
}

/** Kept states in memory (one page or process; for tests). Same interface as indexedDBStore. */
export function memoryStore() {
  const states = new Map();
  return {
    async update(key, fn) {
      const result = fn(states.has(key) ? structuredClone(states.get(key)) : undefined);
      if (result !== undefined) states.set(key, structuredClone(result));
      return structuredClone(result);
    },
  };
}

/** What `store` keeps under `key`, or undefined; creates nothing. */
const peek = (store, key) => store.update(key, (old) => old);

// ------------------------------------------------------------------ derivation

/** The byte stream of a kept secret for one label: SHAKE-256 of HMAC-SHA256(secret, parts joined by NUL). */
class SecretStream {
  constructor(secret, label) {
    this.xof = shake256.create().update(hmacSha256(secret, utf8(label.join('\u0000'))));
  }

  bytes(n) {
    return this.xof.xof(n);
  }

  u32() {
    const b = this.bytes(4);
    return (b[0] | (b[1] << 8) | (b[2] << 16) | (b[3] << 24)) >>> 0;
  }

  u64() {
    const lo = this.u32();
    return (BigInt(this.u32()) << 32n) | BigInt(lo);
  }
}

/** `stream(secret, ...label)`: what ClientState.source(*label) gives in Python (a SecretStream). */
export const stream = (secret, ...label) => new SecretStream(secret, label);

/** The stream of states written before the shared derivation: SHA-256(HMAC-SHA256(secret, label) || counter, 4 bytes big-endian), block after block. */
function legacyStream(secret, label) {
  const key = hmacSha256(secret, utf8(label));
  let counter = 0;
  let buffer = new Uint8Array(0);
  return new WordPool((n) => {
    while (buffer.length < n) {
      const input = new Uint8Array(key.length + 4);
      input.set(key);
      new DataView(input.buffer).setUint32(key.length, counter);
      counter += 1;
      const next = new Uint8Array(buffer.length + 32);
      next.set(buffer);
      next.set(sha256(input), buffer.length);
      buffer = next;
    }
    const out = buffer.slice(0, n);
    buffer = buffer.slice(n);
    return out;
  }, 64);
}

/**
 * What a survey's state belongs to, as deniable.client.survey_fingerprint: the survey's id and its
 * questions' randomization (each question's id, mechanism configuration, design channels and
 * whether it is randomized), so a reworded text does not change it. 32 hex digits.
 */
export function surveyFingerprint(survey) {
  // a design question is fingerprinted by its channels, as before it carried its config (as Python)
  const questions = survey.questions.map((q) => [
    q.id, q.design ? null : (q.mechanism ?? null), q.channels ?? null, 'randomized' in q ? q.randomized : true,
  ]);
  return digest({ id: survey.id, questions }, 32);
}

/** A stored state checked as ClientState.from_json checks it, for `mechanism` and `fingerprint`. */
function checkState(data, mechanism, print, where) {
  if (data?.format !== STATE_FORMAT || data.version !== STATE_VERSION) {
    throw new DeniableError('state', `${where} must have format "${STATE_FORMAT}" and version ${STATE_VERSION}`);
  }
  if (typeof data.secret !== 'string' || !/^[0-9a-fA-F]{64}$/.test(data.secret)) {
    throw new DeniableError('state', `${where}: field 'secret' must be ${2 * SECRET_BYTES} hex digits`);
  }
  if (data.fields === null || typeof data.fields !== 'object' || Array.isArray(data.fields)) {
    throw new DeniableError('state', `${where}: field 'fields' must be an object`);
  }
  if (data.mechanism !== mechanism || data.fingerprint !== print) {
    throw new DeniableError('state', `${where} belongs to another mechanism configuration (${stringify(data.mechanism)} with `
      + `fingerprint ${stringify(data.fingerprint)}, not ${stringify(mechanism)} with ${stringify(print)}); keep each configuration's state under its own key`);
  }
  return { secret: fromHex(data.secret), fields: data.fields };
}

/** The stored state under `key`, created once (a fresh secret and `fields()`) if there is none. */
async function loadOrCreate(store, key, mechanism, print, fields, randomBytes) {
  const fresh = () => ({
    format: STATE_FORMAT, version: STATE_VERSION, mechanism, fingerprint: print,
    secret: toHex(randomBytes(SECRET_BYTES)), fields: fields(),
  });
  const data = await store.update(key, (old) => old ?? fresh());
  return checkState(data, mechanism, print, `the kept state "${key}"`);
}

/**
 * The kept client of mechanism `m` (fromConfig's object) for `secret` and `cohort`: its memoized
 * draws from the secret's streams (`legacy`: the derivation of states written before it was shared).
 */
function keptClient(m, secret, cohort, { legacy = false, randomBytes = secureRandomBytes } = {}) {
  const { impl, position } = internals(m);
  const memo = impl.memo;
  const open = legacy ? (...label) => legacyStream(secret, label.join('\u0000')) : (...label) => stream(secret, ...label);
  const device = memo.setup ? memo.setup(open) : {};
  const legacyLabel = memo.legacyLabel ?? ((x, dev) => memo.label(x, dev).join('\u0000'));
  const sample = legacy || !memo.derived ? memo.permanent : memo.derived;
  const draw = (value) => {
    const x = position(value);
    return sample(legacy ? open(legacyLabel(x, device)) : open(...memo.label(x, device)), cohort, x, device);
  };
  return Object.freeze({
    mechanism: m.mechanism,
    epsilon: m.epsilon,
    /** What all reports sharing one memoized draw reveal together (epsilon_infinity). */
    epsilonPermanent: memo.epsilonPermanent ?? m.epsilon,
    /** The most memoized draws a device can use: its lifetime loss is at most draws x epsilonPermanent. */
    draws: memo.draws,
    cohort,
    /**
     * The memoized draw `value` uses, the same on every call: RAPPOR's permanent response (a
     * BigInt of Bloom bits), L-GRR's first-round category, L-OSUE's first-round bits (hex),
     * dBitFlip's slot bits ("0110"), 1BitMean's bit ("0" / "1").
     */
    permanent: (value) => (memo.show ? memo.show(draw(value)) : draw(value)),
    /** One report of `value`: its memoized draw through fresh randomness where the mechanism has any. */
    privatize(value) {
      return memo.report(new WordPool(randomBytes, Math.min(MAX_GETRANDOM, 4 * (impl.words + 2) + 64)), cohort, draw(value), device);
    },
  });
}

/** fromConfig's object of a configuration and its memo (undefined where nothing is memoized). */
function memoizing(cfg, randomBytes) {
  const m = fromConfig(cfg, { randomBytes });
  return { m, memo: internals(m).impl.memo };
}

/** The client of a state written before the shared derivation (`record`), checked against `m`. */
function legacyClient(m, memo, record, key, randomBytes) {
  const cohort = record.cohort;
  if (record.version !== 1 || record.config !== canonicalJSON(m.config, { python: false })) {
    throw new DeniableError('state', `the kept state "${key}" belongs to another mechanism configuration; keep each configuration's state under its own key`);
  }
  if (!/^[0-9a-f]{64}$/.test(record.secret) || !Number.isSafeInteger(cohort) || cohort < 0 || cohort >= (memo.cohorts ?? 1)) {
    throw new DeniableError('state', `the kept state "${key}" is malformed`);
  }
  return keptClient(m, fromHex(record.secret), cohort, { legacy: true, randomBytes });
}

const isLegacy = (record) => record?.format === STATE_FORMAT && typeof record.config === 'string';

// ------------------------------------------------------------------ public API

/**
 * A device client that keeps its permanent randomized responses, for repeated collection: what
 * Python's `m.client(state=...)` is. `key` names the state in `store` (default: IndexedDB, so
 * reloads and browser restarts reuse it); a state kept for another configuration is refused
 * (DeniableError on field "state").
 * Returns {mechanism, epsilon, epsilonPermanent, draws, cohort, permanent(value), privatize(value)}.
 */
export async function persistentClient(cfg, { key, store = indexedDBStore(), randomBytes = secureRandomBytes } = {}) {
  const { m, memo } = memoizing(cfg, randomBytes);
  if (!memo) throw new DeniableError('mechanism', `${m.mechanism} has no permanent response to keep`);
  if (typeof key !== 'string' || key === '') {
    throw new DeniableError('key', 'must be a non-empty string naming the state, e.g. "<survey id>/<question id>"');
  }
  const old = await peek(store, key);
  if (isLegacy(old)) return legacyClient(m, memo, old, key, randomBytes);
  const cohorts = memo.cohorts;
  const fields = () => (cohorts === undefined ? {} : { cohort: uniformBelowSmall(new WordPool(randomBytes, 64), cohorts) });
  const state = await loadOrCreate(store, key, m.mechanism, fingerprint(m.config), fields, randomBytes);
  const cohort = state.fields.cohort ?? 0;
  if (!Number.isSafeInteger(cohort) || cohort < 0 || cohort >= (cohorts ?? 1)) {
    throw new DeniableError('state', `the kept state "${key}": field 'cohort' must be an integer below ${cohorts ?? 1}`);
  }
  return keptClient(m, state.secret, cohort, { randomBytes });
}

/** Bytes as base64url without padding (RFC 4648 section 5). */
export function base64url(bytes) {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
  let out = '';
  for (let i = 0; i < bytes.length; i += 3) {
    const n = (bytes[i] << 16) | ((bytes[i + 1] ?? 0) << 8) | (bytes[i + 2] ?? 0);
    const chars = Math.min(4, Math.ceil(((bytes.length - i) * 8) / 6));
    for (let j = 0; j < chars; j++) out += alphabet[(n >> (18 - 6 * j)) & 63];
  }
  return out;
}

/**
 * A device key kept in `store` under `key` on its own, in the record format of earlier versions
 * of the survey page ({"format": "deniable.device-key", "version": 1, "device": ...}): 128 bits
 * from the CSPRNG, base64url without padding (22 characters), drawn on first use. The survey page
 * keeps its device key in the survey's state (surveyState) and reads such a record once.
 */
export async function deviceKey(key, { store = indexedDBStore(), randomBytes = secureRandomBytes } = {}) {
  if (typeof key !== 'string' || key === '') throw new DeniableError('key', 'must be a non-empty string, e.g. "<survey id>#device"');
  const fresh = { format: DEVICE_KEY_FORMAT, version: 1, device: base64url(randomBytes(16)) };
  const kept = await store.update(key, (old) => old ?? fresh);
  if (kept?.format !== DEVICE_KEY_FORMAT || kept.version !== 1 || !DEVICE_KEY.test(kept.device)) {
    throw new DeniableError('state', `the kept state "${key}" is not a device key`);
  }
  return kept.device;
}

/**
 * This browser's state for `survey` (its definition as the server gives it, parsed with parseJSON),
 * as Python's deniable.client.SurveyState: created on first use under the survey's id in `store`,
 * refused (DeniableError on field "state") if it was written for other questions.
 * Returns {surveyId, device, client(question)}: `device` is the device key a survey that runs in
 * rounds sends; `client(question)` resolves to the kept client of a memoizing question (null for
 * another), its secret and cohort derived from the survey's secret.
 */
export async function surveyState(survey, { store = indexedDBStore(), randomBytes = secureRandomBytes } = {}) {
  const surveyId = String(survey.id);
  const legacyDevice = await peek(store, `${surveyId}#device`);
  const device = () => ({
    device: legacyDevice?.format === DEVICE_KEY_FORMAT && DEVICE_KEY.test(legacyDevice.device)
      ? legacyDevice.device : base64url(randomBytes(16)),
  });
  const state = await loadOrCreate(store, surveyId, `survey ${surveyId}`, surveyFingerprint(survey), device, randomBytes);
  if (typeof state.fields.device !== 'string' || !DEVICE_KEY.test(state.fields.device)) {
    throw new DeniableError('state', `the kept state of survey "${surveyId}": field 'device' is malformed`);
  }
  return Object.freeze({
    surveyId,
    device: state.fields.device,
    async client(question) {
      if (!question.mechanism) return null; // a survey design's or a plain question
      const { m, memo } = memoizing(question.mechanism, randomBytes);
      if (!memo) return null;
      const key = `${surveyId}/${question.id}`;
      const old = await peek(store, key);
      if (isLegacy(old)) return legacyClient(m, memo, old, key, randomBytes);
      const secret = stream(state.secret, 'question', String(question.id)).bytes(SECRET_BYTES);
      const cohort = memo.cohorts === undefined ? 0 : uniformBelowSmall(stream(state.secret, 'cohort', String(question.id)), memo.cohorts);
      return keptClient(m, secret, cohort, { randomBytes });
    },
  });
}
