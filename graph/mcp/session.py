"""One session of `warrant mcp serve`: a governed run whose chooser is the session's MCP client.

The run advances in a thread of its own, as `warrant run` would run it (the scenario's grant,
budgets, guard and ledger), with the `mcp-client` chooser (`nodes.choosers.client`): each turn it
hands this session the view any chooser gets and waits for the client's next call. A call is
proposed as that turn's action; its result is read from the next view — the receipt the executor
left, or the refusals the guard recorded — or, when the run stopped asking (a person must approve,
the budget or the deadline ended it), from where the run stands. Closing the session proposes a
stop: the run writes its handover, which `warrant show THREAD` prints.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from contract.codes import Status
from graph.delivery.artifacts import deliver
from graph.runs.reading import RunError, RunResult
from graph.runs.requests import RunRequest
from graph.runs.runner import OnEvent, start
from guards.provenance import Locality, item_provenance, may_leave
from ledger.context import WarrantContext
from nodes.choosers.client import MCP_CLIENT, ClientChooser
from nodes.choosers.view import ChooserView


@dataclass(frozen=True)
class CallResult:
    """What the client is answered: an MCP tool result, an error (`is_error`) for a refusal, a
    failed call or a run that no longer takes calls."""

    is_error: bool
    content: dict[str, Any]

    @property
    def text(self) -> str:
        """One line for a refusal or an error; the receipt's lines for a result."""
        if "lines" in self.content and not self.is_error:
            head = f"{self.content['ref']} · {self.content['summary']}"
            return "\n".join([head, *(line["text"] for line in self.content["lines"])])
        return str(self.content["error"])


