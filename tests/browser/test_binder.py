"""Live code on Binder, offline: a simulated BinderHub and a user server set up as mybinder's.

* The Jupyter server runs from an environment installed exactly as
  repo2docker installs ``binder/`` (:func:`tools.binder.environment`: a fresh
  venv, ``pip install -r binder/requirements.txt``, then ``binder/postBuild``),
  with the settings BinderHub's spawner gives a user server (a token,
  ``/user/<name>/``, any origin). Nothing of the project's own ``.venv`` is
  on its path.
* The page's request to ``https://mybinder.org/build/gh/<owner>/<repo>/<ref>``
  is answered by :class:`tools.binder.SimulatedBinderHub` with BinderHub's
  event stream, through ``ready`` (or ``failed``).
* The site may be built with or without a repository (``BOOK_REPOSITORY``):
  these tests set the page's live-code configuration to what a build
  published from a fork writes (``_ext/publish``; tests/build/test_publish.py
  checks that a build writes exactly that), or to an unpublished one's.
"""

from __future__ import annotations

import ast
import json
import re
import shutil
import subprocess
import time
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import expect

from _ext.live_code.package import write_wheel
from _ext.publish import binder_ref
from tools import ROOT, binder
from tools.chromium import open_page

PAGE = "book/smoothing.html"
SOURCE = "book/smoothing.md"
#: sphinx-book-theme's Binder link opens ``<server>/<urlpath>``; notebook_interface: classic gives tree/<source>.
URLPATH = f"tree/{SOURCE}"
LAUNCH_TIMEOUT = 180_000  # ms: a cold kernel on a busy 2-core machine
RUN_TIMEOUT = 120_000
#: What a build published from a fork writes: Binder's ref is named by binder/ (_ext/publish/binder_ref.py).
FORK = {"repo": "reader/self-attention-fork", "ref": binder_ref.environment_ref(ROOT)}
BUILD_URL = f"https://mybinder.org/build/gh/{FORK['repo']}/{FORK['ref']}"
#: thebe keeps a Binder session in localStorage under this prefix + the build URL (thebe-core sessions.ts).
SAVED_SESSION = f"thebe-binder-{BUILD_URL}"
STDOUT = '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stdout"]'
PROBLEMS = ('.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"], '
            '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.error"]')


@pytest.fixture(scope="module")
def binder_server():
    venv = binder.environment()
    # The image as repo2docker made it (postBuild's editable package): an earlier session installed the wheel.
    subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                    "--no-deps", "-e", str(ROOT)], check=True, capture_output=True)
    server = binder.binder_server(venv)
    yield server
    server.stop()


def set_repository(page, repo: str, ref: str) -> None:
    """Make the page's live-code configuration the one a build with BOOK_REPOSITORY=<repo> writes."""
    page.evaluate("""([repo, ref]) => {
      const el = document.getElementById('live-code-config');
      el.textContent = JSON.stringify({...JSON.parse(el.textContent), repo, ref});
    }""", [repo, ref])


def press_launch(page) -> None:
    page.locator(".dropdown-launch-buttons .dropdown-toggle").click()
    page.locator(".btn-launch-thebe").click()


def status(page) -> str:
    return page.locator(".live-code-status").inner_text()


def open_chapter(browser, site_url, server=None, stream: str = ""):
    """The chapter "published from the fork", with the simulated hub answering ``stream``."""
    page = open_page(browser, {site_url} | ({server.origin} if server else set()))
    page.hub = binder.SimulatedBinderHub(page, stream)
    page.goto(f"{site_url}/{PAGE}")
    set_repository(page, **FORK)
    return page


@pytest.fixture(scope="module")
def binder_page(browser, site_url, binder_server):
    """The chapter launched on "Binder": no server in the URL, so Binder is the default."""
    page = open_chapter(browser, site_url, binder_server, binder.ready_stream(binder_server))
    press_launch(page)
    page.locator(".live-code-status[data-state=ready]").wait_for(timeout=LAUNCH_TIMEOUT)
    yield page
    page.context.close()


def test_the_page_asks_binder_for_its_repository_and_branch(binder_page):
    assert binder_page.hub.requests == [BUILD_URL]


def test_the_status_names_binder_and_the_repository(binder_page):
    assert (f"Connected: live session (python3) on Binder (mybinder.org, repository {FORK['repo']}@{FORK['ref']})"
            in status(binder_page))


