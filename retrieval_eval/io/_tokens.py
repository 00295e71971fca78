"""Locating and converting the fields of one block, byte by byte but with whole-array operations.

:func:`_tokenize` finds every field of a block's lines (by the offsets of the separators around it)
and skips blank and comment lines; the usual block, single-spaced lines of one field count, is
checked by counting bytes rather than by looking at each separator (:func:`_spaced_fields`).
:class:`_Tokens` then copies fields out as fixed-width ids or reads them as numbers. Plain decimals
are parsed eight bytes at a time in 64-bit words (the ``_right_aligned``, ``_bytes_equal``,
``_all_digits`` and ``_eight_digits`` helpers), so no Python object is made per line.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeAlias, cast, overload

import numpy as np
from attrs import define

from ..model import FIELD_SEPARATORS, BoolArray, FloatArray, IntArray, TrecFormatError
from ._source import _FRONT, _Block, _snippet

if TYPE_CHECKING:  # numpy.typing costs milliseconds of start-up: types only
    import numpy.typing as npt


#: Fixed-width bytes (``S<n>``): ids as read, compared as bytes like trec_eval's strcmp.
BytesArray: TypeAlias = "npt.NDArray[np.bytes_]"

#: Ids up to this width (bytes) always stay fixed-width; see :meth:`_Tokens.ids`.
_WIDE_ID = 64

#: C's isspace() in the C locale, which is how trec_eval splits fields.
_IS_SPACE = np.zeros(256, dtype=bool)
_IS_SPACE[[ord(c) for c in FIELD_SEPARATORS]] = True
_HASH = ord("#")


class _BadLine(Exception):
    """A malformed line found while parsing a block on a worker thread. Its line number is known
    only once the blocks before it are counted: :func:`_parsed_blocks` turns it into a
    :class:`TrecFormatError`."""

    def __init__(self, name: str, line_in_block: int, message: str) -> None:
        self.name, self.line_in_block, self.message = name, line_in_block, message

    def located(self, lines_before: int) -> TrecFormatError:
        return TrecFormatError(f"{self.name}:{lines_before + self.line_in_block + 1}: {self.message}")


@define(eq=False)  # (as _Block)
class _Tokens:
    """The data lines of one block: fields located by byte offsets in the block's buffer, nothing copied yet.

    Field ``i`` is the bytes strictly between ``before[i]`` and ``ends[i]`` (offsets in ``padded``).
    """

    block: _Block
    buffer: npt.NDArray[np.uint8]  # the block's padded buffer as uint8 (a view)
    line_index: IntArray  # index (in the block) of every data line
    first_token: IntArray  # index of each data line's first field in before/ends
    n_tokens: IntArray  # fields on each data line
    before: IntArray  # offset of the separator before each field
    ends: IntArray  # offset just past each field
    line_ends: IntArray  # offset of every newline in the block
    lines_before: int = 0  # lines of the file before the block: set in file order by _parsed_blocks
    #: When every line of the block is a data line of the same number of fields, that number (else 0):
    #: field ``i`` of every line is then ``before[i::uniform]``, a view instead of a gathered copy.
    uniform: int = 0

    @property
    def name(self) -> str:
        return self.block.name

    @property
    def n_lines(self) -> int:
        return len(self.line_ends)

    def line_number(self, row: int) -> int:
        return self.lines_before + int(self.line_index[row]) + 1

    def line_text(self, row: int) -> str:
        i = int(self.line_index[row])
        start = int(self.line_ends[i - 1]) + 1 if i else _FRONT
        text = self.block.padded if self.block.shown is None else self.block.shown
        return _snippet(text[start : int(self.line_ends[i])])

    def field(self, row: int, field: int) -> bytes:
        """Field ``field`` of data line ``row`` (one slice, not a whole column)."""
        index = int(self.first_token[row]) + field
        return bytes(self.block.padded[int(self.before[index]) + 1 : int(self.ends[index])])

    def contains(self, byte: bytes) -> bool:
        return self.block.padded.find(byte, _FRONT, self.block.end) >= 0

    def ids(self, field: int) -> BytesArray | npt.NDArray[np.object_]:
        """Field ``field`` of every data line as ids: :meth:`strings`, unless a few ids are much longer
        than the others. A fixed-width array is as wide as its longest id, so a handful of ids of
        5,000 bytes would make every row 5,000 bytes; such a field comes as ``bytes`` objects
        instead (one per line, but memory in proportion to the bytes read)."""
        start, length = self._extent(field)
        if len(length):
            longest = int(length.max())
            width = 8 * max(-(-longest // 8), 1)
            if width > _WIDE_ID and width > 4 * (float(length.mean()) + 8):
                data = bytes(self.block.padded)  # slices of bytes are bytes
                out = np.empty(len(length), dtype=object)
                out[:] = [data[a:b] for a, b in zip(start.tolist(), (start + length).tolist())]
                return out
            return self._fixed_width(start, length, longest, int(length.min()))
        return self._fixed_width(start, length, 0)

    def strings(self, field: int, rows: IntArray | None = None) -> BytesArray:
        """Field ``field`` of every data line as a fixed-width bytes array (no Python object per line).

        The width is a multiple of 8: each field is copied as 64-bit words, zero-padded, which is
        what interning compares anyway (a trailing NUL does not change a NumPy bytes value). The
        words keep the bytes in memory order, so no byte swapping is needed either way.
        """
        start, length = self._extent(field, rows)
        if not len(length):
            return self._fixed_width(start, length, 0)
        return self._fixed_width(start, length, int(length.max()), int(length.min()))

    def bounds(self, field: int, rows: IntArray | None = None) -> tuple[IntArray, IntArray]:
        """``before`` and ``ends`` of field ``field`` of each data line (of ``rows``, default all)."""
        if rows is None and self.uniform > field:
            return self.before[field :: self.uniform], self.ends[field :: self.uniform]
        index = (self.first_token if rows is None else self.first_token[rows]) + field
        return self.before[index], self.ends[index]

    def _extent(self, field: int, rows: IntArray | None = None) -> tuple[IntArray, IntArray]:
        """Where field ``field`` of each data line (of ``rows``, default all) starts, and its length."""
        before, ends = self.bounds(field, rows)
        start = before + 1
        length: IntArray = ends - start  # int64: the stubs lose the width of a difference
        return start, length

    def _fixed_width(self, start: IntArray, length: IntArray, longest: int, shortest: int = 0) -> BytesArray:
        """The fields at ``start`` of ``length`` bytes (the longest ``longest``) as a bytes array.

        ``shortest`` (the shortest field, or any smaller number: 0 when not known) spares work on the
        words that every field fills: such a word needs no mask, and one that every field reaches
        needs no bound on where it is read. Ids of one length (or all longer than 8 bytes, as
        robust04's) then skip a third of the whole-array steps.
        """
        n_words = max(-(-longest // 8), 1)
        if n_words > 32 or n_words * len(start) > 1 << 25:  # very long ids: copy them one by one instead
            padded = self.block.padded
            return np.array([bytes(padded[a:b]) for a, b in zip(start, start + length)], dtype=f"S{8 * n_words}")
        return words_gathered(self._words_at(np.uint64), start, length, longest, shortest, self.block.end)

    def decimals(self, field: int) -> tuple[FloatArray, BoolArray]:
        """Field ``field`` of every line read as a plain decimal, and where that worked.

        Handles ``[+-]digits[.digits]`` of at most 16 bytes whose digits, without the point, are a
        number up to 2**53 (nearly every score written with a fixed number of decimals). Then
        ``digits / 10**decimals`` is one correctly rounded IEEE division, so the value is exactly
        what ``float()`` gives. Other fields (exponents, ``inf``, long reprs, errors) are left to
        the caller: they are False in the mask.

        The field is read right-aligned into big-endian 64-bit words (a second one only when some
        field is longer than 8 bytes; otherwise the high word is the scalar '00000000') and
        processed with whole-word arithmetic: no per-byte or per-line step, and no division but
        the last one.
        """
        before, end = self.bounds(field)
        length: IntArray = end - before  # int64: the stubs lose the width of a difference
        length -= 1
        at = self._words_at()
        longest = int(length.max()) if len(length) else 0
        if 0 < longest <= 8:
            same_decimals = self._same_decimals(at, before, end, length)
            if same_decimals is not None:
                return same_decimals, np.ones(len(length), dtype=bool)
        low = _right_aligned(at[end - 8], np.minimum(length, 8))
        two_words = longest > 8
        high = _right_aligned(at[end - 16], np.clip(length - 8, 0, 8)) if two_words else _ZEROS
        digits = length
        negative = None
        if self.contains(b"-") or self.contains(b"+"):
            # A leading sign becomes '0' (the field's first byte is byte length-1 from the right).
            in_low = length <= 8
            shift = ((np.where(in_low, length, length - 8) - 1).clip(0, 7) * 8).astype(np.uint64)
            first = (np.where(in_low, low, high) >> shift) & np.uint64(0xFF)
            negative = first == ord("-")
            signed = negative | (first == ord("+"))
            to_zero = np.where(signed, np.uint64(ord("0")) - first, np.uint64(0)) << shift
            low = low + np.where(in_low, to_zero, np.uint64(0))
            high = high + np.where(in_low, np.uint64(0), to_zero)
            digits = length - signed
        # The point becomes '0' ('.' + 2), so that the digits check covers every byte, then it is
        # dropped: the bytes left of it move one byte right and a '0' comes in at the top.
        low_point, high_point = _bytes_equal(low, ord(".")), _bytes_equal(high, ord("."))
        low = low + (low_point >> np.uint64(6))
        high = high + (high_point >> np.uint64(6))
        has_point = (low_point | high_point) != 0 if two_words else low_point != 0
        ok = (digits - has_point > 0) & _all_digits(low) & _at_most_one(low_point)
        if two_words:  # (one word: every field is 8 bytes or shorter)
            ok &= (length <= 16) & _all_digits(high) & _at_most_one(high_point) & ((low_point == 0) | (high_point == 0))
        # Point position from the right (= number of decimals); 16 when there is none.
        not_in_low = (np.where(high_point != 0, 8 + _byte_index(cast("npt.NDArray[np.uint64]", high_point)), 16)
                      if two_words else 16)  # (two words: high_point is an array, one per line)
        point = np.where(low_point != 0, _byte_index(low_point), not_in_low)
        keep = _KEEP_LOW[np.minimum(point, 8)]  # the bytes of the low word right of the point
        low = (low & keep) | (((low >> np.uint64(8)) | (high << np.uint64(56))) & ~keep)
        value = _eight_digits(low - _ZEROS)
        if two_words:
            keep = _KEEP_LOW[np.clip(point - 8, 0, 8)]
            high = (high & keep) | (((high >> np.uint64(8)) | _ZERO_TOP) & ~keep)
            value += _eight_digits(high - _ZEROS) * np.uint64(10**8)
            ok &= value <= np.uint64(2**53)
        result = value.astype(np.float64)
        result /= _POW10_F[point & 15]
        if negative is not None:
            np.negative(result, out=result, where=negative)
        return result, ok

    def _same_decimals(self, at: npt.NDArray[np.uint64], before: IntArray, end: IntArray,
                       length: IntArray) -> FloatArray | None:
        """:meth:`decimals` of unsigned fields of at most 8 bytes that all have as many decimals as the
        first one (most runs: scores printed with one format), or None when some field does not (a
        sign is not a digit: a signed field is left to the general case too).

        The point is then at the same place in every right-aligned word: no search for it, and about
        half the whole-array steps of the general case. The value is the same integer divided by the
        same power of ten, so exactly the general case's (and float()'s).
        """
        first = bytes(self.block.padded[int(before[0]) + 1 : int(end[0])])
        decimals = len(first) - 1 - first.find(b".") if b"." in first else 0  # "5." has 0: not all digits below
        shortest = int(length.min())
        if shortest <= decimals:  # some field has no byte left of where the point would be: the general case
            return None
        # The 8 bytes up to each field's end, as they are: the bytes left of the field are masked off
        # once the digits are values, where a byte is dropped with one AND.
        words = at[end - 8]
        if decimals:  # (the point's byte lies in every field: checked on the words as read)
            shift = 8 * decimals
            # Every word's byte there is '.' when no word differs from '.' there: one reduction over
            # the words instead of a comparison per word and then a reduction over the comparisons.
            point = words & np.uint64(0xFF << shift)
            point ^= np.uint64(ord(".") << shift)
            if np.bitwise_or.reduce(point):
                return None
        # Each byte's digit value ('.', 2 below '0', becomes 0 too). A byte below '0' borrows from the
        # byte above it, but is then not a digit itself (nor is one above '9'): the check below sees it.
        values = words - _DIGIT_BASE[decimals]
        values &= _KEEP_LOW[shortest] if shortest == int(length.max()) else _KEEP_LOW[length]
        marks = values + _ABOVE_NINE
        marks |= values
        if int(np.bitwise_or.reduce(marks)) & int(_HIGH_BITS):
            return None  # a byte that is no digit (a second point, an exponent, letters: the general case)
        if decimals:  # drop the point: the bytes left of it move one right (a 0 comes in on top)
            keep = _KEEP_LOW[decimals]
            left = values >> np.uint64(8)
            left &= ~keep
            values &= keep
            values |= left
        value: FloatArray = _eight_digits(values).astype(np.float64)
        if decimals:
            value /= _POW10_F[decimals]
        return value

    def _words_at(self, dtype: npt.DTypeLike = ">u8") -> npt.NDArray[np.uint64]:
        """Every byte offset of the buffer read as the 8 bytes from there (a view, no copy): as a
        big-endian number by default, to compute with; as ``np.uint64`` to copy bytes in memory order."""
        return np.ndarray((len(self.buffer) - 7,), dtype=dtype, buffer=self.buffer, strides=(1,))

    def fail(self, row: int, problem: str, expected: str) -> _BadLine:
        if self.block.unterminated and row == len(self.line_index) - 1:
            problem += " (the last line, with no newline after it: the file may be truncated)"
        return _BadLine(self.name, int(self.line_index[row]), f"{problem}; expected {expected}; got {self.line_text(row)}")


_KEEP_LOW = np.array([(1 << (8 * n)) - 1 for n in range(9)], dtype=np.uint64)  # the last n bytes
_ZEROS = np.uint64(int.from_bytes(b"0" * 8, "big"))
_HIGH_BITS = np.uint64(0x8080808080808080)
_LOW_7 = np.uint64(0x7F7F7F7F7F7F7F7F)
_ZERO_FILL = _ZEROS & ~_KEEP_LOW  # '0' in all but the last n bytes
_ZERO_TOP = np.uint64(ord("0") << 56)
#: What :meth:`_Tokens._same_decimals` subtracts from a word to get its digits' values, by the number
#: of decimals: '0' from every byte but the point's, '.' from that one.
_DIGIT_BASE = np.array([_ZEROS - (2 << (8 * d) if d else 0) for d in range(8)], dtype=np.uint64)
#: Added to digit values: a byte of 0-9 stays below 0x80, one of 10 or more (up to 0x7F) reaches it.
_ABOVE_NINE = np.uint64(0x7676767676767676)
_POW10_F = np.array([10.0**k for k in range(16)])


def _right_aligned(words: npt.NDArray[np.uint64], length: IntArray) -> npt.NDArray[np.uint64]:
    """The last ``length`` bytes of each word, with '0' bytes left of them."""
    return (words & _KEEP_LOW[length]) | _ZERO_FILL[length]


#: 64-bit words: an array of them (one per line), or one word for every line (the high word when no
#: field is longer than 8 bytes). The helpers below take either and give back the same kind.
_Words: TypeAlias = "npt.NDArray[np.uint64] | np.uint64"


@overload
def _at_most_one(marks: npt.NDArray[np.uint64]) -> BoolArray: ...
@overload
def _at_most_one(marks: np.uint64) -> np.bool_: ...
def _at_most_one(marks: _Words) -> BoolArray | np.bool_:
    """Whether at most one byte of each word is marked."""
    at_most_one: BoolArray | np.bool_ = (marks & (marks - np.uint64(1))) == 0  # the stubs type ndarray == as Any
    return at_most_one


@overload
def _bytes_equal(words: npt.NDArray[np.uint64], byte: int) -> npt.NDArray[np.uint64]: ...
@overload
def _bytes_equal(words: np.uint64, byte: int) -> np.uint64: ...
def _bytes_equal(words: _Words, byte: int) -> _Words:
    """0x80 in every byte of ``words`` equal to ``byte``, 0 elsewhere (exact, no borrow between bytes)."""
    x = words ^ np.uint64(byte * 0x0101010101010101)
    return ~(((x & _LOW_7) + _LOW_7) | x) & _HIGH_BITS


def _byte_index(marks: npt.NDArray[np.uint64]) -> IntArray:
    """Index from the right (0 = last byte) of the single marked byte of each word (0x80 bits).

    Byte k marked is ``1 << 8k`` once shifted down: multiplying it by _BYTE_NUMBERS shifts that
    constant's byte 7 - k, which holds k, into the top byte. (A word with several marks gives
    some index up to 255: its field is not a plain decimal anyway.)
    """
    return ((marks >> np.uint64(7)) * _BYTE_NUMBERS >> np.uint64(56)).astype(np.int64)


#: Bytes 7, 6, ..., 0 (from the right) hold 0, 1, ..., 7: see :func:`_byte_index`.
_BYTE_NUMBERS = np.uint64(0x0001020304050607)


@overload
def _all_digits(words: npt.NDArray[np.uint64]) -> BoolArray: ...
@overload
def _all_digits(words: np.uint64) -> np.bool_: ...
def _all_digits(words: _Words) -> BoolArray | np.bool_:
    """Whether every byte of each word is an ASCII digit."""
    # A byte is a digit when it is ASCII, not below '0' (subtracting borrows) and not above '9'
    # (adding 0x46 reaches 0x80). A borrow may spoil the byte above, but that byte is then moot.
    bad = words | (words - _ZEROS) | (words + np.uint64(0x4646464646464646))
    all_digits: BoolArray | np.bool_ = (bad & _HIGH_BITS) == 0  # the stubs type ndarray == as Any
    return all_digits


def _eight_digits(words: npt.NDArray[np.uint64]) -> npt.NDArray[np.uint64]:
    """The number written by 8 decimal digits (byte values 0-9, big-endian in 64-bit words).

    Adjacent lanes are combined in three steps (pairs, quads, halves), each one multiplication: a
    lane times ``10**k`` plus the lane below it shifted up lands in the upper lane, with no carry
    out of any lane (99, 9999 and 99999999 fit in 8, 16 and 32 bits), and a shift brings it down.
    Bits carried past the top of the word belong to no lane that is kept. (Arrays only: NumPy
    warns of the overflow on a scalar.) The steps work in place, in ``words``: no temporary array.
    """
    for multiplier, shift, keep in _LANE_STEPS:
        words *= multiplier
        words >>= shift
        if keep:
            words &= keep
    return words


#: The steps of :func:`_eight_digits`: multiplier, shift down, and the lanes kept (none at the last).
_LANE_STEPS = [(np.uint64(1 << 8 | 10), np.uint64(8), np.uint64(0x00FF00FF00FF00FF)),
               (np.uint64(1 << 16 | 100), np.uint64(16), np.uint64(0x0000FFFF0000FFFF)),
               (np.uint64(1 << 32 | 10000), np.uint64(32), np.uint64(0))]


#: _FIRST_BYTES[n] keeps the first n bytes in memory of a 64-bit word and zeroes the rest.
_FIRST_BYTES = np.frombuffer(b"".join(b"\xff" * n + bytes(8 - n) for n in range(9)), dtype=np.uint64)


def words_gathered(at: npt.NDArray[np.uint64], start: IntArray, length: IntArray, longest: int, shortest: int,
                   end: int) -> BytesArray:
    """The fields at ``start`` of ``length`` bytes (the longest ``longest``, the shortest ``shortest``
    or any smaller number) as an ``S{8 * words}`` array, copied 8 bytes at a time from ``at``, a view
    of a buffer as the 8 bytes from each offset (``at[end]`` must be readable: padding past ``end``).
    """
    n_words = max(-(-longest // 8), 1)
    if n_words == 1:
        word = at[start]  # a copy (an index array): masked in place
        if shortest < 8:
            word &= _FIRST_BYTES[length]
        return word.view("S8")
    out = np.empty((len(start), n_words), dtype=np.uint64)
    for j in range(n_words):  # loop over 8-byte words of the field, not over lines
        # A word that some field does not reach is read at ``end`` at the latest: the buffer holds
        # only its padding past it. (Its bytes are masked off anyway.)
        word = at[start + 8 * j] if shortest > 8 * j else at[np.minimum(start + 8 * j, end)]
        if shortest < 8 * (j + 1):  # some field ends before this word does: keep its own bytes only
            # (No clipping where every field reaches into this word and none goes past it.)
            in_word = length - 8 * j if 8 * j < shortest and longest <= 8 * (j + 1) else np.clip(length - 8 * j, 0, 8)
            word &= _FIRST_BYTES[in_word]
        out[:, j] = word
    return out.view(f"S{8 * n_words}").ravel()


def _tokenize(block: _Block) -> _Tokens:
    padded, end = block.padded, block.end
    buffer = np.frombuffer(padded, dtype=np.uint8)
    # Bytes up to 32 are separators or control bytes (checked below). The zero bytes in front of
    # the block count too: the last of them is a separator before the block's first field.
    low = buffer[:end] <= 32
    seps = np.flatnonzero(low)[_FRONT - 1 :]
    fields = _spaced_fields(buffer, low, seps, padded.find(b"\n", _FRONT, end))
    if fields and padded.find(b"#", _FRONT, end) < 0:  # the usual block: no comment line either
        line_ends = seps[fields::fields]
        return _Tokens(block, buffer, np.arange(len(line_ends)), np.arange(0, len(seps) - 1, fields),
                       np.full(len(line_ends), fields), seps[:-1], seps[1:], line_ends, uniform=fields)
    nul = padded.find(b"\0", _FRONT, end)  # (below 32: never in a block that _spaced_fields takes)
    if nul >= 0:  # C tools would cut the line there; we refuse to guess
        line_start, line_end = padded.rfind(b"\n", _FRONT, nul) + 1, padded.find(b"\n", nul, end)
        raise _BadLine(block.name, padded.count(b"\n", _FRONT, nul),
                       f"NUL byte in the line; expected text; got {_snippet(padded[max(line_start, _FRONT):line_end])}")
    sep_bytes = buffer[seps[1:]]
    # Other single separators: fields separated by exactly one space, tab or newline. Then the
    # separators alone locate every field (each lies between two of them), and every line has one.
    # The bytes of _IS_SPACE (32, and 9 to 13) are tested arithmetically: a table lookup costs 9x more.
    if (not bool(np.any(low[_FRONT:] & low[_FRONT - 1 : -1]))
            and bool(np.all((sep_bytes == 32) | (sep_bytes - np.uint8(9) < 5)))):
        before, ends = seps[:-1], seps[1:]
        newline = sep_bytes == 10  # the fields that end a line
        fields = _fields_per_line(newline)
        if fields:  # every line has as many fields: where lines start and end follows from that number
            line_ends = ends[fields - 1 :: fields]
            per_line = np.full(len(line_ends), fields)
            first = np.arange(0, len(newline), fields)
        else:
            last = np.flatnonzero(newline)
            line_ends = ends[last]
            per_line = np.diff(last, prepend=-1)
            first = last - per_line + 1
    else:
        text = buffer[_FRONT:end]
        space = _IS_SPACE[text].view(np.int8)
        edges = np.diff(space, prepend=np.int8(1), append=np.int8(1))
        before, ends = np.flatnonzero(edges == -1) + (_FRONT - 1), np.flatnonzero(edges == 1) + _FRONT
        line_ends = np.flatnonzero(text == 10) + _FRONT
        per_line = np.bincount(np.searchsorted(line_ends, ends), minlength=len(line_ends))
        first = np.concatenate(([0], np.cumsum(per_line)[:-1]))
    data = per_line > 0
    if padded.find(b"#", _FRONT, end) >= 0:
        # A line whose first field starts with '#' is a comment; '#' inside a field is data.
        data[data] = buffer[before[first[data]] + 1] != _HASH
    if bool(data.all()):  # no blank or comment line (the usual file): nothing to select
        fields = int(per_line[0]) if len(per_line) and int(per_line.min()) == int(per_line.max()) else 0
        return _Tokens(block, buffer, np.arange(len(data)), first, per_line, before, ends, line_ends, uniform=fields)
    lines = np.flatnonzero(data)
    return _Tokens(block, buffer, lines, first[lines], per_line[lines], before, ends, line_ends)


def _spaced_fields(buffer: npt.NDArray[np.uint8], low: BoolArray, seps: IntArray, first_newline: int) -> int:
    """The number of fields of every line of a block whose fields are all separated by one space and
    whose lines all hold as many fields (no blank line, tab, carriage return, NUL...); 0 for any other
    block, which is then tokenized from each of its separators.

    ``low`` marks the bytes up to ``end`` (the block's) that are 32 or less, ``seps`` their offsets
    from the last zero byte in front of the block on. Counting is cheaper than looking at every
    separator: when the block's bytes below 32 are as many as its lines, and each line's last
    separator is a newline, all the others are spaces.
    """
    fields = int(np.searchsorted(seps, first_newline)) if first_newline >= 0 else 0  # the first line's
    if not fields or (len(seps) - 1) % fields:
        return 0
    line_ends = np.ascontiguousarray(seps[fields::fields])  # (a gather through a strided index costs 3x more)
    if np.count_nonzero(buffer[_FRONT : len(low)] < 32) != len(line_ends) or not bool(np.all(buffer[line_ends] == 10)):
        return 0
    # An empty field (two separators in a row, or one opening or closing a line) is left to the
    # general tokenizer, which does not count one. (The maximum of bytes is quicker than any() of bools.)
    marks = low.view(np.uint8)
    return 0 if int((marks[_FRONT:] & marks[_FRONT - 1 : -1]).max()) else fields


def _fields_per_line(newline: BoolArray) -> int:
    """The number of fields of every line, when it is the same on every line (0 otherwise), given
    which fields end a line. Counting is cheaper than locating each line's last field."""
    fields = int(np.argmax(newline)) + 1 if len(newline) else 0
    if not fields or len(newline) % fields or not bool(newline[fields - 1 :: fields].all()):
        return 0
    return fields if np.count_nonzero(newline) == len(newline) // fields else 0


def _widens_too_far(column: np.dtype[Any], part: np.dtype[Any]) -> bool:
    """Whether fixed-width ids of width ``part`` would widen a column of width ``column`` past the
    point where each row costs more than a bytes object would (the rule :meth:`_Tokens.ids` applies
    within one block)."""
    if column.kind != "S" or part.kind != "S" or part.itemsize <= column.itemsize:
        return False
    return part.itemsize > _WIDE_ID and part.itemsize > 4 * (column.itemsize + 8)
