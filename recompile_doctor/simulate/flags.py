"""The environment of the real stack: ``TF_POPLAR_FLAGS``, ``XLA_FLAGS`` and the logging
variables, parsed the way Graphcore's TensorFlow and Poplar parse them.

``TF_POPLAR_FLAGS`` and ``XLA_FLAGS`` go through XLA's ``ParseFlagsFromEnvAndDieIfUnknown``:
``--flag=value``, ``--flag="quoted value"`` or a bare ``--bool_flag``, whitespace separated; an
unknown flag is fatal with ``Unknown flag in <ENVVAR>: <flags>`` (``Unknown flags`` for several).
The simulator turns that into a :class:`RecompileDoctorError`.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping
from dataclasses import dataclass, field

from recompile_doctor.errors import RecompileDoctorError

#: every flag ``tensorflow/compiler/plugin/poplar/driver/tools/flags.cc`` defines (SDK 3.x)
POPLAR_FLAGS: frozenset[str] = frozenset(
    {
        "use_synthetic_data",
        "synthetic_data_categories",
        "synthetic_data_initializer",
        "use_ipu_model",
        "ipu_model_tiles",
        "while_loop_brute_force_max_trip_count",
        "max_compilation_threads",
        "max_infeed_threads",
        "save_vertex_graph",
        "executable_cache_path",
        "dump_schedule_as_dot",
        "tensor_map_file_path",
        "fallback_scheduler",
        "allow_nans",
        "log_cycle_count",
        "sync_replica_start",
        "enable_hlo_verifier",
        "disable_poplar_version_check",
        "on_demand_device_poll_time",
        "on_demand_device_timeout",
        "use_on_demand",
        "show_progress_bar",
        "null_data_feed",
        "help",
    }
)

#: the TF_POPLAR_FLAGS that ``PoplarXlaFlags::hlo_hash`` mixes into the device hash
HASHED_POPLAR_FLAGS: tuple[str, ...] = (
    "use_synthetic_data",
    "synthetic_data_categories",
    "synthetic_data_initializer",
    "use_ipu_model",
    "while_loop_brute_force_max_trip_count",
    "fallback_scheduler",
    "allow_nans",
    "log_cycle_count",
    "sync_replica_start",
    "ipu_model_tiles",
    "disable_poplar_version_check",
)

_WS = " \t\r\n"
_POPLAR_LEVELS = {"TRACE": 0, "DEBUG": 1, "INFO": 2, "WARN": 3, "ERR": 4, "OFF": 5}


def parse_env_flags(envvar: str, value: str) -> list[tuple[str, str | None]]:
    """Split a flags string as XLA's ``ParseArgvFromString`` does: ``[(name, value|None)]``."""
    out: list[tuple[str, str | None]] = []
    s = value
    i = _skip(s, 0, _WS)
    if i < len(s) and s[i] != "-":
        raise RecompileDoctorError(
            f'Could not open file "{value.strip()}" to read flags for environment variable '
            f'"{envvar}".  (We assumed "{value.strip()}" was a file name because it did not '
            'start with a "--".)',
            path=envvar,
        )
    while i < len(s) and s[i] == "-":
        j = i
        while j < len(s) and (s[j] in "-_" or s[j].isalnum()):
            j += 1
        name = s[i:j].lstrip("-")
        if j < len(s) and s[j] == "=":
            j += 1
            if j < len(s) and s[j] in "'\"":
                quote = s[j]
                j += 1
                buf: list[str] = []
                while j < len(s) and s[j] != quote:
                    if quote == '"' and s[j] == "\\" and j + 1 < len(s):
                        j += 1
                    buf.append(s[j])
                    j += 1
                j = min(j + 1, len(s))
                out.append((name, "".join(buf)))
            else:
                k = j
                while k < len(s) and s[k] not in _WS:
                    k += 1
                out.append((name, s[j:k]))
                j = k
        else:
            k = j
            while k < len(s) and s[k] not in _WS:
                k += 1
            out.append((name + s[j:k], None))
            j = k
        i = _skip(s, j, _WS)
    return out


def _skip(s: str, i: int, chars: str) -> int:
    while i < len(s) and s[i] in chars:
        i += 1
    return i


