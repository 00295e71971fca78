"""The reader's fast paths give exactly what the plain paths give.

Reading takes shortcuts for the common case: single-space layouts are tokenized from their
separators alone, scores written as plain decimals are converted with integer arithmetic, and
blocks are parsed on several threads. Each shortcut is checked here against a slow, obvious
definition on inputs built to reach both sides of it.
"""

from __future__ import annotations

import gzip
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from retrieval_eval import TrecFormatError
from retrieval_eval.io import _parse, _source, _tokens
from retrieval_eval.io.formats import read_run_columns

decimal_text = st.builds(
    lambda sign, whole, point, fraction: sign + whole + point + fraction,
    st.sampled_from(["", "-", "+"]),
    st.text("0123456789", max_size=12),
    st.sampled_from(["", "."]),
    st.text("0123456789", max_size=12),
)
#: Plain decimals, and things that only look like them.
score_text = decimal_text | st.sampled_from(
    ["1e5", "-2.5E-3", "inf", "-inf", "1.2.3", "--1", "+-1", ".", "-", "1-", "0x1", "9007199254740993",
     "9007199254740992", "-0", "0.1234567890123456789", "12345678.12345678"]
)


def _python_float(text: str) -> float | None:
    if "_" in text:  # Python accepts 1_0; the reader does not
        return None
    try:
        return float(text)
    except ValueError:
        return None


#: Fields of at most 8 bytes, which the decimal path reads as a single word.
short_score_text = st.builds(
    lambda sign, whole, point, fraction: (sign + whole + point + fraction)[:8],
    st.sampled_from(["", "-", "+"]), st.text("0123456789", max_size=4), st.sampled_from(["", "."]),
    st.text("0123456789", max_size=4),
) | st.sampled_from(["1e5", "inf", "1.2.3", ".", "-", "-0", "99999999", "0.000001", "+.5", "5."])


@settings(max_examples=300, deadline=None)
@given(st.lists(score_text.filter(lambda t: t != ""), min_size=1, max_size=30))
def test_decimal_scores_are_exactly_floats(texts: list[str]) -> None:
    """Where the vectorised decimal path claims a value, it is float()'s, sign of zero included."""
    _check_decimals(texts)


@settings(max_examples=200, deadline=None)
@given(st.lists(short_score_text.filter(lambda t: t != ""), min_size=1, max_size=30))
def test_short_decimal_scores_are_exactly_floats(texts: list[str]) -> None:
    """The same when no field is longer than 8 bytes (only one word is read)."""
    _check_decimals(texts)


plain_decimal_text = st.builds(
    lambda sign, whole, fraction: sign + whole + fraction,
    st.sampled_from(["", "-", "+"]), st.text("0123456789", min_size=1, max_size=7),
    st.sampled_from(["", "."]) | st.text("0123456789", max_size=7).map(lambda digits: "." + digits),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(plain_decimal_text, min_size=1, max_size=30))
def test_plain_decimals_are_read_by_the_decimal_path(texts: list[str]) -> None:
    """Every plain decimal of at most 15 digits is read by the vectorised path (NumPy's parser is only
    the fallback), one word or two, as float() reads it."""
    block = "".join(f"q Q0 d{i} 1 {text} r\n" for i, text in enumerate(texts)).encode()
    values, plain = _tokens._tokenize(_source._Block.of(block)).decimals(4)
    assert plain.all()
    assert values.tolist() == [float(text) for text in texts]


def _same_decimals(texts: list[str]) -> list[float] | None:
    """What the same-decimals path of :meth:`_Tokens.decimals` makes of a block of these scores."""
    block = "".join(f"q Q0 d{i} 1 {text} r\n" for i, text in enumerate(texts)).encode()
    tokens = _tokens._tokenize(_source._Block.of(block))
    before, end = tokens.bounds(4)
    values = tokens._same_decimals(tokens._words_at(), before, end, end - before - 1)
    read = _parse._floats(tokens, 4, "score must be a number", "a score")[0]  # whichever path reads them
    assert read.tolist() == [float(text) for text in texts]
    return None if values is None else values.tolist()


