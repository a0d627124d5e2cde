// Copies the browser's third-party code from node_modules into the served static folder.
//
//   npm ci && npm run vendor          # after changing a pinned version in package.json
//
// The browser client has no bundler at run time: the Python package serves
// src/deniable/server/static/ as it is, so the ES modules of the pinned npm packages it imports
// are copied there unchanged (vendor/<package>/), with their licence. tests/js/vendor.test.mjs
// fails when the copy differs from what the pinned package gives.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const VENDOR = path.join(ROOT, 'src', 'deniable', 'server', 'static', 'vendor');

/** What is vendored: per npm package, the files the static modules import (and their imports). */
export const PACKAGES = Object.freeze({
  '@noble/hashes': {
    folder: 'noble-hashes',
    files: ['LICENSE', 'utils.js', '_u64.js', '_md.js', '_blake.js', 'sha2.js', 'sha3.js', 'hmac.js', 'legacy.js', 'blake2.js'],
  },
});

/** The pinned version of an npm package (package.json's devDependencies, an exact version). */
export function pinnedVersion(name) {
  const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
  const version = manifest.devDependencies?.[name];
  if (!/^\d+\.\d+\.\d+$/.test(version ?? '')) throw new Error(`package.json must pin ${name} to an exact version; got ${version}`);
  return version;
}

/**
 * The vendored files as they must be: [{target, bytes}] from node_modules (the README names the
 * version). Throws if node_modules lacks a package or holds another version than the pinned one.
 */
export function expectedFiles() {
  const out = [];
  for (const [name, { folder, files }] of Object.entries(PACKAGES)) {
    const source = path.join(ROOT, 'node_modules', ...name.split('/'));
    const installed = JSON.parse(fs.readFileSync(path.join(source, 'package.json'), 'utf8')).version;
    const version = pinnedVersion(name);
    if (installed !== version) throw new Error(`node_modules holds ${name} ${installed}, package.json pins ${version}: run npm ci`);
    for (const file of files) out.push({ target: path.join(folder, file), bytes: fs.readFileSync(path.join(source, file)) });
    const readme = `${name} ${version}, copied unchanged from its npm package by \`npm run vendor\` `
      + '(tools/vendor.mjs).\nDo not edit these files: change the pinned version in package.json and run '
      + '`npm ci && npm run vendor`.\n';
    out.push({ target: path.join(folder, 'README.md'), bytes: Buffer.from(readme) });
  }
  return out;
}

/** The vendored files found in the static folder, relative to it. */
export function presentFiles() {
  if (!fs.existsSync(VENDOR)) return [];
  return fs.readdirSync(VENDOR, { recursive: true })
    .filter((name) => fs.statSync(path.join(VENDOR, name)).isFile())
    .map((name) => name.split(path.sep).join('/'));
}

/** Rewrites the static vendor folder from node_modules. */
export function vendor() {
  fs.rmSync(VENDOR, { recursive: true, force: true });
  for (const { target, bytes } of expectedFiles()) {
    fs.mkdirSync(path.dirname(path.join(VENDOR, target)), { recursive: true });
    fs.writeFileSync(path.join(VENDOR, target), bytes);
  }
}

export { VENDOR };

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  vendor();
  console.log(`vendored ${expectedFiles().length} files into ${path.relative(ROOT, VENDOR)}`);
}
