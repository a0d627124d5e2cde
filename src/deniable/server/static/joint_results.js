// Results of a joint question (kind "joint"): each part's shares (a marginal of the joint estimate) as a bar
// chart, drawn by the page's own chart function (passed in), and per pair of parts Cramér's V with its
// interval and the test of independence that accounts for the randomization.
import { html, numbersTable, questionCard } from './dom.js';
import { countOf, fixed, scientific } from './format.js';

const yesNo = (categories) => categories.length === 2 && categories[0] === false && categories[1] === true;

function pValue(p) {
  if (!Number.isFinite(p)) return '–';
  return p < 0.001 ? `p = ${scientific(p)}` : `p = ${fixed(p, 3)}`;
}

/** A joint question's section of the results page; `chart(q, index, level)` draws one part's shares. */
export function jointSection(q, level, chart) {
  const [section, meta] = questionCard(q);
  meta.textContent = `${countOf(q.n, 'respondent')}, ε = ${fixed(q.epsilon)} for all ${q.questions.length} answers `
    + `together · ${q.mechanism} on their ${q.questions.reduce((k, p) => k * p.categories.length, 1)} combinations`;
  if (q.n === 0) {
    section.append(html('p', 'empty', 'No responses yet.'));
    return section;
  }
  q.questions.forEach((part, j) => {
    section.append(html('h3', 'slice', part.text));
    const shares = { ...part, type: yesNo(part.categories) ? 'yes-no' : 'categorical' };
    section.append(chart(shares, `${q.id}-${j}`, level));
  });
  const rows = q.pairs.map((pair) => {
    const z = 1.959963984540054;
    const v = pair.cramers_v;
    const se = pair.cramers_v_std_error;
    const interval = Number.isFinite(v) && Number.isFinite(se)
      ? `${fixed(Math.max(0, v - z * se), 3)} to ${fixed(Math.min(1, v + z * se), 3)}` : '–';
    // a pair is named by its parts' ids (short); each part's text heads its chart above
    return [`${pair.first} × ${pair.second}`, Number.isFinite(v) ? fixed(v, 3) : '–', interval,
      pValue(pair.p_value)];
  });
  section.append(html('h3', 'slice', 'How the answers go together'));
  section.append(numbersTable(['Pair of questions', "Cramér's V", '95% interval', 'Independence'], rows));
  section.append(html('p', 'table-note', "Cramér's V: 0 when two answers are independent, 1 when one determines "
    + 'the other; its interval is poor near 0, where the test of independence is the better guide. Independence: '
    + 'the p-value of a Wald test that accounts for the randomization (a small p: the answers go together).'));
  return section;
}
