"""``contextls daemon [status | start | stop | run]``: the user's shared daemon.

Commands start it on demand; these show it, start it ahead of time, stop it
(it commits and exits; the next command starts it again), or run it in the
foreground to watch its log.
"""

from __future__ import annotations

import socket
import time
from pathlib import Path

from contextls.common.places import log_path, resolve_storage, socket_path
from contextls.protocol import Requests, ServerInfo, ServerInfoParams
from contextls_client.daemon import connect, connect_or_start, stop_daemon
from contextls_client.human import count
from contextls_client.reports import DaemonReport
from contextls_client.session import Invocation, UsageError
from contextls_client.socket_client import DaemonClient

STOP_TIMEOUT = 10.0


def run_daemon(invocation: Invocation) -> int:
    action = invocation.args.daemon_action or "status"
    storage = invocation.place.storage
    if storage == ":memory:":
        raise UsageError("an in-memory database has no daemon: each command has its own server")
    path = socket_path(storage)
    console = invocation.console
    database, log = resolve_storage(storage), str(log_path(storage))

    def report(info: ServerInfo | None, stopped: bool = False) -> DaemonReport:
        return DaemonReport(
            running=info is not None and not stopped,
            storage=info.storage if info is not None else database,
            socket=str(path),
            log=log,
            pid=info.pid if info is not None else None,
            stopped=stopped,
            server=info,
        )

    if action == "start":
        info = server_info(path, connect_or_start(storage))
        console.json(report(info))
        console.out(f"the daemon runs (pid {info.pid}), serving {info.storage}")
        return 0
    connected = connect(path)
    if connected is None:
        console.json(report(None))
        console.out(
            f"no daemon is running for {database}",
            f"it would listen on {path}",
            f"and log to {log}",
        )
        return 1 if action == "status" else 0
    info = server_info(path, connected)
    if action == "stop":
        stop_daemon(path, info.pid, STOP_TIMEOUT)
        console.json(report(info, stopped=True))
        console.out(f"stopped the daemon (pid {info.pid})")
        return 0
    console.json(report(info))
    console.out(*_status_lines(info))
    return 0


def server_info(path: Path, connected: socket.socket | None = None) -> ServerInfo:
    client = DaemonClient(path, request_timeout=10.0, connected=connected)
    client.start()
    try:
        return client.call(Requests.SERVER_INFO, ServerInfoParams())
    finally:
        client.close()


def _status_lines(info: ServerInfo) -> list[str]:
    up = max(0, int(time.time() - info.started_at / 1000))
    idle = f"{info.idle_timeout:g}s without clients" if info.idle_timeout else "never"
    lines = [
        f"daemon      pid {info.pid}, contextls {info.version}, up {_duration(up)}",
        f"database    {info.storage}",
        f"socket      {info.socket}",
        f"log         {info.log or 'standard error'}",
        f"python      {info.executable}",
        f"clients     {count(info.sessions)} connected (this command is one)",
        f"exits after {idle}",
    ]
    if info.workspaces:
        lines.append("windows     " + "\n            ".join(info.workspaces))
    return lines


def _duration(seconds: int) -> str:
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}h{minutes:02d}m" if hours else f"{minutes}m{secs:02d}s"
