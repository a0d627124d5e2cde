// designs.js -- the survey designs of deniable.survey on the device (wire id "rr-design").
//
// fromConfig (deniable.js) builds a design from the configuration Python's `d.to_config()` writes,
// RRreg's model name and exact `p` (fractions as text) in params:
//
//   {"format": "deniable.mechanism", "version": 1, "mechanism": "rr-design",
//    "domain": [false, true], "epsilon": 1.6094379124341003,
//    "params": {"model": "FR", "p": ["1/6", "1/6"]}}
//
// Kuk adds "cards" (when above 1); Custom has "matrix" (rows of P(answer | state)) instead of "p".
// It accepts exactly the configurations dn.from_config accepts (the same checks of each model,
// p read as Python's Fraction reads text) and computes the same epsilon (Infinity where an answer
// reveals the truth; such a config says null). One exception: Custom's rows must be linearly
// independent exactly here, where numpy's rank tolerates rounding.
//
// Values (the respondent's truth) and reports, as Python's Design takes and writes them:
//
//   truth      false / true (or 0 / 1); FR with m categories and Custom with m states: 0..m-1;
//              UQTunknown: {"answer": a, "unrelated": u} (the unrelated answer never leaves here)
//   report     one group, two answers: true / false; several answers (FR with m categories,
//              Kuk with cards > 1, Custom with R answers): the integer answer; two groups
//              (UQTunknown, SLD, CDM, CDMsym): {"group": g, "answer": a}, g drawn here uniformly
//
// Exactness. Each group's yes/no channel is its two exact probabilities over their common
// denominator D (at most 2^63, as Python's integer_probabilities): one integer uniform below D
// (sampling.js's uniformBelow, from the call's CSPRNG pool) is compared with a numerator, as
// binary-rr does. The group is uniformBelow(2); Kuk draws its cards one by one; FR and Custom
// compare one uniform integer with cumulative numerators (Custom's rows over one common
// denominator where it fits in 64 bits, so that the true state does not choose the word size).
//
// (designs.js takes its samplers from the leaf sampling.js and deniable.js lists this builder:
// no import cycle.)

import { absLnRatio, DeniableError, lnRatio, uniformBelow } from './sampling.js';
import { canonicalJSON, stringify } from './json.js';

const LIMIT = 1n << 63n; // the largest common denominator deniable._privacy.integer_probabilities takes
const TWO64N = 1n << 64n;

// ------------------------------------------------------------------ exact fractions

function gcd(a, b) {
  let [x, y] = [a < 0n ? -a : a, b < 0n ? -b : b];
  while (y) [x, y] = [y, x % y];
  return x;
}

const lcm = (a, b) => (a / gcd(a, b)) * b;

/** n / d in lowest terms ({n, d} BigInt, d > 0). */
function fraction(n, d) {
  const g = gcd(n, d) || 1n;
  return d < 0n ? { n: -n / g, d: -d / g } : { n: n / g, d: d / g };
}

const ZERO = fraction(0n, 1n);
const ONE = fraction(1n, 1n);
const plus = (a, b) => fraction(a.n * b.d + b.n * a.d, a.d * b.d);
const minus = (a, b) => fraction(a.n * b.d - b.n * a.d, a.d * b.d);
const times = (a, b) => fraction(a.n * b.n, a.d * b.d);
const equal = (a, b) => a.n === b.n && a.d === b.d;
const below = (a, b) => a.n * b.d < b.n * a.d;
const text = (a) => (a.d === 1n ? `${a.n}` : `${a.n}/${a.d}`);
/** ln(a / b) of positive fractions, rounded up (sampling.js's lnRatio). */
const lnFraction = (a, b) => lnRatio(a.n * b.d, a.d * b.n);

// Python's Fraction(text) grammar (fractions._RATIONAL_FORMAT), as deniable._privacy.exact_probability
// reads a probability: "1/6", "0.25", "1e-1", " +1/4 ", "1_000/3_000"
const RATIONAL = /^\s*([-+]?)(?=\d|\.\d)(\d*|\d+(?:_\d+)*)(?:\/(\d+(?:_\d+)*)|(?:\.(\d+(?:_\d+)*)?)?(?:[eE]([-+]?\d+(?:_\d+)*))?)\s*$/;
const MAX_EXPONENT = 10000n; // beyond it a non-zero value is above 1 or needs a denominator above 2^63

