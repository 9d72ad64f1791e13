"""Text from records, choosers or people shown to a person on one line, escaped.

Apart from the renderers so that every command's start (a one-line error names what was wrong)
needs nothing but this table.
"""

from __future__ import annotations

from contract.text import storable_text

_ESCAPES = {
    code: f"\\x{code:02x}" for code in (*range(0x20), 0x7F, *range(0x80, 0xA0)) if code != 0x09
}
_ESCAPES |= {0x0A: "\\n", 0x0D: "\\r"}
_ESCAPES |= {
    code: f"\\u{code:04x}"
    for code in (0x2028, 0x2029, *range(0x202A, 0x202F), *range(0x2066, 0x206A))
}


def escaped(text: str) -> str:
    """Text from records, choosers or people as one line for a person to read: line breaks,
    terminal control characters (escape sequences, backspaces, NUL) and bidirectional overrides
    appear escaped, so that no log line or chooser statement can forge further lines of a report
    or ledger, or drive the terminal; a lone surrogate appears as its escape, since no terminal
    encodes one. JSON output keeps the text exactly."""
    return storable_text(text.translate(_ESCAPES))
