"""A baseline kept as a file: what a run scored, per query, and on what it was scored.

``retrieval-eval baseline save`` writes one; ``retrieval-eval check`` gates a new run against it
without the old run file. The document is JSON, versioned by ``format`` and ``format_version``; its
fields are described in docs/gating.md. A baseline is only compared with a run scored on the same
qrels (the same bytes) with the same options: :meth:`Baseline.differences` says what differs.

>>> from retrieval_eval import SetEvaluator
>>> results = SetEvaluator.from_dict({"q1": {"a": 1}, "q2": {"b": 1}}, {"q1": {"a": 1.0}, "q2": {"x": 1.0}})
>>> kept = Baseline.create(results, measures=["P@1", "AP"])
>>> kept.summary, kept.values("AP")
({'P@1': 0.5, 'AP': 0.5}, {'q1': 1.0, 'q2': 0.0})
>>> Baseline.from_json(kept.to_json()) == kept
True
"""

from __future__ import annotations

import datetime
import hashlib
import json
import os
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from ..evaluators.set import SetEvaluator
from ..measures import Measure, parse, parse_list
from ..model import InputFormatError, RetrievalEvalError

__all__ = ["FORMAT", "FORMAT_VERSION", "Baseline", "FileStamp", "file_sha256"]

FORMAT = "retrieval-eval-baseline"
#: The version this code writes and the newest it reads. A reader refuses a newer one rather than
#: misread fields it does not know.
FORMAT_VERSION = 1

#: The scoring options a baseline records, with the values SetEvaluator.from_trec uses by default.
OPTION_DEFAULTS: dict[str, Any] = {"rel": 1, "complete": True, "judged_only": False, "max_depth": None,
                                   "order": "score", "duplicates": "error", "ties": "trec_eval"}
#: Options a baseline file holds only when they differ from their default (added after format 1 was
#: out: files of the default stay as earlier versions wrote and read them).
_WRITTEN_IF_SET = ("ties",)


