"""How the judges word a difference: a value in one short line, a field's refusal."""

from __future__ import annotations

import json
from typing import Any

from numaspec.errors import InvalidFieldError

__all__ = ["LIMIT", "require", "short"]

#: characters per difference
LIMIT = 300


def require(ok: bool, message: str, where: str) -> None:
    if not ok:
        raise InvalidFieldError(message, where=where)


def short(value: Any, limit: int = 120) -> str:
    text = json.dumps(value, sort_keys=True, separators=(",", ":"))
    return text if len(text) <= limit else text[:limit - 3] + "..."

