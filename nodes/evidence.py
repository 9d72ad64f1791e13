"""Evidence items: tool observations (E1, E2, …) and people's answers (H1, H2, …).

Both share one shape so that the handover, the chooser's view and the ledger treat them alike; the
`kind` tells an observation of an approved record from a person's statement, which is not verified.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from contract.codes import RefusalCode
from contract.errors import RecordRefusal
from contract.shapes import EvidenceItem, ExcerptLine, Interaction, RecordedFamily
from guards.provenance import Provenance, source_provenance
from scenario.registry import Record
from tools.excerpt import Excerpt, make_line
from tools.storable import Unstorable, storable

PERSON = "A person's answer: a statement, not a verified observation."


def family_members(family: Mapping[str, Any], grant: Mapping[str, Any]) -> list[str]:
    """The ids of a recorded family's members: a glob's from the grant, a list's as listed."""
    glob = family.get("glob")
    return list(grant["families"][glob]) if glob is not None else list(family.get("ids", ()))


def observations(evidence: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The tool evidence (E refs): what the evidence budget counts and receipts are keyed on."""
    return [item for item in evidence if item.get("kind", "observation") == "observation"]


def evidence_item(
    call: dict[str, Any],
    records: dict[str, Record],
    excerpt: Excerpt | None,
    error: RecordRefusal | None,
    turn: int,
    family: RecordedFamily | None = None,
    primary: tuple[str, str | None, list[dict[str, str]]] | None = None,
    primary_share: str = "local",
) -> EvidenceItem:
    """An evidence item (DESIGN §6). A failed read is evidence too: it says what could not be seen,
    and so is a result no store keeps as it is (`_result`). A family tool's receipt names its
    family as its record (its members are the grant's); `primary` names a record that is not the
    grant's (an MCP tool: `mcp_item`), shareable where `primary_share` says `any`. The item
    carries its `provenance` from here on."""
    sources: list[dict[str, Any]] = [
        {"record": record.id, "sha256": record.sha256} for record in records.values()
    ]
    provenances = [source_provenance(record.id, record.share) for record in records.values()]
    if family is not None:
        provenances.append(source_provenance(family["name"], family["share"]))
    if primary is not None:
        record, sha256, sources = primary[0], primary[1], list(primary[2])
        provenances = [source_provenance(primary[0], primary_share)]
    elif family is not None:
        record, sha256 = family["name"], family["sha256"]
    else:
        first = next(iter(records.values()))
        record, sha256 = first.id, first.sha256
    base: EvidenceItem = {
        "ref": call["ref"],
        "kind": "observation",
        "call_id": call["id"],
        "turn": turn,
        "tool": call["name"],
        "args": call["args"],
        "record": record,
        "sha256": sha256,
        "sources": sources,
        "provenance": Provenance().joined(*provenances).as_record(),
    }
    if family is not None:
        base["family"] = family
    if error is None:
        if excerpt is None:
            raise TypeError("a read that did not fail has an excerpt")
        try:
            return {**base, **_result(excerpt)}  # type: ignore[typeddict-item]
        except Unstorable as exc:  # recorded as the call's failure: the run goes on
            error = RecordRefusal(RefusalCode.UNSTORABLE_RESULT, f"{exc}: no store keeps it")
    return {
        **base,
        "summary": f"could not be read: {error.detail}",
        "excerpt": [],
        "truncated": False,
        "flags": [],
        "error": error.code,
    }


def _result(excerpt: Excerpt) -> dict[str, Any]:
    """What a tool returned, as its receipt records it: the one place a tool's result becomes
    evidence, so every value in it is made canonical here, before anything seals or stores it
    (`tools.storable`: NaN, infinities, integers past 64 bits in their typed forms); a value no
    form keeps raises `Unstorable`, and the call is recorded failed."""
    lines: list[ExcerptLine] = [
        {"line": line.number, "text": line.text, "flags": list(line.flags)}
        for line in excerpt.lines
    ]
    result: dict[str, Any] = {
        "summary": excerpt.summary,
        "excerpt": lines,
        "truncated": excerpt.truncated,
        "flags": list(excerpt.flags),
        "error": None,
    }
    if excerpt.unknowns:
        result["unknowns"] = list(excerpt.unknowns)
    if excerpt.computed is not None:
        result["computed"] = excerpt.computed
    if excerpt.report is not None:  # the executor stores it as a body (`nodes.reports`)
        result["triage"] = excerpt.report
    kept: dict[str, Any] = storable(result, "the result")
    return kept


def mcp_item(
    call: dict[str, Any],
    source: dict[str, str],
    digest: str | None,
    excerpt: Excerpt | None,
    error: RecordRefusal | None,
    turn: int,
    share: str = "local",
) -> EvidenceItem:
    """An MCP call's receipt: its record is the tool (`mcp:server.tool`) at the schema pinned at
    admission (`source`), its sha256 the digest of all the server sent (none when it failed);
    shareable only where the manifest says `share = "remote"` (`share` is then `any`)."""
    item = evidence_item(
        call,
        {},
        excerpt,
        error,
        turn,
        None,
        primary=(source["record"], digest, [source]),
        primary_share=share,
    )
    return item


def correction_item(
    correction: Mapping[str, Any], number: int, ref: str, turn: int
) -> EvidenceItem:
    """A person's correction (`warrant correct`), unasked: evidence labelled as their statement,
    as an answer is."""
    question: Interaction = {"interaction_id": f"correction-{number}", "turn": turn, "question": ""}
    item = answer_item(question, {"answer": correction["text"], "by": correction["by"]}, ref)
    return item | {"tool": "correct", "args": {"correction": number}}


def answer_item(question: Interaction, reply: dict[str, Any], ref: str) -> EvidenceItem:
    """A person's answer to a question, as evidence labelled as their statement."""
    lines = [
        make_line(number, text)
        for number, text in enumerate(reply["answer"].splitlines() or [""], 1)
    ]
    return {
        "ref": ref,
        "kind": "human_answer",
        "call_id": question["interaction_id"],
        "turn": question["turn"],
        "tool": "ask_user",
        "args": {"question": question["question"]},
        "record": None,
        "sha256": None,
        "sources": [],
        "summary": PERSON,
        "excerpt": [
            {"line": line.number, "text": line.text, "flags": list(line.flags)} for line in lines
        ],
        "truncated": False,
        "flags": sorted({flag for line in lines for flag in line.flags}),
        "error": None,
        # Who answered: `contract.shapes.EvidenceItem` has no `by` field yet (its owner is told).
        **({"by": reply["by"]} if reply.get("by") else {}),  # type: ignore[typeddict-unknown-key]
    }


def quoting(item: Mapping[str, Any]) -> list[str]:
    """The unknowns that quote an evidence item's summary: what a remote route must not see of a
    record approved for local routes only."""
    return [*told(item), *([failed(item)] if item.get("error") else [])]


def about_ref(unknown: str, refs: Iterable[str]) -> str | None:
    """The ref among `refs` an unknown is about: an unknown about an item starts with its ref."""
    return next((ref for ref in refs if unknown.startswith((f"{ref}:", f"{ref} "))), None)


def told(item: Mapping[str, Any]) -> list[str]:
    """What an item says it could not tell: the tool's own unknowns, else that it is truncated."""
    if told := item.get("unknowns"):
        return [f"{item['ref']}: {unknown}" for unknown in told]
    return [_truncated(item)] if item.get("truncated") else []


def _truncated(item: Mapping[str, Any]) -> str:
    return f"{item['ref']} is truncated: more lines exist than were shown ({item['summary']})."


def failed(item: Mapping[str, Any]) -> str:
    return f"{item['ref']}: {item['summary']}"
