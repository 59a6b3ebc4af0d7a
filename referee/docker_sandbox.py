"""Build bot images and run bots in locked-down Docker containers.

Everything goes through the ``docker`` command line (no extra Python dependency): every command is
the one an operator would type, and its own error text ends up in the exception we raise.

Images (:func:`build_image`)
    bot image = base image (``take5/python:3.11`` by default, made by ``scripts/setup-docker.sh``;
    ``python:3.11-slim`` works on a machine with a registry) + the SDK package ``take5`` in
    ``/opt/take5/site`` + wheels of the bot's ``requirements.txt`` (installed on the host with
    ``pip install --target --only-binary=:all:`` for the image's Python version, then copied in:
    the offline base has no pip, and wheels-only means no bot author's ``setup.py`` ever runs on the
    referee host) + the bot's folder in ``/bot``. A bot folder with its own ``Dockerfile`` is built
    with it instead (build context = the bot folder + ``take5_sdk/take5``; build-arg
    ``TAKE5_BASE_IMAGE``). Images are labelled and tagged by a hash of their sources and only
    rebuilt when that changes.

Containers (:func:`start_bot_container`, :class:`DockerSandbox`)
    ``--network none --read-only --tmpfs /tmp --user 10001:10001 --cap-drop ALL
    --security-opt no-new-privileges``, memory without swap, CPU quota, pids limit, a bounded
    json-file log, labels ``take5.arena=1 take5.run=... take5.game=...``, and the bot's own socket
    directory bind-mounted at ``/run/take5`` (a tiny tmpfs when the referee runs as root, so a bot
    cannot fill the host's disk through it). The bot serves gRPC on ``TAKE5_LISTEN``
    (``unix:/run/take5/bot.sock``); the referee connects to :attr:`RunningContainer.address`.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import hashlib
import json
import logging
import os
import platform
import re
import secrets
import shutil
import socket
import stat
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

log = logging.getLogger("referee.docker")

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_SDK_DIR = REPO_ROOT / "sdk"
DEFAULT_BASE_IMAGE = "take5/python:3.11"
IMAGE_REPOSITORY = "take5-bot"

BOT_UID = 10001
BOT_GID = 10001
SITE_DIR = "/opt/take5/site"
CONTAINER_SOCKET_DIR = "/run/take5"
SOCKET_NAME = "bot.sock"
LISTEN_ADDRESS = f"unix:{CONTAINER_SOCKET_DIR}/{SOCKET_NAME}"

LABEL_ARENA = "take5.arena"
LABEL_RUN = "take5.run"
LABEL_GAME = "take5.game"
LABEL_SEAT = "take5.seat"
LABEL_SOCKET_DIR = "take5.socket_dir"
LABEL_BOT = "take5.bot"
LABEL_BOT_VERSION = "take5.bot.version"
LABEL_SDK_VERSION = "take5.sdk.version"
LABEL_PROTOCOL = "take5.protocol"
LABEL_SOURCE_HASH = "take5.source_hash"
LABEL_BUILDER = "take5.builder"
LABEL_BASE = "take5.base"

#: Bumped when the way images are built changes, so that old images are rebuilt.
BUILDER_VERSION = "1"

#: Unix socket paths are limited to 108 bytes including the terminating NUL.
MAX_SOCKET_PATH = 107
MAX_BOT_BYTES = 64 * 1024 * 1024

_IGNORED_DIRS = {
    "__pycache__", ".git", ".hg", ".svn", ".venv", "venv", ".mypy_cache", ".pytest_cache",
    ".ruff_cache", ".hypothesis", ".tox", ".idea", ".vscode",
}
_IGNORED_SUFFIXES = (".pyc", ".pyo")
_IGNORED_FILES = {".DS_Store"}


# --------------------------------------------------------------------------------------------
# Errors


class SandboxError(Exception):
    """Base class of everything this module raises on purpose."""


class DockerUnavailable(SandboxError):
    """No docker client, or no engine answers (run ``scripts/setup-docker.sh``)."""


class DockerCommandError(SandboxError):
    """A docker command failed; carries the command, its exit code and its stderr."""

    def __init__(self, cmd: Sequence[str], returncode: int | None, stderr: str, message: str = ""):
        self.cmd = list(cmd)
        self.returncode = returncode
        self.stderr = stderr
        what = message or f"`{' '.join(self.cmd[:3])} ...` failed (exit {returncode})"
        super().__init__(f"{what}: {stderr.strip()[-2000:]}" if stderr.strip() else what)


class ImageBuildError(SandboxError):
    """Building a bot image failed. ``output`` is the build's own output (pip's or docker's)."""

    def __init__(self, message: str, output: str = "", *, bot_dir: str | os.PathLike | None = None):
        self.output = output
        self.bot_dir = str(bot_dir) if bot_dir is not None else None
        tail = "\n".join(output.strip().splitlines()[-25:])
        super().__init__(f"{message}\n--- build output (last lines) ---\n{tail}" if tail else message)


class ContainerStartError(SandboxError):
    """A bot container could not be started, or exited / timed out before its socket appeared."""

    def __init__(
        self,
        message: str,
        *,
        name: str = "",
        exit_code: int | None = None,
        oom_killed: bool = False,
        logs: str = "",
    ):
        self.name = name
        self.exit_code = exit_code
        self.oom_killed = oom_killed
        self.logs = logs
        detail = message
        if exit_code is not None:
            detail += f" (exit code {exit_code}{', OOM-killed' if oom_killed else ''})"
        tail = "\n".join(logs.strip().splitlines()[-20:])
        super().__init__(f"{detail}\n--- container log (last lines) ---\n{tail}" if tail else detail)


class BotNotReady(ContainerStartError):
    """The container kept running but its socket did not appear in time."""


# --------------------------------------------------------------------------------------------
# The docker command line


