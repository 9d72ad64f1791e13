"""Deciding a delegation: child investigations over a subset of the grant, each with a budget
carved out of what the run has left (never added to it). Pure; the guard calls it for a
`delegate` message, and whatever it refuses, no child starts.

Checks, in this order (the first that fails for the message, then each task):
depth (`delegation_too_deep`), count (`too_many_children`), task ids not delegated before in this
run (`duplicate_task_id`), records exact ids of the grant (`unapproved_record`; a family's glob is
not a record: a task is granted a family by naming each of its members), and the budgets together
within what is left (`child_budget_exceeded`).
"""

from __future__ import annotations

from collections.abc import Container, Sequence
from dataclasses import dataclass
from typing import Any

from contract.codes import Owner
from guards.action import DelegateMessage, DelegateTask
from guards.refusals import Refusal, RefusalCode
from scenario.manifest import Budget
from scenario.registry import Scenario


@dataclass(frozen=True)
class Room:
    """What the delegating run has left to carve, once the delegating choice itself is counted."""

    steps: int
    evidence: int
    questions: int


def delegation_refusals(
    message: DelegateMessage,
    scenario: Scenario,
    room: Room,
    depth: int,
    delegated: Container[str],
) -> list[Refusal]:
    """Why this delegation may not start (empty: it may)."""
    limits = scenario.children
    if depth >= limits.depth:
        detail = (
            f"this run is at depth {depth}; scenario {scenario.id} allows delegation"
            f" {limits.depth} level(s) deep"
        )
        return [Refusal(RefusalCode.DELEGATION_TOO_DEEP, Owner.GUARD, detail)]
    if len(message.tasks) > limits.max:
        detail = f"{len(message.tasks)} tasks; scenario {scenario.id} allows {limits.max} at once"
        return [Refusal(RefusalCode.TOO_MANY_CHILDREN, Owner.GUARD, detail)]
    refusals = [
        refusal for task in message.tasks if (refusal := _task_refusal(task, scenario, delegated))
    ]
    return refusals or _carving_refusals(message.tasks, room)


def _task_refusal(
    task: DelegateTask, scenario: Scenario, delegated: Container[str]
) -> Refusal | None:
    offending = task.model_dump()
    if task.id in delegated:
        detail = f"task id {task.id!r} was already delegated in this run"
        return Refusal(RefusalCode.DUPLICATE_TASK_ID, Owner.GUARD, detail, offending)
    outside = [record for record in task.records if record not in scenario.records]
    if outside:
        return Refusal(
            RefusalCode.UNAPPROVED_RECORD,
            Owner.GUARD,
            _outside(task, outside[0], scenario),
            offending,
        )
    return None


def _outside(task: DelegateTask, named: str, scenario: Scenario) -> str:
    members = scenario.families.get(named)
    if members is None:
        return f"task {task.id!r} names {_clip(named)}, not an approved record of scenario {scenario.id}"
    return (
        f"task {task.id!r} names {_clip(named)}, a record family of scenario {scenario.id}, not a"
        f" record: a task is granted a family by naming each of its {len(members)} member(s)"
    )


def _carving_refusals(tasks: Sequence[DelegateTask], room: Room) -> list[Refusal]:
    asked = {
        "steps": sum(task.budget.steps for task in tasks),
        "evidence": sum(task.budget.evidence for task in tasks),
        "questions": sum(task.budget.questions for task in tasks),
    }
    left = {"steps": room.steps, "evidence": room.evidence, "questions": room.questions}
    over = [name for name in asked if asked[name] > left[name]]
    if not over:
        return []
    detail = "; ".join(
        f"the tasks ask for {asked[name]} {name}, {max(left[name], 0)} left to carve"
        for name in over
    )
    return [Refusal(RefusalCode.CHILD_BUDGET_EXCEEDED, Owner.GUARD, detail)]


def child_scenario(scenario: Scenario, task: DelegateTask) -> Scenario:
    """The grant a child runs under: the task's records only, the families every member of which
    is among them (deny by default: a family part-granted would read records the task was not
    granted), its carved budget (the run's deadline and call limit), its goal, and the scripted
    children's documents for its id. No memory: recalling and proposing notes stay with the
    delegating run, whose refs a child's `M` refs would not be."""
    carved = Budget(
        steps=task.budget.steps,
        evidence=task.budget.evidence,
        questions=task.budget.questions,
        deadline_s=scenario.budget.deadline_s,
        call_s=scenario.budget.call_s,
    )
    granted = set(task.records)
    return scenario.model_copy(
        update={
            "goal": task.goal,
            "unknowns": (),
            "budget": carved,
            "records": {record: scenario.records[record] for record in task.records},
            "families": {
                glob: members
                for glob, members in scenario.families.items()
                if granted.issuperset(members)
            },
            "script": tuple(child_script(scenario.children.script, task.id)),
            "memory": None,
        }
    )


def child_script(script: Sequence[dict[str, Any]], task_id: str) -> list[dict[str, Any]]:
    """The scripted children's documents for one task, in order, without their `task` key."""
    return [
        {key: value for key, value in entry.items() if key != "task"}
        for entry in script
        if entry.get("task") == task_id
    ]


def _clip(value: str, width: int = 80) -> str:
    return repr(value if len(value) <= width else value[:width] + "…")
