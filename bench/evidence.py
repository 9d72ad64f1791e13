"""The evidence tools (`waveform`, `changes`, `readpages`, `searchdocs`) against the library or
binary alone doing the same read, in the same run.

    .venv/bin/python bench/evidence.py [--vcd-mb 20 --signals 2000] [--commits 1000] [--pages 200]
        [--search-pages 200] [--reps 5] [--dir .] [--json FILE]

Issue 57's full sizes: `--vcd-mb 20 --signals 10000 --commits 10000 --search-pages 2000` (the VCD
was 200 MiB until `waveform` came to refuse a VCD over `MAX_VCD_BYTES`, 24 MiB, for its memory:
`bench/waveform_memory.py`; a larger `--vcd-mb` is refused in one line). The inputs are generated
(`bench/evidence_inputs.py`) in a temporary folder and left quiet for `QUIET_NS` (a file written
long before its run, as a record is); each is admitted once per rep with the digest memory cleared
(admission, reported apart), then each tool runs as the executor runs it (a reading session,
verified after) beside its peer, interleaved, after one untimed warm-up of each; medians. Before
timing, each pair's outputs are checked to hold the same things (signals and changes, commits and
line counts, lines of text, pages holding the query), so the two do the same work.

- `waveform`: 4 signals by name and a glob of 11, their values at the middle of the file and their
  changes within ±500 ns, against pywellen alone (opened single-threaded, as the tool opens it;
  the signals found among all its variables, the changes found by bisection). Target ≤ 1.5×.
- `changes` from the tag `night-pass` (40 commits before HEAD) to HEAD, against
  `git log --numstat night-pass..HEAD`. Target ≤ 2×.
- `readpages` of 10 pages in the middle of the PDF, against pypdfium2 alone (the document opened by
  path) extracting the same pages' text. No target: the ratio is reported.
- `searchdocs` of two words over 4 generated PDF manuals sharing `--search-pages` pages, against
  `grep -c -i -E 'clk_en|deassert'` over their text, extracted once beforehand (untimed) with
  pypdfium2 into a file per PDF. Target ≤ 3×. grep reads text already extracted; the tool reads
  PDFs: the first call over a set of versions extracts every page's text with pdfium and builds
  the FTS index, and the process keeps both under the versions' sha256 (`tools/specs/docindex.py`),
  so the row (after the warm-up) times a call over kept versions: every spec opened and proven the
  admitted version (its digest remembered, as after admission), the index queried, the candidates
  written. The first call, the index build alone, and a call whose specs must be hashed again (a
  process that did not admit them) are printed under the table.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import evidence_cases as cases
from bench.evidence_inputs import write_manuals, write_pdf, write_repository, write_vcd
from bench.report import write_ratios
from scenario.digests import QUIET_NS, forget_all
from scenario.registry import Record, load_scenario
from tools.wave.values import MAX_VCD_BYTES

RECORDS = {
    "wave": ("waveform", "sim.vcd"),
    "rtl": ("repository", "design"),
    "spec": ("spec", "spec.pdf"),
}
"""Each case's record: its id → (kind, path); each admitted by a manifest of its own."""


@dataclass(frozen=True)
class Row:
    case: str
    size: str
    admission_s: float
    warrant_s: float
    peer_s: float
    peer: str
    target: float | None


def _admitted(
    folder: Path, name: str, entries: dict[str, tuple[str, str]], reps: int
) -> tuple[list[Record], float]:
    """The records (id → kind, path), admitted by a manifest of their own, and the median time to
    admit them (hashed, or a repository's HEAD pinned) with no digest remembered."""
    manifest = folder / f"{name}.toml"
    manifest.write_text(
        'id = "E"\nprofile = "triage"\n'
        + "".join(
            f'[[record]]\nid = "{record_id}"\nkind = "{kind}"\npath = "{path}"\n'
            for record_id, (kind, path) in entries.items()
        )
    )
    times = []
    for _ in range(reps):
        forget_all()
        started = time.perf_counter()
        records = load_scenario(manifest).records
        times.append(time.perf_counter() - started)
    return [records[record_id] for record_id in entries], statistics.median(times)


