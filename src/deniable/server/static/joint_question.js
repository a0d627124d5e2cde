// A joint question (type "joint") on the survey page: one set of choices per part, randomized together.
import { fromConfig } from './deniable.js';
import { chosenIn, epsilonText, fieldsetFor, NAMES, radios } from './form.js';

/** A joint question (type "joint"): one set of choices per part; the answers are randomized together, as
 * one cell of their product (row-major: the last part varies fastest), by the joint's oracle. */
export function jointDevice(question, name) {
  const config = question.mechanism;
  if (!config || config.mechanism !== 'joint') throw new Error(`question ${question.id} has no joint configuration`);
  const oracle = fromConfig(config.params.oracle);
  const parts = question.questions;
  const fieldset = fieldsetFor(question, `Your ${parts.length} answers are randomized together on this device with `
    + `${NAMES[oracle.mechanism] ?? oracle.mechanism}, ${epsilonText(oracle.epsilon)} for all of them`);
  parts.forEach((part, j) => {
    const yesNo = part.categories.length === 2 && part.categories[0] === false && part.categories[1] === true;
    const text = document.createElement('p');
    text.className = 'part';
    text.textContent = part.text;
    fieldset.append(text, radios({ type: yesNo ? 'yes-no' : 'categorical' }, part.categories, `${name}p${j}`));
  });
  return {
    fieldset, epsilon: oracle.epsilon, reveals: false,
    report() {
      let cell = 0;
      for (let j = 0; j < parts.length; j += 1) {
        const i = chosenIn(fieldset, `${name}p${j}`);
        if (i === undefined) return undefined;
        cell = cell * parts[j].categories.length + i;
      }
      return oracle.privatize(cell);
    },
  };
}
