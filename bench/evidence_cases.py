"""The cases `bench/evidence.py` times: each tool's call as the executor makes it, its peer doing the
same read alone, and a check, made before timing, that the two found the same things."""

from __future__ import annotations

import bisect
import fnmatch
import re
import statistics
import subprocess
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.evidence_inputs import QUERY_WORDS, SCOPE_SIZE, WINDOW_COMMITS, Vcd
from scenario.digests import forget_all
from scenario.reading import reading
from scenario.registry import Record
from tools.excerpt import Excerpt
from tools.repo import changes
from tools.repo.args import ChangesArgs
from tools.specs import docindex, readpages, searchdocs
from tools.specs.readpages import ReadPagesArgs
from tools.specs.searchdocs import SearchDocsArgs
from tools.wave import run as wave
from tools.wave.args import WaveformArgs

WINDOW_NS = 500
PAGES_READ = 10
SEARCH_LIMIT = 5


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


def page_texts(path: Path, start: int, count: int | None) -> list[str]:
    """The text of `count` pages (all, for None) from page index `start`, by pypdfium2 alone (the
    document opened by path): the PDF peers' read."""
    import pypdfium2 as pdfium

    document = pdfium.PdfDocument(str(path))
    try:
        texts = []
        end = len(document) if count is None else min(len(document), start + count)
        for index in range(start, end):
            page = document[index]
            textpage = page.get_textpage()
            texts.append(textpage.get_text_range())
            textpage.close()
            page.close()
    finally:
        document.close()
    return texts


def readpages_case(path: Path, pages: int, record: Record) -> Case:
    first = max(1, pages // 2 - PAGES_READ // 2)
    args = ReadPagesArgs(path="spec", page=first, count=PAGES_READ)

    def peer() -> list[str]:
        return page_texts(path, first - 1, PAGES_READ)

    def warrant() -> Excerpt:
        return executed(readpages.run, args, {"path": record})

    def check() -> None:
        excerpt, texts = warrant(), peer()
        lines = [line for text in texts for line in text.splitlines() if line.strip()]
        _same("readpages", len(excerpt.lines), len(lines))

    size = f"{pages}-page PDF ({path.stat().st_size >> 10} KiB), {PAGES_READ} pages read"
    return Case("readpages", size, "pypdfium2", None, warrant, peer, check)


def searchdocs_case(paths: list[Path], records: list[Record]) -> Case:
    """searchdocs over the manuals against `grep -c -i -E` over their text, extracted once (here,
    untimed) with pypdfium2 into a file per PDF, as a reader keeping a text copy would grep it."""
    texts = [_extracted(path) for path in paths]
    args = SearchDocsArgs(query=" ".join(QUERY_WORDS), limit=SEARCH_LIMIT)
    every = {f"every.{record.id}": record for record in records}
    grep = ["grep", "-c", "-i", "-E", "|".join(QUERY_WORDS), *(str(text) for text, _ in texts)]

    def peer() -> str:
        return subprocess.run(grep, capture_output=True, text=True, check=True).stdout

    def warrant() -> Excerpt:
        return executed(searchdocs.run, args, every)

    def check() -> None:
        """grep's lines are the lines holding a query word as a whole word, the pages holding
        them are the pages the index matches, and the tool shows its best among them."""
        word = re.compile(rf"(?<!\w)(?:{'|'.join(QUERY_WORDS)})(?!\w)", re.IGNORECASE)
        counted = sum(int(line.rpartition(":")[2]) for line in peer().splitlines())
        holding = {
            (record.id, page)
            for record, (_, pages) in zip(records, texts, strict=True)
            for page, text in enumerate(pages, start=1)
            if word.search(text)
        }
        lines = sum(
            bool(word.search(line))
            for _, pages in texts
            for text in pages
            for line in text.splitlines()
        )
        with reading(None):
            hits, _ = docindex.search(records, list(QUERY_WORDS), 1 << 20)
        matched = {(hit.passage.record.id, hit.passage.page) for hit in hits}
        shown = re.findall(r"^#\d+ (\S+)@\w+:\d+: page (\d+),", _text(warrant()), re.M)
        _same("searchdocs' lines", lines, counted)
        _same("searchdocs' pages", matched, holding)
        _same("searchdocs' candidates", len(shown), SEARCH_LIMIT)
        _same("searchdocs' candidates found", {(r, int(p)) for r, p in shown} <= holding, True)

    pages = sum(len(pages) for _, pages in texts)
    size = f"{pages} pages in {len(paths)} PDFs ({sum(p.stat().st_size for p in paths) >> 10} KiB)"
    return Case("searchdocs", size, "grep -c -i -E", 3.0, warrant, peer, check)


@dataclass(frozen=True)
class FirstSearch:
    call_s: float
    """The first call over these versions: every page's text read, the index built."""
    build_s: float
    """Building the index alone, from the passages read."""
    rehashed_s: float
    """A call over kept versions whose sha256 is not remembered: every spec hashed again."""
    reps: int


def first_search(records: list[Record], reps: int) -> FirstSearch:
    """What a searchdocs call costs when it cannot use what the process kept: medians of `reps`
    (after the rows: it forgets the digests remembered)."""
    args = SearchDocsArgs(query=" ".join(QUERY_WORDS), limit=SEARCH_LIMIT)
    every = {f"every.{record.id}": record for record in records}
    calls, builds, rehashed = [], [], []
    for _ in range(reps):
        docindex.forget()
        started = time.perf_counter()
        executed(searchdocs.run, args, every)
        calls.append(time.perf_counter() - started)
    passages = docindex.read_specs(records).passages
    for _ in range(reps):
        started = time.perf_counter()
        docindex.build_index(passages).close()
        builds.append(time.perf_counter() - started)
    for _ in range(reps):
        forget_all()
        started = time.perf_counter()
        executed(searchdocs.run, args, every)
        rehashed.append(time.perf_counter() - started)
    medians = (statistics.median(times) for times in (calls, builds, rehashed))
    return FirstSearch(*medians, reps)


def _extracted(path: Path) -> tuple[Path, list[str]]:
    """The PDF's text (pypdfium2, as readpages' peer reads it) written beside it, a page after
    another; and each page's text."""
    pages = page_texts(path, 0, None)
    text = path.with_suffix(".txt")
    text.write_text("\n".join(pages) + "\n")
    return text, pages


def _text(excerpt: Excerpt) -> str:
    return "\n".join(line.text for line in excerpt.lines)
