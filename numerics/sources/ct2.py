"""A CTranslate2 ``model.bin`` read as data: no ``ctranslate2`` dependency, no pickle, no code run.

The layout (binary version 6, as CTranslate2's ``ModelSpec._serialize`` writes it; little-endian)::

    uint32 version                        (6)
    string spec name                      ("WhisperSpec", ...)
    uint32 spec revision
    uint32 variable count
      per variable: string name, uint8 rank, rank x uint32 dims, uint8 dtype id, uint32 byte count, bytes
    uint32 alias count
      per alias: string alias, string variable name

where a string is a uint16 length (the terminating NUL included), the UTF-8 bytes and a NUL. The
dtype ids are CTranslate2's ``DataType`` order: 0 float32, 1 int8, 2 int16, 3 int32, 4 float16,
5 bfloat16 (bfloat16 is widened exactly to float32 here, numpy having no bfloat16). Anything else
(another version, a truncated file, a byte count that disagrees with the shape and dtype, bytes after
the aliases, an alias to no variable, a name twice) is refused with :class:`~theory.errors.InvalidInput`
naming the file and the place.

>>> blob = write_ct2("TinySpec", 1, {"w": np.arange(6, dtype=np.float16).reshape(2, 3)}, {"w2": "w"})
>>> m = read_ct2(blob); m.spec, m.revision, m.variables["w"].shape, m.aliases
('TinySpec', 1, (2, 3), {'w2': 'w'})
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import Union

import numpy as np

from theory.errors import InvalidInput

VERSION = 6
DTYPES = {0: np.dtype("<f4"), 1: np.dtype("i1"), 2: np.dtype("<i2"), 3: np.dtype("<i4"), 4: np.dtype("<f2"),
          5: np.dtype("<u2")}     # 5: bfloat16, read as its 16 bits and widened (_bfloat16)
DTYPE_NAMES = {0: "float32", 1: "int8", 2: "int16", 3: "int32", 4: "float16", 5: "bfloat16"}


@dataclass
class Ct2Model:
    """What a ``model.bin`` holds: the spec's name and revision, the variables (name -> array, in
    file order; scalars are 0-d arrays) and the aliases (alias -> variable name)."""

    spec: str
    revision: int
    variables: dict[str, np.ndarray]
    aliases: dict[str, str] = field(default_factory=dict)
    dtypes: dict[str, str] = field(default_factory=dict)   # name -> the dtype as stored

    def get(self, name: str) -> np.ndarray:
        """A variable by its name or an alias's."""
        return self.variables[self.aliases.get(name, name)]

    def scalar(self, name: str) -> int:
        """An integer scalar variable (``encoder/num_heads``)."""
        v = self.get(name)
        if v.ndim != 0:
            raise InvalidInput(f"CTranslate2 variable {name!r} is not a scalar (shape {v.shape})")
        return int(v)


class _Reader:
    def __init__(self, data: bytes, where: str):
        self.data, self.off, self.where = memoryview(data), 0, where

    def take(self, n: int, what: str) -> memoryview:
        if n < 0 or self.off + n > len(self.data):
            raise InvalidInput(f"CTranslate2 model {self.where}: truncated at byte {self.off} ({what}: {n} bytes "
                               f"needed, {len(self.data) - self.off} left)")
        out = self.data[self.off:self.off + n]
        self.off += n
        return out

    def uint(self, fmt: str, what: str) -> int:
        return struct.unpack("<" + fmt, self.take(struct.calcsize(fmt), what))[0]

    def string(self, what: str) -> str:
        n = self.uint("H", what)
        raw = bytes(self.take(n, what))
        if n < 1 or raw[-1] != 0:
            raise InvalidInput(f"CTranslate2 model {self.where}: {what} at byte {self.off - n} is not NUL-terminated")
        try:
            return raw[:-1].decode("utf-8")
        except UnicodeDecodeError:
            raise InvalidInput(f"CTranslate2 model {self.where}: {what} at byte {self.off - n} is not UTF-8") from None


