"""Every code block of README.md and docs/*.md runs, so that the documentation cannot drift from the code.

``>>>`` examples are doctests (``tests/test_docs.py``). This file runs the others:

* a ``python`` block without ``>>>`` is executed in an empty temporary directory (the bundled
  sample data is at hand through ``retrieval_eval.data.sample_paths()``) and must not raise;
* the commands of a page's ``sh``/``bash``/``console`` blocks run in order in one shell and one
  temporary directory per page (holding the files the examples name: see :func:`_page_directory`),
  with ``retrieval-eval`` (and ``python``) being this checkout. What a ``console`` block shows after
  a ``$`` line is its expected output (stdout and stderr together; ``...`` matches anything). A
  command must exit 0, or 2 when the page shows it failing with a ``retrieval-eval: error:`` line;
  an exit code a page prints with ``echo "exit $?"`` is checked as part of the output.

What is not run is said, never skipped silently: a block preceded by the line
``<!-- docs-test: skip: REASON -->``, and the commands matched by :data:`NOT_RUN`. Each appears as a
skipped test with its reason (``pytest -ra`` lists them). A command that no rule knows fails, so a
new kind of command needs a decision here.
"""

from __future__ import annotations

import doctest
import gzip
import os
import re
import shutil
import subprocess
import sys
import zlib
from pathlib import Path

import attrs
import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted(p.relative_to(ROOT).as_posix() for p in [ROOT / "README.md", *(ROOT / "docs").glob("*.md")])

#: The marker that keeps the next block from running, with its reason.
SKIP_MARK = re.compile(r"^<!-- docs-test: skip: (.+?) -->$")
#: Commands that are not run here, and why.
NOT_RUN = [
    (re.compile(r"^pip install\b"), "installs packages"),
    (re.compile(r"^python -m pytest\b"), "runs the test suite itself"),
    (re.compile(r"^python benchmarks/"), "a benchmark, minutes long"),
    (re.compile(r"^python fuzz/"), "the fuzzer, run by .ci/run"),
    (re.compile(r"^git clone\b"), "needs the network"),
    (re.compile(r"^spark-submit\b"), "needs a Spark installation"),
]
#: The programs a runnable command may start with (retrieval-eval, and what pages use to make files).
PROGRAMS = {"retrieval-eval", "python", "cat", "printf", "echo", "gzip", "zcat", "head", "tail", "sort", "cut",
            "wc", "diff", "mkdir", "cp", "mv", "ls", "awk", "sed", "grep", "cd", "export"}
#: The files the shell examples name, made in each page's directory before its commands run:
#: qrels.txt and run.txt are the example of quickstart.md (queries 301-304), the other runs that run
#: under other names, or with other scores.
QRELS_TXT = "301 0 doc1 1\n301 0 doc2 0\n301 0 doc3 2\n301 0 doc4 -1\n302 0 doc5 1\n302 0 doc6 1\n303 0 doc7 1\n"
RUN_TXT = ("301 Q0 doc2 1 3.0 bm25\n301 Q0 doc1 2 2.5 bm25\n301 Q0 doc9 3 2.5 bm25\n301 Q0 doc4 4 1.0 bm25\n"
           "301 Q0 doc3 5 0.5 bm25\n302 Q0 doc5 1 10 bm25\n302 Q0 doc8 2 9 bm25\n304 Q0 doc1 1 1 bm25\n")
RUN_NAMES = ("run.txt", "bm25.run", "prod.run", "new.run", "candidate.run", "a.run")  # no regression to gate on
OTHER_RUN_NAMES = ("rerank.run", "dense.run", "b.run")


@attrs.frozen
class Block:
    page: str
    line: int  # of the opening fence
    language: str
    text: str
    skip: str | None  # the reason given by the marker above the block


def _blocks(page: str) -> list[Block]:
    lines = (ROOT / page).read_text(encoding="utf-8").splitlines()
    blocks, i = [], 0
    while i < len(lines):
        fence = re.match(r"^```(\w*)", lines[i])
        if not fence:
            i += 1
            continue
        end = next(j for j in range(i + 1, len(lines)) if lines[j].startswith("```"))
        mark = SKIP_MARK.match(lines[i - 1]) if i else None
        blocks.append(Block(page, i + 1, fence.group(1), "\n".join(lines[i + 1 : end]) + "\n",
                            mark.group(1) if mark else None))
        i = end + 1
    return blocks


