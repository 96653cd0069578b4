// Drives Debian's chromium through `cadre dashboard` for e2e/tests/80-dashboard.bats.
//
//   node dashboard.js
// Environment: DASH_URL (the printed URL, with its one-time code), NS (the test's namespace),
// BLOCKER (a running job that holds all but one GPU node), OUT (screenshots go here),
// LOGS (1: check the log tail for the line the test wrote), CHROMIUM (the
// browser, default /usr/bin/chromium), KUBECTL (default kubectl, with $KUBECONFIG).
// puppeteer-core comes from the npm cache scripts/browser-deps fills (NODE_PATH).
// Each step prints one line; the first failure exits 1 with what the page showed.
'use strict';

const { execFileSync } = require('child_process');
const fs = require('fs');
const path = require('path');
const puppeteer = require('puppeteer-core');

const env = (k, d) => process.env[k] || d;
const URL = env('DASH_URL'), NS = env('NS'), BLOCKER = env('BLOCKER', 'blocker');
const OUT = env('OUT', '.'), LOGS = env('LOGS', '0') === '1';
const JOB = 'dash-train';
const TIMEOUT = 90000;

function step(msg) { console.log('browser: ' + msg); }

function kubectl(args, input) {
  return execFileSync(env('KUBECTL', 'kubectl'), args, { input, encoding: 'utf8' });
}

const jobYaml = `apiVersion: cadre.dev/v1alpha1
kind: TrainingJob
metadata:
  name: ${JOB}
spec:
  numNodes: 2
  resources:
    accelerators: "H100:8"
    cpus: "8"
    memory: 64Gi
  image: registry.invalid/cadre/e2e:latest
  run: python train.py
`;

// Distinct colours of a PNG, counted by the browser itself (a canvas of a blank page).
async function distinctColours(browser, png) {
  const p = await browser.newPage();
  try {
    return await p.evaluate(async (b64) => {
      const img = new Image();
      img.src = 'data:image/png;base64,' + b64;
      await img.decode();
      const c = document.createElement('canvas');
      c.width = img.width; c.height = img.height;
      const g = c.getContext('2d');
      g.drawImage(img, 0, 0);
      const d = g.getImageData(0, 0, c.width, c.height).data;
      const seen = new Set();
      for (let i = 0; i < d.length; i += 4 * 7) seen.add((d[i] << 16) | (d[i + 1] << 8) | d[i + 2]);
      return seen.size;
    }, png.toString('base64'));
  } finally {
    await p.close();
  }
}

async function shot(browser, page, name) {
  const file = path.join(OUT, name + '.png');
  const png = Buffer.from(await page.screenshot({ path: file, fullPage: true }));
  const colours = await distinctColours(browser, png);
  step(`screenshot ${file}: ${colours} distinct colours`);
  if (colours < 8) throw new Error(`${name}.png looks blank (${colours} colours)`);
}

const row = (key) => `tr[data-key="${key}"]`;

async function waitPhase(page, key, phase) {
  await page.waitForSelector(`${row(key)}[data-phase="${phase}"]`, { timeout: TIMEOUT });
  step(`${key} is ${phase} on the page`);
}

// Cancel the job whose page is open, through the confirmation, and see it go.
// The page renders again on every push (a log line, a phase), which replaces its elements:
// a handle found one moment may be detached the next. So the click happens inside the page,
// in the same task that finds the element.
async function clickWhenReady(page, sel) {
  await page.waitForFunction((s) => {
    const e = document.querySelector(s);
    if (!e) return false;
    e.click();
    return true;
  }, { timeout: TIMEOUT }, sel);
}

async function cancelOpenJob(page) {
  await clickWhenReady(page, '#btn-cancel:not([disabled])');
  await clickWhenReady(page, '#modal:not([hidden]) #modal-yes');
  await page.waitForSelector('#gone, #action-error', { timeout: TIMEOUT });
  const refused = await page.$('#action-error');
  if (refused) throw new Error('cancel: ' + await refused.evaluate((e) => e.textContent));
}

