"""The input the commands share: standard input, the measures asked for, the qrels and runs read
(the next run on a thread meanwhile) and evaluated, the runs' names, and the notes on their query sets."""

from __future__ import annotations

import argparse
import math
import os
import re
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from ._output import _counted, _note, _preview, _short, _them, _Usage, _warn

if TYPE_CHECKING:  # imported for annotations only: the commands import lazily, to keep --help fast
    from ..engine.build import RunHandoff
    from ..evaluators.set import SetEvaluator
    from ..model import IntArray, QrelsColumns, RunColumns
    from ..report.text import Requested

def _stdin(option: str) -> object:
    """The binary standard input, for ``-`` as ``option``; closed stdin is a bad-input error."""
    from ..model import TrecFormatError

    stdin = sys.stdin
    if stdin is None or getattr(stdin, "closed", False):
        raise TrecFormatError(f"-: standard input is closed; expected {option} on standard input; got no stream")
    return getattr(stdin, "buffer", stdin)


def _sources(qrels: str, runs: Sequence[str]) -> tuple[object, list[object]]:
    """The qrels and runs to read: paths, or the binary standard input for ``-``."""
    return (_stdin("qrels") if qrels == "-" else qrels), [_stdin("a run") if run == "-" else run for run in runs]


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


def _as_typed(specs: Sequence[str] | None, requested: Sequence[Requested], level: int) -> list[Requested]:
    """``requested`` (from :func:`_requested`) in the order of the ``-m`` options, each named as typed.

    A measure comes at the place of the first ``-m`` that asks for it (a group's members in the
    group's order). One spelled in another tool's or ir_measures' syntax (``Recall@100``, ``mrr@10``)
    keeps that spelling; a trec_eval name keeps trec_eval's label (``P.5,10`` gives ``P_5``, ``P_10``).
    """
    from ..measures import parse_trec_options
    from ..report.text import Requested as _Requested

    specs = specs or ["official"]
    first: dict[tuple[object, str], tuple[int, str]] = {}
    for number, spec in enumerate(specs):
        alone = parse_trec_options([spec], rel=level)
        for measure, label in alone:
            typed = spec.strip() if len(alone) == 1 and label == str(measure) else ""
            first.setdefault((measure, label), (number, typed))
    placed = [(first.get((r.measure, r.label), (len(specs), ""))[0], i,
               _Requested(r.measure, r.label, first.get((r.measure, r.label), (0, ""))[1]))
              for i, r in enumerate(requested)]
    return [item for _, _, item in sorted(placed, key=lambda entry: entry[:2])]


#: The largest integer measure parameter (a cutoff): an int64, far beyond any ranking's depth.
_LARGEST_PARAMETER = 2**63 - 1


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


def _swap_hint(qrels: object, run: object) -> str | None:
    """A hint when QRELS looks like a run (6 fields or more) and RUN like qrels (4 fields); else None."""
    from ..io._parse import first_line_fields

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


def _read_judgments(qrels: Any, first_run: object, *, subtopics: bool, rel_format: str = "qrels") -> QrelsColumns:
    """The qrels, read once for every run; a qrels file that looks like a run gets the swap hint."""
    from ..io.formats import read_qrels_columns
    from ..model import TrecFormatError

    try:
        return read_qrels_columns(qrels, with_subtopics=subtopics, rel_format=rel_format)
    except TrecFormatError as exc:
        hint = _swap_hint(qrels, first_run)
        if hint and str(exc).startswith(f"{_name(qrels)}:"):
            raise TrecFormatError(f"{exc}; {hint}") from None
        raise


def _build_run(args: argparse.Namespace, judged: QrelsColumns, qrels: object, run: Any,
               columns: RunHandoff, preparing: _Preparing) -> SetEvaluator:
    """One run (``columns``, read from ``run``) evaluated against the judgments already read (the CLI's
    judging options applied), once their preparation is done."""
    from ..evaluators.options import RANKING_ORDERS
    from ..evaluators.set import SetEvaluator

    preparing.wait()
    # Nobody else holds the run just read: handed over, its columns are freed as the build uses them.
    results = SetEvaluator.from_columns(
        judged, columns, rel=args.level, max_depth=args.max_depth, judged_only=args.judged_only,
        duplicates=args.duplicates, complete=not args.skip_missing, order=RANKING_ORDERS[args.order],
        ties=getattr(args, "ties", "trec_eval"),
    )
    _check_overlap(results, qrels, run)
    return results


