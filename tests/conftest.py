"""Every test process gets its own runtime and state directories for daemons.

Tests that run the CLI start daemons on demand, as a user's commands do.
They must not reach (or leave behind) the daemons of the person running the
tests, so the whole session uses a private runtime directory (short: a Unix
socket's path must fit in 107 bytes), and whatever daemon is still running
there at the end is stopped.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from contextls.app.facts_cache import CACHE_ENV as FACTS_CACHE_ENV
from contextls.common.places import RUNTIME_DIR_ENV, STATE_DIR_ENV

# The suite is repeatable: property tests draw the same examples on every run and machine,
# so a failure is the code's, never the dice's (and no shrink runs for minutes in CI).
# HYPOTHESIS_PROFILE=explore draws new ones, to look for what the fixed ones miss.
settings.register_profile(
    "suite",
    derandomize=True,
    database=None,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("explore", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "suite"))


@pytest.fixture(scope="session", autouse=True)
def private_daemon_dirs() -> Iterator[Path]:
    runtime = Path(tempfile.mkdtemp(prefix="cls-t-"))
    saved = {
        name: os.environ.get(name) for name in (RUNTIME_DIR_ENV, STATE_DIR_ENV, FACTS_CACHE_ENV)
    }
    os.environ[RUNTIME_DIR_ENV] = str(runtime)
    os.environ[STATE_DIR_ENV] = str(runtime / "logs")
    os.environ[FACTS_CACHE_ENV] = str(runtime / "facts.sqlite3")  # never the user's cache
    try:
        yield runtime
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        _stop_daemons(runtime)
        shutil.rmtree(runtime, ignore_errors=True)


def _stop_daemons(runtime: Path) -> None:
    from contextls.protocol import Requests, ServerInfoParams
    from contextls_client.socket_client import DaemonClient

    for sock in runtime.glob("daemon-*.sock"):
        with contextlib.suppress(Exception):
            client = DaemonClient(sock, request_timeout=5)
            client.start()
            try:
                pid = client.call(Requests.SERVER_INFO, ServerInfoParams()).pid
            finally:
                client.close()
            os.kill(pid, signal.SIGTERM)
