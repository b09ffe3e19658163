"""How JSON values are laid out in PostgreSQL cells: one ``bytea`` each.

A value is its compact JSON in UTF-8, zlib-compressed when that saves a
tenth (the embedded store's rule, :mod:`kgrag.storage.sqlite.codec`).
``bytea`` rather than ``jsonb``: jsonb refuses ``\\u0000`` in strings and
reorders keys, and the stores never query inside values. A zlib stream
starts with byte 0x78 (``x``) and JSON never does, so decoding needs no
flag.
"""

from __future__ import annotations

import json
import zlib

from kgrag.storage.base import JSONObject
from kgrag.storage.sqlite.codec import COMPRESS_MIN, as_object, dumps

_LEVEL = 6
_ZLIB = 0x78


def encode(value: object) -> bytes:
    """The cell for ``value``."""
    raw = dumps(value).encode("utf-8")
    if len(raw) < COMPRESS_MIN:
        return raw
    packed = zlib.compress(raw, _LEVEL)
    return packed if len(packed) * 10 < len(raw) * 9 else raw


def decode(cell: bytes | memoryview | None) -> object:
    """Inverse of :func:`encode`; ``None`` stays ``None``."""
    if cell is None:
        return None
    data = bytes(cell)
    if data[:1] == bytes([_ZLIB]):
        data = zlib.decompress(data)
    value: object = json.loads(data.decode("utf-8"))
    return value


def decode_object(cell: bytes | memoryview | None) -> JSONObject:
    """Inverse of :func:`encode` for a row (a JSON object: every key-value, node and edge value)."""
    return as_object(decode(cell))
