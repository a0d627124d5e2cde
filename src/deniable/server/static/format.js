// Estimates as the results pages print them: an estimate, its interval and its standard error all
// with the same number of decimals, chosen from the standard error (two significant digits of it),
// so "122 (61 to 184)" rather than "122.4 (61.25 to 183.5)". Shares are printed in percent.
// Also the characters a free-text question allows (its alphabet), as the survey and results
// pages name them. Every number the pages print is formatted here.

const MAX_DECIMALS = 6;

/** A number thousands separated: "3,004" (a fraction keeps up to 3 decimals). */
export const grouped = (n) => Number(n).toLocaleString('en-US');

/** `n` things as text, thousands separated and singular for one: `countOf(3004, 'response')` is "3,004 responses". */
export const countOf = (n, noun) => `${grouped(n)} ${noun}${n === 1 ? '' : 's'}`;

/** A number with `digits` decimals: `fixed(1.6094)` is "1.61" (epsilons, test statistics). */
export const fixed = (x, digits = 2) => Number(x).toFixed(digits);

/** A number rounded to `digits` significant digits, without trailing zeros: `significant(20.0855)` is "20.1". */
export const significant = (x, digits = 3) => String(Number(Number(x).toPrecision(digits)));

/** A number in scientific notation with `digits` significant digits: `scientific(1.234e-7)` is "1.2e-7". */
export const scientific = (x, digits = 2) => Number(Number(x).toPrecision(digits)).toExponential();

/** A proportion in percent with `digits` decimals: `percent(0.2012)` is "20.1%"; "–" when not a finite number. */
export const percent = (x, digits = 1) => (Number.isFinite(x) ? `${(100 * x).toFixed(digits)}%` : '–');

/** A count thousands separated, rounded to a whole number: "1,204"; "–" when not a finite number. */
export const wholeNumber = (x) => (Number.isFinite(x) ? grouped(Math.round(x)) : '–');

/** A "nice" step (1, 2, 2.5 or 5 times a power of ten) for about `count` ticks over `span`. */
export function niceStep(span, count) {
  const raw = span / count;
  const power = 10 ** Math.floor(Math.log10(raw));
  return [1, 2, 2.5, 5, 10].map((m) => m * power).find((s) => s >= raw);
}

/** A number of a question's range or axis (estimates: estimateTexts): up to 4 significant digits, thousands separated ("–": not finite). */
export function numberText(x) {
  if (!Number.isFinite(x)) return '–';
  const digits = Math.abs(x) >= 1000 ? 0 : Math.max(0, 3 - Math.floor(Math.log10(Math.abs(x) || 1)));
  return x.toLocaleString('en-US', { maximumFractionDigits: Math.min(digits, 3) });
}

/** Decimals that show two significant digits of `se * scale` (0..6); `fallback` when that is not positive. */
export function decimalsFor(se, scale = 1, fallback = 1) {
  const s = Math.abs(se * scale);
  if (!Number.isFinite(s) || s === 0) return fallback;
  return Math.min(MAX_DECIMALS, Math.max(0, 1 - Math.floor(Math.log10(s))));
}

/**
 * An estimate `{ est, low, high, se }` as text, every part with the decimals chosen from `se`:
 * `kind` "share" (a proportion, printed in percent: "20.1%") or "number" (thousands separated).
 * Returns `{ est, low, high, se, interval, range }`: `interval` is "low to high", `range` the
 * compact "low–high" (one "%" at the end). Undefined values are "–"; nothing is clamped.
 */
export function estimateTexts({ est, low, high, se }, kind = 'share') {
  const share = kind === 'share';
  const scale = share ? 100 : 1;
  const digits = decimalsFor(se, scale);
  const bare = (x) => (Number.isFinite(x)
    ? (x * scale).toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits })
    : '–');
  const text = (x) => (share && Number.isFinite(x) ? `${bare(x)}%` : bare(x));
  const bounded = Number.isFinite(low) && Number.isFinite(high);
  return {
    est: text(est),
    low: text(low),
    high: text(high),
    se: text(se),
    interval: bounded ? `${text(low)} to ${text(high)}` : '–',
    range: bounded ? `${bare(low)}–${text(high)}` : '–',
  };
}

/** A character as the pages name it: “x”, or the word space. */
export const quoteCharacter = (c) => (c === ' ' ? 'space' : `“${c}”`);

/**
 * An alphabet in words: its characters in code-point order, a run of three or more as a range,
 * the space named last ("“-”, 0–9, “_”, a–z, space").
 */
export function describeAlphabet(alphabet) {
  const codes = [...new Set(Array.from(alphabet, (c) => c.codePointAt(0)))].sort((a, b) => a - b);
  const parts = [];
  let space = false;
  for (let i = 0; i < codes.length;) {
    let j = i;
    while (j + 1 < codes.length && codes[j + 1] === codes[j] + 1) j++;
    const first = String.fromCodePoint(codes[i]);
    if (j - i >= 2 && codes[i] > 32) parts.push(`${first}–${String.fromCodePoint(codes[j])}`);
    else {
      j = i; // a run shorter than three (or one that starts at the space) is listed one by one
      if (first === ' ') space = true;
      else parts.push(quoteCharacter(first));
    }
    i = j + 1;
  }
  if (space) parts.push('space');
  return parts.join(', ');
}
