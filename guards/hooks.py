"""Hooks: trusted code a scenario names, with no authority but to block a call or to narrow what
the model sees (seed 001 §12, figure 9).

- A pre-call hook gets a read-only view of a call the guard approved and of the run, and answers
  `ALLOW` or `Block(reason)`; a block is a refusal (`hook_blocked`) owned by `hook:<name>`. It
  cannot change the arguments, add calls or grant records: it is given copies, read-only.
- A post-call hook gets a copy of the receipt and answers a `Projection` (or None: unchanged),
  checked by `guards.narrowing`; a projection that rewrites a fact is refused
  (`hook_rewrote_fact`) and the model is shown no body. The receipt itself is never changed.
- An end hook gets copies of the handover and the ledger: it observes, its answer is ignored.

Deny by default: a hook that raises, answers anything else, or does not answer within its
`timeout_s` blocks (pre-call) or withholds (post-call), and that is recorded. A hook runs on a
thread of its own so that its time can be bounded; a hung hook's thread cannot be stopped and runs
on, as a daemon, after its time is up.
"""

from __future__ import annotations

import importlib
import importlib.util
import queue
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from types import MappingProxyType
from typing import Any

__all__ = ["ALLOW", "Allow", "Block", "CallView", "Projection", "ReceiptView", "RunView"]

from guards.hookapi import ALLOW, Allow, Block, CallView, Projection, ReceiptView, RunView
from guards.narrowing import lines_problem, narrowing_problem
from guards.redaction import RedactError, builtin_hook
from scenario.hookspec import HookEntry, RedactEntry
from scenario.registry import Scenario

ENTRY = re.compile(r"^([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*):([A-Za-z_]\w*)$")


class HookError(ValueError):
    """A hook a manifest names that cannot be loaded; the message says which and why."""


@dataclass(frozen=True)
class Hook:
    name: str
    when: str
    function: Callable[..., Any]
    timeout_s: float

    @property
    def owner(self) -> str:
        return f"hook:{self.name}"


def load_hooks(
    entries: Sequence[HookEntry], redact: Sequence[RedactEntry], folder: Path
) -> tuple[Hook, ...]:
    """The scenario's hooks, loaded: an entry `module:function` is a `module.py` beside the
    manifest if there is one, else an importable module. Raises `HookError` in one line."""
    hooks = []
    for entry in entries:
        if entry.builtin is not None:
            try:
                function = builtin_hook(entry.builtin, redact)
            except RedactError as error:
                raise HookError(str(error)) from None
        else:
            function = _function(entry.entry or "", str(folder))
        hooks.append(Hook(entry.hook_name, entry.when, function, entry.timeout_s))
    return tuple(hooks)


@cache
def _function(entry: str, folder: str) -> Callable[..., Any]:
    match = ENTRY.match(entry)
    if match is None:
        raise HookError(f"hook entry {entry!r} is not 'module:function'")
    module_name, name = match.groups()
    beside = Path(folder) / f"{module_name.replace('.', '/')}.py"
    try:
        if beside.is_file():
            spec = importlib.util.spec_from_file_location(f"warrant_hook_{module_name}", beside)
            if spec is None or spec.loader is None:
                raise HookError(f"hook module {beside} cannot be loaded")
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
        else:
            module = importlib.import_module(module_name)
    except HookError:
        raise
    except Exception as exc:  # trusted code, but its import errors are the user's to read
        raise HookError(
            f"hook module {module_name!r} cannot be loaded: {type(exc).__name__}: {exc}"
        ) from None
    function: Callable[..., Any] | None = getattr(module, name, None)
    if not callable(function):
        raise HookError(f"hook {entry!r}: {module_name} has no function {name!r}")
    return function


def run_hook(hook: Hook, *args: Any) -> tuple[str, Any]:
    """("returned", value), ("raised", why) or ("timed_out", None), within the hook's time."""
    answers: queue.SimpleQueue[tuple[str, Any]] = queue.SimpleQueue()

    def call() -> None:
        try:
            answers.put(("returned", hook.function(*args)))
        except BaseException as exc:  # a hook's failure is a decision: deny, and say which
            answers.put(("raised", type(exc).__name__))

    threading.Thread(target=call, name=f"warrant-hook-{hook.name}", daemon=True).start()
    try:
        return answers.get(timeout=hook.timeout_s)
    except queue.Empty:
        return ("timed_out", None)


