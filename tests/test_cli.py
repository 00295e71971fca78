"""The command line, in process (``main(argv)``) and once end to end as real processes."""

from __future__ import annotations

import errno
import gzip
import importlib.util
import io
import json
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from retrieval_eval.cli import main

QRELS = "q1 0 a 1\nq1 0 b 0\nq1 0 c 2\nq2 0 x 1\nq3 0 y 1\n"
RUN = "q1 Q0 b 1 3.0 mine\nq1 Q0 c 2 2.0 mine\nq1 Q0 a 3 1.0 mine\nq2 Q0 x 1 1.0 mine\nq4 Q0 z 1 1.0 mine\n"


@pytest.fixture
def files(write) -> tuple[str, str]:
    return write("qrels", QRELS), write("run", RUN)


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_selected_measures_in_trec_order(capsys, files) -> None:
    """-m order does not matter: lines come in trec_eval's table order; no runid unless asked."""
    code, out, _ = _run(capsys, "evaluate", "-m", "P.2", "-m", "map", *files)
    assert code == 0
    assert out.splitlines() == ["map                   \tall\t0.5278", "P_2                   \tall\t0.3333"]


def test_per_query_then_summary(capsys, files) -> None:
    _, out, err = _run(capsys, "evaluate", "-q", "-m", "num_ret", "-m", "recip_rank", *files)
    assert [line.split() for line in out.splitlines()] == [
        ["num_ret", "q1", "3"], ["recip_rank", "q1", "0.5000"],
        ["num_ret", "q2", "1"], ["recip_rank", "q2", "1.0000"],
        ["num_ret", "q3", "0"], ["recip_rank", "q3", "0.0000"],
        ["num_ret", "all", "4"], ["recip_rank", "all", "0.5000"],
    ]
    assert "1 judged query has no results; scored as empty rankings (as trec_eval -c): q3" in err
    assert "1 run query has no judgments and is ignored: q4" in err


def test_c_flag_silences_the_missing_query_note(capsys, files) -> None:
    _, _, err = _run(capsys, "evaluate", "-c", "-m", "map", *files)
    assert "have no results" not in err and "has no results" not in err


def test_skip_missing_averages_over_the_intersection(capsys, files) -> None:
    _, out, err = _run(capsys, "evaluate", "--skip-missing", "-m", "num_q", "-m", "recip_rank", *files)
    assert out.split() == ["num_q", "all", "2", "recip_rank", "all", "0.7500"]
    assert "left out of the means" in err


def test_ir_measures_names_keep_their_spelling(capsys, files) -> None:
    _, out, _ = _run(capsys, "evaluate", "-m", "nDCG@10", "-m", "AP", "-m", "P@2", "-m", "RR", *files)
    assert [line.split()[0] for line in out.splitlines()] == ["AP", "RR", "P@2", "nDCG@10"]


def test_level_and_depth_and_judged_only(capsys, files) -> None:
    _, out, _ = _run(capsys, "evaluate", "-q", "-l2", "-m", "num_rel", *files)
    assert out.split()[:3] == ["num_rel", "q1", "1"]
    _, out, _ = _run(capsys, "evaluate", "-q", "-M1", "-m", "num_ret", *files)
    assert out.split()[:3] == ["num_ret", "q1", "1"]
    _, out, _ = _run(capsys, "evaluate", "-q", "-J", "-m", "num_ret", "-m", "P.1", *files)
    assert out.split()[:6] == ["num_ret", "q1", "3", "P_1", "q1", "0.0000"]


def test_no_summary_and_digits(capsys, files) -> None:
    _, out, _ = _run(capsys, "evaluate", "-q", "-n", "--digits", "2", "-m", "map", *files)
    assert out.split() == ["map", "q1", "0.58", "map", "q2", "1.00", "map", "q3", "0.00"]


def test_json_keeps_full_precision(capsys, files) -> None:
    _, out, _ = _run(capsys, "evaluate", "-q", "--format", "json", "-m", "map", "-m", "nDCG@10", "-m", "official", *files)
    report = json.loads(out)
    assert report["aggregate"]["map"] == pytest.approx(((1 / 2 + 2 / 3) / 2 + 1 + 0) / 3, abs=1e-15)
    assert report["per_query"]["q1"]["map"] == pytest.approx((1 / 2 + 2 / 3) / 2, abs=1e-15)
    assert "gm_map" not in report["per_query"]["q1"] and "gm_map" in report["aggregate"]
    assert report["measures"]["nDCG@10"] == "nDCG@10" and report["measures"]["P_5"] == "P@5"
    assert report["queries"] == {"evaluated": 3, "missing_from_run": ["q3"], "not_judged": ["q4"]}
    assert report["run_id"] == "mine"


BAD_INPUT = [
    pytest.param(["-m", "nDGC@10"], "unknown measure 'nDGC'; did you mean 'nDCG'", id="unknown-measure"),
    pytest.param(["-m", "P@x"], "cutoff of 'P@x' must be a number", id="bad-cutoff"),
    pytest.param(["-m", "P.0"], "must be a positive integer", id="zero-cutoff"),
    pytest.param(["-m", "P"], None, id="P-alone-is-trec-default-cutoffs"),
]


@pytest.mark.parametrize(("args", "message"), BAD_INPUT)
def test_measure_errors_exit_2(capsys, files, args: list[str], message: str | None) -> None:
    code, out, err = _run(capsys, "evaluate", *args, *files)
    if message is None:
        assert code == 0 and "P_1000" in out
    else:
        assert code == 2 and message in err and "Traceback" not in err
        assert err.count("\n") == 1


def test_bad_file_exits_2_with_one_line(capsys, write) -> None:
    qrels = write("qrels", "q1 0 a 1\nq1 0 b\n")
    code, out, err = _run(capsys, "evaluate", qrels, write("run", RUN))
    assert code == 2 and out == ""
    assert err == f"retrieval-eval: error: {qrels}:2: 3 fields; expected 4 fields 'query_id iteration doc_id relevance'; got 'q1 0 b'\n"


def test_missing_file_exits_2(capsys, tmp_path) -> None:
    code, _, err = _run(capsys, "evaluate", str(tmp_path / "q"), str(tmp_path / "r"))
    assert code == 2 and "cannot open" in err


