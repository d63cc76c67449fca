"""Reading an operator's file, bounded, with one set of errors for every importer (KCONF-1,
SYSFS-9, CKPT-7): a file that is missing, unreadable or larger than numaspec reads is an
:class:`~numaspec.errors.InputFileError` (or a
:class:`~numaspec.errors.LimitExceededError`) naming it, never a traceback."""

from __future__ import annotations

import os

from numaspec.errors import InputFileError, LimitExceededError

__all__ = ["MAX_FILE_BYTES", "field_at", "read_bytes", "type_phrase"]

#: The largest file the importers read (kubectl's output of thousands of pods, an hwloc XML
#: of a large server and kubelet's state files stay far below it).
MAX_FILE_BYTES = 64 << 20


def read_bytes(path: str | os.PathLike[str], *, limit: int = MAX_FILE_BYTES) -> bytes:
    """The bytes of ``path``, at most ``limit`` of them."""
    name = os.fspath(path)
    try:
        with open(name, "rb") as handle:
            data = handle.read(limit + 1)
    except FileNotFoundError:
        raise InputFileError("missing file", where=name) from None
    except OSError as exc:
        raise InputFileError(f"cannot read the file: {exc.strerror or exc}",
                             where=name) from None
    if len(data) > limit:
        raise LimitExceededError(f"the file is larger than {limit} bytes, the most numaspec "
                                 "reads here", where=name)
    return data


def field_at(where: str, field: str) -> str:
    """Where a field is, as every importer's error names it: ``file: field``, or
    ``file: items[3].field`` inside a list's item."""
    if ": " in where and where.rsplit(": ", 1)[1].startswith("items["):
        return f"{where}.{field}"
    return f"{where}: {field}"


def type_phrase(value: object) -> str:
    """A decoded YAML or JSON value's type as an error says it (``a list``, ``null``)."""
    return {bool: "a boolean", int: "a number", float: "a number", str: "a string",
            list: "a list", dict: "an object", type(None): "null"}.get(type(value),
                                                                     type(value).__name__)
