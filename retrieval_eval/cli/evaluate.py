"""``retrieval-eval evaluate``: score runs against qrels; print trec_eval's lines, JSON or a table."""

from __future__ import annotations

import argparse
import itertools
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from ._options import _TABLE_FORMATS, _add_evaluation_options, _Parser, _positive_int, _RawDescriptionFormatter
from ._output import EXIT_OK, _emit, _short, _Usage
from ._runs import (
    _as_typed,
    _build_run,
    _given_names,
    _per_query_measures,
    _Preparing,
    _read_judgments,
    _report_query_set,
    _requested,
    _run_id_names,
    _run_names,
    _runs_read,
    _sources,
    _stdin,
    _stdin_problem,
)
from ._trec_flags import (
    add_trec_eval_flags,
    check_rel_format,
    trec_flags_problem,
    with_collection_size,
    with_judged_in_group,
)
from ._trust import _reporting, add_trust_options, trust_output, trust_problem, trust_report, unjudged_note

if TYPE_CHECKING:
    from ..evaluators.set import SetEvaluator
    from ..report.intervals import CiOptions
    from ..report.text import Requested

_EVALUATE_HELP = """\
Score TREC runs against TREC qrels and print trec_eval's lines (or JSON, or a table).

Without -m the measures are trec_eval's official set. Queries in the qrels that the run lacks
are scored as empty rankings (0) and counted in every mean, as with trec_eval -c; run queries
without judgments are ignored. Both are reported on stderr.

With --log, one labelled log of 'group item score label' rows (TSV, CSV, .gz, or Parquet with
pyarrow) stands for both files: each group is ranked by score and each row's label is its
judgment, so AUC, GAUC and every ranking measure work on click logs.

Several runs (evaluate QRELS RUN1 RUN2 ...) are scored against the qrels read once. A run is named
by --names, else by its run_id (the 6th field of its lines), else, when the run_id is missing or
shared with another run, by its file name. trec format prints each run's block in turn, each
opened by its runid line holding that name, whatever -m asks for; the table formats (csv, tsv,
markdown, latex) print one row per run, or per run and query with -q (csv and tsv then add a
'kind' column: 'query', or 'summary' for the 'all' row), with the measures in the order of -m,
named as typed. --wide MEASURE prints one measure as a table of a row per query and a column per run.

--ci adds a confidence interval to every mean: the exact (Clopper-Pearson) interval where every
per-query value is 0 or 1 (P@1, Success@k), else a BCa bootstrap, seeded (the same input gives the
same interval), or the t interval with --ci-method t. trec format adds the lines NAME_ci_low and
NAME_ci_high after the 'all' block (same three fields); json adds "ci": {NAME: {low, high, method,
level}}; the tables add the columns 'NAME ci_low' and 'NAME ci_high'. Sums (num_ret), gm_map and
GAUC are not means and get none. See docs/api.md, "Intervals of a mean"."""


def add_parser(commands: argparse._SubParsersAction[_Parser]) -> None:
    evaluate = commands.add_parser("evaluate", help="score a run against qrels (trec_eval compatible)",
                                   description=_EVALUATE_HELP, formatter_class=_RawDescriptionFormatter)
    evaluate.add_argument("qrels", metavar="QRELS", nargs="?",
                          help="TREC qrels file: 'query_id iter doc_id relevance' (gzip ok; - for stdin); also "
                               "3-column qrels, BEIR's qrels TSV, JSON or Parquet (see docs/api.md)")
    evaluate.add_argument("runs", metavar="RUN", nargs="*",
                          help="TREC run files: 'query_id Q0 doc_id rank score run_id' (gzip ok; - for stdin), "
                               "BEIR/MTEB results JSON (.json) or Parquet; several are scored against the qrels "
                               "read once")
    evaluate.add_argument("--log", metavar="LOG",
                          help="a labelled log of 'group item score label' rows instead of QRELS and RUN "
                               "(.tsv, .csv, .gz, .parquet; - for stdin)")
    evaluate.add_argument("--log-columns", metavar="GROUP,ITEM,SCORE,LABEL",
                          help="the log's group, item, score and label columns by name: Parquet columns, or "
                               "the names on a text log's header line (default: columns named group, item, "
                               "score, label in any order, else the first four in that order)")
    _add_evaluation_options(evaluate)
    evaluate.add_argument("--names", metavar="A,B,...",
                          help="names of the runs, in order (default: each run's run_id; its file name when the "
                               "run_id is missing or shared)")
    evaluate.add_argument("--wide", metavar="MEASURE",
                          help="print one table of MEASURE: a row per query, a column per run, then the 'all' row "
                               "(csv, tsv, markdown or latex; replaces -m)")
    add_trec_eval_flags(evaluate)
    evaluate.add_argument("--ci", action="store_true",
                          help="add a confidence interval to every mean (exact for 0/1 values, else BCa bootstrap)")
    evaluate.add_argument("--ci-method", choices=("auto", "bca", "t", "exact"), default="auto",
                          help="auto (default): exact (Clopper-Pearson) where every per-query value is 0 or 1, else "
                               "bca; bca: BCa bootstrap; t: Student t; exact: 0/1 values only")
    evaluate.add_argument("--ci-level", type=float, default=0.95, metavar="LEVEL",
                          help="confidence level of --ci, between 0 and 1 (default 0.95)")
    evaluate.add_argument("--ci-resamples", type=_positive_int, default=2000, metavar="N",
                          help="bootstrap resamples of --ci (default 2000; at most 1000000)")
    evaluate.add_argument("--ci-seed", type=int, default=0, metavar="SEED",
                          help="seed of the bootstrap, an integer >= 0 (default 0: the same input always gives "
                               "the same interval)")
    add_trust_options(evaluate)


