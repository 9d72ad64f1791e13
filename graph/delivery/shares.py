"""Sharing grants in the store: each under its run (`space(thread, "shares")`, keyed by recipient)
and under its recipient (what was shared with them), written in one batch; decided by
`guards.sharing`."""

from __future__ import annotations

from dataclasses import asdict

from langgraph.store.base import BaseStore, PutOp

from guards.sharing import Share
from ledger.store import ROOT, space

SHARES = "shares"


def shared_with_space(reader: str) -> tuple[str, ...]:
    return (ROOT, "shared-with", reader)


def grant(store: BaseStore, share: Share) -> None:
    value = asdict(share)
    store.batch(
        [
            PutOp(space(share.thread, SHARES), share.to, value, index=False),
            PutOp(shared_with_space(share.to), share.thread, value, index=False),
        ]
    )


def revoke(store: BaseStore, thread: str, reader: str) -> bool:
    """The grant of run `thread` to `reader` withdrawn (both entries, one batch); False if there
    was none."""
    if store.get(space(thread, SHARES), reader) is None:
        return False
    store.batch(
        [
            PutOp(space(thread, SHARES), reader, None),
            PutOp(shared_with_space(reader), thread, None),
        ]
    )
    return True


def shares_of(store: BaseStore, reader: str) -> list[Share]:
    """Every grant naming `reader`."""
    found = store.search(shared_with_space(reader), limit=1000)
    return [Share(**item.value) for item in found]


def run_shares(store: BaseStore, thread: str) -> list[Share]:
    return [Share(**item.value) for item in store.search(space(thread, SHARES), limit=1000)]