class Docker:
    """Runs ``docker`` commands. ``binary`` defaults to ``$TAKE5_DOCKER`` or ``docker`` on PATH."""

    def __init__(self, binary: str | None = None, *, timeout: float = 120.0):
        self.binary = binary or os.environ.get("TAKE5_DOCKER") or "docker"
        self.timeout = timeout
        self._checked: str | None = None

    def _argv(self, args: Sequence[str]) -> list[str]:
        exe = self._exe = getattr(self, "_exe", None) or shutil.which(self.binary)
        if exe is None:
            raise DockerUnavailable(
                f"no docker client `{self.binary}` on PATH (install docker.io, see scripts/setup-docker.sh)"
            )
        return [exe, *args]

    def run(
        self,
        args: Sequence[str],
        *,
        timeout: float | None = None,
        check: bool = True,
        env: Mapping[str, str] | None = None,
        merge_output: bool = False,
    ) -> subprocess.CompletedProcess[str]:
        argv = self._argv(args)
        log.debug("docker %s", " ".join(args))
        try:
            proc = subprocess.run(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT if merge_output else subprocess.PIPE,
                text=True,
                errors="replace",
                check=False,
                timeout=timeout or self.timeout,
                env={**os.environ, **env} if env else None,
            )
        except subprocess.TimeoutExpired as exc:
            out = exc.stdout or ""
            if isinstance(out, bytes):
                out = out.decode(errors="replace")
            raise DockerCommandError(argv, None, out, f"`docker {args[0]}` timed out after {exc.timeout}s") from None
        if proc.returncode != 0:
            err = proc.stdout if merge_output else proc.stderr
            if _looks_like_no_engine(err):
                raise DockerUnavailable(f"the docker engine does not answer: {err.strip()} "
                                        "(start it with scripts/setup-docker.sh)")
            if check:
                raise DockerCommandError(argv, proc.returncode, err)
        return proc

    def check(self) -> str:
        """Raise :class:`DockerUnavailable` unless an engine answers; return its version."""
        if self._checked is None:
            try:
                proc = self.run(["version", "--format", "{{.Server.Version}}"], timeout=20)
            except DockerCommandError as exc:
                raise DockerUnavailable(f"the docker engine does not answer: {exc.stderr.strip()}") from None
            self._checked = proc.stdout.strip()
        return self._checked

    def image_inspect(self, ref: str) -> dict | None:
        proc = self.run(["image", "inspect", ref], check=False)
        if proc.returncode != 0:
            if "no such image" in proc.stderr.lower() or "not found" in proc.stderr.lower():
                return None
            raise DockerCommandError(["docker", "image", "inspect", ref], proc.returncode, proc.stderr)
        return json.loads(proc.stdout)[0]

    def container_inspect(self, ref: str) -> dict | None:
        proc = self.run(["container", "inspect", ref], check=False)
        if proc.returncode != 0:
            if "no such" in proc.stderr.lower():
                return None
            raise DockerCommandError(["docker", "container", "inspect", ref], proc.returncode, proc.stderr)
        return json.loads(proc.stdout)[0]

    def remove_containers(self, refs: Sequence[str]) -> None:
        if refs:
            proc = self.run(["rm", "-f", "-v", *refs], check=False)
            if proc.returncode != 0 and "no such container" not in proc.stderr.lower():
                raise DockerCommandError(["docker", "rm", "-f", *refs], proc.returncode, proc.stderr)


def _looks_like_no_engine(err: str) -> bool:
    e = err.lower()
    return (
        "cannot connect to the docker daemon" in e
        or "is the docker daemon running" in e
        or "error during connect" in e
        or ("permission denied" in e and "docker.sock" in e)
    )


_default_docker: Docker | None = None


def default_docker() -> Docker:
    global _default_docker
    if _default_docker is None:
        _default_docker = Docker()
    return _default_docker


def check_docker(docker: Docker | None = None) -> str:
    """Return the engine's version, or raise :class:`DockerUnavailable` with the reason."""
    return (docker or default_docker()).check()


def docker_available(docker: Docker | None = None) -> bool:
    try:
        check_docker(docker)
        return True
    except DockerUnavailable:
        return False


# --------------------------------------------------------------------------------------------
# Images


@dataclasses.dataclass(frozen=True)
class ImageInfo:
    tag: str
    id: str
    bot_name: str
    bot_version: str
    sdk_version: str
    protocol_version: str
    source_hash: str
    base_image: str
    built: bool  # False when an existing image with the same source hash was reused
    build_seconds: float
    labels: Mapping[str, str]

    def __str__(self) -> str:
        return self.tag


def _bot_files(root: Path) -> list[Path]:
    """Files of a folder, sorted, without caches and VCS dirs. Symlinks are listed, not followed."""
    out: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if d not in _IGNORED_DIRS and not d.endswith(".egg-info"))
        d = Path(dirpath)
        for link in (x for x in dirnames if (d / x).is_symlink()):
            out.append(d / link)
        for f in sorted(filenames):
            if f in _IGNORED_FILES or f.endswith(_IGNORED_SUFFIXES):
                continue
            out.append(d / f)
    return sorted(out)


def _hash_tree(h: hashlib._Hash, root: Path, prefix: str) -> int:
    total = 0
    for path in _bot_files(root):
        rel = path.relative_to(root).as_posix()
        st = path.lstat()
        if stat.S_ISLNK(st.st_mode):
            h.update(f"{prefix}/{rel}\0link\0{os.readlink(path)}\0".encode())
        elif stat.S_ISREG(st.st_mode):
            h.update(f"{prefix}/{rel}\0{'x' if st.st_mode & 0o111 else '-'}\0{st.st_size}\0".encode())
            with open(path, "rb") as fh:
                for chunk in iter(lambda: fh.read(1 << 20), b""):
                    h.update(chunk)
            total += st.st_size
        elif stat.S_ISDIR(st.st_mode):
            continue
        else:
            raise ImageBuildError(f"{path}: not a regular file, directory or symlink", bot_dir=root)
    return total


def source_hash(
    bot_dir: str | os.PathLike,
    sdk_dir: str | os.PathLike = DEFAULT_SDK_DIR,
    *,
    extra: Iterable[str] = (),
) -> str:
    """sha256 over the bot folder's files, the SDK package's files and ``extra`` strings."""
    h = hashlib.sha256()
    h.update(f"take5-builder-{BUILDER_VERSION}\0".encode())
    for item in extra:
        h.update(f"{item}\0".encode())
    size = _hash_tree(h, Path(bot_dir), "bot")
    if size > MAX_BOT_BYTES:
        raise ImageBuildError(f"bot folder {bot_dir} has {size} bytes, more than {MAX_BOT_BYTES}", bot_dir=bot_dir)
    _hash_tree(h, Path(sdk_dir) / "take5", "sdk")
    return h.hexdigest()


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def sdk_versions(sdk_dir: str | os.PathLike = DEFAULT_SDK_DIR) -> tuple[str, str]:
    """(sdk version, protocol version) read from the SDK's sources without importing them."""
    sdk = Path(sdk_dir)
    version = ""
    m = re.search(r"""^__version__\s*=\s*["']([^"']+)["']""", _read_text(sdk / "take5" / "__init__.py"), re.MULTILINE)
    if m:
        version = m.group(1)
    else:
        m = re.search(r"""^version\s*=\s*["']([^"']+)["']""", _read_text(sdk / "pyproject.toml"), re.MULTILINE)
        version = m.group(1) if m else "unknown"
    protocol = ""
    for py in sorted((sdk / "take5").rglob("*.py")):
        m = re.search(r"""^PROTOCOL_VERSION\s*=\s*["']?([\w.\-]+)""", _read_text(py), re.MULTILINE)
        if m:
            protocol = m.group(1)
            break
    if not protocol:
        vs = sorted(
            (int(p.name[1:]), p.name)
            for p in (sdk / "take5").glob("v*")
            if p.is_dir() and p.name[1:].isdigit()
        )
        protocol = vs[-1][1] if vs else "unknown"
    return version, protocol


