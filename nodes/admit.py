"""Admission: resolve the scenario, pin the grant, goal, chooser and deadline, open the ledger."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Collection, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from langgraph.runtime import Runtime

from contract.codes import EventKind, Owner
from contract.shapes import EntryRecord
from contract.state import WarrantState
from guards.action import shape_problem
from guards.hooks import scenario_hooks
from guards.parking import admitted_deadline
from guards.refusals import Refusal, RefusalCode
from guards.route_admission import admitting, identity_digest, route_refusal
from guards.schedule import ScheduleLink, changed_since_confirmed, link_of
from lab import LAB_DIR, builtin_manifests
from ledger.context import WarrantContext, context_of, event, now, store_of
from ledger.integrity import run_scope
from ledger.members import kept_apart
from ledger.read import event_at
from nodes.choosers import admit_spec
from nodes.choosers.admissions import admission_folders, override_reason, reports_in
from nodes.choosers.cassette import recorded_locality
from nodes.choosers.route import Route, route_from_env
from nodes.continuation import carried
from nodes.human import served_identity
from nodes.watched import goal_message
from scenario.mcp import AdmittedMcpTool
from scenario.profiles import PROFILE_GOALS
from scenario.registry import Scenario, load_scenario
from tools.mcp.admission import McpRefused, McpUnavailable, admitted_tools


class ScenarioNotFound(ValueError):
    """A scenario reference that is neither a built-in id nor a manifest file."""


SCENARIO_ROOTS = "WARRANT_SCENARIO_ROOTS"


def served_roots() -> list[Path]:
    """Folders whose manifests the served graph may run: the lab's, and `$WARRANT_SCENARIO_ROOTS`
    (separated by `os.pathsep`)."""
    given = [
        Path(part).expanduser().resolve()
        for part in os.environ.get(SCENARIO_ROOTS, "").split(os.pathsep)
        if part
    ]
    return [LAB_DIR.resolve(), *given]


def resolve_scenario(reference: str, served: bool = False) -> Scenario:
    """Load a built-in scenario by id, or a manifest by path. `served`: for the server, whose
    callers are not the machine's user: only a manifest under `served_roots()`, and the same
    answer whether or not a file exists elsewhere."""
    builtins = builtin_manifests()
    if reference in builtins:
        return _load(builtins[reference])
    path = Path(reference).expanduser()
    if served:
        resolved = path.resolve() if path.is_absolute() else None
        if resolved is None or not any(resolved.is_relative_to(root) for root in served_roots()):
            raise ScenarioNotFound(
                f"unknown scenario {reference[:200]!r}: the server runs built-in ids"
                f" ({', '.join(builtins)}) and manifests under ${SCENARIO_ROOTS} only"
            )
        path = resolved
    if path.is_file():
        return _load(path)
    known = ", ".join(builtins) or "none"
    raise ScenarioNotFound(
        f"unknown scenario {reference!r}: not a built-in id ({known}) nor a manifest file"
    )


def _load(manifest: Path) -> Scenario:
    """The scenario of `manifest`; the lab's design repository is built first where a lab manifest
    approves it (it is made by `lab/rtlgen.py`, never committed)."""
    if manifest.resolve().is_relative_to(LAB_DIR):
        from lab.rtlgen import prepare

        prepare(manifest)
    return load_scenario(manifest)


def admission(
    reference: str,
    goal: str | None,
    chooser: str | None,
    extra_choosers: Collection[str] = (),
    served: bool = False,
) -> dict[str, Any]:
    """Everything admission pins, checked; raises ValueError subclasses for bad input."""
    scenario = resolve_scenario(reference, served)
    scenario_hooks(scenario)  # a hook that cannot be loaded is a one-line error, before the run
    if scenario.mcp:
        scenario = scenario.model_copy(update={"mcp_tools": mcp_tools(scenario)})
    pinned_goal = (goal or "").strip() or scenario.goal or PROFILE_GOALS[scenario.profile]
    spec = admit_spec(chooser or "scripted", scenario, extra_choosers, served)
    pinned = {"grant": scenario.model_dump(mode="json"), "goal": pinned_goal, "chooser": spec}
    if scenario.children.depth:
        pinned["child_chooser"] = children_spec(spec, scenario, extra_choosers, served)
    if spec == "model":
        route = route_from_env()
        pinned["route"] = route.model_dump()
        pinned["route_admission"] = route_admission(scenario, route)
    elif spec.startswith("replay:"):
        locality = recorded_locality(Path(spec.removeprefix("replay:")))
        pinned["route"] = Route(model="replay", locality=locality).model_dump()
    return pinned


class RouteNotAdmitted(ValueError):
    """A model route no passing evaluation report admits for the scenario's profile."""