/** An exact probability in [0, 1] from its text, as Python reads it; refused otherwise. */
function probability(raw, field, model) {
  const m = typeof raw === 'string' ? RATIONAL.exec(raw) : null;
  if (m === null) {
    throw new DeniableError(field, `must be an exact probability as text (a fraction like "1/6" or a decimal) for ${model}; got ${stringify(raw)}`);
  }
  const digits = (s) => BigInt((s ?? '').replaceAll('_', '') || '0');
  let n = digits(m[2]);
  let d = 1n;
  if (m[3] !== undefined) d = digits(m[3]);
  const decimals = (m[4] ?? '').replaceAll('_', '');
  n = n * 10n ** BigInt(decimals.length) + digits(decimals);
  d *= 10n ** BigInt(decimals.length);
  const exponent = digits(m[5]?.replace('+', ''));
  const magnitude = exponent < 0n ? -exponent : exponent;
  if (n !== 0n && magnitude > MAX_EXPONENT) {
    throw new DeniableError(field, `must be in [0, 1] with a denominator up to 2^63 for ${model}; got ${stringify(raw)}`);
  }
  if (n !== 0n && exponent > 0n) n *= 10n ** exponent;
  if (n !== 0n && exponent < 0n) d *= 10n ** magnitude;
  if (d === 0n) throw new DeniableError(field, `divides by zero for ${model}; got ${stringify(raw)}`);
  const value = fraction(m[1] === '-' ? -n : n, d);
  if (value.n < 0n || value.n > value.d) throw new DeniableError(field, `must be in [0, 1] for ${model}; got ${stringify(raw)}`);
  return value;
}

/** Numerators over the common denominator of exact probabilities (at most 2^63, as Python's). */
function integers(probs, field) {
  const d = probs.reduce((acc, p) => lcm(acc, p.d), 1n);
  if (d > LIMIT) {
    throw new DeniableError(field, `[${probs.map(text).join(', ')}] need a denominator of ${d}, above the sampler's limit 2^63`);
  }
  return [probs.map((p) => p.n * (d / p.d)), d];
}

// ------------------------------------------------------------------ the devices

/**
 * A yes/no channel: P(yes | carrier) = b, P(yes | non-carrier) = a0, exact. draw(pool, x) says
 * "yes" for truth x (0 or 1) with its probability: one uniform integer below the denominator.
 */
function channel(b, a0, field) {
  const [[yf, yt], d] = integers([a0, b], field);
  const thresholds = [yf, yt];
  return {
    epsilon: Math.max(absLnRatio(yt, yf), absLnRatio(d - yt, d - yf)),
    draw: (pool, x) => +(uniformBelow(pool, d) < thresholds[x]),
  };
}

/** A one-group yes/no design (Warner, Crosswise, Triangular, Mangat, UQTknown). */
function yesNo(model, b, a0) {
  if (equal(b, a0)) {
    throw new DeniableError('params.p', `gives P(yes | carrier) = P(yes | non-carrier) = ${text(b)} for ${model}: the answers carry no information`);
  }
  const c = channel(b, a0, 'params.p');
  return { answers: 2, epsilon: c.epsilon, draw: c.draw };
}

/** A two-group yes/no design: `device(g)` is (P(yes | carrier), P(yes | non-carrier)) in group g. */
function twoGroups(device) {
  const channels = [1, 2].map((g) => channel(...device(g), 'params.p'));
  return {
    groups: 2,
    answers: 2,
    epsilon: Math.max(...channels.map((c) => c.epsilon)),
    draw: (pool, x, g) => channels[g - 1].draw(pool, x),
  };
}

/** Two different values of p, neither of them 1 (SLD, CDM). */
function differentBelowOne(model, p) {
  if (equal(p[0], p[1]) || equal(p[0], ONE) || equal(p[1], ONE)) {
    throw new DeniableError('params.p', `must be two different values in [0, 1) for ${model}; got [${p.map(text).join(', ')}]`);
  }
}

