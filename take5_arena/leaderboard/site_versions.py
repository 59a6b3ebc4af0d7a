"""A live site published in complete versions, switched to atomically.

``referee serve`` republishes its site every few games while people (and ``referee verify --site``)
read it. Writing into the folder that is being read shows a reader half of each: a manifest that
names games whose replays are not written yet, standings of one publication next to the game list
of another. So a live site is a symbolic link::

    site -> .site.versions/000042            what readers open (a web server follows the link)
    .site.versions/000041/                   the version before, kept a while for readers in it
    .site.versions/000042/                   the current version, complete

:func:`publish_versioned` makes version N+1 next to N: a copy of N in which the files the writer
replaces (take5_arena/leaderboard/site_build.py writes every file to a new name and renames it over
the old) are hard links, and the few it changes in place (``manifest.jsonl`` is appended to) real
copies; the writer brings the copy up to date incrementally, as it would the folder itself; then
one ``rename(2)`` of a new link over ``site`` switches every later reader to N+1. A version being
made has a name of its own (``.000043.PID.partial``), so a publication cut off by a killed server
leaves the current version untouched and is removed by the next one.

Readers that resolve the link once (``verify --site`` does) see one version throughout; a version
is removed only when :data:`KEEP_VERSIONS` newer ones exist and the next one has been current for
:data:`KEEP_SECONDS`, so a reader has that long to finish.

A ``site`` that is a plain folder (published before this, or by ``referee publish``) becomes the
first old version: it is moved into the versions folder and the link takes its place.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")

KEEP_VERSIONS = 2
"""Versions kept besides the current one (for readers that opened them)."""
KEEP_SECONDS = 600.0
"""A superseded version is kept at least this long after the next one became current."""
COPIED = frozenset({"manifest.jsonl"})
"""Files the writer changes in place (never replaced by a rename): copied, not linked."""
LINKED_UNDER = ("replays", "data")
"""Folders whose files the writer only ever replaces whole: shared with the previous version by
hard links (the replays are most of a site's bytes)."""
_DIGITS = 6


def versions_dir(site: Path) -> Path:
    """Where the versions of ``site`` live: a hidden folder next to it."""
    return site.parent / f".{site.name}.versions"


def is_versioned(site: str | Path) -> bool:
    """Whether ``site`` is a link into its own versions folder (a live site)."""
    path = Path(site)
    if not path.is_symlink():
        return False
    target = Path(os.readlink(path))
    return target.parent.name == versions_dir(path).name


def current_version(site: str | Path) -> Path | None:
    """The folder that ``site`` shows now (itself when it is a plain folder; None when there is
    nothing)."""
    path = Path(site)
    if path.is_symlink():
        resolved = path.resolve()
        return resolved if resolved.is_dir() else None
    return path if path.is_dir() else None


def publish_versioned(site: str | Path, write: Callable[[Path], T]) -> T:
    """Make a new complete version of ``site`` with ``write(folder)`` (given a copy of the current
    version to bring up to date), switch ``site`` to it atomically, and remove versions no reader
    needs any longer; return what ``write`` returned. When ``write`` raises, ``site`` is
    unchanged."""
    site = Path(site)
    versions = versions_dir(site)
    versions.mkdir(parents=True, exist_ok=True)
    for leftover in versions.glob(".*.partial"):  # a publication that was cut off
        if not _alive(leftover.name.split(".")[2]):
            shutil.rmtree(leftover, ignore_errors=True)
    current = current_version(site)
    number = max((n for n, _ in _numbered(versions)), default=0) + 1
    name = f"{number:0{_DIGITS}d}"
    partial = versions / f".{name}.{os.getpid()}.partial"
    if current is not None:
        _clone(current, partial)
    else:
        partial.mkdir()
    try:
        result = write(partial)
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)
        raise
    final = versions / name
    os.rename(partial, final)
    if site.exists() and not site.is_symlink():
        # a plain folder: it becomes the version before this one (a moment with no site at all,
        # once, between these two renames)
        os.rename(site, versions / f"{number - 1:0{_DIGITS}d}-folder")
    link = site.parent / f".{site.name}.link-{os.getpid()}"
    link.unlink(missing_ok=True)
    os.symlink(Path(versions.name) / name, link)
    os.replace(link, site)
    _prune(versions, keep=final)
    return result


def _alive(pid: str) -> bool:
    """Whether the process that made a partial version still runs (another publisher: its version
    is left alone)."""
    if not pid.isdigit() or int(pid) == os.getpid():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _numbered(versions: Path) -> list[tuple[int, Path]]:
    out = []
    for child in versions.iterdir():
        head = child.name.split("-", 1)[0]
        if head.isdigit() and child.is_dir() and not child.is_symlink():
            out.append((int(head), child))
    return sorted(out)


def _clone(source: Path, dest: Path) -> None:
    """``dest`` as a copy of ``source``: hard links under :data:`LINKED_UNDER`, copies elsewhere;
    symbolic links are not followed (a site holds none; one planted is not carried over)."""
    dest.mkdir()
    for root, dirs, files in os.walk(source):
        rel = Path(root).relative_to(source)
        linked = bool(rel.parts) and rel.parts[0] in LINKED_UNDER
        for d in dirs:
            if not (Path(root) / d).is_symlink():
                (dest / rel / d).mkdir()
        for f in files:
            src = Path(root) / f
            if src.is_symlink() or not src.is_file():
                continue
            if linked and f not in COPIED:
                os.link(src, dest / rel / f)
            else:
                shutil.copy2(src, dest / rel / f)


def _prune(versions: Path, *, keep: Path) -> None:
    """Remove the versions older than the newest :data:`KEEP_VERSIONS` superseded ones whose
    successor has been current for :data:`KEEP_SECONDS`."""
    numbered = [p for _, p in _numbered(versions) if p != keep]
    now = time.time()
    successors = [p for _, p in _numbered(versions)]
    for old in numbered[:-KEEP_VERSIONS] if KEEP_VERSIONS else numbered:
        after = successors[successors.index(old) + 1]
        try:
            since = now - after.stat().st_mtime
        except OSError:
            continue
        if since >= KEEP_SECONDS:
            shutil.rmtree(old, ignore_errors=True)


__all__ = [
    "COPIED",
    "KEEP_SECONDS",
    "KEEP_VERSIONS",
    "LINKED_UNDER",
    "current_version",
    "is_versioned",
    "publish_versioned",
    "versions_dir",
]
