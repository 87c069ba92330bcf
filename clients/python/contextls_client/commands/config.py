"""``contextls config [show | set KEY VALUE | unset KEY]``: the window settings.

The settings belong to the workspace window and are stored with it, so the
CLI, every editor and the daemon see the same limits. The server decides
every change: one the pinned items cannot live with (a ``maxTokens`` below
what they take) is refused with the reason, and nothing changes. A change
that shrinks the window evicts at once, and its answer reports the evictions; one
that would evict more than half of the window is made only with ``--force``
(``--dry-run`` lists what would go).
"""

from __future__ import annotations

from typing import Any

import msgspec

from contextls.protocol import (
    ConfigureParams,
    ConfigureResult,
    ErrorCode,
    Requests,
    WindowSettingsChange,
)
from contextls_client.config_store import (
    WINDOW_SETTINGS,
    ConfigError,
    canonical_setting_name,
    parse_setting,
)
from contextls_client.human import count, item_line, plural, tokens, uri_to_path, window_line
from contextls_client.messages import ContextlsError
from contextls_client.reports import ConfigReport, ErrorDocument, ErrorReport
from contextls_client.session import Invocation, UsageError


def run_config(invocation: Invocation) -> int:
    args = invocation.args
    console = invocation.console
    action = args.config_action or "show"
    params = ConfigureParams()
    try:
        if action == "set":
            name, value = parse_setting(args.key, args.value)
            params = ConfigureParams(settings=_change(name, value))
        elif action == "unset":
            name = canonical_setting_name(args.key)
            params = ConfigureParams(reset=[name])  # type: ignore[list-item]
    except ConfigError as error:
        raise UsageError(str(error)) from error
    if action != "show":
        params.dry_run, params.force = args.dry_run, args.force

    with invocation.session() as session:
        params.workspace = session.workspace
        try:
            result = session.client.call(Requests.CONFIGURE, params)
        except ContextlsError as error:
            if error.code != ErrorCode.NEEDS_FORCE or error.data is None:
                raise
            planned = msgspec.convert(error.data, ConfigureResult)
            if params.dry_run:  # the plan is the answer asked for: it says force is needed
                return _print_plan(invocation, planned, needs_force=True)
            console.json(
                ErrorDocument(
                    error=ErrorReport(code=error.code, message=error.message, data=error.data)
                )
            )
            console.note(_needs_force_words(planned))
            return 1
        if result.dry_run:
            return _print_plan(invocation, result, needs_force=False)
        session.evicted(result.evicted)
    effective: dict[str, Any] = {
        key: value for key, value in _builtins(result.settings).items() if key in WINDOW_SETTINGS
    }
    report = ConfigReport(
        workspace=invocation.place.root_uri,
        storage=invocation.place.storage,
        chosen={key: effective[key] for key in result.chosen},
        effective=effective,
        changed=list(result.changed),
        status=result.status,
    )
    console.json(report)
    if action == "show":
        console.out(*_show_lines(report))
        return 0
    name = canonical_setting_name(args.key)
    value = _shown(effective[name])
    if action == "unset":
        console.out(f"{name} is back to its default, {value}")
    elif name in report.changed:
        console.out(f"{name} = {value} for {invocation.place.root}")
    else:
        console.out(f"{name} was already {value}")
    console.out(window_line(report.status))
    return 0


def _print_plan(invocation: Invocation, plan: ConfigureResult, needs_force: bool) -> int:
    console = invocation.console
    console.json(plan)
    said = " and ".join(plan.changed) or "nothing"
    console.out(f"would change {said}")
    if plan.evicted:
        console.out(
            f"would evict {plural(len(plan.evicted), 'item')}:",
            *(f"  {item_line(item)}" for item in plan.evicted),
        )
    else:
        console.out("would evict nothing")
    if needs_force:
        console.out("that is more than half of the window: the change needs --force")
    return 0


def _needs_force_words(plan: ConfigureResult) -> str:
    gone = plan.evicted
    return (
        f"contextls: setting {' and '.join(plan.changed)} would evict {len(gone)} of the "
        f"window's {plural(plan.status.item_count, 'item')} "
        f"({tokens(sum(item.tokens for item in gone))}), more than half of it; nothing was "
        "changed. `--dry-run` lists them, `--force` changes it anyway"
    )


def _change(name: str, value: Any) -> WindowSettingsChange:
    return msgspec.convert({name: value}, WindowSettingsChange)


def _builtins(settings: Any) -> dict[str, Any]:
    built = msgspec.to_builtins(settings)
    assert isinstance(built, dict)
    return built


def _show_lines(report: ConfigReport) -> list[str]:
    lines = [
        f"workspace          {uri_to_path(report.workspace)}",
        f"storage            {report.storage or 'the server default (user state dir)'}",
        "",
    ]
    width = max(len(name) for name in WINDOW_SETTINGS)
    for name in WINDOW_SETTINGS:
        source = "set" if name in report.chosen else "default"
        lines.append(f"{name:<{width}}  {_shown(report.effective[name]):<12} {source}")
    lines += [
        "",
        window_line(report.status),
        "the settings are kept with the window: every editor and command sees the same",
        "change one with: contextls config set KEY VALUE",
    ]
    return lines


def _shown(value: Any) -> str:
    return count(value) if isinstance(value, int) and not isinstance(value, bool) else str(value)
