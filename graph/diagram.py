"""The README's architecture diagram, generated from the compiled graph.

`python -m graph.diagram` rewrites the Mermaid block between the README's graph markers; a test
fails when the README is stale.
"""

from __future__ import annotations

import re
from pathlib import Path

from graph.build import compile_graph

README = Path(__file__).resolve().parent.parent / "README.md"
START, END = "<!-- graph:start -->", "<!-- graph:end -->"
_BLOCK = re.compile(re.escape(START) + r".*?" + re.escape(END), re.DOTALL)


def mermaid() -> str:
    """Main's loop with its children's subgraph drawn inside it (one level: a child's own
    children run the same graph)."""
    return compile_graph().get_graph(xray=1).draw_mermaid()


def diagram_block() -> str:
    return f"{START}\n```mermaid\n{mermaid().rstrip()}\n```\n{END}"


def readme_block(text: str) -> str | None:
    found = _BLOCK.search(text)
    return found[0] if found else None


def main() -> None:
    text = README.read_text(encoding="utf-8")
    if readme_block(text) is None:
        raise SystemExit(f"{README} has no {START} … {END} block")
    README.write_text(_BLOCK.sub(lambda _: diagram_block(), text), encoding="utf-8")


if __name__ == "__main__":
    main()