def _runs_read(args: argparse.Namespace, runs: Sequence[object]) -> Iterator[tuple[object, RunHandoff]]:
    """Each run with its columns, in order, handed over: nothing else holds them, so that the build
    frees each column once it is used.

    With several runs and several idle CPUs (see engine.threads.idle_cpus) the next run is read on a
    thread while the caller builds and scores this one: both are mostly NumPy loops, which release the GIL (ten robust-sized runs in one
    process: 0.76 s one after the other, 0.60 s so), at the cost of two runs' columns held at once.
    What a run read ahead warns is printed when its columns are taken, and its error raised then, so
    stderr reads as if the runs were read one after the other.
    """
    from ..engine import threads as _threads
    from ..engine.build import RunHandoff
    from ..io.formats import read_run_columns

    def read(run: object) -> _ReadAhead:
        return _ReadAhead.of(lambda: read_run_columns(run, with_ranks="rank" in (args.order, getattr(args, "ties", None))))  # type: ignore[arg-type]

    workers = 1 if len(runs) > 1 and _threads.idle_cpus() > 1 else 0
    for run, read_ahead in zip(runs, _threads.in_order(read, [(run,) for run in runs], workers)):
        handoff = RunHandoff(read_ahead.taken())
        del read_ahead
        yield run, handoff


class _Preparing:
    """The judgments made ready for joining with runs (grouped by query, checked for repeats, indexed:
    0.6 s for 10 M sessions' judgments), on a thread of their own while the first run is read, when
    the process has several idle CPUs. Each run's build uses what this made (the readers' read-only
    columns are prepared once for every run); an error in it is raised by :meth:`wait`, before the
    first build, so after a first run that cannot be read, as when the build prepared them itself."""

    def __init__(self, args: argparse.Namespace, judged: QrelsColumns) -> None:
        from ..engine import threads as _threads
        from ..engine.judgments import prepared_qrels

        self.error: BaseException | None = None
        self.thread: threading.Thread | None = None
        if _threads.idle_cpus() > 1:
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


def _show_warning(message: Warning | str, category: type[Warning], *_: object, **__: object) -> None:
    """warnings.showwarning for the CLI: one plain line on stderr, no source location; held back, on
    a thread reading a run ahead, until that run is taken (see _runs_read)."""
    held = getattr(_ReadAhead.held, "messages", None)
    if held is not None:
        held.append(str(message))
    else:
        _warn(str(message))


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


def _names(args: argparse.Namespace, runs: Sequence[object], run_ids: Sequence[str]) -> list[str]:
    """The runs' names in every command: --names, else as :func:`_run_id_names` names them (each
    run by its run_id), once the runs are read. Call ``_given_names`` before reading, to check --names."""
    return _given_names(args, len(runs)) or _run_id_names(runs, run_ids)


def _given_names(args: argparse.Namespace, count: int) -> list[str] | None:
    """--names A,B,... checked against ``count`` runs (every name given, none twice); None without it."""
    if args.names is None:
        return None
    names: list[str] = args.names.split(",")
    if not all(name.strip() for name in names):
        raise _Usage(f"--names: every run needs a name; got {_short(args.names)}")
    if len(names) != count:
        raise _Usage(f"--names gives {_counted(len(names), 'name', 'names')} for {_counted(count, 'run', 'runs')}")
    if len(set(names)) != len(names):
        raise _Usage("two runs have the same name; name them with --names a,b,...")
    return names