def pre_call_block(hooks: Sequence[Hook], call: CallView, run: RunView) -> tuple[Hook, str] | None:
    """The first pre-call hook that blocks the call, and why; None if every one allows it. What
    the hook answered is read by exact type: a subclass could change after it is checked."""
    for hook in hooks:
        if hook.when != "pre_call":
            continue
        outcome, value = run_hook(hook, call, run)
        if outcome != "returned":
            return hook, _failure(hook, outcome, value)
        if type(value) is Block:
            reason = value.reason
            return hook, (reason[:500] if type(reason) is str and reason.strip() else "blocked")
        if type(value) is not Allow:
            return hook, "the hook answered neither ALLOW nor Block"
    return None


def narrowed(
    hooks: Sequence[Hook], receipt: ReceiptView, labels: frozenset[str] = frozenset()
) -> tuple[Projection | None, tuple[Hook, str] | None]:
    """What the model is shown of a receipt after the post-call hooks, each narrowing what the one
    before left: (None, None) with no post-call hook or none that changed it; (projection, None);
    or (None, (hook, why)) when one failed or rewrote a fact: then no body is shown. A hook's
    answer is copied, by exact types, before it is checked: what is checked is what is kept."""
    current = Projection(receipt.summary, receipt.lines)
    changed = False
    for hook in hooks:
        if hook.when != "post_call":
            continue
        view = ReceiptView(
            receipt.ref, receipt.tool, receipt.record, current.summary, current.lines
        )
        outcome, value = run_hook(hook, view)
        if outcome != "returned":
            return None, (hook, _failure(hook, outcome, value))
        if value is None:
            continue
        answer = _copied(value)
        if answer is None:
            return None, (hook, "the hook answered something other than a Projection of text lines")
        if problem := _projection_problem(current, answer, labels):
            return None, (hook, problem)
        current, changed = answer, True
    return (current if changed else None), None


def _failure(hook: Hook, outcome: str, value: Any) -> str:
    """Why a hook that did not answer denies, in fixed words: its exception's message (text the
    hook chose, perhaps from the record) is not repeated where the model may read it."""
    if outcome == "timed_out":
        return f"the hook did not answer within {hook.timeout_s:g}s"
    return f"the hook raised {value}"


def _copied(value: object) -> Projection | None:
    """A Projection of exact types, copied; None for anything else (a subclass of str could
    compare equal to anything, a list could change after it is checked)."""
    if type(value) is not Projection:
        return None
    summary, lines = value.summary, value.lines
    if type(summary) is not str or type(lines) not in (tuple, list):
        return None
    copied = tuple(lines)
    if not all(
        type(line) is tuple and len(line) == 2 and type(line[0]) is int and type(line[1]) is str
        for line in copied
    ):
        return None
    return Projection(str(summary), tuple((int(number), str(text)) for number, text in copied))


def _projection_problem(
    before: Projection, after: Projection, labels: frozenset[str]
) -> str | None:
    if problem := narrowing_problem(before.summary, after.summary, labels):
        return f"summary: {problem}"
    return lines_problem(before.lines, after.lines, labels)


def end_outcomes(hooks: Sequence[Hook], handover: Any, ledger: Any) -> list[dict[str, str]]:
    """Each end hook run on its own copies; what it did is recorded, nothing it returns is used."""
    outcomes = []
    for hook in hooks:
        if hook.when == "end":
            outcome, value = run_hook(hook, frozen(handover), frozen(ledger))
            outcomes.append(
                {"hook": hook.name, "outcome": outcome}
                | ({"error": value} if outcome == "raised" else {})
            )
    return outcomes


def frozen(value: Any) -> Any:
    """A read-only deep copy of JSON-like data: mappings as `MappingProxyType`, lists as tuples."""
    if isinstance(value, Mapping):
        return MappingProxyType({key: frozen(item) for key, item in value.items()})
    if isinstance(value, list | tuple):
        return tuple(frozen(item) for item in value)
    return value


def scenario_hooks(scenario: Scenario) -> tuple[Hook, ...]:
    """A scenario's hooks, loaded from beside its manifest (none: nothing is imported)."""
    if not scenario.hooks:
        return ()
    return load_hooks(scenario.hooks, scenario.redact, Path(scenario.manifest).parent)
