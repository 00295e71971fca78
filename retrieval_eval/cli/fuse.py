"""``retrieval-eval fuse``: several runs fused into one, optionally tuned, evaluated and compared."""

from __future__ import annotations

import argparse
import os
from typing import TYPE_CHECKING, Any

from ._options import _Parser, _RawDescriptionFormatter
from ._output import EXIT_OK, _emit, _note, _short, _Usage
from .baseline import check_output

if TYPE_CHECKING:
    from ..analysis.fusion import Candidates, FusionMethod
    from ..model import QrelsColumns, RunColumns

_FUSE_HELP = """\
Fuse several runs into one (hybrid search: BM25 with a dense retriever, say) and write it as a TREC
run, tagged with the method and the inputs, with a JSON file beside it saying how it was made.

Methods (--method, default rrf): score combinations (combsum, combmnz, combanz, combmax, combmin,
combmed, combgmnz, wsum, wmnz, mixed), each after a normalisation (--norm: min-max (default), max,
sum, zmuv, rank, borda, none); rank combinations (rrf, isr, log_isr, logn_isr, rbc, bordafuse,
w_bordafuse, condorcet, w_condorcet); and methods that learn from judgments (posfuse, probfuse,
segfuse, slidefuse, bayesfuse), which need --qrels and the queries to learn from. A method's other
parameters: --param NAME=VALUE (k=60, phi=0.8, gamma=1.5, sigma=0.01, w=3, n_segments=25).

FLAGR's rank aggregation, checked against pyflagr: flagr-combsum, flagr-combmnz, flagr-borda,
flagr-simple-borda, flagr-condorcet, flagr-copeland, flagr-outranking, flagr-mc1, flagr-mc2,
flagr-mc3, flagr-mc4, flagr-mct, flagr-kemeny (queries of a few documents only), flagr-rra,
flagr-prefrel, flagr-agglomerative and flagr-dibra, with pyflagr's parameter names as --param.

Tuning: --optimize searches the weights (and RRF's k) for the first -m measure, on a grid (--step)
or a seeded random sample (--search random --trials N --seed S). Weights learnt on some queries are
reported on others: --folds K (K-fold cross-validation, each fold fused with what the other folds
taught; the assignment is seeded and recorded), or --train-queries FILE (learn on those, report on
the rest). Learning and reporting on the same queries needs --tune-on-test, and the output says so.

--compare (with --qrels and -m) evaluates the inputs and the fused run on the reported queries and
tests the fused run and every input against the best input, as compare does. See docs/fusion.md."""


def add_parser(commands: argparse._SubParsersAction[_Parser]) -> None:
    fuse = commands.add_parser("fuse", help="fuse runs into one (RRF, CombSUM, ...), tune, evaluate and compare",
                               description=_FUSE_HELP, formatter_class=_RawDescriptionFormatter)
    fuse.add_argument("runs", metavar="RUN", nargs="+", help="run files, in any format evaluate reads (two or more)")
    fuse.add_argument("-o", "--output", required=True, metavar="FUSED", help="the fused run (TREC) to write")
    fuse.add_argument("--metadata", metavar="JSON", help="how the run was made (default: FUSED.json)")
    fuse.add_argument("--method", default="rrf", help="fusion method (default rrf): see above")
    fuse.add_argument("--norm", default=None, help="normalisation of a score combination (default min-max)")
    fuse.add_argument("--weights", metavar="W1,W2,...", help="one weight per run (wsum, wmnz, mixed, w_bordafuse, w_condorcet)")
    fuse.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                      help="another parameter of the method (repeatable): k=60 for rrf, phi, gamma, sigma, w, ...")
    fuse.add_argument("--depth", type=int, default=1000, metavar="N",
                      help="documents kept per query in the fused run (default 1000; 0 keeps all)")
    fuse.add_argument("--names", metavar="A,B,...", help="names of the runs in the tag (default: their run ids)")
    fuse.add_argument("--qrels", metavar="QRELS", help="judgments: for --compare, --optimize and the trained methods")
    fuse.add_argument("-m", dest="measures", action="append", default=None, metavar="MEASURE",
                      help="measure to report and compare (repeatable; the first is tuned for; default nDCG@10)")
    fuse.add_argument("--compare", action="store_true", help="evaluate inputs and fused run and test them")
    fuse.add_argument("--test", choices=("t", "wilcoxon", "sign", "permutation", "bootstrap"), default="t",
                      help="paired significance test of --compare (default t)")
    fuse.add_argument("--alpha", type=float, default=0.05, help="significance level (default 0.05)")
    fuse.add_argument("--optimize", action="store_true", help="tune the weights (and RRF's k) for the first -m measure")
    fuse.add_argument("--search", choices=("grid", "random"), default="grid", help="how --optimize searches (default grid)")
    fuse.add_argument("--step", type=float, default=0.1, help="weight grid step (default 0.1; the weights sum to 1)")
    fuse.add_argument("--trials", type=int, default=100, help="configurations of --search random (default 100)")
    fuse.add_argument("--seed", type=int, default=0, help="seed of the folds, random search and tests (default 0)")
    held = fuse.add_mutually_exclusive_group()
    held.add_argument("--folds", type=int, metavar="K", help="K-fold cross-validation of tuning and training")
    held.add_argument("--train-queries", metavar="FILE", help="queries to tune and train on, one id a line")
    held.add_argument("--tune-on-test", action="store_true",
                      help="tune/train and report on the same queries (optimistic; the output says so)")