/** Kuk: `cards` cards, each red with probability p1 for a carrier and p2 otherwise; the answer counts the red ones. */
function kuk([p1, p2], cards) {
  const inside = (p) => ZERO.n < p.n && p.n < p.d;
  if (!inside(p1) || !inside(p2) || equal(p1, p2)) {
    throw new DeniableError('params.p', `must be two different values in (0, 1) for Kuk; got [${text(p1)}, ${text(p2)}]`);
  }
  const card = channel(p1, p2, 'params.p');
  return {
    answers: cards + 1,
    // epsilon = cards ln(worst ratio): the channel's per card
    epsilon: cards * card.epsilon,
    draw(pool, x) {
      let red = 0;
      for (let i = 0; i < cards; i++) red += card.draw(pool, x);
      return red;
    },
  };
}

/** FR: forced to category r with probability p[r], else truthful; one integer against cumulative numerators. */
function forcedResponse(p) {
  if (p.length < 2) throw new DeniableError('params.p', `must have one value per category (at least 2) for FR; got ${p.length}`);
  const truthful = minus(ONE, p.reduce(plus, ZERO));
  if (truthful.n <= 0n) throw new DeniableError('params.p', 'must add up to less than 1 for FR (the rest is the truthful answer)');
  const [[t, ...forced], d] = integers([truthful, ...p], 'params.p');
  const cumulative = forced.map((_, i) => forced.slice(0, i + 1).reduce((a, b) => a + b));
  const least = p.reduce((a, b) => (below(b, a) ? b : a));
  return {
    m: p.length,
    answers: p.length,
    // ln(1 + (1 - sum p) / min p), infinite where some category is never forced
    epsilon: least.n === 0n ? Infinity : lnFraction(plus(truthful, least), least),
    draw(pool, x) {
      const u = uniformBelow(pool, d);
      let r = 0;
      for (const c of cumulative) r += +(u - t >= c);
      return u < t ? x : r;
    },
  };
}

/** Rank of a matrix of BigInt rows (fraction-free elimination, each row kept divided by its gcd). */
function rank(matrix) {
  const rows = matrix.map((row) => row.slice());
  let r = 0;
  for (let c = 0; c < rows[0].length && r < rows.length; c++) {
    const pivot = rows.findIndex((row, i) => i >= r && row[c] !== 0n);
    if (pivot < 0) continue;
    [rows[r], rows[pivot]] = [rows[pivot], rows[r]];
    for (let i = r + 1; i < rows.length; i++) {
      const scaled = rows[i].map((v, j) => v * rows[r][c] - rows[i][c] * rows[r][j]);
      const g = scaled.reduce(gcd, 0n) || 1n;
      rows[i] = scaled.map((v) => v / g);
    }
    r += 1;
  }
  return r;
}

/** Custom: a design given by its transition matrix [state][answer], each row sampled exactly. */
function custom(matrix) {
  const field = 'params.matrix';
  if (!Array.isArray(matrix) || !matrix.every((row) => Array.isArray(row) && row.every((v) => typeof v === 'string'))) {
    throw new DeniableError(field, `must be rows of exact fractions as text; got ${stringify(matrix).slice(0, 60)}`);
  }
  if (matrix.length < 2 || matrix[0].length < 2 || matrix.some((row) => row.length !== matrix[0].length)) {
    throw new DeniableError(field, `must have at least 2 rows (states) of the same length >= 2 (answers); got row lengths [${matrix.map((row) => row.length)}]`);
  }
  const rows = matrix.map((row, j) => row.map((v, r) => probability(v, `${field}[${j}][${r}]`, 'Custom')));
  rows.forEach((row, j) => {
    if (!equal(row.reduce(plus, ZERO), ONE)) throw new DeniableError(`${field}[${j}]`, `must sum to exactly 1 for Custom (P(answer | state ${j}))`);
  });
  const sampled = rows.map((row, j) => integers(row, `${field}[${j}]`));
  if (rank(sampled.map(([numerators]) => numerators)) < rows.length) {
    throw new DeniableError(field, `rows must be linearly independent for Custom (the answers must tell the ${rows.length} states apart)`);
  }
  // one denominator for every row where it fits, else each row's own
  const common = sampled.reduce((acc, [, d]) => lcm(acc, d), 1n);
  const cumulative = sampled.map(([numerators, d]) => {
    const scale = common <= TWO64N ? common / d : 1n;
    return numerators.map((_, r) => numerators.slice(0, r + 1).reduce((a, b) => a + b) * scale);
  });
  const bounds = sampled.map(([, d]) => (common <= TWO64N ? common : d));
  let epsilon = 0;
  for (let r = 0; r < rows[0].length; r++) {
    const column = rows.map((row) => row[r]);
    const high = column.reduce((a, b) => (below(a, b) ? b : a));
    const low = column.reduce((a, b) => (below(b, a) ? b : a));
    if (high.n !== 0n) epsilon = Math.max(epsilon, low.n === 0n ? Infinity : lnFraction(high, low));
  }
  return {
    m: rows.length,
    answers: rows[0].length,
    epsilon,
    draw(pool, x) {
      const u = uniformBelow(pool, bounds[x]);
      let answer = 0;
      for (const c of cumulative[x]) answer += +(u >= c);
      return answer;
    },
  };
}