one_format = st.integers(0, 6).flatmap(lambda decimals: st.lists(st.builds(
    lambda whole, fraction: whole + ("." + fraction if decimals else ""),
    st.text("0123456789", min_size=0 if decimals else 1, max_size=7 - decimals),
    st.text("0123456789", min_size=decimals, max_size=decimals)), min_size=1, max_size=30))


@settings(max_examples=200, deadline=None)
@given(one_format)
def test_scores_of_one_format_take_the_same_decimals_path(texts: list[str]) -> None:
    """Unsigned scores of at most 8 bytes with as many decimals each (".5" included) are read by the
    same-decimals path, exactly as float() reads them."""
    assert _same_decimals(texts) == [float(text) for text in texts]


@pytest.mark.parametrize("texts", [["0.3160", "0.4545", "1.0000"], ["10.5720", "9.5606", "0.0001"], ["12", "7", "1000"],
                                   ["1234.567", "0.001"], [".25", "1.50"]], ids=str)
def test_scores_of_one_width_or_several_take_the_same_decimals_path(texts: list[str]) -> None:
    """Fields of one width (masks as scalars) and of several (a mask per line) both take the path."""
    assert _same_decimals(texts) == [float(text) for text in texts]


@pytest.mark.parametrize("texts", [
    ["1.25", "3.5"], ["1.5", "25"], ["25", "1.5"], ["12.3.45", "1.25"], ["1.25", "1e-5"], ["5.", "6."],
    ["1.25", "inf0"], ["0.25", "1.2.5"], [".", "1.5"], ["1.25", "-1.25"], ["-1.25", "1.25"], ["+1.5", "2.5"],
    ["12", "-3"],
], ids=str)
def test_scores_of_mixed_formats_are_left_to_the_general_path(texts: list[str]) -> None:
    """A score with other decimals (or no point, a second one, an exponent) turns the same-decimals
    path down: what is plain is read by the general path, the rest by NumPy's parser or refused."""
    if all(_python_float(text) is not None for text in texts):
        assert _same_decimals(texts) is None
    else:
        block = "".join(f"q Q0 d{i} 1 {text} r\n" for i, text in enumerate(texts)).encode()
        tokens = _tokens._tokenize(_source._Block.of(block))
        before, end = tokens.bounds(4)
        assert tokens._same_decimals(tokens._words_at(), before, end, end - before - 1) is None
        _check_decimals(texts)


def test_byte_index_of_every_byte() -> None:
    """_byte_index finds the one marked byte of a word, counted from the right, at each of the 8 places."""
    marks = np.array([0x80 << (8 * k) for k in range(8)], dtype=np.uint64)
    assert _tokens._byte_index(marks).tolist() == list(range(8))


def _check_decimals(texts: list[str]) -> None:
    block = "".join(f"q Q0 d{i} 1 {text} r\n" for i, text in enumerate(texts)).encode()
    values, plain = _tokens._tokenize(_source._Block.of(block)).decimals(4)
    for text, value, ok in zip(texts, values.tolist(), plain.tolist()):
        expected = _python_float(text)
        if ok:
            assert expected is not None and value == expected and math.copysign(1, value) == math.copysign(1, expected)
    # Everything a run reader accepts reads as float() reads it; the rest is an error.
    if all(_python_float(t) is not None and not math.isnan(_python_float(t)) for t in texts):
        scores = read_run_columns(_bytes_source(block)).scores.tolist()
        assert scores == [float(t) for t in texts]
    else:
        with pytest.raises(TrecFormatError, match="score must"):
            read_run_columns(_bytes_source(block))


def _bytes_source(data: bytes):
    import io

    return io.BytesIO(data)


LINES = [("q1", "d1", "3.25"), ("q1", "doc-with-a-long-id-0002", "-1"), ("q10", "d3", "1e-3"), ("q2", "d1", "0")]


@pytest.mark.parametrize("layout", ["single spaces", "tabs", "runs of spaces", "crlf", "leading blanks",
                                    "comments", "control byte in an id"])
