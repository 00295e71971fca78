"""Deterministic synthetic TREC qrels and runs for the benchmarks.

    python benchmarks/generate.py SHAPE OUTDIR        # writes OUTDIR/SHAPE.qrels and OUTDIR/SHAPE.run

Shapes (see ``SHAPES``):

* ``msmarco``: 6980 queries x 1000 documents, binary qrels with ~1.1 relevant per query, most of
  them retrieved at ranks spread from 1 to 1000 (an MS MARCO passage dev-set lookalike, ~230 MB run);
* ``dl``: 200 queries x 1000, graded 0-3 qrels with ~200 judgments per query, many retrieved
  (a TREC Deep Learning lookalike);
* ``robust``: 250 queries x 1000, binary qrels with ~1250 judgments per query, scores rounded to
  2 decimals so tied scores are common (a Robust04 lookalike);
* ``skewed``: one query with 1,000,000 documents plus 5000 queries with 10 each;
* ``tiny``: 20 queries x 50, for smoke tests;
* ``sessions-1``: 10,000,000 queries of 1 document each, and ``sessions-10``: 1,000,000 queries of
  10 (recommendation logs: many sessions of a handful of items); ``-small`` variants are a tenth of
  the size. Each query has one or two judgments;
* ``long-ids``: 2,000,000 lines in which 0.1% of the document ids are 5,000 bytes long (the memory
  of a column must follow the bytes of the input, not the longest id times the lines).

Every query has at least one relevant judgment, so all tools agree on which queries are averaged.
Scores are generated as integers in units of 10^-decimals and printed exactly, so files are
byte-identical from run to run (each shape has its own fixed seed).

Writing is vectorised: each output line is laid out as a row of a uint8 matrix (numbers as
NUL-padded digit columns), and the NUL bytes are dropped from the flattened matrix before writing.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

#: rows formatted per chunk when writing (bounds the temporary matrices to a few hundred MB)
_CHUNK = 1 << 20
_RUN_TAG = b"bench"


# --------------------------------------------------------------------------------------------------
# Fast formatting


def _digits(values: np.ndarray, pad: bool = False) -> np.ndarray:
    """Decimal digits of non-negative integers as an (n, width) uint8 matrix.

    Leading positions are NUL (dropped when the line is written) unless ``pad``, which keeps them
    as '0' (for the fractional part of a fixed-point number).
    """
    values = np.asarray(values, dtype=np.int64)
    top = int(values.max()) if len(values) else 0
    width = max(1, len(str(top)))
    powers = 10 ** np.arange(width - 1, -1, -1, dtype=np.int64)
    column = values[:, None]
    out = (column // powers % 10 + 48).astype(np.uint8)
    if not pad:
        leading = column < powers
        leading[:, -1] = False  # zero itself is printed as "0"
        out[leading] = 0
    return out


def _bytes_matrix(strings: np.ndarray) -> np.ndarray:
    """A fixed-width bytes array (NUL-padded on the right) as an (n, width) uint8 matrix."""
    strings = np.ascontiguousarray(strings)
    return strings.view(np.uint8).reshape(len(strings), strings.dtype.itemsize)


def _constant(text: bytes, n: int) -> np.ndarray:
    return np.broadcast_to(np.frombuffer(text, dtype=np.uint8), (n, len(text)))


def _emit(out, parts: list[np.ndarray]) -> None:
    """Write rows made of the horizontally concatenated ``parts``, without their NUL bytes."""
    matrix = np.hstack(parts)
    flat = matrix.ravel()
    out.write(flat[flat != 0].tobytes())


def _fixed_point(units: np.ndarray, decimals: int) -> list[np.ndarray]:
    """Columns printing ``units / 10**decimals`` with exactly ``decimals`` decimals."""
    units = np.asarray(units, dtype=np.int64)
    if decimals == 0:
        return [_digits(units)]
    scale = 10**decimals
    n = len(units)
    return [_digits(units // scale), _constant(b".", n), _digits(units % scale, pad=True)]


def _write_chunked(path: str, n_rows: int, pieces: Callable[[int, int], list[np.ndarray]]) -> None:
    """Write rows ``lo..hi`` chunk by chunk; ``pieces(lo, hi)`` gives the byte columns of those rows."""
    with open(path, "wb") as out:
        for lo in range(0, n_rows, _CHUNK):
            _emit(out, pieces(lo, min(lo + _CHUNK, n_rows)))


def write_run(path: str, qids: np.ndarray, docs: np.ndarray, ranks: np.ndarray, score_units: np.ndarray,
              decimals: int) -> None:
    """``qid Q0 doc rank score bench`` lines; ``qids``/``docs`` are bytes arrays, one per row."""
    _write_chunked(path, len(qids), lambda lo, hi: [
        _bytes_matrix(qids[lo:hi]), _constant(b" Q0 ", hi - lo), _bytes_matrix(docs[lo:hi]),
        _constant(b" ", hi - lo), _digits(ranks[lo:hi]), _constant(b" ", hi - lo),
        *_fixed_point(score_units[lo:hi], decimals), _constant(b" " + _RUN_TAG + b"\n", hi - lo),
    ])


def write_qrels(path: str, qids: np.ndarray, docs: np.ndarray, relevance: np.ndarray) -> None:
    """``qid 0 doc relevance`` lines."""
    _write_chunked(path, len(qids), lambda lo, hi: [
        _bytes_matrix(qids[lo:hi]), _constant(b" 0 ", hi - lo), _bytes_matrix(docs[lo:hi]),
        _constant(b" ", hi - lo), _digits(relevance[lo:hi]), _constant(b"\n", hi - lo),
    ])


# --------------------------------------------------------------------------------------------------
# Sampling helpers


def unique_rows(rng: np.random.Generator, rows: int, width: int, space: int) -> np.ndarray:
    """A (rows, width) matrix of integers in [0, space), distinct within each row."""
    if width > space:
        raise ValueError(f"cannot draw {width} distinct values from {space}")
    ids = rng.integers(0, space, size=(rows, width), dtype=np.int64)
    while True:
        order = np.argsort(ids, axis=1, kind="stable")
        ranked = np.take_along_axis(ids, order, axis=1)
        repeated = np.zeros(ids.shape, dtype=bool)
        repeated[:, 1:] = ranked[:, 1:] == ranked[:, :-1]
        if not repeated.any():
            return ids
        r, c = np.nonzero(repeated)
        ids[r, order[r, c]] = rng.integers(0, space, size=len(r), dtype=np.int64)


def descending_units(rng: np.random.Generator, rows: int, width: int, mean_gap: float,
                     min_gap: int) -> np.ndarray:
    """Per-row non-increasing positive integer scores (fixed-point units), best first.

    Consecutive scores differ by ``min_gap`` + Poisson(mean_gap): with ``min_gap=0`` ties occur.
    """
    gaps = min_gap + rng.poisson(mean_gap, size=(rows, width))
    gaps[:, 0] = 0
    drop = np.cumsum(gaps, axis=1)
    start = drop[:, -1] + rng.integers(1, 50 * max(1, int(mean_gap)) + 2, size=rows)
    return start[:, None] - drop


def pick_ranks(rng: np.random.Generator, counts: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """For each row i, a boolean mask over columns choosing ``counts[i]`` of them without
    replacement, column j with weight ``weights[j]`` (Gumbel top-k)."""
    rows, width = len(counts), len(weights)
    keys = np.log(weights)[None, :] + rng.gumbel(size=(rows, width))
    order = np.argsort(-keys, axis=1)
    chosen = np.arange(width)[None, :] < np.minimum(counts, width)[:, None]
    mask = np.zeros((rows, width), dtype=bool)
    np.put_along_axis(mask, order, chosen, axis=1)
    return mask


def categorical(rng: np.random.Generator, probabilities: np.ndarray) -> np.ndarray:
    """One draw per row of an (n, k) probability matrix."""
    cumulative = np.cumsum(probabilities, axis=1)
    u = rng.random(len(probabilities))[:, None] * cumulative[:, -1:]
    return (u >= cumulative).sum(axis=1)


def ensure_relevant(query_index: np.ndarray, relevance: np.ndarray, n_queries: int, value: int = 1) -> None:
    """Give every query at least one relevant judgment (its first judgment becomes ``value``)."""
    has = np.bincount(query_index[relevance > 0], minlength=n_queries) > 0
    first = np.searchsorted(query_index, np.arange(n_queries))
    relevance[first[~has]] = value


def as_bytes(values: np.ndarray, prefix: bytes = b"") -> np.ndarray:
    text = np.asarray(values).astype("S")
    return np.strings.add(prefix, text) if prefix else text


# --------------------------------------------------------------------------------------------------
# Shapes


@dataclass
class Collection:
    """A generated run (rows grouped by query, in rank order) and its qrels."""

    run_qids: np.ndarray
    run_docs: np.ndarray
    run_ranks: np.ndarray
    run_units: np.ndarray
    decimals: int
    qrels_qids: np.ndarray
    qrels_docs: np.ndarray
    qrels_rel: np.ndarray
    widen: int = 0  #: length to pad the ids starting with _LONG to, when writing (0: none)


def _query_ids(rng: np.random.Generator, n: int, space: int) -> np.ndarray:
    """n distinct numeric query ids, in numeric (not byte) order, as bytes."""
    ids = np.sort(unique_rows(rng, 1, n, space)[0])
    return as_bytes(ids)


def _square(rng: np.random.Generator, n_q: int, depth: int, extra: int, corpus: int, mean_gap: float,
            min_gap: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Query ids, a (n_q, depth + extra) matrix of distinct doc numbers (the first ``depth`` are the
    ranking, the rest are unretrieved documents available for qrels) and (n_q, depth) score units."""
    qids = _query_ids(rng, n_q, 1_200_000)
    docs = unique_rows(rng, n_q, depth + extra, corpus)
    units = descending_units(rng, n_q, depth, mean_gap, min_gap)
    ranks = np.tile(np.arange(1, depth + 1), n_q)
    return qids, docs, units, ranks