def _run_id_names(runs: Sequence[object], run_ids: Sequence[str]) -> list[str]:
    """evaluate's names of the runs: each run's run_id (the 6th field of its lines; the last line's).

    A run without one (an empty file), or whose run_id another run shares, is named by its file name
    (see :func:`_run_names`); a run read from standard input or a process substitution
    (``/dev/fd/63``), whose path names nothing, by its run_id (``run`` without one) and its place
    among the runs: ``bm25#2``.
    """
    files = _run_names(runs)
    shared = {run_id for run_id in run_ids if run_ids.count(run_id) > 1}
    names = []
    for number, (run, run_id, file) in enumerate(zip(runs, run_ids, files), 1):
        if run_id and run_id not in shared:
            names.append(run_id)
        elif isinstance(run, (str, os.PathLike)) and os.fspath(run) != "-" and not _DESCRIPTOR_FOLDER.fullmatch(
                os.path.dirname(os.fspath(run))):
            names.append(file)
        else:
            names.append(f"{run_id or 'run'}#{number}")
    if len(set(names)) != len(names):  # a file named as another run's run_id
        names = [f"{name}#{number}" for number, name in enumerate(names, 1)]
    return names


def _load_runs(args: argparse.Namespace, qrels: object, runs: Sequence[object],
               requested: Sequence[Requested]) -> list[SetEvaluator]:
    """Every run evaluated against the qrels, read once."""
    judged = _read_judgments(qrels, runs[0],
                             subtopics=any(item.measure.definition.subtopics for item in requested))
    preparing = _Preparing(args, judged)
    return [_build_run(args, judged, qrels, run, columns, preparing) for run, columns in _runs_read(args, runs)]


def _report_query_set(
    args: argparse.Namespace, results: SetEvaluator, requested: Sequence[Requested], run: str | None = None,
) -> None:
    """The note: and warning: lines about the query set on stderr (all of them silenced by --quiet).

    With several runs, ``run`` names the run each line is about."""
    import numpy as np

    from ..evaluators.results import rows_left_out, rows_only_unjudged, rows_without_relevant

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
    # The queries are found as positions, and only the few each line names are made into text: a log
    # of a million sessions has hundreds of thousands without a click.
    unjudged = rows_only_unjudged(results)
    if len(unjudged):
        _warn(about + f"{_counted(len(unjudged), 'query has', 'queries have')} only negative judgments (pooled but "
              f"never judged), so every measure is 0 for {_them(unjudged)}: {_named(results, unjudged)}")
    no_relevant = np.setdiff1d(rows_without_relevant(results), unjudged, assume_unique=True)
    if len(no_relevant) and getattr(args, "rel_format", "qrels") == "qrels":  # (a preference needs no relevant document)
        zero = _zero_for(results, requested, no_relevant)
        so = f", so {_preview(zero)} {'is' if len(zero) == 1 else 'are'} 0 for {_them(no_relevant)}" if zero else ""
        _warn(about + f"{_counted(len(no_relevant), 'query has', 'queries have')} no relevant judgment (relevance >= "
              f"{args.level}){so}: {_named(results, no_relevant)}")
    for item in requested:
        left_out = rows_left_out(results, item.measure)
        if len(left_out):
            one = len(left_out) == 1
            _note(about + f"{item.label}: {len(left_out)} of {_counted(len(results), 'query', 'queries')} "
                  f"{'has' if one else 'have'} only relevant or only non-relevant documents and "
                  f"{'is' if one else 'are'} left out of its summary: {_named(results, left_out)}")


def _named(results: SetEvaluator, rows: IntArray) -> str:
    """:func:`_preview` of the ids of the queries at ``rows``."""
    from ..evaluators.results import texts_at

    return _preview(texts_at(results, rows[:5]), total=len(rows))


def _zero_for(results: SetEvaluator, requested: Sequence[Requested], rows: IntArray) -> list[str]:
    """The requested per-query scores (not counts) whose value is 0 for every query at ``rows``.

    Only those are named in the warning: a graded measure (nDCG) uses the grades whatever ``-l``
    says, so it need not be 0 on a query with no judgment >= ``-l``.
    """
    import numpy as np

    # Counts (num_rel) are 0 by definition here: not news. A weighted mean (AUC, GAUC, Accuracy) leaves
    # these queries out of its summary, and its own note says so; a pooled one (PooledAUC) counts their rows.
    scores = [item for item in requested
              if not (item.measure.definition.text or item.measure.definition.summary_only
                      or item.measure.definition.integer or item.measure.definition.aggregate in ("weighted", "pooled"))]
    return [item.label for item in scores if not np.any(results.array(item.measure)[rows])]
