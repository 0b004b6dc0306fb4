"""The workers' event codec in C (``parsers/_native_codec.c``) gives what the Python it
replaces gives (``_event_codec.encode_py`` and ``decode_py``): the same items, of the same
types at every depth, for every event of every fixture and for generated ones; the same
events back, sharing their records and value objects as the Python's do; and, for what it
hands to the Python (a value object met first, a value the codec does not know, an item of
another shape), the Python's answer or error."""

from __future__ import annotations

import contextlib
import gc
import marshal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from recompile_doctor.events import CompileKey, FrameworkNote, RecompileReason, Span
from recompile_doctor.model import Event, ValueChange
from recompile_doctor.parsers import _event_codec as codec
from recompile_doctor.parsers import parse_log
from recompile_doctor.parsers._spans import native_module
from tests._held_memory import kept_after
from tests.test_event_values import _KEYS, _VALUES, _shape
from tests.test_parallel import PLAIN_FIXTURES

C: Any = codec.native_codec() if native_module() is not None else None
pytestmark = pytest.mark.skipif(C is None, reason="the C module is not built here")


def c_encode(ev: Any, before: Any) -> Any:
    return C.encode(ev, before, C.enc_table)


def c_decode(item: Any, before: Any) -> Any:
    return C.decode(item, before, C.dec_table)


def _outcome(f: Any, *args: Any) -> Any:
    """What ``f(*args)`` gives, with the types at every depth, or its error's type and text."""
    try:
        got = f(*args)
    except Exception as e:
        return ("raised", type(e), str(e))
    return ("gave", _event_shape(got) if hasattr(got, "keep") else _shape(got))


def _event_shape(ev: Any) -> Any:
    return (type(ev).__name__, repr(ev), _shape(ev.span), _shape(ev.record), ev)


def test_every_fixture_event_is_encoded_and_decoded_as_the_python_does() -> None:
    n = shared = 0
    for path in PLAIN_FIXTURES:
        evs = list(parse_log(str(path)))
        last = None
        items = []
        for ev in evs:
            mine = c_encode(ev, last)
            assert _shape(mine) == _shape(codec.encode_py(ev, last)), (path, ev)
            items.append(marshal.loads(marshal.dumps(mine)))
            last = ev.record
        mine_back: list[Any] = []
        theirs_back: list[Any] = []
        for item in items:
            mine_back.append(c_decode(item, mine_back[-1].record if mine_back else None))
            theirs_back.append(
                codec.decode_py(item, theirs_back[-1].record if theirs_back else None)
            )
        assert [_event_shape(e) for e in mine_back] == [_event_shape(e) for e in evs], path
        assert [_event_shape(e) for e in theirs_back] == [_event_shape(e) for e in evs], path
        for i in range(1, len(evs)):
            same = evs[i].record is not None and evs[i].record is evs[i - 1].record
            assert (
                mine_back[i].record is not None and mine_back[i].record is mine_back[i - 1].record
            ) == same
            shared += same
        n += len(evs)
    assert n > 1000 and shared > 10


def _note(detail: Any, key: Any) -> FrameworkNote:
    rec = Event("note", "run.log", 3, 1.5, "a line", "m", None, detail)
    return FrameworkNote(Span("run.log", 3, "a line", 1.5), rec, "noted", key, detail)


@given(st.dictionaries(st.text(max_size=4), _VALUES, max_size=4), _KEYS | st.none())
def test_generated_events_are_encoded_and_decoded_as_the_python_does(detail: Any, key: Any) -> None:
    ev = _note(detail, key)
    assert _outcome(c_encode, ev, None) == _outcome(codec.encode_py, ev, None)
    item = marshal.loads(marshal.dumps(codec.encode_py(ev, None)))
    assert _outcome(c_decode, item, None) == _outcome(codec.decode_py, item, None)
    assert c_decode(item, None) == ev


def test_value_objects_stay_shared_both_ways() -> None:
    key = CompileKey("jax", "jit_f")
    change = ValueChange("x", "f32[1]", "f32[2]", "a.py:3")
    ev = RecompileReason(
        Span("run.log", 3, "a line"), None, key, "shape", "why", (change,), "a.py:3", (3,)
    )
    first, second = c_encode(ev, None), c_encode(ev, None)
    assert first[4] is second[4]  # (the key's encoding, from the table of those encoded)
    assert _shape(first) == _shape(codec.encode_py(ev, None))
    items = [marshal.loads(marshal.dumps(x)) for x in (first, second)]
    a, b = c_decode(items[0], None), c_decode(items[1], None)
    assert a == ev and b == ev
    assert a.key is b.key and a.changes[0] is b.changes[0]  # (made once, then shared)


