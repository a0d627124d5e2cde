// deniable.js -- randomize answers on the respondent's device (local differential privacy).
//
// An ES module without a build step; its hashes (SHA-256 and MD5 for RAPPOR's Bloom filters)
// come from @noble/hashes, vendored unchanged in vendor/ (npm run vendor). Given a mechanism
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
//
// Repeated collection. `fromConfig(cfg).privatize` makes one-time reports (RAPPOR: a fresh
// cohort and permanent response each time; the longitudinal mechanisms: both rounds fresh).
// A device that reports again and again must keep its permanent responses, or averaging its
// reports reveals the value: client_state.js keeps a secret per survey (surveyState) or per
// configuration (persistentClient) in IndexedDB, in the state format of Python's
// deniable.client_state, and derives every memoized draw from it exactly as Python does.
//
// Exactness. Every probability is a ratio of the integers in cfg.params and is
// realised by drawing an integer uniformly below the denominator D by
// rejection sampling (32-bit words when D <= 2^32, 64-bit BigInt words
// otherwise; a word at or above the largest multiple of D is redrawn) and
// comparing it with the numerator. Dyadic probabilities c / 2^32 are
// `u32 < c`. No floating-point number is ever compared with randomness, and
// Math.random is never used: random bytes come from crypto.getRandomValues
// (or from an injected function, for tests).
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

import { md5 } from './vendor/noble-hashes/legacy.js';
import { sha256 } from './vendor/noble-hashes/sha2.js';
import { rrDesign } from './designs.js';
import { paramsFromWire, parseJSON, stringify } from './json.js';

export { configFromWire, parseJSON, reportFromWire, reportToWire, stringify, surveyFromWire } from './json.js';

export const CONFIG_FORMAT = 'deniable.mechanism';
export const CONFIG_VERSION = 1;
/** The wire versions fromConfig reads (version 2: wide integers as decimal strings, read with JSON.parse). */
export const WIRE_VERSIONS = Object.freeze([1, 2]);

const TWO32 = 2 ** 32;
const TWO32N = 1n << 32n;
const TWO64N = 1n << 64n;
const MAX_GETRANDOM = 65536; // crypto.getRandomValues limit per call, in bytes

/** The UTF-8 bytes of a string. */
export const utf8 = (text) => new TextEncoder().encode(text);

/** Error for a malformed configuration or value; `.field` names the offending field. */
export class DeniableError extends Error {
  constructor(field, message) {
    super(`${field}: ${message}`);
    this.name = 'DeniableError';
    this.field = field;
  }
}

// ------------------------------------------------------------------ randomness

/** `n` bytes from the platform CSPRNG (crypto.getRandomValues, in 64 KiB calls). */
export function secureRandomBytes(n) {
  const c = globalThis.crypto;
  if (!c || typeof c.getRandomValues !== 'function') {
    throw new Error('crypto.getRandomValues is not available; refusing to randomize without a CSPRNG');
  }
  const out = new Uint8Array(n);
  for (let off = 0; off < n; off += MAX_GETRANDOM) {
    c.getRandomValues(out.subarray(off, Math.min(n, off + MAX_GETRANDOM)));
  }
  return out;
}

/**
 * A short-lived supply of random words for one call of privatize / privatizeMany.
 * Bytes are fetched in chunks and whatever is left is dropped with the pool, so
 * no random state outlives the call.
 */
class WordPool {
  constructor(randomBytes, chunkBytes) {
    this.randomBytes = randomBytes;
    this.chunk = Math.max(64, chunkBytes - (chunkBytes % 4));
    this.buf = new Uint8Array(0);
    this.pos = 0;
  }

  /** One uniform 32-bit word as a Number in [0, 2^32). */
  u32() {
    if (this.pos + 4 > this.buf.length) {
      const bytes = this.randomBytes(this.chunk);
      if (!(bytes instanceof Uint8Array) || bytes.length !== this.chunk) {
        throw new Error(`randomBytes(${this.chunk}) must return a Uint8Array of that length`);
      }
      this.buf = bytes;
      this.pos = 0;
    }
    const b = this.buf;
    const i = this.pos;
    this.pos += 4;
    return (b[i] | (b[i + 1] << 8) | (b[i + 2] << 16) | (b[i + 3] << 24)) >>> 0;
  }