def _evaluate_usage_problem(args: argparse.Namespace) -> str | None:
    """What is wrong with evaluate's arguments beyond what argparse checks; None if nothing."""
    if args.log is None and not args.runs:
        return "evaluate takes QRELS and RUN, or --log LOG"
    if args.log is not None and args.qrels is not None:
        return "--log replaces QRELS and RUN; give one or the other"
    if args.log_columns is not None and args.log is None:
        return "--log-columns names the columns of a --log LOG"
    if args.log_columns is not None and (len(set(args.log_columns.split(","))) != 4 or "" in args.log_columns.split(",")):
        return f"--log-columns takes 4 distinct names separated by commas: GROUP,ITEM,SCORE,LABEL; got {args.log_columns!r}"
    if args.log is not None and args.order != "score":
        return "--order applies to run files; a log is always ranked by score"
    if args.log is not None and args.ties != "trec_eval":
        return "--ties applies to run files; a log's ties are broken by item id"
    if args.wide is not None and args.format not in _TABLE_FORMATS:
        return "--wide prints a table; give --format csv, tsv, markdown or latex"
    if args.wide is not None and args.measures is not None:
        return "--wide MEASURE replaces -m; give one or the other"
    return _ci_problem(args) or trec_flags_problem(args) or trust_problem(args) or _stdin_problem(args.qrels, args.runs)


def _ci_problem(args: argparse.Namespace) -> str | None:
    """What is wrong with the --ci options; None if nothing."""
    if not args.ci:
        given = [name for name, value, default in (("--ci-method", args.ci_method, "auto"),
                                                   ("--ci-level", args.ci_level, 0.95),
                                                   ("--ci-resamples", args.ci_resamples, 2000),
                                                   ("--ci-seed", args.ci_seed, 0)) if value != default]
        return f"{given[0]} applies to --ci; add --ci" if given else None
    if args.wide is not None:
        return "--ci gives intervals of the means; --wide prints per-query values: give one or the other"
    if args.no_summary:
        return "--ci gives intervals of the summary ('all') values; drop -n"
    if not 0.0 < args.ci_level < 1.0:
        return f"--ci-level must lie strictly between 0 and 1; got {args.ci_level:g}"
    if args.ci_resamples > 1_000_000:
        return f"--ci-resamples takes at most 1000000; got {args.ci_resamples}"
    if args.ci_seed < 0:
        return f"--ci-seed takes an integer >= 0; got {args.ci_seed}"
    return None


def run(args: argparse.Namespace) -> int:
    if args.log is not None:
        return _evaluate(args, None, [], log=_stdin("a log") if args.log == "-" else args.log)
    qrels, runs = _sources(args.qrels, args.runs)
    return _evaluate(args, qrels, runs)


