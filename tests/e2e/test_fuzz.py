"""Fuzzing the real server over stdio: one answer per id, no change from a refusal, alive.

A seeded generator makes JSON-RPC messages of every kind that goes wrong:
bodies that are not JSON or not UTF-8, deep nesting, wrong types, huge
numbers, bad or missing ids, null and unknown methods, and every contextls
request with its params mutated. Each one is followed, in the same write,
by a ``status`` request, so the test knows when everything the message
caused has been answered, and checks:

* a request with a valid id gets exactly one answer;
* a refused request leaves the window's revision where it was;
* the server is alive at the end, and its window reads back.

The fixed seed always runs (10,000 messages), and a second seed (2,000): fixed too,
unless ``CONTEXTLS_FUZZ_SEED`` names one or asks for ``random`` (printed, to repeat).
"""

from __future__ import annotations

import json
import os
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from contextls.protocol.framing import frame

from .rawio import RawServers, RawStdio

FIXED_SEED = 20261122
SECOND_SEED = 20261128
"""The suite is repeatable: a second fixed seed unless ``CONTEXTLS_FUZZ_SEED`` names one
(``random``: a new one each run, printed, to look for what the fixed seeds miss)."""
_ASKED = os.environ.get("CONTEXTLS_FUZZ_SEED", str(SECOND_SEED))
RANDOM_SEED = random.SystemRandom().randrange(2**32) if _ASKED == "random" else int(_ASKED)

MUTATING = {
    "contextls/addRegion",
    "contextls/addFile",
    "contextls/addSymbol",
    "contextls/addText",
    "contextls/remove",
    "contextls/pin",
    "contextls/clear",
    "contextls/restore",
}

RANGE = {"start": {"line": 0, "character": 0}, "end": {"line": 1, "character": 0}}


def templates(workspace: Path) -> dict[str, dict[str, Any]]:
    uri = (workspace / "a.py").as_uri()
    return {
        "contextls/addRegion": {"uri": uri, "range": RANGE},
        "contextls/addFile": {"uri": uri},
        "contextls/addSymbol": {"uri": uri, "name": "f", "range": RANGE},
        "contextls/addText": {"content": "fuzz note", "kind": "text"},
        "contextls/remove": {"ids": ["ctx-1"]},
        "contextls/pin": {"id": "ctx-1", "pin": True},
        "contextls/clear": {"keepPinned": True},
        "contextls/list": {"limit": 5},
        "contextls/render": {"format": "markdown", "maxTokens": 100},
        "contextls/status": {},
        "contextls/search": {"query": "fuzz", "limit": 5},
        "contextls/restore": {"ids": ["ctx-1"]},
        "contextls/countTokens": {"text": "hello"},
        "contextls/prepareConversation": {
            "messages": [{"role": "user", "content": "hi"}],
            "contextWindow": 1000,
        },
    }


class Fuzzer:
    def __init__(self, seed: int, workspace: Path) -> None:
        self.rng = random.Random(seed)
        self.templates = templates(workspace)

    def value(self, depth: int = 0) -> Any:
        rng = self.rng
        choice = rng.randrange(14 if depth < 4 else 10)
        return [
            lambda: None,
            lambda: rng.choice([True, False]),
            lambda: rng.randint(-(2**70), 2**70),
            lambda: rng.choice([0, -1, 1, 2**31, 2**53 + 1, 10**30]),
            lambda: rng.uniform(-1e300, 1e300),
            lambda: "".join(chr(rng.randrange(1, 0x2FFF)) for _ in range(rng.randrange(12))),
            lambda: rng.choice(["", " ", "ctx-1", "ctx-x", "file:///etc/passwd", "a" * 300]),
            lambda: rng.choice(["markdown", "xml", "o200k_base", "code", "error", "\u0000"]),
            lambda: rng.choice([float("inf"), float("nan")]) if False else 1.5,
            lambda: rng.choice([[], {}, [None], {"": None}]),
            lambda: [self.value(depth + 1) for _ in range(rng.randrange(4))],
            lambda: {self.key(): self.value(depth + 1) for _ in range(rng.randrange(4))},
            lambda: json.loads("[" * 40 + "]" * 40),
            lambda: {"start": {"line": rng.randint(-5, 10**9), "character": self.value(depth + 1)}},
        ][choice]()

    def key(self) -> str:
        return self.rng.choice(
            [
                "uri",
                "range",
                "text",
                "content",
                "kind",
                "ids",
                "id",
                "pin",
                "metadata",
                "query",
                "workspace",
                "limit",
                "format",
                "maxTokens",
                "x",
                "",
                "__proto__",
                "é",
            ]
        )

    def params(self, method: str) -> Any:
        rng = self.rng
        base = json.loads(json.dumps(self.templates.get(method, {})))
        if rng.random() < 0.1:
            return self.value()  # not an object at all
        for _ in range(rng.randrange(1, 4)):
            action = rng.randrange(3)
            if action == 0 and base:
                del base[rng.choice(list(base))]
            elif action == 1 and base:
                base[rng.choice(list(base))] = self.value()
            else:
                base[self.key()] = self.value()
        return base

    def message(self, msg_id: int) -> tuple[bytes, Any, str | None]:
        """A body, the id it carries (None: none to expect an answer for), its method."""
        rng = self.rng
        kind = rng.randrange(100)
        method = rng.choice(list(self.templates))
        if kind < 8:  # not JSON, or not UTF-8
            garbage = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 40)))
            return (
                rng.choice([garbage, b'{"jsonrpc":"2.0","id":', b"\xff\xfe{}", b"[]"]),
                None,
                None,
            )
        if kind < 14:  # a bad id
            bad = rng.choice([True, 1.5, 1e300, [1], {"a": 1}, None, 2**70])
            body = {"jsonrpc": "2.0", "id": bad, "method": method, "params": self.params(method)}
            return json.dumps(body).encode(), None, None
        if kind < 20:  # a bad method
            bad_method = rng.choice([None, 1, [], "", "contextls/nope", "é/ü", "$/x"])
            body = {"jsonrpc": "2.0", "id": msg_id, "method": bad_method}
            return json.dumps(body).encode(), msg_id, None
        if kind < 24:  # not JSON-RPC 2.0
            body = {"jsonrpc": rng.choice(["1.0", None, 2]), "id": msg_id, "method": method}
            return json.dumps(body).encode(), msg_id, None
        if kind < 30:  # a notification: nothing comes back for it
            body = {"jsonrpc": "2.0", "method": method, "params": self.params(method)}
            return json.dumps(body).encode(), None, None
        if kind < 34:  # deep nesting inside an otherwise good request
            depth = rng.choice([33, 100, 1000, 3000])
            deep = "[" * depth + "]" * depth
            text = (
                f'{{"jsonrpc":"2.0","id":{msg_id},"method":"{method}",'
                f'"params":{{"content":"x","metadata":{{"d":{deep}}}}}}}'
            )
            return text.encode(), msg_id, method
        body = {"jsonrpc": "2.0", "id": msg_id, "method": method, "params": self.params(method)}
        return json.dumps(body, ensure_ascii=rng.random() < 0.5).encode(), msg_id, method


