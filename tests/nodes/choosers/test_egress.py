"""One egress gate: no byte of a planted canary from a `share = "local"` record reaches a remote
model route, through any request builder — the chooser's request (evidence, unknowns, refusals,
children's handoffs, recalled notes) and the grader's (the whole handover) — and the gate itself
withholds any copy that a builder let through, however it was quoted."""

from __future__ import annotations

import json
import string
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from graph.evaluation.grader import grade
from graph.evaluation.grader_view import RunFacts, for_route
from graph.evaluation.suite import Rubric
from guards.egress import MARKER, WINDOW, Outbound, Taint, gate, local_records
from nodes.choosers.projector import assemble
from nodes.choosers.route import Route
from nodes.choosers.transport import Reply
from nodes.choosers.view import ChooserView, make_view
from tests.nodes.choosers.test_model import route_env  # noqa: F401 (a fixture)

REMOTE = Route(model="m", locality="remote")
LOCAL = Route(model="m", locality="local")
ALNUM = string.ascii_letters + string.digits
canaries = st.text(ALNUM, min_size=6, max_size=24).map(lambda core: f"Qz{core}")
CHANNELS = (
    "excerpt",
    "summary",
    "error",
    "unknown",
    "refusal",
    "child_unknown",
    "child_statement",
    "child_stop",
    "note",
    "carried",
)
planted = st.sets(st.sampled_from(CHANNELS), min_size=1)


def _item(ref: str, record: str, canary: str, where: set[str]) -> dict[str, Any]:
    text = (
        f"UVM_ERROR tb/{canary}.sv(4) @ 10: env [{canary}] overflow"
        if "excerpt" in where
        else "UVM_INFO plain"
    )
    return {
        "ref": ref,
        "turn": 1,
        "tool": "searchlogs",
        "record": record,
        "sha256": "0" * 64,
        "sources": [{"record": record}],
        "truncated": True,
        "flags": [],
        "summary": f"2 lines contain {canary}" if "summary" in where else "2 lines",
        "error": f"could not read: {canary}" if "error" in where else None,
        "excerpt": [{"line": 4, "text": text}],
    }


def local_and_other_view(
    goal: str, record: Callable[[], Mapping[str, Sequence[Any]]], *, memory: bool = False
) -> ChooserView:
    """A view at turn 3 of two logs, `r/local` and `r/other` (`GRANT` shares the first with no
    remote route), and of what `record()` holds."""
    return make_view(
        scenario="S",
        goal=goal,
        turn=3,
        budget_left={"steps": 3, "evidence": 3, "seconds": 60},
        catalog=(),
        records=[{"id": "r/local", "kind": "log"}, {"id": "r/other", "kind": "log"}],
        record=record,
        memory=memory,
    )


def _view(canary: str, where: set[str]):
    items = [
        _item("E1", "r/local", canary, where),
        _item("E2", "r/other", "plainshared", {"excerpt"}),
    ]
    if "carried" in where:  # a receipt from a record outside this grant (a parent's, say)
        items.append(
            {
                **_item("E3", "r/elsewhere", canary, {"excerpt"}),
                "carried_from": {"thread": "P", "ref": "E1"},
            }
        )
    refusal = {
        "turn": 2,
        "code": "record_unavailable",
        "owner": "tool:searchlogs",
        "detail": f"cannot read: {canary}" if "refusal" in where else "cannot read",
        "call": {"id": "c2", "name": "searchlogs", "args": {"path": "r/local"}},
    }
    child = {
        "lane": "t1",
        "status": "stopped",
        "spent": {"steps": 2},
        "budget": {"steps": 3},
        "goal": "look",
        "read": [{"ref": "E1", "record": "r/local", "lines": [[4, 4]]}],
        "unknowns": [f"E1 is truncated: more lines exist ({canary})"]
        if "child_unknown" in where
        else [],
        "statements": [{"statement": f"it says {canary}", "refs": ["E1"]}]
        if "child_statement" in where
        else [],
        "stop_text": f"done: {canary}" if "child_stop" in where else "",
    }
    note = {
        "ref": "M1",
        "note": "m-00000001",
        "version": 1,
        "sha256": "1" * 64,
        "query": "fifo",
        "turn": 1,
        "text": f"last time {canary}" if "note" in where else "last time",
        "signature": "sig",
        "share": "local",
    }
    unknowns = (
        [f"E1 is truncated: more lines exist than were shown (2 lines contain {canary})."]
        if "unknown" in where
        else []
    )
    return local_and_other_view(
        "Why did fifo_smoke fail?",
        lambda: {
            "evidence": items,
            "refusals": [refusal],
            "unknowns": unknowns,
            "handoffs": [child],
            "notes": [note],
        },
        memory=True,
    )


