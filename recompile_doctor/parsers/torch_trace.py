"""torch.compile structured traces (``TORCH_TRACE=dir``, ``dedicated_log_torch_trace_*.log``)
-> typed events.

One JSON envelope per line after a glog prefix, with exactly one *kind* key plus
``frame_id``/``frame_compile_id``/``attempt`` (the compile id) and ``rank``; a payload follows
as TAB-indented lines when the envelope has ``has_payload``.  ``str`` envelopes intern file
names.  A corrupt envelope is malformed and skipped.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, MutableMapping, MutableSet
from dataclasses import dataclass, replace
from typing import Any, ClassVar, Final

from recompile_doctor.events import (
    CacheLookup,
    CompileFinished,
    CompileKey,
    CompileStarted,
    FrameworkNote,
    RecompileReason,
    Span,
    TypedEvent,
)
from recompile_doctor.microseconds import round6
from recompile_doctor.model import Event, ValueChange
from recompile_doctor.parsers._format import RECOGNIZED, Decoded, SkipMode
from recompile_doctor.parsers._names import file_basename
from recompile_doctor.parsers._pylog import glog_stamp
from recompile_doctor.parsers._torch_guards import (
    GuardFailure,
    explain,
    in_line_order,
    missing_new,
    split_entry,
    tree_guard_value,
    user_frame,
    with_new_values,
)
from recompile_doctor.parsers._tuples import new_event, new_span, recognized

# detection's half of the format (the registry entry and sniff are this module's names too)
from recompile_doctor.parsers.torch_trace_detect import (  # noqa: F401
    _ENV_RE,
    ANCHORS,
    FRAMEWORK,
    TORCH_TRACE,
    sniff,
)

#: parts of a file name that mark a frame as the framework's, not the user's
_LIBRARY_PARTS: Final = ("/site-packages/", "/dist-packages/", "/torch/", "/lib/python")
_CACHE_ARTIFACTS: Final = {
    "fx_graph_cache_hit": ("fx-graph", "hit"),
    "fx_graph_cache_miss": ("fx-graph", "miss"),
    "fx_graph_cache_bypass": ("fx-graph", "disabled"),
    "aotautograd_cache_hit": ("aot-autograd", "hit"),
    "aotautograd_cache_miss": ("aot-autograd", "miss"),
    "aotautograd_cache_bypass": ("aot-autograd", "disabled"),
}


def _branch(obj: dict[str, Any]) -> str:
    """Which kind of envelope ``obj`` is, as :meth:`TorchTraceDecoder._events` reads it
    (its kind key, in the order they are asked; "" for one that gives no event)."""
    for kind in ("str", "dynamo_start", "compilation_metrics", "dynamo_cpp_guards_str"):
        if kind in obj:
            return kind
    art = obj.get("artifact")
    if isinstance(art, dict):
        name = art.get("name")
        if name in _CACHE_ARTIFACTS:
            return "cache"
        if name in ("recompile_reasons", "dynamo_graph_break_reason"):
            return str(name)
    return ""


#: the kinds of envelope whose payload is read (the others' payload lines change nothing)
_READS_PAYLOAD: Final = frozenset(
    {"dynamo_cpp_guards_str", "cache", "recompile_reasons", "dynamo_graph_break_reason"}
)


@dataclass(slots=True, init=False, repr=False, eq=False)  # working state: never shown
class _Envelope:
    """A ``TORCH_TRACE`` record: its envelope and the payload lines after it."""

    lineno: int
    raw: str
    t: float | None
    obj: dict[str, Any]
    branch: str  # (:func:`_branch`)
    payload: list[str]
    lines: list[int]

    def __init__(
        self, lineno: int = 0, raw: str = "", t: float | None = None,
        obj: dict[str, Any] | None = None, branch: str = "",
        payload: list[str] | None = None, lines: list[int] | None = None,
    ) -> None:  # fmt: skip
        # (written out, as torch's _Line is: compiled, and made without arguments by a copy)
        self.lineno = lineno
        self.raw = raw
        self.t = t
        self.obj = {} if obj is None else obj
        self.branch = branch
        self.payload = [] if payload is None else payload
        self.lines = [] if lines is None else lines


class TorchTraceDecoder:
    """Decoder of one structured trace file."""

    #: only looked up, never iterated: the order their entries came in makes no difference
    #: (a worker that read a later part of the log learns them in another order)
    UNORDERED_STATE: ClassVar[frozenset[str]] = frozenset(
        {"_strings", "_known", "_names", "_frame_names", "_started"}
    )
    #: looked up by compile id, and iterated only at the end, in the order of their lines
    #: (see :mod:`._checkpoint`)
    RESIDUAL_STATE: ClassVar[frozenset[str]] = frozenset({"_held"})
    #: the parent's share of the log with two processes (see :mod:`._parallel`): its lines
    #: make few events, so the parent has little to do after its part (the instructions of
    #: each process's reading, counted on 24 MB of the bench log at 0.5: parent 0.73 G,
    #: worker 0.62; with the parent's copies made in C, by ``bench_instructions.py
    #: --processes 2``, parent and worker and the longer plus the work after: 813/678 M and
    #: 1,158 at 0.45, 783/708 and 1,128 at 0.42, 687/716 and 1,061 at 0.4, 701/735 and 1,080
    #: at 0.38, 756/763 and 1,108 at 0.36: where the split falls moves the lines read twice;
    #: so counted again over three sizes of the bench log, 16, 24 and 32 MB, the longer
    #: reading plus the work after: 755, 990 and 1,320 at 0.36; 773, 982 and 1,304 at 0.38;
    #: 710, 1,019 and 1,282 at 0.4; 720, 964 and 1,300 at 0.42, within 1.4 % of the best of
    #: each size, where 0.4 was 5.7 % from it on one; but those are read by one process,
    #: and the even split moves with the size: at 48 MB, parent / worker and the longer
    #: plus the events' writer, 1,236 / 1,356 and 1,873 M at 0.42, 1,310 / 1,339 and 1,857
    #: at 0.43, 1,356 / 1,292 and 1,873 at 0.45, 1,288 / 1,268 and 1,805 at 0.46, 1,415 /
    #: 1,227 and 1,932 at 0.48; at 64 MB, 2,500 at 0.42 and 2,365 at 0.46)
    PARENT_SHARE: ClassVar[float] = 0.46
    #: the lines that continue an envelope: its payload (see ``skips_continued``)
    CONTINUED_BY: ClassVar[bytes] = b"\t"

    def __init__(self, path: str = "") -> None:
        # (``path`` has a default: a worker's decoder is copied, see _checkpoint.unrecorded)
        self.path = path
        self.continuing = False
        #: the open envelope's payload is not read (a chromium event, an AOT graph): its
        #: lines are recognized and change nothing, and the fast path counts them undecoded
        self.skips_continued = False
        self._t0: float | None = None
        self._open: _Envelope | None = None
        self._strings: MutableMapping[int, str] = {}
        # (rank, compile id) -> co_name
        self._names: MutableMapping[tuple[str | None, str], str] = {}
        # (rank, frame) -> the co_name of the frame's first compilation that named one
        self._frame_names: MutableMapping[tuple[str | None, str], str] = {}
        self._started: MutableSet[tuple[str | None, str]] = set()
        self._known: MutableMapping[tuple[str | None, str], dict[str, dict[str, str]]] = {}
        # the recompile reason of a compilation under way, completed by its dynamo_start
        # (call site) and its guards (new values), emitted when the compilation ends
        self._held: MutableMapping[tuple[str | None, str], RecompileReason] = {}

    wants_skipped: SkipMode = "none"

    def skipped(self, lineno: int, raw: str) -> None:
        return None

    def finish(self) -> Iterator[TypedEvent]:
        env, self._open = self._open, None
        out = self._events(env) if env is not None else []
        out.extend(in_line_order(self._held.items()))
        self._held.clear()
        return iter(out)

    def decode(self, lineno: int, raw: str) -> Decoded:
        text = raw.rstrip("\r\n")
        if text.startswith("\t") and self._open is not None:
            if not self.skips_continued:
                self._open.payload.append(text[1:])
                self._open.lines.append(lineno)
            return RECOGNIZED
        out: list[TypedEvent] = []
        env, self._open = self._open, None
        if env is not None:
            out.extend(self._events(env))
        self.continuing = self.skips_continued = False
        m = _ENV_RE.match(text)
        if m is None:
            if '] {"' in text:
                return Decoded("malformed", tuple(out), "trace envelope without a glog prefix")
            return Decoded("unrecognized", tuple(out))
        try:
            obj = json.loads(m["json"])
        except (ValueError, RecursionError):
            return Decoded("malformed", tuple(out), "trace envelope is not valid JSON")
        if not isinstance(obj, dict):
            return Decoded("malformed", tuple(out), "trace envelope is not a JSON object")
        ts = glog_stamp(m["md"], m["ts"])
        if ts is not None and self._t0 is None:
            self._t0 = ts
        t = round6(ts - self._t0) if ts is not None and self._t0 is not None else None
        new = _Envelope(lineno, text, t, obj, _branch(obj), lines=[lineno])
        if "has_payload" in obj:
            self._open = new
            self.continuing = True
            self.skips_continued = new.branch not in _READS_PAYLOAD
        else:
            out.extend(self._events(new))
        return recognized(out)

    # -- envelopes -----------------------------------------------------------------------
    def _events(self, env: _Envelope) -> list[TypedEvent]:
        obj = env.obj
        rank = str(obj["rank"]) if isinstance(obj.get("rank"), int) else None
        cid: str | None = None
        if isinstance(obj.get("frame_id"), int) and isinstance(obj.get("frame_compile_id"), int):
            cid = f"{obj['frame_id']}/{obj['frame_compile_id']}"
        span = new_span(self.path, env.lineno, env.raw, env.t, rank)
        branch = env.branch
        if branch == "str":
            val = obj["str"]
            if isinstance(val, list) and len(val) == 2 and isinstance(val[1], int):
                self._strings[val[1]] = str(val[0])
            return []
        if branch == "dynamo_start":
            return self._dynamo_start(obj["dynamo_start"], span, rank, cid)
        if branch == "compilation_metrics":
            return self._metrics(obj["compilation_metrics"], span, rank, cid)
        if branch == "dynamo_cpp_guards_str":
            self._guards(env.payload, rank, cid)
            return []
        if branch == "cache":
            store, outcome = _CACHE_ARTIFACTS[obj["artifact"]["name"]]
            entry: str | None = None
            try:
                pl = json.loads("\n".join(env.payload))
                entry = pl.get("key") if isinstance(pl, dict) else None
            except ValueError:
                pass
            rec = self._record(f"cache-{outcome}", env, detail={"store": store, "compile_id": cid})
            return [
                CacheLookup(span, rec, store, outcome, self._key(rank, cid), entry)  # type: ignore[arg-type]
            ]
        if branch == "recompile_reasons":
            return self._reasons(env, span, rank, cid)
        if branch == "dynamo_graph_break_reason":
            return self._graph_break(env, span, rank, cid)
        return []

    def _record(self, kind: str, env: _Envelope, detail: dict[str, object] | None = None) -> Event:
        """The record of the message; ``detail``, its fields in the order the report writes
        them, a new dict of the caller's (see ``JaxDecoder._record`` in ``jax``)."""
        d = {} if detail is None else detail
        return new_event(kind, self.path, env.lineno, env.t, env.raw, detail=d)

    def _key(self, rank: str | None, cid: str | None) -> CompileKey:
        fn = self._names.get((rank, cid)) if cid else None
        if fn is None and cid is not None:
            fn = self._frame_names.get((rank, cid.split("/")[0]))
        return CompileKey(FRAMEWORK, fn, compile_id=cid)

    def _dynamo_start(
        self, ds: Any, span: Span, rank: str | None, cid: str | None
    ) -> list[TypedEvent]:
        stack = ds.get("stack") if isinstance(ds, dict) else None
        fn: str | None = None
        if isinstance(stack, list) and stack and isinstance(stack[-1], dict):
            fn = str(stack[-1].get("name")) if stack[-1].get("name") is not None else None
        held = self._held.get((rank, cid)) if cid is not None else None
        site = self._caller(stack) if isinstance(stack, list) else None
        if held is not None and site is not None and cid is not None:
            self._held[(rank, cid)] = _sited(held, site)
        if cid is None or (rank, cid) in self._started:
            return []
        self._started.add((rank, cid))
        if fn is not None:
            self._names[(rank, cid)] = fn
            self._frame_names.setdefault((rank, cid.split("/")[0]), fn)
        key = CompileKey(FRAMEWORK, fn, compile_id=cid)
        rec = new_event(
            "compile-begin", self.path, span.line, span.t, span.text, detail={"compile_id": cid}
        )
        return [CompileStarted(span, rec, key)]

    def _metrics(self, cm: Any, span: Span, rank: str | None, cid: str | None) -> list[TypedEvent]:
        if not isinstance(cm, dict):
            return []
        cid = cm.get("compile_id") if isinstance(cm.get("compile_id"), str) else cid
        if cid is not None and "_" in cid:
            cid = cid.split("_", 1)[0]
        key = self._key(rank, cid)
        if isinstance(cm.get("co_name"), str):
            key = CompileKey(FRAMEWORK, cm["co_name"], compile_id=cid)
        dur: float | None = None
        if isinstance(cm.get("entire_frame_compile_time_s"), (int, float)):
            dur = float(cm["entire_frame_compile_time_s"])
        elif isinstance(cm.get("duration_us"), (int, float)):
            dur = float(cm["duration_us"]) / 1e6
        rec = new_event(
            "compile-end", self.path, span.line, span.t, span.text, detail={"compile_id": cid}
        )
        out: list[TypedEvent] = []
        held = self._held.pop((rank, cid), None) if cid is not None else None
        if held is not None:
            out.append(held)
        fail_type, fail_reason = cm.get("fail_type"), cm.get("fail_reason")
        limit = isinstance(fail_reason, str) and "recompile limit exceeded" in fail_reason.lower()
        if (rank, cid) in self._started or not limit:
            out.append(CompileFinished(span, rec, key, dur))
        if isinstance(fail_type, str):
            reason = f"{fail_type}: {fail_reason}" if fail_reason else fail_type
            rule = "recompile-limit" if limit else "compile-failed"
            frec = new_event(
                rule, self.path, span.line, span.t, span.text, detail={"fail_type": fail_type}
            )
            out.append(RecompileReason(span, frec, key, rule, reason, lines=(span.line,)))
            if limit:
                last = cm.get("recompile_reason")
                out.append(
                    FrameworkNote(
                        span,
                        frec,
                        "recompile-limit",
                        key,
                        {"limit": None, "last_reason": last},
                        keep=False,
                    )
                )
        return out

    def _reasons(
        self, env: _Envelope, span: Span, rank: str | None, cid: str | None
    ) -> list[TypedEvent]:
        text = "\n".join(env.payload)
        reasons: list[str]
        try:
            val = json.loads(text)
            reasons = [str(v) for v in val] if isinstance(val, list) else [str(val)]
        except ValueError:
            reasons = [text]
        failures: list[GuardFailure] = [f for r in reasons if (f := split_entry(r)) is not None]
        key = self._key(rank, cid)
        fn = key.function or "?"
        frame = cid.split("/")[0] if cid else "?"
        known = self._known.setdefault((rank, frame), {})
        rule, changes, _chosen = explain(fn, failures, known)
        call_site = next((s for f in failures if (s := user_frame(f.text)) is not None), None)
        rec = self._record("recompile-reason", env, detail={"compile_id": cid, "rule": rule})
        reason = RecompileReason(
            new_span(
                self.path,
                env.lineno,
                "\n".join([env.raw, *("\t" + p for p in env.payload)]),
                env.t,
                rank,
            ),
            rec,
            key,
            rule,
            "\n".join(reasons),
            tuple(replace(c, source=self.path, line=env.lineno) for c in changes),
            call_site,
            tuple(env.lines),
        )
        reason = _sited(reason, call_site) if call_site is not None else reason
        if cid is None:
            return [reason]
        out: list[TypedEvent] = []
        earlier = self._held.pop((rank, cid), None)
        if earlier is not None:
            out.append(earlier)
        self._held[(rank, cid)] = reason
        return out

    def _caller(self, stack: list[Any]) -> str | None:
        """The user's line that called into the compiled frame: in ``dynamo_start``'s stack
        (outermost first, the compiled frame last), the innermost user frame above the
        framework's frames that lead to the compiled one.  None when no framework frame
        separates them (torch cut the stack short, or a resume function)."""
        frames = [f for f in stack[:-1] if isinstance(f, dict)]
        i = len(frames) - 1
        crossed = False
        while i >= 0 and self._library(frames[i]):
            i, crossed = i - 1, True
        if i < 0 or not crossed:
            return None
        f = frames[i]
        name = self._strings.get(f["filename"]) if isinstance(f.get("filename"), int) else None
        if name is None or not isinstance(f.get("line"), int):
            return None
        return f"{file_basename(name)}:{f['line']}"

    def _library(self, frame: dict[str, Any]) -> bool:
        idx = frame.get("filename")
        name = self._strings.get(idx) if isinstance(idx, int) else None
        if name is None:
            return False
        name = name.replace("\\", "/")
        return any(p in name for p in _LIBRARY_PARTS)

    def _guards(self, payload: list[str], rank: str | None, cid: str | None) -> None:
        """The new compilation's guards pin the new values of what its reason says changed."""
        if cid is None or (held := self._held.get((rank, cid))) is None:
            return
        if not missing_new(held.changes):
            return
        values: dict[str, str] = {}
        for line in payload:
            if "_MATCH: " in line and (gv := tree_guard_value(line)) is not None:
                values.setdefault(gv[0], gv[1])
        self._held[(rank, cid)] = replace(
            held, changes=with_new_values(held.rule, held.changes, values)
        )

    def _graph_break(
        self, env: _Envelope, span: Span, rank: str | None, cid: str | None
    ) -> list[TypedEvent]:
        reason: str | None = None
        frame: str | None = None
        after = False
        for ln in env.payload:
            if ln.startswith("Graph break in user code at "):
                loc = ln.rsplit("/", 1)[-1].split(" at ")[-1]
                frame = loc
            elif ln.startswith("Graph Break Reason: "):
                reason, after = ln[len("Graph Break Reason: ") :], True
            elif after and ln.strip():
                if not ln.startswith(" "):
                    reason = ln.strip()
                after = False
        detail = {"reason": reason, "user_frame": frame}
        rec = self._record("graph-break", env, detail=dict(detail))
        return [FrameworkNote(span, rec, "graph-break", self._key(rank, cid), detail)]


def _sited(ev: RecompileReason, site: str) -> RecompileReason:
    changes = tuple(_site_change(c, site) for c in ev.changes)
    return replace(ev, call_site=site, changes=changes)


def _site_change(c: ValueChange, site: str) -> ValueChange:
    return replace(c, call_site=site)
