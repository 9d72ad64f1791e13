"""searchlogs against ripgrep (and grep) on generated logs, in the same run.

    .venv/bin/python bench/searchlogs.py [--sizes 100M,1G,5G] [--reps 5] [--dir .] [--cli 256M]

(`pip install -e '.[bench]'` brings `rg`.) For each size: a deterministic UVM log is generated
(and deleted afterwards, before the next size is generated), flushed to disk and read once so that
every timed run finds it in the page cache; searchlogs' counts are checked against `rg -c` first;
then, interleaved: the first 20 matches with `count=false` (vs `rg -F -n -m 20`), the whole tool
for a string found once near the middle: its line numbered and every matching line counted to the
end (vs `rg -F -c`), the same for a regular expression (vs `rg -c`), and the peak memory of a
searchlogs full scan in a fresh process (its VmHWM, where Linux has it, else `ru_maxrss`, which
also holds the parent's peak: the whole Python process, interpreter and imports included).

With `--cli SIZE`: the search's cost through the CLI, as a user pays it. `warrant run` on a
manifest approving the log whose script makes one full-scan search, minus `warrant run` on the same
manifest whose script only stops (both admit, and so hash, the log), against `grep -F -c` on the
same file; and the extra peak memory of the run with the search.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.report import write_ratios
from lab.loggen import write_log
from scenario.digests import QUIET_NS, forget_all
from scenario.reading import reading
from scenario.registry import Record, load_scenario
from tools.logs import searchlogs
from tools.logs.searchlogs import SearchLogsArgs

SIZES = {"M": 1 << 20, "G": 1 << 30}
PROBE = """
import re, resource, sys
sys.path.insert(0, {root!r})
from tools.logs.searchlogs import SearchLogsArgs, find
with open({path!r}, "rb") as stream:
    found = find(stream, SearchLogsArgs(path="log", query={needle!r}.decode()))
hits = [found.lines[number] for number in found.hits]
try:  # this process's own peak: ru_maxrss also holds the parent's, inherited through exec
    with open("/proc/self/status") as status:
        after = int(re.search(r"VmHWM:\\s+(\\d+)", status.read())[1])
