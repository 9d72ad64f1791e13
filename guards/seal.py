"""Seals: proof that a value in a run's state was written by the run itself.

A run's state lives in storage that others can write: a LangGraph server's API
(`threads.update_state`, a command's `update`), or anyone with the database. Authority must not
rest on such a value unless the run wrote it. Every value a node writes is sealed with an HMAC
(SHA-256) under a key the run's workers hold and clients do not; every node checks the seals of
the state it is given before it uses it. A value without a valid seal is not used: the run ends
with a recorded `state_tampered` refusal.

The key: `WARRANT_SEAL_KEY` (any text; every worker that advances the same runs needs the same
one, e.g. every replica of a server), else a random key kept in `~/.config/warrant/seal.key`
(mode 0600), made on first use.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import json
import os
import secrets
from pathlib import Path
from typing import Any

import ormsgpack

KEY_ENV = "WARRANT_SEAL_KEY"
SEAL = "seal"
"""The field that carries an item's seal, in list items and task payloads."""


def key_file() -> Path:
    config = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(config) / "warrant" / "seal.key"


def _key(from_env: str | None, path: Path) -> bytes:
    if from_env:
        return hashlib.sha256(from_env.encode("utf-8")).digest()
    try:
        return bytes.fromhex(path.read_text().strip())
    except (OSError, ValueError):
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    fresh = secrets.token_hex(32)
    try:  # O_EXCL: two processes making the key at once agree on the first one written
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as out:
            out.write(fresh)
    except FileExistsError:
        return bytes.fromhex(path.read_text().strip())
    return bytes.fromhex(fresh)


@functools.cache
def _keyed(from_env: str | None, config: str | None, home: str | None) -> hmac.HMAC:
    """An HMAC ready for the key (copied for each seal): read or made once per process for each
    place the key is taken from (`config` and `home`, what `key_file` reads: a process whose
    config folder changes reads that folder's key)."""
    return hmac.new(_key(from_env, key_file()), digestmod="sha256")


def _mac() -> hmac.HMAC:
    environ = os.environ
    from_env = environ.get(KEY_ENV) or None
    return _keyed(from_env, environ.get("XDG_CONFIG_HOME"), environ.get("HOME")).copy()


def canonical(value: Any) -> bytes:
    """The value's bytes, maps with sorted keys: what a checkpoint gives back encodes as what the
    node wrote (tuples come back as lists; both are arrays). MessagePack, as the checkpoints
    themselves (ten times faster than JSON here); JSON for what it cannot encode (an integer
    beyond 64 bits), prefixed so the two never meet."""
    try:
        return b"m" + ormsgpack.packb(value, option=ormsgpack.OPT_SORT_KEYS)
    except (TypeError, ValueError):
        text = json.dumps(
            value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=repr
        )
        return b"j" + text.encode("utf-8", "surrogatepass")


def seal_of(label: str, value: Any) -> str:
    """The seal of `value` written under `label` (a channel name, or an item's kind)."""
    mac = _mac()
    mac.update(label.encode() + b"\x00" + canonical(value))
    return mac.hexdigest()


def is_sealed(label: str, value: Any, seal: object) -> bool:
    return isinstance(seal, str) and hmac.compare_digest(seal, seal_of(label, value))


def sealed_item(label: str, item: dict[str, Any]) -> dict[str, Any]:
    """A list item or task payload carrying its own seal."""
    body = {name: value for name, value in item.items() if name != SEAL}
    return {**body, SEAL: seal_of(label, body)}


def item_is_sealed(label: str, item: object, ignore: frozenset[str] = frozenset()) -> bool:
    """`ignore`: fields a reducer adds after the node wrote the item (an event's `seq`)."""
    if not isinstance(item, dict):
        return False
    body = {name: value for name, value in item.items() if name != SEAL and name not in ignore}
    return is_sealed(label, body, item.get(SEAL))
