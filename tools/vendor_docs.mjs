// Copies KaTeX from node_modules into the documentation's assets, so the site renders its math
// without asking any other server for a script, a style sheet or a font.
//
//   npm ci && npm run vendor-docs     # after changing katex's pinned version in package.json
//
// What is copied: katex.min.js, contrib/auto-render.min.js, the style sheet and the WOFF2 fonts,
// with the licence. The one change: the style sheet's @font-face rules name only the WOFF2 file
// (every browser that runs KaTeX reads WOFF2), so the WOFF and TTF copies are not shipped.
// tests/js/vendor_docs.test.mjs fails when the copy differs from what the pinned package gives.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { pinnedVersion } from './vendor.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const DOCS_VENDOR = path.join(ROOT, 'docs', 'assets', 'vendor', 'katex');
const FALLBACK_FONTS = /,url\(fonts\/[\w-]+\.woff\) format\("woff"\),url\(fonts\/[\w-]+\.ttf\) format\("truetype"\)/g;

/** The style sheet as shipped: WOFF2 fonts only. */
export function woff2Only(css) {
  return css.replace(FALLBACK_FONTS, '');
}

/** The files as they must be: [{target, bytes}], from node_modules/katex at the pinned version. */
export function expectedDocsFiles() {
  const source = path.join(ROOT, 'node_modules', 'katex');
  const installed = JSON.parse(fs.readFileSync(path.join(source, 'package.json'), 'utf8')).version;
  const version = pinnedVersion('katex');
  if (installed !== version) throw new Error(`node_modules holds katex ${installed}, package.json pins ${version}: run npm ci`);
  const dist = path.join(source, 'dist');
  const out = [
    { target: 'LICENSE', bytes: fs.readFileSync(path.join(source, 'LICENSE')) },
    { target: 'katex.min.js', bytes: fs.readFileSync(path.join(dist, 'katex.min.js')) },
    { target: 'contrib/auto-render.min.js', bytes: fs.readFileSync(path.join(dist, 'contrib', 'auto-render.min.js')) },
    { target: 'katex.min.css', bytes: Buffer.from(woff2Only(fs.readFileSync(path.join(dist, 'katex.min.css'), 'utf8'))) },
  ];
  for (const font of fs.readdirSync(path.join(dist, 'fonts')).filter((f) => f.endsWith('.woff2')).sort()) {
    out.push({ target: `fonts/${font}`, bytes: fs.readFileSync(path.join(dist, 'fonts', font)) });
  }
  const readme = `katex ${version}, copied from its npm package by \`npm run vendor-docs\` (tools/vendor_docs.mjs);\n`
    + 'the style sheet names the WOFF2 fonts only. Do not edit these files: change the pinned version\n'
    + 'in package.json and run `npm ci && npm run vendor-docs`.\n';
  out.push({ target: 'README.md', bytes: Buffer.from(readme) });
  return out;
}

/** The files found in the docs' KaTeX folder, relative to it. */
export function presentDocsFiles() {
  if (!fs.existsSync(DOCS_VENDOR)) return [];
  return fs.readdirSync(DOCS_VENDOR, { recursive: true })
    .filter((name) => fs.statSync(path.join(DOCS_VENDOR, name)).isFile())
    .map((name) => name.split(path.sep).join('/'));
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  fs.rmSync(DOCS_VENDOR, { recursive: true, force: true });
  const files = expectedDocsFiles();
  for (const { target, bytes } of files) {
    fs.mkdirSync(path.dirname(path.join(DOCS_VENDOR, target)), { recursive: true });
    fs.writeFileSync(path.join(DOCS_VENDOR, target), bytes);
  }
  console.log(`vendored ${files.length} files into ${path.relative(ROOT, DOCS_VENDOR)}`);
}
