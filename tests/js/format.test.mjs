// The results pages' number formatting (format.js): an estimate, its interval and its standard
// error share the decimals chosen from the standard error, for shares and means alike.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { countOf, decimalsFor, estimateTexts } from '../../src/deniable/server/static/format.js';

test('decimals show two significant digits of the standard error', () => {
  assert.equal(decimalsFor(31.2), 0);
  assert.equal(decimalsFor(3.12), 1);
  assert.equal(decimalsFor(0.0312), 3);
  assert.equal(decimalsFor(0.0123, 100), 1); // 1.23 percentage points
  assert.equal(decimalsFor(0.0009, 100), 3); // 0.09 points
  assert.equal(decimalsFor(1e-12, 100), 6); // capped
  assert.equal(decimalsFor(450), 0);
  assert.equal(decimalsFor(NaN), 1);
  assert.equal(decimalsFor(0, 1, 2), 2);
});

test('a mean and its interval read with the same decimals', () => {
  const t = estimateTexts({ est: 122.375, low: 61.25, high: 183.5, se: 31.2 }, 'number');
  assert.deepEqual(t, { est: '122', low: '61', high: '184', se: '31', interval: '61 to 184', range: '61–184' });
  const fine = estimateTexts({ est: 4.5678, low: 4.1, high: 5.0356, se: 0.2345 }, 'number');
  assert.equal(fine.interval, '4.10 to 5.04');
  assert.equal(fine.est, '4.57');
  assert.equal(estimateTexts({ est: 12345.6, low: 11000, high: 13691.2, se: 687 }, 'number').interval, '11,000 to 13,691');
});

test('a share is printed in percent with decimals from its standard error, never clamped', () => {
  const t = estimateTexts({ est: 0.20134, low: 0.18, high: 0.2227, se: 0.0109 });
  assert.deepEqual(t, { est: '20.1%', low: '18.0%', high: '22.3%', se: '1.1%', interval: '18.0% to 22.3%', range: '18.0–22.3%' });
  const tight = estimateTexts({ est: 0.501234, low: 0.49712, high: 0.50532, se: 0.0021 }, 'share');
  assert.equal(tight.interval, '49.71% to 50.53%');
  assert.equal(estimateTexts({ est: 0.01, low: -0.05, high: 0.07, se: 0.031 }).range, '-5.0–7.0%');
});

test('undefined values are a dash', () => {
  const t = estimateTexts({ est: null, low: null, high: null, se: null });
  assert.deepEqual(t, { est: '–', low: '–', high: '–', se: '–', interval: '–', range: '–' });
});

test('counts are thousands separated and singular for one', () => {
  assert.equal(countOf(3004, 'response'), '3,004 responses');
  assert.equal(countOf(1, 'respondent'), '1 respondent');
  assert.equal(countOf(0, 'respondent'), '0 respondents');
  assert.equal(countOf(1234567, 'respondent'), '1,234,567 respondents');
});

test('the pages format every number here: fixed, significant, scientific, percent, wholeNumber, numberText', async () => {
  const { fixed, grouped, numberText, percent, scientific, significant, wholeNumber } = await import('../../src/deniable/server/static/format.js');
  assert.equal(fixed(1.6094379), '1.61');
  assert.equal(fixed(2.25, 1), '2.3');
  assert.equal(significant(Math.exp(3)), '20.1');
  assert.equal(significant(95), '95');
  assert.equal(scientific(1.234e-7), '1.2e-7');
  assert.equal(percent(0.2012), '20.1%');
  assert.equal(percent(0.5, 0), '50%');
  assert.equal(percent(NaN), '–');
  assert.equal(wholeNumber(1204.4), '1,204');
  assert.equal(wholeNumber(undefined), '–');
  assert.equal(grouped(3004), '3,004');
  assert.equal(numberText(12345.678), '12,346');
  assert.equal(numberText(2.5), '2.5');
  assert.equal(numberText(Infinity), '–');
});
