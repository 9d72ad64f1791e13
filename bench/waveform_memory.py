"""Peak memory and time of `warrant run` calling `waveform` on a large VCD, against pywellen alone.

    .venv/bin/python bench/waveform_memory.py [--mb 100,1000] [--signals 10000] [--seed N]
        [--reps 1] [--no-fst] [--dir DIR] [--json FILE]

Each size is a VCD of `--signals` signals written by `bench.evidence_inputs.write_vcd` (its values
periodic; drawn from `random.Random(N)` with `--seed N`, which compress far less), once into
`--dir` and reused, left quiet for `QUIET_NS` before its first run (a record written long before
its run). Its manifest approves it as one `waveform` record with the default budget; a `file:`
chooser calls `waveform` on 4 named signals at the middle of the file (±`WINDOW_NS`), then stops.
Each run is a whole process under GNU time (`%M`: the process's own peak resident memory):

- Warrant: `warrant run MANIFEST --chooser file:… --db FRESH.sqlite --json -q`; its handover is
  checked (one `waveform` item: read, or refused in one line) and its budget's `call_s` read.
- the floor: the smallest size's run with only the stop (the record admitted and hashed, no call).
- pywellen alone: a python process opening the file as the tool does (`multi_threaded=False`),
  loading the 4 signals and finding each one's value at the time and its changes in the window.
- pywellen `stream_only`: the same, by `stream_changes` over the 4 signals, stopped once past the
  window (its best case: the file is read only up to the window).
- with `vcd2fst` (GTKWave) on PATH, unless `--no-fst`: each VCD converted to FST (the same
  signals and changes), read by Warrant and by pywellen alone.

Before the table, the peers are checked to find the same values and changes, and Warrant's read
to show as many changes as they find. The runs go in turns (each kind of run of each size per
round) after one warm-up round, excluded; medians of `--reps`. The same-run peers: pywellen alone
on the same file, and the smallest size's Warrant run (each peak as a ratio of them). The code
measured is what `warrant` imports: the checkout on `PYTHONPATH`, else the installed package.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

TIME = "/usr/bin/time"
NAMES = ("tb.u0.s0", "tb.u0.s3", "tb.u{last}.s7", "tb.u1.s42")
WINDOW_NS = 500
LIMIT_MB = 200
"""The requirement's memory bound (issue 57): 200 MB, i.e. 190.7 MiB of peak RSS."""
_READ = re.compile(r"4 signals at \S+, changes .*: (\d+) changes shown")


@dataclass(frozen=True)
class Input:
    """One waveform file, its manifest and its `file:` chooser's actions."""

    label: str
    path: Path
    manifest: Path
    actions: Path
    at_ns: int
    names: tuple[str, ...]


@dataclass
class Runs:
    kib: list[int] = field(default_factory=list)
    seconds: list[float] = field(default_factory=list)
    outcome: str = ""

    def add(self, kib: int, seconds: float) -> None:
        self.kib.append(kib)
        self.seconds.append(seconds)

    @property
    def mib(self) -> float:
        return statistics.median(self.kib) / 1024

    @property
    def s(self) -> float:
        return statistics.median(self.seconds)


