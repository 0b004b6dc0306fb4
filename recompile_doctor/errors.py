"""The one error type the tool raises for bad input or bad usage.

Every error names the input it is about and, where known, the line and column,
so the CLI can print ``recompile-doctor: error: <path>[:<line>[:<col>]]: <what>``
and exit with code 2.
"""

from __future__ import annotations


class RecompileDoctorError(Exception):
    """Bad input or usage: one line for the user, exit code 2."""

    exit_code: int = 2

    def __init__(
        self,
        message: str,
        path: str | None = None,
        line: int | None = None,
        col: int | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.path = path
        self.line = line
        self.col = col

    def location(self) -> str:
        """``path[:line[:col]]``, or an empty string when no path is known."""
        if self.path is None:
            return ""
        loc = self.path
        if self.line is not None:
            loc += f":{self.line}"
            if self.col is not None:
                loc += f":{self.col}"
        return loc

    def __str__(self) -> str:
        loc = self.location()
        text = " ".join(self.message.split())  # always one line
        return f"{loc}: {text}" if loc else text
