"""trec_eval's measure table: the one place that gives its print order, its groups and its default cutoffs.

trec_eval prints measures in the order of its own table, whatever the order of the ``-m`` options, and
its groups (``-m official``, ``-m all_trec``, ``-m set``) are sets of rows of that table. Here that
table is :data:`TREC_TABLE`: one :class:`TrecRow` per trec_eval name, in print order, with the groups
the row belongs to. Which measure a name computes is said where the measure is defined, by the
``TrecName`` entries of its :func:`~retrieval_eval.measures.registry.measure` decorator; this module
knows names only.

Everything else is derived from the table when it is asked for (nothing is copied at import time):
:func:`print_position`, :func:`group` and :func:`group_names`.

Adding a trec_eval measure: write its kernel with ``trec=(TrecName("name"),)`` in one of the family
modules, and add ``TrecRow("name", groups)`` here where trec_eval prints it. The completeness tests
check that the registry and the table name the same measures.
"""

from __future__ import annotations

from attrs import frozen

#: trec_eval's default cutoffs for P, recall, map_cut, ndcg_cut and relative_P.
P_CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
#: trec_eval's default recall points for iprec_at_recall (0.0, 0.1, ..., 1.0).
RECALL_POINTS = tuple(i / 10 for i in range(11))
#: trec_eval's default cutoffs for success.
SUCCESS_CUTOFFS = (1, 5, 10)
#: trec_eval's default multiples of R for Rprec_mult (literal doubles, as in its source).
RPREC_MULTS = (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0)
#: trec_eval's default cutoffs for unj.
UNJ_CUTOFFS = (5, 10, 20)


@frozen
class TrecRow:
    """One trec_eval measure name, and the groups (``-m official`` ...) that include it."""

    name: str
    groups: tuple[str, ...] = ()


_O, _A, _S = "official", "all_trec", "set"
_J = "qrels_jg"  #: the measures of -R qrels_jg (trec_eval's nickname for them)
_PREFS = "all_prefs"  # trec_eval's preference measures (-R prefs, -R qrels_prefs), with runid and num_q

#: trec_eval's measure table, in its print order. ``runid`` is not a measure: it is the line that
#: names the run, printed first when a group (or ``-m runid``) is asked for.
TREC_TABLE: tuple[TrecRow, ...] = (
    TrecRow("runid", (_O, _A, _S, _J, _PREFS)),
    TrecRow("num_q", (_O, _A, _S, _J, _PREFS)),
    TrecRow("num_ret", (_O, _A, _S)),
    TrecRow("num_rel", (_O, _A, _S)),
    TrecRow("num_rel_ret", (_O, _A, _S)),
    TrecRow("map", (_O, _A)),
    TrecRow("gm_map", (_O, _A)),
    TrecRow("Rprec", (_O, _A)),
    TrecRow("bpref", (_O, _A)),
    TrecRow("recip_rank", (_O, _A)),
    TrecRow("iprec_at_recall", (_O, _A)),
    TrecRow("P", (_O, _A)),
    TrecRow("relstring", (_A,)),
    TrecRow("recall", (_A,)),
    TrecRow("infAP", (_A,)),
    TrecRow("gm_bpref", (_A,)),
    TrecRow("Rprec_mult", (_A,)),
    TrecRow("utility", (_A, _S)),
    TrecRow("11pt_avg", (_A,)),
    TrecRow("binG", (_A,)),
    TrecRow("G", (_A,)),
    TrecRow("dcg"),  # explicit -m only, as ideal_dcg and yaap
    TrecRow("ideal_dcg"),
    TrecRow("ndcg", (_A,)),
    TrecRow("ndcg_rel", (_A,)),
    TrecRow("Rndcg", (_A,)),
    TrecRow("ndcg_cut", (_A,)),
    TrecRow("map_cut", (_A,)),
    TrecRow("relative_P", (_A,)),
    TrecRow("success", (_A,)),
    TrecRow("set_P", (_A, _S)),
    TrecRow("set_relative_P", (_A, _S)),
    TrecRow("set_recall", (_A, _S)),
    TrecRow("set_map", (_A, _S)),
    TrecRow("set_F", (_A, _S)),
    TrecRow("num_nonrel_judged_ret", (_A,)),
    TrecRow("map_avgjg", (_J,)),  # -R qrels_jg: averaged over judgment groups
    TrecRow("P_avgjg", (_J,)),
    TrecRow("Rprec_mult_avgjg", (_J,)),
    TrecRow("yaap"),
    TrecRow("rbp", (_A,)),
    TrecRow("rbp_resid", (_A,)),
    TrecRow("unj", (_A,)),
    TrecRow("prefs_num_prefs_poss", (_PREFS,)),
    TrecRow("prefs_num_prefs_ful", (_PREFS,)),
    TrecRow("prefs_num_prefs_ful_ret", (_PREFS,)),
    TrecRow("prefs_simp", (_PREFS,)),
    TrecRow("prefs_pair", (_PREFS,)),
    TrecRow("prefs_avgjg", (_PREFS,)),
    TrecRow("prefs_avgjg_Rnonrel", (_PREFS,)),
    TrecRow("prefs_simp_ret", (_PREFS,)),
    TrecRow("prefs_pair_ret", (_PREFS,)),
    TrecRow("prefs_avgjg_ret", (_PREFS,)),
    TrecRow("prefs_avgjg_Rnonrel_ret", (_PREFS,)),
    TrecRow("prefs_simp_imp", (_PREFS,)),
    TrecRow("prefs_pair_imp", (_PREFS,)),
    TrecRow("prefs_avgjg_imp", (_PREFS,)),
)

#: The row that is not a measure.
RUN_ID = "runid"


def names() -> tuple[str, ...]:
    """Every trec_eval name of the table, in print order (``runid`` included)."""
    return tuple(row.name for row in TREC_TABLE)


def print_position(name: str) -> int:
    """Where trec_eval prints ``name`` (0 = first); ValueError for a name the table lacks."""
    for position, row in enumerate(TREC_TABLE):
        if row.name == name:
            return position
    raise ValueError(f"trec_eval name {name!r} has no row in trec_table.TREC_TABLE")


def group_names() -> tuple[str, ...]:
    """The groups ``-m`` accepts (``official``, ``all_trec``, ``set``)."""
    return tuple(dict.fromkeys(g for row in TREC_TABLE for g in row.groups))


def group(name: str) -> tuple[str, ...] | None:
    """The measure names of group ``name`` in print order (``runid`` left out); None if no such group."""
    if name not in group_names():
        return None
    return tuple(row.name for row in TREC_TABLE if name in row.groups and row.name != RUN_ID)