GRANT = {"records": {"r/local": {"share": "local"}, "r/other": {"share": "any"}}}


@given(canary=canaries, where=planted)
def test_the_choosers_request_to_a_remote_route_holds_no_byte_of_a_local_record(canary, where):
    request = assemble(_view(canary, where), GRANT, REMOTE)
    assert canary not in request.text
    assert "plainshared" in request.text  # what may be shared is still quoted
    if "excerpt" in where:  # a local route sees it
        assert canary in assemble(_view(canary, where), GRANT, LOCAL).text


def _handover(canary: str, where: set[str]) -> dict[str, Any]:
    evidence = [
        _item("E1", "r/local", canary, where),
        _item("E2", "r/other", "plainshared", {"excerpt"}),
    ]
    return {
        "thread_id": "t",
        "scenario": "S",
        "goal": "Why did fifo_smoke fail?",
        "status": "stopped",
        "evidence": evidence,
        "unknowns": [
            f"E1 is truncated: more lines exist than were shown (2 lines contain {canary}).",
            "E2: plain",
        ],
        "refusals": [
            {
                "turn": 2,
                "code": "record_unavailable",
                "owner": "tool:searchlogs",
                "detail": f"cannot read: {canary}",
                "call": {"id": "c2", "name": "searchlogs", "args": {"path": "r/local"}},
            }
        ],
        "hypotheses": [{"statement": f"the log shows {canary}", "refs": ["E1"]}],
        "chooser_stop_text": f"done: {canary}",
    }


@given(canary=canaries, where=planted)
def test_the_graders_request_to_a_remote_route_holds_no_byte_of_a_local_record(canary, where):
    sent: list[Outbound] = []

    def sender(route: Route, outbound: Outbound, **_: Any) -> Reply:
        sent.append(outbound)
        return Reply(json.dumps({"verdict": "unknown", "reason": "withheld"}))

    run = RunFacts(GRANT["records"])
    check = grade(
        Rubric(name="cites", question="Does it cite?"),
        _handover(canary, where),
        REMOTE,
        run,
        sender,
    )
    assert check.outcome == "unknown" and len(sent) == 1
    assert canary not in sent[0].text and canary not in json.dumps(check.record)
    assert "plainshared" in sent[0].text


def test_a_remote_graders_view_keeps_refs_and_withholds_what_any_chooser_said():
    view = for_route(_handover("Qzsecret123456", {"excerpt"}), RunFacts(GRANT["records"]), "remote")
    shown = view.shown
    assert shown["evidence"][0]["withheld"] and shown["evidence"][0]["ref"] == "E1"
    assert shown["evidence"][1]["excerpt"] == _handover("x", set())["evidence"][1]["excerpt"]
    # Deny by default: once the run read a local record, whoever chose (a remote model
    # included) may have written what it said from it; only its citations go.
    assert shown["hypotheses"][0]["refs"] == ["E1"]
    assert shown["hypotheses"][0]["statement"].startswith("[withheld: hypotheses[0].statement")
    assert "hypotheses[0].statement" in {item["field"] for item in view.withheld}


quoting = st.sampled_from(
    [
        lambda text: text,
        lambda text: json.dumps(text),
        lambda text: json.dumps({"a": [text]}, ensure_ascii=False),
        lambda text: text.replace(" ", "\n  "),
        lambda text: text.replace("<<<", "‹‹‹").upper().lower(),  # markers defanged
        lambda text: "-".join(text),  # spaced out letter by letter
    ]
)


