// deniable.js -- randomize answers on the respondent's device (local differential privacy).
//
// An ES module without a build step (RAPPOR's hashes, in rappor.js, come from @noble/hashes,
// vendored unchanged in vendor/ by npm run vendor). Given a mechanism
// configuration as produced by the Python library (`m.to_config()`), `fromConfig(cfg).privatize(value)`
// returns one report in exactly the JSON form `m.reports_from_json` accepts:
//
//   binary-rr  true / false
//   grr        the category value itself
//   sue, oue   lowercase hex of the packed bits (category i is bit 7 - i % 8 of byte i // 8)
//   blh, olh   {"seed": int, "value": int}
//   hadamard   int below K
//   subset     the omega category positions, sorted ascending
//   rappor     {"cohort": int, "bits": int} (a BigInt above 2^53; bit i is Bloom bit i)
//   l-grr      the category value itself
//   l-osue     lowercase hex of the packed bits, as sue / oue
//   dbitflip   {"buckets": [d increasing bucket positions], "bits": [d times 0 or 1]}
//   one-bit-mean  0 or 1 (its domain is the interval [low, high]; the value is a number)
//   rr-design  a survey design (designs.js): true / false, the integer answer, or {"group": g, "answer": a}
//   haar-hrr, hierarchical-histogram, set-valued  see ranges.js (a number in [low, high]; a set: an array)
//   pckv       see keyvalue.js (a value is the respondent's [key, value] pairs; PCKV-UE: hex, PCKV-GRR: int)
//
// Repeated collection. `fromConfig(cfg).privatize` makes one-time reports (RAPPOR: a fresh
// cohort and permanent response each time; the longitudinal mechanisms: both rounds fresh).
// A device that reports again and again must keep its permanent responses, or averaging its
// reports reveals the value: client_state.js keeps a secret per survey (surveyState) or per
// configuration (persistentClient) in IndexedDB, in the state format of Python's
// deniable._client_state, and derives every memoized draw from it exactly as Python does.
//
// Modules. This one holds the registry of samplers (BUILDERS: binary-rr, grr, sue, oue, blh,
// olh, hadamard and subset here; rappor.js; the longitudinal and telemetry mechanisms in
// longitudinal.js; the survey designs in designs.js), fromConfig and the device helpers. Every
// sampler draws with the exact samplers of sampling.js (see its header: no floating-point
// number is ever compared with randomness, Math.random is never used).
//
// Timing. Loops run a number of times fixed by the configuration (never by the
// respondent's value); the value only selects thresholds and positions.
//
// Large integers. JSON numbers above 2^53 lose precision in JSON.parse, so
// parse configs of wire version 1 with `parseJSON` (it keeps such integers as
// BigInt) and serialize reports with `stringify` (it writes BigInt as a JSON
// integer); in wire version 2 they travel as decimal strings (`configFromWire`,
// `surveyFromWire`, `reportToWire`, `reportFromWire`). All live in json.js and
// are re-exported here.

import { rrDesign } from './designs.js';
import { paramsFromWire, parseJSON, stringify } from './json.js';
import { dbitflip, longitudinalGRR, longitudinalOSUE, oneBitMean } from './longitudinal.js';
import { pckv } from './keyvalue.js';
import { haarHRR, hierarchicalHistogram, setValued } from './ranges.js';
import { rappor } from './rappor.js';
import {
  DeniableError, MAX_GETRANDOM, TWO32, TWO32N, TWO64N, WordPool, absLnRatio, bitLength, exactInteger,
  finiteValue, integerParam, kRR, lnRatio, parity, parseDomain, parseRange, secureRandomBytes,
  uniformBelow, uniformBelowSmall, utf8,
} from './sampling.js';

export { configFromWire, parseJSON, reportFromWire, reportToWire, stringify, surveyFromWire } from './json.js';

export const CONFIG_FORMAT = 'deniable.mechanism';
export const CONFIG_VERSION = 1;
/** The wire versions fromConfig reads (version 2: wide integers as decimal strings, read with JSON.parse). */
export const WIRE_VERSIONS = Object.freeze([1, 2]);

// ------------------------------------------------------------------ mechanisms

