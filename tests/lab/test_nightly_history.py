"""The lab's nightly is one story (issue 54): today's folder is the night after the history's
last, so no nightly in the history shares today's name or is dated on or after it. Read back from
the written CSV and folder with the standard library, apart from lab/nightly.py's constants."""

from __future__ import annotations

import csv
from datetime import date, timedelta
from pathlib import Path

from lab.nightly import write_nightly


def test_today_is_the_night_after_the_history_last(tmp_path):
    write_nightly(tmp_path, logs=20, member_bytes=1000)
    [today] = [path.name for path in (tmp_path / "runs").iterdir()]
    with (tmp_path / "history" / "runs.csv").open(newline="") as handle:
        nights = {(row["run"], row["date"]) for row in csv.DictReader(handle)}
    numbers = sorted(int(run.removeprefix("N")) for run, _ in nights)
    dated = dict(nights)
    assert len(dated) == len(nights)  # one date per nightly
    assert today not in dated
    assert today == f"N{numbers[-1] + 1}"
    days = [date.fromisoformat(dated[f"N{number}"]) for number in numbers]
    assert days == [days[0] + timedelta(days=k) for k in range(len(days))]  # one night apart


def test_the_committed_small_nightly_agrees():
    folder = Path("evals/scenarios/nightly")
    with (folder / "history" / "runs.csv").open(newline="") as handle:
        runs = {row["run"] for row in csv.DictReader(handle)}
    [today] = [path.name for path in (folder / "runs").iterdir()]
    assert today not in runs and today == f"N{max(int(run[1:]) for run in runs) + 1}"
