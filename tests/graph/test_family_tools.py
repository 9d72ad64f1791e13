"""The family tools through the governed loop: a family named by the manifest's glob (or a list of
ids) is resolved by the guard, read by the executor from the admitted manifest, and receipted as
one piece of evidence; refusals are the guard's, per call. Ground truth is the independent
reference over the raw files (`tests/tools/logs/triage_reference.py`)."""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path

import pytest

from guards.egress import local_sources
from lab.nightly import write_family
from tests.helpers import call, run_embedded, scenario_head, stop
from tests.tools.logs import triage_reference as reference
from tools.logs import familypool, triage

GLOB = "runs/*.log"


@pytest.fixture(autouse=True)
def _pools():
    yield
    familypool.shutdown_pools()


def logs(root: Path, count: int = 30) -> list[str]:
    """`count` generated logs under `runs/`: their record ids."""
    return [f"runs/{path.name}" for path in write_family(root / "runs", count, 2000, seed=3)]


def nightly(root: Path, script: list[dict], *, count: int = 30, share: str = "any") -> Path:
    """A scenario folder: `count` generated logs under `runs/` (unless there already), approved
    by one glob, a history record, and `script` as its scripted baseline."""
    if not (root / "runs").exists():
        logs(root, count)
    (root / "hist.csv").write_text("run,date,test,status,signature\nN1,2026-11-01,x,PASS,\n")
    steps = "\n".join(f"[[script]]\n{_toml_table(step)}" for step in script)
    manifest = root / "scenario.toml"
    manifest.write_text(
        scenario_head("NIGHTLY", "Which tests failed?", steps=6, evidence=4, deadline_s=120)
        + textwrap.dedent(f"""\
        [[record]]
        glob = "{GLOB}"
        kind = "log"
        share = "{share}"
        [[record]]
        id = "hist.csv"
        kind = "history"
        path = "hist.csv"
        """)
        + steps
    )
    return manifest


def _toml_table(step: dict) -> str:
    """One `[[script]]` table's body: JSON values are TOML inline values here (strings, arrays,
    numbers, booleans), and inline tables are written with TOML's `=`."""
    lines = []
    for key, value in step.items():
        text = json.dumps(value)
        text = re.sub(r'"(\w+)": ', r"\1 = ", text)
        lines.append(f"{key} = {text}")
    return "\n".join(lines) + "\n"


def test_triage_of_a_glob_family_is_one_receipt_whose_buckets_match_the_reference(tmp_path):
    manifest = nightly(tmp_path, [call("c1", "triage", family=GLOB, history="hist.csv"), stop()])
    state = run_embedded(str(manifest))
    [item] = state["evidence"]
    assert item["tool"] == "triage" and item["error"] is None
    assert item["record"] == GLOB and item["family"]["members"] == 30
    assert item["family"]["glob"] == GLOB and "ids" not in item["family"]
    assert [source["record"] for source in item["sources"]] == ["hist.csv"]
    paths = {f"runs/{path.name}": path for path in sorted((tmp_path / "runs").glob("*.log"))}
    want = reference.expected(paths)
    failing = sum(1 for member in want.members.values() if member.verdict == "fail")
    assert f"{failing} fail" in item["summary"]
    for signature, names in want.buckets.items():  # each bucket cited at its first example
        first = want.members[names[0]]
        cited = f"{first.name}:{first.error_line}:"
        assert any(cited in line["text"] for line in item["excerpt"]), (signature, cited)
    # Every member was read by that one call: none is an unread record in the handover.
    assert not [u for u in state["handover"]["unknowns"] if "was not examined" in u]
    # The decision names the family, not its members.
    approved = [e for e in state["events"] if e["type"] == "approved"]
    assert approved[0]["payload"]["call"]["records"] == {"family": GLOB, "history": "hist.csv"}


def test_a_family_may_be_a_list_of_ids_and_searchfamily_counts_in_each(tmp_path):
    root = tmp_path
    ids = logs(root, 5)[1:3]
    manifest = nightly(root, [call("c1", "searchfamily", family=ids, query="UVM_"), stop()])
    state = run_embedded(str(manifest))
    [item] = state["evidence"]
    assert item["error"] is None and item["family"]["ids"] == ids
    assert item["record"] == "2 listed record(s)"
    want = sum(
        sum(1 for line in (root / i).read_bytes().splitlines() if b"UVM_" in line) for i in ids
    )
    assert item["summary"].startswith(f"{want} line(s) in 2 of 2 member(s)")


