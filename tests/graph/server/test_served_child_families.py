"""A delegated child's family call over a real `langgraph dev`: the child granted every member
triages the family and the run hands over; one granted a member is refused the family, and the
run still hands over (the child runs asynchronously there: `graph.children.arun_child`)."""

from __future__ import annotations

import pytest
from langgraph_sdk import get_sync_client

from contract.codes import RefusalCode, Status
from tests.graph.test_child_families import MEMBERS, TRIAGE, assert_triaged_by_child, scenario
from tests.helpers import stop

pytestmark = pytest.mark.slow  # a real server


def served_handover(server_url: str, manifest: str) -> dict:
    client = get_sync_client(url=server_url)
    thread = client.threads.create()
    return client.runs.wait(thread["thread_id"], "triage", input={"scenario": manifest})["handover"]


def test_a_served_child_triages_the_family_it_is_granted_whole(server_url, tmp_path_factory):
    folder = tmp_path_factory.getbasetemp() / "served" / "childfam"
    folder.mkdir(parents=True)
    manifest = scenario(folder, MEMBERS, [TRIAGE, stop("child done")])
    assert_triaged_by_child(served_handover(server_url, str(manifest)), folder)


def test_a_served_child_granted_one_member_is_refused_the_family(server_url, tmp_path_factory):
    folder = tmp_path_factory.getbasetemp() / "served" / "childone"
    folder.mkdir(parents=True)
    manifest = scenario(folder, MEMBERS[:1], [TRIAGE, stop("child done")])
    handover = served_handover(server_url, str(manifest))
    assert handover["status"] == Status.STOPPED and handover["evidence"] == []
    [child] = handover["children"]
    assert [refusal["code"] for refusal in child["refusals"]] == [RefusalCode.UNAPPROVED_RECORD]
