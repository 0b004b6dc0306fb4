"""Consideration 6 and the causes the dumps name (Considerations 2-5).

A *recompilation* is a compilation of a function after its warm-up.  For each one:

* with ``--dumps``, the differ compares the HLO of this compilation with the previous one of
  the same function and names the cause (``batch-size-changed``, ``frozen-weights``,
  ``growing-shape``, ``constant-changed``, ``dtype-changed``, ``shape-changed``,
  ``graph-changed``); when only elided ``{...}`` constants differ, the cause is frozen weights
  (``frozen-weights`` plus the info ``constants-elided``);
* otherwise ``recompile-after-warmup`` says what the log does tell: a different HLO hash means
  the graph changed; the same hash means the executable cache was missed or is disabled.

Evidence: the ``Begin XLA compilation`` (or progress-bar) lines of the recompilation and of the
compilation before it.
"""

from __future__ import annotations

from array import array
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import chain, islice
from typing import Any, Final, NamedTuple, TypeVar, overload

from recompile_doctor.analyses._common import (
    CompileDiff,
    Options,
    make_finding,
)
from recompile_doctor.analyses.capped import Capped
from recompile_doctor.bounded import Kept
from recompile_doctor.compiled_modules import own_abc_checks
from recompile_doctor.events import RecompileReason
from recompile_doctor.model import Compilation, DiffEvidence, Evidence, Finding, ValueChange
from recompile_doctor.name_digest import held
from recompile_doctor.parsers._tuples import tuple_new
from recompile_doctor.rules import RULES, SHAPE_RULES, cause_rank, rule
from recompile_doctor.slotted import remade_from_fields
from recompile_doctor.timeline import Timeline, function_key
from recompile_doctor.timeline.column import numbers
from recompile_doctor.timeline.distinct import BoundedDistinctCount
from recompile_doctor.timeline.name_set import NameSet
from recompile_doctor.timeline.packed import sequence_eq
from recompile_doctor.timeline.reason_facts import NOTHING_GREW
from recompile_doctor.timeline.table import (
    CODE_OF,
    Causes,
    CompilationTable,
    NamesInOrder,
    is_eager,
)
from recompile_doctor.timeline.types import ReasonsAt
from recompile_doctor.wording import counted, names_listed, plural

T = TypeVar("T")

_MAX_DETAIL_LINES = 4
#: the distinct reasons a recompilation's note gives (a repeated one once, with its count)
_MAX_REASON_LINES = 5
_MAX_CHANGES = 20
#: the dumps' instruction changes a finding shows
_MAX_DIFF = 20


def _log_reason(prev: Compilation, c: Compilation) -> str:
    if c.hash and prev.hash:
        if c.hash != prev.hash:
            return (
                f"HLO hash {prev.hash} → {c.hash}: the graph changed "
                f"(line {prev.line} → line {c.line})"
            )
        outcome = {
            "miss": f"the executable cache was missed ({c.cache_file or 'file not found'})",
            "disabled": "the executable cache is disabled",
            "hit": "it was loaded from the executable cache",
            "unknown": "the log does not show the cache outcome",
        }[c.cache]
        return (
            f"same HLO hash {c.hash} compiled again (line {prev.line} → line {c.line}): "
            f"the graph did not change, and {outcome}"
        )
    if c.framework != "poplar":
        # (what makes the framework say why is the finding's advice, said once)
        return (
            f"compiled again (line {prev.line} → line {c.line}), and the log does not say "
            "what changed"
        )
    if c.function is None:
        return (
            f"a graph was constructed after warm-up (line {c.line}), and the log does not name "
            "the module or its hash (set TF_POPLAR_VLOG_LEVEL=1 to print 'Begin XLA "
            "compilation: <module> (Hash: 0x...)')"
        )
    return (
        f"compiled again (line {prev.line} → line {c.line}), and the log has no HLO hash "
        "(set TF_POPLAR_VLOG_LEVEL=1 to print 'Begin XLA compilation ... (Hash: 0x...)')"
    )


def _how_to_log(framework: str) -> str:
    """What makes ``framework`` say why it compiles (its log format's ``how_to_log``)."""
    from recompile_doctor.parsers import LOG_FORMATS

    said = [f.how_to_log for f in LOG_FORMATS if f.framework == framework]
    return said[0] if said else ""


def recompilations(tl: Timeline) -> list[tuple[Compilation, Compilation]]:
    """``(previous, recompilation)`` for every real compilation after warm-up (the previous:
    the compilation of its function before it), in log order (eager operations and
    compilations served from a persistent cache are not recompilations)."""
    table = tl.compilations
    before, after = recompilation_ids(tl)
    return [(table[a], table[b]) for a, b in zip(before, after, strict=True)]


