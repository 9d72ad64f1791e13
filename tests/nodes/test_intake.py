"""People's input comes in by a step of its own: the guard node decides, and reads none of it."""

import ast
from pathlib import Path

import nodes.guard
import nodes.intake

PEOPLES_INPUT = {"nodes.control", "nodes.questions", "nodes.replies", "guards.human"}


def _imported(module: object) -> set[str]:
    tree = ast.parse(Path(str(getattr(module, "__file__", ""))).read_text())
    return {node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}


def test_the_guard_reads_no_stop_correction_or_answer_of_its_own() -> None:
    assert not PEOPLES_INPUT & _imported(nodes.guard)


def test_the_intake_takes_them_in_around_the_guard() -> None:
    assert {"nodes.control", "nodes.questions", "nodes.replies", "nodes.guard"} <= _imported(
        nodes.intake
    )
