"""Any bytes at all: the readers parse them or raise TrecFormatError, and nothing else.

The structured strategy builds lines from field-like tokens (valid ones, near misses and raw bytes)
so that inputs get past the first checks; the raw strategy covers everything else. A deadline
catches hangs. When both files parse, building and evaluating must not fail either.
"""

from __future__ import annotations

import io
import warnings
from datetime import timedelta

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from retrieval_eval import InputWarning, RetrievalEvalError, SetEvaluator, TrecFormatError
from retrieval_eval.io.formats import read_qrels_columns, read_run_columns
from retrieval_eval.io.trec import read_qrels, read_run

FIELD = st.sampled_from([
    b"q1", b"q2", b"0", b"Q0", b"d1", b"d2", b"1", b"2", b"-1", b"0.5", b"-3.25", b"1e5", b"inf", b"nan", b"abc",
    b"1.7", b"1_0", b"#", b"#x", b"\xff\xfe", b"\xef\xbb\xbf", b"\0", b"\x01", b"r", b"9" * 30,
]) | st.binary(min_size=1, max_size=6)
SEPARATOR = st.sampled_from([b" ", b"\t", b"  ", b" \r"])
LINE = st.builds(lambda fields, sep: sep.join(fields), st.lists(FIELD, min_size=0, max_size=8), SEPARATOR)
STRUCTURED = st.builds(lambda lines, end: b"\n".join(lines) + end, st.lists(LINE, max_size=12),
                       st.sampled_from([b"", b"\n", b"\r\n"]))
ANY_BYTES = STRUCTURED | st.binary(max_size=300)

FUZZ = settings(max_examples=400, deadline=timedelta(seconds=5), suppress_health_check=[HealthCheck.too_slow])


def _read(reader, data: bytes):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InputWarning)
        try:
            return reader(io.BytesIO(data))
        except TrecFormatError as exc:
            assert isinstance(exc, ValueError) and str(exc).startswith("<stream>")
            return None


@pytest.mark.parametrize(("columns_reader", "streaming_reader"),
                         [(read_qrels_columns, read_qrels), (read_run_columns, read_run)], ids=["qrels", "run"])
@FUZZ
@given(data=ANY_BYTES)
@example(data=b"q1 q1 q1 999999999999999999999999999999 0 q1\n")  # a found disagreement: a 30-digit rank
def test_reader_parses_or_raises_its_error(columns_reader, streaming_reader, data: bytes) -> None:
    """The column reader and the streaming reader accept and reject the same inputs."""
    columns = _read(columns_reader, data)
    streamed = _read(lambda source: list(streaming_reader(source)), data)
    assert (columns is None) == (streamed is None)
    if columns is not None:
        assert len(columns.doc_ids) == len(streamed) > 0


@FUZZ
@given(STRUCTURED, STRUCTURED)
def test_parsed_files_evaluate_or_raise_an_input_error(qrels: bytes, run: bytes) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InputWarning)
        try:
            results = SetEvaluator.from_trec(io.BytesIO(qrels), io.BytesIO(run))
        except RetrievalEvalError:
            return
        for name in ("AP", "nDCG@10", "P@5", "Bpref", "RR"):
            assert all(0.0 <= value <= 1.0 for value in results.array(name))
