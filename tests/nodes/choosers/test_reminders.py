"""Reminders counted only when sent (seed 001 §05): each model request's manifest lists the reminder
lines it carried and those it dropped, with why; the truth is the HTTP body the fake server received;
`warrant trace` shows both; and reminders are text for the model only, never a budget or a status."""

from __future__ import annotations

import json
import math
import re
from typing import Any

from graph.present.flows import reminder_flow, reminder_line
from graph.present.tracing import span_specs
from tests.cli_process import warrant
from tests.fake_openai import FakeOpenAI
from tests.helpers import (
    R42_HISTORY,
    R42_LOG,
    R42_SPEC,
    FakeClock,
    call,
    stop,
    write_manifest,
)
from tests.nodes.choosers.test_model import route_env as route_env
from tests.nodes.choosers.test_model import run_model
from tests.nodes.choosers.test_model_cli import model_env

OUTPUT_TOKENS = 1000
FRAMING_TOKENS = 64  # the projector's framing allowance, which the route's context budget also pays
FIFO_LOG = "lab/runs/R42/fifo_basic.log"
ASK = json.dumps(
    {
        "summary": "ask",
        "message": {"kind": "ask_user", "question": "Which seed failed first?", "blocking": False},
    }
)


class ClockedServer(FakeOpenAI):
    """A fake endpoint that moves a fake clock on by the next of `advances` as each request
    arrives: the run's time passes while the model thinks, and nowhere else."""

    def __init__(self, script: list[Any], clock: FakeClock, advances: list[float]) -> None:
        super().__init__(script)
        self.clock, self.advances = clock, list(advances)

    def next_reply(self, body: dict[str, Any]) -> dict[str, Any]:
        self.clock.now += self.advances.pop(0) if self.advances else 0.0
        return super().next_reply(body)


def sent_reminders(prompt: str) -> list[str]:
    """The reminder lines of a request as the server received it (its last section)."""
    head, _, body = prompt.rpartition("\n\n## reminders\n")
    assert head, "the request has a reminders section"
    return [] if body == "None." else body.split("\n")


def manifests(state: dict) -> list[dict]:
    return [e["payload"]["manifest"] for e in state["events"] if e["type"] == "requested"]


def request_tokens(manifest: dict, leaving_out: str = "") -> int:
    """A request's size as the projector counts it against the context budget (4 characters a
    token, each section with its heading): a setup number, to size a route a token too small."""
    return sum(
        math.ceil((len(f"## {s['name']}\n") + s["chars"]) / manifest["chars_per_token"])
        for s in manifest["sections"]
        if s["name"] != leaving_out
    )


def delivered(manifest: dict) -> list[str]:
    return [reminder["id"] for reminder in manifest["reminders_delivered"]]


def question_id(state: dict) -> str:
    (asked,) = [e for e in state["events"] if e["type"] == "asked"]
    return asked["payload"]["interaction"]["interaction_id"]


def test_r42_requests_carry_exactly_the_reminders_their_manifests_list(route_env):
    """R42: four reads at turn 1 leave 2 of 6 evidence items (budget pressure); a question asked
    at turn 2 is open at turn 3; the model's 95 s leave 25 of 120 (deadline pressure)."""
    reads = call("c1", "searchlogs", path=R42_LOG, query="RST_CHK", limit=5)
    reads["tool_calls"] += [
        {"id": "c2", "name": "readspec", "args": {"path": R42_SPEC, "section": "reset_release"}},
        {"id": "c3", "name": "getrunhistory", "args": {"path": R42_HISTORY, "test": "reset_smoke"}},
        {"id": "c4", "name": "searchlogs", "args": {"path": FIFO_LOG, "query": "UVM_ERROR"}},
    ]
    clock = FakeClock()
    server = ClockedServer([json.dumps(reads), ASK, json.dumps(stop())], clock, [50, 45, 0])
    route_env(server)
    state = run_model(server, context=clock.context())
    assert state["status"] == "stopped" and len(state["evidence"]) == 4
    sent = manifests(state)
    assert len(sent) == len(server.prompts) == 3
    for manifest, prompt in zip(sent, server.prompts, strict=True):
        lines = [reminder["line"] for reminder in manifest["reminders_delivered"]]
        assert sent_reminders(prompt) == lines, "the body carries exactly the listed lines"
        assert manifest["reminders_dropped"] == []
    unread = [  # the approved records not read, in the manifest's order
        "unexamined:lab/runs/R42/reset_smoke.vcd",
        "unexamined:lab/runs/R42/dma_burst.log",
        "unexamined:lab/runs/R42/irq_stress.log",
        "unexamined:lab/rtl.git",
    ]
    question = f"question:{question_id(state)}"
    assert [delivered(manifest) for manifest in sent] == [
        ["turn"],
        ["budget", "turn", *unread],
        ["budget", "deadline", question, "turn", *unread],
    ]
    # What the model read, from the body: the facts each line stands for.
    last = sent_reminders(server.prompts[2])
    assert "2 evidence item(s) left" in last[0] and "about 25 s left" in last[1]
    assert question_id(state) in last[2] and last[3].startswith("Turn 3. Left: 6 turn(s)")
    assert (
        all(len(line) <= 200 for line in last)
        and "reset_smoke.vcd" in last[4]
        and "dma_burst.log" in last[5]
    )
    spans = [s for s in span_specs("t1", state, state["events"]) if s.name.endswith(".requested")]
    assert [s.attributes["warrant.reminders.delivered"] for s in spans] == [
        delivered(manifest) for manifest in sent
    ]


