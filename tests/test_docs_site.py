"""The built documentation site as a reader sees it: pages open in a real browser (headless
Chromium), formulas are typeset by the bundled MathJax (no raw LaTeX left), and every image loads.

Runs after ``make docs`` (which calls it); skipped when the site is not built or Chromium is not
installed, unless ``THEORY_REQUIRE_DOCS=1`` (set by CI), which turns the skip into a failure.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SITE = ROOT / "docs" / "_build" / "html"
SHOTS = ROOT / "docs" / "_build" / "screenshots"
REQUIRED = os.environ.get("THEORY_REQUIRE_DOCS") == "1"


def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def _need(condition: bool, reason: str) -> None:
    if not condition:
        if REQUIRED:
            pytest.fail(reason)
        pytest.skip(reason)


@pytest.fixture(scope="module")
def browser():
    _need(SITE.joinpath("index.html").exists(), "the site is not built: run `make docs`")
    path = _chromium()
    _need(path is not None, "Chromium is not installed (Debian: apt-get install chromium)")
    profile = tempfile.mkdtemp(prefix="theory-docs-chromium-")
    flags = [path, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             "--allow-file-access-from-files", f"--user-data-dir={profile}", "--virtual-time-budget=15000"]
    yield flags
    shutil.rmtree(profile, ignore_errors=True)


def _dom(browser, page: Path) -> str:
    out = subprocess.run(browser + ["--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout


def _probe(dom: str) -> dict:
    body = re.search(r"<body([^>]*)>", dom)
    assert body, "no <body> in the rendered page"
    attrs = dict(re.findall(r'data-([a-z-]+)="([^"]*)"', body.group(1)))
    assert "images" in attrs, "the page's render probe did not run (is _static/render_probe.js loaded?)"
    return {k: int(v) for k, v in attrs.items() if v.isdigit()}


def _visible_text(dom: str) -> str:
    dom = re.sub(r"<(script|style)\b.*?</\1>", " ", dom, flags=re.S)
    dom = re.sub(r"<mjx-assistive-mml\b.*?</mjx-assistive-mml>", " ", dom, flags=re.S)
    return re.sub(r"<[^>]+>", " ", dom)


RAW_LATEX = re.compile(r"\\(frac|mathbf|mathrm|sum|left|right|lambda|sigma|tfrac|operatorname)\b|\\\(|\\\[|\$\$")


def _screenshot(browser, page: Path, name: str) -> Path:
    SHOTS.mkdir(parents=True, exist_ok=True)
    target = SHOTS / f"{name}.png"
    out = subprocess.run(browser + ["--window-size=1280,1600", f"--screenshot={target}", page.as_uri()],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert target.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and target.stat().st_size > 20_000, target
    return target


@pytest.mark.parametrize("page, name", [
    ("index.html", "index"),
    ("_generated/papers/topk.html", "paper-topk"),
    ("_generated/api/generated/theory.topk.topk_mask.html", "api-topk_mask"),
])
def test_page_renders(browser, page, name):
    path = SITE / page
    assert path.exists(), f"{page} was not built"
    dom = _dom(browser, path)
    probe = _probe(dom)
    assert probe.get("broken-images", 0) == 0, f"{page}: {probe['broken-images']} image(s) did not load"
    assert probe.get("math", 0) == probe.get("typeset", 0), f"{page}: formulas left untypeset: {probe}"
    raw = RAW_LATEX.search(_visible_text(dom))
    assert raw is None, f"{page}: raw LaTeX in the rendered text near {raw.group(0)!r}"
    _screenshot(browser, path, name)


def test_paper_page_shows_its_figures(browser):
    probe = _probe(_dom(browser, SITE / "_generated" / "papers" / "topk.html"))
    assert probe["images"] >= 1 and probe.get("broken-images", 0) == 0, probe


def test_api_page_typesets_math(browser):
    probe = _probe(_dom(browser, SITE / "_generated" / "api" / "generated" / "theory.topk.topk_mask.html"))
    assert probe.get("typeset", 0) >= 3, f"MathJax typeset {probe.get('typeset', 0)} formulas: {probe}"
