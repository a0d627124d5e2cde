// The results by slice (?by=QUESTION): each frequency and number question estimated per answer of a
// plain question. Shares get one bar chart per slice on one axis (drawn by the page's own chart
// function, passed in), means a table; every slice says how many respondents it has, and a slice under the question's
// min_n is marked "too few reports": its interval says little.
import { html, numbersTable, questionCard } from './dom.js';
import { countOf, estimateTexts, grouped } from './format.js';

const label = (value) => (value === true ? 'Yes' : value === false ? 'No' : String(value));

/** One slice's headline: the answer, its respondents and, for a small slice, the warning. */
function sliceHeading(by, q, s) {
  const head = html('h3', s.small ? 'slice small' : 'slice', `${by.text} ${label(s.value)} · ${countOf(s.n, 'respondent')}`);
  if (s.small) head.append(html('span', 'badge', ` too few reports (under ${grouped(q.min_n)})`));
  return head;
}

function meanRows(q) {
  return q.slices.map((s) => {
    const text = estimateTexts({ est: s.estimate, low: s.ci_low, high: s.ci_high, se: s.std_error }, 'number');
    return [label(s.value), grouped(s.n), s.estimate === null ? '–' : text.est, s.estimate === null ? '–' : text.interval,
      s.small ? 'yes' : ''];
  });
}

/** The section of the results by slice; `chart(q, index, level)` draws one question's shares. */
export function slicedSection(by, level, chart) {
  const wrap = html('div', 'sliced');
  wrap.dataset.by = by.question;
  wrap.append(html('h2', 'pooled', `By answer to “${by.text}”`));
  wrap.append(html('p', 'legend', `Each question estimated separately for the respondents of each answer. A slice `
    + 'is marked “too few reports” when its 95% interval can be wider than ±10 percentage points on a share '
    + '(10% of the range on a mean) whatever the truth, or it has fewer than 30 reports.'));
  by.questions.forEach((q, qi) => {
    const [section, meta] = questionCard({ id: q.id, text: q.text, kind: `sliced-${q.kind}` });
    meta.textContent = `${q.mechanism} · ${q.slices.length} slices`;
    if (q.kind === 'mean') {
      section.append(numbersTable(['Answer', 'Respondents', 'Mean', `${level} confidence interval`, 'Too few reports'],
        meanRows(q)));
    } else {
      // one axis for every slice of the question, so that their bars compare at a glance
      const span = q.slices.flatMap((s) => [...(s.ci_low ?? []), ...(s.ci_high ?? []), ...(s.estimate ?? [])]);
      q.slices.forEach((s, si) => {
        section.append(sliceHeading(by, q, s));
        if (s.estimate === null) {
          section.append(html('p', 'empty', 'No responses in this slice.'));
          return;
        }
        const shares = { text: `${q.text} (${label(s.value)})`, categories: q.categories, type: q.type, ...s };
        section.append(chart(shares, `s${qi}-${si}`, level, span));
      });
    }
    wrap.append(section);
  });
  return wrap;
}
