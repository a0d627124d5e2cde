// Results of number questions collected for ranges (kind "range": a hierarchical histogram or HaarHRR):
// the estimated CDF (the share of answers below each value) with its pointwise confidence band, the
// quartiles and the 90th percentile as intervals on it, and every quantile with its interval in a table.
// And of choose-several questions (kind "items"): each option's share of respondents, drawn by the page's
// own bar chart (passed in). Only DOM/SVG elements and classes: the page's CSP forbids inline styles.
import { html, numbersTable, questionCard, svgEl } from './dom.js';
import { countOf, estimateTexts, fixed, niceStep, numberText, percent } from './format.js';

const withUnits = (q, text) => (q.units ? `${text} ${q.units}` : text);
const DRAWN = [0.25, 0.5, 0.75, 0.9]; // the quantiles marked on the chart (the table has them all)
const quantileName = (p) => (p === 0.5 ? 'Median' : `${Math.round(100 * p)}th percentile`);

/** A quantile's value, interval and standard error as text, with the decimals set by the standard error. */
const quantileTexts = (r) => estimateTexts({ est: r.estimate, low: r.ci_low, high: r.ci_high, se: r.std_error },
  'number');

/** The CDF (a line), its band (shaded) and the drawn quantiles' intervals (whiskers at height q). */
function cdfChart(q, level, width) {
  const narrow = width < 520;
  const left = 44;
  const right = 14;
  const top = 10;
  const plotH = narrow ? 170 : 210;
  const height = top + plotH + 34;
  const span = q.high - q.low;
  const x = (v) => left + ((Math.min(q.high, Math.max(q.low, v)) - q.low) / span) * (width - left - right);
  const y = (p) => top + (1 - Math.min(1, Math.max(0, p))) * plotH;
  const svg = svgEl('svg', { class: 'chart cdf', viewBox: `0 0 ${width} ${height}`, role: 'img' });
  svg.append(svgEl('title', {}, `Estimated share of answers below each value: ${q.text}`));
  const median = q.quantiles.find((r) => r.q === 0.5);
  svg.append(svgEl('desc', {}, `The estimated cumulative distribution on ${withUnits(q, `${numberText(q.low)} to `
    + `${numberText(q.high)}`)} with its ${level} pointwise band; median ${withUnits(q, quantileTexts(median).est)} `
    + `(${level} interval ${quantileTexts(median).interval})`));
  for (let k = 0; k <= 4; k += 1) { // the share axis: 0, 25, 50, 75, 100%
    const g = svgEl('g', { class: 'tick' });
    g.append(svgEl('line', { class: k === 0 ? 'zero' : 'grid', x1: left, x2: width - right, y1: y(k / 4), y2: y(k / 4) }));
    g.append(svgEl('text', { x: left - 6, y: y(k / 4) + 4, 'text-anchor': 'end' }, percent(k / 4, 0)));
    svg.append(g);
  }
  const step = niceStep(span, narrow ? 3 : 5);
  for (let k = Math.ceil(q.low / step - 1e-9); k * step <= q.high + 1e-9 * span; k += 1) { // the value axis
    const v = k * step + 0; // not -0
    const anchor = x(v) - left < 12 ? 'start' : width - right - x(v) < 12 ? 'end' : 'middle';
    const g = svgEl('g', { class: 'tick' });
    g.append(svgEl('line', { class: 'grid', x1: x(v), x2: x(v), y1: top, y2: top + plotH + 4 }));
    g.append(svgEl('text', { x: x(v), y: top + plotH + 17, 'text-anchor': anchor }, numberText(v)));
    svg.append(g);
  }
  if (q.units) {
    svg.append(svgEl('text', { class: 'axis-label', x: width - right, y: top + plotH + 31, 'text-anchor': 'end' }, q.units));
  }
  const { cdf } = q;
  const points = (ys) => cdf.x.map((v, i) => `${x(v).toFixed(1)},${y(ys[i]).toFixed(1)}`);
  const finite = cdf.ci_low.every(Number.isFinite) && cdf.ci_high.every(Number.isFinite);
  if (finite) {
    const band = [...points(cdf.ci_high), ...points(cdf.ci_low).reverse()].join(' ');
    svg.append(svgEl('polygon', { class: 'band series-0', points: band }));
  }
  svg.append(svgEl('polyline', { class: 'line series-0', points: points(cdf.estimate).join(' ') }));
  for (const r of q.quantiles.filter((row) => DRAWN.includes(row.q))) {
    const cy = y(r.q);
    if (Number.isFinite(r.ci_low) && Number.isFinite(r.ci_high)) {
      const a = x(r.ci_low);
      const b = x(r.ci_high);
      svg.append(svgEl('line', { class: 'whisker', x1: a, x2: b, y1: cy, y2: cy }));
      svg.append(svgEl('line', { class: 'whisker', x1: a, x2: a, y1: cy - 5, y2: cy + 5 }));
      svg.append(svgEl('line', { class: 'whisker', x1: b, x2: b, y1: cy - 5, y2: cy + 5 }));
    }
    svg.append(svgEl('circle', { class: 'dot series-1', cx: x(r.estimate), cy, r: 4 }));
  }
  return svg;
}

