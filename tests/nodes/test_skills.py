"""Skills are methods, not permissions: a skill naming another profile's tool or a record outside
the grant is refused at load with its line; a model request carries the admitted text with its
sha256 in the manifest; the handover lists the versions that reached a model; scripts ignore them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from contract.errors import ManifestError
from scenario.registry import load_scenario
from scenario.skills import SHIPPED
from tests.cli_process import warrant
from tests.fake_openai import FakeOpenAI
from tests.helpers import R42_PARTS
from tests.nodes.choosers.test_model import route_env as route_env
from tests.nodes.choosers.test_model import run_model

METHOD = """\
+++
version = 3
profile = "triage"
title = "FIFO triage"
tools = ["searchlogs"]
+++
Search `cc/t.log` for the first UVM_ERROR with searchlogs.
{extra}
"""


def manifest_with_skill(root: Path, extra: str = "", *, front: str = "") -> Path:
    """The throwaway scenario of `scenario_dir` with one skill of its own, `team/fifo`."""
    (root / "skills" / "team").mkdir(parents=True, exist_ok=True)
    text = METHOD.format(extra=extra)
    if front:
        text = text.replace('tools = ["searchlogs"]', front)
    (root / "skills" / "team" / "fifo.md").write_text(text)
    path = root / "scenario.toml"
    path.write_text(
        'id = "CC"\nprofile = "triage"\ngoal = "Why did fifo_smoke fail?"\nskills = ["team/fifo"]\n'
        "[budget]\nsteps = 4\nevidence = 3\ndeadline_s = 120\n"
        '[[record]]\nid = "cc/t.log"\nkind = "log"\npath = "logs/t.log"\n'
        '[[record]]\nid = "cc/spec.md"\nkind = "spec"\npath = "spec.md"\n'
    )
    return path


def test_a_skill_is_admitted_with_its_version_and_hash(scenario_dir):
    scenario = load_scenario(manifest_with_skill(scenario_dir))
    (skill,) = scenario.skills
    assert (skill.id, skill.version, skill.title) == ("team/fifo", 3, "FIFO triage")
    assert skill.text.startswith("Search `cc/t.log`") and len(skill.sha256) == 64


@pytest.mark.parametrize(
    ("extra", "front", "message"),
    [
        (
            "Then run stasummary on it.",
            "",
            "line 8: names tool 'stasummary', which profile triage does not have",
        ),
        (
            "Also read lab/protected/design.txt first.",
            "",
            "line 8: asks for record 'lab/protected/design.txt', which the grant does not approve",
        ),
        (
            "",
            'tools = ["searchlogs", "stapaths"]',
            "tools ['stapaths'] are not in profile triage's catalog",
        ),
        ("", "tools = []\nprofile_extra = 1", "front matter"),
    ],
)
def test_a_skill_cannot_widen_the_catalog_or_the_grant(scenario_dir, extra, front, message):
    with pytest.raises(ManifestError, match="skill team/fifo") as refused:
        load_scenario(manifest_with_skill(scenario_dir, extra, front=front))
    assert message in str(refused.value)


def test_a_skill_for_another_profile_or_unknown_is_refused_in_one_line(scenario_dir, tmp_path):
    manifest = manifest_with_skill(scenario_dir, front="tools = []")
    skill = scenario_dir / "skills" / "team" / "fifo.md"
    skill.write_text(skill.read_text().replace('profile = "triage"', 'profile = "sta"'))
    result = warrant("run", str(manifest), "--db", "memory", cwd=tmp_path)
    assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1
    assert "it is for profile 'sta'" in result.stderr
    manifest.write_text(manifest.read_text().replace('"team/fifo"', '"team/nope"'))
    unknown = warrant("run", str(manifest), "--db", "memory", cwd=tmp_path)
    assert unknown.returncode == 2 and "unknown skill 'team/nope'" in unknown.stderr
    manifest.write_text(manifest.read_text().replace('"team/nope"', '"../team/fifo"'))
    escaping = warrant("run", str(manifest), "--db", "memory", cwd=tmp_path)
    assert escaping.returncode == 2 and "skills" in escaping.stderr


def test_the_model_is_shown_the_skill_with_its_hash_and_the_handover_says_so(
    route_env, scenario_dir
):
    manifest = manifest_with_skill(scenario_dir)
    server = FakeOpenAI([json.dumps({"summary": "s", "message": {"kind": "stop", "text": "done"}})])
    route_env(server)
    state = run_model(server, str(manifest))
    skill = load_scenario(manifest).skills[0]
    (prompt,) = server.prompts
    assert "## skills" in prompt and skill.text in prompt and "grant nothing" in prompt
    requested = next(e for e in state["events"] if e["type"] == "requested")
    assert requested["payload"]["manifest"]["skills"] == [
        {"id": "team/fifo", "version": 3, "sha256": skill.sha256}
    ]
    assert state["handover"]["skills"] == [
        {"id": "team/fifo", "version": 3, "sha256": skill.sha256}
    ]


def test_a_script_ignores_skills_and_the_handover_lists_none(scenario_dir, tmp_path):
    manifest = manifest_with_skill(scenario_dir)
    script = tmp_path / "s.jsonl"
    script.write_text(
        json.dumps({"summary": "s", "message": {"kind": "stop", "text": "done"}}) + "\n"
    )
    result = warrant(
        "run",
        str(manifest),
        "--chooser",
        f"file:{script}",
        "--db",
        "memory",
        "--json",
        "-q",
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    assert "skills" not in json.loads(result.stdout)


def test_the_shipped_skill_loads_against_r42(tmp_path):
    """lab/skills/triage/uvm-regression.md names only triage tools and no record."""
    assert (SHIPPED / "triage" / "uvm-regression.md").is_file()
    lab = Path(__file__).resolve().parents[2] / "lab"
    manifest = tmp_path / "R42.toml"
    manifest.write_text(
        (lab / "R42.toml")
        .read_text()
        .replace('profile = "triage"', 'profile = "triage"\nskills = ["triage/uvm-regression"]')
    )
    for name in R42_PARTS:
        shutil.copytree(lab / name, tmp_path / name)
    assert [skill.id for skill in load_scenario(manifest).skills] == ["triage/uvm-regression"]
