"""Real documents built by the tests themselves: a hand-assembled PDF (valid xref) and a DOCX via python-docx."""

from __future__ import annotations

import io


def assemble_pdf(objects: list[bytes]) -> bytes:
    """A PDF file of numbered `objects` (object 1 the catalog) with an exact xref table."""
    out = io.BytesIO()
    out.write(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(out.tell())
        out.write(f"{number} 0 obj\n".encode() + body + b"\nendobj\n")
    xref = out.tell()
    out.write(f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode())
    for offset in offsets:
        out.write(f"{offset:010d} 00000 n \n".encode())
    out.write(f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode())
    return out.getvalue()


def make_pdf(pages: list[str]) -> bytes:
    """A minimal PDF with one Helvetica text line per page; offsets in the xref table are exact."""
    count = len(pages)
    objects: list[bytes] = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids ["
        + b" ".join(f"{4 + 2 * i} 0 R".encode() for i in range(count))
        + f"] /Count {count} >>".encode(),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    for index, text in enumerate(pages):
        escaped = text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)").encode("latin-1")
        stream = b"BT /F1 12 Tf 72 720 Td (" + escaped + b") Tj ET"
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> "
            f"/Contents {5 + 2 * index} 0 R >>".encode()
        )
        objects.append(b"<< /Length " + str(len(stream)).encode() + b" >>\nstream\n" + stream + b"\nendstream")
    return assemble_pdf(objects)


def make_docx() -> bytes:
    import docx

    document = docx.Document()
    document.add_heading("Quarterly Report", level=1)
    document.add_paragraph("Revenue grew in every region.")
    document.add_heading("Details", level=2)
    table = document.add_table(rows=2, cols=2)
    table.cell(0, 0).text = "region"
    table.cell(0, 1).text = "growth"
    table.cell(1, 0).text = "north"
    table.cell(1, 1).text = "12%"
    document.add_paragraph("Closing remark.")
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


HTML_PAGE = b"""<!doctype html>
<html><head><title>Guide Title</title><style>body { color: red }</style>
<script>var secret = "do-not-show";</script></head>
<body><h1>Getting started</h1><p>Install with <a href="https://example.org/pkg">the package</a>.</p>
<ul><li>first step</li><li>second step</li></ul><noscript>enable js</noscript></body></html>"""
