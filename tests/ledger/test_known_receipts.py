"""The guard's receipt lookups are answered from what this process committed only at the ledger
head its last commit left; any other cursor (a run resumed elsewhere, a state put back) is read
from the store."""

from __future__ import annotations

from langgraph.store.memory import InMemoryStore

from graph.build import compile_graph
from guards.checks import parse_proposal
from ledger.context import WarrantContext
from ledger.read import receipts_asked, receipts_of_calls
from nodes.choosers import ScriptedChooser
from nodes.receipts import LedgerReceipts

SCRIPT = [
    {
        "summary": "read",
        "tool_calls": [
            {
                "id": "c1",
                "name": "searchlogs",
                "args": {"path": "lab/runs/R42/reset_smoke.log", "query": "RST_CHK"},
            }
        ],
    },
    {"summary": "stop", "message": {"kind": "stop", "text": "done"}},
]


def finished_run(thread: str) -> tuple[InMemoryStore, dict]:
    store = InMemoryStore()
    graph = compile_graph(None, store)
    context = WarrantContext(choosers={"s": ScriptedChooser(SCRIPT)})
    state = graph.invoke(
        {"scenario": "R42", "chooser": "s"},
        {"configurable": {"thread_id": thread}},
        context=context,
    )
    assert state["status"] == "stopped"
    return store, state["cursor"]


def test_at_the_head_this_process_committed_the_answer_needs_no_store():
    _, cursor = finished_run("known-1")
    empty = InMemoryStore()  # nothing to read: the answer comes from the commits
    assert set(receipts_of_calls(empty, "known-1", cursor, ["c1", "c9"])) == {"c1"}
    calls, seen = receipts_asked(empty, "known-1", cursor, ["c1"], [])
    assert set(calls) == {"c1"} and seen == set()


def test_any_other_head_is_read_from_the_store():
    store, cursor = finished_run("known-2")
    elsewhere = {**cursor, "head": "0" * 64}  # the ledger as another process left it
    assert receipts_of_calls(InMemoryStore(), "known-2", elsewhere, ["c1"]) == {}
    older = {**cursor, "head": "f" * 64, "observations": 0}  # an earlier state put back
    assert receipts_of_calls(store, "known-2", older, ["c1"]) == {}  # committed after it
    assert set(receipts_of_calls(store, "known-2", {**cursor, "head": "0" * 64}, ["c1"])) == {
        "c1"
    }  # read, and found, in the run's own store


class CountingStore(InMemoryStore):
    """A store that counts its batches."""

    def __init__(self) -> None:
        super().__init__()
        self.batches = 0

    def batch(self, ops):  # type: ignore[no-untyped-def]
        self.batches += 1
        return super().batch(ops)


def test_the_guard_asks_about_a_proposal_in_one_store_batch_at_its_first_question():
    store, cursor = finished_run("known-3")
    counting = CountingStore()
    for namespace in [("warrant", "runs", "known-3", kind) for kind in ("calls", "signatures")]:
        for item in store.search(namespace, limit=100):
            counting.put(namespace, item.key, item.value)
    counting.batches = 0
    elsewhere = {**cursor, "head": "0" * 64}  # not this process's head: read from the store
    again = {
        **SCRIPT[0],
        "tool_calls": [*SCRIPT[0]["tool_calls"], {**SCRIPT[0]["tool_calls"][0], "id": "c2"}],
    }
    proposal = parse_proposal(again, "triage")
    receipts = LedgerReceipts(counting, "known-3", elsewhere, proposal)
    assert counting.batches == 0  # nothing asked, nothing read
    [signature] = set(proposal.signatures())
    assert receipts.signature_of("c1") == signature and receipts.signature_of("c2") is None
    assert receipts.has_signature(signature)
    assert counting.batches == 1