def test_every_layout_reads_the_same(layout: str) -> None:
    """The separators-only tokenizer (single separators) and the general one agree."""
    sep, end, lead, extra = " ", "\n", "", ""
    if layout == "tabs":
        sep = "\t"
    elif layout == "runs of spaces":
        sep = "   "
    elif layout == "crlf":
        end = "\r\n"
    elif layout == "leading blanks":
        lead = "  "
    elif layout == "comments":
        extra = "# a comment" + end
    lines = LINES if layout != "control byte in an id" else [(q, d + "\x01", s) for q, d, s in LINES]
    text = extra + "".join(lead + sep.join([q, "Q0", d, "1", s, "run"]) + end for q, d, s in lines)
    columns = read_run_columns(_bytes_source(text.encode()))
    assert columns.query_ids.tolist() == [q.encode() for q, _, _ in lines]
    assert columns.doc_ids.tolist() == [d.encode() for _, d, _ in lines]
    assert columns.scores.tolist() == [float(s) for _, _, s in lines]
    assert columns.lines.tolist() == [n + (2 if extra else 1) for n in range(len(lines))]


@pytest.mark.parametrize("pool_from", [0, 10**9], ids=["pool", "calling-thread"])
def test_earlier_malformed_line_is_reported_before_a_truncated_stream(tmp_path, monkeypatch, pool_from: int) -> None:
    """Blocks parsed ahead on threads or one at a time: the first problem in the file is the one reported."""
    monkeypatch.setattr(_parse, "_BLOCK", 64)
    monkeypatch.setattr(_parse, "_threads", lambda: 3)
    monkeypatch.setattr(_parse, "_POOL_FROM", pool_from)
    good = "".join(f"q1 Q0 d{i} 1 {i} r\n" for i in range(200))
    data = gzip.compress(("q1 Q0 bad 1 notanumber r\n" + good).encode())
    path = tmp_path / "run.gz"
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(TrecFormatError, match=r"run.gz:1: score must be a number"):
        read_run_columns(path)
    path.write_bytes(gzip.compress(good.encode())[:-30])
    with pytest.raises(TrecFormatError, match="truncated or corrupt"):
        read_run_columns(path)


def test_fields_copied_as_words_round_trip() -> None:
    """Ids of every length up to 3 words, at block edges, come back byte for byte."""
    ids = [("x" * n) + str(n) for n in range(25)]
    block = "".join(f"{d} 0 {d} 1\n" for d in ids).encode()
    tokens = _tokens._tokenize(_source._Block.of(block))
    assert tokens.strings(2).tolist() == [d.encode() for d in ids]
    assert tokens.strings(0, np.array([3, 0])).tolist() == [ids[3].encode(), ids[0].encode()]


@pytest.mark.parametrize("source", ["path", "stream"])
def test_columns_grow_and_widen_across_blocks(tmp_path, monkeypatch, source: str) -> None:
    """Columns sized from the first block still come out whole when later lines are longer (more
    bytes per line than the estimate assumed) and their ids wider than the first block's."""
    monkeypatch.setattr(_parse, "_BLOCK", 256)
    monkeypatch.setattr(_source, "_FIRST_BLOCK", 64)
    lines = [(f"q{i // 50}", f"d{i}" if i < 100 else f"long-document-id-{i:06d}", f"{i / 7:.3f}") for i in range(300)]
    text = "".join(f"{q} Q0 {d} 1 {s} run\n" for q, d, s in lines).encode()
    path = tmp_path / "run"
    path.write_bytes(text)
    columns = read_run_columns(path if source == "path" else _bytes_source(text))
    assert columns.query_ids.tolist() == [q.encode() for q, _, _ in lines]
    assert columns.doc_ids.tolist() == [d.encode() for _, d, _ in lines]
    assert columns.scores.tolist() == [float(s) for _, _, s in lines]
    assert columns.lines.tolist() == list(range(1, 301))


