"""One handler per subcommand; each returns the process exit code.

A command imports only its own module: loading every command's dependencies
(directory expansion, progress bars, hashing) would cost each one ~15 ms.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from contextls_client.session import Invocation

Handler = Callable[["Invocation"], int]

_WHERE: Final[dict[str, tuple[str, str]]] = {
    "add": ("add", "run_add"),
    "add-text": ("text", "run_add_text"),
    "ls": ("window", "run_ls"),
    "show": ("window", "run_show"),
    "status": ("window", "run_status"),
    "rm": ("window", "run_rm"),
    "pin": ("window", "run_pin"),
    "unpin": ("window", "run_unpin"),
    "clear": ("window", "run_clear"),
    "search": ("archive", "run_search"),
    "restore": ("archive", "run_restore"),
    "refresh": ("window", "run_refresh"),
    "expand": ("views", "run_expand"),
    "outline": ("views", "run_outline"),
    "tokens": ("text", "run_tokens"),
    "config": ("config", "run_config"),
    "daemon": ("daemon", "run_daemon"),
    "forget": ("lifecycle", "run_forget"),
    "export": ("lifecycle", "run_export"),
    "import": ("lifecycle", "run_import"),
}


def handler(command: str) -> Handler:
    module, function = _WHERE[command]
    found: Handler = getattr(importlib.import_module(f"{__name__}.{module}"), function)
    return found


COMMANDS: Final = tuple(_WHERE)
