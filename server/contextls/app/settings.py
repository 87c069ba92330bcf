"""Reading settings leniently: a bad key falls back to its default, with a warning.

Settings arrive as ``initializationOptions`` (a flat object) or as the
``settings`` of ``workspace/didChangeConfiguration`` (flat, or nested under
``"contextls"``). One bad value must not throw the others away, so each key
is checked on its own.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, get_args, get_origin

import msgspec

from contextls.protocol import CondenseSettings, Settings, WindowSettings

_FIELDS = {f.encode_name: f for f in msgspec.structs.fields(Settings)}
WINDOW_KEYS: tuple[str, ...] = tuple(f.encode_name for f in msgspec.structs.fields(WindowSettings))
"""The settings a window keeps (camelCase), in protocol order."""
_WINDOW_ATTRS = {f.encode_name: f.name for f in msgspec.structs.fields(WindowSettings)}


@dataclass(slots=True)
class ParsedSettings:
    settings: Settings
    warnings: list[str] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)
    """Keys that are not contextls settings: logged, not shown (editors send extras)."""
    given: set[str] = field(default_factory=set)
    """Keys the client sent with a valid value (camelCase)."""

    def window_wish(self) -> dict[str, Any]:
        """The window settings the client asked for (camelCase keys)."""
        return {
            key: getattr(self.settings, _WINDOW_ATTRS[key])
            for key in WINDOW_KEYS
            if key in self.given
        }


def window_settings(chosen: dict[str, Any]) -> WindowSettings:
    """A window's settings from what is stored for it; a value that no longer checks is
    dropped (a database written by another version), the rest are defaults."""
    try:
        return msgspec.convert(chosen, WindowSettings)
    except msgspec.ValidationError:
        kept = {}
        for key, value in chosen.items():
            try:
                msgspec.convert({key: value}, WindowSettings)
            except msgspec.ValidationError:
                continue
            kept[key] = value
        return msgspec.convert(kept, WindowSettings)


def chosen_of(settings: WindowSettings, keys: Any) -> dict[str, Any]:
    """``{camelKey: value}`` of ``settings`` for ``keys``."""
    return {key: getattr(settings, _WINDOW_ATTRS[key]) for key in keys}


def unwrap(raw: Any) -> Any:
    """``{"contextls": {...}}`` -> ``{...}``; anything else unchanged."""
    if isinstance(raw, dict) and isinstance(raw.get("contextls"), dict):
        return raw["contextls"]
    return raw


def parse_settings(raw: Any, base: Settings | None = None) -> ParsedSettings:
    """Settings from a client object; keys not given keep ``base`` (or the defaults)."""
    base = base or Settings()
    raw = unwrap(raw)
    if raw is None:
        return ParsedSettings(base)
    if not isinstance(raw, dict):
        return ParsedSettings(
            base, [f"contextls settings must be an object, not {type(raw).__name__}; ignored"]
        )
    values: dict[str, Any] = msgspec.structs.asdict(base)
    warnings: list[str] = []
    ignored: list[str] = []
    given: set[str] = set()
    for key, value in raw.items():
        info = _FIELDS.get(key)
        if info is None:
            ignored.append(key)
            continue
        if value is None and key != "storage":
            values[info.name] = info.default if info.default is not msgspec.NODEFAULT else None
            continue
        try:
            checked = msgspec.convert({key: value}, _Single[key])
        except msgspec.ValidationError as error:
            default = _default_of(info)
            choices = get_args(info.type) if get_origin(info.type) is Literal else ()
            why = f"it takes one of: {', '.join(map(str, choices))}" if choices else str(error)
            warnings.append(
                f"contextls setting {key} = {value!r} is invalid ({why}); using {default!r}"
            )
            values[info.name] = default
            continue
        values[info.name] = getattr(checked, info.name)
        given.add(key)
    return ParsedSettings(Settings(**values), warnings, ignored, given)


def _default_of(info: msgspec.structs.FieldInfo) -> Any:
    if info.default_factory is not msgspec.NODEFAULT:
        return info.default_factory()
    return info.default


def _single_field_struct(info: msgspec.structs.FieldInfo) -> type[msgspec.Struct]:
    """A Struct with just this field, so one value is validated with its constraints."""
    return msgspec.defstruct(
        f"Setting_{info.name}",
        [(info.name, info.type)],
        rename="camel",
    )


_Single: dict[str, type[msgspec.Struct]] = {
    name: _single_field_struct(info) for name, info in _FIELDS.items()
}

__all__ = ["CondenseSettings", "ParsedSettings", "Settings", "parse_settings", "unwrap"]


def choose_model(
    chosen: dict[str, Any], wanted: dict[str, Any], reset: Sequence[str]
) -> tuple[dict[str, Any], list[str]]:
    """``wanted`` and ``reset`` with the model read: a model (any spelling) sets
    ``encoding`` to its tokenizer and is kept by its canonical name; ``encoding`` set alone
    clears the model (the window then shows the encoding's); resetting one resets both.
    ContextError (naming the field) for a name no model has, or a tokenizer not installed."""
    from contextls.app.tokenizers import available
    from contextls.core import models
    from contextls.core.errors import ContextError

    wanted, reset = dict(wanted), list(reset)
    if "model" in reset or "encoding" in reset:
        reset = [*reset, *(key for key in ("model", "encoding") if key not in reset)]
    name = wanted.get("model")
    if name:
        try:
            encoding = models.encoding_of(name)
        except ValueError as error:
            raise ContextError(f"model: {error}") from None
        wanted["model"], wanted["encoding"] = models.canonical(name), encoding
    elif "model" in wanted:  # "" (or null): the encoding's model
        del wanted["model"]
        reset.append("model")
    elif wanted.get("encoding") and "model" in chosen:
        reset.append("model")
    chosen_encoding = wanted.get("encoding")
    missing = available(chosen_encoding) if chosen_encoding else None
    if missing is not None:
        raise ContextError(f"model: {missing}")
    return wanted, reset
