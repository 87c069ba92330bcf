"""Parsing ``config set`` values, and the settings file of development builds.

Window settings live with the window, in the database (see
``contextls/configure``), so every client sees the same ones. Development
builds of the CLI kept what ``contextls config set`` chose in a small JSON
file and sent it at every start; the first command in such a workspace moves
them into the window and forgets them here, so nothing chosen is lost:

    {"version": 1, "workspaces": {"file:///repo": {"maxTokens": 4000}}}

The file lives in ``platformdirs.user_config_dir("contextls")``, or in
``$CONTEXTLS_CONFIG_DIR`` when that is set (tests use it for isolation).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Final, Literal, get_args, get_origin

import msgspec

from contextls.protocol import Settings, WindowSettingName, WindowSettings

CONFIG_DIR_ENV: Final = "CONTEXTLS_CONFIG_DIR"
CONFIG_FILE_NAME: Final = "settings.json"
FILE_VERSION: Final = 1

WINDOW_SETTINGS: Final[tuple[str, ...]] = get_args(WindowSettingName)
"""The settings ``contextls config`` manages (wire names): every setting of the window."""


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
    """Validate ``name = text`` against the protocol's Settings; return (wire name, value).

    Numbers may carry thousands separators (``16,000``); a setting with a few allowed
    values says which when given another.
    """
    setting = canonical_setting_name(name)
    choices = allowed_values(setting)
    if choices and text not in choices:
        raise ConfigError(f"{setting} takes one of: {', '.join(choices)} (not {text!r})")
    value = text.replace(",", "").replace("_", "") if not choices else text
    try:
        converted = msgspec.convert({setting: value}, WindowSettings, strict=False)
    except msgspec.ValidationError as error:
        raise ConfigError(f"invalid {setting} {text!r}: {_problem(error)}") from error
    return setting, msgspec.to_builtins(converted)[setting]


def allowed_values(setting: str) -> tuple[str, ...]:
    """The values a setting takes when they are a few names (``encoding``), else ()."""
    field = next(f for f in msgspec.structs.fields(WindowSettings) if f.encode_name == setting)
    kind = field.type
    return tuple(get_args(kind)) if get_origin(kind) is Literal else ()


def _problem(error: msgspec.ValidationError) -> str:
    """msgspec's words (``Expected `int` >= 1``) in a person's."""
    said = str(error).split(" - at ", 1)[0]
    kind = "a whole number" if "`int`" in said else "a number"
    if ", got " in said:
        return f"it takes {kind}"
    for mark, words in ((">=", "at least"), ("<=", "at most"), (">", "more than")):
        if f" {mark} " in said:
            bound = said.rsplit(" ", 1)[-1]
            return f"it takes {kind} {words} {bound}"
    return said


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
