"""The README stays true: its diagrams are the compiled graph, its console blocks are what the
commands print, its manifest loads, its links resolve, and CI runs its test command."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from graph.diagram import DIAGRAMS, README, diagram_block, readme_block
from lab.nightly import write_nightly
from scenario.manifest import ManifestFile
from scenario.registry import load_scenario
from tests.console_blocks import (
    ELIDED,
    check_block,
    commands_and_output,
    fenced_blocks,
    fresh_environment,
    missing_lines,
    normalized,
    run_in_subprocess,
)
from tests.helpers import R42_REFS

ROOT = Path(__file__).resolve().parents[1]
README_TEXT = README.read_text(encoding="utf-8")
CONSOLE_BLOCKS = fenced_blocks(README_TEXT, "console")


def test_the_readme_shows_console_blocks_to_run():
    assert CONSOLE_BLOCKS, "the README has no ```console block"


@pytest.mark.parametrize(
    "block",
    CONSOLE_BLOCKS,
    ids=[commands_and_output(block)[0][0] for block in CONSOLE_BLOCKS],
)
def test_a_readme_console_block_prints_what_it_shows(block, tmp_path):
    check_block(
        block,
        tmp_path,
        fresh_environment(tmp_path),
        modules=("lab.nightly",),
        run=run_in_subprocess,  # the family tools keep a process pool: a process of its own
        where="the README",
    )


def test_the_normalizer_keeps_what_is_stable_and_drops_what_is_not():
    assert normalized("turn 2 interrupted ix-c8cb45ec977b32b3 · question") == normalized(
        "turn 2 interrupted ix-0123456789abcdef · question"
    )
    assert normalized(" 1    06:48:36.226  0  runtime ") == normalized("1 17:02:11.904 0 runtime")
    assert normalized("ix-1 · thread R42-ask · turn 2 · waiting 2s") == normalized(
        "ix-1 · thread R42-ask · turn 2 · waiting 13s"
    )
    assert normalized("turn 4 handover  3 evidence item(s)") != normalized(
        "turn 4 handover  2 evidence item(s)"
    )
    assert normalized("replica 1  http://127.0.0.1:8720  pid 17171") == normalized(
        "replica 1 http://127.0.0.1:8720 pid 4242"
    )
    assert normalized("sha256 89c96f594b68… · 10 sections · ~2410/14912 tokens") == normalized(
        "sha256 b6eb60a4216d… · 10 sections · ~2411/14912 tokens"
    )
    assert normalized("10 sections") != normalized("9 sections")
    assert missing_lines(["a", ELIDED, "c"], "a\nb\nc\n") == []
    assert missing_lines(["c", "a"], "a\nb\nc\n") == ["a"]


def test_the_readme_manifest_admits_the_nightly_beside_it(tmp_path):
    manifest_text, _ = ("\n".join(block) for block in fenced_blocks(README_TEXT, "toml"))
    document = tomllib.loads(manifest_text)
    folder = tmp_path / document["id"]
    write_nightly(folder, logs=5, member_bytes=2000)
    (folder / "scenario.toml").write_text(manifest_text, encoding="utf-8")
    scenario = load_scenario(folder / "scenario.toml")
    logs = sorted(f"runs/N7/{path.name}" for path in (folder / "runs" / "N7").iterdir())
    assert sorted(scenario.records) == sorted([*logs, "history/runs.csv"])
    assert scenario.families == {"runs/N7/*.log": tuple(logs)}


def test_the_readmes_mcp_lines_are_a_manifests_mcp_tables():
    """The five lines, added to a manifest, are one server with one tool (pinned later)."""
    _, mcp_text = ("\n".join(block) for block in fenced_blocks(README_TEXT, "toml"))
    head = 'id = "M"\nprofile = "triage"\n[[record]]\nid = "a"\nkind = "log"\npath = "a.log"\n'
    document = ManifestFile.model_validate(tomllib.loads(head + mcp_text))
    [server] = document.mcp
    assert server.name == "lint" and server.command == ["python", "lint_server.py"]
    assert [(tool.name, tool.schema_sha256) for tool in server.tool] == [("check_file", None)]


def heading_anchors(markdown: str) -> set[str]:
    """The anchors of a page's headings: explicit `{#id}`s and the slugs mkdocs makes."""
    anchors = set()
    for heading in re.findall(r"^#{1,6} (.+)$", markdown, flags=re.MULTILINE):
        explicit = re.search(r"\{\s*#([\w-]+)\s*\}\s*$", heading)
        if explicit:
            anchors.add(explicit[1])
            heading = heading[: explicit.start()]
        slug = re.sub(r"[^\w\s-]", "", heading.replace("`", "")).strip().lower()
        anchors.add(re.sub(r"[\s-]+", "-", slug))
    return anchors


def test_the_readme_links_resolve():
    without_code = re.sub(r"^(`{3,}).*?^\1\s*$", "", README_TEXT, flags=re.MULTILINE | re.DOTALL)
    links = re.findall(r"\]\(([^)\s]+)\)", without_code)
    local = [link for link in links if not re.match(r"[a-z]+:", link)]
    assert local
    for link in local:
        path, _, anchor = link.partition("#")
        target = ROOT / path
        assert target.is_file(), f"README links to {link}, which does not exist"
        if anchor:
            assert anchor in heading_anchors(target.read_text(encoding="utf-8")), (
                f"README links to {link}: {path} has no such heading"
            )


@pytest.mark.parametrize("path", list(DIAGRAMS), ids=lambda path: path.name)
def test_the_diagrams_are_generated_from_the_compiled_graph(path):
    assert readme_block(path.read_text(encoding="utf-8")) == diagram_block(DIAGRAMS[path]), (
        f"{path.relative_to(ROOT)}'s diagram is stale: run `python -m graph.diagram`"
    )


def test_ci_runs_the_readme_test_command_and_builds_the_docs_strictly():
    ci = (ROOT / ".ci" / "run").read_text()
    assert "```bash\n.venv/bin/pytest\n```" in README_TEXT
    commands = [line.split("#")[0].strip() for line in ci.splitlines()]
    assert ".venv/bin/pytest" in commands and ".venv/bin/pytest -m slow" in commands
    assert any(
        command.startswith(".venv/bin/mkdocs build --strict")
        for command in commands[: commands.index(".venv/bin/pytest")]
    ), "CI builds the docs strictly before the tests"


def test_the_embedded_use_snippet_runs_as_written(tmp_path):
    """docs/serving.md's embedded-use snippet, run as a program: it prints the run's status, its
    evidence refs and its unknowns (the card's "embedded graph invocation")."""
    page = (ROOT / "docs" / "serving.md").read_text(encoding="utf-8")
    snippet = page.split("## Embedded use", 1)[1].split("```python\n", 1)[1].split("```", 1)[0]
    program = tmp_path / "snippet.py"
    program.write_text(snippet)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "XDG_DATA_HOME": str(tmp_path / "data")}
    ran = subprocess.run(
        [sys.executable, str(program)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.startswith(f"stopped {R42_REFS} [")
