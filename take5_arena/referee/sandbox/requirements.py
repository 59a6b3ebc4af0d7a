"""A bot's ``requirements.txt``: wheels only, from the package index only, never built on the host.

pip is a build tool as much as an installer: given a local folder (``./evilpkg``), an archive in the
current directory (``evilpkg-1.0.tar.gz``), a ``file:`` or ``https:`` URL, a VCS link (``git+...``)
or an editable (``-e``), it builds that package, and building runs the package's own build backend:
its code, as the referee's user, on the referee's host. ``--only-binary=:all:`` does not cover
direct references. So a bot's requirements are not given to pip as text at all:

* every line must be a plain PEP 508 requirement, ``name[extras] specifiers ; marker``, parsed by
  ``packaging`` (the parser pip itself uses); a URL (``name @ url``), any pip option (``-e``,
  ``-r``, ``--index-url``, ``--extra-index-url``, ``-f``, ``--trusted-host``...), a path or an
  archive-like name is refused with the line number and the reason;
* pip receives the *re-serialised* requirements (``str(Requirement)``), with
  ``--only-binary=:all:`` and an explicit platform, Python version and ABI (pip then refuses to
  build anything, even an sdist the index offers), and runs in an empty temporary directory (so
  no name can resolve to a file next to it) with ``--no-input``. The index is the operator's (pip's
  own configuration, or ``pip_args``): the bot cannot name one.

Installing a wheel writes files and runs nothing (pip refuses wheel paths outside the target).
The installed files are then copied into the image like the bot's own folder.
"""

from __future__ import annotations

import os
import platform
import re
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement

from .build_errors import BuildFailedError, BuildRefusedError

_NAME = re.compile(r"^[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?$")
_ARCHIVE_SUFFIXES = (".whl", ".zip", ".tar", ".tgz", ".tbz", ".txz", ".tlz", ".gz", ".bz2", ".xz")
MAX_REQUIREMENTS = 64
PIP_TIMEOUT = 600.0


def parse_requirements(text: str) -> list[Requirement]:
    """The requirements of a requirements.txt, or :class:`BuildRefusedError` naming the first bad
    line.

    Comments (``#`` at the start or after a space) and blank lines are skipped. Line
    continuations (a trailing backslash) are refused: they are how an option hides in a line."""
    reqs: list[Requirement] = []
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.split(" #", 1)[0].split("\t#", 1)[0].strip()
        if not line or line.startswith("#"):
            continue
        shown = raw.strip()[:80]
        if line.startswith("-"):
            raise _bad(
                lineno,
                shown,
                "pip options are not allowed (no -e, -r, -c, --index-url, "
                "--extra-index-url, -f ...): the arena installs from its own package index",
            )
        if line.endswith("\\"):
            raise _bad(lineno, shown, "line continuations are not allowed")
        try:
            req = Requirement(line)
        except InvalidRequirement as exc:
            reason = (
                "a path or URL" if ("/" in line or ":" in line) else f"not a requirement ({exc})"
            )
            raise _bad(lineno, shown, f"{reason}: write `name` or `name>=1.0`") from None
        if req.url is not None:
            raise _bad(
                lineno,
                shown,
                "`name @ url` is not allowed: wheels come from the package index only",
            )
        if not _NAME.match(req.name) or req.name.lower().endswith(_ARCHIVE_SUFFIXES):
            raise _bad(lineno, shown, "not a package name")
        reqs.append(req)
    if len(reqs) > MAX_REQUIREMENTS:
        raise BuildRefusedError(
            f"requirements.txt has {len(reqs)} requirements, the limit is {MAX_REQUIREMENTS}"
        )
    return reqs


def _bad(lineno: int, shown: str, reason: str) -> BuildRefusedError:
    return BuildRefusedError(f"requirements.txt line {lineno}: {shown!r} is refused: {reason}")


def manylinux_platforms(arch: str, max_glibc_minor: int = 36) -> list[str]:
    """Platform tags a Debian bookworm image (glibc 2.36) can load, best first."""
    plats = [f"manylinux_2_{m}_{arch}" for m in range(max_glibc_minor, 16, -1)]
    plats.append(f"manylinux2014_{arch}")
    if arch in ("x86_64", "i686"):
        plats += [f"manylinux2010_{arch}", f"manylinux1_{arch}"]
    return plats


def pip_command(
    requirements: Sequence[Requirement],
    target: Path,
    *,
    python_version: str,
    pip_args: Sequence[str] = (),
) -> list[str]:
    """The pip command line for :func:`install_wheels` (pure: tests read it)."""
    major, minor = python_version.split(".")[:2]
    cmd = [
        os.environ.get("TAKE5_PIP_PYTHON", "") or sys.executable or "python3",
        "-m",
        "pip",
        "install",
        "--disable-pip-version-check",
        "--no-input",
        "--no-compile",
        "--no-warn-script-location",
        "--no-cache-dir",
        "--target",
        str(target),
        "--only-binary=:all:",
        "--python-version",
        f"{major}.{minor}",
        "--implementation",
        "cp",
        "--abi",
        f"cp{major}{minor}",
        "--abi",
        "abi3",
        "--abi",
        "none",
    ]
    for plat in manylinux_platforms(platform.machine() or "x86_64"):
        cmd += ["--platform", plat]
    cmd += [*pip_args, "--", *(str(r) for r in requirements)]
    return cmd


def install_wheels(
    requirements: Sequence[Requirement],
    target: Path,
    *,
    python_version: str,
    pip_args: Sequence[str] = (),
    timeout: float = PIP_TIMEOUT,
) -> str:
    """Install the wheels of ``requirements`` into ``target`` for CPython ``python_version`` on
    this machine's architecture; return pip's output. ``pip_args`` are the operator's (e.g.
    ``--no-index --find-links DIR``), never the bot's."""
    if not requirements:
        return ""
    cmd = pip_command(requirements, target, python_version=python_version, pip_args=pip_args)
    with tempfile.TemporaryDirectory(prefix="take5-pip-") as empty:
        try:
            proc = subprocess.run(
                cmd,
                cwd=empty,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
                errors="replace",
                timeout=timeout,
                check=False,
            )
        except subprocess.TimeoutExpired:
            raise BuildFailedError(
                f"pip install of the bot's requirements timed out after {timeout:g}s"
            ) from None
    if proc.returncode != 0:
        names = ", ".join(str(r) for r in requirements)
        raise BuildFailedError(
            f"pip could not install wheels for Python {python_version} ({names}); only binary "
            "wheels from the package index are allowed",
            proc.stdout,
        )
    return proc.stdout
