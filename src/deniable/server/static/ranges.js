// ranges.js -- the range mechanisms and set-valued answers on the device, as deniable.mechanisms has them:
//
//   haar-hrr                {"level": l, "index": j, "bit": 0 or 1}   (Cormode et al.'s HaarHRR)
//   hierarchical-histogram  {"level": l, "report": the level oracle's report (oue: hex; olh: {seed, value})}
//   set-valued              the oracle's report of one entry of the padded set (padding and sampling)
//
// A value of the first two is a number in [low, high], put in its bin exactly as Python does
// (min(floor((x - low) / (high - low) * bins), bins - 1) in double arithmetic); a value of a
// set-valued question is an array of distinct items, at most max_items. Every draw is exact
// (sampling.js): the level and the Hadamard row uniform, the kept bit with probability a / d.
// `nested(cfg)` builds a level oracle from its configuration (deniable.js passes its own builders,
// so this module imports none of them).

import { DeniableError, integerParam, lnRatio, parity, uniformBelow, uniformBelowSmall } from './sampling.js';
import { stringify } from './json.js';

function binsOf(params) {
  return Number(integerParam(params, 'bins', { min: 2n, max: 1n << 24n }));
}

function binOf(dom, bins) {
  const [low, high] = dom.range;
  return (value) => {
    if (typeof value !== 'number' || !Number.isFinite(value) || value < low || value > high) {
      throw new DeniableError('value', `must be a number in the domain [${low}, ${high}]; got ${stringify(value)}`);
    }
    return Math.min(Math.floor(((value - low) / (high - low)) * bins), bins - 1);
  };
}

/** HaarHRR: a level and a Hadamard row uniformly, then the bit H[j, node] s kept with probability a / d. */
export function haarHRR(params, dom) {
  const bins = binsOf(params);
  if (bins & (bins - 1)) throw new DeniableError('params.bins', `must be a power of two; got ${bins}`);
  const a = integerParam(params, 'truth_numerator', { min: 1n });
  const d = integerParam(params, 'denominator', { min: 2n });
  if (!(d - a >= 1n && d - a < a)) throw new DeniableError('params', `haar-hrr needs 1/2 < truth_numerator/denominator < 1; got ${stringify(params)}`);
  const height = Math.round(Math.log2(bins));
  return {
    epsilon: lnRatio(a, d - a),
    words: 6,
    position: binOf(dom, bins),
    sample(pool, leaf) {
      const level = 1 + uniformBelowSmall(pool, height);
      const index = level > 1 ? uniformBelowSmall(pool, 2 ** (level - 1)) : 0;
      const shift = height - level;
      const node = Math.floor(leaf / 2 ** (shift + 1));
      const right = Math.floor(leaf / 2 ** shift) % 2;
      // H[j, node] s > 0 exactly when the parity of j & node equals the half (0: left, s = +1)
      const positive = Number(parity(BigInt(index) & BigInt(node), BigInt(height))) === right;
      const keep = uniformBelow(pool, d) < a;
      return { level, index, bit: positive === keep ? 1 : 0 };
    },
  };
}

/** A hierarchical histogram: a level uniformly, then its oracle reports the node holding the value. */
export function hierarchicalHistogram(params, dom, nested) {
  const bins = binsOf(params);
  const branching = Number(integerParam(params, 'branching', { min: 2n, max: 1n << 24n }));
  const levels = params.levels;
  if (!Array.isArray(levels) || levels.length < 1) {
    throw new DeniableError('params.levels', `must list the level oracles; got ${stringify(levels)}`);
  }
  if (branching ** levels.length !== bins) {
    throw new DeniableError('params.levels', `must list log_${branching}(${bins}) level oracles; got ${levels.length}`);
  }
  const oracles = levels.map((cfg, i) => {
    const built = nested(cfg);
    if (!['oue', 'olh'].includes(cfg.mechanism) || built.k !== branching ** (i + 1)) {
      throw new DeniableError(`params.levels[${i}]`, `must configure oue or olh on ${branching ** (i + 1)} nodes; got ${stringify(cfg.mechanism)}`);
    }
    return built.impl;
  });
  const height = oracles.length;
  return {
    epsilon: Math.max(...oracles.map((o) => o.epsilon)),
    words: Math.max(...oracles.map((o) => o.words)) + 2,
    position: binOf(dom, bins),
    sample(pool, leaf) {
      const level = 1 + uniformBelowSmall(pool, height);
      const node = Math.floor(leaf / branching ** (height - level));
      return { level, report: oracles[level - 1].sample(pool, node) };
    },
  };
}

/** Padding and sampling to ell entries, then the oracle on the k + ell items and dummies. */
export function setValued(params, dom, nested) {
  const k = dom.k;
  const maxItems = Number(integerParam(params, 'max_items', { min: 1n, max: BigInt(k) }));
  const ell = Number(integerParam(params, 'ell', { min: 1n, max: BigInt(maxItems) }));
  const oracle = nested(params.oracle);
  if (!['grr', 'oue', 'olh'].includes(params.oracle.mechanism) || oracle.k !== k + ell) {
    throw new DeniableError('params.oracle', `must configure grr, oue or olh on the ${k + ell} items and dummies`);
  }
  const items = dom.values === null ? Array.from({ length: k }, (_, i) => i) : dom.values;
  // the whole report's exact epsilon (GRR, OUE); OLH's needs a search over its hash family, which the
  // server does: here its oracle's epsilon bounds it, and the configuration's claim must not exceed that
  const exact = oracle.impl.sampledEpsilon ? oracle.impl.sampledEpsilon(ell) : null;
  return {
    epsilon: exact ?? oracle.impl.epsilon,
    // a configuration written before the exact epsilon was stated claims the oracle's
    accepts: (claimed, near) => near(oracle.impl.epsilon)
      || (exact === null ? claimed > 0 && claimed <= oracle.impl.epsilon : near(exact)),
    words: oracle.impl.words + 2,
    position(value) {
      if (!Array.isArray(value)) throw new DeniableError('value', `must be an array of items; got ${stringify(value)}`);
      if (value.length > maxItems) {
        throw new DeniableError('value', `has ${value.length} items; at most max_items=${maxItems} are allowed`);
      }
      const positions = value.map((v) => {
        let i = -1;
        for (let j = 0; j < items.length; j++) i = i < 0 && items[j] === v ? j : i;
        if (i < 0) throw new DeniableError('value', `${stringify(v)} is not one of the items`);
        return i;
      });
      if (new Set(positions).size !== positions.length) throw new DeniableError('value', 'holds an item twice');
      return positions;
    },
    sample(pool, positions) {
      const size = positions.length;
      const draw = uniformBelowSmall(pool, Math.max(size, ell));
      return oracle.impl.sample(pool, draw < size ? positions[draw] : k + draw - size);
    },
  };
}
