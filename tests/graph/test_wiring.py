"""The wiring: what each superstep writes, which node ends a run, how routes read the state."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph

from contract.state import WarrantState, apply_update
from graph.build import compile_graph
from ledger.commit import event_digest
from tests.helpers import R42_CALLS, R42_TURNS, recorded, run_embedded


def test_a_tool_turn_is_three_checkpoints():
    """Each superstep is a checkpoint: a tool turn is choose, guard and execute."""
    saver = InMemorySaver()
    state = run_embedded("R42", checkpointer=saver, thread="count")
    checkpoints = list(saver.list({"configurable": {"thread_id": "count"}}))
    assert state["turn"] == R42_TURNS and len(state["evidence"]) == len(R42_CALLS)
    # the input and its superstep, admit, each tool turn's 3, the stop turn (choose, guard), handover
    assert len(checkpoints) == 2 + 1 + len(R42_CALLS) * 3 + 2 + 1
    first = [event["type"] for event in state["events"][:2]]
    assert first == ["admitted", "proposed"]


def test_the_handover_node_ends_the_run():
    graph = compile_graph(InMemorySaver())
    config = {"configurable": {"thread_id": "end"}}
    updates = list(graph.stream({"scenario": "R42"}, config, stream_mode="updates"))
    assert list(updates[0]) == ["admit"] and list(updates[-1]) == ["handover"]
    last = updates[-1]["handover"]
    assert last["handover"]["status"] == "stopped"
    # The handover's update moves the cursor past the two events it committed to the store.
    before = next(
        update[node]["cursor"]
        for update in reversed(updates[:-1])
        for node in update
        if "cursor" in (update[node] or {})
    )
    ledger = recorded(graph, config)["events"]
    assert last["cursor"]["events"] == len(ledger) == before["events"] + 2
    assert last["cursor"]["head"] == event_digest(ledger[-1])
    assert [event["type"] for event in ledger[before["events"] :]] == ["stopped", "handover"]
    assert graph.get_state(config).next == ()


def test_the_route_reads_the_state_as_the_reducers_will_leave_it():
    arrived = {"event": {"type": "executed", "payload": {"ref": "E1"}}}
    state = {
        "turn": 1,
        "refusals": [{"code": "a"}],
        "arrivals": [arrived],
        "replies": {"ix": {"n": 1}},
    }
    after = apply_update(
        state,
        {"turn": 2, "refusals": [{"code": "b"}], "arrivals": None, "replies": {"ix": {"n": 2}}},
    )
    assert [refusal["code"] for refusal in after["refusals"]] == ["a", "b"]
    assert after["arrivals"] == [] and after["replies"] == {"ix": {"n": 1}} and after["turn"] == 2
    assert apply_update(state, {"arrivals": [arrived]})["arrivals"] == [arrived, arrived]
    assert apply_update({}, {"refusals": [{"code": "c"}]})["refusals"] == [{"code": "c"}]
    assert state["turn"] == 1 and len(state["refusals"]) == 1 and state["arrivals"] == [arrived]


def test_each_compiled_graph_keeps_its_own_checkpointer():
    first, second = InMemorySaver(), InMemorySaver()
    assert compile_graph(first).checkpointer is first
    assert compile_graph(second).checkpointer is second
    assert compile_graph().checkpointer is None


_ITEMS = st.lists(st.fixed_dictionaries({"n": st.integers(0, 9)}), max_size=3)
_REPLIES = st.dictionaries(
    st.sampled_from(["i1", "i2"]), st.fixed_dictionaries({"n": st.integers(0, 9)})
)
_SEALS = st.dictionaries(st.sampled_from(["turn", "status"]), st.sampled_from(["s1", "s2"]))
_CHANNELS = {
    "turn": st.integers(0, 9),
    "status": st.sampled_from(["stopped", "refusal_limit"]),
    "refusals": _ITEMS,
    "tampered": _ITEMS,
    "arrivals": _ITEMS,
    "replies": _REPLIES,
    "seals": _SEALS,
}
_STATE = st.fixed_dictionaries({}, optional=_CHANNELS)
_UPDATE = st.fixed_dictionaries({}, optional={**_CHANNELS, "arrivals": st.none() | _ITEMS})
"""An update may clear the arrivals (`None`)."""


def _by_langgraph(state: dict, update: dict) -> dict:
    """The state LangGraph leaves after `state`, then `update`, on Warrant's state schema."""
    builder = StateGraph(WarrantState)
    builder.add_node("given", lambda _: state)
    builder.add_node("update", lambda _: update)
    builder.add_edge(START, "given")
    builder.add_edge("given", "update")
    builder.add_edge("update", END)
    return builder.compile().invoke({}) or {}


@settings(max_examples=150, deadline=None)
@given(_STATE, _UPDATE)
def test_apply_update_leaves_the_state_langgraph_leaves(state, update):
    expected = _by_langgraph(state, update)
    after = apply_update(state, update)
    assert {key: value for key, value in after.items() if value not in ([], {}, None)} == {
        key: value for key, value in expected.items() if value not in ([], {}, None)
    }


def test_a_file_without_a_diagram_block_is_an_error_and_nothing_is_written(tmp_path):
    """`graph.diagram` raises what its caller maps (`python -m graph.diagram` exits 1 with the line);
    a file missing its block leaves every file as it was."""
    import pytest

    from graph.diagram import END as BLOCK_END
    from graph.diagram import START as BLOCK_START
    from graph.diagram import MissingBlock, rewrite

    drawn, bare = tmp_path / "drawn.md", tmp_path / "bare.md"
    drawn.write_text(f"a\n{BLOCK_START}\nold\n{BLOCK_END}\n", encoding="utf-8")
    bare.write_text("no block here\n", encoding="utf-8")
    with pytest.raises(MissingBlock, match=r"bare\.md has no"):
        rewrite({drawn: 0, bare: 0})
    assert "old" in drawn.read_text(encoding="utf-8")