def _unknown(envvar: str, names: list[str]) -> RecompileDoctorError:
    plural = "s" if len(names) > 1 else ""
    hint = ""
    if envvar == "XLA_FLAGS":
        hint = " Perhaps you meant to specify these on the TF_XLA_FLAGS envvar?"
    flags = " ".join(f"--{n}" for n in names)
    return RecompileDoctorError(f"Unknown flag{plural} in {envvar}: {flags}{hint}", path=envvar)


def _bool(envvar: str, name: str, value: str | None) -> bool:
    if value is None or value.lower() in ("true", "1"):
        return True
    if value.lower() in ("false", "0"):
        return False
    raise RecompileDoctorError(f"Illegal value for flag --{name}: {value!r}", path=envvar)


def _int(envvar: str, name: str, value: str | None) -> int:
    try:
        return int(value or "")
    except ValueError:
        raise RecompileDoctorError(
            f"Illegal value for flag --{name}: {value!r}", path=envvar
        ) from None


@dataclass(frozen=True, slots=True)
class PoplarFlags:
    """The parsed ``TF_POPLAR_FLAGS``: what the simulator honours, plus the raw value."""

    raw: str = ""
    executable_cache_path: str = ""
    use_ipu_model: bool = False
    ipu_model_tiles: int = -1
    show_progress_bar: str = "auto"
    max_compilation_threads: int = -1
    use_on_demand: bool = False
    hashed: tuple[tuple[str, str], ...] = ()


def parse_poplar_flags(value: str) -> PoplarFlags:
    env = "TF_POPLAR_FLAGS"
    pairs = parse_env_flags(env, value)
    unknown = [n for n, _ in pairs if n not in POPLAR_FLAGS]
    if unknown:
        raise _unknown(env, unknown)
    got = dict(pairs)
    bar = (got.get("show_progress_bar") or "auto") if "show_progress_bar" in got else "auto"
    if "show_progress_bar" in got and got["show_progress_bar"] is None:
        bar = "true"
    if bar not in ("true", "false", "auto"):
        raise RecompileDoctorError(
            f"Invalid value for --show_progress_bar: {bar!r} (expected true, false or auto)",
            path=env,
        )
    hashed = tuple((n, got[n] or "true") for n in HASHED_POPLAR_FLAGS if n in got)
    return PoplarFlags(
        raw=value,
        executable_cache_path=got.get("executable_cache_path") or "",
        use_ipu_model=_bool(env, "use_ipu_model", got["use_ipu_model"])
        if "use_ipu_model" in got
        else False,
        ipu_model_tiles=_int(env, "ipu_model_tiles", got["ipu_model_tiles"])
        if "ipu_model_tiles" in got
        else -1,
        show_progress_bar=bar,
        max_compilation_threads=_int(env, "max_compilation_threads", got["max_compilation_threads"])
        if "max_compilation_threads" in got
        else -1,
        use_on_demand=_bool(env, "use_on_demand", got["use_on_demand"])
        if "use_on_demand" in got
        else False,
        hashed=hashed,
    )


@dataclass(frozen=True, slots=True)
class XlaFlags:
    """The parsed ``XLA_FLAGS`` (only the dump options matter to the simulator)."""

    dump_to: str = ""
    dump_hlo_pass_re: str = ""
    dump_large_constants: bool = False


def parse_xla_flags(value: str) -> XlaFlags:
    env = "XLA_FLAGS"
    pairs = parse_env_flags(env, value)
    unknown = [n for n, _ in pairs if not n.startswith("xla_")]
    if unknown:
        raise _unknown(env, unknown)
    got = dict(pairs)
    return XlaFlags(
        dump_to=got.get("xla_dump_to") or "",
        dump_hlo_pass_re=got.get("xla_dump_hlo_pass_re") or "",
        dump_large_constants=_bool(env, "xla_dump_large_constants", got["xla_dump_large_constants"])
        if "xla_dump_large_constants" in got
        else False,
    )