def route_admission(scenario: Scenario, route: Route) -> dict[str, str]:
    """What admits `route` for the scenario's profile: the newest report of its own identity,
    passing and verified (its figures), or a person's override (`$WARRANT_ROUTE_OVERRIDE`) with
    the refusal it overrode; otherwise the run is refused (`RouteNotAdmitted`, with the latest
    report's figures). Both name the route's identity digest."""
    identity = route.identity()
    digest = {"route_sha256": identity_digest(identity)}
    reports = reports_in(admission_folders(Path(scenario.manifest)), scenario.profile)
    if passing := admitting(scenario.profile, identity, reports):
        return {"admitted_by": passing.figures, **digest}
    refusal = route_refusal(scenario.profile, identity, reports) or "no passing report"
    override = override_reason()
    if override is None:
        raise RouteNotAdmitted(refusal)
    return {"override": override, "refused": refusal, **digest}


def mcp_tools(scenario: Scenario) -> dict[str, AdmittedMcpTool]:
    """The manifest's MCP tools, each listed by its server with the description and schema it
    was pinned with; a pin missing or broken, or a server that cannot list its tools, is a
    one-line refusal of the run (`McpRefused`)."""
    try:
        return admitted_tools(scenario.mcp, Path(scenario.manifest).parent)
    except McpUnavailable as exc:
        raise McpRefused(str(exc)) from None


def children_spec(
    spec: str, scenario: Scenario, extra_choosers: Collection[str], served: bool
) -> str:
    """The chooser a run's children use: the manifest's `children.chooser` (a path relative to
    the manifest), else main's own kind; a `file:` main's children are scripted (its file is
    main's); a `replay:` main's children replay their own lanes of the same cassette."""
    given = scenario.children.chooser
    if given is None:
        kind = spec.partition(":")[0]
        return "scripted" if kind in ("file", "scripted") else spec
    kind, _, argument = given.partition(":")
    if kind in ("file", "replay") and argument:
        given = f"{kind}:{Path(scenario.manifest).parent / Path(argument).expanduser()}"
    if given == "scripted":
        return given  # the children's documents are the manifest's `children.script`
    return admit_spec(given, scenario, extra_choosers, served)


def admit_child(state: WarrantState, runtime: Runtime[WarrantContext]) -> dict[str, Any]:
    """A child investigation's admission: its task as the delegating run pinned it (the task's
    payload was sealed by that run and checked before this graph started). Given its input again
    (its graph called once more after a crash) it admits nothing twice."""
    if state.get("grant"):
        return {}
    child = state["child"]
    grant, task, at = child["grant"], child["task"], now(runtime)
    admitted = admitted_event(
        grant,
        task["goal"],
        child["chooser"],
        at,
        lane=child["lane"],
        task=task["id"],
        delegated_at_turn=child["turn"],
    )
    pinned = {"route": child["route"]} if child.get("route") else {}
    if child.get("child_chooser"):
        pinned["child_chooser"] = child["child_chooser"]
    return {
        **pinned,
        "child": child,
        "grant": grant,
        "goal": task["goal"],
        "chooser": child["chooser"],
        "admitted_at": at,
        "deadline_at": child["deadline_at"],
        "depth": child["depth"],
        "turn": 0,
        "refused_choices": 0,
        "events": [admitted],
    }


def request_digest(scenario: str, goal: str, chooser: str, parent: str | None = None) -> str:
    """The sha256 of a run request's body as admitted; a reused message id must match it."""
    fields = {"scenario": scenario, "goal": goal, "chooser": chooser}
    body = json.dumps(fields | ({"parent": parent} if parent else {}), sort_keys=True)
    return hashlib.sha256(body.encode("utf-8")).hexdigest()


def admit(
    state: WarrantState, runtime: Runtime[WarrantContext], served: bool = False
) -> dict[str, Any]:
    """`served`: the graph the LangGraph server runs, whose inputs come from its API's callers."""
    if state.get("grant"):
        return refused_input(event_at(store_of(runtime), run_scope(), 1) or {}, state, now(runtime))
    extra = context_of(runtime).choosers
    reference, goal, chooser = checked_input(state)
    pinned = admission(reference, goal, chooser, extra, served)
    grant = pinned["grant"]
    at = now(runtime)
    parent = state.get("parent")
    caller = served_identity() if served else None
    link = scheduled(state.get("schedule"), grant["manifest_sha256"], at)
    continued = (
        {"parent": parent, **carried(store_of(runtime), parent, grant["manifest_sha256"], caller)}
        if parent
        else {}
    )
    admitted = admitted_event(
        grant,
        pinned["goal"],
        pinned["chooser"],
        at,
        reference=reference,
        message_id=state.get("message_id"),
        **({"started_by": caller} if caller else {}),
        **({"schedule": link} if link else {}),
        **({"entry": entry} if (entry := entry_of(runtime, served)) else {}),
        **({"route_admission": pinned["route_admission"]} if "route_admission" in pinned else {}),
        **{key: continued[key] for key in ("parent", "report", "revision") if key in continued},
    )
    kept, members = kept_apart(grant)  # a family's members go to the store, in the step's batch
    store_of(runtime).batch(members)
    values: Mapping[str, Any] = state
    given = {name: values[name] for name in ("scenario", "message_id", "parent") if name in values}
    return {
        **given,
        **pinned,
        "grant": kept,
        **continued,
        **({"started_by": caller} if caller else {}),
        **({"schedule": link} if link else {}),
        "request_sha256": request_digest(
            state["scenario"], pinned["goal"], pinned["chooser"], parent
        ),
        "admitted_at": at,
        "deadline_at": admitted_deadline(at, grant["budget"]),
        "turn": 0,
        "refused_choices": 0,
        "events": [admitted],
        "messages": [goal_message(pinned["goal"])],
    }


