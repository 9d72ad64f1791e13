"""Built-in scenarios: the R42 regression-triage lab and its neighbours.

Each `*.toml` file in this folder is a scenario manifest whose file name is its id.
"""

from pathlib import Path

LAB_DIR = Path(__file__).resolve().parent


def builtin_manifests() -> dict[str, Path]:
    """Map each built-in scenario id to its manifest path."""
    return {path.stem: path for path in sorted(LAB_DIR.glob("*.toml"), key=lambda path: path.stem)}