def recompilation_ids(tl: Timeline) -> tuple[Sequence[int], Sequence[int]]:
    """:func:`recompilations` as the ids of the two compilations of each, in two arrays
    (read from the timeline's columns: no compilation is made)."""
    before, after, _ = recompilation_rows(tl)
    return before, after


def _in_log_order(ids: Sequence[int], source: Sequence[str], line: Sequence[int]) -> bool:
    """Whether the compilations ``ids`` come in log order, each after the one before
    (its input after, or the same input and a later line): each pair's values compared as
    they are, no pair made (compiled, pairs were made and compared generically)."""
    first = True
    last_source = ""
    last_line = 0
    for i in ids:
        s = source[i]
        n = line[i]
        if not first and (s < last_source or (s == last_source and n <= last_line)):
            return False
        first = False
        last_source = s
        last_line = n
    return True


def recompilation_rows(tl: Timeline) -> tuple[Sequence[int], Sequence[int], Sequence[int]]:
    """:func:`recompilation_ids`, and the function of each recompilation by its number (the
    functions numbered in the order first seen): what the verdicts tell functions apart by,
    without reading a compilation's key back again (a spilled column of keys is decoded a
    chunk at a time) or working its function key out again."""
    table = tl.compilations
    hit = CODE_OF["hit"]
    #: per function (a long name by its digest): its number, in the order first seen
    number_of: dict[str | int, int] = {}
    last = array("q")  # per function number: its last id
    # (4 bytes each: ids fit; in a file of their own in a very long run)
    bound = len(table)
    before, after, fns = (
        numbers("I", bound=bound),
        numbers("I", bound=bound),
        numbers("I", bound=bound),
    )
    # (the columns side by side: each read in order, a chunk at a time when spilled; the
    # keys once, for the function key too)
    rows = zip(table.other_module, table.key, table.warmup, table.cache, strict=True)
    for i, (other, key, warmup, cache) in enumerate(rows):
        h = held(table.function_key_of_row(other, key))
        fn = number_of.get(h)
        if fn is None:
            fn = number_of[h] = len(last)
            last.append(i)
            continue
        prev = last[fn]
        last[fn] = i
        if not warmup and cache != hit and not is_eager(key):
            before.append(prev)
            after.append(i)
            fns.append(fn)
    del number_of
    # in log order: by source, then line, then (for one line) as the functions were first
    # seen; in id order already unless sources are out of name order or a line opens two
    source, line = table.source, table.line
    if not _in_log_order(after, source, line):
        order = sorted(
            range(len(after)),
            key=lambda k: (source[after[k]], line[after[k]], fns[k], after[k]),
        )
        before = array("I", (before[k] for k in order))
        after = array("I", (after[k] for k in order))
        fns = array("I", (fns[k] for k in order))
    return before, after, fns


_NO_REASONS: Sequence[RecompileReason] = ()


@dataclass(frozen=True, slots=True)
class Verdict:
    """Why one recompilation happened: its rule ids (most important first), a note, the
    dump diff and the framework's own reasons behind it.

    The note is written when it is read (a finding shows the first and last of each
    function's): what it is made of is kept instead -- the rules the log and the dumps
    name, whether ``--dumps`` was given, whether the shape change also changed constants.
    """

    previous: Compilation
    compilation: Compilation
    rules: tuple[str, ...]
    diff: CompileDiff | None
    reasons: Sequence[RecompileReason] = _NO_REASONS
    log_rules: tuple[str, ...] = ()
    dump_rules: tuple[str, ...] = ()
    dumps_given: bool = False
    #: constants computed from the changed shape changed with it (not a second cause)
    consequence: bool = False

    @property
    def note(self) -> str:
        """What changed, in a line: the framework's words, the dumps' summary, or both."""
        d = self.diff
        log_rules, dump_rules = self.log_rules, self.dump_rules
        if log_rules:
            said = counted(
                (_reason_line(r) for r in self.reasons if r.rule != "retracing" or not dump_rules),
                _MAX_REASON_LINES,
                "other reason",
            )
        if log_rules and dump_rules:
            if set(log_rules) & set(dump_rules):
                note = f"{said}; the dumps agree: {d.summary}" if d else said
            else:
                note = (
                    f"the log and the dumps disagree: the log says {', '.join(log_rules)} "
                    f"({said}); the dumps say {', '.join(dump_rules)} ({d.summary if d else ''})"
                )
        elif dump_rules:
            note = d.summary if d else ""
        elif log_rules:
            note = said
            if d is not None:
                note += "; the dumps of the two compilations are identical (the HLO text cannot show this change)"
        else:
            note = _log_reason(self.previous, self.compilation)
            if d is not None:
                note += "; the dumps of the two compilations are equivalent"
            elif self.dumps_given:
                note += "; no dump of this compilation was found in --dumps"
        if self.consequence:
            note += " (constants computed from the shape changed with it)"
        return note

    def __reduce__(self) -> tuple[Any, ...]:
        return remade_from_fields(self)  # (a copy in the compiled build: see there)


