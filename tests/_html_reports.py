"""Reports built by hand from model types, for the HTML renderer's tests and goldens.

They mirror what the analysis produces for a Poplar / TensorFlow-on-IPU run: the log lines
are verbatim in the format of the real stack (see the reference notes on Poplar log formats),
the HLO text is in the form XLA dumps it.  Every builder is deterministic.
"""

from __future__ import annotations

from recompile_doctor.model import (
    Compilation,
    DiffEvidence,
    Event,
    Evidence,
    Finding,
    InputInfo,
    ParseStats,
    Report,
    Summary,
    sort_findings,
)
from recompile_doctor.rules import rule

TF = "tensorflow/compiler/plugin/poplar/driver"
TRAIN = "a_inference_train_step_412__XlaMustCompile_true_config_proto_3175580994766145631_executor_type_11160318154034397263_.1357"
EVAL = "a_inference_eval_step_655__XlaMustCompile_true_config_proto_3175580994766145631_executor_type_11160318154034397263_.890"
PREDICT = "cluster_7"


def _ts(t: float) -> str:
    base = 14 * 3600 + 42 * 60 + 34.517107
    s = base + t
    h, rem = divmod(s, 3600)
    m, sec = divmod(rem, 60)
    return f"2023-04-26 {int(h):02d}:{int(m):02d}:{sec:09.6f}"


def _begin(t: float, module: str, h: str) -> str:
    return f"{_ts(t)}: I {TF}/poplar_compiler.cc:1487] Begin XLA compilation: {module}  (Hash: {h}) for ordinal  0"


def _load(t: float, ms: int) -> str:
    return f"{_ts(t)}: I {TF}/poplar_executor.cc:2310] Ending phase: Loading executable (duration {ms} ms; diff RSS: 0.586426 MB)"


def _finding(
    rule_id: str,
    modules: tuple[str, ...],
    count: int,
    wasted: float,
    evidence: tuple[Evidence, ...],
    diff: tuple[DiffEvidence, ...] = (),
    detail: str | None = None,
) -> Finding:
    r = rule(rule_id)
    return Finding(
        rule=r.id,
        severity=r.severity,
        consideration=r.consideration,
        title=r.title,
        detail=detail or r.why,
        advice=r.advice,
        modules=modules,
        count=count,
        wasted_seconds=wasted,
        evidence=evidence,
        diff=diff,
    )


def _summary(comps: tuple[Compilation, ...], events: tuple[Event, ...], wasted: float) -> Summary:
    loads = [e for e in events if e.kind == "load"]
    return Summary(
        compilations=len(comps),
        cache_hits=sum(c.cache == "hit" for c in comps),
        cache_misses=sum(c.cache == "miss" for c in comps),
        loads=len(loads),
        distinct_graphs=len({c.hash for c in comps}),
        recompilations_after_warmup=sum(not c.warmup for c in comps),
        compile_seconds=sum(c.duration_s or 0.0 for c in comps if c.compiled),
        load_seconds=sum(float(e.detail.get("duration_s", 0.0)) for e in loads),
        wasted_seconds=wasted,
    )


