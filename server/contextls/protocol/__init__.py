"""The wire contract, and nothing else: what clients and the server say to each other.

The types (``types``), the method table (``methods``) and the error codes
(``errors``) are defined once here; the JSON Schema in
``clients/protocol/contextls.schema.json`` is generated from them (``schema``), and
the editors' mirrors from that. It is the only part of the server a client imports:
``framing`` (LSP's Content-Length frames), ``places`` (where the daemon of a database
listens) and ``build`` (what identifies the installed code) are the contract between
the command line and its daemon.
"""

from contextls.protocol.errors import *  # noqa: F403
from contextls.protocol.errors import __all__ as _errors
from contextls.protocol.methods import *  # noqa: F403
from contextls.protocol.methods import __all__ as _methods
from contextls.protocol.types import *  # noqa: F403
from contextls.protocol.types import __all__ as _types

__all__ = [*_types, *_errors, *_methods]
