"""The documentation site builds strictly, and its API reference renders every public name.

One strict build (``mkdocs build --strict``: a warning, an unresolved link, a
missing page or a tutorial block that raises fails it) into a temporary
directory, shared by the tests below. Needs the ``docs`` extra.
"""

from __future__ import annotations

import functools
import http.server
import importlib
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from urllib.parse import urljoin, urlsplit

import pytest

ROOT = Path(__file__).resolve().parents[1]
# one reference page per public submodule: docs/reference/<module>.md documents deniable.<module>
REFERENCE_MODULES = sorted(p.stem for p in (ROOT / "docs" / "reference").glob("*.md") if p.stem != "index")

pytest.importorskip("mkdocs", reason="the docs site needs the docs extra: pip install -e '.[docs]'")
pytest.importorskip("mkdocstrings_handlers.python", reason="the API reference needs mkdocstrings[python] (docs extra)")
pytest.importorskip("markdown_exec", reason="the executed tutorials need markdown-exec (docs extra)")

pytestmark = pytest.mark.build  # builds the whole site (half a minute): not in the fast suite


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    build = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )
    assert build.returncode == 0, build.stdout + build.stderr
    return out


def html_ids(site: Path) -> set[str]:
    ids: set[str] = set()
    for page in site.rglob("*.html"):
        ids.update(re.findall(r'id="([^"]+)"', page.read_text(encoding="utf-8")))
    return ids


def public_names() -> list[tuple[str, str]]:
    """(where it is documented, name) for deniable.__all__ and each reference module's __all__."""
    top = importlib.import_module("deniable")
    names = [("deniable", name) for name in top.__all__]
    for short in REFERENCE_MODULES:
        module = importlib.import_module(f"deniable.{short}")
        names += [(f"deniable.{short}", n) for n in module.__all__ if n not in top.__all__]
    return names


def has_docstring(package: Any, paths: list[str]) -> bool:
    """Whether griffe (what the reference renders from) finds a docstring under the first path it knows."""
    for path in paths:
        try:
            obj = package[path.removeprefix("deniable.")]
        except (KeyError, ValueError):
            continue
        target = obj.final_target if obj.is_alias else obj
        return bool(target.docstring and target.docstring.value.strip())
    return False


def test_reference_covers_the_public_submodules() -> None:
    for name in ("survey", "scale", "audit", "testing", "client", "server", "mechanisms", "heavy", "wire", "errors",
                 "plot", "simulate"):
        assert name in REFERENCE_MODULES, f"docs/reference/{name}.md is missing"


def test_site_builds_strictly(site: Path) -> None:
    assert (site / "index.html").is_file()
    assert (site / "math" / "frequency-oracles" / "index.html").is_file()


def test_each_tutorial_links_its_notebook_written_beside_it(site: Path) -> None:
    """docs/hooks/notebooks.py: every tutorial page links ``<page>.ipynb``, a valid notebook beside it
    whose code cells are the page's executed blocks (tests/test_docs_notebooks.py runs two of them)."""
    nbformat = pytest.importorskip("nbformat", reason="the notebooks need nbformat (docs extra)")
    tutorials = sorted(p.stem for p in (ROOT / "docs" / "tutorials").glob("*.md"))
    assert len(tutorials) >= 10
    for stem in tutorials:
        built = site / "tutorials" / stem
        assert f'href="{stem}.ipynb" download' in (built / "index.html").read_text(encoding="utf-8"), stem
        notebook = nbformat.read(built / f"{stem}.ipynb", as_version=4)
        nbformat.validate(notebook)
        assert sum(cell.cell_type == "code" for cell in notebook.cells) >= 2, stem


def test_reference_renders_every_public_name_with_its_docstring(site: Path) -> None:
    griffe = pytest.importorskip("griffe", reason="griffe comes with mkdocstrings[python] (docs extra)")
    package = griffe.load("deniable", search_paths=[str(ROOT / "src")])
    ids = html_ids(site)
    missing: list[str] = []
    undocumented: list[str] = []
    for where, name in public_names():
        obj = getattr(importlib.import_module(where), name)
        home = f"{getattr(obj, '__module__', where)}.{getattr(obj, '__qualname__', name)}"
        path = f"{where}.{name}"
        if path not in ids and home not in ids:
            missing.append(path)
        if not has_docstring(package, [home, path]):
            undocumented.append(path)
    assert not missing, f"public names the API reference does not render: {missing}"
    assert not undocumented, f"public names without a docstring: {undocumented}"


