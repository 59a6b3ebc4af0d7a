"""The builder the referee used before take5_arena/referee/sandbox/images.py, kept only as the same-run baseline
of bench/build.py (the referee never runs it): turning a bot folder into an image with the
``docker`` command line for ``build``, ``pull`` and ``rmi``. Containers (the Python version of a
foreign base image) go through `take5_arena.referee.sandbox.containers` like every other container.

Images (`build_image`)
    bot image = base image (``take5/python:3.11`` by default, made by ``scripts/setup-docker.sh``)
    + the SDK package ``take5`` in ``/opt/take5/site`` + wheels of the bot's ``requirements.txt``
    (installed on the host with ``pip install --target --only-binary=:all:`` for the image's Python
    version, then copied in) + the bot's folder in ``/bot``; its command is ``python3 /bot/bot.py``.
    A bot folder with its own ``Dockerfile`` is built with it instead (build context = the bot
    folder + ``take5_sdk/take5``; build-arg ``TAKE5_BASE_IMAGE``). Images are labelled and tagged by
    a hash of their sources and only rebuilt when that changes.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import os
import platform
import re
import shutil
import stat
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from take5_arena.referee.sandbox import containers, engine
from take5_arena.referee.sandbox.errors import EngineUnavailable, ImageBuildError, SandboxError
from take5_arena.referee.sandbox.limits import (
    BOT_GID,
    BOT_UID,
    CONTAINER_SOCKET_DIR,
    DEFAULT_BASE_IMAGE,
    LISTEN_ADDRESS,
    SandboxLimits,
)

log = logging.getLogger("take5.referee.docker")

REPO_ROOT = Path(__file__).resolve().parent.parent.parent
DEFAULT_SDK_DIR = REPO_ROOT / "sdk"
IMAGE_REPOSITORY = "take5-bot"
SITE_DIR = "/opt/take5/site"

LABEL_BOT = "take5.bot"
LABEL_BOT_VERSION = "take5.bot.version"
LABEL_SDK_VERSION = "take5.sdk.version"
LABEL_PROTOCOL = "take5.protocol"
LABEL_SOURCE_HASH = "take5.source_hash"
LABEL_BUILDER = "take5.builder"
LABEL_BASE = "take5.base"

#: Bumped when the way images are built changes, so that old images are rebuilt.
BUILDER_VERSION = "1"

MAX_BOT_BYTES = 64 * 1024 * 1024

_IGNORED_DIRS = {
    "__pycache__",
    ".git",
    ".hg",
    ".svn",
    ".venv",
    "venv",
    ".mypy_cache",
    ".pytest_cache",
    ".ruff_cache",
    ".hypothesis",
    ".tox",
    ".idea",
    ".vscode",
}
_IGNORED_SUFFIXES = (".pyc", ".pyo")
_IGNORED_FILES = {".DS_Store"}


class DockerCommandError(SandboxError):
    """A docker command failed; carries the command, its exit code and its stderr."""

    def __init__(self, cmd: Sequence[str], returncode: int | None, stderr: str, message: str = ""):
        self.cmd = list(cmd)
        self.returncode = returncode
        self.stderr = stderr
        what = message or f"`{' '.join(self.cmd[:3])} ...` failed (exit {returncode})"
        super().__init__(f"{what}: {stderr.strip()[-2000:]}" if stderr.strip() else what)


# --------------------------------------------------------------------------------------------
# The docker command line (builds only) and the Engine API (everything else)


class Docker:
    """Runs ``docker build``/``pull``/``rmi``/``images``; ``binary`` defaults to ``$TAKE5_DOCKER``
    or ``docker`` on PATH. Image inspection and the engine check go through the Engine API."""

    def __init__(self, binary: str | None = None, *, timeout: float = 120.0):
        self.binary = binary or os.environ.get("TAKE5_DOCKER") or "docker"
        self.timeout = timeout

    def _argv(self, args: Sequence[str]) -> list[str]:
        exe = shutil.which(self.binary)
        if exe is None:
            raise EngineUnavailable(
                f"no docker client `{self.binary}` on PATH for building images "
                "(install docker.io, see scripts/setup-docker.sh)"
            )
        return [exe, *args]

    def run(
        self,
        args: Sequence[str],
        *,
        timeout: float | None = None,
        check: bool = True,
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
            )
        except subprocess.TimeoutExpired as exc:
            out = exc.stdout or ""
            if isinstance(out, bytes):
                out = out.decode(errors="replace")
            raise DockerCommandError(
                argv, None, out, f"`docker {args[0]}` timed out after {exc.timeout}s"
            ) from None
        if proc.returncode != 0 and check:
            raise DockerCommandError(
                argv, proc.returncode, proc.stdout if merge_output else proc.stderr
            )
        return proc

    def check(self) -> str:
        """The engine's version; EngineUnavailable (with the reason) if none answers."""
        return engine.engine_version()

    def image_inspect(self, ref: str) -> dict | None:
        """The engine's inspection of an image, None if there is no such image."""
        import docker

        try:
            return dict(engine.client().api.inspect_image(ref))
        except docker.errors.NotFound:
            return None
        except docker.errors.APIError as error:
            raise DockerCommandError(
                ["docker", "image", "inspect", ref], None, str(error.explanation or error)
            )


