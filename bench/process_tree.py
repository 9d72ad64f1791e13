"""A process tree's memory, sampled from /proc while its root runs: each process's peak (VmHWM)
and the tree's largest sum of VmRSS at one sample (`bench/triage_cli.py`)."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

SAMPLE_S = 0.05
OWN_NAME = Path("/proc/self/comm").read_text().strip()


class ProcessTree:
    """Every process descended from `root` while it runs, with its depth under `root` (found by
    parent id in /proc every `SAMPLE_S`, and kept once found: an orphan is still followed), each
    one's peak resident memory (VmHWM as last read: it only grows, so a sample misses only growth
    in a process's last `SAMPLE_S`), and the largest sum of the tree's VmRSS at one sample."""

    def __init__(self, root: int) -> None:
        self.root = root
        self.depth = {root: 0}
        self.peaks: dict[int, int] = {}  # pid: VmHWM, KiB
        self.total_kib = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        live = {self.root}
        while not self._stop.is_set():
            for pid, ppid in _parents():
                if ppid in live and pid not in self.depth:
                    self.depth[pid] = self.depth[ppid] + 1
                    live.add(pid)
            total = 0
            for pid in list(live):
                status = _status(pid)
                if status is None:
                    live.discard(pid)
                    continue
                if not self.depth[pid] and status["Name"] == OWN_NAME:
                    continue  # the root not yet exec'd: still this process's memory
                self.peaks[pid] = max(self.peaks.get(pid, 0), status["VmHWM"])
                total += status["VmRSS"]
            self.total_kib = max(self.total_kib, total)
            self._stop.wait(SAMPLE_S)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()

    def at(self, depth: int) -> list[int]:
        """The peaks of the processes `depth` below the root, largest first."""
        found = (kib for pid, kib in self.peaks.items() if self.depth[pid] == depth)
        return sorted(found, reverse=True)


def _parents() -> Iterator[tuple[int, int]]:
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                stat = Path(entry.path, "stat").read_text()
            except OSError:
                continue
            yield int(entry.name), int(stat.rsplit(")", 1)[1].split()[1])


def _status(pid: int) -> dict[str, Any] | None:
    """`Name`, `VmHWM` and `VmRSS` (KiB) of a live process; None once it is gone (a zombie has
    no VmHWM: it counts as gone)."""
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    found: dict[str, Any] = {}
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key == "Name":
            found[key] = value.strip()
        elif key in ("VmHWM", "VmRSS"):
            found[key] = int(value.split()[0])
    return found if "VmHWM" in found else None