const BUILDERS = {
  'binary-rr'(params, dom) {
    if (dom.k !== 2) throw new DeniableError('domain', 'binary-rr needs the domain [false, true]');
    // denominator 1: a channel that always tells the truth (a design group with no randomization,
    // e.g. CDM's p = 0), accepted exactly as deniable.mechanisms.BinaryRR accepts it
    const d = integerParam(params, 'denominator', { min: 1n, max: TWO64N });
    const ys = params.yes_numerators;
    if (!Array.isArray(ys) || ys.length !== 2) {
      throw new DeniableError('params.yes_numerators', `must be [P(yes|false) numerator, P(yes|true) numerator]; got ${stringify(ys)}`);
    }
    const yf = exactInteger(ys[0], 'params.yes_numerators[0]');
    const yt = exactInteger(ys[1], 'params.yes_numerators[1]');
    // any binary channel (P(yes|false), P(yes|true)) in [0, 1]: the survey designs of
    // deniable.survey are such channels; an answer impossible under one truth reveals it
    if (!(yf <= d && yt <= d && yf !== yt)) {
      throw new DeniableError('params', `binary-rr needs two different yes_numerators in [0, denominator]; got ${stringify(params)}`);
    }
    const thresholds = [yf, yt];
    const epsilon = Math.max(absLnRatio(yt, yf), absLnRatio(d - yt, d - yf));
    return {
      epsilon,
      words: 2,
      sample(pool, x) {
        return uniformBelow(pool, d) < thresholds[x];
      },
    };
  },

  grr(params, dom) {
    const a = integerParam(params, 'truth_numerator', { min: 1n });
    const b = integerParam(params, 'other_numerator', { min: 1n });
    if (!(b < a)) throw new DeniableError('params', `grr needs 0 < other_numerator < truth_numerator; got ${stringify(params)}`);
    const d = a + BigInt(dom.k - 1) * b;
    if (d > TWO64N) throw new DeniableError('params', 'grr denominator exceeds 2^64');
    return {
      epsilon: lnRatio(a, b),
      // one of ell entries sampled then randomized: ln(1 + (a / b - 1) / ell) (docs/math/sets.md)
      sampledEpsilon: (ell) => lnRatio(a + BigInt(ell - 1) * b, BigInt(ell) * b),
      words: 2,
      sample(pool, x) {
        const pos = kRR(pool, BigInt(x), a, b, d);
        return dom.values === null ? Number(pos) : dom.values[Number(pos)];
      },
    };
  },

  sue: unary,
  oue: unary,
  blh: localHashing,
  olh: localHashing,

  hadamard(params, dom) {
    const kk = integerParam(params, 'K', { min: 2n });
    const expected = 1n << BigInt(bitLength(BigInt(dom.k)));
    if (kk !== expected) throw new DeniableError('params.K', `must be ${expected} for k=${dom.k}; got ${kk}`);
    const a = integerParam(params, 'inside_numerator', { min: 1n });
    const b = integerParam(params, 'outside_numerator', { min: 1n });
    if (!(b < a)) throw new DeniableError('params', `hadamard needs 0 < outside_numerator < inside_numerator; got ${stringify(params)}`);
    const d = a + b;
    if (d > TWO64N) throw new DeniableError('params', 'hadamard inside + outside numerators exceed 2^64');
    const width = BigInt(bitLength(kk) - 1);
    return {
      epsilon: lnRatio(a, b),
      words: 4,
      sample(pool, x) {
        const row = BigInt(x) + 1n;
        const inside = uniformBelow(pool, d) < a ? 1n : 0n;
        let y = uniformBelow(pool, kk);
        // y must have even parity with row when inside, odd otherwise; a wrong y is moved
        // into the right half by flipping the lowest set bit of row (2-to-1 onto the half)
        const wrong = parity(row & y, width) === inside ? 1n : 0n;
        const lowest = row & -row;
        y ^= lowest * wrong;
        return Number(y);
      },
    };
  },

  subset(params, dom) {
    const k = dom.k;
    const omegaBig = integerParam(params, 'omega', { min: 1n, max: BigInt(k - 1) });
    const w = Number(omegaBig);
    const inW = integerParam(params, 'inside_weight', { min: 1n });
    const outW = integerParam(params, 'outside_weight', { min: 1n });
    const total = inW + outW;
    if (total > TWO64N) throw new DeniableError('params', 'subset weights exceed 2^64');
    const population = k - 1;
    return {
      epsilon: lnRatio(inW * BigInt(k - w), outW * BigInt(w)),
      words: 2 * w + 4,
      sample(pool, x) {
        const include = uniformBelow(pool, total) < inW;
        // a uniform w-subset of the k - 1 other positions (Floyd's algorithm)
        const picks = new Array(w);
        for (let col = 0; col < w; col++) {
          const j = population - w + col;
          const t = uniformBelowSmall(pool, j + 1);
          let seen = false;
          for (let c = 0; c < col; c++) seen = seen || picks[c] === t;
          picks[col] = seen ? j : t;
        }
        // map positions of the others onto [k] \ {x}; then, w.p. p, put x in a uniform slot
        const slot = uniformBelowSmall(pool, w);
        for (let c = 0; c < w; c++) {
          const other = picks[c] + (picks[c] >= x ? 1 : 0);
          picks[c] = include && c === slot ? x : other;
        }
        return picks.sort((u, v) => u - v);
      },
    };
  },

  rappor,
  'l-grr': longitudinalGRR,
  'l-osue': longitudinalOSUE,
  'one-bit-mean': oneBitMean,
  dbitflip,
  'rr-design': rrDesign,
  'haar-hrr': haarHRR,
  'hierarchical-histogram': (params, dom) => hierarchicalHistogram(params, dom, nested),
  'set-valued': (params, dom) => setValued(params, dom, nested),
  pckv,
};