async function openJob(page, name) {
  await page.evaluate((n, ns) => { location.hash = '#/job/' + ns + '/' + n; }, name, NS);
}

async function run() {
  const browser = await puppeteer.launch({
    executablePath: env('CHROMIUM', '/usr/bin/chromium'),
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--no-first-run'],
    defaultViewport: { width: 1280, height: 800 },
  });
  try {
    const page = await browser.newPage();
    page.on('pageerror', (e) => step('page error: ' + e.message));
    await page.goto(URL, { waitUntil: 'load' });
    if (new globalThis.URL(page.url()).search) throw new Error('the code stayed in the URL');
    await page.waitForFunction(() => document.getElementById('conn').textContent === 'live',
                               { timeout: TIMEOUT });
    step('opened the printed URL: the page is live and the code became a session cookie');
    await page.waitForSelector(row(`${NS}/${BLOCKER}`), { timeout: TIMEOUT });
    step(`the cluster's job ${BLOCKER} is listed`);

    // Record every phase the row shows, however briefly, while the page stays loaded.
    await page.evaluate((key) => {
      window.__phases = [];
      const look = () => {
        const r = document.querySelector(`tr[data-key="${key}"]`);
        const p = r && r.getAttribute('data-phase');
        if (p && window.__phases[window.__phases.length - 1] !== p) window.__phases.push(p);
      };
      new MutationObserver(look).observe(document.body, { subtree: true, childList: true, attributes: true });
    }, `${NS}/${JOB}`);
    // A reload would start a new window without this mark.
    await page.evaluate(() => { window.__sameDocument = true; });
    kubectl(['-n', NS, 'apply', '-f', '-'], jobYaml);
    step(`kubectl apply ${JOB}`);
    await waitPhase(page, `${NS}/${JOB}`, 'Queued');
    const why = await page.$eval(`${row(`${NS}/${JOB}`)} td.why`, (e) => e.textContent);
    if (!/InsufficientCapacity|QueuedBehind/.test(why)) throw new Error('no reason shown: ' + why);
    step(`it waits, and the page says why: ${why}`);
    await shot(browser, page, 'jobs');

    await openJob(page, BLOCKER);
    await cancelOpenJob(page);
    step(`cancelled ${BLOCKER} with its button and the confirmation: the page says it is gone`);

    await page.evaluate(() => { location.hash = '#/'; });
    await waitPhase(page, `${NS}/${JOB}`, 'Running');
    const seen = await page.evaluate(() => window.__phases);
    const server = await page.$eval(row(`${NS}/${JOB}`), (e) => e.getAttribute('data-phases'));
    step(`phases the row showed: ${seen.join(' -> ')}; phases the server saw: ${server}`);
    const order = server.split(',');
    const q = order.indexOf('Queued'), s = order.indexOf('Starting'), r = order.indexOf('Running');
    if (!(q >= 0 && s > q && r > s)) throw new Error('not Queued -> Starting -> Running: ' + server);
    if (seen.indexOf('Queued') < 0 || seen.indexOf('Running') < seen.indexOf('Queued'))
      throw new Error('the row did not go from Queued to Running: ' + seen);
    if (!(await page.evaluate(() => window.__sameDocument === true)))
      throw new Error('the page was reloaded');
    if (await page.$(row(`${NS}/${BLOCKER}`))) throw new Error(`${BLOCKER} is still listed`);

    await openJob(page, JOB);
    await page.waitForFunction(() => {
      const rows = [...document.querySelectorAll('#ranks tbody tr')];
      return rows.length === 2 && rows.every((r) => r.children[1].textContent !== '-' &&
                                                    r.children[4].textContent === 'Running');
    }, { timeout: TIMEOUT });
    const ranks = await page.$$eval('#ranks tbody tr', (rs) => rs.map((r) => r.innerText.replace(/\s+/g, ' ')));
    step('its page shows both ranks: ' + ranks.join(' | '));
    if (LOGS) {
      await page.waitForFunction(() => {
        const t = (document.getElementById('log') || {}).textContent || '';
        const lines = t.split('\n');
        return ['0: ', '1: '].every((p) => lines.some((l) => l.startsWith(p + 'dashboard tail')));
      }, { timeout: TIMEOUT });
      step('and log lines of both ranks, with their rank prefixes');
    }
    await shot(browser, page, 'job');

    await page.evaluate(() => { location.hash = '#/cluster'; });
    await page.waitForFunction(() => document.querySelectorAll('#nodes tbody tr').length > 0 &&
                               document.getElementById('gpu-chart'), { timeout: TIMEOUT });
    const holders = await page.$$eval('#nodes tbody tr', (rs) => rs.map((r) => r.innerText).join('\n'));
    if (!holders.includes(`${NS}/${JOB}`)) throw new Error('no GPU node shows the job holding it');
    step('the cluster page shows the GPU nodes, the job holding them, and the chart');
    if (process.env.ZONES) {
      // The test put the GPU nodes in two zones, a level of ClusterTopology default.
      await page.waitForFunction(() => ['zone-a', 'zone-b'].every((z) =>
        document.querySelector(`#topology tr[data-level="topology.kubernetes.io/zone"][data-domain="${z}"]`)),
      { timeout: TIMEOUT });
      const zones = await page.$$eval('#topology tbody tr', (rs) => rs.map((r) => r.innerText.replace(/\s+/g, ' ')));
      if (!zones.some((z) => /^zone zone-a \d+ \d+ \d+\/\d+$/.test(z)))
        throw new Error('the topology table does not count zone-a: ' + JSON.stringify(zones));
      step('and the topology levels, each zone with its free nodes and GPUs');
    }
    await shot(browser, page, 'cluster');

    await openJob(page, JOB);
    await cancelOpenJob(page);
    await page.evaluate(() => { location.hash = '#/'; });
    await page.waitForFunction((sel) => !document.querySelector(sel), { timeout: TIMEOUT },
                               row(`${NS}/${JOB}`));
    step(`cancelled ${JOB}: it is gone from the list`);
  } finally {
    await browser.close();
  }
}

