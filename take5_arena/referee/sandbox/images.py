"""Bot folder -> bot image, through the Docker Engine API (docker-py), with nothing of the bot run
on the host and every build step cut off from every network.

:func:`build_image` is the only entry point. What goes into an image depends on what the folder
holds (see :mod:`.manifest`):

* ``Dockerfile``: the bot's own, checked by :mod:`.dockerfile` (FROM only the arena's bases, no ADD,
  no VOLUME, ...), built with the bot folder + ``take5_sdk/take5`` as context and the build-arg
  ``TAKE5_BASE_IMAGE``;
* ``bot.toml``: a Node (``take5/node:18``) or static-binary (``take5/static:1``) bot, or a Python
  one with its own command: the folder is copied to ``/bot`` and the manifest's command is the CMD;
* ``bot.py``: the Python runtime image + the SDK in ``/opt/take5/site`` (beside the base's gRPC and
  protobuf) + the wheels of the bot's ``requirements.txt`` in ``/opt/take5/wheels`` (resolved by
  :mod:`.requirements`: wheels only, from the index only), after the SDK on ``PYTHONPATH``, so that
  no wheel replaces the SDK, gRPC or protobuf the referee trusts. Such an image is labelled
  ``take5.forkserver=1`` when nothing in the folder or its wheels would shadow a module the fork
  server imports first (forkserver.py): the launcher may then run it in a warm container.

The folder becomes a build context in exactly one place, :mod:`.context` (no symlink followed,
limits checked before any copy). Every build is a legacy-builder build through the API with
``networkmode=none`` (RUN steps have no network at all, not even loopback), ``pull=False``,
``rm``/``forcerm`` (no intermediate container is left, even on failure), a memory and CPU limit on
each build container, and a deadline (:class:`BuildLimits`): when it passes, the referee closes its
connection, which makes the engine cancel the build and kill its RUN container; the bot is refused
(:class:`~.build_errors.BuildTimeoutError`), the referee never hangs. Intermediate images of a
failed or refused build are removed.

Facts the referee needs about a base image (its Python version, whether grpcio is installed) are
read from its labels, set by scripts/setup-docker.sh: no probe container ever runs. The image
carries its start command (CMD) and its facts (labels ``take5.*``); the launcher runs that command
with the sandbox flags.

The low-level build call uses a few of docker-py's own internal helpers (``_post``,
``_stream_helper``, ``_get_raw_response_socket``) because the public ``APIClient.build`` hides the
response: without it a deadline cannot cut the connection, and a silent ``RUN sleep`` would hold
the referee for as long as the bot likes.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import re
import secrets
import socket
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import docker
import docker.errors

from take5.text import inert

from .. import defaults
from . import dockerfile as df
from .build_errors import (
    BuildEngineUnavailableError,
    BuildFailedError,
    BuildRefusedError,
    BuildTimeoutError,
    ImageBuildError,
)
from .command import check_command
from .context import MAX_CONTROL_BYTES, BotFolder, ContextWriter, FolderLimits, Kind, scan
from .manifest import MANIFEST, RUNTIMES, Manifest, Runtime, parse_manifest
from .requirements import install_wheels, parse_requirements

log = logging.getLogger("take5_arena.referee.sandbox.images")

IMAGE_REPOSITORY = "take5-bot"
BUILDER_VERSION = "4"
"""Bumped when the way images are built changes, so that old images are rebuilt."""

BOT_UID = 10001
SITE_DIR = "/opt/take5/site"
WHEELS_DIR = "/opt/take5/wheels"
LISTEN_ADDRESS = "unix:/run/take5/bot.sock"

LABEL_BOT = "take5.bot"
LABEL_BOT_VERSION = "take5.bot.version"
LABEL_SDK_VERSION = "take5.sdk.version"
LABEL_PROTOCOL = "take5.protocol"
LABEL_SOURCE_HASH = "take5.source_hash"
LABEL_BUILDER = "take5.builder"
LABEL_BASE = "take5.base"
LABEL_KIND = "take5.kind"
LABEL_PYTHON = "take5.python"
"""On a Python base image: its Python version (``3.11``), for the wheels."""
LABEL_BUILD = "take5.build"
"""A random id stamped on every step of one build (after each FROM), so that the intermediate
images of a failed build are found by label, never by parsing the output (which the bot writes)."""
STAMPED_DOCKERFILE = ".take5.Dockerfile"
"""The name of the Dockerfile the engine builds: the checked one, stamped (or the generated one)."""
LABEL_RUNTIME = "take5.runtime"
"""On a Python base image: the packages it already has (``grpcio,protobuf``)."""
LABEL_FORKSERVER = "take5.forkserver"
"""``1`` on an image the launcher may run in a warm container (forkserver.py, warm.py)."""
PRELOADED = frozenset({"take5", "grpc", "google"})
"""Top-level packages the fork server imports (with the standard library) before any bot code."""

SDK_LIMITS = FolderLimits(max_files=2_000, max_bytes=32 << 20)
SITE_LIMITS = FolderLimits(max_files=50_000, max_bytes=1 << 30, max_path=400, max_depth=48)
"""Wheels the referee installed: large (numpy, scipy), but not the bot's folder."""


