"""What a chunk mark vouches for: the content its chunk wrote, checked by every reader.

:meth:`verification.store.ResultStore.write_chunk` stores a chunk's records and summaries and its
*mark* (a row of the ``chunks`` table) in one transaction. The mark carries what the chunk wrote:
``n`` (its records), ``summaries`` (its summaries) and ``digest``, a SHA-256 of their stored content
(every column but the row id, read back from the store in key order: records by theorem and
instance, summaries by theorem), so that a chunk edited after it was stored is told from a complete
one. :func:`check` reads a campaign's marks and content in one pass (SQL ordered by chunk, one hash
per chunk) and says, per mark, whether the content matches it: a record or summary deleted, added,
moved to another chunk or edited (a count, a slack, a verdict) makes its chunk *incomplete*.

A mark written before digests (a store of schema version 1, or unstamped: its ``digest`` is NULL)
cannot be verified and counts as incomplete: resuming recomputes it (the same records as before,
the chunks being deterministic) and writes a verifiable mark; the paper refuses it until then.
Content under a chunk key with no mark at all (a mark deleted by hand) is reported too.

>>> import sqlite3
>>> from verification.store_file import SCHEMA
>>> db = sqlite3.connect(":memory:")
>>> _ = db.executescript(SCHEMA)
>>> _ = db.execute("INSERT INTO chunks VALUES ('camp', 'c0', 0, 0, 0, ?)", (empty_digest(),))
>>> check(db, "camp")
Checked(verified=frozenset({'c0'}), problems={}, unmarked=frozenset())
>>> _ = db.execute("UPDATE chunks SET n = 2")
>>> check(db, "camp").problems
{'c0': 'has 0 records, its mark says 2'}
"""
from __future__ import annotations

import hashlib
import sqlite3
from itertools import groupby
from operator import itemgetter
from typing import NamedTuple, Optional

# the stored columns a digest covers, in this order (everything but the row id; campaign and chunk
# are the key the digest is filed under)
RECORD_COLUMNS = ("theorem, instance, verdict, slack, value, bound, backend, dtype, provenance, extra, "
                  "versions, created")
SUMMARY_COLUMNS = "theorem, body, versions, created"
UNVERIFIABLE = "was written before chunk digests (schema version 1) and cannot be verified"


class Checked(NamedTuple):
    """A campaign's chunk marks, checked against what is stored: ``verified``, the chunk keys whose
    content matches their mark; ``problems``, chunk key -> what is wrong, for every other mark and for
    content stored under a key that has no mark (``unmarked``, those keys)."""

    verified: frozenset
    problems: dict
    unmarked: frozenset = frozenset()


def digest_of(records: bytes, summaries: bytes) -> str:
    """The digest of a chunk from the SHA-256 digests of its records' and its summaries' rows."""
    return hashlib.sha256(b"records\n" + records + b"summaries\n" + summaries).hexdigest()


_EMPTY = hashlib.sha256(b"").digest()


def _hashed(cur: sqlite3.Cursor) -> dict[str, tuple[int, bytes]]:
    """Rows ``(chunk, ...)`` ordered by chunk -> chunk -> (rows, SHA-256 of their ``repr`` lines)."""
    out = {}
    for key, rows in groupby(cur, key=itemgetter(0)):
        lines = [repr(r[1:]) for r in rows]
        out[key] = (len(lines), hashlib.sha256("\n".join(lines).encode("utf-8", "surrogatepass")).digest())
    return out


def content(db: sqlite3.Connection, campaign: str, chunk: Optional[str] = None,
            summaries: bool = True) -> dict[str, tuple[int, int, str]]:
    """What is stored under ``campaign`` (one ``chunk`` when given), per chunk key that holds
    anything: (records, summaries, digest). ``summaries``: whether the store has that table."""
    where, args = ("campaign = ?", (campaign,)) if chunk is None else ("campaign = ? AND chunk = ?", (campaign, chunk))
    recs = _hashed(db.execute(f"SELECT chunk, {RECORD_COLUMNS} FROM records WHERE {where} "
                              "ORDER BY chunk, theorem, instance", args))
    sums = _hashed(db.execute(f"SELECT chunk, {SUMMARY_COLUMNS} FROM summaries WHERE {where} "
                              "ORDER BY chunk, theorem", args)) if summaries else {}
    out = {}
    for key in recs.keys() | sums.keys():
        (nr, hr), (ns, hs) = recs.get(key, (0, _EMPTY)), sums.get(key, (0, _EMPTY))
        out[key] = (nr, ns, digest_of(hr, hs))
    return out


def empty_digest() -> str:
    """The digest of a chunk that wrote nothing."""
    return digest_of(_EMPTY, _EMPTY)


def check(db: sqlite3.Connection, campaign: str, digests: bool = True, summaries: bool = True) -> Checked:
    """Every chunk mark of ``campaign`` checked against the content stored under its key (see the
    module docstring), in one pass. ``digests``: whether the ``chunks`` table has the columns of
    schema version 2 (without them every mark is unverifiable); ``summaries``: whether the store
    has that table."""
    cols = "chunk, n, summaries, digest" if digests else "chunk, n, NULL, NULL"
    marks = db.execute(f"SELECT {cols} FROM chunks WHERE campaign = ?", (campaign,)).fetchall()
    stored = content(db, campaign, summaries=summaries)
    verified, problems = set(), {}
    for key, n, n_sums, digest in marks:
        nr, ns, have = stored.get(key, (0, 0, empty_digest()))
        if digest is None or n_sums is None:
            problems[key] = UNVERIFIABLE
        elif nr != n:
            problems[key] = f"has {nr} record{'s' * (nr != 1)}, its mark says {n}"
        elif ns != n_sums:
            problems[key] = f"has {ns} summar{'ies' if ns != 1 else 'y'}, its mark says {n_sums}"
        elif have != digest:
            problems[key] = "was edited after it was stored (its content differs from its mark's digest)"
        else:
            verified.add(key)
    unmarked = sorted(stored.keys() - {m[0] for m in marks})
    for key in unmarked:
        nr, ns, _ = stored[key]
        problems[key] = (f"holds {nr} record{'s' * (nr != 1)} and {ns} summar{'ies' if ns != 1 else 'y'} "
                         "but no chunk mark")
    return Checked(frozenset(verified), problems, frozenset(unmarked))