def _sdk_requirements(sdk_dir: Path) -> list[str]:
    text = _read_text(sdk_dir / "pyproject.toml")
    m = re.search(r"^dependencies\s*=\s*\[(.*?)\]", text, re.MULTILINE | re.DOTALL)
    if m:
        deps = re.findall(r"""["']([^"']+)["']""", m.group(1))
        if deps:
            return deps
    return ["grpcio>=1.60", "protobuf>=5.26"]


def _bot_version(bot_dir: Path) -> str | None:
    v = _read_text(bot_dir / "VERSION").strip()
    if v:
        return v.splitlines()[0].strip()
    text = _read_text(bot_dir / "bot.py")
    # __version__ = "..." at module level, else the SDK Bot's class attribute `version = "..."`.
    m = (re.search(r"""^__version__\s*=\s*["']([^"']+)["']""", text, re.MULTILINE)
         or re.search(r"""^\s+version\s*=\s*["']([^"']+)["']""", text, re.MULTILINE))
    return m.group(1) if m else None


def _slug(name: str) -> str:
    s = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")
    return s[:60] or "bot"


_REQ_REJECT = re.compile(r"(://|^\s*[-./~]|\s@\s|^\s*\w[\w.\-]*\s*@)")


def check_requirements(text: str) -> list[str]:
    """The requirement lines of a requirements.txt, refusing options, URLs and paths.

    Only plain ``name[extras] specifier ; marker`` lines are accepted: an ``--index-url``, a
    ``-e``/``-r``/``-c`` line, ``git+https://...`` or ``pkg @ file://...`` could make pip fetch or
    build arbitrary code on the referee host.
    """
    reqs = []
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.split(" #", 1)[0].strip()
        if not line or line.startswith("#"):
            continue
        if _REQ_REJECT.search(line):
            raise ImageBuildError(
                f"requirements.txt line {lineno}: {raw.strip()!r} is not allowed: only plain "
                "requirements like `numpy>=1.24` (no pip options, URLs, paths or `name @ url`)"
            )
        reqs.append(line)
    return reqs


def _manylinux_platforms(arch: str, max_glibc_minor: int = 36) -> list[str]:
    plats = [f"manylinux_2_{m}_{arch}" for m in range(max_glibc_minor, 16, -1)]
    if arch in ("x86_64", "i686"):
        plats += [f"manylinux2014_{arch}", f"manylinux2010_{arch}", f"manylinux1_{arch}"]
    else:
        plats += [f"manylinux2014_{arch}"]
    return plats


def pip_target_install(
    requirements: Sequence[str],
    target: Path,
    *,
    python_version: str,
    pip_args: Sequence[str] = (),
    timeout: float = 600.0,
) -> str:
    """``pip install --target`` wheels (only wheels) for CPython ``python_version`` on this machine's
    architecture and glibc Linux. Returns pip's output; raises :class:`ImageBuildError` on failure."""
    if not requirements:
        return ""
    major, minor = python_version.split(".")[:2]
    arch = platform.machine() or "x86_64"
    cmd = [
        os.environ.get("TAKE5_PIP_PYTHON", "") or _host_python(), "-m", "pip", "install",
        "--disable-pip-version-check", "--no-input", "--no-compile", "--no-warn-script-location",
        "--target", str(target), "--only-binary=:all:",
        "--python-version", f"{major}.{minor}", "--implementation", "cp",
        "--abi", f"cp{major}{minor}", "--abi", "abi3", "--abi", "none",
    ]
    for plat in _manylinux_platforms(arch):
        cmd += ["--platform", plat]
    cmd += [*pip_args, *requirements]
    log.debug("pip: %s", " ".join(cmd))
    try:
        proc = subprocess.run(
            cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            text=True, errors="replace", timeout=timeout, check=False,
        )
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode(errors="replace") if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        raise ImageBuildError(f"pip install timed out after {timeout}s", out) from None
    if proc.returncode != 0:
        raise ImageBuildError(
            f"pip could not install wheels for Python {major}.{minor} ({', '.join(requirements)}); "
            "only binary wheels are allowed", proc.stdout,
        )
    return proc.stdout


def _host_python() -> str:
    import sys

    return sys.executable or "python3"


def _copy_tree(src: Path, dst: Path) -> None:
    """Copy the filtered files of ``src`` into ``dst`` with world-readable modes (the bot runs as
    uid 10001, not as the files' owner). Symlinks are copied as symlinks, never followed."""
    dst.mkdir(parents=True, exist_ok=True)
    os.chmod(dst, 0o755)
    for path in _bot_files(src):
        rel = path.relative_to(src)
        out = dst / rel
        out.parent.mkdir(parents=True, exist_ok=True)
        os.chmod(out.parent, 0o755)
        if path.is_symlink():
            os.symlink(os.readlink(path), out)
        else:
            shutil.copyfile(path, out)
            os.chmod(out, 0o755 if os.stat(path).st_mode & 0o111 else 0o644)


_build_locks: dict[str, threading.Lock] = {}
_build_locks_guard = threading.Lock()
_python_versions: dict[str, str] = {}


def _lock_for(key: str) -> threading.Lock:
    with _build_locks_guard:
        return _build_locks.setdefault(key, threading.Lock())


def _base_python_version(docker: Docker, base_image: str, base: dict) -> str:
    labels = (base.get("Config") or {}).get("Labels") or {}
    if labels.get("take5.python"):
        return labels["take5.python"]
    if base["Id"] not in _python_versions:
        proc = docker.run(
            ["run", "--rm", "--network", "none", "--entrypoint", "python3", base_image, "-c",
             "import sys; print('%d.%d' % sys.version_info[:2])"],
            check=False, timeout=60,
        )
        if proc.returncode != 0 or not re.fullmatch(r"\d+\.\d+", proc.stdout.strip()):
            raise ImageBuildError(
                f"cannot find python3 in base image {base_image}", proc.stdout + proc.stderr
            )
        _python_versions[base["Id"]] = proc.stdout.strip()
    return _python_versions[base["Id"]]


def _ensure_base(docker: Docker, base_image: str) -> dict:
    base = docker.image_inspect(base_image)
    if base is None:
        proc = docker.run(["pull", base_image], check=False, timeout=600, merge_output=True)
        base = docker.image_inspect(base_image) if proc.returncode == 0 else None
        if base is None:
            hint = " (run scripts/setup-docker.sh to build it)" if base_image.startswith("take5/") else ""
            raise ImageBuildError(
                f"base image {base_image} is not present locally and could not be pulled{hint}",
                proc.stdout,
            )
    return base