@pytest.mark.parametrize("lines, fields", [
    (["q1 Q0 d1 1 0.5 r", "q10 Q0 doc-22 2 1.25 r"], 6),
    (["q1\tQ0  d1 1 0.5 r", "q2 Q0 d2 2 1.5 r"], 6),  # the general tokenizer
    (["q1 Q0 d1 1 0.5 r", "q2 Q0 d2 2 1.5 r extra"], 0),
    (["# comment", "q1 Q0 d1 1 0.5 r"], 0),
    (["q1 Q0 d1 1 0.5 r", "", "q2 Q0 d2 2 1.5 r"], 0),
], ids=["single spaces", "runs of spaces", "more fields on a line", "comment", "blank line"])
def test_fields_of_uniform_lines_are_views_of_the_same_values(lines: list[str], fields: int) -> None:
    """Lines of one field count are read through strided views of the separators; the values are
    those of the gathered fields every other block uses."""
    import attrs

    from retrieval_eval.io.trec import _single_digits

    tokens = _tokens._tokenize(_source._Block.of("".join(line + "\n" for line in lines).encode()))
    assert tokens.uniform == fields
    gathered = attrs.evolve(tokens, uniform=0)
    for field in range(6):
        assert tokens.strings(field).tolist() == gathered.strings(field).tolist()
        assert all(np.array_equal(a, b) for a, b in zip(tokens.bounds(field), gathered.bounds(field)))
    assert tokens.decimals(4)[0].tolist() == gathered.decimals(4)[0].tolist()
    ranks = [int(line.split()[3]) for line in lines if line and not line.startswith("#")]
    assert _single_digits(tokens, 3).tolist() == _single_digits(gathered, 3).tolist() == ranks


@pytest.mark.parametrize("text", [
    "q1 Q0 d1 1 0.5 r\nq2 Q0 d2 2 1.5 r\n",
    "q1 Q0 d1 1 0.5 r\nq2 Q0 d2 2 1.5 r x\n",
    "q1 Q0 d1 1 0.5 r x\nq2 Q0 d2 2 1.5 r\n",
    "q1 Q0 d1 1 0.5 r\nq2 Q0 d2\nq3 Q0 d3 3 1 r x y z\n",  # 9 fields in all, a multiple of 3
    "a b\nc d\ne f g h\n",  # the first line's count divides the total, but the lines differ
    "one\ntwo\n", "# c o m\nq1 0 d1 1\n", "a b\nc\nd\ne f\n",
])
def test_lines_located_by_counting_fields_are_those_located_one_by_one(monkeypatch, text: str) -> None:
    """Where every line has as many fields, lines are located from that number instead of from each
    newline; both give the same tokens (and a block of lines of different counts is not taken for one)."""
    counted = _tokens._tokenize(_source._Block.of(text.encode()))
    lines = text.splitlines()
    same = len({len(line.split()) for line in lines}) == 1
    monkeypatch.setattr(_tokens, "_fields_per_line", lambda newline: 0)
    located = _tokens._tokenize(_source._Block.of(text.encode()))
    for name in ["line_index", "first_token", "n_tokens", "before", "ends", "line_ends"]:
        assert getattr(counted, name).tolist() == getattr(located, name).tolist(), name
    assert counted.uniform == located.uniform == (len(lines[0].split()) if same and "#" not in text else 0)


@pytest.mark.parametrize("counts, fields", [
    ([6, 6, 6], 6), ([1], 1), ([6, 7], 0), ([7, 6], 0), ([2, 2, 4], 0), ([2, 1, 1, 2], 0), ([3, 3, 2, 1], 0),
])
def test_fields_per_line_only_when_every_line_has_as_many(counts: list[int], fields: int) -> None:
    """The count is taken only when every line has it: the last field of every line at the places it
    gives, and no other line end (2, 1, 1, 2 puts line ends at all the places 2, 2, 2 would)."""
    newline = np.array([i == count - 1 for count in counts for i in range(count)])
    assert _tokens._fields_per_line(newline) == fields


id_text = st.text(st.characters(min_codepoint=33, max_codepoint=126), min_size=1, max_size=40)


