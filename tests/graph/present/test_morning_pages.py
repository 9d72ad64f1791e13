"""The morning report on the handover's HTML page (the exported artifact) and the web app's run
body: its tables shown when a triage receipt holds a report, every link opening an id the page
has (the line when the receipt shows it, else the receipt), and a handover without one unchanged."""

from __future__ import annotations

import re

import pytest

from graph.delivery.html import handover_body, handover_page
from tests.graph.present.morning_sample import sample_report
from tests.graph.test_member_anchors import CITED, handover, quoted_member


def with_report() -> dict:
    shown = handover(CITED)
    report = sample_report(20, seed=2)
    first = report["buckets"][0]
    quoted = shown["evidence"][0]["excerpt"][0]["text"]  # `B1 runs/N7/reset_smoke_00152.log:846: …`
    first["example"] = {"member": quoted_member(quoted), "line": 846, "text": "UVM_ERROR [RST_CHK]"}
    shown["evidence"][0]["triage"] = report
    return shown


@pytest.mark.parametrize("render", [handover_page, handover_body])
def test_the_tables_are_shown_and_every_link_opens_an_id_of_the_page(render):
    page = str(render(with_report()))
    ids = set(re.findall(r'id="([^"]+)"', page))
    morning = page.split('id="morning-e1"', 1)[1].split("<h2>Evidence</h2>", 1)[0]
    targets = re.findall(r'href="#([^"]+)"', morning)
    failing = [
        row for row in with_report()["evidence"][0]["triage"]["tests"] if row["status"] == "fail"
    ]
    assert len(targets) == 1 + len(with_report()["evidence"][0]["triage"]["buckets"]) + len(failing)
    assert set(targets) <= ids
    assert "e1-runs-n7-reset-smoke-00152-log-l846" in targets  # a shown line opens itself
    assert "<script>" not in morning and "&lt;script&gt;" in morning


@pytest.mark.parametrize("render", [handover_page, handover_body])
def test_a_handover_without_a_triage_report_shows_no_morning_report(render):
    page = str(render(handover(CITED)))
    assert "morning" not in page.split("<style>")[-1].split("</style>")[-1]