/** A level oracle from its own configuration (inside a hierarchical histogram or a set-valued question). */
function nested(cfg) {
  if (cfg === null || typeof cfg !== 'object' || !Object.prototype.hasOwnProperty.call(BUILDERS, cfg.mechanism)) {
    throw new DeniableError('params', `a nested oracle configuration is not one this client implements; got ${stringify(cfg)}`);
  }
  const dom = parseDomain(cfg.domain);
  return { impl: BUILDERS[cfg.mechanism](paramsFromWire(cfg.params, cfg.version), dom, cfg.mechanism), k: dom.k };
}

/** Mechanisms whose domain is a real interval [low, high] (the value is a number, not a category). */
const NUMERIC = new Set(['one-bit-mean', 'haar-hrr', 'hierarchical-histogram']);
/** The kind of value where it is neither a category nor a number for a mean: a number in bins, a set (an array). */
const KINDS = { 'haar-hrr': 'range', 'hierarchical-histogram': 'range', 'set-valued': 'set', pckv: 'keyvalue' };

/** Wire ids of the mechanisms this client implements (the Python registry's browser=True list). */
export const MECHANISMS = Object.freeze(Object.keys(BUILDERS));


function unary(params, dom, name) {
  const bits = params.bits === undefined ? 32 : params.bits;
  if (bits !== 32) throw new DeniableError('params.bits', `must be 32; got ${stringify(bits)}`);
  const p = Number(integerParam(params, 'p_numerator', { min: 1n, max: TWO32N - 1n }));
  const q = Number(integerParam(params, 'q_numerator', { min: 1n, max: TWO32N - 1n }));
  if (!(q < p)) throw new DeniableError('params', `${name} needs 0 < q_numerator < p_numerator < 2^32; got ${stringify(params)}`);
  const k = dom.k;
  const nbytes = (k + 7) >> 3;
  const P = BigInt(p);
  const Q = BigInt(q);
  const epsilon = lnRatio(P * (TWO32N - Q), (TWO32N - P) * Q);
  return {
    epsilon,
    sampledEpsilon: () => epsilon, // no amplification: the bits tell two disjoint padded sets apart
    words: k,
    sample(pool, x) {
      const bytes = new Uint8Array(nbytes);
      for (let i = 0; i < k; i++) {
        const truth = +(i === x);
        const threshold = q + truth * (p - q);
        const bit = +(pool.u32() < threshold);
        bytes[i >> 3] |= bit << (7 - (i & 7));
      }
      let hex = '';
      for (let i = 0; i < nbytes; i++) hex += bytes[i].toString(16).padStart(2, '0');
      return hex;
    },
  };
}