/** Each model: how many p values it takes (null: any number) and its device from them. */
const MODELS = {
  Warner: [1, ([p]) => yesNo('Warner', p, minus(ONE, p))],
  Crosswise: [1, ([p]) => yesNo('Crosswise', p, minus(ONE, p))],
  Triangular: [1, ([p]) => yesNo('Triangular', ONE, p)],
  Mangat: [1, ([p]) => yesNo('Mangat', ONE, minus(ONE, p))],
  UQTknown: [2, ([p1, p2]) => {
    if (p1.n === 0n) throw new DeniableError('params.p', 'p[0] (P(sensitive question)) must be in (0, 1] for UQTknown; got 0');
    const unrelated = times(minus(ONE, p1), p2);
    return yesNo('UQTknown', plus(p1, unrelated), unrelated);
  }],
  Kuk: [2, kuk],
  FR: [null, forcedResponse],
  UQTunknown: [2, (p) => {
    if (equal(p[0], p[1])) throw new DeniableError('params.p', `must differ between the groups for UQTunknown; got [${p.map(text).join(', ')}]`);
    // the group's coin: the sensitive question with probability p_g, else the unrelated answer
    const coins = twoGroups((g) => [p[g - 1], ZERO]);
    return { ...coins, epsilon: Infinity, unrelated: true, draw: (pool, [x, other], g) => (coins.draw(pool, 1, g) ? x : other) };
  }],
  SLD: [2, (p) => {
    differentBelowOne('SLD', p);
    return twoGroups((g) => [ONE, minus(ONE, p[g - 1])]);
  }],
  CDM: [2, (p) => {
    differentBelowOne('CDM', p);
    return twoGroups((g) => [ONE, p[g - 1]]);
  }],
  CDMsym: [4, (p) => {
    const [p1, p2, p3, p4] = p;
    if (!below(plus(p1, p2), ONE) || !below(plus(p3, p4), ONE)) {
      throw new DeniableError('params.p', "p's forced shares must add up to less than 1 in each group for CDMsym");
    }
    if (equal(times(p3, minus(ONE, p2)), times(p1, minus(ONE, p4)))) {
      throw new DeniableError('params.p', 'must make the two groups differ for CDMsym');
    }
    return twoGroups((g) => [minus(ONE, p[2 * g - 1]), p[2 * g - 2]]);
  }],
  Custom: [null, null],
};

/** The parameters' fields, as Python's reader checks them: no unknown one, none missing. */
function checkFields(params, model) {
  const fields = model === 'Custom' ? ['model', 'matrix'] : ['model', 'p'];
  if (model === 'Kuk' && Object.hasOwn(params, 'cards')) fields.push('cards');
  const unknown = Object.keys(params).filter((k) => !fields.includes(k));
  const missing = fields.filter((k) => !Object.hasOwn(params, k));
  if (unknown.length || missing.length) {
    throw new DeniableError('params', `for rr-design (${model}): unknown field(s) ${stringify(unknown)}, missing field(s) ${stringify(missing)}`);
  }
}

