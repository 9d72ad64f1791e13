"""The digests' memory made fresh for every test, and a sha256 that counts the bytes it hashes:
what the tests of pinned records use to see what was (and was not) hashed again."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest

from scenario import digests


@pytest.fixture(autouse=True)
def fresh_memory() -> None:
    digests.forget_all()


class CountingSha256:
    """hashlib.sha256 that counts the bytes it is given (every `_HashedFile` uses one)."""

    hashed = 0

    def __init__(self) -> None:
        self._inner = hashlib.sha256()

    def update(self, data: Any, /) -> None:
        CountingSha256.hashed += len(data)
        self._inner.update(data)

    def hexdigest(self) -> str:
        return self._inner.hexdigest()
