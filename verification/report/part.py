"""What a family gives the paper: tables, figures and the numbers the prose quotes, all read from
stored records (never recomputed).

Every family package exposes ``paper_part(store, seed=0, full=False) -> Part``. The paper builder
(:mod:`verification.paper`) writes each :class:`Table` to ``paper/tables/<name>.tex`` (pandas
``Styler.to_latex`` with booktabs), draws each :class:`Figure` to ``paper/figures/<name>.pdf``
and ``.png``, and writes every macro to ``paper/generated/macros.tex`` as
``\\newcommand{\\Name}{value}``. A number the prose needs that the store lacks is an error naming
the missing campaign (:class:`MissingCampaign`), never a blank.

Complete campaigns only: every family package also exposes ``needs(store, seed=0, full=False) ->
list[Need]``, the campaigns its part reads and the chunk keys the main job's plan defines for each
(from the plan code the family's command runs; where the plan itself depends on stored answers, as
prove's levels or the random baselines at the measured token counts, on the store, never
recomputed). Before any part is built, the builder refuses a store where one of them is absent or
lacks a chunk or holds one whose content does not match its mark (:func:`check_needs`: one
:class:`IncompleteCampaigns`, one short line naming the first campaigns with what is wrong and the
command that fills them, and how many more).

Words guarded by data: a qualitative sentence whose truth depends on the store ("always", "most",
"all within the noise floor", "layers 0-4") is written in the prose as ``\\Guard{Key}{sentence}``
(or in the README's template as ``{{ guard("Key", "sentence") }}``) and its family registers the
condition with :meth:`Part.guard`; the builder fails, naming the sentence, when the condition is
false on the store or when no family guards the key. Words that can be computed are macros whose
text is computed (:meth:`Part.macro` with a string).

>>> macro_name("D1", "share", "MiniLM", "last layer")
'DOneShareMiniLMLastLayer'
>>> macro_name("n=3", "time s")
'NThreeTimeS'
"""
from __future__ import annotations

from dataclasses import dataclass, field
from itertools import groupby
from typing import Any, Callable, Optional

from theory.errors import InvalidInput
from verification.report.tables import Table  # noqa: F401  (one table class for every output)

_DIGITS = ("Zero", "One", "Two", "Three", "Four", "Five", "Six", "Seven", "Eight", "Nine")


class MissingCampaign(InvalidInput):
    """The store lacks a campaign the paper needs: say which, and which command fills it.

    ``missing`` lists every (campaign, command) pair; :meth:`combine` joins the errors of several
    families into one message (``campaign`` and ``command`` are then the first pair's).

    >>> e = MissingCampaign.combine([MissingCampaign("a", "attnbounds x"), MissingCampaign("b", "attnbounds y")])
    >>> e.missing
    [('a', 'attnbounds x'), ('b', 'attnbounds y')]
    >>> print(e)
    the store has no records of 2 campaigns the paper needs (it never recomputes): 'a' (run `attnbounds x`); 'b' (run `attnbounds y`)
    """

    def __init__(self, campaign: str, command: str):
        super().__init__(f"the store has no records of campaign {campaign!r}: run `{command}` first "
                         f"(the paper never recomputes)")
        self.campaign, self.command = campaign, command
        self.missing: list[tuple[str, str]] = [(campaign, command)]

    @classmethod
    def combine(cls, errors: "list[MissingCampaign]") -> "MissingCampaign":
        """One error naming every missing campaign of ``errors`` (in order, without repeats)."""
        pairs = list(dict.fromkeys(p for e in errors for p in e.missing))
        if len(pairs) == 1:
            return cls(*pairs[0])
        err = cls(*pairs[0])
        err.missing = pairs
        err.args = (f"the store has no records of {len(pairs)} campaigns the paper needs (it never "
                    "recomputes): " + "; ".join(f"{c!r} (run `{cmd}`)" for c, cmd in pairs),)
        return err


@dataclass(frozen=True)
class Need:
    """A campaign the paper reads and the chunk keys the main job's plan defines for it (built by
    each family's ``needs(store, seed, full)`` from the plan code its command runs, nothing
    computed): the paper is built only when every key is stored (:func:`check_needs`).

    ``prefix``: ``campaign`` is the beginning of the name (the fingerprint of the weights measured
    follows), resolved in the store as the paper part resolves it (:func:`resolve`): ``pick="most"``
    the stored campaign of that prefix holding the most of ``chunks`` (ties: the first name),
    ``"newest"`` the one written last."""

    family: str
    campaign: str
    chunks: frozenset
    command: str
    prefix: bool = False
    pick: str = "most"

    def shown(self) -> str:
        return self.campaign + ("<fingerprint>" if self.prefix else "")


