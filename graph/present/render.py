"""Rendering for people: the handover as Markdown, and a ledger line escaped for a console or a
page (the line itself is `graph/present/ledger_lines.py`'s)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from graph.present.anchors import citation_anchors, line_anchors
from graph.present.escaping import escaped
from graph.present.ledger_lines import interaction_summary, ledger_line
from guards.citations import FROM_MEMORY, base_ref
from guards.finalize import ended_as

FLAG_NOTES = {
    "instruction_like_text": "reads like an instruction; quoted as data, not followed",
    "undecodable_bytes": "contains bytes that are not UTF-8",
}


def handover_markdown(handover: Mapping[str, Any]) -> str:
    """The handover for a person: evidence with line numbers, statements, unknowns, refusals."""
    lines = [
        f"# Handover: {handover['scenario']} ({handover['thread_id']})",
        "",
        f"**Goal:** {handover['goal']}",
        _ended_line(handover),
        *_stopped_line(handover.get("stopped_by")),
        *_revision_lines(handover),
        "",
        f"> {handover['statement']}",
        "",
        "## Evidence",
    ]
    targets = citation_anchors(handover)
    cited = set(targets.values())
    for item in handover["evidence"]:
        lines += _evidence_markdown(item, cited)
    if not handover["evidence"]:
        lines += ["", "No evidence was gathered."]
    lines += _memory_markdown(handover.get("memory", []), handover.get("remembered", []))
    lines += _statements_markdown(handover, targets)
    lines += _children_markdown(handover.get("children", []))
    lines += ["", "## Unknowns", ""] + [f"- {unknown}" for unknown in handover["unknowns"]]
    lines += ["", "## Refusals", ""]
    lines += [_refusal_line(refusal) for refusal in handover["refusals"]] or ["None."]
    lines += _skills_markdown(handover.get("skills", []))
    lines += _pending_markdown(handover.get("pending", []))
    return "\n".join(map(escaped, lines)) + "\n"


def _ended_line(handover: Mapping[str, Any]) -> str:
    """How the run ended (`guards.finalize`) and why, in one line; a handover with no ending (a
    run waiting for a person, or whose state was tampered with) says its status instead."""
    if "ending" not in handover:
        return f"**Status:** {handover['status']}{_spent(handover)}"
    reasons = " ".join(handover.get("ending_reasons", []))
    return f"**Ended:** {ended_as(handover)}{_spent(handover)}" + (
        f" — {reasons}" if reasons else ""
    )


def _stopped_line(stop: Mapping[str, Any] | None) -> list[str]:
    """Who stopped the run, when they asked and why (`warrant stop`): a person's words."""
    if not stop:
        return []
    asked = datetime.fromtimestamp(stop["at"], UTC).isoformat(timespec="seconds")
    why = f": “{stop['reason']}”" if stop.get("reason") else ""
    return [f"**Stopped by:** {stop['by']} at {asked}{why}"]


NOTE_TEXT_NOT_KEPT = (
    "its text is read from memory when shown (`warrant show`), never kept in a published report"
)


def _memory_markdown(notes: list[Mapping[str, Any]], saved: list[Mapping[str, Any]]) -> list[str]:
    """Recalled notes apart from the evidence: history, not observed in this run."""
    lines = []
    if notes:
        lines += ["", "## Historical notes (memory, not evidence)", ""]
        lines += ["Recalled from the team's memory; nothing here was observed in this run.", ""]
        for note in notes:
            about = f"{_anchor(note['ref'])}**{note['ref']}** note {note['note']} v{note['version']} (recalled for {note['query']!r})"
            said = note.get("forgotten") or (
                f"“{note['text']}”" if "text" in note else NOTE_TEXT_NOT_KEPT
            )
            lines.append(f"- {about}: {said}")
    if saved:
        lines += ["", "## Saved to memory by people", ""]
        lines += [
            f"- note {note['note']} v{note['version']} in {note['project']}, {'edited and ' if note['edited'] else ''}approved by {note['by']}"
            for note in saved
        ]
    return lines


def _skills_markdown(skills: list[Mapping[str, Any]]) -> list[str]:
    """The methods the model was shown (they suggested; they granted nothing)."""
    if not skills:
        return []
    return ["", "## Methods shown to the model", ""] + [
        f"- {skill['id']} v{skill['version']} (sha256 {skill['sha256'][:16]}…)" for skill in skills
    ]


def _pending_markdown(pending: list[Mapping[str, Any]]) -> list[str]:
    if not pending:
        return []
    lines = ["", "## Waiting for a person", ""]
    for interaction in pending:
        who = f"child {interaction['lane']}, " if interaction.get("lane") else ""
        lines.append(
            f"- `{interaction['interaction_id']}` ({who}turn {interaction['turn']}): {interaction_summary(interaction)}"
        )
    thread = pending[0]["thread"]
    lines += [
        "",
        f"Reply with `warrant resume {thread} --answer TEXT` (a question) or `--approve`, `--reject`,",
    ]
    lines += ["`--edit JSON` (an approval), adding `--interaction ID` when several are pending."]
    return lines


