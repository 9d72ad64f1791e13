"""The `instruction_like_text` flag's recall and false alarms, wording rules alone against wording
and structural signals, on corpora written apart from the rules.

    .venv/bin/python bench/flags.py --passages P.jsonl [--benign B.jsonl] [--logs DIR]

`--passages`: JSON lines `{"id", "language", "style", "text"}`, each an injection (written by
someone who had not read `tools/flags.py`); recall is the share flagged. `--benign`: the same shape,
ordinary record lines chosen to look risky; `--logs`: a folder of real public logs and reports (every
line of every file under it); a false alarm is a flagged line. The flag is computed as the tools
compute it, line by line (`tools.flags.instruction_flags`); also as `_PATTERNS` alone, the wording
rules before the structural signals, for comparison in the same run. Flagged benign and log lines
are listed, so that each false alarm can be read.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tools.flags import _PATTERNS, instruction_flags, normalise

MAX_LINE = 4096
"""Longer log lines are cut here (the tools show at most a few hundred characters of a line)."""


def wording_only(text: str) -> bool:
    return _PATTERNS.search(normalise(text)) is not None


def flagged(text: str) -> bool:
    return bool(instruction_flags(text))


def corpus(path: Path) -> list[dict[str, str]]:
    return [
        json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()
    ]


def log_lines(folder: Path) -> Iterator[tuple[str, str]]:
    for path in sorted(folder.rglob("*")):
        if path.is_file() and path.suffix != ".md":
            with path.open(encoding="utf-8", errors="replace") as handle:
                for line in handle:
                    yield str(path.relative_to(folder)), line.rstrip("\n")[:MAX_LINE]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--passages", type=Path, required=True)
    parser.add_argument("--benign", type=Path)
    parser.add_argument("--logs", type=Path)
    args = parser.parse_args()
    passages = corpus(args.passages)
    by_language: Counter[str] = Counter(item["language"] for item in passages)
    caught: dict[str, Counter[str]] = {"wording": Counter(), "wording + structure": Counter()}
    missed = []
    for item in passages:
        caught["wording"][item["language"]] += wording_only(item["text"])
        hit = flagged(item["text"])
        caught["wording + structure"][item["language"]] += hit
        if not hit:
            missed.append(item)
    print(f"Recall on {len(passages)} injected passages written apart from the rules\n")
    print("| language | passages | wording rules | wording + structure |")
    print("| --- | ---: | ---: | ---: |")
    for language, count in sorted(by_language.items(), key=lambda item: -item[1]):
        print(
            f"| {language} | {count} | {caught['wording'][language]} | {caught['wording + structure'][language]} |"
        )
    total = len(passages)
    print(
        f"| all | {total} | {sum(caught['wording'].values())} ({sum(caught['wording'].values()) / total:.0%}) "
        f"| {sum(caught['wording + structure'].values())} ({sum(caught['wording + structure'].values()) / total:.0%}) |"
    )
    print("\nMissed:" if missed else "")
    for item in missed:
        print(f"- {item['id']} ({item['language']}, {item['style']}): {item['text']}")
    if args.benign:
        benign = corpus(args.benign)
        alarms = [item for item in benign if flagged(item["text"])]
        before = sum(wording_only(item["text"]) for item in benign)
        print(
            f"\nFalse alarms on {len(benign)} risky-looking ordinary lines: {len(alarms)} (wording rules alone: {before})"
        )
        for item in alarms:
            print(f"- {item['id']}: {item['text']}")
    if args.logs:
        count, alarms_by_file, before = 0, Counter[str](), 0
        examples = []
        for name, line in log_lines(args.logs):
            count += 1
            before += wording_only(line)
            if flagged(line):
                alarms_by_file[name] += 1
                examples.append((name, line))
        total_alarms = sum(alarms_by_file.values())
        print(
            f"\nFalse alarms on {count} lines of real logs and reports under {args.logs}: {total_alarms} "
            f"({total_alarms / max(count, 1):.3%}; wording rules alone: {before})"
        )
        for name, line in examples[:40]:
            print(f"- {name}: {line[:200]}")


if __name__ == "__main__":
    main()
