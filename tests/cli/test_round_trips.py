"""How many times a warm command waits on the daemon: counted on the wire, by a relay
put in the daemon's place on its socket. A command that reads (status, ls, show) sends
everything in one write; one that changes the window waits once to open the session
(what the daemon runs, and the session's opening, in one write) and once per request.
Closing ends the session (no ``shutdown``)."""

from __future__ import annotations

import json
import os
import selectors
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli.conftest import Cli


class Relay:
    """Listens at ``path``, passes every connection on to ``target``, and notes which side
    spoke, in order (a run of chunks from one side is one turn of it)."""

    def __init__(self, path: Path, target: Path) -> None:
        self.target = target
        self.turns: list[list[str]] = []
        self._listener = socket.socket(socket.AF_UNIX)
        self._listener.bind(str(path))
        self._listener.listen(8)
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._listener.close()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            turns: list[str] = []
            self.turns.append(turns)
            threading.Thread(target=self._pass, args=(client, turns), daemon=True).start()

    def _pass(self, client: socket.socket, turns: list[str]) -> None:
        server = socket.socket(socket.AF_UNIX)
        server.connect(str(self.target))
        selector = selectors.DefaultSelector()
        selector.register(client, selectors.EVENT_READ, ("client", server))
        selector.register(server, selectors.EVENT_READ, ("server", client))
        with client, server:
            while True:
                for key, _ in selector.select():
                    side, other = key.data
                    data = key.fileobj.recv(65536)  # type: ignore[union-attr]
                    if not data:
                        return
                    if not turns or turns[-1] != side:
                        turns.append(side)
                    other.sendall(data)


@pytest.fixture
def relay(cli: Cli) -> Iterator[Relay]:
    cli("status")  # the daemon runs, with this code
    path = Path(json.loads(cli("daemon", "--json").stdout)["socket"])
    real = path.with_name(path.name + ".real")
    os.rename(path, real)
    relaying = Relay(path, real)
    try:
        yield relaying
    finally:
        relaying.close()
        path.unlink(missing_ok=True)
        os.rename(real, path)


def client_turns(relay: Relay) -> list[int]:
    """For each connection made, how many times the client spoke after waiting."""
    return [turns.count("client") for turns in relay.turns]


def test_a_warm_command_waits_once_to_open_and_once_per_request(cli: Cli, relay: Relay) -> None:
    cli.write("a.py", "x = 1\n")
    cli("status")
    assert client_turns(relay) == [1]
    relay.turns.clear()
    cli("add", "a.py")
    assert client_turns(relay) == [2]
    relay.turns.clear()
    assert "ctx-1" in cli("ls").stdout
    assert client_turns(relay) == [1]  # the list and the status under it, with the opening
    relay.turns.clear()
    cli("pin", "ctx-1")
    assert client_turns(relay) == [2]
    relay.turns.clear()
    cli("pin", "a.py")
    assert client_turns(relay) == [3]  # the list the path is looked up in, then the pin
