"""Console blocks that run: the ```` ```console ```` blocks of the README and of docs/ are split into
their `$ command`s and the lines shown after each, each command is run in a folder of its own, and
every line shown must appear, in order, in what it printed (tests/test_readme.py, tests/test_docs.py).

What a shown line stands for:

- Timestamps, hashes and the ids made from them, ages in seconds, process ids and a model request's
  projected size are normalized on both sides (`VOLATILE`, and what a block adds); runs of spaces
  are one space.
- A line that is only `…` stands for output left out; lines shown may skip any printed lines.
- An id the output gives (a note's, an interaction's) is bound to the id shown in its place, and
  later commands of the block that name the shown id get the printed one.

What a command may be: `warrant …` (or another virtual environment's `…/bin/warrant`), `python -m
MODULE …` for the modules a caller allows, `export NAME=VALUE …`, `NAME=VALUE warrant …`, and
`warrant … | jq -r .KEY`. A trailing comment `# exit N` (or `# exits N`) gives the exit code, and
one saying `kill -9` that the command is killed (the test's runner kills it where the page does).
Otherwise a command whose shown output has an `error:` line must fail, one whose run stops at a
person's interruption must exit 3, and any other must exit 0.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.in_process import as_process, exit_code

ELIDED = "…"
"""A line of a console block that stands for output left out."""


def fenced_blocks(text: str, info: str) -> list[list[str]]:
    """The lines of each fenced block whose info string is `info` (three or more backticks)."""
    blocks, current, fence = [], None, ""
    for line in text.splitlines():
        if current is None:
            opening = re.fullmatch(r"(`{3,})" + re.escape(info) + r"\s*", line)
            if opening:
                current, fence = [], opening[1]
        elif line.strip() == fence:
            blocks.append(current)
            current = None
        else:
            current.append(line)
    return blocks


def commands_and_output(block: list[str]) -> list[tuple[str, list[str]]]:
    """Each `$ command` of a console block (a trailing backslash continues it) with the lines shown
    after it."""
    steps: list[tuple[str, list[str]]] = []
    continued = False
    for line in block:
        if continued:
            command, shown = steps[-1]
            steps[-1] = (command + " " + line.strip().removesuffix("\\").strip(), shown)
        elif line.startswith("$ "):
            steps.append((line[2:].removesuffix("\\").strip(), []))
        else:
            assert steps, f"output before any command in a console block: {line!r}"
            steps[-1][1].append(line)
        continued = line.rstrip().endswith("\\")
    return steps


HEX = re.compile(r"\b(?=[0-9a-f]*[0-9])[0-9a-f]{8,}\b")
"""A hash, or an id made from one."""
NOTE_ID = re.compile(r"\bm-([0-9a-f]{8})\b")
"""A note's id: random hex, with a digit or not (`m-efcebcfa`); `findall` gives the hex."""

VOLATILE = (
    (
        re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})?"),
        "<when>",
    ),
    (re.compile(r"\b\d{2}:\d{2}:\d{2}(?:\.\d+)?\b"), "<when>"),
    (HEX, "<hex>"),
    (NOTE_ID, "m-<hex>"),
    (re.compile(r"\b\d+(?:\.\d+)? ?s\b"), "<age>"),
    (re.compile(r"\bpid \d+\b"), "pid <pid>"),
    (re.compile(r"~\d+(?=/\d+ tokens\b)"), "~<size>"),
)
"""What differs from run to run: timestamps, hashes and the ids made from them (threads,
interactions, notes), ages or durations in seconds, process ids, and a model request's projected
size (it quotes the seconds left)."""


Volatile = tuple[tuple[re.Pattern[str], str], ...]


def normalized(line: str, volatile: Volatile = ()) -> str:
    for pattern, stands_for in (*VOLATILE, *volatile):
        line = pattern.sub(stands_for, line)
    return " ".join(line.split())


def matched_lines(
    shown: list[str], printed: str, volatile: Volatile = ()
) -> tuple[list[tuple[str, str]], list[str]]:
    """The shown lines each with the printed line it matched, in order, and the shown lines the
    printed output lacks (elisions skipped); `volatile` normalizes more than `VOLATILE`."""
    raw = printed.splitlines()
    actual = [normalized(line, volatile) for line in raw]
    at, matched, missing = 0, [], []
    for line in shown:
        if line.strip() in ("", ELIDED):
            continue
        try:
            found = actual.index(normalized(line, volatile), at)
        except ValueError:
            missing.append(line)
        else:
            matched.append((line, raw[found]))
            at = found + 1
    return matched, missing


