"""JUnit XML as a nightly's member: each `<testcase>` a test with its verdict, the way cocotb's
`results.xml`, VUnit's and pytest's `--junitxml` write them.

A testcase with a `<failure>` or an `<error>` *fails*; its first error is that element's line in
the XML file, with its message (the `message` attribute, cocotb 2's `error_type: error_msg`, or
`msg`; else its text; of a message of several lines, pytest's first `E   ` line, else its first
non-blank line), bucketed by the one signature rule
(`signatures.py`). A `<skipped>` testcase has *no verdict* and says it was skipped (a skip is not a
pass); any other testcase *passes*. A test's name is its `name`, qualified as `classname.name`
where two testcases of the file share a name. A file with no testcase states nothing: *no verdict*.

The file is read as any member is (`memberfile.py`: pinned, hashed, gzip decompressed), fed to the
standard library's expat parser as it is read, so memory stays with the tests, not the file. A
JUnit report has no DTD: a file that declares one (`<!DOCTYPE …>`, where entities live: a billion
laughs, an external entity) is refused before any entity is expanded, and one past
`MAX_JUNIT_BYTES` is not read; each is that member's unknown, one line.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Any
from xml.parsers import expat

from tools.logs.familyscan import MAX_KEPT_CHARS, Cited, MemberScan, Verdict, scan_member
from tools.logs.memberfile import NO_LIMITS, Limits, Member, Unread, read_chunks
from tools.logs.signatures import member_test, signature

MAX_JUNIT_BYTES = 256 << 20
"""A JUnit file larger than this (decompressed) is not read."""
MAX_TEXT_CHARS = 64 << 10
"""Of a failure's text, the characters gathered to find its first line."""
ROOTS = ("testsuites", "testsuite")
FAILED = ("failure", "error")
_PYTEST_E = re.compile(r"(?:^|\s)E {3}(\S[^\n]*?)(?=\sE {3}|\n|$)")
"""pytest's `E   AssertionError: …` (an attribute's newlines are read as spaces, as XML says)."""
NO_DTD = "declares a DTD (<!DOCTYPE>), which a JUnit report never has: not read, no entity expanded"


def is_junit(member_id: str) -> bool:
    """Whether a member is read as JUnit XML: its name ends `.xml` (or `.xml.gz`)."""
    return member_id.lower().removesuffix(".gz").endswith(".xml")


def scan(member: Member, limits: Limits = NO_LIMITS) -> MemberScan:
    """A member scanned by its format: JUnit XML here, any other by the log rules."""
    return scan_junit(member, limits) if is_junit(member.id) else scan_member(member, limits)


@dataclass
class _Case:
    name: str
    classname: str
    line: int
    failed: Cited | None = None
    """The `<failure>`/`<error>` line, its text filled when the element ends."""
    skipped: Cited | None = None
    text: list[str] = field(default_factory=list)
    """The failing element's text, gathered while it has no message."""


@dataclass
class _Reader:
    member: str
    parser: Any = None
    root: bool = False
    case: _Case | None = None
    gathering: bool = False
    cases: list[_Case] = field(default_factory=list)

    def start(self, name: str, attrs: dict[str, str]) -> None:
        if not self.root:
            if name not in ROOTS:
                raise Unread(f"is not a JUnit report (its root is <{name[:40]}>): not read")
            self.root = True
        line = self.parser.CurrentLineNumber
        if name == "testcase":
            self.case = _Case(attrs.get("name", ""), attrs.get("classname", ""), line)
        elif self.case is not None and name in FAILED and self.case.failed is None:
            self.case.failed = Cited(self.member, line, _message(name, attrs))
            self.gathering = not self.case.failed.text
        elif self.case is not None and name == "skipped" and self.case.skipped is None:
            self.case.skipped = Cited(self.member, line, attrs.get("message", ""))

    def text(self, data: str) -> None:
        case = self.case
        if self.gathering and case is not None and sum(map(len, case.text)) < MAX_TEXT_CHARS:
            case.text.append(data)

    def end(self, name: str) -> None:
        if name in FAILED and self.gathering and self.case and self.case.failed:
            self.gathering = False
            first = first_line("".join(self.case.text))
            self.case.failed = replace(self.case.failed, text=first or f"<{name}>")
        elif name == "testcase" and self.case is not None:
            self.cases.append(self.case)
            self.case = None


