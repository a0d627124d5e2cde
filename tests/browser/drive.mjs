// Drive the survey and results pages in a real headless Chromium (playwright-core, system
// browser). Reads a plan as JSON on stdin, writes what happened as JSON on stdout.
//
// plan = {
//   chromium: "/usr/bin/chromium", base_url: "http://127.0.0.1:PORT",
//   visits: [{path: "/s/ID?invite=T", answers: [option index per question] | null,
//             (an answer may also be {value: n} for a plain integer question, or
//              {option: i, unrelated: j} for a UQTunknown question and its unrelated question)
//             fast: bool, try_empty_submit: bool, screenshot: name, fail_first_post: bool,
//             refused_first: {value: text, screenshot: name} (a free-text answer the page must
//             refuse to send: typed into question 0, submitted, the refusal recorded and
//             screenshotted at 900 and 390 px wide, then the visit's answers replace it)}],
//   (a "fast" visit answers with DOM clicks and, on a ?kiosk=1 page, reuses the page;
//    answers to questions the page does not show, as under allocation: sample, are skipped)
//   results_path: "/s/ID/results", screenshot_dir: "/tmp/...",
//   docs_path: "/docs" (optional: Swagger UI must render),
//   admin_results: {path: "/s/ID/results", token: "..."} (optional: a results page for
//                  administrators, opened without and then with the token as HTTP Basic password),
// }
// Every request the pages make is recorded (method, url, post body); console errors and
// uncaught page errors are reported; every console message is kept (out.console), every
// Content-Security-Policy violation the page reports is logged as a console error, and the
// headers of every page (document) answer are kept (out.documents).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

// playwright-core from DENIABLE_PLAYWRIGHT_CORE (node_env.py: npm's or the Python playwright's)
const core = process.env.DENIABLE_PLAYWRIGHT_CORE;
const { chromium } = await import(core ? pathToFileURL(path.join(core, 'index.mjs')).href : 'playwright-core');

const ARGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
];

let text = '';
process.stdin.setEncoding('utf8');
for await (const chunk of process.stdin) text += chunk;
const plan = JSON.parse(text);

const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'deniable-chromium-'));
const context = await chromium.launchPersistentContext(profile, {
  executablePath: plan.chromium,
  headless: true,
  args: ARGS,
  viewport: { width: 900, height: 900 },
});
const out = { requests: [], problems: [], visits: [], screenshots: {}, results: null, console: [], documents: [] };
const pendingHeaders = [];

// Runs before the page's own scripts (injected by the driver, so the page's policy does not apply).
function reportViolations() {
  window.addEventListener('securitypolicyviolation', (e) => {
    console.error(`CSP violation: ${e.violatedDirective} blocked ${e.blockedURI || 'inline'} (${e.sourceFile}:${e.lineNumber})`);
  });
}

async function instrument(ctx) {
  await ctx.addInitScript(reportViolations);
  ctx.on('response', (r) => {
    if (r.request().resourceType() === 'document') {
      pendingHeaders.push(r.allHeaders().then((headers) => out.documents.push({ url: r.url(), status: r.status(), headers })));
    }
  });
}

function watch(page) {
  page.setDefaultTimeout(20000);
  page.on('console', (m) => {
    out.console.push({ type: m.type(), text: m.text(), url: page.url() });
    if (m.type() === 'error') out.problems.push(`console: ${m.text()}`);
  });
  page.on('pageerror', (e) => out.problems.push(`pageerror: ${e.message}`));
  return page;
}