def missing_lines(shown: list[str], printed: str) -> list[str]:
    """The shown lines that the printed output lacks, in the order shown (elisions skipped)."""
    return matched_lines(shown, printed)[1]


def bound_ids(matched: list[tuple[str, str]]) -> dict[str, str]:
    """The ids shown bound to the ids printed in their place, line by line."""
    bound: dict[str, str] = {}
    for shown, printed in matched:
        for pattern in (HEX, NOTE_ID):
            ids_shown, ids_printed = pattern.findall(shown), pattern.findall(printed)
            if len(ids_shown) == len(ids_printed):
                pairs = zip(ids_shown, ids_printed, strict=True)
                bound.update((a, b) for a, b in pairs if a != b)
    return bound


def warrant_command() -> list[str]:
    """The `warrant` console script of the interpreter running the tests."""
    script = shutil.which("warrant", path=str(Path(sys.executable).parent))
    return [script] if script else [sys.executable, "-c", "from graph.cli.main import main; main()"]


def fresh_environment(folder: Path) -> dict[str, str]:
    """The caller's environment without Warrant's, a model's or a tracer's settings, with a store,
    a home and a terminal width of the test's own."""
    passed = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("WARRANT_", "OPENAI_", "OTEL_", "LANGSMITH_", "LANGCHAIN_"))
    }
    home = folder / "home"
    home.mkdir()
    return passed | {
        "WARRANT_DB": str(folder / "warrant.sqlite"),
        "HOME": str(home),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "COLUMNS": "100",
    }


@dataclass
class Command:
    """One `$ command` of a block, parsed."""

    text: str
    environment: dict[str, str] = field(default_factory=dict)
    """`NAME=VALUE` words before the program, or an `export`'s (then `words` is empty)."""
    exported: bool = False
    words: list[str] = field(default_factory=list)
    """The program and its arguments; `warrant` for any virtual environment's warrant."""
    jq_key: str | None = None
    """`| jq -r .KEY`: the command's JSON output's KEY is what is printed."""
    exit_code: int | None = None
    """A trailing `# exit N`; -9 (killed) for a comment saying `kill -9`."""


def parsed(text: str) -> Command:
    words = shlex.split(text, comments=True)
    said = re.search(r"#\s*exits? (\d+)\b[^'\"]*$", text)
    killed = re.search(r"#[^'\"]*\bkill -9\b[^'\"]*$", text)
    command = Command(text, exit_code=int(said[1]) if said else -signal.SIGKILL if killed else None)
    if words[:1] == ["export"]:
        command.exported, words = True, words[1:]
    while words and re.fullmatch(r"[A-Z_][A-Z0-9_]*=.*", words[0]):
        name, _, value = words.pop(0).partition("=")
        command.environment[name] = value
    if "|" in words:
        at = words.index("|")
        words, pipe = words[:at], words[at + 1 :]
        assert len(pipe) == 3 and pipe[:2] == ["jq", "-r"] and pipe[2].startswith("."), (
            f"a console block pipes into `jq -r .KEY` only: {text}"
        )
        command.jq_key = pipe[2][1:]
    if words and (words[0] == "warrant" or words[0].endswith("/bin/warrant")):
        words[0] = "warrant"
    command.words = words
    assert command.exported or words, f"no command: {text}"
    assert not command.exported or not words, f"export takes NAME=VALUE words only: {text}"
    return command


def expected_exit(command: Command, shown: list[str]) -> int | None:
    """The exit code the block implies: its `# exit N`; any failure (None) where it shows an
    `error:` line; 3 where the run stops at a person's interruption; else 0."""
    if command.exit_code is not None:
        return command.exit_code
    if any(line.startswith("error:") for line in shown):
        return None
    if any(re.match(r"\s*(?:\S+ )?turn \d+ interrupted ", line) for line in shown):
        return 3
    return 0


def exit_is_expected(code: int, expected: int | None) -> bool:
    return code != 0 if expected is None else code == expected


@dataclass
class Ran:
    """What a command did: its exit code, what it printed (stdout and stderr as one stream, as on
    a terminal) and its stdout alone (what a pipe takes)."""

    code: int
    printed: str
    stdout: str


class _Both(io.StringIO):
    """A stream that also writes into another (stdout into the merged output)."""

    def __init__(self, merged: io.StringIO) -> None:
        super().__init__()
        self.merged = merged

    def write(self, text: str) -> int:
        self.merged.write(text)
        return super().write(text)