_default_docker: Docker | None = None


def default_docker() -> Docker:
    global _default_docker
    if _default_docker is None:
        _default_docker = Docker()
    return _default_docker


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
        dirnames[:] = sorted(
            d for d in dirnames if d not in _IGNORED_DIRS and not d.endswith(".egg-info")
        )
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
            h.update(
                f"{prefix}/{rel}\0{'x' if st.st_mode & 0o111 else '-'}\0{st.st_size}\0".encode()
            )
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
        raise ImageBuildError(
            f"bot folder {bot_dir} has {size} bytes, more than {MAX_BOT_BYTES}", bot_dir=bot_dir
        )
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
    m = re.search(
        r"""^__version__\s*=\s*["']([^"']+)["']""",
        _read_text(sdk / "take5" / "__init__.py"),
        re.MULTILINE,
    )
    if m:
        version = m.group(1)
    else:
        m = re.search(
            r"""^version\s*=\s*["']([^"']+)["']""", _read_text(sdk / "pyproject.toml"), re.MULTILINE
        )
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
    m = re.search(r"""^__version__\s*=\s*["']([^"']+)["']""", text, re.MULTILINE) or re.search(
        r"""^\s+version\s*=\s*["']([^"']+)["']""", text, re.MULTILINE
    )
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
        os.environ.get("TAKE5_PIP_PYTHON", "") or _host_python(),
        "-m",
        "pip",
        "install",
        "--disable-pip-version-check",
        "--no-input",
        "--no-compile",
        "--no-warn-script-location",
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
    for plat in _manylinux_platforms(arch):
        cmd += ["--platform", plat]
    cmd += [*pip_args, *requirements]
    log.debug("pip: %s", " ".join(cmd))
    try:
        proc = subprocess.run(
            cmd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            errors="replace",
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        out = (
            exc.stdout.decode(errors="replace")
            if isinstance(exc.stdout, bytes)
            else (exc.stdout or "")
        )
        raise ImageBuildError(f"pip install timed out after {timeout}s", out) from None
    if proc.returncode != 0:
        raise ImageBuildError(
            f"pip could not install wheels for Python {major}.{minor} ({', '.join(requirements)}); "
            "only binary wheels are allowed",
            proc.stdout,
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
        # Asked in a sandboxed container, like every container of an image (take5_arena.referee.sandbox.containers).
        code, out = containers.run_to_completion(
            engine.client(),
            base_image,
            ["python3", "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
            limits=SandboxLimits(),
            run_id="probe",
        )
        if code != 0 or not re.fullmatch(r"\d+\.\d+", out.strip()):
            raise ImageBuildError(f"cannot find python3 in base image {base_image}", out)
        _python_versions[base["Id"]] = out.strip()
    return _python_versions[base["Id"]]


def _ensure_base(docker: Docker, base_image: str) -> dict:
    base = docker.image_inspect(base_image)
    if base is None:
        proc = docker.run(["pull", base_image], check=False, timeout=600, merge_output=True)
        base = docker.image_inspect(base_image) if proc.returncode == 0 else None
        if base is None:
            hint = (
                " (run scripts/setup-docker.sh to build it)"
                if base_image.startswith("take5/")
                else ""
            )
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
        bot,
        sdk,
        extra=(bot_name, given_version or "", base_image, base_id, *pip_args),
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
            tag=tag,
            id=image["Id"],
            bot_name=bot_name,
            bot_version=bot_version,
            sdk_version=sdk_version,
            protocol_version=protocol,
            source_hash=digest,
            base_image=base_image,
            built=built,
            build_seconds=seconds,
            labels=dict((image.get("Config") or {}).get("Labels") or {}),
        )

    with _lock_for(tag):
        if not force:
            existing = docker.image_inspect(tag)
            if (
                existing
                and ((existing.get("Config") or {}).get("Labels") or {}).get(LABEL_SOURCE_HASH)
                == digest
            ):
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
                    output.append(
                        pip_target_install(reqs, site, python_version=pyver, pip_args=pip_args)
                    )
                for p in root.rglob("*"):
                    if not p.is_symlink():
                        os.chmod(p, 0o755 if p.is_dir() or os.stat(p).st_mode & 0o111 else 0o644)
                # .pyc files are written now because the container's root fs is read-only: on the
                # host when its Python has the image's version (no RUN step, faster), else in a RUN.
                compiled = _host_compile([(site, SITE_DIR), (root / "bot", "/bot")], pyver)
                dockerfile = Path(tmp) / "Dockerfile"
                dockerfile.write_text(
                    _python_dockerfile(base_image, labels, compile_in_image=not compiled)
                )
                label_args = []
            cmd = [
                "build",
                "--network",
                build_network,
                *(["--no-cache"] if force else []),
                *_build_cmd_extra(docker),
                "-f",
                str(dockerfile),
                "-t",
                tag,
                *(["--build-arg", f"TAKE5_BASE_IMAGE={base_image}"] if own_dockerfile else []),
                *label_args,
            ]
            cmd.append(str(ctx))
            try:
                proc = docker.run(cmd, check=False, timeout=timeout, merge_output=True)
            except DockerCommandError as exc:  # timeout
                raise ImageBuildError(
                    f"building {tag} from {bot}: {exc}", "\n".join(output) + exc.stderr, bot_dir=bot
                ) from None
            output.append(proc.stdout)
            if proc.returncode != 0:
                raise ImageBuildError(
                    f"docker build of {bot} failed (exit {proc.returncode})",
                    "\n".join(output),
                    bot_dir=bot,
                )
        image = docker.image_inspect(tag)
        if image is None:
            raise ImageBuildError(
                f"docker build said it succeeded but {tag} is missing", "\n".join(output)
            )
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
    proc = docker.run(
        [
            "images",
            "--filter",
            f"label={LABEL_BOT}",
            "--no-trunc",
            "--format",
            "{{.ID}}\t{{.Repository}}:{{.Tag}}\t{{.CreatedAt}}",
        ]
    )
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
            str(d),
            quiet=2,
            workers=1,
            ddir=ddir,
            invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH,
        )
        for p in d.rglob("__pycache__"):
            os.chmod(p, 0o755)
            for f in p.iterdir():
                os.chmod(f, 0o644)
    return True


def _python_dockerfile(
    base_image: str, labels: Mapping[str, str], *, compile_in_image: bool
) -> str:
    # One COPY of a staged tree (/bot, /opt/take5/site, /run/take5) and no RUN step when the .pyc
    # files were compiled on the host: with the legacy builder every RUN starts a container.
    # --user 10001:10001 works without a passwd entry, so foreign bases need no useradd.
    label_line = " ".join(f"{k}={json.dumps(v)}" for k, v in labels.items())
    run = (
        f"RUN python3 -m compileall -q {SITE_DIR} /bot >/dev/null 2>&1 || true\n"
        if compile_in_image
        else ""
    )
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


__all__ = [
    "DEFAULT_SDK_DIR",
    "Docker",
    "DockerCommandError",
    "ImageInfo",
    "build_image",
    "check_requirements",
    "default_docker",
    "prune_bot_images",
    "sdk_versions",
    "source_hash",
]
