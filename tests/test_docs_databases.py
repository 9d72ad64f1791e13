"""A page of docs/ never has the reader use a PostgreSQL database that nothing on it creates: every
`postgresql://…@127.0.0.1/NAME` in a page's shell blocks (`bash`, `console`) comes after a
`createdb -h 127.0.0.1 -U USER NAME` on that page (PostgreSQL's own `postgres` database aside, and
URLs whose port no server listens on, which pages show failing on purpose)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.console_blocks import fenced_blocks

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted((ROOT / "docs").glob("*.md"))
URL = re.compile(r"postgresql://(?P<user>\w+)@127\.0\.0\.1(?::5432)?/(?P<name>\w+)")
CREATEDB = re.compile(r"createdb -h 127\.0\.0\.1 -U (?P<user>\w+) (?P<name>\w+)")


def shell_text(page: Path) -> str:
    """The page's shell blocks, in the page's order."""
    text = page.read_text(encoding="utf-8")
    fences = re.finditer(r"^(`{3,})(bash|console)\s*$", text, flags=re.MULTILINE)
    blocks = {match.start(): match[2] for match in fences}
    found = {kind: iter(fenced_blocks(text, kind)) for kind in set(blocks.values())}
    return "\n".join("\n".join(next(found[kind])) for _, kind in sorted(blocks.items()))


def uncreated(text: str) -> list[str]:
    """The databases `text` uses before (or without) creating them."""
    created = {(m["user"], m["name"]): m.start() for m in reversed(list(CREATEDB.finditer(text)))}
    return [
        m[0]
        for m in URL.finditer(text)
        if m["name"] != "postgres" and created.get((m["user"], m["name"]), len(text)) > m.start()
    ]


@pytest.mark.parametrize("page", PAGES, ids=[page.name for page in PAGES])
def test_every_database_a_page_uses_is_created_on_it_first(page):
    assert uncreated(shell_text(page)) == []


def test_the_check_sees_a_database_used_before_it_is_created():
    url = "postgresql://postgres@127.0.0.1:5432/runs"
    assert uncreated(f"WARRANT_DB={url} warrant run R42") == [url]
    assert uncreated(f"WARRANT_DB={url} x\ncreatedb -h 127.0.0.1 -U postgres runs") == [url]
    assert uncreated(f"createdb -h 127.0.0.1 -U postgres runs\nWARRANT_DB={url} x") == []
    assert uncreated("createdb -h 127.0.0.1 -U me runs\n" + url) == [url]  # another role's
    serving = shell_text(ROOT / "docs" / "serving.md")
    assert "langgraph dev" in serving and URL.search(serving)  # the recipe is read
