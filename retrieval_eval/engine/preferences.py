"""Preference judgments on the batch: trec_eval's judgment groups, their preferences, and the ranks
of the judged documents in a ranking.

Everything that depends on the judgments alone is made once, when the judgments are prepared for
joining with runs (:func:`prepare_preferences`, called by ``engine.judgments``): each query's judged documents, each group's judgments, and every
preference of every group as a pair (preferred, other) of documents. Within a judgment subgroup a
higher rel_level is preferred; a group of several subgroups also holds every preference implied by
transitivity (trec_eval multiplies a group's preference matrix by itself until it stops changing;
here Warshall's algorithm closes the bit rows of every group of a similar size at once: one machine
word per judgment for groups of up to 64 judgments, :func:`_word_pairs`). What
depends on a ranking is each judged document's rank among the judged retrieved ones
(:func:`judged_ranks`), which the measures of :mod:`retrieval_eval.measures.prefs` compare.

Indices are local to a query (its documents 0.., its groups 0..), so that a block of queries is a
slice of every array.
"""

from __future__ import annotations

import numpy as np
from attrs import frozen

from ..model import BoolArray, FloatArray, GradeArray, InputFormatError, IntArray, PrefsColumns, _display, _location
from .ids import PairIndex, _as_bytes, along_runs, intern
from .segments import _block_rows, _gather_segments, _offsets_of, segment_ids


@frozen(eq=False)
class Preferences:
    """Each query's preference judgments, in four tables cut into per-query segments by their offsets.

    - documents: every document judged for the query, in byte order of its id (trec_eval gives the
      judged documents a run lacks their ranks in that order).
    - judgments: one row per (group, document), groups in byte order of their ids: the document's
      rel_level (the same 0 or non-0 in every subgroup) and whether it is relevant (> 0).
    - groups: whether the group has a single subgroup (trec_eval's "equivalence classes"; several
      subgroups make it a "preference array", whose Rnonrel measures count differently).
    - pairs: every preference (preferred judgment, other judgment) of every group, by judgment row
      (local to the query), without repeats.
    """

    doc_offsets: IntArray
    doc_ids: np.ndarray
    judgment_offsets: IntArray
    judgment_group: IntArray  #: group of each judgment, local to its query
    judgment_doc: IntArray  #: document of each judgment, local to its query
    judgment_level: FloatArray
    group_offsets: IntArray
    group_single: BoolArray  #: the group has one subgroup
    group_ids: np.ndarray  #: the group's id (bytes)
    pair_offsets: IntArray
    pair_better: IntArray  #: the preferred judgment, local to its query
    pair_worse: IntArray

    @property
    def n_queries(self) -> int:
        return len(self.doc_offsets) - 1

    def select(self, indices: IntArray) -> Preferences:
        """The queries at ``indices``, in that order."""
        tables = []
        for offsets, columns in self._tables():
            rows = _gather_segments(offsets, indices)
            tables.append((_offsets_of(np.diff(offsets)[indices]), [column[rows] for column in columns]))
        return self._of(tables)

    def block(self, start: int, stop: int) -> Preferences:
        """The queries ``start`` to ``stop`` (exclusive): views of the rows."""
        tables = []
        for offsets, columns in self._tables():
            bounds = offsets[start : stop + 1]
            rows = slice(int(bounds[0]), int(bounds[-1]))
            tables.append((bounds - bounds[0], [column[rows] for column in columns]))
        return self._of(tables)

    def _tables(self) -> list[tuple[IntArray, list[np.ndarray]]]:
        return [(self.doc_offsets, [self.doc_ids]),
                (self.judgment_offsets, [self.judgment_group, self.judgment_doc, self.judgment_level]),
                (self.group_offsets, [self.group_single, self.group_ids]),
                (self.pair_offsets, [self.pair_better, self.pair_worse])]

    @staticmethod
    def _of(tables: list[tuple[IntArray, list[np.ndarray]]]) -> Preferences:
        (do, (d,)), (jo, (jg, jd, jl)), (go, (gs, gi)), (po, (pb, pw)) = tables
        return Preferences(do, d, jo, jg, jd, jl, go, gs, gi, po, pb, pw)


