// Results of a list experiment (kind "list-experiment"): the estimated share holding the sensitive item
// (the difference in means of the two lists) with its confidence interval, drawn on 0 to 1 by the
// number questions' chart, and the lists' sizes, means and answers at the floor and the ceiling.
import { html, numbersTable, questionCard } from './dom.js';
import { countOf, estimateTexts } from './format.js';
import { meanChart } from './number_results.js';

const mean = (counts) => {
  const n = counts.reduce((s, c) => s + c, 0);
  return n ? counts.reduce((s, c, y) => s + c * y, 0) / n : NaN;
};

/** A list experiment's section of the results page. */
export function listSection(q, level, width) {
  const [section, meta] = questionCard(q, 'list');
  meta.textContent = `${countOf(q.n, 'respondent')} · a list experiment: ${q.J} control items, and the sensitive `
    + `one for the treatment list · ε = ∞ (an answer of 0 or ${q.J + 1} in the longer list reveals it)`;
  if (q.estimate === null) {
    section.append(html('p', 'empty', q.n === 0 ? 'No responses yet.'
      : 'Too few responses yet (each list needs two).'));
    return section;
  }
  const text = estimateTexts({ est: q.estimate, low: q.ci_low, high: q.ci_high, se: q.std_error });
  const headline = html('p', 'mean-headline');
  headline.append(html('strong', '', `${text.est} hold “${q.sensitive}”`),
    ` (${level} confidence interval ${text.interval})`);
  const shares = { ...q, text: `Share holding: ${q.sensitive}`, low: 0, high: 1 };
  section.append(headline, meanChart(shares, level, width));
  const details = html('details');
  const rows = [
    ['Estimated share (difference in means)', text.est],
    ['Standard error', text.se],
    [`${level} confidence interval`, text.interval],
    ['Control list: respondents, mean count', `${q.n_control}, ${mean(q.counts.control).toFixed(3)}`],
    ['Treatment list: respondents, mean count', `${q.n_treatment}, ${mean(q.counts.treatment).toFixed(3)}`],
    [`Treatment answers of 0 (said no) and ${q.J + 1} (said yes)`, `${q.floor} and ${q.ceiling}`],
  ];
  details.append(html('summary', '', 'Show the numbers'), html('p', 'table-note', 'The mean count of the '
    + 'treatment list minus that of the control list estimates the share holding the sensitive item; the '
    + 'interval can reach outside 0 to 1. The floor and ceiling answers are the ones that revealed it.'),
  numbersTable(['', 'Value'], rows));
  section.append(details);
  return section;
}