except OSError:
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(after, *(line.number for line in hits))
"""


def size_of(text: str) -> int:
    return int(text[:-1]) * SIZES[text[-1].upper()]


def generate(folder: Path, label: str) -> Path:
    """Write the log, flush it (write-back would disturb the first runs) and read it once."""
    size = size_of(label)
    free = shutil.disk_usage(folder).free
    if free < size + (1 << 30):
        sys.exit(f"{label}: {free >> 20} MiB free in {folder}, need {(size >> 20) + 1024} MiB")
    print(f"generating the {label} log in {folder}…", file=sys.stderr, flush=True)
    path = write_log(folder / f"{label}.log", size, failing=True)
    with path.open("rb") as stream:
        os.fsync(stream.fileno())
        while stream.read(1 << 20):
            pass
    time.sleep(QUIET_NS / 1e9)  # a log written this instant is never trusted by its identity
    return path


def timed(command: list[str]) -> float:
    """Wall time of a command whose output goes to a pipe (GNU grep stops at the first match when
    its output is /dev/null, which would flatter it)."""
    started = time.perf_counter()
    subprocess.run(command, stdout=subprocess.PIPE, check=False)
    return time.perf_counter() - started


def admitted(path: Path) -> Record:
    """The log as an approved record of a one-record scenario (admission hashes it, untimed)."""
    manifest = path.with_suffix(".toml")
    manifest.write_text(
        f'id = "BENCH"\nprofile = "triage"\n[[record]]\nid = "log"\nkind = "log"\npath = "{path.name}"\n'
    )
    return load_scenario(manifest).records["log"]


def executed_seconds(record: Record, needle: bytes, remembered: bool) -> float:
    """As the executor runs it: through the hashed stream, the rest of the file hashed after;
    or, `remembered`, in the process that admitted the record (its digest known by identity)."""
    if not remembered:
        forget_all()
    started = time.perf_counter()
    with reading(None) as session:
        searchlogs.run(
            SearchLogsArgs(path="log", query=needle.decode(), limit=20, count=False),
            {"path": record},
        )
        session.verify()
    return time.perf_counter() - started


CLI_MANIFEST = """id = "BENCHCLI"
profile = "triage"
goal = "Where does the reset checker report?"
[budget]
steps = 4
evidence = 2
deadline_s = 600
call_s = 600
[[record]]
id = "log"
kind = "log"
path = "{log}"
{search}
[[script]]
summary = "done"
message = {{ kind = "stop", text = "done" }}
"""
CLI_SEARCH = """[[script]]
summary = "full scan"
tool_calls = [{ id = "c1", name = "searchlogs", args = { path = "log", query = "[RST_CHK]", limit = 20 } }]
"""


def cli_manifests(path: Path) -> tuple[Path, Path]:
    """Two manifests approving the log: one whose script searches it once, one that only stops."""
    searching = path.with_name("with_search.toml")
    searching.write_text(CLI_MANIFEST.format(log=path.name, search=CLI_SEARCH))
    stopping = path.with_name("without_search.toml")
    stopping.write_text(CLI_MANIFEST.format(log=path.name, search=""))
    return searching, stopping


def waited(command: list[str]) -> tuple[float, int, resource.struct_rusage, str]:
    """Wall time, exit code, the process's own rusage (from `wait4`) and output of a command. The
    output goes to a temporary file: a pipe left unread could block it, and GNU grep stops early
    on /dev/null."""
    with tempfile.TemporaryFile() as out:
        started = time.perf_counter()
        child = subprocess.Popen(command, stdout=out, stderr=out)
        _, status, usage = os.wait4(child.pid, 0)
        seconds = time.perf_counter() - started
        child.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        return seconds, child.returncode, usage, out.read().decode(errors="replace")


def cli_run(manifest: Path) -> tuple[float, int, str, float]:
    """Wall time, peak RSS (KiB), printed JSON and CPU seconds (user and system) of `warrant run`
    on the manifest, in a fresh process."""
    warrant = Path(sys.executable).with_name("warrant")
    seconds, code, usage, printed = waited(
        [str(warrant), "run", str(manifest), "--db", "memory", "--json", "-q"]
    )
    if code != 0:
        sys.exit(f"warrant run {manifest.name} exited {code}: {printed[-500:]}")
    return seconds, usage.ru_maxrss, printed, usage.ru_utime + usage.ru_stime


def grep_cpu(command: list[str]) -> float:
    """CPU seconds (user and system) of a command."""
    usage = waited(command)[2]
    return usage.ru_utime + usage.ru_stime


def cli_rows(folder: Path, label: str, reps: int) -> dict[str, float]:
    """Medians of interleaved CLI runs with and without the search, and of `grep -F -c`."""
    path = generate(folder, label)
    searching, stopping = cli_manifests(path)
    grep = subprocess.run(
        ["grep", "-n", "-F", "[RST_CHK]", str(path)], capture_output=True, check=False
    )
    expected = [int(line.split(b":", 1)[0]) for line in grep.stdout.splitlines()[:20]]
    rg = ripgrep()
    times: dict[str, list[float]] = {
        "with": [],
        "without": [],
        "search": [],
        "search cpu": [],
        "grep -c": [],
        "grep -c cpu": [],
        "grep -n": [],
        "rg -c": [],
        "rg -c cpu": [],
        "extra peak": [],
    }
    for _ in range(reps):
        seconds, peak, printed, cpu = cli_run(searching)
        found = [line["line"] for line in json.loads(printed)["evidence"][0]["excerpt"]]
        if found != expected:
            sys.exit(f"{label}: warrant found lines {found}, grep -n {expected}")
        bare_seconds, bare_peak, _, bare_cpu = cli_run(stopping)
        times["search cpu"].append(cpu - bare_cpu)
        times["with"].append(seconds)
        times["without"].append(bare_seconds)
        times["search"].append(seconds - bare_seconds)  # paired: the process start's noise cancels
        times["extra peak"].append(peak - bare_peak)
        times["grep -c"].append(timed(["grep", "-F", "-c", "[RST_CHK]", str(path)]))
        times["grep -n"].append(timed(["grep", "-F", "-n", "-m", "20", "[RST_CHK]", str(path)]))
        times["grep -c cpu"].append(grep_cpu(["grep", "-F", "-c", "[RST_CHK]", str(path)]))
        times["rg -c"].append(timed([rg, "-F", "-c", "[RST_CHK]", str(path)]))
        times["rg -c cpu"].append(grep_cpu([rg, "-F", "-c", "[RST_CHK]", str(path)]))
    path.unlink()
    return {name: statistics.median(values) for name, values in times.items()}


def print_cli(label: str, m: dict[str, float], reps: int) -> None:
    search = m["search"]
    print(
        f"\nThrough the CLI (`warrant run --db memory`, medians of {reps} interleaved runs; search: the median of each pair's difference)\n"
    )
    print(
        "| log | run with the search | run without | search | rg -F -c | ratio | grep -F -c | ratio | grep -F -n -m 20 | ratio | extra peak memory |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    print(
        f"| {label} | {m['with'] * 1000:.0f} ms | {m['without'] * 1000:.0f} ms | {search * 1000:.0f} ms "
        f"| {m['rg -c'] * 1000:.0f} ms | {search / m['rg -c']:.2f}× "
        f"| {m['grep -c'] * 1000:.0f} ms | {search / m['grep -c']:.2f}× | {m['grep -n'] * 1000:.0f} ms | {search / m['grep -n']:.2f}× "
        f"| {m['extra peak'] / 1024:.1f} MiB |"
    )
    print(
        f"\nThe same pairs in CPU time (user and system, from each process's own rusage; a process "
        f"start's wall time varies more): search {m['search cpu'] * 1000:.0f} ms, `grep -F -c` "
        f"{m['grep -c cpu'] * 1000:.0f} ms, {m['search cpu'] / m['grep -c cpu']:.2f}×; `rg -F -c` "
        f"{m['rg -c cpu'] * 1000:.0f} ms, {m['search cpu'] / m['rg -c cpu']:.2f}×."
    )


def peak_kib(path: Path, needle: bytes) -> int:
    """The probe's peak RSS, after checking its line numbers against `grep -n`."""
    root = str(Path(__file__).resolve().parent.parent)
    out = subprocess.run(
        [sys.executable, "-c", PROBE.format(root=root, path=str(path), needle=needle)],
        capture_output=True,
        text=True,
        check=True,
    )
    peak, *numbers = out.stdout.split()
    grep = subprocess.run(
        ["grep", "-n", "-F", "-m", "20", needle.decode(), str(path)],
        capture_output=True,
        check=False,
    )
    expected = [line.split(b":", 1)[0].decode() for line in grep.stdout.splitlines()]
    if numbers != expected:
        sys.exit(f"{path.name}: searchlogs found lines {numbers}, grep -n {expected}")
    return int(peak)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100M,1G")
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--dir", default=".", help="where the logs are generated")
    parser.add_argument("--cli", default="", help="a size to measure through `warrant run` only")
    parser.add_argument("--json", type=Path, help="also write the ratios to this file")
    args = parser.parse_args()
    if args.cli:
        with tempfile.TemporaryDirectory(dir=args.dir) as folder:
            print_cli(args.cli, cli_rows(Path(folder), args.cli, args.reps), args.reps)
        return
    rg = ripgrep()
    rows = []
    with tempfile.TemporaryDirectory(dir=args.dir) as folder:
        for label in args.sizes.split(","):
            path = generate(Path(folder), label)
            print(f"timing {label}…", file=sys.stderr, flush=True)
            check_counts(path, rg)
            record = admitted(path)
            times: dict[str, list[float]] = {name: [] for name in COLUMNS}
            for _ in range(args.reps):  # interleaved
                times["executed"].append(executed_seconds(record, b"[DMA]", remembered=False))
                times["remembered"].append(executed_seconds(record, b"[DMA]", remembered=True))
                times["sha256sum"].append(timed(["sha256sum", str(path)]))
                times["first"].append(tool_seconds(path, "[DMA]", count=False))
                times["rg -m"].append(timed([rg, "-F", "-n", "-m", "20", "[DMA]", str(path)]))
                times["grep -m"].append(timed(["grep", "-F", "-n", "-m", "20", "[DMA]", str(path)]))
                times["count"].append(tool_seconds(path, "[RST_CHK]"))
                times["rg -F -c"].append(timed([rg, "-F", "-c", "[RST_CHK]", str(path)]))
                times["grep -F -c"].append(timed(["grep", "-F", "-c", "[RST_CHK]", str(path)]))
                times["regex"].append(tool_seconds(path, REGEX, regex=True))
                times["rg -c"].append(timed([rg, "-c", REGEX, str(path)]))
            medians = {name: statistics.median(values) for name, values in times.items()}
            rows.append((label, medians, peak_kib(path, b"[RST_CHK]")))
            path.unlink()
    print_rows(rows, args.reps)
    write_ratios(
        args.json,
        {
            f"searchlogs, {label}: {name} / {peer}": m[ours] / m[peer]
            for label, m, _ in rows
            for name, ours, peer in (
                ("count", "count", "rg -F -c"),
                ("regex count", "regex", "rg -c"),
                ("as executed", "executed", "sha256sum"),
            )
        },
    )