def stored_campaigns(store: Any, prefix: str) -> dict[str, float]:
    """The campaigns of ``store`` whose name starts with ``prefix`` -> when their last chunk was
    stored (read from the store's chunk table: chunk marks, not records)."""
    return store.campaigns(prefix)


def resolve(store: Any, need: Need) -> tuple[Optional[str], set[str]]:
    """The stored campaign ``need`` names (None: nothing stored) and its stored chunk keys."""
    if not need.prefix:
        done = store.done_chunks(need.campaign)
        if not done and hasattr(store, "chunk_check") and store.chunk_check(need.campaign).problems:
            return need.campaign, done      # stored, but no chunk as its mark says (named as such)
        return (need.campaign if done else None), done
    found = stored_campaigns(store, need.campaign)
    if not found:
        return None, set()
    done = {c: store.done_chunks(c) for c in sorted(found)}
    if need.pick == "newest":
        best = max(done, key=lambda c: found[c])
    else:
        best = max(done, key=lambda c: len(done[c] & need.chunks))
    return best, done[best]


def complete(store: Any, need: Need) -> Optional[str]:
    """The stored campaign of ``need`` when it holds every chunk of ``need``, else None."""
    name, done = resolve(store, need)
    return name if name is not None and need.chunks <= done else None


class IncompleteCampaigns(MissingCampaign):
    """Campaigns the paper reads that are absent, lack chunks of the main job's plan or hold chunks
    whose content does not match their marks, in one line (``str``; on the command line a short
    ``headline``, how many and the command to run, and ``details`` below it): the first :data:`SHOWN` (those
    partly stored first: a run that stopped or a chunk edited by hand, then the absent ones), each
    with its family (and the others that read it), what is wrong and the command that fills it,
    then how many more, of which families, and the one command that fills them all (``fills_all``:
    the main job's, when the paper reads the main job only) or else every other command that fills
    them, the first :data:`SHOWN` named.
    ``gaps``: one dict per campaign (family, readers, campaign, stored, total, missing, altered,
    unmarked, command)."""

    SHOWN = 3

    def __init__(self, gaps: list[dict], fills_all: Optional[str] = None):
        ordered = sorted(gaps, key=lambda g: g["stored"] is None)        # stable: plan order otherwise
        shown, rest = ordered[:self.SHOWN], ordered[self.SHOWN:]
        # (family, command) -> readers -> each campaign and its state: a command is named once, after
        # every campaign shown that it fills, grouped by the other families that read them
        groups: dict[tuple, dict[tuple, list[str]]] = {}
        for g in shown:
            groups.setdefault((g["family"], g["command"]), {}).setdefault(tuple(g["readers"]), []).append(
                f"{g['campaign']!r} {gap_state(g)}")
        lines = ["; ".join(family + (f" (also read by {', '.join(readers)})" if readers else "") + ": "
                           + ", ".join(states) for readers, states in by_readers.items())
                 + f" (run `{command}`)" for (family, command), by_readers in groups.items()]
        if rest:
            named = {command for _, command in groups}
            commands = list(dict.fromkeys(g["command"] for g in rest if g["command"] not in named))
            listed = f"`{'`, `'.join(commands[:self.SHOWN])}`" + (
                f" and {len(commands) - self.SHOWN} more commands" if len(commands) > self.SHOWN else "")
            more = f"; `{fills_all}` fills them all" if fills_all else f"; run {listed}" if commands else ""
            lines.append(f"and {len(rest)} more (of {', '.join(dict.fromkeys(g['family'] for g in rest))}{more})")
        head = "the paper reads only complete campaigns of the main job (it never recomputes)"
        super().__init__(gaps[0]["campaign"], gaps[0]["command"])
        self.missing = [(g["campaign"], g["command"]) for g in gaps]
        self.gaps = gaps
        self.args = (head + (f"; {len(gaps)} are not: " if len(gaps) > 1 else ": ") + "; ".join(lines),)
        # on the command line (verification.options.fail): a short first line, how many and the one
        # command that fills them all (if there is one), then these lines below it
        every = list(dict.fromkeys(g["command"] for g in gaps))
        sole = fills_all or (every[0] if len(every) == 1 else None)
        run = f"run `{sole}`" if sole else f"run the commands named below ({len(every)})"
        self.headline = (f"the paper needs {len(gaps)} complete campaign{'s' * (len(gaps) > 1)} the store lacks "
                         f"(it never recomputes): {run}")
        self.details = lines


