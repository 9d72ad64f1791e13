"""Property: whatever a chooser returns (nesting, NUL and other control characters, lone
surrogates, sizes, repeated keys), the run records it, refuses it, ends with a handover and can be
read and resumed again, on SQLite and on the real PostgreSQL server alike."""

from __future__ import annotations

import json
import os
import sqlite3
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from contract.errors import ManifestError
from graph.build import compile_graph
from graph.runs.interactions import InteractionError, reply_from_options
from guards.action import MAX_DEPTH, parse_action
from guards.refusals import Refusal
from ledger.context import WarrantContext
from ledger.persistence.savers import Storage, open_run
from scenario.registry import load_scenario
from tests.cli_process import warrant
from tests.helpers import R42_LOG, recorded, stop, write_manifest

EXAMPLES = int(os.environ.get("WARRANT_HOSTILE_EXAMPLES", "25"))
CONTROL = st.characters(min_codepoint=0, max_codepoint=0x1F) | st.sampled_from(
    "\x7f\u2028\ud800\udfff\ufeff"
)
hostile_text = st.text(alphabet=CONTROL | st.characters(), max_size=40)


def nested(depth: int, leaf: Any) -> Any:
    value = leaf
    for level in range(depth):
        value = {"x": value} if level % 2 else [value]
    return value


deep_values = st.builds(nested, st.integers(MAX_DEPTH - 2, 700), hostile_text)
sized_text = st.integers(0, 70_000).map(lambda size: "x" * size)
calls = st.builds(
    lambda call_id, query, limit: {
        "id": call_id,
        "name": "searchlogs",
        "args": {"path": R42_LOG, "query": query, "limit": limit},
    },
    st.sampled_from(["c1", "E1", "h2", "m10", "a\x00"]) | hostile_text,
    hostile_text | deep_values,
    st.integers(-3, 30) | st.booleans() | deep_values | st.integers(1 << 63, 1 << 80),
)
documents = st.one_of(
    st.builds(
        lambda text: {"summary": "s", "message": {"kind": "stop", "text": text}}, hostile_text
    ),
    st.builds(
        lambda q: {"summary": "s", "message": {"kind": "ask_user", "question": q}}, hostile_text
    ),
    st.builds(lambda call: {"summary": "s", "tool_calls": [call]}, calls),
    st.builds(lambda summary: {"summary": summary, "message": {"kind": "stop"}}, sized_text),
    deep_values,
    st.builds(json.dumps, st.builds(lambda call: {"summary": "s", "tool_calls": [call]}, calls)),
    st.just('{"summary": "s", "summary": "t", "message": {"kind": "stop"}}'),
    hostile_text,
)


@dataclass(frozen=True)
class Proposals:
    """A chooser that proposes the given documents, then stops (trusted embedded code)."""

    proposals: tuple[Any, ...]
    actor: str = "chooser:hostile"

    def choose(self, view: Any) -> Any:
        if view.turn <= len(self.proposals):
            return self.proposals[view.turn - 1]
        return stop("end of the hostile sequence")


@contextmanager
def sqlite_store(folder: Path) -> Iterator[str]:
    yield str(folder / f"{uuid.uuid4().hex}.sqlite")


def finish(db: str, thread: str, proposals: list[Any]) -> dict[str, Any]:
    context = WarrantContext(choosers={"hostile": Proposals(tuple(proposals))})
    config = {"configurable": {"thread_id": thread}}
    with open_run(db, thread) as storage:
        graph = compile_graph(*storage)
        graph.invoke(
            {"scenario": "R42", "chooser": "hostile"}, config, durability="sync", context=context
        )
        return read_back(storage, config)


def read_back(storage: Storage, config: dict[str, Any]) -> dict[str, Any]:
    """The final state as a fresh reader sees it, and a resume that finds nothing to do."""
    graph = compile_graph(*storage)
    graph.invoke(None, config, durability="sync")
    return recorded(graph, config)