def test_formula_a_anchor_is_where_the_docstrings_cite_it(site: Path) -> None:
    page = (site / "math" / "frequency-oracles" / "index.html").read_text(encoding="utf-8")
    assert 'id="formula-a"' in page
    reference = (site / "reference" / "index.html").read_text(encoding="utf-8")
    assert 'href="../math/frequency-oracles/#formula-a"' in reference


class _Loads(HTMLParser):
    """The URLs a page makes the browser load: scripts, style sheets, icons, fonts, images, frames."""

    LOADING_LINKS = {"stylesheet", "icon", "preload", "modulepreload", "prefetch", "manifest", "apple-touch-icon"}

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag in ("script", "img", "iframe", "source", "audio", "video", "embed", "input", "track") and a.get("src"):
            self.urls.append(a["src"])
        if tag == "link" and self.LOADING_LINKS & set(a.get("rel", "").lower().split()):
            self.urls.append(a.get("href", ""))
        if tag == "object" and a.get("data"):
            self.urls.append(a["data"])
        for candidate in a.get("srcset", "").split(","):
            if candidate.strip():
                self.urls.append(candidate.split()[0])
        self.urls += re.findall(r"url\(\s*['\"]?([^'\")]+)", a.get("style", ""))


def _is_external(url: str) -> bool:
    return bool(urlsplit(url).netloc) or urlsplit(url).scheme not in ("", "data")


def test_no_page_or_style_sheet_loads_anything_from_another_server(site: Path) -> None:
    """Every URL a built page or style sheet loads (script, style sheet, font, image, frame) is on
    the site itself, and the local ones exist: a reader's browser contacts no font server or CDN."""
    external: list[str] = []
    broken: list[str] = []
    sheets: set[Path] = set()
    for page in sorted(site.rglob("*.html")):
        parser = _Loads()
        parser.feed(page.read_text(encoding="utf-8"))
        for url in parser.urls:
            path = urlsplit(url).path  # relative to the page, or to the site's root ("/assets/..." on 404.html)
            target = (site / path.lstrip("/") if path.startswith("/") else page.parent / path).resolve()
            if _is_external(url):
                external.append(f"{page.relative_to(site)}: {url}")
            elif not url.startswith("data:") and not target.exists():
                broken.append(f"{page.relative_to(site)}: {url}")
            elif target.suffix == ".css":
                sheets.add(target)
    assert sheets
    for sheet in sorted(sheets):  # the style sheets the pages load, and what they load
        text = sheet.read_text(encoding="utf-8")
        for url in re.findall(r"url\(\s*['\"]?([^'\")]+)", text) + re.findall(r"@import\s+['\"]([^'\"]+)", text):
            if _is_external(url):
                external.append(f"{sheet.relative_to(site)}: {url}")
            elif not url.startswith(("data:", "#")) and not (sheet.parent / urlsplit(url).path).exists():
                broken.append(f"{sheet.relative_to(site)}: {url}")
    assert not external, f"loaded from another server: {external[:20]}"
    assert not broken, f"local files named but not built: {broken[:20]}"


# --- the built site in a real headless Chromium ---------------------------------------------------

WIDTHS = {1280: 900, 390: 844}  # a desktop and a phone (CSS pixels)