def _interleaved(pair: tuple[Callable[[], Any], Callable[[], Any]], reps: int) -> list[float]:
    """Medians of each side, run alternately (which goes first alternates too), after a warm-up."""
    for side in pair:
        side()
    times: list[list[float]] = [[], []]
    for rep in range(reps):
        for which in (0, 1) if rep % 2 == 0 else (1, 0):
            started = time.perf_counter()
            pair[which]()
            times[which].append(time.perf_counter() - started)
    return [statistics.median(side) for side in times]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vcd-mb", type=int, default=20)
    parser.add_argument("--signals", type=int, default=2000)
    parser.add_argument("--commits", type=int, default=1000)
    parser.add_argument("--pages", type=int, default=200)
    parser.add_argument("--search-pages", type=int, default=200)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--dir", type=Path, default=Path("."), help="where the inputs are written")
    parser.add_argument("--json", type=Path, help="also write the ratios to this file")
    args = parser.parse_args()
    if args.signals < 300:
        sys.exit("--signals must be at least 300 (the glob reads scope tb.u2)")
    if args.vcd_mb << 20 > MAX_VCD_BYTES:
        sys.exit(
            f"--vcd-mb {args.vcd_mb}: `waveform` reads a VCD of {MAX_VCD_BYTES >> 20} MiB at most"
        )
    with tempfile.TemporaryDirectory(dir=args.dir) as name:
        folder = Path(name)
        print("generating the inputs…", file=sys.stderr, flush=True)
        vcd = write_vcd(folder / "sim.vcd", args.vcd_mb, args.signals)
        if vcd.path.stat().st_size > MAX_VCD_BYTES:
            sys.exit(
                f"--vcd-mb {args.vcd_mb}: the VCD written is {vcd.path.stat().st_size:,} bytes, over"
                f" the {MAX_VCD_BYTES >> 20} MiB `waveform` reads (tools/wave/values.py); ask for less"
            )
        write_repository(folder / "design", args.commits)
        write_pdf(folder / "spec.pdf", args.pages)
        manuals = write_manuals(folder, args.search_pages)
        time.sleep(QUIET_NS / 1e9)
        admitted = {
            record_id: _admitted(folder, record_id, {record_id: entry}, args.reps)
            for record_id, entry in RECORDS.items()
        }
        admitted["manuals"] = _admitted(
            folder, "manuals", {path.name: ("spec", path.name) for path in manuals}, args.reps
        )
        rows = []
        for make, (_, admission_s) in zip(
            (
                lambda: cases.waveform_case(vcd, admitted["wave"][0][0]),
                lambda: cases.changes_case(folder / "design", admitted["rtl"][0][0]),
                lambda: cases.readpages_case(
                    folder / "spec.pdf", args.pages, admitted["spec"][0][0]
                ),
                lambda: cases.searchdocs_case(manuals, admitted["manuals"][0]),
            ),
            admitted.values(),
            strict=True,
        ):
            gc.collect()  # a row is timed without what the rows before it left behind
            case = make()
            case.check()
            warrant_s, peer_s = _interleaved((case.warrant, case.peer), args.reps)
            rows.append(
                Row(
                    case.name,
                    case.size,
                    admission_s,
                    warrant_s,
                    peer_s,
                    case.peer_name,
                    case.target,
                )
            )
            del case
        first = cases.first_search(admitted["manuals"][0], min(args.reps, 3))
    _print(rows, args.reps)
    print(
        f"\nsearchdocs, {args.search_pages} pages (medians of {first.reps}): the first call over"
        f" these versions (nothing kept: pdfium's text of every page, then the index)"
        f" {first.call_s * 1e3:.0f} ms, of which building the FTS index"
        f" {first.build_s * 1e3:.1f} ms; a call over kept versions whose sha256 is not remembered"
        f" (every spec hashed again) {first.rehashed_s * 1e3:.1f} ms."
    )
    write_ratios(
        args.json,
        {f"evidence, {row.case}: Warrant / {row.peer}": row.warrant_s / row.peer_s for row in rows},
    )


def _print(rows: list[Row], reps: int) -> None:
    print(f"Evidence tools against their peers (medians of {reps} interleaved runs)\n")
    print("| tool | input | peer | admission ms | Warrant ms | peer ms | ratio | target | met |")
    print("| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | --- |")
    for row in rows:
        ratio = row.warrant_s / row.peer_s
        target = "—" if row.target is None else f"≤ {row.target:g}×"
        met = "—" if row.target is None else ("yes" if ratio <= row.target else "no")
        print(
            f"| {row.case} | {row.size} | {row.peer} | {row.admission_s * 1e3:.1f} |"
            f" {row.warrant_s * 1e3:.1f} |"
            f" {row.peer_s * 1e3:.1f} | {ratio:.2f}× | {target} | {met} |"
        )


if __name__ == "__main__":
    main()
