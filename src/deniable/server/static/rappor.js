// rappor.js -- RAPPOR (Erlingsson, Pihur, Korolova 2014) in the browser: Bloom filters of the
// category in a cohort (deniable's SHA-256 hashing or Google's MD5 one, hashes from the vendored
// @noble/hashes), a permanent response and an instantaneous one, exactly as
// deniable.mechanisms._rappor draws them. The builder `rappor(params, dom)` is registered in
// deniable.js's BUILDERS; its `memo` is what a kept client (client_state.js) keeps between reports
// (the contract is described in longitudinal.js).

import { md5 } from './vendor/noble-hashes/legacy.js';
import { sha256 } from './vendor/noble-hashes/sha2.js';
import { stringify } from './json.js';
import {
  DeniableError, TWO32, TWO32N, TWO64N, integerParam, lazyBits, lnRatio, uniformBelowSmall, utf8,
} from './sampling.js';

const RAPPOR_HASHES = Object.freeze({
  'sha256(cohort NUL type NUL value)': 'sha256',
  'md5(cohort u32be, utf8 value) byte i mod num_bits (google/rappor)': 'google',
});

/** Python's str() and type name of a category, as deniable.mechanisms._rappor hashes it. */
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

/** Set bits of a non-negative BigInt. */
function popcount(x) {
  let n = 0;
  for (let rest = x; rest; rest &= rest - 1n) n++;
  return n;
}

/**
 * The filter differences [a, b] the Bloom filters attain (deniable.mechanisms._rappor_privacy): over
 * cohorts and pairs of distinct filters, a = |B - B'| and b = |B' - B|; [[h, h]] alone once two
 * disjoint filters of h bits are found (they carry the largest loss there is).
 */
function separations(bloom, hashes) {
  const found = new Map();
  for (const filters of bloom) {
    const distinct = [...new Set(filters)];
    for (const x of distinct) {
      for (const y of distinct) {
        const a = popcount(x & ~y);
        const b = popcount(y & ~x);
        if (a === hashes && b === hashes) return [[a, b]];
        if (a || b) found.set(a * (hashes + 1) + b, [a, b]);
      }
    }
  }
  return [...found.values()];
}

export function rappor(params, dom) {
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
  const values = dom.values === null ? Array.from({ length: dom.k }, (_, i) => i) : dom.values;
  const bloom = Array.from({ length: cohorts }, (_, c) => values.map((v) => {
    let filter = 0n;
    for (const b of bloomPositions(hashing, v, c, hashes, width)) filter |= 1n << BigInt(b);
    return filter;
  }));
  // the loss the actual filters realise: where x alone sets a bit a report says 1, where x' alone does
  // 0, a ln(q*/p*) + b ln((1-p*)/(1-q*)) in all; h ln(q*(1-p*)/(p*(1-q*))) when two are disjoint
  const seps = separations(bloom, hashes);
  if (!seps.length) {
    throw new DeniableError('params', `rappor's categories have one Bloom filter in every cohort: reports would carry nothing about them; got ${stringify(params)}`);
  }
  const [upOne, upZero] = [lnRatio(qStar, pStar), lnRatio(TWO64N - pStar, TWO64N - qStar)];
  const epsilon = Math.max(...seps.map(([a, b]) => a * upOne + b * upZero));
  const spread = Math.max(...seps.map(([a, b]) => a + b));
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
      // epsilon_infinity = (a + b) ln((1 - f/2) / (f/2)), the widest filter difference (2h when two
      // are disjoint): what a value's permanent response reveals
      epsilonPermanent: spread * lnRatio(TWO32N - halfF, halfF),
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