def _evaluate(args: argparse.Namespace, qrels: object, runs: Sequence[object], log: object = None) -> int:
    from ..evaluators.set import SetEvaluator
    from ..report.text import (
        as_given,
        json_report,
        order_requested,
        table_columns,
        table_rows,
        trec_text,
        wide_column,
    )

    sources = [args.log] if log is not None else list(runs)
    ci = _ci_options(args)
    given = _given_names(args, len(sources))
    rel_format = getattr(args, "rel_format", "qrels")  # (demo has none of trec_eval's other flags)
    if args.wide is not None:
        parsed = _per_query_measures([args.wide], args.level)
        if len(parsed) != 1:
            raise _Usage(f"--wide {_short(args.wide)} names {len(parsed)} measures; give one")
        requested, show_run_id = parsed, False
        given_order = _as_typed([args.wide], parsed, args.level)
    else:
        # trec_eval's official set needs relevance qrels: preferences default to their own group
        preferences = args.measures is None and rel_format in ("prefs", "qrels_prefs")
        requested, show_run_id = _requested(["all_prefs"] if preferences else args.measures, args.level)
        given_order = as_given(_as_typed(args.measures, requested, args.level))
        requested = order_requested(requested)
    check_rel_format(rel_format, requested)
    requested = with_collection_size(requested, getattr(args, "collection_size", None))
    given_order = with_collection_size(given_order, getattr(args, "collection_size", None))
    if rel_format == "qrels_jg":  # -J: each judgment group ranks the documents it judged
        requested = with_judged_in_group(requested, args.judged_only)
        given_order = with_judged_in_group(given_order, args.judged_only)
    zscores = None
    if getattr(args, "zscores", None) is not None:  # read before any run: a bad z-score file stops the command first
        from ..io.zscores import read_zscores

        zscores = read_zscores(args.zscores)
    if log is not None:
        loaded: Iterator[SetEvaluator] = iter([SetEvaluator.from_log(
            log, rel=args.level, max_depth=args.max_depth, judged_only=args.judged_only, duplicates=args.duplicates,
            columns=tuple(args.log_columns.split(",")) if args.log_columns else None)])
    else:
        judged = _read_judgments(qrels, runs[0], subtopics=any(item.measure.definition.subtopics for item in requested),
                                 rel_format=rel_format)
        # One run at a time: each is read, evaluated, printed and dropped before the next is read. The
        # qrels columns go with the last run's build: its measures reuse their memory (300 MB at 10 M queries).
        preparing = _Preparing(args, judged)
        held = [judged]
        del judged
        loaded = (_build_run(args, held.pop() if number == len(runs) else held[0], qrels, run, columns, preparing)
                  for number, (run, columns) in enumerate(_runs_read(args, runs), 1))
    several = len(sources) > 1
    notes = given or _run_names(sources)  # the notes on stderr name the files, as they are read
    summary = not args.no_summary
    kind = args.format in ("csv", "tsv")  # machine-read tables mark summary rows apart
    columns = table_columns(given_order, per_query=args.per_query, summary=summary)
    # Each run is printed only once every run is read and evaluated: a broken file found at the third run
    # stops the command before anything reaches stdout (never half a table). The evaluations themselves are
    # not kept, only their text (or cells), so several large runs need no more memory than the largest one and
    # the columns of the next one, read meanwhile (see _runs_read). The runs' names come last: a run is named
    # by its run_id unless another run shares it.
    made: list[Any] = []  # per run: its trec text, JSON document, table rows or wide column
    run_ids: list[str] = []
    streamed: Iterator[str] = iter(())  # the last run's trec lines, written as they are made
    for number, (note_name, results) in enumerate(zip(notes, loaded), 1):
        if not args.quiet:
            _report_query_set(args, results, requested, run=note_name if several else None)
        run_ids.append(results.run_id)
        results.zscores = zscores
        if _reporting(args):
            made.append(trust_report(args, results, requested))
        elif args.wide is not None:
            made.append(wide_column(results, given_order[0], summary=summary))
        elif args.format == "json":
            provenance = _provenance(args, qrels, sources, log is not None)
            made.append(json_report(results, given_order, per_query=args.per_query, summary=summary,
                                    provenance=provenance) if ci is None else
                        _json_with_ci(results, given_order, args.per_query, provenance, ci))
        elif args.format in _TABLE_FORMATS:
            rows = table_rows(results, columns, None, per_query=args.per_query, summary=summary, kind=kind)
            if ci is not None:  # the intervals fill the 'all' row's extra columns; query rows leave them empty
                from ..report.intervals import ci_cells, ci_columns

                extra = ci_cells(results, columns, ci)
                rows = [[*row, *([None] * len(ci_columns(columns)))] for row in rows[:-1]] + [[*rows[-1], *extra]]
            made.append(rows)
        else:
            pieces = trec_text(results, requested, per_query=args.per_query, summary=summary,
                                digits=args.digits, run_id=show_run_id and not several)
            ci_text = ""
            if ci is not None:
                from ..report.intervals import ci_trec_text

                ci_text = ci_trec_text(results, requested, ci, digits=args.digits)
            if number < len(sources):
                made.append("".join(pieces) + ci_text)
            else:  # every run is evaluated by now: the first piece computes the last values
                streamed = itertools.chain([next(pieces, "")], pieces, [ci_text])
        # After the output is made: the notes reuse the summaries it computed (never with -Z, whose differ).
        unjudged_note(args, results, requested, note_name if several else None)
        del results
    names = given or (_run_names(sources) if log is not None else _run_id_names(sources, run_ids))
    if _reporting(args):
        _emit(trust_output(args, made, names))
        return EXIT_OK
    _emit(_finished(args, made, names, requested, columns, kind=kind, named=several or given is not None))
    for piece in streamed:
        _emit(piece)
    return EXIT_OK