def prepare_preferences(prefs: PrefsColumns, q: IntArray, n_q: int) -> tuple[Preferences, IntArray, IntArray]:
    """The preferences of ``prefs``, whose rows belong to the queries ``q`` (codes of a byte-ordered
    vocabulary of ``n_q`` queries); each row's judged document, numbered across the queries (0.., in
    the order of the preferences' documents); and the first row of each judged document.

    They are checked as trec_eval checks a group of several subgroups: a document judged 0 in one
    subgroup and above 0 in another, or preferences that contradict each other, are errors naming
    the lines; so is a document twice in one subgroup."""
    query_ids, doc_ids = _as_bytes(prefs.query_ids), _as_bytes(prefs.doc_ids)
    levels, lines = np.asarray(prefs.levels, dtype=np.float64), np.asarray(prefs.lines)
    groups, subgroups = _as_bytes(prefs.groups), _as_bytes(prefs.subgroups)
    q = q.astype(np.int64, copy=False)
    # (Each column of a million codes is freed once used: the heap's peak, here, is pages the kernel
    # hands out afresh, and zeroes, a few microseconds each.)

    # Documents: distinct (query, document), in byte order within each query.
    _, doc = intern(doc_ids) if len(doc_ids) else (doc_ids, np.zeros(0, dtype=np.int64))
    doc_index, doc_inverse = _distinct(_pair_key(q, doc))
    del doc
    doc_query = q[doc_index]
    doc_offsets = _offsets_of(np.bincount(doc_query, minlength=n_q))
    local_doc = doc_inverse.reshape(-1) - doc_offsets[q]

    # Groups: distinct (query, group); single-subgroup or not.
    group_vocab, group = intern(groups)
    group_index, group_inverse = _distinct(_pair_key(q, group))
    group_ids = group_vocab[group[group_index]]
    del group
    group_query = q[group_index]
    group_offsets = _offsets_of(np.bincount(group_query, minlength=n_q))
    _, subgroup = intern(subgroups)
    sub_index, sub_inverse = _distinct(_pair_key(group_inverse, subgroup))
    del subgroup
    group_single = np.bincount(group_inverse[sub_index], minlength=len(group_index)) == 1
    # (a subgroup is in one query: its documents are told apart by their number within the query)
    _refuse_repeats(_pair_key(sub_inverse, local_doc), prefs, lines, (query_ids, groups, subgroups, doc_ids))

    # Judgments: distinct (group, document); a document's level must be 0 everywhere or nowhere.
    j_index, j_inverse = _distinct(_pair_key(group_inverse, local_doc))
    zero = np.bincount(j_inverse, weights=levels == 0, minlength=len(j_index))
    positive = np.bincount(j_inverse, weights=levels > 0, minlength=len(j_index))
    mixed = (zero > 0) & (positive > 0)
    del zero, positive
    if mixed.any():
        rows = np.flatnonzero(mixed[j_inverse])
        first, second = rows[levels[rows] == 0][0], rows[levels[rows] > 0][0]
        later, earlier = (first, second) if lines[first] > lines[second] else (second, first)
        raise InputFormatError(
            f"{_location(prefs.origin, prefs.unit, int(lines[later]))}: document {_display(doc_ids[later])!r} has "
            f"rel_level {levels[later]:g} here and {levels[earlier]:g} at {prefs.unit} {lines[earlier]} in the same "
            "judgment group; expected 0 (non-relevant) in every subgroup of a group or in none")
    j_query = q[j_index]
    judgment_offsets = _offsets_of(np.bincount(j_query, minlength=n_q))
    judgment_group = group_inverse[j_index] - group_offsets[j_query]
    judgment_doc = local_doc[j_index]
    judgment_level = levels[j_index]
    del local_doc

    better, worse = _group_pairs(sub_inverse, levels, j_inverse, group_inverse, group_inverse[j_index], group_single)
    looped = better == worse
    if looped.any():
        at = int(np.flatnonzero(j_inverse == better[looped][0])[0])
        raise InputFormatError(
            f"{_location(prefs.origin, prefs.unit, int(lines[at]))}: document {_display(doc_ids[at])!r} of query "
            f"{_display(query_ids[at])!r} is preferred to itself through the subgroups of its judgment group "
            f"{_display(groups[at])!r}; expected preferences that do not contradict each "
            "other within a group (put contradicting assessments in different groups)")
    pair_query = j_query[better]
    pair_offsets = _offsets_of(np.bincount(pair_query, minlength=n_q))
    pair_start = judgment_offsets[pair_query]  # the first judgment of each pair's query
    preferences = Preferences(
        doc_offsets=doc_offsets, doc_ids=doc_ids[doc_index], judgment_offsets=judgment_offsets,
        judgment_group=judgment_group, judgment_doc=judgment_doc, judgment_level=judgment_level,
        group_offsets=group_offsets, group_single=group_single, group_ids=group_ids,
        pair_offsets=pair_offsets,
        pair_better=better - pair_start, pair_worse=worse - pair_start,
    )
    return preferences, doc_inverse, doc_index


