"""What the storage layer raises."""


class StorageError(Exception):
    """The database cannot be used (unwritable directory, locked for too long, disk full)."""


class NewerSchema(StorageError):
    """The database was written by a newer contextls; it is left alone."""


class DevelopmentFile(StorageError):
    """The database was written by a development build this one cannot read."""
