"""Hostile bot archives: every trick an uploader can play on the unpacker is refused with a clear
one-line error, nothing is written outside the unpack folder, and nothing is left behind.

The attacks are built with tarfile's writer (and by hand where it would not write them); the
unpacker under test is take5_arena/referee/archive.py, the one place an uploaded archive becomes a
folder.
"""

from __future__ import annotations

import gzip
import io
import os
import subprocess
import tarfile
import uuid
import zipfile

import pytest
from support import ROOT

from take5_arena.referee.archive import ArchiveError, ArchiveLimits, ArchiveProblem, pack, unpack

SMALL = ArchiveLimits(
    max_total_bytes=1 << 20,
    max_file_bytes=512 * 1024,
    max_entries=100,
    max_depth=8,
    max_archive_bytes=8 << 20,
)


def _file(name: str, data: bytes = b"x", mode: int = 0o644) -> tuple[tarfile.TarInfo, bytes | None]:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mode = mode
    return info, data


def _special(name: str, kind: bytes, **attrs) -> tuple[tarfile.TarInfo, None]:
    info = tarfile.TarInfo(name)
    info.type = kind
    for k, v in attrs.items():
        setattr(info, k, v)
    return info, None


def make_tgz(entries, *, fmt=tarfile.PAX_FORMAT, level: int = 6) -> bytes:
    raw = io.BytesIO()
    with (
        gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=level, mtime=0) as gz,
        tarfile.open(fileobj=gz, mode="w|", format=fmt) as tar,
    ):
        for info, data in entries:
            tar.addfile(info, io.BytesIO(data) if data is not None else None)
    return raw.getvalue()


class CountingReader(io.RawIOBase):
    """The upload as the server reads it, counting how much of it was consumed."""

    def __init__(self, data: bytes):
        self.src = io.BytesIO(data)
        self.read_bytes = 0

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:
        data = self.src.read(len(b))
        self.read_bytes += len(data)
        b[: len(data)] = data
        return len(data)


@pytest.fixture
def place(tmp_path):
    """A parent folder holding only the unpack destination; after a refusal it must be empty."""
    parent = tmp_path / "spool"
    parent.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    return parent, parent / "bot", outside


def refused(
    data: bytes, place, problem: ArchiveProblem, limits: ArchiveLimits = SMALL
) -> ArchiveError:
    parent, dest, outside = place
    archive = parent.parent / "upload.tgz"
    archive.write_bytes(data)
    with pytest.raises(ArchiveError) as caught:
        unpack(archive, dest, limits)
    error = caught.value
    assert error.problem is problem, (error.problem, str(error))
    message = str(error)
    assert message and "\n" not in message and len(message) < 300
    assert list(parent.iterdir()) == [], "a refused archive must leave nothing behind"
    assert list(outside.iterdir()) == [], "nothing may be written outside the unpack folder"
    return error


# ------------------------------------------------------------------------------------------------
# Paths


def test_dotdot_path(place):
    _, _, _outside = place
    error = refused(
        make_tgz([_file("bot.py"), _file("../outside/evil", b"pwned")]),
        place,
        ArchiveProblem.PATH_ESCAPE,
    )
    assert "'..'" in str(error)


def test_dotdot_hidden_in_the_middle(place):
    refused(make_tgz([_file("a/b/../../../outside/evil")]), place, ArchiveProblem.PATH_ESCAPE)


def test_absolute_path(place):
    target = f"/tmp/take5-evil-{uuid.uuid4().hex}"
    refused(make_tgz([_file(target, b"pwned")]), place, ArchiveProblem.ABSOLUTE_PATH)
    assert not os.path.exists(target)


def test_control_characters_and_backslashes(place):
    refused(make_tgz([_file("bot\x1b[31m.py")]), place, ArchiveProblem.BAD_NAME)
    refused(make_tgz([_file("..\\..\\evil")]), place, ArchiveProblem.BAD_NAME)


def test_deeply_nested_path(place):
    refused(
        make_tgz([_file("d/" * 40 + "f")]),
        place,
        ArchiveProblem.TOO_DEEP,
        ArchiveLimits(max_depth=16),
    )


