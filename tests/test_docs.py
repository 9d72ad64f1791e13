"""The docs' console blocks are what the commands print: every ```` ```console ```` block of docs/*.md
is run as the README's are (tests/console_blocks.py), in a fresh folder with a store of its own and
the lab beside it, so that `lab/…` paths resolve as they do at the repository's root.

Where a page shows a path of the reader's (`/path/to/warrant` for the repository, `/path/to/here`
for the current folder) or a URL of their server, the test gives the command its own and reads the
output back in the page's words. A block that needs what a page showed before it (a run whose ledger
it reads) runs that block first; one that needs a model gets a local OpenAI-compatible server with
the route the page exports; one that needs real processes (a kill, replicas on PostgreSQL and Redis)
is marked slow and runs them.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.console_blocks import (
    AS_A_TERMINAL_SEES,
    Ran,
    Runner,
    Volatile,
    bound_ids,
    check_block,
    commands_and_output,
    expected_exit,
    fenced_blocks,
    fresh_environment,
    matched_lines,
    parsed,
    warrant_command,
)
from tests.fake_openai import FakeOpenAI
from tests.langgraph_server import free_port
from tests.nodes.choosers.test_model import GOOD_R42

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
PAGES = {page.name: page.read_text(encoding="utf-8") for page in sorted(DOCS.glob("*.md"))}
BLOCKS = [(name, block) for name, text in PAGES.items() for block in fenced_blocks(text, "console")]


def first_command(block: list[str]) -> str:
    return commands_and_output(block)[0][0]


def earlier_block(page: str, command: str) -> list[str]:
    """The block of `page` whose first command is `command`."""
    (block,) = [block for name, block in BLOCKS if name == page and first_command(block) == command]
    return block


@dataclass
class Given:
    """What a block is given: an environment (a fresh one, with the setup's additions), names on
    the page for this run's things (page's name: this run's), and commands to run their own way (by
    index in the block)."""

    environment: dict[str, str]
    names: dict[str, str]
    runners: dict[int, Runner] = field(default_factory=dict)
    volatile: Volatile = ()


Setup = Callable[[pytest.FixtureRequest, str, Path, Given], AbstractContextManager[None]]

MODEL_URL = "http://127.0.0.1:8000/v1"
"""The model endpoint docs/model-chooser.md exports: a local OpenAI-compatible server."""


@contextmanager
def endpoint_503_then_good_r42(
    request: pytest.FixtureRequest, page: str, folder: Path, given: Given
) -> Iterator[None]:
    """docs/model-chooser.md's endpoint: HTTP 503 once, then a good investigation of R42."""
    server = FakeOpenAI([{"status": 503, "content": "overloaded"}, *GOOD_R42])
    given.names[MODEL_URL] = server.url
    with server.running():
        yield


@contextmanager
def wide_eval_table(
    request: pytest.FixtureRequest, page: str, folder: Path, given: Given
) -> Iterator[None]:
    """docs/evaluation.md's table as a 200-column terminal shows it, whatever each run's seconds
    (s/run, the table's only number with two decimals)."""
    given.environment["COLUMNS"] = "200"
    given.volatile = ((re.compile(r"(?<= )\d+\.\d\d(?= )"), "<s/run>"),)
    yield


@contextmanager
def design_repository(
    request: pytest.FixtureRequest, page: str, folder: Path, given: Given
) -> Iterator[None]:
    """docs/changes.md's folder: its manifest and action file as the page shows them, beside a
    repository `design/` of two commits (made with dulwich, dates fixed) tagged R41 and R42."""
    from tests.tools.repo import gitmade

    [manifest] = fenced_blocks(PAGES[page], "toml")
    [actions] = fenced_blocks(PAGES[page], "json")
    (folder / "design.toml").write_text("\n".join(manifest) + "\n")
    (folder / "design.jsonl").write_text("\n".join(actions) + "\n")
    repo = gitmade.init(folder / "design")
    first = {"rtl/clkgate.sv": b"module clkgate;\nassign clk_en = en;\nendmodule\n"}
    r41 = gitmade.commit(repo, first, "clkgate: first cut", "2026-12-01T18:00:00+00:00", [])
    second = {
        "rtl/clkgate.sv": b"module clkgate;\nassign clk_en = en & ~rst;\nendmodule\n",
        "tb/reset_smoke.py": b"# smoke\n",
    }
    subject = "clkgate: hold clk_en low in reset"
    r42 = gitmade.commit(repo, second, subject, "2026-12-02T09:30:00+00:00", [r41], "Grace")
    gitmade.tag(repo, "R41", r41)
    gitmade.tag(repo, "R42", r42)
    repo.refs[b"refs/heads/master"] = r42
    repo.close()
    yield


