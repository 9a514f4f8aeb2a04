"""Binary and markup formats to plain text: PDF (pypdf), DOCX (python-docx), HTML (BeautifulSoup + markdownify).

Each function takes the raw bytes and returns readable text; a document that cannot be parsed raises
`context_file_unsupported` with the format named, so the user knows to convert it themselves. A document over
`DocumentLimits.max_pages` or `max_chars` raises `document_too_large` as soon as the count is passed. These run
in the converter process (`worker`) for PDF, DOCX and large HTML; see `fleet_rlm.runtime.context.convert`.
"""

from __future__ import annotations

import io
import re
from typing import Any

from fleet_rlm.errors import FleetError
from fleet_rlm.runtime.docsafe.limits import FILE_UNSUPPORTED, DocumentLimits, too_large, unreadable

_BLANK_RUNS = re.compile(r"\n{3,}")
_DROP_TAGS = ("script", "style", "noscript", "template", "svg", "canvas", "iframe", "object", "embed", "form")


class _Budget:
    """Counts characters of extracted text against `max_chars`."""

    def __init__(self, name: str, limits: DocumentLimits) -> None:
        self.name, self.limits, self.chars = name, limits, 0

    def add(self, text: str) -> str:
        self.chars += len(text)
        if self.chars > self.limits.max_chars:
            bound = str(self.limits.max_chars)
            raise too_large(self.name, f"its text exceeds {bound} characters", "max_chars", bound)
        return text


def pdf_text(data: bytes, *, name: str, limits: DocumentLimits) -> tuple[str, dict[str, Any]]:
    """Text of every page, pages separated by `--- page N ---` markers so answers can cite pages."""
    from pypdf import PdfReader
    from pypdf.errors import PyPdfError

    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise FleetError(
                f"{name!r} is a password-protected PDF",
                code=FILE_UNSUPPORTED,
                status=422,
                details={"name": name},
            )
        count = len(reader.pages)
        if count > limits.max_pages:
            raise too_large(name, f"it has {count} pages", "max_pages", str(limits.max_pages))
        budget = _Budget(name, limits)
        pages = [budget.add(page.extract_text() or "") for page in reader.pages]
    except FleetError:
        raise
    except (PyPdfError, ValueError, KeyError, TypeError, OSError, AttributeError, RecursionError) as exc:
        raise unreadable("PDF", name, exc) from exc
    parts = [f"--- page {index} ---\n{text.strip()}" for index, text in enumerate(pages, start=1)]
    info: dict[str, Any] = {"pages": len(pages)}
    if not any(text.strip() for text in pages):
        info["warning"] = "the PDF has no extractable text (scanned images?)"
    return "\n\n".join(parts), info


def docx_text(data: bytes, *, name: str, limits: DocumentLimits) -> tuple[str, dict[str, Any]]:
    """Paragraphs and tables in document order; headings become Markdown `#` lines, table rows `a | b`."""
    import docx
    from docx.opc.exceptions import PackageNotFoundError
    from docx.table import Table

    budget = _Budget(name, limits)
    try:
        document = docx.Document(io.BytesIO(data))
        # `paragraph.style` scans every style per paragraph (seconds for a 200 KB file): map ids once instead
        style_names = {style.style_id: style.name or "" for style in document.styles}
        lines: list[str] = []
        tables = 0
        for block in document.iter_inner_content():
            if isinstance(block, Table):
                tables += 1
                for row in block.rows:
                    lines.append(budget.add(" | ".join(cell.text.strip() for cell in row.cells)))
                lines.append("")
                continue
            text = budget.add(block.text.strip())
            if not text:
                continue
            level = _heading_level(style_names.get(block._p.style or "", ""))
            lines.append(f"{'#' * level} {text}" if level else text)
            lines.append("")
    except FleetError:
        raise
    except MemoryError:
        raise
    except (PackageNotFoundError, KeyError, ValueError, OSError) as exc:
        raise unreadable("DOCX", name, exc) from exc
    except Exception as exc:  # lxml and zipfile raise assorted errors on damaged files
        raise unreadable("DOCX", name, exc) from exc
    return "\n".join(lines).strip() + "\n", {"tables": tables}


def _heading_level(style: str) -> int:
    if style == "Title":
        return 1
    if style.startswith("Heading "):
        suffix = style.removeprefix("Heading ").strip()
        if suffix.isdigit():
            return min(int(suffix), 6)
    return 0


def html_text(html: str, *, name: str, limits: DocumentLimits) -> tuple[str, dict[str, Any]]:
    """Readable Markdown: scripts, styles and embedded objects dropped, headings/links/lists/tables kept."""
    from bs4 import BeautifulSoup
    from markdownify import MarkdownConverter

    try:
        soup = BeautifulSoup(html, "lxml")
    except Exception:  # lxml refuses some inputs; the stdlib parser accepts anything
        soup = BeautifulSoup(html, "html.parser")
    title = soup.title.get_text(" ", strip=True) if soup.title else ""
    for tag in soup.find_all(_DROP_TAGS):
        tag.decompose()
    if soup.head is not None:
        soup.head.decompose()
    body = soup.body or soup
    converter = MarkdownConverter(heading_style="ATX", strip=["img"], escape_underscores=False)
    try:
        markdown = converter.convert_soup(body)
    except RecursionError:  # absurdly deep nesting: plain text is still readable
        markdown = body.get_text("\n")
    text = _Budget(name, limits).add(_BLANK_RUNS.sub("\n\n", markdown).strip())
    info: dict[str, Any] = {}
    if title:
        info["title"] = title
        if not text.startswith("# "):
            text = f"# {title}\n\n{text}"
    return text + "\n", info