_buildkit: bool | None = None


def _build_cmd_extra(docker: Docker) -> list[str]:
    """``--progress=plain`` when ``docker build`` is BuildKit (buildx installed), so the failure
    output is the whole log; the legacy builder prints it anyway."""
    global _buildkit
    if _buildkit is None:
        if os.environ.get("DOCKER_BUILDKIT") == "0":
            _buildkit = False
        else:
            _buildkit = docker.run(["buildx", "version"], check=False, timeout=20).returncode == 0
    return ["--progress=plain"] if _buildkit else ["--rm", "--force-rm"]


def build_image(
    bot_dir: str | os.PathLike,
    *,
    name: str | None = None,
    version: str | None = None,
    base_image: str = DEFAULT_BASE_IMAGE,
    sdk_dir: str | os.PathLike = DEFAULT_SDK_DIR,
    force: bool = False,
    pip_args: Sequence[str] = (),
    build_network: str = "none",
    timeout: float = 900.0,
    docker: Docker | None = None,
) -> ImageInfo:
    """Build (or reuse) the image of a bot folder. See the module docstring for what goes in.

    ``name`` defaults to the folder's name; ``version`` to the folder's ``VERSION`` file, else
    ``__version__`` in bot.py, else ``0+<hash>``. ``pip_args`` are extra arguments for the host pip
    (e.g. ``["--no-index", "--find-links", "/wheels"]``); the bot's requirements.txt itself may not
    carry options. ``build_network`` is the network of ``RUN`` steps (``none``; a Dockerfile bot
    that downloads during its build needs ``host`` or ``default``).
    """
    docker = docker or default_docker()
    bot = Path(bot_dir).resolve()
    sdk = Path(sdk_dir).resolve()
    if not bot.is_dir():
        raise ImageBuildError(f"bot folder {bot} does not exist", bot_dir=bot)
    own_dockerfile = (bot / "Dockerfile").is_file()
    if not own_dockerfile and not (bot / "bot.py").is_file():
        raise ImageBuildError(f"bot folder {bot} has neither bot.py nor a Dockerfile", bot_dir=bot)
    if not (sdk / "take5" / "__init__.py").is_file():
        raise ImageBuildError(f"no SDK package at {sdk / 'take5'}", bot_dir=bot)

    bot_name = name or bot.name
    if not bot_name.isprintable() or not bot_name.strip():
        raise ImageBuildError(f"bot name {bot_name!r} must be printable text", bot_dir=bot)
    sdk_version, protocol = sdk_versions(sdk)
    docker.check()
    base = _ensure_base(docker, base_image)
    base_id = base["Id"]
    given_version = version or _bot_version(bot)
    digest = source_hash(
        bot, sdk, extra=(bot_name, given_version or "", base_image, base_id, *pip_args),
    )
    bot_version = given_version or f"0+{digest[:8]}"
    tag = f"{IMAGE_REPOSITORY}/{_slug(bot_name)}:{digest[:16]}"
    labels = {
        LABEL_BOT: bot_name,
        LABEL_BOT_VERSION: bot_version,
        LABEL_SDK_VERSION: sdk_version,
        LABEL_PROTOCOL: protocol,
        LABEL_SOURCE_HASH: digest,
        LABEL_BUILDER: BUILDER_VERSION,
        LABEL_BASE: base_image,
    }

    def info(image: dict, built: bool, seconds: float) -> ImageInfo:
        return ImageInfo(
            tag=tag, id=image["Id"], bot_name=bot_name, bot_version=bot_version,
            sdk_version=sdk_version, protocol_version=protocol, source_hash=digest,
            base_image=base_image, built=built, build_seconds=seconds,
            labels=dict((image.get("Config") or {}).get("Labels") or {}),
        )

    with _lock_for(tag):
        if not force:
            existing = docker.image_inspect(tag)
            if existing and ((existing.get("Config") or {}).get("Labels") or {}).get(LABEL_SOURCE_HASH) == digest:
                log.info("image %s is up to date", tag)
                return info(existing, False, 0.0)
        t0 = time.monotonic()
        output = []
        with tempfile.TemporaryDirectory(prefix="take5-build-") as tmp:
            ctx = Path(tmp) / "ctx"
            if own_dockerfile:
                _copy_tree(bot, ctx)
                _copy_tree(sdk / "take5", ctx / "take5_sdk" / "take5")
                dockerfile = ctx / "Dockerfile"
                label_args = [a for k, v in labels.items() for a in ("--label", f"{k}={v}")]
            else:
                root = ctx / "root"
                site = root / SITE_DIR.lstrip("/")
                _copy_tree(bot, root / "bot")
                _copy_tree(sdk / "take5", site / "take5")
                (root / CONTAINER_SOCKET_DIR.lstrip("/")).mkdir(parents=True, exist_ok=True)
                base_labels = (base.get("Config") or {}).get("Labels") or {}
                pyver = _base_python_version(docker, base_image, base)
                reqs = []
                if "grpcio" not in base_labels.get("take5.runtime", ""):
                    reqs += _sdk_requirements(sdk)
                if (bot / "requirements.txt").is_file():
                    reqs += check_requirements(_read_text(bot / "requirements.txt"))
                if reqs:
                    output.append(pip_target_install(reqs, site, python_version=pyver, pip_args=pip_args))
                for p in root.rglob("*"):
                    if not p.is_symlink():
                        os.chmod(p, 0o755 if p.is_dir() or os.stat(p).st_mode & 0o111 else 0o644)
                # .pyc files are written now because the container's root fs is read-only: on the
                # host when its Python has the image's version (no RUN step, faster), else in a RUN.
                compiled = _host_compile([(site, SITE_DIR), (root / "bot", "/bot")], pyver)
                dockerfile = Path(tmp) / "Dockerfile"
                dockerfile.write_text(_python_dockerfile(base_image, labels, compile_in_image=not compiled))
                label_args = []
            cmd = [
                "build", "--network", build_network,
                *(["--no-cache"] if force else []),
                *_build_cmd_extra(docker),
                "-f", str(dockerfile), "-t", tag,
                *(["--build-arg", f"TAKE5_BASE_IMAGE={base_image}"] if own_dockerfile else []),
                *label_args,
            ]
            cmd.append(str(ctx))
            try:
                proc = docker.run(cmd, check=False, timeout=timeout, merge_output=True)
            except DockerCommandError as exc:  # timeout
                raise ImageBuildError(f"building {tag} from {bot}: {exc}", "\n".join(output) + exc.stderr,
                                      bot_dir=bot) from None
            output.append(proc.stdout)
            if proc.returncode != 0:
                raise ImageBuildError(
                    f"docker build of {bot} failed (exit {proc.returncode})", "\n".join(output), bot_dir=bot
                )
        image = docker.image_inspect(tag)
        if image is None:
            raise ImageBuildError(f"docker build said it succeeded but {tag} is missing", "\n".join(output))
        seconds = time.monotonic() - t0
        log.info("built %s in %.1fs", tag, seconds)
        return info(image, True, seconds)