#: rules a framework reports that are not the cause of one recompilation
_NOT_CAUSES = frozenset({"recompile-limit", "compile-failed", "graph-break", "rank-divergence"})


def _dump_rules(d: CompileDiff | None) -> tuple[str, ...]:
    if d is None:
        return ()
    if not d.causes and "constants-elided" in d.notes:
        # only elided constants can differ, and the executable did change: frozen weights
        return ("frozen-weights", "constants-elided")
    return tuple(x for x in d.causes if x in RULES)


#: each tuple of rules :func:`_ordered` was given, ordered: a run repeats a few, and the
#: verdicts order two or three per recompilation (sorting by a key function each time was
#: 5 % of the work after reading a compile-heavy JAX log)
_ORDERED_KEPT: Final[Kept[tuple[str, ...], tuple[str, ...]]] = Kept()
_ORDERED: Final = _ORDERED_KEPT.table


def _ordered(rules: Iterable[str]) -> tuple[str, ...]:
    """``rules`` once each, by cause rank."""
    given = rules if isinstance(rules, tuple) else tuple(rules)
    got = _ORDERED.get(given)
    if got is None:
        got = _ORDERED_KEPT.put(given, tuple(sorted(dict.fromkeys(given), key=cause_rank)))
    return got


def _growing(grown_seq: Iterable[frozenset[str]]) -> Iterator[int]:
    """Indexes (into ``grown_seq``: per recompilation of one function, the arguments whose
    shape grew) of recompilations where an argument keeps growing: the same argument's
    shape grows at two or more consecutive recompilations (an index may come more than
    once).  (:class:`_Growth` over one function.)"""
    growth = _Growth()
    for i, seen_here in enumerate(grown_seq):
        yield from growth.marks("", i, seen_here)


class _Growth:
    """:func:`_growing` over the recompilations of every function at once, in log order:
    the numbers given are places among all the recompilations.  Per function, only while an
    argument's shape keeps growing, where each run of growth started and the function's
    last recompilation (not a list of its recompilations' places, nor of a run's: 4 bytes a
    recompilation, 17 MB for the 4.2 million of a 32 GB TensorFlow log)."""

    __slots__ = ("_runs",)

    def __init__(self) -> None:
        #: function -> (its last recompilation, argument -> the recompilation its run of
        #: growth started at); only functions with a run under way
        self._runs: dict[str | int, tuple[int, dict[str, int]]] = {}

    def __bool__(self) -> bool:
        """True while a function has a run of growth under way."""
        return bool(self._runs)

    def marks(self, fn: str | int, k: int, grown: frozenset[str]) -> Iterator[int]:
        """Recompilation ``k`` of function ``fn`` (its number, or anything else that tells
        it apart) after its earlier ones grew the arguments ``grown``: the places to mark as
        growing (one may come twice)."""
        got = self._runs.get(fn)
        if got is None:
            if grown:  # (runs begin here: nothing grew twice yet)
                self._runs[fn] = (k, dict.fromkeys(grown, k))
            return
        last, runs = got
        for what in list(runs):
            if what not in grown:
                runs.pop(what)
        for what in grown:
            start = runs.setdefault(what, k)
            if start == last:  # (the run started at the function's last recompilation)
                yield start
            if start != k:
                yield k
        if runs:
            self._runs[fn] = (k, runs)
        else:
            del self._runs[fn]


