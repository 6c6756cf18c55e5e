"""Lighthouse on every page of the book, next to a stock Jupyter Book of the same versions, and real 4x CPU loads.

Both sites are served as GitHub Pages serves them (gzip, ``max-age=600``:
:class:`tools.pages_server.PagesServer`) on 127.0.0.1 and measured by
Lighthouse (npm, pinned in ``package.json``; ``benchmarks/lighthouse.mjs``),
mobile preset, ``$LIGHTHOUSE_RUNS`` runs per page (default 3) with each of
its two throttling methods (``simulate``, its default: a fast load and the
slow phone's timings estimated from it; ``devtools``: the load itself slowed,
CPU 4x and the network to the preset's latency and bandwidth), a fresh
headless Chromium per run that can reach no other host:

* ours: the landing page and every chapter (``_toc.yml``), from
  ``$SITE_DIR`` if set, else a fresh ``make build`` of a copy of the tree;
* stock: ``jupyter-book create`` (its template book) built by the same
  ``jupyter-book``, with nothing changed. Its MathJax comes from a CDN, which
  is blocked here: its formulas are not typeset during the run, so its total
  blocking time leaves the typesetting out (it flatters the stock book).

Reported per page and method: the medians of the four scores, LCP, total
blocking time, CLS and the bytes Lighthouse counts as transferred; then the
medians over pages for each site and their ratio (ours / stock). Then every
page of ours loaded ``$TRACE_RUNS`` times (default 7) with the CPU really slowed 4x
and the network not (loopback), traced (:mod:`benchmarks.page_trace`): the
medians of its total blocking time and largest contentful paint, and what
the main thread did in its long tasks (parsing, style, layout, paint,
script...). Then the bytes a page costs without Lighthouse
(:mod:`tools.page_audit`, what the server sent before any interaction,
gzipped): cold, and a chapter opened after the landing page in the same
browser (a second page, warm cache).

Goal figures, chapter pages (issue 13): performance >= 85, accessibility,
best practices and SEO 100, TBT <= 300 ms, CLS <= 0.02, < 600 KB cold, < 150
KB for a second chapter. Every page (issue 23): performance >= 95 with both
methods; largest contentful paint <= 2.5 s with the CPU really slowed 4x.
Every page (issue 40, "the pages stay light", tightening issue 23's 200 ms):
total blocking time <= 150 ms with the CPU really slowed 4x, and at most 250
KB gzipped sent cold (:data:`COLD_GOAL`). A goal missed makes :func:`main` raise
:class:`benchmarks.GoalMissed` (``make bench`` exits non-zero). Timings on this
shared machine are noisy: medians, the spread of the runs, and the machine's
load average while they ran are shown; re-run when the machine is quiet
before believing a missed timing goal.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import tempfile
from pathlib import Path

from benchmarks import check_goals, page_trace
from tools import ROOT, SITE, chromium, page_audit, toc, workcopy
from tools.pages_server import PagesServer

RUNS = int(os.environ.get("LIGHTHOUSE_RUNS", "3"))
#: Loads a page with the CPU really slowed 4x: one load's total blocking time varies by a factor of two or more on
#: this shared machine (chapter 8: 108 to 240 ms over 7 loads), so a median of 3 could miss a goal by chance (209 ms
#: against the goal's 200, where 7 loads gave 133 ms). Each load takes a few seconds.
TRACE_RUNS = int(os.environ.get("TRACE_RUNS", "7"))
METHODS = ("simulate", "devtools")
RUNNER = Path(__file__).with_name("lighthouse.mjs")
STOCK_PAGES = ["intro.html", "markdown.html", "notebooks.html", "markdown-notebooks.html"]
SCORES = ["performance", "accessibility", "best-practices", "seo"]
GOALS = {"performance": (">=", 85), "accessibility": (">=", 100), "best-practices": (">=", 100),
         "seo": (">=", 100), "tbt_ms": ("<=", 300), "cls": ("<=", 0.02), "transfer_bytes": ("<", 600 * 1024)}
WARM_GOAL = 150 * 1024
#: Every page of ours (issue 23; its blocking time tightened to 150 ms by issue 40): Lighthouse's performance with
#: each method, and a real 4x CPU load's timings.
PAGE_GOALS = {"performance": (">=", 95)}
REAL_GOALS = {"tbt_ms": ("<=", 150), "lcp_ms": ("<=", 2500)}
#: Every page of ours (issue 40): the bytes sent cold, gzipped, before any interaction.
COLD_GOAL = 250 * 1024


def our_site(tmp: Path) -> Path:
    if os.environ.get("SITE_DIR"):
        return Path(os.environ["SITE_DIR"])
    copy = workcopy.copy_tree(ROOT, tmp / "book")
    result = workcopy.build(copy)
    if not result.ok:
        raise RuntimeError(f"make build failed in {copy}:\n{result.log[-3000:]}")
    return copy / SITE


def stock_site(tmp: Path) -> Path:
    """``jupyter-book create`` + ``jupyter-book build`` with the project's own jupyter-book."""
    jupyter_book = ROOT / ".venv" / "bin" / "jupyter-book"
    book = tmp / "stock"
    for command in ([jupyter_book, "create", book], [jupyter_book, "build", book, "--builder", "html"]):
        done = subprocess.run([str(c) for c in command], capture_output=True, text=True, timeout=900)
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(map(str, command))} failed:\n{(done.stdout + done.stderr)[-3000:]}")
    return book / "_build" / "html"


