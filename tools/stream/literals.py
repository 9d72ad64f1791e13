"""Counting several fixed strings in one pass over a buffer (Hyperscan's literal compiler).

`bytes.count` is one pass per string; the STA scan checks four strings in every chunk of a
report, and one Hyperscan pass costs less than one `count`.
"""

from __future__ import annotations

from functools import cache

import hyperscan

from tools.stream.patterns import scratch


@cache
def _database(literals: tuple[bytes, ...]) -> hyperscan.Database:
    database = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
    database.compile(
        expressions=list(literals),
        ids=list(range(len(literals))),
        elements=len(literals),
        flags=0,
        literal=True,
    )
    return database


def count_literals(data: bytes, literals: tuple[bytes, ...]) -> list[int]:
    """How many times each of `literals` occurs in `data`, in their order. Each must be unable
    to overlap itself (as `bytes.count` counts, without overlaps): every end is one occurrence."""
    counts = [0] * len(literals)

    def counted(ident: int, start: int, end: int, flags: int, context: object) -> None:
        counts[ident] += 1

    if data:
        database = _database(literals)
        database.scan(data, match_event_handler=counted, scratch=scratch(database))
    return counts
