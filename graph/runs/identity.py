"""Message identity: a retried send finds its run; a reused id with another body is refused.

The thread id is derived from the message id alone, so a conflicting body lands on the same thread
and is detected there (seed 001, figure 2: replay, new run, or conflict).
"""

from __future__ import annotations

import hashlib


def thread_for_message(message_id: str) -> str:
    return f"msg-{hashlib.sha256(message_id.encode('utf-8')).hexdigest()[:32]}"


def check_message_id(message_id: str) -> str:
    """A message id is 1–200 printable characters; raises ValueError otherwise."""
    if not 0 < len(message_id) <= 200 or not message_id.isprintable():
        raise ValueError("--message-id must be 1 to 200 printable characters")
    return message_id
