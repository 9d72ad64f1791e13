"""The MCP client chooser: the calls of a client of `warrant mcp serve`, one per turn.

A session of `warrant mcp serve` is a run whose chooser is its MCP client: each turn the run hands
the client's session the view it would show any chooser (the catalog the client lists, the
evidence and refusals its last call left) and waits for the client's next call, which it proposes
like any chooser's: the guard decides it. When the session ends the chooser proposes a stop and the
run writes its handover. The chooser decides nothing and keeps nothing between turns but the
hand-over between the run's thread and the session's.

A run of this chooser resumed without its session (its server was killed) stops at its next turn:
nobody is there to call.
"""

from __future__ import annotations

import queue
from dataclasses import dataclass, field
from typing import Any

from nodes.choosers.view import ChooserView, Proposal

MCP_CLIENT = "mcp-client"
"""The chooser spec of a `warrant mcp serve` session's run."""
ACTOR = "chooser:mcp-client"
SESSION_ENDED = "The MCP client's session ended."


def stop_proposal(text: str = SESSION_ENDED) -> dict[str, Any]:
    return {"summary": text, "message": {"kind": "stop", "text": text}}


@dataclass(frozen=True)
class SessionGone:
    """The chooser of a session's run resumed without its session: it stops."""

    actor: str = ACTOR

    def choose(self, view: ChooserView) -> Proposal:
        return stop_proposal()


@dataclass(frozen=True)
class ClientChooser:
    """Hands each view to the session (`views`) and proposes what the session sends back
    (`proposals`); `None` from the session ends the run with a stop."""

    views: queue.Queue[ChooserView | None] = field(default_factory=queue.Queue)
    proposals: queue.Queue[Proposal | None] = field(default_factory=queue.Queue)
    actor: str = ACTOR

    def choose(self, view: ChooserView) -> Proposal:
        self.views.put(view)
        proposal = self.proposals.get()
        return stop_proposal() if proposal is None else proposal
