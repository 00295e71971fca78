"""The parsers' parts: help as wide as the terminal, one-line usage errors, option types, and the
options several commands share. Nothing here imports NumPy or the package, so --help stays fast."""

from __future__ import annotations

import argparse
import math
import os
import sys
from typing import Any, NoReturn

from ._output import EXIT_BAD_INPUT, _capped, _short, terminal_safe

#: The table forms of --format (retrieval_eval.report.tables.FORMATS, written here to keep --help import-free).
_TABLE_FORMATS = ("csv", "tsv", "markdown", "latex")
#: The most decimals --digits prints: a float64 holds at most 17 significant decimal digits.
MAX_DIGITS = 17


def _terminal_columns() -> int:
    """``shutil.get_terminal_size().columns`` without importing shutil: ``COLUMNS`` when it is a positive
    number, else the width of the terminal on stdout, else 80."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):  # no stdout, or not a terminal
            columns = 0
    return columns or 80


class _HelpFormatter(argparse.HelpFormatter):
    """argparse's help formatter, as wide as the terminal, found without importing shutil.

    argparse makes a formatter for every option it adds (to check the option's metavar); left to
    itself, the first of them imports shutil (and with it bz2, lzma and fnmatch) for the width: 2 ms
    of every command, which only --help and usage errors need.
    """

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24,
                 width: int | None = None) -> None:
        super().__init__(prog, indent_increment, max_help_position,
                         _terminal_columns() - 2 if width is None else width)  # argparse's own margin of 2


class _RawDescriptionFormatter(_HelpFormatter, argparse.RawDescriptionHelpFormatter):
    """argparse's RawDescriptionHelpFormatter (descriptions printed as written), sized as :class:`_HelpFormatter`."""


class _Parser(argparse.ArgumentParser):
    """argparse with a one-line usage error, in the same form as the commands' own usage errors, and
    :class:`_HelpFormatter` unless another formatter is given."""

    def __init__(self, *, formatter_class: type[argparse.HelpFormatter] | None = None, **kwargs: Any) -> None:
        super().__init__(formatter_class=formatter_class or _HelpFormatter, **kwargs)

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_BAD_INPUT,
                  terminal_safe(_capped(f"{self.prog}: error: {message}; see {self.prog} --help")) + "\n")


def _digits(text: str) -> int:
    """--digits: 0 to 17 decimals; more would print digits that no float64 holds."""
    value = _positive_int(text)
    if value > MAX_DIGITS:
        raise argparse.ArgumentTypeError(
            f"expected at most {MAX_DIGITS} decimals (a float64 holds no more significant digits); got {text!r}")
    return value


def _add_quiet(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--quiet", action="store_true",
                        help="do not print the note: and warning: lines on stderr (errors are always printed)")


def _int_at_least(text: str, minimum: int) -> int:
    """An option's integer value, ``minimum`` or more; argparse turns the error into a usage line."""
    try:
        value = int(text)
    except ValueError:
        value = minimum - 1
    if value < minimum:
        raise argparse.ArgumentTypeError(f"expected an integer >= {minimum}; got {text!r}")
    return value


def _positive_int(text: str) -> int:
    """An integer >= 0 (a depth, a relevance level, a number of decimals or of samples)."""
    return _int_at_least(text, 0)


def _at_least_one(text: str) -> int:
    """A count of documents or queries to show: an integer >= 1."""
    return _int_at_least(text, 1)


def _number(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        return math.nan


def _non_negative(text: str) -> float:
    """A finite number >= 0 (RRF's k, a measure's spread, --risk's alpha)."""
    value = _number(text)
    if not (math.isfinite(value) and value >= 0):
        raise argparse.ArgumentTypeError(f"expected a number >= 0, found {text!r}")
    return value


def _fraction(text: str) -> float:
    """A number from 0 to 1 (a threshold on a share, an overlap or a Judged@k)."""
    value = _number(text)
    if not 0.0 <= value <= 1.0:  # NaN fails too
        raise argparse.ArgumentTypeError(f"expected a number from 0 to 1, found {_short(text)}")
    return value


def _persistence(text: str) -> float:
    """A persistence (RBO's, RBP's p): a number strictly between 0 and 1."""
    value = _number(text)
    if not 0.0 < value < 1.0:
        raise argparse.ArgumentTypeError(f"expected a number strictly between 0 and 1, found {text!r}")
    return value


def _add_significance_options(parser: argparse.ArgumentParser) -> None:
    """compare's paired test, correction and level, shared with report (which runs compare)."""
    parser.add_argument("--test", choices=("t", "wilcoxon", "sign", "permutation", "bootstrap", "tukey"),
                        default="t", help="paired significance test (default t)")
    parser.add_argument("--correction", choices=("none", "bonferroni", "holm", "bh"), default=None,
                        help="multiple-testing correction within each measure (default holm; none for tukey)")
    parser.add_argument("--alpha", type=float, default=0.05, help="significance level (default 0.05)")
    parser.add_argument("--permutations", type=_positive_int, default=10_000, metavar="N",
                        help="permutations of the permutation and Tukey tests (default 10000)")
    parser.add_argument("--samples", type=_positive_int, default=10_000, metavar="N",
                        help="resamples of the bootstrap test (default 10000)")


def _add_judging_options(parser: argparse.ArgumentParser, *, skip_missing: str) -> None:
    """trec_eval's -c -J -l -M, shared by evaluate and compare."""
    query_set = parser.add_mutually_exclusive_group()
    query_set.add_argument("-c", "--complete_rel_info_wanted", dest="complete", action="store_true",
                           help="score judged queries a run lacks as 0 (the default; accepted for trec_eval)")
    query_set.add_argument("--skip-missing", action="store_true", help=skip_missing)
    parser.add_argument("-J", "--Judged_docs_only", dest="judged_only", action="store_true",
                        help="evaluate only judged documents: drop unjudged ones and re-rank")
    parser.add_argument("-l", "--level_for_rel", dest="level", type=_positive_int, default=1, metavar="LEVEL",
                        help="relevance level: a judgment >= LEVEL is relevant (default 1)")
    parser.add_argument("-M", "--Max_retrieved_per_topic", dest="max_depth", type=_positive_int, default=None, metavar="DEPTH",
                        help="evaluate only the top DEPTH documents of each ranking")


def _add_evaluation_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-q", "--query_eval_wanted", dest="per_query", action="store_true",
                        help="also print every measure for every query, before the summary")
    parser.add_argument("-n", "--nosummary", dest="no_summary", action="store_true",
                        help="do not print the summary ('all') lines")
    _add_judging_options(parser, skip_missing="average only over queries that have both judgments and results")
    parser.add_argument("-m", "--measure", dest="measures", action="append", default=None, metavar="MEASURE",
                        help="measure to report, repeatable: trec_eval names and groups (map, P.5,10, "
                             "ndcg_cut.10, official) or ir_measures names (AP, P@10, nDCG@10, R@100)")
    parser.add_argument("--digits", type=_digits, default=4, metavar="N",
                        help=f"decimals printed in trec, markdown and latex formats, 0 to {MAX_DIGITS} (default 4)")
    parser.add_argument("--format", choices=("trec", "json", *_TABLE_FORMATS), default="trec",
                        help="trec: trec_eval's lines (default); json: full precision, per query and summary (a list "
                             "with several runs); csv, tsv (full precision), markdown, latex: a table with a header row")
    parser.add_argument("--order", choices=("score", "file", "rank"), default="score",
                        help="rank by score, ties by doc_id descending (trec_eval; default), by file order, "
                             "or by the rank column")
    _add_ties(parser)
    parser.add_argument("--duplicates", choices=("error", "first"), default="error",
                        help="a document listed twice for one query: fail (default) or keep its first line")
    _add_quiet(parser)


def _add_ties(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--ties", choices=("trec_eval", "rank", "expected"), default="trec_eval",
                        help="documents of equal score: doc_id descending (trec_eval; default), by the rank column, "
                             "or every order at once, each measure giving its expected value (P, R, AP, nDCG, RR, "
                             "Success, Rprec and the counts; others are refused); see docs/judgments.md")


def _add_run_options(parser: argparse.ArgumentParser,
                     skip_missing: str = "use only the queries the run has results for") -> None:
    """What compare, inspect, diff and plot share with evaluate: how runs are judged, ranked and read."""
    _add_judging_options(parser, skip_missing=skip_missing)
    parser.add_argument("--order", choices=("score", "file", "rank"), default="score",
                        help="rank by score, ties by doc_id descending (trec_eval; default), by file order, "
                             "or by the rank column")
    _add_ties(parser)
    parser.add_argument("--duplicates", choices=("error", "first"), default="error",
                        help="a document listed twice for one query: fail (default) or keep its first line")
    _add_quiet(parser)
