// The shuffled guarantee on the results page, stated only where the responses really came through a
// shuffler. results.shuffler (a survey without rounds) and each round's shuffler (a survey with rounds:
// one response per device per round, so each round is stated on its own) hold the sizes of the shuffled
// batches the responses were stored from. A statement needs every one of those responses to have come in
// a batch (shuffler.responses === n); it is Feldman, McMillan & Talwar's central (ε, δ) for the smallest
// batch, δ = min(1e-6, n^-1.1). Anything else says why it states none.
import { html, numbersTable } from './dom.js';
import { fixed, grouped, scientific, significant } from './format.js';

/** The batches as words: "2 batches of 50 to 70 responses". */
function batchesText(shuffler) {
  const sizes = shuffler.smallest === shuffler.largest
    ? `of ${grouped(shuffler.smallest)} responses`
    : `of ${grouped(shuffler.smallest)} to ${grouped(shuffler.largest)} responses`;
  return `${grouped(shuffler.batches)} batch${shuffler.batches === 1 ? '' : 'es'} ${sizes}`;
}

/** Whether `n` responses all came through the shuffler, so that a shuffled guarantee may be stated for them. */
export const allShuffled = (n, shuffled, shuffler) => Boolean(shuffled && shuffler?.batches && shuffler.responses === n);

/** The central guarantee the smallest batch gives, as words (`allShuffled` must hold). */
function guarantee(shuffled, shuffler) {
  const local = fixed(shuffled.epsilon_local);
  // "centrally" only for a bound that reads smaller than the local ε (not 0.49999 for 0.5)
  return Number(significant(shuffler.epsilon)) < Number(significant(shuffled.epsilon_local))
    ? `each response is also (${significant(shuffler.epsilon)}, ${scientific(shuffler.delta)})-DP centrally, `
      + `not only ε = ${local} locally`
    : `still only ε = ${local}: the smallest batch is too few to hide among`;
}

/** The sentence stating the shuffled guarantee of a survey's `n` responses, or null where none holds. */
export function shuffledText(n, shuffled, shuffler) {
  if (!allShuffled(n, shuffled, shuffler)) return null;
  return `These ${grouped(n)} responses came through a shuffler, in ${batchesText(shuffler)}, each in a uniformly `
    + `random order and without arrival times: ${guarantee(shuffled, shuffler)} (Feldman, McMillan & Talwar's bound `
    + 'for the smallest batch; δ = min(1e-6, n^-1.1)).';
}

/** One round's row: its responses, those that came through the shuffler, the batches, and the guarantee or why none. */
function roundRow(r) {
  const through = r.shuffler?.responses ?? 0;
  const batches = r.shuffler?.batches ? batchesText(r.shuffler) : 'none';
  let stated;
  if (allShuffled(r.n_responses, r.shuffled, r.shuffler)) stated = guarantee(r.shuffled, r.shuffler);
  else if (!r.shuffled) stated = 'none: the questions give no finite local ε to start from';
  else stated = `none: ${grouped(r.n_responses - through)} of its responses did not come in a shuffled batch of this round`;
  return [`${r.round}`, grouped(r.n_responses), grouped(through), batches, stated];
}

/** A survey with rounds collected through a shuffler: per round, the batches and the guarantee (null otherwise). */
export function shuffledRoundsCard(rounds) {
  if (!rounds.some((r) => r.shuffler)) return null;
  const section = html('section', 'card shuffled-rounds');
  section.append(html('h2', '', 'Shuffled, per round'));
  section.append(html('p', 'meta', 'A device answers once per round, so each round is stated on its own, for the '
    + 'shuffled batches its responses came in (each in a uniformly random order, without arrival times), and only '
    + 'when every one of its responses came in one. A batch the collector served across the end of a round counts '
    + 'in neither. The bound is Feldman, McMillan & Talwar’s for the smallest batch; δ = min(1e-6, n^-1.1).'));
  const table = numbersTable(['Round', 'Responses', 'Through the shuffler', 'Batches', 'Central guarantee'],
    rounds.map(roundRow), { caption: 'The shuffled guarantee of each round' });
  table.querySelectorAll('tbody td:last-child').forEach((cell) => cell.classList.add('value-text')); // words: wrapped
  section.append(table);
  return section;
}
