"""The ``retrieval-eval`` command line: parse arguments, evaluate, format. No measure logic here.

Each command is a module of this package, listed in :data:`COMMANDS`: its ``add_parser(commands)``
adds the command's parser, its ``run(args)`` runs it. A command's module is imported only when its
parser is built, and heavy imports (NumPy and the package) happen inside the commands, so ``--help``
stays fast.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import os
import sys
import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING, NoReturn, cast

from ._options import _Parser
from ._output import (
    EXIT_BAD_INPUT,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_OUTPUT_FAILED,
    _capped,
    _drop_stdout,
    _OutputFailed,
    _stderr_line,
    _Usage,
)
from ._runs import _show_warning

if TYPE_CHECKING:
    from typing import Protocol

    class _Command(Protocol):
        """What a command's module provides."""

        def add_parser(self, commands: argparse._SubParsersAction[_Parser]) -> None:
            """Add the command's parser (its arguments and help) to ``commands``."""

        def run(self, args: argparse.Namespace) -> int:
            """Run the command on the parsed ``args``; returns the exit code."""


#: The command a trec_eval habit means: ``retrieval-eval -m map QRELS RUN`` is ``evaluate``.
DEFAULT_COMMAND = "evaluate"

#: Every command, in --help's order, with its module in this package: a new command is one module
#: (with ``add_parser`` and ``run``) and one line here.
COMMANDS = {
    "evaluate": "evaluate",
    "demo": "demo",
    "compare": "compare",
    "baseline": "baseline",
    "check": "check",
    "expect": "expect",
    "inspect": "inspect",
    "diff": "diff",
    "plot": "plot",
    "report": "report",
    "flaky": "flaky",
    "similarity": "similarity",
    "agree": "agree",
    "pool": "pool",
    "reproduce": "reproduce",
    "fuse": "fuse",
    "measures": "measures",
}


def _command(name: str) -> _Command:
    """The module of the command ``name``, imported now (building one command's parser imports no other)."""
    return cast("_Command", importlib.import_module(f"{__name__}.{COMMANDS[name]}"))


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The command line's parser. With ``command``, only that command is added: a plain evaluation then
    does not pay for building the other commands (some 1 ms, each parser looking up its translations)."""
    from .. import __version__

    parser = _Parser(
        prog="retrieval-eval",
        description="Evaluate ranked retrieval runs with trec_eval's exact numbers.",
        epilog=f"Without a command, {DEFAULT_COMMAND} is meant, as in trec_eval: 'retrieval-eval -m map QRELS RUN' "
               f"is 'retrieval-eval {DEFAULT_COMMAND} -m map QRELS RUN'. 'retrieval-eval COMMAND --help' describes "
               "each command. Exit codes: 0 success; 1 compare --fail-if-worse found a regression, a check failed, or "
               "an expect fact failed; "
               "2 bad input or usage; 3 the output could not be written; 4 check found an undecided rule and "
               "--fail-undecided was given; 130 interrupted.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    commands.required = True

    for name in COMMANDS:
        if command is None or command == name:
            _command(name).add_parser(commands)
    return parser


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


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code.

    0 success; 1 a regression found by ``compare --fail-if-worse``, a failed ``check`` rule or ``expect``
    fact; 2 bad input or usage; 3 output
    that could not be written (a full disk, a closed stdout); 130 Ctrl-C. A broken pipe
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
            or os.path.abspath(started) == os.path.join(_PACKAGE_FOLDER, "__main__.py"))


#: The folder of retrieval_eval, whose __main__.py ``python -m retrieval_eval`` runs (this is its cli folder).
_PACKAGE_FOLDER = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


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
    problem = None
    if args.command == "evaluate":  # its own checks, reported as argparse reports its usage errors
        from .evaluate import _evaluate_usage_problem

        problem = _evaluate_usage_problem(args)
    if program and args.command != "measures":  # this process is ours: see keep_freed_memory, _forked.enable
        from ..engine.memory import keep_freed_memory
        from ..io import _forked

        keep_freed_memory()
        _forked.enable()
    if problem is not None:  # exit 2 with one line, as argparse's own usage errors
        parser.exit(EXIT_BAD_INPUT,
                    _capped(f"retrieval-eval evaluate: error: {problem}; see retrieval-eval evaluate --help") + "\n")
    with warnings.catch_warnings():
        # Accepted-but-suspicious input is reported every time, unless --quiet.
        warnings.simplefilter("ignore" if getattr(args, "quiet", False) else "always")
        warnings.showwarning = _show_warning
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    try:
        from ..model import MissingExtraError, RetrievalEvalError

        return _command(args.command).run(args)
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