def test_very_long_path(place):
    refused(make_tgz([_file("x" * 5000)]), place, ArchiveProblem.BAD_NAME)


# ------------------------------------------------------------------------------------------------
# Links and special files


def test_symlink_out(place):
    refused(
        make_tgz([_file("bot.py"), _special("passwd", tarfile.SYMTYPE, linkname="/etc/passwd")]),
        place,
        ArchiveProblem.LINK,
    )


def test_symlink_then_write_through_it(place):
    _, _, outside = place
    refused(
        make_tgz(
            [_special("out", tarfile.SYMTYPE, linkname=str(outside)), _file("out/evil", b"pwned")]
        ),
        place,
        ArchiveProblem.LINK,
    )


def test_symlink_to_an_absolute_path_inside_the_destination_is_refused(place):
    _, dest, _ = place
    refused(
        make_tgz([_file("bot.py"), _special("a.py", tarfile.SYMTYPE, linkname=str(dest / "x"))]),
        place,
        ArchiveProblem.LINK,
    )


def test_symlink_escaping_by_dotdot(place):
    error = refused(
        make_tgz([_file("bot.py"), _special("lib/x", tarfile.SYMTYPE, linkname="../../outside")]),
        place,
        ArchiveProblem.LINK,
    )
    assert "'lib/x'" in str(error) and "outside the folder" in str(error)


def test_symlink_escaping_through_another_link(place):
    """Each target alone stays inside when read as text; followed as the kernel would (the first
    link leads to the top, the second climbs two more levels from there), the second leaves."""
    refused(
        make_tgz(
            [
                _file("bot.py"),
                _special("deep/a/b/top", tarfile.SYMTYPE, linkname="../../.."),
                _special("m", tarfile.SYMTYPE, linkname="deep/a/b/top/../.."),
            ]
        ),
        place,
        ArchiveProblem.LINK,
    )


def test_symlink_loop_is_refused(place):
    refused(
        make_tgz(
            [
                _file("bot.py"),
                _special("a", tarfile.SYMTYPE, linkname="b"),
                _special("b", tarfile.SYMTYPE, linkname="a/x"),
            ]
        ),
        place,
        ArchiveProblem.LINK,
    )


def test_a_file_under_a_link_inside_is_refused(place):
    """A link to a folder inside, then a member under the link's name: never written through."""
    refused(
        make_tgz(
            [
                _file("lib/real.py"),
                _special("alias", tarfile.SYMTYPE, linkname="lib"),
                _file("alias/evil.py", b"pwned"),
            ]
        ),
        place,
        ArchiveProblem.DUPLICATE,
    )


def test_a_link_then_a_file_of_the_same_name_is_refused(place):
    refused(
        make_tgz([_special("bot.py", tarfile.SYMTYPE, linkname="x.py"), _file("bot.py")]),
        place,
        ArchiveProblem.DUPLICATE,
    )


def test_symlinks_inside_the_folder_are_kept_as_links(tmp_path):
    """npm's node_modules/.bin links (a file further in), a link to a folder, and a link to a
    member that comes later in the archive: kept as the links they are, as a folder on disk is."""
    data = make_tgz(
        [
            _file("bot.js", b"require('x')\n"),
            _special("node_modules/.bin/cli", tarfile.SYMTYPE, linkname="../pkg/bin/cli.js"),
            _special("lib", tarfile.SYMTYPE, linkname="node_modules/pkg"),
            _file("node_modules/pkg/bin/cli.js", b"#!/usr/bin/env node\n", mode=0o755),
        ]
    )
    folder = unpack(io.BytesIO(data), tmp_path / "bot").folder
    cli = folder / "node_modules" / ".bin" / "cli"
    assert cli.is_symlink() and os.readlink(cli) == "../pkg/bin/cli.js"
    assert cli.read_bytes() == b"#!/usr/bin/env node\n"
    assert (folder / "lib").is_symlink() and (folder / "lib" / "bin" / "cli.js").is_file()


