// The vendored third-party modules (src/deniable/server/static/vendor/) are exactly what the
// pinned npm packages give: `npm run vendor` writes them, this test fails when they drift.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import test from 'node:test';
import { expectedFiles, PACKAGES, presentFiles, VENDOR } from '../../tools/vendor.mjs';

const root = path.resolve(VENDOR, '..', '..', '..', '..', '..');
const installed = Object.keys(PACKAGES).every((name) => fs.existsSync(path.join(root, 'node_modules', ...name.split('/'), 'package.json')));

test('the vendored files equal the pinned npm packages (npm run vendor)', { skip: !installed && 'node_modules lacks the vendored packages: run npm ci' }, () => {
  const expected = expectedFiles();
  assert.deepEqual(presentFiles().sort(), expected.map(({ target }) => target.split(path.sep).join('/')).sort(),
    'the vendor folder holds other files than npm run vendor writes');
  for (const { target, bytes } of expected) {
    assert.ok(bytes.equals(fs.readFileSync(path.join(VENDOR, target))), `${target} differs from the pinned package: run npm ci && npm run vendor`);
  }
});

test('every vendored package ships its licence', () => {
  for (const { folder } of Object.values(PACKAGES)) {
    assert.match(fs.readFileSync(path.join(VENDOR, folder, 'LICENSE'), 'utf8'), /MIT License|Permission is hereby granted/);
  }
});
