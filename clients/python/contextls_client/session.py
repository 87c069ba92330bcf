"""One CLI invocation's connection: the spawned server, the workspace, the evictions seen."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, Final

import msgspec

from contextls.common.environment import flag
from contextls.common.places import resolve_storage
from contextls.protocol import (
    STORAGE_ENV,
    ConfigureParams,
    ContextItem,
    Requests,
    WindowSettingsChange,
)
from contextls_client.config_store import ConfigError, ConfigStore
from contextls_client.console import Console
from contextls_client.daemon import (
    DaemonError,
    connect_or_start,
    daemon_socket,
    stop_daemon,
    wanted,
)
from contextls_client.human import eviction_lines
from contextls_client.messages import (
    CLIENT_NAME,
    ContextlsError,
    NotUtf8,
    printable,
    shown_messages,
)
from contextls_client.project import project_root
from contextls_client.socket_client import DaemonClient

IN_MEMORY: Final = ":memory:"
ALLOW_ANY_FOLDER_ENV: Final = "CONTEXTLS_ALLOW_ANY_FOLDER"


class UsageError(Exception):
    """The command line asks for something impossible; exit code 2."""


def utf8(text: str) -> bool:
    """Whether ``text`` (a path or an argument, decoded with ``surrogateescape``) is UTF-8."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


class UnreadableInput(Exception):
    """A file or stdin the command was given cannot be read as text; exit code 1."""


class Place(msgspec.Struct, frozen=True):
    """Which workspace and which database one invocation works on."""

    root: Path
    storage: str | None
    """A database path, ``:memory:``, or None for the server's default."""

    @property
    def root_uri(self) -> str:
        return self.root.as_uri()

    @classmethod
    def from_options(cls, workspace: str | None, storage: str | None) -> Place:
        """``--workspace`` (else the project around the current directory, see
        ``project_root``), ``--storage`` (else $CONTEXTLS_STORAGE)."""
        if workspace:
            root = Path(workspace).expanduser().resolve()
        else:
            root = Path(project_root(str(Path.cwd().resolve())))
        if not root.is_dir():
            raise UsageError(f"workspace {root} is not a directory")
        if not utf8(str(root)):
            raise NotUtf8(
                f"the workspace folder {printable(str(root))} is not UTF-8 text, which the "
                "protocol cannot carry; rename the folder whose name is not"
            )
        chosen = storage if storage is not None else os.environ.get(STORAGE_ENV) or None
        if chosen is not None and chosen != IN_MEMORY:
            chosen = str(Path(chosen).expanduser().resolve())
        return cls(root, chosen)

    def initialization_options(self) -> dict[str, Any]:
        """The storage path, if one was chosen (window settings live with the window), and
        ``$CONTEXTLS_ALLOW_ANY_FOLDER=1`` for a system or another user's folder."""
        options: dict[str, Any] = {"storage": self.storage} if self.storage is not None else {}
        if flag(ALLOW_ANY_FOLDER_ENV):
            options["allowAnyFolder"] = True
        return options


class WorkspaceSession(msgspec.Struct):
    """A started, initialised client bound to one workspace."""

    client: DaemonClient
    place: Place
    console: Console
    reported: set[str] = msgspec.field(default_factory=set)
    deferred: list[ContextItem] = msgspec.field(default_factory=list)
    warned: set[str] = msgspec.field(default_factory=set)

    @property
    def workspace(self) -> str:
        """The value every request's ``workspace`` field carries."""
        return self.place.root_uri

    def evicted(self, items: Iterable[ContextItem], defer: bool = False) -> None:
        """Report items a request pushed out of the window (once each).

        ``defer`` holds them until the end of the command, while a progress bar
        owns stderr.
        """
        fresh = [item for item in items if item.id not in self.reported]
        self.reported.update(item.id for item in fresh)
        if defer:
            self.deferred.extend(fresh)
        else:
            self.console.note(*eviction_lines(fresh))

    def flush_evictions(self, messages: bool = True) -> None:
        """Print deferred evictions and those only announced by ``contextls/didEvict``.

        Called after ``shutdown``: its answer comes after every notification the
        server sent before it, so nothing is missed.
        """
        pending, self.deferred = self.deferred, []
        for notice in self.client.evictions():
            pending.extend(item for item in notice.items if item.id not in self.reported)
            self.reported.update(item.id for item in notice.items)
        self.console.note(*eviction_lines(pending))
        # What the server told the person (window/showMessage): a file of the window that
        # now holds a secret, a database made private, a folder it would not take.
        if messages:
            self.warn(
                text.removeprefix("contextls: ")
                for text in shown_messages(self.client.notifications)
            )

    def warn(self, warnings: Iterable[str]) -> None:
        """Say each warning once on stderr (a result and a showMessage may both carry it)."""
        for warning in warnings:
            if warning not in self.warned:
                self.warned.add(warning)
                self.console.note(f"contextls: warning: {warning}")