ALL_BLOCKS = [block for page in PAGES for block in _blocks(page)]
PYTHON_BLOCKS = [b for b in ALL_BLOCKS if b.language == "python" and ">>>" not in b.text]
SHELL_LANGUAGES = ("sh", "bash", "console", "shell")


@attrs.frozen
class Command:
    text: str
    expected: str | None  # the output a console block shows; None for sh blocks (exit 0 is all)
    block: Block


def _commands(block: Block) -> list[Command]:
    """The commands of a shell block: ``$`` lines in a console block (the lines up to the next ``$``
    being the output), every line of an sh block (heredocs and ``\\`` continuations kept whole)."""
    lines = block.text.splitlines()
    if block.language == "console":
        starts = [i for i, line in enumerate(lines) if line.startswith("$ ")]
        return [
            Command(lines[i][2:], "".join(line + "\n" for line in lines[i + 1 : stop]), block)
            for i, stop in zip(starts, [*starts[1:], len(lines)])
        ]
    commands, i = [], 0
    while i < len(lines):
        text = lines[i]
        if not text.strip() or text.lstrip().startswith("#"):
            i += 1
            continue
        while text.endswith("\\") and i + 1 < len(lines):
            i += 1
            text += "\n" + lines[i]
        heredoc = re.search(r"<<-?\s*'?(\w+)'?", text)
        if heredoc:
            while i + 1 < len(lines) and lines[i].strip() != heredoc.group(1):
                i += 1
                text += "\n" + lines[i]
        commands.append(Command(text, None, block))
        i += 1
    return commands


def _not_run(command: Command) -> str | None:
    """Why the command is not run (its block's marker or a rule of NOT_RUN), or None."""
    if command.block.skip:
        return command.block.skip
    for pattern, reason in NOT_RUN:
        if pattern.search(command.text):
            return reason
    return None


SHELL_COMMANDS = {page: [c for b in ALL_BLOCKS if b.page == page and b.language in SHELL_LANGUAGES
                         for c in _commands(b)] for page in PAGES}
NOT_RUN_ITEMS = [  # python blocks not run are skipped (with their reason) by test_python_block_runs
    (f"{c.block.page}:{c.block.line}: {c.text.splitlines()[0]}", reason)
    for commands in SHELL_COMMANDS.values() for c in commands if (reason := _not_run(c))
] + [
    (f"{b.page}:{b.line}", "a console block with no $ line: output shown, nothing to run")
    for b in ALL_BLOCKS if b.language == "console" and not _commands(b)
]


@pytest.mark.parametrize("block", PYTHON_BLOCKS, ids=[f"{b.page}:{b.line}" for b in PYTHON_BLOCKS])
def test_python_block_runs(block: Block, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if block.skip:
        pytest.skip(block.skip)
    monkeypatch.chdir(tmp_path)
    code = compile(block.text, f"{block.page}:{block.line}", "exec")
    exec(code, {"__name__": "__docs__"})  # noqa: S102 - the documentation's own example


def _page_directory(path: Path) -> dict[str, str]:
    """Fill ``path`` with the files the examples name; returns the environment to run commands in."""
    (path / "qrels.txt").write_text(QRELS_TXT)
    for name in RUN_NAMES:
        (path / name).write_text(RUN_TXT)
    (path / "run.txt.gz").write_bytes(gzip.compress(RUN_TXT.encode(), mtime=0))
    rows = [line.split() for line in RUN_TXT.splitlines()]
    for shift, name in enumerate(OTHER_RUN_NAMES, start=1):  # the same documents, other scores
        other = [[*fields[:4], str(float(fields[4]) + zlib.crc32(f"{fields[2]} {shift}".encode()) % 7 / 10),
                  *fields[5:]] for fields in rows]
        (path / name).write_text("".join(" ".join(fields) + "\n" for fields in other))
    judged = {(q, doc): int(rel) for q, _, doc, rel in (line.split() for line in QRELS_TXT.splitlines())}
    clicks = [f"{f[0]}\t{f[2]}\t{f[4]}\t{int(judged.get((f[0], f[2]), 0) > 0)}\n" for f in rows]
    (path / "clicks.tsv").write_text("group\titem\tscore\tlabel\n" + "".join(clicks))
    bin_dir = path / ".bin"  # retrieval-eval and python are this checkout's
    bin_dir.mkdir()
    (bin_dir / "retrieval-eval").write_text(f'#!/bin/sh\nexec "{sys.executable}" -m retrieval_eval "$@"\n')
    (bin_dir / "python").write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    for tool in bin_dir.iterdir():
        tool.chmod(0o755)
    env = dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
               PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep))
    env.pop("RETRIEVAL_EVAL_MAX_LINE_BYTES", None)
    return env


