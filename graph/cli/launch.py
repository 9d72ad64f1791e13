"""The `warrant` console script's entry point. It imports the command line only when called: a
process that merely imports the script pays nothing for it, and a triage worker does exactly that
(multiprocessing starts each worker by importing its parent's main module, here the script)."""

from __future__ import annotations


def main() -> None:
    from graph.cli.main import main as command_line

    command_line()
