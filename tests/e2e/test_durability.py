"""Acknowledged means durable: kill -9 at any moment after an answer loses nothing answered.

Each run starts the real server, makes changes (one at a time, and in
pipelined bursts), SIGKILLs it at a random moment 0-25 ms after an answer,
and then reads the window back with a fresh server: every change that was
answered must be there. ``CONTEXTLS_KILL_RUNS`` sets how many runs (the
suite runs a few; ``tests/soak/kill9.sh`` runs 200 and more). The seed is
printed, so a failing run can be repeated with ``CONTEXTLS_KILL_SEED``.
"""

from __future__ import annotations

import os
import random
import time
from pathlib import Path

import pytest

from tests.support.rpc import is_response, request

from .rawio import RawServers, RawStdio

RUNS = int(os.environ.get("CONTEXTLS_KILL_RUNS", "12"))
SEED = int(os.environ.get("CONTEXTLS_KILL_SEED", str(random.SystemRandom().randrange(2**32))))


@pytest.fixture
def servers(workspace: Path, storage: Path) -> RawServers:
    started = RawServers(workspace, storage)
    yield started  # type: ignore[misc]
    started.close_all()


def answered_adds(server: RawStdio, rng: random.Random, run: int) -> list[str]:
    """Make changes and return the contents whose adds were answered, killing at random."""
    answered: list[str] = []
    sequential = rng.randint(1, 8)
    for n in range(sequential):
        content = f"run {run} sequential {n}"
        reply = server.request("contextls/addText", {"content": content})
        assert "result" in reply, reply
        answered.append(content)
    burst = [f"run {run} burst {n}" for n in range(rng.randint(0, 40))]
    ids = [server.new_id() for _ in burst]
    server.send(
        *[
            request(msg_id, "contextls/addText", {"content": content})
            for msg_id, content in zip(ids, burst, strict=True)
        ]
    )
    wanted = dict(zip(ids, burst, strict=True))
    stop_after = rng.randint(0, len(burst))  # kill mid-burst, after this many answers
    while wanted and len(answered) - sequential < stop_after:
        message = server.read()
        if is_response(message) and message["id"] in wanted:
            assert "result" in message, message
            answered.append(wanted.pop(message["id"]))
    time.sleep(rng.uniform(0, 0.025))
    server.process.kill()
    server.process.wait(timeout=10)
    # Answers already in the pipe were answered too: count them.
    while True:
        try:
            message = server.read(timeout=2)
        except AssertionError:
            break
        if is_response(message) and message.get("id") in wanted and "result" in message:
            answered.append(wanted.pop(message["id"]))
    return answered


def test_kill_9_after_answers_loses_nothing_answered(servers: RawServers) -> None:
    print(f"kill -9 durability: {RUNS} runs, seed {SEED} (CONTEXTLS_KILL_SEED to repeat)")
    rng = random.Random(SEED)
    for run in range(RUNS):
        server = servers({"maxItems": 1000, "maxTokens": 1_000_000})
        server.warm_up()
        expected = answered_adds(server, rng, run)
        reader = servers({"maxItems": 1000, "maxTokens": 1_000_000})
        contents = [item["content"] for item in reader.result("contextls/list")["items"]]
        lost = [content for content in expected if content not in contents]
        assert not lost, f"seed {SEED}, run {run}: answered but lost: {lost}"
        reader.result("contextls/clear")  # the next run starts empty (this one is archived)
        assert reader.shutdown_and_exit() == 0
