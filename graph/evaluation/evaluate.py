"""`warrant eval`: every case of a suite run k times per chooser it is meant for, each run judged
on what it delivered (`graph.evaluation.judge`), then summed up per case and chooser: pass rate
(unknown runs, and runs that never reached a handover, counted in the denominator), pass^k (all k
passed), steps, model calls, tokens (unknown stays unknown), latency. A chooser a case is not meant
for is skipped and said, never counted. Each run is a normal run on its own thread in the database
given, so it can be shown, verified and replayed like any other. Runs go in parallel up to
`--parallel`, and a model route's runs up to its `concurrency`. A case's rubric dimensions are
graded by the grader route after its deterministic checks (`graph.evaluation.grader`).
"""

from __future__ import annotations

import re
import secrets
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from graph.build import saver_of
from graph.delivery.artifacts import deliver
from graph.entry.ask import ask
from graph.evaluation.grader import grade
from graph.evaluation.grader_view import RunFacts
from graph.evaluation.judge import FAIL, PASS, UNKNOWN, Check, judge, judge_entry, verdict
from graph.evaluation.suite import Case, Suite
from graph.runs.reading import RunError, reading_graph, stored_run
from graph.runs.requests import admit_request
from graph.runs.runner import start
from ledger.persistence.retention import thread_ids
from nodes.choosers.route import Route


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
        failing = sorted(
            {
                f"{check.name} ({check.owner})"
                for run in self.runs
                for check in run.checks
                if check.outcome == FAIL
            }
        )
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
            "not_passed": self.not_passed(),
            "threads": [run.thread for run in self.runs],
            "judged": [
                {
                    "thread": run.thread,
                    "verdict": run.verdict,
                    "checks": [asdict(check) for check in run.checks],
                }
                for run in self.runs
            ],
        }

    def not_passed(self) -> list[dict[str, Any]]:
        """Each check that failed or stayed unknown in some run: its outcome and owner, in how many
        runs, and the first such run's detail (what a reader needs to see why)."""
        found: dict[tuple[str, str, str], dict[str, Any]] = {}
        for run in self.runs:
            for check in run.checks:
                if check.outcome == PASS:
                    continue
                entry = found.setdefault(
                    (check.outcome, check.name, check.owner),
                    {
                        "check": check.name,
                        "outcome": check.outcome,
                        "owner": check.owner,
                        "runs": 0,
                        "detail": check.detail,
                    },
                )
                entry["runs"] += 1
        return [found[key] for key in sorted(found, key=lambda k: (k[0] != FAIL, k[1]))]


@dataclass(frozen=True)
class Skipped:
    """A case not run (or not judged) with a chooser it is not meant for."""

    case: str
    chooser: str
    meant_for: list[str]


@dataclass(frozen=True)
class Evaluation:
    rows: list[Row]
    skipped: list[Skipped]


@dataclass(frozen=True)
class Settings:
    """How an evaluation runs: where, how many at once, and who grades rubric dimensions."""

    db: str
    parallel: int = 1
    model_route: Route | None = None
    """The chooser route of `model` runs (its `concurrency` bounds them), when a case uses it."""
    grader: Route | None = None


def plan(
    suite: Suite, choosers: list[str] | None, folder: Path
) -> tuple[list[tuple[Case, str]], list[Skipped]]:
    """Each case with each chooser given (paths relative to `folder`) that it is meant for, or
    with its own chooser when none is given; and the pairs skipped, in the suite's order."""
    runs: list[tuple[Case, str]] = []
    skipped: list[Skipped] = []
    for case in suite.case:
        for chooser in choosers or [case.own_chooser]:
            if case.meant_for(chooser, folder):
                runs.append((case, chooser))
            else:
                skipped.append(Skipped(case.id, chooser, list(case.choosers or ())))
    return runs, skipped


def evaluate(
    suite: Suite, choosers: list[str] | None, repeat: int | None, settings: Settings
) -> Evaluation:
    """Run and judge every case k times per chooser it is meant for (its own chooser unless given),
    in parallel where the route allows; rows in the suite's order whatever finished first."""
    runs, skipped = plan(suite, choosers, Path.cwd())
    model_slots = settings.model_route.concurrency if settings.model_route else 1
    with (
        ThreadPoolExecutor(settings.parallel) as pool,
        ThreadPoolExecutor(min(settings.parallel, model_slots)) as model_pool,
    ):
        planned: list[tuple[Row, list[Future[Judged]]]] = []
        for case, chooser in runs:
            runner = model_pool if chooser == "model" else pool
            futures = [
                runner.submit(_judged, case, chooser, settings)
                for _ in range(repeat or case.repeat)
            ]
            planned.append((Row(case.id, chooser), futures))
        for row, futures in planned:
            row.runs.extend(future.result() for future in futures)
    return Evaluation([row for row, _ in planned], skipped)