def file_sha256(path: str | os.PathLike[str]) -> str:
    """The SHA-256 of a file's bytes, in hex: the file as stored (a .gz file's compressed bytes)."""
    digest = hashlib.sha256()
    with open(path, "rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


@attrs.frozen
class FileStamp:
    """A file a baseline was made from: its name (the base name, as given) and the SHA-256 of its bytes."""

    name: str
    sha256: str

    @classmethod
    def of(cls, path: str | os.PathLike[str]) -> FileStamp:
        return cls(os.path.basename(os.fspath(path)), file_sha256(path))


@attrs.frozen
class Baseline:
    """Per-query values and means of some measures for one run, with what they were scored on.

    ``measures`` maps each measure's canonical string (the key of ``per_query`` and ``summary``) to
    the spelling it was asked for with; ``per_query[m]`` lists a value per query of ``queries``.
    """

    queries: tuple[str, ...]
    measures: Mapping[str, str]
    per_query: Mapping[str, tuple[float, ...]]
    summary: Mapping[str, float]
    options: Mapping[str, Any] = attrs.field(factory=lambda: dict(OPTION_DEFAULTS))
    qrels: FileStamp | None = None
    run: FileStamp | None = None
    package_version: str = ""
    created: str = ""

    @classmethod
    def create(cls, results: SetEvaluator, *, measures: Sequence[str | Measure],
               qrels_path: str | os.PathLike[str] | None = None, run_path: str | os.PathLike[str] | None = None,
               options: Mapping[str, Any] | None = None, package_version: str | None = None) -> Baseline:
        """The baseline of ``results`` on ``measures``; ``qrels_path`` and ``run_path`` are hashed, and
        ``options`` (the keys of :data:`OPTION_DEFAULTS`; those left out keep their default) recorded,
        with ``package_version`` (by default the installed distribution's version).

        Only measures summarised by their arithmetic mean: a gate compares means and per-query
        differences, which a sum (num_ret) or a geometric mean (GMAP) does not have.
        """
        unknown = set(options or {}) - set(OPTION_DEFAULTS)
        if unknown:
            raise RetrievalEvalError(f"unknown baseline options: {', '.join(sorted(unknown))}")
        chosen = {**OPTION_DEFAULTS, "rel": results.rel, **(options or {})}
        named: dict[str, str] = {}
        for measure, label in parse_list(list(measures), rel=chosen["rel"], numeric=True):
            _require_mean(measure, label)
            named.setdefault(str(measure), label)
        if not named:
            raise RetrievalEvalError("a baseline needs at least one measure")
        if not results.query_ids:
            raise RetrievalEvalError("a baseline needs at least one query; the run was evaluated on none")
        per_query = {key: tuple(float(v) for v in results.array(key)) for key in named}
        return cls(
            queries=tuple(results.query_ids), measures=named, per_query=per_query,
            summary={key: results.aggregate(key) for key in named}, options=chosen,
            qrels=None if qrels_path is None else FileStamp.of(qrels_path),
            run=None if run_path is None else FileStamp.of(run_path), package_version=_installed_version() if package_version is None else package_version,
            created=datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0).isoformat(),
        )

    def values(self, measure: str | Measure) -> dict[str, float]:
        """``measure``'s value per query (any spelling of a measure the baseline holds)."""
        return dict(zip(self.queries, self.per_query[self.key(measure)]))

    def key(self, measure: str | Measure) -> str:
        """The canonical string of ``measure`` as this baseline holds it; an error naming those it holds."""
        try:
            key = str(parse(measure, rel=self.options["rel"]))
        except RetrievalEvalError as exc:
            raise RetrievalEvalError(f"cannot read the measure {str(measure)[:60]!r}: {exc}") from None
        if key not in self.per_query:
            raise RetrievalEvalError(f"the baseline has no values of {measure} (as {key}); it holds "
                                     f"{', '.join(self.per_query)}")
        return key

    def differences(self, *, qrels: FileStamp | None, options: Mapping[str, Any]) -> list[str]:
        """What differs between how this baseline was scored and ``qrels``/``options``, one phrase each;
        empty when they agree. A qrels stamp of None (not known) is not compared."""
        found = []
        if qrels is not None and self.qrels is not None and qrels.sha256 != self.qrels.sha256:
            found.append(f"the qrels: {qrels.name} (sha256 {qrels.sha256[:12]}) is not the baseline's "
                         f"{self.qrels.name} (sha256 {self.qrels.sha256[:12]})")
        for name, default in OPTION_DEFAULTS.items():
            theirs, ours = options.get(name, default), self.options.get(name, default)
            if theirs != ours:
                found.append(f"option {name}: {_shown(theirs)}, the baseline has {_shown(ours)}")
        return found

    # ------------------------------------------------------------------ the file
    def to_dict(self) -> dict[str, Any]:
        """The JSON document (documented field by field in docs/gating.md)."""
        return {
            "format": FORMAT, "format_version": FORMAT_VERSION, "created": self.created,
            "package_version": self.package_version,
            "qrels": None if self.qrels is None else attrs.asdict(self.qrels),
            "run": None if self.run is None else attrs.asdict(self.run),
            "options": {k: v for k, v in self.options.items() if k not in _WRITTEN_IF_SET or v != OPTION_DEFAULTS[k]},
            "measures": [{"canonical": key, "typed": typed} for key, typed in self.measures.items()],
            "queries": list(self.queries),
            "summary": dict(self.summary),
            "per_query": {key: list(values) for key, values in self.per_query.items()},
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=1, allow_nan=False) + "\n"

    def write(self, path: str | os.PathLike[str]) -> None:
        """Write the baseline to ``path`` whole or not at all (:func:`retrieval_eval.io.files.replacing`)."""
        from ..io.files import replacing

        with replacing(path) as out:
            out.write(self.to_json().encode("utf-8"))

    @classmethod
    def read(cls, path: str | os.PathLike[str]) -> Baseline:
        """Read a baseline file; :class:`InputFormatError` (``path: expected ..., found ...``) for a file
        that is not one, is from a newer version of the format, or is damaged."""
        name = os.fspath(path)
        try:
            with open(path, "rb") as stream:
                data = stream.read()
        except OSError as exc:
            raise InputFormatError(f"{name}: cannot read the baseline: {exc.strerror or exc}") from None
        return cls.from_json(data, name=name)

    @classmethod
    def from_json(cls, text: str | bytes, *, name: str = "<baseline>") -> Baseline:
        try:
            document = json.loads(text)
        except (ValueError, UnicodeDecodeError) as exc:
            raise InputFormatError(f"{name}: expected a baseline (a JSON document), found text that is not "
                                   f"JSON ({str(exc)[:80]})") from None
        return _parsed(document, name)