  /** One uniform 64-bit word as a BigInt in [0, 2^64). */
  u64() {
    const lo = this.u32();
    const hi = this.u32();
    return (BigInt(hi) << 32n) | BigInt(lo);
  }
}

/**
 * An integer uniform in [0, bound) (bound a BigInt, 1 <= bound <= 2^64), as a BigInt.
 * Rejection sampling exactly as deniable.randomness.uniform_below does.
 */
function uniformBelow(pool, bound) {
  if (bound === 1n) return 0n;
  if (bound <= TWO32N) {
    const d = Number(bound);
    const limit = Math.floor(TWO32 / d) * d;
    let u = pool.u32();
    while (u >= limit) u = pool.u32();
    return BigInt(u % d);
  }
  const limit = (TWO64N / bound) * bound;
  let u = pool.u64();
  while (u >= limit) u = pool.u64();
  return u % bound;
}

/** Like uniformBelow for a Number bound <= 2^32, returning a Number. */
function uniformBelowSmall(pool, bound) {
  const limit = Math.floor(TWO32 / bound) * bound;
  let u = pool.u32();
  while (u >= limit) u = pool.u32();
  return u % bound;
}

/**
 * `count` integers uniform below `bound` (a BigInt, 1..2^64) drawn as deniable.randomness.uniform_below
 * draws a batch: `count` words first, then the rejected ones again, in rounds, in their order. From a
 * kept secret's stream this gives Python's memoized draws exactly (a lone draw is uniformBelow's).
 */
function uniformBelowMany(pool, bound, count) {
  if (bound === 1n) return new Array(count).fill(0n);
  const wide = bound > TWO32N;
  const word = wide ? () => pool.u64() : () => BigInt(pool.u32());
  const limit = ((wide ? TWO64N : TWO32N) / bound) * bound;
  const out = Array.from({ length: count }, word);
  let bad = out.flatMap((u, i) => (u >= limit ? [i] : []));
  while (bad.length) {
    const fresh = bad.map(word);
    bad.forEach((i, j) => { out[i] = fresh[j]; });
    bad = bad.filter((i, j) => fresh[j] >= limit);
  }
  return out.map((u) => u % bound);
}

/**
 * `count` Bernoulli bits with P(1) = numerator / 2^32, decided lazily as
 * deniable.randomness.dyadic_packed decides them, so a kept secret's stream gives Python's memoized
 * bits exactly: the bits of a stream of fair bits (bytes in order, each most significant bit first)
 * form runs, each ended by a 1; lane i's run has G zeros and its bit is bit G of the numerator (most
 * significant first; 0 once G >= 32). Bytes come `(lanes left) // 4 + 64` at a time and what is
 * left of the draw that decides the last lane is dropped. `numerators(i)` is lane i's numerator
 * (a Number in 1..2^32 - 1). `pool.bytes(n)` supplies the bytes; count < 2^16 (one block).
 */
function lazyBits(pool, count, numerators) {
  const out = new Uint8Array(count);
  let lane = 0;
  let run = 0;
  while (lane < count) {
    const draw = pool.bytes(((count - lane) >> 2) + 64);
    for (let i = 0; i < draw.length && lane < count; i++) {
      for (let shift = 7; shift >= 0 && lane < count; shift--) {
        if ((draw[i] >> shift) & 1) {
          out[lane] = run < 32 ? (numerators(lane) >>> (31 - run)) & 1 : 0;
          lane += 1;
          run = 0;
        } else run += 1;
      }
    }
  }
  return out;
}

/** popcount(x) mod 2 of a BigInt below 2^width; loops `width` times whatever x is. */
function parity(x, width) {
  let p = 0n;
  for (let j = 0n; j < width; j++) p ^= (x >> j) & 1n;
  return p;
}

function bitLength(n) {
  // bit length of a non-negative BigInt
  return n === 0n ? 0 : n.toString(2).length;
}

// ------------------------------------------------------------------ config checks