PAGE_DB = "postgresql://postgres@127.0.0.1:5432/warrant"
"""The PostgreSQL database the pages name: a fresh one in the tests."""


def killed_at(point: str) -> Runner:
    """The command as a process of its own, killed with kill -9 where it pauses at `point` (see
    graph/crashpoints.py): what it printed until then."""

    def run(words: list[str], cwd: Path, environment: Mapping[str, str]) -> Ran:
        signal_file = cwd / "paused"
        output = cwd / "killed.out"
        with output.open("w") as printed:
            process = subprocess.Popen(
                [*warrant_command(), *words[1:]],
                cwd=cwd,
                env={
                    **environment,
                    "WARRANT_PAUSE_AT": point,
                    "WARRANT_PAUSE_FILE": str(signal_file),
                    "PYTHONUNBUFFERED": "1",
                },
                stdin=subprocess.DEVNULL,
                stdout=printed,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        deadline = time.monotonic() + 120
        while not signal_file.exists():
            assert process.poll() is None, f"exited before {point}:\n{output.read_text()}"
            assert time.monotonic() < deadline, f"no pause at {point}:\n{output.read_text()}"
            time.sleep(0.05)
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=30)
        return Ran(process.returncode, output.read_text(), output.read_text())

    return run


@contextmanager
def killed_on_postgres(
    request: pytest.FixtureRequest, page: str, folder: Path, given: Given
) -> Iterator[None]:
    """docs/durability.md's recovery: the run on a fresh PostgreSQL database, killed after turn 3's
    proposal was recorded, before the guard decides it."""
    given.names[PAGE_DB] = request.getfixturevalue("postgres_url")
    given.runners[1] = killed_at("before:guard@3")
    yield


SERVE_WARRANT = ROOT / ".venv-serve" / "bin" / "warrant"
PAGE_REDIS = "redis://127.0.0.1:6379/0"
REDIS_DB = 15
"""The Redis database the serving page's replicas get (tests/graph/server/test_scale_out.py takes
them from 8 up)."""


def served_until_ctrl_c(words: list[str], cwd: Path, environment: Mapping[str, str]) -> Ran:
    """`warrant serve …` from the server's environment until it says it serves, then Ctrl-C (SIGINT
    to its process group, as a terminal sends it): what it printed."""
    process = subprocess.Popen(
        [str(SERVE_WARRANT), *words[1:]],
        cwd=cwd,
        env=dict(environment),
        start_new_session=True,
        **AS_A_TERMINAL_SEES,
    )
    lines: list[str] = []
    serving = threading.Event()

    def read() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            lines.append(line)
            if line.startswith("serving "):
                serving.set()
        serving.set()  # it ended

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        assert serving.wait(180), f"warrant serve said nothing of serving:\n{''.join(lines)}"
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGINT)
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        reader.join(10)
    return Ran(process.returncode, "".join(lines), "".join(lines))


def two_free_ports() -> int:
    """A port free with the next one too."""
    for _ in range(50):
        port = free_port()
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port + 1))
            except OSError:
                continue
        return port
    raise RuntimeError("no two free ports in a row")


@contextmanager
def replicas_on_postgres_and_redis(
    request: pytest.FixtureRequest, page: str, folder: Path, given: Given
) -> Iterator[None]:
    """docs/serving.md's two replicas: from `.venv-serve`, on a fresh PostgreSQL database, a Redis
    database of their own and two free ports in place of the page's 8720 and 8721."""
    if not SERVE_WARRANT.exists():
        pytest.fail(
            f"the server's environment is missing ({SERVE_WARRANT}): "
            "python3 -m venv .venv-serve && .venv-serve/bin/pip install -e '.[serve]'"
        )
    port = two_free_ports()
    given.names |= {
        PAGE_DB: request.getfixturevalue("postgres_url"),
        PAGE_REDIS: f"redis://127.0.0.1:6379/{REDIS_DB}",
        "--port 8720": f"--port {port}",
        "127.0.0.1:8720": f"127.0.0.1:{port}",
        "127.0.0.1:8721": f"127.0.0.1:{port + 1}",
    }
    given.runners[0] = served_until_ctrl_c
    flush = ["redis-cli", "-n", str(REDIS_DB), "flushdb"]
    subprocess.run(flush, check=True, capture_output=True)
    try:
        yield
    finally:
        subprocess.run(flush, check=True, capture_output=True)


def after(*commands: str) -> Setup:
    """The page's blocks starting with `commands` run first (each checked as its own test is)."""

    @contextmanager
    def setup(
        request: pytest.FixtureRequest, page: str, folder: Path, given: Given
    ) -> Iterator[None]:
        for command in commands:
            check_block(
                earlier_block(page, command),
                folder,
                given.environment,
                names=given.names,
                where=f"docs/{page}",
            )
        yield

    return setup