def lighthouse(server: PagesServer, pages: list[str], out: Path, method: str) -> list[dict]:
    urls = [f"{server.url}/{page}" for page in pages]
    env = {**os.environ, "CHROME_PATH": chromium.executable() or "/usr/bin/chromium"}
    subprocess.run(["node", str(RUNNER), str(out), str(RUNS), method, *urls], check=True, env=env, cwd=ROOT,
                   timeout=RUNS * len(urls) * 300)
    rows = json.loads(out.read_text())
    print(json.dumps(rows), flush=True)  # the raw runs, in the log of make bench
    for row in rows:
        row["page"] = row["url"].removeprefix(server.url + "/")
    return rows


def medians(rows: list[dict]) -> dict:
    """Median of every measure over the successful runs of one page (or of medians of pages)."""
    good = [r for r in rows if "error" not in r]
    if not good:
        return {}
    values = {key: statistics.median(r[key] for r in good) for key in ("tbt_ms", "lcp_ms", "cls", "transfer_bytes")}
    values.update({key: statistics.median(r["scores"][key] for r in good) for key in SCORES})
    values["runs"] = len(good)
    values["failed"] = len(rows) - len(good)
    values["spread_perf"] = (min(r["scores"]["performance"] for r in good),
                             max(r["scores"]["performance"] for r in good))
    values["spread_tbt"] = (min(r["tbt_ms"] for r in good), max(r["tbt_ms"] for r in good))
    values["failing"] = sorted({a for r in good for a in r["failing"]})
    values["offsite"] = sorted({u for r in good for u in r["offsite"]})
    return values


def met(key: str, value: float, goals: dict = GOALS) -> bool:
    op, goal = goals[key]
    return {">=": value >= goal, "<=": value <= goal, "<": value < goal}[op]


def load_average(start: float) -> str:
    """The machine's 1-minute load average at ``start`` and now, for the report."""
    return f"load average (1 min) {start:.1f} at the start, {os.getloadavg()[0]:.1f} at the end, {os.cpu_count()} cores"


def real_loads(site: Path, pages: list[str]) -> dict[str, dict]:
    """{page: medians of :data:`TRACE_RUNS` loads with the CPU really slowed 4x (:func:`page_trace.trace_load`)}."""
    from playwright.sync_api import sync_playwright

    server = PagesServer(site)
    loads = {page: [] for page in pages}
    try:
        with sync_playwright() as pw:
            browser = chromium.launch(pw)
            for _ in range(TRACE_RUNS):  # pages in turn, so that a busy spell of the machine spreads over them
                for page in pages:
                    loads[page].append(page_trace.trace_load(browser, server, page))
            browser.close()
    finally:
        server.stop()
    found = {}
    for page, runs in loads.items():
        kinds = sorted({k for load in runs for k in load.work_ms})
        found[page] = {"tbt_ms": statistics.median(r.tbt_ms for r in runs),
                       "lcp_ms": statistics.median(r.lcp_ms for r in runs),
                       "fcp_ms": statistics.median(r.fcp_ms for r in runs),
                       "spread_tbt": (min(r.tbt_ms for r in runs), max(r.tbt_ms for r in runs)),
                       "long_tasks": statistics.median(len(r.long_tasks) for r in runs),
                       "work_ms": {k: statistics.median(r.work_ms.get(k, 0.0) for r in runs) for k in kinds}}
    return found


