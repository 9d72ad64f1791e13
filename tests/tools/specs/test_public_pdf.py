"""readpages over a real public PDF (`tests/data/pdfs/hello_world_2_pages.pdf`, from PDFium's test
resources, BSD-3-Clause: `tests/data/SOURCES.md`). The expected lines are the strings its page
content shows (`(…) Tj`), read from the file's bytes here, never from the tool."""

from __future__ import annotations

import re
from pathlib import Path

from tests.helpers import one_record
from tools.specs import readpages

PDF = Path(__file__).resolve().parents[2] / "data" / "pdfs" / "hello_world_2_pages.pdf"


def shown_strings(data: bytes) -> list[str]:
    """The text a page's uncompressed content stream shows, in order: each `(…) Tj` operand."""
    stream = re.search(rb"stream\r?\n(.*?)endstream", data, re.S)
    assert stream is not None
    return [text.decode("latin-1") for text in re.findall(rb"\((.*?)\)\s*Tj", stream.group(1))]


def test_a_public_pdf_reads_page_by_page_as_its_content_shows(tmp_path):
    record = one_record(tmp_path, "spec.pdf", "spec", PDF.read_bytes())
    assert record.media == "pdf"
    excerpt = readpages.run(readpages.ReadPagesArgs(path="r", page=1, count=2), {"path": record})
    pages = int(re.search(rb"/Count (\d+)", PDF.read_bytes()).group(1))  # type: ignore[union-attr]
    strings = shown_strings(PDF.read_bytes())
    assert [line.text for line in excerpt.lines] == [
        f"p{page}:{number}: {text}"
        for page in range(1, pages + 1)
        for number, text in enumerate(strings, 1)
    ]
    assert not excerpt.unknowns and not excerpt.truncated