#: Groups of at most this many judgments get their preferences through one machine word per judgment
#: (:func:`_word_pairs`); larger ones through their pairs (:func:`_subgroup_pairs`, :func:`_closed`).
#: The tests lower it to send every group the general way.
_WORD_LIMIT = 64


def _group_pairs(subgroup: IntArray, levels: FloatArray, judgment: IntArray, group: IntArray,
                 judgment_group: IntArray, single: BoolArray) -> tuple[IntArray, IntArray]:
    """Every preference (preferred judgment, other judgment) of every group, transitive ones included,
    grouped by group in increasing order, from the rows' subgroups, levels, judgments and groups."""
    size = np.bincount(judgment_group, minlength=len(single))
    small = size <= _WORD_LIMIT
    row_small = small[group]
    if row_small.all():  # (the usual case: no copy of the rows)
        return _word_pairs(subgroup, levels, judgment, group, judgment_group, single, size)
    pieces = []
    if row_small.any():
        rows = np.flatnonzero(row_small)
        pieces.append(_word_pairs(subgroup[rows], levels[rows], judgment[rows], group[rows], judgment_group, single,
                                  np.where(small, size, 0)))
    rows = np.flatnonzero(~row_small)
    better, worse = _subgroup_pairs(subgroup[rows], levels[rows], judgment[rows])
    pieces.append(_closed(better, worse, judgment_group, single))
    return _in_group_order([(judgment_group[b], b, w) for b, w in pieces], len(single))


def _distinct(key: IntArray) -> tuple[IntArray, IntArray]:
    """``np.unique(key, return_index=True, return_inverse=True)`` without the keys: the first row of
    each distinct key (keys in increasing order) and each row's key number.

    Rows often come in runs of one key (a file grouped by query, judgment group and subgroup): then
    only the first row of each run is sorted, and the numbers spread along the runs (for the groups
    of the benchmark's million lines, a sort of 50,000 keys instead of 1,000,000). Rows in no
    particular order are sorted as they are, or, when the keys (>= 0) span at most ``_DENSE_SPAN``
    times as many values as there are keys to number, marked in a table of every value instead (no
    sort: the judged documents and the judgments of the benchmark)."""
    n = len(key)
    head = np.ones(n, dtype=bool)
    head[1:] = key[1:] != key[:-1]
    heads = np.flatnonzero(head)
    runs = len(heads) <= n // 2
    run_key = key[heads] if runs else key
    span = int(run_key.max(initial=-1)) + 1
    if len(run_key) and span <= _DENSE_SPAN * len(run_key):
        seen = np.zeros(span, dtype=bool)
        seen[run_key] = True
        number = np.cumsum(seen)
        number -= 1
        code = number[run_key]
        first = np.full(int(number[-1]) + 1, n, dtype=np.int64)
        np.minimum.at(first, code, heads if runs else np.arange(n))
    else:
        first, code = _distinct_sorted(run_key, heads if runs else None)
    if runs:
        code = along_runs(code, heads, n)
    return first, code


#: :func:`_distinct` numbers keys through a table of every value when they span at most this many
#: values per key; it sorts them otherwise (the tests set it to 0 to force the sort, and high to force the table).
_DENSE_SPAN = 4


def _distinct_sorted(run_key: IntArray, heads: IntArray | None) -> tuple[IntArray, IntArray]:
    """:func:`_distinct` by sorting ``run_key`` (the key of each run's first row, ``heads``; or of
    every row, when None)."""
    order = np.argsort(run_key)
    ordered = run_key[order]
    new = np.ones(len(order), dtype=bool)
    new[1:] = ordered[1:] != ordered[:-1]
    starts = np.flatnonzero(new)
    code = np.empty(len(order), dtype=np.int64)
    code[order] = np.cumsum(new) - 1
    rows = order if heads is None else heads[order]
    first = np.minimum.reduceat(rows, starts) if len(starts) else rows  # the sort is not stable
    return first, code


