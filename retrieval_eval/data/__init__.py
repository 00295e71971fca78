"""A small sample qrels/run pair bundled with the package (made by ``generate.py`` here)."""

from __future__ import annotations

from pathlib import Path

_HERE = Path(__file__).parent


def sample_paths() -> tuple[str, str]:
    """Paths of the bundled ``sample.qrels`` and ``sample.run``."""
    return str(_HERE / "sample.qrels"), str(_HERE / "sample.run")