@dataclasses.dataclass(frozen=True)
class BuildLimits:
    """Limits of one image build (each RUN step's container, and the whole build)."""

    timeout: float = 300.0
    """Seconds for the whole build (pip included); then the bot is refused."""
    memory: int = 1 << 30
    """Bytes of memory (and memory+swap: no swap) of each RUN step."""
    cpus: float = 1.0
    max_image_bytes: int = 2 << 30
    """The built image's size."""
    folder: FolderLimits = dataclasses.field(default_factory=FolderLimits)


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


_locks: dict[str, threading.Lock] = {}
_locks_guard = threading.Lock()


def _lock_for(key: str) -> threading.Lock:
    with _locks_guard:
        return _locks.setdefault(key, threading.Lock())


def engine(client: object | None = None) -> docker.DockerClient:
    """The engine client: ``client`` if it is a docker-py client, else one from the environment."""
    if isinstance(client, docker.DockerClient):
        return client
    try:
        c = docker.from_env(timeout=60)
        c.ping()
        return c
    except docker.errors.DockerException as exc:
        raise BuildEngineUnavailableError(
            f"no Docker engine answers ({exc}); start one with scripts/setup-docker.sh"
        ) from None


def build_image(
    bot_dir: str | os.PathLike[str],
    *,
    name: str | None = None,
    version: str | None = None,
    base_image: str = defaults.BASE_IMAGE,
    sdk_dir: str | os.PathLike[str] = defaults.SDK_DIR,
    force: bool = False,
    pip_args: Sequence[str] = (),
    build_network: str = "none",
    timeout: float | None = None,
    docker: object | None = None,
    limits: BuildLimits = BuildLimits(),
) -> ImageInfo:
    """Build (or reuse) the image of a bot folder; see the module docstring.

    ``name`` defaults to the folder's name (or bot.toml's ``name``); ``version`` to bot.toml's, else
    the folder's ``VERSION`` file, else ``__version__`` in bot.py, else ``0+<hash>``. ``base_image``
    is the Python runtime image (and ``$TAKE5_BASE_IMAGE`` of Dockerfile bots). ``pip_args`` are the
    operator's extra pip arguments (e.g. ``--no-index --find-links DIR``). ``build_network`` must be
    ``"none"`` (kept for the old signature). Raises :class:`~.build_errors.ImageBuildError`:
    :class:`BuildRefusedError` (a rule or limit, nothing ran), :class:`BuildFailedError` /
    :class:`BuildTimeoutError` (the sandboxed build failed), :class:`BuildEngineUnavailableError`.
    """
    if build_network != "none":
        raise ValueError("bot images are built with no network (build_network='none')")
    if timeout is not None:
        limits = dataclasses.replace(limits, timeout=timeout)
    t0 = time.monotonic()
    bot = Path(bot_dir).absolute()
    folder = scan(bot, limits.folder)  # limits and symlinks, before anything is copied
    client = engine(docker)
    try:
        sdk = Path(sdk_dir).absolute()
        with ContextWriter() as ctx:
            plan = _plan(
                ctx,
                folder,
                client,
                sdk=sdk,
                base_image=base_image,
                pip_args=pip_args,
                name=name or None,
                version=version,
            )
            with _lock_for(plan.tag):
                if not force:
                    existing = _inspect(client, plan.tag)
                    have = ((existing or {}).get("Config") or {}).get("Labels") or {}
                    if existing and have.get(LABEL_SOURCE_HASH) == plan.digest:
                        return _info(
                            existing, plan.tag, plan.labels, plan.base, built=False, seconds=0.0
                        )
                image = _build_planned(
                    ctx,
                    client,
                    plan,
                    sdk=sdk,
                    base_image=base_image,
                    pip_args=pip_args,
                    force=force,
                    limits=limits,
                    deadline=t0 + limits.timeout,
                    bot=bot,
                )
                seconds = time.monotonic() - t0
                log.info("built %s in %.1fs", plan.tag, seconds)
                return _info(image, plan.tag, plan.labels, plan.base, built=True, seconds=seconds)
    finally:
        if client is not docker:  # made here: close its connections
            client.close()