def prepared(root: Path, mb: int, signals: int, seed: int | None, fst: bool) -> list[Input]:
    """The size's VCD (and its FST), each with a manifest and actions; written once, then reused."""
    from bench.evidence_inputs import write_vcd
    from scenario.digests import QUIET_NS

    content = "periodic" if seed is None else f"seed{seed}"
    folder = root / f"{mb}MiB-{signals}-{content}"
    marker = folder / ".complete"
    if not marker.exists():
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        print(f"writing a {mb} MiB VCD…", file=sys.stderr, flush=True)
        vcd = write_vcd(folder / "sim.vcd", mb, signals, seed)
        if fst:
            subprocess.run(
                ["vcd2fst", "sim.vcd", "sim.fst"], cwd=folder, check=True, capture_output=True
            )
        marker.write_text(json.dumps({"end_ns": vcd.end_ns}))
        time.sleep(QUIET_NS / 1e9)
    end_ns = json.loads(marker.read_text())["end_ns"]
    names = tuple(name.format(last=(signals - 1) // 100) for name in NAMES)
    vcd = (folder / "sim.vcd").stat().st_size / 2**20
    found = [_input(folder, "sim.vcd", f"{vcd:.1f} MiB VCD", end_ns // 2 + 5, names)]
    if fst and (folder / "sim.fst").exists():
        size = (folder / "sim.fst").stat().st_size
        label = f"its FST, {size / 2**20:.2f} MiB (of {vcd:.1f} MiB VCD)"
        found.append(_input(folder, "sim.fst", label, end_ns // 2 + 5, names))
    return found


def _input(folder: Path, name: str, label: str, at_ns: int, names: tuple[str, ...]) -> Input:
    stem = name.replace(".", "-")
    manifest, actions = folder / f"{stem}.toml", folder / f"{stem}.jsonl"
    manifest.write_text(
        f'id = "BENCH-WAVE"\nprofile = "triage"\ngoal = "Read the waveform."\n\n'
        f'[[record]]\nid = "{name}"\nkind = "waveform"\npath = "{name}"\n'
    )
    args = {"path": name, "signals": list(names), "at": f"{at_ns} ns", "window": f"{WINDOW_NS} ns"}
    call = {"summary": "waveform", "tool_calls": [{"id": "c1", "name": "waveform", "args": args}]}
    stop = {"summary": "stop", "message": {"kind": "stop", "text": "done"}}
    actions.write_text(json.dumps(call) + "\n" + json.dumps(stop) + "\n")
    (folder / f"{stem}-stop.jsonl").write_text(json.dumps(stop) + "\n")
    return Input(label, folder / name, manifest, actions, at_ns, names)


def timed(command: list[str], scratch: Path) -> tuple[int, float, bytes]:
    """The command's own peak RSS (KiB, GNU time's `%M`), its seconds and its output."""
    fresh = Path(tempfile.mkdtemp(dir=scratch))
    peak = fresh / "maxrss"
    started = time.perf_counter()
    done = subprocess.run(
        [TIME, "-f", "%M", "-o", str(peak), *command], capture_output=True, check=False
    )
    seconds = time.perf_counter() - started
    if done.returncode:
        raise SystemExit(f"{' '.join(command)}: exit {done.returncode}\n{done.stderr.decode()}")
    kib = int(peak.read_text().split()[-1])
    shutil.rmtree(fresh)
    return kib, seconds, done.stdout


def warrant_run(item: Input, actions: Path, scratch: Path) -> tuple[int, float, dict[str, object]]:
    db = Path(tempfile.mkdtemp(dir=scratch)) / "w.sqlite"
    warrant = Path(sys.executable).with_name("warrant")
    command = [str(warrant), "run", str(item.manifest), "--chooser", f"file:{actions}"]
    kib, seconds, out = timed([*command, "--db", str(db), "--json", "-q"], scratch)
    shutil.rmtree(db.parent)
    return kib, seconds, json.loads(out)


def outcome(handover: dict[str, object]) -> tuple[str, int | None]:
    """What the run's one waveform call did: `read` (and the changes it showed) or its refusal."""
    assert handover["status"] == "stopped", handover["status"]
    evidence = handover["evidence"]
    assert isinstance(evidence, list) and [item["tool"] for item in evidence] == ["waveform"]
    error = evidence[0]["error"]
    if error:
        return f"refused ({error}): {evidence[0]['summary']}", None
    found = _READ.fullmatch(evidence[0]["summary"])
    assert found is not None, evidence[0]["summary"]
    return "read", int(found[1])


def peer(mode: str, item: Input, scratch: Path) -> tuple[int, float, dict[str, object]]:
    command = [sys.executable, __file__, "--peer", mode, str(item.path), str(item.at_ns)]
    kib, seconds, out = timed([*command, *item.names], scratch)
    return kib, seconds, json.loads(out)


def peer_main(mode: str, path: str, at_ns: int, names: list[str]) -> None:
    """pywellen alone (a process of its own): each signal's value at `at_ns` and its changes within
    ±`WINDOW_NS`, as JSON; `bulk` opens the file as the tool does, `stream` by `stream_only`."""
    import bisect

    import pywellen

    first, last = at_ns - WINDOW_NS, at_ns + WINDOW_NS
    found: dict[str, list[object]] = {}
    if mode == "bulk":
        waveform = pywellen.Waveform(path, multi_threaded=False)
        for var in waveform.all_vars():
            if str(var.full_name) in names:
                signal = var.signal
                start = bisect.bisect_left(signal, first, key=lambda change: change[0])
                end = bisect.bisect_right(signal, last, key=lambda change: change[0])
                changes = [list(signal[i]) for i in range(start, end)]
                found[str(var.full_name)] = [signal.value_at(at_ns), changes]
    else:
        waveform = pywellen.Waveform(path, multi_threaded=False, stream_only=True)

        class Past(Exception):
            """The stream is past the window: nothing after it is needed."""

        def change(ticks: int, signal: object, value: object) -> None:
            if ticks > last:
                raise Past
            for var in waveform[signal]:
                now = found.setdefault(str(var.full_name), [None, []])
                if ticks <= at_ns:
                    now[0] = value
                if ticks >= first:
                    now[1].append([ticks, value])  # type: ignore[union-attr]

        with contextlib.suppress(Past):
            waveform.stream_changes(change, names)
    json.dump(dict(sorted(found.items())), sys.stdout, default=str)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mb", default="100,1000", help="VCD sizes, MiB")
    parser.add_argument("--signals", type=int, default=10_000)
    parser.add_argument("--seed", type=int, help="values drawn with this seed (default: periodic)")
    parser.add_argument("--reps", type=int, default=1)
    parser.add_argument("--no-fst", action="store_true", help="skip the FST runs")
    parser.add_argument("--dir", type=Path, default=Path("/tmp/warrant-waveform-memory"))
    parser.add_argument("--json", type=Path, help="also write the ratios to this file")
    args = parser.parse_args()
    if not os.access(TIME, os.X_OK):
        raise SystemExit(f"{TIME} (GNU time) is needed for each run's peak RSS")
    if args.signals < 200:
        raise SystemExit("--signals must be at least 200 (the names read reach scope tb.u1)")
    try:
        sizes = sorted({int(part) for part in args.mb.split(",")})
    except ValueError:
        raise SystemExit(
            f"--mb must be sizes in MiB separated by commas, not {args.mb!r}"
        ) from None
    fst = not args.no_fst and shutil.which("vcd2fst") is not None
    args.dir.mkdir(parents=True, exist_ok=True)
    inputs = [item for mb in sizes for item in prepared(args.dir, mb, args.signals, args.seed, fst)]
    scratch = args.dir / "runs"
    scratch.mkdir(exist_ok=True)
    kinds = ("warrant", "bulk", "stream")
    runs = {(item.label, kind): Runs() for item in inputs for kind in kinds}
    floor, budget = Runs(), dict[str, object]()
    for round_ in range(args.reps + 1):  # the first round warms the page cache: excluded
        for item in inputs:
            kib, took, handover = warrant_run(item, item.actions, scratch)
            budget = handover["budget"]  # type: ignore[assignment]
            said, shown = outcome(handover)
            runs[item.label, "warrant"].outcome = said
            found = {}
            for mode in ("bulk", "stream") if item.path.suffix == ".vcd" else ("bulk",):
                peak, seconds, found[mode] = peer(mode, item, scratch)
                if round_:
                    runs[item.label, mode].add(peak, seconds)
            _check(item, found, shown)
            if round_:
                runs[item.label, "warrant"].add(kib, took)
        stop = inputs[0].actions.with_name(inputs[0].actions.stem + "-stop.jsonl")
        kib, took, _ = warrant_run(inputs[0], stop, scratch)
        if round_:
            floor.add(kib, took)
    _print(inputs, runs, floor, budget, args)
    smallest = runs[inputs[0].label, "warrant"].mib
    ratios = {}
    for item in inputs:
        ratios[f"waveform {item.label}: Warrant / pywellen alone, peak RSS"] = (
            runs[item.label, "warrant"].mib / runs[item.label, "bulk"].mib
        )
        ratios[f"waveform {item.label}: Warrant / {inputs[0].label} Warrant, peak RSS"] = (
            runs[item.label, "warrant"].mib / smallest
        )
    from bench.report import write_ratios

    write_ratios(args.json, ratios)


def _check(item: Input, found: dict[str, dict[str, list[object]]], shown: int | None) -> None:
    """The peers found the same values and changes, and Warrant (if it read) showed them all."""
    bulk = found["bulk"]
    if sorted(bulk) != sorted(item.names):
        raise SystemExit(f"{item.label}: pywellen found {sorted(bulk)}, not {sorted(item.names)}")
    if "stream" in found and found["stream"] != bulk:
        raise SystemExit(f"{item.label}: stream_only found {found['stream']}, bulk {bulk}")
    total = sum(len(changes) for _, changes in bulk.values())  # type: ignore[arg-type]
    if shown is not None and shown != total:
        raise SystemExit(f"{item.label}: Warrant showed {shown} changes, pywellen found {total}")


def _print(
    inputs: list[Input],
    runs: dict[tuple[str, str], Runs],
    floor: Runs,
    budget: dict[str, object],
    args: argparse.Namespace,
) -> None:
    content = "periodic values" if args.seed is None else f"values drawn with seed {args.seed}"
    print(f"## `waveform` on a large waveform: peak RSS (MiB) and seconds, median of {args.reps}\n")
    print(
        "| input | Warrant | Warrant s | Warrant's call | pywellen alone | s | stream_only | s"
        " | Warrant / pywellen | Warrant / smallest |"
    )
    print("| --- | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    smallest = runs[inputs[0].label, "warrant"].mib
    for item in inputs:
        warrant, bulk = runs[item.label, "warrant"], runs[item.label, "bulk"]
        stream = runs[item.label, "stream"]
        streamed = f"{stream.mib:.0f} | {stream.s:.2f}" if stream.kib else "— | —"
        print(
            f"| {item.label} | {warrant.mib:.0f} | {warrant.s:.2f} | {warrant.outcome.split(':')[0]}"
            f" | {bulk.mib:.0f} | {bulk.s:.2f} | {streamed} | {warrant.mib / bulk.mib:.2f}×"
            f" | {warrant.mib / smallest:.2f}× |"
        )
    print(
        f"\nthe floor (`warrant run` of the {inputs[0].label} with only the stop: admitted and"
        f" hashed, no call): {floor.mib:.0f} MiB, {floor.s:.2f} s. The bound: {LIMIT_MB} MB ="
        f" {LIMIT_MB * 1e6 / 2**20:.1f} MiB. The call's limit: budget.call_s = {budget['call_s']} s"
        f" (the run's deadline_s = {budget['deadline_s']} s); each Warrant run's seconds, from its"
        " spawn to its exit, bound its call's."
    )
    refused = [runs[item.label, "warrant"].outcome for item in inputs]
    for said in [said for said in refused if said != "read"][:1]:
        print(f"\nA refusal, as the run's evidence gives it: {said.split(': ', 1)[1]}")
    print(
        f"\n{args.signals:,} signals, {content}; 4 read at the middle ±{WINDOW_NS} ns. Peak RSS:"
        f" GNU time's %M of each process. {os.cpu_count()} cores."
    )


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    if sys.argv[1:2] == ["--peer"]:
        peer_main(sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5:])
    else:
        main()
