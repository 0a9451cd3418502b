"""The CTranslate2 model.bin parser (numerics.sources.ct2) on small files written here, byte by byte:
what it reads back, and each way a file is refused."""
import struct

import numpy as np
import pytest

from numerics.sources.ct2 import VERSION, read_ct2, write_ct2
from theory.errors import InvalidInput


def sample():
    rng = np.random.default_rng(0)
    return {"enc/w": rng.standard_normal((3, 4)).astype(np.float16), "enc/b": np.arange(4, dtype=np.float32),
            "heads": np.array(8, dtype=np.int16), "flag": np.array(1, dtype=np.int8), "ids": np.arange(5, dtype=np.int32)}


def test_round_trip_every_dtype_shape_and_alias():
    v = sample()
    m = read_ct2(write_ct2("WhisperSpec", 3, v, {"proj": "enc/w"}), "t")
    assert (m.spec, m.revision, list(m.variables)) == ("WhisperSpec", 3, list(v))
    for k, a in v.items():
        assert m.variables[k].dtype == a.dtype and m.variables[k].shape == a.shape
        assert np.array_equal(m.variables[k], a)
    assert m.get("proj") is m.variables["enc/w"] and m.scalar("heads") == 8
    assert m.dtypes["enc/w"] == "float16" and m.dtypes["heads"] == "int16"


def test_layout_is_the_documented_one():
    blob = write_ct2("S", 7, {"x": np.array([1.5], dtype=np.float32)})
    want = (struct.pack("<I", VERSION) + struct.pack("<H", 2) + b"S\0" + struct.pack("<II", 7, 1)
            + struct.pack("<H", 2) + b"x\0" + struct.pack("<BI", 1, 1) + struct.pack("<BI", 0, 4)
            + struct.pack("<f", 1.5) + struct.pack("<I", 0))
    assert blob == want


def test_bfloat16_is_widened_exactly():
    bits = np.array([0x3F80, 0xC040, 0x0001], dtype="<u2")        # 1.0, -3.0, the smallest subnormal
    blob = bytearray(write_ct2("S", 1, {"x": bits.view(np.int16)}))
    blob[blob.index(b"x\0") + 2 + 1 + 4] = 5                      # the dtype id: int16 -> bfloat16
    x = read_ct2(bytes(blob)).variables["x"]
    assert x.dtype == np.float32 and x[0] == 1.0 and x[1] == -3.0 and x[2] == np.float32(2.0 ** -133)


@pytest.mark.parametrize("cut", [3, 10, 30, -5, -1])
def test_truncated_file_is_refused(cut):
    blob = write_ct2("S", 1, sample(), {"a": "ids"})
    with pytest.raises(InvalidInput, match="truncated|bytes after|NUL"):
        read_ct2(blob[:cut] if cut > 0 else blob[:len(blob) + cut], "f.bin")


def test_other_version_trailing_bytes_bad_count_alias_and_dtype_refused():
    blob = write_ct2("S", 1, {"x": np.zeros(2, dtype=np.float32)})
    with pytest.raises(InvalidInput, match="binary version 5"):
        read_ct2(struct.pack("<I", 5) + blob[4:])
    with pytest.raises(InvalidInput, match="2 bytes after the aliases"):
        read_ct2(blob + b"\0\0")
    bad = bytearray(blob)
    at = bad.index(b"x\0") + 2 + 1 + 4 + 1                     # the byte count
    bad[at:at + 4] = struct.pack("<I", 4)
    with pytest.raises(InvalidInput, match="should hold 8 bytes, the file says 4"):
        read_ct2(bytes(bad))
    bad = bytearray(blob)
    bad[bad.index(b"x\0") + 2 + 1 + 4] = 9
    with pytest.raises(InvalidInput, match="unknown dtype id 9"):
        read_ct2(bytes(bad))
    with pytest.raises(InvalidInput, match="names no variable"):
        read_ct2(write_ct2("S", 1, {"x": np.zeros(2, dtype=np.float32)}, {"y": "z"}))
    twice = write_ct2("S", 1, {"x": np.zeros(1, dtype=np.float32), "y": np.zeros(1, dtype=np.float32)})
    with pytest.raises(InvalidInput, match="appears twice"):
        read_ct2(twice.replace(b"y\0", b"x\0"))
