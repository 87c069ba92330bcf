"""What the storage layer raises."""


class StorageError(Exception):
    """The database cannot be used (unwritable directory, locked for too long, disk full)."""


class NewerSchema(StorageError):
    """The database was written by a newer contextls; it is left alone."""


class DevelopmentFile(StorageError):
    """The database was written by a development build this one cannot read."""


class Busy(Exception):
    """Another transaction holds the lock a change needs: try it again later."""


def describe(error: BaseException) -> str:
    """An SQLite error in words a person can act on, told apart by its error code."""
    name = getattr(error, "sqlite_errorname", None)
    if name == "SQLITE_FULL":
        return "the disk holding the context database is full"
    if name is not None and name.startswith("SQLITE_IOERR"):
        return f"the disk could not write the context database ({error})"
    return str(error)


def _condition(error: BaseException) -> str:
    """SQLite's name for what went wrong (``SQLITE_BUSY_SNAPSHOT``), else empty."""
    return getattr(error, "sqlite_errorname", None) or ""


def is_busy(error: BaseException) -> bool:
    """Another connection holds the lock this one needs (busy, or locked in this process)."""
    return _condition(error).startswith(("SQLITE_BUSY", "SQLITE_LOCKED"))


def is_read_only(error: BaseException) -> bool:
    """The database (or its folder) cannot be written, or cannot be opened for writing."""
    return _condition(error).startswith(("SQLITE_READONLY", "SQLITE_CANTOPEN", "SQLITE_PERM"))