def prune_bot_images(
    names: Iterable[str] | None = None, *, keep: int = 1, docker: Docker | None = None
) -> list[str]:
    """Remove older bot images: per ``take5.bot`` name (all bots, or ``names``) keep the ``keep``
    newest, and drop untagged leftovers of rebuilt bots. Images in use by a container are kept
    (``docker rmi`` refuses them). Returns the removed image references."""
    docker = docker or default_docker()
    proc = docker.run(["images", "--filter", f"label={LABEL_BOT}", "--no-trunc", "--format",
                       "{{.ID}}\t{{.Repository}}:{{.Tag}}\t{{.CreatedAt}}"])
    wanted = set(names) if names is not None else None
    by_bot: dict[str, list[tuple[str, str, str]]] = {}
    for line in proc.stdout.splitlines():
        image_id, ref, created = (line.split("\t") + ["", "", ""])[:3]
        if not image_id:
            continue
        labels = (docker.image_inspect(image_id) or {}).get("Config", {}).get("Labels") or {}
        bot = labels.get(LABEL_BOT, "")
        if wanted is not None and bot not in wanted:
            continue
        by_bot.setdefault(bot, []).append((created, ref, image_id))
    doomed = []
    for items in by_bot.values():
        items.sort(reverse=True)  # CreatedAt sorts as text: "2026-11-29 23:17:06 +0000 UTC"
        tagged = [i for i in items if not i[1].endswith("<none>")]
        doomed += [ref for _, ref, _ in tagged[keep:]]
        doomed += [image_id for _, ref, image_id in items if ref.endswith("<none>")]
    removed = []
    for ref in doomed:
        if docker.run(["rmi", ref], check=False).returncode == 0:
            removed.append(ref)
    return removed


def _host_compile(dirs: Sequence[tuple[Path, str]], pyver: str) -> bool:
    """Compile .py files to .pyc (unchecked-hash, so the files' mtimes do not matter) with the
    host's Python, if it has the image's version. False: the image must compile them itself."""
    import compileall
    import py_compile
    import sys

    if f"{sys.version_info[0]}.{sys.version_info[1]}" != pyver:
        return False
    for d, ddir in dirs:
        # A file that does not compile (a bot's syntax error) is left alone: it fails at run time
        # with its traceback in the container log, which is where the bot author looks.
        compileall.compile_dir(
            str(d), quiet=2, workers=1, ddir=ddir,
            invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH,
        )
        for p in d.rglob("__pycache__"):
            os.chmod(p, 0o755)
            for f in p.iterdir():
                os.chmod(f, 0o644)
    return True


def _python_dockerfile(base_image: str, labels: Mapping[str, str], *, compile_in_image: bool) -> str:
    # One COPY of a staged tree (/bot, /opt/take5/site, /run/take5) and no RUN step when the .pyc
    # files were compiled on the host: with the legacy builder every RUN starts a container.
    # --user 10001:10001 works without a passwd entry, so foreign bases need no useradd.
    label_line = " ".join(f"{k}={json.dumps(v)}" for k, v in labels.items())
    run = (f"RUN python3 -m compileall -q {SITE_DIR} /bot >/dev/null 2>&1 || true\n"
           if compile_in_image else "")
    return f"""\
FROM {base_image}
USER 0
COPY root/ /
ENV PYTHONPATH={SITE_DIR} PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1 HOME=/tmp TAKE5_LISTEN={LISTEN_ADDRESS}
{run}USER {BOT_UID}:{BOT_GID}
WORKDIR /bot
ENTRYPOINT []
CMD ["python3", "/bot/bot.py"]
LABEL {label_line}
"""


# --------------------------------------------------------------------------------------------
# Containers


@dataclasses.dataclass(frozen=True)
class SandboxLimits:
    memory: str = "256m"  # also --memory-swap: no swap
    cpus: float = 1.0
    pids: int = 64
    tmpfs: str = "16m"  # /tmp (noexec) and /dev/shm
    nofile: int = 1024
    log_max_size: str = "1m"  # json-file log, one file: a stdout flood costs at most this on disk
    socket_dir_size: str | None = "256k"  # tmpfs on the host socket dir (root only); None: plain dir

    def __post_init__(self):
        for field in ("memory", "tmpfs", "log_max_size"):
            if not re.fullmatch(r"\d+[bkmg]?", str(getattr(self, field)).lower()):
                raise ValueError(f"SandboxLimits.{field}={getattr(self, field)!r}: expected e.g. '256m'")
        if self.socket_dir_size is not None and not re.fullmatch(r"\d+[kmg]?", self.socket_dir_size.lower()):
            raise ValueError(f"SandboxLimits.socket_dir_size={self.socket_dir_size!r}")
        if not self.cpus > 0:
            raise ValueError("SandboxLimits.cpus must be > 0")
        if self.pids < 8:
            raise ValueError("SandboxLimits.pids must be >= 8 (the Python runtime needs a few threads)")
        if self.nofile < 16:
            raise ValueError("SandboxLimits.nofile must be >= 16")


@dataclasses.dataclass(frozen=True)
class ContainerStatus:
    status: str  # created, running, exited, dead, ... or "removed"
    running: bool
    exit_code: int | None
    oom_killed: bool
    error: str = ""
    started_at: str = ""
    finished_at: str = ""

    def describe(self) -> str:
        if self.running:
            return "running"
        s = f"{self.status}, exit code {self.exit_code}"
        if self.oom_killed:
            s += ", OOM-killed (memory limit)"
        if self.error:
            s += f", {self.error}"
        return s