def verdicts(tl: Timeline, opts: Options) -> Verdicts:
    """A verdict for every recompilation after warm-up, in log order.

    The log's reasons (what the framework said changed) and the dumps' diff (what the HLO
    says changed) are both consulted: when only one speaks it decides; when both speak and
    name the same cause, that is the cause; when they name different causes, both are
    given and the note says they disagree.
    """
    memo_key = f"verdicts:{id(tl)}"
    if memo_key in opts.memo:
        cached: Verdicts = opts.memo[memo_key]
        return cached
    before, after, functions = recompilation_rows(tl)
    table = tl.compilations
    # per recompilation, in one reading of its reasons (not all held: they are read again
    # only where a finding shows them): where its causes' reasons are, the rules they name,
    # and whether its function's shapes keep growing there; one copy of each tuple of rules
    # (a run repeats a few)
    out = Verdicts(table, tl.reasons, opts, before, after)
    named = numbers("I", len(after))  # the number of each one's log rules
    growing = numbers("B", len(after))  # 1: its function's shapes keep growing there
    growth = _Growth()
    attached = tl.reasons_by_compilation()
    # (what is read of each reason, taken by the timeline as it came: the reasons themselves
    # are not read back)
    facts = tl.facts_of_reasons()
    for k, cid in enumerate(after):
        said: list[str] = []
        grown = NOTHING_GREW
        for i in attached.of(cid):
            named_rule, source, line, changed, grown_here = facts.fact(i)
            if named_rule and named_rule not in _NOT_CAUSES:
                out.take_reason(i, named_rule, source, line, changed)
                said.append(named_rule)
                grown = grown | grown_here
        out.reasons_end[k] = len(out.reason_at)
        log_rules = _ordered(said)
        named[k] = out.number(log_rules)
        if grown or growth:  # (only where a run may be)
            for j in growth.marks(functions[k], k, grown):
                growing[j] = 1
    del attached, growth
    by_compilation = opts.joined.by_compilation
    #: (number of its log rules, whether its shapes keep growing) -> the numbers of the
    #: verdict of a recompilation no dump speaks of, which those two decide (a run gives a
    #: few: each one's rules were worked out again, 5,000 instructions a recompilation)
    decided: dict[tuple[int, int], tuple[int, int, int, bool]] = {}
    for k, cid in enumerate(after):
        d = by_compilation.get(cid)
        seen = (named[k], growing[k])
        if d is None:
            got = decided.get(seen)
            if got is not None:
                out.add_numbers(got[0], got[1], got[2], got[3])  # (not *got: a generic call)
                continue
        log_rules = out.rules_of(named[k])
        if len(log_rules) > 1 and "retracing" in log_rules:
            # a generic retracing warning beside a specific reason adds nothing
            log_rules = tuple(x for x in log_rules if x != "retracing")
        if growing[k] and log_rules and log_rules[0] in SHAPE_RULES:
            log_rules = _ordered(("growing-shape", *log_rules[1:]))
        dump_rules = _dump_rules(d)
        if growing[k] and dump_rules and dump_rules[0] in SHAPE_RULES:
            dump_rules = _ordered(("growing-shape", *dump_rules[1:]))
        if log_rules == ("retracing",) and dump_rules:
            # the framework only says that it retraced; the dumps say what changed
            log_rules = ()
        if log_rules and dump_rules:
            if set(log_rules) & set(dump_rules):
                rules = _ordered([x for x in log_rules if x in dump_rules] + list(dump_rules))
            else:
                rules = _ordered((*log_rules, *dump_rules))
        elif dump_rules:
            rules = _ordered(dump_rules)
        elif log_rules:
            rules = log_rules
        else:
            rules = ("recompile-after-warmup",)
        given = out.add(rules, log_rules, dump_rules)
        if d is None:
            decided[seen] = given
    opts.memo[memo_key] = out
    return out


class VerdictIds(NamedTuple):
    """A verdict as the grouping by cause reads it: its place among the verdicts, the ids of
    its two compilations (read from the table's columns, not made into objects: 38,000 of
    them for 19,000 recompilations), its rules and diff (its reasons, without reading them:
    :meth:`Verdicts.reason_facts` of ``at``)."""

    at: int
    previous: int
    compilation: int
    rules: tuple[str, ...]
    diff: CompileDiff | None