def entry_of(runtime: Runtime[WarrantContext], served: bool) -> dict[str, str] | None:
    """Entry's decision as the `admitted` event records it (the in-process caller's context:
    `warrant ask`), each field a bounded string; None when absent, malformed, or served."""
    given = context_of(runtime).entry
    if served or given is None:
        return None
    fields = {key: given.get(key) for key in EntryRecord.__required_keys__}
    if not all(isinstance(value, str) for value in fields.values()):
        return None
    return {key: str(value)[:2000] for key, value in fields.items()}


def scheduled(given: object, manifest_sha256: str, at: float) -> ScheduleLink | None:
    """The run's link to the schedule it is an occurrence of, checked, or None; a run whose
    scenario changed since the schedule was confirmed is not admitted (a ValueError)."""
    if given is None:
        return None
    link = link_of(given)
    if problem := changed_since_confirmed(link, manifest_sha256):
        raise ValueError(problem)
    link.setdefault("occurrence", datetime.fromtimestamp(at, UTC).isoformat(timespec="seconds"))
    return link


def admitted_event(
    grant: dict[str, Any], goal: str, chooser: str, at: float, **extra: Any
) -> dict[str, Any]:
    """The ledger's first event: the grant as pinned (each record with its sha256)."""
    records = [
        {"id": record_id, "kind": record["kind"], "sha256": record["sha256"]}
        for record_id, record in grant["records"].items()
    ]
    return dict(
        event(
            EventKind.ADMITTED,
            0,
            Owner.RUNTIME,
            at,
            scenario=grant["id"],
            manifest=grant["manifest"],
            manifest_sha256=grant["manifest_sha256"],
            profile=grant["profile"],
            goal=goal,
            chooser=chooser,
            budget=grant["budget"],
            records=records,
            **extra,
        )
    )


def checked_input(state: WarrantState) -> tuple[str, str | None, str | None]:
    """The run input's scenario, goal and chooser, each a string if given; else a ValueError
    naming the field (the server passes JSON through as it came)."""
    given: dict[str, object] = {  # as the caller sent them: not yet checked
        name: state.get(name) for name in ("scenario", "goal", "chooser", "message_id", "parent")
    }
    scenario = given["scenario"]
    if not isinstance(scenario, str) or not scenario.strip():
        raise ValueError(
            "the run input needs scenario: a built-in id or a manifest path (a string)"
        )
    fields: dict[str, str | None] = {}
    for name, value in given.items():
        if value is not None and not isinstance(value, str):
            raise ValueError(f"the run input's {name} must be a string, not {type(value).__name__}")
        if value is not None and (problem := shape_problem(value)):
            raise ValueError(
                f"the run input's {name} is refused: {problem.replace('the document ', '')}"
            )
        fields[name] = value
    return scenario, fields["goal"], fields["chooser"]


def refused_input(admitted: dict[str, Any], state: WarrantState, at: float) -> dict[str, Any]:
    """A new input on a thread that already has a run: the input is refused and recorded, and the
    run's own scenario, goal, chooser and message id (from its `admitted` event), which the input
    overwrote, are put back."""
    first = admitted.get("payload") or {}
    restored = {
        "scenario": first.get("reference") or first.get("scenario") or state.get("scenario"),
        "goal": first.get("goal") or state.get("goal"),
        "chooser": first.get("chooser") or state.get("chooser"),
        "message_id": first.get("message_id"),
        **({"schedule": first.get("schedule")} if "schedule" in state else {}),
    }
    detail = "this thread already has a run; a new run needs a new thread"
    refusal = Refusal(RefusalCode.THREAD_IN_USE, Owner.RUNTIME, detail).to_dict()
    refused = event(EventKind.REFUSED, state.get("turn", 0), Owner.RUNTIME, at, **refusal)
    return {
        **restored,  # message_id too when it was None: the new input's own is not kept
        "events": [refused],
    }
