"""Shared fixtures: where trec_eval's own test suite lives, and small TREC files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

#: trec_eval's test directory, beside the repository as ../shared (override with RETRIEVAL_EVAL_TESTDATA).
TESTDATA = Path(
    os.environ.get(
        "RETRIEVAL_EVAL_TESTDATA",
        Path(__file__).resolve().parents[1].parent / "shared" / "reference" / "trec_eval-testdata",
    )
)


@pytest.fixture
def testdata() -> Path:
    if not (TESTDATA / "MANIFEST.md").is_file():
        pytest.skip(f"trec_eval's test data is not at {TESTDATA} (set RETRIEVAL_EVAL_TESTDATA)")
    return TESTDATA


@pytest.fixture
def write(tmp_path: Path):
    """write(name, text) -> path of a new file in a temporary directory."""

    def _write(name: str, text: str | bytes) -> str:
        path = tmp_path / name
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text, encoding="utf-8")
        return str(path)

    return _write