function localHashing(params, dom, name) {
  const g = integerParam(params, 'g', { min: 2n });
  if (g & (g - 1n)) throw new DeniableError('params.g', `must be a power of two >= 2; got ${g}`);
  if (name === 'blh' && g !== 2n) throw new DeniableError('params.g', `must be 2 for blh; got ${g}`);
  if (params.hash !== undefined && params.hash !== 'toeplitz-gf2') {
    throw new DeniableError('params.hash', `must be "toeplitz-gf2"; got ${stringify(params.hash)}`);
  }
  const a = integerParam(params, 'truth_numerator', { min: 1n });
  const b = integerParam(params, 'other_numerator', { min: 1n });
  if (!(b < a)) throw new DeniableError('params', `${name} needs 0 < other_numerator < truth_numerator; got ${stringify(params)}`);
  const m = bitLength(g) - 1;
  const hashBits = Math.max(1, bitLength(BigInt(dom.k - 1)));
  const seedBits = hashBits + 2 * m - 1;
  if (seedBits > 64) throw new DeniableError('params.g', `k=${dom.k} with g=${g} needs a ${seedBits}-bit seed (at most 64)`);
  const d = a + (g - 1n) * b;
  if (d > TWO64N) throw new DeniableError('params', `${name} denominator exceeds 2^64`);
  const seedBound = 1n << BigInt(seedBits);
  const rowMask = (1n << BigInt(hashBits)) - 1n;
  const offsetShift = BigInt(hashBits + m - 1);
  const width = BigInt(hashBits);
  return {
    epsilon: lnRatio(a, b),
    words: 6,
    sample(pool, x) {
      const seed = uniformBelow(pool, seedBound);
      const xb = BigInt(x);
      // H(x) = T x XOR offset over GF(2); row j of the Toeplitz matrix is seed bits j..j+L-1
      let h = (seed >> offsetShift) & (g - 1n);
      for (let j = 0; j < m; j++) {
        const row = (seed >> BigInt(j)) & rowMask;
        h ^= parity(row & xb, width) << BigInt(j);
      }
      const value = kRR(pool, h, a, b, d);
      return { seed: seedBits <= 53 ? Number(seed) : seed, value: Number(value) };
    },
  };
}

// ------------------------------------------------------------------ public API

/**
 * A mechanism from its configuration (an object, or JSON text parsed with parseJSON).
 *
 * options.randomBytes: (n) => Uint8Array of n uniform bytes (default: crypto.getRandomValues).
 * Returns {mechanism, domain, k, epsilon, config, privatize(value), privatizeMany(values)}.
 */
export function fromConfig(cfg, { randomBytes = secureRandomBytes } = {}) {
  const config = typeof cfg === 'string' ? parseJSON(cfg) : cfg;
  if (config === null || typeof config !== 'object' || Array.isArray(config)) {
    throw new DeniableError('config', 'must be a JSON object');
  }
  if (config.format !== CONFIG_FORMAT) {
    throw new DeniableError('format', `must be ${JSON.stringify(CONFIG_FORMAT)}; got ${stringify(config.format)}`);
  }
  if (!WIRE_VERSIONS.includes(config.version)) {
    throw new DeniableError('version', `must be one of ${WIRE_VERSIONS.join(', ')} (this reader's versions); got ${stringify(config.version)}`);
  }
  const name = config.mechanism;
  if (!Object.prototype.hasOwnProperty.call(BUILDERS, name)) {
    throw new DeniableError('mechanism', `must be one of ${MECHANISMS.join(', ')}; got ${stringify(name)}`);
  }
  if (config.params === null || typeof config.params !== 'object' || Array.isArray(config.params)) {
    throw new DeniableError('params', 'must be an object');
  }
  const params = paramsFromWire(config.params, config.version);
  const numeric = NUMERIC.has(name);
  const dom = numeric ? parseRange(config.domain) : parseDomain(config.domain);
  if (name === 'binary-rr' && (dom.values === null || dom.values[0] !== false || dom.values[1] !== true)) {
    throw new DeniableError('domain', `binary-rr needs the domain [false, true]; got ${stringify(config.domain)}`);
  }
  const impl = BUILDERS[name](params, dom, name);
  const claimed = config.epsilon;
  if (claimed !== undefined && claimed !== null) {
    // an infinite epsilon (an answer reveals the truth) is written null: no number matches it;
    // impl.accepts: a mechanism that takes other claims (set-valued: earlier configurations, a bound)
    const near = (e) => Math.abs(claimed - e) <= 1e-9 * Math.max(1, e);
    const close = impl.accepts ? impl.accepts(claimed, near) : near(impl.epsilon);
    if (typeof claimed !== 'number' || !close || !Number.isFinite(impl.epsilon)) {
      throw new DeniableError('epsilon', `says ${stringify(claimed)} but the parameters give ${impl.epsilon}`);
    }
  }
  // the configuration's epsilon is the server's exact ln rounded up to a float; report that
  const epsilon = typeof claimed === 'number' ? claimed : impl.epsilon;
  const domain = numeric ? dom.range : dom.values === null ? Array.from({ length: dom.k }, (_, i) => i) : dom.values;
  // the sampler's input: a category's position, a numeric mechanism's value itself, or what the
  // mechanism reads itself (a survey design's truth)
  const position = impl.position ?? (numeric ? finiteValue : (value) => {
    // a full pass over the domain whatever the value (no early exit)
    let i = -1;
    for (let j = 0; j < domain.length; j++) i = i < 0 && domain[j] === value ? j : i;
    if (i < 0) {
      throw new DeniableError('value', `${stringify(value)} is not in the domain ${stringify(domain.length > 12 ? [...domain.slice(0, 12), '...'] : domain)}`);
    }
    return i;
  });
  const chunkFor = (count) => Math.min(MAX_GETRANDOM, 4 * (impl.words + 2) * count + 64);
  const mechanism = Object.freeze({
    mechanism: name,
    kind: KINDS[name] ?? (numeric ? 'numeric' : 'frequency'),
    domain: Object.freeze(domain.slice()),
    k: dom.k,
    epsilon,
    config,
    /** One report for `value` (a category of the domain; a number for a numeric mechanism), as JSON-ready data. */
    privatize(value) {
      const x = position(value);
      return impl.sample(new WordPool(randomBytes, chunkFor(1)), x);
    },
    /** Reports for many values (one random pool for the batch: faster, same distribution). */
    privatizeMany(values) {
      const xs = Array.from(values, position);
      const pool = new WordPool(randomBytes, chunkFor(xs.length));
      return xs.map((x) => impl.sample(pool, x));
    },
  });
  INTERNALS.set(mechanism, { impl, position });
  return mechanism;
}