def real_table(found: dict[str, dict], load: str) -> list[str]:
    lines = [f"**Ours, CPU really slowed 4x** (DevTools protocol, loopback network, phone viewport; medians of "
             f"{TRACE_RUNS} loads; {load}). Work = the main thread's time inside long tasks after the first paint, "
             "by kind:",
             "", "| page | TBT (ms) | TBT spread (ms) | LCP (s) | FCP (s) | long tasks | work in long tasks (ms) |",
             "|---|---:|---|---:|---:|---:|---|"]
    for page, m in found.items():
        work = ", ".join(f"{k} {v:.0f}" for k, v in sorted(m["work_ms"].items(), key=lambda kv: -kv[1]) if v >= 1)
        lines.append(f"| {page} | {m['tbt_ms']:.0f} | {m['spread_tbt'][0]:.0f}-{m['spread_tbt'][1]:.0f} "
                     f"| {m['lcp_ms'] / 1000:.2f} | {m['fcp_ms'] / 1000:.2f} | {m['long_tasks']:.0f} | {work or '-'} |")
    return lines


def table(site: str, per_page: dict[str, dict]) -> list[str]:
    lines = [f"**{site}** (medians of {RUNS} runs per page; perf spread = lowest-highest run)", "",
             "| page | perf | a11y | BP | SEO | LCP (s) | TBT (ms) | CLS | KB transferred | perf spread "
             "| TBT spread (ms) | runs ok | audits not passed (a11y, BP, SEO) |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|---:|---|"]
    for page, m in per_page.items():
        if not m:
            lines.append(f"| {page} | every run failed |||||||||||")
            continue
        lines.append(
            f"| {page} | {m['performance']:.0f} | {m['accessibility']:.0f} | {m['best-practices']:.0f} "
            f"| {m['seo']:.0f} | {m['lcp_ms'] / 1000:.1f} | {m['tbt_ms']:.0f} | {m['cls']:.3f} "
            f"| {m['transfer_bytes'] / 1024:.0f} | {m['spread_perf'][0]}-{m['spread_perf'][1]} "
            f"| {m['spread_tbt'][0]:.0f}-{m['spread_tbt'][1]:.0f} | {m['runs']}/{m['runs'] + m['failed']} "
            f"| {', '.join(m['failing']) or '-'} |")
    return lines


def overall(per_page: dict[str, dict]) -> dict:
    pages = [m for m in per_page.values() if m]
    keys = (*SCORES, "lcp_ms", "tbt_ms", "cls", "transfer_bytes")
    return {key: statistics.median(m[key] for m in pages) for key in keys}


def page_bytes(site: Path, pages: list[str], first: str) -> dict[str, tuple[int, int | None]]:
    """{page: (bytes cold, bytes when opened after ``first`` in the same browser)}; gzipped, server-side."""
    from playwright.sync_api import sync_playwright

    server = PagesServer(site)
    found = {}
    try:
        with sync_playwright() as pw:
            browser = chromium.launch(pw)
            for path in pages:
                page = page_audit.open_page(browser, server)
                cold = page_audit.visit(page, server, path).bytes
                page.context.close()
                warm = None
                if path != first:
                    page = page_audit.open_page(browser, server, http_cache=True)
                    page_audit.visit(page, server, first)
                    warm = page_audit.visit(page, server, path).bytes
                    page.context.close()
                found[path] = (cold, warm)
            browser.close()
    finally:
        server.stop()
    return found


def bytes_table(ours: dict, stock: dict) -> list[str]:
    lines = ["Bytes the server sent (gzipped, as GitHub Pages) until the network was idle, phone viewport, "
             "no interaction (`tools.page_audit`): cold, and when the page is opened after the site's "
             "first page in the same browser (second page; goals: at most 250 KB cold, < 150 KB as a "
             "second page):", "",
             "| site | page | KB cold | KB as second page |", "|---|---|---:|---:|"]
    for site, found in (("ours", ours), ("stock", stock)):
        for page, (cold, warm) in found.items():
            lines.append(f"| {site} | {page} | {cold / 1024:.0f} | {'-' if warm is None else f'{warm / 1024:.0f}'} |")
    return lines


def summary(ours: dict, stock: dict, chapters: dict[str, dict], warm: dict) -> list[str]:
    lines = ["Median over pages (ours: landing page and chapters; stock: its 4 pages), and ratio ours / stock:", "",
             "| measure | ours | stock | ours / stock |", "|---|---:|---:|---:|"]
    for key, unit, scale in (("performance", "", 1), ("accessibility", "", 1), ("best-practices", "", 1),
                             ("seo", "", 1), ("lcp_ms", " s", 1000), ("tbt_ms", " ms", 1),
                             ("cls", "", 1), ("transfer_bytes", " KB", 1024)):
        a, b = ours[key] / scale, stock[key] / scale
        ratio = f"{a / b:.2f}" if b else "-"
        digits = 3 if key == "cls" else 1 if key == "lcp_ms" else 0
        lines.append(f"| {key} | {a:.{digits}f}{unit} | {b:.{digits}f}{unit} | {ratio} |")
    lines += ["", "Goal figures, chapter pages (medians per page):", ""]
    for key in GOALS:
        missed = [page for page, m in chapters.items() if not m or not met(key, m[key])]
        op, goal = GOALS[key]
        shown = f"{goal / 1024:.0f} KB" if key == "transfer_bytes" else goal
        lines.append(f"- {key} {op} {shown}: met on {len(chapters) - len(missed)}/{len(chapters)} chapter pages"
                     + (f"; missed on {', '.join(missed)}" if missed else ""))
    over = [p for p, (_, w) in warm.items() if w is not None and w >= WARM_GOAL]
    lines.append(f"- second chapter < 150 KB: met on {len(warm) - 1 - len(over)}/{len(warm) - 1} pages"
                 + (f"; missed on {', '.join(over)}" if over else ""))
    return lines