def test_the_recipes_archive_of_a_python_bot_is_accepted(tmp_path):
    """What the page and the docs say to run: `tar czf bot.tar.gz -C FOLDER .`, whose first
    member is the folder itself (``./``) and every other ``./``-prefixed."""
    bot = tmp_path / "mybot"
    bot.mkdir()
    (bot / "bot.py").write_bytes((ROOT / "example_bots" / "heuristic" / "bot.py").read_bytes())
    archive = tmp_path / "bot.tar.gz"
    _recipe(bot, archive)
    with tarfile.open(archive) as tar:
        assert tar.getnames()[0] in (".", "./")
    folder = unpack(archive, tmp_path / "unpacked").folder
    assert sorted(p.name for p in folder.iterdir()) == ["bot.py"]


def test_the_recipes_archive_of_a_node_bot_is_accepted(tmp_path):
    """example_bots/node with its node_modules (npm's .bin links among them), archived by the
    recipe, unpacks to what the build's own scan of the original folder lists."""
    from support import node_example

    from take5_arena.referee.sandbox.context import scan

    bot = node_example(tmp_path / "node")
    if not any((bot / "node_modules" / ".bin").iterdir()):
        pytest.skip("this npm install made no node_modules/.bin links")
    archive = tmp_path / "bot.tar.gz"
    _recipe(bot, archive)
    folder = unpack(archive, tmp_path / "unpacked").folder
    assert any(p.is_symlink() for p in (folder / "node_modules" / ".bin").iterdir())

    def listing(root):
        return sorted((e.path, e.kind, e.target) for e in scan(root).entries)

    assert listing(folder) == listing(bot)


def _recipe(folder, archive) -> None:
    from take5_arena.referee.archive import RECIPE

    argv = RECIPE.replace("bot.tar.gz", str(archive)).replace("FOLDER", str(folder)).split()
    subprocess.run(argv, check=True)


def test_the_folder_member_must_be_a_folder(place):
    refused(make_tgz([_file("./"), _file("bot.py")]), place, ArchiveProblem.BAD_NAME)


def test_hard_link(place):
    refused(
        make_tgz([_file("bot.py"), _special("h", tarfile.LNKTYPE, linkname="/etc/shadow")]),
        place,
        ArchiveProblem.LINK,
    )
    refused(
        make_tgz([_file("bot.py"), _special("h", tarfile.LNKTYPE, linkname="bot.py")]),
        place,
        ArchiveProblem.LINK,
    )


@pytest.mark.parametrize("kind", [tarfile.CHRTYPE, tarfile.BLKTYPE, tarfile.FIFOTYPE])
def test_device_files_and_fifos(place, kind):
    refused(
        make_tgz([_file("bot.py"), _special("dev", kind, devmajor=1, devminor=3)]),
        place,
        ArchiveProblem.SPECIAL_FILE,
    )


def test_setuid_bits_are_dropped(tmp_path):
    data = make_tgz(
        [_file("bot.py", b"print(1)\n", mode=0o4755), _file("data.txt", b"d", mode=0o6666)]
    )
    done = unpack(io.BytesIO(data), tmp_path / "bot", SMALL)
    assert (done.folder / "bot.py").stat().st_mode & 0o7777 == 0o755
    assert (
        done.folder / "data.txt"
    ).stat().st_mode & 0o7777 == 0o644  # setuid/setgid without x: 0644
    data = make_tgz([_file("plain.txt", b"d", mode=0o666)])
    done = unpack(io.BytesIO(data), tmp_path / "bot2", SMALL)
    assert (done.folder / "plain.txt").stat().st_mode & 0o7777 == 0o644


# ------------------------------------------------------------------------------------------------
# Duplicates


def test_duplicate_file(place):
    refused(
        make_tgz([_file("bot.py", b"good"), _file("bot.py", b"evil")]),
        place,
        ArchiveProblem.DUPLICATE,
    )


def test_duplicate_spelled_differently(place):
    refused(
        make_tgz([_file("bot.py", b"good"), _file("./bot.py", b"evil")]),
        place,
        ArchiveProblem.DUPLICATE,
    )


