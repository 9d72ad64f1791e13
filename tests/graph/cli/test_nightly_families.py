"""The triage baseline over a nightly split in several families (issue 53, item 8): it reads the
largest buckets of the whole nightly, whichever family holds them, and says which of them a
budget left unread. Ground truth is the independent reference over the raw files."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.cli_process import warrant
from tests.tools.logs import triage_reference as reference
from tools.logs import familypool


@pytest.fixture(autouse=True)
def _pools():
    yield
    familypool.shutdown_pools()


def uvm_log(test: str, failure: str | None) -> str:
    """A UVM run of `test`, failing with `failure` (`ID: message`) or passing."""
    lines = [
        f"UVM_INFO @ 0: reporter [RNTST] Running test {test}...",
        *(
            f"UVM_INFO tb/env.sv(40) @ {step}00: uvm_test_top.env [ENV] step {step}"
            for step in range(8)
        ),
    ]
    if failure:
        ident, message = failure.split(": ", 1)
        lines.append(f"UVM_ERROR tb/sb.sv(91) @ 1200: uvm_test_top.env.sb [{ident}] {message}")
    errors = 1 if failure else 0
    lines += [
        "--- UVM Report Summary ---",
        "** Report counts by severity",
        f"UVM_ERROR :    {errors}",
        "UVM_FATAL :    0",
        f"TEST {'FAILED' if failure else 'PASSED'}: {test}",
    ]
    return "\n".join(lines) + "\n"


LAYOUT = {
    # Per family, the largest buckets are these 1-test ones: reading three per family would read
    # nothing else.
    "runs/a": [
        ("a_one", "CFG_A: register map mismatch"),
        ("a_two", "CFG_B: reset value mismatch"),
        ("a_three", "CFG_C: write ignored"),
        ("a_pass", None),
    ],
    "runs/b": [
        *((f"b_big_{index}", "DMA_DROP: burst dropped at the boundary") for index in range(4)),
        *((f"b_mid_{index}", "DMA_ORDER: completions out of order") for index in range(3)),
        ("b_pass", None),
    ],
    "runs/c": [
        *((f"c_big_{index}", "IRQ_LOST: interrupt never raised") for index in range(4)),
        ("c_pass", None),
    ],
}


def split_nightly(folder: Path) -> dict[str, Path]:
    paths = {}
    for family, tests in LAYOUT.items():
        (folder / family).mkdir(parents=True)
        for test, failure in tests:
            path = folder / family / f"{test}.log"
            path.write_text(uvm_log(test, failure))
            paths[f"{family}/{test}.log"] = path
    return paths


def largest(paths: dict[str, Path]) -> list[tuple[str, list[str]]]:
    """The reference's buckets of the whole nightly, largest first (the family does not rank)."""
    want = reference.expected(paths)
    return sorted(want.buckets.items(), key=lambda pair: (-len(pair[1]), pair[1][0]))


def run(folder: Path, tmp_path: Path, evidence: int = 6) -> dict:
    assert warrant("scenario", "new", str(folder), cwd=tmp_path).returncode == 0
    manifest = folder / "scenario.toml"
    drafted = manifest.read_text()
    assert "evidence = 6" in drafted
    manifest.write_text(drafted.replace("evidence = 6", f"evidence = {evidence}"))
    ran = warrant("run", str(manifest), "--db", "memory", "--json", "-q", cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    return json.loads(ran.stdout)


def example(paths: dict[str, Path], member: str) -> tuple[str, int]:
    return member, max(
        1, reference.expected({member: paths[member]}).members[member].error_line - 5
    )


def test_the_baseline_reads_the_largest_buckets_across_the_nightly(tmp_path):
    folder = tmp_path / "nightly"
    paths = split_nightly(folder)
    ranked = largest(paths)
    assert [len(members) for _, members in ranked] == [4, 4, 3, 1, 1, 1]
    handover = run(folder, tmp_path)
    evidence = handover["evidence"]
    assert [item["record"] for item in evidence[:3]] == [
        "runs/a/*.log",
        "runs/b/*.log",
        "runs/c/*.log",
    ]
    read = {
        (item["args"]["path"], item["args"]["start"])
        for item in evidence
        if item["tool"] == "readlines"
    }
    assert read == {example(paths, members[0]) for _, members in ranked[:3]}
    # The statements, too, rank the buckets over the nightly.
    said = [int(re.search(r": (\d+) failure", h["statement"])[1]) for h in handover["hypotheses"]]
    assert said == [len(members) for _, members in ranked]
    assert not [unknown for unknown in handover["unknowns"] if "was not read further" in unknown]


def test_a_largest_bucket_the_budget_left_unread_is_an_unknown_naming_it(tmp_path):
    folder = tmp_path / "nightly"
    paths = split_nightly(folder)
    ranked = largest(paths)
    handover = run(folder, tmp_path, evidence=5)  # three triage calls and two reads
    read = {item["args"]["path"] for item in handover["evidence"] if item["tool"] == "readlines"}
    assert read == {members[0] for _, members in ranked[:2]}
    signature, members = ranked[2]
    family = members[0].rsplit("/", 1)[0] + "/*.log"
    skipped = [unknown for unknown in handover["unknowns"] if "was not read further" in unknown]
    assert len(skipped) == 1
    assert f"of {family} ({len(members)} failure(s), first error {signature!r})" in skipped[0]
    assert skipped[0].endswith("the evidence budget (5 items) was spent first.")
