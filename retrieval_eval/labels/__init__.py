"""Label-based retrieval metrics: autointent 0.4's 15 functions, same names, same numbers, vectorised.

Here a query is relevant to a candidate through *labels*, not through judgments: a query and the
candidates a retriever returned for it (best first) each carry a class label, and the metrics ask how
early, and how often, the candidates share the query's label. Every function takes
``(query_labels, candidates_labels, k=None)`` and returns a Python float, the mean over queries.

Three forms of each metric (AP, hit rate, precision, nDCG, reciprocal rank):

* plain (``retrieval_map``, ...): multiclass. ``query_labels`` holds one int per query, shape
  ``(n_queries,)``; ``candidates_labels`` one int per candidate, ``(n_queries, n_candidates)``.
  A candidate is relevant when its label equals the query's.
* ``_intersecting``: multilabel. Labels are binary vectors over ``n_classes`` classes, shapes
  ``(n_queries, n_classes)`` and ``(n_queries, n_candidates, n_classes)``. A candidate is relevant
  when it shares at least one class with the query (nDCG differs, see
  :func:`retrieval_ndcg_intersecting`).
* ``_macro``: multilabel, macro-averaged. Each class in turn is made a multiclass problem with the two
  labels "has the class" / "lacks the class"; the plain metric is computed on it and the per-class
  values are averaged. A candidate that lacks a class the query lacks too counts as relevant there.

The plain forms refuse label vectors and the other two refuse one-int-per-query labels, with an
error that names the form to use: autointent lists the plain forms as its multiclass metrics and the
other two as its multilabel ones; given the other kind of label it raises or returns an accidental
number.

Conventions, as in autointent 0.4:

* ``k`` keeps the top ``min(k, n_candidates)`` candidates; ``k=None`` keeps them all.
* Average precision divides by the relevant candidates found in the top k, not by all the
  query's relevant candidates; 0.0 when none is found.
* Precision divides by ``min(k, n_candidates)``, not by ``k``.
* nDCG uses binary gains and the discount ``1 / log2(rank + 1)``; its ideal ranking puts every
  relevant candidate of the whole list first, so relevant candidates past ``k`` lower it. 0.0 for a
  query without relevant candidates.
* A query whose label is ``None`` is out of scope (OOS) and is left out, with its candidate list.

Where autointent has no answer, the choices made here:

* When no query is left (an empty input, or every label ``None``), :class:`InputFormatError` is
  raised; autointent divides by zero, takes the mean of nothing, or fails on indexing.
* Empty candidate lists score 0.0 in every metric; autointent's precision divides by zero there.

Multilabel vectors are meant to be 0/1 (or booleans). Other integers are not refused: they follow
autointent's arithmetic (a positive dot product for "shares a class", equality per position for
macro averaging and for nDCG_intersecting), and give its numbers.

Malformed input raises :class:`~retrieval_eval.model.InputFormatError` (ragged lists, vectors of
different lengths, ``k < 1``, no in-scope query, the other form's labels) or
:class:`~retrieval_eval.model.InputTypeError` (labels that are not integers, a ``k`` that is not an
int); the message names the function, the first offending query (its index in the input) and the
shape expected.

The code is grouped by metric, since a function's name leads to its file: ``retrieval_ndcg_macro``
is in :mod:`.ndcg`, beside ``retrieval_ndcg`` and ``retrieval_ndcg_intersecting``. The three forms
of a metric differ in one argument (the relevance rule) and in their docstrings, which read best
side by side; the forms' exceptions stand out there (hit_rate_intersecting's summed vectors,
nDCG_intersecting's "agree" rule). Behind them:

- :mod:`.map`, :mod:`.hit_rate`, :mod:`.precision`, :mod:`.ndcg`, :mod:`.mrr`: the public functions;
- :mod:`._scoring`: the driver they call: check, relevance of the top k, kernel, mean;
- :mod:`._inputs`: checking the labels and stacking them into arrays, out-of-scope queries dropped;
- :mod:`._relevance`: which candidates are relevant (the five rules), packed into masks or counted;
- :mod:`._kernels`: the packed-word masks' tables and the per-query (per-unit) score of each metric.
"""

from __future__ import annotations

from .hit_rate import retrieval_hit_rate, retrieval_hit_rate_intersecting, retrieval_hit_rate_macro
from .map import retrieval_map, retrieval_map_intersecting, retrieval_map_macro
from .mrr import retrieval_mrr, retrieval_mrr_intersecting, retrieval_mrr_macro
from .ndcg import retrieval_ndcg, retrieval_ndcg_intersecting, retrieval_ndcg_macro
from .precision import retrieval_precision, retrieval_precision_intersecting, retrieval_precision_macro

__all__ = [
    "retrieval_hit_rate",
    "retrieval_hit_rate_intersecting",
    "retrieval_hit_rate_macro",
    "retrieval_map",
    "retrieval_map_intersecting",
    "retrieval_map_macro",
    "retrieval_mrr",
    "retrieval_mrr_intersecting",
    "retrieval_mrr_macro",
    "retrieval_ndcg",
    "retrieval_ndcg_intersecting",
    "retrieval_ndcg_macro",
    "retrieval_precision",
    "retrieval_precision_intersecting",
    "retrieval_precision_macro",
]