COLUMNS = (
    "executed",
    "remembered",
    "sha256sum",
    "first",
    "rg -m",
    "grep -m",
    "count",
    "rg -F -c",
    "grep -F -c",
    "regex",
    "rg -c",
)
REGEX = r"UVM_(ERROR|FATAL) \S+ @ \d+: \S+ \[RST_CHK\]"
"""A regular expression matching the one checker error, compared with `rg -c` on the same."""


def ripgrep() -> str:
    found = shutil.which("rg") or shutil.which("rg", path=str(Path(sys.executable).parent))
    if found is None:
        sys.exit("ripgrep is the peer: pip install -e '.[bench]' (the ripgrep package ships rg)")
    return found


def tool_seconds(path: Path, query: str, count: bool = True, regex: bool = False) -> float:
    """searchlogs as a chooser calls it (20 hits, the total counted to the end by default)."""
    args = SearchLogsArgs(path="log", query=query, count=count, regex=regex)
    started = time.perf_counter()
    with path.open("rb") as stream:
        searchlogs.find(stream, args)
    return time.perf_counter() - started


def check_counts(path: Path, rg: str) -> None:
    """The counts searchlogs gives are ripgrep's, before anything is timed."""
    for query, regex, command in (
        ("[RST_CHK]", False, [rg, "-F", "-c"]),
        ("[DMA]", False, [rg, "-F", "-c"]),
        (REGEX, True, [rg, "-c"]),
    ):
        expected = int(
            subprocess.run([*command, query, str(path)], capture_output=True, check=True).stdout
        )
        with path.open("rb") as stream:
            found = searchlogs.find(stream, SearchLogsArgs(path="log", query=query, regex=regex))
        if found.matching != expected:
            sys.exit(
                f"{path.name}: searchlogs counted {found.matching} lines for {query!r}, rg {expected}"
            )