OVERFLOW = """() => {
  const byDesign = (el) => el.closest('.scroll-x') !== null;
  const article = document.querySelector('article.md-content__inner');
  // code blocks reach the screen's edges on a phone (Material's design): the limit is the content column
  const right = Math.min(document.querySelector('.md-content').getBoundingClientRect().right, window.innerWidth) + 1;
  const name = (el) => {
    const text = (el.innerText || el.textContent || '').trim().split('\\n')[0].slice(0, 60);
    const cls = typeof el.className === 'string' && el.className ? '.' + el.className.split(' ')[0] : '';
    return `${el.tagName.toLowerCase()}${cls} "${text}"`;
  };
  const found = [];
  const blocks = [...article.querySelectorAll('pre, table, .katex-display, img, svg, .highlight, .doc-signature')];
  for (const el of blocks) {
    if (byDesign(el) || el.closest('.md-sidebar, .md-dialog, .md-tooltip') || el.offsetParent === null) continue;
    const box = el.getBoundingClientRect();
    if (box.width === 0) continue;
    if (el.scrollWidth > el.clientWidth + 1 && getComputedStyle(el).overflowX !== 'visible') {
      found.push(`${name(el)} needs sideways scrolling (${el.scrollWidth} > ${el.clientWidth} px)`);
    } else if (box.right > right) {
      found.push(`${name(el)} overflows the text column by ${Math.round(box.right - right)} px`);
    }
  }
  for (const table of article.querySelectorAll('table')) {
    const wrap = table.closest('.md-typeset__scrollwrap');
    if (wrap && !byDesign(table) && wrap.scrollWidth > wrap.clientWidth + 1) {
      found.push(`${name(table)} is wider than the page (${wrap.scrollWidth} > ${wrap.clientWidth} px)`);
    }
  }
  if (document.documentElement.scrollWidth > window.innerWidth + 1) {
    found.push(`the page scrolls sideways (${document.documentElement.scrollWidth} > ${window.innerWidth} px)`);
  }
  const errors = [...document.querySelectorAll('.katex-error')].map((e) => `math error: ${e.title || e.textContent}`);
  const unrendered = [...document.querySelectorAll('.arithmatex')].filter((e) => !e.querySelector('.katex'))
    .map((e) => `math not rendered: ${e.textContent.slice(0, 60)}`);
  return [...new Set(found), ...errors, ...unrendered];
}"""


TWO_FRAMES = "() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))"


@pytest.fixture(scope="module")
def served(site: Path) -> Iterator[str]:
    """The built site over HTTP on loopback (Material's search and page changes need a server)."""
    handler = functools.partial(_QuietHandler, directory=str(site))
    server = _QuietServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


class _QuietServer(http.server.ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], ConnectionError):  # the browser dropped a request it no longer needs
            super().handle_error(request, client_address)


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        pass


def _pages(site: Path) -> list[str]:
    """The site's pages as URL paths relative to its root ("" for the home page)."""
    return sorted("" if p.parent == site else p.parent.relative_to(site).as_posix() + "/"
                  for p in site.rglob("index.html"))


@pytest.mark.browser
def test_every_page_fits_a_desktop_and_a_phone_and_loads_only_from_the_site(site: Path, served: str) -> None:
    """Every built page, at 1280 and 390 px in headless Chromium: no code or output block, table,
    formula, image or chart is cut off or needs sideways scrolling (unless it sits in a
    ``.scroll-x`` element, scrollable by design), every formula renders, and the browser requests
    nothing from any other server than the site's."""
    sys.path.insert(0, str(ROOT / "tests" / "js"))
    from node_env import chromium, sync_playwright_api

    executable = chromium()
    api = sync_playwright_api()
    pages = [p for p in _pages(site) if p != "404/"]
    assert len(pages) >= 40
    problems: list[str] = []
    requests: set[str] = set()
    with api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        try:
            (first, first_height), *others = WIDTHS.items()
            context = browser.new_context(viewport={"width": first, "height": first_height})
            # every request is recorded, none intercepted: routing would turn the browser's cache
            # off and load each page's scripts, styles and fonts afresh (this machine has no
            # route to other servers anyway; one asked for is in the list all the same)
            context.on("request", lambda request: requests.add(request.url))
            for path in pages:
                # each page is loaded once, in a tab of its own at the desktop width, checked, then
                # resized to the phone's and checked again: the layout (style sheets' media queries,
                # Material's scripts after two frames) is the one a fresh load at that width gets, to
                # the pixel, for every block the check measures on every page of this site (compared
                # when this was changed), at half the page loads. (One tab for all pages, resized back
                # to the desktop's before each, once hung in that resize for ten minutes under load.)
                page = context.new_page()
                page.goto(urljoin(served, path), wait_until="load")
                page.wait_for_function("() => document.querySelectorAll('.arithmatex').length === 0"
                                       " || document.querySelector('.katex') !== null", timeout=10_000)
                for width, height in [(first, first_height), *others]:
                    if width != first:
                        page.set_viewport_size({"width": width, "height": height})
                    page.evaluate(TWO_FRAMES)
                    problems += [f"{path} at {width} px: {p}" for p in page.evaluate(OVERFLOW)]
                page.close()
            context.close()
        finally:
            browser.close()
    assert not problems, "\n".join(problems)
    elsewhere = sorted(u for u in requests if not u.startswith(served) and not u.startswith("data:"))
    assert not elsewhere, f"requests to other servers: {elsewhere}"