def check(state: dict[str, Any], proposals: list[Any]) -> None:
    """Ended with a handover, or waiting for a person on a question the guard let through."""
    if state.get("pending"):
        [waiting] = state["pending"]
        assert waiting["kind"] == "question" and "handover" not in state
    else:
        assert state["handover"]["status"] in {"stopped", "step_budget_exhausted", "refusal_limit"}
    assert all(item["record"] == R42_LOG for item in state.get("evidence", []))
    json.dumps(state, allow_nan=False).encode("utf-8")  # storable, valid UTF-8 everywhere
    assert "\x00" not in json.dumps(state, ensure_ascii=False)
    first = proposals[0]
    if isinstance(parse_action(first), Refusal):
        assert state["refusals"][0]["code"] == "malformed_action"
    assert all("\n" not in refusal["detail"] for refusal in state["refusals"])


def hostile_settings(test: Any) -> Any:
    return settings(
        max_examples=EXAMPLES,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    )(test)


@hostile_settings
@given(st.lists(documents, min_size=1, max_size=4))
def test_hostile_documents_end_cleanly_on_sqlite(tmp_path, proposals):
    db = str(tmp_path / f"{uuid.uuid4().hex}.sqlite")
    state = finish(db, "t", proposals)
    check(state, proposals)
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT count(*) FROM checkpoints").fetchone()[0] > 0


@hostile_settings
@given(st.lists(documents, min_size=1, max_size=4))
def test_hostile_documents_end_cleanly_on_postgres(postgres_url, proposals):
    state = finish(postgres_url, f"t-{uuid.uuid4().hex}", proposals)
    check(state, proposals)


@pytest.mark.parametrize(
    "document",
    [
        nested(600, "x"),
        json.dumps(nested(600, "x")),
        {"summary": "s", "message": {"kind": "stop", "text": "before\x00after"}},
        '{"summary": "s", "message": {"kind": "stop", "text": "a\\u0000b"}}',
        {
            "summary": "s",
            "tool_calls": [
                {
                    "id": "c1",
                    "name": "searchlogs",
                    "args": {"path": R42_LOG, "query": "q", "limit": nested(600, 1)},
                }
            ],
        },
    ],
)
def test_a_deep_or_nul_document_is_refused_and_the_run_ends(postgres_url, document):
    state = finish(postgres_url, "deep", [document])
    [refusal] = state["refusals"]
    assert refusal["code"] == "malformed_action"
    assert state["handover"]["status"] == "stopped"


def test_a_manifest_holding_a_nul_is_refused_at_load(scenario_dir):
    manifest = (
        write_manifest(scenario_dir)
        .read_text()
        .replace('goal = "Why did fifo_smoke fail?"', 'goal = "Why\\u0000"')
    )
    (scenario_dir / "nul.toml").write_text(manifest)
    with pytest.raises(ManifestError, match="NUL"):
        load_scenario(scenario_dir / "nul.toml")


def test_an_edit_with_a_repeated_key_is_refused_before_it_is_sent():
    with pytest.raises(InteractionError, match="appears twice"):
        reply_from_options("approval", None, False, False, '{"query": "a", "query": "b"}')


def test_an_edit_with_an_integer_beyond_64_bits_is_refused_before_it_is_sent():
    with pytest.raises(InteractionError, match="beyond 64 bits"):
        reply_from_options(
            "approval", None, False, False, '{"limit": 123456789012345678901234567890}'
        )


def test_a_lone_surrogate_in_a_proposal_prints_in_the_events_table(tmp_path):
    actions = tmp_path / "a.jsonl"
    actions.write_text('{"summary": "sur\\ud800", "message": {"kind": "stop"}}\n')
    db = str(tmp_path / "s.sqlite")
    ran = warrant(
        "run", "R42", "--chooser", f"file:{actions}", "--db", db, "--thread", "s", cwd=tmp_path
    )
    assert ran.returncode == 0, ran.stderr
    table = warrant("events", "s", "--db", db, cwd=tmp_path)
    assert table.returncode == 0 and "Traceback" not in table.stderr, table.stderr


@pytest.mark.parametrize("number", ["NaN", "Infinity", "-1e400", "-0.0", "1e16"])
def test_an_edit_with_a_number_no_store_keeps_is_refused_before_it_is_sent(number):
    with pytest.raises(InteractionError, match=r"--edit is refused: holds .* in \$\.limit"):
        reply_from_options("approval", None, False, False, '{"limit": ' + number + "}")