@contextlib.contextmanager
def open_session(
    place: Place,
    console: Console,
    config: ConfigStore,
    client: DaemonClient | None = None,
) -> Iterator[WorkspaceSession]:
    """Reach the daemon (or spawn a server), initialise for ``place``, and end the session."""
    if client is None:
        client = current_daemon(place, console) if wanted(place.storage) else DaemonClient()
    session = WorkspaceSession(client, place, console)
    try:
        with session.client:
            session.client.initialize(place.root, place.initialization_options())
            _move_settings_into_the_window(session, config)
            yield session
    except BaseException:
        # The refusal says what matters; the server's own words for the editors
        # (window/showMessage) would say it a second time.
        session.flush_evictions(messages=False)
        raise
    session.flush_evictions()


def current_daemon(
    place: Place, console: Console, client_name: str = CLIENT_NAME, session: bool = True
) -> DaemonClient:
    """A session on the daemon of this database, which runs this contextls's code.

    A daemon started before contextls was installed again (upgraded, or the same
    version rebuilt) would go on serving the old code until it idles out: it is
    asked for its build, and one that differs is stopped (it commits first) and
    started anew, once. A daemon that serves another database than the one this
    client resolved is never used.
    """
    from contextls import __version__
    from contextls.common.build import build_id

    path = daemon_socket(place.storage)
    client = DaemonClient(path, connected=connect_or_start(place.storage), client_name=client_name)
    client.start()
    root, options = (place.root, place.initialization_options()) if session else (None, None)
    info = client.hello(root, options)
    database = resolve_storage(place.storage)
    if info.storage != database:
        client.close()
        raise DaemonError(
            f"the daemon on {path} serves {info.storage}, not {database}; "
            f"stop it (kill {info.pid}) and try again"
        )
    build = build_id()
    if info.build == build:
        return client
    client.close()
    if info.version != __version__:
        why = f"runs contextls {info.version}, this is {__version__}"
    else:
        why = "runs the code contextls had before it was installed again"
    console.note(f"contextls: the daemon (pid {info.pid}) {why}; restarting it")
    stop_daemon(path, info.pid)
    fresh = DaemonClient(path, connected=connect_or_start(place.storage), client_name=client_name)
    fresh.start()
    fresh.hello(root, options)
    return fresh


def _move_settings_into_the_window(session: WorkspaceSession, config: ConfigStore) -> None:
    """Settings a development build of the CLI kept in its own file move into the window, once.

    Such a build's ``config set`` wrote them to a file and the CLI sent them at
    every start; left there they would be forgotten.
    """
    try:
        chosen = config.settings_for(session.place.root_uri)
    except ConfigError as error:
        session.console.note(f"contextls: {error}")
        return
    if not chosen:
        return
    try:
        result = session.client.call(
            Requests.CONFIGURE,
            ConfigureParams(
                workspace=session.workspace,
                settings=msgspec.convert(chosen, WindowSettingsChange),
                force=True,  # the person's own settings, chosen before: kept as they were
            ),
        )
    except ContextlsError as error:
        session.console.note(
            f"contextls: the settings in {config.path} could not move into the window "
            f"({error}); they are left there"
        )
        return
    session.evicted(result.evicted)
    config.forget(session.place.root_uri)
    session.console.note(
        f"contextls: moved this workspace's settings from {config.path} into the window "
        f"({', '.join(f'{k}={v}' for k, v in chosen.items())}); every editor now sees them"
    )


class Invocation(msgspec.Struct):
    """Everything a command handler needs: parsed arguments and where to work."""

    args: Any
    place: Place
    console: Console
    config: ConfigStore

    def session(self) -> contextlib.AbstractContextManager[WorkspaceSession]:
        """Spawn and initialise a server for this invocation."""
        return open_session(self.place, self.console, self.config)

    def display_path(self, path: Path) -> str:
        """A path relative to the current directory when it is below it."""
        try:
            return str(path.relative_to(Path.cwd()))
        except ValueError:
            return str(path)
