"""Replies no test wrote by hand: an OpenAI-compatible server answering with generated content
(action documents naming any tool and any path, other JSON, prose, HTTP errors, broken bodies),
driven through the real transport. Whatever it sends, the run ends in a contract status, every
refusal is typed, nothing outside the grant is read, and every request the server saw is a
recorded attempt. A question it asks leaves the run waiting for a person: a governed end too,
read as a caller reads it (`graph.runs.reading.run_result`: status `awaiting_human`, the pending question)."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langgraph.checkpoint.memory import InMemorySaver

from contract.codes import RefusalCode, Status
from graph.build import compile_graph
from graph.runs.reading import RunResult, config_of, run_result
from ledger.context import WarrantContext
from tests.fake_openai import FakeOpenAI
from tests.helpers import R42_HISTORY, R42_LOG, R42_SPEC
from tests.nodes.choosers.test_model import route_env as route_env

GRANTED = {
    R42_LOG,
    R42_SPEC,
    R42_HISTORY,
    "lab/runs/R42/fifo_basic.log",
    "lab/runs/R42/dma_burst.log",
    "lab/runs/R42/irq_stress.log",
}
PATHS = st.sampled_from(
    [*GRANTED, "lab/protected/design.txt", "../etc/passwd", "lab/runs/R43/reset_smoke.log", ""]
)
TOOLS = st.sampled_from(
    [
        "searchlogs",
        "readlines",
        "logsummary",
        "readspec",
        "getrunhistory",
        "stasummary",
        "shell",
        "",
    ]
)
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=10,
)
CALL = st.fixed_dictionaries(
    {
        "id": st.sampled_from(["a1", "b2", "c3", "E1", ""]),
        "name": TOOLS,
        "args": st.fixed_dictionaries(
            {"path": PATHS},
            optional={
                "query": st.text(max_size=10),
                "section": st.text(max_size=10),
                "start": st.integers(-2, 50),
                "test": st.text(max_size=10),
            },
        ),
    }
)
DOCUMENT = st.one_of(
    st.fixed_dictionaries(
        {"summary": st.text(max_size=20), "tool_calls": st.lists(CALL, max_size=5)}
    ),
    st.fixed_dictionaries(
        {
            "summary": st.just("stop"),
            "message": st.fixed_dictionaries(
                {"kind": st.sampled_from(["stop", "ask_user", "delegate", "shell"])},
                optional={
                    "text": st.text(max_size=20),
                    "question": st.text(max_size=20),
                    "hypotheses": st.lists(
                        st.fixed_dictionaries(
                            {
                                "statement": st.text(max_size=10),
                                "refs": st.lists(
                                    st.sampled_from(["E1", "E2", "H1", "M1", "X"]), max_size=2
                                ),
                            }
                        ),
                        max_size=2,
                    ),
                },
            ),
        }
    ),
)
REPLY = st.one_of(
    DOCUMENT.map(json.dumps),
    JSON.map(json.dumps),
    st.text(max_size=40),
    st.sampled_from([429, 500, 503]).map(lambda status: {"status": status, "content": "busy"}),
    st.just({"body": {"choices": []}}),
    st.just({"finish_reason": "length", "content": '{"summary": "cut'}),
)


def run_governed(server: FakeOpenAI) -> RunResult:
    """R42 on the model route, to its end or to a person it waits for: where it stands, as the
    runner reports it to a caller (the handover, or the handover so far and what is pending)."""
    graph, config = compile_graph(InMemorySaver()), config_of("t1")
    with server.running():
        graph.invoke(
            {"scenario": "R42", "chooser": "model"},
            config,
            durability="sync",
            context=WarrantContext(),
        )
    return run_result(graph, config)


def assert_governed(server: FakeOpenAI, result: RunResult) -> None:
    handover = result.handover
    assert handover["status"] in {status.value for status in Status}
    assert (handover["status"] == Status.AWAITING_HUMAN) == bool(result.pending)
    assert all(item["kind"] in {"question", "approval"} for item in result.pending)
    assert {refusal["code"] for refusal in handover["refusals"]} <= {
        code.value for code in RefusalCode
    }
    observed = [item for item in handover["evidence"] if item.get("tool") != "ask_user"]
    assert {item["record"] for item in observed} <= GRANTED
    calls = result.values["model_calls"]
    assert len(calls) == len(server.requests)
    assert all(call["reply"]["error"] or call["reply"]["content"] is not None for call in calls)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(replies=st.lists(REPLY, min_size=1, max_size=10))
def test_whatever_the_server_answers_the_run_ends_governed(route_env, replies):
    server = FakeOpenAI(replies)
    route_env(server, attempts="3")
    assert_governed(server, run_governed(server))


def test_a_question_from_the_server_leaves_the_run_waiting_for_a_person(route_env):
    """The draw that once failed the property above: a run waiting for a person has no final
    status of its own; its caller is shown `awaiting_human` and the question."""
    server = FakeOpenAI(['{"summary":"stop","message":{"kind":"ask_user","question":"0"}}'])
    route_env(server, attempts="3")
    result = run_governed(server)
    assert_governed(server, result)
    assert result.handover["status"] == "awaiting_human" and len(server.requests) == 1
    assert [(item["kind"], item["question"]) for item in result.pending] == [("question", "0")]
