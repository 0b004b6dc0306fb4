"""The Arrow schemas of the four fleet tables (documented in ``schemas/fleet.schema.json``).

Every table is stored as hive-partitioned Parquet (``<table>/date=YYYY-MM-DD/<run_id>.parquet``,
zstd); the ``date`` column comes from the partition path.  Low-cardinality strings are
dictionary-encoded.
"""

from __future__ import annotations

import pyarrow as pa

#: bump when a column is added, removed or changes meaning
FLEET_SCHEMA_VERSION = "recompile-doctor/fleet/1"
TABLES = ("runs", "events", "compilations", "findings")

_DICT = pa.dictionary(pa.int32(), pa.string())
_TS = pa.timestamp("us", tz="UTC")

_WHERE = [
    pa.field("run_id", pa.string(), nullable=False),
    pa.field("host", _DICT),
    pa.field("rank", pa.int32()),
    pa.field("file", pa.string()),
    pa.field("line", pa.int64()),
    pa.field("byte_offset", pa.int64()),
    pa.field("seq", pa.int64()),
]

RUNS = pa.schema(
    [
        pa.field("run_id", pa.string(), nullable=False),
        pa.field("run_path", pa.string(), nullable=False),
        pa.field("host", _DICT),
        pa.field("rank", pa.int32()),
        pa.field("file", pa.string(), nullable=False),
        pa.field("format", _DICT),
        pa.field("status", _DICT, nullable=False),
        pa.field("error", pa.string()),
        pa.field("warning", pa.string()),
        pa.field("size", pa.int64()),
        pa.field("mtime_ns", pa.int64()),
        pa.field("lines", pa.int64()),
        pa.field("bytes", pa.int64()),
        pa.field("dumps", pa.string()),
        pa.field("parser_version", _DICT),
    ]
)

EVENTS = pa.schema(
    [
        *_WHERE,
        pa.field("ts", _TS),
        pa.field("t_s", pa.float64()),
        pa.field("framework", _DICT),
        pa.field("kind", _DICT),
        pa.field("store", _DICT),
        pa.field("function", pa.string()),
        pa.field("module", pa.string()),
        pa.field("compile_id", pa.string()),
        pa.field("frame_id", pa.int32()),
        pa.field("frame_compile_id", pa.int32()),
        pa.field("attempt", pa.int32()),
        pa.field("cache_key", pa.string()),
        pa.field("graph_hash", pa.string()),
        pa.field("duration_s", pa.float64()),
        pa.field("reason", pa.string()),
        pa.field("detail", pa.string()),
        pa.field("text", pa.string()),
        pa.field("parser_version", _DICT),
    ]
)

COMPILATIONS = pa.schema(
    [
        *_WHERE,
        pa.field("end_line", pa.int64()),
        pa.field("ts", _TS),
        pa.field("t_s", pa.float64()),
        pa.field("framework", _DICT),
        pa.field("function", pa.string()),
        pa.field("module", pa.string()),
        pa.field("compile_id", pa.string()),
        pa.field("frame_id", pa.int32()),
        pa.field("frame_compile_id", pa.int32()),
        pa.field("attempt", pa.int32()),
        pa.field("cache", _DICT),
        pa.field("cache_key", pa.string()),
        pa.field("cache_file", pa.string()),
        pa.field("graph_hash", pa.string()),
        pa.field("duration_s", pa.float64()),
        pa.field("warmup", pa.bool_()),
        pa.field("eager", pa.bool_()),
        pa.field("cause", _DICT),
        pa.field("parser_version", _DICT),
    ]
)

_CHANGE = pa.struct(
    [
        pa.field("function", pa.string()),
        pa.field("what", pa.string()),
        pa.field("old", pa.string()),
        pa.field("new", pa.string()),
        pa.field("call_site", pa.string()),
        pa.field("file", pa.string()),
        pa.field("line", pa.int64()),
    ]
)

FINDINGS = pa.schema(
    [
        *_WHERE,
        pa.field("rule", _DICT, nullable=False),
        pa.field("severity", _DICT, nullable=False),
        pa.field("title", pa.string()),
        pa.field("function", pa.string()),
        pa.field("module", pa.string()),
        pa.field("count", pa.int64()),
        pa.field("wasted_seconds", pa.float64()),
        pa.field("what", pa.string()),
        pa.field("expected", pa.string()),
        pa.field("actual", pa.string()),
        pa.field("reason", pa.string()),
        pa.field("advice", pa.string()),
        pa.field("changes", pa.list_(_CHANGE)),
        pa.field("parser_version", _DICT),
    ]
)

SCHEMAS: dict[str, pa.Schema] = {
    "runs": RUNS,
    "events": EVENTS,
    "compilations": COMPILATIONS,
    "findings": FINDINGS,
}
