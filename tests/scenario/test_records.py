import os
from pathlib import Path

import pytest

from contract.errors import ManifestError, RecordRefusal
from scenario.reading import open_record
from scenario.registry import load_scenario
from tests.helpers import write_manifest


def manifest_with_path(root: Path, path: str, kind: str = "log") -> Path:
    manifest = root / "m.toml"
    manifest.write_text(
        f'id = "M"\nprofile = "triage"\n[[record]]\nid = "x"\nkind = "{kind}"\npath = "{path}"\n'
    )
    return manifest


def test_lab_scenario_pins_each_record_with_its_sha256(r42):
    record = r42.records["lab/runs/R42/reset_smoke.log"]
    assert record.kind == "log"
    assert len(record.sha256) == 64
    assert "lab/protected/design.txt" not in r42.records
    assert r42.budget.steps == 8


@pytest.mark.parametrize(
    "path",
    [
        "../secret.txt",
        "logs/../../secret.txt",
        "/etc/passwd",
        "~/secret.txt",
        "logs\\t.log",
        "C:/x.log",
    ],
)
def test_a_path_that_leaves_the_folder_is_refused(scenario_dir, path):
    with pytest.raises(ManifestError, match="record 'x'"):
        load_scenario(manifest_with_path(scenario_dir, path))


def test_a_symlink_pointing_outside_is_refused(scenario_dir):
    os.symlink(scenario_dir.parent / "secret.txt", scenario_dir / "link.log")
    with pytest.raises(ManifestError, match="leaves the manifest's folder"):
        load_scenario(manifest_with_path(scenario_dir, "link.log"))


def test_a_symlink_inside_the_folder_is_admitted(scenario_dir):
    os.symlink(scenario_dir / "logs" / "t.log", scenario_dir / "alias.log")
    scenario = load_scenario(manifest_with_path(scenario_dir, "alias.log"))
    assert scenario.records["x"].path == str((scenario_dir / "logs" / "t.log").resolve())


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("id = 'M'\nprofile = 'triage'\n", "record"),
        (
            "id = 'M'\nprofile = 'nope'\n[[record]]\nid='x'\nkind='log'\npath='logs/t.log'\n",
            "profile",
        ),
        (
            "id = 'M'\nprofile = 'triage'\n[[record]]\nid='x'\nkind='pdf'\npath='logs/t.log'\n",
            "kind",
        ),
        (
            "id = 'M'\nprofile = 'triage'\n[[record]]\nid='x'\nkind='log'\npath='nope.log'\n",
            "does not exist",
        ),
        (
            "id = 'M'\nprofile = 'triage'\n[[record]]\nid='x'\nkind='log'\npath='logs'\n",
            "not a regular file",
        ),
        (
            "id = 'M'\nprofile = 'triage'\n[budget]\nsteps = true\n[[record]]\nid='x'\nkind='log'\npath='logs/t.log'\n",
            "steps",
        ),
        (
            "id = 'M'\nprofile = 'triage'\nextra = 1\n[[record]]\nid='x'\nkind='log'\npath='logs/t.log'\n",
            "extra",
        ),
        (
            "id = 'M'\nprofile = 'triage'\n[[record]]\nid='x'\nkind='history'\npath='logs/t.log'\n",
            "header",
        ),
        ("id = 'M' = ", "invalid TOML"),
        (
            "id = '../M'\nprofile = 'triage'\n[[record]]\nid='x'\nkind='log'\npath='logs/t.log'\n",
            "id",
        ),
    ],
)
def test_bad_manifests_are_refused_with_one_line(scenario_dir, body, message):
    manifest = scenario_dir / "bad.toml"
    manifest.write_text(body)
    with pytest.raises(ManifestError, match=message) as caught:
        load_scenario(manifest)
    assert "\n" not in str(caught.value)


def test_duplicate_record_ids_are_refused(scenario_dir):
    manifest = write_manifest(
        scenario_dir, '[[record]]\nid = "cc/t.log"\nkind = "log"\npath = "logs/t.log"\n'
    )
    with pytest.raises(ManifestError, match="appears twice"):
        load_scenario(manifest)


