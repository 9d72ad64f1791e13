"""The web app's run page (graph/web/templates/run.html around the handover's body) with a
morning report of a real `warrant triage` run, opened in Debian's Chromium: its four sections are tables a person sees, the
failing tests one row each. `WARRANT_SCREENSHOTS=docs/images` keeps the screenshot
(`docs/images/morning-report.png`, the one docs/nightly.md shows)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from graph.delivery.html import handover_body
from graph.web.app import TEMPLATES
from graph.web.gate import Person
from graph.web.runs import RunPage
from lab.nightly import write_nightly
from tests.chromium import chromium
from tests.cli_process import warrant
from tools.logs import familypool

pytestmark = pytest.mark.slow  # a real browser

SHOTS = os.environ.get("WARRANT_SCREENSHOTS")


def test_the_run_page_shows_the_morning_tables_in_chromium(tmp_path):
    write_nightly(
        tmp_path / "nightly", 60, 20_000
    )  # a real run's handover, as `warrant show` has it
    done = warrant("triage", "nightly", "--json", "--db", "memory", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    shown = json.loads(done.stdout)
    shown.pop("triage")  # the report the page shows is the receipt's own
    page = RunPage("nightly-demo", shown, "stopped", [], [], None, [])
    html = TEMPLATES.get_template("run.html").render(
        page=page, body=handover_body(shown), token="", person=Person("alice", "operator")
    )
    failing = [row for row in shown["evidence"][0]["triage"]["tests"] if row["status"] == "fail"]
    with chromium() as browser:
        tab = browser.new_page(viewport={"width": 1100, "height": 900})
        tab.route("**/*", lambda route: route.abort())  # nothing but the page itself
        tab.set_content(html)
        tables = tab.locator("section.morning table.morning-table")
        report = shown["evidence"][0]["triage"]
        sections = [report["buckets"], failing, report["no_verdict"], report["not_read"]]
        assert tables.count() == sum(1 for rows in sections if rows)  # an empty one says so
        assert tables.nth(1).is_visible()
        assert tables.nth(1).locator("tbody tr").count() == len(failing)
        assert (
            tab.locator("section.morning h3").all_inner_texts()[1]
            == f"Failing tests ({len(failing)})"
        )
        tab.locator("#morning-e1").scroll_into_view_if_needed()
        tab.screenshot(
            path=str(Path(SHOTS or tmp_path) / "morning-report.png"),
            clip={"x": 0, "y": 0, "width": 1100, "height": 1400},
            full_page=True,
        )
    familypool.shutdown_pools()
