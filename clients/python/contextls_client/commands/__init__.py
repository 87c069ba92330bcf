"""One handler per subcommand; each returns the process exit code."""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any, Final

from contextls_client.commands.add import run_add
from contextls_client.commands.archive import run_restore, run_search
from contextls_client.commands.config import run_config
from contextls_client.commands.text import run_add_text, run_tokens
from contextls_client.commands.window import (
    run_clear,
    run_ls,
    run_pin,
    run_rm,
    run_show,
    run_status,
    run_unpin,
)
from contextls_client.session import Invocation

Handler = Callable[[Invocation], Coroutine[Any, Any, int]]

HANDLERS: Final[dict[str, Handler]] = {
    "add": run_add,
    "add-text": run_add_text,
    "ls": run_ls,
    "show": run_show,
    "status": run_status,
    "rm": run_rm,
    "pin": run_pin,
    "unpin": run_unpin,
    "clear": run_clear,
    "search": run_search,
    "restore": run_restore,
    "tokens": run_tokens,
    "config": run_config,
}
