"""`warrant eval`: every case of a suite run k times per chooser, each run judged on what it
delivered (`graph.judge`), then summed up per case and chooser: pass rate (unknowns counted in the
denominator), pass^k (all k passed), steps, model calls, tokens (unknown stays unknown), latency.
Each run is a normal run on its own thread in the database given, so it can be shown, verified
and replayed like any other.
"""

from __future__ import annotations

import secrets
import time
from dataclasses import dataclass, field
from typing import Any

from graph.judge import FAIL, PASS, UNKNOWN, Check, judge, verdict
from graph.retention import thread_ids
from graph.runner import RunError, admit_request, reading_graph, start, stored_run
from graph.suite import Case, Suite


@dataclass(frozen=True)
class Judged:
    case: str
    chooser: str
    thread: str
    verdict: str
    checks: list[Check]
    steps: int
    model_calls: int
    tokens: int | None
    seconds: float


@dataclass
class Row:
    case: str
    chooser: str
    runs: list[Judged] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        count = len(self.runs)
        tokens = [run.tokens for run in self.runs]
        failing = sorted({f"{check.name} ({check.owner})" for run in self.runs for check in run.checks if check.outcome == FAIL})  # fmt: skip
        return {
            "case": self.case,
            "chooser": self.chooser,
            "runs": count,
            "pass": sum(run.verdict == PASS for run in self.runs),
            "fail": sum(run.verdict == FAIL for run in self.runs),
            "unknown": sum(run.verdict == UNKNOWN for run in self.runs),
            "pass_rate": sum(run.verdict == PASS for run in self.runs) / count,
            "pass_k": all(run.verdict == PASS for run in self.runs),
            "steps": sum(run.steps for run in self.runs) / count,
            "model_calls": sum(run.model_calls for run in self.runs) / count,
            "tokens": None if None in tokens else sum(t for t in tokens if t is not None) / count,
            "seconds": sum(run.seconds for run in self.runs) / count,
            "failing": failing,
            "threads": [run.thread for run in self.runs],
        }


def evaluate(suite: Suite, choosers: list[str] | None, repeat: int | None, db: str) -> list[Row]:
    """Run and judge every case, k times per chooser (the case's own chooser unless given)."""
    rows = []
    for case in suite.case:
        for chooser in choosers or [case.chooser]:
            row = Row(case.id, chooser)
            for _ in range(repeat or case.repeat):
                row.runs.append(_judged(case, chooser, db))
            rows.append(row)
    return rows


def rejudge(suite: Suite, db: str) -> list[Row]:
    """Judge again, against the suite's expectations as they are now, the runs an earlier
    `warrant eval` left in `db` (threads `eval-<case>-…`), without running anything."""
    with reading_graph(db) as graph:
        threads = thread_ids(graph.checkpointer)
    rows = []
    for case in suite.case:
        by_chooser: dict[str, Row] = {}
        for thread in (t for t in threads if t.startswith(f"eval-{case.id}-")):
            result = stored_run(db, thread)
            if "handover" not in result.values:
                continue
            chooser = result.values.get("chooser", "?")
            row = by_chooser.setdefault(chooser, Row(case.id, chooser))
            row.runs.append(_of(case, thread, result.values, result.handover, 0.0))
        rows += by_chooser.values()
    return rows


def _of(case: Case, thread: str, values: dict[str, Any], handover: dict[str, Any], seconds: float) -> Judged:  # fmt: skip
    checks = judge(case.expect, handover)
    calls = values.get("model_calls") or []
    return Judged(case.id, values.get("chooser", "?"), thread, verdict(checks), checks, handover.get("turns", 0), len(calls), _tokens(calls), seconds)  # fmt: skip


def _judged(case: Case, chooser: str, db: str) -> Judged:
    thread = f"eval-{case.id}-{secrets.token_hex(4)}"
    started = time.perf_counter()
    request = admit_request(case.scenario, case.goal, chooser, thread, None)
    result = start(request, db, lambda event: None)
    seconds = time.perf_counter() - started
    return _of(case, thread, result.values, result.handover, seconds)


def _tokens(calls: list[dict[str, Any]]) -> int | None:
    """Tokens the model calls used, if every one reported its usage; else unknown."""
    used = [((call.get("reply") or {}).get("usage") or {}).get("total_tokens") for call in calls]
    return None if any(value is None for value in used) else sum(used)


__all__ = ["Judged", "Row", "RunError", "evaluate", "rejudge"]