def first_line(text: str) -> str:
    """The line of a message that names its failure: pytest's first `E   ` line when the
    message is a pytest traceback, else its first non-blank line."""
    if said := _PYTEST_E.search(text):
        return said[1].strip()
    return next((line.strip() for line in text.splitlines() if line.strip()), "")


def _message(element: str, attrs: dict[str, str]) -> str:
    """A failure's message from its attributes (pytest/VUnit `message`, cocotb 2 `error_type`
    and `error_msg`, cocotb's `msg`), or "" to read its text."""
    if message := first_line(attrs.get("message", "")):
        return message
    if error := attrs.get("error_msg", "").strip():
        kind = attrs.get("error_type", "").strip()
        return f"{kind}: {error}" if kind else error
    return attrs.get("msg", "").strip()


def _refuse(*_: object) -> int:
    raise Unread(NO_DTD)


def _parser(reader: _Reader) -> Any:
    parser = expat.ParserCreate()
    parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
    parser.StartDoctypeDeclHandler = _refuse
    parser.EntityDeclHandler = _refuse
    parser.ExternalEntityRefHandler = _refuse
    parser.StartElementHandler = reader.start
    parser.EndElementHandler = reader.end
    parser.CharacterDataHandler = reader.text
    parser.buffer_text = True
    reader.parser = parser
    return parser


def scan_junit(member: Member, limits: Limits = NO_LIMITS) -> MemberScan:
    """A JUnit file read once: one scan per testcase (`MemberScan.cases`); an unreadable or
    refused file is returned with the reason as `unread`, never raised."""
    reader = _Reader(member.id)
    parser = _parser(reader)
    fed = 0

    def visit(buffer: bytearray, count: int, last: bool) -> None:
        nonlocal fed
        fed += count
        if fed > MAX_JUNIT_BYTES:
            raise Unread(f"is larger than {MAX_JUNIT_BYTES >> 20} MiB of XML: not read")
        parser.Parse(bytes(buffer[:count]), last)

    try:
        size, notes = read_chunks(member, visit, limits)
        if not reader.root:
            raise Unread("holds no XML element: not read")
    except Unread as why:
        return MemberScan(member.id, member_test(member.id), unread=f"{member.id} {why}")
    except expat.ExpatError as error:
        bad = f"is not well-formed XML ({expat.ErrorString(error.code)}, line {error.lineno})"
        return MemberScan(member.id, member_test(member.id), unread=f"{member.id} {bad}: not read")
    cases = _scans(member.id, reader.cases)
    verdicts = {case.verdict for case in cases}
    verdict: Verdict | None = (
        "fail" if "fail" in verdicts else "pass" if "pass" in verdicts else None
    )
    if not cases:
        notes.append("holds no <testcase>: it states no verdict")
    return MemberScan(
        member.id, member_test(member.id), verdict, cases=cases, notes=tuple(notes), size=size
    )


def _scans(member: str, cases: list[_Case]) -> tuple[MemberScan, ...]:
    names = Counter(case.name for case in cases)
    return tuple(_case_scan(member, case, names[case.name] > 1) for case in cases)


def _case_scan(member: str, case: _Case, shared: bool) -> MemberScan:
    test = f"{case.classname}.{case.name}" if shared and case.classname else case.name
    if case.failed is not None:
        text = case.failed.text[:MAX_KEPT_CHARS]
        first = replace(case.failed, text=text)
        return MemberScan(member, test, "fail", first_error=first, signature=signature(text, test))
    if case.skipped is not None:
        said = f": {case.skipped.text}" if case.skipped.text else ""
        note = f"{test}: skipped (line {case.skipped.number}{said}), not a pass"
        return MemberScan(member, test, None, notes=(note[:MAX_KEPT_CHARS],))
    return MemberScan(member, test, "pass")
