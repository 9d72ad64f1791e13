"""Who may open a published revision: its owner, or a reader granted that exact run and revision;
nobody else, whatever the grants of other readers, reports or revisions."""

from hypothesis import given
from hypothesis import strategies as st

from guards.sharing import Share, read_refusal

NAMES = st.sampled_from(["alice", "bob", "carol", "dave"])
THREADS = st.sampled_from(["R", "R2", "R3", "S"])
SHARES = st.builds(
    Share,
    to=NAMES,
    thread=THREADS,
    report=st.sampled_from(["R", "S"]),
    revision=st.integers(1, 3),
    by=NAMES,
    at=st.just(0.0),
)


@given(reader=NAMES, shares=st.lists(SHARES, max_size=8))
def test_a_reader_opens_only_with_a_grant_of_this_run_and_revision(reader, shares):
    refusal = read_refusal(reader, "alice", "R2", "R", 2, shares)
    granted = any((s.to, s.thread, s.report, s.revision) == (reader, "R2", "R", 2) for s in shares)
    assert (refusal is None) == (reader == "alice" or granted)


def test_the_owner_needs_no_grant():
    assert read_refusal("alice", "alice", "R", "R", 1, []) is None


def test_a_grant_of_another_revision_is_named():
    shares = [Share("bob", "R", "R", 1, "alice", 0.0)]
    assert read_refusal("bob", "alice", "R2", "R", 2, shares) == (
        "bob was granted revision 1 of report R, not revision 2"
    )


def test_a_reader_with_no_grant_is_told_who_may_open_it():
    assert read_refusal("carol", "alice", "R", "R", 1, []) == (
        "only its owner (alice) or a reader it was shared with may open revision 1 of report R"
    )


def test_a_grant_naming_the_revision_but_another_run_opens_nothing():
    forged = [Share("bob", "X", "R", 2, "alice", 0.0)]
    assert read_refusal("bob", "alice", "R2", "R", 2, forged) is not None


def test_no_reader_is_no_one():
    assert read_refusal("", "", "R", "R", 1, [Share("", "R", "R", 1, "", 0.0)]) == "no reader named"