function integerParam(params, name, limits = {}) {
  if (!(name in params)) throw new DeniableError(`params.${name}`, 'is missing');
  return exactInteger(params[name], `params.${name}`, limits);
}

function exactInteger(raw, field, { min = 0n, max = null } = {}) {
  let v;
  if (typeof raw === 'bigint') v = raw;
  else if (typeof raw === 'number' && Number.isSafeInteger(raw)) v = BigInt(raw);
  else if (typeof raw === 'number' && Number.isInteger(raw)) {
    throw new DeniableError(field, `${raw} is above 2^53 and lost precision; parse the config with parseJSON`);
  } else throw new DeniableError(field, `must be an integer; got ${JSON.stringify(raw)}`);
  if (v < min || (max !== null && v > max)) {
    throw new DeniableError(field, `must be in ${min}..${max === null ? 'inf' : max}; got ${v}`);
  }
  return v;
}

function parseDomain(domain) {
  if (typeof domain === 'number' || typeof domain === 'bigint') {
    const k = Number(domain);
    if (!Number.isSafeInteger(k) || k < 2) throw new DeniableError('domain', `must be an int k >= 2 or a list; got ${domain}`);
    return { k, values: null };
  }
  if (!Array.isArray(domain) || domain.length < 2) {
    throw new DeniableError('domain', `must be an int k >= 2 or a list of at least 2 categories; got ${JSON.stringify(domain)}`);
  }
  domain.forEach((v, i) => {
    if (!['string', 'number', 'boolean'].includes(typeof v)) {
      throw new DeniableError(`domain[${i}]`, `must be a string, number or boolean; got ${JSON.stringify(v)}`);
    }
  });
  return { k: domain.length, values: domain.slice() };
}

/** A numeric mechanism's domain [low, high]: finite numbers, low < high. */
function parseRange(domain) {
  if (!Array.isArray(domain) || domain.length !== 2 || !domain.every((v) => typeof v === 'number' && Number.isFinite(v)) || !(domain[0] < domain[1])) {
    throw new DeniableError('domain', `must be [low, high] with finite numbers low < high; got ${stringify(domain)}`);
  }
  return { k: 2, values: null, range: domain.slice() };
}

/** A numeric mechanism's input: a finite number (clipped to the range by the sampler). */
function finiteValue(value) {
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    throw new DeniableError('value', `must be a finite number; got ${stringify(value)}`);
  }
  return value;
}

/**
 * ln(num / den) of positive BigInts as a float, rounded up (never below the exact value), for
 * display and the epsilon consistency check only (never for sampling). Number() rounds each to
 * 2^-53 relative and so does the division, so the ratio r is within 3 * 2^-53 relative of the
 * exact one, and Math.log is within an ulp or two: the float is within
 * 4 * 2^-52 * (|ln r| + 1) of the exact value; that margin is added. (Taking the logarithms of
 * num and den apart would make the margin grow with their size, not with the ratio's.)
 */
function lnRatio(num, den) {
  const top = Number(num);
  const bottom = Number(den);
  if (top === 0 || bottom === 0) return Math.log(top) - Math.log(bottom); // exactly +-infinity
  const log = Math.log(top / bottom);
  return log + 4 * Number.EPSILON * (Math.abs(log) + 1);
}

/** |ln(a / b)| of non-negative BigInts, not both 0: Infinity when exactly one is 0. */
function absLnRatio(a, b) {
  if (a === b) return 0;
  if (a === 0n || b === 0n) return Infinity;
  return Math.abs(lnRatio(a, b));
}

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
};

/** Mechanisms whose domain is a real interval [low, high] (the value is a number, not a category). */
const NUMERIC = new Set(['one-bit-mean']);

/** Wire ids of the mechanisms this client implements (the Python registry's browser=True list). */
export const MECHANISMS = Object.freeze(Object.keys(BUILDERS));