def gap_state(g: dict) -> str:
    """What is wrong with one campaign of :class:`IncompleteCampaigns`: ``absent``, or how many of
    its plan's chunks are stored and, for each kind of gap, how many and the first (missing: no
    mark; not matching its mark, with what differs; content under a key without a mark)."""
    if g["stored"] is None:
        return "absent"
    parts = []
    if g["missing"]:
        parts.append(f"{len(g['missing'])} missing, e.g. {g['missing'][0]!r}")
    if g.get("altered"):
        (key, why), n = next(iter(g["altered"].items())), len(g["altered"])
        parts.append(f"{n} not matching {'their marks' if n > 1 else 'its mark'}, e.g. {key!r} {why}")
    if g.get("unmarked"):
        (key, why), n = next(iter(g["unmarked"].items())), len(g["unmarked"])
        parts.append(f"{n} key{'s' * (n > 1)} with content but no mark, e.g. {key!r} {why}")
    return f"{g['stored']} of {g['total']} chunks stored" + (f" ({'; '.join(parts)})" if parts else "")


def check_needs(store: Any, needs: list[Need], fills_all: Optional[str] = None) -> None:
    """Refuse, with one :class:`IncompleteCampaigns` naming each campaign once, when a campaign of
    ``needs`` is absent from ``store``, lacks a chunk its plan defines, holds one whose content does
    not match its mark (:meth:`~verification.store.ResultStore.chunk_check`: a record or summary
    deleted or edited, a chunk moved or copied from elsewhere; under a key of the plan or not) or
    content under a key without a mark; a campaign several families read is
    listed under the first, with its command, and the others named. ``fills_all``: the one command
    that fills every campaign of ``needs`` (the main job), named instead of the commands of the
    campaigns the line has no room for.

    >>> from verification.store import ResultStore
    >>> with ResultStore(":memory:") as s:
    ...     n = s.write_chunk("c", "k0", [])
    ...     try:
    ...         check_needs(s, [Need("toy", "c", frozenset({"k0", "k1", "k2"}), "attnbounds toy")])
    ...     except IncompleteCampaigns as exc:
    ...         print(exc)
    the paper reads only complete campaigns of the main job (it never recomputes): toy: 'c' 1 of 3 chunks stored (2 missing, e.g. 'k1') (run `attnbounds toy`)
    """
    merged: dict[tuple, list] = {}           # (campaign, prefix, pick) -> [need, readers]
    for need in needs:
        key = (need.campaign, need.prefix, need.pick)
        if key not in merged:
            merged[key] = [need, []]
            continue
        first, readers = merged[key]
        merged[key][0] = Need(first.family, first.campaign, first.chunks | need.chunks, first.command,
                              first.prefix, first.pick)
        if need.family != first.family and need.family not in readers:
            readers.append(need.family)
    gaps = []
    for need, readers in merged.values():
        if not need.chunks:                  # the plan defines no chunk here (nothing to read)
            continue
        name, done = resolve(store, need)
        # a chunk is stored when its content matches its mark (verification.chunk_marks); a mark its
        # content does not match, in the plan or not, and content under a key with no mark are nobody's,
        # and refused too (a reader may read every record of a campaign): a resume recomputes or removes them
        checked = store.chunk_check(name) if name is not None and hasattr(store, "chunk_check") else None
        problems = checked.problems if checked is not None else {}
        altered = {k: problems[k] for k in sorted(problems, key=lambda k: (k not in need.chunks, k))
                   if k not in checked.unmarked}
        unmarked = {k: problems[k] for k in sorted(checked.unmarked)} if checked is not None else {}
        missing = sorted(need.chunks - done - set(altered))
        if name is not None and not missing and not altered and not unmarked:
            continue
        gaps.append(dict(family=need.family, readers=readers, campaign=name or need.shown(), command=need.command,
                         stored=None if name is None else len(need.chunks & done), total=len(need.chunks),
                         missing=missing, altered=altered, unmarked=unmarked))
    if gaps:
        raise IncompleteCampaigns(gaps, fills_all)


