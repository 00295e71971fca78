"""The rest of trec_eval's command line on ``evaluate``: -R, -Z, -N, -T, -D, -o and -v.

Each flag of trec_eval 10's usage text is either done as trec_eval does it or refused with one line
(docs/conventions.md has the table). Nothing here imports NumPy or the package at import time, so
--help stays fast.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ._options import _positive_int
from ._output import _Usage

if TYPE_CHECKING:
    from ..report.text import Requested

#: -R's values (retrieval_eval.io.formats.REL_FORMATS, written here to keep --help import-free).
_REL_FORMATS = ("qrels", "qrels_jg", "prefs", "qrels_prefs")
#: The measures -R qrels_jg computes: averaged over judgment groups (and the count of queries).
_GROUP_MEASURES = ("AP_avgjg", "P_avgjg", "RprecMult_avgjg")


def add_trec_eval_flags(parser: argparse.ArgumentParser) -> None:
    """trec_eval's flags that only ``evaluate`` takes, under trec_eval's short and long names."""
    from .. import __version__

    parser.add_argument("-R", "--rel-format", "--Rel_info_format", dest="rel_format", choices=_REL_FORMATS,
                        default="qrels",
                        help="format of QRELS: qrels (default); qrels_jg: 'query_id group doc_id relevance' with "
                             "the judgment group (assessor) in the second field, for map_avgjg, P_avgjg and "
                             "Rprec_mult_avgjg (-m qrels_jg); prefs, preference judgments 'query_id group subgroup "
                             "doc_id rel_level'; qrels_prefs, qrels read as preferences (their second field the "
                             "group). Preferences give the prefs_* measures (default -m all_prefs); see "
                             "docs/preferences.md")
    parser.add_argument("-Z", "--zscores", "--Zscore", dest="zscores", metavar="FILE",
                        help="print z-scores, (value - mean) / stddev, with the mean and stddev of each query and "
                             "measure read from FILE's 'query_id measure mean stddev' lines (trec lines name them "
                             "Zmap, ZP_5, ...; the other formats keep the names)")
    parser.add_argument("-N", "--Number_docs_in_coll", dest="collection_size", type=_positive_int, default=None,
                        metavar="N", help="documents in the collection: the N of utility's last term (default 0)")
    parser.add_argument("-T", "--Results_format", dest="results_format", choices=("trec_results",),
                        default="trec_results", help="format of RUN: trec_results, the only one trec_eval has")
    parser.add_argument("-D", "--Debug_level", dest="debug_level", metavar="LEVEL[.QUERY]",
                        help="trec_eval's debug output: not available (0 is accepted); see 'retrieval-eval inspect'")
    parser.add_argument("-o", "--Output_old_results_format", dest="old_format", action="store_true",
                        help="accepted and ignored, as trec_eval 10 ignores it")
    parser.add_argument("-v", "--version", action="version", version=f"retrieval-eval {__version__}",
                        help="print the version and exit")


def trec_flags_problem(args: argparse.Namespace) -> str | None:
    """What is wrong with the trec_eval flags beyond what argparse checks; None if nothing."""
    if args.debug_level is not None and args.debug_level.split(".")[0].strip() not in ("0", ""):
        return ("-D (trec_eval's debugging output) is not available; 'retrieval-eval inspect QRELS RUN QUERY' "
                "shows one query's ranking and judgments")
    if args.debug_level is not None and "." in args.debug_level:
        return "-D LEVEL.QUERY (evaluate one query) is not available; 'retrieval-eval inspect' shows one query"
    if args.zscores is not None and args.log is not None:
        return "-Z reads z-scores of trec_eval's measures per query; it takes QRELS and RUN, not --log"
    if args.rel_format != "qrels" and args.log is not None:
        return f"-R {args.rel_format} names the format of QRELS; a --log holds its own judgments"
    return None


def check_rel_format(rel_format: str, requested: Sequence[Requested]) -> None:
    """Raise _Usage when the measures asked for need another -R: the qrels_jg measures need
    judgment groups, and judgment groups give only those (as in trec_eval)."""
    grouped = [item.label for item in requested if item.measure.name in _GROUP_MEASURES]
    if rel_format == "qrels_jg":
        other = [item.label for item in requested if item.measure.name not in (*_GROUP_MEASURES, "NumQ")]
        if other:
            raise _Usage(f"-R qrels_jg computes map_avgjg, P_avgjg, Rprec_mult_avgjg and num_q (-m qrels_jg); "
                         f"{other[0]} needs -R qrels")
    elif grouped:
        raise _Usage(f"{grouped[0]} is averaged over judgment groups; add -R qrels_jg")


def with_judged_in_group(requested: list[Requested], judged_only: bool) -> list[Requested]:
    """-J with -R qrels_jg: each judgment group ranks only the documents it judged, as trec_eval does."""
    if not judged_only:
        return requested
    from attrs import evolve

    return [evolve(item, measure=item.measure(judged_in_group=True)) if item.measure.name in _GROUP_MEASURES else item
            for item in requested]


def with_collection_size(requested: list[Requested], size: int | None) -> list[Requested]:
    """The measures with -N set as utility's collection size (where its measure string did not set one)."""
    if size is None:
        return requested
    from attrs import evolve

    return [evolve(item, measure=item.measure(collection_size=size))
            if item.measure.name == "Utility" and "collection_size" not in dict(item.measure.params) else item
            for item in requested]
