"""One page load with the CPU really slowed (4x, DevTools protocol), traced: its long tasks and what they did.

:func:`trace_load` opens a page in headless Chromium at a phone's viewport
(:data:`tools.page_audit.PHONE`), slows its CPU with
``Emulation.setCPUThrottlingRate`` (the browser really runs slower; nothing is
estimated), records a performance trace (``Tracing`` with the DevTools
timeline categories) while the page loads from the site served as GitHub
Pages serves it (:class:`tools.pages_server.PagesServer`, gzip, loopback: the
network is fast, the CPU is not), and returns a :class:`Load`:

* first and largest contentful paint, as the page reports them;
* total blocking time: over the renderer main thread's top-level tasks, each
  clipped to start no earlier than the first contentful paint, the sum of
  what each clipped task lasts beyond 50 ms (:func:`blocking_ms`,
  Lighthouse's definition; it stops at time-to-interactive, this at the end
  of the trace, load + network idle + :data:`QUIET_MS`, which can only count
  more);
* the main thread's time inside the long tasks (over 50 ms) that end after
  the first contentful paint, by kind of work
  (:data:`KINDS`: HTML parsing, CSS parsing, style, layout, paint, script,
  image decoding, fonts, other), from the trace events' self times.

Timings, so a benchmark's, never a test's (``make bench``: bench_lighthouse).
"""

from __future__ import annotations

import collections
import dataclasses
import re

from tools import chromium, page_audit

RATE = 4
LONG_TASK_MS = 50
QUIET_MS = 3000
CATEGORIES = ",".join(["devtools.timeline", "disabled-by-default-devtools.timeline", "loading", "blink.user_timing",
                       "v8.execute", "toplevel", "blink"])
#: Trace event names -> the kind of work they are (the first pattern that matches; else "other").
KINDS = (
    ("script", re.compile(r"^(EvaluateScript|FunctionCall|v8\.|V8\.|EventDispatch|TimerFire|FireAnimationFrame|"
                          r"RunMicrotasks|BlinkScheduler_PerformMicrotaskCheckpoint|HTMLParserScriptRunner)")),
    ("HTML parsing", re.compile(r"^(ParseHTML|HTMLDocumentParser|HTMLPreloadScanner|TextResourceDecoder|"
                                r"DocumentLoader|DecodedDataDocumentParser|Document::FinishedParsing)")),
    ("CSS parsing", re.compile(r"^(CSSParserImpl|RuleSet::|StyleEngine::updateActiveStyleSheets|"
                               r"Blink.ParseStyleSheet|Document::updateActiveStyle|ParseAuthorStyleSheet)")),
    ("style", re.compile(r"^(Document::recalcStyle|UpdateLayoutTree|Document::rebuildLayoutTree|"
                         r"Document::updateStyle|StyleEngine|Node::MarkSubtree|LayoutObject::InvalidateSubtree)")),
    ("layout", re.compile(r"^(LocalFrameView::performLayout|Layout$|InlineNode::|LayoutView|HitTest)")),
    ("paint", re.compile(r"^(Paint|Blink\.(PrePaint|Paint|CompositingInputs)|PaintArtifactCompositor|Commit|"
                         r"CullRectUpdate|LocalFrameView::Run.*Lifecycle|PaintController|"
                         r"WebFrameWidgetImpl::UpdateLifecycle|Blink.Accessibility)")),
    ("image decoding", re.compile(r"Decode Image|ImageDecode|Decode LazyPixelRef|IsolatedSVGDocumentHost")),
    ("fonts", re.compile(r"Font")),
)
#: A top-level task of the main thread, as Chromium's trace names it.
TASKS = ("RunTask", "ThreadControllerImpl::RunTask")
PAINTS = """() => new Promise(resolve => new PerformanceObserver(list => {
  const entries = list.getEntries(); resolve(entries[entries.length - 1].startTime);
}).observe({type: 'largest-contentful-paint', buffered: true}))"""


@dataclasses.dataclass
class Load:
    """One traced load: paints (ms from navigation), blocking time, long tasks, their work by kind (ms)."""

    fcp_ms: float
    lcp_ms: float
    tbt_ms: float
    long_tasks: list[float]
    work_ms: dict[str, float]


def kind(name: str) -> str:
    return next((label for label, pattern in KINDS if pattern.search(name)), "other")