SHELL_PAGES = [page for page, commands in SHELL_COMMANDS.items() if any(not _not_run(c) for c in commands)]


#: Printed after each command by the page's script: the command's number and exit code.
END_MARK = re.compile(r"@@docs-test-end (\d+) (\d+)@@\n")
#: A line that only sets a shell variable (for the commands after it).
ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


@pytest.mark.skipif(shutil.which("bash") is None, reason="the shell examples need bash")
@pytest.mark.parametrize("page", SHELL_PAGES)
def test_shell_commands_run(page: str, tmp_path: Path) -> None:
    """The page's commands, in order, in one shell (variables and files carry over): each exits 0
    and prints what the page shows."""
    commands = [c for c in SHELL_COMMANDS[page] if not _not_run(c)]
    script = []
    for number, command in enumerate(commands):
        program = command.text.split()[0]
        assert program in PROGRAMS or ASSIGNMENT.match(program), (
            f"{_where(command)}: no rule runs or skips {program!r}; add one to this test")
        script += [command.text, f"printf '@@docs-test-end {number} %d@@\\n' $?"]
    done = subprocess.run(["bash", "-c", "\n".join(script)], check=False, cwd=tmp_path, env=_page_directory(tmp_path),
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=600)
    parts = END_MARK.split(done.stdout)  # output, number, exit code, output, number, exit code, ..., rest
    assert len(parts) == 3 * len(commands) + 1, f"{page}: the script stopped early:\n{done.stdout}"
    checker = doctest.OutputChecker()
    for command, output, code in zip(commands, parts[0::3], parts[2::3]):
        assert code == _expected_exit(command), f"{_where(command)}: exit {code}\n{output}"
        if command.expected is not None:
            assert checker.check_output(command.expected, output, doctest.ELLIPSIS), (
                f"{_where(command)}: the page shows\n{command.expected}\nbut the command printed\n{output}")


def _expected_exit(command: Command) -> str:
    """0, or 2 (bad input) when the page shows the command failing with an error line and does not
    print the exit code itself (``; echo "exit $?"``, which exits 0 and is checked in the output)."""
    shows_error = command.expected and re.search(r"^retrieval-eval( \w+)?: error: ", command.expected, re.MULTILINE)
    return "2" if shows_error and "$?" not in command.text else "0"


def _where(command: Command) -> str:
    return f"{command.block.page}:{command.block.line}: {command.text.splitlines()[0]}"


@pytest.mark.parametrize("item", NOT_RUN_ITEMS, ids=[where for where, _ in NOT_RUN_ITEMS])
def test_not_run(item: tuple[str, str]) -> None:
    """Each block or command that is not run, listed with its reason (shown by pytest -ra)."""
    where, reason = item
    assert reason.strip(), where
    pytest.skip(f"not run: {reason}")


def test_every_block_is_covered() -> None:
    """Each fenced block is a doctest, a python block, a shell block, or text (output, formats); a
    transcript ($ lines) is a console block, so that it runs or says why not."""
    languages = {b.language for b in ALL_BLOCKS}
    # yaml: a CI workflow shown as configuration (docs/gating.md; tests/test_gating_guide.py runs its commands)
    assert languages <= {"python", *SHELL_LANGUAGES, "text", "yaml", ""}, languages
    transcripts = [f"{b.page}:{b.line}" for b in ALL_BLOCKS
                   if b.language in ("text", "") and re.search(r"^\$ ", b.text, re.MULTILINE)]
    assert transcripts == [], "write these as ```console blocks"
    assert PYTHON_BLOCKS and any(SHELL_COMMANDS.values())
