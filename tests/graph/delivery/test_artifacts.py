"""A handover published as artifacts: each named by the sha256 of its bytes, written once, its
HTML self-contained with an anchor per evidence item and nothing a record says taken as markup,
a computed result's figure drawn, and a figure that cannot be drawn reported without withdrawing
the text."""

import hashlib
import json
import re
from html.parser import HTMLParser

from langgraph.store.memory import InMemoryStore

from graph.delivery.artifacts import content, publish, published, render_artifacts
from tests.helpers import R42_HISTORY, call, run_embedded, stop

HOSTILE = "<script>alert(1)</script><img src=x onerror=alert(2)>"


class Tags(HTMLParser):
    """Every start tag and its attributes, as a browser's parser reads the page."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


def tags_of(page: str) -> list[tuple[str, dict[str, str | None]]]:
    parser = Tags()
    parser.feed(page)
    return parser.tags


def analysed_run(action_file, plot):
    query = "select test, count(*) as fails from h where status = 'FAIL' group by test"
    args = {"query": query, "tables": {"h": R42_HISTORY}, "plot": plot}
    chooser = action_file(
        [
            call("a1", "analyze", **args),
            stop(HOSTILE, hypotheses=[{"statement": HOSTILE, "refs": ["E1"]}]),
        ]
    )
    return run_embedded("R42", chooser)["handover"]


def test_each_artifact_is_named_by_the_sha256_of_its_bytes(action_file):
    handover = analysed_run(action_file, {"kind": "bar", "x": "test", "y": "fails"})
    contents, artifacts = render_artifacts(handover)
    assert [item.name for item in artifacts] == [
        "handover.md",
        "handover.html",
        "handover.json",
        "figure-e1.svg",
    ]
    for item in artifacts:
        assert hashlib.sha256(contents[item.sha256].encode()).hexdigest() == item.sha256
        assert item.size == len(contents[item.sha256].encode())
    assert json.loads(contents[artifacts[2].sha256]) == handover
    svg = contents[artifacts[3].sha256]
    assert svg.startswith("<?xml") and "reset_smoke" in svg and "(E1, computed)" in svg
    assert render_artifacts(handover)[0] == contents  # the same handover, the same bytes


def test_the_html_holds_no_markup_from_a_record_or_a_chooser(action_file):
    handover = analysed_run(action_file, {"kind": "bar", "x": "test", "y": "fails"})
    contents, artifacts = render_artifacts(handover)
    page = contents[artifacts[1].sha256]
    tags = tags_of(page)
    assert not [tag for tag, _ in tags if tag == "script"]
    assert [attrs for tag, attrs in tags if tag == "img"] == [
        {"alt": "figure-e1.svg: a figure computed from E1", "src": attrs["src"]}
        for tag, attrs in tags
        if tag == "img"
    ]
    assert all(
        attrs["src"].startswith("data:image/svg+xml;base64,") for tag, attrs in tags if tag == "img"
    )
    assert HOSTILE not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    ids = {attrs.get("id") for _, attrs in tags}
    assert {"e1", "e1-l1", "e1-l2"} <= ids
    links = [attrs["href"] for tag, attrs in tags if tag == "a" and attrs.get("class") == "cite"]
    assert links == ["#e1"]
    assert "computed — not a source fact" in page
    assert re.search(r"Computed by the query <code>select test", page)


def test_a_figure_that_cannot_be_drawn_keeps_the_text(action_file):
    handover = analysed_run(action_file, {"kind": "bar", "x": "test", "y": "nosuch"})
    contents, artifacts = render_artifacts(handover)
    figure = artifacts[3]
    assert (figure.sha256, figure.size) == (None, 0)
    assert figure.error == "no column 'nosuch' in the result (its columns: test, fails)"
    assert [item.name for item in artifacts[:3] if item.sha256 in contents] == [
        "handover.md",
        "handover.html",
        "handover.json",
    ]
    assert "could not be drawn: no column" in contents[artifacts[1].sha256]


def test_a_revision_is_published_once(action_file):
    handover = analysed_run(action_file, {"kind": "histogram", "x": "fails"})
    store = InMemoryStore()
    first = publish(store, "t1", handover, "alice")
    again = publish(store, "t1", {**handover, "goal": "another"}, "mallory")
    assert again == first == published(store, "t1")
    assert (first.owner, first.revision, first.report) == ("alice", 1, "t1")
    html = next(item for item in first.artifacts if item.name == "handover.html")
    assert hashlib.sha256(content(store, "t1", html)).hexdigest() == html.sha256


def test_bytes_altered_in_the_store_are_not_served_as_the_artifact(action_file):
    import pytest

    from contract.errors import ErrorKind, WarrantError
    from graph.delivery.artifacts import ARTIFACTS
    from ledger.store import space

    handover = analysed_run(action_file, {"kind": "histogram", "x": "fails"})
    store = InMemoryStore()
    index = publish(store, "t1", handover, "alice")
    markdown = index.artifacts[0]
    store.put(space("t1", ARTIFACTS), f"sha256:{markdown.sha256}", {"text": "# Root cause: X"})
    with pytest.raises(WarrantError) as altered:
        content(store, "t1", markdown)
    assert altered.value.kind == ErrorKind.BROKEN_LEDGER
    assert str(altered.value) == (
        "artifact handover.md of run t1 is not the one published (its sha256 differs)"
    )
