"""What every `warrant` command pays before it does anything: whole processes, against
`langgraph --help` (the same environment's other command line) measured in the same run.

    .venv/bin/python bench/startup.py [--reps 7] [--logs 200] [--dir DIR] [--json F] [--before TREE]

In turns, `--reps` times after one untimed warm-up of each, from a scratch folder (no project
store above it): `langgraph --help`; the floor (`FLOOR`: importing LangGraph's graph, SQLite
checkpointer and store, which every command that runs or reads a run pays); `warrant --help`; `warrant run R42 --db memory -q`;
`warrant show THREAD` of a finished R42 run kept in a SQLite file; and the nightly end to end,
`warrant triage NIGHTLY --json` over `lab.nightly`'s 200 logs (a fresh SQLite file each time).
Each process's wall time and peak RSS (its own `ru_maxrss`, from `wait4`) are kept; the medians,
the ratio of each to `langgraph --help` and the issue's targets are printed. `--before TREE` (a
checkout of an earlier commit, e.g. `git worktree add /tmp/before REV`) measures each `warrant`
command from that tree too, in the same turns, for a before/after of the same run.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.report import write_ratios
from lab.nightly import write_nightly

BIN = Path(sys.executable).parent
FLOOR = "import langgraph.graph, langgraph.checkpoint.sqlite, langgraph.store.sqlite"
"""What any command that runs or reads a run imports before Warrant's own code: LangGraph's graph
and its SQLite checkpointer and store (with LangChain Core and LangSmith, which they import)."""


@dataclass(frozen=True)
class Case:
    name: str
    command: list[str]
    target: str
    seconds: float | None = None
    """An absolute target on this machine (the issue's), else none."""
    peer_ratio: float | None = None
    mib: float | None = None


@dataclass(frozen=True)
class Measured:
    seconds: float
    mib: float


def timed(command: list[str], cwd: Path, tree: Path | None = None) -> Measured:
    """One whole process (its modules from `tree` when given): wall time and own peak RSS."""
    env = _env(cwd) | ({"PYTHONPATH": str(tree)} if tree else {})
    started = time.perf_counter()
    child = subprocess.Popen(
        command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env
    )
    _, status, usage = os.wait4(child.pid, 0)
    spent = time.perf_counter() - started
    assert child.stderr is not None
    error = child.stderr.read().decode(errors="replace")
    child.stderr.close()
    code = os.waitstatus_to_exitcode(status)
    assert code == 0, f"{' '.join(command)} exited {code}: {error[-400:]}"
    return Measured(spent, usage.ru_maxrss / 1024)


def _env(cwd: Path) -> dict[str, str]:
    """The caller's environment without a store chosen for it: runs kept under `cwd`."""
    env = {key: value for key, value in os.environ.items() if key != "WARRANT_DB"}
    env["XDG_DATA_HOME"] = str(cwd / "data")
    env.update(LANGGRAPH_CLI_NO_ANALYTICS="1", LANGSMITH_TRACING="false")
    return env


def cases(scratch: Path, nightly: Path, reps: int) -> list[tuple[Case, list[list[str]]]]:
    """Each case with the command of each turn (a triage's own fresh database)."""
    warrant = str(BIN / "warrant")
    store = str(scratch / "shown.sqlite")
    subprocess.run(
        [warrant, "run", "R42", "--db", store, "--thread", "shown", "-q"],
        cwd=scratch,
        env=_env(scratch),
        check=True,
        stdout=subprocess.DEVNULL,
    )
    turns = range(reps + 1)
    listed = [
        (Case("langgraph --help", [str(BIN / "langgraph"), "--help"], "the peer"), None),
        (Case("import LangGraph (the floor)", [sys.executable, "-c", FLOOR], "–"), None),
        (
            Case("warrant --help", [warrant, "--help"], "≤ 1.5× the peer, ≤ 60 MB", None, 1.5, 60),
            None,
        ),
        (
            Case(
                "warrant run R42 --db memory -q",
                [warrant, "run", "R42", "--db", "memory", "-q"],
                "≤ 1.0 s here, ≤ 5× the peer",
                1.0,
                5.0,
            ),
            None,
        ),
        (
            Case("warrant show THREAD", [warrant, "show", "shown", "--db", store], "≤ 0.6 s", 0.6),
            None,
        ),
        (
            Case(
                f"warrant triage NIGHTLY ({nightly.name})",
                [],
                "≤ 1.2 s",
                1.2,
            ),
            [
                [warrant, "triage", str(nightly), "--json", "--db", str(scratch / f"t{n}.sqlite")]
                for n in turns
            ],
        ),
    ]
    return [(case, commands or [case.command for _ in turns]) for case, commands in listed]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=7)
    parser.add_argument("--logs", type=int, default=200)
    parser.add_argument("--dir", type=Path, default=Path(tempfile.gettempdir()) / "warrant-startup")
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--before", type=Path, default=None, help="an earlier checkout to compare")
    args = parser.parse_args()
    nightly = args.dir / f"nightly-{args.logs}"
    if not (nightly / ".complete").exists():
        write_nightly(nightly, args.logs)
        (nightly / ".complete").touch()
    with tempfile.TemporaryDirectory(prefix="warrant-startup-") as tmp:
        scratch = Path(tmp)
        planned = cases(scratch, nightly, args.reps)
        runs: dict[str, list[Measured]] = {case.name: [] for case, _ in planned}
        before: dict[str, list[Measured]] = {
            case.name: [] for case, _ in planned if case.name.startswith("warrant")
        }
        for turn in range(args.reps + 1):  # in turns: a slow moment of the machine hits all
            for case, commands in planned:
                measured = timed(commands[turn], scratch)
                if turn:  # the first of each is the warm-up
                    runs[case.name].append(measured)
                if args.before and case.name in before:
                    measured = timed(commands[turn], scratch, args.before)
                    if turn:
                        before[case.name].append(measured)
    median = {name: statistics.median(m.seconds for m in got) for name, got in runs.items()}
    rss = {name: max(m.mib for m in got) for name, got in runs.items()}
    peer = median["langgraph --help"]
    print(f"## start-up: whole processes, median of {args.reps}, {os.cpu_count()} cores\n")
    print("| command | median (s) | × langgraph --help | peak RSS (MiB) | target | met |")
    print("| --- | ---: | ---: | ---: | --- | --- |")
    ratios: dict[str, float] = {}
    for case, _ in planned:
        seconds, ratio = median[case.name], median[case.name] / peer
        met = [
            case.seconds is None or seconds <= case.seconds,
            case.peer_ratio is None or ratio <= case.peer_ratio,
            case.mib is None or rss[case.name] <= case.mib,
        ]
        peer_or_floor = not case.name.startswith("warrant")
        shown = "–" if peer_or_floor else ("yes" if all(met) else "no")
        print(
            f"| `{case.name}` | {seconds:.3f} | {ratio:.2f}× | {rss[case.name]:.0f} |"
            f" {case.target} | {shown} |"
        )
        if not peer_or_floor:
            ratios[f"startup: {case.name.split(' (')[0]} / langgraph --help"] = ratio
    if args.before:
        print(f"\nbefore ({args.before}), in the same turns:\n")
        print("| command | before (s) | after (s) | before RSS (MiB) | after RSS (MiB) |")
        print("| --- | ---: | ---: | ---: | ---: |")
        for name, got in before.items():
            then = statistics.median(m.seconds for m in got)
            print(
                f"| `{name}` | {then:.3f} | {median[name]:.3f} |"
                f" {max(m.mib for m in got):.0f} | {rss[name]:.0f} |"
            )
    write_ratios(args.json, ratios)


if __name__ == "__main__":
    main()
