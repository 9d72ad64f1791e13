"""A post-call hook may only narrow: masks over whole stretches and dropped lines are accepted,
any other change — a digit, a word, a mask cutting a number, a line added or moved — is refused."""

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from guards.hookapi import Projection, ReceiptView
from guards.hooks import Hook, narrowed
from guards.narrowing import lines_problem, narrowing_problem
from guards.redaction import BUILTINS, _compiled, mask_labels, masked

LABELS = frozenset({"email"})

TOKENS = st.sampled_from(
    [
        "slack",
        "-0.25",
        "12",
        "u_core/reg[3]",
        "2026-11-27",
        "12:30:45",
        "é",
        "[X]",
        "a@b.io",
        "VIOLATED",
        "(MET)",
    ]
)
SPACES = st.sampled_from([" ", "  ", "\t", ": ", ", "])
MASKS = st.sampled_from(["█", "███", "[redacted]", "[redacted:email]"])


@st.composite
def lines_with_masks(draw):
    """A line of tokens, and the same line with some whole tokens masked."""
    tokens = draw(st.lists(TOKENS, min_size=1, max_size=12))
    gaps = draw(st.lists(SPACES, min_size=len(tokens) - 1, max_size=len(tokens) - 1))
    masked_at = draw(st.sets(st.integers(0, len(tokens) - 1)))
    original, narrowed = tokens[0], draw(MASKS) if 0 in masked_at else tokens[0]
    for index, (gap, token) in enumerate(zip(gaps, tokens[1:], strict=True), 1):
        original += gap + token
        narrowed += gap + (draw(MASKS) if index in masked_at else token)
    return original, narrowed


@settings(max_examples=300)
@given(lines_with_masks())
def test_whole_tokens_masked_are_always_accepted(pair):
    original, narrowed_text = pair
    assert narrowing_problem(original, narrowed_text, LABELS) is None


@settings(max_examples=300)
@given(lines_with_masks(), st.data())
def test_a_changed_digit_or_an_added_word_is_always_refused(pair, data):
    original, narrowed = pair
    digits = [index for index, char in enumerate(narrowed) if char.isdigit()]
    if digits and data.draw(st.booleans()):
        at = data.draw(st.sampled_from(digits))
        changed = narrowed[:at] + str((int(narrowed[at]) + 1) % 10) + narrowed[at + 1 :]
    else:
        at = data.draw(st.integers(0, len(narrowed)))
        changed = narrowed[:at] + " unverified " + narrowed[at:]
    assume(changed != narrowed)
    assert narrowing_problem(original, changed, LABELS) is not None


def test_a_mask_may_not_cut_a_number():
    assert narrowing_problem("slack -0.25", "slack -0.█5") is not None
    assert narrowing_problem("id 125 ok", "id 1█ ok") is not None
    assert narrowing_problem("id 125 ok", "id █ ok") is None
    assert narrowing_problem("amount: 1.5", "amount: 1█5") is not None
    assert narrowing_problem("1 25", "1█25") is not None  # would read as one number
    assert narrowing_problem("at 12:30:45", "at 12:█") is not None


def test_a_mask_label_is_one_the_scenario_declares():
    assert narrowing_problem("status: denied", "status: [redacted:approved-by-cfo]") is not None
    assert narrowing_problem("mail x@y.io", "mail [redacted:email]", LABELS) is None
    assert narrowing_problem("mail x@y.io", "mail [redacted]") is None


def test_lines_may_be_dropped_never_added_moved_or_renumbered():
    lines = [(3, "a 1"), (7, "b 2"), (9, "c 3")]
    assert lines_problem(lines, [(3, "a █"), (9, "c 3")]) is None
    assert lines_problem(lines, [(9, "c 3"), (3, "a 1")]) is not None
    assert lines_problem(lines, [(4, "a 1")]) is not None
    assert lines_problem(lines, [(3, "a 1"), (3, "a 1")]) is not None
    worst_first = [(900, "slack -0.5"), (120, "slack -0.1")]  # a receipt's own order is kept
    assert lines_problem(worst_first, [(120, "slack -0.1"), (900, "slack -0.5")]) is not None
    assert lines_problem(worst_first, [(120, "slack -0.1")]) is None


class Always(str):
    def __eq__(self, other):
        return True

    __hash__ = str.__hash__


def _hooked(function) -> tuple:
    receipt = ReceiptView("E1", "searchlogs", "r", "1 line", ((1, "status: denied"),))
    return narrowed([Hook("h", "post_call", function, 1.0)], receipt)


def test_a_projection_is_copied_by_exact_types_before_it_is_checked():
    assert _hooked(lambda r: Projection(Always("total 999, refund approved"), r.lines))[0] is None
    assert _hooked(lambda r: Projection(r.summary, ((1, Always("approved")),)))[0] is None
    shared = [(1, "status: denied")]
    projection, failed = _hooked(lambda r: Projection(r.summary, shared))
    shared[:] = [(1, "status: approved")]  # changed after the check: the copy was kept
    assert failed is None and projection.lines == ((1, "status: denied"),)


def test_a_failing_hook_is_said_in_fixed_words():
    def raises(receipt):
        raise ValueError(receipt.lines[0][1])

    assert _hooked(raises)[1][1] == "the hook raised ValueError"


def test_builtin_masks_are_narrowings_and_keep_timestamps():
    patterns = _compiled(BUILTINS["secrets"] + BUILTINS["emails"] + BUILTINS["ips"])
    text = "12:30:45 user=ann@corp.io ip=10.0.0.17 v6=fe80::1 token=abc123 key AKIAABCDEFGHIJKLMNOP"
    result = masked(text, patterns)
    assert result == (
        "12:30:45 user=[redacted:email] ip=[redacted:ip] v6=[redacted:ip] "
        "[redacted:secret] key [redacted:aws-key]"
    )
    assert narrowing_problem(text, result, mask_labels(())) is None
    assert (
        masked("std::vector at 2026-11-27T12:30:45", patterns)
        == "std::vector at 2026-11-27T12:30:45"
    )