class Verdicts(Sequence[Verdict]):
    """The verdicts of a run's recompilations, each made when it is read: what they are
    made of is kept in flat lists (the compilations, one shared tuple per distinct set of
    rules, the reasons' places in the timeline), a few dozen bytes per recompilation
    instead of a few hundred (a run of 100,000 recompilations)."""

    def __init__(
        self,
        table: CompilationTable,
        reasons: Sequence[tuple[RecompileReason, int | None]],
        opts: Options,
        previous: Sequence[int],
        compilations: Sequence[int],
    ) -> None:
        """``previous``, ``compilations``: the ids of the two compilations of each
        recompilation (:func:`recompilation_ids`), whose verdicts :meth:`add` gives in turn."""
        self._table = table
        self._reasons = reasons
        self._by_compilation = opts.joined.by_compilation
        self._dumps_given = opts.dumps_given
        #: each distinct tuple of rules, by its number (a run repeats a few)
        self._tuples: list[tuple[str, ...]] = []
        self._number: dict[tuple[str, ...], int] = {}
        self._previous = previous
        self._compilation = compilations
        # (the arrays of one number per recompilation are made whole at once: grown an item
        # at a time, each reallocation left the one before as a hole in the heap)
        n = len(compilations)
        self._given = 0  # the verdicts given so far
        #: the numbers of each one's rules, log rules and dump rules
        self._rules = numbers("I", n)
        self._log_rules = numbers("I", n)
        self._dump_rules = numbers("I", n)
        self._consequence = numbers("B", n)
        #: the places of each one's reasons: reason_at[reasons_end[k - 1]:reasons_end[k]]
        self.reason_at = numbers("I", bound=n)
        self.reasons_end = numbers("I", n)
        #: what the grouping by cause asks of the reason at each place of reason_at, kept so
        #: that it reads no reason it keeps nothing of (the timeline's reasons past the
        #: first few thousand are packed: each chunk of them unpacked twice was 6 % of the
        #: work after reading a compile-heavy JAX log): the number of its (rule, input,
        #: whether it names changes) in _facts, and its line
        self._reason_fact = numbers("I", bound=n)
        self._reason_line = numbers("q", bound=n)
        self._facts: list[tuple[str, str, bool]] = []
        self._fact_number: dict[tuple[str, str, bool], int] = {}
        #: the compilation made last (id, object): a recompilation's previous compilation is
        #: often the one before's (a function recompiled again and again), made once
        self._made: tuple[int, Compilation] | None = None

    def _compiled(self, cid: int) -> Compilation:
        made = self._made
        if made is not None and made[0] == cid:
            return made[1]
        c = self._table[cid]
        self._made = (cid, c)
        return c

    def add(
        self, rules: tuple[str, ...], log_rules: tuple[str, ...], dump_rules: tuple[str, ...]
    ) -> tuple[int, int, int, bool]:
        """The verdict of the next recompilation; what :meth:`add_numbers` takes to give
        the same verdict again."""
        # a shape change also changes the constants computed from it (``1/32`` -> ``1/8``
        # of a mean): those are its consequence, not a second cause
        consequence = rules[0] in _SHAPE_CAUSES and "constant-changed" in rules[1:]
        if consequence:
            rules = tuple(r for r in rules if r != "constant-changed")
        given = (self.number(rules), self.number(log_rules), self.number(dump_rules), consequence)
        self.add_numbers(given[0], given[1], given[2], given[3])
        return given

    def add_numbers(self, rules: int, log_rules: int, dump_rules: int, consequence: bool) -> None:
        """The verdict of the next recompilation, by the numbers of its tuples of rules."""
        k = self._given
        self._rules[k] = rules
        self._log_rules[k] = log_rules
        self._dump_rules[k] = dump_rules
        self._consequence[k] = consequence
        self._given = k + 1

    def __len__(self) -> int:
        return self._given

    def take_reason(self, i: int, rule: str, source: str, line: int, changed: bool) -> None:
        """The reason at place ``i`` of the timeline's reasons (its rule, input and line, and
        whether it names changes) is one of the next verdict's."""
        self.reason_at.append(i)
        fact = (rule, source, changed)
        got = self._fact_number.get(fact)
        if got is None:
            got = self._fact_number[fact] = len(self._facts)
            self._facts.append(fact)
        self._reason_fact.append(got)
        self._reason_line.append(line)

    def reason_facts(self, k: int) -> Iterator[tuple[int, str, str, int, bool]]:
        """Verdict ``k``'s reasons, each as (its place in reason_at, its rule, input, line,
        whether it names changes), without reading the reasons (:meth:`reason` does)."""
        facts, fact_of, line_of = self._facts, self._reason_fact, self._reason_line
        for j in range(self.reasons_end[k - 1] if k > 0 else 0, self.reasons_end[k]):
            rule, source, changed = facts[fact_of[j]]
            yield j, rule, source, line_of[j], changed

    def reason(self, j: int) -> RecompileReason:
        """The reason at place ``j`` of reason_at."""
        at: int = self.reason_at[j]
        return self._reasons[at][0]

    def causes(self) -> Causes:
        """Compilation id -> the first of its rules (without making the verdicts)."""
        out = Causes(len(self._table))
        for c, first in self.first_rules():
            out.set(c, first)
        return out

    def first_rules(self) -> Iterator[tuple[int, str]]:
        """(compilation id, first rule) of each verdict with a rule, in order, without
        making the verdicts (two compilation objects each)."""
        tuples = self._tuples
        n = len(self)
        for c, r in zip(islice(self._compilation, n), islice(self._rules, n), strict=True):
            rules = tuples[r]
            if rules:
                yield c, rules[0]

    def number(self, rules: tuple[str, ...]) -> int:
        """The number of a tuple of rules (given on first sight)."""
        got = self._number.get(rules)
        if got is None:
            got = self._number[rules] = len(self._tuples)
            self._tuples.append(rules)
        return got

    def rules_of(self, number: int) -> tuple[str, ...]:
        return self._tuples[number]

    def _make(self, k: int) -> Verdict:
        return self._verdict_of(
            self._previous[k],
            self._compilation[k],
            self.reasons_end[k - 1] if k > 0 else 0,
            self.reasons_end[k],
            self._rules[k],
            self._log_rules[k],
            self._dump_rules[k],
            self._consequence[k],
        )

    def _verdict_of(
        self, prev: int, cid: int, a: int, b: int, rules: int, log: int, dump: int, cons: int
    ) -> Verdict:
        """The verdict of its numbers as the arrays hold them (its reasons: reason_at[a:b])."""
        tuples = self._tuples
        return Verdict(
            self._compiled(prev),
            self._compiled(cid),
            tuples[rules],
            self._by_compilation.get(cid),
            ReasonsAt(self._reasons, tuple(self.reason_at[a:b])) if b > a else _NO_REASONS,
            tuples[log],
            tuples[dump],
            self._dumps_given,
            bool(cons),
        )

    def _rows(self) -> Iterator[tuple[int, ...]]:
        """Each verdict's numbers as :meth:`_verdict_of` takes them: the arrays side by
        side (each read in order, a chunk at a time when spilled)."""
        n = len(self)
        if n == 0:
            return iter(())
        return zip(
            islice(self._previous, n),
            islice(self._compilation, n),
            chain((0,), islice(self.reasons_end, n - 1)),  # (where each one's reasons begin)
            islice(self.reasons_end, n),
            islice(self._rules, n),
            islice(self._log_rules, n),
            islice(self._dump_rules, n),
            islice(self._consequence, n),
            strict=True,
        )

    def light(self) -> Iterator[VerdictIds]:
        """Each verdict's numbers, rules and diff, in order, without its two compilation
        objects or its reasons (:class:`VerdictIds`; ``self[at]`` is the verdict)."""
        tuples, diffs = self._tuples, self._by_compilation
        n = len(self)
        # (the three arrays it reads, not the eight of _rows: each item read is an int made)
        rows = zip(
            islice(self._previous, n),
            islice(self._compilation, n),
            islice(self._rules, n),
            strict=True,
        )
        for k, (prev, cid, rules) in enumerate(rows):
            # (made by tuple.__new__ or its C twin: the named tuple's own __new__ is an
            # interpreted frame per verdict)
            yield tuple_new(VerdictIds, (k, prev, cid, tuples[rules], diffs.get(cid)))

    @overload
    def __getitem__(self, i: int) -> Verdict: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[Verdict]: ...
    def __getitem__(self, i: int | slice) -> Verdict | Sequence[Verdict]:
        if isinstance(i, slice):
            return [self._make(k) for k in range(len(self))[i]]
        n = len(self)
        if not -n <= i < n:
            raise IndexError(i)
        return self._make(i % n)

    def __iter__(self) -> Iterator[Verdict]:
        rows = self._rows()
        verdict_of = self._verdict_of
        for row in rows:
            yield verdict_of(*row)

    def __eq__(self, other: object) -> bool:
        return sequence_eq(self, other)

    __hash__ = None  # type: ignore[assignment]


