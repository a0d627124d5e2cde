// keyvalue.js -- key-value answers on the device: PCKV-UE and PCKV-GRR (Gu et al., USENIX Security 2020),
// as deniable.mechanisms._key_value has them.
//
//   pckv  (variant "ue")   lowercase hex of the packed +1 bits of the d + ell keys, then of the -1 bits
//         (variant "grr")  the integer 2 j + (s == +1) for the reported key position j and sign s
//
// A value is one respondent's pairs: an array of [key, value] pairs, or an object {key: value} (its keys
// are strings, so only for string keys), with distinct declared keys, at most max_pairs, each value a
// number in [-1, 1]. Padding and sampling: one of max(size, ell) entries uniformly (the dummies
// d, d + 1, ... with value 0 after the user's pairs); the value's sign is +1 with probability
// floor((1 + v) / 2 * 2^53) / 2^53 (a uniform 53-bit integer against that threshold, as Python's
// randomized rounding); then the correlated perturbation with the configuration's integer numerators.
// Loops run a number of times fixed by the configuration (max_pairs, d + ell), never by the value.

import { stringify } from './json.js';
import { DeniableError, TWO32N, integerParam, lnRatio, uniformBelow, uniformBelowSmall } from './sampling.js';

const TWO53 = 2 ** 53;
const TWO53N = 1n << 53n;

/** The larger over the smaller of fractions [num, den] (BigInts) as [num, den]. */
function spread(fractions) {
  const less = (x, y) => x[0] * y[1] < y[0] * x[1];
  const top = fractions.reduce((m, f) => (less(m, f) ? f : m));
  const bottom = fractions.reduce((m, f) => (less(f, m) ? f : m));
  return [top[0] * bottom[1], top[1] * bottom[0]];
}

function parsePairs(value, keys, maxPairs) {
  const pairs = Array.isArray(value) ? value : value !== null && typeof value === 'object' ? Object.entries(value) : null;
  if (pairs === null) throw new DeniableError('value', `must be an array of [key, value] pairs or an object; got ${stringify(value)}`);
  if (pairs.length > maxPairs) {
    throw new DeniableError('value', `has ${pairs.length} pairs; at most max_pairs=${maxPairs} are allowed`);
  }
  const positions = [];
  const values = [];
  for (const pair of pairs) {
    if (!Array.isArray(pair) || pair.length !== 2) throw new DeniableError('value', `must hold [key, value] pairs; got ${stringify(pair)}`);
    let i = -1;
    for (let j = 0; j < keys.length; j++) i = i < 0 && keys[j] === pair[0] ? j : i;
    if (i < 0) throw new DeniableError('value', `key ${stringify(pair[0])} is not one of the declared keys`);
    const v = pair[1];
    if (typeof v !== 'number' || !(v >= -1 && v <= 1)) {
      throw new DeniableError('value', `the value of key ${stringify(pair[0])} must be a number in [-1, 1]; got ${stringify(v)}`);
    }
    positions.push(i);
    values.push(v);
  }
  if (new Set(positions).size !== positions.length) throw new DeniableError('value', 'holds a key twice');
  return { positions, values };
}

/** PCKV: padding and sampling of pairs, discretization of the value, correlated perturbation. */
export function pckv(params, dom) {
  const d = dom.k;
  const maxPairs = Number(integerParam(params, 'max_pairs', { min: 1n, max: BigInt(d) }));
  const ell = Number(integerParam(params, 'ell', { min: 1n, max: BigInt(maxPairs) }));
  const cells = d + ell;
  const keys = dom.values === null ? Array.from({ length: d }, (_, i) => i) : dom.values;
  let epsilon;
  let perturb;
  if (params.variant === 'ue') {
    const keep = integerParam(params, 'keep_numerator', { min: 1n, max: TWO32N - 1n });
    const agree = integerParam(params, 'agree_numerator', { min: 1n, max: keep - 1n });
    const other = integerParam(params, 'other_numerator', { min: 1n, max: TWO32N / 2n - 1n });
    const [num, den] = spread([[agree, other], [keep - agree, other], [TWO32N - keep, TWO32N - 2n * other]]);
    epsilon = lnRatio(num, den);
    const [K, A, B] = [keep, agree, other].map(Number);
    const nbytes = (cells + 7) >> 3;
    perturb = (pool, key, sign) => {
      const plus = new Uint8Array(nbytes);
      const minus = new Uint8Array(nbytes);
      for (let i = 0; i < cells; i++) {
        const r = pool.u32();
        plus[i >> 3] |= +(r < B) << (7 - (i & 7));
        minus[i >> 3] |= +(r >= B && r < 2 * B) << (7 - (i & 7));
      }
      const u = pool.u32();
      const shown = u < A ? sign : u < K ? -sign : 0;
      const mask = 1 << (7 - (key & 7));
      plus[key >> 3] = (plus[key >> 3] & ~mask) | (shown > 0 ? mask : 0);
      minus[key >> 3] = (minus[key >> 3] & ~mask) | (shown < 0 ? mask : 0);
      let hex = '';
      for (const byte of [...plus, ...minus]) hex += byte.toString(16).padStart(2, '0');
      return hex;
    };
  } else if (params.variant === 'grr') {
    const agree = integerParam(params, 'agree_numerator', { min: 1n });
    const flip = integerParam(params, 'flip_numerator', { min: 1n });
    const other = integerParam(params, 'other_numerator', { min: 1n });
    const total = agree + flip + 2n * BigInt(cells - 1) * other;
    if (total > 1n << 63n) throw new DeniableError('params', `pckv denominator exceeds 2^63; got ${stringify(params)}`);
    const least = [agree, flip, other].reduce((m, x) => (x < m ? x : m));
    const most = [agree, flip, other].reduce((m, x) => (x > m ? x : m));
    const rest = BigInt(ell - 1) * other;
    epsilon = lnRatio(most + rest, least + rest);
    perturb = (pool, key, sign) => {
      const r = uniformBelow(pool, total);
      if (r < agree + flip) return 2 * key + ((r < agree ? sign : -sign) > 0 ? 1 : 0);
      const j = Number((r - agree - flip) / other); // another key and a sign
      const moved = Math.floor(j / 2);
      return 2 * (moved + (moved >= key ? 1 : 0)) + (j % 2 === 0 ? 1 : 0);
    };
  } else {
    throw new DeniableError('params.variant', `must be "ue" or "grr"; got ${stringify(params.variant)}`);
  }
  return {
    epsilon,
    words: cells + 8,
    position: (value) => parsePairs(value, keys, maxPairs),
    sample(pool, { positions, values }) {
      const size = positions.length;
      const draw = uniformBelowSmall(pool, Math.max(size, ell));
      const real = draw < size;
      const key = real ? positions[draw] : d + draw - size;
      const v = real ? values[draw] : 0;
      const threshold = BigInt(Math.floor(((1 + v) / 2) * TWO53));
      const sign = uniformBelow(pool, TWO53N) < threshold ? 1 : -1;
      return perturb(pool, key, sign);
    },
  };
}