// ------------------------------------------------------------------ device helpers

const INTERNALS = new WeakMap(); // fromConfig's object -> {impl, position}

/** What a kept client (client_state.js) needs of fromConfig's object: its sampler and value check. */
export function internals(mechanism) {
  return INTERNALS.get(mechanism);
}

/**
 * An integer uniform in 1..k (k a Number in 2..2^32) with the exact sampler: how a device of a
 * two-group survey design draws its group (k = 2).
 */
export function uniformGroup(k = 2, { randomBytes = secureRandomBytes } = {}) {
  if (!Number.isInteger(k) || k < 2 || k > TWO32) throw new DeniableError('k', `must be an integer in 2..2^32; got ${stringify(k)}`);
  return 1 + uniformBelowSmall(new WordPool(randomBytes, 64), k);
}

/**
 * The question a device of a survey with `allocation: sample` answers: an integer uniform in
 * 0..d-1 (d a Number in 1..2^32) from the exact sampler on the platform CSPRNG, as
 * deniable._allocation.assign_questions draws it in Python.
 */
export function assignQuestion(d, { randomBytes = secureRandomBytes } = {}) {
  if (!Number.isInteger(d) || d < 1 || d > TWO32) throw new DeniableError('d', `must be an integer in 1..2^32; got ${stringify(d)}`);
  return d === 1 ? 0 : uniformBelowSmall(new WordPool(randomBytes, 64), d);
}

/** A random idempotency key (UUID v4 text) from crypto.randomUUID or, failing that, getRandomValues. */
export function idempotencyKey(randomBytes = secureRandomBytes) {
  const c = globalThis.crypto;
  if (randomBytes === secureRandomBytes && c && typeof c.randomUUID === 'function') return c.randomUUID();
  const b = randomBytes(16);
  b[6] = (b[6] & 0x0f) | 0x40;
  b[8] = (b[8] & 0x3f) | 0x80;
  const h = Array.from(b, (v) => v.toString(16).padStart(2, '0')).join('');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

// the exact samplers and logarithms, for the other device modules (discovery.js, designs.js), and
// the names that moved to sampling.js, re-exported where they have always been
export {
  DeniableError, MAX_GETRANDOM, WordPool, absLnRatio, lnRatio, secureRandomBytes, uniformBelow,
  uniformBelowSmall, utf8,
};