@settings(max_examples=300, deadline=None)
@given(st.lists(id_text, min_size=1, max_size=30), st.booleans())
def test_ids_copied_word_by_word_are_the_fields_bytes(ids: list[str], last_field: bool) -> None:
    """Fields copied as 64-bit words, with the shortest field known (masks and bounds skipped on the
    words every field fills or reaches) or not (every word masked and bounded), are the fields' bytes.
    With the id last on its line, the last field of the block ends _PAD bytes before the buffer does."""
    text = "".join(f"q {name}\n" if last_field else f"q Q0 {name} 1 0.5 r\n" for name in ids)
    tokens = _tokens._tokenize(_source._Block.of(text.encode()))
    field = 1 if last_field else 2
    start, length = tokens._extent(field)
    longest, shortest = int(length.max()), int(length.min())
    expected = np.array([name.encode() for name in ids], dtype=f"S{8 * -(-longest // 8)}")
    for copied in (tokens._fixed_width(start, length, longest, shortest),  # what ids() and strings() do
                   tokens._fixed_width(start, length, longest, 0),  # the general path
                   tokens.ids(field), tokens.strings(field)):
        assert copied.dtype == expected.dtype
        assert copied.tolist() == expected.tolist()


#: Lines of a block: mostly single spaces between fields and as many fields on each line (the blocks the
#: counting tokenizer takes), with now and then what turns it down.
spaced_line = st.lists(st.text("ab.9#\x00\x01é", min_size=1, max_size=4), min_size=1, max_size=4).flatmap(
    lambda fields: st.tuples(st.just(fields), st.lists(st.sampled_from([" "] * 12 + ["\t", "  ", "\r", "\x0b"]),
                                                       min_size=len(fields) - 1, max_size=len(fields) - 1),
                             st.sampled_from([""] * 8 + [" ", "\t", "\r"]), st.sampled_from([""] * 8 + [" ", "  "])))


def _spaced_text(lines: list[tuple[list[str], list[str], str, str]]) -> bytes:
    return "".join(lead + "".join(f + s for f, s in zip(fields, seps + [""])) + tail + "\n"
                   for fields, seps, tail, lead in lines).encode()


@settings(max_examples=300, deadline=None)
@given(st.lists(spaced_line, min_size=1, max_size=8), st.booleans(), st.booleans())
def test_blocks_tokenized_by_counting_are_those_tokenized_one_separator_at_a_time(
        lines: list[tuple[list[str], list[str], str, str]], blank: bool, same_count: bool) -> None:
    """Counting control bytes against lines (the usual block) gives the tokens that looking at every
    separator gives, and turns down every other block (tabs, runs of spaces, a carriage return, a NUL,
    a comment, lines of other counts): the general tokenizer then reads it, or refuses it, as before."""
    if same_count:  # as many fields on every line: the counting path's blocks (unless a separator differs)
        lines = [(fields[: len(lines[0][0])] + ["c"] * (len(lines[0][0]) - len(fields)), (seps + [" "] * 4)[
            : len(lines[0][0]) - 1], tail, lead) for fields, seps, tail, lead in lines]
    text = _spaced_text(lines) + (b"\n" if blank else b"")
    block = _source._Block.of(text)
    counted = _tokenized(block)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_tokens, "_spaced_fields", lambda *args: 0)
        assert _tokenized(_source._Block.of(text)) == counted


def _tokenized(block: _source._Block) -> tuple[object, ...]:
    """The tokens of a block as plain lists (or the message of the line it refuses)."""
    try:
        tokens = _tokens._tokenize(block)
    except _tokens._BadLine as bad:
        return (bad.line_in_block, bad.message)
    return tuple(getattr(tokens, name).tolist() for name in ["line_index", "first_token", "n_tokens", "before",
                                                              "ends", "line_ends"]) + (tokens.uniform,)


def test_the_usual_block_is_tokenized_by_counting(monkeypatch) -> None:
    """Single-spaced lines of one field count take the counting path (so the test above compares two paths)."""
    calls: list[int] = []
    counting = _tokens._spaced_fields
    monkeypatch.setattr(_tokens, "_spaced_fields", lambda *args: calls.append(counting(*args)) or calls[-1])
    _tokens._tokenize(_source._Block.of(b"q1 Q0 d1 1 0.5 r\nq2 Q0 d22 2 1.5 r\n"))
    _tokens._tokenize(_source._Block.of(b"q1 Q0 d1 1 0.5 r\nq2\tQ0 d22 2 1.5 r\n"))
    _tokens._tokenize(_source._Block.of(b"q1 Q0 d1 1 0.5 r\nq2 Q0  d22 2 1.5 r\n"))
    assert calls == [6, 0, 0]