def test_value_objects_met_first_are_made_and_kept_as_the_python_does() -> None:
    # a value object C encodes first (not through the Python) is kept under its id, and one
    # it decodes first is kept under its fields, as the Python keeps them; a field that is
    # not plain is encoded, and its object made anew each time (a list cannot be looked up)
    key = CompileKey("jax", "jit_never_seen_before", graph_hash="h1")
    odd = ValueChange("x", ["not", "plain"], None, None)  # type: ignore[arg-type]
    ev = RecompileReason(
        Span("run.log", 3, "a line"), None, key, "shape", "why", (odd,), "a.py:3", (3,)
    )
    mine = c_encode(ev, None)
    assert codec._ENCODED[id(key)] == (key, mine[4]) and codec._ENCODED[id(odd)][0] is odd
    codec._ENCODED.clear()
    assert _shape(mine) == _shape(codec.encode_py(ev, None))
    item = marshal.loads(marshal.dumps(mine))
    codec._MADE.clear()
    back = c_decode(item, None)
    assert back == ev and codec._MADE[item[4][1]] is back.key
    assert c_decode(item, None).key is back.key
    assert c_decode(item, None).changes[0] is not back.changes[0]
    codec._MADE.clear()
    assert _event_shape(codec.decode_py(item, None)) == _event_shape(back)


def test_a_value_object_of_another_class_under_the_same_fields_is_not_taken() -> None:
    key = CompileKey("jax", "jit_g")
    item = marshal.loads(marshal.dumps(c_encode(_note({}, key), None)))
    fields = item[5][1]  # (a note's fields: note, key, detail)
    assert fields == ("jax", "jit_g", None, None, None, None, False)
    for decode in (c_decode, codec.decode_py):
        codec._MADE[fields] = ValueChange("x", None, None, None)
        got = decode(item, None).key
        assert type(got) is CompileKey and got == key and codec._MADE[fields] is got


def test_the_tables_of_value_objects_stay_bounded() -> None:
    from recompile_doctor.bounded import KEPT_MAX

    for k in range(KEPT_MAX + 10):
        key = CompileKey("jax", f"step_{k}", graph_hash=str(k))
        item = marshal.loads(marshal.dumps(c_encode(_note({}, key), None)))
        assert c_decode(item, None).key == key
        assert len(codec._ENCODED) <= KEPT_MAX and len(codec._MADE) <= KEPT_MAX
    assert len(codec._ENCODED) < KEPT_MAX and len(codec._MADE) < KEPT_MAX  # (emptied once)