@dataclasses.dataclass
class _Plan:
    """What an image will be, decided before anything is built (and hashed into its tag)."""

    folder: BotFolder
    kind: str
    """``dockerfile``, ``manifest`` or ``python`` (`_kind`)."""
    manifest: Manifest | None
    base: str
    base_info: dict[str, Any]
    dockerfile: str
    """The bot's own Dockerfile ("" for the other kinds)."""
    python_runtime: bool
    reqs: list[Any]
    digest: str
    tag: str
    labels: dict[str, str]


def _plan(
    ctx: ContextWriter,
    folder: BotFolder,
    client: docker.DockerClient,
    *,
    sdk: Path,
    base_image: str,
    pip_args: Sequence[str],
    name: str | None,
    version: str | None,
) -> _Plan:
    """Copy the folder into the build context and decide the image: its base, name, version,
    requirements, source hash, tag and labels. Raises BuildRefusedError."""
    kind, manifest = _kind(folder)
    if kind == "dockerfile":
        ctx.add_folder(folder, "")
        ctx.add_tree(sdk / "take5", "take5_sdk/take5", SDK_LIMITS)
    else:
        ctx.add_folder(folder, "root/bot")
        ctx.add_dir("root/run/take5")
    captured = {k.removeprefix("root/bot/"): v for k, v in ctx.captured.items()}
    for control in ("Dockerfile", "requirements.txt", MANIFEST):
        if folder.has(control) and control not in captured:
            raise BuildRefusedError(f"{control} is larger than {MAX_CONTROL_BYTES >> 20} MB")
    base = base_image
    if manifest is not None and manifest.runtime is not Runtime.PYTHON:
        base = RUNTIMES[manifest.runtime]
    base_info = _base(client, base)
    sdk_version, protocol = sdk_versions(sdk)
    bot_name = name or (manifest.name if manifest and manifest.name else folder.root.name)
    if not bot_name.isprintable() or not bot_name.strip() or len(bot_name) > 64:
        raise BuildRefusedError(
            f"bot name {bot_name[:64]!r} must be printable text of at most 64 characters"
        )
    given_version = version or (manifest.version if manifest else None) or _bot_version(captured)
    plan_base, text = base, ""
    if kind == "dockerfile":
        text = captured.get("Dockerfile", b"").decode("utf-8", "replace")
        allowed = tuple(dict.fromkeys((*df.ALLOWED_BASES, base_image)))
        checked = df.check_dockerfile(text, allowed=allowed, base_ids=_base_ids(client, allowed))
        plan_base = base_image if checked.final_base == "$" + df.BASE_ARG else checked.final_base
        if plan_base != base:
            base, base_info = plan_base, _base(client, plan_base)
    python_runtime = kind == "python" or (
        manifest is not None and manifest.runtime is Runtime.PYTHON
    )
    reqs: list[Any] = []
    if python_runtime:
        if "requirements.txt" in captured:
            reqs = parse_requirements(captured["requirements.txt"].decode("utf-8", "replace"))
        elif folder.has("requirements.txt", Kind.SYMLINK):
            raise BuildRefusedError("requirements.txt is a symlink: make it a plain file")
    h = ctx.hash.copy()
    for item in (
        BUILDER_VERSION,
        kind,
        bot_name,
        given_version or "",
        base,
        base_info["Id"],
        *pip_args,
        *(str(r) for r in reqs),
        *(manifest.command if manifest else ()),
    ):
        h.update(f"\0{item}".encode())
    if python_runtime:
        _hash_tree(h, sdk / "take5", SDK_LIMITS)
    digest = h.hexdigest()
    labels = {
        LABEL_BOT: bot_name,
        LABEL_BOT_VERSION: given_version or f"0+{digest[:8]}",
        LABEL_SDK_VERSION: sdk_version,
        LABEL_PROTOCOL: protocol,
        LABEL_SOURCE_HASH: digest,
        LABEL_BUILDER: BUILDER_VERSION,
        LABEL_BASE: plan_base,
        LABEL_KIND: manifest.runtime.value if manifest else kind,
    }
    tag = f"{IMAGE_REPOSITORY}/{_slug(bot_name)}:{digest[:16]}"
    return _Plan(
        folder, kind, manifest, base, base_info, text, python_runtime, reqs, digest, tag, labels
    )


