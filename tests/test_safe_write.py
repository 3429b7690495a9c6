"""Safe writes: a temporary file beside the target, renamed over it only when complete."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from helpers import returns_soon

from wbmigrate.safe_write import (
    PRIVATE_MODE,
    READ_LIMIT,
    NotRead,
    SafeFile,
    Stamp,
    TooBig,
    UnsafeWrite,
    read_file,
    write_text,
)


def mode_of(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def current_umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def test_write_text_writes_the_content(tmp_path):
    path = tmp_path / "out.json"
    write_text(path, '{"a": 1}\n')
    assert path.read_text(encoding="utf-8") == '{"a": 1}\n'
    write_text(path, "second")
    assert path.read_text(encoding="utf-8") == "second"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.json"]


def test_a_file_is_synced_before_it_takes_its_name_and_a_cache_is_not(tmp_path, monkeypatch):
    synced: list[int] = []
    real = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(fd), real(fd)))
    write_text(tmp_path / "plan.json", "{}")
    assert len(synced) == 1
    write_text(tmp_path / "cache.json", "{}", sync=False)
    assert len(synced) == 1
    assert (tmp_path / "cache.json").read_text() == "{}"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cache.json", "plan.json"]


def test_non_ascii_text_is_written_as_utf8(tmp_path):
    path = tmp_path / "out.txt"
    write_text(path, "Überblick › staleness")
    assert path.read_bytes() == "Überblick › staleness".encode()


@pytest.mark.parametrize("mode", [0o600, 0o640, 0o444, 0o755], ids=oct)
def test_an_existing_file_keeps_its_permission_bits(tmp_path, mode):
    path = tmp_path / "kept.txt"
    path.write_text("old")
    path.chmod(mode)
    write_text(path, "new")
    assert path.read_text() == "new"
    assert mode_of(path) == mode


def test_a_new_file_gets_what_the_umask_allows(tmp_path):
    path = tmp_path / "new.txt"
    write_text(path, "x")
    assert mode_of(path) == 0o666 & ~current_umask()


@pytest.mark.parametrize(
    ("existing", "mode"),
    [(None, PRIVATE_MODE), (0o644, PRIVATE_MODE), (0o600, 0o640)],
    ids=["new-file", "existing-loosened-file", "existing-private-file"],
)
def test_an_explicit_mode_wins(tmp_path, existing, mode):
    path = tmp_path / "secret.json"
    if existing is not None:
        path.write_text("old")
        path.chmod(existing)
    write_text(path, "{}", mode)
    assert mode_of(path) == mode


def write_then_fail(path: Path, error: BaseException) -> None:
    with SafeFile(path) as file:
        file.write("half of the new ")
        raise error


def test_an_error_inside_safe_file_leaves_the_old_file_and_no_temporary(tmp_path):
    path = tmp_path / "plan.json"
    path.write_text("old content")
    with pytest.raises(RuntimeError, match="interrupted"):
        write_then_fail(path, RuntimeError("interrupted"))
    assert path.read_text() == "old content"
    assert [p.name for p in tmp_path.iterdir()] == ["plan.json"]


def test_an_error_inside_safe_file_creates_no_new_file(tmp_path):
    path = tmp_path / "never.json"
    with pytest.raises(KeyboardInterrupt):
        write_then_fail(path, KeyboardInterrupt())
    assert list(tmp_path.iterdir()) == []


def test_a_reader_sees_the_old_file_until_commit(tmp_path):
    path = tmp_path / "target.txt"
    path.write_text("old")
    file = SafeFile(path)
    file.write("new text")
    assert path.read_text() == "old"
    file.commit()
    assert path.read_text() == "new text"
    assert [p.name for p in tmp_path.iterdir()] == ["target.txt"]


def test_discard_removes_the_temporary_and_keeps_the_target(tmp_path):
    path = tmp_path / "target.txt"
    path.write_text("old")
    file = SafeFile(path)
    file.write("new")
    file.discard()
    assert path.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["target.txt"]


def test_the_temporary_is_beside_the_target_with_an_unpredictable_name(tmp_path):
    folder = tmp_path / "deep" / "folder"
    folder.mkdir(parents=True)
    path = folder / "out.json"
    first, second = SafeFile(path), SafeFile(path)
    try:
        temporaries = sorted(folder.iterdir())
        assert len(temporaries) == 2
        assert first._temporary != second._temporary
        for temporary in temporaries:
            assert temporary.parent == folder
            assert temporary.name.startswith(".out.json.")
            assert temporary.name.endswith(".tmp")
            assert len(temporary.name) > len(".out.json..tmp")  # a random part in between
        assert not path.exists()
        first.write("first")
        second.write("second")
        second.commit()
        first.discard()
    finally:
        first.discard()
        second.discard()
    assert path.read_text() == "second"
    assert [p.name for p in folder.iterdir()] == ["out.json"]


def test_the_temporary_is_private_while_written(tmp_path):
    file = SafeFile(tmp_path / "out.json", mode=0o644)
    try:
        (temporary,) = tmp_path.iterdir()
        assert mode_of(temporary) == 0o600  # nobody else reads a half-written file
    finally:
        file.discard()


@pytest.mark.parametrize(
    "text",
    ["a\r\nb\r\n", "a\rb\r", "a\nb\n", "mixed\r\n\n\r end", "no newline", "sep\u2028line"],
    ids=["crlf", "cr", "lf", "mixed", "none", "unicode-line-separator"],
)
def test_newlines_are_written_byte_for_byte(tmp_path, text):
    path = tmp_path / "text.txt"
    write_text(path, text)
    assert path.read_bytes() == text.encode("utf-8")


def test_a_missing_folder_is_a_one_line_error_and_writes_nothing(tmp_path):
    with pytest.raises(UnsafeWrite, match="cannot write there"):
        write_text(tmp_path / "missing" / "out.txt", "x")
    assert list(tmp_path.iterdir()) == []


# --- refusals: never through a link, never over a file changed since it was read --------------


def test_a_symbolic_link_is_never_written_through_or_replaced(tmp_path):
    target = tmp_path / "precious"
    target.write_text("keep me\n")
    link = tmp_path / "plan.json"
    link.symlink_to(target)
    with pytest.raises(UnsafeWrite, match="symbolic link"):
        write_text(link, "overwritten\n")
    assert target.read_text() == "keep me\n"
    assert link.is_symlink()
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_a_link_planted_while_writing_is_not_replaced(tmp_path):
    path = tmp_path / "out.json"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.write_text("theirs\n")
    file = SafeFile(path)
    file.write("ours\n")
    path.symlink_to(elsewhere)  # an attacker's link appears before the rename
    with pytest.raises(UnsafeWrite):
        file.commit()
    assert elsewhere.read_text() == "theirs\n"
    assert path.is_symlink()


def test_a_file_changed_since_it_was_read_is_not_overwritten(tmp_path):
    path = tmp_path / "rl.toml"
    path.write_text("a = 1\n")
    read = Stamp.of(path.read_bytes(), path.stat().st_mtime_ns)
    path.write_text("a = 2  # a colleague's edit, while check ran\n")
    with pytest.raises(UnsafeWrite, match="changed since wbmigrate read it"):
        write_text(path, "b = 1\n", read=read)
    assert path.read_text() == "a = 2  # a colleague's edit, while check ran\n"
    write_text(path, "b = 1\n", read=Stamp.of(path.read_bytes(), path.stat().st_mtime_ns))
    assert path.read_text() == "b = 1\n"


def test_check_fix_reports_a_file_edited_while_it_ran_and_fixes_the_rest(tmp_path, monkeypatch):
    from wbmigrate.check.model import FileReport
    from wbmigrate.check.run import write_fixes

    monkeypatch.chdir(tmp_path)
    one, two = tmp_path / "one.toml", tmp_path / "two.toml"
    one.write_text("x = 1\n")
    two.write_text("x = 1\n")
    stamps = {p: Stamp.of(p.read_bytes(), p.stat().st_mtime_ns) for p in (one, two)}
    one.write_text("x = 1  # edited meanwhile\n")
    reports = [
        FileReport(p.name, text="x = 1\n", fixed="y = 1\n", read=stamps[p]) for p in (one, two)
    ]
    written, refused = write_fixes(reports)
    assert written == {"two.toml"}
    assert refused == ["one.toml: changed since wbmigrate read it; not overwritten"]
    assert one.read_text() == "x = 1  # edited meanwhile\n"
    assert two.read_text() == "y = 1\n"


# --- reading: never blocked, never unbounded -----------------------------------------------------


def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path):
    os.mkfifo(tmp_path / "pipe")
    with pytest.raises(NotRead, match=r"^a FIFO is not a regular file$"):
        returns_soon(read_file, tmp_path / "pipe")


def test_a_link_to_dev_zero_is_refused_not_read_whole(tmp_path):
    (tmp_path / "zero").symlink_to("/dev/zero")
    with pytest.raises(NotRead, match=r"^a character device is not a regular file$"):
        returns_soon(read_file, tmp_path / "zero")
    with pytest.raises(NotRead, match=r"^a symbolic link; not followed$"):
        read_file(tmp_path / "zero", follow=False)


def test_a_file_over_the_bound_is_refused_and_one_at_it_is_read(tmp_path):
    path = tmp_path / "big"
    path.write_bytes(b"x" * 2048)
    with pytest.raises(TooBig, match=r"^0\.0 MB, over the 0 MB wbmigrate reads$"):
        read_file(path, limit=2047)
    data, status = read_file(path, limit=2048)
    assert (data, status.st_size) == (b"x" * 2048, 2048)


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="Linux's /proc")
def test_a_file_holding_more_than_its_size_says_is_read_whole_within_the_bound():
    """A regular file that grew since its size was taken (as /proc's say 0) is read on."""
    data, status = read_file(Path("/proc/self/status"))
    assert status.st_size == 0
    assert data.startswith(b"Name:")
    assert data.endswith(b"\n")
    with pytest.raises(TooBig):
        read_file(Path("/proc/self/status"), limit=10)


def test_the_default_bound_is_256_mb():
    assert READ_LIMIT == 256 * 1024 * 1024


def test_a_file_replaced_by_a_fifo_after_it_was_read_is_not_waited_on_when_writing(tmp_path):
    path = tmp_path / "spec.json"
    path.write_text("old")
    read = Stamp.of(b"old", path.stat().st_mtime_ns)
    path.unlink()
    os.mkfifo(path)
    with pytest.raises(UnsafeWrite, match="changed since wbmigrate read it"):
        returns_soon(write_text, path, "new", read=read)
