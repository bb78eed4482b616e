"""The errors every side raises for bad input; the command line turns each into one clear line."""

from __future__ import annotations


class ConfigError(ValueError):
    """A configuration value that cannot be used; the message names the key."""


class DatasetError(Exception):
    """Bad or missing dataset input; the message names the file, the record and the field."""

    def __init__(self, path: str, message: str, record: str | None = None, field_name: str | None = None):
        where = str(path)
        if record is not None:
            where += f", record {record}"
        if field_name is not None:
            where += f", field '{field_name}'"
        super().__init__(f"{where}: {message}")
        self.path = str(path)
        self.record = record
        self.field_name = field_name