#: causes whose change of shape also changes constants derived from it (a mean's 1/n)
_SHAPE_CAUSES = frozenset({*SHAPE_RULES, "growing-shape"})


def _reason_line(r: RecompileReason) -> str:
    """One line for a framework's reason: what changed, old -> new, and where."""
    parts = [
        f"{ch.what} {ch.old} → {ch.new}" if ch.old is not None or ch.new is not None else ch.what
        for ch in r.changes
    ]
    where = f" at {r.call_site}" if r.call_site else ""
    text = ", ".join(parts) if parts else r.reason.splitlines()[0] if r.reason else ""
    return f"{text}{where}"


def recompilation_causes(tl: Timeline, opts: Options) -> Causes:
    """Compilation id -> the rule id that explains it, for every recompilation."""
    return verdicts(tl, opts).causes()


def diagnose_recompilations(tl: Timeline, opts: Options) -> list[Finding]:
    """One finding per cause over all recompilations after warm-up."""
    groups: dict[str, _Cause] = {}
    table = tl.compilations
    made = verdicts(tl, opts)
    names = table.names_in_order()  # (the verdicts come in log order: ids increasing)
    for v in made.light():
        for cause in v.rules:
            g = groups.get(cause)
            if g is None:
                g = groups[cause] = _Cause(table, made, names)
            g.add(v)
            if v.diff is not None:
                _extend_to(g.diff, v.diff.evidence, _MAX_DIFF)
            for j, reason_rule, source, line, changed in made.reason_facts(v.at):
                if (
                    reason_rule == cause
                    or (cause == "growing-shape" and reason_rule in SHAPE_RULES)
                    or (reason_rule == "retracing" and cause == v.rules[0])
                ):
                    # (a reason is read, once, and a line's evidence made, only where
                    # something of it is kept: most are not)
                    line_wanted = g.evidence.wants(source, line)
                    changes_wanted = changed and len(g.changes) < _MAX_CHANGES
                    if line_wanted or changes_wanted:
                        r = made.reason(j)
                        if line_wanted:
                            g.evidence.add(Evidence(source, line, r.span.text))
                        if changes_wanted:
                            _extend_to(g.changes, r.changes, _MAX_CHANGES)
    findings = []
    for rule_id, g in groups.items():
        count, wasted = g.recompilations()
        detail = f"{plural(count, 'recompilation')} after warm-up: {g.describe()}."
        # the reasons' lines come first: of two equal lines, a reason's is kept
        kept = Capped()
        for e in (*g.evidence.lines(), *g.compiled.lines()):
            kept.add(e)
        framework = next(iter(g.frameworks)) if len(g.frameworks) == 1 else None
        findings.append(
            make_finding(
                rule_id,
                detail=detail,
                modules=g.modules,
                count=count,
                wasted=wasted if rule_id != "constants-elided" else 0.0,
                evidence=kept.lines(),
                advice=_advice(rule_id, opts, framework),
                diff=g.diff,
                changes=g.changes,
            )
        )
    return findings