def _evidence_markdown(item: Mapping[str, Any], cited: set[str]) -> list[str]:
    """`cited`: the anchors a statement's citation links to, each line's placed before it (a
    fenced block holds no anchor: the block is split there)."""
    if item.get("kind") == "human_answer":
        return _answer_markdown(item, cited)
    args = ", ".join(f"{key}={value!r}" for key, value in shown_args(item).items())
    via = f" · via child {item['lane']} (its {item['lane_ref']})" if item.get("lane") else ""
    if carried := item.get("carried_from"):
        via += f" · carried from {carried['thread']} (its {carried['ref']}; not run again)"
    read = _read_whole(item)
    digest = ", ".join(_digest(source["sha256"]) for source in read) if read else None
    lines = [
        "",
        f"### {_anchor(item['ref'])}{item['ref']} · {item['tool']}({args}) · {heading_record(item)}{via}",
        f"{digest or _digest(item.get('sha256'))} · {item['summary']}"
        + (" · truncated" if item["truncated"] else ""),
    ]
    if computed := item.get("computed"):
        lines.append(f"Computed, not stated by any source, by the query: `{computed['query']}`")
    if item["excerpt"]:
        lines += _fenced(item["excerpt"], line_anchors(item), cited)
    for flag in item["flags"]:
        flagged = [str(line["line"]) for line in item["excerpt"] if flag in line["flags"]]
        note = FLAG_NOTES.get(flag, flag)
        lines.append(f"⚠ {flag} on line(s) {', '.join(flagged)}: {note}.")
    return lines + _shown_markdown(item.get("shown"))


def shown_args(item: Mapping[str, Any]) -> dict[str, Any]:
    """A call's arguments as its heading shows them, in Markdown and HTML: not the path (the
    heading names the record) nor an option left out; for a computation, not its query and plot
    (shown below it)."""
    computed = bool(item.get("computed"))
    return {
        key: value
        for key, value in item["args"].items()
        if key != "path" and value is not None and not (computed and key in ("query", "plot"))
    }


def _read_whole(item: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The records an item read, where it read more than one of the grant's (a search over every
    spec): its heading names each with its digest, not the first alone. Empty otherwise."""
    sources = item.get("sources") or []
    return [] if item.get("family") or len(sources) < 2 else list(sources)


def heading_record(item: Mapping[str, Any]) -> str:
    """What an item's heading, in Markdown and HTML, says it read: each record where it read
    several of the grant's (`a + b`), else its record."""
    return (
        " + ".join(source["record"] for source in read)
        if (read := _read_whole(item))
        else item["record"]
    )


def _digest(sha256: str | None) -> str:
    """A receipt's digest, shortened; a call whose result never came back has none."""
    return f"sha256 `{sha256[:16]}…`" if sha256 else "no sha256 (nothing came back)"


def _fenced(excerpt: list[Mapping[str, Any]], anchors: list[str], cited: set[str]) -> list[str]:
    """The excerpt as a text block, split before each cited line to give it its anchor."""
    lines = [""]
    for number, (line, anchor) in enumerate(zip(excerpt, anchors, strict=True)):
        if anchor in cited:
            lines += [*(["```", ""] if number else []), _anchor(anchor), ""]
        if number == 0 or anchor in cited:
            lines.append("```text")
        lines.append(f"L{line['line']:<5} {line['text']}")
    return [*lines, "```"]


def _shown_markdown(shown: Mapping[str, Any] | None) -> list[str]:
    """What the model was shown of an item its post-call hooks narrowed, marked as such: the
    receipt above is what the record says."""
    if not shown:
        return []
    by = ", ".join(shown["by"])
    if "withheld" in shown:
        return [
            "",
            f"*The model was shown no body of it (post-call hooks {by}): {shown['withheld']}.*",
        ]
    lines = [
        "",
        f"*What the model was shown (narrowed by {by}):* {shown['summary']}",
        "",
        "```text",
    ]
    lines += [f"L{line['line']:<5} {line['text']}" for line in shown["excerpt"]]
    return [*lines, "```"]


def _answer_markdown(item: Mapping[str, Any], cited: set[str]) -> list[str]:
    unasked = item["tool"] == "correct"  # a correction (`warrant correct`): no question
    said = "correction, unasked" if unasked else "answer"
    lines = [
        "",
        f"### {_anchor(item['ref'])}{item['ref']} · {_whose(item)} {said} (not a verified observation){_answer_origin(item)}",
        *([] if unasked else [f"Question: {item['args']['question']}"]),
        "",
    ]
    anchors = line_anchors(item)
    return lines + [
        f"> {_anchor(anchor) if anchor in cited else ''}{line['text']}"
        for line, anchor in zip(item["excerpt"], anchors, strict=True)
    ]


def _revision_lines(handover: Mapping[str, Any]) -> list[str]:
    """A continuation's place in its report: which revision, continuing which run."""
    if not handover.get("parent"):
        return []
    return [
        f"**Revision:** {handover['revision']} of report {handover['report']} (continues {handover['parent']})"
    ]


