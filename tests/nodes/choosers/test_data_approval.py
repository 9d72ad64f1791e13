"""Data approval holds for every byte: nothing derived from a `share = "local"` record reaches a
remote model route, whichever tool read it and whatever it said (an excerpt, a summary, flags, an
unknown quoting a summary, an error, a refusal's detail). A canary is planted in every line,
heading, cell and name of the records; every tool of both profiles is called through the real
transport against a local server, which keeps every request body."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from lab.stagen import PathSpec, render_path
from tests.fake_openai import FakeOpenAI
from tests.helpers import call, run_embedded, stop
from tests.nodes.choosers.test_model import route_env  # noqa: F401 (a fixture)

CANARY = "Qz7canary"


def _log() -> str:
    lines = [f"UVM_INFO tb/{CANARY}.sv(1) @ 0: reporter [RNTST] Running test {CANARY}_test..."]
    lines += [
        f"UVM_ERROR tb/{CANARY}.sv({n}) @ {n}0: env.{CANARY} [{CANARY}] {CANARY} overflow {n}"
        for n in range(1, 30)
    ]
    lines += [
        "--- UVM Report Summary ---",
        "** Report counts by severity",
        "UVM_INFO :    1",
        "UVM_ERROR :   29",
        "** Report counts by id",
        f"[{CANARY}]    29",
        f"TEST FAILED: {CANARY}_test",
    ]
    return "\n".join(lines) + "\n"


SPEC = f"# {CANARY} controller\n\n## fifo_depth\n{CANARY}: the FIFO holds 16 entries.\n\n## {CANARY} notes\n{CANARY}\n"
HISTORY = "run,date,test,status,signature\n" + "".join(
    f"R{n},2026-11-{n:02d},fifo_smoke,{'FAIL' if n % 2 else 'PASS'},{CANARY} sig {n}\n"
    for n in range(1, 15)
)


def _report(worse: float) -> str:
    def path(index: int, arrival: float) -> str:
        return render_path(
            PathSpec(
                f"u_{CANARY}/src_reg[{index}]",
                f"u_{CANARY}/dst_reg[{index}]",
                f"rising edge-triggered flip-flop clocked by {CANARY}_clk",
                f"rising edge-triggered flip-flop clocked by {CANARY}_clk",
                f"{CANARY}_clk",
                "max",
                arrival,
                9.95,
                corner=f"{CANARY}_ss",
                pin="D",
            )
        )

    return "".join(path(index, 2.0 + index + worse) for index in range(6)) + f"Warning: {CANARY}\n"


TRIAGE = """\
id = "DA"
profile = "triage"
goal = "Why did fifo_smoke fail?"
[budget]
steps = 12
evidence = 10
deadline_s = 120
[[record]]
id = "da/t.log"
kind = "log"
path = "t.log"
share = "{share}"
[[record]]
id = "da/spec.md"
kind = "spec"
path = "spec.md"
share = "{share}"
[[record]]
id = "da/hist.csv"
kind = "history"
path = "hist.csv"
share = "{share}"
"""
STA = """\
id = "DS"
profile = "sta"
goal = "What got worse?"
[budget]
steps = 12
evidence = 10
deadline_s = 120
[[record]]
id = "ds/before.rpt"
kind = "sta_report"
path = "before.rpt"
share = "{share}"
[[record]]
id = "ds/after.rpt"
kind = "sta_report"
path = "after.rpt"
share = "{share}"
"""
TRIAGE_CALLS = [
    call("c1", "searchlogs", path="da/t.log", query="UVM_ERROR", limit=2),  # truncated
    call("c2", "searchlogs", path="da/t.log", query="env\\.\\w+", regex=True, context=2, limit=1),
    call("c3", "readlines", path="da/t.log", start=1, count=5),
    call("c4", "logsummary", path="da/t.log"),
    call("c5", "readspec", path="da/spec.md", section="fifo_depth"),
    call("c6", "readspec", path="da/spec.md", section="absent"),  # lists the headings
    call("c7", "getrunhistory", path="da/hist.csv", test="fifo_smoke", limit=3),  # truncated
    call("c8", "searchlogs", path="da/t.log", query="x", limit=True),  # refused
]
STA_CALLS = [
    call("s1", "stasummary", report="ds/before.rpt"),
    call("s2", "stapaths", report="ds/after.rpt", limit=2),
    call("s3", "stapath", report="ds/after.rpt", endpoint="nowhere"),
    call("s4", "stadiff", before="ds/before.rpt", after="ds/after.rpt", limit=2),
]


def scenario(root: Path, profile: str, share: str) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    if profile == "triage":
        (root / "t.log").write_text(_log())
        (root / "spec.md").write_text(SPEC)
        (root / "hist.csv").write_text(HISTORY)
        manifest = TRIAGE
    else:
        (root / "before.rpt").write_text(_report(0.0))
        (root / "after.rpt").write_text(_report(7.5))
        manifest = STA
    path = root / "scenario.toml"
    path.write_text(textwrap.dedent(manifest.format(share=share)))
    return path


def investigate(route_env, root: Path, profile: str, share: str, locality: str):  # noqa: F811
    calls = TRIAGE_CALLS if profile == "triage" else STA_CALLS
    server = FakeOpenAI([*(json.dumps(action) for action in calls), json.dumps(stop())])
    route_env(server, locality=locality, context_tokens="200000")
    with server.running():
        state = run_embedded(str(scenario(root, profile, share)), "model")
    return state, [json.dumps(body) for body in server.requests]


@pytest.mark.parametrize("profile", ["triage", "sta"])
def test_no_request_to_a_remote_route_holds_a_byte_of_a_local_record(
    route_env,  # noqa: F811
    tmp_path,
    profile,
):
    state, bodies = investigate(route_env, tmp_path, profile, "local", "remote")
    calls = TRIAGE_CALLS if profile == "triage" else STA_CALLS
    assert len(bodies) == len(calls) + 1 and state["status"] == "stopped"
    # The run itself read the records: the canary is in its evidence.
    assert CANARY in json.dumps(state["evidence"])
    assert state["refusals"] or profile == "sta"  # c8 is refused
    assert any(item.get("truncated") for item in state["evidence"])
    assert all(CANARY not in body for body in bodies)
    manifest = [e for e in state["events"] if e["type"] == "requested"][-1]["payload"]["manifest"]
    assert [item["ref"] for item in manifest["omitted"]] == [
        item["ref"] for item in state["evidence"]
    ]
    assert manifest["withheld"], "what was held back is listed, by hash"
    assert all(len(item["sha256"]) == 64 for item in manifest["withheld"])


@pytest.mark.parametrize(("share", "locality"), [("local", "local"), ("any", "remote")])
def test_a_local_route_or_a_shareable_record_is_quoted(route_env, tmp_path, share, locality):  # noqa: F811
    _, bodies = investigate(route_env, tmp_path, "triage", share, locality)
    assert CANARY in bodies[-1]


def test_the_projection_holds_back_each_kind_of_derived_text():
    """Each channel on its own, at the projector: an evidence item of a local record (its body,
    summary and flags), an unknown quoting its summary, a refusal of a call naming the record,
    and an evidence item of another record, quoted as usual."""
    from nodes.choosers.projector import assemble
    from nodes.choosers.route import Route
    from nodes.evidence import quoting
    from tests.nodes.choosers.test_egress import GRANT, local_and_other_view

    local = {
        "ref": "E1",
        "tool": "searchlogs",
        "record": "r/local",
        "summary": f"2 lines {CANARY}",
        "truncated": True,
        "flags": ["instruction_like_text"],
        "sha256": "0" * 64,
        "sources": [{"record": "r/local"}],
        "excerpt": [{"line": 3, "text": CANARY}],
    }
    other = {
        **local,
        "ref": "E2",
        "record": "r/other",
        "summary": "shareable",
        "sources": [{"record": "r/other"}],
        "excerpt": [{"line": 1, "text": "plain"}],
    }
    refusal = {
        "turn": 2,
        "code": "record_unavailable",
        "owner": "tool:searchlogs",
        "detail": f"cannot read: {CANARY}",
        "call": {"id": "c2", "name": "searchlogs", "args": {"path": "r/local"}},
    }
    view = local_and_other_view(
        "g",
        lambda: {
            "evidence": [local, other],
            "refusals": [refusal],
            "unknowns": [*quoting(local), *quoting(other)],
        },
    )
    grant = GRANT
    remote = assemble(view, grant, Route(model="m", locality="remote"))
    assert CANARY not in remote.text and "instruction_like_text" not in remote.text.split("E2")[0]
    assert "plain" in remote.text and "shareable" in remote.text
    assert [
        item.get("unknown_of") or item.get("refusal_turn") for item in remote.manifest["withheld"]
    ] == ["E1", 2]
    assert CANARY in assemble(view, grant, Route(model="m", locality="local")).text


def test_a_remote_run_with_local_records_replays_as_recorded(route_env, tmp_path):  # noqa: F811
    """A cassette keeps its route's locality: the replay is assembled for a remote route too,
    so its requests are the recorded ones (and still hold no local byte)."""
    from nodes.choosers.cassette import write_cassette

    state, _ = investigate(route_env, tmp_path / "recorded", "triage", "local", "remote")
    cassette = tmp_path / "run.jsonl"
    write_cassette(cassette, state["model_calls"])
    assert all(
        line["locality"] == "remote" for line in map(json.loads, cassette.read_text().splitlines())
    )
    replayed = run_embedded(str(tmp_path / "recorded" / "scenario.toml"), f"replay:{cassette}")
    assert replayed["status"] == "stopped"
    assert [item["ref"] for item in replayed["evidence"]] == [
        item["ref"] for item in state["evidence"]
    ]
    assert replayed["route"]["locality"] == "remote"
