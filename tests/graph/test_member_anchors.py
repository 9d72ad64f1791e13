"""Citations of a family's members (issue 53, item 10): two members' line 846 in one triage receipt
are two anchors, and each citation's link opens its own member's line, in the Markdown handover,
the HTML page (the exported artifact) and the web app's body; a single record's lines keep
`#e1-l22`. The line a link opens is checked against what the receipt quotes, parsed apart."""

from __future__ import annotations

import json
import re

import pytest
from starlette.testclient import TestClient

from graph.delivery.html import handover_body, handover_page
from graph.present.render import handover_markdown
from graph.web.app import web_app
from graph.web.gate import Gate, Person
from guards.action import parse_action
from guards.refusals import Refusal
from tests.cli_process import warrant
from tests.graph.cli.test_nightly_families import split_nightly
from tests.helpers import stop
from tests.tools.logs import triage_reference as reference
from tools.logs import familypool

OPERATOR = Person("alice", "operator")


@pytest.fixture(autouse=True)
def _pools():
    yield
    familypool.shutdown_pools()


def triage_item() -> dict:
    quoted = [
        ("B1", "runs/N7/reset_smoke_00152.log", "UVM_ERROR tb/rst.sv(142) @ 9: rst [RST_CHK] late"),
        (
            "B5",
            "runs/N7/dma_burst_00007.log",
            "UVM_ERROR tb/sb.sv(214) @ 9: sb [SB_MISMATCH] got 0x4",
        ),
    ]
    return {
        "ref": "E1",
        "kind": "observation",
        "tool": "triage",
        "args": {"family": "runs/N7/*.log"},
        "record": "runs/N7/*.log",
        "family": {"name": "runs/N7/*.log", "glob": "runs/N7/*.log"},
        "sha256": "0" * 64,
        "summary": "200 members: 2 failing",
        "excerpt": [
            {"line": 846, "text": f"{label} {member}:846: {text}", "flags": []}
            for label, member, text in quoted
        ],
        "truncated": False,
        "flags": [],
        "error": None,
    }


def handover(refs: list[list[str]]) -> dict:
    single = {
        **{key: value for key, value in triage_item().items() if key != "family"},
        "ref": "E2",
        "tool": "readlines",
        "args": {"path": "runs/N7/dma_burst_00007.log", "start": 846, "count": 1},
        "record": "runs/N7/dma_burst_00007.log",
        "excerpt": [{"line": 846, "text": "UVM_ERROR tb/sb.sv(214) …", "flags": []}],
    }
    return {
        "thread_id": "T",
        "scenario": "nightly",
        "goal": "Which tests failed?",
        "status": "stopped",
        "turns": 3,
        "budget": {"steps": 8, "evidence": 6},
        "statement": "Root cause: not established.",
        "evidence": [triage_item(), single],
        "unknowns": [],
        "refusals": [],
        "hypotheses": [{"statement": f"s{n}", "refs": cited} for n, cited in enumerate(refs)],
        "chooser_stop_text": "",
    }


def quoted_member(text: str) -> str:
    """The member a receipt's line quotes, read apart: `B5 runs/x.log:846: …` → `runs/x.log`."""
    return text.split(" ", 1)[1].split(":", 1)[0] if text.startswith("B") else ""


CITED = [
    ["E1:runs/N7/reset_smoke_00152.log:L846"],
    ["E1:runs/N7/dma_burst_00007.log:L846"],
    ["E2:L846"],
]


def test_a_member_qualified_line_citation_is_an_action_a_line_marker_is_no_member():
    for ref in ("E1:runs/N7/dma_burst_00007.log:L846", "E1:a.log:L2-L5", "H1:L3", "E1:L2"):
        assert not isinstance(
            parse_action(stop(hypotheses=[{"statement": "s", "refs": [ref]}])), Refusal
        )
    for ref in ("E1:L2:L3", "M1:a.log:L2", "E1:a log:L2", "E1:a.log:846", "E1:a.log:"):
        refused = parse_action(stop(hypotheses=[{"statement": "s", "refs": [ref]}]))
        assert isinstance(refused, Refusal) and refused.code == "malformed_action", ref


