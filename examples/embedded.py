"""Warrant embedded in your own Python program: compile its graph with a checkpointer and a store of
your choice, run the built-in scenario R42 on a thread, and print its handover.

    python examples/embedded.py                          # in memory: gone when the program ends
    python examples/embedded.py --db runs.sqlite         # kept in a SQLite file
    warrant show r42-embedded --db runs.sqlite           # …which the command line reads too

Tested by tests/test_examples.py.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from contextlib import contextmanager

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.memory import InMemoryStore

from graph.build import compile_graph
from graph.runs.reading import run_result
from ledger.context import WarrantContext
from ledger.persistence.savers import Storage, StorageUnavailable, open_saver


@contextmanager
def storage(db: str | None) -> Iterator[Storage]:
    """Where the run is kept: a checkpointer (the run's state) and a store (its record: ledger,
    evidence, model calls). Both are needed, and in the same database."""
    if db is None:
        yield Storage(InMemorySaver(), InMemoryStore())
    else:  # LangGraph's SqliteSaver and SqliteStore on one file, set up as `warrant --db` does
        with open_saver(db) as opened:
            yield opened


def main() -> None:
    parser = argparse.ArgumentParser(description="Run R42 with Warrant embedded.")
    parser.add_argument("--db", help="a SQLite file to keep the run in (default: memory)")
    parser.add_argument("--thread", default="r42-embedded", help="the run's thread id")
    args = parser.parse_args()
    config = {"configurable": {"thread_id": args.thread}}
    try:
        with storage(args.db) as (checkpointer, store):
            graph = compile_graph(checkpointer, store)
            if "scenario" not in graph.get_state(config).values:  # a file may hold the run already
                graph.invoke(
                    {"scenario": "R42"},  # or {"scenario": "my.toml", "chooser": "file:a.jsonl"}
                    config,
                    durability="sync",  # each step saved before the next starts, as the CLI does
                    context=WarrantContext(),  # optional: clock=…, choosers={"mine": MyChooser()}
                )
            # The handover, with its evidence read back from the store (the state holds only
            # refs); a run waiting for a person gives the handover so far and what is `pending`.
            handover = run_result(graph, config).handover
    except StorageUnavailable as exc:
        sys.exit(f"error: {exc}")
    print(f"thread: {args.thread}")
    print(f"status: {handover['status']}")
    print(f"evidence: {', '.join(item['ref'] for item in handover['evidence'])}")
    print("unknowns:")
    for line in handover["unknowns"]:
        print(f"- {line}")
    for interaction in handover["pending"]:  # none for R42's scripted chooser
        print(f"waiting for a person: {interaction['interaction_id']}")


if __name__ == "__main__":
    main()
