"""The rules a bot's own ``Dockerfile`` must follow, checked before the engine sees it.

The engine builds a Dockerfile with the daemon's powers: ``FROM`` and ``COPY --from=IMAGE`` pull
from any registry (a loopback one included), ``ADD https://...`` fetches a URL from the daemon's
network namespace (the host's loopback: server-side request forgery) and unpacks archives, and a
``VOLUME`` makes every container of the image write to an anonymous volume on the host's disk. The
referee builds with ``network_mode="none"`` (RUN steps have no network at all, loopback included)
and ``pull=False``; this module refuses what the network setting cannot stop:

* ``FROM`` only the arena's base images, by name (:data:`ALLOWED_BASES`, or ``$TAKE5_BASE_IMAGE``
  which the referee sets) or by the image id of one of them, or an earlier stage of the same file;
  no ``--platform``;
* ``COPY --from=`` only an earlier stage;
* no ``ADD`` at all (it is COPY plus URL fetching plus archive unpacking; use COPY);
* no ``VOLUME``, no ``ONBUILD``;
* no BuildKit syntax (``# syntax=`` picks a frontend image from a registry; ``RUN --mount``,
  ``--network``, ``--security``) and only the default escape character, so that this parser and
  the engine's read the file alike;
* no ``take5.*`` labels: those carry the referee's facts about the image.

The built image is checked again (:func:`check_image_config`): no volumes, and labels of the
``take5.`` namespace only as the base and the referee set them.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Iterable, Mapping

from .build_errors import BuildRefusedError
from .manifest import RUNTIMES

BASE_ARG = "TAKE5_BASE_IMAGE"
ALLOWED_BASES = (*RUNTIMES.values(), "take5/base:bookworm")
"""The arena's base images: each runtime's and the one they are built on (all made by
scripts/setup-docker.sh, without any registry)."""

_KNOWN = {
    "FROM",
    "RUN",
    "CMD",
    "LABEL",
    "MAINTAINER",
    "EXPOSE",
    "ENV",
    "ADD",
    "COPY",
    "ENTRYPOINT",
    "VOLUME",
    "USER",
    "WORKDIR",
    "ARG",
    "ONBUILD",
    "STOPSIGNAL",
    "HEALTHCHECK",
    "SHELL",
}
_REFUSED = {
    "ADD": "ADD is refused (it fetches URLs and unpacks archives): use COPY",
    "VOLUME": "VOLUME is refused (a volume is host disk outside the sandbox's limits)",
    "ONBUILD": "ONBUILD is refused",
}
_MAX_BYTES = 64 * 1024


@dataclasses.dataclass(frozen=True)
class Instruction:
    line: int
    keyword: str
    args: str
    end: int = 0
    """The last physical line (1-based) of the instruction, continuations included."""


@dataclasses.dataclass(frozen=True)
class DockerfilePlan:
    """What the checked Dockerfile does, as far as the referee needs to know."""

    bases: tuple[str, ...]
    """The base image of each stage, resolved to an allowed name."""
    final_base: str


def logical_lines(text: str) -> list[Instruction]:
    """Split a Dockerfile into instructions as the engine does: ``\\`` continues a line, comment
    lines inside a continuation are dropped, parser directives are refused unless harmless."""
    out: list[Instruction] = []
    lines = text.splitlines()
    i = 0
    directives = True
    while i < len(lines):
        raw = lines[i]
        stripped = raw.strip()
        if directives and stripped.startswith("#"):
            m = re.match(r"#\s*([A-Za-z_]+)\s*=\s*(.*)$", stripped)
            if m:
                key, value = m.group(1).lower(), m.group(2).strip()
                if key == "syntax" or (key == "escape" and value != "\\"):
                    raise _refuse(i + 1, f"the parser directive `{stripped[:60]}` is not allowed")
                i += 1
                continue
        if stripped:
            directives = False
        if not stripped or stripped.startswith("#"):
            i += 1
            continue
        start = i
        parts = []
        while True:
            piece = lines[i].rstrip()
            if piece.endswith("\\"):
                parts.append(piece[:-1])
                i += 1
                while i < len(lines) and (not lines[i].strip() or lines[i].strip().startswith("#")):
                    i += 1
                if i >= len(lines):
                    break
                continue
            parts.append(piece)
            i += 1
            break
        joined = " ".join(p.strip() for p in parts).strip()
        keyword, _, args = joined.partition(" ")
        if "\t" in keyword:
            keyword, _, rest = keyword.partition("\t")
            args = f"{rest} {args}"
        out.append(Instruction(start + 1, keyword.upper(), args.strip(), i))
    return out


def _refuse(line: int, reason: str) -> BuildRefusedError:
    return BuildRefusedError(f"Dockerfile line {line}: {reason}")


def _flags(args: str) -> tuple[dict[str, str], str]:
    flags: dict[str, str] = {}
    rest = args
    while rest.startswith("--"):
        word, _, rest = rest.partition(" ")
        key, _, value = word[2:].partition("=")
        flags[key.lower()] = value
        rest = rest.lstrip()
    return flags, rest


def check_dockerfile(
    text: str, *, allowed: Iterable[str] = ALLOWED_BASES, base_ids: Mapping[str, str] | None = None
) -> DockerfilePlan:
    """Check a bot's Dockerfile against the rules in the module docstring.

    ``base_ids`` maps image ids (``sha256:...``) of allowed bases to their names, so a Dockerfile
    may pin its base by id. Raises :class:`BuildRefusedError` naming the line and the rule."""
    if len(text.encode("utf-8", "replace")) > _MAX_BYTES:
        raise BuildRefusedError(f"Dockerfile is larger than {_MAX_BYTES // 1024} KB")
    if "\0" in text:
        raise BuildRefusedError("Dockerfile contains a NUL byte")
    allowed = tuple(allowed)
    ids = dict(base_ids or {})
    stages: list[str] = []
    bases: list[str] = []
    seen_from = False
    for ins in logical_lines(text):
        kw, args = ins.keyword, ins.args
        if kw not in _KNOWN:
            raise _refuse(ins.line, f"unknown instruction {kw[:30]!r}")
        if kw in _REFUSED:
            raise _refuse(ins.line, _REFUSED[kw])
        if kw == "ARG" and not seen_from:
            continue
        if kw == "FROM":
            seen_from = True
            flags, rest = _flags(args)
            if flags:
                raise _refuse(ins.line, f"FROM --{next(iter(flags))} is not allowed")
            words = rest.split()
            if (
                not words
                or len(words) not in (1, 3)
                or (len(words) == 3 and words[1].upper() != "AS")
            ):
                raise _refuse(ins.line, "expected `FROM IMAGE` or `FROM IMAGE AS NAME`")
            image = words[0]
            if image in (f"${BASE_ARG}", f"${{{BASE_ARG}}}"):
                resolved = "$" + BASE_ARG
            elif image in allowed:
                resolved = image
            elif image in ids:
                resolved = ids[image]
            elif image.lower() in stages:
                resolved = bases[stages.index(image.lower())]
            else:
                raise _refuse(
                    ins.line,
                    f"FROM {image[:80]!r} is not allowed: bot images build on the arena's base "
                    f"images only ({', '.join(allowed)}, or ${{{BASE_ARG}}})",
                )
            bases.append(resolved)
            stages.append(words[2].lower() if len(words) == 3 else f"#{len(stages)}")
            continue
        if not seen_from:
            raise _refuse(ins.line, f"{kw} before the first FROM")
        if kw == "COPY":
            flags, _ = _flags(args)
            for key in flags:
                if key not in ("from", "chown", "chmod"):
                    raise _refuse(ins.line, f"COPY --{key} is not allowed")
            if "from" in flags:
                src = flags["from"].lower()
                earlier = stages[:-1]
                if not (src in earlier or (src.isdigit() and int(src) < len(stages) - 1)):
                    raise _refuse(
                        ins.line,
                        f"COPY --from={flags['from'][:60]!r} is not allowed: "
                        "only an earlier stage of this Dockerfile",
                    )
        if kw == "RUN" and args.startswith("--"):
            raise _refuse(ins.line, "RUN options (--mount, --network, --security) are not allowed")
        if kw == "LABEL" and re.search(r"(^|[\s\"'])take5\.", args):
            raise _refuse(ins.line, "labels named take5.* are the referee's")
    if not bases:
        raise BuildRefusedError("Dockerfile has no FROM")
    return DockerfilePlan(tuple(bases), bases[-1])


def stamp(text: str, label: str, value: str) -> str:
    """The Dockerfile with ``LABEL label=value`` after every FROM: every intermediate image of the
    build then carries it, so the referee can find (and remove) them without reading the build's
    output, which the bot controls."""
    lines = text.splitlines()
    after = {ins.end for ins in logical_lines(text) if ins.keyword == "FROM"}
    out = []
    for n, line in enumerate(lines, 1):
        out.append(line)
        if n in after:
            out.append(f"LABEL {label}={json.dumps(value)}")
    return "\n".join(out) + "\n"


def check_image_config(config: Mapping[str, object], allowed_labels: Mapping[str, str]) -> None:
    """Refuse a built image that declares volumes or carries take5.* labels nobody set."""
    volumes = config.get("Volumes") or {}
    if volumes:
        names = sorted(str(v) for v in volumes) if isinstance(volumes, dict) else [str(volumes)]
        raise BuildRefusedError(
            f"the image declares volumes ({', '.join(names[:5])}): refused, a volume "
            "is host disk outside the sandbox's limits"
        )
    labels = config.get("Labels") or {}
    if isinstance(labels, dict):
        for key, value in labels.items():
            if str(key).startswith("take5.") and allowed_labels.get(str(key)) != value:
                raise BuildRefusedError(
                    f"the image carries the label {str(key)[:60]!r}, which is the referee's"
                )
