// Copies the browser's third-party code from node_modules into the served static folder.
//
//   npm ci && npm run vendor          # after changing a pinned version in package.json
//
// The browser client has no bundler at run time: the Python package serves
// src/deniable/server/static/ as it is, so the ES modules of the pinned npm packages it imports
// are copied there unchanged (vendor/<package>/), with their licence. A package whose modules
// import other packages by bare name (@hpke/core imports @hpke/common), which a browser cannot
// resolve without an import map (an inline script, refused by the pages' CSP), is instead bundled
// into one ES module by the pinned esbuild (`bundle`: the file and the names it exports).
// tests/js/vendor.test.mjs fails when the copy differs from what the pinned packages give.
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const VENDOR = path.join(ROOT, 'src', 'deniable', 'server', 'static', 'vendor');

/** What is vendored: per npm package, the files the static modules import (and their imports). */
export const PACKAGES = Object.freeze({
  '@noble/hashes': {
    folder: 'noble-hashes',
    files: ['LICENSE', 'utils.js', '_u64.js', '_md.js', '_blake.js', 'sha2.js', 'sha3.js', 'hmac.js', 'legacy.js', 'blake2.js'],
  },
  '@hpke/core': {
    folder: 'hpke',
    files: ['LICENSE'],
    bundle: { file: 'hpke.js', exports: ['Aes128Gcm', 'CipherSuite', 'DhkemX25519HkdfSha256', 'HkdfSha256'] },
  },
});

/** ``exports`` of the package ``name`` as one ES module, bundled by the pinned esbuild (deterministic). */
function bundled(name, exports) {
  pinnedVersion('esbuild');
  const esbuild = createRequire(import.meta.url)('esbuild');
  const result = esbuild.buildSync({
    stdin: { contents: `export { ${exports.join(', ')} } from '${name}';`, resolveDir: ROOT, loader: 'js' },
    bundle: true, format: 'esm', target: 'es2020', write: false, legalComments: 'inline', charset: 'utf8',
  });
  return Buffer.from(result.outputFiles[0].contents);
}

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
  for (const [name, { folder, files, bundle }] of Object.entries(PACKAGES)) {
    const source = path.join(ROOT, 'node_modules', ...name.split('/'));
    const installed = JSON.parse(fs.readFileSync(path.join(source, 'package.json'), 'utf8')).version;
    const version = pinnedVersion(name);
    if (installed !== version) throw new Error(`node_modules holds ${name} ${installed}, package.json pins ${version}: run npm ci`);
    for (const file of files) out.push({ target: path.join(folder, file), bytes: fs.readFileSync(path.join(source, file)) });
    if (bundle) out.push({ target: path.join(folder, bundle.file), bytes: bundled(name, bundle.exports) });
    const how = bundle ? `bundled with its dependencies by esbuild ${pinnedVersion('esbuild')}` : 'copied unchanged from its npm package';
    const readme = `${name} ${version}, ${how} by \`npm run vendor\` `
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