def _build_planned(
    ctx: ContextWriter,
    client: docker.DockerClient,
    plan: _Plan,
    *,
    sdk: Path,
    base_image: str,
    pip_args: Sequence[str],
    force: bool,
    limits: BuildLimits,
    deadline: float,
    bot: Path,
) -> dict[str, Any]:
    """Build the planned image and check what was built (its config, its size); its inspection.
    A refused image is removed."""
    output: list[str] = []
    nonce = secrets.token_hex(8)
    labels = plan.labels
    if plan.kind == "dockerfile":
        ctx.add_bytes(STAMPED_DOCKERFILE, df.stamp(plan.dockerfile, LABEL_BUILD, nonce).encode())
    else:
        if plan.python_runtime:
            wheels = _add_python_site(
                ctx, client, plan.base, plan.base_info, sdk, plan.reqs, pip_args, output, deadline
            )
            if plan.kind == "python" and _forkserver_ready(plan.base_info, plan.folder, wheels):
                labels[LABEL_FORKSERVER] = "1"
        cmd = plan.manifest.command if plan.manifest else ("python3", "/bot/bot.py")
        generated = _generated_dockerfile(plan.base, cmd, python=plan.python_runtime)
        ctx.add_bytes(STAMPED_DOCKERFILE, df.stamp(generated, LABEL_BUILD, nonce).encode())
    buildargs = {df.BASE_ARG: base_image} if plan.kind == "dockerfile" else {}
    image_id = _build(
        client,
        ctx.fileobj(),
        tag=plan.tag,
        labels=labels,
        buildargs=buildargs,
        nocache=force,
        limits=limits,
        deadline=deadline,
        output=output,
        bot=bot,
        nonce=nonce,
    )
    image = _inspect(client, image_id) or {}
    try:
        allowed_labels = {
            **((plan.base_info.get("Config") or {}).get("Labels") or {}),
            **labels,
            LABEL_BUILD: nonce,
        }
        df.check_image_config(image.get("Config") or {}, allowed_labels)
        check_command(client, image_id, image.get("Config") or {})
        if int(image.get("Size") or 0) > limits.max_image_bytes:
            size_mb, limit_mb = int(image["Size"]) >> 20, limits.max_image_bytes >> 20
            raise BuildRefusedError(f"the image is {size_mb} MB, the limit is {limit_mb} MB")
    except BuildRefusedError:
        _remove_image(client, plan.tag)
        raise
    return image


# -- what the folder is ---------------------------------------------------------------------------


def _kind(folder: BotFolder) -> tuple[str, Manifest | None]:
    """("dockerfile" | "manifest" | "python", manifest). Control files must be plain files."""
    for control in ("Dockerfile", MANIFEST, "bot.py"):
        if folder.has(control, Kind.SYMLINK):
            raise BuildRefusedError(f"{control} is a symlink: make it a plain file")
    if folder.has("Dockerfile"):
        return "dockerfile", None
    if folder.has(MANIFEST):
        data = _read_entry(folder, MANIFEST)
        files = frozenset(e.path for e in folder.entries if e.kind is Kind.FILE)
        return "manifest", parse_manifest(data, files)
    if folder.has("bot.py"):
        return "python", None
    hint = (
        " (a folder with an executable `run` needs a bot.toml saying its runtime)"
        if folder.has("run")
        else ""
    )
    raise BuildRefusedError(
        f"bot folder {folder.root.name!r} has no bot.py, {MANIFEST} or Dockerfile{hint}"
    )


