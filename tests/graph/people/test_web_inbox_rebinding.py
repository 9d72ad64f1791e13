"""The web inbox answers only its own pages: a DNS-rebinding page (another name resolving to
127.0.0.1) reads and approves nothing, a post from another origin or without the session the
printed URL opens is refused, a form cannot choose who approves, and the port is random.

Real `warrant inbox --serve` processes, real HTTP; what happened to the runs is read back through
`warrant inbox` and `warrant events`."""

from __future__ import annotations

import getpass
import html
import json
import re
from pathlib import Path

import httpx
import pytest

from tests.cli_process import warrant
from tests.helpers import call, stop, write_manifest
from tests.web_inbox_server import Served, served_inbox

pytestmark = pytest.mark.slow  # real server processes

FORGED = "attacker.example"


@pytest.fixture
def gated(scenario_dir, tmp_path, action_file) -> str:
    """A database holding run `g`, waiting for alice (the only approver) to approve call c1."""
    assert getpass.getuser() != "alice"
    manifest = write_manifest(scenario_dir)
    text = manifest.read_text().replace(
        'path = "logs/t.log"', 'path = "logs/t.log"\napproval = "human"'
    )
    manifest.write_text(text.replace('goal = "Why', 'approvers = ["alice"]\ngoal = "Why', 1))
    db = str(tmp_path / "w.sqlite")
    chooser = action_file([call("c1", "searchlogs", path="cc/t.log", query="UVM_ERROR"), stop()])
    waiting = warrant(
        "run", str(manifest), "--chooser", chooser, "--db", db, "--thread", "g", "-q", cwd=tmp_path
    )
    assert waiting.returncode == 3, waiting.stderr
    return db


def events(db: str, *types: str) -> list[dict]:
    ledger = json.loads(warrant("events", "g", "--db", db, "--json", cwd=Path.cwd()).stdout)
    return [event for event in ledger if event["type"] in types]


def still_waiting(db: str) -> bool:
    """Run g waits for its approval, with no reply taken and no call run."""
    rows = json.loads(warrant("inbox", "--db", db, "--json", cwd=Path.cwd()).stdout)
    return [row["thread"] for row in rows] == ["g"] and events(db, "resumed", "executed") == []


def opened(served: Served) -> tuple[httpx.Client, dict[str, str]]:
    """A client with a session from the printed URL, and the approve form of run g's page."""
    client = httpx.Client(timeout=30)
    first = client.get(served.opening, follow_redirects=False)
    assert (first.status_code, first.headers["location"]) == (303, "/")
    assert set(first.headers["set-cookie"].split("; ")[1:]) == {
        "HttpOnly",
        "Path=/",
        "SameSite=strict",
    }
    page = client.get(f"{served.url}/").text
    fields = dict(re.findall(r'<input type="hidden" name="(\w+)" value="([^"]*)">', page))
    return client, {**fields, "action": "approve"}


def test_a_rebinding_page_can_read_nothing_and_approve_nothing(gated):
    with served_inbox(gated) as served:
        client, form = opened(served)  # even holding the session and the token
        forged = {"Host": f"{FORGED}:{served.port}"}
        origin = {"Origin": f"http://{FORGED}:{served.port}"}
        for path in ("/", "/ok", f"/?key={served.opening.split('key=')[1]}", "/runs/g"):
            read = client.get(f"{served.url}{path}", headers=forged, follow_redirects=False)
            assert read.status_code == 403 and "set-cookie" not in read.headers
            assert (
                read.text
                == f"refused: Host '{FORGED}:{served.port}' is not this app's address (127.0.0.1:{served.port})\n"
            )
        posted = client.post(f"{served.url}/reply", data=form, headers={**forged, **origin})
        assert posted.status_code == 403 and form["token"] not in posted.text
        client.close()
    assert still_waiting(gated)


def test_a_post_from_another_origin_or_from_none_is_refused(gated):
    with served_inbox(gated) as served:
        client, form = opened(served)
        for headers in (
            {"Origin": f"http://{FORGED}"},
            {"Origin": "null"},
            {"Origin": f"http://127.0.0.1:{served.port + 1}"},
            {"Referer": f"http://{FORGED}/"},
            {"Referer": f"http://127.0.0.1:{served.port}0/"},
            {},
        ):
            posted = client.post(f"{served.url}/reply", data=form, headers=headers)
            assert posted.status_code == 403, headers
            assert posted.text.startswith("refused: a post") and posted.text.count("\n") == 1
        client.close()
    assert still_waiting(gated)


def test_a_post_without_the_session_cookie_is_refused(gated):
    with served_inbox(gated) as served:
        client, form = opened(served)
        client.close()
        with httpx.Client(timeout=30) as stranger:
            for url in (f"{served.url}/", f"{served.url}/runs/g", f"{served.url}/?key=guessed"):
                assert stranger.get(url, follow_redirects=False).status_code == 401
            stranger.cookies.set(f"warrant_web_{served.port}", "guessed")
            posted = stranger.post(f"{served.url}/reply", data=form, headers={"Origin": served.url})
        assert posted.status_code == 401
        assert (
            posted.text
            == f"refused: no session: open the URL `warrant web` printed for you (http://127.0.0.1:{served.port}/?key=…)\n"
        )
    assert still_waiting(gated)


def test_a_form_cannot_choose_who_approves_and_ports_are_random(gated):
    with served_inbox(gated) as mine, served_inbox(gated, "--as", "alice") as alices:
        assert mine.port != alices.port  # both on random free ports, not a fixed one
        client, form = opened(mine)
        origin = {"Origin": mine.url}
        for field in ("as", "by"):
            posted = client.post(f"{mine.url}/reply", data={**form, field: "alice"}, headers=origin)
            assert posted.status_code == 400
            assert (
                f"a form cannot name who replies; this app signs as {getpass.getuser()!r}"
                in html.unescape(posted.text)
            )
        assert still_waiting(gated)
        signed = client.post(f"{mine.url}/reply", data=form, headers=origin)
        assert (signed.status_code, signed.headers["location"]) == (303, "/runs/g")
        [refused] = events(gated, "refused")  # signed by the OS user, who is no approver here
        assert refused["payload"]["code"] == "not_an_approver"
        assert refused["payload"]["detail"].startswith(
            f"{getpass.getuser()!r} may not decide this call"
        )
        assert still_waiting(gated)
        client.close()
        client, form = opened(alices)
        approved = client.post(f"{alices.url}/reply", data=form, headers={"Origin": alices.url})
        assert approved.status_code == 303, approved.text
        client.close()
    [resumed] = events(gated, "resumed")
    assert (resumed["actor"], resumed["payload"]["reply"]["by"]) == ("human:alice", "alice")
    assert [event["payload"]["call_id"] for event in events(gated, "executed")] == ["c1"]
