// The results page's shuffled statement (shuffled_results.js): stated only where every response came in a
// shuffled batch, for the smallest batch; otherwise none (a survey, or a round of a survey with rounds).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { allShuffled, shuffledText } from '../../src/deniable/server/static/shuffled_results.js';

const SHUFFLED = { n: 1200, epsilon_local: 2, epsilon: 0.31, delta: 4e-7 };
const BATCHES = { batches: 3, smallest: 300, largest: 500, responses: 1200, epsilon: 0.52, delta: 1e-6 };

test('a survey whose every response came in a batch states the bound of its smallest batch', () => {
  const text = shuffledText(1200, SHUFFLED, BATCHES);
  assert.match(text, /^These 1,200 responses came through a shuffler, in 3 batches of 300 to 500 responses/);
  assert.match(text, /\(0\.52, 1e-6\)-DP centrally, not only ε = 2\.00 locally/);
});

test('a smallest batch too few to hide among says so', () => {
  const text = shuffledText(6, { ...SHUFFLED, n: 6 }, { batches: 1, smallest: 6, largest: 6, responses: 6, epsilon: 2, delta: 1e-6 });
  assert.match(text, /in 1 batch of 6 responses/);
  assert.match(text, /still only ε = 2\.00: the smallest batch is too few to hide among/);
});

test('no statement unless every response came through the shuffler', () => {
  assert.equal(shuffledText(1201, SHUFFLED, BATCHES), null); // one response came another way
  assert.equal(shuffledText(1200, SHUFFLED, null), null); // not collected through a shuffler
  assert.equal(shuffledText(1200, SHUFFLED, { ...BATCHES, batches: 0, responses: 0 }), null);
  assert.equal(shuffledText(1200, null, BATCHES), null); // no finite local epsilon
  assert.equal(allShuffled(1200, SHUFFLED, BATCHES), true);
});
