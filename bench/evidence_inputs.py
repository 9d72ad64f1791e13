"""The inputs `bench/evidence.py` measures on, generated deterministically: a VCD written as text (pyvcd
is far slower at hundreds of MiB), a git repository made with dulwich (fixed dates, one pack), and a
PDF of many pages (written by hand, as the tests write one)."""

from __future__ import annotations

import operator
import random
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from lab.pdfgen import make_pdf

STEP_NS = 10
GROUPS = 20
"""A signal changes every `GROUPS` steps (one group of signals a step): 5% of the signals a step."""
SCOPE_SIZE = 100
"""Signals per scope: `tb.u<k>.s<j>`, j below SCOPE_SIZE."""
WINDOW_COMMITS = 40
"""Commits between the tag `night-pass` and HEAD: under `changes`' cap of 50 shown, so the tool and
`git log` list the same commits."""
REPO_FILES = 40
MANUALS = 4
MANUAL_LINES = 40
QUERY_WORDS = ("clk_en", "deassert")
"""The words `searchdocs` is asked for; no word of `MANUAL_WORDS` holds either, so `grep -i -E`
(any substring) and the index (whole words) find the same lines."""
_VOCABULARY = (
    "the clock reset domain register field bit write read enable disable interrupt status mask"
    " latch flop timing path setup hold slack corner fifo depth width burst address data valid"
    " ready handshake power gate rail voltage scan test mode debug trace counter timer divider"
    " phase lock loop jitter skew buffer arbiter request grant priority channel lane block"
)
MANUAL_WORDS = _VOCABULARY.split()


@dataclass(frozen=True)
class Vcd:
    path: Path
    end_ns: int
    signals: int


def _vcd_id(index: int) -> str:
    """A VCD identifier: the index in base 94 over the printable characters."""
    text = ""
    while True:
        index, digit = divmod(index, 94)
        text += chr(33 + digit)
        if index == 0:
            return text


def _width(index: int) -> int:
    return 8 if index % 4 == 3 else 1


def _value(index: int, phase: int) -> str:
    if _width(index) == 1:
        return f"{phase}{_vcd_id(index)}\n"
    return f"b{'10100101' if phase else '01011010'} {_vcd_id(index)}\n"


def write_vcd(path: Path, megabytes: int, signals: int, seed: int | None = None) -> Vcd:
    """A VCD of `signals` signals in scopes of `SCOPE_SIZE` (1-bit, every fourth an 8-bit bus),
    timescale 1 ns, a step every 10 ns changing one group of them, written to about `megabytes`.
    A group's values alternate between two patterns; with a `seed`, a bus's are drawn instead
    (`random.Random(seed)`), so that a reader's encoding compresses them far less (nearer the
    worst case for its memory: a design's values are not periodic)."""
    header = ["$timescale 1ns $end\n", "$scope module tb $end\n"]
    for index in range(signals):
        if index % SCOPE_SIZE == 0:
            header.append(f"$scope module u{index // SCOPE_SIZE} $end\n")
        header.append(f"$var wire {_width(index)} {_vcd_id(index)} s{index % SCOPE_SIZE} $end\n")
        if index % SCOPE_SIZE == SCOPE_SIZE - 1 or index == signals - 1:
            header.append("$upscope $end\n")
    header += ["$upscope $end\n", "$enddefinitions $end\n", "#0\n$dumpvars\n"]
    header += [_value(index, 0) for index in range(signals)] + ["$end\n"]
    changes = _periodic(signals) if seed is None else _drawn(signals, random.Random(seed))
    target, step = megabytes << 20, 1
    with path.open("w") as out:
        out.write("".join(header))
        written = out.tell()
        while written < target:
            chunk = "".join(f"#{(step + k) * STEP_NS}\n" + changes(step + k) for k in range(1000))
            out.write(chunk)
            written += len(chunk)
            step += 1000
    return Vcd(path, (step - 1) * STEP_NS, signals)


