"""Property: whatever sequence of documents a chooser proposes, nothing outside the grant executes."""

import json
import os
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from tests.guards.test_properties import documents
from tests.helpers import run_embedded

PROTECTED_TEXT = "PROTECTED DESIGN NOTES"


@settings(
    max_examples=int(os.environ.get("WARRANT_LOOP_EXAMPLES", "40")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(st.lists(documents, min_size=1, max_size=6))
def test_no_sequence_of_proposals_executes_outside_the_grant(proposals):
    with tempfile.TemporaryDirectory() as folder:
        actions = Path(folder) / "actions.jsonl"
        lines = [doc if isinstance(doc, str) else json.dumps(doc) for doc in proposals]
        actions.write_text(
            "\n".join(line.replace("\n", " ").replace("\r", " ") for line in lines) + "\n"
        )
        text = actions.read_text()
        assume(
            text.strip() and "\x00" not in text
        )  # empty or binary files are refused before a run
        state = run_embedded("R42", f"file:{actions}")
    grant = state["grant"]["records"]
    waiting = state.get("pending") or []
    assert "handover" in state or [item["kind"] for item in waiting] == ["question"]
    assert all(item["record"] in grant for item in state["evidence"])
    assert len(state["evidence"]) <= state["grant"]["budget"]["evidence"]
    assert [item["ref"] for item in state["evidence"]] == [
        f"E{n}" for n in range(1, len(state["evidence"]) + 1)
    ]
    assert PROTECTED_TEXT not in json.dumps(state)
    assert all(refusal["code"] and refusal["owner"] for refusal in state["refusals"])
