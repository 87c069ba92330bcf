"""A window's settings: reading a change of them, making it (or rehearsing it), seeding a
new window with a client's wish.

The settings belong to the window and are stored with it, so every client sees the same.
A change of model counts the window in the new tokens first (``precount``), which the LSP
handler runs in a worker thread.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from contextls.app import protocol_views as wire
from contextls.app.changes import Change
from contextls.app.settings import WINDOW_KEYS, choose_model, chosen_of, window_settings
from contextls.app.workspace_state import WorkspaceState
from contextls.core import adaptive
from contextls.core.costs import Costs
from contextls.core.errors import ContextError, InvalidParams, NeedsForce, thousands
from contextls.core.items import Item
from contextls.core.room import evicts_most
from contextls.core.tokens import Tokenizer
from contextls.protocol import ConfigureResult


class _EvictsMost(Exception):
    """The change would evict more than half of the window, and was not forced."""


class Configuring:
    """The window's settings: changing them, or rehearsing a change."""

    def __init__(self, state: WorkspaceState) -> None:
        self.state = state

    def configure(
        self,
        wanted: dict[str, Any],
        reset: Sequence[str] = (),
        dry_run: bool = False,
        force: bool = True,
    ) -> ConfigureResult:
        """Change this window's settings (camelCase keys), evicting at once.

        Refused with nothing changed (NO_ROOM) if the pinned items alone would
        break the new limits, and (NEEDS_FORCE) unless ``force`` if it would evict
        more than half of the window. The settings are saved with the window, so every
        client and process sees the same ones.
        """
        wanted, reset = choose_model(self.state.chosen, wanted, reset)
        chosen = {key: value for key, value in self.state.chosen.items() if key not in reset}
        chosen.update(wanted)
        new = window_settings(chosen)
        problem = adaptive.ceiling_problem(new)
        if problem is not None and chosen != self.state.chosen:
            key = "budgetCeiling" if "budgetCeiling" in wanted else "maxTokens"
            raise InvalidParams(f"$.settings.{key}", problem)
        chosen = chosen_of(new, [key for key in WINDOW_KEYS if key in chosen])
        before = self.state.settings
        changed = [key for key in WINDOW_KEYS if chosen_of(new, [key]) != chosen_of(before, [key])]
        evicted: list[Item] = []
        if chosen != self.state.chosen:
            tokenizer = self.state.tokenizers(new.encoding)
            if tokenizer.encoding != self.state.window.encoding:
                # Loaded, and the window counted in the new tokens, before the write lock
                # (the LSP handler has done it in a worker thread already: then cached).
                precount(tokenizer, list(self.state.window))
            window = self.state.window
            budget = adaptive.configured(
                before, new, window.limits.max_tokens, window.pinned_tokens
            )
            moved = budget != window.limits.max_tokens
            limits = adaptive.limits_of(new, budget)

            held_items, held_tokens = len(window), window.tokens

            def apply(change: Change) -> None:
                change.mutated = True
                change.settings = chosen
                change.new_settings = new
                if limits != window.limits:
                    change.record_evictions(window.reconfigure(limits))
                if tokenizer.encoding != window.encoding:
                    change.record_evictions(window.retokenize(tokenizer.count, tokenizer.encoding))
                    for item in window:
                        change.touch(item)
                if not moved:  # settings that moved the budget are this change's step
                    change.record_evictions(adaptive.step(window, new))
                evicted.extend(eviction.item for eviction in change.evictions)
                if not force and evicts_most(evicted, held_items, held_tokens):
                    raise _EvictsMost  # rolled back: the person is asked first

            def planned() -> ConfigureResult:
                return ConfigureResult(
                    settings=new,
                    chosen=list(chosen),  # type: ignore[arg-type]
                    changed=changed,  # type: ignore[arg-type]
                    evicted=[wire.context_item(item) for item in evicted],
                    status=self.state.status(),
                    dry_run=True,
                )

            try:
                if dry_run:  # the real change, rolled back: what it says is what it does
                    self.state.rehearse(apply)
                    return planned()
                self.state.change(apply)  # a refusal leaves the window and settings as they were
            except _EvictsMost:
                message = _needs_force_message(changed, evicted, held_items)
                raise NeedsForce(message, data=planned()) from None
            self.state.chosen, self.state.settings, self.state.tokenizer = chosen, new, tokenizer
            self.state.status_moved()
        return ConfigureResult(
            settings=self.state.settings,
            chosen=list(self.state.chosen),  # type: ignore[arg-type]
            changed=changed,  # type: ignore[arg-type]
            evicted=[wire.context_item(item) for item in evicted],
            status=self.state.status(),
            dry_run=dry_run,
        )

    def tokenizer_after(self, wanted: dict[str, Any], reset: Sequence[str]) -> Tokenizer | None:
        """The tokenizer the window would count in after ``configure(wanted, reset)``, when
        it is another than now; None otherwise (or when the change would be refused)."""
        try:
            wanted, reset = choose_model(self.state.chosen, wanted, reset)
        except ContextError:
            return None
        chosen = {key: value for key, value in self.state.chosen.items() if key not in reset}
        encoding = window_settings({**chosen, **wanted}).encoding
        return None if encoding == self.state.window.encoding else self.state.tokenizers(encoding)

    def seed(self, wish: dict[str, Any]) -> None:
        """A client's settings for a window that has none of its own yet."""
        if wish and not self.state.chosen:
            self.configure(wish)


def precount(tokenizer: Tokenizer, items: Sequence[Item]) -> dict[str, int]:
    """Load ``tokenizer`` and count ``items`` as the window will in it, so the change that
    switches to it loads and counts nothing: each item's body as counted -> its tokens (for
    ``Tokenizer.consulting``: a window of 7 MB is more than the tokenizer remembers, and
    was counted again on the event loop, every client waiting 13 s in Claude's tokens).
    Thread-safe: a change of model runs it in a worker thread while other requests are
    answered (else an empty window's next change would load the new model's tokenizer on
    the event loop, every client waiting: Claude's ~0.1 s)."""
    tokenizer.load()
    costs = Costs(tokenizer.count, tokenizer.encoding)
    counted: dict[str, int] = {}
    for item in items:
        body, tokens = costs.counted_body(replace(item, tokens=0))
        counted[body] = tokens
    return counted


def _needs_force_message(changed: Sequence[str], evicted: Sequence[Item], held: int) -> str:
    tokens = sum(item.tokens for item in evicted)
    return (
        f"setting {' and '.join(changed)} would evict {len(evicted)} of the window's {held} "
        f"items ({thousands(tokens)} tokens), more than half of it; nothing was changed "
        "(change it anyway with force)"
    )