class _Cause:
    """What a finding shows of the recompilations of one cause, gathered one verdict at a
    time (their verdicts are not held: a run can have 100,000)."""

    def __init__(self, table: CompilationTable, verdicts: Verdicts, names: NamesInOrder) -> None:
        self._table = table
        self._verdicts = verdicts
        #: each recompilation's module, framework and function (one reader for all causes)
        self._names = names
        self.diff: list[DiffEvidence] = []
        self.evidence = Capped()  # the reasons' lines
        self.compiled = Capped()  # the lines of each recompilation and the one before
        self.changes: list[ValueChange] = []
        self.modules = NameSet()
        self.frameworks: set[str] = set()
        #: per function, in the order first seen, of the first few (those described):
        #: [its first verdict's index, its last's, how many, the last one's compilation]
        self.functions: dict[str, list[int]] = {}
        #: the other functions, counted (a run can compile 100,000 of them under names of
        #: their own, of any length)
        self.more_functions = BoundedDistinctCount()
        self._count = 0
        self._seconds = 0.0
        #: the recompilation last added (its input and line; -1: none), counted once however
        #: many verdicts name it
        self._last_source = ""
        self._last_line = -1
        self._last_s = 0.0

    def add(self, v: VerdictIds) -> None:
        # (what the compilation objects would say, from the table's columns)
        # (each column read once, and no pair made: compiled, a pair is boxed and compared
        # generically)
        table, cid, previous = self._table, v.compilation, v.previous
        compiled = self.compiled
        # (a line's evidence is made only where it would be kept: most are not)
        if compiled.wants(table.source[previous], table.line[previous]):
            compiled.add(table.evidence_of(previous))
        source, line = table.source[cid], table.line[cid]
        if compiled.wants(source, line):
            compiled.add(table.evidence_of(cid))
        module, framework, function = self._names(cid)
        self.modules.add(module)
        self.frameworks.add(framework)
        # the verdicts come in log order: two of one line are next to each other
        if line != self._last_line or source != self._last_source:
            self._commit()
            self._count += 1
            self._last_source, self._last_line = source, line
        self._last_s = table.seconds_of(cid)  # (the last of one line counts)
        fn = function or function_key(module)
        seen = self.functions.get(fn)
        if seen is None:
            if len(self.functions) < _MAX_DETAIL_LINES:
                self.functions[fn] = [v.at, v.at, 1, cid]
            else:
                self.more_functions.add(fn)
        elif seen[3] != cid:
            seen[1] = v.at
            seen[2] += 1
            seen[3] = cid

    def _commit(self) -> None:
        if self._last_line != -1:
            self._seconds += self._last_s

    def recompilations(self) -> tuple[int, float]:
        """How many recompilations (one per line) and their seconds."""
        self._commit()
        self._last_line = -1
        return self._count, self._seconds

    def describe(self) -> str:
        """Per function: the note of its recompilation, or the first and last of several
        (the only notes written)."""
        parts = []
        for fn, (i, j, n, _cid) in self.functions.items():
            first, last = self._verdicts[i], self._verdicts[j]
            if n == 1:
                parts.append(f"{fn} (line {first.compilation.line}): {first.note}")
            else:
                parts.append(
                    f"{fn}, {n} times (lines {first.compilation.line} to "
                    f"{last.compilation.line}); first: {first.note}; last: {last.note}"
                )
        more = self.more_functions.count()  # (its file goes with it: see Blobs)
        if more:
            parts.append(f"and {plural(more, 'more function')}")
        return "; ".join(parts)