#: :func:`_refuse_repeats` marks keys in a table of one byte per value when they span at most this
#: many values per key (the tests set it to 0 to go straight to the sort).
_SEEN_SPAN = 16


def _refuse_repeats(key: IntArray, prefs: PrefsColumns, lines: IntArray, ids: tuple[np.ndarray, ...]) -> None:
    """A document twice in one subgroup is an error naming both lines (trec_eval would count its
    preferences twice in a group of one subgroup). Keys (>= 0) that span few values are first marked
    in a table of every value: only when fewer are marked than there are keys is there a repeat to
    find by sorting them."""
    span = int(key.max(initial=-1)) + 1
    if span <= _SEEN_SPAN * len(key):
        seen = np.zeros(span, dtype=bool)
        seen[key] = True
        if np.count_nonzero(seen) == len(key):
            return
    order = np.argsort(key, kind="stable")
    repeated = np.flatnonzero(key[order][1:] == key[order][:-1])
    if len(repeated):
        firsts, seconds = order[repeated], order[repeated + 1]
        at = int(np.argmin(lines[seconds]))
        first, second = int(firsts[at]), int(seconds[at])
        query, group, subgroup, doc = (_display(column[second]) for column in ids)
        raise InputFormatError(
            f"{_location(prefs.origin, prefs.unit, int(lines[second]))}: query {query!r}, group {group!r}, subgroup "
            f"{subgroup!r}, document {doc!r} again (first at {prefs.unit} {lines[first]}); expected each document "
            "at most once per subgroup")


def _pair_key(major: IntArray, minor: IntArray) -> IntArray:
    """One int64 per (major, minor) pair, ordered as the pairs are."""
    span = int(minor.max(initial=0)) + 1
    return major.astype(np.int64) * span + minor


def _subgroup_pairs(subgroup: IntArray, levels: FloatArray, judgment: IntArray) -> tuple[IntArray, IntArray]:
    """Every (preferred, other) pair of judgment rows within a subgroup: each row against every row of
    its subgroup with a lower rel_level (the rows sorted by subgroup and level descending)."""
    order, level_end, sub_end = _by_level(subgroup, levels)
    counts = sub_end - level_end
    worse_rows = _block_rows(level_end, counts)
    better_rows = np.repeat(np.arange(len(order)), counts)
    judgment = judgment[order]
    return judgment[better_rows], judgment[worse_rows]


def _run_ends(new: BoolArray, index: IntArray) -> IntArray:
    """For each row, the index just past the run of rows it belongs to (runs start where ``new``)."""
    heads = np.flatnonzero(new)
    ends = np.append(heads[1:], len(new))
    return ends[np.cumsum(new) - 1] if len(new) else index


#: :func:`_by_level` numbers at most this many distinct levels by comparing the levels with each;
#: more by a binary search (the tests set it to 0 to force the search).
_FEW_LEVELS = 16


def _by_level(subgroup: IntArray, levels: FloatArray) -> tuple[IntArray, IntArray, IntArray]:
    """The rows sorted by subgroup and level descending (``order``), and for each sorted row the end
    (exclusive) of its run of equal level and of its subgroup: the rows of a lower level in its
    subgroup are those from the first to the second."""
    # Each level's rank among the distinct levels, highest first: a sort of the levels without their
    # inverse (half the time of np.unique's), then a comparison with each distinct level, or a search.
    distinct = np.unique(levels)
    if len(distinct) <= _FEW_LEVELS:  # (the usual few levels: a comparison with each beats a binary search)
        level_code = np.zeros(len(levels), dtype=np.int64)
        for value in distinct[1:].tolist():
            level_code += levels < value  # the distinct levels above this one
    else:
        level_code = len(distinct) - 1 - np.searchsorted(distinct, levels)
    order = np.argsort(_pair_key(subgroup, level_code), kind="stable")
    subgroup, level_code = subgroup[order], level_code[order]
    n = len(order)
    index = np.arange(n)
    new_sub = np.ones(n, dtype=bool)
    new_sub[1:] = subgroup[1:] != subgroup[:-1]
    new_level = new_sub.copy()
    new_level[1:] |= level_code[1:] != level_code[:-1]
    return order, _run_ends(new_level, index), _run_ends(new_sub, index)