def msmarco(rng: np.random.Generator, n_q: int = 6980, depth: int = 1000) -> Collection:
    qids, docs, units, ranks = _square(rng, n_q, depth, 2, 8_841_823, mean_gap=100, min_gap=1)
    # 1 relevant passage per query, 2 for ~10% of them.
    n_rel = 1 + (rng.random(n_q) < 0.1)
    slots = np.repeat(np.arange(n_q), n_rel)
    slot_in_query = np.arange(len(slots)) - np.repeat(np.cumsum(n_rel) - n_rel, n_rel)
    # ~85% of relevant passages are retrieved, at a log-uniform rank in 1..depth (median ~30).
    retrieved = rng.random(len(slots)) < 0.85
    rank = np.minimum(depth, np.ceil(np.exp(rng.random(len(slots)) * np.log(depth)))).astype(np.int64)
    # A second relevant passage that would land on the first one's rank is left unretrieved.
    same = np.zeros(len(slots), dtype=bool)
    same[1:] = (slots[1:] == slots[:-1]) & (rank[1:] == rank[:-1]) & retrieved[:-1]
    retrieved &= ~same
    column = np.where(retrieved, rank - 1, depth + slot_in_query)
    rel_docs = docs[slots, column]
    qrels_rel = np.ones(len(slots), dtype=np.int64)
    return Collection(
        run_qids=np.repeat(qids, depth), run_docs=as_bytes(docs[:, :depth].ravel()), run_ranks=ranks,
        run_units=units.ravel(), decimals=4,
        qrels_qids=qids[slots], qrels_docs=as_bytes(rel_docs), qrels_rel=qrels_rel,
    )


