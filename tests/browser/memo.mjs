// Persistent client state in a real headless Chromium (playwright-core, system browser).
// Reads {chromium, base_url, page_path, config, other_config, key, values} as JSON on stdin
// (or {chromium, base_url, page_path, cases: [{config, other_config, key, values}, ...]});
// on a page of the collection server it makes a persistentClient (IndexedDB) and records its
// cohort and permanent responses: first visit, after a reload, after a browser restart with
// the same profile, and with a fresh profile. Writes what it saw as JSON on stdout (with
// `cases`: each observation is the list of the cases' observations).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

// playwright-core from DENIABLE_PLAYWRIGHT_CORE (node_env.py: npm's or the Python playwright's)
const core = process.env.DENIABLE_PLAYWRIGHT_CORE;
const { chromium } = await import(core ? pathToFileURL(path.join(core, 'index.mjs')).href : 'playwright-core');

const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'];

let text = '';
process.stdin.setEncoding('utf8');
for await (const chunk of process.stdin) text += chunk;
const plan = JSON.parse(text);
const problems = [];

async function launch(profile) {
  const context = await chromium.launchPersistentContext(profile, { executablePath: plan.chromium, headless: true, args: ARGS });
  const page = context.pages()[0] ?? (await context.newPage());
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  await page.goto(plan.base_url + plan.page_path);
  return { context, page };
}

// in the page: the kept client's cohort, permanent responses and one report per value
async function observe(page, other = false) {
  if (plan.cases) {
    const seen = [];
    for (const c of plan.cases) seen.push(await observeOne(page, other ? c.other_config : c.config, c));
    return seen;
  }
  return observeOne(page, other ? plan.other_config : plan.config, plan);
}

async function observeOne(page, config, { key, values }) {
  return page.evaluate(async ({ config, key, values }) => {
    const d = await import('/static/deniable.js');
    const { persistentClient } = await import('/static/client_state.js');
    try {
      const client = await persistentClient(config, { key });
      return {
        cohort: client.cohort,
        permanent: values.map((v) => client.permanent(v).toString()),
        reports: values.map((v) => d.stringify(client.privatize(v))),
      };
    } catch (e) {
      return { error: e.name, field: e.field, message: e.message };
    }
  }, { config, key, values });
}

const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'deniable-memo-'));
const other = fs.mkdtempSync(path.join(os.tmpdir(), 'deniable-memo-'));
const out = {};
let { context, page } = await launch(profile);
out.first = await observe(page);
await page.reload();
out.reloaded = await observe(page);
out.other_config = await observe(page, true);
await context.close();
({ context, page } = await launch(profile)); // a browser restart: same profile, same IndexedDB
out.restarted = await observe(page);
await context.close();
({ context, page } = await launch(other)); // another device
out.other_profile = await observe(page);
await context.close();
for (const dir of [profile, other]) fs.rmSync(dir, { recursive: true, force: true });
out.problems = problems;
process.stdout.write(JSON.stringify(out));