def test_usage_errors_exit_2(capsys) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["evaluate", "only-one-file"])
    assert exit_.value.code == 2
    with pytest.raises(SystemExit) as exit_:
        main(["evaluate", "-M", "-3", "q", "r"])
    assert exit_.value.code == 2


def test_help_explains_every_flag(capsys) -> None:
    with pytest.raises(SystemExit):
        main(["evaluate", "--help"])
    text = capsys.readouterr().out
    for flag in ("-q", "-c", "-n", "-J", "-l LEVEL", "-M DEPTH", "-m MEASURE", "--digits N", "--format",
                 "--skip-missing", "--duplicates"):
        assert flag in text


@pytest.mark.parametrize("columns", [None, "", "abc", "0", "-3", "57", "200"])
@pytest.mark.parametrize("terminal", [None, 0, 71], ids=["no-terminal", "zero-wide", "terminal"])
def test_terminal_width_is_shutils(monkeypatch: pytest.MonkeyPatch, columns: str | None, terminal: int | None) -> None:
    """The help formatter's width, found without importing shutil, is shutil.get_terminal_size's."""
    import shutil

    from retrieval_eval.cli._options import _terminal_columns

    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)
    if terminal is None:
        def no_terminal(fd: int) -> os.terminal_size:
            raise OSError(errno.ENOTTY, "not a terminal")
        monkeypatch.setattr(os, "get_terminal_size", no_terminal)
    else:
        monkeypatch.setattr(os, "get_terminal_size", lambda fd: os.terminal_size((terminal, 24)))
    assert _terminal_columns() == shutil.get_terminal_size().columns


@pytest.mark.parametrize("columns", ["30", "80", "150"])
def test_help_and_usage_errors_are_argparses_own(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
                                                 columns: str) -> None:
    """Every --help and usage error is what argparse's own formatters print, at any terminal width."""
    import argparse

    from retrieval_eval import cli

    monkeypatch.setenv("COLUMNS", columns)
    commands = [["--help"], ["evaluate", "a", "b", "--digits", "99"], ["plot"], ["nosuch"]]
    commands += [[*command.split(), "--help"] for command in (*cli.COMMANDS, "plot pr", "plot diff", "plot ranks")]

    def printed() -> list[tuple[object, str, str]]:
        out = []
        for argv in commands:
            with pytest.raises(SystemExit) as exit_:
                main(argv)
            out.append((exit_.value.code, *capsys.readouterr()))
        return out

    ours = printed()
    monkeypatch.setattr(cli._options, "_HelpFormatter", argparse.HelpFormatter)
    for module in (cli._options, *(importlib.import_module(f"retrieval_eval.cli.{m}") for m in cli.COMMANDS.values())):
        if hasattr(module, "_RawDescriptionFormatter"):  # every module that names it, not only where it is made
            monkeypatch.setattr(module, "_RawDescriptionFormatter", argparse.RawDescriptionHelpFormatter)
    assert ours == printed()


