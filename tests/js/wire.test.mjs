// Wire version 2 in the browser client: configurations and reports read with plain JSON.parse.
// The texts below are what the Python library writes (deniable.wire.to_json(m, 2) and
// m.reports_to_json(reports, wire_version=2)).
import assert from 'node:assert/strict';
import test from 'node:test';

import { fromConfig, parseJSON, reportFromWire, reportToWire } from '../../src/deniable/server/static/deniable.js';

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
