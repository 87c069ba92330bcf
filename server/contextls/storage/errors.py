"""What the storage layer raises."""


class StorageError(Exception):
    """The database cannot be used (unwritable directory, locked for too long, disk full)."""


class NewerSchema(StorageError):
    """The database was written by a newer contextls; it is left alone."""


class DevelopmentFile(StorageError):
    """The database was written by a development build this one cannot read."""


def describe(error: BaseException) -> str:
    """An SQLite error in words a person can act on, told apart by its error code."""
    name = getattr(error, "sqlite_errorname", None)
    if name == "SQLITE_FULL":
        return "the disk holding the context database is full"
    if name is not None and name.startswith("SQLITE_IOERR"):
        return f"the disk could not write the context database ({error})"
    return str(error)
