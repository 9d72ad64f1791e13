"""The README stays true: its diagrams are the compiled graph, its console blocks are what the
commands print, its manifest loads, its links resolve, and CI runs its test command."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from graph.diagram import DIAGRAMS, README, diagram_block, readme_block
from lab.nightly import write_nightly
from tools.records.registry import load_scenario

ROOT = Path(__file__).resolve().parents[1]
ELIDED = "…"
"""A line of a console block that stands for output left out."""


def fenced_blocks(text: str, info: str) -> list[list[str]]:
    """The lines of each fenced block whose info string is `info` (three or more backticks)."""
    blocks, current, fence = [], None, ""
    for line in text.splitlines():
        if current is None:
            opening = re.fullmatch(r"(`{3,})" + re.escape(info) + r"\s*", line)
            if opening:
                current, fence = [], opening[1]
        elif line.strip() == fence:
            blocks.append(current)
            current = None
        else:
            current.append(line)
    return blocks


def commands_and_output(block: list[str]) -> list[tuple[str, list[str]]]:
    """Each `$ command` of a console block (a trailing backslash continues it) with the lines shown
    after it."""
    steps: list[tuple[str, list[str]]] = []
    continued = False
    for line in block:
        if continued:
            command, shown = steps[-1]
            steps[-1] = (command + " " + line.strip().removesuffix("\\").strip(), shown)
        elif line.startswith("$ "):
            steps.append((line[2:].removesuffix("\\").strip(), []))
        else:
            assert steps, f"output before any command in a console block: {line!r}"
            steps[-1][1].append(line)
        continued = line.rstrip().endswith("\\")
    return steps


VOLATILE = (
    (
        re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})?"),
        "<when>",
    ),
    (re.compile(r"\b\d{2}:\d{2}:\d{2}(?:\.\d+)?\b"), "<when>"),
    (re.compile(r"\b(?=[0-9a-f]*[0-9])[0-9a-f]{8,}\b"), "<hex>"),
    (re.compile(r"\b\d+(?:\.\d+)? ?s\b"), "<age>"),
)
"""What differs from run to run: timestamps, hashes and the ids made from them (threads,
interactions, notes), and ages or durations in seconds."""


def normalized(line: str) -> str:
    for pattern, stands_for in VOLATILE:
        line = pattern.sub(stands_for, line)
    return " ".join(line.split())


def missing_lines(shown: list[str], printed: str) -> list[str]:
    """The shown lines that the printed output lacks, in the order shown (elisions skipped)."""
    actual = [normalized(line) for line in printed.splitlines()]
    at, missing = 0, []
    for line in shown:
        if line.strip() in ("", ELIDED):
            continue
        wanted = normalized(line)
        try:
            at = actual.index(wanted, at) + 1
        except ValueError:
            missing.append(line)
    return missing


def warrant_command() -> list[str]:
    """The `warrant` console script of the interpreter running the tests."""
    script = shutil.which("warrant", path=str(Path(sys.executable).parent))
    return [script] if script else [sys.executable, "-c", "from graph.cli.main import main; main()"]


def fresh_environment(folder: Path) -> dict[str, str]:
    """The caller's environment without Warrant's, a model's or a tracer's settings, with a store,
    a home and a terminal width of the test's own."""
    passed = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("WARRANT_", "OPENAI_", "OTEL_", "LANGSMITH_", "LANGCHAIN_"))
    }
    home = folder / "home"
    home.mkdir()
    return passed | {
        "WARRANT_DB": str(folder / "warrant.sqlite"),
        "HOME": str(home),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "COLUMNS": "100",
    }


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
    environment = fresh_environment(tmp_path)
    for command, shown in commands_and_output(block):
        words = shlex.split(command)
        assert words[0] == "warrant" or words[:3] == ["python", "-m", "lab.nightly"], (
            f"the README's console blocks run warrant and the lab's generator only: {command}"
        )
        program = warrant_command() if words[0] == "warrant" else [sys.executable]
        result = subprocess.run(
            [*program, *words[1:]],
            cwd=tmp_path,
            env=environment,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=600,
        )
        assert result.returncode == 0, f"$ {command}\n{result.stdout}"
        missing = missing_lines(shown, result.stdout)
        assert not missing, (
            f"$ {command} no longer prints these README lines (in this order):\n"
            + "\n".join(missing)
            + f"\n--- it printed:\n{result.stdout}"
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
    assert missing_lines(["a", ELIDED, "c"], "a\nb\nc\n") == []
    assert missing_lines(["c", "a"], "a\nb\nc\n") == ["a"]


def test_the_readme_manifest_admits_the_nightly_beside_it(tmp_path):
    (manifest_text,) = ("\n".join(block) for block in fenced_blocks(README_TEXT, "toml"))
    document = tomllib.loads(manifest_text)
    folder = tmp_path / document["id"]
    write_nightly(folder, logs=5, member_bytes=2000)
    (folder / "scenario.toml").write_text(manifest_text, encoding="utf-8")
    scenario = load_scenario(folder / "scenario.toml")
    logs = sorted(f"runs/N7/{path.name}" for path in (folder / "runs" / "N7").iterdir())
    assert sorted(scenario.records) == sorted([*logs, "history/runs.csv"])
    assert scenario.families == {"runs/N7/*.log": tuple(logs)}


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
    assert ran.stdout.startswith("stopped ['E1', 'E2', 'E3'] [")
