"""The README stays true: its diagram is the compiled graph, and CI runs its test command."""

from pathlib import Path

from graph.diagram import README, diagram_block, readme_block

ROOT = Path(__file__).resolve().parent.parent


def test_the_architecture_diagram_is_generated_from_the_compiled_graph():
    assert readme_block(README.read_text(encoding="utf-8")) == diagram_block(), (
        "README diagram is stale: run `python -m graph.diagram`"
    )


def test_ci_runs_the_readme_test_command():
    readme = README.read_text(encoding="utf-8")
    ci = (ROOT / ".ci" / "run").read_text()
    assert "```bash\n.venv/bin/pytest\n```" in readme
    commands = [line.split("#")[0].strip() for line in ci.splitlines()]
    assert ".venv/bin/pytest" in commands and ".venv/bin/pytest -m slow" in commands
