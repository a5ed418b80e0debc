"""Whether a file is a whole GGUF checkpoint, read from its header alone: torch-free and fast (``botgrpo validate``).

The header (GGUF v2/v3: magic, version, tensor and key-value counts, the key-value pairs, the tensor table) says
where each tensor's data lies; a file shorter than the end of its last tensor was cut. ``gguf``'s own
``GGUFReader`` answers too, but takes ~10 s on SmolLM2's 98 MB (it builds an array per field); this reads the
header's bytes and skips the values.
"""

from __future__ import annotations

import struct
from pathlib import Path
from typing import BinaryIO

MAGIC = b"GGUF"
#: value type -> its size in bytes (fixed-size types); 8 is a string, 9 an array
_SIZES = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}
_STRING, _ARRAY = 8, 9
#: the longest string a header may hold (a key, a token): a larger length means the header is not GGUF
_MAX_STRING = 1 << 24


class _Cut(Exception):
    """The header ends before it should."""


def _read(f: BinaryIO, n: int) -> bytes:
    data = f.read(n)
    if len(data) != n:
        raise _Cut
    return data


def _u32(f: BinaryIO) -> int:
    return int(struct.unpack("<I", _read(f, 4))[0])


def _u64(f: BinaryIO) -> int:
    return int(struct.unpack("<Q", _read(f, 8))[0])


def _string(f: BinaryIO) -> bytes:
    n = _u64(f)
    if n > _MAX_STRING:
        raise ValueError(f"a header string of {n} bytes")
    return _read(f, n)


def _skip_value(f: BinaryIO, kind: int) -> int | None:
    """Skip one value of type ``kind``; returns it when it is an unsigned 32-bit integer (the alignment)."""
    if kind == _STRING:
        _string(f)
    elif kind == _ARRAY:
        item, count = _u32(f), _u64(f)
        if item in _SIZES:
            f.seek(_SIZES[item] * count, 1)
        elif item == _STRING:
            for _ in range(count):
                _string(f)
        else:
            raise ValueError(f"an array of value type {item}")
    elif kind == 4:
        return _u32(f)
    elif kind in _SIZES:
        _read(f, _SIZES[kind])
    else:
        raise ValueError(f"value type {kind}")
    return None


def gguf_problem(path: Path) -> str | None:
    """Why ``path`` is not a whole GGUF checkpoint (not GGUF at all, a header that does not parse, cut short), or
    None. Only the header is read."""
    from gguf.constants import GGML_QUANT_SIZES, GGMLQuantizationType

    size = path.stat().st_size
    try:
        with path.open("rb") as f:
            magic = f.read(4)
            if magic != MAGIC:
                return f"is not a GGUF file (it starts with {magic!r}, not {MAGIC!r})"
            version = _u32(f)
            if version not in (2, 3):
                return f"is GGUF version {version}, which this reader does not know (2 or 3)"
            tensors, pairs = _u64(f), _u64(f)
            alignment = 32
            for _ in range(pairs):
                key = _string(f)
                value = _skip_value(f, _u32(f))
                if key == b"general.alignment" and value:
                    alignment = value
            end = 0
            for _ in range(tensors):
                _string(f)
                dims = [_u64(f) for _ in range(_u32(f))]
                kind, offset = _u32(f), _u64(f)
                block, nbytes = GGML_QUANT_SIZES[GGMLQuantizationType(kind)]
                count = 1
                for d in dims:
                    count *= d
                end = max(end, offset + count // block * nbytes)
            start = -(-f.tell() // alignment) * alignment
    except _Cut:
        return f"is cut short: its header ends at byte {size}"
    except (ValueError, KeyError, OSError, struct.error) as exc:
        return f"does not parse as GGUF ({exc})"
    if start + end > size:
        return f"is cut short: {size} bytes, but its tensors end at byte {start + end}"
    return None