def run_in_process(words: list[str], cwd: Path, environment: Mapping[str, str]) -> Ran:
    """`warrant …` (its console script's `main`) or `python -m MODULE …` in this process, in `cwd`
    with exactly `environment`."""
    from graph.cli.main import main

    if words[0] == "warrant":
        argv, target = [warrant_command()[0], *words[1:]], main
    else:
        assert words[:2] == ["python", "-m"], words
        argv = [words[2], *words[3:]]

        def target() -> None:  # what `python -m` runs of the modules allowed: their main()
            importlib.import_module(words[2]).main()

    printed = io.StringIO()
    stdout = _Both(printed)
    with (
        as_process(argv, cwd, environment, only=True),
        contextlib.redirect_stdout(stdout),
        contextlib.redirect_stderr(printed),
    ):
        code = exit_code(target)
    return Ran(code, printed.getvalue(), stdout.getvalue())


AS_A_TERMINAL_SEES: dict[str, Any] = {
    "stdin": subprocess.DEVNULL,
    "stdout": subprocess.PIPE,
    "stderr": subprocess.STDOUT,
    "text": True,
}
"""A command's process as a console block shows it: no input, its stdout and stderr as one text."""


def run_in_subprocess(words: list[str], cwd: Path, environment: Mapping[str, str]) -> Ran:
    """The same in a process of its own (stdout alone is not kept apart)."""
    program = warrant_command() if words[0] == "warrant" else [sys.executable]
    result = subprocess.run(
        [*program, *words[1:]], cwd=cwd, env=dict(environment), timeout=600, **AS_A_TERMINAL_SEES
    )
    return Ran(result.returncode, result.stdout, result.stdout)


Runner = Callable[[list[str], Path, Mapping[str, str]], Ran]


def jq_value(printed: str, key: str) -> str:
    """What `jq -r .KEY` prints for a JSON object."""
    value = json.loads(printed)[key]
    return (value if isinstance(value, str) else json.dumps(value)) + "\n"


def replaced(text: str, names: Mapping[str, str]) -> str:
    """`text` with each of `names` replaced by its value, longest first."""
    for name in sorted(names, key=len, reverse=True):
        text = text.replace(name, names[name])
    return text


def check_block(
    block: list[str],
    cwd: Path,
    environment: dict[str, str],
    *,
    modules: tuple[str, ...] = (),
    names: Mapping[str, str] | None = None,
    runners: Mapping[int, Runner] | None = None,
    volatile: Volatile = (),
    run: Runner = run_in_process,
    where: str = "the block",
) -> None:
    """Run each command of a console block in `cwd` and check its exit code and that it printed
    each shown line, in order. `environment` is the block's (an `export` changes it); `names` maps
    what the page shows to what this run has instead (a path, a URL): commands get the value, and
    printed output the name back; `runners` run the commands at those indexes their own way;
    `volatile` is what else differs from run to run in this block's output."""
    names = dict(names or {})
    back = {value: name for name, value in names.items()}
    for index, (text, shown) in enumerate(commands_and_output(block)):
        command = parsed(replaced(text, names))
        if command.exported:
            environment.update(command.environment)
            assert not [line for line in shown if line.strip()], f"output after an export: {text}"
            continue
        words = command.words
        assert words[0] == "warrant" or (words[:2] == ["python", "-m"] and words[2] in modules), (
            f"{where}'s console blocks run warrant"
            + (f" and python -m {', '.join(modules)}" if modules else "")
            + f" only: {text}"
        )
        ran = (runners or {}).get(index, run)(words, cwd, environment | command.environment)
        printed = ran.printed
        if command.jq_key is not None:
            stderr = printed.replace(ran.stdout, "", 1)
            printed = stderr + jq_value(ran.stdout, command.jq_key)
        printed = replaced(printed, back)
        expected = expected_exit(command, shown)
        assert exit_is_expected(ran.code, expected), (
            f"$ {text}\nexited {ran.code}, not "
            + ("with a failure" if expected is None else str(expected))
            + f"\n{printed}"
        )
        matched, missing = matched_lines(shown, printed, volatile)
        assert not missing, (
            f"$ {text} no longer prints these lines of {where} (in this order):\n"
            + "\n".join(missing)
            + f"\n--- it printed:\n{printed}"
        )
        for shown_id, printed_id in bound_ids(matched).items():
            names.setdefault(shown_id, printed_id)
