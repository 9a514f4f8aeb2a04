"""Doc images cannot drift: every image README.md and docs/*.md show exists and is written by a browser test.

The Playwright suite (src/frontend/e2e, `make ui-e2e`, run by CI) saves a doc image with
`shot(name, { doc: "dir/name" })`, which writes docs/images/dir/name.png on every run. This gate reads those
string literals (the manifest is the tests themselves) and fails when a doc shows an image no test writes, when
a referenced image is missing, or when docs/images holds an image no doc shows.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytestmark = pytest.mark.db_independent

ROOT = Path(__file__).resolve().parent.parent
IMAGES = ROOT / "docs" / "images"
E2E = ROOT / "src" / "frontend" / "e2e"
_MARKDOWN_IMAGE = re.compile(r"!\[[^\]]*\]\(([^)\s]+)")
_HTML_IMAGE = re.compile(r"<img\b[^>]*\bsrc=\"([^\"]+)\"")
_DOC_SHOT = re.compile(r"\bdoc:\s*\"([\w./-]+)\"")


def referenced_images() -> dict[Path, list[str]]:
    """Local images the docs show -> the docs that show them."""
    found: dict[Path, list[str]] = {}
    for doc in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        text = doc.read_text(encoding="utf-8")
        for target in _MARKDOWN_IMAGE.findall(text) + _HTML_IMAGE.findall(text):
            if re.match(r"[a-z]+:", target):  # a remote image (https:, data:) is no file of ours
                continue
            path = (doc.parent / target.split("#")[0]).resolve()
            found.setdefault(path, []).append(doc.name)
    return found


def generated_images() -> dict[Path, str]:
    """docs/images files the browser tests write -> the spec that writes each."""
    made: dict[Path, str] = {}
    for spec in sorted(E2E.glob("*.ts")):
        for name in _DOC_SHOT.findall(spec.read_text(encoding="utf-8")):
            made[(IMAGES / f"{name}.png").resolve()] = spec.name
    return made


def test_every_doc_image_exists_and_is_written_by_a_browser_test() -> None:
    shown, made = referenced_images(), generated_images()
    assert shown, "no doc image found: the gate reads the wrong files"
    missing = {str(p.relative_to(ROOT)): docs for p, docs in shown.items() if not p.is_file()}
    assert not missing, f"images the docs show that do not exist: {missing}"
    untested = {str(p.relative_to(ROOT)): docs for p, docs in shown.items() if p not in made}
    assert not untested, (
        f"doc images no browser test writes (add `shot(name, {{ doc: ... }})` to a spec in e2e/): {untested}"
    )


def test_docs_images_holds_only_what_docs_show() -> None:
    shown, made = referenced_images(), generated_images()
    orphans = sorted(str(p.relative_to(ROOT)) for p in IMAGES.rglob("*.png") if p.resolve() not in shown)
    assert not orphans, f"images in docs/images no doc shows (delete them or show them): {orphans}"
    unshown = {str(p.relative_to(ROOT)): spec for p, spec in made.items() if p not in shown}
    assert not unshown, f"browser tests write doc images no doc shows (show them or drop `doc:`): {unshown}"