def test_a_request_cut_to_fit_says_so_in_a_context_reminder(route_env):
    """Four long reads on a 5,000-token route: later requests carry old evidence by reference,
    and their context reminder names what the body the server received left out."""
    reads = [
        json.dumps(call(f"c{n}", "searchlogs", path=R42_LOG, query=q, limit=50))
        for n, q in enumerate(["UVM", "@", "0", "_"], 1)
    ]
    server = FakeOpenAI([*reads, json.dumps(stop())])
    route_env(server, context_tokens="5000", output_tokens="500")
    state = run_model(server)
    cut = 0
    for manifest, prompt in zip(manifests(state), server.prompts, strict=True):
        by_reference = re.findall(r"\[(E\d+): [^\n]*Body not included \(context budget\)", prompt)
        context = [line for line in sent_reminders(prompt) if line.startswith("Context: ")]
        assert ("context" in delivered(manifest)) == bool(by_reference) == bool(context)
        if context:
            cut += 1
            named = re.search(r"budget \(([E\d, ]+) by reference\)", context[0])
            assert named and named[1].split(", ") == by_reference
    assert cut, "the route was small enough to cut a request"


def cc_manifest(scenario_dir, extra_logs: int = 0, steps: int = 2):
    """The throwaway scenario (three records) with `extra_logs` more logs, `steps` turns."""
    body = ""
    for n in range(extra_logs):
        (scenario_dir / "logs" / f"x{n}.log").write_text(f"UVM_INFO x{n}.sv(1) @ 1: ok\n")
        body += f'[[record]]\nid = "cc/x{n}.log"\nkind = "log"\npath = "logs/x{n}.log"\n'
    return write_manifest(scenario_dir, body, steps=steps)


CC_SCRIPT = [ASK, json.dumps(call("c1", "searchlogs", path="cc/t.log", query="UVM"))]
"""Turn 1 asks and goes on; turn 2, the last (budget pressure), reads: the guard ends the run at
turn 3 with the step budget spent, whatever the reminders said."""


def run_cc(route_env, manifest, **settings: str) -> tuple[dict, FakeOpenAI]:
    clock = FakeClock()  # no time passes: the turn line's seconds are the same in every run
    server = FakeOpenAI(CC_SCRIPT)
    route_env(server, output_tokens=str(OUTPUT_TOKENS), **settings)
    return run_model(server, str(manifest), context=clock.context()), server


def test_a_reminder_dropped_to_fit_the_context_is_listed_and_not_sent(route_env, scenario_dir):
    manifest = cc_manifest(scenario_dir)
    roomy, roomy_server = run_cc(route_env, manifest)
    full = manifests(roomy)[1]
    context = request_tokens(full) - 1 + OUTPUT_TOKENS + FRAMING_TOKENS  # a token short of turn 2
    tight, tight_server = run_cc(route_env, manifest, context_tokens=str(context))
    lines = sent_reminders(roomy_server.prompts[1])
    assert len(lines) == 6 and lines[-1].startswith("Approved history record cc/hist.csv")
    cut = manifests(tight)[1]
    assert cut["reminders_dropped"] == [
        {"id": "unexamined:cc/hist.csv", "reason": "context sizing"}
    ]
    assert delivered(cut) == delivered(full)[:-1]
    body = tight_server.prompts[1]
    assert lines[-1] not in body and sent_reminders(body) == lines[:-1]
    assert "## goal\nWhy did fifo_smoke fail?" in body, "the goal is never dropped"
    (flow,) = [flow for flow in reminder_flow(tight["events"]) if flow.turn == 2]
    assert reminder_line(flow).endswith("dropped: unexamined:cc/hist.csv (context sizing)")


def section(prompt: str, name: str) -> str:
    return prompt.split(f"## {name}\n", 1)[1].split("\n\n## ", 1)[0]


