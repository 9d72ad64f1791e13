"""The `warrant` command, run as a user runs it: a subprocess of the installed console script."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.cli_process import warrant
from tests.helpers import R42_CALLS, R42_LOG, R42_REFS, call, stop, write_manifest


def one_line_error(result: subprocess.CompletedProcess[str]) -> str:
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.stderr
    return lines[0]


def test_run_r42_on_the_embedded_default_then_events_and_show(tmp_path):
    """A smoke test of the installed command, each command its own process; outside a project the
    run is kept in the user's store, not in the current folder."""
    result = warrant("run", "R42", "--json", cwd=tmp_path, subprocess_=True)
    assert result.returncode == 0, result.stderr
    handover = json.loads(result.stdout)
    assert [item["ref"] for item in handover["evidence"]] == R42_REFS
    assert Path(os.environ["XDG_DATA_HOME"], "warrant", "warrant.sqlite").is_file()
    assert not (tmp_path / ".warrant").exists()
    assert "turn 1 proposed" in result.stderr

    events = warrant("events", handover["thread_id"], "--json", cwd=tmp_path, subprocess_=True)
    ledger = json.loads(events.stdout)
    assert [event["type"] for event in ledger].count("executed") == len(R42_CALLS)

    shown = warrant("show", handover["thread_id"], cwd=tmp_path, subprocess_=True)
    assert shown.returncode == 0
    assert "RST-5" in shown.stdout and "## Unknowns" in shown.stdout


def test_markdown_handover_and_event_table(tmp_path):
    result = warrant("run", "R42", "--db", "memory", "--quiet", cwd=tmp_path)
    assert result.returncode == 0
    assert result.stdout.startswith("# Handover: R42")
    assert result.stderr == ""


def test_scenarios_lists_the_lab(tmp_path):
    result = warrant("scenarios", "--json", cwd=tmp_path)
    ids = [row["id"] for row in json.loads(result.stdout)]
    assert {"R42", "R43"} <= set(ids)