def frame(rows: list, cols: list) -> Any:
    """A DataFrame of report rows, every number formatted by
    :func:`verification.report.tables.fmt` (deterministic strings)."""
    import pandas as pd

    from verification.report.tables import fmt

    return pd.DataFrame([[c if isinstance(c, str) else fmt(c) for c in row] for row in rows], columns=list(cols))


def macro_name(*parts: Any) -> str:
    """A LaTeX macro name (letters only) from words and numbers: digits become words, each word
    is capitalised, anything else separates words."""
    words = []
    for part in parts:               # runs of ASCII letters are words, each ASCII digit a word of its own
        kinds = ("a" if c.isascii() and c.isalpha() else "0" if c.isascii() and c.isdigit() else " " for c in str(part))
        for kind, run in groupby(zip(kinds, str(part)), key=lambda kc: kc[0]):
            text = "".join(c for _, c in run)
            pieces = [text] if kind == "a" else [_DIGITS[int(d)] for d in text] if kind == "0" else []
            words += [p[0].upper() + p[1:] for p in pieces]
    if not words:
        raise ValueError(f"no letters or digits in macro parts {parts!r}")
    return "".join(words)


CLAIM_COLUMNS = ("claim, in the paper's words", "the paper", "design here", "here", "outcome")
"""The columns of a reproduction report's claims table (:func:`claims_table`)."""


def claims_table(name: str, rows: list, caption: str, provenance: str, **made: Any) -> Table:
    """A reproduction report's first table: per claim, the claim in the paper's words, the paper's
    own number (or "-" where it states none), this suite's design, its number with its interval, and
    the outcome (supported, refuted, inconclusive, not-testable; a statement the paper proves, checked
    here, says "holds (certified)")."""
    import pandas as pd

    for row in rows:
        if len(row) != len(CLAIM_COLUMNS):
            raise ValueError(f"claims table {name}: a row needs {len(CLAIM_COLUMNS)} cells, got {row!r}")
    return Table(name, pd.DataFrame([list(r) for r in rows], columns=list(CLAIM_COLUMNS)), caption, provenance,
                 wrap=8, **made)


@dataclass
class Figure:
    """One figure: ``draw(ax)`` draws on a matplotlib axis, deterministically (no timestamps). Its
    provenance goes to the file metadata and the paper's appendix, never into the plot area."""

    name: str
    draw: Callable[[Any], None]
    caption: str
    provenance: str = ""
    campaigns: tuple = ()     # the campaigns it is drawn from
    command: str = ""         # the command that fills them (default: the part's commands)
    size: Optional[tuple] = None   # inches as printed (default verification.report.figures.COLUMN; HALF: two side by side)


@dataclass(frozen=True)
class Guard:
    """A qualitative sentence's condition on the store: ``holds`` computed from stored records,
    ``detail`` the numbers it was decided on (printed when it fails)."""

    key: str
    holds: bool
    detail: str = ""


@dataclass
class Part:
    """A family's contribution to the paper."""

    family: str
    tables: list[Table] = field(default_factory=list)
    figures: list[Figure] = field(default_factory=list)
    macros: dict[str, Any] = field(default_factory=dict)   # macro name -> number or short text
    data_tables: list[Table] = field(default_factory=list)  # written as data only (CSV, Markdown), never typeset
    commands: list[str] = field(default_factory=list)      # commands that fill its campaigns
    guards: dict[str, Guard] = field(default_factory=dict)  # \Guard key -> its condition

    def guard(self, holds: Any, *name_parts: Any, detail: str = "") -> bool:
        """Register the condition of the prose's ``\\Guard{Key}{...}`` sentences, ``Key =
        macro_name(*name_parts)``; returns ``holds`` as a bool.

        >>> part = Part("toy")
        >>> part.guard(3 > 2, "toy", "all tight", detail="3 of 3")
        True
        >>> part.guards["ToyAllTight"]
        Guard(key='ToyAllTight', holds=True, detail='3 of 3')
        """
        key = macro_name(*name_parts)
        if key in self.guards:
            raise ValueError(f"guard {key} registered twice by {self.family}")
        self.guards[key] = Guard(key, bool(holds), detail)
        return bool(holds)

    def macro(self, value: Any, *name_parts: Any) -> Any:
        """Record ``value`` under ``macro_name(*name_parts)`` and return it."""
        self.macros[macro_name(*name_parts)] = value
        return value
