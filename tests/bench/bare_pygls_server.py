"""The cold-start floor: a bare pygls server that imports what contextls imports.

It registers no feature, so spawn -> ``initialize`` answered measures Python
start-up, the library imports and pygls' own initialize handling. contextls
should add little on top (tiktoken's BPE tables load lazily, on first use).
"""

from __future__ import annotations

import sqlite3  # noqa: F401  (imported for its start-up cost, like contextls)

import lsprotocol.types  # noqa: F401
import msgspec  # noqa: F401
import platformdirs  # noqa: F401
import tiktoken  # noqa: F401
from pygls.lsp.server import LanguageServer


def main() -> None:
    LanguageServer("bare-pygls", "0").start_io()


if __name__ == "__main__":
    main()
