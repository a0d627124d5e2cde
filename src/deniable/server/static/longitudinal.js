// longitudinal.js -- the longitudinal and telemetry mechanisms of the browser client: L-GRR and
// L-OSUE (Arcolezi et al.), dBitFlip and 1BitMean (Ding, Kulkarni, Yekhanin 2017). Their builders
// are registered in deniable.js's BUILDERS.
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

import { stringify } from './json.js';
import {
  DeniableError, TWO32, TWO32N, TWO64N, integerParam, kRR, lazyBits, lnRatio, uniformBelow,
  uniformBelowMany, uniformBelowSmall,
} from './sampling.js';

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
export function longitudinalGRR(params, dom) {
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
export function longitudinalOSUE(params, dom) {
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
 * algorithm, as deniable.mechanisms._telemetry.sample_subsets), each with a bit that is 1 w.p.
 * a / (a + b) if the value is that bucket and b / (a + b) otherwise; epsilon = min(d, 2) ln(a/b).
 * A device keeps its buckets for life and one bit vector per slot (which sampled bucket holds
 * its value, or none). With output perturbation (flipParam) every report flips each bit afresh.
 */
export function dbitflip(params, dom) {
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
 * (a uniform 64-bit word below floor(f 2^53) 2^11, as deniable._randomness.fixed_point), and the
 * bit of point j is 1 w.p. (b s + j (a - b)) / ((a + b) s), s = points - 1: epsilon = ln(a/b).
 * A device fixes its 64-bit rounding offset alpha for life and keeps one bit per point; with
 * output perturbation (flipParam) every report flips it afresh.
 */
export function oneBitMean(params, dom) {
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

