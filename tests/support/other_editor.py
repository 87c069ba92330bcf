"""A second editor for the editors' tests: it reaches the shared daemon as an editor does.

    python -m tests.support.other_editor ROOT FILE LINE COMMAND...

Run from the repository's root. It runs COMMAND (``contextls connect --stdio``, and what
picks the daemon), opens FILE (under ROOT) with the text on disk as ``other-editor``,
and types LINE at its top, unsaved; then it prints every message the server shows it,
one per line, until its standard input closes.
"""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path
from typing import IO, Any

from tests.support.rpc import END_OF_OUTPUT, FrameReader, frame, notification, read_message, request


def _send(pipe: IO[bytes], message: dict[str, Any]) -> None:
    pipe.write(frame(message))
    pipe.flush()


def main(root: str, name: str, line: str, command: list[str]) -> None:
    server = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert server.stdin is not None and server.stdout is not None
    reader, output = FrameReader(), server.stdout
    folder = Path(root).resolve()
    uri = (folder / name).as_uri()
    initialize = {
        "processId": None,
        "capabilities": {},
        "clientInfo": {"name": "other-editor"},
        "workspaceFolders": [{"uri": folder.as_uri(), "name": folder.name}],
    }
    _send(server.stdin, request(1, "initialize", initialize))
    while (message := read_message(reader, output)) is not END_OF_OUTPUT:
        if message.get("id") == 1:
            break
    _send(server.stdin, notification("initialized", {}))
    document = {"uri": uri, "languageId": "text", "version": 1, "text": (folder / name).read_text()}
    _send(server.stdin, notification("textDocument/didOpen", {"textDocument": document}))
    top = {"line": 0, "character": 0}
    change = {"range": {"start": top, "end": top}, "text": line + "\n"}
    _send(
        server.stdin,
        notification(
            "textDocument/didChange",
            {"textDocument": {"uri": uri, "version": 2}, "contentChanges": [change]},
        ),
    )

    def listen() -> None:
        while (message := read_message(reader, output)) is not END_OF_OUTPUT:
            if message.get("method") == "window/showMessage":
                print(message["params"]["message"], flush=True)

    threading.Thread(target=listen, daemon=True).start()
    sys.stdin.read()
    server.stdin.close()
    server.wait(10)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:])