def docker_run_args(
    image: str,
    *,
    name: str,
    socket_dir: str | os.PathLike,
    limits: SandboxLimits = SandboxLimits(),
    labels: Mapping[str, str] | None = None,
    env: Mapping[str, str] | None = None,
    command: Sequence[str] | None = None,
    entrypoint: str | None = None,
) -> list[str]:
    """The ``docker run`` arguments for one bot container (pure; used by start_bot_container).

    ``entrypoint`` replaces the image's ENTRYPOINT (``command`` is then its whole argument list)."""
    args = [
        "run", "--detach", "--name", name,
        "--network", "none",
        "--read-only",
        "--tmpfs", f"/tmp:rw,noexec,nosuid,nodev,size={limits.tmpfs}",
        "--shm-size", limits.tmpfs,
        "--user", f"{BOT_UID}:{BOT_GID}",
        "--cap-drop", "ALL",
        "--security-opt", "no-new-privileges",
        "--memory", limits.memory,
        "--memory-swap", limits.memory,
        "--cpus", f"{limits.cpus:g}",
        "--pids-limit", str(limits.pids),
        "--ulimit", f"nofile={limits.nofile}:{limits.nofile}",
        "--ulimit", "core=0:0",
        "--restart", "no",
        "--init",
        "--hostname", "bot",
        "--log-driver", "json-file",
        "--log-opt", f"max-size={limits.log_max_size}",
        "--log-opt", "max-file=1",
        "--stop-timeout", "1",
        "--mount", f"type=bind,source={os.fspath(socket_dir)},target={CONTAINER_SOCKET_DIR}",
        "--workdir", "/bot",
        "--env", f"TAKE5_LISTEN={LISTEN_ADDRESS}",
        "--env", "HOME=/tmp",
    ]
    for k, v in (env or {}).items():
        args += ["--env", f"{k}={v}"]
    for k, v in {LABEL_ARENA: "1", **(labels or {})}.items():
        args += ["--label", f"{k}={v}"]
    if entrypoint is not None:
        args += ["--entrypoint", entrypoint]
    args.append(image)
    if command:
        args += list(command)
    return args


def _is_mountpoint(path: Path) -> bool:
    try:
        return os.path.ismount(path)
    except OSError:
        return False


def _umount(path: Path) -> None:
    if _is_mountpoint(path):
        r = subprocess.run(["umount", str(path)], capture_output=True, text=True, check=False)
        if r.returncode != 0:
            subprocess.run(["umount", "-l", str(path)], capture_output=True, text=True, check=False)


def prepare_socket_dir(socket_dir: str | os.PathLike, limits: SandboxLimits = SandboxLimits()) -> bool:
    """Create the host socket dir so that uid 10001 can create its socket there and root can
    connect. As root: owned by 10001, mode 0700 and, if ``limits.socket_dir_size``, a tmpfs of that
    size (so a bot cannot fill the host disk through it). Returns True if a tmpfs was mounted."""
    d = Path(socket_dir)
    sock = d / SOCKET_NAME
    if len(os.fsencode(sock)) > MAX_SOCKET_PATH:
        raise ValueError(f"socket path {sock} is longer than {MAX_SOCKET_PATH} bytes; use a shorter dir")
    d.mkdir(parents=True, exist_ok=True)
    mounted = False
    if os.geteuid() == 0:
        if limits.socket_dir_size and not _is_mountpoint(d) and shutil.which("mount"):
            opts = (f"size={limits.socket_dir_size},nr_inodes=64,mode=0700,uid={BOT_UID},gid={BOT_GID},"
                    "nosuid,nodev,noexec")
            r = subprocess.run(
                ["mount", "-t", "tmpfs", "-o", opts, "take5-sock", str(d)],
                capture_output=True, text=True, check=False,
            )
            mounted = r.returncode == 0
            if not mounted:
                log.warning("could not mount a tmpfs on %s (%s); using a plain directory", d, r.stderr.strip())
        os.chown(d, BOT_UID, BOT_GID)
        os.chmod(d, 0o700)
    else:
        # Not root: the bot (uid 10001) must still be able to create its socket.
        os.chmod(d, 0o777)
    if sock.exists() or sock.is_symlink():
        sock.unlink()
    return mounted


class RunningContainer:
    """One started bot container. ``address`` is what the referee's gRPC channel connects to."""

    def __init__(
        self,
        *,
        id: str,
        name: str,
        image: str,
        socket_dir: Path,
        labels: Mapping[str, str],
        limits: SandboxLimits,
        docker: Docker,
        owns_socket_dir: bool = False,
        started: float | None = None,
    ):
        self.id = id
        self.name = name
        self.image = image
        self.socket_dir = Path(socket_dir)
        self.labels = dict(labels)
        self.limits = limits
        self.docker = docker
        self.owns_socket_dir = owns_socket_dir
        self.started = started if started is not None else time.monotonic()
        self.ready_seconds: float | None = None
        self.removed = False
        self._final_status: ContainerStatus | None = None
        self._final_logs: str | None = None

    def __repr__(self) -> str:
        return f"<RunningContainer {self.name} {self.image} {self.socket_path}>"

    @property
    def socket_path(self) -> Path:
        return self.socket_dir / SOCKET_NAME

    @property
    def address(self) -> str:
        """gRPC target for the referee, e.g. ``unix:/tmp/t5-1a2b3c4d/c001/bot.sock``."""
        return f"unix:{self.socket_path}"

    def socket_ready(self) -> bool:
        try:
            if not stat.S_ISSOCK(os.stat(self.socket_path).st_mode):
                return False
        except OSError:
            return False
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            s.settimeout(1.0)
            s.connect(os.fspath(self.socket_path))
            return True
        except OSError:
            return False
        finally:
            s.close()

    def wait_ready(self, timeout: float = 30.0) -> float:
        """Wait until the bot's socket accepts connections; return seconds since the start.

        Raises :class:`ContainerStartError` (exit code, OOM flag and log tail) if the container
        exits first, :class:`BotNotReady` on timeout."""
        deadline = time.monotonic() + timeout
        next_inspect = time.monotonic() + 0.2
        delay = 0.005
        while True:
            if self.socket_ready():
                self.ready_seconds = time.monotonic() - self.started
                return self.ready_seconds
            now = time.monotonic()
            if now >= next_inspect:
                st = self.status()
                if not st.running:
                    if self.socket_ready():  # raced with a quick exit
                        continue
                    raise ContainerStartError(
                        f"bot container {self.name} ({self.image}) stopped before its socket appeared: "
                        f"{st.describe()}",
                        name=self.name, exit_code=st.exit_code, oom_killed=st.oom_killed,
                        logs=self.logs_tail(),
                    )
                next_inspect = now + 0.25
            if now >= deadline:
                raise BotNotReady(
                    f"bot container {self.name} ({self.image}) did not create {LISTEN_ADDRESS} "
                    f"within {timeout:g}s",
                    name=self.name, logs=self.logs_tail(),
                )
            time.sleep(delay)
            delay = min(delay * 1.5, 0.05)

    def status(self) -> ContainerStatus:
        """Exit code and OOM flag from ``docker inspect`` (kept after :meth:`remove`)."""
        if self.removed and self._final_status is not None:
            return self._final_status
        data = self.docker.container_inspect(self.id)
        if data is None:
            return self._final_status or ContainerStatus("removed", False, None, False)
        s = data.get("State") or {}
        running = bool(s.get("Running"))
        return ContainerStatus(
            status=s.get("Status", ""),
            running=running,
            exit_code=None if running else s.get("ExitCode"),
            oom_killed=bool(s.get("OOMKilled")),
            error=s.get("Error", ""),
            started_at=s.get("StartedAt", ""),
            finished_at=s.get("FinishedAt", ""),
        )

    def is_running(self) -> bool:
        return self.status().running

    def wait_exit(self, timeout: float = 30.0) -> ContainerStatus:
        deadline = time.monotonic() + timeout
        while True:
            st = self.status()
            if not st.running or time.monotonic() >= deadline:
                return st
            time.sleep(0.05)

    def logs_tail(self, lines: int = 50, max_bytes: int = 64 * 1024) -> str:
        """The last ``lines`` lines of stdout+stderr (at most ``max_bytes``)."""
        if self.removed and self._final_logs is not None:
            return self._final_logs
        try:
            proc = self.docker.run(["logs", "--tail", str(lines), self.id], check=False,
                                   merge_output=True, timeout=30)
        except SandboxError as exc:
            return f"<logs unavailable: {exc}>"
        out = proc.stdout
        if proc.returncode != 0 and "no such container" in out.lower():
            return self._final_logs or ""
        return out[-max_bytes:]

    def stop(self, grace: float = 1.0) -> ContainerStatus:
        """SIGTERM, then SIGKILL after ``grace`` seconds. The container stays for status()/logs."""
        if not self.removed:
            self.docker.run(["stop", "-t", str(max(0, round(grace))), self.id], check=False, timeout=60)
        return self.status()

    def remove(self, *, keep_record: bool = True) -> None:
        """``docker rm -f`` (idempotent), then unmount/remove the socket dir we made."""
        if self.removed:
            return
        if keep_record:
            try:
                self._final_status = self.status()
                self._final_logs = self.logs_tail()
            except SandboxError:
                pass
        try:
            self.docker.remove_containers([self.id])
        finally:
            self.removed = True
            _release_socket_dir(self.socket_dir, owned=self.owns_socket_dir)

    close = remove

    def __enter__(self) -> RunningContainer:
        return self

    def __exit__(self, *exc) -> None:
        self.remove()