def test_evaluate_does_not_import_shutil() -> None:
    """argparse would import shutil (2 ms, with bz2 and lzma) for the width of help it does not print."""
    code = ("import sys; from retrieval_eval.cli import build_parser, _with_command; parser = build_parser('evaluate'); "
            "parser.parse_args(_with_command(parser, ['-m', 'map', 'q', 'r'])); print('shutil' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                          env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[1])})
    assert done.stdout.strip() == "False"


def test_evaluate_imports_neither_numpy_ma_nor_fractions(tmp_path: Path) -> None:
    """np.unique imports numpy.ma (15-40 ms of start-up) and AUC's exact fraction needs fractions: an
    evaluation of the official measures needs neither. The judgments are many per query, so the run
    goes through the hash table's duplicate check, where np.unique was."""
    qrels = "".join(f"q{q} 0 d{d} {d % 2}\n" for q in range(3) for d in range(40))
    run = "".join(f"q{q} Q0 d{d} {d + 1} {100 - d} r\n" for q in range(3) for d in range(0, 60, 2))
    (tmp_path / "qrels").write_text(qrels)
    (tmp_path / "run").write_text(run)
    code = ("import sys; from retrieval_eval.cli import main; "
            f"main(['evaluate', '-m', 'official', {str(tmp_path / 'qrels')!r}, {str(tmp_path / 'run')!r}]); "
            "print('numpy.ma' in sys.modules, 'fractions' in sys.modules, file=sys.stderr)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                          env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[1])})
    assert done.stderr.strip().splitlines()[-1] == "False False"
    assert "map" in done.stdout


def test_every_command_is_a_module_named_in_the_registry(monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    """A command is one module of retrieval_eval.cli with add_parser and run, and one line of COMMANDS;
    --help lists exactly the registry's commands, in its order."""
    import re

    from retrieval_eval import cli

    for command, module_name in cli.COMMANDS.items():
        module = importlib.import_module(f"retrieval_eval.cli.{module_name}")
        assert callable(getattr(module, "add_parser", None)) and callable(getattr(module, "run", None)), command
    folder = Path(cli.__file__).parent
    modules = {path.stem for path in folder.glob("*.py") if not path.stem.startswith("_")}
    assert modules == set(cli.COMMANDS.values())  # no command module left out of the registry

    monkeypatch.setenv("COLUMNS", "200")  # one line per command
    with pytest.raises(SystemExit) as exit_:
        main(["--help"])
    assert exit_.value.code == 0
    section = capsys.readouterr().out.split("positional arguments:\n", 1)[1].split("\n\n", 1)[0]
    assert re.findall(r"^    (\S+)", section, flags=re.MULTILINE) == list(cli.COMMANDS)


def test_python_m_and_the_script_are_the_program(monkeypatch: pytest.MonkeyPatch) -> None:
    """``python -m retrieval_eval`` (argv[0] is the package's __main__.py) and the retrieval-eval script own
    their process (see main); a script calling main() does not."""
    import retrieval_eval
    from retrieval_eval import cli

    main_py = str(Path(retrieval_eval.__file__).parent / "__main__.py")
    for started, program in ((main_py, True), ("/usr/bin/retrieval-eval", True), ("host.py", False)):
        monkeypatch.setattr(sys, "argv", [started])
        assert cli._is_the_program() is program, started


def test_demo_evaluates_the_bundled_sample(capsys) -> None:
    code, out, err = _run(capsys, "demo")
    assert code == 0
    assert out.splitlines()[0].split() == ["runid", "all", "sample"]
    assert len(out.splitlines()) == 30 and "q13" in err  # runid + 29 official lines


def test_measures_lists_the_registry(capsys) -> None:
    from retrieval_eval.measures import REGISTRY

    code, out, _ = _run(capsys, "measures")
    assert code == 0
    for name, definition in REGISTRY.items():
        assert f"{name}" in out and definition.summary in out


def test_stdin_run(testdata: Path) -> None:
    """End to end as a process: ``-`` reads the run from stdin; same bytes as trec_eval's out.test."""
    with open(testdata / "results.test", "rb") as run:
        done = subprocess.run([sys.executable, "-m", "retrieval_eval", "evaluate", str(testdata / "qrels.test"), "-"],
                              stdin=run, capture_output=True, check=True)
    assert done.stdout.split() == (testdata / "out.test").read_bytes().split()


def test_console_script_reports_errors_without_traceback(tmp_path: Path) -> None:
    script = Path(sys.executable).with_name("retrieval-eval")
    if not script.exists():
        pytest.skip("the console script is not installed in this environment")
    done = subprocess.run([str(script), "evaluate", str(tmp_path / "none"), str(tmp_path / "none")],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 2 and "Traceback" not in done.stderr and "cannot open" in done.stderr


def test_c_and_skip_missing_conflict(capsys, files) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["evaluate", "-c", "--skip-missing", *files])
    assert exit_.value.code == 2 and "not allowed with argument" in capsys.readouterr().err


def test_order_by_file_or_rank_column(capsys, write) -> None:
    qrels = write("q", "q 0 a 1\n")
    run = write("r", "q Q0 b 2 9.0 r\nq Q0 a 1 1.0 r\n")
    answers = {order: _run(capsys, "evaluate", "--order", order, "-m", "recip_rank", qrels, run)[1].split()[-1]
               for order in ("score", "file", "rank")}
    assert answers == {"score": "0.5000", "file": "0.5000", "rank": "1.0000"}


def test_digits_keep_trec_eval_width_rule(capsys, files) -> None:
    _, out, _ = _run(capsys, "evaluate", "--digits", "6", "-m", "map", *files)
    assert out.endswith("\t0.527778\n")
    _, out, _ = _run(capsys, "evaluate", "--digits", "0", "-m", "map", *files)
    assert out.endswith("\t 1\n")


def test_json_counts_are_integers(capsys, files) -> None:
    _, out, _ = _run(capsys, "evaluate", "-q", "--format", "json", "-m", "num_ret", *files)
    report = json.loads(out)
    assert report["aggregate"]["num_ret"] == 4 and isinstance(report["aggregate"]["num_ret"], int)
    assert report["per_query"]["q1"]["num_ret"] == 3 and isinstance(report["per_query"]["q1"]["num_ret"], int)


# ---------------------------------------------------------------------------- issue 15: trec_eval habits
class TestNoCommandMeansEvaluate:
    """``retrieval-eval -m map QRELS RUN`` and ``retrieval-eval QRELS RUN`` are ``evaluate``, as in trec_eval."""

    def test_options_first(self, capsys, files) -> None:
        assert _run(capsys, "-m", "map", "-q", *files) == _run(capsys, "evaluate", "-m", "map", "-q", *files)

    def test_files_only(self, capsys, files) -> None:
        code, out, err = _run(capsys, *files)
        assert (code, out, err) == _run(capsys, "evaluate", *files)
        assert code == 0 and out.startswith("runid                 \tall\tmine\n")

    def test_commands_still_work(self, capsys) -> None:
        assert _run(capsys, "measures")[0] == 0
        assert _run(capsys, "demo", "-m", "map")[1].split() == ["map", "all", "0.2677"]

    def test_help_lists_the_commands_and_the_default(self, capsys) -> None:
        with pytest.raises(SystemExit) as exit_:
            main(["--help"])
        text = capsys.readouterr().out
        assert exit_.value.code == 0
        for command in ("evaluate", "demo", "compare", "measures"):
            assert f"    {command}  " in text
        assert "Without a command, evaluate is meant" in text

    @pytest.mark.parametrize(("word", "command"), [("compre", "compare"), ("measure", "measures")],
                             ids=["compre", "measure"])
    def test_misspelt_command_is_not_taken_for_a_file(self, capsys, word: str, command: str) -> None:
        with pytest.raises(SystemExit) as exit_:
            main([word, "a", "b"])
        err = capsys.readouterr().err
        assert exit_.value.code == 2
        assert err == f"retrieval-eval: error: unknown command {word!r} (did you mean {command!r}?); " \
                      "see retrieval-eval --help\n"

    def test_a_file_named_like_a_command_is_still_a_file(self, capsys, write, monkeypatch) -> None:
        """A first word that is an existing file is QRELS, even when it looks like a misspelt command."""
        run = write("run", RUN)
        monkeypatch.chdir(Path(run).parent)
        Path("compre").write_text(QRELS, encoding="utf-8")
        assert _run(capsys, "compre", "run", "-m", "map")[0] == 0


class TestVersion:
    def test_version_flag(self, capsys) -> None:
        from retrieval_eval import __version__

        with pytest.raises(SystemExit) as exit_:
            main(["--version"])
        assert exit_.value.code == 0 and capsys.readouterr().out == f"retrieval-eval {__version__}\n"

    def test_version_is_written_once(self) -> None:
        """pyproject.toml takes the version from retrieval_eval/__init__.py (hatchling's version source)."""
        tomllib = pytest.importorskip("tomllib")
        root = Path(__file__).resolve().parents[1]
        project = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
        assert "version" not in project["project"] and "version" in project["project"]["dynamic"]
        assert project["tool"]["hatch"]["version"]["path"] == "retrieval_eval/__init__.py"

    def test_installed_metadata_agrees(self) -> None:
        from importlib import metadata

        from retrieval_eval import __version__

        try:
            installed = metadata.version("retrieval-evaluator")
        except metadata.PackageNotFoundError:
            pytest.skip("retrieval_eval is not installed")
        assert installed == __version__


# --------------------------------------------------------------------------- issue 15: grammar and noise
def test_notes_count_in_the_singular_and_the_plural(capsys, write) -> None:
    """'1 query has', '2 queries have': never '1 queries'."""
    qrels = write("q", "q1 0 a 1\nq2 0 b 1\nq3 0 c 1\nq5 0 e 0\nq6 0 f -1\n")
    run = write("r", "q1 Q0 a 1 1.0 r\nq5 Q0 e 1 1.0 r\nq6 Q0 f 1 1.0 r\nq8 Q0 x 1 1.0 r\nq9 Q0 y 1 1.0 r\n")
    _, _, err = _run(capsys, "-m", "map", qrels, run)
    assert err.splitlines() == [
        "retrieval-eval: note: 2 judged queries have no results; scored as empty rankings (as trec_eval -c): q2, q3",
        "retrieval-eval: note: 2 run queries have no judgments and are ignored: q8, q9",
        ("retrieval-eval: warning: 1 query has only negative judgments (pooled but never judged), so every measure "
         "is 0 for it: q6"),
        "retrieval-eval: warning: 1 query has no relevant judgment (relevance >= 1), so map is 0 for it: q5",
    ]


def test_left_out_note_agrees_with_its_count(capsys, write) -> None:
    log = write("log.tsv", "s1 a 0.9 1\ns1 b 0.4 0\n")
    _, _, err = _run(capsys, "evaluate", "--log", log, "-m", "GAUC")
    assert err == ""
    log = write("log2.tsv", "s1 a 0.9 1\n")
    _, _, err = _run(capsys, "evaluate", "--log", log, "-m", "GAUC")
    assert err == ("retrieval-eval: note: GAUC: 1 of 1 query has only relevant or only non-relevant documents and "
                   "is left out of its summary: s1\n")


def test_names_count_agrees(capsys, files) -> None:
    code, _, err = _run(capsys, "compare", "--names", "one", files[0], files[1], files[1])
    assert code == 2 and "--names gives 1 name for 2 runs" in err


class TestQuiet:
    def test_quiet_silences_notes_and_warnings(self, capsys, write) -> None:
        qrels = write("q", "\ufeffq1 0 a 1\nq2 0 b 1\nq5 0 e 0\n")  # a byte order mark: an InputWarning
        run = write("r", "q1 Q0 a 1 1.0 r\nq5 Q0 e 1 1.0 r\nq9 Q0 y 1 1.0 r\n")
        code, loud_out, loud_err = _run(capsys, "-m", "map", qrels, run)
        assert code == 0 and "note:" in loud_err and "warning: " in loud_err and "byte order mark" in loud_err
        code, out, err = _run(capsys, "--quiet", "-m", "map", qrels, run)
        assert (code, out, err) == (0, loud_out, "")

    def test_quiet_never_silences_errors(self, capsys, write) -> None:
        qrels = write("q", "q1 0 a\n")
        code, _, err = _run(capsys, "evaluate", "--quiet", qrels, write("r", RUN))
        assert code == 2 and err.startswith("retrieval-eval: error: ") and err.count("\n") == 1

    def test_demo_and_compare_take_it(self, capsys, write) -> None:
        assert "note: 1 judged query has no results" in _run(capsys, "demo", "-m", "map")[2]
        assert _run(capsys, "demo", "--quiet", "-m", "map")[2] == ""
        qrels, run = write("q", "\ufeff" + QRELS), write("r", RUN)
        args = ["compare", qrels, run, run, "--names", "a,b", "-m", "map"]
        assert _run(capsys, *args)[2].startswith("retrieval-eval: warning: ")  # the byte order mark
        code, out, err = _run(capsys, *args, "--quiet")
        assert code == 0 and out.startswith("run") and err == ""


@pytest.mark.parametrize("command", ["evaluate", "compare"])
def test_digits_above_17_are_refused(capsys, files, command: str) -> None:
    """17 decimals are as many as a float64 holds; 18 is a one-line usage error, exit 2."""
    extra = [files[1]] if command == "compare" else []
    with pytest.raises(SystemExit) as exit_:
        main([command, "--digits", "18", *files, *extra])
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and err.count("\n") == 1
    assert err.startswith(f"retrieval-eval {command}: error: argument --digits: expected at most 17 decimals")
    _, out, _ = _run(capsys, "evaluate", "--digits", "17", "-m", "map", *files)
    assert out == f"map                   \tall\t{((1 / 2 + 2 / 3) / 2 + 1 + 0) / 3:19.17f}\n"


@pytest.mark.parametrize("argv", [["evaluate", "--format", "xml", "q", "r"], ["evaluate", "-M", "-3", "q", "r"],
                                  ["measures", "--format", "yaml"], [], ["evaluate"], ["--log", "x.tsv", "q"]],
                         ids=["bad-choice", "negative-depth", "measures-bad-format", "nothing", "no-files",
                              "log-and-files"])
def test_usage_errors_are_one_line(capsys, argv: list[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and err.count("\n") == 1 and "error: " in err and err.endswith(" --help\n")


class TestLongNames:
    """Names are padded to 22 as trec_eval's %-22s; a longer name widens the column for every line."""

    def test_short_names_keep_trec_eval_bytes(self, capsys, files) -> None:
        _, out, _ = _run(capsys, "evaluate", "-q", "-m", "map", "-m", "num_nonrel_judged_ret", *files)
        assert out.splitlines()[:2] == ["map                   \tq1\t0.5833", "num_nonrel_judged_ret \tq1\t1"]

    def test_a_long_name_keeps_the_columns_aligned(self, capsys, files) -> None:
        long = "nDCG(dcg='exp-log2')@10"
        _, out, _ = _run(capsys, "-q", "-m", "map", "-m", long, "-m", "official", *files)
        lines = out.splitlines()
        assert {line.index("\t") for line in lines} == {len(long)}
        assert "map" + " " * (len(long) - 3) + "\tq1\t0.5833" in lines
        assert lines[-2] == "P_1000" + " " * (len(long) - 6) + "\tall\t0.0010"
        assert lines[-1].startswith(f"{long}\tall\t0.")


class TestMeasuresCommand:
    def test_filter_by_name_or_alias_ignoring_case(self, capsys) -> None:
        _, lower, _ = _run(capsys, "measures", "ndcg")
        _, upper, _ = _run(capsys, "measures", "NDCG")
        assert lower == upper
        names = [line.split()[0] for line in lower.splitlines() if not line.startswith(" ")]
        assert names[:3] == ["nDCG", "nDCGRel", "RnDCG"] and "alpha_nDCG" in names and "AP" not in names

    def test_filter_finds_aliases_and_trec_eval_names(self, capsys) -> None:
        _, out, _ = _run(capsys, "measures", "mrr")
        assert out.startswith("RR (aliases: MRR)\n")
        _, out, _ = _run(capsys, "measures", "gm_")
        assert [line for line in out.splitlines() if not line.startswith(" ")] == ["GMAP", "GMBpref"]

    def test_unfiltered_listing_is_every_block(self, capsys) -> None:
        from retrieval_eval.measures.describe import listing

        assert _run(capsys, "measures")[1] == listing()

    def test_json(self, capsys) -> None:
        from retrieval_eval.measures import REGISTRY

        code, out, _ = _run(capsys, "measures", "--format", "json")
        entries = json.loads(out)
        assert code == 0 and [e["name"] for e in entries] == list(REGISTRY)
        ap = next(e for e in entries if e["name"] == "AP")
        assert ap["aliases"] == ["MAP"] and ap["trec_eval"] == ["map", "map_cut_<cutoff>"]
        assert ap["aggregate"] == "mean" and ap["summary"] == REGISTRY["AP"].summary
        assert {"name": "k", "type": "int", "default": None, "description": REGISTRY["AP"].params["k"].description,
                "choices": None, "cutoff": True} in ap["parameters"]
        _, out, _ = _run(capsys, "measures", "--format", "json", "gm_map")
        assert [(e["name"], e["aggregate"]) for e in json.loads(out)] == [("GMAP", "gmean")]

    def test_no_match_is_a_usage_error(self, capsys) -> None:
        code, out, err = _run(capsys, "measures", "nosuchthing")
        assert code == 2 and out == ""
        assert err == ("retrieval-eval measures: error: no measure name, alias or trec_eval name contains "
                       "'nosuchthing'; see retrieval-eval measures --help\n")


# --------------------------------------------------------------------------- issue 15: input and output failures
def _process(*args: str, stdin: object = None, shell_redirect: str = "") -> subprocess.CompletedProcess[bytes]:
    """``retrieval-eval ARGS`` as a real process; ``shell_redirect`` (``>&-``, ``2>&-``) is applied by sh."""
    command = [sys.executable, "-m", "retrieval_eval", *args]
    if shell_redirect:
        line = " ".join(f"'{part}'" for part in command) + " " + shell_redirect
        return subprocess.run(["sh", "-c", line], capture_output=True, check=False, timeout=60)
    return subprocess.run(command, stdin=stdin, capture_output=True, check=False, timeout=60)


def _one_error_line(stderr: bytes, start: str) -> None:
    text = stderr.decode()
    assert "Traceback" not in text and text.count("\n") == 1 and text.startswith(start), text


class TestStdin:
    def test_gzip_run_on_stdin(self, capsys, files, monkeypatch) -> None:
        """A gzip stream on stdin is recognised by its magic bytes and decompressed."""
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(gzip.compress(RUN.encode()))))
        code, out, _ = _run(capsys, "evaluate", "-m", "map", files[0], "-")
        assert code == 0 and out == "map                   \tall\t0.5278\n"

    def test_qrels_on_stdin(self, capsys, files, monkeypatch) -> None:
        """- as QRELS reads the qrels from stdin."""
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(QRELS.encode())))
        code, out, _ = _run(capsys, "evaluate", "-m", "map", "-", files[1])
        assert code == 0 and out == "map                   \tall\t0.5278\n"

    def test_both_on_stdin_is_a_usage_error(self, capsys) -> None:
        with pytest.raises(SystemExit) as exit_:
            main(["evaluate", "-", "-"])
        err = capsys.readouterr().err
        assert exit_.value.code == 2 and err.count("\n") == 1 and "QRELS and RUN cannot both be -" in err

    def test_closed_stdin(self, files) -> None:
        """stdin closed (<&-) with run -: one line, exit 2, not an AttributeError."""
        done = _process("evaluate", files[0], "-", shell_redirect="<&-")
        assert done.returncode == 2 and done.stdout == b""
        _one_error_line(done.stderr, "retrieval-eval: error: -: standard input is closed")


class TestReadErrors:
    def test_directory(self, capsys, files, tmp_path) -> None:
        code, out, err = _run(capsys, "evaluate", files[0], str(tmp_path))
        assert code == 2 and out == "" and err == f"retrieval-eval: error: {tmp_path}: cannot open: Is a directory\n"

    @pytest.mark.skipif(not os.path.exists("/proc/self/mem"), reason="needs Linux /proc")
    def test_io_error_names_the_path(self, capsys, files) -> None:
        """Reading /proc/self/mem from offset 0 fails with EIO: one line naming the path."""
        code, out, err = _run(capsys, "evaluate", files[0], "/proc/self/mem")
        assert code == 2 and out == ""
        assert err == "retrieval-eval: error: /proc/self/mem: cannot read: Input/output error\n"

    def test_io_error_mid_file_counts_the_lines(self, capsys, files) -> None:
        """An OSError after some data: the complete lines before it are counted."""
        from retrieval_eval.io.formats import read_run_columns
        from retrieval_eval.model import TrecFormatError

        class Failing(io.RawIOBase):
            def __init__(self) -> None:
                self.sent = False

            def readable(self) -> bool:
                return True

            def readinto(self, view) -> int:
                if self.sent:
                    raise OSError(5, "Input/output error")
                self.sent = True
                data = RUN.encode() + b"q9 Q0"
                view[: len(data)] = data
                return len(data)

        stream = Failing()
        stream.name = "flaky"
        with pytest.raises(TrecFormatError, match=r"^flaky: cannot read after 5 complete lines: Input/output error$"):
            read_run_columns(stream)

    def test_stderr_closed_keeps_stdout_clean(self, tmp_path) -> None:
        """With stderr closed the error is dropped, not written to stdout; the exit code is still 2."""
        done = _process("evaluate", str(tmp_path / "none"), str(tmp_path / "none"), shell_redirect="2>&-")
        assert done.returncode == 2 and done.stdout == b""


class TestOutputErrors:
    def test_closed_stdout(self, files) -> None:
        done = _process("evaluate", "--quiet", "-m", "map", *files, shell_redirect=">&-")
        assert done.returncode == 3  # its own code since issue 28.16 (was 1, the regression gate's)
        _one_error_line(done.stderr, "retrieval-eval: error: cannot write the output: standard output is closed")

    @pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
    def test_full_disk(self, files) -> None:
        done = _process("evaluate", "--quiet", "-m", "map", *files, shell_redirect="> /dev/full")
        assert done.returncode == 3
        _one_error_line(done.stderr, "retrieval-eval: error: cannot write the output: No space left on device")

    def test_broken_pipe_exits_quietly(self, write) -> None:
        """| head -1: exit 0 and nothing on stderr, however much output was left."""
        qrels = write("q", "".join(f"q{i} 0 d{i} 1\n" for i in range(3000)))
        run = write("r", "".join(f"q{i} Q0 d{i} 1 1.0 r\n" for i in range(3000)))
        with subprocess.Popen([sys.executable, "-m", "retrieval_eval", "evaluate", "-q", "-m", "all_trec", qrels, run],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE) as process:
            assert process.stdout is not None and process.stderr is not None
            assert process.stdout.readline()
            process.stdout.close()
            err = process.stderr.read()
            assert process.wait(timeout=60) == 0 and err == b""

    @pytest.mark.parametrize("copies", [20_000, 400_000], ids=["calling-thread", "thread-pool"])
    def test_ctrl_c_during_a_read(self, files, copies: int) -> None:
        """SIGINT while the run is read from a pipe that stays open: exit 130, one line, nothing hangs;
        also once more than 32 MiB (_POOL_FROM) were read, when the rest is parsed on the thread pool."""
        with subprocess.Popen([sys.executable, "-m", "retrieval_eval", "evaluate", files[0], "-"],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as process:
            assert process.stdin is not None
            process.stdin.write(RUN.encode() * copies)
            process.stdin.flush()
            time.sleep(2)  # imports done; the reader waits for more of stdin
            process.send_signal(signal.SIGINT)
            out, err = process.communicate(timeout=30)
        assert process.returncode == 130 and out == b"" and err == b"retrieval-eval: interrupted\n"


class TestNoNaNOrInfinity:
    @pytest.mark.parametrize("measure", ["iprec_at_recall.inf", "relstring.inf", "P." + "9" * 5000,
                                         "P." + "9" * 400, "P@" + "9" * 5000, "IPrec@nan"],
                             ids=["iprec-inf", "relstring-inf", "cutoff-5000-digits", "cutoff-400-digits",
                                  "at-cutoff-5000-digits", "iprec-nan"])
    def test_bad_measure_numbers_are_one_line(self, capsys, files, measure: str) -> None:
        code, out, err = _run(capsys, "evaluate", "-m", measure, *files)
        assert code == 2 and out == "" and err.count("\n") == 1 and "Traceback" not in err
        assert err.startswith(("retrieval-eval: error: ", "retrieval-eval evaluate: error: -m")), err

    def test_huge_digits_is_one_line(self, capsys, files) -> None:
        with pytest.raises(SystemExit) as exit_:
            main(["evaluate", "--digits", "2147483648", *files])
        err = capsys.readouterr().err
        assert exit_.value.code == 2 and err.count("\n") == 1 and "expected at most 17 decimals" in err

    def test_json_writes_null_for_a_value_that_is_not_finite(self, capsys, files, monkeypatch) -> None:
        """Should a measure ever give NaN or infinity, the JSON stays valid: null, never NaN."""
        from retrieval_eval.evaluators.set import SetEvaluator

        real = SetEvaluator.array

        def with_nan(self, measure):
            values = real(self, measure).copy()
            values[0], values[1] = math.nan, -math.inf
            return values

        monkeypatch.setattr(SetEvaluator, "array", with_nan)
        monkeypatch.setattr(SetEvaluator, "_summaries", lambda self, measures, keep=False: [math.inf] * len(measures))
        code, out, _ = _run(capsys, "evaluate", "--quiet", "--format", "json", "-q", "-m", "map", *files)
        assert code == 0 and "NaN" not in out and "Infinity" not in out

        def refuse(constant: str) -> None:
            raise AssertionError(constant)

        document = json.loads(out, parse_constant=refuse)
        assert document["aggregate"]["map"] is None and document["per_query"]["q1"]["map"] is None
        code, out, _ = _run(capsys, "evaluate", "--quiet", "-q", "-m", "map", *files)
        assert code == 0 and "nan" not in out and "inf" not in out and "map                   \tall\tnull" in out


# --------------------------------------------------------------------------- issue 11: plot
class TestPlot:
    """The plot command wires the plotting module to the files; the figures themselves are tested in
    test_plotting.py."""

    @pytest.mark.parametrize(("kind", "runs"), [("pr", 2), ("diff", 2), ("ranks", 1)])
    def test_writes_the_image(self, capsys, tmp_path, kind: str, runs: int) -> None:
        pytest.importorskip("matplotlib")
        from retrieval_eval.data import sample_paths

        qrels, run = sample_paths()
        out = tmp_path / f"{kind}.png"
        code, stdout, err = _run(capsys, "plot", kind, qrels, *[run] * runs, "-o", str(out), "--names",
                                 ",".join("ab"[:runs]))
        assert code == 0 and stdout == "" and err == f"retrieval-eval: note: wrote {out}\n"
        assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

    def test_svg_by_suffix(self, capsys, tmp_path, files) -> None:
        pytest.importorskip("matplotlib")
        out = tmp_path / "pr.svg"
        code, _, _ = _run(capsys, "plot", "pr", "--quiet", *files, "-o", str(out))
        assert code == 0 and b"<svg" in out.read_bytes()[:400]

    def test_unknown_suffix_is_one_line(self, capsys, tmp_path, files) -> None:
        pytest.importorskip("matplotlib")
        code, _, err = _run(capsys, "plot", "ranks", *files, "-o", str(tmp_path / "x.gif"))
        assert code == 2 and err.count("\n") == 1 and ".gif" in err and "Traceback" not in err

    @pytest.mark.parametrize("where", ["no/x.png", "folder.png"], ids=["missing-directory", "a-directory"])
    def test_an_output_that_cannot_be_made_is_a_usage_error_before_reading(self, capsys, tmp_path, files,
                                                                          where: str) -> None:
        """-o in a directory that does not exist, or naming a directory: exit 2 before any file is read
        (the run named here does not exist, and the error is still about -o)."""
        (tmp_path / "folder.png").mkdir()
        code, _, err = _run(capsys, "plot", "ranks", files[0], str(tmp_path / "no-such.run"), "-o",
                            str(tmp_path / where))
        assert code == 2 and err.startswith("retrieval-eval plot ranks: error: -o: ") and err.count("\n") == 1
        assert err.rstrip().endswith("see retrieval-eval plot ranks --help")

    def test_an_output_directory_without_write_permission_is_a_usage_error(self, capsys, tmp_path, files,
                                                                           monkeypatch) -> None:
        monkeypatch.setattr(os, "access", lambda path, mode: False)  # as a user without the right (tests run as root)
        code, _, err = _run(capsys, "plot", "pr", *files, "-o", str(tmp_path / "x.png"))
        assert code == 2 and "cannot write in the directory" in err and err.count("\n") == 1

    def test_a_failed_write_exits_3(self, capsys, tmp_path, files, monkeypatch) -> None:
        """The save itself fails (a full disk): the output failed, exit 3, as for evaluate."""
        pytest.importorskip("matplotlib")
        from retrieval_eval.report import plotting

        def full_disk(figure: object, path: object) -> None:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

        monkeypatch.setattr(plotting, "save", full_disk)
        code, _, err = _run(capsys, "plot", "ranks", *files, "-o", str(tmp_path / "x.png"))
        assert code == 3 and err == f"retrieval-eval: error: cannot write the output: {tmp_path / 'x.png'}: " \
                                    "No space left on device\n"

    def test_without_matplotlib_one_line(self, capsys, tmp_path, files, monkeypatch) -> None:
        """matplotlib missing: the one-line install hint, exit 2."""
        for name in [m for m in sys.modules if m == "matplotlib" or m.startswith("matplotlib.")]:
            monkeypatch.delitem(sys.modules, name)
        monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib now raises ImportError
        code, _, err = _run(capsys, "plot", "pr", *files, "-o", str(tmp_path / "x.png"))
        assert code == 2 and err.count("\n") == 1 and "retrieval-evaluator[plot]" in err

    def test_diff_needs_two_runs_and_a_per_query_measure(self, capsys, files) -> None:
        with pytest.raises(SystemExit) as exit_:
            main(["plot", "diff", files[0], files[1], "-o", "x.png"])
        assert exit_.value.code == 2 and capsys.readouterr().err.count("\n") == 1
        code, _, err = _run(capsys, "plot", "diff", *files, files[1], "-m", "num_q", "-o", "x.png")
        assert code == 2 and "-m num_q is a summary over all queries" in err and err.count("\n") == 1

    def test_title_size_and_log_y_reach_the_figure(self, capsys, tmp_path, files, monkeypatch) -> None:
        """Issue 27: --title, --size W,H and --log-y (pr and ranks; diff draws both signs, so not there)."""
        pytest.importorskip("matplotlib")
        from retrieval_eval.report import plotting

        drawn = []
        monkeypatch.setattr(plotting, "save", lambda figure, path: drawn.append(figure))
        for kind in ("pr", "ranks", "diff"):
            runs = [*files, files[1]] if kind == "diff" else files
            log = [] if kind == "diff" else ["--log-y"]
            code, _, _ = _run(capsys, "plot", kind, "--quiet", *runs, "-o", "x.png", "--title", "$T$",
                              "--size", "5,3.5", *log)
            assert code == 0
            axes = drawn[-1].axes[0]
            assert axes.get_title().splitlines()[0] == "\\$T\\$"  # drawn as $T$, never as mathtext
            assert tuple(drawn[-1].get_size_inches()) == (5.0, 3.5)
            assert axes.get_yscale() == ("linear" if kind == "diff" else "log")
        with pytest.raises(SystemExit) as exit_:
            main(["plot", "diff", *files, files[1], "--log-y", "-o", "x.png"])
        assert exit_.value.code == 2

    @pytest.mark.parametrize("size", ["0,3", "5", "a,b", "nan,3", "5,inf", "5,3,1", "1e9,3"])
    def test_a_bad_size_is_a_usage_error(self, capsys, files, size: str) -> None:
        with pytest.raises(SystemExit) as exit_:
            main(["plot", "pr", *files, "-o", "x.png", "--size", size])
        err = capsys.readouterr().err
        assert exit_.value.code == 2 and err.count("\n") == 1 and "--size" in err and "Traceback" not in err

    def test_an_output_that_is_an_input_is_refused(self, capsys, tmp_path, files) -> None:
        """Issue 28.9: -o arun.png qrels arun.png replaced the run with the image, without a word."""
        run = tmp_path / "arun.png"
        run.write_bytes(Path(files[1]).read_bytes())
        before = run.read_bytes()
        link = tmp_path / "link.png"
        link.symlink_to(run)
        for output, inputs in ((run, [files[0], str(run)]), (tmp_path / "." / "arun.png", [files[0], str(run)]),
                               (run, [files[0], str(link)]), (Path(files[0] + ".png"), [files[0] + ".png", files[1]])):
            if not output.exists():
                continue
            code, _, err = _run(capsys, "plot", "pr", *inputs, "-o", str(output))
            assert code == 2 and "is also an input" in err and err.count("\n") == 1
        assert run.read_bytes() == before
        code, _, err = _run(capsys, "plot", "diff", files[0], str(run), files[1], "-o", str(run))
        assert code == 2 and "is also an input" in err and run.read_bytes() == before

    @pytest.mark.parametrize("suffix", [".png", ".pdf", ".svg"])
    def test_a_failed_write_keeps_the_old_image(self, tmp_path, files, suffix: str) -> None:
        """Issue 28.9: under a file-size limit the write fails: exit 3 (an output failure), one line, the
        old image untouched (it was truncated before; for .pdf the failure was a traceback)."""
        pytest.importorskip("matplotlib")
        target = tmp_path / f"old{suffix}"
        target.write_bytes(b"the old image")
        code = ("import resource, sys\n"
                "from retrieval_eval.cli import main\n"
                "resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))\n"
                "sys.exit(main(sys.argv[1:]))\n")
        result = subprocess.run([sys.executable, "-c", code, "plot", "pr", *files, "-o", str(target)],
                                check=False, capture_output=True, text=True)
        assert result.returncode == 3 and result.stderr == (
            f"retrieval-eval: error: cannot write the output: {target}: File too large\n")
        assert target.read_bytes() == b"the old image"
        assert sorted(p.name for p in tmp_path.iterdir()) == sorted([target.name, *(Path(f).name for f in files)])

    def test_names_that_are_not_utf8_or_look_like_mathtext(self, capsys, tmp_path) -> None:
        """Issue 28.7: a query id or file name that is not UTF-8 (TypeError), an id or --names entry like
        $\\foo$ (a mathtext error): tracebacks before; now drawn as text, the bytes as \\xe9."""
        pytest.importorskip("matplotlib")
        qrels = tmp_path / "q.txt"
        qrels.write_bytes(b"q\xe9 0 a 1\n$\\foo$ 0 a 1\n")
        run = tmp_path / os.fsdecode(b"w\xe9.run")
        run.write_bytes(b"q\xe9 Q0 a 1 1 r\nq\xe9 Q0 b 2 2 r\n$\\foo$ Q0 a 1 1 r\n")
        other = tmp_path / "o.run"
        other.write_bytes(run.read_bytes())
        for kind, extra in (("pr", []), ("ranks", ["--names", "$\\foo$,$x$"]), ("diff", ["-m", "RR"])):
            code, _, err = _run(capsys, "plot", kind, "--quiet", str(qrels), str(run), str(other), *extra,
                                "-o", str(tmp_path / f"{kind}.png"))
            assert code == 0, err
            assert (tmp_path / f"{kind}.png").read_bytes()[:4] == b"\x89PNG"

    @pytest.mark.parametrize("kind", ["pr", "diff", "ranks"])
    def test_help_has_a_line_per_flag(self, capsys, kind: str) -> None:
        with pytest.raises(SystemExit):
            main(["plot", kind, "--help"])
        text = capsys.readouterr().out
        for flag in ("-o FILE", "--names", "-l LEVEL", "-M DEPTH", "-J", "--order", "--quiet", "--title TEXT",
                     "--size W,H", *(["-m MEASURE"] if kind == "diff" else ["--log-y"])):
            assert flag in text, flag


def test_large_outputs_are_written_in_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    """One write of more than 2 GiB to a pipe is silently cut at 2,147,479,552 bytes, so output is
    written in chunks; with a small chunk the pieces are checked here (text and exact-bytes paths)."""
    from retrieval_eval.cli import _output

    monkeypatch.setattr(_output, "_WRITE_CHUNK", 7)
    for text in ("a\tb\n" * 10, "q\udce9 1\n" * 5):  # the second keeps a byte that is not UTF-8
        raw = io.BytesIO()
        out = io.TextIOWrapper(raw, encoding="utf-8", write_through=True)
        sizes: list[int] = []
        write = raw.write
        monkeypatch.setattr(raw, "write", lambda data, write=write, sizes=sizes: sizes.append(len(data)) or write(data))
        _output._write_exact(out, text)
        out.flush()
        assert raw.getvalue() == text.encode("utf-8", "surrogateescape")
        assert len(sizes) > 1 and max(sizes) <= 7 * 4, sizes


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes need a POSIX system")
@pytest.mark.parametrize("compress", [False, True])
def test_a_run_and_qrels_read_from_pipes_lose_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], compress: bool
) -> None:
    """A pipe (``<(cat run)``, a FIFO) can be read once: looking at its first bytes for gzip's or
    Parquet's magic before reading it lost them, and the first line with them."""
    import threading

    from retrieval_eval.data import sample_paths

    qrels, run = sample_paths()
    assert main(["evaluate", "--quiet", "-m", "map", "-m", "num_rel_ret", str(qrels), str(run)]) == 0
    expected = capsys.readouterr().out
    pipes = []
    for name, source in (("qrels.pipe", qrels), ("run.pipe", run)):
        pipe = tmp_path / name
        os.mkfifo(pipe)
        data = Path(source).read_bytes()
        data = gzip.compress(data) if compress else data
        threading.Thread(target=lambda pipe=pipe, data=data: pipe.write_bytes(data), daemon=True).start()
        pipes.append(str(pipe))
    # In a child with a time limit: a reader that opens a pipe twice waits for a second writer forever.
    child = subprocess.run([sys.executable, "-m", "retrieval_eval", "evaluate", "--quiet", "-m", "map", "-m",
                            "num_rel_ret", *pipes], check=False, capture_output=True, text=True, timeout=60)
    assert (child.returncode, child.stdout) == (0, expected), child.stderr