async function visit(page, v, index) {
  const started = Date.now();
  let failNext = Boolean(v.fail_first_post);
  if (failNext) {
    await page.route('**/responses', async (route) => {
      if (failNext) {
        failNext = false;
        await route.abort('connectionreset');
      } else {
        await route.continue();
      }
    });
  }
  // a fast visit reuses a page left ready by the previous one (kiosk mode: "Next respondent")
  const url = plan.base_url + v.path;
  const reuse = v.fast && page.url() === url && (await page.getAttribute('body', 'data-state')) === 'ready';
  if (!reuse) {
    await page.goto(url);
    await page.waitForSelector('body[data-state="ready"], .status.error, .status.info');
  }
  const record = { index, reused: reuse, ready_ms: Date.now() - started };
  if (v.answers) {
    if (v.try_empty_submit) {
      const before = out.requests.length;
      await page.click('#submit');
      record.empty_submit_status = await page.textContent('#status');
      record.empty_submit_missing = await page.locator('fieldset.missing').count();
      record.empty_submit_requests = out.requests.length - before;
    }
    if (v.refused_first) {
      const before = out.requests.length;
      await page.fill('#q0-value', v.refused_first.value);
      record.refused_hint = await page.textContent('#q0-hint');
      await page.click('#submit');
      await page.waitForSelector('#status.error');
      record.refused_status = (await page.textContent('#status')).trim();
      record.refused_flagged = await page.locator('fieldset.missing').count();
      record.refused_focus = await page.evaluate(() => document.activeElement?.id ?? null);
      record.refused_invalid = await page.getAttribute('#q0-value', 'aria-invalid');
      record.refused_state = await page.getAttribute('body', 'data-state');
      const name = v.refused_first.screenshot;
      out.screenshots[name] = path.join(plan.screenshot_dir, `${name}.png`);
      await page.screenshot({ path: out.screenshots[name], fullPage: true });
      await page.setViewportSize({ width: 390, height: 844 });
      out.screenshots[`${name}_phone`] = path.join(plan.screenshot_dir, `${name}-phone.png`);
      await page.screenshot({ path: out.screenshots[`${name}_phone`], fullPage: true });
      await page.setViewportSize({ width: 900, height: 900 });
      await page.waitForTimeout(300); // the layout settles at the new width before the next clicks
      record.refused_requests = out.requests.slice(before).filter((r) => r.method === 'POST').length;
    }
    if (v.fast) {
      // one round trip: DOM clicks on the radio buttons and the submit button (the page's own
      // event handlers run as for a user); the other visits use playwright's real input
      await page.evaluate((answers) => {
        answers.forEach((a, q) => {
          if (!document.querySelector(`[id^="q${q}-"]`)) return; // not shown (allocation: sample)
          if (typeof a === 'number') {
            document.getElementById(`q${q}-o${a}`).click();
          } else if ('value' in a) {
            const input = document.getElementById(`q${q}-value`);
            input.value = String(a.value);
            input.dispatchEvent(new Event('change', { bubbles: true }));
          } else {
            document.getElementById(`q${q}-o${a.option}`).click();
            document.getElementById(`q${q}u-o${a.unrelated}`).click();
          }
        });
        document.getElementById('submit').click();
      }, v.answers);
    } else {
      for (const [q, a] of v.answers.entries()) {
        if (!(await page.locator(`[id^="q${q}-"]`).count())) continue; // not shown (allocation: sample)
        if (typeof a === 'number') {
          await page.check(`#q${q}-o${a}`);
        } else if ('value' in a) {
          await page.fill(`#q${q}-value`, String(a.value));
        } else {
          await page.check(`#q${q}-o${a.option}`);
          await page.check(`#q${q}u-o${a.unrelated}`);
        }
      }
      if (v.screenshot) {
        out.screenshots[v.screenshot] = path.join(plan.screenshot_dir, `${v.screenshot}.png`);
        await page.screenshot({ path: out.screenshots[v.screenshot], fullPage: true });
      }
      await page.click('#submit');
    }
    await page.waitForSelector('body[data-state="submitted"], #retry:not([hidden])');
  }
  record.asked = await page.getAttribute('body', 'data-asked');
  record.state = await page.getAttribute('body', 'data-state');
  record.status = (await page.textContent('#status')).trim();
  record.privacy = (await page.textContent('#privacy-epsilon')).trim();
  record.metas = await page.$$eval('fieldset.question .meta', (els) => els.map((e) => e.textContent));
  record.hints = await page.$$eval('fieldset.question .hint', (els) => els.map((e) => e.textContent));
  record.submit_disabled = await page.isDisabled('#submit');
  record.retry_visible = await page.isVisible('#retry');
  record.ms = Date.now() - started;
  if (v.fail_first_post) await page.unroute('**/responses');
  if (v.fast && record.state === 'submitted' && (await page.isVisible('#next'))) {
    await page.click('#next');
    await page.waitForSelector('body[data-state="ready"]');
  }
  return record;
}