def _periodic(signals: int) -> Callable[[int], str]:
    """A step's changes: its group's values, in one pattern or the other in turn."""
    groups = [
        [
            "".join(_value(index, phase) for index in range(group, signals, GROUPS))
            for phase in (0, 1)
        ]
        for group in range(GROUPS)
    ]
    return lambda step: groups[step % GROUPS][(step // GROUPS) % 2]


_BITS = tuple([f"{phase}"] * 256 for phase in (0, 1))
_BYTES = tuple([f"b{byte & 0xFE | phase:08b} " for byte in range(256)] for phase in (0, 1))


def _drawn(signals: int, draw: random.Random) -> Callable[[int], str]:
    """A step's changes: its group's values, a 1-bit signal toggled (a bit's change can only be a
    toggle), a bus given 7 drawn bits and its lowest bit toggled (so that each change is one);
    through tables, so that a step costs a few calls, not one per signal."""
    groups = [range(group, signals, GROUPS) for group in range(GROUPS)]
    tables = [
        [
            [_BYTES[phase] if _width(index) == 8 else _BITS[phase] for index in group]
            for phase in (0, 1)
        ]
        for group in groups
    ]
    ids = [[f"{_vcd_id(index)}\n" for index in group] for group in groups]

    def changes(step: int) -> str:
        group, phase = step % GROUPS, (step // GROUPS) % 2
        drawn = draw.randbytes(len(ids[group]))
        values = map(operator.getitem, tables[group][phase], drawn)
        return "".join(map(operator.add, values, ids[group]))

    return changes


def write_repository(folder: Path, commits: int) -> None:
    """A repository of `commits` commits, one a fixed 10 minutes after the last, each rewriting one
    line of one of `REPO_FILES` files (in `rtl/` and `tb/`) and adding two; all objects in one pack,
    `master` at the last, the tag `night-pass` `WINDOW_COMMITS` before it."""
    from dulwich.objects import Blob, Commit, ObjectID, ShaFile, Tree
    from dulwich.refs import Ref
    from dulwich.repo import Repo

    folder.mkdir(parents=True)
    repo = Repo.init(str(folder))
    files = {n: [b"// file %d line %d\n" % (n, k) for k in range(20)] for n in range(REPO_FILES)}
    blobs: dict[int, ObjectID] = {}
    objects: list[tuple[ShaFile, str | None]] = []
    parent: list[ObjectID] = []
    shas: list[ObjectID] = []

    def blob_of(n: int) -> ObjectID:
        blob = Blob.from_string(b"".join(files[n]))
        objects.append((blob, None))
        return blob.id

    for n in range(REPO_FILES):
        blobs[n] = blob_of(n)
    for index in range(commits):
        changed = index % REPO_FILES
        lines = files[changed]
        lines[(index * 7) % len(lines)] = b"assign w%d = r%d; // commit %d\n" % (
            index,
            index,
            index,
        )
        lines += [b"// added by commit %d\n" % index, b"wire w%d;\n" % index]
        blobs[changed] = blob_of(changed)
        root = Tree()
        for folder_name, numbers in (
            (b"rtl", range(0, REPO_FILES, 2)),
            (b"tb", range(1, REPO_FILES, 2)),
        ):
            sub = Tree()
            for n in numbers:
                sub.add(b"f%02d.sv" % n, 0o100644, blobs[n])
            objects.append((sub, None))
            root.add(folder_name, 0o040000, sub.id)
        objects.append((root, None))
        made = Commit()
        made.tree, made.parents = root.id, parent
        made.author = made.committer = b"Ada <ada@example.com>"
        made.author_time = made.commit_time = 1_793_491_200 + 600 * index  # 2026-11-01T00:00Z on
        made.author_timezone = made.commit_timezone = 0
        made.message = b"rtl: change %d\n" % index
        objects.append((made, None))
        parent = [made.id]
        shas.append(made.id)
    repo.object_store.add_objects(objects)
    repo.refs[Ref(b"refs/heads/master")] = shas[-1]
    repo.refs[Ref(b"refs/tags/night-pass")] = shas[max(0, len(shas) - 1 - WINDOW_COMMITS)]
    repo.close()


def write_pdf(
    path: Path, pages: int, lines: Callable[[int], list[str]] | None = None, first: int = 1
) -> None:
    """A PDF of `pages` pages, page `first` onwards, each of `lines(page)` (by default 40 lines
    saying the same thing)."""
    written = lines or (
        lambda page: [
            f"page {page} line {line}: clk_en is sampled on the rising edge" for line in range(40)
        ]
    )
    path.write_bytes(make_pdf([written(page) for page in range(first, first + pages)]))


def manual_lines(page: int) -> list[str]:
    """A manual's page: 40 lines of words drawn from `MANUAL_WORDS` (a generator seeded with the
    page), `QUERY_WORDS[0]` on every 17th page and `QUERY_WORDS[1]` on every 23rd, some of them
    several times, so a few pages hold them and BM25 has an order to find."""
    import random

    draw = random.Random(page)
    lines = [
        f"{page}.{line}: " + " ".join(draw.choices(MANUAL_WORDS, k=9)) + "."
        for line in range(MANUAL_LINES)
    ]
    for every, word in zip((17, 23), QUERY_WORDS, strict=True):
        if page % every == 0:
            for line in draw.sample(range(MANUAL_LINES), 1 + page % 3):
                lines[line] += f" The {word} is checked here."
    return lines


def write_manuals(folder: Path, pages: int) -> list[Path]:
    """`MANUALS` PDFs sharing `pages` pages between them (numbered on from one to the next)."""
    paths, first = [], 1
    for index in range(MANUALS):
        count = pages // MANUALS + (index < pages % MANUALS)
        path = folder / f"manual{index}.pdf"
        write_pdf(path, count, manual_lines, first)
        paths.append(path)
        first += count
    return paths
