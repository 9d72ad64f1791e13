"""changes over a repository made here with dulwich: every expectation is computed from what the
test committed (`gitmade.changed`), never from the tool."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest
from pydantic import ValidationError

from contract.codes import RefusalCode
from contract.errors import ManifestError, RecordRefusal
from scenario.registry import Record, load_scenario
from tests.tools.repo import gitmade
from tools.repo import changes
from tools.repo.args import ChangesArgs

TOP1 = b"".join(b"top %d\n" % n for n in range(5))
TOP2 = TOP1 + b"clk_en <= 1;\nclk_en_q <= clk_en;\n"
TOP4 = TOP2.replace(b"top 3\n", b"")
README1 = b"# rtl\nreads the clock\nowner: Ada\n"
README3 = README1.replace(b"reads the clock", b"reads the clock and reset")
RST4 = b"module rst;\nassign r = 1;\nendmodule\n"
TEST5 = b"def test():\n    assert True\n"

STATES = [
    ("2026-11-28T10:00:00+00:00", "initial", {"rtl/top.sv": TOP1, "docs/readme.md": README1}),
    (
        "2026-11-29T10:00:00+00:00",
        "rtl: add clk_en",
        {"rtl/top.sv": TOP2, "docs/readme.md": README1},
    ),
    ("2026-11-30T10:00:00+00:00", "docs: reset", {"rtl/top.sv": TOP2, "docs/readme.md": README3}),
    (
        "2026-12-01T08:00:00+00:00",
        "rtl: fix reset",
        {"rtl/top.sv": TOP4, "docs/readme.md": README3, "rtl/rst.sv": RST4},
    ),
    (
        "2026-12-02T09:00:00+00:00",
        "tb: a test",
        {"rtl/top.sv": TOP4, "docs/readme.md": README3, "rtl/rst.sv": RST4, "tb/test.py": TEST5},
    ),
]


@dataclass
class Made:
    record: Record
    shas: list[str]
    repo_path: Path


def _admit(root: Path, name: str = "design") -> Record:
    manifest = root / "m.toml"
    manifest.write_text(
        f'id = "G"\nprofile = "triage"\n[[record]]\nid = "rtl"\nkind = "repository"\npath = "{name}"\n'
    )
    return load_scenario(manifest).records["rtl"]


@pytest.fixture
def made(tmp_path: Path) -> Made:
    repo = gitmade.init(tmp_path / "design")
    shas: list[bytes] = []
    for when, message, files in STATES:
        shas.append(gitmade.commit(repo, files, message, when, shas[-1:]))
    repo.refs[b"refs/heads/master"] = shas[-1]
    repo.refs[b"refs/heads/nightly"] = shas[2]
    gitmade.tag(repo, "v1.0", shas[1], annotated=True)
    gitmade.tag(repo, "light", shas[0])
    repo.close()
    return Made(_admit(tmp_path), [sha.decode() for sha in shas], tmp_path / "design")


def read(record: Record, since: str, until: str, paths: list[str] | None = None):
    args = ChangesArgs(repo="rtl", since=since, until=until, paths=paths)
    return changes.run(args, {"repo": record})


COMMIT_LINE = re.compile(r"(?P<sha>[0-9a-f]{8}) (?P<when>\S+) (?P<name>[^:]+): (?P<subject>.*)")
FILE_LINE = re.compile(r"  \+(?P<added>\d+) -(?P<deleted>\d+) (?P<path>.+)")


def parsed(excerpt) -> list[tuple[str, str, dict[str, tuple[int, int]]]]:
    """(short sha, subject, {path: (added, deleted)}) per commit shown, in order."""
    shown: list[tuple[str, str, dict[str, tuple[int, int]]]] = []
    for line in excerpt.lines:
        if found := COMMIT_LINE.fullmatch(line.text):
            shown.append((found["sha"], found["subject"], {}))
        elif found := FILE_LINE.fullmatch(line.text):
            shown[-1][2][found["path"]] = (int(found["added"]), int(found["deleted"]))
    return shown


def expected(made: Made, indexes: list[int]) -> list[tuple[str, str, dict[str, tuple[int, int]]]]:
    """What the commits at `indexes` (newest first) changed, from the states committed."""
    return [
        (
            made.shas[index][:8],
            STATES[index][1],
            gitmade.changed(STATES[index - 1][2] if index else {}, STATES[index][2]),
        )
        for index in indexes
    ]


def test_admission_pins_the_head_commit(made):
    assert made.record.kind == "repository"
    assert made.record.sha256 == made.shas[-1]


def test_a_folder_that_is_no_repository_is_refused(tmp_path):
    (tmp_path / "plain").mkdir()
    with pytest.raises(ManifestError, match="not a git repository"):
        _admit(tmp_path, "plain")


def test_since_a_tag_until_head_lists_newest_first_with_files_and_line_counts(made):
    excerpt = read(made.record, "v1.0", "HEAD")
    assert parsed(excerpt) == expected(made, [4, 3, 2])
    assert not excerpt.truncated
    assert excerpt.summary.startswith("3 commit(s)")


@pytest.mark.parametrize("form", ["full", "short", "branch"])
def test_since_by_sha_short_sha_or_branch(made, form):
    since = {"full": made.shas[2], "short": made.shas[2][:7], "branch": "nightly"}[form]
    assert parsed(read(made.record, since, "master")) == expected(made, [4, 3])


def test_until_a_commit_is_inclusive_and_since_a_lightweight_tag_exclusive(made):
    assert parsed(read(made.record, "light", made.shas[3][:10])) == expected(made, [3, 2, 1])


def test_dates_bound_by_commit_time(made):
    whole_day = parsed(read(made.record, "2026-11-29", "2026-12-01"))
    assert whole_day == expected(made, [3, 2, 1])
    before_eight = parsed(read(made.record, "2026-11-29T10:00:00Z", "2026-12-01T07:59:59Z"))
    assert before_eight == expected(made, [2])
    zoned = parsed(read(made.record, "2026-11-29T11:00+01:00", "2026-12-01T09:00+01:00"))
    assert zoned == expected(made, [3, 2])


@pytest.mark.parametrize(
    ("globs", "indexes"),
    [(["rtl/*.sv"], [3, 1]), (["docs"], [2]), (["**/*.py", "docs/*.md"], [4, 2]), (["x/*"], [])],
)
def test_paths_narrow_to_commits_touching_them(made, globs, indexes):
    assert parsed(read(made.record, "light", "HEAD", globs)) == expected(made, indexes)


def test_a_commit_made_after_admission_is_outside_the_pinned_history(made):
    repo = gitmade.Repo(str(made.repo_path))
    files = {**STATES[-1][2], "rtl/top.sv": TOP4 + b"late\n"}
    late = gitmade.commit(
        repo, files, "late", "2026-12-03T00:00:00+00:00", [made.shas[-1].encode()]
    )
    repo.refs[b"refs/heads/master"] = late
    repo.close()
    for until in (late.decode(), late.decode()[:9], "master"):
        with pytest.raises(RecordRefusal) as refused:
            read(made.record, "v1.0", until)
        assert refused.value.code == RefusalCode.INVALID_ARGUMENT
        assert "\n" not in refused.value.detail
    assert parsed(read(made.record, "v1.0", "HEAD")) == expected(made, [4, 3, 2])


@pytest.mark.parametrize("name", ["nope", "deadbeef00"])
def test_a_revision_not_found_is_refused_in_one_line(made, name):
    with pytest.raises(RecordRefusal) as refused:
        read(made.record, name, "HEAD")
    assert refused.value.code == RefusalCode.INVALID_ARGUMENT
    assert "\n" not in refused.value.detail


@pytest.mark.parametrize(
    "bad",
    ["HEAD~1", "a..b", "-x", "x y", "2026-13-01", "2026-12-01T08:00", "v1@{u}", "x.lock", ""],
)
def test_a_malformed_point_is_refused_by_the_model(bad):
    with pytest.raises(ValidationError):
        ChangesArgs(repo="rtl", since=bad, until="HEAD")


def test_globs_are_bounded_and_relative():
    with pytest.raises(ValidationError):
        ChangesArgs(repo="rtl", since="v1", until="HEAD", paths=["*"] * 17)
    for bad in ("/etc/*", "../x", "a\\b"):
        with pytest.raises(ValidationError):
            ChangesArgs(repo="rtl", since="v1", until="HEAD", paths=[bad])


def test_at_most_fifty_commits_are_shown_and_the_rest_counted(tmp_path):
    repo = gitmade.init(tmp_path / "design")
    shas: list[bytes] = []
    for n in range(60):
        files = {"log.txt": b"".join(b"entry %d\n" % k for k in range(n + 1))}
        shas.append(
            gitmade.commit(repo, files, f"c{n}", f"2026-11-01T00:{n:02d}:00+00:00", shas[-1:])
        )
    repo.refs[b"refs/heads/master"] = shas[-1]
    repo.close()
    excerpt = read(_admit(tmp_path), shas[0].decode(), "HEAD")
    shown = parsed(excerpt)
    assert [sha for sha, _, _ in shown] == [sha.decode()[:8] for sha in shas[:0:-1][:50]]
    assert all(files == {"log.txt": (1, 0)} for _, _, files in shown)
    assert excerpt.truncated
    assert "59 commit(s)" in excerpt.summary and "9 more not shown" in excerpt.summary


def test_a_commit_of_many_files_lists_the_first_and_counts_the_rest(tmp_path):
    repo = gitmade.init(tmp_path / "design")
    first = gitmade.commit(repo, {"a": b"x\n"}, "one", "2026-11-01T00:00:00+00:00", [])
    files = {f"f{n:02d}.txt": b"line\n" for n in range(25)}
    repo.refs[b"refs/heads/master"] = gitmade.commit(
        repo, files, "many", "2026-11-02T00:00:00+00:00", [first]
    )
    repo.close()
    excerpt = read(_admit(tmp_path), first.decode(), "HEAD")
    assert len(parsed(excerpt)[0][2]) == changes.MAX_FILES
    assert excerpt.lines[-1].text == f"  … {26 - changes.MAX_FILES} more file(s) not shown"
    assert excerpt.truncated


def test_a_repository_whose_git_folder_lies_outside_the_manifests_folder_is_refused(tmp_path):
    gitmade.one_commit(tmp_path / "outside", {"a": b"x\n"}, "2026-11-01T00:00:00+00:00")
    root = tmp_path / "root"
    (root / "design").mkdir(parents=True)
    (root / "design" / ".git").write_text(f"gitdir: {tmp_path / 'outside' / '.git'}\n")
    with pytest.raises(ManifestError, match="leaves the manifest's folder"):
        _admit(root)