@given(
    canary=st.text(ALNUM, min_size=WINDOW, max_size=40),
    before=st.text(max_size=40),
    after=st.text(max_size=40),
    quote=quoting,
)
def test_the_gate_withholds_any_copy_of_a_local_run_of_letters(canary, before, after, quote):
    local = f"L4 UVM_ERROR [{canary}] overflow"
    taint = Taint.of([local], shared=["Why did fifo_smoke fail?"])
    copied = quote(f"{before}{canary}{after}")
    out = gate(copied, "remote", taint)
    letters = "".join(char for char in out.text if char.isalnum())
    assert (
        canary.lower() not in letters.lower()
        or canary.lower() in "".join(c for c in MARKER if c.isalnum()).lower()
    )
    assert out.withheld >= 1
    assert gate(copied, "local", taint).text == copied  # a local route sees everything


@given(text=st.text(max_size=200))
def test_the_gate_leaves_text_that_copies_nothing_local(text):
    taint = Taint.of(["Qz0123456789abcdef only here"], shared=[])
    if "Qz0123456789ab" not in "".join(char for char in text if char.isalnum()):
        assert gate(text, "remote", taint).text == text


def test_shared_text_is_not_withheld_even_where_a_local_record_repeats_it():
    goal = "Why did reset_smoke fail in regression run R42?"
    taint = Taint.of([f"UVM_INFO {goal} Qzsecretvalue99"], shared=[goal])
    out = gate(f"## goal\n{goal}\nQzsecretvalue99", "remote", taint)
    assert goal in out.text and "Qzsecretvalue99" not in out.text and out.withheld == 1


def test_deny_by_default_a_record_not_marked_shareable_is_local():
    records = {"a": {"share": "any"}, "b": {"share": "local"}, "c": {}}
    assert local_records(records, "remote") == {"b", "c"}
    assert local_records(records, "local") == frozenset()


def test_the_transport_sends_no_request_gated_for_another_locality():
    from nodes.choosers.transport import send

    reply = send(REMOTE, gate("hello", "local", Taint(frozenset())))
    assert reply.error is not None and reply.error.startswith("egress refused")


def test_a_childs_unknowns_on_a_local_log_never_reach_the_parents_remote_request(
    route_env,  # noqa: F811
    tmp_path,
):
    """The break-in's path: a child's `logsummary` on a local log is truncated, its unknowns quote
    the summary (report ids with the canary), and main's next request to the remote route holds
    the handoff. No request, main's or the child's, holds a byte of the log."""
    from tests.fake_openai import FakeOpenAI
    from tests.helpers import run_embedded
    from tests.nodes.choosers.test_data_approval import CANARY, scenario

    manifest = scenario(tmp_path, "triage", "local")
    budget = {"steps": 3, "evidence": 2}
    replies = [
        {
            "summary": "delegate",
            "message": {
                "kind": "delegate",
                "tasks": [
                    {
                        "id": "t1",
                        "goal": "summarize the log",
                        "records": ["da/t.log"],
                        "budget": budget,
                    }
                ],
            },
        },
        {
            "summary": "summary",
            "tool_calls": [
                {"id": "c1", "name": "logsummary", "args": {"path": "da/t.log"}},
                {
                    "id": "c2",
                    "name": "searchlogs",
                    "args": {"path": "da/t.log", "query": "UVM_ERROR", "limit": 1},
                },
            ],
        },
        {
            "summary": "done",
            "message": {
                "kind": "stop",
                "text": "summarized",
                "hypotheses": [{"statement": "see E1", "refs": ["E1"]}],
            },
        },
        {"summary": "done", "message": {"kind": "stop", "text": "handed over"}},
    ]
    server = FakeOpenAI([json.dumps(reply) for reply in replies])
    route_env(server, locality="remote", context_tokens="200000")
    with server.running():
        state = run_embedded(str(manifest), "model")
    assert state["status"] == "stopped", state.get("refusals")
    evidence = state["handover"]["evidence"]
    assert [item["lane"] for item in evidence] == ["t1", "t1"] and CANARY in json.dumps(evidence)
    assert any(item["truncated"] for item in evidence)  # so its unknowns quote its summary
    handoff_turn = json.dumps(server.requests[-1])
    assert "child t1" in handoff_turn and "withheld here" in handoff_turn
    assert all(CANARY not in json.dumps(body) for body in server.requests)
