"""A glob family's members are kept in the store (`ledger.members`): the grant in state names them
by digest, and the grant read back is the grant as admitted, in its order, on every store, from a
process that never saw it (the cache forgotten). A members item changed in the store is not the
run's: the nodes refuse to use it, the executor reads no member, readers show the grant as kept.

Ground truth: the manifest's records in order are listed from the folders themselves, and the
grant as admitted is `load_scenario`'s."""

from __future__ import annotations

import re
import textwrap
from collections.abc import Iterator
from hashlib import sha256
from pathlib import Path

import pytest
from langgraph.store.base import BaseStore, PutOp

from contract.errors import RecordRefusal
from ledger.members import (
    FAMILIES,
    STORED,
    MembersMissing,
    forget_members,
    full_grant,
    kept_apart,
    scenario_of,
    with_members,
)
from ledger.persistence.savers import open_saver
from nodes.execute import _family
from scenario.registry import load_scenario


@pytest.fixture(params=["memory", "sqlite", "postgres"])
def store(request, tmp_path: Path) -> Iterator[BaseStore]:
    db = {"memory": "memory", "sqlite": str(tmp_path / "runs.sqlite")}.get(request.param)
    with open_saver(db or request.getfixturevalue("postgres_url")) as storage:
        yield storage.store


@pytest.fixture(autouse=True)
def _forgotten() -> Iterator[None]:
    forget_members()
    yield
    forget_members()


def scenario(root: Path) -> Path:
    """A manifest with single records before, between and after two globs."""
    for folder, count in (("a", 3), ("b", 25)):
        (root / folder).mkdir(parents=True)
        for index in range(count):
            (root / folder / f"m{index:02d}.log").write_text(f"TEST PASSED {folder}{index}\n")
    for name in ("first.log", "middle.log", "last.log"):
        (root / name).write_text(f"{name}\n")
    manifest = root / "scenario.toml"
    single = 'id = "{0}"\nkind = "log"\npath = "{0}"'
    manifest.write_text(
        textwrap.dedent("""\
        id = "MIX"
        profile = "triage"
        goal = "Which failed?"
        """)
        + "\n".join(
            f"[[record]]\n{table}"
            for table in (
                single.format("first.log"),
                'glob = "a/*.log"\nkind = "log"',
                single.format("middle.log"),
                'glob = "b/*.log"\nkind = "log"',
                single.format("last.log"),
            )
        )
        + "\n"
    )
    return manifest


def in_manifest_order(root: Path) -> list[str]:
    """The record ids as the manifest names them, from the folders' own listings."""
    a = sorted(f"a/{path.name}" for path in (root / "a").iterdir())
    b = sorted(f"b/{path.name}" for path in (root / "b").iterdir())
    return ["first.log", *a, "middle.log", *b, "last.log"]


def admitted(root: Path, store: BaseStore) -> tuple[dict, dict]:
    """The grant as admitted, and as the run's state keeps it (its members written to `store`)."""
    grant = load_scenario(scenario(root)).model_dump(mode="json")
    kept, puts = kept_apart(grant)
    store.batch(puts)
    forget_members()  # read back as another process would
    return grant, kept


def test_the_state_keeps_no_member_and_the_grant_read_back_is_the_one_admitted(tmp_path, store):
    grant, kept = admitted(tmp_path, store)
    assert set(kept["records"]) == {"first.log", "middle.log", "last.log"}
    assert set(kept[STORED]) == {"a/*.log", "b/*.log"} and "families" not in kept
    back = full_grant(kept, store)
    assert back == grant
    assert list(back) == list(grant)  # its fields in their order
    assert list(back["records"]) == in_manifest_order(tmp_path)
    assert scenario_of(kept, store) == load_scenario(tmp_path / "scenario.toml")


def test_a_grant_without_a_family_is_kept_as_it_is(tmp_path, store):
    (tmp_path / "t.log").write_text("x\n")
    (tmp_path / "s.toml").write_text(
        'id = "ONE"\nprofile = "triage"\ngoal = "g"\n'
        '[[record]]\nid = "t.log"\nkind = "log"\npath = "t.log"\n'
    )
    grant = load_scenario(tmp_path / "s.toml").model_dump(mode="json")
    assert kept_apart(grant) == (grant, [])
    assert full_grant(grant, store) == grant


def family_task(grant: dict, glob: str, digest: str) -> dict:
    """An execute task of a call on the family `glob`, approved with the family's digest as the
    receipt defines it (each member's id and sha256, in order), computed here from the grant."""
    members = [record for record in grant["records"].values() if glob[:2] == record["id"][:2]]
    lines = "".join(f"{record['id']}\t{record['sha256']}\n" for record in members)
    return {
        "call": {
            "family": {"name": glob, "glob": glob, "sha256": sha256(lines.encode()).hexdigest()}
        },
        "members_digest": digest,
        "manifest": grant["manifest"],
        "manifest_sha256": grant["manifest_sha256"],
    }


def test_a_members_item_changed_in_the_store_is_not_used(tmp_path, store):
    grant, kept = admitted(tmp_path, store)
    digest = kept[STORED]["b/*.log"]["members"]
    task = family_task(grant, "b/*.log", digest)
    read = _family(task, store)  # type: ignore[arg-type]
    assert read is not None and [m.id for m in read.members] == in_manifest_order(tmp_path)[5:-1]
    forged = [dict(record) for record in grant["records"].values() if record["id"][:2] == "b/"]
    forged[0]["sha256"] = "0" * 64  # a member's pinned digest replaced
    store.batch([PutOp(FAMILIES, digest, {"members": forged}, index=False)])
    forget_members()
    with pytest.raises(MembersMissing, match=re.escape("b/*.log")):
        full_grant(kept, store)
    with pytest.raises(MembersMissing):
        scenario_of(kept, store)
    assert with_members(store, {"grant": kept}) == {"grant": kept}  # a reader shows it as kept
    with pytest.raises(RecordRefusal) as refused:
        _family(task, store)  # type: ignore[arg-type]
    assert refused.value.code == "record_changed"


def test_a_members_item_the_store_lacks_is_missing(tmp_path, store):
    grant = load_scenario(scenario(tmp_path)).model_dump(mode="json")
    kept, _ = kept_apart(grant)  # never written
    forget_members()
    with pytest.raises(MembersMissing, match=re.escape("a/*.log")):
        full_grant(kept, store)
