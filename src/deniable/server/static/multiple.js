// A choose-several question on the survey page (type "multiple"): a box per option, at most max_choices
// ticked (the others are disabled at the limit); the ticked options, as a list, are randomized by the
// question's set-valued mechanism (ranges.js: padding and sampling, then its oracle, every draw exact).
import { epsilonText, fieldsetFor, option } from './form.js';

/** The question's {fieldset, epsilon, reveals, memoizes, report()}; `oracleName`: its oracle in words. */
export function multipleDevice(question, name, mechanism, oracleName) {
  const most = question.max_choices;
  const fieldset = fieldsetFor(question, `Choose up to ${most}, or none. One of your choices, or a blank, drawn at `
    + `random on this device, is randomized with ${oracleName}, ${epsilonText(mechanism.epsilon)}`);
  const options = document.createElement('div');
  options.className = 'options';
  const boxes = question.options.map((choice, i) => {
    const [wrap, input] = option('checkbox', name, i, String(choice));
    options.append(wrap);
    return input;
  });
  const limit = () => {
    const full = boxes.filter((b) => b.checked).length >= most;
    for (const b of boxes) if (!b.checked) b.disabled = full;
  };
  for (const b of boxes) b.addEventListener('change', limit);
  fieldset.append(options);
  return {
    fieldset, epsilon: mechanism.epsilon, reveals: false, memoizes: false,
    report() {
      const chosen = question.options.filter((_, i) => boxes[i].checked);
      return chosen.length <= most ? mechanism.privatize(chosen) : undefined;
    },
  };
}