def test_file_where_a_folder_is_needed(place):
    refused(make_tgz([_file("lib", b"a file"), _file("lib/x.py")]), place, ArchiveProblem.DUPLICATE)
    refused(make_tgz([_file("lib/x.py"), _file("lib", b"a file")]), place, ArchiveProblem.DUPLICATE)


# ------------------------------------------------------------------------------------------------
# Bombs and size limits (checked while unpacking)


def test_huge_single_file_is_refused_from_its_header(place):
    info = tarfile.TarInfo("model.bin")
    info.size = 10 * 1024**3  # declared 10 GiB; no data follows: the header alone is refused
    raw = io.BytesIO()
    with gzip.GzipFile(fileobj=raw, mode="wb") as gz:
        gz.write(info.tobuf(tarfile.PAX_FORMAT))
    refused(raw.getvalue(), place, ArchiveProblem.FILE_TOO_LARGE)


def test_tar_bomb_total_size_stops_early(place):
    chunk = b"\0" * (400 * 1024)
    data = make_tgz([_file(f"f{i:03d}", chunk) for i in range(90)], level=9)  # 36 MB of zeros
    parent, dest, _ = place
    reader = CountingReader(data)
    with pytest.raises(ArchiveError) as caught:
        unpack(reader, dest, SMALL)
    assert caught.value.problem is ArchiveProblem.TOO_LARGE
    assert reader.read_bytes < len(data) / 4, (
        "the limit must stop unpacking, not be checked afterwards"
    )
    assert list(parent.iterdir()) == []


def test_gzip_bomb_in_a_header_stops_while_inflating(place):
    """A pax header declaring 64 MB: tarfile would read it into memory; the bounded reader stops
    it."""
    header = tarfile.TarInfo("././@PaxHeader")
    header.type = tarfile.XHDTYPE
    header.size = 64 * 1024 * 1024
    raw = io.BytesIO()
    with gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=9) as gz:
        gz.write(header.tobuf(tarfile.USTAR_FORMAT))
        zeros = b"\0" * (1 << 20)
        for _ in range(64):
            gz.write(zeros)
    data = raw.getvalue()
    parent, dest, _ = place
    reader = CountingReader(data)
    with pytest.raises(ArchiveError) as caught:
        unpack(reader, dest, SMALL)
    assert caught.value.problem in (ArchiveProblem.TOO_LARGE, ArchiveProblem.MALFORMED)
    assert reader.read_bytes < len(data) / 4
    assert list(parent.iterdir()) == []


def test_file_count_bomb_stops_early(place):
    data = make_tgz([_file(f"f{i:05d}", b"") for i in range(3000)])
    parent, dest, _ = place
    reader = CountingReader(data)
    with pytest.raises(ArchiveError) as caught:
        unpack(reader, dest, SMALL)
    assert caught.value.problem is ArchiveProblem.TOO_MANY_FILES
    assert reader.read_bytes < len(data) / 2
    assert list(parent.iterdir()) == []


def test_compressed_upload_too_large(place):
    refused(
        os.urandom(200_000),
        place,
        ArchiveProblem.TOO_LARGE,
        ArchiveLimits(max_archive_bytes=100_000),
    )


# ------------------------------------------------------------------------------------------------
# Not an archive


def test_zip_is_not_accepted(place):
    raw = io.BytesIO()
    with zipfile.ZipFile(raw, "w") as z:
        z.writestr("bot.py", "print(1)")
    error = refused(raw.getvalue(), place, ArchiveProblem.MALFORMED)
    assert "gzip-compressed tar" in str(error)