@settings(max_examples=200, deadline=None)
@given(one_format, st.lists(st.text("0123456789.", min_size=1, max_size=9), min_size=30, max_size=30))
def test_same_decimals_ignore_the_bytes_left_of_the_field(texts: list[str], ranks: list[str]) -> None:
    """The same-decimals path reads each field's 8 bytes as they are, the previous fields' bytes included
    (a rank of '1.5' before a score '7' has a '.' where a point three places left would be): its values
    are float()'s, or it leaves the block to the general path, whose values are float()'s too."""
    block = "".join(f"q Q0 d{i} {rank} {text} r\n" for i, (text, rank) in enumerate(zip(texts, ranks))).encode()
    tokens = _tokens._tokenize(_source._Block.of(block))
    before, end = tokens.bounds(4)
    values = tokens._same_decimals(tokens._words_at(), before, end, end - before - 1)
    expected = [float(text) for text in texts]
    assert values is None or values.tolist() == expected
    assert _parse._floats(tokens, 4, "score must be a number", "a score")[0].tolist() == expected


def test_a_score_shorter_than_the_decimals_is_left_to_the_general_path() -> None:
    """A score with no byte where the first score's point is (the '.' there is the rank's) is not read
    as 0.007."""
    block = b"q Q0 d1 1 0.125 r\nq Q0 d2 1.5 7 r\n"
    tokens = _tokens._tokenize(_source._Block.of(block))
    before, end = tokens.bounds(4)
    assert tokens._same_decimals(tokens._words_at(), before, end, end - before - 1) is None
    assert read_run_columns(_bytes_source(block)).scores.tolist() == [0.125, 7.0]


@pytest.mark.parametrize("text", [
    "q1 Q0 d1 1 0.5 r\nq2 Q0 d2 2 1.5 r\n",
    "q1 Q0 d1 1 0.5\nq2 Q0 d2 2 1.5\n",  # 5 fields on every line: refused at the first
    "q1 Q0 d1 1 0.5 r x\nq2 Q0 d2 2 1.5 r y\n",  # more columns after the run id, not another record
    "q1 Q0 d1 1 0.5 r q1 Q0 d3 3 0.25 r\nq2 Q0 d2 2 1.5 r q2 Q0 d4 4 0.1 r\n",  # records run together
    "q1 Q0 d1 1 0.5 r\nq2 Q0 d2 2 1.5\n", "q1 Q0 d1 1 0.5 r x\nq2 Q0 d2 2 1.5 r\n",
], ids=["6 fields", "5 fields", "7 fields", "12 fields", "6 and 5", "7 and 6"])
def test_run_lines_of_one_field_count_are_checked_as_when_counted_line_by_line(monkeypatch, text: str) -> None:
    """A block whose lines all have as many fields skips the per-line count checks of the run parser;
    what it reads, warns about or refuses is what the per-line checks give."""
    import attrs

    from retrieval_eval.io import trec

    def parsed() -> object:
        try:
            _, columns = trec._parse_run_block(_source._Block.of(text.encode()))
        except _tokens._BadLine as bad:
            return bad.message
        return {name: column.tolist() for name, column in columns.items()}

    uniform = parsed()
    tokenize = trec._tokenize
    monkeypatch.setattr(trec, "_tokenize", lambda block: attrs.evolve(tokenize(block), uniform=0))
    assert parsed() == uniform


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text("0123456789", min_size=8, max_size=8), min_size=1, max_size=20))
def test_eight_digits_are_the_number_they_write(texts: list[str]) -> None:
    """Eight digits in a word (as byte values, most significant first) make the number int() reads."""
    words = np.array([int.from_bytes(bytes(int(c) for c in text), "big") for text in texts], dtype=np.uint64)
    assert _tokens._eight_digits(words).tolist() == [int(text) for text in texts]
