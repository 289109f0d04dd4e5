"""A seat's kept exposure: its signed ``expose`` written beside its own copy of the log.

At a ``blind-v2`` table a seat that receives a wrong sealed key exposes its X25519 key for the
hand in a signed ``expose`` (``docs/blind-proofs.md`` section 10). A host that ignores it
journals nothing of it, so the seat keeps it itself, at once and durably, in a *sidecar file*
next to its copy of the log: ``<log file name>.exposure``. With that copy it names the sender
(or, for a false accusation, its own author) in a dispute; ``canasta-replay audit`` finds the
file next to the log and checks it (``log.replay.exposure_verdict``).

The file (``docs/log-format.md``, "A seat's kept exposure") is one msgpack map:
``{"format": "canasta-net/exposure/1", "act": bin, "asig": bin}``, the ``expose`` act and its
author's signature exactly as sent. It is written to a temporary file, synced, renamed over the
name and its directory synced, after the log copy it refers to (the record its ``head`` names)
was synced: a crash leaves either no file or a whole one whose head is in the log on disk.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import BinaryIO, Final

import msgpack

from .durable import flush_and_sync
from .writer import fsync_directory

EXPOSURE_FORMAT: Final = "canasta-net/exposure/1"
EXPOSURE_SUFFIX: Final = ".exposure"
# an exposure is one signed act (at most 64 KiB, docs/wire-protocol.md) and its signature
MAX_EXPOSURE_FILE: Final = 70_000


class ExposureFileError(ValueError):
    """An exposure file that cannot be read or is not one (the message is one sentence)."""


def exposure_path(log_path: str | os.PathLike[str]) -> Path:
    """Where the exposure kept beside the log at ``log_path`` is: ``<log>.exposure``."""
    path = Path(log_path)
    return path.with_name(path.name + EXPOSURE_SUFFIX)


def encode_exposure(act: bytes, asig: bytes) -> bytes:
    data: bytes = msgpack.packb(
        {"format": EXPOSURE_FORMAT, "act": bytes(act), "asig": bytes(asig)}, use_bin_type=True
    )
    return data


def write_exposure(
    path: Path, act: bytes, asig: bytes, *, log_file: BinaryIO | None = None
) -> None:
    """Keep a signed exposure at ``path`` durably (OSError if it cannot be written). The log
    copy ``log_file`` is synced first, so that the record the exposure names as its head is on
    the disk before the exposure is."""
    if log_file is not None:
        flush_and_sync(log_file, True)
    temporary = path.with_name(path.name + ".tmp")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        with os.fdopen(descriptor, "wb") as f:
            f.write(encode_exposure(act, asig))
            f.flush()
            os.fsync(f.fileno())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            temporary.unlink()
        raise
    fsync_directory(path.parent)


def decode_exposure(data: bytes, name: str = "the exposure file") -> tuple[bytes, bytes]:
    """The ``(act, asig)`` an exposure file holds; ExposureFileError (one sentence) if it is not
    an exposure file of this format. Whether it proves anything is for
    ``log.replay.exposure_verdict`` to say."""
    if len(data) > MAX_EXPOSURE_FILE:
        raise ExposureFileError(f"{name} is over {MAX_EXPOSURE_FILE} bytes: not an exposure")
    try:
        value = msgpack.unpackb(data, raw=False, strict_map_key=False)
    except (ValueError, TypeError, msgpack.UnpackException):
        raise ExposureFileError(f"{name} is not msgpack: not an exposure") from None
    if not isinstance(value, dict) or value.get("format") != EXPOSURE_FORMAT:
        raise ExposureFileError(f"{name} is not in the format {EXPOSURE_FORMAT}")
    act, asig = value.get("act"), value.get("asig")
    if (
        not isinstance(act, bytes)
        or not isinstance(asig, bytes)
        or set(value)
        != {
            "format",
            "act",
            "asig",
        }
    ):
        raise ExposureFileError(f"{name} does not hold exactly a signed act and its signature")
    return act, asig


def read_exposure(path: str | os.PathLike[str]) -> tuple[bytes, bytes]:
    """Read and decode the exposure file at ``path`` (ExposureFileError, one sentence)."""
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_EXPOSURE_FILE + 1)
    except OSError as e:
        raise ExposureFileError(f"{path} cannot be read: {e.strerror or e}") from None
    return decode_exposure(data, str(path))
