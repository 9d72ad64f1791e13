"""searchdocs' versions and indexes kept in the process: a second search of the same specs reads no
PDF text and says the same; a spec changed since is still refused; bytes that are not the admitted
version are searched once and never kept. What is expected is the text the test wrote."""

import os
import shutil

import pytest

from contract.errors import RecordRefusal
from scenario.reading import reading
from scenario.registry import Record, load_scenario
from tests.tools.specs.test_searchdocs import CLOCKS, candidates, scenario, search, specs_manifest
from tools.specs import docindex


@pytest.fixture(autouse=True)
def nothing_kept():
    docindex.forget()
    yield
    docindex.forget()


def _rewrite(record: Record, old: bytes, new: bytes) -> None:
    """The file's bytes with `old` replaced by `new` (as long), its mtime put back: only its
    ctime tells, as after a careless editor."""
    with open(record.path, "rb") as handle:
        data = handle.read()
    assert len(old) == len(new) and old in data
    with open(record.path, "wb") as handle:
        handle.write(data.replace(old, new))
    os.utime(record.path, ns=(record.mtime_ns, record.mtime_ns))


def test_a_second_search_reads_no_pdf_and_says_the_same(tmp_path, monkeypatch):
    loaded = scenario(tmp_path)
    first = search(loaded, "clk_en enable")
    read_pdfs = []
    monkeypatch.setattr(
        docindex, "page_texts", lambda *args: read_pdfs.append(args) or pytest.fail("read")
    )
    with reading(None) as session:
        again = search(loaded, "clk_en enable")
        session.verify()
    assert again == first and read_pdfs == []
    assert ("manual.pdf", "page 2") in candidates(again)


def test_a_spec_changed_after_its_version_was_kept_is_refused(tmp_path):
    loaded = scenario(tmp_path)
    search(loaded, "clk_en")
    _rewrite(loaded.records["clocks.md"], b"# Clocks", b"# Clucks")
    with reading(None) as session, pytest.raises(RecordRefusal) as refused:
        search(loaded, "clk_en")
        session.verify()
    assert refused.value.code == "record_changed"


def test_bytes_other_than_the_admitted_version_are_searched_once_and_never_kept(tmp_path):
    loaded = scenario(tmp_path)
    record = loaded.records["clocks.md"]
    _rewrite(record, b"clk_en gates", b"clk_xx gates")
    with reading(None) as session, pytest.raises(RecordRefusal) as refused:
        assert candidates(search(loaded, "clk_xx")) == [("clocks.md", "section 'Clock enable'")]
        session.verify()
    assert refused.value.code == "record_changed"
    _rewrite(record, b"clk_xx gates", b"clk_en gates")
    with reading(None) as session:
        excerpt = search(loaded, "clk_xx")
        session.verify()
    assert "clk_xx" not in CLOCKS and candidates(excerpt) == []


def test_two_records_of_one_version_are_each_named(tmp_path):
    scenario(tmp_path)
    shutil.copy(tmp_path / "manual.pdf", tmp_path / "copy.pdf")
    manifest = specs_manifest(tmp_path / "two.toml", "manual.pdf", "copy.pdf")
    loaded = load_scenario(manifest)
    assert sorted(candidates(search(loaded, "clk_en"))) == [
        ("copy.pdf", "page 2"),
        ("manual.pdf", "page 2"),
    ]
