// Results of number questions (kind "mean"): the estimated mean of the answers with its
// confidence interval, drawn on the question's range [low, high], and the numbers in a table.
// Only DOM/SVG elements and classes: the page's Content-Security-Policy forbids inline styles.
import { html, numbersTable, questionCard, svgEl } from './dom.js';
import { countOf, estimateTexts, fixed, numberText } from './format.js';

const withUnits = (q, text) => (q.units ? `${text} ${q.units}` : text);

/** The mean, its interval and standard error as text, with the decimals set by the standard error. */
const meanTexts = (q) => estimateTexts({ est: q.estimate, low: q.ci_low, high: q.ci_high, se: q.std_error }, 'number');

/** The mean (a dot) and its interval (whiskers) on an axis spanning the question's range. */
export function meanChart(q, level, width) {
  const left = 16;
  const right = 16;
  const top = 14;
  const height = 64;
  const span = q.high - q.low;
  const x = (v) => left + ((Math.min(q.high, Math.max(q.low, v)) - q.low) / span) * (width - left - right);
  const svg = svgEl('svg', { class: 'chart mean', viewBox: `0 0 ${width} ${height}`, role: 'img' });
  svg.append(svgEl('title', {}, `Estimated mean: ${q.text}`));
  const text = meanTexts(q);
  svg.append(svgEl('desc', {}, `${withUnits(q, text.est)} (${level} interval `
    + `${text.interval}), on the range ${numberText(q.low)} to ${numberText(q.high)}`));
  const axisY = top + 20;
  svg.append(svgEl('line', { class: 'zero', x1: left, x2: width - right, y1: axisY, y2: axisY }));
  for (let k = 0; k <= 4; k += 1) {
    const v = q.low + (k / 4) * span;
    const g = svgEl('g', { class: 'tick' });
    g.append(svgEl('line', { class: 'grid', x1: x(v), x2: x(v), y1: axisY - 14, y2: axisY + 4 }));
    g.append(svgEl('text', { x: x(v), y: axisY + 18, 'text-anchor': k === 0 ? 'start' : k === 4 ? 'end' : 'middle' },
      numberText(v)));
    svg.append(g);
  }
  const a = x(q.ci_low);
  const b = x(q.ci_high);
  svg.append(svgEl('line', { class: 'whisker', x1: a, x2: b, y1: axisY - 8, y2: axisY - 8 }));
  svg.append(svgEl('line', { class: 'whisker', x1: a, x2: a, y1: axisY - 14, y2: axisY - 2 }));
  svg.append(svgEl('line', { class: 'whisker', x1: b, x2: b, y1: axisY - 14, y2: axisY - 2 }));
  svg.append(svgEl('circle', { class: 'dot series-0', cx: x(q.estimate), cy: axisY - 8, r: 5 }));
  return svg;
}

/** A number question's section of the results page. */
export function meanSection(q, level, width) {
  const [section, meta] = questionCard(q, 'number');
  const target = q.target === 'respondents' ? 'these respondents' : 'population';
  meta.textContent = `${countOf(q.n, 'respondent')}, ε = ${fixed(q.epsilon)} · ${q.mechanism}`
    + ` · answers from ${withUnits(q, `${numberText(q.low)} to ${numberText(q.high)}`)} · estimates of: ${target}`;
  if (q.estimate === null) {
    section.append(html('p', 'empty', q.n === 0 ? 'No responses yet.' : 'Too few responses for a mean yet (it needs two).'));
    return section;
  }
  const headline = html('p', 'mean-headline');
  const text = meanTexts(q);
  headline.append(html('strong', '', `Mean ${withUnits(q, text.est)}`),
    ` (${level} confidence interval ${withUnits(q, text.interval)})`);
  section.append(headline, meanChart(q, level, width));
  const details = html('details');
  const rows = [
    ['Estimated mean', withUnits(q, text.est)],
    ['Standard error', text.se],
    [`${level} confidence interval`, text.interval],
    ['Responses', String(q.n)],
  ];
  details.append(html('summary', '', 'Show the numbers'), html('p', 'table-note', 'The mean of the answers, each '
    + 'taken within the question’s range, debiased from the randomized reports; the interval can reach outside the '
    + 'range.'), numbersTable(null, rows));
  section.append(details);
  return section;
}
