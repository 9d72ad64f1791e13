"""A triage receipt's structured report (`triage`: the morning report, a row per test) kept where
large values live: a body in the store, written once by content, never in the run's state.

The executor writes the report as a body when the call returns and leaves only its digest
(`triage_body`) on the receipt, which the receipt's seal and its `executed` event cover; the
checkpoint and the arrivals carry the digest alone. Readers (`warrant show`, the handover JSON,
the web page) read the bodies back in one batch and put each on its receipt as `triage`; the
chooser's view never reads them. A body gone or changed is said (`triage_missing`), never invented.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langgraph.store.base import BaseStore

from ledger.bodies import bodies, put_body
from ledger.store import EVIDENCE

REPORT = "triage"
"""The receipt's field readers see: the report itself."""
REPORT_BODY = "triage_body"
"""The receipt's field the store keeps: the report body's sha256."""
MISSING = "triage_missing"


def with_report_body(store: BaseStore, receipt: dict[str, Any]) -> dict[str, Any]:
    """The receipt with its report stored as a body and replaced by the body's digest."""
    if REPORT not in receipt:
        return receipt
    kept = {key: value for key, value in receipt.items() if key != REPORT}
    return kept | {REPORT_BODY: put_body(store, receipt[REPORT])}


def with_reports(store: BaseStore, values: Mapping[str, Any]) -> dict[str, Any]:
    """A materialized run's values with each receipt's report read back (one batch)."""
    items = list(values.get(EVIDENCE) or ())
    wanted = [item[REPORT_BODY] for item in items if item.get(REPORT_BODY)]
    if not wanted:
        return dict(values)
    found = bodies(store, wanted)
    return {**values, EVIDENCE: [_attached(item, found) for item in items]}


def _attached(item: dict[str, Any], found: Mapping[str, Any]) -> dict[str, Any]:
    digest = item.get(REPORT_BODY)
    if not digest:
        return item
    if digest not in found:
        return {**item, MISSING: True}
    return {**item, REPORT: found[digest]}


def handover_with_reports(
    handover: Mapping[str, Any], evidence: list[dict[str, Any]]
) -> dict[str, Any]:
    """The handover's evidence items with the reports their receipts carry (by ref)."""
    reports = {item["ref"]: item[REPORT] for item in evidence if REPORT in item}
    if not reports:
        return dict(handover)
    shown = [
        {**item, REPORT: reports[item["ref"]]} if item.get("ref") in reports else item
        for item in handover.get(EVIDENCE) or ()
    ]
    return {**handover, EVIDENCE: shown}
