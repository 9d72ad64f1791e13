"""`warrant triage FOLDER` (issue 54): every row of the morning report against ground truth from
the independent reference over the raw logs and the history CSV (`triage_reference.py`: plain
`re` and `csv`, nothing from `tools/`); "new" decided per test, not per bucket; the CI exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli_process import warrant
from tests.graph.cli.test_nightly_families import uvm_log
from tests.tools.logs import triage_reference as reference
from tools.logs import familypool

TODAY = {
    # test → failure today (`ID: message`) or None (passes)
    "t_new": "CFG_NEW: register map mismatch at 0x40",
    "t_known": "DMA_DROP: burst dropped at the boundary",
    "t_flaky": "IRQ_LOST: interrupt 3 never raised",
    "t_fresh": "IRQ_LOST: interrupt 7 never raised",
    "t_pass": None,
    "t_flip": None,
}
PAST = {
    # test → statuses N1..N6, and the signature of its failures
    "t_known": ("PFPPPF", "UVM_ERROR DMA_DROP burst dropped at the boundary"),
    "t_flaky": ("FPFPFP", "UVM_ERROR TIMEOUT watchdog expired"),
    "t_pass": ("PPPPPP", ""),
    "t_flip": ("PFPFPF", "UVM_ERROR X y"),
    "t_fresh": ("PPPPPP", ""),
}


@pytest.fixture(autouse=True)
def _pools():
    yield
    familypool.shutdown_pools()


def nightly(folder: Path, today: dict[str, str | None]) -> dict[str, Path]:
    """`runs/N7/<test>.log` for each test, a no-verdict log, and `history.csv` of N1…N6."""
    runs = folder / "runs" / "N7"
    runs.mkdir(parents=True)
    paths = {}
    for test, failure in today.items():
        path = runs / f"{test}.log"
        path.write_text(uvm_log(test, failure))
        paths[f"runs/N7/{test}.log"] = path
    cut = runs / "t_cut.log"
    cut.write_text("UVM_INFO @ 0: reporter [RNTST] Running test t_cut...\n")
    paths["runs/N7/t_cut.log"] = cut
    rows = ["run,date,test,status,signature"]
    for night in range(6):
        for test, (statuses, signature) in PAST.items():
            status = "FAIL" if statuses[night] == "F" else "PASS"
            cell = signature if status == "FAIL" else ""
            rows.append(f"N{night + 1},2024-05-0{night + 1},{test},{status},{cell}")
    (folder / "history.csv").write_text("\n".join(rows) + "\n")
    return paths


def truth(folder: Path, paths: dict[str, Path]) -> dict[str, dict]:
    """Per member, its row as the reference reads it; per bucket signature, its status."""
    found = reference.expected(paths)
    rows = reference.history_rows(folder / "history.csv")
    flaky = reference.flaky(found, rows)
    failed_before = {row["test"] for row in rows if row["status"].upper() == "FAIL"}
    ranked = sorted(found.buckets.items(), key=lambda kv: (-len(kv[1]), kv[0]))
    label = {m: f"B{rank}" for rank, (_, ms) in enumerate(ranked, 1) for m in ms}
    members = {}
    for name, member in found.members.items():
        statuses = "".join(
            "F" if r["status"].upper() == "FAIL" else "P" for r in rows if r["test"] == member.test
        )[-6:]
        today = {"fail": "F", "pass": "P"}.get(member.verdict, "")
        members[name] = {
            "test": member.test,
            "status": {"none": "no_verdict"}.get(member.verdict, member.verdict),
            "bucket": label.get(name),
            "new": (member.test not in failed_before) if member.verdict == "fail" else None,
            "history": statuses + today if today else None,
            "flaky": member.test in flaky,
            "line": member.error_line or None,
        }
    buckets = {
        f"B{rank}": (
            signature,
            len(ms),
            reference.status_of(signature, {found.members[m].test for m in ms}, rows),
        )
        for rank, (signature, ms) in enumerate(ranked, 1)
    }
    return {"members": members, "buckets": buckets}


def test_every_row_of_the_morning_report_is_the_references(tmp_path):
    folder = tmp_path / "nightly"
    paths = nightly(folder, TODAY)
    ran = warrant(
        "triage",
        str(folder),
        "--history",
        str(folder / "history.csv"),
        "--json",
        "--db",
        "memory",
        cwd=tmp_path,
    )
    assert ran.returncode == 0, ran.stderr
    report = json.loads(ran.stdout)["triage"]
    want = truth(folder, paths)
    rows = {row["member"]: row for row in report["tests"]}
    assert set(rows) == set(want["members"])
    for member, expected in want["members"].items():
        row = rows[member]
        got = {k: row[k] for k in ("test", "status", "bucket", "new", "history", "flaky")}
        got["line"] = row["first_error"]["line"] if row["first_error"] else None
        assert got == expected, member
    buckets = {
        b["id"]: (b["signature"], b["count"], (b["status"], (b["first_seen"] or {}).get("run", "")))
        for b in report["buckets"]
    }
    assert buckets == want["buckets"]
    # "new" per test: the flaky test failed before, so it is no new failure, though its bucket is new.
    flaky_row = rows["runs/N7/t_flaky.log"]
    assert flaky_row["new"] is False and flaky_row["flaky"]
    assert (
        report["buckets"][[b["id"] for b in report["buckets"]].index(flaky_row["bucket"])]["status"]
        == "new"
    )
    new = {m["test"] for m in want["members"].values() if m["new"]}
    assert report["summary"]["new_failures"] == len(new) == 2
    assert report["summary"] == {
        "members": 7,
        "pass": 2,
        "fail": 4,
        "no_verdict": 1,
        "not_read": 0,
        "buckets": len(want["buckets"]),
        "new_failures": 2,
    }
    assert report["no_verdict"] == [
        {
            "member": "runs/N7/t_cut.log",
            "test": "t_cut",
            "why": "its log states no pass or fail verdict",
        }
    ]
    assert report["not_read"] == []


def test_the_exit_codes_a_ci_job_reads(tmp_path):
    folder = tmp_path / "nightly"
    nightly(folder, TODAY)
    history = str(folder / "history.csv")
    args = ("triage", str(folder), "--history", history, "--db", "memory", "--json")
    assert warrant(*args, cwd=tmp_path).returncode == 0
    assert warrant(*args, "--fail-on", "new", cwd=tmp_path).returncode == 1
    assert warrant(*args, "--fail-on", "any", cwd=tmp_path).returncode == 1
    calm = tmp_path / "calm"
    nightly(calm, {"t_known": "DMA_DROP: burst dropped at the boundary", "t_pass": None})
    known = ("triage", str(calm), "--db", "memory", "--json")
    assert warrant(*known, "--fail-on", "new", cwd=tmp_path).returncode == 0, "a known failure"
    assert warrant(*known, "--fail-on", "any", cwd=tmp_path).returncode == 1
    outside = tmp_path / "elsewhere.csv"
    outside.write_text((folder / "history.csv").read_text())
    refused = warrant(
        "triage", str(folder), "--history", str(outside), "--db", "memory", cwd=tmp_path
    )
    assert refused.returncode == 2
    assert refused.stderr.count("\n") == 1 and "outside" in refused.stderr
    assert warrant("triage", str(folder / "nope"), cwd=tmp_path).returncode == 2
    assert warrant("triage", str(folder), "--fail-on", "some", cwd=tmp_path).returncode == 2


def test_warrant_show_prints_the_report_again(tmp_path):
    folder = tmp_path / "nightly"
    nightly(folder, TODAY)
    db = str(tmp_path / "runs.sqlite")
    ran = warrant("triage", str(folder), "--db", db, "--json", cwd=tmp_path)
    handover = json.loads(ran.stdout)
    shown = warrant("show", handover["thread_id"], "--db", db, "--json", cwd=tmp_path)
    items = json.loads(shown.stdout)
    items = items.get("handover", items)["evidence"]
    assert [item["triage"] for item in items if item["tool"] == "triage"] == [handover["triage"]]