// MODE=forbidden: the dashboard reads with a kubeconfig that may not delete; pressing
// cancel on job JOB_NAME must show the API server's 403 on the page, and the job stays.
async function forbidden() {
  const browser = await puppeteer.launch({
    executablePath: env('CHROMIUM', '/usr/bin/chromium'), headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--no-first-run'],
    defaultViewport: { width: 1280, height: 800 },
  });
  try {
    const page = await browser.newPage();
    await page.goto(URL, { waitUntil: 'load' });
    await openJob(page, env('JOB_NAME'));
    await clickWhenReady(page, '#btn-cancel:not([disabled])');
    await clickWhenReady(page, '#modal:not([hidden]) #modal-yes');
    await page.waitForSelector('#action-error', { timeout: TIMEOUT });
    const text = await page.$eval('#action-error', (e) => e.textContent);
    step('the page shows the refusal: ' + text);
    if (!/\(403\)/.test(text) || !/cannot delete/.test(text)) throw new Error('not the 403: ' + text);
    await shot(browser, page, 'forbidden');
  } finally {
    await browser.close();
  }
}

// MODE=scale: the namespace holds COUNT suspended jobs named scale-N. The list pages them,
// the filter finds one, its Resume and Suspend buttons change spec.suspend through the API;
// then the page stays open while the test stops the API server (it prints "browser: live"
// and waits for "disconnected"), and recovers when the API server is back.
async function scale() {
  const count = Number(env('COUNT', '500')), one = 'scale-' + Math.floor(count * 0.87);
  const browser = await puppeteer.launch({
    executablePath: env('CHROMIUM', '/usr/bin/chromium'), headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--no-first-run'],
    defaultViewport: { width: 1280, height: 800 },
  });
  const pager = () => document.querySelector('.pager') && document.querySelector('.pager').textContent;
  try {
    const page = await browser.newPage();
    await page.goto(URL, { waitUntil: 'load' });
    await page.waitForFunction((n) => {
      const p = document.querySelector('.pager');
      return p && p.textContent.includes('(' + n + ' jobs)');
    }, { timeout: TIMEOUT }, count);
    const shown = await page.$$eval('#jobs tbody tr', (rs) => rs.length);
    step(`the list has ${count} jobs: ${await page.evaluate(pager)}, ${shown} rows shown`);
    if (shown !== 50) throw new Error(`${shown} rows on a page, want 50`);
    const pages = Math.ceil(count / 50);
    for (let i = 1; i < pages; i++) await clickWhenReady(page, '#next:not([disabled])');
    await page.waitForFunction((n) => document.querySelector('.pager').textContent.includes(
      'page ' + n + ' of ' + n), { timeout: TIMEOUT }, pages);
    const last = await page.$$eval('#jobs tbody tr', (rs) => rs.length);
    step(`the last page: ${await page.evaluate(pager)}, ${last} rows`);
    if (last !== count - 50 * (pages - 1)) throw new Error(`${last} rows on the last page`);
    await page.type('#f-name', one);
    await page.waitForFunction((k) => {
      const rs = document.querySelectorAll('#jobs tbody tr');
      return rs.length === 1 && rs[0].dataset.key === k;
    }, { timeout: TIMEOUT }, `${NS}/${one}`);
    step(`the name filter finds ${one} alone`);

    const suspended = () => kubectl(['-n', NS, 'get', 'trainingjob', one, '-o',
                                     'jsonpath={.spec.suspend}']).trim();
    await openJob(page, one);
    await clickWhenReady(page, '#btn-resume');
    await clickWhenReady(page, '#modal:not([hidden]) #modal-yes');
    await page.waitForSelector('#btn-suspend', { timeout: TIMEOUT });
    if (suspended() === 'true') throw new Error('Resume left spec.suspend true');
    step(`Resume: ${one} has spec.suspend "${suspended()}"`);
    await clickWhenReady(page, '#btn-suspend:not([disabled])');
    await clickWhenReady(page, '#modal:not([hidden]) #modal-yes');
    await page.waitForSelector('#btn-resume', { timeout: TIMEOUT });
    if (suspended() !== 'true') throw new Error('Suspend did not set spec.suspend');
    step(`Suspend: ${one} has spec.suspend "true" again`);

    await page.evaluate(() => { location.hash = '#/'; });
    await page.evaluate(() => {
      const f = document.getElementById('f-name');
      f.value = '';
      f.dispatchEvent(new Event('input'));
    });
    await page.waitForFunction((n) => document.getElementById('conn').textContent === 'live' &&
                               document.querySelector('.pager').textContent.includes('(' + n + ' jobs)'),
                               { timeout: TIMEOUT }, count);
    step('live');
    await page.waitForFunction(() => document.getElementById('conn').textContent === 'disconnected' &&
                               !document.getElementById('banner').hidden, { timeout: TIMEOUT });
    step('the API server is gone and the page says disconnected');
    await shot(browser, page, 'disconnected');
    await page.waitForFunction((n) => document.getElementById('conn').textContent === 'live' &&
                               document.querySelector('.pager').textContent.includes('(' + n + ' jobs)'),
                               { timeout: TIMEOUT }, count);
    step('the API server is back: the page is live again, with every job');
  } finally {
    await browser.close();
  }
}

({ forbidden, scale }[env('MODE')] || run)().then(() => process.exit(0), (e) => {
  console.error('browser: FAILED: ' + e.message);
  process.exit(1);
});
