// Lighthouse (node_modules/lighthouse, pinned in package.json) on a list of URLs, RUNS times each:
// the mobile preset (Lighthouse's default: a Moto G Power), a fresh headless Chromium per run with the
// flags of tools/chromium.py (no host but 127.0.0.1 resolves), throttled by METHOD: "simulate"
// (Lighthouse's default: a fast load, and the slow phone's timings estimated from it) or "devtools"
// (the load itself slowed through the DevTools protocol: the CPU 4x, the network to the preset's
// latency and bandwidth).
//
//   CHROME_PATH=/usr/bin/chromium node benchmarks/lighthouse.mjs OUT.json RUNS METHOD URL...
//
// Writes to OUT.json one row per run: {url, run, method, wall_s, scores, fcp_ms, lcp_ms, tbt_ms, cls,
// transfer_bytes, lcp_element, render_blocking, offsite, failing} or {url, run, method, error};
// benchmarks/bench_lighthouse.py takes the medians.
import fs from 'node:fs';
import lighthouse from 'lighthouse';
import * as chromeLauncher from 'chrome-launcher';

const [out, runsArg, method, ...urls] = process.argv.slice(2);
const runs = Number(runsArg);
if (!out || !(runs > 0) || !['simulate', 'devtools'].includes(method) || urls.length === 0) {
  console.error('usage: node lighthouse.mjs OUT.json RUNS simulate|devtools URL...');
  process.exit(2);
}
const FLAGS = ['--headless=new', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
  '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1'];
const CATEGORIES = ['performance', 'accessibility', 'best-practices', 'seo'];

function row(lhr) {
  const audits = lhr.audits;
  const value = (id) => audits[id]?.numericValue ?? null;
  const requests = audits['network-requests']?.details?.items ?? [];
  return {
    scores: Object.fromEntries(CATEGORIES.map((c) => [c, Math.round(lhr.categories[c].score * 100)])),
    fcp_ms: value('first-contentful-paint'),
    lcp_ms: value('largest-contentful-paint'),
    tbt_ms: value('total-blocking-time'),
    cls: value('cumulative-layout-shift'),
    transfer_bytes: value('total-byte-weight'),
    lcp_element: audits['largest-contentful-paint-element']?.details?.items?.[0]?.items?.[0]?.node?.snippet ?? null,
    render_blocking: (audits['render-blocking-resources']?.details?.items ?? []).map((r) => r.url),
    offsite: requests.map((r) => r.url).filter((u) => !/^(https?:\/\/127\.0\.0\.1[:/]|data:|blob:)/.test(u)),
    // Audits of the three 100-point categories that did not pass: what keeps a score below 100.
    failing: CATEGORIES.slice(1).flatMap((c) => lhr.categories[c].auditRefs
      .filter((r) => r.weight > 0 && audits[r.id].score !== null && audits[r.id].score < 1).map((r) => r.id)),
  };
}

const rows = [];
for (const url of urls) {
  for (let run = 0; run < runs; run++) {
    const chrome = await chromeLauncher.launch({ chromePath: process.env.CHROME_PATH, chromeFlags: FLAGS });
    const start = Date.now();
    try {
      const result = await lighthouse(url, { port: chrome.port, output: 'json', logLevel: 'error',
        onlyCategories: CATEGORIES, throttlingMethod: method });
      const lhr = result.lhr;
      if (lhr.runtimeError) throw new Error(`${lhr.runtimeError.code}: ${lhr.runtimeError.message}`);
      rows.push({ url, run, method, wall_s: (Date.now() - start) / 1000, ...row(lhr) });
      const r = rows.at(-1);
      console.error(`  ${url} ${method} run ${run + 1}/${runs}: performance ${r.scores.performance}, `
        + `TBT ${Math.round(r.tbt_ms)} ms, LCP ${Math.round(r.lcp_ms)} ms (${r.wall_s.toFixed(0)} s)`);
    } catch (error) {
      rows.push({ url, run, method, error: String(error.message || error).slice(0, 300) });
      console.error(`  ${url} ${method} run ${run + 1}/${runs}: failed: ${rows.at(-1).error}`);
    } finally {
      await chrome.kill();
    }
  }
}
fs.writeFileSync(out, JSON.stringify(rows, null, 1));