def _word_pairs(subgroup: IntArray, levels: FloatArray, judgment: IntArray, group: IntArray,
                judgment_group: IntArray, single: BoolArray, size: IntArray) -> tuple[IntArray, IntArray]:
    """:func:`_group_pairs` for groups of at most 64 judgments (``size``: 0 for any other group, whose
    rows are not given), without a pair array until the end.

    Each judgment's preferences are a word whose bit c stands for the group's judgment c. A row's word
    is the sum of the bits of the rows of a lower level in its subgroup (a document is at most once in
    a subgroup, so the bits are distinct and their sum is their OR): one difference of two prefix sums
    of the rows sorted by subgroup and level. A judgment's word ORs its rows'; a group of several
    subgroups is closed by Warshall's algorithm on the words (:func:`_close_words`); the set bits are
    the pairs, judgment after judgment, so grouped by group."""
    n_judgments = len(judgment_group)
    first = _offsets_of(np.bincount(judgment_group, minlength=len(single)))[:-1]
    column = (judgment - first[group]).astype(np.uint64)
    order, level_end, sub_end = _by_level(subgroup, levels)
    prefix = np.zeros(len(order) + 1, dtype=np.uint64)
    np.cumsum(np.left_shift(np.uint64(1), column[order]), out=prefix[1:])  # (wraps around: only differences count)
    del column
    below = prefix[sub_end] - prefix[level_end]
    del prefix, sub_end, level_end
    width = 8 * _word_bytes(int(size.max(initial=1)))
    words = np.zeros(n_judgments, dtype=f"<u{width // 8}")
    np.bitwise_or.at(words, judgment[order], below.astype(words.dtype))
    del below, order
    _close_words(words, judgment_group, first, ~single & (size >= 2), size)  # (a > b > a: a loop)
    # The set bits back to pairs, a chunk of judgments at a time (a byte per bit: _CHUNK_BYTES at most)
    span = int(size.max(initial=0))
    chunk = max(1, _CHUNK_BYTES // max(span, 1))
    pieces = []
    row_first = first[judgment_group]  # each judgment's group's first judgment
    for low in range(0, n_judgments if span else 0, chunk):
        part = words[low : low + chunk]
        bits = np.unpackbits(part.view(np.uint8).reshape(len(part), -1), axis=1, count=span, bitorder="little")
        at = np.flatnonzero(bits)
        better = at // span
        worse = at - better * span  # (the remainder without a second division)
        better += low
        worse += row_first[better]
        pieces.append((better, worse))
    if len(pieces) == 1:  # (one chunk: no copy)
        return pieces[0]
    if not pieces:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    return np.concatenate([b for b, _ in pieces]), np.concatenate([w for _, w in pieces])


def _word_bytes(bits: int) -> int:
    """The bytes of the smallest unsigned integer of at least ``bits`` bits."""
    return 1 if bits <= 8 else 2 if bits <= 16 else 4 if bits <= 32 else 8


def _close_words(words: np.ndarray, judgment_group: IntArray, first: IntArray, closing: BoolArray,
                 size: IntArray) -> None:
    """Close the ``closing`` groups' relations in ``words`` (one word per judgment, see _word_pairs).

    Warshall's step k ORs row k into every row holding bit k, for every group of a similar size at
    once: the groups are bucketed by size rounded up to a multiple of 8, and each bucket's words laid
    out as (judgment within the group, group), so that row k of every group is one contiguous row.
    A row holding bit k is told by shifting bit k to the sign bit and back (all ones, or zero)."""
    padded = -(-size // 8) * 8
    j_padded = np.where(closing[judgment_group], padded[judgment_group], 0)
    for m in sorted(set(padded[closing].tolist())):
        groups = np.flatnonzero(closing & (padded == m))
        largest = int(size[groups].max())
        place = np.zeros(len(closing), dtype=np.int64)
        place[groups] = np.arange(len(groups))
        rows = np.flatnonzero(j_padded == m)
        g = judgment_group[rows]
        at = (rows - first[g], place[g])
        width = _word_bytes(largest)
        top = 8 * width - 1
        plain = np.zeros((largest, len(groups)), dtype=f"<u{width}")
        plain[at] = words[rows].astype(plain.dtype)  # (the bucket's bits are the words' low ones; the rest are 0)
        square = plain.view(f"<i{width}")  # signed: a right shift copies the sign bit
        holds = np.empty_like(square)
        for k in range(largest):
            np.left_shift(square, top - k, out=holds)
            np.right_shift(holds, top, out=holds)  # all ones where the row holds bit k, else 0
            np.bitwise_and(holds, square[k], out=holds)
            np.bitwise_or(square, holds, out=square)  # those rows take row k's bits too
        words[rows] = plain[at]


def _in_group_order(pieces: list[tuple[IntArray, IntArray, IntArray]], n_groups: int) -> tuple[IntArray, IntArray]:
    """Pieces of (group, better, worse) pairs, each holding whole groups in increasing order and each
    group in one piece, merged into one: a group's pairs go to its place among all the groups', in the
    order its piece has them (no sort needed)."""
    counts = sum(np.bincount(piece[0], minlength=n_groups) for piece in pieces)
    starts = _offsets_of(counts)
    better, worse = np.empty(int(starts[-1]), dtype=np.int64), np.empty(int(starts[-1]), dtype=np.int64)
    for group, piece_better, piece_worse in pieces:
        at = starts[group] + _rank_in_runs(group)
        better[at], worse[at] = piece_better, piece_worse
    return better, worse


def _closed(better: IntArray, worse: IntArray, judgment_group: IntArray, single: BoolArray
            ) -> tuple[IntArray, IntArray]:
    """The pairs with the transitive ones added for groups of several subgroups, grouped by group.

    A group of one subgroup is transitive already, and its pairs are distinct (a document is at most
    once in a subgroup). The others are closed as trec_eval closes its preference matrix, but on
    bit rows: each group's relation is a (documents x documents) bit matrix, and Warshall's step k
    ORs row k into every row holding bit k, for every group of a similar size at once. Groups are
    bucketed by size rounded up to a power of two, so a large group does not make the small ones pay.

    The pairs come grouped by group, groups in increasing order, as :func:`_subgroup_pairs` gives
    them (its subgroups are numbered group after group); the result keeps that order.
    """
    n_groups = len(single)
    start = _offsets_of(np.bincount(judgment_group, minlength=n_groups))
    pair_group = judgment_group[better]
    several = ~single[pair_group]
    pieces = [(pair_group[~several], better[~several], worse[~several])]
    pb, pw, pg = better[several], worse[several], pair_group[several]
    size = np.diff(start)
    # Buckets: sizes rounded up to a multiple of 8 up to 64, then to a power of two.
    padded = np.where(size <= 64, -(-size // 8) * 8, 2 ** np.ceil(np.log2(np.maximum(size, 1))).astype(np.int64))
    closing = np.bincount(pg, minlength=n_groups) > 0  # groups of several subgroups with some preference
    pair_padded = padded[pg]
    for m in sorted(set(padded[closing].tolist())):
        groups = np.flatnonzero(closing & (padded == m))
        place = np.full(n_groups, -1, dtype=np.int64)
        place[groups] = np.arange(len(groups))
        chosen = pair_padded == m
        first = start[pg[chosen]]
        rows = _bit_rows(place[pg[chosen]], pb[chosen] - first, pw[chosen] - first, len(groups), m)
        largest = int(size[groups].max())
        rows = rows[:, :largest]  # (the rows past the bucket's largest group are empty)
        one, zero = np.uint64(1), np.uint64(0)
        holds = np.empty(rows.shape[:2], dtype=np.uint64)
        for k in range(largest):
            # All ones in the rows holding bit k, else 0 (a mask ANDed in beat a where= argument by half)
            np.right_shift(rows[:, :, k // 64], np.uint64(k % 64), out=holds)
            np.bitwise_and(holds, one, out=holds)
            np.subtract(zero, holds, out=holds)
            rows |= holds[:, :, None] & rows[:, k : k + 1, :]  # those rows take row k's bits too
        # The bits back to pairs, a chunk of groups at a time (16 MB of bytes): one flat search for the
        # set ones, by group, then row, then column (np.nonzero of the 3-d array took three times as long).
        square = largest * largest
        chunk = max(1, _CHUNK_BYTES // square)
        for low in range(0, len(groups), chunk):
            bits = np.unpackbits(rows[low : low + chunk].view(np.uint8), axis=-1, count=largest, bitorder="little")
            at = np.flatnonzero(bits)
            g = groups[low + at // square]
            first = start[g]
            pieces.append((g, first + at % square // largest, first + at % largest))
    return _in_group_order(pieces, n_groups)  # each piece holds whole groups, in increasing order


def _rank_in_runs(values: IntArray) -> IntArray:
    """Each element's place (0, 1, ...) within its run of equal neighbours: [5, 5, 2, 5] gives [0, 1, 0, 0]."""
    index = np.arange(len(values))
    new = np.ones(len(values), dtype=bool)
    new[1:] = values[1:] != values[:-1]
    return index - np.maximum.accumulate(np.where(new, index, 0))


#: The bytes of one cell per (group, row, column) that the closure holds at a time, making its bit
#: rows and reading them back (a group larger than that is taken alone).
_CHUNK_BYTES = 1 << 24


def _bit_rows(group: IntArray, row: IntArray, column: IntArray, n_groups: int, m: int) -> np.ndarray:
    """The pairs (``row``, ``column``) of each ``group`` (0..n_groups-1, in increasing order; repeats
    allowed) as bit rows: ``(n_groups, m, words)`` little-endian 64-bit words, bit c of a row's words
    set for each of its columns c. Made through a byte per cell, packed, a chunk of groups (16 MB of
    bytes) at a time: cheaper than ORing each bit into its word (``np.bitwise_or.at``)."""
    words = (m + 63) // 64
    packed = np.zeros((n_groups, m, 8 * words), dtype=np.uint8)
    square = m * m
    chunk = max(1, _CHUNK_BYTES // square)
    lows = np.arange(0, n_groups, chunk)
    bounds = np.searchsorted(group, np.append(lows, n_groups))
    for number, low in enumerate(lows.tolist()):
        high = min(low + chunk, n_groups)
        part = slice(int(bounds[number]), int(bounds[number + 1]))
        cube = np.zeros((high - low, m, m), dtype=bool)
        cube[group[part] - low, row[part], column[part]] = True
        packed[low:high, :, : -(-m // 8)] = np.packbits(cube, axis=-1, bitorder="little")
    return packed.view("<u8")


def judged_ranks(prefs: Preferences, query_vocab_size: int, offsets: IntArray, doc_ids: np.ndarray,
                 scores: FloatArray, labels: GradeArray | None = None) -> tuple[IntArray, IntArray]:
    """Each judged document's rank, as trec_eval's preference measures number them, and each query's
    number of judged documents retrieved (njr).

    The ranking is re-sorted as trec_eval's preference code sorts it: score descending, ties by
    doc_id *ascending* (the other measures break ties by doc_id descending; this code does not). The
    judged documents retrieved get ranks 0..njr-1 in that order; the judged documents the ranking
    lacks get njr, njr+1, ... in byte order of their ids. ``labels`` (the batch's) tells which ranked
    rows are judged at all: only those are looked up among the preferences' documents.
    """
    n_q = query_vocab_size
    row_query = segment_ids(offsets)
    # Rows of a tie (same query and score) are in doc_id descending order: reversed, they ascend.
    n = len(row_query)
    tied = np.zeros(n, dtype=bool)
    if n > 1:
        tied[1:] = (row_query[1:] == row_query[:-1]) & (scores[1:] == scores[:-1])
    heads = np.flatnonzero(~tied)
    ends = np.append(heads[1:], n)
    run = np.cumsum(~tied) - 1
    position = np.arange(n)
    prefs_position = heads[run] + ends[run] - 1 - position  # each row's place in the re-sorted ranking
    doc_query = segment_ids(prefs.doc_offsets)
    rows = np.arange(n) if labels is None else np.flatnonzero(labels >= 0)  # the judged ranked rows
    # Each judged ranked row looked up among its query's judged documents, in a hash table of them
    # (a document is at most once in a ranking: each is found at most once).
    table = PairIndex(doc_query, _as_bytes(prefs.doc_ids), np.diff(prefs.doc_offsets))
    found, at = table.find(row_query[rows], _as_bytes(doc_ids)[rows])
    retrieved = np.zeros(len(doc_query), dtype=bool)
    retrieved[at] = True
    position_of = np.full(len(doc_query), -1, dtype=np.int64)
    position_of[at] = prefs_position[rows[found]]
    njr = np.bincount(doc_query[retrieved], minlength=n_q).astype(np.int64)
    # Retrieved: the order of their positions within the query. Others: njr + their byte order.
    rank = np.empty(len(doc_query), dtype=np.int64)
    by_position = np.lexsort((position_of, ~retrieved, doc_query))
    start = prefs.doc_offsets[doc_query[by_position]]
    rank[by_position] = np.arange(len(by_position)) - start  # retrieved first, then the rest in id order
    return rank, njr