def test_garbage_and_truncated(place):
    refused(b"hello, not an archive", place, ArchiveProblem.MALFORMED)
    good = make_tgz([_file("bot.py", os.urandom(200_000))], level=0)
    refused(good[: len(good) // 2], place, ArchiveProblem.MALFORMED)


def test_empty_archive(place):
    refused(make_tgz([]), place, ArchiveProblem.EMPTY)


def test_destination_must_not_exist(tmp_path):
    (tmp_path / "bot").mkdir()
    (tmp_path / "bot" / "keep").write_text("mine")
    with pytest.raises(FileExistsError):
        unpack(io.BytesIO(make_tgz([_file("bot.py")])), tmp_path / "bot", SMALL)
    assert (tmp_path / "bot" / "keep").read_text() == "mine"


# ------------------------------------------------------------------------------------------------
# Packing (the author's side) and the round trip


def test_pack_unpack_round_trip_is_deterministic(tmp_path):
    bot = tmp_path / "mybot"
    (bot / "lib").mkdir(parents=True)
    (bot / "bot.py").write_text("print('hi')\n")
    (bot / "lib" / "helper.py").write_text("X = 1\n")
    (bot / "run.sh").write_text("#!/bin/sh\n")
    (bot / "run.sh").chmod(0o755)
    (bot / "__pycache__").mkdir()
    (bot / "__pycache__" / "bot.cpython-311.pyc").write_bytes(b"junk")
    (bot / "alias.py").symlink_to("bot.py")  # inside the folder: stored as the file
    first, second = io.BytesIO(), io.BytesIO()
    assert pack(bot, first) == 4
    pack(bot, second)
    assert first.getvalue() == second.getvalue()
    first.seek(0)
    done = unpack(first, tmp_path / "out")
    got = sorted(
        p.relative_to(done.folder).as_posix() for p in done.folder.rglob("*") if p.is_file()
    )
    assert got == ["alias.py", "bot.py", "lib/helper.py", "run.sh"]
    assert (done.folder / "alias.py").read_text() == "print('hi')\n"
    assert not (done.folder / "alias.py").is_symlink()
    assert os.access(done.folder / "run.sh", os.X_OK)


def test_pack_refuses_a_symlink_out(tmp_path):
    bot = tmp_path / "mybot"
    bot.mkdir()
    (bot / "bot.py").write_text("")
    (bot / "secrets").symlink_to("/etc/passwd")
    with pytest.raises(ArchiveError) as caught:
        pack(bot, io.BytesIO())
    assert caught.value.problem is ArchiveProblem.LINK and "outside" in str(caught.value)


def test_pack_refuses_a_fifo_and_too_many_files(tmp_path):
    bot = tmp_path / "mybot"
    bot.mkdir()
    (bot / "bot.py").write_text("")
    os.mkfifo(bot / "pipe")
    with pytest.raises(ArchiveError) as caught:
        pack(bot, io.BytesIO())
    assert caught.value.problem is ArchiveProblem.SPECIAL_FILE
    (bot / "pipe").unlink()
    for i in range(20):
        (bot / f"f{i}").write_text("")
    with pytest.raises(ArchiveError) as caught:
        pack(bot, io.BytesIO(), ArchiveLimits(max_entries=10))
    assert caught.value.problem is ArchiveProblem.TOO_MANY_FILES


def test_example_bot_packs_and_unpacks(tmp_path):
    buf = io.BytesIO()
    pack(ROOT / "example_bots" / "heuristic", buf)
    buf.seek(0)
    done = unpack(buf, tmp_path / "h")
    assert (done.folder / "bot.py").read_bytes() == (
        ROOT / "example_bots" / "heuristic" / "bot.py"
    ).read_bytes()


def test_pack_takes_what_a_local_build_takes(tmp_path):
    """A remote submit sends node_modules (a Node bot needs it) and leaves caches out, as the
    build's own scan of the folder does."""
    bot = tmp_path / "bot"
    (bot / "node_modules" / "@grpc" / "grpc-js").mkdir(parents=True)
    (bot / "node_modules" / "@grpc" / "grpc-js" / "index.js").write_text("module.exports = 1\n")
    (bot / "__pycache__").mkdir()
    (bot / "__pycache__" / "x.pyc").write_bytes(b"\0")
    (bot / "bot.js").write_text("require('@grpc/grpc-js')\n")
    buf = io.BytesIO()
    pack(bot, buf)
    with tarfile.open(fileobj=io.BytesIO(buf.getvalue()), mode="r:gz") as tar:
        names = {m.name for m in tar.getmembers() if m.isfile()}
    assert names == {"bot.js", "node_modules/@grpc/grpc-js/index.js"}