def _read_entry(folder: BotFolder, rel: str) -> bytes:
    """A small control file, read without following links (the context re-reads and re-checks)."""
    with ContextWriter() as tmp:
        small = BotFolder(folder.root, tuple(e for e in folder.entries if e.path == rel), 0)
        tmp.add_folder(small, "")
        return tmp.captured.get(rel, b"")


def _bot_version(captured: Mapping[str, bytes]) -> str | None:
    v = captured.get("VERSION", b"").decode("utf-8", "replace").strip()
    if v:
        return v.splitlines()[0].strip()[:64]
    text = captured.get("bot.py", b"").decode("utf-8", "replace")
    m = re.search(
        r"""^__version__\s*=\s*["']([^"'\n]{1,64})["']""", text, re.MULTILINE
    ) or re.search(r"""^\s+version\s*=\s*["']([^"'\n]{1,64})["']""", text, re.MULTILINE)
    return m.group(1) if m else None


def _slug(name: str) -> str:
    s = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")
    return s[:60] or "bot"


def sdk_versions(sdk_dir: str | os.PathLike[str] = defaults.SDK_DIR) -> tuple[str, str]:
    """(sdk version, protocol version) read from the SDK's sources without importing them."""
    sdk = Path(sdk_dir) / "take5"

    def read(p: Path) -> str:
        try:
            return p.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""

    m = re.search(
        r"""^__version__\s*=\s*["']([^"']+)["']""", read(sdk / "__init__.py"), re.MULTILINE
    )
    version = m.group(1) if m else "unknown"
    protocol = "unknown"
    for py in sorted(sdk.glob("*.py")):
        m = re.search(r"""^PROTOCOL_VERSION\s*=\s*["']?([\w.\-]+)""", read(py), re.MULTILINE)
        if m:
            protocol = m.group(1)
            break
    return version, protocol


def _hash_tree(h: Any, root: Path, limits: FolderLimits) -> None:
    with ContextWriter() as tmp:
        tmp.add_folder(scan(root, limits), "")
        h.update(tmp.hash.digest())


# -- base images -----------------------------------------------------------------------------------


def _inspect(client: docker.DockerClient, ref: str) -> dict[str, Any] | None:
    try:
        return client.api.inspect_image(ref)  # type: ignore[no-any-return]
    except docker.errors.NotFound:
        return None
    except docker.errors.APIError as exc:
        raise BuildFailedError(f"inspecting image {ref}: {exc.explanation or exc}") from None


def _base(client: docker.DockerClient, ref: str) -> dict[str, Any]:
    info = _inspect(client, ref)
    if info is None:
        hint = " (run scripts/setup-docker.sh to build it)" if ref.startswith("take5/") else ""
        raise ImageBuildError(
            f"base image {ref} is not on this engine{hint}; bot builds never pull"
        )
    return info


def _base_ids(client: docker.DockerClient, names: Sequence[str]) -> dict[str, str]:
    out = {}
    for n in names:
        info = _inspect(client, n)
        if info is not None:
            out[info["Id"]] = n
    return out


