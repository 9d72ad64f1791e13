"""Sample morning reports (the triage receipt's `triage` report, `docs/nightly.md`), built here and
never by the code under test: a nightly of `tests` members, seeded, with hostile cells."""

from __future__ import annotations

import random
from typing import Any

SIGNATURES = (
    "UVM_ERROR RST_CHK clk_en not asserted within <n> cycles of synchronized reset release",
    "UVM_ERROR [AXI_SCB] read | data `0x<n>` *mismatch* [see](http://evil.example) <script>x</script>",
    "%Error: tb/fifo_tb.sv:<n>: Assertion failed: fifo overflow $stop $x$ & ~~gone~~ #1 \\ end",
    "cocotb AssertionError: 受信バイト 0x<n> != 送信バイト\nsecond line\x1b[31m",
)


def sample_report(tests: int = 40, *, seed: int = 1, history: bool = True) -> dict[str, Any]:
    """A report of `tests` members: about a quarter failing in the signatures above, a few with
    no verdict, one not read; per-test history (oldest first, today's last) when `history`."""
    rng = random.Random(seed)
    rows, no_verdict, counts = [], [], {"pass": 0, "fail": 0, "no_verdict": 0}
    bucket_of: dict[int, dict[str, Any]] = {}
    for index in range(tests):
        member = f"runs/N7/test_{index:04d}.log"
        name = f"test_{index:04d}"
        draw = rng.random()
        status = "fail" if draw < 0.25 else "no_verdict" if draw < 0.3 else "pass"
        counts[status] += 1
        before = "".join(rng.choice("PPPPF") for _ in range(6))
        today = {"fail": "F", "pass": "P", "no_verdict": "-"}[status]
        row = {
            "test": name,
            "member": member,
            "status": status,
            "bucket": None,
            "new": None,
            "history": before + today if history else None,
            "flaky": history and before.count("F") >= 2,
            "first_error": None,
        }
        if status == "fail":
            kind = (counts["fail"] * 3 + rng.randrange(2)) % len(SIGNATURES)  # each one seen
            line = rng.randrange(1, 5000)
            text = SIGNATURES[kind].replace("<n>", str(line))
            row["first_error"] = {"member": member, "line": line, "text": text}
            row["new"] = ("F" not in before) if history else None
            bucket = bucket_of.setdefault(
                kind,
                {
                    "id": "",
                    "count": 0,
                    "signature": SIGNATURES[kind],
                    "status": None,
                    "first_seen": None,
                    "example": {"member": member, "line": line, "text": text},
                },
            )
            bucket["count"] += 1
            row["bucket"] = kind
        if status == "no_verdict":
            no_verdict.append({"member": member, "test": name, "why": "cut before any verdict"})
        rows.append(row)
    buckets = sorted(bucket_of.items(), key=lambda pair: -pair[1]["count"])
    for number, (kind, bucket) in enumerate(buckets, 1):
        bucket["id"] = f"B{number}"
        if history:
            bucket["status"] = "known" if kind == 0 else "new"
            bucket["first_seen"] = (
                {"run": "N1", "date": "2026-11-19", "line": 2} if kind == 0 else None
            )
    ids = {kind: bucket["id"] for kind, bucket in buckets}
    for row in rows:
        row["bucket"] = ids.get(row["bucket"]) if row["bucket"] is not None else None
    news = sum(1 for row in rows if row["new"] is True)
    return {
        "summary": {
            "members": tests + 1,
            **counts,
            "not_read": 1,
            "buckets": len(buckets),
            "new_failures": news if history else None,
        },
        "buckets": [bucket for _, bucket in buckets],
        "tests": rows,
        "no_verdict": no_verdict,
        "not_read": [{"member": "runs/N7/broken.log.gz", "why": "not gzip: bad magic | <b>x</b>"}],
    }