@dataclass(frozen=True, slots=True)
class LogSettings:
    """Which lines the real stack prints, from the TensorFlow and Poplar logging variables."""

    min_log_level: int = 0
    max_vlog: int = 0
    poplar_vlog: int = 0
    vmodule: tuple[tuple[str, int], ...] = ()
    poplar_engine_level: int = _POPLAR_LEVELS["OFF"]
    poplar_dest: str = "stderr"
    log_thread_id: bool = False

    def vlog_on(self, path: str, level: int) -> bool:
        """``VLOG_IS_ON(level)`` for a source file ``path`` (TF's rules plus Graphcore's)."""
        if self.min_log_level > 0:
            return False
        if level <= 0:
            return True
        base = path.rsplit("/", 1)[-1].rsplit(".", 1)[0]
        for pattern, lvl in self.vmodule:
            if fnmatch.fnmatchcase(base, pattern):
                if level <= lvl:
                    return True
                break
        else:
            if level <= self.max_vlog:
                return True
        return level <= self.poplar_vlog and path.startswith("tensorflow/compiler/plugin/poplar")

    def tf_on(self, severity: str) -> bool:
        return "IWEF".index(severity) >= self.min_log_level

    def poplar_on(self, letter: str) -> bool:
        rank = {"T": 0, "D": 1, "I": 2, "W": 3, "E": 4}[letter]
        return rank >= self.poplar_engine_level


def parse_log_settings(env: Mapping[str, str], sdk3: bool) -> LogSettings:
    def num(name: str) -> int:
        v = env.get(name, "").strip()
        try:
            return int(v) if v else 0
        except ValueError:
            return 0

    vmodule: list[tuple[str, int]] = []
    for item in env.get("TF_CPP_VMODULE", "").split(","):
        if "=" in item:
            name, _, lvl = item.partition("=")
            try:
                vmodule.append((name.strip(), int(lvl)))
            except ValueError:
                continue
    # SDK >= 2.5 (TF 2.5/2.6 logging.cc) reads TF_CPP_MAX_VLOG_LEVEL; older ones TF_CPP_MIN_VLOG_LEVEL.
    max_vlog = num("TF_CPP_MAX_VLOG_LEVEL") if sdk3 else num("TF_CPP_MIN_VLOG_LEVEL")
    level = _poplar_level(env.get("POPLAR_LOG_LEVEL", ""), _POPLAR_LEVELS["OFF"])
    level = _poplar_level(env.get("POPLAR_ENGINE_LOG_LEVEL", ""), level)
    return LogSettings(
        min_log_level=num("TF_CPP_MIN_LOG_LEVEL"),
        max_vlog=max_vlog,
        poplar_vlog=num("TF_POPLAR_VLOG_LEVEL"),
        vmodule=tuple(vmodule),
        poplar_engine_level=level,
        poplar_dest=env.get("POPLAR_LOG_DEST", "") or "stderr",
        log_thread_id=bool(env.get("TF_CPP_LOG_THREAD_ID")) and sdk3,
    )


def _poplar_level(value: str, default: int) -> int:
    v = value.strip().upper()
    if not v:
        return default
    if v not in _POPLAR_LEVELS:
        raise RecompileDoctorError(
            f"invalid Poplar log level {value!r} (expected one of OFF, ERR, WARN, INFO, DEBUG, TRACE)",
            path="POPLAR_LOG_LEVEL",
        )
    return _POPLAR_LEVELS[v]


@dataclass(frozen=True, slots=True)
class StackEnv:
    """Everything the simulated process reads from its environment."""

    poplar: PoplarFlags = field(default_factory=PoplarFlags)
    xla: XlaFlags = field(default_factory=XlaFlags)
    log: LogSettings = field(default_factory=LogSettings)
    engine_options: str | None = None
    target_options: str | None = None
    popdist_cache_path: str = ""

    @property
    def cache_path(self) -> str:
        return self.poplar.executable_cache_path or self.popdist_cache_path


def read_env(env: Mapping[str, str], *, sdk3: bool = True) -> StackEnv:
    """Parse the variables of ``env`` the real stack reads (errors name the variable)."""
    return StackEnv(
        poplar=parse_poplar_flags(env.get("TF_POPLAR_FLAGS", "")),
        xla=parse_xla_flags(env.get("XLA_FLAGS", "")),
        log=parse_log_settings(env, sdk3),
        engine_options=env.get("POPLAR_ENGINE_OPTIONS"),
        target_options=env.get("POPLAR_TARGET_OPTIONS"),
        popdist_cache_path=env.get("POPDIST_EXECUTABLE_CACHE_PATH", ""),
    )