def test_reminders_change_no_budget_and_no_status(route_env, scenario_dir):
    """A reminder is text: after "this is the last turn: stop now" the model reads anyway, the
    guard approves it as it would unreminded, and the run ends on the step budget both with every
    reminder and with none (the context too small for any)."""
    manifest = cc_manifest(scenario_dir)
    reminded, reminded_server = run_cc(route_env, manifest)
    full = manifests(reminded)[1]
    none = math.ceil(len("## reminders\nNone.") / 4)
    context = request_tokens(full, "reminders") + none + OUTPUT_TOKENS + FRAMING_TOKENS
    bare, bare_server = run_cc(route_env, manifest, context_tokens=str(context))
    assert "this is the last turn" in sent_reminders(reminded_server.prompts[1])[0]
    assert sent_reminders(bare_server.prompts[1]) == [] and delivered(manifests(bare)[1]) == []
    for state in (reminded, bare):
        assert state["status"] == "step_budget_exhausted" and state["turn"] == 3
        assert [item["ref"] for item in state["evidence"]] == ["E1"]
        assert state["refusals"][-1]["code"] == "step_budget_exhausted"
        assert state["grant"]["budget"]["steps"] == 2 and state["questions_asked"] == 1
    assert reminded["grant"]["budget"] == bare["grant"]["budget"]
    for one, other in zip(reminded_server.prompts, bare_server.prompts, strict=True):
        assert section(one, "grant") == section(other, "grant")
    kinds = [[e["type"] for e in state["events"]] for state in (reminded, bare)]
    assert kinds[0] == kinds[1]
    others = [e for e in reminded["events"] if e["type"] != "requested"]
    said = json.dumps(others)  # the guard's and the tools' entries: no reminder reached them
    assert "reminders_delivered" not in said and "reminders_dropped" not in said
    assert not any(line in said for line in sent_reminders(reminded_server.prompts[1]))


def test_warrant_trace_shows_delivered_and_dropped_reminders(tmp_path, scenario_dir):
    manifest = cc_manifest(scenario_dir, extra_logs=8)
    server = FakeOpenAI(CC_SCRIPT)
    db = str(tmp_path / "runs.sqlite")
    with server.running():
        ran = warrant(
            "run", str(manifest), "--chooser", "model", "--db", db, "--thread", "cc", "-q",
            cwd=tmp_path, env=model_env(server),
        )  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    kept = [f"cc/{name}" for name in ("t.log", "spec.md", "hist.csv", "x0.log", "x1.log")]
    over = [f"cc/x{n}.log" for n in range(2, 8)]
    sent = "\n".join(sent_reminders(server.prompts[1]))
    assert len(sent.split("\n")) == 8 and all(f" record {record} " in sent for record in kept)
    assert not any(f" record {record} " in sent for record in over)
    shown = warrant("trace", "cc", "--db", db, cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert "turn 1 · delivered: turn · dropped: none" in lines
    (turn_2,) = [line for line in lines if line.startswith("turn 2 · ")]
    delivered_part, dropped_part = turn_2.split(" · dropped: ")
    iid = re.search(r"question:(\S+?),", delivered_part)
    assert iid and delivered_part == "turn 2 · delivered: " + ", ".join(
        ["budget", f"question:{iid[1]}", "turn", *(f"unexamined:{record}" for record in kept)]
    )
    assert dropped_part == ", ".join(f"unexamined:{r} (over the count limit of 8)" for r in over)
    data = json.loads(warrant("trace", "cc", "--db", db, "--json", cwd=tmp_path).stdout)
    assert [(r["turn"], r["answered"], len(r["delivered"])) for r in data["reminders"]] == [
        (1, True, 1),
        (2, True, 8),
    ]


def test_a_request_the_model_never_answered_delivered_no_reminder(route_env):
    server = FakeOpenAI([{"status": 400, "content": "bad request"}])
    route_env(server)
    state = run_model(server)
    assert state["status"] == "model_failed" and len(server.prompts) == 1
    assert sent_reminders(server.prompts[0])[0].startswith("Turn 1. Left: 8 turn(s)")
    (flow,) = reminder_flow(state["events"])
    assert flow.carried == ["turn"] and flow.delivered == [] and not flow.answered
    assert "none: the model never answered this request (it carried turn)" in reminder_line(flow)


def test_a_reminder_of_a_local_record_carries_no_byte_of_it_to_a_remote_route(
    route_env, scenario_dir
):
    """The reminders name what the grant names (ids and kinds) and nothing read from a
    `share = "local"` record: the log read at turn 1 and the unread local spec stay behind."""
    manifest = write_manifest(scenario_dir, steps=2)
    text = manifest.read_text()
    for path in ("logs/t.log", "spec.md"):
        text = text.replace(f'path = "{path}"', f'path = "{path}"\nshare = "local"')
    manifest.write_text(text)
    server = FakeOpenAI([json.dumps(call("c1", "searchlogs", path="cc/t.log", query="UVM")), ASK])
    route_env(server, locality="remote")
    state = run_model(server, str(manifest))
    assert state["evidence"][0]["excerpt"], "the run itself read the local log"
    lines = sent_reminders(server.prompts[1])
    assert delivered(manifests(state)[1]) == [
        "budget",
        "turn",
        "unexamined:cc/spec.md",
        "unexamined:cc/hist.csv",
    ]
    assert lines[2] == (
        "Approved spec record cc/spec.md has not been read"
        " (share = local: you would get a reference, not its text)."
    )
    for prompt in server.prompts:
        assert "overflow" not in prompt and "16 entries" not in prompt
