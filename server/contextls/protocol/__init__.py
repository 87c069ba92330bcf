"""The wire contract, and nothing else: what clients and the server say to each other.

The types (``wire``, ``status``, ``params``, ``results``, ``conversation``), the method
table (``methods``) and the error codes (``errors``) are defined once here; the JSON
Schema in ``clients/protocol/contextls.schema.json`` is generated from them
(``schema``), and the editors' mirrors from that. Field names are camelCase on the
wire (``rename="camel"``). Every request takes an optional ``workspace`` (a folder URI
or path); without it the server routes by the folder that contains ``uri``, else the
only open folder.

With ``contextls.common`` (where a daemon listens, what identifies the installed code), it
is the only part of the server a client imports; ``framing`` (LSP's Content-Length frames)
is part of the contract.
"""

from contextls.protocol import (
    conversation,
    errors,
    methods,
    params,
    results,
    status,
    structure,
    wire,
)
from contextls.protocol.conversation import *  # noqa: F403
from contextls.protocol.errors import *  # noqa: F403
from contextls.protocol.methods import *  # noqa: F403
from contextls.protocol.params import *  # noqa: F403
from contextls.protocol.results import *  # noqa: F403
from contextls.protocol.status import *  # noqa: F403
from contextls.protocol.structure import *  # noqa: F403
from contextls.protocol.wire import *  # noqa: F403

__all__ = [
    *wire.__all__,
    *status.__all__,
    *params.__all__,
    *results.__all__,
    *conversation.__all__,
    *structure.__all__,
    *errors.__all__,
    *methods.__all__,
]