def _parsed_value(text: str) -> Any:
    for convert in (int, float):
        try:
            return convert(text)
        except ValueError:
            pass
    return None if text.lower() == "none" else text


def _fixed_params(args: argparse.Namespace, method: FusionMethod, n_runs: int) -> dict[str, Any]:
    """The method's parameters given on the command line, checked against its signature."""
    params: dict[str, Any] = {}
    for item in args.param:
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise _Usage(f"--param: expected NAME=VALUE, found {_short(item)}")
        params[name.strip()] = _parsed_value(value.strip())
    if args.norm is not None:
        params["norm"] = args.norm
    if args.weights is not None:
        try:
            params["weights"] = tuple(float(w) for w in args.weights.split(","))
        except ValueError:
            raise _Usage(f"--weights: expected numbers separated by commas, found {_short(args.weights)}") from None
        if len(params["weights"]) != n_runs:
            raise _Usage(f"--weights: expected {n_runs} weights, one per run; found {len(params['weights'])}")
    unknown = sorted(set(params) - set(method.params) - {"qrels", "train_queries"})
    if unknown:
        known = ", ".join(sorted(p for p in method.params if p not in ("qrels", "train_queries"))) or "none"
        raise _Usage(f"fusion method {method.name} takes no parameter {unknown[0]!r}; its parameters: {known}")
    return params


def _check_options(args: argparse.Namespace, method: FusionMethod) -> None:
    """Every option checked before a file is read."""
    if len(args.runs) < 2:
        raise _Usage("fuse needs at least two runs")
    if "-" in args.runs or args.qrels == "-":
        raise _Usage("fuse reads files, not standard input: name each file")
    trained = method.family == "trained"
    learns = args.optimize or trained
    if (args.compare or learns) and args.qrels is None:
        raise _Usage(f"{'--compare' if args.compare else ('--optimize' if args.optimize else method.name)} needs --qrels")
    if learns and args.folds is None and args.train_queries is None and not args.tune_on_test:
        raise _Usage("weights and probabilities learnt on some queries must be reported on others: "
                     "give --folds K or --train-queries FILE (or --tune-on-test to learn and report on the same queries)")
    if not learns and (args.folds is not None or args.train_queries is not None or args.tune_on_test):
        raise _Usage("--folds, --train-queries and --tune-on-test go with --optimize or a trained method")
    if args.depth < 0:
        raise _Usage(f"--depth: expected an int >= 0, found {args.depth}")
    metadata = args.metadata or args.output + ".json"
    inputs = [*args.runs, *(p for p in (args.qrels, args.train_queries) if p)]
    check_output(args.output, inputs, what="-o")
    check_output(metadata, [*inputs, args.output], what="--metadata")


def _read_ids(path: str) -> list[str]:
    """Query ids, one a line; an empty line is an error naming it."""
    from ..model import TrecFormatError

    ids = []
    with open(path, encoding="utf-8", errors="surrogateescape") as file:
        for number, line in enumerate(file, start=1):
            text = line.strip()
            if not text or len(text.split()) != 1:
                raise TrecFormatError(f"{path}:{number}: expected one query id, found {line.rstrip()!r}")
            ids.append(text)
    return ids


def run(args: argparse.Namespace) -> int:
    from ..analysis.fusion import FusionError, candidates_from_runs, get_method
    from ..analysis.fusion.output import metadata_json, write_trec
    from ..analysis.fusion.registry import ranked_run, run_tag
    from ..io.files import replacing
    from ..io.formats import read_qrels_columns, read_run_columns

    try:
        method = get_method(args.method)
    except FusionError as error:
        raise _Usage(str(error)) from None
    _check_options(args, method)
    measures = args.measures or ["nDCG@10"]
    names = args.names.split(",") if args.names else None
    if names is not None and len(names) != len(args.runs):
        raise _Usage(f"--names: expected {len(args.runs)} names, one per run; found {len(names)}")
    fixed = _fixed_params(args, method, len(args.runs))
    runs = [read_run_columns(path) for path in args.runs]
    c = candidates_from_runs(runs, names)
    qrels = read_qrels_columns(args.qrels) if args.qrels else None
    metadata: dict[str, Any] = {
        "method": method.name, "params": {k: v for k, v in {**method.params, **fixed}.items()
                                          if k not in ("qrels", "train_queries")}, "inputs": [
            {"path": os.path.abspath(path), "name": name} for path, name in zip(args.runs, c.run_names)],
        "depth": args.depth or None, "tag": run_tag(method.name, c.run_names),
    }
    scores, reported = _fused_scores(args, method, c, qrels, fixed, measures[0], metadata)
    fused = ranked_run(c, scores, metadata["tag"], args.depth or None)
    with replacing(args.output) as out:
        write_trec(out, fused)
    with replacing(args.metadata or args.output + ".json") as out:
        out.write(metadata_json(metadata))
    _note(f"fuse: wrote {len(fused.doc_ids)} lines for {c.n_queries} queries to {args.output} ({metadata['tag']})")
    if args.compare and qrels is not None:
        _emit(_comparison(args, runs, fused, c, qrels, reported, measures, metadata))
    return EXIT_OK


