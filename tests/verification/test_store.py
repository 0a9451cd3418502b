"""Results store: transactional chunks, resume, provenance, clear errors."""
import sqlite3

import pytest

from theory.verdicts import Verdict
from verification.store import Record, ResultStore


def recs(k, n=3):
    return [Record("dobrushin.factor", f"{k}/{i}", Verdict.HOLDS, slack=0.1 * i, provenance={"seed": k})
            for i in range(n)]


def test_write_read_and_resume(tmp_path):
    path = tmp_path / "r.db"
    with ResultStore(path) as s:
        s.write_chunk("camp", "c0", recs(0))
        s.write_chunk("camp", "c1", recs(1))
    with ResultStore(path) as s:                         # a new process sees what was done
        assert s.done_chunks("camp") == {"c0", "c1"}
        rows = list(s.records("camp"))
        assert len(rows) == 6 and rows[0]["provenance"] == {"seed": 0}
        assert rows[0]["versions"]["numpy"] != "absent" and rows[0]["verdict"] == "holds"


def test_a_campaign_never_mixes_kernel_modes(tmp_path):
    import json

    from theory.errors import InvalidInput

    path = tmp_path / "r.db"
    with ResultStore(path) as s:
        s.write_chunk("camp", "c0", recs(0))
        s.write_chunk("camp", "c1", recs(1))             # the same mode: a resume
        s.write_chunk("camp", "c0", recs(0))             # a chunk recomputed in place: its own content does not count
    native = ResultStore(path)
    v = json.loads(native._versions)
    assert v["kernels"].startswith("pinned")             # the suite runs pinned (numerics.pins)
    native._versions = json.dumps(dict(v, kernels="native (ATTNBOUNDS_NATIVE_KERNELS=1)"), sort_keys=True)
    with pytest.raises(InvalidInput, match=r"campaign 'camp' holds chunks computed with pinned kernels.*native"):
        native.write_chunk("camp", "c2", recs(2))
    native.write_chunk("other", "c0", recs(0))           # another campaign: its own mode
    assert native.done_chunks("camp") == {"c0", "c1"}
    native.close()
    with ResultStore(path) as s, pytest.raises(InvalidInput, match="holds chunks computed with native kernels"):
        s.write_chunk("other", "c1", recs(1))


def test_the_kernel_mode_guard_reads_only_verified_chunks(tmp_path):
    """An edited ``versions`` field (a pinned campaign's records said native) makes those chunks
    unverified: the guard neither trusts them (a pinned resume goes on and recomputes them, giving
    the untouched store's content) nor lets a native run join the verified pinned chunks."""
    import json

    from theory.errors import InvalidInput
    from verification import campaign
    from verification.campaign import Chunk

    def plan():
        return [Chunk(f"c{k}", recs, (k,)) for k in range(3)]

    def content(path):
        with sqlite3.connect(path) as con:
            return con.execute("SELECT chunk, instance, verdict, slack, provenance FROM records ORDER BY 1, 2").fetchall()

    path = tmp_path / "r.db"
    with ResultStore(path) as s:
        campaign.run(s, "camp", plan(), progress=False)
    before = content(path)
    with sqlite3.connect(path) as con:
        assert con.execute("UPDATE records SET versions = replace(versions, '\"kernels\": \"pinned', "
                           "'\"kernels\": \"native') WHERE chunk IN ('c0', 'c1')").rowcount == 6
    native = ResultStore(path)
    v = json.loads(native._versions)
    native._versions = json.dumps(dict(v, kernels="native (ATTNBOUNDS_NATIVE_KERNELS=1)"), sort_keys=True)
    with pytest.raises(InvalidInput, match="holds chunks computed with pinned kernels"):   # c2, the verified one
        campaign.run(native, "camp", plan(), progress=False)
    native.close()
    with ResultStore(path) as s:                         # pinned, as the campaign was: the edited chunks again
        res = campaign.run(s, "camp", plan(), progress=False)
        assert (res.computed, res.recomputed) == (2, 2) and s.done_chunks("camp") == {"c0", "c1", "c2"}
        assert all(r["versions"]["kernels"].startswith("pinned") for r in s.records("camp"))
    assert content(path) == before


def test_failed_chunk_leaves_nothing(tmp_path):
    s = ResultStore(tmp_path / "r.db")
    s.write_chunk("camp", "c0", recs(0))
    broken = recs(5)
    broken[2].instance = {"not": "a string"}             # sqlite refuses this row mid-chunk
    with pytest.raises(sqlite3.Error):
        s.write_chunk("camp", "c5", broken)
    assert s.done_chunks("camp") == {"c0"} and s.count("camp") == 3   # nothing of c5 was kept


def test_unknown_verdict_is_refused():
    with pytest.raises(ValueError):
        Record("x.y", "i", "probably")


def test_corrupt_file_is_a_clear_error(tmp_path):
    p = tmp_path / "bad.db"
    p.write_bytes(b"this is not sqlite at all" * 100)
    with pytest.raises(ValueError, match="not a usable SQLite database"):
        ResultStore(p)