def missed_goals(results: dict, real: dict, chapters: dict, warm: dict) -> list[str]:
    """Every goal of the module docstring that a page's medians miss, as a sentence."""
    missed = [f"{page}: {key} {m[key] if m else 'no run'} (goal {' '.join(map(str, GOALS[key]))})"
              for page, m in chapters.items() for key in GOALS if not m or not met(key, m[key])]
    missed += [f"{page}: {key} {m[key] if m else 'no run'} with {method} throttling (goal "
               f"{' '.join(map(str, PAGE_GOALS[key]))})"
               for method in METHODS for page, m in results["ours"][method].items()
               for key in PAGE_GOALS if not m or not met(key, m[key], PAGE_GOALS)]
    missed += [f"{page}: {key} {m[key]:.0f} with the CPU really slowed 4x (goal {' '.join(map(str, REAL_GOALS[key]))})"
               for page, m in real.items() for key in REAL_GOALS if not met(key, m[key], REAL_GOALS)]
    missed += [f"{page}: {w / 1024:.0f} KB as a second page (goal < {WARM_GOAL / 1024:.0f} KB)"
               for page, (_, w) in warm.items() if w is not None and w >= WARM_GOAL]
    missed += [f"{page}: {cold / 1024:.0f} KB cold (goal <= {COLD_GOAL / 1024:.0f} KB)"
               for page, (cold, _) in warm.items() if cold > COLD_GOAL]
    return missed


def main() -> str:
    loads = {}
    with tempfile.TemporaryDirectory(prefix="bench-lighthouse-") as tmp:
        tmp = Path(tmp)
        sites = {"ours": (our_site(tmp), toc.pages()), "stock": (stock_site(tmp), STOCK_PAGES)}
        results, sent = {}, {}
        for name, (site, pages) in sites.items():
            server = PagesServer(site)
            try:
                for method in METHODS:
                    print(f"Lighthouse ({method}) on {name} ({site}), {RUNS} runs per page", flush=True)
                    start = os.getloadavg()[0]
                    rows = lighthouse(server, pages, tmp / f"{name}-{method}.json", method)
                    loads[f"{name}, {method}"] = load_average(start)
                    results.setdefault(name, {})[method] = {page: medians([r for r in rows if r["page"] == page])
                                                            for page in pages}
            finally:
                server.stop()
            sent[name] = page_bytes(site, pages, pages[0])
        print(f"Real 4x CPU loads of ours, {TRACE_RUNS} per page", flush=True)
        start = os.getloadavg()[0]
        real = real_loads(sites["ours"][0], sites["ours"][1])
        real_load = load_average(start)
    offsite = sorted({u for method in METHODS for m in results["ours"][method].values() if m for u in m["offsite"]})
    chapters = {page: m for page, m in results["ours"]["simulate"].items() if page != toc.pages()[0]}
    lines = []
    for method in METHODS:
        lines += [f"### Lighthouse, {method} throttling", "",
                  f"Machine while it ran: ours {loads[f'ours, {method}']}; stock {loads[f'stock, {method}']}.", ""]
        lines += [*table("Ours", results["ours"][method]), "", *table("Stock Jupyter Book", results["stock"][method]),
                  ""]
        lines += [*summary(overall(results["ours"][method]), overall(results["stock"][method]),
                           {p: m for p, m in results["ours"][method].items() if p != toc.pages()[0]},
                           sent["ours"]), ""]
    lines += ["### Real 4x CPU throttling", "", *real_table(real, real_load), ""]
    lines += [*bytes_table(sent["ours"], sent["stock"]), ""]
    lines.append(f"Requests from our pages to another host during the Lighthouse runs: {len(offsite)}"
                 + (f" ({', '.join(offsite)})" if offsite else "") + ".")
    return check_goals("\n".join(lines), missed_goals(results, real, chapters, sent["ours"]))


if __name__ == "__main__":
    print(main())