def print_rows(rows: list[tuple[str, dict[str, float], int]], reps: int) -> None:
    print(
        f"searchlogs vs ripgrep and grep (medians of {reps} interleaved runs; rg and grep times include their process start)\n"
    )
    print(
        "| log | first 20 (count=false) | rg -F -n -m 20 | ratio | grep -F -n -m 20 | count, literal found once | rg -F -c | ratio | grep -F -c | count, regex | rg -c | ratio | peak RSS |"
    )
    print(
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
    )
    for label, m, peak in rows:
        print(
            f"| {label} | {m['first'] * 1000:.1f} ms | {m['rg -m'] * 1000:.1f} ms | {m['first'] / m['rg -m']:.2f}× | {m['grep -m'] * 1000:.1f} ms "
            f"| {m['count'] * 1000:.0f} ms | {m['rg -F -c'] * 1000:.0f} ms | {m['count'] / m['rg -F -c']:.2f}× | {m['grep -F -c'] * 1000:.0f} ms "
            f"| {m['regex'] * 1000:.0f} ms | {m['rg -c'] * 1000:.0f} ms | {m['regex'] / m['rg -c']:.2f}× | {peak / 1024:.1f} MiB |"
        )
    print(
        "\nAs executed: first 20 through the hashed stream, then the rest of the file hashed and "
        "checked against the admitted sha256, as a run resumed in a new process does; and in the "
        "process that admitted the record, whose digest is known by the file's identity "
        "(`scenario/reading.py`, `scenario/digests.py`)\n"
    )
    print(
        "| log | as executed, hashed | sha256sum | ratio | digest known | rg -F -n -m 20 | ratio |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for label, m, _ in rows:
        print(
            f"| {label} | {m['executed'] * 1000:.0f} ms | {m['sha256sum'] * 1000:.0f} ms | {m['executed'] / m['sha256sum']:.2f}× "
            f"| {m['remembered'] * 1000:.1f} ms | {m['rg -m'] * 1000:.1f} ms | {m['remembered'] / m['rg -m']:.2f}× |"
        )


if __name__ == "__main__":
    main()