def test_two_members_line_846_are_two_anchors_and_each_link_opens_its_own_in_markdown():
    markdown = handover_markdown(handover(CITED))
    anchors = re.findall(r'<a id="([^"]+)"></a>', markdown)
    assert len(anchors) == len(set(anchors)) == 5  # two items, three cited lines
    for cited in CITED:
        [target] = re.findall(rf"\[{re.escape(cited[0])}\]\(#([^)]+)\)", markdown)
        after = markdown.split(f'<a id="{target}"></a>', 1)[1].lstrip()
        opened = after.split("\n", 2)[1]  # the line right after the block's fence
        member = cited[0].split(":")[1] if cited[0].count(":") == 2 else ""
        assert opened.startswith("L846 ") and quoted_member(opened.split(None, 1)[1]) == member
    assert "[E2:L846](#e2-l846)" in markdown  # a single record's line keeps its anchor


@pytest.mark.parametrize("render", [handover_page, handover_body])
def test_two_members_line_846_are_two_ids_and_each_link_opens_its_own_in_html(render):
    page = str(render(handover(CITED)))
    ids = re.findall(r'id="([^"]+)"', page)
    assert len(ids) == len(set(ids))
    for cited in CITED:
        [target] = re.findall(rf'href="#([^"]+)">{re.escape(cited[0])}<', page)
        [text] = re.findall(rf'id="{re.escape(target)}"><span class="no">846</span>([^<]*)', page)
        member = cited[0].split(":")[1] if cited[0].count(":") == 2 else ""
        assert quoted_member(text) == member
    assert 'id="e2-l846"' in page


def test_the_baselines_statements_open_their_own_members_lines(tmp_path):
    """Every failure of the split nightly is at line 10 of its log: the receipts quote several
    members' line 10, and each statement's link opens its own bucket's example, in the exported
    Markdown and HTML and on the web app's run page."""
    folder = tmp_path / "nightly"
    paths = split_nightly(folder)
    want = reference.expected(paths)
    db = str(tmp_path / "w.sqlite")
    assert warrant("scenario", "new", str(folder), cwd=tmp_path).returncode == 0
    manifest = str(folder / "scenario.toml")
    ran = warrant("run", manifest, "--db", db, "--thread", "N", "--json", "-q", cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    handed = json.loads(ran.stdout)
    exported = warrant("export", "N", str(tmp_path / "out"), "--db", db, cwd=tmp_path)
    assert exported.returncode == 0, exported.stderr
    markdown = (tmp_path / "out" / "handover.md").read_text()
    gate = Gate(8711, b"test secret", (OPERATOR,))
    client = TestClient(web_app(db, gate), base_url="http://127.0.0.1:8711")
    assert client.get(f"/?key={gate.key_of(OPERATOR)}", follow_redirects=False).status_code == 303
    pages = [(tmp_path / "out" / "handover.html").read_text(), client.get("/runs/N").text]
    for page in pages:
        ids = re.findall(r'id="([^"]+)"', page)
        assert len(ids) == len(set(ids))
    assert len(handed["hypotheses"]) == len(want.buckets)
    for said in handed["hypotheses"]:
        member = re.search(r"first example (\S+):(\d+),", said["statement"])[1]
        line = want.members[member].error_line
        assert said["refs"][0].endswith(f":{member}:L{line}") and "unresolved" not in said
        [target] = re.findall(rf"\[{re.escape(said['refs'][0])}\]\(#([^)]+)\)", markdown)
        opened = markdown.split(f'<a id="{target}"></a>', 1)[1].lstrip().split("\n", 2)[1]
        assert quoted_member(opened.split(None, 1)[1]) == member
        for page in pages:
            assert f'href="#{target}">{said["refs"][0]}<' in page
            [text] = re.findall(
                rf'id="{re.escape(target)}"><span class="no">{line}</span>([^<]*)', page
            )
            assert quoted_member(text) == member