@pytest.mark.parametrize(
    ("family", "code"),
    [
        ("runs/*.txt", "unapproved_record"),  # not a glob the manifest approves
        ("runs/../*.log", "unapproved_record"),
        (True, "invalid_argument"),  # strict: not a string, not a list
        (["hist.csv"], "invalid_argument"),  # a history record is not a log
        (["runs/none.log"], "unapproved_record"),
    ],
)
def test_a_family_the_manifest_does_not_approve_is_refused_by_the_guard(tmp_path, family, code):
    manifest = nightly(tmp_path, [call("c1", "triage", family=family), stop()], count=3)
    state = run_embedded(str(manifest))
    assert state["evidence"] == []
    assert [refusal["code"] for refusal in state["refusals"]] == [code]


def test_a_local_familys_receipt_is_local_for_a_remote_route(tmp_path):
    manifest = nightly(
        tmp_path, [call("c1", "triage", family=GLOB), stop()], count=3, share="local"
    )
    state = run_embedded(str(manifest))
    [item] = state["evidence"]
    assert item["family"]["share"] == "local"
    records = state["grant"]["records"]
    assert local_sources(item, records) == [GLOB]
    assert item["provenance"]["local"] == [GLOB]  # carried from the receipt on
    unmarked = {key: value for key, value in item.items() if key != "provenance"}
    assert local_sources(unmarked, records) == [GLOB]  # an older receipt: from its family
    shared = {**unmarked, "family": {**item["family"], "share": "any"}}
    assert local_sources(shared, records) == []


def test_a_chooser_is_shown_a_large_family_as_one_entry_and_the_family_tools_only_with_one(
    tmp_path,
):
    from nodes.choose import LISTED_FAMILY, _catalog, _families
    from scenario.registry import load_scenario

    ids = logs(tmp_path, LISTED_FAMILY + 1)
    grant = load_scenario(nightly(tmp_path, [stop()])).model_dump()
    shown, apart = _families(grant)
    assert shown == [
        {"glob": GLOB, "kind": "log", "members": len(ids), "first": ids[0], "last": ids[-1]}
    ]
    assert apart == set(ids)
    assert {"triage", "searchfamily"} <= {entry["name"] for entry in _catalog(grant)}
    r42 = load_scenario(Path(__file__).resolve().parents[2] / "lab" / "R42.toml").model_dump()
    assert _families(r42) == ([], set())
    assert not {"triage", "searchfamily"} & {entry["name"] for entry in _catalog(r42)}


def test_a_member_that_cannot_be_read_is_an_unknown_of_the_receipt_and_the_rest_is_read(tmp_path):
    ids = logs(tmp_path, 4)
    (tmp_path / "runs" / "blob.log").write_bytes(b"\x7fELF\x00\x01" + bytes(range(256)))
    manifest = nightly(tmp_path, [call("c1", "searchfamily", family=GLOB, query="UVM_"), stop()])
    state = run_embedded(str(manifest))
    [item] = state["evidence"]
    assert item["error"] is None and item["family"]["members"] == len(ids) + 1
    assert any(
        unknown.startswith("E1: what runs/blob.log holds: it is binary")
        for unknown in state["handover"]["unknowns"]
    )
    want = sum(
        sum(b"UVM_" in line for line in (tmp_path / member).read_bytes().splitlines())
        for member in ids
    )
    assert item["summary"].startswith(f"{want} line(s) in ")


def test_a_member_swapped_for_a_symlink_after_admission_is_not_followed(tmp_path):
    from scenario.registry import load_scenario, pinned_members

    ids = logs(tmp_path, 3)
    scenario = load_scenario(nightly(tmp_path, [stop()]))
    swapped = tmp_path / ids[1]
    swapped.unlink()
    swapped.symlink_to(tmp_path / ids[0])  # the same bytes as another approved member
    admitted = [scenario.records[record_id] for record_id in ids]
    members = pinned_members(scenario.manifest, scenario.manifest_sha256, admitted)
    assert [member.path for member in members] == [str(tmp_path / i) for i in ids]
    read = triage.run_family(members, workers=1)
    assert f"not read: {ids[1]} " in read.summary and "1 not read" in read.summary


def test_analyze_reads_a_family_as_verdicts_matching_the_reference(tmp_path):
    """A nightly in SQL: the family read as triage reads it, one row per member; failures per
    signature computed, and each count the reference's."""
    query = (
        "select signature, count(*) as failures from verdicts where status = 'fail'"
        " group by signature order by failures desc, signature"
    )
    script = [call("a1", "analyze", query=query, family=GLOB), stop()]
    state = run_embedded(str(nightly(tmp_path, script)))
    [item] = state["evidence"]
    assert item["error"] is None and item["family"]["members"] == 30
    paths = {f"runs/{path.name}": path for path in sorted((tmp_path / "runs").glob("*.log"))}
    want = reference.expected(paths)
    counted = sorted(
        ((sig, len(names)) for sig, names in want.buckets.items()), key=lambda b: (-b[1], b[0])
    )
    assert [tuple(row) for row in item["computed"]["rows"]] == counted
    assert "verdicts = family runs/*.log (30 logs)" in item["summary"]