/** k-ary randomized response on positions: x w.p. a/d, else other position (r - a) // b. */
function kRR(pool, x, a, b, d) {
  const r = uniformBelow(pool, d);
  const keep = r < a;
  const o = (keep ? 0n : r - a) / b;
  const other = o + (o >= x ? 1n : 0n);
  return keep ? x : other;
}

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
  return {
    epsilon: lnRatio(P * (TWO32N - Q), (TWO32N - P) * Q),
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

// ------------------------------------------------------------------ RAPPOR

const RAPPOR_HASHES = Object.freeze({
  'sha256(cohort NUL type NUL value)': 'sha256',
  'md5(cohort u32be, utf8 value) byte i mod num_bits (google/rappor)': 'google',
});

/** Python's str() and type name of a category, as deniable.mechanisms.rappor hashes it. */
function pythonText(value) {
  if (typeof value === 'string') return ['str', value];
  if (typeof value === 'boolean') return ['bool', value ? 'True' : 'False'];
  if (Number.isSafeInteger(value)) return ['int', String(value)];
  throw new DeniableError('domain', `rappor in the browser hashes string, integer and boolean categories; got ${stringify(value)}`);
}

/** The Bloom bit positions of a category in a cohort (deniable's SHA-256 scheme or Google's MD5 one). */
function bloomPositions(hashing, value, cohort, hashes, bits) {
  if (hashing === 'google') {
    const word = utf8(value);
    const input = new Uint8Array(4 + word.length);
    input.set([cohort >>> 24, (cohort >>> 16) & 0xff, (cohort >>> 8) & 0xff, cohort & 0xff]);
    input.set(word, 4);
    const digest = md5(input);
    return Array.from({ length: hashes }, (_, i) => digest[i] % bits);
  }
  const [type, text] = pythonText(value);
  const digest = sha256(utf8(`${cohort}\u0000${type}\u0000${text}`));
  return Array.from({ length: hashes }, (_, j) => {
    const word = ((digest[4 * j] << 24) | (digest[4 * j + 1] << 16) | (digest[4 * j + 2] << 8) | digest[4 * j + 3]) >>> 0;
    return word % bits;
  });
}

function rappor(params, dom) {
  const bits32 = params.bits === undefined ? 32 : params.bits;
  if (bits32 !== 32) throw new DeniableError('params.bits', `must be 32; got ${stringify(bits32)}`);
  // a config without params.hash (written before Google's hashing existed) means deniable's own
  const hashing = params.hash === undefined ? 'sha256' : RAPPOR_HASHES[params.hash];
  if (hashing === undefined) {
    throw new DeniableError('params.hash', `must be one of ${Object.keys(RAPPOR_HASHES).map((h) => JSON.stringify(h)).join(', ')}; got ${stringify(params.hash)}`);
  }
  const width = Number(integerParam(params, 'num_bits', { min: 1n, max: 256n }));
  const hashes = Number(integerParam(params, 'num_hashes', { min: 1n, max: hashing === 'google' ? 16n : 8n }));
  const cohorts = Number(integerParam(params, 'num_cohorts', { min: 1n, max: 1n << 16n }));
  if (hashes > width) throw new DeniableError('params.num_hashes', `cannot exceed num_bits (${width}); got ${hashes}`);
  if (hashing === 'google' && !(dom.values || []).every((v) => typeof v === 'string') ) {
    throw new DeniableError('domain', "rappor with Google's hashing needs string categories");
  }
  const halfF = integerParam(params, 'half_f_numerator', { min: 0n, max: TWO32N / 2n });
  const p = integerParam(params, 'p_numerator', { min: 0n, max: TWO32N });
  const q = integerParam(params, 'q_numerator', { min: 0n, max: TWO32N });
  // P(report bit 1 | Bloom bit 1) and (| 0), in units of 2^-64
  const qStar = halfF * (p + q) + (TWO32N - 2n * halfF) * q;
  const pStar = halfF * (p + q) + (TWO32N - 2n * halfF) * p;
  if (!(0n < pStar && pStar < qStar && qStar < TWO64N)) {
    throw new DeniableError('params', `rappor parameters give no signal (need 0 < p* < q* < 1); got ${stringify(params)}`);
  }
  const epsilon = hashes * lnRatio(qStar * (TWO64N - pStar), pStar * (TWO64N - qStar));
  const values = dom.values === null ? Array.from({ length: dom.k }, (_, i) => i) : dom.values;
  const bloom = Array.from({ length: cohorts }, (_, c) => values.map((v) => {
    let filter = 0n;
    for (const b of bloomPositions(hashing, v, c, hashes, width)) filter |= 1n << BigInt(b);
    return filter;
  }));
  const noise = Number(2n * halfF); // P(a PRR bit is a coin) = 2 half_f / 2^32, compared with a u32
  const [pn, qn] = [Number(p), Number(q)];
  // the permanent response of a Bloom filter: each bit a fair coin w.p. f, else the Bloom bit
  const permanent = (pool, filter) => {
    let prr = 0n;
    for (let i = 0; i < width; i++) {
      const coin = pool.u32() < noise;
      const fair = pool.u32() >>> 31;
      const bit = coin ? fair : Number((filter >> BigInt(i)) & 1n);
      prr |= BigInt(bit) << BigInt(i);
    }
    return prr;
  };
  // the instantaneous response: bit 1 w.p. q where the PRR has a 1, w.p. p where it has a 0
  const report = (pool, cohort, prr) => {
    let irr = 0n;
    for (let i = 0; i < width; i++) {
      const threshold = (prr >> BigInt(i)) & 1n ? qn : pn;
      irr |= BigInt(+(pool.u32() < threshold)) << BigInt(i);
    }
    return { cohort, bits: width <= 53 ? Number(irr) : irr };
  };
  return {
    epsilon,
    words: 3 * width + 2,
    sample(pool, x) {
      const cohort = uniformBelowSmall(pool, cohorts);
      return report(pool, cohort, permanent(pool, bloom[cohort][x]));
    },
    memo: {
      cohorts,
      draws: dom.k,
      // epsilon_infinity = 2 h ln((1 - f/2) / (f/2)): what a value's permanent response reveals
      epsilonPermanent: hashes * lnRatio((TWO32N - halfF) ** 2n, halfF ** 2n),
      label: (x) => pythonText(values[x]),
      legacyLabel: (x) => stringify(values[x]),
      permanent: (pool, cohort, x) => permanent(pool, bloom[cohort][x]),
      // RAPPOR._prr: the noise bits of the 64-bit words lazily (bit i is lane 8 (i // 8) + 7 - i % 8,
      // numpy's packbits order read as little-endian words), then one word of fair coins per word
      derived(pool, cohort, x) {
        const lanes = 64 * Math.ceil(width / 64);
        const noisy = noise === 0 || noise === TWO32 ? new Uint8Array(lanes).fill(noise && 1) : lazyBits(pool, lanes, () => noise);
        const coins = pool.bytes(lanes / 8);
        const filter = bloom[cohort][x];
        let prr = 0n;
        for (let i = 0; i < width; i++) {
          const bit = noisy[8 * (i >> 3) + 7 - (i & 7)] ? (coins[i >> 3] >> (i & 7)) & 1 : Number((filter >> BigInt(i)) & 1n);
          prr |= BigInt(bit) << BigInt(i);
        }
        return prr;
      },
      report,
    },
  };
}

// ------------------------------------------------------------------ longitudinal mechanisms
//
// Each memoizing mechanism (these and RAPPOR) has `memo`, what a kept client (client_state.js)
// keeps for repeated collection: `setup(stream)` draws the device's once-for-life quantities from
// keyed streams (`stream(...label)`, the secret's stream of that label), `label(x, device)` names
// the memoized draw a value uses (its parts, as Python's ClientState.source takes them),
// `derived(pool, cohort, x, device)` draws it from that label's stream exactly as the Python
// kept client does (the same bits for the same secret; `permanent` when absent), and
// `report(pool, cohort, prr, device)` makes one report from it with fresh randomness. States
// written before the shared derivation keep theirs: `permanent` on their stream, labelled by
// `legacyLabel` (default: the label's one part). `draws` is how many memoized draws a device can
// ever use (one per category, slot or rounding point) and `epsilonPermanent` what all reports
// from one of them reveal (the mechanism's epsilon if absent).

/** Packed bits (category i is bit 7 - i % 8 of byte i // 8) as lowercase hex. */
function packedHex(bytes) {
  let hex = '';
  for (let i = 0; i < bytes.length; i++) hex += bytes[i].toString(16).padStart(2, '0');
  return hex;
}

/**
 * Output perturbation (dbitflip, one-bit-mean): `params.flip_numerator` g (0 if absent) flips every
 * reported bit w.p. g / 2^32, fresh. A bit that is 1 w.p. a / (a + b) is then 1 w.p. a' / (a' + b')
 * with a' = a 2^32 - g (a - b), b' = b 2^32 + g (a - b): the report's channel.
 */
function flipParam(params, a, b) {
  const g = params.flip_numerator === undefined ? 0n : integerParam(params, 'flip_numerator', { max: TWO32N / 2n - 1n });
  return {
    g: Number(g),
    perturbed: [a * TWO32N - g * (a - b), b * TWO32N + g * (a - b)],
    flip: (pool, bit) => bit ^ +(pool.u32() < Number(g)),
  };
}

function checkRound(params, truth, other, k, name) {
  const a = integerParam(params, truth, { min: 1n });
  const b = integerParam(params, other, { min: 1n });
  if (!(b < a)) throw new DeniableError('params', `${name} needs 0 < ${other} < ${truth}; got ${stringify(params)}`);
  const d = a + BigInt(k - 1) * b;
  if (d > TWO64N) throw new DeniableError('params', `${name} round denominator exceeds 2^64`);
  return [a, b, d];
}

/**
 * L-GRR (Arcolezi et al.): GRR with (a1, b1) memoized per value, then GRR with (a2, b2) fresh.
 * One report keeps the value w.p. A / (d1 d2), A = a1 a2 + (d1 - a1) b2, and shows each other
 * category w.p. B / (d1 d2), B = b1 a2 + (d1 - b1) b2: epsilon = ln(A / B).
 */
function longitudinalGRR(params, dom) {
  const [a1, b1, d1] = checkRound(params, 'perm_truth_numerator', 'perm_other_numerator', dom.k, 'l-grr');
  const [a2, b2, d2] = checkRound(params, 'irr_truth_numerator', 'irr_other_numerator', dom.k, 'l-grr');
  const name = (pos) => (dom.values === null ? Number(pos) : dom.values[Number(pos)]);
  const permanent = (pool, cohort, x) => kRR(pool, BigInt(x), a1, b1, d1);
  const report = (pool, cohort, prr) => name(kRR(pool, prr, a2, b2, d2));
  return {
    epsilon: lnRatio(a1 * a2 + (d1 - a1) * b2, b1 * a2 + (d1 - b1) * b2),
    words: 4,
    sample: (pool, x) => report(pool, 0, permanent(pool, 0, x)),
    memo: {
      permanent, report, show: name, epsilonPermanent: lnRatio(a1, b1), draws: dom.k,
      label: (x) => [`value ${x}`], legacyLabel: (x) => stringify(name(x)),
    },
  };
}

/**
 * L-OSUE: OUE bits (1 w.p. p1 / 2^32 for the value's category, q1 / 2^32 for the others)
 * memoized per value, then each bit kept w.p. p2 / 2^32 (else flipped), fresh. Per bit of a
 * report p* = (p1 p2 + (2^32 - p1)(2^32 - p2)) / 2^64 and likewise q* from q1; epsilon =
 * ln(p*(1 - q*) / ((1 - p*) q*)).
 */
function longitudinalOSUE(params, dom) {
  const bits = params.bits === undefined ? 32 : params.bits;
  if (bits !== 32) throw new DeniableError('params.bits', `must be 32; got ${stringify(bits)}`);
  const p1 = Number(integerParam(params, 'perm_p_numerator', { min: 1n, max: TWO32N - 1n }));
  const q1 = Number(integerParam(params, 'perm_q_numerator', { min: 1n, max: TWO32N - 1n }));
  const p2 = Number(integerParam(params, 'irr_p_numerator', { min: TWO32N / 2n + 1n, max: TWO32N - 1n }));
  if (!(q1 < p1)) throw new DeniableError('params', `l-osue needs 0 < perm_q_numerator < perm_p_numerator; got ${stringify(params)}`);
  const k = dom.k;
  const nbytes = (k + 7) >> 3;
  const flip = TWO32 - p2;
  const chained = (r1) => BigInt(r1) * BigInt(p2) + (TWO32N - BigInt(r1)) * BigInt(flip);
  const [P, Q] = [chained(p1), chained(q1)];
  const permanent = (pool, cohort, x) => {
    const bytes = new Uint8Array(nbytes);
    for (let i = 0; i < k; i++) {
      const threshold = q1 + +(i === x) * (p1 - q1);
      bytes[i >> 3] |= +(pool.u32() < threshold) << (7 - (i & 7));
    }
    return bytes;
  };
  const report = (pool, cohort, prr) => {
    const bytes = prr.slice();
    for (let i = 0; i < k; i++) bytes[i >> 3] ^= +(pool.u32() < flip) << (7 - (i & 7));
    return packedHex(bytes);
  };
  return {
    epsilon: lnRatio(P * (TWO64N - Q), (TWO64N - P) * Q),
    words: 2 * k,
    sample: (pool, x) => report(pool, 0, permanent(pool, 0, x)),
    memo: {
      permanent, report, show: packedHex, draws: k,
      label: (x) => [`value ${x}`],
      legacyLabel: (x) => stringify(dom.values === null ? x : dom.values[x]),
      // UnaryEncoding._sample: every bit at q1 lazily, then the value's bit at p1 in a draw of its own
      derived(pool, cohort, x) {
        const others = lazyBits(pool, 8 * nbytes, () => q1);
        const truth = lazyBits(pool, 1, () => p1)[0];
        const bytes = new Uint8Array(nbytes);
        for (let i = 0; i < k; i++) bytes[i >> 3] |= (i === x ? truth : others[i]) << (7 - (i & 7));
        return bytes;
      },
      epsilonPermanent: lnRatio(BigInt(p1) * (TWO32N - BigInt(q1)), (TWO32N - BigInt(p1)) * BigInt(q1)),
    },
  };
}

/**
 * dBitFlip (Ding, Kulkarni, Yekhanin 2017): d distinct buckets drawn uniformly (Floyd's
 * algorithm, as deniable.mechanisms.telemetry.sample_subsets), each with a bit that is 1 w.p.
 * a / (a + b) if the value is that bucket and b / (a + b) otherwise; epsilon = min(d, 2) ln(a/b).
 * A device keeps its buckets for life and one bit vector per slot (which sampled bucket holds
 * its value, or none). With output perturbation (flipParam) every report flips each bit afresh.
 */
function dbitflip(params, dom) {
  const k = dom.k;
  const d = Number(integerParam(params, 'd', { min: 1n, max: BigInt(k) }));
  const a = integerParam(params, 'truth_numerator', { min: 1n });
  const b = integerParam(params, 'other_numerator', { min: 1n });
  if (!(b < a) || a + b > TWO64N) {
    throw new DeniableError('params', `dbitflip needs 0 < other_numerator < truth_numerator, a sum up to 2^64; got ${stringify(params)}`);
  }
  const m = BigInt(Math.min(d, 2));
  const { perturbed: [ra, rb], flip } = flipParam(params, a, b);
  const buckets = (pool) => {
    const chosen = new Array(d);
    for (let i = 0; i < d; i++) {
      const j = k - d + i;
      const t = uniformBelowSmall(pool, j + 1);
      let taken = false;
      for (let c = 0; c < i; c++) taken = taken || chosen[c] === t;
      chosen[i] = taken ? j : t;
    }
    return chosen.sort((u, v) => u - v);
  };
  // the bits for sampled buckets and the value's position x (-1: a slot holding no value)
  const answers = (pool, sampled, x) => sampled.map((j) => +(uniformBelow(pool, a + b) < (j === x ? a : b)));
  const slot = (x, device) => {
    let s = d;
    for (let p = 0; p < d; p++) s = s === d && device.buckets[p] === x ? p : s;
    return s;
  };
  return {
    epsilon: lnRatio(ra ** m, rb ** m),
    words: 6 * d + 2,
    sample(pool, x) {
      const sampled = buckets(pool);
      return { buckets: sampled, bits: answers(pool, sampled, x).map((bit) => flip(pool, bit)) };
    },
    memo: {
      setup: (stream) => ({ buckets: buckets(stream('buckets')) }),
      label: (x, device) => [`slot ${slot(x, device)}`],
      permanent(pool, cohort, x, device) {
        const s = slot(x, device);
        return answers(pool, device.buckets, s < d ? device.buckets[s] : -1);
      },
      // DBitFlip._answers: the d draws below a + b as one batch
      derived(pool, cohort, x, device) {
        const s = slot(x, device);
        const truth = s < d ? device.buckets[s] : -1;
        const r = uniformBelowMany(pool, a + b, d);
        return device.buckets.map((j, i) => +(r[i] < (j === truth ? a : b)));
      },
      report: (pool, cohort, prr, device) => ({ buckets: device.buckets.slice(), bits: prr.map((bit) => flip(pool, bit)) }),
      show: (prr) => prr.join(''),
      draws: d + 1,
      epsilonPermanent: lnRatio(a ** m, b ** m),
    },
  };
}

/**
 * 1BitMean with alpha-point rounding (Ding, Kulkarni, Yekhanin 2017) for a value in [low, high]:
 * its position u (points - 1) on a grid of `points` points is rounded up w.p. its fraction f
 * (a uniform 64-bit word below floor(f 2^53) 2^11, as deniable.randomness.fixed_point), and the
 * bit of point j is 1 w.p. (b s + j (a - b)) / ((a + b) s), s = points - 1: epsilon = ln(a/b).
 * A device fixes its 64-bit rounding offset alpha for life and keeps one bit per point; with
 * output perturbation (flipParam) every report flips it afresh.
 */
function oneBitMean(params, dom) {
  const a = integerParam(params, 'high_numerator', { min: 1n });
  const b = integerParam(params, 'low_numerator', { min: 1n });
  const points = Number(integerParam(params, 'points', { min: 2n, max: 1n << 16n }));
  const s = BigInt(points - 1);
  const bound = (a + b) * s;
  if (!(b < a) || bound > TWO64N) {
    throw new DeniableError('params', `one-bit-mean needs 0 < low_numerator < high_numerator, (a + b)(points - 1) <= 2^64; got ${stringify(params)}`);
  }
  const { perturbed: [ra, rb], flip } = flipParam(params, a, b);
  const [low, high] = dom.range;
  const mid = (low + high) / 2;
  const half = (high - low) / 2;
  // the value's place on the grid: its lower point and the threshold for rounding up
  const grid = (x) => {
    const t = Math.min(1, Math.max(-1, (x - mid) * (1 / half)));
    const u = Math.min(points - 1, Math.max(0, (t + 1) * (0.5 * (points - 1))));
    const base = Math.floor(u);
    return [base, BigInt(Math.floor(Math.min((u - base) * 2 ** 53, 2 ** 53 - 1))) << 11n];
  };
  const bit = (pool, j) => +(uniformBelow(pool, bound) < b * s + BigInt(j) * (a - b));
  const point = (x, device) => {
    const [base, threshold] = grid(x);
    return base + +(device.alpha < threshold);
  };
  return {
    epsilon: lnRatio(ra, rb),
    words: 7,
    sample(pool, x) {
      const [base, threshold] = grid(x);
      return flip(pool, bit(pool, base + +(pool.u64() < threshold)));
    },
    memo: {
      setup: (stream) => ({ alpha: stream('alpha').u64() }),
      label: (x, device) => [`point ${point(x, device)}`],
      permanent: (pool, cohort, x, device) => bit(pool, point(x, device)),
      report: (pool, cohort, prr) => flip(pool, prr),
      show: String,
      draws: points,
      epsilonPermanent: lnRatio(a, b),
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
    // an infinite epsilon (an answer reveals the truth) is written null: no number matches it
    const close = Math.abs(claimed - impl.epsilon) <= 1e-9 * Math.max(1, impl.epsilon);
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
    kind: numeric ? 'numeric' : 'frequency',
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
 * deniable.allocation.assign_questions draws it in Python.
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

// the exact samplers and logarithms, for the other device modules (discovery.js, designs.js)
export { MAX_GETRANDOM, WordPool, absLnRatio, lnRatio, uniformBelow, uniformBelowSmall };
