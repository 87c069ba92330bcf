"""``contextls/countTokens``: text and files counted in one model's tokens, or several's.

Each model is named as a window names it (any spelling, ``core.models``); without one the
workspace's model counts, and an ``encoding`` names a tokenizer directly.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from contextls.app.bulk import count_files
from contextls.app.settings import choose_model
from contextls.app.workspace import Workspace
from contextls.core import models
from contextls.core.tokens import Tokenizer
from contextls.protocol import (
    CountTokensResult,
    FileTarget,
    FileTokens,
    ModelCount,
    SkippedFile,
    TargetRefusal,
)


def count_for_models(
    tokenizers: Callable[[str], Tokenizer],
    workspace: Workspace | None,
    text: str,
    targets: Sequence[FileTarget] | None,
    names: Sequence[str] | None,
    encoding: str | None,
) -> CountTokensResult:
    """Every asked model's count of ``text`` plus ``targets`` (expanded in ``workspace``)."""
    asked: list[tuple[str, str]] = []
    for name in names or ():
        wanted, _ = choose_model({}, {"model": name}, ())
        asked.append((wanted["model"], wanted["encoding"]))
    if not asked:
        if encoding is None and workspace is not None:
            settings = workspace.settings
            asked.append((models.model_of(settings.model, settings.encoding), settings.encoding))
        else:
            encoding = encoding or "o200k_base"
            asked.append((models.model_of("", encoding), encoding))
    counts = []
    skipped: list[SkippedFile] = []
    refused: list[TargetRefusal] = []
    for model, name in asked:
        tokenizer = tokenizers(name)
        files: list[FileTokens] = []
        if targets and workspace is not None:
            files, skipped, refused = count_files(workspace, list(targets), tokenizer.count)
        counts.append(
            ModelCount(
                model=model,
                encoding=tokenizer.encoding,  # type: ignore[arg-type]
                tokens=tokenizer.count(text) + sum(f.tokens for f in files),
                exact=tokenizer.spec.exact,
                label=tokenizer.spec.label,
                files=files,
            )
        )
    first = counts[0]
    return CountTokensResult(
        tokens=first.tokens,
        encoding=first.encoding,
        model=first.model,
        exact=first.exact,
        label=first.label,
        counts=counts,
        files=first.files,
        skipped=skipped,
        refused=refused,
    )
