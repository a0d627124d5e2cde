// Wire version 2 in the browser client: configurations and reports read with plain JSON.parse.
// The texts below are what the Python library writes (deniable.wire.to_json(m, 2) and
// m.reports_to_json(reports, wire_version=2)).
import assert from 'node:assert/strict';
import test from 'node:test';

import { surveyFingerprint } from '../../src/deniable/server/static/client_state.js';
import {
  fromConfig, parseJSON, reportFromWire, reportToWire, surveyFromWire,
} from '../../src/deniable/server/static/deniable.js';

const V1 = '{"domain": ["a", "b", "c"], "epsilon": 40.0, "format": "deniable.mechanism", "mechanism": "grr", "params": {"other_numerator": 39, "truth_numerator": 9180025406643779430}, "version": 1}';
const V2 = '{"domain": ["a", "b", "c"], "epsilon": 40.0, "format": "deniable.mechanism", "mechanism": "grr", "params": {"other_numerator": 39, "truth_numerator": "9180025406643779430"}, "version": 2}';

test('a version-2 configuration read with JSON.parse gives the version-1 mechanism', () => {
  const one = fromConfig(V1);
  const two = fromConfig(JSON.parse(V2));
  assert.equal(two.epsilon, one.epsilon);
  assert.deepEqual(two.domain, one.domain);
  const bytes = (n) => new Uint8Array(n).fill(7);
  const a = fromConfig(V1, { randomBytes: bytes });
  const b = fromConfig(JSON.parse(V2), { randomBytes: bytes });
  assert.deepEqual(b.privatizeMany(['a', 'b', 'c']), a.privatizeMany(['a', 'b', 'c']));
});

test('another version is refused naming the field', () => {
  assert.throws(() => fromConfig({ ...parseJSON(V1), version: 3 }), /version/);
});

test('reports: the wide fields are decimal strings in version 2, exact both ways', () => {
  const wire = JSON.parse('[{"cohort": 0, "bits": "13605847194321567219"}, {"seed": "255", "value": 6}]');
  const reports = wire.map((r) => reportFromWire(r, 2));
  assert.equal(reports[0].bits, 13605847194321567219n);
  assert.equal(reports[1].seed, 255n);
  assert.deepEqual(reports.map((r) => reportToWire(r, 2)), wire);
  assert.deepEqual(reportFromWire({ seed: 5, value: 0 }, 1), { seed: 5, value: 0 });
  assert.throws(() => reportFromWire({ seed: 5, value: 0 }, 2), /decimal string in wire version 2/);
  const dbitflip = { buckets: [1, 3], bits: [0, 1] };
  assert.deepEqual(reportFromWire(dbitflip, 2), dbitflip);
  assert.deepEqual(reportToWire(dbitflip, 2), dbitflip);
});

// a survey as GET /surveys/{id} gives it in version 1 and with ?wire_version=2 (a design's channel
// with a float written 2.0); Python's survey_fingerprint gives both the same fingerprint
const CHANNEL = '{"format": "deniable.mechanism", "version": 1, "mechanism": "binary-rr", "domain": [false, true], "epsilon": null, "params": {"truth_numerator": 1, "scale": 2.0}}';
const survey = (config, version) => `{"id": "s", "questions": [{"id": "a", "mechanism": ${config}}, `
  + '{"id": "d", "design": {"model": "FR"}, '
  + `"channels": [${CHANNEL.replace('"version": 1', `"version": ${version}`)}]}, {"id": "p", "randomized": false}]}`;
const PYTHON_FINGERPRINT = 'cff41c791cc12c45f2fcd7816f60d7b4'; // deniable.client.survey_fingerprint of either

test('a survey of version 2 is read in version 1: the same randomizers and the same kept state', () => {
  const one = parseJSON(survey(V1, 1));
  const two = surveyFromWire(parseJSON(survey(V2, 2)));
  assert.equal(surveyFingerprint(one), PYTHON_FINGERPRINT);
  assert.equal(surveyFingerprint(two), PYTHON_FINGERPRINT);
  assert.equal(two.questions[0].mechanism.params.truth_numerator, 9180025406643779430n);
  assert.equal(two.questions[1].channels[0].version, 1);
  assert.equal(fromConfig(two.questions[0].mechanism).epsilon, fromConfig(V1).epsilon);
  assert.deepEqual(two.questions[2], { id: 'p', randomized: false });
  assert.deepEqual(surveyFromWire(one), one); // version 1 as it is
});