def _installed_version() -> str:
    """The version of the installed retrieval-evaluator distribution ("unknown" when run from a bare source tree)."""
    from importlib import metadata

    try:
        return metadata.version("retrieval-evaluator")
    except metadata.PackageNotFoundError:
        return "unknown"


def _require_mean(measure: Measure, label: str) -> None:
    if measure.definition.aggregate != "mean":
        raise RetrievalEvalError(f"{label}: a baseline keeps measures summarised by their mean; the summary of "
                                 f"{measure.definition.name} is not (it is a {measure.definition.aggregate})")


def _shown(value: object) -> str:
    return "none" if value is None else str(value).lower() if isinstance(value, bool) else str(value)


def _parsed(document: object, name: str) -> Baseline:
    """The Baseline a decoded JSON document describes, every field checked."""
    def fail(expected: str, found: object) -> InputFormatError:
        shown = found if isinstance(found, str) and found.startswith("(") else repr(found)[:60]
        return InputFormatError(f"{name}: expected {expected}, found {shown}")

    if not isinstance(document, dict) or document.get("format") != FORMAT:
        found = document.get("format") if isinstance(document, dict) else f"({type(document).__name__})"
        raise fail(f"a baseline (\"format\": \"{FORMAT}\")", found)
    version = document.get("format_version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise fail("\"format_version\" a whole number >= 1", version)
    if version > FORMAT_VERSION:
        raise fail(f"format_version {FORMAT_VERSION} or older (written by a newer retrieval-eval: upgrade it)",
                   version)
    queries = document.get("queries")
    if not isinstance(queries, list) or not queries or not all(isinstance(q, str) for q in queries):
        raise fail("\"queries\": a non-empty list of query ids", "(another value)")
    if len(set(queries)) != len(queries):
        raise fail("\"queries\" without repeats", "(a query listed twice)")
    entries = document.get("measures")
    if not isinstance(entries, list) or not entries or not all(
            isinstance(e, dict) and isinstance(e.get("canonical"), str) and isinstance(e.get("typed"), str)
            for e in entries):
        raise fail("\"measures\": a list of {\"canonical\": ..., \"typed\": ...}", "(another value)")
    measures = {e["canonical"]: e["typed"] for e in entries}
    per_query, summary = document.get("per_query"), document.get("summary")
    if not isinstance(per_query, dict) or not isinstance(summary, dict):
        raise fail("\"per_query\" and \"summary\" objects", "(another value)")
    values: dict[str, tuple[float, ...]] = {}
    for key in measures:
        column, mean = per_query.get(key), summary.get(key)
        if not isinstance(column, list) or len(column) != len(queries) or not all(_is_number(v) for v in column):
            raise fail(f"\"per_query\" {key}: a number per query ({len(queries)})", "(another value)")
        if not _is_number(mean):
            raise fail(f"\"summary\" {key}: a number", mean)
        values[key] = tuple(float(v) for v in column)
    options = document.get("options")
    if not isinstance(options, dict) or set(options) - set(OPTION_DEFAULTS):
        raise fail(f"\"options\": an object with keys among {', '.join(OPTION_DEFAULTS)}", options)
    return Baseline(
        queries=tuple(queries), measures=measures, per_query=values,
        summary={key: float(summary[key]) for key in measures}, options={**OPTION_DEFAULTS, **options},
        qrels=_stamp(document.get("qrels"), "qrels", fail), run=_stamp(document.get("run"), "run", fail),
        package_version=str(document.get("package_version", "")), created=str(document.get("created", "")),
    )


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _stamp(value: object, field: str, fail: Any) -> FileStamp | None:
    if value is None:
        return None
    if not (isinstance(value, dict) and isinstance(value.get("name"), str) and isinstance(value.get("sha256"), str)):
        raise fail(f"\"{field}\": {{\"name\": ..., \"sha256\": ...}} or null", value)
    return FileStamp(value["name"], value["sha256"])
