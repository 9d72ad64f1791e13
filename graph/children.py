"""Child investigations: one `child` task per delegated task, each running the governed loop as
a subgraph in its own lane, all under the delegating run's one budget.

The guard approves a delegation (`guards.delegation`), carving each child's steps, evidence and
questions out of what the run has left; the run's deadline is the child's. A child's record lives
in its lane (the thread's scope with the lane after it, `ledger.integrity.scope_in`); the child's
checkpoints live under the task's namespace, so a crash inside a child resumes that child, and
its interrupts reach the run's caller like the run's own. When a child ends, its task returns a
handoff (`nodes.handoff`) for the run's next node to receive.
"""

from __future__ import annotations

import asyncio
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.config import get_store
from langgraph.runtime import Runtime
from langgraph.types import Send

from contract.codes import EventKind
from contract.state import WarrantState
from graph.governed import Graph, bound_store
from guards.action import DelegateTask
from guards.delegation import child_scenario
from ledger.context import WarrantContext, event, now
from ledger.integrity import child_scope, lane_config, run_scope, sealed_payload, thread_and_lane
from ledger.members import scenario_of
from ledger.record import RunRecord
from ledger.store import EVIDENCE, cursor_of
from nodes.handoff import handoff_of

CHILD = "child"


def child_tasks(
    state: WarrantState, tasks: list[dict[str, Any]], scope: str | None = None
) -> list[Send]:
    """One `child` task per delegated task, sealed for this run."""
    scope = run_scope() if scope is None else scope
    grant = scenario_of(state["grant"], get_store())  # its members read back
    parent_lane = (state.get("child") or {}).get("lane", "")
    chooser = state.get("child_chooser") or state["chooser"]
    sends = []
    for task in tasks:
        carved = child_scenario(
            grant, DelegateTask.model_validate({k: v for k, v in task.items() if k != "order"})
        )
        payload = {
            "task": task,
            "lane": f"{parent_lane}/{task['id']}" if parent_lane else task["id"],
            "grant": carved.model_dump(mode="json"),
            "chooser": chooser,
            "child_chooser": chooser,
            "route": state.get("route"),
            "deadline_at": state["deadline_at"],
            "depth": state.get("depth", 0) + 1,
            "turn": state["decision"]["turn"],
        }
        sends.append(Send(CHILD, sealed_payload(CHILD, payload, scope)))
    return sends


def run_child(
    task: dict[str, Any], runtime: Runtime[WarrantContext], graph: Graph
) -> dict[str, Any]:
    """Run one child on the child `graph` to its end (or its first wait for a person, which
    interrupts the run) and return its handoff."""
    values = graph.invoke({"child": task}, config=_lane_config(task))
    return handed_off(task, runtime, values)


async def arun_child(
    task: dict[str, Any], runtime: Runtime[WarrantContext], graph: Graph
) -> dict[str, Any]:
    """`run_child` for a run advanced asynchronously (the LangGraph server, whose checkpointer
    is asynchronous only); the store is read on a worker thread, as a synchronous node would."""
    values = await graph.ainvoke({"child": task}, config=_lane_config(task))
    return await asyncio.to_thread(handed_off, task, runtime, values)


def _lane_config(task: dict[str, Any]) -> RunnableConfig:
    return {"configurable": lane_config(task["lane"])}


def handed_off(
    task: dict[str, Any], runtime: Runtime[WarrantContext], values: dict[str, Any]
) -> dict[str, Any]:
    """The child's handoff and its `handed_off` event, from its final state and its record."""
    thread, _ = thread_and_lane(run_scope())
    scope = child_scope(thread, task["lane"])
    record = RunRecord(bound_store(runtime.store), scope)
    own, _ = record.sealed_or_not(record.evidence(cursor_of(values)), EVIDENCE)
    handoff = handoff_of(task, values, own)
    handed = event(
        EventKind.HANDED_OFF,
        task["turn"],
        f"child:{task['lane']}",
        now(runtime),
        task=task["task"]["id"],
        lane=task["lane"],
        order=task["task"]["order"],
        status=handoff["status"],
        evidence=len(handoff["evidence"]),
        spent=handoff["spent"],
        ledger={
            "events": handoff["cursor"].get("events", 0),
            "head": handoff["cursor"].get("head"),
        },
    )
    return {"handoffs": [handoff], "events": [handed]}
