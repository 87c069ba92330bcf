"""Parsing ``config set`` values, and the settings file older CLIs kept.

Window settings now live with the window, in the database (see
``contextls/configure``). Before, the CLI kept what ``contextls config set``
chose in a small JSON file and sent it at every start; the first command in
such a workspace moves them into the window and forgets them here:

    {"version": 1, "workspaces": {"file:///repo": {"maxTokens": 4000}}}

The file lives in ``platformdirs.user_config_dir("contextls")``, or in
``$CONTEXTLS_CONFIG_DIR`` when that is set (tests use it for isolation).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Final

import msgspec

from contextls.protocol import Settings

CONFIG_DIR_ENV: Final = "CONTEXTLS_CONFIG_DIR"
CONFIG_FILE_NAME: Final = "settings.json"
FILE_VERSION: Final = 1

WINDOW_SETTINGS: Final[tuple[str, ...]] = (
    "maxItems",
    "maxTokens",
    "encoding",
    "evictionPolicy",
    "maxFileBytes",
)
"""The settings ``contextls config`` manages (wire names)."""

_INTEGER_SETTINGS: Final = frozenset({"maxItems", "maxTokens", "maxFileBytes"})


class ConfigError(Exception):
    """The settings file cannot be read or a setting value is invalid."""


def config_dir() -> Path:
    """Where the settings file lives (``$CONTEXTLS_CONFIG_DIR`` wins)."""
    override = os.environ.get(CONFIG_DIR_ENV)
    if override:
        return Path(override)
    import platformdirs  # only when it is needed: ~3 ms of every command otherwise

    return Path(platformdirs.user_config_dir("contextls"))


def canonical_setting_name(name: str) -> str:
    """Map ``max-tokens``, ``max_tokens`` or ``MAXTOKENS`` to ``maxTokens``."""
    wanted = name.replace("-", "").replace("_", "").lower()
    for setting in WINDOW_SETTINGS:
        if setting.lower() == wanted:
            return setting
    raise ConfigError(f"unknown setting {name!r}; choose one of: {', '.join(WINDOW_SETTINGS)}")


def parse_setting(name: str, text: str) -> tuple[str, Any]:
    """Validate ``name = text`` against the protocol's Settings; return (wire name, value)."""
    setting = canonical_setting_name(name)
    value: Any = text
    if setting in _INTEGER_SETTINGS:
        try:
            value = int(text.replace(",", ""))
        except ValueError as error:
            raise ConfigError(f"{setting} takes a whole number, not {text!r}") from error
    try:
        msgspec.convert({setting: value}, Settings)
    except msgspec.ValidationError as error:
        raise ConfigError(f"invalid {setting} {text!r}: {error}") from error
    return setting, value


class ConfigStore:
    """Reads and writes the settings file; every write replaces it atomically."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path if path is not None else config_dir() / CONFIG_FILE_NAME

    def settings_for(self, workspace_uri: str) -> dict[str, Any]:
        """The settings chosen for one workspace (only the ones set), validated."""
        chosen = dict(self._workspaces().get(workspace_uri, {}))
        try:
            msgspec.convert(chosen, Settings)
        except msgspec.ValidationError as error:
            raise ConfigError(
                f"{self.path} holds an invalid setting ({error}); "
                "fix it with `contextls config set` or `contextls config unset`"
            ) from error
        return chosen

    def set(self, workspace_uri: str, name: str, value: Any) -> None:
        workspaces = self._workspaces()
        workspaces.setdefault(workspace_uri, {})[name] = value
        self._write(workspaces)

    def forget(self, workspace_uri: str) -> None:
        """Drop everything kept for this workspace (it moved into the window)."""
        workspaces = self._workspaces()
        if workspaces.pop(workspace_uri, None) is not None:
            self._write(workspaces)

    def unset(self, workspace_uri: str, name: str) -> bool:
        """Forget a setting; returns whether it was set."""
        workspaces = self._workspaces()
        chosen = workspaces.get(workspace_uri, {})
        if name not in chosen:
            return False
        del chosen[name]
        if not chosen:
            del workspaces[workspace_uri]
        self._write(workspaces)
        return True

    def _workspaces(self) -> dict[str, dict[str, Any]]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as error:
            raise ConfigError(f"cannot read {self.path}: {error}; fix or delete it") from error
        workspaces = data.get("workspaces") if isinstance(data, dict) else None
        if not isinstance(workspaces, dict):
            raise ConfigError(f"{self.path} has no 'workspaces' object; fix or delete it")
        # Drop what a newer or hand-edited file holds that this version does not manage.
        return {
            uri: {key: value for key, value in chosen.items() if key in WINDOW_SETTINGS}
            for uri, chosen in workspaces.items()
            if isinstance(chosen, dict)
        }

    def _write(self, workspaces: dict[str, dict[str, Any]]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        text = json.dumps({"version": FILE_VERSION, "workspaces": workspaces}, indent=2)
        import tempfile

        handle, temporary = tempfile.mkstemp(dir=self.path.parent, prefix=".settings-")
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as stream:
                stream.write(text + "\n")
            os.replace(temporary, self.path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
