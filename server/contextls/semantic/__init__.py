"""Search by meaning (the optional ``contextls[semantic]`` extra): a provider for
``contextls.search``, which ``register`` hands over when the server is wired.

Nothing here imports pygls or lsprotocol; each module takes plain values or a
``sqlite3.Connection``. Without the extra's packages the provider is unavailable
and says why; the model loads only when something is embedded or searched.
"""

from __future__ import annotations


def register() -> None:
    """Make this package the provider of search by meaning (``search.meaning``)."""
    from contextls.search import meaning
    from contextls.semantic.engine import engine_for

    meaning.register(engine_for)
