"""The per-call checks are one tuple, in the order `guards.decide`'s docstring documents."""

import re

import guards.decide
from guards import checks
from guards.checks import CALL_CHECKS

# The docstring's name of a numbered check → the tuple's entry that makes it.
DOCUMENTED = {
    "catalog": "in_catalog",
    "arguments": "arguments",
    "call identity": "call_identity",
    "records": "records",
    "repetition": "repetition",
}


def test_call_checks_run_in_the_documented_order() -> None:
    numbered = re.findall(r"^(\d+)\.\s+([a-z ]+?)\s+—", guards.decide.__doc__ or "", re.M)
    documented = [DOCUMENTED[name] for _, name in numbered if name in DOCUMENTED]
    assert len(documented) == len(DOCUMENTED)  # every per-call check is numbered there
    positions = [CALL_CHECKS._fields.index(name) for name in documented]
    assert positions == sorted(positions)


def test_each_entry_is_the_function_of_its_name() -> None:
    for name, check in zip(CALL_CHECKS._fields, CALL_CHECKS, strict=True):
        assert check is getattr(checks, name)
        assert check.__doc__
