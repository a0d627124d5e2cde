// Results of a key-value question (kind "keyvalue", PCKV): a table of each key's share of respondents
// holding it and the mean of its values, each with its confidence interval, then the shares drawn by the
// page's bar chart, and the standard errors under "Show the numbers".
import { html, numbersTable, questionCard } from './dom.js';
import { countOf, estimateTexts, fixed } from './format.js';

/** A key-value question's section of the results page; `chart`: the page's bar chart of shares. */
export function keyValueSection(q, index, level, chart) {
  const [section, meta] = questionCard(q);
  const units = q.units ? ` ${q.units}` : '';
  meta.textContent = `${countOf(q.n, 'respondent')}, ε = ${fixed(q.epsilon)} · ${q.mechanism} with padding and `
    + `sampling to ${q.ell} · values ${q.low} to ${q.high}${units} for up to ${q.max_pairs} of ${q.keys.length} `
    + 'keys · estimates of: population';
  if (q.n === 0) {
    section.append(html('p', 'empty', 'No responses yet.'));
    return section;
  }
  const texts = q.keys.map((_, i) => [
    estimateTexts({ est: q.estimate[i], low: q.ci_low[i], high: q.ci_high[i], se: q.std_error[i] }),
    estimateTexts({ est: q.mean[i], low: q.mean_ci_low[i], high: q.mean_ci_high[i], se: q.mean_std_error[i] },
      'number'),
  ]);
  const rows = q.keys.map((key, i) => {
    const [share, mean] = texts[i];
    return [String(key), `${share.est} (${share.range})`, `${mean.est} (${mean.range})`];
  });
  const meanHead = `Mean value${units ? ` (${q.units})` : ''}`;
  section.append(numbersTable(['Key', 'Share holding it', meanHead], rows,
    { caption: `Estimates with their ${level} confidence intervals`, className: 'numbers keyvalue' }));
  section.append(chart({ ...q, categories: q.keys }, index, level));
  const details = html('details');
  const numbers = q.keys.map((key, i) => {
    const [share, mean] = texts[i];
    return [String(key), share.est, share.se, share.interval, mean.est, mean.se, mean.interval];
  });
  details.append(html('summary', '', 'Show the numbers'), html('p', 'table-note', 'Each key’s share of '
    + 'respondents holding it (a respondent may hold several, so the shares need not add up to 100%), and the '
    + 'mean of its values among them (its standard error by the delta method; a key few hold has a wide '
    + 'interval).'),
  numbersTable(['Key', 'Share', 'Standard error', `${level} confidence interval`, meanHead, 'Standard error',
    `${level} confidence interval`], numbers));
  section.append(details);
  return section;
}