def test_every_cell_runs_and_the_slider_redraws(binder_page):
    # live-code.js runs the thebe-init cell on launch; "run all" while it runs would cancel it.
    binder_page.locator("div.cell.tag_thebe-init").locator(STDOUT).wait_for(timeout=RUN_TIMEOUT)
    cells = binder_page.locator("div.cell")
    # The first visible one: the chapter's first cell, its set-up, is collapsed behind its toggle.
    binder_page.locator(".live-cells-run-all").click()  # the page's one Run all (live-cells.js)
    # Run all goes in order; the cell that calls explore() ends with its widget (the exercises' cells follow it).
    widget_cell = cells.filter(has=binder_page.locator(".CodeMirror", has_text="explore()"))
    image = widget_cell.locator(".widget-image")
    image.wait_for(timeout=RUN_TIMEOUT)
    binder_page.wait_for_function("img => img.complete && img.naturalWidth > 0", arg=image.element_handle())
    assert binder_page.locator(PROBLEMS).all_inner_texts() == []
    # Every cell ran in this kernel: the names each one defines exist there.
    sources = cells.locator(".CodeMirror").evaluate_all("els => els.map(el => el.CodeMirror.getValue())")
    assert len(sources) == cells.count() == code_cells_shown()
    expected = sorted(set().union(*map(defined_names, sources)))
    probe = cells.nth(0)
    probe.locator("details > summary").click()  # the chapter's set-up cell, collapsed: a reader opens it
    probe.locator(".CodeMirror").evaluate("(el, src) => el.CodeMirror.setValue(src)",
                                          f"print('missing:', sorted(set({expected!r}) - set(globals())))")
    probe.locator(".thebe-run-button").click()
    probe.locator(STDOUT, has_text="missing: []").wait_for(timeout=RUN_TIMEOUT)
    before = image.get_attribute("src")
    handle = widget_cell.locator(".widget-slider").nth(1).locator(".noUi-handle")  # tau
    handle.focus()
    handle.press("ArrowRight")
    binder_page.wait_for_function("([img, old]) => img.src !== old", arg=[image.element_handle(), before],
                                  timeout=RUN_TIMEOUT)


#: Run in the live session: where its package comes from, its version and content hash (as _ext/live_code/package.py).
PACKAGE_PROBE = """import hashlib, importlib.metadata, pathlib, selfattention
_root = pathlib.Path(selfattention.__file__).parent
_files = sorted((p.relative_to(_root.parent).as_posix(), p.read_bytes()) for p in _root.rglob('*')
                if p.is_file() and '__pycache__' not in p.parts and (p.suffix == '.py' or p.name == 'py.typed'))
_digest = hashlib.sha256()
for _path, _data in _files:
    _digest.update(_path.encode() + b'\\0' + hashlib.sha256(_data).digest())
print('package', importlib.metadata.version('selfattention'), _digest.hexdigest(), _root)
"""


def run_in_session(page, code: str, expected: str) -> str:
    """Run ``code`` in the page's first cell (opened as a reader opens it); its printed line holding ``expected``."""
    probe = page.locator("div.cell").nth(0)
    if probe.locator("details").count() and not probe.locator("details[open]").count():
        probe.locator("details > summary").click()
    probe.locator(".CodeMirror").evaluate("(el, src) => el.CodeMirror.setValue(src)", code)
    probe.locator(".thebe-run-button").click()
    output = probe.locator(STDOUT, has_text=expected)
    output.wait_for(timeout=RUN_TIMEOUT)
    return output.inner_text()


def test_the_session_runs_the_package_of_the_page(binder_page, site_dir):
    """Binder's image is binder/'s: the session installed the wheel served with the page (version, content)."""
    page_package = json.loads((site_dir / "_static" / "live-code" / "package.json").read_text())
    binder_page.locator("div.cell.tag_thebe-init").locator(STDOUT).wait_for(timeout=RUN_TIMEOUT)
    _, version, digest, where = run_in_session(binder_page, PACKAGE_PROBE, "package ").split()
    assert (version, digest) == (page_package["version"], page_package["sha256"])
    assert "site-packages" in where and ROOT / "src" not in Path(where).parents  # the wheel, not the editable copy


def test_a_cached_environment_launches_with_no_build(browser, site_url, binder_server):
    """A push that changes binder/ names a new ref, built once (tests/build/test_publish.py: only binder/ changes
    it); every later launch of that ref, after pushes of chapters or package alone, starts with no build."""
    cache = binder.ImageCache(binder_server)
    phases = []
    for _ in range(2):
        page = open_chapter(browser, site_url, binder_server, cache.stream)
        try:
            press_launch(page)
            page.locator(".live-code-status[data-state=ready]").wait_for(timeout=LAUNCH_TIMEOUT)
            assert page.hub.requests == [BUILD_URL]
        finally:
            page.context.close()
        phases.append(list(cache.builds))
    assert phases == [[FORK["ref"]], [FORK["ref"]]]  # built by the first launch, not by the second


