"""Every file of the packages in the source tree is in the wheel (the wheel check, `.ci/wheel-check`).

    python3 .ci/wheel_holds_tree.py WHEEL SOURCE_TREE

A package is a top-level folder with an `__init__.py` other than `tests` and `bench`; its files are
every file below it but bytecode. Prints what is missing and exits 1 if anything is.
"""

from __future__ import annotations

import sys
import zipfile
from pathlib import Path

NOT_SHIPPED = {"tests", "bench", "examples", "docs", "evals"}


def packaged_files(tree: Path) -> set[str]:
    return {
        path.relative_to(tree).as_posix()
        for top in tree.iterdir()
        if top.is_dir() and top.name not in NOT_SHIPPED and (top / "__init__.py").is_file()
        for path in top.rglob("*")
        if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc"
    }


def main() -> None:
    wheel, tree = Path(sys.argv[1]), Path(sys.argv[2])
    held = set(zipfile.ZipFile(wheel).namelist())
    wanted = packaged_files(tree)
    missing = sorted(wanted - held)
    for name in missing:
        print(f"missing from the wheel: {name}", file=sys.stderr)
    if missing or not wanted:
        sys.exit(1)
    print(f"the wheel holds all {len(wanted)} files of the packages")


if __name__ == "__main__":
    main()