try {
  await instrument(context);
  context.on('request', (r) => out.requests.push({ method: r.method(), url: r.url(), body: r.postData() }));
  context.on('requestfailed', (r) => out.requests.push({ method: r.method(), url: r.url(), failed: r.failure()?.errorText }));
  const page = watch(context.pages()[0] ?? (await context.newPage()));
  for (const [i, v] of plan.visits.entries()) out.visits.push(await visit(page, v, i));

  if (plan.results_path) {
    await page.goto(plan.base_url + plan.results_path);
    await page.waitForSelector('body[data-state="loaded"]');
    await page.click('#refresh');
    await page.waitForSelector('body[data-state="loaded"]');
    out.results = await page.$$eval('section.question-result', (sections) => sections.map((s) => ({
      id: s.dataset.question,
      heading: s.querySelector('h2').textContent,
      meta: s.querySelector('.meta').textContent,
      bars: s.querySelectorAll('svg rect.bar').length,
      whiskers: s.querySelectorAll('svg line.whisker').length,
      svg_role: s.querySelector('svg')?.getAttribute('role'),
      svg_title: s.querySelector('svg title')?.textContent,
      svg_desc: s.querySelector('svg desc')?.textContent,
      rows: [...s.querySelectorAll('table.numbers tbody tr')].map((tr) => tr.textContent),
      values: [...s.querySelectorAll('svg text.value')].map((t) => t.textContent),
      ranges: [...s.querySelectorAll('svg text.value-interval')].map((t) => t.textContent),
      head: [...s.querySelectorAll('table.numbers thead th')].map((th) => th.textContent),
      note: s.querySelector('details .table-note')?.textContent,
      kind: s.dataset.kind ?? null,
      test: s.querySelector('p.test')?.textContent ?? null,
    })));
    // a survey in rounds: each question's trend over the rounds and the devices' budgets
    out.rounds = await page.$$eval('section.round-trend', (sections) => sections.map((s) => ({
      id: s.dataset.question,
      heading: s.querySelector('h2').textContent,
      lines: s.querySelectorAll('svg polyline.line').length,
      bands: s.querySelectorAll('svg polygon.band').length,
      dots: s.querySelectorAll('svg circle.dot').length,
      meta: s.querySelector('.meta').textContent,
      svg_desc: s.querySelector('svg desc')?.textContent,
      rows: [...s.querySelectorAll('table.numbers tbody tr')].map((tr) => tr.textContent),
    })));
    out.budgets = (await page.$('section.budgets')) ? await page.textContent('section.budgets') : null;
    out.rounds_intro = (await page.$('.rounds-intro')) ? await page.textContent('.rounds-intro') : null;
    out.results_summary = await page.textContent('#summary');
    out.results_legend = await page.textContent('#legend');
    out.results_shuffled = (await page.isVisible('#shuffled')) ? await page.textContent('#shuffled') : null;
    out.results_target = await page.inputValue('#target');
    out.screenshots.results = path.join(plan.screenshot_dir, 'results.png');
    await page.screenshot({ path: out.screenshots.results, fullPage: true });
    // at a phone's width too (the charts are redrawn at the new width)
    await page.setViewportSize({ width: 390, height: 844 });
    await page.waitForTimeout(300);
    out.screenshots.results_phone = path.join(plan.screenshot_dir, 'results-phone.png');
    await page.screenshot({ path: out.screenshots.results_phone, fullPage: true });
    await page.setViewportSize({ width: 900, height: 900 });
    await page.waitForTimeout(300);
    // the other target (mechanism questions only: a design's prevalence is for the population):
    // the page asks the server again and says so
    if (out.results.some((r) => r.kind === null)) {
      const metas = async () => page.$$eval('section.question-result .meta', (m) => m.map((x) => x.textContent));
      await page.selectOption('#target', 'respondents');
      await page.waitForFunction(() => [...document.querySelectorAll('.meta')].some((m) => m.textContent.includes('these respondents')));
      await page.waitForSelector('body[data-state="loaded"]');
      out.respondents = {
        url: page.url(),
        legend: await page.textContent('#legend'),
        metas: await metas(),
        std_errors: await page.$$eval('table.numbers tbody tr', (rows) => rows.map((tr) => tr.children[2]?.textContent ?? null)),
      };
      out.screenshots.results_respondents = path.join(plan.screenshot_dir, 'results-respondents.png');
      await page.screenshot({ path: out.screenshots.results_respondents, fullPage: true });
    }
  }

  if (plan.docs_path) {
    // Swagger UI from this server's own files: it must draw every operation of the API
    await page.goto(plan.base_url + plan.docs_path);
    await page.waitForSelector('.swagger-ui .opblock');
    out.docs = {
      title: await page.textContent('.swagger-ui .title'),
      operations: await page.locator('.swagger-ui .opblock').count(),
    };
    // open one operation (parameters, example body, highlighted responses) and its "Try it out"
    await page.click('.opblock-post .opblock-summary');
    await page.waitForSelector('.opblock-post .opblock-body .responses-table');
    await page.click('.opblock-post .try-out__btn');
    await page.waitForSelector('.opblock-post .body-param textarea');
    out.docs.opened = (await page.textContent('.opblock-post .opblock-body')).length;
    out.screenshots.docs = path.join(plan.screenshot_dir, 'docs.png');
    await page.screenshot({ path: out.screenshots.docs, fullPage: false });
  }

  if (plan.admin_results) {
    // a results page for administrators: refused without the token; with it (the browser's
    // answer to the Basic challenge, as a user typing it into the dialog) the page and its data load
    const { path: adminPath, token } = plan.admin_results;
    const browser = await chromium.launch({ executablePath: plan.chromium, headless: true, args: ARGS });
    try {
      const anonymous = await browser.newContext({ viewport: { width: 900, height: 900 } });
      await instrument(anonymous);
      const anonymousStatuses = [];
      anonymous.on('response', (r) => anonymousStatuses.push(r.status()));
      out.admin_results = {};
      try {  // headless Chromium has no dialog to ask: it gives up on the challenge
        await watch(await anonymous.newPage()).goto(plan.base_url + adminPath);
      } catch (e) {
        out.admin_results.anonymous_error = e.message.split('\n')[0];
      }
      out.admin_results.anonymous_statuses = anonymousStatuses;
      const admin = await browser.newContext({
        viewport: { width: 900, height: 900 },
        httpCredentials: { username: 'admin', password: token },
      });
      await instrument(admin);
      const statuses = [];
      admin.on('response', (r) => statuses.push({ url: r.url(), status: r.status() }));
      const adminPage = watch(await admin.newPage());
      await adminPage.goto(plan.base_url + adminPath);
      await adminPage.waitForSelector('body[data-state="loaded"]');
      out.admin_results.summary = await adminPage.textContent('#summary');
      out.admin_results.statuses = statuses;
      out.screenshots.admin_results = path.join(plan.screenshot_dir, 'admin-results.png');
      await adminPage.screenshot({ path: out.screenshots.admin_results, fullPage: true });
    } finally {
      await browser.close();
    }
  }
} finally {
  await context.close();
  fs.rmSync(profile, { recursive: true, force: true });
}
await Promise.all(pendingHeaders);
process.stdout.write(JSON.stringify(out));