def _add_python_site(
    ctx: ContextWriter,
    client: docker.DockerClient,
    base: str,
    base_info: Mapping[str, Any],
    sdk: Path,
    reqs: list[Any],
    pip_args: Sequence[str],
    output: list[str],
    deadline: float,
) -> set[str]:
    """The SDK and the bot's wheels into the context; the top-level names the wheels install."""
    base_labels = (base_info.get("Config") or {}).get("Labels") or {}
    pyver = base_labels.get(LABEL_PYTHON, "")
    if not re.fullmatch(r"3\.\d+", pyver):
        raise ImageBuildError(
            f"base image {base} has no {LABEL_PYTHON} label (e.g. {LABEL_PYTHON}=3.11): the "
            "referee reads a base image's facts from its labels and never runs it to find out"
        )
    if "grpcio" not in base_labels.get(LABEL_RUNTIME, ""):
        reqs = [*parse_requirements("grpcio\nprotobuf\n"), *reqs]
    ctx.add_tree(sdk / "take5", f"root{SITE_DIR}/take5", SDK_LIMITS)
    names: set[str] = set()
    if reqs:
        with tempfile.TemporaryDirectory(prefix="take5-wheels-") as site:
            left = max(1.0, deadline - time.monotonic())
            output.append(
                install_wheels(
                    reqs, Path(site), python_version=pyver, pip_args=pip_args, timeout=left
                )
            )
            names = {_module_name(p.name) for p in Path(site).iterdir()}
            ctx.add_tree(site, f"root{WHEELS_DIR}", SITE_LIMITS)
    return names


def _module_name(filename: str) -> str:
    """The module a top-level file or folder on sys.path provides (``x.py``,
    ``x.cpython-311-...so``)."""
    return filename.split(".", 1)[0]


def _forkserver_ready(base_info: Mapping[str, Any], folder: BotFolder, wheels: set[str]) -> bool:
    """Whether a bot.py image may run in a warm container: its base has gRPC (the fork server
    imports it from there) and no name in the folder or the wheels shadows a module imported
    before the bot (a fresh ``python3 /bot/bot.py`` would import the bot's own file instead)."""
    import sys

    base_labels = (base_info.get("Config") or {}).get("Labels") or {}
    if "grpcio" not in base_labels.get(LABEL_RUNTIME, ""):
        return False
    top = {_module_name(e.path) for e in folder.entries if "/" not in e.path} | wheels
    return not top & (PRELOADED | set(sys.stdlib_module_names))


def _generated_dockerfile(base: str, command: Sequence[str], *, python: bool) -> str:
    env = f"HOME=/tmp TAKE5_LISTEN={LISTEN_ADDRESS}"
    run = ""
    if python:
        env += f" PYTHONPATH={SITE_DIR}:{WHEELS_DIR} PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1"
        # Byte-compiled here, in the sandboxed build step (the root fs is read-only at game time);
        # a syntax error is left to fail at run time, with its traceback in the bot's log. -I: the
        # standard library's compileall, never a module of the wheels (this step runs as root).
        run = (
            f"RUN python3 -I -m compileall -q --invalidation-mode unchecked-hash {SITE_DIR}/take5 "
            "/bot >/dev/null 2>&1 || true\n"
        )
    return (
        f"FROM {base}\nUSER 0\nCOPY root/ /\nENV {env}\n{run}USER {BOT_UID}:{BOT_UID}\n"
        f"WORKDIR /bot\nENTRYPOINT []\nCMD {json.dumps(list(command))}\n"
    )


# -- the build -------------------------------------------------------------------------------------


def _clean(text: str) -> str:
    """Build output (the bot's own commands print it): lines kept, every other control escaped."""
    return inert(text)


def _stream(
    client: docker.DockerClient, context: Any, params: Mapping[str, Any], deadline: float
) -> tuple[Iterator[dict[str, Any]], threading.Timer, list[bool]]:
    api = client.api
    response = api._post(
        api._url("/build"),
        data=context,
        params=dict(params),
        headers={"Content-Type": "application/tar"},
        stream=True,
        timeout=None,
    )
    api._raise_for_status(response)
    raw = api._get_raw_response_socket(response)
    expired = [False]

    def cut() -> None:
        expired[0] = True
        try:
            getattr(raw, "_sock", raw).shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        response.close()

    timer = threading.Timer(max(0.0, deadline - time.monotonic()), cut)
    timer.daemon = True
    timer.start()
    return api._stream_helper(response, decode=True), timer, expired