def dl(rng: np.random.Generator, n_q: int = 200, depth: int = 1000) -> Collection:
    extra = 250
    qids, docs, units, ranks = _square(rng, n_q, depth, extra, 8_841_823, mean_gap=100, min_gap=1)
    judged = rng.integers(120, 281, size=n_q)  # ~200 judgments per query
    from_run = np.rint(judged * rng.uniform(0.55, 0.8, size=n_q)).astype(np.int64)
    # The top 10 are always judged; deeper ranks are judged with probability ~ 1/sqrt(rank).
    weights = 1.0 / np.sqrt(np.arange(1, depth + 1))
    weights[:10] = 1e9
    in_run = pick_ranks(rng, from_run, weights)
    outside = np.arange(extra)[None, :] < np.minimum(judged - from_run, extra)[:, None]
    mask = np.hstack([in_run, outside])
    q_index, column = np.nonzero(mask)
    # Grade distribution by where the document sits (better near the top).
    by_bucket = np.array([
        [0.30, 0.30, 0.25, 0.15],  # ranks 1-10
        [0.50, 0.25, 0.15, 0.10],  # 11-100
        [0.70, 0.18, 0.08, 0.04],  # 101-1000
        [0.75, 0.15, 0.07, 0.03],  # not retrieved
    ])
    bucket = np.select([column < 10, column < 100, column < depth], [0, 1, 2], 3)
    grade = categorical(rng, by_bucket[bucket]).astype(np.int64)
    ensure_relevant(q_index, grade, n_q, value=2)
    # Qrels files are usually sorted by doc id within a query, not by rank: shuffle within queries.
    shuffle = np.lexsort((rng.random(len(q_index)), q_index))
    return Collection(
        run_qids=np.repeat(qids, depth), run_docs=as_bytes(docs[:, :depth].ravel()), run_ranks=ranks,
        run_units=units.ravel(), decimals=4,
        qrels_qids=qids[q_index[shuffle]], qrels_docs=as_bytes(docs[q_index, column][shuffle]),
        qrels_rel=grade[shuffle],
    )


