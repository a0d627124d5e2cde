// A list experiment on the survey page (type "list-experiment"): this browser draws the list once, with
// a fair bit from crypto.getRandomValues (the treatment list, with the sensitive item, with probability
// exactly 1/2), shows it with the sensitive item at a uniformly drawn position, and sends only
// {"treat": 0 | 1, "count": k}: how many items apply, never which.
import { WordPool, secureRandomBytes, uniformBelowSmall } from './sampling.js';

/** The list a respondent sees: {treat, items} (the control items, plus the sensitive one if treat = 1). */
export function drawList(question, randomBytes = secureRandomBytes) {
  const pool = new WordPool(randomBytes, 64);
  const treat = uniformBelowSmall(pool, 2);
  const items = [...question.items];
  if (treat === 1) items.splice(uniformBelowSmall(pool, items.length + 1), 0, question.sensitive);
  return { treat, items };
}

/** The question's form part and device ({fieldset, epsilon, reveals, report()}) in `fieldset`. */
export function listDevice(question, name, fieldset) {
  const { treat, items } = drawList(question);
  fieldset.classList.add('list-experiment');
  const list = document.createElement('ul');
  list.className = 'list-items';
  for (const item of items) {
    const li = document.createElement('li');
    li.textContent = item;
    list.append(li);
  }
  const wrap = document.createElement('div');
  wrap.className = 'options';
  const label = document.createElement('label');
  label.htmlFor = `${name}-count`;
  label.textContent = 'How many of these? ';
  const input = document.createElement('input');
  Object.assign(input, { type: 'number', name, id: `${name}-count`, min: 0, max: items.length, step: 1 });
  const hint = document.createElement('span');
  hint.className = 'hint';
  hint.textContent = ` (0 to ${items.length}; say how many, not which)`;
  wrap.append(label, input, hint);
  fieldset.append(list, wrap);
  return {
    fieldset, epsilon: Infinity, reveals: true,
    report() {
      const v = Number(input.value);
      return input.value !== '' && Number.isInteger(v) && v >= 0 && v <= items.length
        ? { treat, count: v } : undefined;
    },
  };
}