def test_a_missing_manifest_is_a_manifest_error(tmp_path):
    with pytest.raises(ManifestError, match="cannot read manifest"):
        load_scenario(tmp_path / "absent.toml")


@pytest.mark.parametrize(
    "requested",
    [
        "lab/protected/design.txt",
        "lab/runs/R43/reset_smoke.log",
        "LAB/RUNS/R42/RESET_SMOKE.LOG",
        "lab/runs/R42/reset_smoke.log ",
        "./lab/runs/R42/reset_smoke.log",
        "lab/runs/R42/../R42/reset_smoke.log",
        "runs/R42/reset_smoke.log",
        "lab%2Fruns%2FR42%2Freset_smoke.log",
    ],
)
def test_lookup_takes_exact_ids_only(r42, requested):
    with pytest.raises(RecordRefusal) as caught:
        r42.lookup(requested, "log", "searchlogs")
    assert caught.value.code == "unapproved_record"


def test_lookup_finds_the_exact_id(r42):
    assert r42.lookup("lab/runs/R42/reset_smoke.log", "log", "searchlogs").kind == "log"


def test_lookup_of_another_kind_is_an_invalid_argument(r42):
    with pytest.raises(RecordRefusal) as caught:
        r42.lookup("lab/runs/R42/reset_smoke.log", "spec", "readspec")
    assert caught.value.code == "invalid_argument"


def test_a_record_changed_after_admission_is_not_read(scenario_dir):
    scenario = load_scenario(write_manifest(scenario_dir))
    (scenario_dir / "logs" / "t.log").write_text("rewritten after admission\n")
    with pytest.raises(RecordRefusal) as caught, open_record(scenario.records["cc/t.log"]):
        pass
    assert caught.value.code == "record_changed"


def test_a_record_swapped_for_a_symlink_is_not_read(scenario_dir):
    scenario = load_scenario(write_manifest(scenario_dir))
    log = scenario_dir / "logs" / "t.log"
    log.unlink()
    os.symlink(scenario_dir.parent / "secret.txt", log)
    with pytest.raises(RecordRefusal) as caught, open_record(scenario.records["cc/t.log"]):
        pass
    assert caught.value.code == "record_unavailable"


def test_a_huge_spec_is_refused_at_load(scenario_dir):
    with (scenario_dir / "huge.md").open("wb") as handle:
        handle.truncate(40 << 20)  # sparse: no 40 MiB written
    with pytest.raises(ManifestError, match="larger than 32 MiB"):
        load_scenario(manifest_with_path(scenario_dir, "huge.md", kind="spec"))


def test_a_manifest_is_read_again_at_each_load(scenario_dir):
    """Parsed documents are reused by their bytes: an edit between two loads is always seen,
    and a loaded scenario's script is the loader's own copy."""
    manifest = write_manifest(scenario_dir, '[[script]]\nsummary = "first"\n')
    first = load_scenario(manifest)
    first.script[0]["summary"] = "changed by a caller"
    assert load_scenario(manifest).script[0]["summary"] == "first"
    manifest.write_text(manifest.read_text().replace('"first"', '"second"'))
    assert load_scenario(manifest).script[0]["summary"] == "second"
    manifest.write_text(manifest.read_text().replace("[[record]]", "[[recrd]]", 1))
    with pytest.raises(ManifestError, match="recrd"):
        load_scenario(manifest)


def test_a_history_header_after_a_bom_is_admitted(scenario_dir):
    (scenario_dir / "bom.csv").write_bytes(b"\xef\xbb\xbfrun,date,test,status\nR1,d,t,PASS\n")
    scenario = load_scenario(manifest_with_path(scenario_dir, "bom.csv", kind="history"))
    assert scenario.records["x"].kind == "history"


def test_a_quoted_history_header_is_read_as_csv(scenario_dir):
    (scenario_dir / "quoted.csv").write_text('"run","date","test","status"\nR1,d,t,PASS\n')
    scenario = load_scenario(manifest_with_path(scenario_dir, "quoted.csv", kind="history"))
    assert scenario.records["x"].kind == "history"
