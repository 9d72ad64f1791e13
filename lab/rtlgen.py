"""The lab's design repository, `lab/rtl.git`: built here deterministically, never committed.

A nested git repository cannot be committed, so the lab writes its objects with dulwich: every
commit's files, author and time are fixed below, so the same commit ids come out on every machine
(what a recorded handover cites). Each nightly run's tag (`R35` … `R42`) marks the newest commit
before that night. Between R41 and R42 two commits landed: one to `rtl/rst_ctrl.sv`, one to its
document. `ensure_repository()` builds it where it is missing or differs; admission calls it, through
`prepare()`, before a lab manifest that approves it is loaded.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import tomllib
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from lab import LAB_DIR

if TYPE_CHECKING:
    from dulwich.object_store import BaseObjectStore
    from dulwich.objects import ObjectID
    from dulwich.refs import Ref

REPOSITORY = LAB_DIR / "rtl.git"
Files = dict[str, bytes]

_SYNC = b"""// Two-stage synchronizer for the asynchronous board reset.
module rst_sync (
  input  logic clk,
  input  logic rst_n,
  output logic rst_sync_n
);
  logic q1;
  always_ff @(posedge clk or negedge rst_n)
    if (!rst_n) {q1, rst_sync_n} <= 2'b00;
    else        {q1, rst_sync_n} <= {1'b1, q1};
endmodule
"""

_SYNCED = b"""  logic rst_sync_n;
  rst_sync u_sync (.clk, .rst_n, .rst_sync_n);
  always_ff @(posedge clk or negedge rst_sync_n)
"""

_CTRL_R35 = (
    b"""// Reset controller: clk_en follows the synchronized reset release.
module rst_ctrl (
  input  logic clk,
  input  logic rst_n,
  output logic clk_en
);
"""
    + _SYNCED
    + b"""    if (!rst_sync_n) clk_en <= 1'b0;
    else             clk_en <= 1'b1;
endmodule
"""
)

_LOCKED = b"""// Reset controller: clk_en waits for the PLL after the synchronized reset release.
module rst_ctrl (
  input  logic clk,
  input  logic rst_n,
  input  logic pll_locked,
  output logic clk_en
);
"""

_CTRL_R38 = (
    _LOCKED
    + _SYNCED
    + b"""    if (!rst_sync_n) clk_en <= 1'b0;
    else             clk_en <= pll_locked;
endmodule
"""
)

_CTRL_R42 = (
    _LOCKED
    + b"""  typedef enum logic [1:0] {RESET, WAIT_LOCK, RUN} state_t;
  state_t state;
  logic [2:0] lock_cnt;
"""
    + _SYNCED
    + b"""    if (!rst_sync_n) begin
      state    <= RESET;
      lock_cnt <= '0;
    end else begin
      unique case (state)
        RESET:     state <= WAIT_LOCK;
        WAIT_LOCK: if (pll_locked && lock_cnt == 3'd4) state <= RUN;
                   else if (pll_locked) lock_cnt <= lock_cnt + 3'd1;
        RUN:       state <= RUN;
      endcase
    end
  assign clk_en = (state == RUN);
endmodule
"""
)

_REGS = b"""// Software-visible registers: CTRL (0x04) and STATUS (0x08).
module apb_regs (
  input  logic        clk,
  input  logic        rst_n,
  input  logic        clk_en,
  input  logic [7:0]  paddr,
  output logic [31:0] prdata
);
  assign prdata = (paddr == 8'h08) ? {31'b0, clk_en} : 32'b0;
endmodule
"""

_DOC = b"""# rst_ctrl

`clk_en` rises after the second synchronizer stage releases.
"""

_DOC_R42 = (
    _DOC
    + b"""
Since the PLL lock wait, `clk_en` rises in state RUN, after four locked cycles in WAIT_LOCK.
"""
)

_SEQ = b"""// reset_smoke: hold rst_n for 20 cycles, release, check clk_en.
class reset_smoke_seq extends uvm_sequence;
  rand int unsigned lock_delay;
  constraint c_lock { lock_delay inside {[0:6]}; }
endclass
"""


@dataclass(frozen=True)
class Change:
    """One commit of the lab's design history: the files it sets, by whom, when, why."""

    when: str
    author: str
    subject: str
    files: Files


HISTORY = (
    Change(
        "2026-11-12T18:00:00+00:00",
        "Ada",
        "rst_ctrl: reset controller with a two-stage synchronizer",
        {"rtl/rst_sync.sv": _SYNC, "rtl/rst_ctrl.sv": _CTRL_R35, "docs/rst_ctrl.md": _DOC},
    ),
    Change(
        "2026-11-18T10:05:00+00:00",
        "Grace",
        "rst_ctrl: wait for pll_locked before enabling clk_en",
        {"rtl/rst_ctrl.sv": _CTRL_R38},
    ),
    Change(
        "2026-11-20T16:40:00+00:00",
        "Ada",
        "tb: reset_smoke draws the PLL lock delay",
        {"tb/reset_smoke_seq.sv": _SEQ},
    ),
    Change(
        "2026-11-24T11:15:00+00:00",
        "Linus",
        "apb_regs: STATUS.ready follows clk_en",
        {"rtl/apb_regs.sv": _REGS},
    ),
    Change(
        "2026-11-26T09:30:00+00:00",
        "Grace",
        "rst_ctrl: count four locked cycles before RUN",
        {"rtl/rst_ctrl.sv": _CTRL_R42},
    ),
    Change(
        "2026-11-26T15:10:00+00:00",
        "Ada",
        "docs: rst_ctrl clock enable after the lock wait",
        {"docs/rst_ctrl.md": _DOC_R42},
    ),
)
"""The design's commits, oldest first, each on the one before."""

NIGHTS = {
    "R35": "2026-11-13",
    "R36": "2026-11-15",
    "R37": "2026-11-17",
    "R38": "2026-11-19",
    "R39": "2026-11-21",
    "R40": "2026-11-23",
    "R41": "2026-11-25",
    "R42": "2026-11-27",
}
"""Each nightly run (lab/history/regressions.csv) and its day: its tag marks the newest commit of
an earlier day."""


def _tree(store: BaseObjectStore, files: Files) -> ObjectID:
    """The tree of `files` (paths with `/`), its blobs and subtrees stored too."""
    from dulwich.objects import Blob, Tree

    tree = Tree()
    folders: dict[str, Files] = {}
    for path, content in files.items():
        head, _, rest = path.partition("/")
        if rest:
            folders.setdefault(head, {})[rest] = content
        else:
            blob = Blob.from_string(content)
            store.add_object(blob)
            tree.add(head.encode(), 0o100644, blob.id)
    for name, inner in folders.items():
        tree.add(name.encode(), 0o040000, _tree(store, inner))
    store.add_object(tree)
    return tree.id


def commit(
    store: BaseObjectStore,
    files: Files,
    message: str,
    when: str,
    parents: list[ObjectID],
    author: str,
) -> ObjectID:
    """A commit of exactly `files` at `when` (ISO, with its zone) on `parents`; its id. No clock
    and no configuration is read, so the id depends on these arguments alone."""
    from dulwich.objects import Commit

    made = Commit()
    made.tree = _tree(store, files)
    made.parents = parents
    made.author = made.committer = f"{author} <{author.lower()}@example.com>".encode()
    made.author_time = made.commit_time = int(datetime.fromisoformat(when).timestamp())
    made.author_timezone = made.commit_timezone = 0
    made.message = message.encode() + b"\n"
    store.add_object(made)
    return made.id


def _write(store: BaseObjectStore) -> dict[Ref, ObjectID]:
    """The history written into `store`; the refs that name it (`HEAD`'s branch and each night)."""
    from dulwich.refs import Ref

    files: Files = {}
    parents: list[ObjectID] = []
    dated: list[tuple[str, ObjectID]] = []
    for change in HISTORY:
        files = {**files, **change.files}
        sha = commit(store, files, change.subject, change.when, parents, change.author)
        parents = [sha]
        dated.append((change.when[:10], sha))
    refs = {Ref(b"refs/heads/main"): parents[0]}
    for night, day in NIGHTS.items():
        refs[Ref(b"refs/tags/" + night.encode())] = [sha for when, sha in dated if when < day][-1]
    return refs


def expected_refs() -> dict[Ref, ObjectID]:
    """The refs the built repository holds, computed in memory."""
    from dulwich.object_store import MemoryObjectStore

    return _write(MemoryObjectStore())


def _holds(folder: Path, refs: dict[Ref, ObjectID]) -> bool:
    from dulwich.errors import NotGitRepository
    from dulwich.refs import Ref
    from dulwich.repo import Repo

    head = Ref(b"HEAD")
    try:
        with Repo(str(folder)) as repo:
            return repo.refs.as_dict() == {**refs, head: refs[Ref(b"refs/heads/main")]} and (
                repo.refs.read_ref(head) == b"ref: refs/heads/main"
            )
    except (NotGitRepository, OSError, KeyError, ValueError):
        return False


def ensure_repository(folder: Path = REPOSITORY) -> Path:
    """`folder` holding the lab's design history, built (in a temporary folder beside it, then
    moved in place) when it is missing or differs; concurrent builders leave one whole copy."""
    from dulwich.refs import Ref
    from dulwich.repo import Repo

    refs = expected_refs()
    if _holds(folder, refs):
        return folder
    staging = Path(tempfile.mkdtemp(prefix=".rtl-", dir=folder.parent))
    try:
        repo = Repo.init_bare(str(staging))
        with repo:
            built = _write(repo.object_store)
            for name, sha in built.items():
                repo.refs[name] = sha
            repo.refs.set_symbolic_ref(Ref(b"HEAD"), Ref(b"refs/heads/main"))
        if folder.exists() and not _holds(folder, refs):
            shutil.rmtree(folder, ignore_errors=True)
        try:
            os.rename(staging, folder)
        except OSError:
            if not _holds(folder, refs):  # another builder's copy won the race, or it is wrong
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return folder


def prepare(manifest: Path) -> None:
    """The repository built when `manifest`, one of the lab's, approves it as a record; others
    (STA1, R43, …) pay nothing. A manifest that cannot be read is left to admission to refuse."""
    try:
        document = tomllib.loads(manifest.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return
    records = document.get("record")
    if isinstance(records, list) and any(
        isinstance(record, dict)
        and isinstance(record.get("path"), str)
        and (manifest.parent / record["path"]).resolve() == REPOSITORY.resolve()
        for record in records
    ):
        ensure_repository()
