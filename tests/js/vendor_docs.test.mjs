// The documentation's KaTeX (docs/assets/vendor/katex/) is what the pinned npm package gives:
// `npm run vendor-docs` writes it, this test fails when it drifts.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import test from 'node:test';
import { DOCS_VENDOR, expectedDocsFiles, presentDocsFiles, woff2Only } from '../../tools/vendor_docs.mjs';

const root = path.resolve(DOCS_VENDOR, '..', '..', '..', '..');
const installed = fs.existsSync(path.join(root, 'node_modules', 'katex', 'package.json'));

test('the docs KaTeX equals the pinned npm package (npm run vendor-docs)', { skip: !installed && 'node_modules lacks katex: run npm ci' }, () => {
  const expected = expectedDocsFiles();
  assert.deepEqual(presentDocsFiles().sort(), expected.map(({ target }) => target).sort());
  for (const { target, bytes } of expected) {
    assert.ok(bytes.equals(fs.readFileSync(path.join(DOCS_VENDOR, target))), `${target} differs: run npm ci && npm run vendor-docs`);
  }
});

test('the shipped style sheet names only fonts that are shipped', () => {
  const css = fs.readFileSync(path.join(DOCS_VENDOR, 'katex.min.css'), 'utf8');
  const fonts = [...css.matchAll(/url\(([^)]+)\)/g)].map((m) => m[1]);
  assert.ok(fonts.length >= 20);
  for (const font of fonts) assert.ok(fs.existsSync(path.join(DOCS_VENDOR, font)), `${font} is named but not shipped`);
  assert.match(fs.readFileSync(path.join(DOCS_VENDOR, 'LICENSE'), 'utf8'), /MIT License/);
});

test('only the WOFF and TTF fallbacks are dropped from a @font-face rule', () => {
  const rule = '@font-face{src:url(fonts/KaTeX_Main-Bold.woff2) format("woff2"),url(fonts/KaTeX_Main-Bold.woff) format("woff"),url(fonts/KaTeX_Main-Bold.ttf) format("truetype")}';
  assert.equal(woff2Only(rule), '@font-face{src:url(fonts/KaTeX_Main-Bold.woff2) format("woff2")}');
});
