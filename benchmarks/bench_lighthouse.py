"""Lighthouse on every page of the book, next to a stock Jupyter Book of the same versions.

Both sites are served as GitHub Pages serves them (gzip, ``max-age=600``:
:class:`tools.pages_server.PagesServer`) on 127.0.0.1 and measured by
Lighthouse (npm, pinned in ``package.json``; ``benchmarks/lighthouse.mjs``),
mobile preset, ``$LIGHTHOUSE_RUNS`` runs per page (default 3), a fresh
headless Chromium per run that can reach no other host:

* ours: the landing page and every chapter (``_toc.yml``), from
  ``$SITE_DIR`` if set, else a fresh ``make build`` of a copy of the tree;
* stock: ``jupyter-book create`` (its template book) built by the same
  ``jupyter-book``, with nothing changed. Its MathJax comes from a CDN, which
  is blocked here: its formulas are not typeset during the run, so its total
  blocking time leaves the typesetting out (it flatters the stock book).

Reported per page: the medians of the four scores, LCP, total blocking time,
CLS and the bytes Lighthouse counts as transferred; then the medians over
pages for each site and their ratio (ours / stock). Then the bytes a page
costs without Lighthouse (:mod:`tools.page_audit`, what the server sent
before any interaction, gzipped): cold, and a chapter opened after the
landing page in the same browser (a second page, warm cache).

Goal figures (issue 13), chapter pages: performance >= 85, accessibility,
best practices and SEO 100, TBT <= 300 ms, CLS <= 0.02, < 600 KB cold,
< 150 KB for a second chapter. Timings on this shared machine are noisy:
medians, and the spread of the runs, are shown.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import tempfile
from pathlib import Path

from tools import ROOT, SITE, chromium, page_audit, toc, workcopy
from tools.pages_server import PagesServer

RUNS = int(os.environ.get("LIGHTHOUSE_RUNS", "3"))
RUNNER = Path(__file__).with_name("lighthouse.mjs")
STOCK_PAGES = ["intro.html", "markdown.html", "notebooks.html", "markdown-notebooks.html"]
SCORES = ["performance", "accessibility", "best-practices", "seo"]
GOALS = {"performance": (">=", 85), "accessibility": (">=", 100), "best-practices": (">=", 100),
         "seo": (">=", 100), "tbt_ms": ("<=", 300), "cls": ("<=", 0.02), "transfer_bytes": ("<", 600 * 1024)}
WARM_GOAL = 150 * 1024


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


def lighthouse(server: PagesServer, pages: list[str], out: Path) -> list[dict]:
    urls = [f"{server.url}/{page}" for page in pages]
    env = {**os.environ, "CHROME_PATH": chromium.executable() or "/usr/bin/chromium"}
    subprocess.run(["node", str(RUNNER), str(out), str(RUNS), *urls], check=True, env=env, cwd=ROOT,
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


def met(key: str, value: float) -> bool:
    op, goal = GOALS[key]
    return {">=": value >= goal, "<=": value <= goal, "<": value < goal}[op]


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
             "first page in the same browser (second page; goal < 150 KB):", "",
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


def main() -> str:
    with tempfile.TemporaryDirectory(prefix="bench-lighthouse-") as tmp:
        tmp = Path(tmp)
        sites = {"ours": (our_site(tmp), toc.pages()), "stock": (stock_site(tmp), STOCK_PAGES)}
        results, sent = {}, {}
        for name, (site, pages) in sites.items():
            print(f"Lighthouse on {name} ({site}), {RUNS} runs per page", flush=True)
            server = PagesServer(site)
            try:
                rows = lighthouse(server, pages, tmp / f"{name}.json")
            finally:
                server.stop()
            results[name] = {page: medians([r for r in rows if r["page"] == page]) for page in pages}
            sent[name] = page_bytes(site, pages, pages[0])
    offsite = sorted({u for m in results["ours"].values() if m for u in m["offsite"]})
    chapters = {page: m for page, m in results["ours"].items() if page != toc.pages()[0]}
    lines = [*table("Ours", results["ours"]), "", *table("Stock Jupyter Book", results["stock"]), ""]
    lines += [*summary(overall(results["ours"]), overall(results["stock"]), chapters, sent["ours"]), ""]
    lines += [*bytes_table(sent["ours"], sent["stock"]), ""]
    lines.append(f"Requests from our pages to another host during the Lighthouse runs: {len(offsite)}"
                 + (f" ({', '.join(offsite)})" if offsite else "") + ".")
    return "\n".join(lines)


if __name__ == "__main__":
    print(main())