def _anchor(ref: str) -> str:
    """The evidence section's anchor, which a statement's citation links to."""
    return f'<a id="{ref.lower()}"></a>'


def _link(ref: str, targets: Mapping[str, str]) -> str:
    """A citation as a link: to the line it names (the first of a range the item shows), or to
    the item (`graph/present/anchors.py`)."""
    return f"[{ref}](#{targets.get(ref, base_ref(ref).lower())})"


def _answer_origin(item: Mapping[str, Any]) -> str:
    if late := item.get("late_for"):
        return f" · a late answer to {late}'s question"
    if carried := item.get("carried_from"):
        return f" · carried from {carried['thread']} (its {carried['ref']})"
    return ""


def _whose(item: Mapping[str, Any]) -> str:
    return f"{escaped(item['by'])}'s" if item.get("by") else "a person's"


def _statements_markdown(handover: Mapping[str, Any], targets: Mapping[str, str]) -> list[str]:
    if not (handover["hypotheses"] or handover["chooser_stop_text"]):
        return []
    lines = ["", "## The chooser's statements (not findings)", ""]
    held = {item["ref"] for item in [*handover["evidence"], *(handover.get("memory") or ())]}
    if handover["chooser_stop_text"]:
        lines.append(f"- Stop: {handover['chooser_stop_text']}")
    lines += [
        f"- Hypothesis, {_citing(hypothesis, targets, held)}: {hypothesis['statement']}"
        for hypothesis in handover["hypotheses"]
    ]
    return lines


def _citing(hypothesis: Mapping[str, Any], targets: Mapping[str, str], held: set[str]) -> str:
    """Its refs as links, and any citation this run cannot resolve, marked as such: evidence it
    does not have, or a line its item does not show."""
    links = [_link(ref, targets) for ref in hypothesis["refs"]]
    cited = f"citing {', '.join(links)}" if links else "citing no evidence of this run"
    unresolved = hypothesis.get("unresolved") or ()
    if absent := [ref for ref in unresolved if base_ref(ref) not in held]:
        cited += f" ({', '.join(absent)}: unresolved, no such evidence in this run)"
    if unshown := [ref for ref in unresolved if base_ref(ref) in held]:
        cited += f" ({', '.join(unshown)}: unresolved, a line its item does not show)"
    if hypothesis.get("from_memory"):
        cited += f" ({FROM_MEMORY})"
    return cited


def _children_markdown(children: list[Mapping[str, Any]]) -> list[str]:
    """Each child's handoff: what it gathered and read, what it could not obtain, and its own
    statements, which are the child's and not the run's findings."""
    if not children:
        return []
    lines = ["", "## Children (delegated investigations)"]
    for child in children:
        spent, budget = child["spent"], child["budget"]
        lines += [
            "",
            f"### Child {child['lane']} · {child['status']} · {spent['steps']} of {budget['steps']} steps",
            f"Goal: {child['goal']}",
            f"Evidence through this child: {', '.join(child['evidence']) or 'none'}",
        ]
        lines += [
            f"- {read['ref']} read {read['record']} lines {_ranges(read['lines'])}"
            for read in child["read"]
        ]
        lines += [f"- Could not obtain: {unknown}" for unknown in child["unknowns"]]
        if child["stop_text"]:
            lines.append(f"- Child {child['lane']} said (not a finding): {child['stop_text']}")
        lines += [
            f"- Child {child['lane']}'s statement, citing {', '.join(statement['refs']) or 'nothing'} (not a finding): {statement['statement']}"
            for statement in child["statements"]
        ]
        lines += [_refusal_line(refusal) for refusal in child["refusals"]]
    return lines


def _spent(handover: Mapping[str, Any]) -> str:
    """` after 4 of 8 turns`, when the handover knows both (one built from a run whose state was
    tampered with holds only what was sealed, and may know neither)."""
    steps = (handover.get("budget") or {}).get("steps")
    if handover.get("turns") is None or steps is None:
        return ""
    return f" after {handover['turns']} of {steps} turns{_by_children(handover)}"


def _by_children(handover: Mapping[str, Any]) -> str:
    spent = sum(child["spent"]["steps"] for child in handover.get("children", ()))
    return f" (and {spent} spent by children)" if spent else ""


def _ranges(ranges: list[list[int]]) -> str:
    shown = [f"{first}" if first == last else f"{first}–{last}" for first, last in ranges]
    return ", ".join(shown) or "none shown"


def _refusal_line(refusal: Mapping[str, Any]) -> str:
    call = refusal.get("call")
    what = _refused_what(call) if isinstance(call, Mapping) else ""
    return f"- turn {refusal['turn']} · `{refusal['code']}` · owner {refusal['owner']}{what}: {refusal['detail']}"


def _refused_what(call: Mapping[str, Any]) -> str:
    """What a refusal was about: a tool call, or a delegated task (which has a goal, no name)."""
    if "name" in call:
        return f" · call {call.get('id')} `{call['name']}`"
    return f" · task {call.get('id')}"


def event_summary(event: Mapping[str, Any]) -> str:
    """One line describing a ledger entry's payload."""
    return escaped(ledger_line(event))