def _release_socket_dir(d: Path, *, owned: bool) -> None:
    try:
        _umount(d)
        if owned:
            shutil.rmtree(d, ignore_errors=True)
            parent = d.parent
            if parent.name.startswith("t5-"):
                try:
                    parent.rmdir()  # only when empty: the sandbox's last container
                except OSError:
                    pass
        else:
            try:
                (d / SOCKET_NAME).unlink()
            except OSError:
                pass
    except OSError as exc:
        log.warning("could not clean socket dir %s: %s", d, exc)


_name_counter = 0
_name_lock = threading.Lock()


def _next_name(run_id: str) -> str:
    global _name_counter
    with _name_lock:
        _name_counter += 1
        return f"take5-{run_id}-{_name_counter:04d}-{secrets.token_hex(2)}"


def start_bot_container(
    image: str | ImageInfo,
    *,
    socket_dir: str | os.PathLike,
    limits: SandboxLimits = SandboxLimits(),
    name: str | None = None,
    labels: Mapping[str, str] | None = None,
    run_id: str = "adhoc",
    game_id: str = "",
    env: Mapping[str, str] | None = None,
    command: Sequence[str] | None = None,
    wait: bool = False,
    ready_timeout: float = 30.0,
    docker: Docker | None = None,
    owns_socket_dir: bool = False,
    entrypoint: str | None = None,
) -> RunningContainer:
    """Start a bot container (see :func:`docker_run_args` for the flags). With ``wait=True`` it also
    waits for the socket (:meth:`RunningContainer.wait_ready`), removing the container on failure."""
    docker = docker or default_docker()
    ref = image.tag if isinstance(image, ImageInfo) else image
    name = name or _next_name(run_id)
    sd = Path(socket_dir).absolute()
    all_labels = {LABEL_RUN: run_id, LABEL_GAME: game_id, LABEL_SOCKET_DIR: str(sd),
                  "take5.socket_dir_owned": "1" if owns_socket_dir else "0", **(labels or {})}
    prepare_socket_dir(sd, limits)
    t0 = time.monotonic()
    args = docker_run_args(ref, name=name, socket_dir=sd, limits=limits, labels=all_labels,
                           env=env, command=command, entrypoint=entrypoint)
    try:
        proc = docker.run(args, check=False, timeout=120)
    except BaseException:
        _cleanup_failed_start(docker, name, sd, owns_socket_dir)
        raise
    if proc.returncode != 0:
        _cleanup_failed_start(docker, name, sd, owns_socket_dir)
        raise ContainerStartError(f"docker run of {ref} as {name} failed: {proc.stderr.strip()}", name=name)
    container = RunningContainer(
        id=proc.stdout.strip(), name=name, image=ref, socket_dir=sd, labels={LABEL_ARENA: "1", **all_labels},
        limits=limits, docker=docker, owns_socket_dir=owns_socket_dir, started=t0,
    )
    if wait:
        try:
            container.wait_ready(ready_timeout)
        except BaseException:
            container.remove()
            raise
    return container


def _cleanup_failed_start(docker: Docker, name: str, socket_dir: Path, owned: bool) -> None:
    try:
        docker.remove_containers([name])
    except SandboxError:
        pass
    _release_socket_dir(socket_dir, owned=owned)


def cleanup_leftovers(run_id: str | None = None, *, docker: Docker | None = None) -> int:
    """Remove every container labelled ``take5.arena=1`` (only ``run_id``'s if given) and release
    their socket dirs. Use at the start of a run and on interrupt. Returns how many were removed."""
    docker = docker or default_docker()
    filters = ["--filter", f"label={LABEL_ARENA}=1"]
    if run_id is not None:
        filters += ["--filter", f"label={LABEL_RUN}={run_id}"]
    fmt = "{{.ID}}\t{{.Label \"" + LABEL_SOCKET_DIR + "\"}}\t{{.Label \"take5.socket_dir_owned\"}}"
    proc = docker.run(["ps", "-a", "--no-trunc", *filters, "--format", fmt])
    rows = [line.split("\t") for line in proc.stdout.splitlines() if line.strip()]
    ids = [r[0] for r in rows]
    docker.remove_containers(ids)
    for r in rows:
        if len(r) >= 2 and r[1]:
            _release_socket_dir(Path(r[1]), owned=len(r) >= 3 and r[2] == "1")
    if ids:
        log.info("removed %d leftover take5 container(s)%s", len(ids), f" of run {run_id}" if run_id else "")
    return len(ids)


