// The survey designs (designs.js, wire id "rr-design") against deniable.survey.
//
// Calibrated: each model's reports have the exact distribution of Python's transition_matrix()
// (a two-group design: each group's times 1/2). This file spends alpha = 1e-6 in all (the
// probability that a correct sampler fails any of its chi-square tests), split evenly
// (Bonferroni) over fixtures.n_tests tests; the critical values and merged bins come from
// tests/js/fixtures/make_design_fixtures.py, which asserts the power (>= 1 - 1e-9) of each
// test against a design with one p off, and the power check below draws from that design.
//
// Exact: every configuration of the fixture is accepted by fromConfig exactly when Python's
// dn.from_config accepts it, with the same epsilon (Infinity where Python's is infinite, null
// in the fixture); the respondent's truth is checked as Python's Design checks it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DeniableError, fromConfig, stringify } from '../../src/deniable/server/static/deniable.js';
import { chiSquareTests, loadFixtures, seededBytes } from './helpers.mjs';

const fixtures = loadFixtures('designs.json');
const SOURCES = ['seeded', 'crypto'];

function draw(config, c, source, label) {
  const options = source === 'seeded' ? { randomBytes: seededBytes(label) } : {};
  return fromConfig(config, options).privatizeMany(new Array(Number(c.n)).fill(c.value));
}

test('fixture accounting: the calibrated tests below are the n_tests alpha is split over', () => {
  assert.equal(2 * fixtures.chi_square.length, fixtures.n_tests);
  assert.ok(Math.abs(fixtures.alpha_per_test * fixtures.n_tests - 1e-6) < 1e-15);
});

chiSquareTests(fixtures, SOURCES, draw, (c) => stringify(c.wrong_config.params));

test('fromConfig accepts exactly the design configs Python accepts, with its epsilon', () => {
  const disagree = [];
  for (const { config, accepted, epsilon, python } of fixtures.configs) {
    let built = null;
    let error = null;
    try {
      built = fromConfig(config);
    } catch (e) {
      assert.ok(e instanceof DeniableError, `${stringify(config.params)}: ${e}`);
      error = e.message;
    }
    if ((built !== null) !== accepted) {
      disagree.push(`${stringify(config.params)} ${stringify(config.domain)}: Python ${accepted ? 'accepts' : `refuses (${python})`}, JS ${error ?? 'accepts'}`);
      continue;
    }
    if (!accepted) continue;
    // the epsilon designs.js computes (the config's own epsilon left out)
    const { epsilon: own } = fromConfig({ ...config, epsilon: undefined });
    const same = epsilon === null ? own === Infinity : Math.abs(own - epsilon) <= 1e-12 * Math.max(1, epsilon);
    if (!same) disagree.push(`${stringify(config.params)}: epsilon ${own}, Python ${epsilon}`);
  }
  assert.deepEqual(disagree, []);
  // both kinds are there, the boundary cases of issue 25's defect 6 among the accepted
  assert.ok(fixtures.configs.filter((c) => c.accepted).length > 100 && fixtures.configs.some((c) => !c.accepted));
});

const config = (params, domain = [false, true]) => ({
  format: 'deniable.mechanism', version: 1, mechanism: 'rr-design', domain, params,
});

test("a design's truth is checked as Python's Design checks it: only its answers", () => {
  const refuses = (m, values) => values.forEach((v) => assert.throws(
    () => m.privatize(v), (e) => e instanceof DeniableError && e.field.startsWith('value'), stringify(v),
  ));
  const fr = fromConfig(config({ model: 'FR', p: ['1/6', '1/6'] }));
  refuses(fr, ['no', 'No', 'false', 'maybe', 'yes', 2, -1, 0.5, null, undefined, {}, [true]]);
  for (const v of [true, false, 0, 1]) assert.equal(typeof fr.privatize(v), 'boolean');
  const three = fromConfig(config({ model: 'FR', p: ['1/6', '1/6', '1/6'] }, [0, 1, 2]));
  refuses(three, [true, false, 3, -1, 1.5, '1', null]);
  for (const v of [0, 1, 2]) assert.ok([0, 1, 2].includes(three.privatize(v)));
  const uqt = fromConfig(config({ model: 'UQTunknown', p: ['1/4', '3/4'] }));
  refuses(uqt, [true, 'no', { answer: true }, { answer: true, unrelated: 'no' }, { answer: 2, unrelated: false },
    { answer: true, unrelated: false, group: 1 }, [true, false]]);
  const report = uqt.privatize({ answer: true, unrelated: 0 });
  assert.deepEqual(Object.keys(report), ['group', 'answer']);
  assert.ok([1, 2].includes(report.group) && typeof report.answer === 'boolean');
});

test('a design without randomization in a group reports its truth there (CDM with p = [0, x])', () => {
  // group 1 of CDM p = [0, 1/2] says "yes" exactly for carriers; a cheater-free device never lies
  const m = fromConfig(config({ model: 'CDM', p: ['0', '1/2'] }), { randomBytes: seededBytes('cdm-0') });
  assert.equal(m.epsilon, Infinity);
  for (const r of m.privatizeMany(new Array(200).fill(false))) if (r.group === 1) assert.equal(r.answer, false);
  for (const r of m.privatizeMany(new Array(200).fill(true))) assert.equal(r.answer, true);
});

test("Kuk's report counts red cards (an integer with cards > 1, a boolean with one card)", () => {
  const three = fromConfig(config({ model: 'Kuk', p: ['1/3', '2/3'], cards: 3 }));
  assert.ok(three.privatizeMany(new Array(50).fill(true)).every((r) => Number.isInteger(r) && r >= 0 && r <= 3));
  const one = fromConfig(config({ model: 'Kuk', p: ['1/3', '2/3'] }));
  assert.ok(one.privatizeMany([true, false]).every((r) => typeof r === 'boolean'));
});
