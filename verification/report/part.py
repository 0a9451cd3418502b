"""What a family gives the paper: tables, figures and the numbers the prose quotes, all read from
stored records (never recomputed).

Every family package exposes ``paper_part(store, seed=0, full=False) -> Part``. The paper builder
(:mod:`verification.paper`) writes each :class:`Table` to ``paper/tables/<name>.tex`` (pandas
``Styler.to_latex`` with booktabs), draws each :class:`Figure` to ``paper/figures/<name>.pdf``
and ``.png``, and writes every macro to ``paper/generated/macros.tex`` as
``\\newcommand{\\Name}{value}``. A number the prose needs that the store lacks is an error naming
the missing campaign (:class:`MissingCampaign`), never a blank.

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

import re
from dataclasses import dataclass, field
from typing import Any, Callable

from verification.report.tables import Table  # noqa: F401  (one table class for every output)

_DIGITS = ("Zero", "One", "Two", "Three", "Four", "Five", "Six", "Seven", "Eight", "Nine")


class MissingCampaign(ValueError):
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
    for part in parts:
        for word in re.split(r"[^A-Za-z0-9]+", str(part)):
            for piece in re.findall(r"[A-Za-z]+|[0-9]", word):
                piece = _DIGITS[int(piece)] if piece.isdigit() else piece
                words.append(piece[0].upper() + piece[1:])
    if not words:
        raise ValueError(f"no letters or digits in macro parts {parts!r}")
    return "".join(words)


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