def demo_report(source: str = "run.log") -> Report:
    """GIVEN-style demo: a training loop with a partial last batch, a changing learning
    rate, and train/eval executables switched on the device every epoch."""
    lines: list[tuple[int, str]] = []
    comps: list[Compilation] = []
    events: list[Event] = []
    plan = [
        # t, module, hash, duration, cache, warmup, cause
        (1.2, TRAIN, "0x5f1d0c2e9a7b3c41", 41.0, "miss", True, None),
        (44.0, EVAL, "0x1a2b3c4d5e6f7081", 18.5, "miss", True, None),
        (70.3, TRAIN, "0x77e0aa91b2c3d4e5", 39.2, "miss", False, "batch-size-changed"),
        (118.9, TRAIN, "0x2c9b8e7d6f5a4b3c", 40.4, "miss", False, "constant-changed"),
        (170.0, EVAL, "0x1a2b3c4d5e6f7081", 0.8, "hit", False, None),
        (175.5, PREDICT, "0x9a3c", 7.1, "miss", True, None),
    ]
    n = 1
    lines.append(
        (
            n,
            f"{_ts(0.4)}: I {TF}/poplar_executor.cc:1619] TensorFlow device /device:IPU:0 attached to 1 IPU with Poplar device ID: 0",
        )
    )
    events.append(Event("attach", source, n, 0.4, lines[-1][1], detail={"ordinal": 0}))
    for i, (t, mod, h, dur, cache, warm, cause) in enumerate(plan):
        n += 3
        text = _begin(t, mod, h)
        lines.append((n, text))
        comps.append(
            Compilation(
                id=i,
                module=mod,
                hash=h,
                source=source,
                line=n,
                t=t,
                duration_s=dur,
                cache=cache,  # type: ignore[arg-type]
                warmup=warm,
                cause=cause,
                end_line=n + 2,
                text=text,
            )
        )
        n += 3
        lt = t + dur + 0.2
        ltext = _load(lt, 612 if not warm else 540)
        lines.append((n, ltext))
        events.append(
            Event(
                "load",
                source,
                n,
                lt,
                ltext,
                module=mod,
                hash=h,
                detail={"duration_s": 0.612 if not warm else 0.54},
            )
        )
    for k, t in enumerate((190.0, 230.0, 270.0)):
        n += 2
        mod = TRAIN if k % 2 == 0 else EVAL
        ltext = _load(t, 607)
        lines.append((n, ltext))
        events.append(Event("load", source, n, t, ltext, module=mod, detail={"duration_s": 0.607}))
    by_line = dict(lines)

    def ev(line: int, ctx: int = 2) -> Evidence:
        before = tuple(
            by_line.get(k, f"{_ts(0)}: I {TF}/poplar_compiler.cc:900] ...")
            for k in range(line - ctx, line)
            if k >= 1
        )
        after = tuple(
            by_line.get(k, f"{_ts(0)}: I {TF}/poplar_compiler.cc:901] ...")
            for k in range(line + 1, line + 1 + ctx)
        )
        return Evidence(source, line, by_line[line], before, after)

    batch_diff = (
        DiffEvidence(
            kind="shape",
            module=TRAIN,
            a_instruction="%arg0.1",
            a_text='%arg0.1 = f32[32,784]{1,0} parameter(0), parameter_replication={false}, metadata={op_name="XLA_Args"}',
            b_instruction="%arg0.1",
            b_text='%arg0.1 = f32[16,784]{1,0} parameter(0), parameter_replication={false}, metadata={op_name="XLA_Args"}',
            op_name="XLA_Args",
            detail="leading dimension 32 -> 16",
            a_path="dumps/module_0001.a_inference_train_step_412.before_optimizations.txt",
            b_path="dumps/module_0005.a_inference_train_step_412.before_optimizations.txt",
        ),
        DiffEvidence(
            kind="shape",
            module=TRAIN,
            a_instruction="%dot.7",
            a_text="%dot.7 = f32[32,10]{1,0} dot(f32[32,784]{1,0} %arg0.1, f32[784,10]{1,0} %readvariableop.3), lhs_contracting_dims={1}, rhs_contracting_dims={0}",
            b_instruction="%dot.7",
            b_text="%dot.7 = f32[16,10]{1,0} dot(f32[16,784]{1,0} %arg0.1, f32[784,10]{1,0} %readvariableop.3), lhs_contracting_dims={1}, rhs_contracting_dims={0}",
            op_name="sequential/dense/MatMul",
            detail="leading dimension 32 -> 16",
            a_path="dumps/module_0001.a_inference_train_step_412.before_optimizations.txt",
            b_path="dumps/module_0005.a_inference_train_step_412.before_optimizations.txt",
        ),
    )
    big_a = "{" + ", ".join(f"{(k * 0.013) % 1:.3f}" for k in range(300)) + "}"
    big_b = "{" + ", ".join(f"{(k * 0.017) % 1:.3f}" for k in range(300)) + "}"
    lr_diff = (
        DiffEvidence(
            kind="constant",
            module=TRAIN,
            a_instruction="%constant.12",
            a_text='%constant.12 = f32[] constant(0.001), metadata={op_name="SGD/learning_rate"}',
            b_instruction="%constant.12",
            b_text='%constant.12 = f32[] constant(0.0005), metadata={op_name="SGD/learning_rate"}',
            op_name="SGD/learning_rate",
            detail="value 0.001 -> 0.0005",
        ),
        DiffEvidence(
            kind="constant",
            module=TRAIN,
            a_instruction="%constant.40",
            a_text=f"%constant.40 = f32[300]{{0}} constant({big_a})",
            b_instruction="%constant.40",
            b_text=f"%constant.40 = f32[300]{{0}} constant({big_b})",
            op_name="sequential/dense_1/bias",
            detail="300 values differ",
        ),
    )
    switch_lines = [ln for ln, text in lines if "Loading executable" in text]
    findings = [
        _finding(
            "batch-size-changed",
            (TRAIN,),
            1,
            39.2,
            (ev(comps[2].line),),
            batch_diff,
            detail="The batch (leading) dimension of the inputs changed from 32 to 16 (a partial "
            "last batch), so the static graph is different and needs a new executable.",
        ),
        _finding(
            "constant-changed",
            (TRAIN,),
            1,
            40.4,
            (ev(comps[3].line),),
            lr_diff,
        ),
        _finding(
            "executable-switching",
            (EVAL, TRAIN),
            len(switch_lines) - 3,
            3.65,
            tuple(ev(ln) for ln in switch_lines[3:]),
        ),
        _finding(
            "cache-cold",
            (EVAL, PREDICT, TRAIN),
            3,
            0.0,
            (ev(comps[0].line), ev(comps[1].line), ev(comps[5].line)),
        ),
    ]
    ctuple = tuple(comps)
    etuple = tuple(sorted(events, key=lambda e: e.line))
    wasted = sum(f.wasted_seconds for f in findings)
    return Report(
        inputs=(InputInfo(source, "poplar", n + 3, 41_873),),
        parse=ParseStats(recognized=len(lines), unrecognized=n + 3 - len(lines), malformed=0),
        summary=_summary(ctuple, etuple, wasted),
        compilations=ctuple,
        events=etuple,
        findings=sort_findings(findings),
        tool_version="0.1.0",
    )