@pytest.mark.skipif(not os.path.isdir("/dev/fd"), reason="no /dev/fd on this system")
def test_a_process_substitution_is_named_by_its_path(capsys, monkeypatch, files, tmp_path) -> None:
    """A run given as <(...) arrives as /dev/fd/63: it was named '63' in tables, diff and plots."""
    qrels, run = files
    fds = [os.open(run, os.O_RDONLY) for _ in range(2)]  # what the shell hands over for <(cat run)
    try:
        a, b = (f"/dev/fd/{fd}" for fd in fds)
        code, out, _ = _run(capsys, "evaluate", "--quiet", qrels, a, b, "-m", "map", "--format", "csv")
        # evaluate names runs by their run_id (issue 27); two that share one, from descriptors whose paths
        # name nothing, by the run_id and their place, never by /dev/fd/63.
        assert code == 0 and [line.split(",")[0] for line in out.splitlines()] == ["run", "mine#1", "mine#2"]
        code, out, _ = _run(capsys, "evaluate", "--quiet", qrels, a, "-m", "map", "--format", "csv")
        assert code == 0 and [line.split(",")[0] for line in out.splitlines()] == ["run", "mine"]
        code, out, _ = _run(capsys, "diff", "--quiet", qrels, a, run, "-m", "AP")
        assert code == 0 and out.startswith("AP: run against mine#1 over ")  # the run_id they share
        code, out, _ = _run(capsys, "compare", "--quiet", qrels, a, b, "-m", "AP", "--format", "csv")
        assert code == 0 and out.splitlines()[1].startswith("AP,mine#1,mine#2,"), out
        if importlib.util.find_spec("matplotlib") is not None:
            from retrieval_eval.report import plotting

            titles: list[str] = []
            monkeypatch.setattr(plotting, "save", lambda figure, path: titles.append(figure.axes[0].get_title()))
            assert main(["plot", "diff", "--quiet", qrels, a, run, "-m", "AP", "-o", str(tmp_path / "d.png")]) == 0
            assert titles and "run \u2212 mine#1 per query" in titles[0]
    finally:
        for fd in fds:
            os.close(fd)
