"""R42's handover carries the waveform at the error's time and the design's change range, and no
longer says whether the RTL changed is unknown; R42-datasheet reads a PDF specification. What
each item must hold is computed apart: from the VCD by pyvcd's tokenizer, from the repository by
`git`, from the datasheet by the lines the lab wrote into it."""

from __future__ import annotations

import re
import subprocess

from graph.present.render import handover_markdown
from lab.pdfgen import DATASHEET, DATASHEET_PAGES, make_pdf
from lab.rtlgen import REPOSITORY
from lab.wavegen import WAVEFORM
from tests.helpers import run_embedded
from tests.lab.test_r42_design import _changes


def test_r42_gathers_the_waveform_and_the_change_range_and_the_rtl_is_no_longer_unknown():
    state = run_embedded("R42")
    tools = [(item["ref"], item["tool"]) for item in state["evidence"]]
    assert tools[3:] == [("E4", "waveform"), ("E5", "changes")]
    assert (state["status"], state["refusals"]) == ("stopped", [])
    assert not any("RTL" in unknown for unknown in state["handover"]["unknowns"])
    assert "RTL changed" not in handover_markdown(state["handover"])


def test_the_waveform_item_shows_each_signal_at_the_error_and_its_changes_around_it():
    e4 = run_embedded("R42")["evidence"][3]
    at_ps = 265_000
    lines = [line["text"] for line in e4["excerpt"]]
    for name, changes in _changes(WAVEFORM).items():
        if name.rsplit(".", 1)[1] not in ("rst_n", "rst_sync_n", "state", "clk_en"):
            continue
        value = [value for time, value in changes if time <= at_ps][-1]
        [shown] = [line for line in lines if line.startswith(f"t={at_ps}ps {name} = ")]
        assert int(value.lstrip("b"), 2) == int(re.split(r"'h| ", shown)[-2], 16)
        near = sorted(time for time, _ in changes if abs(time - at_ps) <= 60_000)
        assert near == sorted(
            int(line.split("ps", 1)[0][2:]) for line in lines if f" {name} -> " in line
        )


def test_the_change_range_item_lists_the_commits_git_lists_with_their_line_counts():
    e5 = run_embedded("R42")["evidence"][4]
    shown = [line["text"] for line in e5["excerpt"]]
    log = subprocess.run(
        ["git", "-C", str(REPOSITORY), "log", "--format=@%H %s", "--numstat", "R41..R42"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    expected = []
    for line in filter(None, log.splitlines()):
        if line.startswith("@"):
            short, subject = line[1:].split(" ", 1)
            expected.append((short[:8], subject))
        else:
            added, deleted, path = line.split("\t")
            expected.append(f"+{added} -{deleted} {path}")
    seen = [
        (text.split(" ", 1)[0], text.split(": ", 1)[1])
        if not text.startswith(" ")
        else text.strip()
        for text in shown
    ]
    assert seen == expected


def test_r42_datasheet_reads_the_pdf_pages_the_lab_wrote():
    assert DATASHEET.read_bytes() == make_pdf(DATASHEET_PAGES)
    state = run_embedded("R42-datasheet")
    assert [item["tool"] for item in state["evidence"]] == ["searchlogs", "searchdocs", "readpages"]
    assert (state["status"], state["refusals"]) == ("stopped", [])
    e3 = state["evidence"][2]
    read = [line["text"] for line in e3["excerpt"]]
    written = [
        f"p{page}:{number}: {text}"
        for page in (3, 4)
        for number, text in enumerate(DATASHEET_PAGES[page - 1], start=1)
    ]
    assert read == written


def test_the_search_names_only_pages_and_sections_that_hold_a_word_of_the_query():
    e2 = run_embedded("R42-datasheet")["evidence"][1]
    words = {"clk_en", "rises", "cycles", "rst_sync_n"}
    pages = {
        int(found[1])
        for line in e2["excerpt"]
        if (found := re.match(r"#\d+ lab/spec/rstc200\.pdf@\w+:\d+: page (\d+)", line["text"]))
    }
    holding = {
        number
        for number, lines in enumerate(DATASHEET_PAGES, start=1)
        if words & set(re.findall(r"[A-Za-z0-9_]+", " ".join(lines)))
    }
    assert pages and pages <= holding
    assert {3, 4} <= pages  # the pages that hold the most of the query's words