/** Kuk's cards: an integer >= 2 written as one (1 is the default and is left out, as Python writes it). */
function cardsOf(params) {
  if (!Object.hasOwn(params, 'cards')) return 1;
  const cards = params.cards;
  // canonicalJSON writes a number parseJSON read as a float (2.0) as Python does: Python refuses it
  const written = /^\{"cards":([^,}]*)/.exec(canonicalJSON(params))[1];
  if (typeof cards !== 'number' || !Number.isSafeInteger(cards) || cards < 2 || /[.eE]/.test(written)) {
    throw new DeniableError('params.cards', `must be an integer >= 2 for Kuk (left out for 1 card); got ${stringify(cards)}`);
  }
  return cards;
}

/** Python's `==` of a config's domain with the design's: booleans and numbers compare as numbers. */
function checkDomain(dom, m, model) {
  const want = m === 2 ? [false, true] : Array.from({ length: m }, (_, i) => i);
  const same = dom.values !== null && dom.values.length === m
    && dom.values.every((v, i) => (typeof v === 'boolean' || typeof v === 'number') && Number(v) === i);
  if (!same) throw new DeniableError('domain', `must be ${stringify(want)} for ${model}; got ${stringify(dom.values ?? dom.k)}`);
}

/** One truth of a yes/no state: true / false, or 1 / 0 (what Python's Design takes). */
function yesOrNo(value, model, what = 'value') {
  if (value === true || value === 1) return 1;
  if (value === false || value === 0) return 0;
  throw new DeniableError(what, `must be true or false for ${model}; got ${stringify(value)}`);
}

/** The respondent's truth, checked: what the device samples with (see the header). */
function truthReader(model, m, unrelated) {
  if (unrelated) {
    return (value) => {
      const keys = value !== null && typeof value === 'object' && !Array.isArray(value) ? Object.keys(value).sort() : [];
      if (keys.length !== 2 || keys[0] !== 'answer' || keys[1] !== 'unrelated') {
        throw new DeniableError('value', `must be {"answer": true or false, "unrelated": true or false} for ${model} (the unrelated answer stays on this device); got ${stringify(value)}`);
      }
      return [yesOrNo(value.answer, model, 'value.answer'), yesOrNo(value.unrelated, model, 'value.unrelated')];
    };
  }
  if (m === 2) return (value) => yesOrNo(value, model);
  return (value) => {
    if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value >= m) {
      throw new DeniableError('value', `must be a category 0..${m - 1} for ${model}; got ${stringify(value)}`);
    }
    return value;
  };
}

/**
 * The 'rr-design' builder of deniable.js's fromConfig: a survey design from its params and
 * domain, checked as Python checks them. Returns {epsilon, words, position, sample}: position
 * reads the truth, sample(pool, truth) makes the report.
 */
export function rrDesign(params, dom) {
  const model = params.model;
  if (typeof model !== 'string' || !Object.hasOwn(MODELS, model)) {
    throw new DeniableError('params.model', `must be one of ${Object.keys(MODELS).sort().join(', ')}; got ${stringify(model)}`);
  }
  checkFields(params, model);
  let design;
  if (model === 'Custom') design = custom(params.matrix);
  else {
    const [count, build] = MODELS[model];
    const p = params.p;
    if (!Array.isArray(p) || !p.every((v) => typeof v === 'string')) {
      throw new DeniableError('params.p', `must be a list of exact fractions as text; got ${stringify(p).slice(0, 60)}`);
    }
    const cards = cardsOf(params);
    if (count !== null && p.length !== count) {
      throw new DeniableError('params.p', `must have ${count} value${count > 1 ? 's' : ''} for ${model}; got ${p.length}`);
    }
    design = build(p.map((v, i) => probability(v, `params.p[${i}]`, model)), cards);
  }
  const { answers, draw } = design;
  const groups = design.groups ?? 1;
  checkDomain(dom, design.m ?? 2, model);
  const report = groups === 2
    ? (pool, x) => {
      const group = 1 + Number(uniformBelow(pool, 2n));
      return { group, answer: draw(pool, x, group) === 1 };
    }
    : (pool, x) => {
      const answer = draw(pool, x, 1);
      return answers === 2 ? answer === 1 : answer;
    };
  return {
    epsilon: design.epsilon,
    words: 2 * (answers - 1) + 4, // a 64-bit draw per card (Kuk), the group's word, rejections
    position: truthReader(model, design.m ?? 2, design.unrelated === true),
    sample: report,
  };
}