def main_thread(events: list[dict]) -> tuple[int, int]:
    """(pid, tid) of the renderer main thread that parsed the page (the most ``ParseHTML`` time)."""
    names = {(e["pid"], e["tid"]): e["args"]["name"] for e in events if e.get("name") == "thread_name"}
    parsed = collections.Counter()
    for e in events:
        if e.get("name") == "ParseHTML" and "dur" in e:
            parsed[(e["pid"], e["tid"])] += e["dur"]
    return max((key for key, name in names.items() if name == "CrRendererMain"), key=lambda key: parsed[key])


def self_times(events: list[dict]) -> collections.Counter:
    """Microseconds of each event name's own time (its children's subtracted), ``events`` nested by time."""
    found, stack = collections.Counter(), []
    for e in sorted(events, key=lambda e: (e["ts"], -e["dur"])):
        while stack and stack[-1]["ts"] + stack[-1]["dur"] <= e["ts"]:
            stack.pop()
        if stack:
            found[stack[-1]["name"]] -= e["dur"]
        found[e["name"]] += e["dur"]
        stack.append(e)
    return found


def blocking_ms(start: float, end: float, fcp: float) -> float:
    """What a task from ``start`` to ``end`` adds to the total blocking time, with the first paint at ``fcp`` (µs).

    As Lighthouse counts it (``calculateTbtImpactForEvent`` in its trace engine): the task is clipped to
    start no earlier than the first contentful paint, and what the clipped task lasts beyond
    :data:`LONG_TASK_MS` blocks. A 200 ms task that ends 50 ms after the first paint blocks nothing.
    """
    return max((end - max(start, fcp)) / 1000 - LONG_TASK_MS, 0.0)


def analyse(events: list[dict], fcp_ms: float, lcp_ms: float) -> Load:
    """The :class:`Load` of a trace whose page painted first at ``fcp_ms`` (from its navigation start)."""
    main = main_thread(events)
    timed = [e for e in events if (e["pid"], e["tid"]) == main and e.get("ph") == "X" and "dur" in e]
    start = max(e["ts"] for e in events if e.get("name") == "navigationStart" and (e["pid"], e["tid"]) == main
                and e["args"].get("data", {}).get("documentLoaderURL"))  # the page's, not a frame's or a blank one
    tasks, end = [], 0
    for e in sorted(timed, key=lambda e: (e["ts"], -e["dur"])):
        if e["name"] in TASKS and e["ts"] >= end:
            tasks.append(e)
            end = e["ts"] + e["dur"]
    fcp = start + fcp_ms * 1000
    long = [t for t in tasks if t["dur"] > LONG_TASK_MS * 1000 and t["ts"] + t["dur"] > fcp]
    work = collections.Counter()
    for task in long:
        inside = [e for e in timed if task["ts"] <= e["ts"] and e["ts"] + e["dur"] <= task["ts"] + task["dur"]]
        for name, micros in self_times(inside).items():
            work[kind(name)] += micros / 1000
    return Load(fcp_ms=fcp_ms, lcp_ms=lcp_ms, tbt_ms=sum(blocking_ms(t["ts"], t["ts"] + t["dur"], fcp) for t in long),
                long_tasks=[round(t["dur"] / 1000) for t in long], work_ms=dict(work))


def trace_load(browser, server, path: str, rate: float = RATE) -> Load:
    """Load ``path`` from ``server`` in a fresh phone-sized page with the CPU slowed ``rate`` times, traced."""
    page = chromium.open_page(browser, {server.url}, **page_audit.PHONE)
    try:
        cdp = page.context.new_cdp_session(page)
        cdp.send("Emulation.setCPUThrottlingRate", {"rate": rate})
        events, done = [], []
        cdp.on("Tracing.dataCollected", lambda params: events.extend(params["value"]))
        cdp.on("Tracing.tracingComplete", lambda params: done.append(True))
        cdp.send("Tracing.start", {"categories": CATEGORIES, "transferMode": "ReportEvents"})
        page.goto(f"{server.url}/{path}", wait_until="load")
        page.wait_for_load_state("networkidle")
        page.wait_for_timeout(QUIET_MS)
        fcp = page.evaluate("performance.getEntriesByName('first-contentful-paint')[0].startTime")
        lcp = page.evaluate(PAINTS)
        cdp.send("Tracing.end")
        while not done:
            page.wait_for_timeout(100)
    finally:
        page.context.close()
    return analyse(events, fcp, lcp)
