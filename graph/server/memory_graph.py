"""Memory through the graph API: the same operations as `warrant memory`, as a one-node graph.

Served (`langgraph.json`: `memory`), it works on the server's store, where served runs recall
from, and a client drives it with `langgraph_sdk` (`client.runs.wait(thread, "memory", input=…)`);
embedded, on the store it is compiled with. Each run is one operation; its result (or a one-line
`error` naming what was wrong, with nothing changed) is in the final state. Who makes a change is
the authenticated user when the server has one, else the request's `by`.

Served, a user writes only their own notes: a save under the project (`user` `_`) or their own
name, a correction or a forget of a note they saved. The `memory:admin` permission
(`graph.server.auth`, `WARRANT_MEMORY_ADMINS`) allows any. Embedded, the caller is the application
itself, as `warrant memory --as` is the machine's user: no such check.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, NamedTuple, TypeAlias

from langgraph.config import get_config
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime
from langgraph.store.base import BaseStore
from pydantic import Field, StringConstraints, ValidationError
from typing_extensions import TypedDict

from contract.strict import StrictModel
from contract.text import describe_validation_error
from ledger.context import WarrantContext, now
from nodes import memory
from nodes.human import served_identity

Name = Annotated[str, StringConstraints(pattern=f"^{memory.NAME.pattern}$")]


class MemoryRequest(StrictModel):
    """One memory operation, as a client sends it; strict, like every input Warrant takes."""

    op: Literal["save", "correct", "forget", "list", "show", "search"]
    project: Name
    user: Name = memory.ANYONE
    note: str = ""
    """The note id, for correct, forget and show."""
    text: str = ""
    signature: Annotated[str, StringConstraints(max_length=200)] = ""
    query: Annotated[str, StringConstraints(max_length=200)] = ""
    limit: Annotated[int, Field(ge=1, le=50)] = 5
    by: Name = "api"


class MemoryInput(TypedDict, total=False):
    op: str
    project: str
    user: str
    note: str
    text: str
    signature: str
    query: str
    limit: int
    by: str


class MemoryState(MemoryInput, total=False):
    result: Any
    """The note (save, correct, forget), the notes (list, search) or the receipts (show)."""
    error: str
    """Why the operation was refused, in one line; nothing was changed."""


def operate(store: BaseStore, request: MemoryRequest, by: str, at: float) -> Any:
    """One operation on the store (`nodes.memory`); raises `memory.NoteError`."""
    scope = memory.Scope(request.project, request.user)
    if request.op == "save":
        return memory.save(store, scope, request.text, by, at, request.signature)
    if request.op == "correct":
        return memory.correct(store, scope, request.note, request.text, by, at)
    if request.op == "forget":
        return memory.forget(store, scope, request.note, by, at)
    if request.op == "show":
        return memory.history(store, scope, request.note)
    if request.op == "search":
        return memory.recall(store, [scope], request.query, request.limit)
    return memory.notes(store, scope)


MEMORY_ADMIN = "memory:admin"
"""The permission to write anyone's notes (granted by `graph.server.auth`)."""
WRITES = frozenset({"save", "correct", "forget"})


class ServedUser(NamedTuple):
    identity: str
    admin: bool


def served_user() -> ServedUser | None:
    """The authenticated user the LangGraph server runs this request for (the server writes it
    into the run's config over anything a client gave); None embedded."""
    identity = served_identity()
    if identity is None:
        return None
    permissions = get_config().get("configurable", {}).get("langgraph_auth_permissions") or ()
    return ServedUser(identity, MEMORY_ADMIN in permissions)


def not_theirs(store: BaseStore, request: MemoryRequest, user: ServedUser) -> str | None:
    """Why `user` may not make this change, in one line, or None: a save under another user's
    name, or a correction or forget of a live note someone else saved."""
    if user.admin or request.op not in WRITES:
        return None
    if request.user not in (memory.ANYONE, user.identity):
        return f"{user.identity} may not write {request.user}'s notes (a memory admin may)"
    if request.op == "save":
        return None
    scope = memory.Scope(request.project, request.user)
    note = (
        store.get(scope.notes(), request.note) if memory.NOTE_ID.fullmatch(request.note) else None
    )
    if note is None or note.value.get("state") != "active":
        return None  # missing, or already forgotten: the operation says so itself, changing nothing
    owner = memory.history(store, scope, request.note)[0].get("by")
    if owner != user.identity:
        return f"note {request.note} was saved by {owner}; only they may {request.op} it (or a memory admin)"
    return None


def memory_node(state: MemoryState, runtime: Runtime[WarrantContext]) -> MemoryState:
    """One operation, at the run's clock (`ledger.context.now`: the context's, else the real one)."""
    given = {key: value for key, value in state.items() if key not in ("result", "error")}
    try:
        request = MemoryRequest.model_validate(given)
    except ValidationError as exc:
        return {"error": f"not a memory request: {describe_validation_error(exc)}"}
    if runtime.store is None:
        return {"error": "this graph has no store to keep notes in"}
    user = served_user()
    try:
        if user is not None and (refused := not_theirs(runtime.store, request, user)):
            return {"error": refused}
        by = user.identity if user else request.by
        result = operate(runtime.store, request, by, now(runtime))
    except memory.NoteError as exc:
        return {"error": str(exc)}
    return {"result": result}


MemoryBuilder: TypeAlias = StateGraph[MemoryState, WarrantContext, MemoryInput, MemoryState]
MemoryGraph: TypeAlias = CompiledStateGraph[MemoryState, WarrantContext, MemoryInput, MemoryState]
"""In process, its context may be a `WarrantContext` (a test's clock); served, it has none."""


def build_memory() -> MemoryBuilder:
    builder: MemoryBuilder = StateGraph(MemoryState, input_schema=MemoryInput)
    builder.add_node("memory", memory_node)
    builder.add_edge(START, "memory")
    builder.add_edge("memory", END)
    return builder


def compile_memory(store: BaseStore | None = None) -> MemoryGraph:
    """Served: without a store (the server binds its own); embedded: on `store`."""
    return build_memory().compile(name="memory", store=store)
