"""The one signature rule, for a log's error line and a history cell alike (`signature`): what
`triage` buckets failures by, and what tells a bucket known from new.

The line (or cell), Questa's `# ` prefix dropped and its ends stripped, is reduced to what names
its failure:

- UVM: `SEVERITY ID message` (file, line, time and reporter dropped), from the whole line or from
  the shorthand people write in a history (`UVM_ERROR [ID] message`);
- Verilator: `%Error[-CODE]: message`;
- a cocotb test's failure record: `LEVEL logger <test> failed…` (`tools/logs/tracebacks.py`; its
  traceback's exception line, when it has one, is the failure's line and is reduced as any other
  text); another cocotb line: `LEVEL logger message`;
- a commercial simulator's message (`tools/logs/simmessages.py`'s `shape`): Xcelium's
  `*E,CODE: message` (tool, location and time dropped), VCS's `$error` as `Error: scope` (file,
  line and time dropped), a VCS block's first line (`Error-[NOA] Null object access`), a Questa
  message or a crash line as it is;
- anything else as it is.

A message that starts with the test's name and a colon loses it; then it is masked, in order:

1. the test's name → `<test>`: the member's test (its file name without `.log`/`.txt`/`.out`/
   `.gz`), with or without a `test_` before it and a `_test` after it (`fill`, `test_fill` and
   `fill_test` for the test `fill`; the name is never cut, so the test `test_reset` masks no
   `reset` of a message);
2. a seed, `seed` then an optional `=`/`:` then a number → `seed <seed>`;
3. a path, any token holding a `/` or a `\\` → `<path>`;
4. hex: `0x…`, a Verilog based literal whose digits are its base's (`8'hff`, `1'b1`, `'d10`; not a
   quoted word such as `'BAD'`), a word of 6 or more hex digits holding both a digit and a letter
   → `<hex>`;
5. a time, a number followed by `fs|ps|ns|us|ms|s` → `<time>`;
6. a number not inside a word (`agt[3]`, `burst 7 of 16`; not `fifo0`) → `<n>`;
7. runs of blanks made one space; at most `MAX_SIGNATURE_CHARS` characters kept.

So `# UVM_ERROR tb/sb.sv(91) @ 1200: uvm_test_top.env.sb [SB_MISMATCH] exp 0x5 got 0x4` has the
signature `UVM_ERROR SB_MISMATCH exp <hex> got <hex>`, with or without the prefix.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath

from tools.logs import simmessages, tracebacks

MAX_SIGNATURE_CHARS = 300
TEST_SUFFIXES = (".gz", ".log", ".txt", ".out")

_UVM_TEXT = re.compile(
    r"^(UVM_(?:ERROR|FATAL)) (?:(?:[^@]|@(?! ))*? )?@ [^:]*: \S* \[([^\]]*)\]\s*(.*)$"
)
_UVM_SHORT = re.compile(r"^(UVM_(?:ERROR|FATAL))\s+\[([^\]]*)\]\s*(.*)$")
"""A UVM message as people write it in a history cell: severity, `[ID]`, text (no file or time)."""
_VERILATOR_TEXT = re.compile(r"^(?:\[[\d.]+\] )?%(Error(?:-[\w]+)?):\s*(.*)$")
_COCOTB_TEXT = re.compile(simmessages.COCOTB_ERROR)
_TEXT_PREFIX = re.compile(simmessages.TRANSCRIPT_PREFIX)
_SEED = re.compile(r"(?i)\bseed\b\s*[=:]?\s*-?\d+")
_PATH = re.compile(r"[^\s()\[\]{}<>,;'\"`]*[/\\][^\s()\[\]{}<>,;'\"`]*")
_HEX = re.compile(
    r"\b0[xX][0-9a-fA-F_]+\b"
    r"|(?<![\w'])\d*'[sS]?(?:[bB][01xXzZ?_]+|[oO][0-7xXzZ?_]+|[dD][0-9xXzZ?_]+|[hH][0-9a-fA-F_xXzZ?]+)\b"
    r"|\b(?=[0-9a-fA-F]*[0-9])(?=[0-9a-fA-F]*[a-fA-F])[0-9a-fA-F]{6,}\b"
)
_TIME = re.compile(r"(?<![\w.])\d+(?:\.\d+)?\s*(?:fs|ps|ns|us|ms|s)\b")
_NUMBER = re.compile(r"(?<![\w.])[-+]?\d+(?:\.\d+)?(?![\w])")
_BLANKS = re.compile(r"\s+")


def member_test(member: str) -> str:
    """A member's test: its file name without `TEST_SUFFIXES` (`runs/R44/reset_smoke.log.gz` →
    `reset_smoke`)."""
    name = PurePosixPath(member).name
    changed = True
    while changed:
        changed = False
        for suffix in TEST_SUFFIXES:
            if name.endswith(suffix) and len(name) > len(suffix):
                name, changed = name[: -len(suffix)], True
    return name


def name_pattern(test: str) -> str:
    """The test's name as rule 1 masks it: with or without `test_` before it, `_test` after it."""
    return rf"(?:test_)?{re.escape(test)}(?:_test)?"


def mask(text: str, test: str = "") -> str:
    """The masking rules 1–7 (module docstring), in order."""
    if test:
        text = re.sub(rf"(?<![\w]){name_pattern(test)}(?![\w])", "<test>", text)
    text = _SEED.sub("seed <seed>", text)
    text = _PATH.sub("<path>", text)
    text = _HEX.sub("<hex>", text)
    text = _TIME.sub("<time>", text)
    text = _NUMBER.sub("<n>", text)
    return _BLANKS.sub(" ", text).strip()[:MAX_SIGNATURE_CHARS]


def without_test(message: str, test: str) -> str:
    """A message that starts with the test's name (rule 1's forms) and a colon, without it."""
    if test:
        return re.sub(rf"^{name_pattern(test)}\s*:\s*", "", message)
    return message


def signature(text: str, test: str = "") -> str:
    """The one signature rule, for an error line and a history cell alike (module docstring)."""
    text = _TEXT_PREFIX.sub("", text, count=1).strip()
    if uvm := _UVM_TEXT.match(text) or _UVM_SHORT.match(text):
        shape = f"{uvm[1]} {uvm[2]} {without_test(uvm[3], test)}"
    elif verilator := _VERILATOR_TEXT.match(text):
        shape = f"%{verilator[1]}: {without_test(verilator[2], test)}"
    elif record := tracebacks.shape(text):
        shape = record
    elif cocotb := _COCOTB_TEXT.match(text):
        shape = f"{cocotb[1]} {cocotb[2]} {without_test(cocotb[3], test)}"
    else:
        shape = simmessages.shape(text) or without_test(text, test)
    return mask(shape, test)


def error_signature(raw: bytes, test: str = "") -> str:
    """The signature of an error line (`signature`)."""
    return signature(raw.decode("utf-8", "replace"), test)


def cell_signature(cell: str, test: str = "") -> str:
    """A history row's `signature` cell, by the same rule as an error line (`signature`)."""
    return signature(cell, test)
