"""`warrant web` driven in Debian's Chromium through Playwright: a run watched live to its
handover; the app killed and restarted while the run goes on, the page reconnecting without losing
or repeating an event; an empty answer that does not blank the page; a shared artifact opened by
its granted reader and refused for another reader and for another revision.

Real `warrant` processes and a real browser; what the ledger holds is read back through
`warrant events --json`, never from the app."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.chromium import chromium
from tests.cli_process import WARRANT, warrant
from tests.web_inbox_server import ServedWeb, served_web, start_web

pytestmark = pytest.mark.slow  # real server processes and a real browser

SHOTS = os.environ.get("WARRANT_SCREENSHOTS")
SECRET = {"WARRANT_WEB_SECRET": "a secret of this test"}


def ledger(db: str, thread: str) -> list[int]:
    shown = warrant("events", thread, "--db", db, "--json", cwd=Path.cwd())
    assert shown.returncode == 0, shown.stderr
    return [event["seq"] for event in json.loads(shown.stdout)]


def shown_seqs(page) -> list[int]:
    return [
        int(seq)
        for seq in page.locator("#events li").evaluate_all("l => l.map(e => e.dataset.seq)")
    ]


def gated_run(db: str, thread: str) -> None:
    """R42-gated on `thread`, parked on the approval of its second call."""
    parked = warrant("run", "R42-gated", "--thread", thread, "--db", db, "-q", cwd=Path.cwd())
    assert parked.returncode == 3, parked.stderr


def approve_in_background(db: str, thread: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [WARRANT, "resume", thread, "--approve", "--as", "alice", "--db", db, "-q"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.fixture
def browser() -> Iterator:
    with chromium() as launched:
        yield launched


def opened(browser, served: ServedWeb, who: str):
    page = browser.new_page(viewport={"width": 1100, "height": 1000})
    page.goto(served.openings[who])
    return page


def shot(page, name: str, folder: Path) -> None:
    page.screenshot(path=str(Path(SHOTS or folder) / name), full_page=True)


def test_a_run_is_watched_live_to_its_handover(browser, tmp_path):
    db = str(tmp_path / "w.sqlite")
    gated_run(db, "G")
    with served_web(db, "--as", "alice", env=SECRET) as served:
        page = opened(browser, served, "alice")
        page.goto(f"{served.url}/runs/G")
        parked = ledger(db, "G")
        assert (
            shown_seqs(page) == parked
            and page.locator("#run-state").inner_text() == "awaiting_human"
        )
        page.wait_for_function("document.getElementById('live').textContent === 'live'")
        shot(page, "web-waiting.png", tmp_path)
        approving = approve_in_background(db, "G")
        assert approving.wait(timeout=120) == 0, approving.stderr.read()  # type: ignore[union-attr]
        page.wait_for_selector("#artifacts", timeout=30_000)  # the page reloads once it has ended
        full = ledger(db, "G")
        assert len(full) > len(parked)
        assert shown_seqs(page) == full
        assert page.locator("#run-state").inner_text() == "stopped"
        assert page.locator("#handover #e2 h3").inner_text().startswith("E2 · readspec(")
        assert page.locator("#artifacts li").all_inner_texts()[0].startswith("handover.md")
        shot(page, "web-live.png", tmp_path)


def test_the_app_restarted_mid_run_loses_and_repeats_no_event(browser, tmp_path):
    db = str(tmp_path / "w.sqlite")
    gated_run(db, "G")
    first = start_web(db, "--as", "alice", env=SECRET)
    try:
        page = opened(browser, first, "alice")
        page.goto(f"{first.url}/runs/G")
        page.wait_for_function("document.getElementById('live').textContent === 'live'")
        before = shown_seqs(page)
    finally:
        first.stop()
    page.wait_for_function("document.getElementById('live').textContent === 'reconnecting…'")
    approving = approve_in_background(db, "G")  # the run goes on while the app is down
    assert approving.wait(timeout=120) == 0, approving.stderr.read()  # type: ignore[union-attr]
    assert shown_seqs(page) == before
    second = start_web(db, "--as", "alice", "--port", str(first.port), env=SECRET)
    try:
        page.wait_for_selector("#artifacts", timeout=60_000)
        assert shown_seqs(page) == ledger(db, "G")  # each event once, in order
    finally:
        second.stop()


def test_an_empty_or_stale_answer_never_blanks_the_page(browser, tmp_path):
    db = str(tmp_path / "w.sqlite")
    gated_run(db, "G")
    with served_web(db, "--as", "alice", env=SECRET) as served:
        page = opened(browser, served, "alice")
        repeated = json.dumps(
            {"seq": 1, "type": "admitted", "turn": 0, "actor": "x", "line": "REPEATED"}
        )
        page.route(
            "**/runs/G/events*",
            lambda route: route.fulfill(
                status=200,
                headers={"Content-Type": "text/event-stream"},
                body=f"retry: 60000\n\nid: 1\nevent: ledger\ndata: {repeated}\n\n",
            ),
        )
        page.route(
            "**/runs/G/handover",
            lambda route: route.fulfill(status=200, headers={"X-Warrant-Events": "0"}, body=""),
        )
        with page.expect_response("**/runs/G/handover"):  # asked again for the repeated event
            page.goto(f"{served.url}/runs/G")
        assert shown_seqs(page) == ledger(db, "G")
        assert "REPEATED" not in page.locator("#events").inner_text()
        assert page.locator("#handover #e1 pre.excerpt .line").count() > 0


def test_a_shared_revision_opens_for_its_reader_only(browser, tmp_path):
    db = str(tmp_path / "w.sqlite")
    analysed = "file:lab/choosers/sta1_analyze.jsonl"
    for command in (
        ("run", "STA1", "--chooser", analysed, "--thread", "D", "--db", db, "-q"),
        ("continue", "D", "--thread", "D2", "--db", db, "-q"),
        ("share", "D", "--rev", "1", "--to", "bob", "--db", db),
    ):
        done = warrant(*command, cwd=Path.cwd())
        assert done.returncode == 0, done.stderr
    options = ("--reader", "bob", "--reader", "carol")
    with served_web(db, "--as", "alice", *options, env=SECRET) as served:
        bob = opened(browser, served, "bob")
        bob.goto(f"{served.url}/runs/D/artifacts/handover.html")
        assert bob.locator("h1").inner_text().startswith("Handover: STA1")
        assert bob.locator("#e1 .line").count() > 0  # the comparison, quoted
        computed = bob.locator("#e2")  # the analysis: marked computed, its figure drawn
        assert computed.locator(".computed-tag").inner_text() == "computed — not a source fact"
        assert computed.locator("figure img").count() == 1
        assert bob.locator("a.cite").evaluate_all("l => l.map(a => a.hash)") == ["#e1", "#e2"]
        shot(bob, "artifact-html.png", tmp_path)
        other = bob.goto(f"{served.url}/runs/D2/artifacts/handover.html")
        assert other is not None and other.status == 403
        assert "bob was granted revision 1 of report D, not revision 2" in bob.content()
        carol = opened(browser, served, "carol")
        refused = carol.goto(f"{served.url}/runs/D/artifacts/handover.html")
        assert refused is not None and refused.status == 403
        assert "may open revision 1 of report D" in carol.content()
        listing = carol.goto(f"{served.url}/")
        assert listing is not None and carol.locator("#no-runs").count() == 1
        bare = httpx.get(f"{served.url}/runs/D/artifacts/handover.html", timeout=30)
        assert bare.status_code == 403 and "an artifact's URL is only a locator" in bare.text