def _fused_scores(args: argparse.Namespace, method: FusionMethod, c: Candidates, qrels: QrelsColumns | None,
                  fixed: dict[str, Any], measure: str, metadata: dict[str, Any]) -> tuple[Any, Any]:
    """The fused scores, and the mask of queries a report may use (None: every query)."""
    import numpy as np

    from ..analysis.fusion.tuning import configurations, cross_validate, tune

    trained = method.family == "trained"
    if not (args.optimize or trained) or qrels is None:
        return method(c, **fixed), None
    configs = (configurations(method, c.n_runs, search=args.search, step=args.step, trials=args.trials,
                              seed=args.seed) if args.optimize else [])
    metadata["tuning"] = {"measure": measure, "search": args.search if args.optimize else None,
                          "configurations": len(configs)}
    if args.folds is not None:
        cv = cross_validate(c, method, qrels, measure, args.folds, args.seed, configs, fixed, args.depth or None,
                            trained=trained)
        metadata["tuning"].update(folds=args.folds, seed=args.seed, fold_of_query={
            q.decode("utf-8", "surrogateescape"): int(f) for q, f in zip(c.query_ids.tolist(), cv.fold.tolist())},
            per_fold=[{"params": t.params, "train_mean": t.value, "held_out_mean": h}
                      for t, h in zip(cv.tuned, cv.held_out)], reported_on="held-out queries (each fold's own)")
        return cv.scores, cv.fold >= 0
    judged = np.isin(c.query_ids, np.asarray(qrels.query_ids))
    if args.train_queries is not None:
        wanted = [q.encode("utf-8", "surrogateescape") for q in _read_ids(args.train_queries)]
        train = np.isin(c.query_ids, np.array(wanted, dtype=object)) & judged
        report = judged & ~train
        metadata["tuning"].update(train_queries=int(train.sum()), reported_on="queries not in --train-queries")
    else:
        train, report = judged, judged
        metadata["tuning"].update(train_queries=int(train.sum()),
                                  reported_on="the same queries it was tuned on (--tune-on-test): optimistic")
    if not bool(train.any()):
        raise _Usage("no judged query to learn from: the training queries have no judgments in QRELS")
    params = dict(fixed)
    if trained:
        params.update(qrels=qrels, train_queries=c.query_ids[train].tolist())
    if configs:
        best = tune(c, method, qrels, measure, train, configs, params, args.depth or None)
        params.update(best.params)
        metadata["tuning"].update(best=best.params, train_mean=best.value)
    metadata["params"].update({k: v for k, v in params.items() if k not in ("qrels", "train_queries")})
    return method(c, **params), report


def _comparison(args: argparse.Namespace, runs: list[RunColumns], fused: RunColumns, c: Candidates,
                qrels: QrelsColumns, reported: Any, measures: list[str], metadata: dict[str, Any]) -> str:
    """The inputs and the fused run evaluated on the reported queries, each tested against the best input."""
    import numpy as np

    from ..analysis.comparison import compare
    from ..analysis.fusion.tuning import _judged
    from ..evaluators.set import SetEvaluator

    queries = c.query_ids if reported is None else c.query_ids[reported]
    judged = _judged(qrels, queries)
    evaluators = {name: SetEvaluator.from_columns(judged, run) for name, run in zip(c.run_names, runs)}
    first = measures[0]
    best = max(evaluators, key=lambda name: float(np.mean(evaluators[name].array(first))))
    fused_name = "fused:" + metadata["tag"]
    evaluators[fused_name] = SetEvaluator.from_columns(judged, fused)
    result = compare(None, {best: evaluators[best], fused_name: evaluators[fused_name],
                            **{n: e for n, e in evaluators.items() if n not in (best, fused_name)}},
                     measures, baseline=best, test=args.test, alpha=args.alpha, seed=args.seed)
    where = metadata.get("tuning", {}).get("reported_on", "every judged query")
    header = (f"# fused run {fused_name} against the best input, {best} (by {first}); "
              f"reported on {len(np.unique(np.asarray(judged.query_ids)))} queries: {where}\n")
    return header + result.to_table(4)