class SessionRun:
    """A session's run, advanced in its own thread; `call` and `catalog` wait for it to ask."""

    def __init__(
        self, request: RunRequest, db: str, on_event: OnEvent, client: Locality = "remote"
    ) -> None:
        self.thread = request.thread_id
        self.client = client
        """Where the client is: a `remote` one (an IDE agent backed by a hosted model, say) is
        answered nothing derived from a local source (`guards.provenance`)."""
        self._records: frozenset[str] = frozenset()
        self._chooser = ClientChooser()
        self._lock = threading.Lock()
        self._asking: ChooserView | None = None
        self._over = False
        self._ended: RunResult | None = None
        self._failed: str | None = None
        self._calls = 0
        context = WarrantContext(choosers={MCP_CLIENT: self._chooser})
        self._worker = threading.Thread(
            target=self._advance,
            args=(request, db, on_event, context),
            name=f"warrant-mcp-{self.thread}",
            daemon=True,
        )
        self._worker.start()

    def _advance(
        self, request: RunRequest, db: str, on_event: OnEvent, context: WarrantContext
    ) -> None:
        try:
            self._ended = start(request, db, on_event, context=context, on_end=deliver)
        except RunError as exc:
            self._failed = str(exc)
        finally:
            self._chooser.views.put(None)  # the run asks no more

    def catalog(self) -> list[dict[str, Any]]:
        """The tools the run shows its chooser: what the client lists (none once it is over)."""
        with self._lock:
            view = self._waiting_view()
            return list(view.catalog) if view is not None else []

    def call(self, name: str, args: Mapping[str, Any]) -> CallResult:
        """Propose the client's call as this turn's action and answer what became of it."""
        with self._lock:
            view = self._waiting_view()
            if view is None:
                return self._not_taking_calls()
            self._records = frozenset(str(record["id"]) for record in view.records)
            self._calls += 1
            call_id = f"mcp-{self._calls}"
            refused_before = len(view.refusals)
            self._asking = None
            self._chooser.proposals.put(
                {
                    "summary": f"The MCP client calls {name}.",
                    "tool_calls": [{"id": call_id, "name": name, "args": dict(args)}],
                }
            )
            after = self._waiting_view()
            if after is None:
                return self._ended_at(call_id, refused_before)
            return self._answer(call_id, after.evidence, after.refusals[refused_before:])

    def close(self) -> None:
        """End the run with a stop (the session is gone) and wait for its handover."""
        with self._lock:
            if not self._over:
                self._chooser.proposals.put(None)
        self._worker.join()

    def _waiting_view(self) -> ChooserView | None:
        """The view of the turn waiting for a call, waiting for the run to ask; None once the
        run asks no more."""
        if self._asking is None and not self._over:
            self._asking = self._chooser.views.get()
            self._over = self._asking is None
        return self._asking

    def _answer(
        self, call_id: str, evidence: Sequence[Mapping[str, Any]], refused: Sequence[Any]
    ) -> CallResult:
        receipt = next((item for item in evidence if item.get("call_id") == call_id), None)
        if receipt is not None:
            return self._receipt(receipt)
        return self._refused(refused)

    def _receipt(self, item: Mapping[str, Any]) -> CallResult:
        return answered(item, self.client, self.thread)

    def _detail(self, refusal: Mapping[str, Any]) -> str:
        """A refusal's detail, unless the refused call names a record (a tool's refusal may
        quote it) and the client is remote: deny by default, the code and owner still said."""
        call = refusal.get("call") if isinstance(refusal.get("call"), Mapping) else None
        values = (call or {}).get("args") if call else None
        named = isinstance(values, Mapping) and any(
            isinstance(value, str) and value in self._records for value in values.values()
        )
        if self.client == "local" or not named:
            return str(refusal["detail"])
        return "detail withheld from this client: the call names a record of the grant"

    def _refused(
        self, refused: Sequence[Mapping[str, Any]], status: str | None = None
    ) -> CallResult:
        refusals = [
            {"code": r["code"], "owner": r["owner"], "detail": self._detail(r)} for r in refused
        ]
        lines = [f"refused {r['code']} by {r['owner']}: {r['detail']}" for r in refusals]
        if status:
            lines.append(f"the run ended: {status}; `warrant show {self.thread}`")
        content = {"run": self.thread, "refusals": refusals, "status": status}
        return CallResult(True, content | {"error": "; ".join(lines) or "not run"})

    def _ended_at(self, call_id: str, refused_before: int) -> CallResult:
        """The run stopped asking after this call: it waits for a person, or it ended."""
        if self._ended is None:
            return CallResult(
                True, {"run": self.thread, "error": f"the run failed: {self._failed}"}
            )
        values = self._ended.values
        if self._ended.pending:
            return CallResult(
                True,
                {
                    "run": self.thread,
                    "status": Status.AWAITING_HUMAN.value,
                    "error": f"call {call_id} waits for a person's approval: `warrant resume"
                    f" {self.thread} --approve` (or --reject); this session takes no more calls",
                },
            )
        evidence = values.get("evidence", [])
        if any(item.get("call_id") == call_id for item in evidence):
            return self._answer(call_id, evidence, [])
        return self._refused(values.get("refusals", [])[refused_before:], values.get("status"))

    def _not_taking_calls(self) -> CallResult:
        status = "failed" if self._ended is None else self._ended.handover.get("status")
        return CallResult(
            True,
            {
                "run": self.thread,
                "status": status,
                "error": f"this session's run takes no more calls ({status}):"
                f" `warrant show {self.thread}`",
            },
        )


def answered(item: Mapping[str, Any], client: Locality, thread: str) -> CallResult:
    """A receipt as an MCP client at `client` is answered: whole, or, where the client is
    remote and the receipt is local (`guards.provenance`), what was called and its ref — no
    line, summary, flag or digest of what was read (a digest is an oracle for it)."""
    provenance = item_provenance(item, {})
    if not may_leave(provenance, client):
        why = (
            f"{item['ref']}: withheld from this client: read from"
            f" {', '.join(sorted(provenance.local))}, approved for this machine only"
            " (share = local); serve with `--client-locality local` for a client on this"
            " machine's side"
        )
        withheld = {"run": thread, "ref": item["ref"], "tool": item["tool"], "withheld": why}
        withheld |= {"lines": [], "summary": why}
        if item.get("error"):
            return CallResult(True, withheld | {"error": why, "code": item["error"]})
        return CallResult(False, withheld)
    content = {
        "run": thread,
        "ref": item["ref"],
        "tool": item["tool"],
        "summary": item["summary"],
        "sha256": item["sha256"],
        "truncated": item["truncated"],
        "flags": item["flags"],
        "lines": [{"line": line["line"], "text": line["text"]} for line in item["excerpt"]],
    }
    if item.get("error"):
        detail = f"{item['error']} (tool:{item['tool']}): {item['summary']}"
        return CallResult(True, content | {"error": detail, "code": item["error"]})
    return CallResult(False, content)