def defined_names(source: str) -> set[str]:
    """The top-level names a cell assigns or imports."""
    names = set()
    for node in ast.parse(source).body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            names |= {(alias.asname or alias.name).split(".")[0] for alias in node.names}
        for target in getattr(node, "targets", []):
            names |= {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}
    return names


def code_cells_shown() -> int:
    """The chapter's code cells, less those removed from the page (tag remove-cell)."""
    cells = re.findall(r"```\{code-cell\}[^\n]*\n(.*?)```", (ROOT / SOURCE).read_text(), re.S)
    return sum("remove-cell" not in cell.split("\n\n")[0] for cell in cells)


def test_the_session_is_saved_for_the_next_page(binder_page, binder_server):
    saved = json.loads(binder_page.evaluate("k => window.localStorage.getItem(k)", SAVED_SESSION))
    assert (saved["baseUrl"], saved["token"]) == (binder_server.url, binder_server.token)


def test_no_request_left_the_site_the_hub_and_the_server(binder_page):
    assert binder_page.external_requests == []


def test_a_failed_build_says_why(browser, site_url):
    message = f"Could not resolve ref for gh:reader/self-attention-fork/{FORK['ref']}. Double check your URL."
    page = open_chapter(browser, site_url, stream=binder.failed_stream(message))
    try:
        press_launch(page)
        page.locator(".live-code-status[data-state=error]").wait_for(timeout=RUN_TIMEOUT)
        assert ("Could not start a live Python session on Binder (mybinder.org, "
                f"repository reader/self-attention-fork@{FORK['ref']})") in status(page)
        assert message in status(page)
        assert page.hub.requests == [BUILD_URL]
    finally:
        page.context.close()


def test_a_culled_saved_server_is_replaced(browser, site_url, binder_server):
    """Binder culls an idle server after about 10 minutes; thebe keeps its session for 24 hours.

    A saved session whose server is gone must not fail the launch: thebe asks
    it for its kernels (``GET <baseUrl>api/kernels``), drops it when that
    fails, and asks BinderHub for a new server.
    """
    page = open_chapter(browser, site_url, binder_server, binder.ready_stream(binder_server))
    try:
        gone = f"{binder_server.origin}/user/{binder.USER_PREFIX}culled/"  # the same hub, a server it culled
        saved = {"id": "culled", "baseUrl": gone, "wsUrl": "ws" + gone[4:], "token": "expired",
                 "lastUsed": time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(time.time() - 900))}
        page.evaluate("([k, v]) => window.localStorage.setItem(k, v)", [SAVED_SESSION, json.dumps(saved)])
        press_launch(page)
        page.locator(".live-code-status[data-state=ready]").wait_for(timeout=LAUNCH_TIMEOUT)
        assert page.hub.requests == [BUILD_URL], "the culled session was not replaced by a new build"
        fresh = json.loads(page.evaluate("k => window.localStorage.getItem(k)", SAVED_SESSION))
        assert fresh["baseUrl"] == binder_server.url
    finally:
        page.context.close()


#: The version of the package in the image of the tag's commit, older than the page's.
OLD_VERSION = "0.0.1"


def image_of_an_older_commit(work: Path) -> tuple[Path, Path]:
    """The checkout Binder's image was made from, older than the page (its chapter and its package differ),
    and that package as a wheel (another version, another module)."""
    tag = work / "tag-commit"
    (tag / "book").mkdir(parents=True)
    (tag / SOURCE).write_text((ROOT / SOURCE).read_text().replace("# ", "# (older) ", 1))
    shutil.copytree(ROOT / "src", tag / "src", ignore=shutil.ignore_patterns("__pycache__"))
    (tag / "src" / "selfattention" / "older.py").write_text('"""Only in the older package."""\n')
    pyproject = (ROOT / "pyproject.toml").read_text()
    (tag / "pyproject.toml").write_text(re.sub(r'(?m)^version = ".*"$', f'version = "{OLD_VERSION}"', pyproject))
    return tag, work / "old-wheel" / write_wheel(tag, work / "old-wheel")["wheel"]