def _extend_to(kept: list[T], more: Iterable[T], most: int) -> None:
    """``kept.extend(more)``, up to ``most`` items in all."""
    room = most - len(kept)
    if room > 0:
        kept.extend(islice(more, room))


def _advice(rule_id: str, opts: Options, framework: str | None) -> str:
    """What to change for ``rule_id``'s recompilations of ``framework`` (None: several).
    Where neither the log nor the dumps name a cause: how to get the dumps, and how to make
    the framework log why it compiles when the rule has no words of its own for it."""
    r = rule(rule_id)
    if rule_id == "recompile-after-warmup":
        if opts.dumps_given:
            return (
                "The dumps could not name a cause: check that --dumps holds the dumps of this "
                "run (XLA_FLAGS=--xla_dump_to=DIR), one file per compilation, and compare the "
                "two compilations' HLO with 'recompile-doctor diff'."
            )
        if framework not in (None, "poplar") and framework not in r.advice_by_framework:
            return f"{r.advice} {_how_to_log(framework)}".rstrip()
    return r.advice_for(framework)


def _first_line(path: str | None) -> Evidence | None:
    if not path:
        return None
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return Evidence(path, 1, f.readline().rstrip("\n"))
    except OSError:
        return None


def dump_only_recompilations(tl: Timeline, opts: Options) -> list[Finding]:
    """Recompilations only the dumps show: the log names at most the first compilation of a
    function (TensorFlow logs ``Compiled cluster using XLA!`` once per process, and XLA
    compiles each concrete shape even under one ``input_signature``), but its dump folder
    holds several.  Evidence: the first line of each dump that changed, and the log's
    compile line of the function when there is one."""
    groups: dict[str, list[tuple[str, CompileDiff]]] = defaultdict(list)
    for fn, diffs in opts.joined.dump_only.items():
        for d in diffs:
            for cause in _dump_rules(d)[:1] or ():
                groups[cause].append((fn, d))
    if not groups:
        return []
    by_fn = tl.ids_by_function()
    table = tl.compilations
    findings = []
    for rule_id, items in groups.items():
        evidence: list[Evidence] = []
        for fn, d in items:
            first = by_fn.get(fn, [])
            evidence += [table.evidence_of(i) for i in first[:1]]
            ev = _first_line(d.b_path)
            if ev is not None:
                evidence.append(ev)
        if not evidence:
            continue
        fns = sorted({fn for fn, _ in items})
        detail = (
            f"{plural(len(items), 'compilation')} that the log does not show, found in the "
            f"dumps of {names_listed(fns)}: " + "; ".join(d.summary for _, d in items[:3])
        )
        frameworks = {table.framework_of(i) for fn in fns for i in by_fn.get(fn, [])}
        findings.append(
            make_finding(
                rule_id,
                detail=detail,
                modules=fns,
                count=len(items),
                wasted=0.0,
                evidence=evidence,
                advice=rule(rule_id).advice_for(frameworks.pop() if len(frameworks) == 1 else None),
                diff=[e for _, d in items for e in d.evidence][:20],
            )
        )
    return findings


own_abc_checks(Verdicts)  # (a compiled build's classes: see there)
