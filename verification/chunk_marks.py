"""What a chunk mark vouches for: the content its chunk wrote, checked by every reader.

:meth:`verification.store.ResultStore.write_chunk` stores a chunk's records and summaries and its
*mark* (a row of the ``chunks`` table) in one transaction. The mark carries what the chunk wrote:
``n`` (its records), ``summaries`` (its summaries) and ``digest``, a SHA-256 that binds the
campaign's name, the chunk's key and the chunk's stored content (every other column but the row id,
read back from the store in key order: records by theorem and instance, summaries by theorem), so
that a chunk edited after it was stored is told from a complete one, and so is a chunk moved to
another key or copied under another campaign's name together with its mark. :func:`check` reads a
campaign's marks and content in one pass (SQL ordered by chunk, one hash per chunk) and says, per
mark, whether the content matches it: a record or summary deleted, added, moved to another chunk or
edited (a count, a slack, a verdict), or a whole chunk filed under a key or campaign it was not
computed for, makes its chunk *incomplete*.

What the digest does not do: it is not a signature. Whoever edits a store and recomputes the digest
with this module's own function makes a forged chunk verify; the digest tells edits, moves, copies
and accidents from a complete chunk, not a deliberate forger.

A mark written before digests bound their campaign and key (a store of schema version 1 or 2, or
unstamped: the first open for writing sets its ``digest`` to NULL) cannot be verified and counts as
incomplete: resuming recomputes it (the same records as before, the chunks being deterministic) and
writes a verifiable mark; the paper refuses it until then. Content under a chunk key with no mark at
all (a mark deleted by hand) is reported too.

>>> import sqlite3
>>> from verification.store_file import SCHEMA
>>> db = sqlite3.connect(":memory:")
>>> _ = db.executescript(SCHEMA)
>>> _ = db.execute("INSERT INTO chunks VALUES ('camp', 'c0', 0, 0, 0, ?)", (empty_digest("camp", "c0"),))
>>> check(db, "camp")
Checked(verified=frozenset({'c0'}), problems={}, unmarked=frozenset())
>>> _ = db.execute("UPDATE chunks SET chunk = 'c1'")       # the same (empty) content, filed under another key
>>> check(db, "camp").problems
{'c1': "was edited after it was stored or filed under another key or campaign (its content differs from its mark's digest)"}
>>> _ = db.execute("UPDATE chunks SET chunk = 'c0', n = 2")
>>> check(db, "camp").problems
{'c0': 'has 0 records, its mark says 2'}
"""
from __future__ import annotations

import hashlib
import sqlite3
from itertools import groupby
from operator import itemgetter
from typing import NamedTuple, Optional

# the stored columns a digest covers, in this order (everything but the row id; campaign and chunk,
# the key the digest is filed under, are bound by digest_of)
RECORD_COLUMNS = ("theorem, instance, verdict, slack, value, bound, backend, dtype, provenance, extra, "
                  "versions, created")
SUMMARY_COLUMNS = "theorem, body, versions, created"
UNVERIFIABLE = ("was written before chunk digests bound their campaign and key (schema version 1 or 2) and cannot "
                "be verified")
EDITED = ("was edited after it was stored or filed under another key or campaign (its content differs from its "
          "mark's digest)")
RECIPE = b"attnbounds chunk mark, schema version 3\n"     # changes with the digest's recipe (and the schema version)


class Checked(NamedTuple):
    """A campaign's chunk marks, checked against what is stored: ``verified``, the chunk keys whose
    content matches their mark; ``problems``, chunk key -> what is wrong, for every other mark and for
    content stored under a key that has no mark (``unmarked``, those keys)."""

    verified: frozenset
    problems: dict
    unmarked: frozenset = frozenset()


def digest_of(campaign: str, chunk: str, records: bytes, summaries: bytes) -> str:
    """The digest of chunk ``chunk`` of ``campaign`` from the SHA-256 digests of its records' and its
    summaries' rows: the names are bound with the content (``repr`` of the pair: unambiguous)."""
    key = repr((str(campaign), str(chunk))).encode("utf-8", "surrogatepass")
    return hashlib.sha256(RECIPE + key + b"\nrecords\n" + records + b"summaries\n" + summaries).hexdigest()


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
        out[key] = (nr, ns, digest_of(campaign, key, hr, hs))
    return out


def empty_digest(campaign: str, chunk: str) -> str:
    """The digest of chunk ``chunk`` of ``campaign`` when it wrote nothing."""
    return digest_of(campaign, chunk, _EMPTY, _EMPTY)


def check(db: sqlite3.Connection, campaign: str, digests: bool = True, summaries: bool = True) -> Checked:
    """Every chunk mark of ``campaign`` checked against the content stored under its key (see the
    module docstring), in one pass. ``digests``: whether the marks are of today's recipe (a store of
    schema version :data:`~verification.store_file.SCHEMA_VERSION`; otherwise every mark is
    unverifiable); ``summaries``: whether the store has that table."""
    cols = "chunk, n, summaries, digest" if digests else "chunk, n, NULL, NULL"
    marks = db.execute(f"SELECT {cols} FROM chunks WHERE campaign = ?", (campaign,)).fetchall()
    stored = content(db, campaign, summaries=summaries)
    verified, problems = set(), {}
    for key, n, n_sums, digest in marks:
        nr, ns, have = stored.get(key, (0, 0, empty_digest(campaign, key)))
        if digest is None or n_sums is None:
            problems[key] = UNVERIFIABLE
        elif nr != n:
            problems[key] = f"has {nr} record{'s' * (nr != 1)}, its mark says {n}"
        elif ns != n_sums:
            problems[key] = f"has {ns} summar{'ies' if ns != 1 else 'y'}, its mark says {n_sums}"
        elif have != digest:
            problems[key] = EDITED
        else:
            verified.add(key)
    unmarked = sorted(stored.keys() - {m[0] for m in marks})
    for key in unmarked:
        nr, ns, _ = stored[key]
        problems[key] = (f"holds {nr} record{'s' * (nr != 1)} and {ns} summar{'ies' if ns != 1 else 'y'} "
                         "but no chunk mark")
    return Checked(frozenset(verified), problems, frozenset(unmarked))