def list_containers(run_id: str | None = None, *, docker: Docker | None = None) -> list[str]:
    """Names of the take5 containers on this engine (of ``run_id`` if given), running or not."""
    docker = docker or default_docker()
    filters = ["--filter", f"label={LABEL_ARENA}=1"]
    if run_id is not None:
        filters += ["--filter", f"label={LABEL_RUN}={run_id}"]
    proc = docker.run(["ps", "-a", *filters, "--format", "{{.Names}}"])
    return [n for n in proc.stdout.split() if n]


class PendingContainers:
    """Containers being started in the background (see :meth:`DockerSandbox.prefetch`)."""

    def __init__(self, future: concurrent.futures.Future[list[RunningContainer]], game_id: str):
        self._future = future
        self.game_id = game_id
        self._taken = False

    def done(self) -> bool:
        return self._future.done()

    def result(self, timeout: float | None = None) -> list[RunningContainer]:
        """The ready containers in seat order; raises the start error (others already removed)."""
        result = self._future.result(timeout)
        self._taken = True
        return result

    def cancel(self) -> None:
        """Remove the containers (waits for the starts in flight to finish first)."""
        self._future.cancel()
        try:
            for c in self._future.result():
                c.remove(keep_record=False)
        except (concurrent.futures.CancelledError, SandboxError):
            pass


class DockerSandbox:
    """Starts the bot containers of one run (a match or a tournament) and cleans them up.

    >>> with DockerSandbox() as sandbox:
    ...     nxt = sandbox.prefetch([img_a, img_b], game_id="g2")   # while game 1 plays
    ...     bots = sandbox.start_game([img_a, img_b], game_id="g1")
    ...     ...; sandbox.release(bots)
    ...     bots = nxt.result()
    """

    def __init__(
        self,
        *,
        run_id: str | None = None,
        limits: SandboxLimits = SandboxLimits(),
        socket_root: str | os.PathLike | None = None,
        docker: Docker | None = None,
        max_parallel_starts: int = 4,
        ready_timeout: float = 30.0,
        env: Mapping[str, str] | None = None,
    ):
        self.docker = docker or default_docker()
        self.run_id = run_id or secrets.token_hex(4)
        if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,40}", self.run_id):
            raise ValueError(f"run_id {self.run_id!r}: use letters, digits, _ . - (at most 41)")
        self.limits = limits
        self.ready_timeout = ready_timeout
        self.env = dict(env or {})
        base = Path(socket_root or "/tmp")
        self.socket_root = base / f"t5-{self.run_id}"
        self._counter = 0
        self._lock = threading.Lock()
        self._live: dict[str, RunningContainer] = {}
        self._pool = concurrent.futures.ThreadPoolExecutor(max_parallel_starts, thread_name_prefix="take5-start")
        self._closed = False

    def _socket_dir(self) -> Path:
        with self._lock:
            self._counter += 1
            return self.socket_root / f"c{self._counter:03d}"

    def start(
        self,
        image: str | ImageInfo,
        *,
        game_id: str = "",
        seat: int | None = None,
        labels: Mapping[str, str] | None = None,
        env: Mapping[str, str] | None = None,
        limits: SandboxLimits | None = None,
        command: Sequence[str] | None = None,
        wait: bool = True,
    ) -> RunningContainer:
        if self._closed:
            raise SandboxError("sandbox is closed")
        self.socket_root.mkdir(mode=0o755, parents=True, exist_ok=True)
        lab = dict(labels or {})
        if seat is not None:
            lab[LABEL_SEAT] = str(seat)
        c = start_bot_container(
            image, socket_dir=self._socket_dir(), limits=limits or self.limits, labels=lab,
            run_id=self.run_id, game_id=game_id, env={**self.env, **(env or {})}, command=command,
            docker=self.docker, owns_socket_dir=True,
        )
        with self._lock:
            self._live[c.id] = c
        if wait:
            try:
                c.wait_ready(self.ready_timeout)
            except BaseException:
                self.release([c])
                raise
        return c

    def start_game(
        self, images: Sequence[str | ImageInfo], *, game_id: str, **kwargs
    ) -> list[RunningContainer]:
        """Start one container per seat in parallel and wait until all are ready. On any failure
        the others are removed and the first error is raised."""
        futures = [
            self._pool.submit(self.start, img, game_id=game_id, seat=i, **kwargs)
            for i, img in enumerate(images)
        ]
        return self._collect(futures)

    def _collect(self, futures) -> list[RunningContainer]:
        results, error = [], None
        for f in futures:
            try:
                results.append(f.result())
            except BaseException as exc:  # noqa: BLE001 - re-raised below
                error = error or exc
        if error is not None:
            self.release(results)
            raise error
        return results

    def prefetch(
        self, images: Sequence[str | ImageInfo], *, game_id: str, **kwargs
    ) -> PendingContainers:
        """Start the next game's containers in the background; ``.result()`` gives them ready."""
        if self._closed:
            raise SandboxError("sandbox is closed")
        fut: concurrent.futures.Future[list[RunningContainer]] = concurrent.futures.Future()

        def run():
            if not fut.set_running_or_notify_cancel():
                return
            try:
                fut.set_result(self.start_game(images, game_id=game_id, **kwargs))
            except BaseException as exc:  # noqa: BLE001
                fut.set_exception(exc)

        threading.Thread(target=run, name=f"take5-prefetch-{game_id}", daemon=True).start()
        return PendingContainers(fut, game_id)

    def release(self, containers: Iterable[RunningContainer]) -> None:
        """Remove containers (after a game)."""
        for c in containers:
            with self._lock:
                self._live.pop(c.id, None)
            try:
                c.remove()
            except SandboxError as exc:
                log.warning("removing %s: %s", c.name, exc)

    @property
    def live(self) -> list[RunningContainer]:
        with self._lock:
            return list(self._live.values())

    def cleanup(self) -> int:
        """Remove every container of this run (also ones this object lost track of)."""
        self.release(self.live)
        n = cleanup_leftovers(self.run_id, docker=self.docker)
        shutil.rmtree(self.socket_root, ignore_errors=True)
        return n

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._pool.shutdown(wait=True, cancel_futures=True)
            self.cleanup()

    def __enter__(self) -> DockerSandbox:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


__all__ = [
    "BOT_UID", "DEFAULT_BASE_IMAGE", "LISTEN_ADDRESS", "BotNotReady", "ContainerStartError",
    "ContainerStatus", "Docker", "DockerCommandError", "DockerSandbox", "DockerUnavailable",
    "ImageBuildError", "ImageInfo", "PendingContainers", "RunningContainer", "SandboxError",
    "SandboxLimits", "build_image", "check_docker", "check_requirements", "cleanup_leftovers",
    "docker_available", "docker_run_args", "list_containers", "prepare_socket_dir", "prune_bot_images",
    "sdk_versions",
    "source_hash", "start_bot_container",
]
