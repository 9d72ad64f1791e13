"""Records lab/cassettes/r42-memory.jsonl: a model run of R42-memory through Warrant's real transport,
answered by a local OpenAI-compatible endpoint serving the replies below, which were written by
hand to show the path a capable model takes (the 135M model on this machine never recalls).

    .venv/bin/python tests/record_r42_memory.py

It saves the note of README "Skills and memory" in a fresh SQLite file, runs R42-memory with
`--record`, approves the note the model proposes, and finishes the run. The requests and their
replay keys are Warrant's own; only the replies are scripted.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.fake_openai import FakeOpenAI  # noqa: E402

NOTE = "RST_CHK clk_en late after release: seen in R38, R40-R42; tracked as BUG-1234"
SIGNATURE = "RST_CHK clk_en late"
LOG, SPEC, HISTORY = (
    "lab/runs/R42/reset_smoke.log",
    "lab/spec/reset_controller.md",
    "lab/history/regressions.csv",
)
REPLIES = [
    {
        "summary": "Ask the team's memory about the reset checker first.",
        "tool_calls": [{"id": "t1r1", "name": "recall", "args": {"query": "RST_CHK clk_en"}}],
    },
    {
        "summary": "M1 is history; read the failing log for the check itself.",
        "tool_calls": [
            {"id": "t2c1", "name": "searchlogs", "args": {"path": LOG, "query": "RST_CHK"}}
        ],
    },
    {
        "summary": "Read the requirement the check names and the test's history.",
        "tool_calls": [
            {"id": "t3c1", "name": "readspec", "args": {"path": SPEC, "section": "reset_release"}},
            {
                "id": "t3c2",
                "name": "getrunhistory",
                "args": {"path": HISTORY, "test": "reset_smoke"},
            },
        ],
    },
    {
        "summary": "Worth keeping for the next investigation.",
        "message": {
            "kind": "remember",
            "signature": SIGNATURE,
            "refs": ["E1", "E2", "E3"],
            "text": "R42 reset_smoke: clk_en asserted 6 cycles after synchronized reset release (RST-5 allows 4); same signature as R38, R40, R41.",
        },
    },
    {
        "summary": "The evidence is gathered; the note is history.",
        "message": {
            "kind": "stop",
            "text": "RST_CHK failed: clk_en late after synchronized reset release.",
            "hypotheses": [
                {
                    "statement": "clk_en asserted 6 cycles after the synchronized reset release, where RST-5 allows 4.",
                    "refs": ["E1", "E2"],
                },
                {"statement": "The signature recurs since R38 (R40, R41, R42).", "refs": ["E3"]},
                {"statement": "The failure is tracked as BUG-1234.", "refs": ["M1"]},
            ],
        },
    },
]


def main() -> None:
    server = FakeOpenAI([json.dumps(reply) for reply in REPLIES])
    db = Path(tempfile.mkdtemp()) / "record.db"
    env = {
        **os.environ,
        "WARRANT_DB": str(db),
        "WARRANT_MODEL": "capable-model",
        "OPENAI_BASE_URL": server.url,
        "OPENAI_API_KEY": "unused",
        "WARRANT_MODEL_BACKOFF": "0.01",
    }
    warrant = str(Path(sys.executable).with_name("warrant"))
    cassette = ROOT / "lab" / "cassettes" / "r42-memory.jsonl"
    with server.running():
        subprocess.run(
            [
                warrant,
                "memory",
                "save",
                NOTE,
                "--signature",
                SIGNATURE,
                "--project",
                "warrant-lab",
                "--as",
                "alice",
            ],
            env=env,
            check=True,
        )
        waiting = subprocess.run(
            [
                warrant,
                "run",
                "R42-memory",
                "--chooser",
                "model",
                "--record",
                str(cassette),
                "--json",
                "-q",
            ],
            env=env,
            capture_output=True,
            text=True,
        )
        assert waiting.returncode == 3, waiting.stderr
        thread = json.loads(waiting.stdout)["thread_id"]
        subprocess.run(
            [
                warrant,
                "resume",
                thread,
                "--approve",
                "--as",
                "alice",
                "--record",
                str(cassette),
                "-q",
            ],
            env=env,
            check=True,
        )
    print(f"recorded {cassette} ({len(server.requests)} requests)")


if __name__ == "__main__":
    main()
