"""Hooks through the whole graph: a pre-call hook can only block, a post-call hook can only narrow
what the model is shown (and is refused when it rewrites a fact), an end hook only observes;
any hook that fails, hangs or answers wrongly denies."""

from __future__ import annotations

import json
import textwrap
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from graph.present.render import handover_markdown
from ledger.context import WarrantContext
from nodes.choosers import ScriptedChooser
from tests.cli_process import warrant
from tests.fake_openai import FakeOpenAI
from tests.helpers import call, run_embedded, stop, write_manifest
from tests.nodes.choosers.test_model import route_env  # noqa: F401 (a fixture)

HOOKS = """\
from guards.hooks import ALLOW, Block, Projection

def no_fifo(call, run):
    if "FIFO" in str(call.args.get("query", "")):
        return Block(f"turn {run.turn}: FIFO searches are not allowed here")
    return ALLOW

def raises(call, run):
    raise RuntimeError("boom")

def hangs(call, run):
    from tests.graph.test_hooks import HUNG  # released when its test ends, so the thread ends too
    HUNG.wait(60)
    return ALLOW

def answers_junk(call, run):
    return True

def writes_args(call, run):
    call.args["query"] = "other"
    return ALLOW

def blocks_all(call, run):
    return Block("nothing may be read")

def rewrites(receipt):
    return Projection(receipt.summary, tuple((n, t.replace("20", "21")) for n, t in receipt.lines))

def drops_info(receipt):
    return Projection(receipt.summary, tuple((n, t) for n, t in receipt.lines if "UVM_INFO" not in t))

SEEN = []

def observes(handover, ledger):
    SEEN.append((handover["status"], len(ledger)))

def edits(handover, ledger):
    handover["status"] = "stopped by a hook"
"""


HUNG = threading.Event()
"""What the hanging hook waits on: set when a test ends (its thread cannot be stopped otherwise)."""


@pytest.fixture(autouse=True)
def release_hung_hooks() -> Iterator[None]:
    HUNG.clear()
    yield
    HUNG.set()


def scenario(root: Path, hooks: str, log: str | None = None) -> Path:
    (root / "myhooks.py").write_text(HOOKS)
    if log is not None:
        (root / "logs" / "t.log").write_text(log)
    return write_manifest(root, textwrap.dedent(hooks))


def run_script(manifest: Path, script: list[dict]) -> dict:
    context = WarrantContext(choosers={"s": ScriptedChooser(script)})
    return run_embedded(str(manifest), "s", context=context)


SEARCH_FIFO = call("c1", "searchlogs", path="cc/t.log", query="FIFO")
READ_SPEC = call("c2", "readspec", path="cc/spec.md", section="fifo_depth")


def test_a_pre_call_hook_blocks_one_call_and_owns_the_refusal(scenario_dir):
    manifest = scenario(scenario_dir, '[[hook]]\nwhen = "pre_call"\nentry = "myhooks:no_fifo"\n')
    state = run_script(manifest, [SEARCH_FIFO, READ_SPEC, stop()])
    [refusal] = state["refusals"]
    assert (refusal["code"], refusal["owner"]) == ("hook_blocked", "hook:no_fifo")
    assert refusal["detail"] == "turn 1: FIFO searches are not allowed here"
    assert [item["tool"] for item in state["evidence"]] == ["readspec"]
    assert state["status"] == "stopped"


@pytest.mark.parametrize(
    ("entry", "detail"),
    [
        ("raises", "the hook raised RuntimeError"),
        ("hangs", "the hook did not answer within 0.2s"),
        ("answers_junk", "the hook answered neither ALLOW nor Block"),
        ("writes_args", "the hook raised TypeError"),
    ],
)
def test_a_hook_that_fails_hangs_or_writes_denies(scenario_dir, entry, detail):
    hooks = f'[[hook]]\nwhen = "pre_call"\nentry = "myhooks:{entry}"\ntimeout_s = 0.2\n'
    state = run_script(scenario(scenario_dir, hooks), [READ_SPEC, stop()])
    [refusal] = state["refusals"]
    assert refusal["code"] == "hook_blocked" and refusal["detail"].startswith(detail)
    assert state["evidence"] == []


def test_a_hook_that_blocks_everything_leaves_every_refusal_and_what_was_not_read(scenario_dir):
    manifest = scenario(scenario_dir, '[[hook]]\nwhen = "pre_call"\nentry = "myhooks:blocks_all"\n')
    script = [call(f"c{n}", "readspec", path="cc/spec.md", section=f"s{n}") for n in range(1, 9)]
    state = run_script(manifest, script)
    codes = [refusal["code"] for refusal in state["refusals"]]
    assert codes[:8] == ["hook_blocked"] * 8 and set(codes[8:]) <= {"step_budget_exhausted"}
    assert state["status"] in {"refusal_limit", "step_budget_exhausted"}
    unknowns = state["handover"]["unknowns"]
    assert all(
        f"record cc/{name} was not examined." in " ".join(unknowns)
        for name in ("t.log", "spec.md", "hist.csv")
    )


