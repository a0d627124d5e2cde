// sampling.js -- what every sampler of the browser client needs: exact randomness, config checks.
//
// A leaf module (it imports only json.js): the mechanism builders (deniable.js, rappor.js,
// longitudinal.js, designs.js) and the other device modules take from it, and deniable.js
// re-exports the names it has always exported (DeniableError, utf8, secureRandomBytes, WordPool,
// uniformBelow, uniformBelowSmall, lnRatio, absLnRatio, MAX_GETRANDOM).
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
// Config checks. `integerParam` and `exactInteger` read an exact integer (a safe Number or a
// BigInt; a Number above 2^53 is refused, it lost precision) within bounds; `parseDomain` and
// `parseRange` read a categorical or numeric domain. A bad field throws DeniableError naming it.

import { stringify } from './json.js';

export const TWO32 = 2 ** 32;
export const TWO32N = 1n << 32n;
export const TWO64N = 1n << 64n;
export const MAX_GETRANDOM = 65536; // crypto.getRandomValues limit per call, in bytes

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
export class WordPool {
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
 * Rejection sampling exactly as deniable._randomness.uniform_below does.
 */
export function uniformBelow(pool, bound) {
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
export function uniformBelowSmall(pool, bound) {
  const limit = Math.floor(TWO32 / bound) * bound;
  let u = pool.u32();
  while (u >= limit) u = pool.u32();
  return u % bound;
}

/**
 * `count` integers uniform below `bound` (a BigInt, 1..2^64) drawn as deniable._randomness.uniform_below
 * draws a batch: `count` words first, then the rejected ones again, in rounds, in their order. From a
 * kept secret's stream this gives Python's memoized draws exactly (a lone draw is uniformBelow's).
 */
export function uniformBelowMany(pool, bound, count) {
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
 * deniable._randomness.dyadic_packed decides them, so a kept secret's stream gives Python's memoized
 * bits exactly: the bits of a stream of fair bits (bytes in order, each most significant bit first)
 * form runs, each ended by a 1; lane i's run has G zeros and its bit is bit G of the numerator (most
 * significant first; 0 once G >= 32). Bytes come `(lanes left) // 4 + 64` at a time and what is
 * left of the draw that decides the last lane is dropped. `numerators(i)` is lane i's numerator
 * (a Number in 1..2^32 - 1). `pool.bytes(n)` supplies the bytes; count < 2^16 (one block).
 */
export function lazyBits(pool, count, numerators) {
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
export function parity(x, width) {
  let p = 0n;
  for (let j = 0n; j < width; j++) p ^= (x >> j) & 1n;
  return p;
}

export function bitLength(n) {
  // bit length of a non-negative BigInt
  return n === 0n ? 0 : n.toString(2).length;
}

// ------------------------------------------------------------------ config checks

export function integerParam(params, name, limits = {}) {
  if (!(name in params)) throw new DeniableError(`params.${name}`, 'is missing');
  return exactInteger(params[name], `params.${name}`, limits);
}

export function exactInteger(raw, field, { min = 0n, max = null } = {}) {
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

export function parseDomain(domain) {
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
export function parseRange(domain) {
  if (!Array.isArray(domain) || domain.length !== 2 || !domain.every((v) => typeof v === 'number' && Number.isFinite(v)) || !(domain[0] < domain[1])) {
    throw new DeniableError('domain', `must be [low, high] with finite numbers low < high; got ${stringify(domain)}`);
  }
  return { k: 2, values: null, range: domain.slice() };
}

/** A numeric mechanism's input: a finite number (clipped to the range by the sampler). */
export function finiteValue(value) {
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
export function lnRatio(num, den) {
  const top = Number(num);
  const bottom = Number(den);
  if (top === 0 || bottom === 0) return Math.log(top) - Math.log(bottom); // exactly +-infinity
  const log = Math.log(top / bottom);
  return log + 4 * Number.EPSILON * (Math.abs(log) + 1);
}

/** |ln(a / b)| of non-negative BigInts, not both 0: Infinity when exactly one is 0. */
export function absLnRatio(a, b) {
  if (a === b) return 0;
  if (a === 0n || b === 0n) return Infinity;
  return Math.abs(lnRatio(a, b));
}

// ------------------------------------------------------------------ shared samplers

/** k-ary randomized response on positions: x w.p. a/d, else other position (r - a) // b. */
export function kRR(pool, x, a, b, d) {
  const r = uniformBelow(pool, d);
  const keep = r < a;
  const o = (keep ? 0n : r - a) / b;
  const other = o + (o >= x ? 1n : 0n);
  return keep ? x : other;
}