def install_as_made(venv: Path, tag: Path, wheel: Path) -> None:
    """``venv`` as the tag's image starts: its package installed (as postBuild did), no notebook written yet."""
    subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                    "--no-deps", "--force-reinstall", str(wheel)], check=True, capture_output=True)
    (tag / "book" / "smoothing.ipynb").unlink(missing_ok=True)
    assert installed_package(venv)[0] == OLD_VERSION


def installed_package(venv: Path) -> tuple[str, str]:
    """The version and content hash of the package a kernel of ``venv`` imports (:data:`PACKAGE_PROBE`)."""
    out = subprocess.run([str(venv / "bin" / "python"), "-c", PACKAGE_PROBE], cwd=venv, check=True,
                         capture_output=True, text=True).stdout
    _, version, digest, _ = out.split()
    return version, digest


def a_change_to_binder(work: Path) -> str:
    """The ref of a push that changes ``binder/``: a copy of it with one more requirement."""
    shutil.copytree(ROOT / binder.BINDER, work / binder.BINDER, ignore=shutil.ignore_patterns("__pycache__"))
    with (work / binder.BINDER / "requirements.in").open("a") as requirements:
        requirements.write("rich\n")
    return binder_ref.environment_ref(work)


def follow_binder_link(page, ref: str) -> None:
    """Click the launch menu's plain Binder link, as sphinx-book-theme writes it for ``ref``, in this tab."""
    href = f"https://mybinder.org/v2/gh/{FORK['repo']}/{ref}?urlpath={URLPATH}"  # tests/build/test_publish.py
    # The theme opens it in a new tab; here in the same one, whose requests the page's guard sees.
    page.evaluate("""href => {
      const a = Object.assign(document.createElement('a'), {href, textContent: 'Binder', id: 'binder-link'});
      document.querySelector('main').prepend(a);
    }""", href)
    page.locator("#binder-link").click()


def test_the_plain_binder_link_opens_the_page_version_in_the_cached_image(browser, site_url, site_dir, tmp_path):
    """The plain Binder link, after a push that changed only book/ or src/: the image of the tag
    (binder/ unchanged) launches with no build, and the session opens the page's chapter, as the
    notebook the site serves, with the page's package (version, content hash). A push that changes
    binder/ names a new tag, built once."""
    venv = binder.environment()
    tag, old_wheel = image_of_an_older_commit(tmp_path)
    server = binder.binder_server(venv, tag)
    cache = binder.ImageCache(server)
    cache.builds.append(FORK["ref"])  # built when binder/ last changed, before this push
    page_package = json.loads((site_dir / "_static" / "live-code" / "package.json").read_text())
    served = site_dir / "_static" / "live-code" / "notebooks" / "book" / "smoothing.ipynb"
    code_cells = sum(cell["cell_type"] == "code" for cell in json.loads(served.read_text())["cells"])
    changed = a_change_to_binder(tmp_path / "pushed")
    builds = []
    try:
        for ref in (FORK["ref"], changed, changed):
            install_as_made(venv, tag, old_wheel)
            page = open_page(browser, {site_url, server.origin})
            try:
                page.hub = binder.SimulatedBinderHub(page, cache.stream, launch=cache.launch)
                page.goto(f"{site_url}/{PAGE}")
                follow_binder_link(page, ref)
                expect(page.locator(".jp-Notebook .jp-CodeCell")).to_have_count(code_cells, timeout=LAUNCH_TIMEOUT)
                assert urlsplit(page.url).path.endswith("/book/smoothing.ipynb"), page.url
                assert len(page.hub.requests) == 1 and page.external_requests == []
            finally:
                page.context.close()
            builds.append(list(cache.builds))
            assert (tag / "book" / "smoothing.ipynb").read_bytes() == served.read_bytes()
            assert installed_package(venv) == (page_package["version"], page_package["sha256"])
    finally:
        server.stop()
    # The tag of binder/ as it is: no build; binder/ changed: built by its first launch only.
    assert builds == [[FORK["ref"]], [FORK["ref"], changed], [FORK["ref"], changed]]


def test_an_unpublished_book_says_live_code_on_binder_needs_a_repository(browser, site_url):
    """A build without BOOK_REPOSITORY has no repository to give Binder: say so, ask nothing."""
    page = open_chapter(browser, site_url, stream=binder.failed_stream("must not be asked"))
    try:
        set_repository(page, "", "main")
        press_launch(page)
        page.locator(".live-code-status[data-state=error]").wait_for(timeout=RUN_TIMEOUT)
        assert "Live code on Binder needs this book to be published from a GitHub repository" in status(page)
        assert "make live" in status(page)
        assert page.hub.requests == [] and page.external_requests == []
    finally:
        page.context.close()
