"""Document and query ids as fixed-width bytes: hashing, interning, lookup and the duplicate check.

Ids stay bytes, compared as 64-bit words rather than as strings, so that byte order (trec_eval's
``strcmp``) is kept and nothing creates a Python object per id.
"""

from __future__ import annotations

import bisect
from itertools import pairwise
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

import numpy as np

from ..model import BoolArray, InputFormatError, IntArray, _display, _first_at, _location
from .segments import _offsets_of, long_on_average
from .threads import in_order, workers

if TYPE_CHECKING:  # numpy.typing costs milliseconds of start-up: types only
    import numpy.typing as npt

Duplicates = Literal["error", "first"]

#: Fixed-width bytes ids (``S<n>``). Functions that also take other ids (ints, str) use NDArray[Any].
BytesArray: TypeAlias = "npt.NDArray[np.bytes_]"


def _words(ids: BytesArray, dtype: npt.DTypeLike = ">u8") -> npt.NDArray[np.uint64]:
    """Fixed-width byte strings as rows of 64-bit words, zero-padded.

    Read big-endian (the default), comparing rows compares bytes, as sorting needs; read as
    ``np.uint64`` the words are a view of the ids in memory order (no copy when the width is a
    multiple of 8), which is all that comparing for equality and hashing need.
    """
    width = ids.dtype.itemsize
    padded = -(-width // 8) * 8
    if padded != width:
        ids = ids.astype(f"S{padded}")  # pads with NUL, which sorts below every byte, as in strcmp
    words = np.ascontiguousarray(ids).view(dtype).reshape(len(ids), padded // 8)
    return words.astype(np.uint64, copy=False)


#: An odd 64-bit multiplier for hashing ids (any odd constant with well-mixed bits would do).
_MIX = 0x9E3779B97F4A7C15

#: Rows per chunk in linear passes whose temporaries need not span the whole run.
_CHUNK = 1 << 20
#: Rows probed at a time in :meth:`PairIndex.find`: its temporaries take some 50 bytes a row.
_FIND_CHUNK = 1 << 18


def _id_hash(ids: BytesArray, words: npt.NDArray[np.uint64] | None = None) -> npt.NDArray[np.uint64]:
    """A 64-bit hash of each byte-string id: equal ids hash equal whatever the array widths.

    An id of up to 8 bytes is its own hash (its bytes, exact). Longer ids may collide, so a hash
    match is only ever a candidate, confirmed by comparing bytes. Trailing zero words add nothing,
    which is what makes the hash independent of the width of the array holding the id. ``words``:
    the ids' ``_words(ids, np.uint64)``, if the caller has them.
    """
    if ids.dtype.kind == "O":
        return _object_hash(ids)  # type: ignore[arg-type]  # BytesArray also stands for such columns
    if words is None:
        words = _words(ids, np.uint64)
    hashed = words[:, 0].copy()
    power = 1
    # Products a chunk of ids at a time: one as long as the ids would add 8 bytes an id to the peak.
    step = np.empty(min(len(hashed), _CHUNK) if words.shape[1] > 1 else 0, dtype=np.uint64)
    for j in range(1, words.shape[1]):  # loop over 8-byte words of the ids, not over ids
        power = power * _MIX % 2**64
        for start in range(0, len(hashed), _CHUNK):
            product = step[: min(_CHUNK, len(hashed) - start)]
            np.multiply(words[start : start + _CHUNK, j], np.uint64(power), out=product)  # wraps modulo 2**64
            hashed[start : start + _CHUNK] += product
    return hashed


#: Rows per chunk when hashing ``bytes`` objects: each chunk makes a copy of its ids' bytes.
_OBJECT_CHUNK = 1 << 16

#: Ids up to this many bytes are hashed from a fixed-width copy; longer ones (few) word by word.
_SHORT_ID = 64


def _object_hash(ids: npt.NDArray[np.object_]) -> npt.NDArray[np.uint64]:
    """:func:`_id_hash` of ``bytes`` objects (a column with a few very long ids): the same value as
    for the same id in a fixed-width array, so the two kinds of column can be joined."""
    if len(ids) > _OBJECT_CHUNK:  # small chunks bound the temporary copies of the ids
        out = np.empty(len(ids), dtype=np.uint64)
        for start in range(0, len(ids), _OBJECT_CHUNK):
            out[start : start + _OBJECT_CHUNK] = _object_hash(ids[start : start + _OBJECT_CHUNK])
        return out
    out = np.empty(len(ids), dtype=np.uint64)
    if not len(ids):
        return out
    length = np.fromiter(map(len, ids), dtype=np.int64, count=len(ids))
    short = length <= _SHORT_ID
    # The short ids (nearly all): one fixed-width copy, hashed as such a column is.
    width = 8 * max(-(-int(length[short].max(initial=0)) // 8), 1)
    out[short] = _id_hash(np.array(ids[short].tolist(), dtype=f"S{width}"))
    long = np.flatnonzero(~short)
    if len(long):  # each long id zero-padded to whole words, all in one buffer, summed by id
        n_words = -(-length[long] // 8)
        words = np.frombuffer(b"".join(x.ljust(8 * n, b"\0") for x, n in zip(ids[long], n_words.tolist())),
                              dtype=np.uint64)
        starts = _offsets_of(n_words)[:-1]
        position = np.arange(len(words)) - np.repeat(starts, n_words)
        powers = np.ones(int(n_words.max()), dtype=np.uint64)
        for j in range(1, len(powers)):  # a loop over the words of the longest id, not over ids
            powers[j] = int(powers[j - 1]) * _MIX % 2**64
        out[long] = np.add.reduceat(words * powers[position], starts)  # wraps modulo 2**64, as _id_hash does
    return out


def _intern_words(ids: BytesArray, words: npt.NDArray[np.uint64]) -> tuple[BytesArray, IntArray]:
    if words.shape[1] == 1:
        keys, codes = np.unique(words[:, 0], return_inverse=True)
        return keys.astype(">u8").view("S8"), codes.ravel().astype(np.int64)
    order = np.lexsort(words.T[::-1])  # lexsort's last key is the primary one: the first word
    ordered = words[order]
    new = np.concatenate(([True], np.any(ordered[1:] != ordered[:-1], axis=1)))
    codes = np.empty(len(ids), dtype=np.int64)
    codes[order] = np.cumsum(new) - 1
    return ids[order[new]], codes


def intern(ids: npt.NDArray[Any]) -> tuple[npt.NDArray[Any], IntArray]:
    """Distinct ids in byte order and the code of each id (``np.unique(ids, return_inverse=True)``).

    Byte strings are compared as 64-bit words rather than as strings, which is several times faster;
    ids that come in runs (a run file's query column) are interned one run at a time.
    """
    if ids.dtype.kind == "O" and len(ids) and isinstance(ids[0], bytes):  # the readers' bytes objects
        return _intern_objects(ids)
    if ids.dtype.kind != "S" or len(ids) == 0:
        vocab, codes = np.unique(ids, return_inverse=True)
        return vocab, codes.ravel().astype(np.int64)
    heads = _run_heads(ids)
    if _increasing(ids[heads]):  # in byte order already (a sorted file, a log): no sort needed
        return ids[heads], along_runs(None, heads, len(ids))
    if len(heads) >= len(ids) // 2:
        return _intern_words(ids, _words(ids))
    vocab, head_codes = _intern_words(ids[heads], _words(ids[heads]))
    return vocab, along_runs(head_codes, heads, len(ids))


def _intern_objects(ids: npt.NDArray[np.object_]) -> tuple[npt.NDArray[np.object_], IntArray]:
    """:func:`intern` of ``bytes`` objects (a column with a few very long ids): the short ids, nearly
    all, interned as a fixed-width column; the long ones sorted apart, and merged in by their places
    among the short ones (NumPy's sort of Python objects took seconds for a million ids)."""
    length = np.fromiter(map(len, ids), dtype=np.int64, count=len(ids))
    short = length <= _SHORT_ID
    width = 8 * max(-(-int(length[short].max(initial=0)) // 8), 1)
    short_vocab, short_codes = intern(np.array(ids[short].tolist(), dtype=f"S{width}"))
    short_list = short_vocab.tolist()  # bytes: NumPy drops the zero padding, which no id holds
    long_list = sorted(set(ids[~short].tolist()))
    # A long id equals no short one: it goes before the short ids from its place on.
    places = np.array([bisect.bisect_left(short_list, value) for value in long_list], dtype=np.int64)
    short_position = np.arange(len(short_list)) + np.searchsorted(places, np.arange(len(short_list)), side="right")
    long_position = places + np.arange(len(long_list))
    vocab = np.empty(len(short_list) + len(long_list), dtype=object)
    vocab[short_position] = short_list
    vocab[long_position] = long_list
    codes = np.empty(len(ids), dtype=np.int64)
    codes[short] = short_position[short_codes]
    if len(long_list):
        long_index = {value: int(position) for value, position in zip(long_list, long_position)}
        codes[~short] = [long_index[value] for value in ids[~short].tolist()]
    return vocab, codes


def along_runs(values: npt.NDArray[Any] | None, heads: IntArray, n: int) -> npt.NDArray[Any]:
    """``values[i]`` along the i-th run of ``n`` rows, the runs starting at ``heads`` (``values`` None:
    the run numbers 0, 1, 2... themselves): ``np.repeat(values, run lengths)``, which costs a step
    per run, for long runs; for short ones (sessions of a few rows, one row each) a running count of
    the run starts, with nothing to do at all when every row is a run of its own."""
    if len(heads) == n:
        return np.arange(n, dtype=np.int64) if values is None else values
    if long_on_average(n, len(heads)):
        return np.repeat(np.arange(len(heads), dtype=np.int64) if values is None else values, _run_lengths(heads, n))
    # Runs are never empty, so each start is marked once (cheaper than segment_ids' count of starts).
    number = np.zeros(n, dtype=np.int64)
    number[heads[1:]] = 1
    np.cumsum(number, out=number)
    return number if values is None else values[number]


def _increasing(ids: BytesArray) -> bool:
    """Whether the bytes ids are strictly increasing in byte order: one pass, no sort."""
    if len(ids) < 2:
        return True
    words = _words(ids)  # big-endian: rows compare as the bytes do
    later, earlier = words[1:], words[:-1]
    greater = later[:, 0] > earlier[:, 0]
    undecided = later[:, 0] == earlier[:, 0]
    for j in range(1, words.shape[1]):  # a loop over 8-byte words of the ids, not over ids
        greater |= undecided & (later[:, j] > earlier[:, j])
        undecided &= later[:, j] == earlier[:, j]
    return bool(greater.all())


def _run_heads(ids: npt.NDArray[Any]) -> IntArray:
    """Index of the first id of every run of equal adjacent ids."""
    if len(ids) == 0:
        return np.zeros(0, dtype=np.int64)
    head = np.empty(len(ids), dtype=bool)  # whether each id differs from the one before it
    head[0] = True
    if ids.dtype.kind == "S":  # whole words compare several times faster than strings
        words = _words(ids, np.uint64)
        np.not_equal(words[1:, 0], words[:-1, 0], out=head[1:])
        for j in range(1, words.shape[1]):
            head[1:] |= words[1:, j] != words[:-1, j]
    else:
        np.not_equal(ids[1:], ids[:-1], out=head[1:])
    return np.flatnonzero(head)


def _run_lengths(heads: IntArray, n: int) -> IntArray:
    """Length of each run that starts at ``heads`` (increasing, within ``n`` rows): ``np.diff(heads,
    append=n)`` without the copy that ``append`` makes."""
    lengths = np.empty(len(heads), dtype=np.int64)
    if len(heads):
        np.subtract(heads[1:], heads[:-1], out=lengths[:-1])
        lengths[-1] = n - heads[-1]
    return lengths


def _as_bytes(values: npt.ArrayLike) -> BytesArray:
    """Ids as a bytes array (UTF-8), since byte order is the tie rule and hashing works on bytes."""
    arr = np.asarray(values)
    if arr.dtype.kind == "S":
        return arr
    # A column with very long ids (checked by the types present: a step per id costs far more)
    if arr.dtype.kind == "O" and all(issubclass(kind, bytes) for kind in set(map(type, arr.tolist()))):
        return arr
    if arr.size == 0:
        return np.zeros(0, dtype="S1")
    if arr.dtype.kind == "U" and arr.ndim == 1:
        ascii_ids = _ascii_bytes(arr)
        if ascii_ids is not None:
            return ascii_ids
    return np.char.encode(arr.astype(str), "utf-8", "surrogateescape")  # the bytes id_text kept


def _ascii_bytes(arr: npt.NDArray[np.str_]) -> BytesArray | None:
    """A str array's ids as bytes when every character is ASCII (then UTF-8 is one byte a character):
    the code points narrowed to bytes in one step, rather than each id encoded apart; else None."""
    chars = arr.dtype.itemsize // 4
    points = np.ascontiguousarray(arr).view(np.uint32).reshape(len(arr), chars)
    if chars == 0 or int(points.max()) >= 128:
        return None if chars else np.zeros(len(arr), dtype="S1")
    used = np.flatnonzero(points.any(axis=0))  # np.char.encode's width: the longest id's
    width = int(used[-1]) + 1 if len(used) else 1
    return np.ascontiguousarray(points[:, :width], dtype=np.uint8).view(f"S{width}").ravel()


def _check_duplicates(
    query_code: IntArray, ids: BytesArray, lines: IntArray, origin: str, unit: str, what: str,
    query_ids: npt.NDArray[Any], policy: Duplicates, keys: npt.NDArray[np.uint64] | None = None,
    pieces: IntArray | None = None,
) -> BoolArray:
    """Mask of rows to keep; raises on a repeated (query, id) unless ``policy == 'first'``.
    ``keys``: the rows' :func:`pair_keys`, if the caller has them; ``pieces``: bounds that cut the
    rows into pieces no query has rows in two of (see :func:`_keys_repeat`), if the caller knows some."""
    keep = np.ones(len(query_code), dtype=bool)
    if len(query_code) < 2:
        return keep
    # Fast certificate: when no two rows share a key of (query, id), no row repeats.
    if not _keys_repeat(query_code, ids, keys, pieces):
        return keep
    # Some row may repeat: find out exactly, on interned ids.
    vocab, doc_code = intern(ids)
    n_docs = len(vocab)
    # Rows arrive in line order, so a stable sort on (query, doc) puts the first occurrence first.
    if (int(query_code.max()) + 1) * n_docs < 2**62:
        order = _sort_rows(query_code * n_docs + doc_code, (int(query_code.max()) + 1) * n_docs)[0]
    else:
        order = np.lexsort((lines, doc_code, query_code))
    q, d = query_code[order], doc_code[order]
    repeat = np.flatnonzero((q[1:] == q[:-1]) & (d[1:] == d[:-1])) + 1
    if repeat.size == 0:
        return keep
    if policy == "error":
        second, first = order[repeat[0]], order[repeat[0] - 1]
        raise InputFormatError(
            f"{_location(origin, unit, int(lines[second]))}: duplicate {what} for query "
            f"{_display(query_ids[query_code[second]])!r}, document {_display(ids[second])!r}"
            f"{_first_at(unit, int(lines[first]))}; expected each document at most once per query"
        )
    keep[order[repeat]] = False
    return keep


def _keys_repeat(query_code: IntArray, ids: BytesArray, keys: npt.NDArray[np.uint64] | None,
                 pieces: IntArray | None) -> bool:
    """Whether two rows share a key of (query, id) (:func:`pair_keys`; ``keys``: the rows' keys, if
    the caller has them), which every repeated pair does and distinct pairs almost never do.

    ``pieces``: increasing row bounds, from 0 to the row count, such that no query has rows in two
    pieces. A repeated pair is then within one piece, so each piece's keys are made, sorted and
    compared on their own: short sorts stay in the caches (7 M keys in pieces of 65,536 took 0.039 s,
    as a whole 0.058 s), only the pieces in hand hold keys (not 8 bytes a row at once), and the
    pieces go to threads where :func:`~.threads.workers` gives some (NumPy's sort lets go of the GIL).

    >>> codes, ids = np.array([0, 0, 1, 1]), np.array([b"a", b"b", b"a", b"a"])
    >>> _keys_repeat(codes, ids, None, None), _keys_repeat(codes[:3], ids[:3], None, np.array([0, 2, 3]))
    (True, False)
    """
    bounds = [0, len(query_code)] if pieces is None else pieces.tolist()

    def piece(start: int, stop: int) -> bool:
        if keys is None:  # made here: sorted in place (a copy would add 8 bytes a row to the build's peak)
            hashed = pair_keys(query_code[start:stop], ids[start:stop])
            hashed.sort()
        else:  # the caller's, kept for the join: sorted as a copy
            hashed = np.sort(keys[start:stop])
        return bool(np.any(hashed[1:] == hashed[:-1]))

    items = list(pairwise(bounds))
    return any(in_order(piece, items, workers(len(query_code)) if len(items) > 1 else 0))


def pair_keys(query_code: IntArray, ids: BytesArray,
              words: npt.NDArray[np.uint64] | None = None) -> npt.NDArray[np.uint64]:
    """A 64-bit key of each (query, id) pair: equal pairs have equal keys; unequal pairs rarely do.

    The id hash is multiplied before the query code goes into its low bits, so that "doc8" in query 1
    and "doc9" in query 0 do not collide. The query code is XORed in whole: two pairs with equal ids
    and equal keys have equal query codes (which :meth:`PairIndex.find` relies on). ``words``: the
    ids' ``_words(ids, np.uint64)``, if the caller has them.
    """
    if words is None and ids.dtype.kind == "S" and ids.dtype.itemsize <= 8:
        words = _words(ids, np.uint64)
    if words is not None and words.shape[1] == 1:  # the id is its own hash: multiplied as it is copied (a pass less)
        keys = np.multiply(words[:, 0], np.uint64(_MIX))
    else:
        keys = np.ascontiguousarray(_id_hash(ids, words))
        keys *= np.uint64(_MIX)
    keys ^= np.ascontiguousarray(query_code, dtype=np.int64).view(np.uint64)
    return keys


class PairIndex:
    """A hash table of judged (query, id) pairs, for finding ranked rows among them.

    Open addressing with linear probing. Each query's pairs hash into a region of the table of their
    own, of 4 to 8 slots per pair: absent pairs (most of a run's rows) are mostly ruled out by one
    empty slot, and the rows of one query (a run lists them together) probe a few kB of the table
    and of the judged ids, which stay in the caches, rather than the whole of them. The table is
    probed with whole-array steps, each for every row still looking, and few rows need more than
    two. A matching key is only a candidate, confirmed on the id's bytes (see :func:`pair_keys`).

    A slot holds its row in the low ``row_bits`` bits and the top bits of the row's key above them
    (non-negative: -1 marks an empty slot). Most rows that meet another row's slot are told apart
    by those bits, without gathering the other row's key.
    """

    def __init__(self, query_code: IntArray, ids: BytesArray, counts: IntArray | None = None) -> None:
        """``counts``, if given, is the number of pairs of each query code (``np.bincount(query_code)``)."""
        self.query_code, self.ids = query_code, ids
        #: the ids as rows of words in memory order (see :func:`_words`: a view of the ids when their
        #: width is a multiple of 8), for confirming matches; None for ``bytes`` objects
        self.words = _words(ids, np.uint64) if ids.dtype.kind == "S" else None
        self.keys = pair_keys(query_code, ids, self.words)
        n = len(ids)
        # Region sizes: 2**bit_length(4 * count) slots (frexp's exponent is the bit length), and one
        # slot, empty, for a query without pairs.
        region_bits = np.frexp(4.0 * (np.bincount(query_code) if counts is None else counts))[1].astype(np.int64)
        self.n_regions = len(region_bits)
        self.region_start = _offsets_of(np.left_shift(1, region_bits))
        #: per region, the shift that keeps a region's bits of a key (after a first shift by one:
        #: a shift by 64 is undefined)
        self.region_shift = (63 - region_bits).astype(np.uint64)
        # Linear probing puts each key at the first free slot from its own: the larger of its slot
        # and the place of the key before it in slot order, plus one. That is a running maximum over
        # the keys sorted by slot, with no step per probe. A key placed past the last slot goes to a
        # tail rather than back to the start, and the table ends with an empty slot, which ends
        # every probe.
        slot = self._slots(self.keys, query_code)
        order, slot = _sort_rows(slot, int(self.region_start[-1]))
        #: rows whose key equals that of another row: maybe the same pair twice
        self.same_key: list[IntArray] = [_repeated_keys(self.keys, order, slot)]
        step = np.arange(n, dtype=np.int64)
        slot -= step
        place = np.maximum.accumulate(slot) + step if n else step
        del slot, step
        size = max(int(self.region_start[-1]), int(place[-1]) + 2 if n else 1)
        # 7 bits of key over 24 of row in 31, or 31 over 32 in 63 (where rows need more than 24).
        dtype, self.row_bits = (np.int32, 24) if n <= 2**24 else (np.int64, 32)
        self.table: npt.NDArray[np.signedinteger[Any]] = np.full(size, -1, dtype=dtype)
        self.table[place] = self._tags(self.keys[order]) | order

    def _slots(self, keys: npt.NDArray[np.uint64], query_code: IntArray) -> IntArray:
        """Each key's slot: the top bits of ``key * _MIX`` within its query's region (every query code
        must have one)."""
        slot = keys * np.uint64(_MIX)
        slot >>= np.uint64(1)
        slot >>= self.region_shift.take(query_code)
        out = slot.view(np.int64)
        out += self.region_start.take(query_code)
        return out

    def _tags(self, keys: npt.NDArray[np.uint64]) -> npt.NDArray[np.signedinteger[Any]]:
        """The top bits of each key, placed above a slot's row bits (see the class)."""
        kept = 8 * self.table.dtype.itemsize - 1 - self.row_bits
        tags = (keys >> np.uint64(64 - kept)).astype(self.table.dtype)
        tags <<= self.row_bits
        return tags

    def rows(self) -> npt.NDArray[np.signedinteger[Any]]:
        """Each slot's row, -1 for an empty slot."""
        return np.where(self.table >= 0, self.table & ((1 << self.row_bits) - 1), -1)

    def maybe_repeated(self) -> bool:
        """Whether two rows share a key (every repeated pair does; distinct pairs almost never)."""
        return any(len(rows) for rows in self.same_key)

    def find(self, query_code: IntArray, ids: BytesArray,
             keys: npt.NDArray[np.uint64] | None = None) -> tuple[IntArray, IntArray]:
        """The rows of (``query_code``, ``ids``) that are in the table (ascending) and their rows in it
        (``keys``: their :func:`pair_keys`, if the caller has them)."""
        if len(ids) > _FIND_CHUNK:  # chunks bound the temporary arrays (a run has millions of rows)
            starts = range(0, len(ids), _FIND_CHUNK)
            parts = [self.find(query_code[start : start + _FIND_CHUNK], ids[start : start + _FIND_CHUNK],
                               None if keys is None else keys[start : start + _FIND_CHUNK])
                     for start in starts]
            return (np.concatenate([rows + start for (rows, _), start in zip(parts, starts)]),
                    np.concatenate([at for _, at in parts]))
        none = np.zeros(0, dtype=np.int64)
        if not len(ids) or not len(self.keys):
            return none, none
        if int(query_code.min()) < 0 or int(query_code.max()) >= self.n_regions:
            # a query with no pair in the table has no region either
            known = np.flatnonzero((query_code >= 0) & (query_code < self.n_regions))
            found_rows, found_at = self.find(query_code[known], ids[known], None if keys is None else keys[known])
            return known[found_rows], found_at
        words = _words(ids, np.uint64) if ids.dtype.kind == "S" else None
        if keys is None:
            keys = pair_keys(query_code, ids, words)
        slot = self._slots(keys, query_code)
        found = np.full(len(keys), -1, dtype=np.int64)  # each row's row in the table, -1 until found
        tags = self._tags(keys)
        row_mask = (1 << self.row_bits) - 1
        # The rows still probing (None for all of them, at the first step), with their keys, tags and slots.
        rows: IntArray | None = None
        while len(slot):
            held = self.table.take(slot)
            probing = held >= 0  # a row that meets an empty slot is not in the table
            tagged = np.flatnonzero((held & ~row_mask) == tags)  # never an empty slot: its -1 has every bit set
            at = (held[tagged] & row_mask).astype(np.int64)
            same = self.keys.take(at) == keys[tagged]
            if same.any():
                match, at = tagged[same], at[same]
                match_rows = match if rows is None else rows[match]
                # Equal keys of equal ids have equal query codes (a key is the id's hash, mixed, with
                # the query code XORed in): the ids alone confirm a match.
                exact = self._confirm(at, ids, words, match_rows)
                found[match_rows[exact]] = at[exact]
                probing[match[exact]] = False  # a false match probes on
            going = np.flatnonzero(probing)
            rows = going if rows is None else rows[going]
            keys, tags, slot = keys[going], tags[going], slot[going]
            slot += 1  # never past the table's end, whose last slot is empty
        hits = np.flatnonzero(found >= 0)
        return hits, found[hits]

    def _confirm(self, at: IntArray, ids: BytesArray, words: npt.NDArray[np.uint64] | None,
                 rows: IntArray) -> BoolArray:
        """Whether the table's id at row ``at[i]`` equals ``ids[rows[i]]`` (``words``: the ids' words,
        when both are fixed-width bytes)."""
        if words is None or self.words is None:
            return _same_ids(self.ids, at, ids, rows)
        # Whole rows of words gathered (not one word at a time: ``take`` would copy a strided column
        # whole first).
        return _same_words(self.words.take(at, axis=0), words.take(rows, axis=0))


def _sort_rows(keys: IntArray, bound: int) -> tuple[IntArray, IntArray]:
    """The rows in order of ``keys`` (integers in ``[0, bound)``), equal keys in row order, and the
    keys in that order: a stable ``argsort`` and the sorted keys.

    Where key and row fit together in 63 bits, one sort of ``key << bits | row`` does it: sorting
    numbers is several times faster than an ``argsort`` (which moves indices along with the keys),
    let alone a stable one.
    """
    bits = max(len(keys) - 1, 0).bit_length()
    if bound > 2**63 >> bits:
        order = np.argsort(keys, kind="stable")
        return order, keys[order]
    packed = np.left_shift(keys, bits, dtype=np.int64)
    packed |= np.arange(len(keys), dtype=np.int64)
    packed.sort()
    order = packed & ((1 << bits) - 1)
    packed >>= bits
    return order, packed


def _repeated_keys(keys: npt.NDArray[np.uint64], order: IntArray, slot: IntArray) -> IntArray:
    """Rows whose key equals that of another row (of each set of equal keys, all rows but one), given
    the rows in ``order`` of their ``slot`` (sorted): equal keys have equal slots, so only rows that
    share a slot are compared. Few share one, and by twos or threes: each row is compared with the
    row 1, 2, ... places on in slot order while that one shares its slot."""
    shared = slot[1:] == slot[:-1]
    at = np.flatnonzero(shared)  # places in slot order of rows whose slot the next row shares
    repeated = [np.zeros(0, dtype=np.int64)]
    distance = 1
    while len(at):  # as many steps as the most rows sharing a slot, less one
        later = order.take(at + distance)
        repeated.append(later[keys.take(order.take(at)) == keys.take(later)])
        at = at[at + distance < len(shared)]
        at = at[shared.take(at + distance)]
        distance += 1
    rows = np.sort(np.concatenate(repeated))
    # Distinct rows by hand: np.unique imports numpy.ma (15-40 ms of the command's start-up) to check for masks.
    return rows[np.concatenate(([True], rows[1:] != rows[:-1]))] if len(rows) else rows


def _same_ids(a: BytesArray, a_rows: IntArray, b: BytesArray, b_rows: IntArray) -> BoolArray:
    """Whether id ``a[a_rows[i]]`` equals id ``b[b_rows[i]]``: as 64-bit words where both columns are
    fixed-width bytes (several times faster than comparing strings), else as the ids themselves."""
    if a.dtype.kind != "S" or b.dtype.kind != "S":
        return np.asarray(a[a_rows] == b[b_rows])
    return _same_words(_words(a[a_rows], np.uint64), _words(b[b_rows], np.uint64))


def _same_words(a: npt.NDArray[np.uint64], b: npt.NDArray[np.uint64]) -> BoolArray:
    """Whether each row of words of ``a`` equals the same row of ``b`` (ids as rows of words, see
    :func:`_words`; the narrower ids end in NUL words)."""
    if a.shape[1] < b.shape[1]:
        a, b = b, a
    same: BoolArray = a[:, 0] == b[:, 0]
    for j in range(1, a.shape[1]):  # a loop over 8-byte words, not over ids
        same &= a[:, j] == (b[:, j] if j < b.shape[1] else 0)
    return same
