"""A minimal valid PDF written by hand, for tests: one Helvetica text line per line of each page,
a correct cross-reference table. What a test expects is the text it wrote, never what a reader
made of it."""

from __future__ import annotations


def _escaped(text: str) -> bytes:
    raw = text.encode("latin-1")
    return raw.replace(b"\\", b"\\\\").replace(b"(", b"\\(").replace(b")", b"\\)")


def make_pdf(pages: list[list[str]]) -> bytes:
    """A PDF of `pages`, each a list of lines (ASCII), each line its own text object."""
    count = len(pages)
    font = 3 + 2 * count  # objects: 1 catalog, 2 pages, then page and content per page, then font
    objects: list[bytes] = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids ["
        + b" ".join(f"{3 + 2 * index} 0 R".encode() for index in range(count))
        + f"] /Count {count} >>".encode(),
    ]
    for index, lines in enumerate(pages):
        stream = b"".join(
            b"BT /F1 12 Tf 72 %d Td (%s) Tj ET\n" % (720 - 16 * number, _escaped(line))
            for number, line in enumerate(lines)
        )
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents {4 + 2 * index} 0 R"
            f" /Resources << /Font << /F1 {font} 0 R >> >> >>".encode()
        )
        objects.append(b"<< /Length %d >>\nstream\n%sendstream" % (len(stream), stream))
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref,
    )
    return bytes(out)
