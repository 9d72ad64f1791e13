"""A PDF's text, page by page, from bytes already read through a record's hashed stream: pdfium is
handed those bytes, never the path, so the text shown is that of the version admitted.

pdfium is not thread-safe (one library state per process): every use holds one lock.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

_PDFIUM = threading.Lock()


class UnreadablePdf(Exception):
    """The bytes are not a PDF pdfium can open (damaged, or encrypted): `reason` in one line."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class Pages:
    """The document's page count, and the text of the pages asked for that it has, in order."""

    count: int
    texts: tuple[str, ...]


def page_texts(data: bytes, first: int, count: int) -> Pages:
    """The text of pages `first` to `first + count - 1` (1-based) of the PDF in `data`; a page
    past the document's end is left out. `UnreadablePdf` when pdfium cannot open or read it."""
    import pypdfium2 as pdfium  # start-up cost: only where a PDF is read

    with _PDFIUM:
        try:
            document = pdfium.PdfDocument(data)
        except pdfium.PdfiumError as exc:
            raise UnreadablePdf(_reason(str(exc))) from None
        try:
            total = len(document)
            texts = []
            for index in range(first - 1, min(total, first - 1 + count)):
                page = document[index]
                textpage = page.get_textpage()
                texts.append(textpage.get_text_range())
                textpage.close()
                page.close()
        except pdfium.PdfiumError as exc:
            raise UnreadablePdf(_reason(str(exc))) from None
        finally:
            document.close()
    return Pages(total, tuple(texts))


def _reason(message: str) -> str:
    """pdfium's error as one line a reader can act on."""
    if "password" in message.lower():
        return "the PDF is encrypted (a password is needed)"
    return f"pdfium cannot read it ({' '.join(message.split())[:200]})"


def page_lines(text: str) -> list[str]:
    """A page's text as lines (pdfium ends a line with CR LF), trailing blank lines dropped."""
    lines = text.splitlines()
    while lines and not lines[-1].strip():
        lines.pop()
    return lines