@pytest.fixture
def server(workspace: Path, storage: Path) -> Iterator[RawStdio]:
    (workspace / "a.py").write_text("def f():\n    return 1\n")
    started = RawServers(workspace, storage)
    one = started({"maxItems": 20, "maxTokens": 4000})
    one.warm_up()
    yield one
    started.close_all()


def fuzz(server: RawStdio, fuzzer: Fuzzer, count: int) -> None:
    revision = server.result("contextls/status")["revision"]
    answers: dict[Any, list[dict[str, Any]]] = {}

    def read_until(done: Any) -> None:
        while not done():
            message = server.read()
            if "id" in message and "method" not in message:
                answers.setdefault(message["id"], []).append(message)

    for n in range(count):
        msg_id = 1_000_000 + n * 2
        status_id = msg_id + 1
        body, expect_id, method = fuzzer.message(msg_id)
        status_request = {"jsonrpc": "2.0", "id": status_id, "method": "contextls/status"}
        server.write(frame(body) + frame(json.dumps(status_request).encode()))
        read_until(lambda wanted=status_id: wanted in answers)
        if expect_id is not None:
            # prepareConversation is answered from a task: it may follow the status.
            read_until(lambda wanted=msg_id: wanted in answers)
        status = answers.pop(status_id)
        assert len(status) == 1 and "result" in status[0], (n, body[:200], status)
        mine = answers.pop(msg_id, [])
        if expect_id is not None:
            assert len(mine) == 1, (n, body[:200], mine)
            data = mine[0].get("error", {}).get("data")
            # Data only as the protocol defines it (an invalid field named), never a trace.
            assert data is None or set(data) == {"field", "rule", "bound", "expected"}, (n, mine)
        else:
            assert mine == [], (n, body[:200], mine)
        new_revision = status[0]["result"]["revision"]
        succeeded = bool(mine) and "result" in mine[0] and method in MUTATING
        if not succeeded:
            assert new_revision == revision, (n, body[:200], mine)
        revision = new_revision
    strays = {key: value for key, value in answers.items() if key is not None}
    assert not strays, f"answers nobody asked for, or a second answer: {strays}"
    listed = server.result("contextls/list")
    assert len(listed["items"]) == server.result("contextls/status")["itemCount"]
    assert server.process.poll() is None, "the server died"


def test_fuzz_fixed_seed(server: RawStdio, workspace: Path) -> None:
    fuzz(server, Fuzzer(FIXED_SEED, workspace), 10_000)


def test_fuzz_second_seed(server: RawStdio, workspace: Path) -> None:
    print(f"fuzz: seed {RANDOM_SEED} (CONTEXTLS_FUZZ_SEED to repeat)")
    fuzz(server, Fuzzer(RANDOM_SEED, workspace), 2_000)


NOTIFICATIONS_WITH_VALID_PARAMS: dict[str, Any] = {
    "initialized": {},
    "textDocument/didOpen": {
        "textDocument": {
            "uri": "file:///tmp/x.py",
            "languageId": "python",
            "version": 1,
            "text": "",
        }
    },
    "textDocument/didChange": {
        "textDocument": {"uri": "file:///tmp/x.py", "version": 2},
        "contentChanges": [{"text": "x = 1\n"}],
    },
    "textDocument/didClose": {"textDocument": {"uri": "file:///tmp/x.py"}},
    "workspace/didChangeConfiguration": {"settings": {}},
    "$/cancelRequest": {"id": 999},
    "$/setTrace": {"value": "off"},
    "contextls/didChangeStatus": {},
}


def test_a_notification_sent_with_an_id_gets_exactly_one_answer(server: RawStdio) -> None:
    """A notification's method sent with an id and valid params is a request: without
    an answer the client waits for ever (840 of 36,600 fuzzed messages were such)."""
    for method, params in NOTIFICATIONS_WITH_VALID_PARAMS.items():
        reply = server.request(method, params)
        assert reply["error"]["code"] == -32600, (method, reply)
        assert "notification" in reply["error"]["message"]
    assert "result" in server.request("contextls/status")
