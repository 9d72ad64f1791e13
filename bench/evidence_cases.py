"""The cases `bench/evidence.py` times: each tool's call as the executor makes it, its peer doing the
same read alone, and a check, made before timing, that the two found the same things."""

from __future__ import annotations

import bisect
import fnmatch
import re
import subprocess
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.evidence_inputs import SCOPE_SIZE, WINDOW_COMMITS, Vcd
from scenario.reading import reading
from scenario.registry import Record
from tools.excerpt import Excerpt
from tools.repo import changes
from tools.repo.args import ChangesArgs
from tools.specs import readpages
from tools.specs.readpages import ReadPagesArgs
from tools.wave import run as wave
from tools.wave.args import WaveformArgs

WINDOW_NS = 500
PAGES_READ = 10


@dataclass(frozen=True)
class Case:
    name: str
    size: str
    peer_name: str
    target: float | None
    warrant: Callable[[], Excerpt]
    peer: Callable[[], Any]
    check: Callable[[], None]


def executed(run: Callable[..., Excerpt], args: Any, records: dict[str, Record]) -> Excerpt:
    """As the executor runs a tool (`nodes/execute.py::_read`): in a reading session, every file it
    read proven the admitted version afterwards."""
    with reading(None) as session:
        excerpt = run(args, records)
        session.verify()
    return excerpt


def _same(what: str, warrant: object, peer: object) -> None:
    if warrant != peer:
        raise SystemExit(f"{what}: Warrant found {warrant}, its peer {peer}: not the same work")


def waveform_case(vcd: Vcd, record: Record) -> Case:
    last_scope = (vcd.signals - 1) // SCOPE_SIZE
    names = ["tb.u0.s0", "tb.u0.s3", f"tb.u{last_scope}.s7", "tb.u1.s42"]
    glob = "tb.u2.s1*"
    at = (vcd.end_ns // 2) + 5
    args = WaveformArgs(
        path="wave", signals=[*names, glob], at=f"{at} ns", window=f"{WINDOW_NS} ns"
    )

    def peer() -> dict[str, tuple[Any, list[Any]]]:
        return _pywellen_read(str(vcd.path), names, glob, at, (at - WINDOW_NS, at + WINDOW_NS))

    def warrant() -> Excerpt:
        return executed(wave.run, args, {"path": record})

    def check() -> None:
        excerpt, found = warrant(), peer()
        shown = re.search(r"(\d+) signals? at .*: (\d+) changes shown", excerpt.summary)
        assert shown is not None, excerpt.summary
        counts = (int(shown[1]), int(shown[2]), excerpt.truncated)
        _same("waveform", counts, (len(found), sum(len(c) for _, c in found.values()), False))

    size = f"{vcd.path.stat().st_size >> 20} MiB VCD, {vcd.signals} signals"
    return Case("waveform", size, "pywellen", 1.5, warrant, peer, check)


def _pywellen_read(
    path: str, names: list[str], glob: str, at: int, span: tuple[int, int]
) -> dict[str, tuple[Any, list[Any]]]:
    """pywellen alone: the file opened, the signals found, each one's value at `at` and its
    changes within `span` (by bisection over its changes, both ends included)."""
    import pywellen

    waveform = pywellen.Waveform(path, multi_threaded=False)
    scope, _, pattern = glob.rpartition(".")
    found = {}
    for var in waveform.all_vars():
        name = str(var.full_name)
        its_scope, _, its_last = name.rpartition(".")
        if name in names or (its_scope == scope and fnmatch.fnmatchcase(its_last, pattern)):
            signal = var.signal
            start = bisect.bisect_left(signal, span[0], key=lambda change: change[0])
            end = bisect.bisect_right(signal, span[1], key=lambda change: change[0])
            found[name] = (signal.value_at(at), [signal[i] for i in range(start, end)])
    return found


def changes_case(folder: Path, record: Record) -> Case:
    args = ChangesArgs(repo="rtl", since="night-pass", until="HEAD")
    git = ["git", "-C", str(folder), "log", "--numstat", "night-pass..HEAD"]

    def peer() -> str:
        return subprocess.run(git, capture_output=True, text=True, check=True).stdout

    def warrant() -> Excerpt:
        return executed(changes.run, args, {"repo": record})

    def check() -> None:
        excerpt, log = warrant(), peer()
        files = Counter(
            tuple(line.text.split()) for line in excerpt.lines if line.text.startswith("  +")
        )
        numstat = Counter(
            (f"+{added}", f"-{deleted}", path)
            for added, deleted, path in re.findall(r"^(\d+)\t(\d+)\t(.+)$", log, re.M)
        )
        commits = sum(not line.text.startswith(" ") for line in excerpt.lines)
        _same("changes", (commits, files), (log.count("\ncommit ") + 1, numstat))
        _same("changes' window", commits, WINDOW_COMMITS)

    commits = int(
        subprocess.run(
            ["git", "-C", str(folder), "rev-list", "--count", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )
    size = f"{commits} commits, {WINDOW_COMMITS} in the window"
    return Case("changes", size, "git log --numstat", 2.0, warrant, peer, check)


def readpages_case(path: Path, pages: int, record: Record) -> Case:
    first = max(1, pages // 2 - PAGES_READ // 2)
    args = ReadPagesArgs(path="spec", page=first, count=PAGES_READ)

    def peer() -> list[str]:
        import pypdfium2 as pdfium

        document = pdfium.PdfDocument(str(path))
        try:
            texts = []
            for index in range(first - 1, min(len(document), first - 1 + PAGES_READ)):
                page = document[index]
                textpage = page.get_textpage()
                texts.append(textpage.get_text_range())
                textpage.close()
                page.close()
        finally:
            document.close()
        return texts

    def warrant() -> Excerpt:
        return executed(readpages.run, args, {"path": record})

    def check() -> None:
        excerpt, texts = warrant(), peer()
        lines = [line for text in texts for line in text.splitlines() if line.strip()]
        _same("readpages", len(excerpt.lines), len(lines))

    size = f"{pages}-page PDF ({path.stat().st_size >> 10} KiB), {PAGES_READ} pages read"
    return Case("readpages", size, "pypdfium2", None, warrant, peer, check)
