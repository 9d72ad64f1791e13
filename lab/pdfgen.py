"""PDFs written by hand: the lab's datasheet of the reset controller, `lab/spec/rstc200.pdf`,
and the tests' and benches' PDFs, each one Helvetica text line per line of a page and a correct
cross-reference table (no PDF library writes them, so what a test expects is the text it wrote,
never what a reader made of it). `python -m lab.pdfgen` rewrites the datasheet, byte for byte the
same."""

from __future__ import annotations

from lab import LAB_DIR

DATASHEET = LAB_DIR / "spec" / "rstc200.pdf"

DATASHEET_PAGES = [
    [
        "RSTC-200 Reset and Clock-Enable Controller",
        "Datasheet, revision 2.1 (2026-11-20)",
        "Instance in the SoC top level: top.dut.u_rst_ctrl",
        "Contents: 2 Signals, 3 Reset sequence, 4 PLL lock filter, 5 Registers, 6 Revisions",
    ],
    [
        "2 Signals",
        "clk         in   core clock, 100 MHz in the SoC (10 ns period)",
        "rst_n       in   asynchronous board reset, active low",
        "pll_locked  in   the core PLL is locked, synchronous to clk",
        "rst_sync_n  out  rst_n through a two-stage synchronizer",
        "clk_en      out  core clock enable, high in state RUN",
        "state[1:0]  int  RESET = 0, WAIT_LOCK = 1, RUN = 2",
    ],
    [
        "3 Reset sequence",
        "RSTC-3.1 While rst_n is low, rst_sync_n and clk_en are low and state is RESET.",
        "RSTC-3.2 rst_sync_n rises on the second rising edge of clk after rst_n rises.",
        "RSTC-3.3 On the first rising edge of clk after rst_sync_n rises, state becomes WAIT_LOCK.",
        "RSTC-3.4 clk_en rises when state becomes RUN (see section 4).",
        "The integration note of revision 1.4 required clk_en within 4 cycles of rst_sync_n.",
    ],
    [
        "4 PLL lock filter (new in revision 2.1)",
        "RSTC-4.1 In WAIT_LOCK, lock_cnt counts rising edges of clk with pll_locked high.",
        "RSTC-4.2 state becomes RUN on the edge after lock_cnt reaches 4.",
        "RSTC-4.3 With pll_locked already high, clk_en rises 6 cycles after rst_sync_n.",
        "RSTC-4.4 A pll_locked low resets lock_cnt to 0.",
    ],
    [
        "5 Registers",
        "0x04 CTRL    bit 0 enable",
        "0x08 STATUS  bit 0 ready: reads clk_en",
    ],
    [
        "6 Revisions",
        "2.1  2026-11-20  PLL lock filter: four locked cycles before RUN (section 4)",
        "2.0  2026-11-10  wait for pll_locked before clk_en",
        "1.4  2026-10-02  two-stage reset synchronizer",
    ],
]
"""The datasheet's pages, each a list of lines: where a reader finds, on page 4, how many cycles
clk_en takes since revision 2.1, against the 4 of revision 1.4 (page 3)."""


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


def main() -> None:
    DATASHEET.write_bytes(make_pdf(DATASHEET_PAGES))


if __name__ == "__main__":
    main()