SETUPS: dict[tuple[str, str], Setup] = {
    (
        "model-chooser.md",
        f"export WARRANT_MODEL=warrant-test-model OPENAI_BASE_URL={MODEL_URL} OPENAI_API_KEY=unused",
    ): endpoint_503_then_good_r42,
    (
        "evaluation.md",
        "warrant eval lab/evals/lab.toml --chooser scripted"
        " --chooser file:lab/choosers/r42_adversarial.jsonl  # exits 1",
    ): wide_eval_table,
    ("changes.md", "warrant run design.toml --chooser file:design.jsonl -q"): design_repository,
    ("walkthroughs.md", "warrant events R42-demo"): after("warrant run R42 --thread R42-demo"),
    ("walkthroughs.md", "warrant events r44-demo --verify"): after(
        "warrant run R44 --thread r44-demo"
    ),
}
"""What a block needs beyond a fresh folder, by page and first command."""

SLOW: dict[tuple[str, str], Setup] = {
    ("durability.md", f"export WARRANT_DB={PAGE_DB}"): killed_on_postgres,
    (
        "serving.md",
        f"DATABASE_URI={PAGE_DB} REDIS_URI={PAGE_REDIS} .venv-serve/bin/warrant serve"
        " --replicas 2 --port 8720",
    ): replicas_on_postgres_and_redis,
}
"""Blocks that start real processes, with what they need: the slow suite runs them."""


def block_params() -> list[object]:
    params = []
    for page, block in BLOCKS:
        command = first_command(block)
        marks = [pytest.mark.slow] if (page, command) in SLOW else []
        params.append(pytest.param(page, block, marks=marks, id=f"{page}: {command}"))
    return params


def test_the_docs_show_console_blocks_to_run():
    assert len(BLOCKS) >= 20, "docs/ has lost its console blocks"
    shown = {(page, first_command(block)) for page, block in BLOCKS}
    assert set(SETUPS) | set(SLOW) <= shown, "a setup names a block no page has"


@pytest.mark.parametrize(("page", "block"), block_params())
def test_a_docs_console_block_prints_what_it_shows(page, block, tmp_path, request):
    (tmp_path / "lab").symlink_to(ROOT / "lab")
    environment = fresh_environment(tmp_path) | {"LOGNAME": "root", "USER": "root"}  # `by root`
    del environment["WARRANT_DB"]  # the default store: the user store of the fresh home
    given = Given(
        environment=environment,
        names={"/path/to/warrant": str(ROOT), "/path/to/here": str(tmp_path)},
    )
    setup = {**SETUPS, **SLOW}.get((page, first_command(block)))
    with setup(request, page, tmp_path, given) if setup else nullcontext():
        check_block(
            block,
            tmp_path,
            given.environment,
            modules=("lab.nightly",),
            names=given.names,
            runners=given.runners,
            volatile=given.volatile,
            where=f"docs/{page}",
        )


def test_a_command_is_read_as_a_shell_would_and_its_exit_code_as_the_page_implies():
    piped = parsed("warrant run R42 --message-id t --json | jq -r .thread_id  # no new work")
    assert (piped.words, piped.jq_key, piped.exit_code) == (
        ["warrant", "run", "R42", "--message-id", "t", "--json"],
        "thread_id",
        None,
    )
    served = parsed("DATABASE_URI=x REDIS_URI=y .venv-serve/bin/warrant serve")
    assert (served.environment, served.words) == (
        {"DATABASE_URI": "x", "REDIS_URI": "y"},
        ["warrant", "serve"],
    )
    assert parsed("export A=1 B=2").exported and parsed("export A=1 B=2").environment == {
        "A": "1",
        "B": "2",
    }
    assert expected_exit(parsed("warrant eval s.toml  # exits 1"), []) == 1
    assert expected_exit(parsed("warrant run R42  # killed with kill -9 here"), []) == -9
    assert expected_exit(parsed("warrant run R99"), ["error: unknown scenario"]) is None
    assert expected_exit(parsed("warrant run R42-gated"), ["turn 2 interrupted ix-1 · q?"]) == 3
    assert expected_exit(parsed("warrant run R42"), ["turn 4 handover"]) == 0
    assert parsed("warrant resume t --answer 'see # exit 2'").exit_code is None


def test_an_id_the_output_gives_is_bound_to_the_id_shown_in_its_place():
    matched, missing = matched_lines(
        ["m-7e6d48cc version 1 (active)"], "m-9b0013dd version 1 (active)\n"
    )
    assert not missing and bound_ids(matched) == {"7e6d48cc": "9b0013dd"}
    matched, missing = matched_lines(  # a random id with no digit is an id too
        ["m-7e6d48cc version 1 (active)"], "m-efcebcfa version 1 (active)\n"
    )
    assert not missing and bound_ids(matched) == {"7e6d48cc": "efcebcfa"}