def _bfloat16(bits: np.ndarray) -> np.ndarray:
    """bfloat16 bit patterns -> float32, exactly (the high half of a float32)."""
    return (bits.astype(np.uint32) << 16).view(np.float32)


def read_ct2(source: Union[bytes, bytearray, memoryview], where: str = "<bytes>") -> Ct2Model:
    """Parse a ``model.bin`` (its bytes; ``where`` names it in errors). Arrays are copies, never
    views of ``source``."""
    r = _Reader(bytes(source) if not isinstance(source, bytes) else source, where)
    version = r.uint("I", "version")
    if version != VERSION:
        raise InvalidInput(f"CTranslate2 model {where}: binary version {version}, only version {VERSION} is read")
    spec = r.string("spec name")
    revision = r.uint("I", "spec revision")
    count = r.uint("I", "variable count")
    variables: dict[str, np.ndarray] = {}
    dtypes: dict[str, str] = {}
    for i in range(count):
        name = r.string(f"name of variable {i}")
        if name in variables:
            raise InvalidInput(f"CTranslate2 model {where}: variable {name!r} appears twice")
        rank = r.uint("B", f"rank of {name!r}")
        shape = tuple(r.uint("I", f"shape of {name!r}") for _ in range(rank))
        dtype_id = r.uint("B", f"dtype of {name!r}")
        if dtype_id not in DTYPES:
            raise InvalidInput(f"CTranslate2 model {where}: variable {name!r} has unknown dtype id {dtype_id} "
                               f"(known: {', '.join(f'{k} {v}' for k, v in DTYPE_NAMES.items())})")
        nbytes = r.uint("I", f"byte count of {name!r}")
        dt = DTYPES[dtype_id]
        want = int(np.prod(shape, dtype=np.int64)) * dt.itemsize
        if nbytes != want:
            raise InvalidInput(f"CTranslate2 model {where}: variable {name!r} of shape {list(shape)} and dtype "
                               f"{DTYPE_NAMES[dtype_id]} should hold {want} bytes, the file says {nbytes}")
        arr = np.frombuffer(r.take(nbytes, f"data of {name!r}"), dtype=dt).reshape(shape).copy()
        variables[name] = _bfloat16(arr) if dtype_id == 5 else arr
        dtypes[name] = DTYPE_NAMES[dtype_id]
    aliases: dict[str, str] = {}
    for i in range(r.uint("I", "alias count")):
        alias, target = r.string(f"alias {i}"), r.string(f"target of alias {i}")
        if target not in variables:
            raise InvalidInput(f"CTranslate2 model {where}: alias {alias!r} names no variable ({target!r})")
        aliases[alias] = target
    if r.off != len(r.data):
        raise InvalidInput(f"CTranslate2 model {where}: {len(r.data) - r.off} bytes after the aliases (not a "
                           f"version {VERSION} model.bin, or damaged)")
    return Ct2Model(spec, revision, variables, aliases, dtypes)


def write_ct2(spec: str, revision: int, variables: dict[str, np.ndarray], aliases: dict[str, str] = {}) -> bytes:
    """The bytes of a version-6 ``model.bin`` holding ``variables`` (float32, int8, int16, int32,
    float16 arrays) and ``aliases``: what the tests parse back (the layout of the module docstring)."""
    ids = {v: k for k, v in DTYPES.items() if k != 5}
    out = [struct.pack("<I", VERSION)]

    def string(s: str) -> None:
        raw = s.encode("utf-8") + b"\0"
        out.append(struct.pack("<H", len(raw)) + raw)

    string(spec)
    out.append(struct.pack("<II", revision, len(variables)))
    for name, value in variables.items():
        a = np.array(value, order="C")      # (ascontiguousarray would make a scalar 1-d)
        a = a.astype(a.dtype.newbyteorder("<"))
        string(name)
        out.append(struct.pack("<B", a.ndim) + b"".join(struct.pack("<I", d) for d in a.shape))
        out.append(struct.pack("<BI", ids[a.dtype], a.nbytes) + a.tobytes())
    out.append(struct.pack("<I", len(aliases)))
    for alias, target in aliases.items():
        string(alias)
        string(target)
    return b"".join(out)
