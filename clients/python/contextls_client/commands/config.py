"""``contextls config [show | set KEY VALUE | unset KEY]``: the window settings.

The chosen settings are stored per workspace (see :mod:`config_store`) and
sent at every start. Each form starts the server with them and reads its
status back, so a setting that shrinks the window shows its evictions now,
not silently at the next command.
"""

from __future__ import annotations

from typing import Any

from contextls.protocol import Requests, StatusParams
from contextls_client.config_store import (
    WINDOW_SETTINGS,
    ConfigError,
    canonical_setting_name,
    default_settings,
    parse_setting,
)
from contextls_client.human import count, uri_to_path, window_line
from contextls_client.reports import ConfigReport
from contextls_client.session import Invocation, UsageError


async def run_config(invocation: Invocation) -> int:
    args = invocation.args
    console = invocation.console
    store = invocation.config
    workspace_uri = invocation.place.root_uri
    action = args.config_action or "show"
    try:
        if action == "set":
            name, value = parse_setting(args.key, args.value)
            store.set(workspace_uri, name, value)
            console.out(f"{name} = {_shown(value)} for {invocation.place.root}")
        elif action == "unset":
            name = canonical_setting_name(args.key)
            if store.unset(workspace_uri, name):
                console.out(f"{name} is back to its default, {_shown(default_settings()[name])}")
            else:
                console.out(f"{name} was not set; it stays {_shown(default_settings()[name])}")
    except ConfigError as error:
        if action == "show":
            raise
        raise UsageError(str(error)) from error

    chosen = store.settings_for(workspace_uri)
    effective = default_settings() | chosen
    async with invocation.session() as session:
        status = await session.client.call(
            Requests.STATUS, StatusParams(workspace=session.workspace)
        )
    report = ConfigReport(
        workspace=workspace_uri,
        config_file=str(store.path),
        storage=invocation.place.storage,
        chosen=chosen,
        effective=effective,
        status=status,
    )
    console.json(report)
    if action == "show":
        console.out(*_show_lines(report))
    else:
        console.out(window_line(status))
    return 0


def _show_lines(report: ConfigReport) -> list[str]:
    lines = [
        f"workspace       {uri_to_path(report.workspace)}",
        f"settings file   {report.config_file}",
        f"storage         {report.storage or 'the server default (user state dir)'}",
        "",
    ]
    for name in WINDOW_SETTINGS:
        source = "set" if name in report.chosen else "default"
        lines.append(f"{name:<15} {_shown(report.effective[name]):<12} {source}")
    lines += ["", window_line(report.status), "change one with: contextls config set KEY VALUE"]
    return lines


def _shown(value: Any) -> str:
    return count(value) if isinstance(value, int) and not isinstance(value, bool) else str(value)
