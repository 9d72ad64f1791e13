"""The loop's diagrams, generated from the compiled graph.

`python -m graph.diagram` rewrites the Mermaid block between the graph markers of each file in
`DIAGRAMS`; a test fails when one is stale. The README draws main's loop (a child is one node);
the design (docs/design.md) draws the child's subgraph inside it.
"""

from __future__ import annotations

import re
from pathlib import Path

from graph.build import compile_graph

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DESIGN = ROOT / "docs" / "design.md"
DIAGRAMS = {README: 0, DESIGN: 1}
"""Each file with a diagram block, and how many levels of subgraphs it draws (LangGraph's xray)."""
START, END = "<!-- graph:start -->", "<!-- graph:end -->"
_BLOCK = re.compile(re.escape(START) + r".*?" + re.escape(END), re.DOTALL)


def mermaid(xray: int = 1) -> str:
    """Main's loop; with `xray=1` its children's subgraph drawn inside it (one level: a child's own
    children run the same graph)."""
    return compile_graph().get_graph(xray=xray).draw_mermaid()


def diagram_block(xray: int = 1) -> str:
    return f"{START}\n```mermaid\n{mermaid(xray).rstrip()}\n```\n{END}"


def readme_block(text: str) -> str | None:
    """The diagram block of a file's text (the README's or another's), or None."""
    found = _BLOCK.search(text)
    return found[0] if found else None


class MissingBlock(ValueError):
    """A file to draw in that has no diagram block (its markers were removed or mistyped)."""


def redrawn(text: str, xray: int, name: str) -> str:
    """The text with its diagram block drawn again; a text without one is `MissingBlock`."""
    if readme_block(text) is None:
        raise MissingBlock(f"{name} has no {START} … {END} block")
    block = diagram_block(xray)
    return _BLOCK.sub(lambda _: block, text)


def rewrite(diagrams: dict[Path, int] = DIAGRAMS) -> None:
    """Every file's diagram block drawn again; a file without one is `MissingBlock`, and then no
    file is written."""
    texts = {path: path.read_text(encoding="utf-8") for path in diagrams}
    drawn = {path: redrawn(texts[path], xray, str(path)) for path, xray in diagrams.items()}
    for path, text in drawn.items():
        path.write_text(text, encoding="utf-8")


def main() -> None:
    """`python -m graph.diagram`: a missing block is one line and exit 1."""
    try:
        rewrite()
    except MissingBlock as exc:
        raise SystemExit(str(exc)) from None


if __name__ == "__main__":
    main()