LOG = (
    "UVM_INFO a.sv(1) @ 10: env [X] start, owner ann@corp.example\n"
    "UVM_ERROR b.sv(2) @ 20: env.chk [FIFO] overflow for cust_4711 from 10.1.2.3\n"
)
REDACT = """\
[[hook]]
when = "post_call"
builtin = "emails"
[[hook]]
when = "post_call"
builtin = "ips"
[[hook]]
when = "post_call"
builtin = "patterns"
[[redact]]
pattern = 'cust_\\w+'
label = "customer"
"""


def test_builtin_redaction_narrows_what_the_model_sees_not_the_receipt(route_env, scenario_dir):  # noqa: F811
    manifest = scenario(scenario_dir, REDACT, LOG)
    server = FakeOpenAI(
        [json.dumps(call("c1", "searchlogs", path="cc/t.log", query="UVM")), json.dumps(stop())]
    )
    route_env(server)
    with server.running():
        state = run_embedded(str(manifest), "model")
    sent = server.prompts[1]
    assert "ann@corp.example" not in sent and "cust_4711" not in sent and "10.1.2.3" not in sent
    assert "owner [redacted:email]" in sent and "for [redacted:customer] from [redacted:ip]" in sent
    [item] = state["evidence"]
    assert [line["text"] for line in item["excerpt"]] == LOG.splitlines()  # the receipt is intact
    assert item["sha256"] == state["grant"]["records"]["cc/t.log"]["sha256"]
    assert item["shown"]["by"] == ["emails", "ips", "patterns"]
    markdown = handover_markdown(state["handover"])
    assert "*What the model was shown (narrowed by emails, ips, patterns):*" in markdown
    assert "ann@corp.example" in markdown  # what the record says, for the person


def test_a_hook_that_drops_lines_is_accepted(scenario_dir):
    hooks = '[[hook]]\nwhen = "post_call"\nentry = "myhooks:drops_info"\n'
    state = run_script(
        scenario(scenario_dir, hooks, LOG),
        [call("c1", "searchlogs", path="cc/t.log", query="UVM"), stop()],
    )
    [item] = state["evidence"]
    assert [line["line"] for line in item["shown"]["excerpt"]] == [2] and state["refusals"] == []


def test_a_hook_that_rewrites_a_fact_is_refused_and_the_model_sees_no_body(route_env, scenario_dir):  # noqa: F811
    manifest = scenario(
        scenario_dir, '[[hook]]\nwhen = "post_call"\nentry = "myhooks:rewrites"\n', LOG
    )
    server = FakeOpenAI(
        [json.dumps(call("c1", "searchlogs", path="cc/t.log", query="UVM")), json.dumps(stop())]
    )
    route_env(server)
    with server.running():
        state = run_embedded(str(manifest), "model")
    [refusal] = state["refusals"]
    assert (refusal["code"], refusal["owner"]) == ("hook_rewrote_fact", "hook:rewrites")
    assert "differs from the receipt" in refusal["detail"]
    assert "overflow" not in server.prompts[1] and "@ 21" not in server.prompts[1]
    assert "E1" in server.prompts[1]  # still citable
    assert [line["text"] for line in state["evidence"][0]["excerpt"]] == LOG.splitlines()


def test_end_hooks_observe_and_cannot_change_the_handover(scenario_dir):
    hooks = '[[hook]]\nwhen = "end"\nentry = "myhooks:observes"\n[[hook]]\nwhen = "end"\nentry = "myhooks:edits"\n'
    state = run_script(scenario(scenario_dir, hooks), [READ_SPEC, stop()])
    [handover] = [event for event in state["events"] if event["type"] == "handover"]
    outcomes = handover["payload"]["end_hooks"]
    assert [(o["hook"], o["outcome"]) for o in outcomes] == [
        ("observes", "returned"),
        ("edits", "raised"),
    ]
    assert "TypeError" in outcomes[1]["error"]
    assert state["handover"]["status"] == "stopped"


def test_a_hook_that_cannot_be_loaded_is_a_one_line_error(scenario_dir):
    manifest = scenario(scenario_dir, '[[hook]]\nwhen = "pre_call"\nentry = "myhooks:absent"\n')
    result = warrant("run", str(manifest), "--db", "memory", cwd=scenario_dir)
    assert result.returncode == 2, result.stderr
    assert "myhooks has no function 'absent'" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr
