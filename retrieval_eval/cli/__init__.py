"""The ``retrieval-eval`` command line: parse arguments, evaluate, format. No measure logic here.

Heavy imports (numpy and the package) happen inside the commands, so ``--help`` stays fast.
"""

from __future__ import annotations

import argparse
import gc
import itertools
import math
import os
import re
import sys
import threading
import warnings
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, NoReturn, TextIO

if TYPE_CHECKING:  # imported for annotations only: the commands import lazily, to keep --help fast
    from ..evaluators.set import SetEvaluator
    from ..model import QrelsColumns, RunColumns
    from ..report.text import Requested
    from ..engine.ranking import RunHandoff

EXIT_OK = 0
EXIT_REGRESSION = 1  #: compare --fail-if-worse found a significant regression
EXIT_OUTPUT_FAILED = 1  #: the output could not be written (a full disk, a closed stdout)
EXIT_BAD_INPUT = 2
EXIT_INTERRUPTED = 130  #: Ctrl-C: 128 + SIGINT, as shells report it

#: The command a trec_eval habit means: ``retrieval-eval -m map QRELS RUN`` is ``evaluate``.
DEFAULT_COMMAND = "evaluate"
#: The table forms of --format (retrieval_eval.tables.FORMATS, written here to keep --help import-free).
_TABLE_FORMATS = ("csv", "tsv", "markdown", "latex")
#: The most decimals --digits prints: a float64 holds at most 17 significant decimal digits.
MAX_DIGITS = 17

_EVALUATE_HELP = """\
Score TREC runs against TREC qrels and print trec_eval's lines (or JSON, or a table).

Without -m the measures are trec_eval's official set. Queries in the qrels that the run lacks
are scored as empty rankings (0) and counted in every mean, as with trec_eval -c; run queries
without judgments are ignored. Both are reported on stderr.

With --log, one labelled log of 'group item score label' rows (TSV, CSV, .gz, or Parquet with
pyarrow) stands for both files: each group is ranked by score and each row's label is its
judgment, so AUC, GAUC and every ranking measure work on click logs.

Several runs (evaluate QRELS RUN1 RUN2 ...) are scored against the qrels read once: trec format
prints each run's block in turn (the runid line tells them apart), the table formats (csv, tsv,
markdown, latex) one row per run, or per run and query with -q."""


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
        self.exit(EXIT_BAD_INPUT, terminal_safe(f"{self.prog}: error: {message}; see {self.prog} --help") + "\n")


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


def _add_judging_options(parser: argparse.ArgumentParser, *, skip_missing: str) -> None:
    """trec_eval's -c -J -l -M, shared by evaluate and compare."""
    query_set = parser.add_mutually_exclusive_group()
    query_set.add_argument("-c", dest="complete", action="store_true",
                           help="score judged queries a run lacks as 0 (the default; accepted for trec_eval)")
    query_set.add_argument("--skip-missing", action="store_true", help=skip_missing)
    parser.add_argument("-J", dest="judged_only", action="store_true",
                        help="evaluate only judged documents: drop unjudged ones and re-rank")
    parser.add_argument("-l", dest="level", type=_positive_int, default=1, metavar="LEVEL",
                        help="relevance level: a judgment >= LEVEL is relevant (default 1)")
    parser.add_argument("-M", dest="max_depth", type=_positive_int, default=None, metavar="DEPTH",
                        help="evaluate only the top DEPTH documents of each ranking")


def _add_evaluation_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-q", dest="per_query", action="store_true",
                        help="also print every measure for every query, before the summary")
    parser.add_argument("-n", dest="no_summary", action="store_true",
                        help="do not print the summary ('all') lines")
    _add_judging_options(parser, skip_missing="average only over queries that have both judgments and results")
    parser.add_argument("-m", dest="measures", action="append", default=None, metavar="MEASURE",
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
    parser.add_argument("--duplicates", choices=("error", "first"), default="error",
                        help="a document listed twice for one query: fail (default) or keep its first line")
    _add_quiet(parser)


#: Every command, in --help's order (build_parser adds them; a test checks the two agree).
COMMANDS = ("evaluate", "demo", "compare", "inspect", "diff", "plot", "measures")


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The command line's parser. With ``command``, only that command is added: a plain evaluation then
    does not pay for building the other commands (some 1 ms, each parser looking up its translations)."""
    from .. import __version__

    def wanted(name: str) -> bool:
        return command is None or command == name

    parser = _Parser(
        prog="retrieval-eval",
        description="Evaluate ranked retrieval runs with trec_eval's exact numbers.",
        epilog=f"Without a command, {DEFAULT_COMMAND} is meant, as in trec_eval: 'retrieval-eval -m map QRELS RUN' "
               f"is 'retrieval-eval {DEFAULT_COMMAND} -m map QRELS RUN'. 'retrieval-eval COMMAND --help' describes "
               "each command.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    commands.required = True

    if wanted("evaluate"):
        evaluate = commands.add_parser("evaluate", help="score a run against qrels (trec_eval compatible)",
                                       description=_EVALUATE_HELP, formatter_class=_RawDescriptionFormatter)
        _add_evaluate_arguments(evaluate)
    if wanted("demo"):
        demo = commands.add_parser("demo", help="evaluate the sample run bundled with the package",
                                   description="Evaluate the bundled sample qrels and run (see retrieval_eval/data).")
        _add_evaluation_options(demo)
    if wanted("compare"):
        compare = commands.add_parser("compare",
                                      help="compare runs: means, paired significance tests, a regression gate",
                                      description=_COMPARE_HELP, formatter_class=_RawDescriptionFormatter)
        _add_compare_arguments(compare)
    if wanted("inspect"):
        _add_inspect(commands)
    if wanted("diff"):
        _add_diff(commands)
    if wanted("plot"):
        _add_plot(commands)
    if wanted("measures"):
        measures = commands.add_parser(
            "measures", help="list every measure with its parameters and trec_eval name",
            description="List the measure catalogue: name, aliases, one-line definition, parameters with defaults, "
                        "trec_eval name and how the summary aggregates it.")
        measures.add_argument("search", metavar="TEXT", nargs="?",
                              help="list only the measures whose name, alias or trec_eval name contains TEXT "
                                   "(ignoring case): 'ndcg' lists nDCG, nDCGRel, RnDCG, alpha_nDCG ...")
        measures.add_argument("--format", choices=("text", "json"), default="text",
                              help="text: one block per measure (default); json: a list of objects with the same "
                                   "fields")
    return parser


def _add_evaluate_arguments(evaluate: argparse.ArgumentParser) -> None:
    evaluate.add_argument("qrels", metavar="QRELS", nargs="?",
                          help="TREC qrels file: 'query_id iter doc_id relevance' (gzip ok; - for stdin)")
    evaluate.add_argument("runs", metavar="RUN", nargs="*",
                          help="TREC run files: 'query_id Q0 doc_id rank score run_id' (gzip ok; - for stdin); "
                               "several are scored against the qrels read once")
    evaluate.add_argument("--log", metavar="LOG",
                          help="a labelled log of 'group item score label' rows instead of QRELS and RUN "
                               "(.tsv, .csv, .gz, .parquet; - for stdin)")
    _add_evaluation_options(evaluate)


def _add_compare_arguments(compare: argparse.ArgumentParser) -> None:
    compare.add_argument("qrels", metavar="QRELS", help="TREC qrels file (.gz ok), read once for every run")
    compare.add_argument("runs", metavar="RUN", nargs="+", help="TREC run files (.gz ok), at least two")
    compare.add_argument("-m", dest="measures", action="append", default=None, metavar="MEASURE",
                         help="measure to compare, repeatable: any catalogue string (default: AP, nDCG@10, P@10, "
                              "RR, R@1000)")
    compare.add_argument("--names", metavar="A,B,...", help="names of the runs, in order (default: file names)")
    compare.add_argument("--baseline", metavar="NAME", help="the run the others are compared with (default: the first)")
    compare.add_argument("--all-pairs", action="store_true", help="compare every pair of runs instead")
    compare.add_argument("--test", choices=("t", "wilcoxon", "sign", "permutation", "bootstrap", "tukey"),
                         default="t", help="paired significance test (default t)")
    compare.add_argument("--correction", choices=("none", "bonferroni", "holm", "bh"), default=None,
                         help="multiple-testing correction within each measure (default holm; none for tukey)")
    compare.add_argument("--alpha", type=float, default=0.05, help="significance level (default 0.05)")
    compare.add_argument("--permutations", type=_positive_int, default=10_000, metavar="N",
                         help="permutations of the permutation and Tukey tests (default 10000)")
    compare.add_argument("--samples", type=_positive_int, default=10_000, metavar="N",
                         help="resamples of the bootstrap test (default 10000)")
    compare.add_argument("--seed", type=int, default=None, help="seed of the Monte Carlo tests: same seed, same output")
    compare.add_argument("--format", choices=("table", "markdown", "latex", "csv", "json"), default="table",
                         help="table (default), markdown or latex: means with significance marks; csv: one line "
                              "per comparison; json: everything")
    compare.add_argument("--digits", type=_digits, default=4, metavar="N",
                         help=f"decimals in tables, 0 to {MAX_DIGITS} (default 4)")
    compare.add_argument("--fail-if-worse", action="append", default=[], metavar="MEASURE",
                         help="exit 1 if a run is significantly worse than the baseline on MEASURE (repeatable)")
    _add_judging_options(compare, skip_missing="compare only the queries every run has results for")
    _add_quiet(compare)


def _at_least_one(text: str) -> int:
    """A count of documents or queries to show: an integer >= 1."""
    return _int_at_least(text, 1)


def _add_run_options(parser: argparse.ArgumentParser) -> None:
    """What inspect, diff and plot share with evaluate: how runs are judged, ranked and read."""
    _add_judging_options(parser, skip_missing="use only the queries the run has results for")
    parser.add_argument("--order", choices=("score", "file", "rank"), default="score",
                        help="rank by score, ties by doc_id descending (trec_eval; default), by file order, "
                             "or by the rank column")
    parser.add_argument("--duplicates", choices=("error", "first"), default="error",
                        help="a document listed twice for one query: fail (default) or keep its first line")
    _add_quiet(parser)


_INSPECT_HELP = """\
Look at one query (--query Q): its top documents with their judgments (a grade, 'unjudged' when
the qrels do not name the document, or the negative 'pooled, not judged' value), the relevant
documents the run did not retrieve (highest grade first), and the query's values of the measures
(default: the official set's main ones, as evaluate -q prints them).

Without --query: the worst queries on the first -m measure (default map), each with R (its
relevant judgments), the rank of its first relevant document and how many relevant documents the
run missed."""

#: The measures inspect --query shows without -m: the main measures of trec_eval's official set.
INSPECT_MEASURES = ("num_ret", "num_rel", "num_rel_ret", "map", "Rprec", "bpref", "recip_rank", "P.5,10,20")


def _add_inspect(commands: argparse._SubParsersAction[_Parser]) -> None:
    inspect = commands.add_parser("inspect", help="one query's ranking, judgments and misses; or the worst queries",
                                  description=_INSPECT_HELP, formatter_class=_RawDescriptionFormatter)
    inspect.add_argument("qrels", metavar="QRELS", help="TREC qrels file (gzip ok; - for stdin)")
    inspect.add_argument("run", metavar="RUN", help="TREC run file (gzip ok; - for stdin)")
    inspect.add_argument("--query", metavar="Q", help="the query to show (without it: the worst queries)")
    inspect.add_argument("--depth", type=_at_least_one, default=None, metavar="N",
                         help="documents of the ranking to show with --query (default 20)")
    inspect.add_argument("--worst", type=_at_least_one, default=None, metavar="N",
                         help="without --query: how many of the worst queries to list (default 10)")
    inspect.add_argument("-m", dest="measures", action="append", default=None, metavar="MEASURE",
                         help="measure to show, repeatable (trec_eval or ir_measures names); the worst queries are "
                              "those lowest on the first one")
    inspect.add_argument("--digits", type=_digits, default=4, metavar="N",
                         help=f"decimals printed, 0 to {MAX_DIGITS} (default 4)")
    _add_run_options(inspect)


_DIFF_HELP = """\
Compare two runs query by query on a measure (default nDCG@10): their means, how many queries
RUN_B helped, hurt or left unchanged against RUN_A, and the largest gains and losses. The table
formats (csv, tsv, markdown, latex) and json give every query's change, largest gain first.

With --query Q: the two rankings of Q side by side, and the documents that entered or left the
top k (--depth) with their judgments."""


def _add_diff(commands: argparse._SubParsersAction[_Parser]) -> None:
    diff = commands.add_parser("diff", help="per-query differences between two runs; one query's two rankings",
                               description=_DIFF_HELP, formatter_class=_RawDescriptionFormatter)
    diff.add_argument("qrels", metavar="QRELS", help="TREC qrels file (gzip ok; - for stdin), read once")
    diff.add_argument("run_a", metavar="RUN_A", help="the baseline run (gzip ok)")
    diff.add_argument("run_b", metavar="RUN_B", help="the run compared with it (gzip ok)")
    diff.add_argument("-m", dest="measures", action="append", default=None, metavar="MEASURE",
                      help="measure to compare, repeatable (default nDCG@10)")
    diff.add_argument("--top", type=_at_least_one, default=None, metavar="N",
                      help="how many of the largest gains and of the largest losses to list (default 10)")
    diff.add_argument("--query", metavar="Q", help="show this query's two rankings side by side instead")
    diff.add_argument("--depth", type=_at_least_one, default=None, metavar="K",
                      help="with --query: the top K documents to compare (default 10)")
    diff.add_argument("--names", metavar="A,B", help="names of the two runs (default: file names)")
    diff.add_argument("--format", choices=("text", "json", *_TABLE_FORMATS), default="text",
                      help="text (default); json, csv, tsv (full precision), markdown or latex: every query's "
                           "change, with a header row")
    diff.add_argument("--digits", type=_digits, default=4, metavar="N",
                      help=f"decimals in text, markdown and latex, 0 to {MAX_DIGITS} (default 4)")
    _add_run_options(diff)


_PLOT_HELP = """\
Draw an evaluation (needs matplotlib: pip install 'retrieval_eval[plot]'); the output's suffix
chooses PNG, SVG or PDF. pr: interpolated precision-recall curves at trec_eval's 11 recall points,
one line per run, MAP in the legend; diff: per-query differences RUN_B - RUN_A on a measure, as
sorted bars; ranks: histogram of the rank of each query's first relevant document."""


def _add_plot(commands: argparse._SubParsersAction[_Parser]) -> None:
    plot = commands.add_parser("plot", help="precision-recall curves, per-query differences, first relevant ranks",
                               description=_PLOT_HELP, formatter_class=_RawDescriptionFormatter)
    kinds = plot.add_subparsers(dest="kind", metavar="KIND")
    kinds.required = True
    helps = {"pr": "interpolated precision-recall curves, one per run",
             "diff": "per-query differences between two runs, as sorted bars",
             "ranks": "histogram of the first relevant document's rank, per run"}
    for kind, text in helps.items():
        sub = kinds.add_parser(kind, help=text, description=f"{text[0].upper()}{text[1:]}.")
        sub.add_argument("qrels", metavar="QRELS", help="TREC qrels file (gzip ok; - for stdin), read once")
        if kind == "diff":
            sub.add_argument("runs", metavar="RUN", nargs=2, help="RUN_A (the baseline) and RUN_B (gzip ok)")
            sub.add_argument("-m", dest="measure", default="nDCG@10", metavar="MEASURE",
                             help="the measure compared (default nDCG@10)")
        else:
            sub.add_argument("runs", metavar="RUN", nargs="+", help="TREC run files (gzip ok), one line each")
        sub.add_argument("-o", dest="output", required=True, metavar="FILE",
                         help="the image to write: .png, .svg or .pdf")
        sub.add_argument("--names", metavar="A,B,...", help="names of the runs, in order (default: file names)")
        _add_run_options(sub)


_COMPARE_HELP = """\
Evaluate several runs on the same qrels and compare them: one table of means (runs as rows,
measures as columns), with each value marked by the letters of the runs it is significantly
better than. Each run is compared with the baseline (or every pair, --all-pairs) by a paired
test over queries; p-values are corrected within each measure. --format json gives every
comparison: mean difference, raw and adjusted p-value, effect size (Cohen's d_z), confidence
interval, wins/ties/losses.

Regression gate: with --fail-if-worse MEASURE the exit code is 1 when a run is significantly worse
than the baseline on MEASURE, after correction; each such run is named on stderr."""


def _compare(args: argparse.Namespace) -> int:
    from ..analysis.comparison import DEFAULT_MEASURES, compare

    if len(args.runs) < 2:
        raise _Usage("compare needs at least two runs")
    names = args.names.split(",") if args.names else _run_names(args.runs)
    if len(names) != len(args.runs):
        raise _Usage(f"--names gives {_counted(len(names), 'name', 'names')} for {len(args.runs)} runs")
    if len(set(names)) != len(names):
        raise _Usage("two runs have the same name; name them with --names a,b,...")
    measures = list(dict.fromkeys([*(args.measures or DEFAULT_MEASURES), *args.fail_if_worse]))  # gated ones too
    result = compare(
        args.qrels, dict(zip(names, args.runs)), measures, baseline=args.baseline, all_pairs=args.all_pairs,
        test=args.test, correction=args.correction, alpha=args.alpha, permutations=args.permutations,
        samples=args.samples, seed=args.seed, rel=args.level, complete=not args.skip_missing,
        judged_only=args.judged_only, max_depth=args.max_depth,
    )
    forms = {"table": result.to_table, "markdown": result.to_markdown, "latex": result.to_latex}
    text = forms[args.format](args.digits) if args.format in forms else (
        result.to_csv() if args.format == "csv" else result.to_json() + "\n")
    _emit(text)
    failed = False
    for measure in args.fail_if_worse:
        for c in result.significant_worse(measure):
            _stderr_line(f"retrieval-eval: regression: {c.run} is worse than {c.baseline} on {c.measure}: "
                         f"delta {c.delta:+.4f}, p = {c.p_adjusted:.4g} ({result.correction} correction)")
            failed = True
    return EXIT_REGRESSION if failed else EXIT_OK


class _Usage(Exception):
    """Arguments that do not go together: reported with the usage hint, exit 2."""


class _OutputFailed(Exception):
    """The results could not be written to stdout (a full disk, a closed stdout): exit 1."""


def _emit(text: str) -> None:
    """Write ``text`` to stdout and flush it, turning a write failure into :class:`_OutputFailed`.

    A broken pipe (``| head -1``) is let through: :func:`main` ends quietly on it.
    """
    out = sys.stdout
    if out is None:  # started with stdout closed (>&-)
        raise _OutputFailed("standard output is closed")
    try:
        if _is_terminal(out):  # ids shown on a terminal cannot drive it; files and pipes get the exact bytes
            text = terminal_safe(text, keep="\t\n")
        _write_exact(out, text)
        out.flush()
    except BrokenPipeError:
        raise
    except OSError as exc:
        _drop_stdout()  # the buffered rest would fail again when Python flushes stdout at exit
        raise _OutputFailed(exc.strerror or str(exc)) from None
    except ValueError as exc:  # a closed file object
        raise _OutputFailed(str(exc)) from None


def _write_exact(out: TextIO, text: str) -> None:
    """Write ``text``, the bytes of ids that are not UTF-8 (kept as lone surrogates, see
    :func:`retrieval_eval.model.id_text`) exactly as they were read, whatever stdout's error handler."""
    buffer = getattr(out, "buffer", None)
    if buffer is None or not _BYTE_KEPT.search(text):
        for start in range(0, len(text), _WRITE_CHUNK):
            out.write(text[start : start + _WRITE_CHUNK])
        return
    out.flush()
    data = text.encode(out.encoding or "utf-8", "surrogateescape")
    for start in range(0, len(data), _WRITE_CHUNK):
        buffer.write(data[start : start + _WRITE_CHUNK])


#: Characters (or bytes) per write: a single write of more than 2 GiB to a pipe is cut short at
#: 2,147,479,552 bytes without an error, which would lose the rest of a large -q output.
_WRITE_CHUNK = 1 << 24


#: A byte that is not UTF-8, kept in an id's str by the surrogateescape error handler.
_BYTE_KEPT = re.compile("[\udc80-\udcff]")


def _is_terminal(stream: object) -> bool:
    try:
        return bool(getattr(stream, "isatty", lambda: False)())
    except (OSError, ValueError):
        return False


def terminal_safe(text: str, keep: str = "") -> str:
    """``text`` with every character that is not printable (escape sequences, C1 controls, ...)
    written as a backslash escape (``\\x1b``), except those in ``keep``: what the tool prints to a
    terminal cannot retitle, clear or otherwise drive it."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() or c in keep else _escaped(c) for c in text)


def _escaped(char: str) -> str:
    code = ord(char)
    if 0xDC80 <= code <= 0xDCFF:  # a byte of an id that is not UTF-8: shown as the byte
        return f"\\x{code - 0xDC00:02x}"
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def _drop_stdout() -> None:
    """Point stdout at devnull, so that nothing is written (or fails to be) at exit (Python's advice for
    BrokenPipeError, https://docs.python.org/3/library/signal.html#note-on-sigpipe)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (AttributeError, OSError, ValueError):  # no file descriptor (captured in tests): nothing to flush
        pass


def _stderr_line(line: str) -> None:
    """One line on stderr; nothing when stderr is closed (``print(file=None)`` would write it to stdout)."""
    err = sys.stderr
    if err is None:
        return
    try:
        err.write(terminal_safe(line, keep="\t") + "\n")
        err.flush()
    except (OSError, ValueError):  # stderr is gone too: there is nowhere left to say it
        pass


def _stdin(option: str) -> object:
    """The binary standard input, for ``-`` as ``option``; closed stdin is a bad-input error."""
    from ..model import TrecFormatError

    stdin = sys.stdin
    if stdin is None or getattr(stdin, "closed", False):
        raise TrecFormatError(f"-: standard input is closed; expected {option} on standard input; got no stream")
    return getattr(stdin, "buffer", stdin)


def _requested(specs: Sequence[str] | None, level: int) -> tuple[list[Requested], bool]:
    """The measures to print with their labels, and whether the runid line is printed.

    trec_eval prints ``runid`` only when it is asked for, alone or through a group (official,
    all_trec, set). Several ``-m`` options combine as in trec_eval (see ``parse_trec_options``).
    """
    from ..measures import parse_trec_options, trec_table
    from ..model import RetrievalEvalError
    from ..report.text import Requested

    specs = specs or ["official"]
    show_run_id = any(spec.strip() in (trec_table.RUN_ID, *trec_table.group_names()) for spec in specs)
    try:
        parsed = parse_trec_options(specs, rel=level)
    except RetrievalEvalError:
        raise
    except (ValueError, ArithmeticError) as exc:  # e.g. a 5,000-digit or infinite cutoff
        raise _Usage(f"-m: cannot read the measure in {_short(' '.join(specs))}: {_short(str(exc), 80)}") from None
    requested = [Requested(measure, label) for measure, label in parsed]
    for item in requested:
        for name, value in item.measure.params:
            if isinstance(value, float) and not math.isfinite(value):
                raise _Usage(f"-m {_short(item.label)}: parameter {name!r} of {item.measure.name} must be a finite "
                             f"number; got {value!r}")
            if isinstance(value, int) and abs(value) > _LARGEST_PARAMETER:  # beyond int64: nothing is that deep
                raise _Usage(f"-m {_short(item.label)}: parameter {name!r} of {item.measure.name} must be at most "
                             f"{_LARGEST_PARAMETER}; got {_short(str(value))}")
    return requested, show_run_id


#: The largest integer measure parameter (a cutoff): an int64, far beyond any ranking's depth.
_LARGEST_PARAMETER = 2**63 - 1


def _short(text: str, limit: int = 40) -> str:
    """``text`` cut to ``limit`` characters, for quoting user input of any length in a one-line message."""
    return repr(text if len(text) <= limit else f"{text[:limit - 3]}...")


def _counted(n: int, one: str, many: str) -> str:
    """``n`` followed by the words that agree with it: ``_counted(1, "query has", "queries have")``."""
    return f"{n} {one if n == 1 else many}"


def _swap_hint(qrels: object, run: object) -> str | None:
    """A hint when QRELS looks like a run (6 fields or more) and RUN like qrels (4 fields); else None."""
    from ..io._tokenize import first_line_fields

    if not isinstance(qrels, str) or not isinstance(run, str):  # stdin cannot be read twice
        return None
    qrels_fields, run_fields = first_line_fields(qrels), first_line_fields(run)
    if qrels_fields is not None and qrels_fields >= 6 and run_fields == 4:
        return (f"the arguments look swapped: {qrels} has run lines ({qrels_fields} fields) and {run} qrels lines "
                "(4 fields); give QRELS first, then RUN")
    return None


def _name(source: object) -> str:
    """How the readers name ``source`` in their messages (the path, or a stream's name)."""
    if isinstance(source, (str, os.PathLike)):
        return os.fspath(source)
    return str(getattr(source, "name", "<stream>"))


def _check_overlap(results: SetEvaluator, qrels: object, run: object) -> None:
    """Refuse a run none of whose queries is judged: all zeros would hide a wrong or swapped file."""
    from ..model import TrecFormatError

    not_judged = results.not_judged
    missing = set(results.missing_from_run)
    if not not_judged or any(q not in missing for q in results.query_ids):
        return
    judged = [q for q in results.query_ids if q in missing] or results.missing_from_run
    hint = _swap_hint(qrels, run)
    raise TrecFormatError(
        f"{_name(run)}: no run query is judged in {_name(qrels)} (a wrong or swapped file?); expected "
        f"results for the judged queries ({_preview(judged, 3)}); got results for "
        f"{_counted(len(not_judged), 'other query', 'other queries')} ({_preview(not_judged, 3)})"
        + (f"; {hint}" if hint else ""))




def _read_judgments(qrels: Any, first_run: object, *, subtopics: bool) -> QrelsColumns:
    """The qrels, read once for every run; a qrels file that looks like a run gets the swap hint."""
    from ..model import TrecFormatError
    from ..io.trec import read_qrels_columns

    try:
        return read_qrels_columns(qrels, with_subtopics=subtopics)
    except TrecFormatError as exc:
        hint = _swap_hint(qrels, first_run)
        if hint and str(exc).startswith(f"{_name(qrels)}:"):
            raise TrecFormatError(f"{exc}; {hint}") from None
        raise


def _build_run(args: argparse.Namespace, judged: QrelsColumns, qrels: object, run: Any,
               columns: RunHandoff, preparing: _Preparing) -> SetEvaluator:
    """One run (``columns``, read from ``run``) evaluated against the judgments already read (the CLI's
    judging options applied), once their preparation is done."""
    from ..evaluators.set import RANKING_ORDERS, SetEvaluator

    preparing.wait()
    # Nobody else holds the run just read: handed over, its columns are freed as the build uses them.
    results = SetEvaluator.from_columns(
        judged, columns, rel=args.level, max_depth=args.max_depth, judged_only=args.judged_only,
        duplicates=args.duplicates, complete=not args.skip_missing, order=RANKING_ORDERS[args.order],
    )
    _check_overlap(results, qrels, run)
    return results


def _runs_read(args: argparse.Namespace, runs: Sequence[object]) -> Iterator[tuple[object, RunHandoff]]:
    """Each run with its columns, in order, handed over: nothing else holds them, so that the build
    frees each column once it is used.

    With several runs and several CPUs the next run is read on a thread while the caller builds and
    scores this one: both are mostly NumPy loops, which release the GIL (ten robust-sized runs in one
    process: 0.76 s one after the other, 0.60 s so), at the cost of two runs' columns held at once.
    What a run read ahead warns is printed when its columns are taken, and its error raised then, so
    stderr reads as if the runs were read one after the other.
    """
    from ..engine import threads as _threads
    from ..engine.ranking import RunHandoff
    from ..io.trec import read_run_columns

    def read(run: object) -> _ReadAhead:
        return _ReadAhead.of(lambda: read_run_columns(run, with_ranks=args.order == "rank"))  # type: ignore[arg-type]

    workers = 1 if len(runs) > 1 and _threads.usable_cpus() > 1 else 0
    for run, read_ahead in zip(runs, _threads.in_order(read, [(run,) for run in runs], workers)):
        handoff = RunHandoff(read_ahead.taken())
        del read_ahead
        yield run, handoff


class _Preparing:
    """The judgments made ready for joining with runs (grouped by query, checked for repeats, indexed:
    0.6 s for 10 M sessions' judgments), on a thread of their own while the first run is read, when
    the process may use several CPUs. Each run's build uses what this made (the readers' read-only
    columns are prepared once for every run); an error in it is raised by :meth:`wait`, before the
    first build, so after a first run that cannot be read, as when the build prepared them itself."""

    def __init__(self, args: argparse.Namespace, judged: QrelsColumns) -> None:
        from ..engine import threads as _threads
        from ..engine.ranking import prepared_qrels

        self.error: BaseException | None = None
        self.thread: threading.Thread | None = None
        if _threads.usable_cpus() > 1:
            def prepare() -> None:
                try:
                    prepared_qrels(judged, None, args.duplicates)
                except BaseException as exc:  # noqa: BLE001 - raised by the caller's thread, in wait()
                    self.error = exc

            self.thread = threading.Thread(target=prepare, name="retrieval_eval qrels", daemon=True)
            self.thread.start()

    def wait(self) -> None:
        if self.thread is not None:
            self.thread.join()
            self.thread = None
        if self.error is not None:
            raise self.error


class _ReadAhead:
    """A run read on another thread: its columns or its error, and the warnings it gave meanwhile."""

    #: the warnings of the reading on this thread, when they are held back (see _show_warning)
    held = threading.local()

    def __init__(self, columns: RunColumns | None, error: BaseException | None, warned: list[str]) -> None:
        self.columns, self.error, self.warned = columns, error, warned

    @classmethod
    def of(cls, read: Callable[[], RunColumns]) -> _ReadAhead:
        warned: list[str] = []
        cls.held.messages = warned
        try:
            return cls(read(), None, warned)
        except BaseException as exc:  # noqa: BLE001 - raised by the caller's thread, in the runs' order
            return cls(None, exc, warned)
        finally:
            cls.held.messages = None

    def taken(self) -> RunColumns:
        """The columns, which this no longer holds, once the warnings are printed (or the error raised)
        on the calling thread."""
        for message in self.warned:
            _warn(message)
        if self.error is not None:
            raise self.error
        columns, self.columns = self.columns, None
        assert columns is not None
        return columns


#: The folders of the paths a shell passes for a process substitution ``<(...)``: bash's /dev/fd/63,
#: zsh's /proc/self/fd/11. Their file names are bare descriptor numbers, which name nothing.
_DESCRIPTOR_FOLDER = re.compile(r"/dev/fd|/proc/[^/]+/fd")


def _file_name(path: str) -> str:
    """A run's short name: its file name, or the whole path of a descriptor (``/dev/fd/63``, not ``63``)."""
    folder, name = os.path.split(path)
    return path if _DESCRIPTOR_FOLDER.fullmatch(folder) else name


def _run_names(runs: Sequence[object]) -> list[str]:
    """Names of the runs in tables: their file names (``-`` for stdin, the path for a process
    substitution); the paths as given when two file names agree; and numbered (``run#1``, ``run#2``)
    when the same file is given twice."""
    given = [_name(run) if isinstance(run, (str, os.PathLike)) else "-" for run in runs]  # a stream is stdin
    for names in ([_file_name(name) for name in given], given):
        if len(set(names)) == len(names):
            return names
    return [f"{name}#{i}" for i, name in enumerate(names, 1)]


def _evaluate(args: argparse.Namespace, qrels: object, runs: Sequence[object], log: object = None) -> int:
    from ..evaluators.set import SetEvaluator
    from ..report.text import (
        json_report,
        order_requested,
        table_columns,
        table_header,
        table_rows,
        trec_text,
    )

    requested, show_run_id = _requested(args.measures, args.level)
    requested = order_requested(requested)
    if log is not None:
        loaded: Iterator[SetEvaluator] = iter([SetEvaluator.from_log(
            log, rel=args.level, max_depth=args.max_depth, judged_only=args.judged_only, duplicates=args.duplicates)])
        names = _run_names([args.log])
    else:
        judged = _read_judgments(qrels, runs[0],
                                 subtopics=any(item.measure.definition.subtopics for item in requested))
        # One run at a time: each is read, evaluated, printed and dropped before the next is read. The
        # qrels columns go with the last run's build: its measures reuse their memory (300 MB at 10 M queries).
        preparing = _Preparing(args, judged)
        held = [judged]
        del judged
        loaded = (_build_run(args, held.pop() if number == len(runs) else held[0], qrels, run, columns, preparing)
                  for number, (run, columns) in enumerate(_runs_read(args, runs), 1))
        names = _run_names(runs)
    summary = not args.no_summary
    columns = table_columns(requested, per_query=args.per_query, summary=summary)
    # Each run is printed only once every run is read and evaluated: a broken file found at the third run
    # stops the command before anything reaches stdout (never half a table). The evaluations themselves are
    # not kept, only their text, so several large runs need no more memory than the largest one and the columns
    # of the next one, read meanwhile (see _runs_read).
    parts: list[str] = []
    table = args.format in _TABLE_FORMATS
    if table:  # imported only for a table: csv costs start-up time that trec lines do not need
        from ..report import tables

        header, numeric = table_header(columns, per_query=args.per_query)
        parts.append(tables.head(args.format, header, numeric))
    streamed: Iterator[str] = iter(())  # the last run's trec lines, written as they are made
    for number, (name, results) in enumerate(zip(names, loaded), 1):
        if not args.quiet:
            _report_query_set(args, results, requested, run=name if len(names) > 1 else None)
        if args.format == "json":
            parts.append(json_report(results, requested, per_query=args.per_query, summary=summary,
                                     run=name if len(names) > 1 else None))
        elif table:
            lines = table_rows(results, columns, name, per_query=args.per_query, summary=summary)
            parts.append(tables.rows(args.format, lines, args.digits))
        else:
            pieces = trec_text(results, requested, per_query=args.per_query, summary=summary,
                               digits=args.digits, run_id=show_run_id)
            if number < len(names):
                parts.append("".join(pieces))
            else:  # every run is evaluated by now: the first piece computes the last values
                streamed = itertools.chain([next(pieces, "")], pieces)
        del results
    if table:
        parts.append(tables.tail(args.format))
    if args.format == "json":  # one document for one run (as before); a list of them for several
        parts = [(parts[0] if len(parts) == 1 else "[\n" + ",\n".join(parts) + "\n]") + "\n"]
    _emit("".join(parts))
    for piece in streamed:
        _emit(piece)
    return EXIT_OK


def _names(args: argparse.Namespace, runs: Sequence[object]) -> list[str]:
    """The runs' names: --names, or their file names."""
    names = args.names.split(",") if args.names is not None else _run_names(runs)
    if not all(name.strip() for name in names):
        raise _Usage(f"--names: every run needs a name; got {_short(args.names)}")
    if len(names) != len(runs):
        raise _Usage(f"--names gives {_counted(len(names), 'name', 'names')} for {_counted(len(runs), 'run', 'runs')}")
    if len(set(names)) != len(names):
        raise _Usage("two runs have the same name; name them with --names a,b,...")
    return names


def _load_runs(args: argparse.Namespace, qrels: object, runs: Sequence[object],
               requested: Sequence[Requested]) -> list[SetEvaluator]:
    """Every run evaluated against the qrels, read once."""
    judged = _read_judgments(qrels, runs[0],
                             subtopics=any(item.measure.definition.subtopics for item in requested))
    preparing = _Preparing(args, judged)
    return [_build_run(args, judged, qrels, run, columns, preparing) for run, columns in _runs_read(args, runs)]


def _per_query_measures(specs: Sequence[str], level: int, *, text: bool = False) -> list[Requested]:
    """The -m measures of inspect, diff and plot: those with a value per query (and, with ``text``,
    the text ones, relstring), without repeats.

    A group's other members (num_q and gm_map in ``official``) are left out; a measure without a
    per-query value asked for by itself, or ``runid``, is a usage error, as is a list left empty.
    """
    from ..measures import trec_table

    for spec in specs:
        if spec.strip() == trec_table.RUN_ID:
            raise _Usage("-m runid: the run's name is not a measure; the output names the run")
    requested, _ = _requested(specs, level)
    alone = {found[0].measure for spec in specs for found in [_requested([spec], level)[0]] if len(found) == 1}
    kept: list[Requested] = []
    for item in {(r.measure, r.label): r for r in requested}.values():
        definition = item.measure.definition
        if not (definition.summary_only or (definition.text and not text)):
            kept.append(item)
        elif item.measure in alone:
            kind = ("a text measure: its per-query value is a string, not a number" if definition.text else
                    "a summary over all queries: it has no per-query value (evaluate prints it)")
            raise _Usage(f"-m {item.label} is {kind}")
    if not kept:
        raise _Usage(f"-m {_short(' '.join(specs))}: no measure with a per-query value")
    return kept


def _inspect(args: argparse.Namespace) -> int:
    from ..analysis.inspection import format_query, format_worst, inspect_query, worst_queries
    from ..report.text import order_requested

    if args.query is None and args.depth is not None:
        raise _Usage("--depth applies to one query's ranking; give --query Q")
    if args.query is not None and args.worst is not None:
        raise _Usage("--worst lists the worst queries; drop --query to see them")
    _refuse_stdin_twice(args.qrels, [args.run])
    specs = args.measures or (list(INSPECT_MEASURES) if args.query is not None else ["map"])
    if args.query is not None:
        requested = order_requested(_per_query_measures(specs, args.level, text=True))
    else:  # the queries are ranked by the first -m, whatever its place in the table order
        first = _per_query_measures(specs[:1], args.level)
        requested = list({(r.measure, r.label): r for r in [*first, *_per_query_measures(specs, args.level)]}.values())
    qrels, runs = _sources(args.qrels, [args.run])
    name = _run_names(runs)[0]
    [results] = _load_runs(args, qrels, runs, requested)
    if args.query is not None:
        view = inspect_query(results, args.query, [(r.label, r.measure) for r in requested],
                             depth=args.depth or 20, where=name)
        _emit(format_query(view, run=name, rel=args.level, digits=args.digits))
        return EXIT_OK
    if not args.quiet:
        _report_query_set(args, results, requested)
    worst = worst_queries(results, [r.measure for r in requested], args.worst or 10)
    _emit(format_worst(worst, [r.label for r in requested], total=len(results), digits=args.digits))
    return EXIT_OK


def _diff(args: argparse.Namespace) -> int:
    from ..report import tables
    from ..analysis.inspection import diff_query, diff_runs, format_diff, format_ranking_diff

    if args.query is None and args.depth is not None:
        raise _Usage("--depth applies to one query's rankings; give --query Q")
    if args.query is not None and args.top is not None:
        raise _Usage("--top lists the largest changes over all queries; drop --query to see them")
    if args.query is not None and args.format != "text":
        raise _Usage("--query shows two rankings as text; drop --format")
    _refuse_stdin_twice(args.qrels, [args.run_a, args.run_b])
    requested = _per_query_measures(args.measures or ["nDCG@10"], args.level)
    qrels, runs = _sources(args.qrels, [args.run_a, args.run_b])
    name_a, name_b = _names(args, runs)
    a, b = _load_runs(args, qrels, runs, requested)
    if args.query is not None:
        view = diff_query(a, b, args.query, [(r.label, r.measure) for r in requested],
                          k=args.depth or 10, names=(name_a, name_b))
        _emit(format_ranking_diff(view, (name_a, name_b), digits=args.digits))
        return EXIT_OK
    if not args.quiet:
        for name, results in ((name_a, a), (name_b, b)):
            _report_query_set(args, results, requested, run=name)
    diffs = [diff_runs(a, b, r.measure, r.label, names=(name_a, name_b)) for r in requested]
    if args.format == "text":
        _emit("\n".join(format_diff(d, (name_a, name_b), top=args.top or 10, digits=args.digits) for d in diffs))
    elif args.format == "json":
        import json

        _emit(json.dumps({"runs": [name_a, name_b], "measures": [{
            "measure": d.label, "mean": {name_a: d.mean_a, name_b: d.mean_b},
            "helped": d.helped, "hurt": d.hurt, "unchanged": d.unchanged,
            "per_query": [{"query": q.query_id, "a": q.a, "b": q.b, "delta": q.delta} for q in d.deltas],
        } for d in diffs]}, indent=2, allow_nan=False) + "\n")
    else:
        header = ["measure", "query", name_a, name_b, "delta"]
        lines: list[list[tables.Cell]] = [[d.label, q.query_id, q.a, q.b, q.delta] for d in diffs for q in d.deltas]
        _emit(tables.head(args.format, header, [False, False, True, True, True])
              + tables.rows(args.format, lines, args.digits) + tables.tail(args.format))
    return EXIT_OK


def _check_output(path: str) -> None:
    """plot's -o, before anything is read: a known suffix, in a directory that exists and can be written."""
    from ..report.plotting import FORMATS

    shown = _short(path, 120)
    if os.path.splitext(path)[1].lower() not in FORMATS:
        raise _Usage(f"-o: expected a file name ending in {', '.join(FORMATS)}; got {shown}")
    if os.path.isdir(path):
        raise _Usage(f"-o: expected a file name; got {shown}, a directory")
    folder = os.path.dirname(path) or os.curdir
    if not os.path.isdir(folder):
        raise _Usage(f"-o: the directory of {shown} does not exist")
    if not os.access(folder, os.W_OK):
        raise _Usage(f"-o: cannot write in the directory of {shown}")


def _plot(args: argparse.Namespace) -> int:
    from ..report import plotting

    _refuse_stdin_twice(args.qrels, args.runs)
    _check_output(args.output)  # before reading the runs, not after
    plotting.require_matplotlib()
    requested = _per_query_measures([args.measure] if args.kind == "diff" else ["map"], args.level)
    if len(requested) > 1:
        raise _Usage(f"-m {args.measure[:40]} names {len(requested)} measures; plot diff draws one, "
                     f"for example -m {requested[0].label}")
    qrels, runs = _sources(args.qrels, args.runs)
    names = _names(args, runs)
    evaluations = _load_runs(args, qrels, runs, requested)
    if args.kind == "pr":
        figure = plotting.pr_curves(dict(zip(names, evaluations)))
    elif args.kind == "diff":
        figure = plotting.diff_bars(evaluations[0], evaluations[1], requested[0].measure, (names[0], names[1]))
    else:
        figure = plotting.first_relevant_ranks(dict(zip(names, evaluations)))
    try:
        plotting.save(figure, args.output)
    except OSError as exc:  # a full disk: the output failed, as for evaluate
        raise _OutputFailed(f"{args.output}: {exc.strerror or exc}") from None
    if not args.quiet:
        _note(f"wrote {args.output}")
    return EXIT_OK


def _report_query_set(
    args: argparse.Namespace, results: SetEvaluator, requested: Sequence[Requested], run: str | None = None,
) -> None:
    """The note: and warning: lines about the query set on stderr (all of them silenced by --quiet).

    With several runs, ``run`` names the run each line is about."""
    about = f"{run}: " if run else ""
    missing = results.missing_from_run
    if missing and not args.complete:
        action = "left out of the means" if args.skip_missing else "scored as empty rankings (as trec_eval -c)"
        _note(about + f"{_counted(len(missing), 'judged query has', 'judged queries have')} no results; "
              f"{action}: {_preview(missing)}")
    ignored = results.not_judged
    if ignored:
        are = _counted(len(ignored), "run query has no judgments and is", "run queries have no judgments and are")
        _note(about + f"{are} ignored: {_preview(ignored)}")
    unjudged = results.only_unjudged
    if unjudged:
        _warn(about + f"{_counted(len(unjudged), 'query has', 'queries have')} only negative judgments (pooled but "
              f"never judged), so every measure is 0 for {_them(unjudged)}: {_preview(unjudged)}")
    unjudged_set = set(unjudged)
    no_relevant = [q for q in results.without_relevant if q not in unjudged_set]
    if no_relevant:
        zero = _zero_for(results, requested, no_relevant)
        so = f", so {_preview(zero)} {'is' if len(zero) == 1 else 'are'} 0 for {_them(no_relevant)}" if zero else ""
        _warn(about + f"{_counted(len(no_relevant), 'query has', 'queries have')} no relevant judgment (relevance >= "
              f"{args.level}){so}: {_preview(no_relevant)}")
    for item in requested:
        left_out = results.left_out(item.measure)
        if left_out:
            one = len(left_out) == 1
            _note(about + f"{item.label}: {len(left_out)} of {_counted(len(results), 'query', 'queries')} "
                  f"{'has' if one else 'have'} only relevant or only non-relevant documents and "
                  f"{'is' if one else 'are'} left out of its summary: {_preview(left_out)}")


def _zero_for(results: SetEvaluator, requested: Sequence[Requested], query_ids: Sequence[str]) -> list[str]:
    """The requested per-query scores (not counts) whose value is 0 for every one of ``query_ids``.

    Only those are named in the warning: a graded measure (nDCG) uses the grades whatever ``-l``
    says, so it need not be 0 on a query with no judgment >= ``-l``.
    """
    import numpy as np

    wanted = set(query_ids)
    rows = np.array([i for i, q in enumerate(results.query_ids) if q in wanted], dtype=np.int64)
    # Counts (num_rel) are 0 by definition here: not news. A weighted mean (AUC, GAUC, Accuracy) leaves
    # these queries out of its summary, and its own note says so; a pooled one (PooledAUC) counts their rows.
    scores = [item for item in requested
              if not (item.measure.definition.text or item.measure.definition.summary_only
                      or item.measure.definition.integer or item.measure.definition.aggregate in ("weighted", "pooled"))]
    return [item.label for item in scores if not np.any(results.array(item.measure)[rows])]


def _them(items: Sequence[str]) -> str:
    return "it" if len(items) == 1 else "them"


def _note(message: str) -> None:
    _stderr_line(f"retrieval-eval: note: {message}")


def _warn(message: str) -> None:
    _stderr_line(f"retrieval-eval: warning: {message}")


def _show_warning(message: Warning | str, category: type[Warning], *_: object, **__: object) -> None:
    """warnings.showwarning for the CLI: one plain line on stderr, no source location; held back, on
    a thread reading a run ahead, until that run is taken (see _runs_read)."""
    held = getattr(_ReadAhead.held, "messages", None)
    if held is not None:
        held.append(str(message))
    else:
        _warn(str(message))


def _preview(items: Sequence[str], limit: int = 5) -> str:
    shown = ", ".join(items[:limit])
    return shown + (f", ... ({len(items) - limit} more)" if len(items) > limit else "")


def _list_measures(args: argparse.Namespace) -> int:
    from ..report.text import catalogue_json, catalogue_text, find_measures

    found = find_measures(args.search)
    if not found:
        raise _Usage(f"no measure name, alias or trec_eval name contains {args.search!r}")
    _emit(catalogue_json(found) + "\n" if args.format == "json" else catalogue_text(found))
    return EXIT_OK


def _command_of(argv: Sequence[str]) -> str | None:
    """The command ``argv`` runs (None for the top-level --help and --version): its parser is the one built."""
    if not argv or argv[0] in ("-h", "--help", "--version"):
        return None
    return argv[0] if argv[0] in COMMANDS else DEFAULT_COMMAND


def _with_command(parser: argparse.ArgumentParser, argv: list[str]) -> list[str]:
    """``argv`` with ``evaluate`` put first when it names no command: trec_eval's ``-m map QRELS RUN``.

    A first word that is no file but close to a command name is taken for a misspelt command.
    """
    if not argv or argv[0] in COMMANDS or argv[0] in ("-h", "--help", "--version"):
        return argv
    if not argv[0].startswith("-") and not os.path.exists(argv[0]):
        import difflib  # here: only a misspelt command needs it

        close = difflib.get_close_matches(argv[0], COMMANDS, n=1)
        if close:
            parser.error(f"unknown command {argv[0]!r} (did you mean {close[0]!r}?)")
    return [DEFAULT_COMMAND, *argv]


def _sources(qrels: str, runs: Sequence[str]) -> tuple[object, list[object]]:
    """The qrels and runs to read: paths, or the binary standard input for ``-``."""
    return (_stdin("qrels") if qrels == "-" else qrels), [_stdin("a run") if run == "-" else run for run in runs]


def _evaluate_usage_problem(args: argparse.Namespace) -> str | None:
    """What is wrong with evaluate's arguments beyond what argparse checks; None if nothing."""
    if args.log is None and not args.runs:
        return "evaluate takes QRELS and RUN, or --log LOG"
    if args.log is not None and args.qrels is not None:
        return "--log replaces QRELS and RUN; give one or the other"
    if args.log is not None and args.order != "score":
        return "--order applies to run files; a log is always ranked by score"
    return _stdin_problem(args.qrels, args.runs)


def _refuse_stdin_twice(qrels: str, runs: Sequence[str]) -> None:
    """inspect, diff and plot: the usage error of :func:`_stdin_problem`, if any."""
    problem = _stdin_problem(qrels, runs)
    if problem:
        raise _Usage(problem)


def _stdin_problem(qrels: str | None, runs: Sequence[str]) -> str | None:
    """Standard input named twice (``-``): it can be read once only."""
    if qrels == "-" and "-" in runs:
        return "QRELS and RUN cannot both be - (standard input); give one of them as a file"
    if runs.count("-") > 1:
        return "only one RUN can be - (standard input); give the others as files"
    return None


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code.

    0 success; 1 a regression found by ``compare --fail-if-worse``, or output that could not be
    written (a full disk, a closed stdout); 2 bad input or usage; 130 Ctrl-C. A broken pipe
    (``| head -1``) ends quietly with 0. Each failure is one line on stderr, never a traceback.
    Without a command, ``evaluate`` is meant (``retrieval-eval -m map QRELS RUN``, as in trec_eval).

    Run as the program itself (the ``retrieval-eval`` script or ``python -m retrieval_eval``, with
    ``argv`` left out), it ends the process once its output is flushed: see :func:`_end_process`.
    """
    # Only the program itself owns its process: a script or notebook calling main() keeps its own
    # BLAS threads, allocator settings and teardown.
    program = argv is None and _is_the_program()
    code = _guarded(argv, program)
    if program:
        _end_process(code)
    return code


def _guarded(argv: Sequence[str] | None, program: bool) -> int:
    if program:
        _single_threaded_blas()
    # No cyclic garbage collection while the command runs: importing NumPy and the package makes some
    # 100,000 objects, whose collections cost about 6 ms, and the evaluation itself frees its arrays by
    # reference counting. Restored on the way out, for a caller of main() in a longer process.
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _main(argv, program)
    except KeyboardInterrupt:  # Ctrl-C: the reader's threads have stopped by now (see _parsed_blocks)
        _stderr_line("retrieval-eval: interrupted")
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # output piped into `head`: not an error, and nothing more to say
        _drop_stdout()
        return EXIT_OK
    except _OutputFailed as exc:
        _stderr_line(f"retrieval-eval: error: cannot write the output: {exc}")
        return EXIT_OUTPUT_FAILED
    finally:
        if collecting:
            gc.enable()


def _is_the_program() -> bool:
    """Whether this process is the command line itself: the ``retrieval-eval`` script, or ``python -m``."""
    started = sys.argv[0] if sys.argv else ""
    return (os.path.basename(started).removesuffix(".exe") == "retrieval-eval"
            or os.path.abspath(started) == os.path.join(os.path.dirname(os.path.abspath(__file__)), "__main__.py"))


def _end_process(code: int) -> NoReturn:
    """End the process at once with ``code``, skipping the interpreter's teardown.

    Tearing down frees every object of NumPy and the package one by one, some 25 ms: longer than
    evaluating a small run. By now nothing is left to do: the output is written and flushed (a
    failure to write it was reported already), no file is being written, and a thread still reading
    a run ahead (after an error in the run before it) has nothing anyone waits for.
    """
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):  # nothing is left unwritten: the output was flushed as it was written
            pass
    os._exit(code)


def _single_threaded_blas() -> None:
    """Ask OpenBLAS (NumPy's linear algebra, which no command uses) for one thread, unless the environment
    says otherwise. Loading NumPy starts a BLAS thread per CPU otherwise: on a busy machine that took
    some 50 ms of the process's start-up. Only before NumPy is loaded (a process that imported it
    already, such as a test calling :func:`main`, keeps its setting)."""
    if "numpy" not in sys.modules:
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def _main(argv: Sequence[str] | None, program: bool = False) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(_command_of(argv))
    args = parser.parse_args(_with_command(parser, argv))
    problem = _evaluate_usage_problem(args) if args.command == "evaluate" else None
    if program and args.command != "measures":  # this process is ours: see keep_freed_memory
        from ..engine.memory import keep_freed_memory

        keep_freed_memory()
    if problem is not None:  # exit 2 with one line, as argparse's own usage errors
        parser.exit(EXIT_BAD_INPUT, f"retrieval-eval evaluate: error: {problem}; see retrieval-eval evaluate --help\n")
    with warnings.catch_warnings():
        # Accepted-but-suspicious input is reported every time, unless --quiet.
        warnings.simplefilter("ignore" if getattr(args, "quiet", False) else "always")
        warnings.showwarning = _show_warning
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    try:
        from ..model import MissingExtraError, RetrievalEvalError

        if args.command == "measures":
            return _list_measures(args)
        if args.command == "compare":
            return _compare(args)
        if args.command == "inspect":
            return _inspect(args)
        if args.command == "diff":
            return _diff(args)
        if args.command == "plot":
            return _plot(args)
        if args.command == "demo":
            from ..data import sample_paths

            qrels_path, run_path = sample_paths()
            return _evaluate(args, qrels_path, [run_path])
        if args.log is not None:
            return _evaluate(args, None, [], log=_stdin("a log") if args.log == "-" else args.log)
        qrels, runs = _sources(args.qrels, args.runs)
        return _evaluate(args, qrels, runs)
    except _Usage as exc:
        command = f"{args.command} {args.kind}" if args.command == "plot" else args.command
        _stderr_line(f"retrieval-eval {command}: error: {exc}; see retrieval-eval {command} --help")
        return EXIT_BAD_INPUT
    except MissingExtraError as exc:  # an optional dependency: one line that says what to install
        _stderr_line(f"retrieval-eval: error: {exc}")
        return EXIT_BAD_INPUT
    except RetrievalEvalError as exc:
        _stderr_line(f"retrieval-eval: error: {exc}")
        return EXIT_BAD_INPUT
