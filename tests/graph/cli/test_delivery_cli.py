"""`warrant artifacts`, `export` and `share` as a user meets them: the files, and a one-line error
naming what was wrong for every mistake, with nothing recorded lost."""

import hashlib
import json
from pathlib import Path

from tests.cli_process import warrant

ROOT = Path(__file__).resolve().parents[3]


def test_export_writes_each_artifact_as_listed(tmp_path):
    db = str(tmp_path / "w.sqlite")
    ran = warrant("run", "R42", "--thread", "A", "--db", db, "-q", cwd=ROOT)
    assert ran.returncode == 0, ran.stderr
    listed = json.loads(warrant("artifacts", "A", "--db", db, "--json", cwd=ROOT).stdout)
    assert [item["name"] for item in listed["artifacts"]] == [
        "handover.md",
        "handover.html",
        "handover.json",
    ]
    exported = warrant("export", "A", str(tmp_path / "out"), "--db", db, cwd=ROOT)
    assert exported.returncode == 0, exported.stderr
    for item in listed["artifacts"]:
        data = (tmp_path / "out" / item["name"]).read_bytes()
        assert hashlib.sha256(data).hexdigest() == item["sha256"]
    shown = json.loads(warrant("show", "A", "--db", db, "--json", cwd=ROOT).stdout)
    published = json.loads((tmp_path / "out" / "handover.json").read_text())
    assert published == {key: value for key, value in shown.items() if key != "pending"}


def test_mistakes_are_one_line_each(tmp_path):
    db = str(tmp_path / "w.sqlite")
    parked = warrant("run", "R42-gated", "--thread", "G", "--db", db, "-q", cwd=ROOT)
    done = warrant("run", "R42", "--thread", "D", "--db", db, "-q", "--json", cwd=ROOT)
    assert (parked.returncode, done.returncode) == (3, 0)
    (tmp_path / "afile").write_text("x")
    cases = [
        (("artifacts", "nosuch"), 2, "no run with thread id 'nosuch'"),
        (
            ("artifacts", "G"),
            2,
            "run 'G' has not ended: its artifacts are published with its handover",
        ),
        (("artifacts", "D", "--rev", "2"), 2, "report 'D' has no revision 2"),
        (("export", "D", str(tmp_path / "afile")), 2, "is not a folder"),
        (("share", "D", "--to", "bob", "--as", "mallory"), 2, "only the run's owner"),
        (("share", "D", "--to", "bob b"), 2, "--to 'bob b' is not a user name"),
    ]
    for words, code, says in cases:
        failed = warrant(*words, "--db", db, cwd=ROOT)
        assert failed.returncode == code, (words, failed.stderr)
        assert failed.stderr.count("\n") == 1 and says in failed.stderr, (words, failed.stderr)
        assert "Traceback" not in failed.stderr
    events = json.loads(warrant("events", "G", "--db", db, "--json", cwd=ROOT).stdout)
    assert events[-1]["type"] == "interrupted"  # nothing of the waiting run was touched


def test_a_revision_that_read_local_records_is_shared_only_with_a_local_reader(scenario_dir):
    manifest = scenario_dir / "local.toml"
    manifest.write_text(
        'id = "L1"\nprofile = "triage"\ngoal = "Why did fifo_smoke fail?"\n'
        "budget = { steps = 4, evidence = 4 }\n"
        '[[record]]\nid = "log"\nkind = "log"\npath = "logs/t.log"\nshare = "local"\n'
    )
    actions = scenario_dir / "a.jsonl"
    call = {"id": "c1", "name": "searchlogs", "args": {"path": "log", "query": "UVM_ERROR"}}
    stop = {"summary": "s", "message": {"kind": "stop", "text": "done"}}
    actions.write_text(
        json.dumps({"summary": "s", "tool_calls": [call]}) + "\n" + json.dumps(stop) + "\n"
    )
    db = str(scenario_dir / "w.sqlite")
    here = {"cwd": scenario_dir}
    ran = warrant(
        "run", str(manifest), "--chooser", f"file:{actions}", "--thread", "L", "--db", db, **here
    )
    assert ran.returncode == 0, ran.stderr
    refused = warrant("share", "L", "--to", "bob", "--db", db, **here)
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1
    assert "log, share = local" in refused.stderr and "Traceback" not in refused.stderr
    granted = warrant("share", "L", "--to", "bob", "--reader-locality", "local", "--db", db, **here)
    assert granted.returncode == 0 and "shared revision 1" in granted.stdout
