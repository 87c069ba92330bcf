"""The client JSON Schema is generated from the protocol package and must not go stale."""

from __future__ import annotations

import json

from contextls import protocol
from contextls.protocol import schema


def test_schema_file_matches_protocol() -> None:
    on_disk = schema.SCHEMA_PATH.read_text()
    assert on_disk == schema.render(), (
        "run `python -m contextls.protocol.schema` and commit the result"
    )


def test_schema_names_every_method_and_notification() -> None:
    document = json.loads(schema.SCHEMA_PATH.read_text())
    assert set(document["x-methods"]) == set(protocol.METHODS)
    assert set(document["x-notifications"]) == set(protocol.NOTIFICATIONS)
    add_region = document["$defs"]["AddRegionParams"]
    assert set(add_region["required"]) == {"uri", "range"}
    assert "startLine" not in add_region["properties"]
    assert document["$defs"]["Status"]["properties"]["nextEviction"]


def test_check_mode_detects_a_stale_file(tmp_path: object) -> None:
    from pathlib import Path

    stale = Path(str(tmp_path)) / "schema.json"
    stale.write_text("{}\n")
    assert schema.main(["--check", "--output", str(stale)]) == 1
    schema.main(["--output", str(stale)])
    assert schema.main(["--check", "--output", str(stale)]) == 0


def test_error_codes_are_named_in_the_schema_outside_reserved_ranges() -> None:
    from lsprotocol.types import ErrorCodes

    codes = json.loads(schema.SCHEMA_PATH.read_text())["x-errorCodes"]
    assert codes == {code.name: int(code) for code in protocol.ErrorCode}
    assert codes["INVALID_PARAMS"] == ErrorCodes.InvalidParams
    domain = {name: code for name, code in codes.items() if name != "INVALID_PARAMS"}
    assert len(set(domain.values())) == len(domain)
    for name, code in domain.items():
        assert not -32768 <= code <= -32000, f"{name} {code} is in JSON-RPC's reserved range"
        assert not -32899 <= code <= -32800, f"{name} {code} is in LSP's reserved range"


def test_every_request_of_the_method_table_has_its_handler() -> None:
    from contextls.lsp.handlers import HANDLERS

    assert sorted(request.method for request in HANDLERS) == sorted(protocol.METHODS)
