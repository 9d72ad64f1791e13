"""Time while parked: the work deadline does not run while a run waits only for people; each
interaction has its own reply time; the manifest's hard `expires_at` is never passed (fake clock)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st
from langgraph.checkpoint.memory import InMemorySaver

from contract.codes import EventKind, Status
from graph.build import compile_graph
from graph.runs.interactions import resume_command
from guards.parking import admitted_deadline, reply_by, unparked_deadline
from ledger.context import WarrantContext
from tests.helpers import call, recorded, stop, write_manifest

CONFIG = {"configurable": {"thread_id": "parked"}}
T0 = 1_800_000_000.0
SEARCH = call("c1", "searchlogs", path="cc/t.log", query="UVM_ERROR")
ASK = {"summary": "q", "message": {"kind": "ask_user", "question": "Which seed failed first?"}}


class Clock:
    def __init__(self) -> None:
        self.at = T0

    def __call__(self) -> float:
        return self.at


def gated(scenario_dir, budget: str = "") -> str:
    """The log behind a person's approval; a 2 s work deadline."""
    manifest = write_manifest(scenario_dir)
    text = manifest.read_text().replace("deadline_s = 120", f"deadline_s = 2\n{budget}")
    manifest.write_text(
        text.replace('path = "logs/t.log"', 'path = "logs/t.log"\napproval = "human"')
    )
    return str(manifest)


def started(scenario: str, chooser: str, clock: Clock):
    graph = compile_graph(InMemorySaver())
    context = WarrantContext(clock=clock)
    graph.invoke(
        {"scenario": scenario, "chooser": chooser}, CONFIG, durability="sync", context=context
    )
    return graph, context


def replied(graph, context, body: dict) -> dict:
    command = resume_command(graph.get_state(CONFIG), lambda kind: body, None)
    graph.invoke(command, CONFIG, durability="sync", context=context)
    return recorded(graph, CONFIG)


def of_type(state: dict, kind: EventKind) -> list[dict]:
    return [e["payload"] for e in state["events"] if e["type"] == kind]


def test_an_approval_3_s_after_a_2_s_deadline_still_runs_the_call(scenario_dir, action_file):
    clock = Clock()
    graph, context = started(gated(scenario_dir), action_file([SEARCH, stop()]), clock)
    clock.at = T0 + 5  # the person answers 3 s after the work deadline
    state = replied(graph, context, {"decision": "approve"})
    assert state["status"] == Status.STOPPED
    assert [item["ref"] for item in state["evidence"]] == ["E1"] and not state["evidence"][0].get(
        "error"
    )
    [moved] = of_type(state, EventKind.UNPARKED)
    assert moved == {"parked_s": 5.0, "deadline_at": T0 + 7}
    assert state["deadline_at"] == T0 + 7 and state["parked_s"] == 5.0
    assert state["turn"] == 2  # steps are never given back


def test_the_hard_end_is_never_passed_while_parked(scenario_dir, action_file):
    hard = datetime.fromtimestamp(T0 + 3, UTC).isoformat()
    clock = Clock()
    graph, context = started(
        gated(scenario_dir, f"expires_at = {hard}"), action_file([SEARCH, stop()]), clock
    )
    clock.at = T0 + 5
    state = replied(graph, context, {"decision": "approve"})
    assert state["deadline_at"] == T0 + 3
    assert state["status"] == Status.DEADLINE_PASSED and state["evidence"] == []
    assert EventKind.EXECUTED not in {e["type"] for e in state["events"]}


def test_an_approval_after_its_reply_time_expires_and_the_call_never_runs(
    scenario_dir, action_file
):
    clock = Clock()
    scenario = gated(scenario_dir, "reply_s = 10")
    graph, context = started(scenario, action_file([SEARCH, stop("gave up")]), clock)
    clock.at = T0 + 11
    state = replied(graph, context, {"decision": "approve"})
    [late] = of_type(state, EventKind.EXPIRED)
    assert late["late_reply"]["decision"] == "approve"
    assert [(r["code"], r["owner"]) for r in state["refusals"]] == [
        ("interaction_expired", "human")
    ]
    assert state["evidence"] == [] and state["status"] == Status.STOPPED  # the run went on


def test_a_question_answered_after_its_reply_time_leaves_no_answer(scenario_dir, action_file):
    clock = Clock()
    manifest = (
        write_manifest(scenario_dir)
        .read_text()
        .replace("deadline_s = 120", "deadline_s = 120\nreply_s = 60")
    )
    (scenario_dir / "scenario.toml").write_text(manifest)
    graph, context = started(str(scenario_dir / "scenario.toml"), action_file([ASK, stop()]), clock)
    clock.at = T0 + 61
    interaction_id = graph.get_state(CONFIG).tasks[0].interrupts[0].value["interaction_id"]
    state = replied(graph, context, {"interaction_id": interaction_id, "answer": "seed 7"})
    assert [e["interaction_id"] for e in of_type(state, EventKind.EXPIRED)] == [interaction_id]
    assert state["evidence"] == [] and state["status"] == Status.STOPPED
    assert (
        "A question to a person went unanswered in time: Which seed failed first?"
        in state["handover"]["unknowns"]
    )


HARD_ENDS = st.integers(0, 20_000).map(lambda s: datetime.fromtimestamp(T0 + s, UTC).isoformat())
budgets = st.fixed_dictionaries(
    {"deadline_s": st.integers(1, 10_000), "reply_s": st.integers(1, 10_000)},
    optional={"expires_at": HARD_ENDS},
)


@given(budget=budgets, asked=st.floats(0, 10_000), waited=st.floats(0, 10_000))
def test_parking_moves_the_deadline_by_the_wait_and_never_past_the_hard_end(budget, asked, waited):
    admitted = admitted_deadline(T0, budget)
    moved = unparked_deadline(admitted, T0 + asked, T0 + asked + waited, budget)
    assert moved <= admitted + waited + 1e-6
    if "expires_at" in budget:
        assert moved <= datetime.fromisoformat(budget["expires_at"]).timestamp()
    else:
        assert moved == pytest.approx(admitted + waited)
    assert admitted <= moved  # never earlier than it was
    assert reply_by(T0 + asked, budget) == T0 + asked + budget["reply_s"]