def rejudge(suite: Suite, db: str, grader: Route | None = None) -> Evaluation:
    """Judge again, against the suite's expectations as they are now, the runs an earlier
    `warrant eval` left in `db` (threads `eval-<case>-…`), without running anything. A run waiting
    for a person is judged on its handover so far; one that never reached a handover (killed) is
    unknown; one with a chooser the case is no longer meant for is skipped."""
    with reading_graph(db) as graph:
        threads = thread_ids(saver_of(graph))
    rows: list[Row] = []
    skipped: dict[tuple[str, str], Skipped] = {}
    for case in suite.case:
        by_chooser: dict[str, Row] = {}
        ours = re.compile(rf"eval-{re.escape(case.id)}-[0-9a-f]{{8}}")  # not eval-<id>-gated-…
        for thread in filter(ours.fullmatch, threads):
            result = stored_run(db, thread)
            chooser = result.values.get("chooser", "?")
            if not case.meant_for(chooser, Path.cwd()):
                skipped[case.id, chooser] = Skipped(case.id, chooser, list(case.choosers or ()))
                continue
            row = by_chooser.setdefault(chooser, Row(case.id, chooser))
            if "handover" not in result.values and not result.pending:
                row.runs.append(_unended(case, thread, chooser))
                continue
            row.runs.append(_of(case, thread, result.values, result.handover, 0.0, grader))
        rows += by_chooser.values()
    return Evaluation(rows, list(skipped.values()))


def _unended(case: Case, thread: str, chooser: str) -> Judged:
    """A run with no handover (killed, or still waiting to be resumed): unknown, still counted."""
    check = Check("handover delivered", UNKNOWN, "handover", "the run has no handover to judge")
    return Judged(case.id, chooser, thread, UNKNOWN, [check], 0, 0, None, 0.0)


def _of(
    case: Case,
    thread: str,
    values: dict[str, Any],
    handover: dict[str, Any],
    seconds: float,
    grader: Route | None,
) -> Judged:
    checks = judge(case.expect, handover)
    checks += [grade(rubric, handover, grader, RunFacts.of(values)) for rubric in case.rubric]
    calls = values.get("model_calls") or []
    return Judged(
        case.id,
        values.get("chooser", "?"),
        thread,
        verdict(checks),
        checks,
        handover.get("turns", 0),
        len(calls),
        _tokens(calls),
        seconds,
    )


def _judged(case: Case, chooser: str, settings: Settings) -> Judged:
    if case.question is not None:
        return _entry_judged(case, chooser, settings)
    assert case.scenario is not None  # a case is a run or a question (`Case`)
    thread = f"eval-{case.id}-{secrets.token_hex(4)}"
    started = time.perf_counter()
    request = admit_request(case.scenario, case.goal, chooser, thread, None)
    result = start(request, settings.db, lambda event: None, on_end=deliver)
    seconds = time.perf_counter() - started
    return _of(case, thread, result.values, result.handover, seconds, settings.grader)


def _entry_judged(case: Case, chooser: str, settings: Settings) -> Judged:
    """An Entry case: the question through `warrant ask`'s decision, by the rules (`scripted`) or
    the model route (`model`); no run is started, nothing is recorded."""
    assert case.question is not None
    started = time.perf_counter()
    model = settings.model_route if chooser == "model" else None
    asked = ask(case.question, case.scenario, None, model=model)
    read = asked.answer.read if asked.answer is not None else ()
    checks = judge_entry(
        case.expect,
        asked.decision.route,
        asked.decision.scenario,
        asked.decision.reason,
        read,
        model_refused=model is not None and asked.actor != "entry:model",
    )
    calls, tokens = (1, None) if model is not None else (0, 0)  # the rules ask no model
    return Judged(
        case.id,
        chooser,
        asked.entry,
        verdict(checks),
        checks,
        0,
        calls,
        tokens,
        time.perf_counter() - started,
    )


def _tokens(calls: list[dict[str, Any]]) -> int | None:
    """Tokens the model calls used, if every one reported its usage; else unknown."""
    used = [((call.get("reply") or {}).get("usage") or {}).get("total_tokens") for call in calls]
    counted = [value for value in used if isinstance(value, int)]
    return sum(counted) if len(counted) == len(used) else None


__all__ = [
    "Evaluation",
    "Judged",
    "Row",
    "RunError",
    "Settings",
    "Skipped",
    "evaluate",
    "plan",
    "rejudge",
]