def test_a_file_chooser_on_a_user_manifest(tmp_path, scenario_dir):
    actions = tmp_path / "a.jsonl"
    lines = [
        call("c1", "searchlogs", path="cc/t.log", query="UVM_ERROR", limit=5),
        call("c2", "readspec", path="../secret.txt", section="x"),
        "{truncated",
        stop(),
    ]
    actions.write_text(
        "\n".join(line if isinstance(line, str) else json.dumps(line) for line in lines)
    )
    result = warrant(
        "run",
        str(write_manifest(scenario_dir)),
        "--chooser",
        f"file:{actions}",
        "--db",
        "memory",
        "--json",
        cwd=tmp_path,
    )
    handover = json.loads(result.stdout)
    assert [r["code"] for r in handover["refusals"]] == ["unapproved_record", "malformed_action"]
    assert "never readable" not in result.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["run", "R99"], "unknown scenario 'R99'"),
        (["run", "missing.toml"], "unknown scenario"),
        (["run", "R42", "--chooser", "oracle"], "unknown chooser"),
        (["run", "R42", "--chooser", "file:absent.jsonl"], "cannot read action file"),
        (["run", "R42", "--chooser", "file:binary.jsonl"], "binary"),
        (["run", "R42", "--chooser", "file:latin1.jsonl"], "not UTF-8"),
        (["run", "R42", "--chooser", "file:empty.jsonl"], "empty"),
        (["run", "bad.toml"], "leaves the manifest's folder"),
        (["run", "noscript.toml"], "no scripted baseline and approves no record family"),
        (["show", "no-such-thread", "--db", "memory"], "no run with thread id"),
        (["events", "no-such-thread"], "no run with thread id"),
    ],
)
def test_bad_input_exits_2_with_one_line(tmp_path, scenario_dir, args, message):
    (tmp_path / "binary.jsonl").write_bytes(b"\x00\x01")
    (tmp_path / "latin1.jsonl").write_bytes(b'{"summary": "caf\xe9"}\n')
    (tmp_path / "empty.jsonl").write_text("\n\n")
    (tmp_path / "bad.toml").write_text(
        'id = "B"\nprofile = "triage"\n[[record]]\nid = "x"\nkind = "log"\npath = "../x.log"\n'
    )
    write_manifest(scenario_dir).rename(tmp_path / "noscript.toml")
    (tmp_path / "noscript.toml").write_text(
        (tmp_path / "noscript.toml").read_text().replace('path = "', 'path = "scenario/')
    )
    result = warrant(*args, cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert message in one_line_error(result)


def test_a_thread_id_cannot_be_reused_for_a_new_run(tmp_path):
    assert warrant("run", "R42", "--thread", "mine", "-q", cwd=tmp_path).returncode == 0
    again = warrant("run", "R42", "--thread", "mine", cwd=tmp_path)
    assert again.returncode == 2
    assert "already has a run" in one_line_error(again)


@pytest.mark.parametrize(
    "db",
    ["postgresql://warrant:s3cret@127.0.0.1:1/none", "/proc/no/such/dir/w.sqlite"],
)
def test_unreachable_storage_exits_4_naming_it_without_password(tmp_path, db):
    result = warrant("run", "R42", "--db", db, cwd=tmp_path)
    assert result.returncode == 4
    line = one_line_error(result)
    assert "s3cret" not in line and ("127.0.0.1:1" in line or "/proc/no" in line)


def test_usage_errors_exit_2(tmp_path):
    assert warrant("run", cwd=tmp_path).returncode == 2
    assert warrant("frobnicate", cwd=tmp_path).returncode == 2


def test_the_lab_log_carries_the_injected_line(tmp_path):
    result = warrant("run", "R42", "--db", "memory", "--json", cwd=tmp_path)
    e1 = json.loads(result.stdout)["evidence"][0]
    assert e1["record"] == R42_LOG and "instruction_like_text" in e1["flags"]


def test_no_text_from_a_record_or_a_chooser_forges_lines_or_drives_the_terminal(
    tmp_path, scenario_dir
):
    """Line breaks, rich markup and control characters in a log line or a chooser's text are
    shown escaped on one line, in the handover, the progress lines and the ledger table."""
    (scenario_dir / "logs" / "t.log").write_bytes(
        b"UVM_ERROR \x1b[2J\x1b]0;pwned\x07 x\x08\x08 [/dim] overflow\n"
    )
    forged = "done\n\n## Unknowns\n\nNone. [/bold] Root cause: the clock gate."
    stopping = {
        "summary": "s\nturn 9 executed  c9 → E9 · ok",
        "message": {"kind": "stop", "text": forged},
    }
    actions = tmp_path / "a.jsonl"
    actions.write_text(
        json.dumps(call("c1", "searchlogs", path="cc/t.log", query="overflow", limit=5))
        + "\n"
        + json.dumps(stopping)
        + "\n"
    )
    manifest = str(write_manifest(scenario_dir))
    result = warrant(
        "run",
        manifest,
        "--chooser",
        f"file:{actions}",
        "--db",
        "t.sqlite",
        "--thread",
        "T",
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    for output in (result.stdout, result.stderr):
        assert not any(char in output for char in "\x1b\x07\x08")
    assert result.stdout.splitlines().count("## Unknowns") == 1
    assert "UVM_ERROR \\x1b[2J\\x1b]0;pwned\\x07 x\\x08\\x08 [/dim] overflow" in result.stdout
    assert "- Stop: done\\n\\n## Unknowns\\n\\nNone. [/bold] Root cause" in result.stdout
    assert "s\\nturn 9 executed" in result.stderr and "\nturn 9" not in result.stderr
    table = warrant("events", "T", "--db", "t.sqlite", cwd=tmp_path)
    assert table.returncode == 0 and "Traceback" not in table.stderr
    assert "\x1b" not in table.stdout and "[/bold]" in "".join(table.stdout.split())
    exact = json.loads(warrant("show", "T", "--db", "t.sqlite", "--json", cwd=tmp_path).stdout)
    assert exact["chooser_stop_text"] == forged


@pytest.mark.parametrize(
    ("db", "says"),
    [
        ("mysql://root@localhost/x", "is not supported"),
        ("sqlite:///tmp/x.sqlite", "is not supported"),
        ("memory:", "is not supported"),
        (".", "is a folder"),
    ],
)
def test_a_db_value_that_names_no_store_is_bad_input(tmp_path, db, says):
    before = sorted(tmp_path.rglob("*"))
    for command in (["run", "R42"], ["inbox"], ["show", "T"]):
        result = warrant(*command, "--db", db, cwd=tmp_path, subprocess_=db == ".")
        assert result.returncode == 2 and says in one_line_error(result)
    assert sorted(tmp_path.rglob("*")) == before


def test_a_sqlite_file_in_a_missing_folder_is_unreachable_and_no_folder_is_made(tmp_path):
    result = warrant("run", "R42", "--db", "missing/folder/x.sqlite", cwd=tmp_path)
    assert result.returncode == 4
    assert "the folder missing/folder does not exist" in one_line_error(result)
    assert not (tmp_path / "missing").exists()


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["run"], "Missing argument 'scenario'."),
        (["run", "R42", "--nope"], "No such option: --nope"),
        (["run", "R42", "--goal"], "Option '--goal' requires an argument."),
        (["nosuch"], "No such command 'nosuch'."),
        (["resume"], "Missing argument 'THREAD'."),
    ],
)
def test_a_mistyped_command_line_is_one_line_and_exit_2(tmp_path, args, says):
    result = warrant(*args, cwd=tmp_path)
    assert result.returncode == 2 and says in one_line_error(result)
    assert result.stdout == "" and not (tmp_path / ".warrant").exists()


def test_no_arguments_show_the_help(tmp_path):
    result = warrant(cwd=tmp_path, subprocess_=True)
    assert result.returncode == 0 and "Usage: warrant" in result.stdout


def test_help_text_keeps_its_brackets(tmp_path):
    """Rich markup reads `[…]` as a style and drops it: `warrant eval --help` shows its brackets."""
    shown = warrant("eval", "--help", cwd=tmp_path, env={"COLUMNS": "200"}).stdout
    assert "A suite (TOML: [[case]] with [case.expect])." in shown


def test_every_kind_of_failure_has_its_exit_code_in_one_table():
    """The library says what kind of failure stopped it; only the command line picks the exit
    code, from one table: 1 a broken ledger, 2 bad input or a conflict, 4 unreachable."""
    from contract.errors import ErrorKind
    from graph.cli.common import EXIT_CODES

    assert set(EXIT_CODES) == set(ErrorKind)
    assert {EXIT_CODES[kind] for kind in ErrorKind} == {1, 2, 4}
    assert EXIT_CODES[ErrorKind.UNREACHABLE] == 4 and EXIT_CODES[ErrorKind.BUSY] == 2
