"""Bodies: excerpt lines and model requests, written once under their sha256 and checked
against it when read, so a receipt stays small and a body is stored once whoever cites it."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from typing import Any

from langgraph.store.base import BaseStore, GetOp

from guards.seal import SEAL
from ledger.store import BODIES, got

BODY_FIELDS = frozenset({"excerpt", "body_missing", "triage", "triage_missing"})
"""The fields of a receipt read back from its body, never stored with it."""


def body_digest(body: Any) -> str:
    return hashlib.sha256(_body_bytes(body)).hexdigest()


def _body_bytes(body: Any) -> bytes:
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return text.encode("utf-8", "surrogatepass")


def put_body(store: BaseStore, body: Any) -> str:
    """Store `body` under its sha256 (again, harmlessly, if it is there) and return the digest."""
    digest = body_digest(body)
    store.put(BODIES, digest, {"body": body}, index=False)
    return digest


def bodies(store: BaseStore, digests: Iterable[str | None]) -> dict[str, Any]:
    """The bodies found for `digests` whose content still has that digest."""
    wanted = sorted({digest for digest in digests if digest})
    found = got(store, [GetOp(BODIES, digest) for digest in wanted])
    return {
        digest: item.value["body"]
        for digest, item in zip(wanted, found, strict=True)
        if item is not None and body_digest(item.value.get("body")) == digest
    }


def with_body_ref(item: Mapping[str, Any]) -> dict[str, Any]:
    """A receipt with the digest and count of its excerpt lines beside them. `commit` writes the
    lines once as a body, in the batch that records the receipt, and stores the receipt without
    them: a receipt and its body are in the store together or not at all."""
    lines = item.get("excerpt") or []
    return {**item, "body": body_digest(lines) if lines else None, "lines": len(lines)}


def with_excerpt(item: dict[str, Any], found: Mapping[str, Any]) -> dict[str, Any]:
    """A receipt with its excerpt lines; a body gone or changed is said, never invented."""
    digest = item.get("body")
    if digest is None:
        return {**item, "excerpt": []}
    if digest not in found:
        return {**item, "excerpt": [], "body_missing": True}
    return {**item, "excerpt": found[digest]}


def receipt_digest(item: Mapping[str, Any]) -> str:
    """The digest of a receipt as its `executed` event records it (without seal or excerpt)."""
    return body_digest({k: v for k, v in item.items() if k != SEAL and k not in BODY_FIELDS})