/** A range question's section of the results page. */
export function rangeSection(q, level, width) {
  const [section, meta] = questionCard(q, 'number');
  meta.textContent = `${countOf(q.n, 'respondent')}, ε = ${fixed(q.epsilon)} · ${q.mechanism} on ${q.bins} bins`
    + ` · answers from ${withUnits(q, `${numberText(q.low)} to ${numberText(q.high)}`)} · estimates of: population`;
  if (q.n === 0) {
    section.append(html('p', 'empty', 'No responses yet.'));
    return section;
  }
  const median = q.quantiles.find((r) => r.q === 0.5);
  const text = quantileTexts(median);
  const headline = html('p', 'mean-headline');
  headline.append(html('strong', '', `Median ${withUnits(q, text.est)}`),
    ` (${level} confidence interval ${withUnits(q, text.interval)})`);
  section.append(headline, cdfChart(q, level, width));
  section.append(html('p', 'table-note', `Line: the estimated share of answers below each value; shaded: its ${level} `
    + 'pointwise confidence band. Dots with whiskers: the quartiles and the 90th percentile with their intervals.'));
  const details = html('details');
  const rows = q.quantiles.map((r) => {
    const t = quantileTexts(r);
    return [quantileName(r.q), withUnits(q, t.est), t.interval, t.se];
  });
  details.append(html('summary', '', 'Show the numbers'), html('p', 'table-note', 'Quantiles of the answers: where '
    + 'the estimated share below first reaches the level. Each interval holds the values where the share’s '
    + `${level} band crosses that level, to the resolution of the bins; its standard error is half the width of the `
    + 'interval from the ±1 standard-error band.'),
  numbersTable(['Quantile', 'Estimate', `${level} confidence interval`, 'Standard error'], rows));
  section.append(details);
  return section;
}

/** A choose-several question's section: each option's share of respondents, by `chart(q, index, level)`. */
export function itemsSection(q, index, level, chart) {
  const [section, meta] = questionCard(q);
  meta.textContent = `${countOf(q.n, 'respondent')}, ε = ${fixed(q.epsilon)} · ${q.mechanism} with padding and `
    + `sampling to ${q.ell} · up to ${q.max_choices} of ${q.options.length} options · estimates of: population`;
  if (q.n === 0) {
    section.append(html('p', 'empty', 'No responses yet.'));
    return section;
  }
  section.append(chart({ ...q, categories: q.options }, index, level));
  const details = html('details');
  const rows = q.options.map((option, i) => {
    const t = estimateTexts({ est: q.estimate[i], low: q.ci_low[i], high: q.ci_high[i], se: q.std_error[i] });
    return [String(option), t.est, t.se, t.interval];
  });
  details.append(html('summary', '', 'Show the numbers'), html('p', 'table-note', 'The share of respondents who '
    + 'chose each option (a respondent may choose several, so the shares need not add up to 100%).'),
  numbersTable(['Option', 'Estimate', 'Standard error', `${level} confidence interval`], rows));
  section.append(details);
  return section;
}
