"""What contextls relies on in pygls beyond its documented API, checked on every upgrade.

pygls is pinned to the minor version these were verified on (pyproject.toml).
Each test names the thing it relies on, so a failing upgrade says what moved:
see ``server/contextls/lsp/README.md`` for why each is used.
"""

from __future__ import annotations

from importlib.metadata import version
from typing import Any
from urllib.parse import quote, unquote

import pygls.protocol
from lsprotocol import types as lsp
from pygls.protocol import JsonRPCProtocol
from pygls.workspace import Workspace

from contextls.lsp.converter import converter_factory
from contextls.lsp.server import ContextServer

VERIFIED_ON = "2.1."


def test_pygls_is_the_minor_version_these_contracts_were_verified_on() -> None:
    assert version("pygls").startswith(VERIFIED_ON), (
        f"pygls {version('pygls')} is not {VERIFIED_ON}x: re-check every test in this file, "
        "then move the pin in pyproject.toml"
    )


def test_converter_keeps_custom_params_as_dicts_and_types_standard_ones() -> None:
    for name in ("default_converter", "JsonRPCRequestMessage", "JsonRPCNotification"):
        assert hasattr(pygls.protocol, name), f"pygls.protocol.{name} is gone (lsp/converter.py)"
    protocol = ContextServer().protocol
    custom = protocol.structure_message(
        {"jsonrpc": "2.0", "id": 1, "method": "contextls/status", "params": {"a": [1]}}
    )
    assert custom.params == {"a": [1]}, (
        "JsonRPCProtocol.structure_message no longer uses our converter's request hook"
    )
    standard = protocol.structure_message(
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "initialize",
            "params": {"processId": None, "capabilities": {}},
        }
    )
    assert isinstance(standard.params, lsp.InitializeParams), (
        "standard LSP params are no longer structured by lsprotocol's converter"
    )
    assert converter_factory() is not None


def test_protocol_can_be_driven_from_outside_its_reader() -> None:
    for name in ("structure_message", "handle_message", "set_writer"):
        assert callable(getattr(JsonRPCProtocol, name, None)), (
            f"JsonRPCProtocol.{name} is gone or renamed (lsp/dispatch.py, lsp/transport.py)"
        )
    written: list[bytes] = []

    class Writer:
        def write(self, data: bytes) -> None:
            written.append(data)

        def close(self) -> None:
            pass

    server = ContextServer()
    server.protocol.set_writer(Writer())  # type: ignore[arg-type]
    message = server.protocol.structure_message({"jsonrpc": "2.0", "id": 3, "method": "shutdown"})
    server.protocol.handle_message(message)
    assert any(b'"id": 3' in data or b'"id":3' in data for data in written), (
        "JsonRPCProtocol.handle_message no longer answers through the writer set with set_writer"
    )


def test_open_documents_are_keyed_by_the_unquoted_uri() -> None:
    uri = "file:///tmp/a%20b/" + quote("ü.py")
    workspace = Workspace(None)
    workspace.put_text_document(
        lsp.TextDocumentItem(uri=uri, language_id="python", version=1, text="x = 1\n")
    )
    documents: dict[str, Any] = workspace.text_documents
    assert unquote(uri) in documents, (
        "Workspace.text_documents is no longer keyed by urllib's unquote(uri) "
        "(ContextServer.document_text looks documents up that way)"
    )
    assert documents[unquote(uri)].source == "x = 1\n"