def _finished(args: argparse.Namespace, made: list[Any], names: Sequence[str], requested: Sequence[Requested],
              columns: Sequence[Requested], *, kind: bool, named: bool) -> str:
    """The output of every run, now that the runs' names are known (the last run's trec lines excepted:
    they are written after this, as they are made)."""
    from ..report.text import runid_line, table_header, wide_table

    summary = not args.no_summary
    if args.format == "json":  # one document for one run; a list of them for several, each led by its name
        import json

        documents = [f'{{\n  "run": {json.dumps(name)},\n{text[2:]}' if named else text
                     for name, text in zip(names, made)]
        return (documents[0] if len(documents) == 1 else "[\n" + ",\n".join(documents) + "\n]") + "\n"
    if args.format not in _TABLE_FORMATS:  # trec_eval's lines; with several runs, each block opens with its runid
        if len(names) == 1:
            return "".join(made)
        heads = [runid_line(name, requested, per_query=args.per_query, summary=summary) for name in names]
        return "".join(head + text for head, text in zip(heads, [*made, ""]))
    from ..report import tables  # imported only for a table: csv costs start-up time that trec lines do not need

    if args.wide is not None:
        header, numeric, lines = wide_table(names, made, summary=summary, kind=kind)
        return tables.head(args.format, header, numeric) + tables.rows(args.format, lines, args.digits) + tables.tail(
            args.format)
    header, numeric = table_header(columns, per_query=args.per_query, kind=kind)
    if getattr(args, "ci", False):
        from ..report.intervals import ci_columns

        header += ci_columns(columns)
        numeric += [True] * len(ci_columns(columns))
    parts = [tables.head(args.format, header, numeric)]
    for name, lines in zip(names, made):
        for line in lines:
            line[0] = name
        parts.append(tables.rows(args.format, lines, args.digits))
    parts.append(tables.tail(args.format))
    return "".join(parts)


def _ci_options(args: argparse.Namespace) -> CiOptions | None:
    """The options of the intervals, or None without --ci (``demo`` has no --ci)."""
    if not getattr(args, "ci", False):
        return None
    from ..report.intervals import CiOptions

    return CiOptions(method=args.ci_method, level=args.ci_level, resamples=args.ci_resamples, seed=args.ci_seed)


def _json_with_ci(results: SetEvaluator, requested: Sequence[Requested], per_query: bool,
                  provenance: dict[str, object], ci: CiOptions) -> str:
    """JSON output with the ``ci`` object after ``aggregate``: each mean's interval."""
    import json

    from ..report.intervals import ci_json
    from ..report.text import json_document

    document = json_document(results, requested, per_query=per_query, summary=True, provenance=provenance)
    document["ci"] = ci_json(results, [r for r in requested if not r.measure.definition.text], ci)
    return json.dumps(document, indent=2, allow_nan=False)


def _provenance(args: argparse.Namespace, qrels: object, sources: Sequence[object], log: bool) -> dict[str, object]:
    """What JSON output records of how it was made: the version, the options and the inputs (paths as
    given; ``-`` for standard input)."""
    import os

    from .. import __version__

    def path(source: object) -> str:
        return os.fspath(source) if isinstance(source, (str, os.PathLike)) else "-"

    # Keyed by the options' own spellings; -c is what it means here: judged queries a run lacks count as 0.
    options = {"-m": [args.wide] if args.wide is not None else (args.measures or ["official"]),
               "-c": not args.skip_missing, "-l": args.level, "-M": args.max_depth, "-J": args.judged_only,
               "--order": args.order, "--duplicates": args.duplicates}
    for flag, name, default in (("-R", "rel_format", "qrels"), ("-Z", "zscores", None), ("-N", "collection_size", None)):
        if getattr(args, name, default) != default:  # recorded only when given, as --ci below
            options[flag] = getattr(args, name)
    if getattr(args, "ties", "trec_eval") != "trec_eval":  # (recorded only when given, as --ci below)
        options["--ties"] = args.ties
    if getattr(args, "ci", False):  # recorded only when given: the output without --ci is unchanged
        options |= {"--ci-method": args.ci_method, "--ci-level": args.ci_level,
                    "--ci-resamples": args.ci_resamples, "--ci-seed": args.ci_seed}
    inputs: dict[str, object] = ({"log": path(sources[0])} if log else
                                 {"qrels": path(qrels), "runs": [path(source) for source in sources]})
    return {"version": __version__, "options": options, "inputs": inputs}