def _build(
    client: docker.DockerClient,
    context: Any,
    *,
    tag: str,
    labels: Mapping[str, str],
    buildargs: Mapping[str, str],
    nocache: bool,
    limits: BuildLimits,
    deadline: float,
    output: list[str],
    bot: Path,
    nonce: str,
) -> str:
    params = {
        "t": tag,
        "q": False,
        "nocache": nocache,
        "rm": True,
        "forcerm": True,
        "pull": False,
        "dockerfile": STAMPED_DOCKERFILE,
        "networkmode": "none",
        "memory": limits.memory,
        "memswap": limits.memory,
        "cpuperiod": 100_000,
        "cpuquota": int(100_000 * limits.cpus),
        "shmsize": 64 << 20,
        "labels": json.dumps(dict(labels)),
        "buildargs": json.dumps(dict(buildargs)),
    }
    image_id = ""
    error = ""
    if time.monotonic() >= deadline:
        raise BuildTimeoutError(
            f"building {bot.name!r} took longer than {limits.timeout:g}s", "".join(output)
        )
    try:
        events, timer, expired = _stream(client, context, params, deadline)
    except docker.errors.APIError as exc:
        raise BuildFailedError(
            f"the engine refused to build {bot.name!r}: {_clean(str(exc.explanation or exc))}"
        ) from None
    try:
        for event in events:
            if "stream" in event:
                text = _clean(str(event["stream"]))
                output.append(text)
                # A hint only (a RUN step can print this line too): the image is found by its tag.
                if re.search(r"Successfully built [0-9a-f]{12,64}", text):
                    image_id = tag
            elif "aux" in event and isinstance(event["aux"], dict) and "ID" in event["aux"]:
                image_id = tag
            elif "error" in event:
                error = _clean(str(event["error"]))
                output.append(error + "\n")
    except Exception as exc:  # noqa: BLE001 - the connection was cut (deadline) or broke
        if not expired[0]:
            error = error or f"the build stream broke: {_clean(str(exc))}"
    finally:
        timer.cancel()
    out = "".join(output)[-64 * 1024 :]
    if expired[0]:
        _forget(client, nonce)
        raise BuildTimeoutError(
            f"building {bot.name!r} took longer than {limits.timeout:g}s; the build was cancelled",
            out,
        )
    if error or not image_id:
        _forget(client, nonce)
        raise BuildFailedError(
            f"building {bot.name!r} failed: {(error or 'no image was made').strip()[:300]}", out
        )
    return image_id


def _forget(client: docker.DockerClient, nonce: str, wait: float = 30.0) -> None:
    """Remove the intermediate images of a failed build: those stamped with its nonce, children
    before parents (an image with a child cannot be removed). After a cancelled build the engine
    is still killing the step's container, which holds its image: wait up to ``wait`` seconds."""
    give_up = time.monotonic() + wait
    while True:
        try:
            ids = client.api.images(
                all=True, quiet=True, filters={"label": f"{LABEL_BUILD}={nonce}"}
            )
        except docker.errors.APIError:
            return
        if not ids:
            return
        removed = False
        for image_id in ids:
            try:
                client.api.remove_image(image_id, noprune=False)
                removed = True
            except docker.errors.APIError:
                pass  # a parent of one not removed yet, or in use: next round
        if not removed:
            if time.monotonic() >= give_up:
                log.warning(
                    "could not remove %d intermediate image(s) of build %s", len(ids), nonce
                )
                return
            time.sleep(0.5)


def _remove_image(client: docker.DockerClient, ref: str) -> None:
    try:
        client.api.remove_image(ref, force=True, noprune=False)
    except docker.errors.APIError as exc:
        log.warning("removing refused image %s: %s", ref, exc)


def _info(
    image: Mapping[str, Any],
    tag: str,
    labels: Mapping[str, str],
    base: str,
    *,
    built: bool,
    seconds: float,
) -> ImageInfo:
    have = dict((image.get("Config") or {}).get("Labels") or {})
    return ImageInfo(
        tag=tag,
        id=str(image.get("Id", "")),
        bot_name=labels[LABEL_BOT],
        bot_version=labels[LABEL_BOT_VERSION],
        sdk_version=labels[LABEL_SDK_VERSION],
        protocol_version=labels[LABEL_PROTOCOL],
        source_hash=labels[LABEL_SOURCE_HASH],
        base_image=base,
        built=built,
        build_seconds=seconds,
        labels=have,
    )
