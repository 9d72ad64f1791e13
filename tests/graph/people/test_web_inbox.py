"""The web inbox (`warrant inbox --serve`) driven end to end in Debian's Chromium through
Playwright: the printed URL opened (a session cookie, the key gone from the address bar), a
question answered, an approval edited to a record outside the grant and refused by the guard, a
post without the inbox's token refused."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.chromium import chromium
from tests.cli_process import warrant
from tests.web_inbox_server import Served, served_inbox

pytestmark = pytest.mark.slow  # a real server process and a real browser

SHOTS = os.environ.get("WARRANT_SCREENSHOTS")
"""A folder to keep the screenshots in (the README's are made so); else the test's own folder."""
HOSTILE = '{"path": "lab/protected/design.txt", "section": "reset"}'


@pytest.fixture
def inbox(tmp_path) -> Iterator[tuple[Served, str]]:
    """Two runs waiting (a question, an approval) and the inbox serving their database, its
    replies signed alice."""
    db = str(tmp_path / "w.sqlite")
    asked = warrant(
        "run",
        "R42",
        "--chooser",
        "file:lab/choosers/r42_ask.jsonl",
        "--thread",
        "R42-ask",
        "--db",
        db,
        "-q",
        cwd=Path.cwd(),
    )
    gated = warrant("run", "R42-gated", "--thread", "R42-gate", "--db", db, "-q", cwd=Path.cwd())
    assert (asked.returncode, gated.returncode) == (3, 3), asked.stderr + gated.stderr
    with served_inbox(db, "--as", "alice") as served:
        yield served, db


def pending(db: str) -> dict[str, dict]:
    rows = json.loads(warrant("inbox", "--db", db, "--json", cwd=Path.cwd()).stdout)
    return {row["thread"]: row for row in rows}


def shot(page, name: str, folder: Path) -> None:
    page.screenshot(path=str(Path(SHOTS or folder) / name), full_page=True)


def test_a_question_is_answered_and_a_hostile_edit_is_refused_in_a_browser(inbox, tmp_path):
    served, db = inbox
    url = served.url
    waiting = pending(db)
    question, approval = waiting["R42-ask"]["interaction_id"], waiting["R42-gate"]["interaction_id"]
    with chromium("--disable-sync") as browser:
        page = browser.new_page(viewport={"width": 1100, "height": 900})
        page.goto(served.opening)
        assert page.url == f"{url}/"  # the key is not left in the address bar
        [cookie] = page.context.cookies()
        assert (cookie["httpOnly"], cookie["sameSite"], cookie["path"]) == (True, "Strict", "/")
        assert page.locator("input[name=as]").count() == 0
        assert "Replies are signed alice" in page.locator("#signer").inner_text()
        assert (
            page.locator(f"#{question} h2").inner_text()
            == "Question: Did u_rst_ctrl change between R41 and R42?"
        )
        assert page.locator(f"#{approval} h2").inner_text() == (
            "Approve readspec on lab/spec/reset_controller.md"
        )
        call = page.locator(f"#{approval} dl.call").inner_text()
        assert "section\nreset_release" in call and "{" not in call  # a form, not raw JSON
        shot(page, "inbox.png", tmp_path)

        page.locator(f"#{question} textarea[name=answer]").fill(
            "Yes: the synchronizer gained a stage in R41."
        )
        page.locator(f"#{question} button[value=answer]").click()
        page.wait_for_url(f"{url}/runs/R42-ask")
        answer = page.locator("#h1")
        assert answer.locator("h3").inner_text() == (
            "H1 · alice’s answer a person’s words, not a verified observation"
        )
        assert answer.locator("blockquote.said").inner_text() == (
            "Yes: the synchronizer gained a stage in R41."
        )
        assert page.locator("#run-state").inner_text() == "stopped"
        shot(page, "handover.png", tmp_path)

        page.goto(url)
        page.locator(f"#{approval} summary").click()  # the arguments' editor is folded
        page.locator(f"#{approval} textarea[name=args]").fill(HOSTILE)
        page.locator(f"#{approval} button[value=edit]").click()
        page.wait_for_url(f"{url}/runs/R42-gate")
        refusals = page.locator("#handover ul.refusals").inner_text()
        assert "unapproved_record by tool:readspec (turn " in refusals
        assert "'lab/protected/design.txt' is not an approved record" in refusals
        assert "design.txt" not in page.locator("#handover h3").all_inner_texts()
        page.goto(url)
        assert page.locator("#empty").inner_text() == "Nothing is waiting for a person."
    assert pending(db) == {}


def test_a_reply_posted_without_the_inbox_token_is_refused(inbox):
    served, db = inbox
    row = pending(db)["R42-ask"]
    form = {
        "thread": "R42-ask",
        "interaction": row["interaction_id"],
        "action": "answer",
        "answer": "x",
    }
    with httpx.Client(timeout=30) as client:
        assert client.get(served.opening, follow_redirects=True).status_code == 200  # a session
        assert re.search(r'name="token" value="[^"]+"', client.get(served.url).text)
        for token in ({}, {"token": "not-this-one"}, {"token": "é"}):
            refused = client.post(
                f"{served.url}/reply", data={**form, **token}, headers={"Origin": served.url}
            )
            assert refused.status_code == 403, refused.text
            assert "refused: this form was not made by this app" in refused.text
    assert "R42-ask" in pending(db)  # nothing was answered
