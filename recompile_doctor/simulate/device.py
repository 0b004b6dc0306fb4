"""The IPU device as the Poplar backend configures it: connection type, target, attach.

* ``ALWAYS`` attaches when the IPU system is configured, before any compilation.
* ``ON_DEMAND`` attaches lazily, at the first execution of an engine (after compiling).
* ``NEVER`` never attaches; executing fails with the compilation-only error.
* ``PRE_COMPILE`` never attaches; executions return zeros; needs an executable cache path.

The connection type is not part of the device hash, so what ``PRE_COMPILE`` saved is found by a
later run on hardware with the same target (IPU version, remote buffers).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from recompile_doctor.errors import RecompileDoctorError

ConnectionType = Literal["ALWAYS", "ON_DEMAND", "PRE_COMPILE", "NEVER"]
CONNECTION_TYPES: tuple[ConnectionType, ...] = ("ALWAYS", "ON_DEMAND", "PRE_COMPILE", "NEVER")

COMPILATION_ONLY = (
    "Trying to run an executable on a device that was configured for compilation only."
)
PRECOMPILE_NO_CACHE = (
    "IPU devices have been configured for pre-compilation, however 'executable_cache_path' in "
    "'TF_POPLAR_FLAGS' has not been set. Please set the path to a directory where the compiled "
    "binaries should be stored using the 'TF_POPLAR_FLAGS' environment variable, for example "
    "'TF_POPLAR_FLAGS=--executable_cache_path=/path/to/storage'."
)

_TARGETS = {
    # tiles per IPU, bytes per tile, worker contexts, data path width
    "ipu1": (1216, 262144, 6, 64),
    "ipu2": (1472, 638976, 6, 64),
}


def connection_type(value: str) -> ConnectionType:
    """Validate a connection type name (as ``DeviceConnectionType`` spells it)."""
    v = value.strip().upper()
    for ct in CONNECTION_TYPES:
        if v == ct:
            return ct
    raise RecompileDoctorError(
        f"unknown connection type {value!r} (expected one of {', '.join(CONNECTION_TYPES)})"
    )


@dataclass(frozen=True, slots=True)
class Device:
    """``IPUConfig``: what the script asks for."""

    connection_type: ConnectionType = "ALWAYS"
    ipu_version: Literal["ipu1", "ipu2"] = "ipu2"
    remote_buffers: bool = True
    ordinal: int = 0
    num_ipus: int = 1

    def target_values(self, use_ipu_model: bool, model_tiles: int) -> list[int]:
        """The target fields ``ConfigurePoplarDevice`` mixes into the device hash."""
        tiles, bytes_per_tile, workers, width = _TARGETS[self.ipu_version]
        if use_ipu_model and model_tiles > 0:
            tiles = model_tiles
        return [
            tiles * self.num_ipus,
            width,
            bytes_per_tile,
            workers,
            tiles,
            self.num_ipus,
            self.num_ipus,
            1 if use_ipu_model else 0,
        ]

    @property
    def attaches(self) -> bool:
        return self.connection_type in ("ALWAYS", "ON_DEMAND")


class ExecutionFailed(Exception):
    """The simulated script's call raised (as TensorFlow would raise to Python)."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
