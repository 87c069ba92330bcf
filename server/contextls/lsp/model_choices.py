"""The models a window can count for, as ``contextls/serverInfo`` offers them to editors."""

from __future__ import annotations

from typing import cast

from contextls import protocol as p
from contextls.app.tokenizers import available
from contextls.core import models


def model_choices() -> list[p.ModelChoice]:
    """Every model a window can be set to, by the name it shows, with its tokenizer."""
    names = dict.fromkeys([*models.known_models(), *models.CLAUDE_EXAMPLES])
    choices = []
    for name in names:
        encoding = models.encoding_of(name)
        spec = models.TOKENIZERS[encoding]
        choices.append(
            p.ModelChoice(
                name=name,
                encoding=cast(p.Encoding, encoding),
                exact=spec.exact,
                label=spec.label,
                unavailable=available(encoding) or "",
            )
        )
    return choices
