"""Property-based tests: whatever a chooser proposes, nothing outside the grant is approved."""

import json
import os
from dataclasses import replace

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from guards.budget import Spent
from guards.decide import GuardContext, decide
from guards.decision import Approved, refusals_of
from guards.refusals import RefusalCode
from lab import LAB_DIR
from scenario.registry import load_scenario
from tools.catalog import tools_of

SCENARIO = load_scenario(LAB_DIR / "R42.toml")
CATALOG = tools_of(SCENARIO.profile)
OWNERS = {"guard"} | {f"tool:{name}" for name in CATALOG}
HOSTILE_IDS = [
    "lab/protected/design.txt",
    "lab/runs/R43/reset_smoke.log",
    "../protected/design.txt",
    "lab/runs/R42/../../protected/design.txt",
    "/etc/passwd",
    "LAB/RUNS/R42/RESET_SMOKE.LOG",
    "lab%2Fruns%2FR42%2Freset_smoke.log",
    "lab/runs/R42/reset_smoke.log\x00.txt",
    "lab/runs/R42/reset_smoke.log ",
    "runs/R42/reset_smoke.log",
    "/abs/lab/runs/R42/reset_smoke.log",
    "lab/runs/R42/./reset_smoke.log",
    "lab\\runs\\R42\\reset_smoke.log",
    "x" * 10_000,
]

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=8), children, max_size=3)
    ),
    max_leaves=12,
)
record_ids = st.sampled_from([*SCENARIO.records, *HOSTILE_IDS]) | st.text(max_size=40)
limits = (
    st.integers(min_value=-5, max_value=250)
    | st.integers()
    | st.booleans()
    | st.floats()
    | st.text(max_size=4)
    | st.none()
)
texts = st.sampled_from(["reset_smoke", "reset_release", "UVM_ERROR"]) | st.text(max_size=210)
arguments = st.fixed_dictionaries(
    {"path": record_ids},
    optional={
        "query": texts,
        "section": texts,
        "test": texts,
        "limit": limits,
        "extra": json_values,
    },
)
tool_names = st.sampled_from([*CATALOG, "stadiff", "run_eda", "SearchLogs"]) | st.text(max_size=12)
good_ids = st.sampled_from(["c1", "c2", "c3", "call_4"])
call_ids = good_ids | good_ids | good_ids | st.text(max_size=70)
VALID_ARGS = {
    "searchlogs": {"path": "lab/runs/R42/reset_smoke.log", "query": "reset_smoke", "limit": 20},
    "readspec": {"path": "lab/spec/reset_controller.md", "section": "reset_release"},
    "getrunhistory": {"path": "lab/history/regressions.csv", "test": "reset_smoke", "limit": 10},
}


@st.composite
def plausible_calls(draw: st.DrawFn) -> dict:
    """A call to a catalog tool with valid arguments, then perhaps one argument replaced."""
    name = draw(st.sampled_from(sorted(VALID_ARGS)))
    args = dict(VALID_ARGS[name])
    if draw(st.booleans()):
        key = draw(st.sampled_from([*args, "extra"]))
        args[key] = draw({"path": record_ids, "limit": limits}.get(key, texts | json_values))
    return {"id": draw(good_ids if draw(st.booleans()) else call_ids), "name": name, "args": args}


tool_calls = plausible_calls() | st.fixed_dictionaries(
    {"id": call_ids, "name": tool_names, "args": arguments | json_values}
)
messages = st.fixed_dictionaries(
    {"kind": st.sampled_from(["stop", "ask_user", "approve"])},
    optional={
        "text": st.text(max_size=20),
        "question": st.text(max_size=20),
        "hypotheses": json_values,
    },
)
summaries = st.just("next step") | st.just("next step") | st.text(max_size=30)
plausible = st.fixed_dictionaries(
    {"summary": summaries, "tool_calls": st.lists(plausible_calls(), min_size=1, max_size=2)}
)
structured = plausible | st.fixed_dictionaries(
    {"summary": summaries},
    optional={"tool_calls": st.lists(tool_calls, max_size=6), "message": messages},
)
documents = (
    structured | structured | structured.map(json.dumps) | json_values | st.text(max_size=200)
)
contexts = st.builds(
    lambda turn, late, evidence, refused: GuardContext(
        scenario=SCENARIO,
        now=1000.0 + late,
        spent=Spent(
            turn=turn,
            deadline_at=1120.0,
            evidence_refs=frozenset(f"E{n}" for n in range(1, evidence + 1)),
            refused_choices=refused,
        ),
    ),
    st.integers(1, 9),
    st.floats(0, 130),
    st.integers(0, 7),
    st.integers(0, 9),
)


FUZZ_EXAMPLES = int(os.environ.get("WARRANT_FUZZ_EXAMPLES", "600"))
"""The fast CI profile; `WARRANT_FUZZ_EXAMPLES=100000` is the long one (see docs/security.md)."""


@settings(max_examples=FUZZ_EXAMPLES, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(documents, contexts)
def test_nothing_outside_the_grant_is_ever_approved(document, ctx):
    decision = decide(document, ctx)  # never raises
    for refusal in refusals_of(decision):
        assert isinstance(refusal.code, RefusalCode)
        assert refusal.owner in OWNERS
        assert refusal.detail and "\n" not in refusal.detail
    if not isinstance(decision, Approved):
        assert decision.outcome != "execute"
        return
    assert ctx.spent.turn <= SCENARIO.budget.steps and ctx.now < ctx.spent.deadline_at
    assert len(decision.calls) <= SCENARIO.budget.evidence - len(ctx.spent.evidence_refs)
    for approved in decision.calls:
        spec = CATALOG[approved.name]
        assert spec.args_model.model_validate(approved.args).model_dump() == approved.args
        for field, record_id in approved.records.items():
            record = SCENARIO.records[record_id]
            assert approved.args[field] == record_id
            assert (record.kind, record.approval) == (spec.record_kind, "none")


@settings(
    max_examples=max(300, FUZZ_EXAMPLES // 2),
    suppress_health_check=[HealthCheck.too_slow],
    deadline=None,
)
@given(st.lists(tool_calls, min_size=2, max_size=4), contexts)
def test_a_batch_with_one_refusable_call_runs_nothing(batch, ctx):
    decision = decide({"summary": "batch", "tool_calls": batch}, ctx)
    alone = [decide({"summary": "one", "tool_calls": [item]}, ctx).outcome for item in batch]
    if decision.outcome == "execute":
        assert alone == ["execute"] * len(batch)
    if "refused" in alone or "end" in alone:
        assert decision.outcome != "execute"


@settings(max_examples=200)
@given(documents, contexts)
def test_the_guard_is_deterministic(document, ctx):
    assert decide(document, ctx) == decide(document, replace(ctx))