def robust(rng: np.random.Generator, n_q: int = 250, depth: int = 1000) -> Collection:
    extra = 1700
    qids, docs, units, ranks = _square(rng, n_q, depth, extra, 528_155, mean_gap=1.0, min_gap=0)
    # Pool depth 100: the top 100 are judged, deeper ranks with probability 0.25, and the rest of
    # ~1250 judgments per query are documents this run did not retrieve.
    judged_in_run = np.zeros((n_q, depth), dtype=bool)
    judged_in_run[:, :100] = True
    judged_in_run[:, 100:] = rng.random((n_q, depth - 100)) < 0.25
    total = rng.integers(600, 1901, size=n_q)
    n_outside = np.clip(total - judged_in_run.sum(axis=1), 50, extra)
    outside = np.arange(extra)[None, :] < n_outside[:, None]
    q_index, column = np.nonzero(np.hstack([judged_in_run, outside]))
    p_rel = np.select([column < 10, column < 100, column < depth], [0.5, 0.2, 0.05], 0.03)
    relevance = (rng.random(len(column)) < p_rel).astype(np.int64)
    ensure_relevant(q_index, relevance, n_q)
    shuffle = np.lexsort((rng.random(len(q_index)), q_index))
    prefixes = np.array([b"FBIS3-", b"FBIS4-", b"FT921-", b"FR940104-", b"LA010189-"])
    doc_names = np.strings.add(prefixes[docs % len(prefixes)], as_bytes(docs // len(prefixes) + 1000))
    # Tied scores appear in the file in generation order; trec_eval re-orders them by doc id.
    return Collection(
        run_qids=np.repeat(qids, depth), run_docs=doc_names[:, :depth].ravel(), run_ranks=ranks,
        run_units=units.ravel(), decimals=2,
        qrels_qids=qids[q_index[shuffle]], qrels_docs=doc_names[q_index, column][shuffle],
        qrels_rel=relevance[shuffle],
    )


def skewed(rng: np.random.Generator, big: int = 1_000_000, n_small: int = 5000, small: int = 10) -> Collection:
    corpus = 8_841_823
    # The big query: 2000 judgments, 10% relevant, three quarters of them retrieved somewhere.
    big_docs = unique_rows(rng, 1, big + 500, corpus)[0]
    big_units = descending_units(rng, 1, big, mean_gap=2, min_gap=1)[0]
    judged_cols = np.concatenate([np.sort(rng.choice(big, size=1500, replace=False)), big + np.arange(500)])
    big_rel = (rng.random(len(judged_cols)) < np.where(judged_cols < 1000, 0.3, 0.08)).astype(np.int64)
    big_rel[0] = max(big_rel[0], 1)
    # The small queries: 3 judgments each among 13 candidate documents.
    small_docs = unique_rows(rng, n_small, small + 3, corpus)
    small_units = descending_units(rng, n_small, small, mean_gap=100, min_gap=1)
    pick = pick_ranks(rng, np.full(n_small, 3), np.ones(small + 3))
    s_q, s_col = np.nonzero(pick)
    s_rel = (rng.random(len(s_q)) < 0.4).astype(np.int64)
    ensure_relevant(s_q, s_rel, n_small)
    qids = as_bytes(np.arange(n_small + 1) + 1)  # "1" is the big query
    return Collection(
        run_qids=np.concatenate([np.repeat(qids[:1], big), np.repeat(qids[1:], small)]),
        run_docs=as_bytes(np.concatenate([big_docs[:big], small_docs[:, :small].ravel()])),
        run_ranks=np.concatenate([np.arange(1, big + 1), np.tile(np.arange(1, small + 1), n_small)]),
        run_units=np.concatenate([big_units, small_units.ravel()]), decimals=4,
        qrels_qids=np.concatenate([np.repeat(qids[:1], len(judged_cols)), qids[1:][s_q]]),
        qrels_docs=as_bytes(np.concatenate([big_docs[judged_cols], small_docs[s_q, s_col]])),
        qrels_rel=np.concatenate([big_rel, s_rel]),
    )


def tiny(rng: np.random.Generator, n_q: int = 20, depth: int = 50) -> Collection:
    extra = 10
    qids, docs, units, ranks = _square(rng, n_q, depth, extra, 100_000, mean_gap=100, min_gap=1)
    in_run = pick_ranks(rng, np.full(n_q, 12), 1.0 / np.arange(1, depth + 1))
    outside = np.broadcast_to(np.arange(extra)[None, :] < 3, (n_q, extra))
    q_index, column = np.nonzero(np.hstack([in_run, outside]))
    grade = categorical(rng, np.tile([0.5, 0.3, 0.2], (len(column), 1))).astype(np.int64)
    ensure_relevant(q_index, grade, n_q)
    return Collection(
        run_qids=np.repeat(qids, depth), run_docs=as_bytes(docs[:, :depth].ravel()), run_ranks=ranks,
        run_units=units.ravel(), decimals=4,
        qrels_qids=qids[q_index], qrels_docs=as_bytes(docs[q_index, column]), qrels_rel=grade,
    )


def _increasing_ids(rng: np.random.Generator, n: int, first: int) -> np.ndarray:
    """n distinct increasing integers from ``first`` with random gaps (distinct without a sort)."""
    return first + np.cumsum(1 + rng.poisson(3, size=n))


def sessions(rng: np.random.Generator, n_q: int, depth: int) -> Collection:
    """``n_q`` queries of ``depth`` documents; each query judges one or two documents, one of them
    relevant, which the ranking retrieves about half of the time."""
    qids = as_bytes(_increasing_ids(rng, n_q, 10_000_000))
    docs = unique_rows(rng, n_q, depth + 1, 8_841_823)
    units = descending_units(rng, n_q, depth, mean_gap=100, min_gap=1)
    # The relevant document: one of the ranking's (at a uniform rank) or the extra column.
    column = np.where(rng.random(n_q) < 0.5, rng.integers(0, depth, size=n_q), depth)
    # A second judgment (non-relevant) for a third of the queries: the first ranked document, when
    # it is not the relevant one.
    second = (rng.random(n_q) < 1 / 3) & (column != 0)
    q_index = np.concatenate([np.arange(n_q), np.flatnonzero(second)])
    q_column = np.concatenate([column, np.zeros(int(second.sum()), dtype=np.int64)])
    relevance = np.concatenate([np.ones(n_q, dtype=np.int64), np.zeros(int(second.sum()), dtype=np.int64)])
    by_query = np.argsort(q_index, kind="stable")
    q_index, q_column, relevance = q_index[by_query], q_column[by_query], relevance[by_query]
    return Collection(
        run_qids=np.repeat(qids, depth), run_docs=as_bytes(docs[:, :depth].ravel()),
        run_ranks=np.tile(np.arange(1, depth + 1), n_q), run_units=units.ravel(), decimals=4,
        qrels_qids=qids[q_index], qrels_docs=as_bytes(docs[q_index, q_column]), qrels_rel=relevance,
    )


def long_ids(rng: np.random.Generator, n_q: int = 2000, depth: int = 1000, share: float = 0.001,
             length: int = 5000) -> Collection:
    """The msmarco layout at 2,000,000 lines, where ``share`` of the ranked document ids (and their
    judgments) are ``length`` bytes long."""
    collection = msmarco(rng, n_q=n_q, depth=depth)
    docs = collection.run_docs
    long_rows = np.flatnonzero(rng.random(len(docs)) < share)
    # Short names here; the writer pads every id starting with _LONG to ``length`` bytes.
    names = np.strings.add(np.strings.add(_LONG, as_bytes(long_rows)), b"-")
    rename = dict(zip(docs[long_rows].tolist(), names.tolist()))
    out = docs.astype(f"S{max(docs.dtype.itemsize, names.dtype.itemsize)}")
    out[long_rows] = names
    qrels_docs = np.array([rename.get(d, d) for d in collection.qrels_docs.tolist()], dtype=out.dtype)
    collection.run_docs, collection.qrels_docs, collection.widen = out, qrels_docs, length
    return collection


#: Prefix of the ids that the ``long-ids`` shape widens when the files are written.
_LONG = b"long-"


def _widen(path: str, field: int, length: int) -> None:
    """Pad the ids in field ``field`` that start with _LONG to ``length`` bytes (a line at a time:
    only the ``long-ids`` shape needs this, and its wide rows would not fit a matrix)."""
    with open(path, "rb") as source, open(path + ".wide", "wb") as out:
        for line in source:
            fields = line.split(b" ")
            if fields[field].startswith(_LONG):
                fields[field] = fields[field].ljust(length, b"x")
                line = b" ".join(fields)
            out.write(line)
    os.replace(path + ".wide", path)


SHAPES: dict[str, tuple[int, Callable[[np.random.Generator], Collection]]] = {
    "msmarco": (20261121, msmarco),
    "dl": (2019, dl),
    "robust": (2004, robust),
    "skewed": (1_000_000, skewed),
    "tiny": (7, tiny),
    # Ten times msmarco, to check that time and memory grow linearly (2.4 GB of run).
    "msmarco-10x": (20261121, lambda rng: msmarco(rng, n_q=69800)),
    "sessions-1": (1, lambda rng: sessions(rng, 10_000_000, 1)),
    "sessions-10": (10, lambda rng: sessions(rng, 1_000_000, 10)),
    "sessions-1-small": (1, lambda rng: sessions(rng, 1_000_000, 1)),
    "sessions-10-small": (10, lambda rng: sessions(rng, 100_000, 10)),
    "long-ids": (5000, long_ids),
}


def paths(shape: str, outdir: str) -> tuple[str, str]:
    """(qrels path, run path) of a shape inside ``outdir``."""
    return os.path.join(outdir, f"{shape}.qrels"), os.path.join(outdir, f"{shape}.run")


def generate(shape: str, outdir: str) -> tuple[str, str]:
    """Write the shape's qrels and run into ``outdir`` (created if needed); return their paths."""
    if shape not in SHAPES:
        raise ValueError(f"unknown shape {shape!r}; expected one of {', '.join(SHAPES)}")
    seed, make = SHAPES[shape]
    collection = make(np.random.default_rng(seed))
    os.makedirs(outdir, exist_ok=True)
    qrels_path, run_path = paths(shape, outdir)
    # Write to temporary names first so an interrupted run never leaves a half file behind.
    write_qrels(qrels_path + ".tmp", collection.qrels_qids, collection.qrels_docs, collection.qrels_rel)
    write_run(run_path + ".tmp", collection.run_qids, collection.run_docs, collection.run_ranks,
              collection.run_units, collection.decimals)
    if collection.widen:
        _widen(qrels_path + ".tmp", 2, collection.widen)
        _widen(run_path + ".tmp", 2, collection.widen)
    os.replace(qrels_path + ".tmp", qrels_path)
    os.replace(run_path + ".tmp", run_path)
    return qrels_path, run_path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("shape", choices=sorted(SHAPES))
    parser.add_argument("outdir")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    qrels_path, run_path = generate(args.shape, args.outdir)
    elapsed = time.perf_counter() - start
    for path in (qrels_path, run_path):
        print(f"{path}: {os.path.getsize(path) / 1e6:.1f} MB")
    print(f"generated {args.shape} in {elapsed:.1f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