def healthy_report(source: str = "healthy.log") -> Report:
    """A run that compiles each graph once (cache hits on the second run) and never again."""
    comps = (
        Compilation(0, TRAIN, "0x5f1d0c2e9a7b3c41", source, 4, 1.1, 0.9, "hit", True, None, 6),
        Compilation(1, EVAL, "0x1a2b3c4d5e6f7081", source, 9, 2.5, 0.6, "hit", True, None, 11),
    )
    events = (
        Event("attach", source, 1, 0.3, "attached", detail={}),
        Event(
            "load",
            source,
            7,
            2.1,
            _load(2.1, 310),
            module=TRAIN,
            detail={"duration_s": 0.31},
        ),
    )
    return Report(
        inputs=(InputInfo(source, "poplar", 40, 3_120),),
        parse=ParseStats(recognized=9, unrecognized=31, malformed=0),
        summary=_summary(comps, events, 0.0),
        compilations=comps,
        events=events,
        findings=(),
        tool_version="0.1.0",
    )


def many_modules_report(
    n_modules: int = 300, per_module: int = 3, source: str = "big.log"
) -> Report:
    """``n_modules`` modules, each compiled ``per_module`` times; the later ones after warm-up."""
    comps: list[Compilation] = []
    t = 0.0
    line = 1
    cid = 0
    for rep in range(per_module):
        for m in range(n_modules):
            dur = 0.5 + (m * 7 % 13) / 4.0
            mod = f"cluster_{m}"
            cache = "miss" if rep == 0 or m % 5 else "hit"
            comps.append(
                Compilation(
                    cid,
                    mod,
                    f"0x{(m * 2654435761 + rep) % (1 << 48):x}",
                    source,
                    line,
                    round(t, 3),
                    dur,
                    cache,  # type: ignore[arg-type]
                    rep == 0,
                    None if rep == 0 else "recompile-after-warmup",
                    line + 1,
                )
            )
            cid += 1
            line += 3
            t += dur + 0.05
    ctuple = tuple(comps)
    after = [c for c in ctuple if not c.warmup]
    wasted = sum(c.duration_s or 0.0 for c in after if c.compiled)
    f = _finding(
        "recompile-after-warmup",
        tuple(sorted({c.module for c in after})),
        len(after),
        wasted,
        tuple(Evidence(source, c.line, _begin(c.t or 0.0, c.module, c.hash or "")) for c in after),
    )
    return Report(
        inputs=(InputInfo(source, "poplar", line, line * 120),),
        parse=ParseStats(recognized=len(ctuple), unrecognized=line - len(ctuple), malformed=2),
        summary=_summary(ctuple, (), wasted),
        compilations=ctuple,
        events=(),
        findings=(f,),
        tool_version="0.1.0",
    )


HOSTILE = '</script><script>alert(1)</script><b>bold</b>"q"\'s&amp;'


def hostile_report() -> Report:
    """Every string that comes from a log or a dump carries markup and quotes."""
    source = 'logs/"weird" <b>&dir</b>/</script>.log'
    mod = f"mod{HOSTILE}$x$"
    text = f"Begin XLA compilation: {mod}  (Hash: 0x1) for ordinal  0 <b>{HOSTILE}</b>"
    comps = (
        Compilation(0, mod, "0x1", source, 3, None, None, "disabled", True, None, None, text=text),
        Compilation(1, mod, "0x2", source, 9, None, None, "disabled", False, "constant-changed"),
    )
    ev = Evidence(source, 9, text, before=(f"<i>{HOSTILE}</i>",), after=("</pre></table>",))
    d = DiffEvidence(
        kind="constant",
        module=mod,
        a_instruction=f"%c.1{HOSTILE}",
        a_text=f"%c.1 = f32[] constant(1) <b>{HOSTILE}</b>",
        b_instruction="%c.1",
        b_text=f"%c.1 = f32[] constant(2) <b>{HOSTILE}</b>",
        op_name=HOSTILE,
        detail=HOSTILE,
        a_path=source,
        b_path=source,
    )
    f = Finding(
        "constant-changed",
        "warning",
        5,
        f"Title {HOSTILE}",
        f"Detail {HOSTILE}",
        f"Advice {HOSTILE}",
        (mod,),
        1,
        1.5,
        (ev,),
        (d,),
    )
    events = (Event("load", source, 5, None, HOSTILE, module=mod, detail={}),)
    return Report(
        inputs=(InputInfo(source, f"poplar{HOSTILE}", 10, 100),),
        parse=ParseStats(4, 5, 1),
        summary=_summary(comps, events, 1.5),
        compilations=comps,
        events=events,
        findings=(f,),
        tool_version="0.1.0",
    )


def empty_report() -> Report:
    """A log with nothing the tool recognizes."""
    return Report(
        inputs=(InputInfo("empty.log", "poplar", 0, 0),),
        parse=ParseStats(),
        summary=Summary(),
        compilations=(),
        events=(),
        findings=(),
        tool_version="0.1.0",
    )