def test_the_tables_of_value_objects_keep_the_bounded_tables_rule(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """GIVEN keys whose names are longer than a bounded table keeps, and short ones of more
    characters in all than it holds WHEN the C and the Python codec encode and decode them
    THEN both keep no long one and empty their tables before their keys' strings (a value
    object's, for the table of those encoded) would hold more than KEY_CHARS."""
    from recompile_doctor import bounded

    long = "f" * (bounded.KEY_LONGEST + 1)
    codecs = ((c_encode, c_decode), (codec.encode_py, codec.decode_py))
    for encode, decode in codecs:
        codec._ENCODED_KEPT.clear()
        codec._MADE_KEPT.clear()
        key = CompileKey("jax", long)
        item = marshal.loads(marshal.dumps(encode(_note({}, key), None)))
        assert decode(item, None).key == key
        assert not codec._ENCODED and not codec._MADE
    monkeypatch.setattr(codec._ENCODED_KEPT, "key_chars", 100)
    monkeypatch.setattr(codec._MADE_KEPT, "key_chars", 100)
    for encode, decode in codecs:
        codec._ENCODED_KEPT.clear()
        codec._MADE_KEPT.clear()
        for k in range(40):
            key = CompileKey("jax", f"step_{k:04d}")  # (12 characters a key)
            item = marshal.loads(marshal.dumps(encode(_note({}, key), None)))
            assert decode(item, None).key == key
            held = sum(bounded.chars_of(v[1]) for v in codec._ENCODED.values())
            assert held == codec._ENCODED_KEPT.chars <= 100
            assert sum(map(bounded.chars_of, codec._MADE)) == codec._MADE_KEPT.chars <= 100
            assert codec._MADE and codec._ENCODED  # (the last one kept)


def test_the_shared_empty_detail_comes_back_shared() -> None:
    rec = Event("note", "run.log", 3, None, "a line")
    ev = FrameworkNote(Span("run.log", 3, "a line"), rec, "noted", None, rec.detail)
    item = marshal.loads(marshal.dumps(c_encode(ev, None)))
    back = c_decode(item, None)
    assert back.detail is rec.detail and back.record.detail is rec.detail


class _Dict(dict[str, Any]):
    pass


class _List(list[Any]):
    pass


@pytest.mark.parametrize(
    "value",
    [
        {1, 2},
        frozenset(),
        object(),
        [1, {"a": {2}}],
        (b"x", 1j),
        _Dict(a=1),
        _List([1]),
        {"a": [1, (2, {3})]},
        bytearray(b"x"),
    ],
)
def test_a_value_the_codec_does_not_know_is_refused_alike(value: Any) -> None:
    ev = _note({"v": value}, None)
    mine, theirs = _outcome(c_encode, ev, None), _outcome(codec.encode_py, ev, None)
    assert mine == theirs and mine[0] == "raised" and mine[1] is codec.Unencodable


def test_what_c_does_not_take_goes_to_the_python() -> None:
    # an object of another class, a span or a record of another shape, a slot never set
    ev = _note({}, None)
    odd: list[Any] = [
        "not an event",
        Event("note", "run.log", 3, None, "a line"),
        FrameworkNote(["run.log", 3, "a line", None, 0], None, "n", None, {}),  # type: ignore[arg-type]
        FrameworkNote(ev.span, ("short",), "n", None, {}),  # type: ignore[arg-type]
        object.__new__(FrameworkNote),
    ]
    for o in odd:
        assert _outcome(c_encode, o, None) == _outcome(codec.encode_py, o, None), o


def test_items_of_other_shapes_are_decoded_as_the_python_does() -> None:
    good = marshal.loads(marshal.dumps(c_encode(_note({"lines": [1, 2]}, None), None)))
    rec = Event("note", "run.log", 3, None, "a line")
    odd: list[Any] = [
        [],
        [99, *good[1:]],
        [-1, *good[1:]],
        [True, *good[1:]],
        [2**70, *good[1:]],
        good[:3],
        [*good, "extra"],
        [good[0], list(good[1]), *good[2:]],
        [good[0], good[1], ("short",), *good[3:]],
        [good[0], good[1], [1, 2], *good[3:]],
        [good[0], good[1], 0, *good[3:]],
        [*good[:4], [], *good[5:]],
        [*good[:4], [99, 1], *good[5:]],
        [*good[:4], [-9, 1], *good[5:]],
        [*good[:4], [-1, [["a"]]], *good[5:]],
        [*good[:4], [-1, ("jax", "m", None, None, False, None)], *good[5:]],
        [*good[:4], [codec._DICT, ["not a dict"]], *good[5:]],
        [*good[:4], [codec._DICT], *good[5:]],
        [*good[:4], [codec._EMPTY_TAG], *good[5:]],
        [*good[:4], ["tag"], *good[5:]],
        "not a list",
    ]
    for item in odd:
        for before in (None, rec):
            assert _outcome(c_decode, item, before) == _outcome(codec.decode_py, item, before), item


def test_deep_values_raise_as_the_python_does() -> None:
    deep: Any = 1
    for _ in range(100_000):
        deep = [deep]
    ev = _note({"d": deep}, None)
    with pytest.raises(RecursionError):
        c_encode(ev, None)
    item: Any = 1
    for _ in range(100_000):
        item = [codec._LIST, item]
    good = c_encode(_note({}, None), None)
    with pytest.raises(RecursionError):
        c_decode([*good[:4], item, *good[5:]], None)


class _Meddler:
    """A dict key whose hash (asked while the codec encodes or decodes the dict) runs code
    that empties the event's slots or the item, and collects: the codec must not crash."""

    def __init__(self, meddle: Any) -> None:
        self.meddle = meddle
        self.armed = False  # (not while its own dict is made)

    def __hash__(self) -> int:
        if self.armed:
            self.meddle()
            gc.collect()
        return 1


def test_an_event_or_item_changed_while_it_is_coded_never_crashes() -> None:
    ev = _note({}, CompileKey("jax", "jit_m"))

    def empty_event() -> None:
        for name in ("span", "record", "keep", "key", "detail"):
            object.__delattr__(ev, name)

    meddler = _Meddler(empty_event)
    rec = Event("note", "run.log", 3, None, "a line", None, None, {meddler: [1]})
    object.__setattr__(ev, "record", rec)
    del rec
    meddler.armed = True
    with contextlib.suppress(Exception):  # (an error is an answer; a crash is not)
        c_encode(ev, None)
    good = marshal.loads(marshal.dumps(c_encode(_note({"a": [1]}, None), None)))
    item = list(good)

    def empty_item() -> None:
        item.clear()

    meddler = _Meddler(empty_item)
    item[-1] = [codec._DICT, {meddler: [codec._LIST, 1, 2]}]
    meddler.armed = True
    with contextlib.suppress(Exception):
        c_decode(item, None)
    assert item == []


def test_wrong_arguments_are_refused() -> None:
    native: Any = native_module()
    ev = _note({}, None)
    for call in (
        lambda: native.codec_encode(ev, None),
        lambda: native.codec_encode(ev, None, ()),
        lambda: native.codec_encode(ev, None, ({}, {}, {}, 9, len, 1)),
        lambda: native.codec_encode(ev, None, ({}, {}, {}, 0, len, len)),
        lambda: native.codec_encode(ev, None, ({type(ev): (1, "no plan")}, *C.enc_table[1:])),
        lambda: native.codec_decode([0, (), None, False], None, ()),
        lambda: native.codec_decode([0, (), None, False], None, ((("x", 1),), *C.dec_table[1:])),
        lambda: native.codec_decode(
            [0, (), None, False], None, (*C.dec_table[:5], "9", *C.dec_table[6:])
        ),
    ):
        with pytest.raises(TypeError):
            call()


def test_a_plan_of_another_class_is_not_used() -> None:
    # (its slots would be read at another class's places: the Python takes the event)
    classes, values, *rest = C.enc_table
    other = next(c for c in classes if c is not FrameworkNote)
    table = ({FrameworkNote: classes[other]}, values, *rest)
    ev = _note({}, CompileKey("jax", "jit_h"))
    native: Any = native_module()
    assert _shape(native.codec_encode(ev, None, table)) == _shape(codec.encode_py(ev, None))
    table = (classes, {CompileKey: values[ValueChange]}, *rest)
    assert _shape(native.codec_encode(ev, None, table)) == _shape(codec.encode_py(ev, None))


def test_encoding_and_decoding_keep_no_memory() -> None:
    # (values of every shape, a new object made for each at every depth, and objects whose
    # references are counted: a reference kept or dropped too many shows)
    word = "".join(["a", "word"])
    change = ValueChange("x", "f32[1]", "f32[2]", None)
    detail = {"a": [1, (2, word), [[3], {"k": (4, [5])}]], "b": 1.5, "c": (change,)}
    evs = [_note(dict(detail), CompileKey("jax", "jit_f")) for _ in range(3)]
    items = [marshal.loads(marshal.dumps(c_encode(e, None))) for e in evs]
    held = [word, change, items[0][5], items[0][6][1]["a"]]  # (the last two: encoded)
    counts = [sys.getrefcount(o) for o in held]

    def run() -> None:
        for _ in range(2_000):
            for e, item in zip(evs, items, strict=True):
                c_encode(e, None)
                c_decode(item, None)
            with pytest.raises(codec.Unencodable):
                c_encode(_note({"s": {1}}, None), None)

    assert kept_after(run) < 20_000
    assert [sys.getrefcount(o) for o in held] == counts


def test_value_objects_met_first_hold_no_reference_once_their_tables_are_emptied() -> None:
    key = CompileKey("jax", "".join(["jit_", "once"]))
    ev = _note({}, key)
    before = sys.getrefcount(key)
    item = marshal.loads(marshal.dumps(c_encode(ev, None)))
    codec._ENCODED.clear()
    assert sys.getrefcount(key) == before
    fields = item[5][1]
    before = sys.getrefcount(fields)
    codec._MADE.clear()
    back = c_decode(item, None)
    codec._MADE.clear()
    assert sys.getrefcount(fields) == before and back.key == key


# (beside the test runner's IO thread, which Python 3.12 and later warn about)
@pytest.mark.filterwarnings("ignore:This process:DeprecationWarning")
def test_a_log_read_by_two_processes_gives_the_same_events_with_either_codec(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # one fixture of each stack, repeated and read by two processes: the worker's events
    # handed over, and the timeline's, the same whichever codec encodes and decodes them
    from recompile_doctor.parsers import _parallel
    from tests.test_parallel import FIXTURE_GROUPS, Spy, _repeated, _run, _share, small_parts

    monkeypatch.setattr(_parallel, "usable", lambda: 2)
    small_parts(monkeypatch)  # (as tests/test_parallel.py reads)
    _share(monkeypatch, 0.3)
    spy = Spy(monkeypatch)
    for group, fixtures in sorted(FIXTURE_GROUPS.items()):
        src = max((f for _, f in fixtures), key=lambda f: f.stat().st_size)
        path = _repeated(src, tmp_path / f"{group}.log", lines=2000)
        runs = []
        for chosen in (C, None):
            codec._NATIVE[:] = [chosen]
            try:
                runs.append(_run(path, 2))
            finally:
                codec._NATIVE[:] = [C]
        assert runs[0] == runs[1], src
        assert runs[0][0], src  # (events were read)
    assert spy.workers >= 2 * len(FIXTURE_GROUPS)  # (each read by a worker besides)


def test_native_0_encodes_in_python() -> None:
    from recompile_doctor.compiled_modules import NATIVE_ENV

    code = "from recompile_doctor.parsers import _event_codec as c; print(c.native_codec())"
    env_run = subprocess.run(
        [sys.executable, "-c", code],
        env={**__import__("os").environ, NATIVE_ENV: "0"},
        capture_output=True,
        text=True,
        check=True,
    )
    assert env_run.stdout.strip() == "None"
