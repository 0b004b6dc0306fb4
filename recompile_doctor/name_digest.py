"""128-bit BLAKE2 digests of names: a name's stand-in where many names are kept only to be
told apart (a digest is 44 bytes as a number, 33 as bytes; a name of 30 characters is 79).

Two different names would have to share a digest to be taken for one, a chance of about
n²/2¹²⁹ (10⁻²⁷ for a million names), far below any fault of the machine running it.  The
digest is the same in every process (not Python's ``hash``, which a process may salt).
"""

from __future__ import annotations

from typing import Final

try:  # (the same function: hashlib's own import loads OpenSSL first, 3 ms of a start-up)
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - a Python built without it
    from hashlib import blake2b

#: bytes of a digest (the C module's fingerprint tables are made for 16)
WIDTH: Final = 16


def name_digest(s: str) -> bytes:
    """``s``'s digest (lone surrogates, as a log's undecodable bytes are read, are digested
    as they are)."""
    return blake2b(s.encode("utf-8", "surrogatepass"), digest_size=WIDTH).digest()


def name_number(s: str) -> int:
    """``s``'s digest as a number (a plain value: a decoder's state holds it as a key)."""
    return int.from_bytes(name_digest(s), "little")


#: names longer than this are held by their digest where they are held only to be told
#: apart (:func:`held`)
HELD_CHARS: Final = 256


def held(name: str) -> str | int:
    """``name`` as a table that only tells names apart holds it: itself, or its number
    (:func:`name_number`) when it is longer than :data:`HELD_CHARS` (a log of a new function
    per compilation, under generated names of 8,000 characters, held 80 MB of them in a
    decoder's set at 400 MB of log, and as many again in the builder's count per
    function)."""
    return name if len(name) <= HELD_CHARS else name_number(name)
