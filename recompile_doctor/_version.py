"""The tool's version, read by the CLI and written into every report."""

__version__ = "0.1.0"
