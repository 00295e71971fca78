"""Safe file writes (issue 28.9): retrieval_eval.io.files, used by every command that writes a file."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from retrieval_eval.io.files import replacing, same_file, write_error


def _listing(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def test_writes_a_new_file(tmp_path: Path) -> None:
    target = tmp_path / "out.png"
    with replacing(target) as out:
        out.write(b"image")
        assert not target.exists()  # nothing at the target until the block ends
    assert target.read_bytes() == b"image" and _listing(tmp_path) == ["out.png"]
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~umask  # as open() would have made it


def test_replaces_and_keeps_the_permissions(tmp_path: Path) -> None:
    target = tmp_path / "out.png"
    target.write_bytes(b"old")
    target.chmod(0o640)
    with replacing(str(target)) as out:
        out.write(b"new")
    assert target.read_bytes() == b"new" and stat.S_IMODE(target.stat().st_mode) == 0o640
    assert _listing(tmp_path) == ["out.png"]


@pytest.mark.parametrize("failure", [OSError(28, "No space left on device"), RuntimeError("the writer broke"),
                                     KeyboardInterrupt()])
def test_a_failure_keeps_the_old_file_and_leaves_no_temporary(tmp_path: Path, failure: BaseException) -> None:
    target = tmp_path / "out.png"
    target.write_bytes(b"old")
    with pytest.raises(type(failure)), replacing(target) as out:
        out.write(b"half of the new")
        raise failure
    assert target.read_bytes() == b"old" and _listing(tmp_path) == ["out.png"]


def test_an_os_error_behind_another_error_is_raised_as_it(tmp_path: Path) -> None:
    """matplotlib's PDF writer, after a failed write, fails in its own clean-up (AttributeError): the
    OSError that started it is what the caller gets."""
    target = tmp_path / "out.pdf"
    with pytest.raises(OSError, match="File too large") as caught, replacing(target):
        try:
            raise OSError(27, "File too large")
        except OSError:
            raise AttributeError("'Stream' object has no attribute 'pos'") from None
    assert caught.value.errno == 27 and _listing(tmp_path) == []
    assert write_error(ValueError("x")) is None


def test_a_link_is_kept_and_its_file_replaced(tmp_path: Path) -> None:
    real = tmp_path / "real.png"
    real.write_bytes(b"old")
    link = tmp_path / "link.png"
    link.symlink_to(real)
    with replacing(link) as out:
        out.write(b"new")
    assert link.is_symlink() and real.read_bytes() == b"new" and _listing(tmp_path) == ["link.png", "real.png"]


def test_a_device_is_written_in_place() -> None:
    with replacing(os.devnull) as out:
        out.write(b"nothing")
    assert stat.S_ISCHR(os.stat(os.devnull).st_mode)


def test_a_missing_directory_is_an_os_error(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError), replacing(tmp_path / "no" / "out.png"):
        pass


def test_same_file(tmp_path: Path) -> None:
    run = tmp_path / "a.run"
    run.write_text("q1 Q0 d 1 1 r\n")
    hard = tmp_path / "hard.png"
    os.link(run, hard)
    soft = tmp_path / "soft.png"
    soft.symlink_to(run)
    assert same_file(run, ["-", str(tmp_path / "." / "a.run")]) == str(tmp_path / "." / "a.run")
    assert same_file(hard, [str(run)]) == str(run)  # a hard link: the same file under another name
    assert same_file(soft, [str(run)]) == str(run)
    assert same_file(tmp_path / "new.png", [str(run), "-", 3]) is None
    assert same_file(tmp_path / "new.png", [str(tmp_path / "sub" / ".." / "new.png")]) is not None
    assert same_file(tmp_path / "x\0.png", [str(run)]) is None


def test_a_read_only_file_is_not_replaced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """As open() would refuse it (the tests may run as root, who may write anything: os.access is faked)."""
    target = tmp_path / "out.png"
    target.write_bytes(b"old")
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda path, mode: False if Path(path) == target else real_access(path, mode))
    with pytest.raises(PermissionError), replacing(target) as out:
        out.write(b"new")
    assert target.read_bytes() == b"old" and _listing(tmp_path) == ["out.png"]
