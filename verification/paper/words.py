"""The build checks of the words of the paper (:mod:`verification.paper.checks` holds the rest): the
abstract's length counted as typeset (macros expanded), words no test of the suite supports and
phrases that belong to the reproduction reports in the abstract or the introduction, and a word
typed twice in a row. :func:`verification.paper.build.build` fails on any of them, on every build
(no TeX engine needed).
"""
from __future__ import annotations

import re

ABSTRACT_WORDS = 200      # the paper's abstract has fewer words than this
# words the abstract and introduction may not use, and why (what a test would have to decide); phrases for neither
UNSUPPORTED = {"indistinguishable": "no equivalence test decides it (a comparison that separates nothing is "
                                    "'not separable from', not equivalence)"}
ELSEWHERE = {"reproduction report": "the reports are separate documents, named in the conclusion"}


def expand_macros(tex: str, macros: dict) -> str:
    """``tex``, comments dropped, each ``\\Guard{key}{text}`` its text, each macro ``\\X`` its value."""
    text = re.sub(r"(?<!\\)%.*", "", tex)
    for _ in range(4):                                    # guards nest
        text = re.sub(r"\\Guard\{[^{}]*\}\{((?:[^{}]|\{[^{}]*\})*)\}", r"\1", text)

    def sub(m: "re.Match[str]") -> str:
        return str(macros[m.group(1)]) if m.group(1) in macros else m.group(0)
    return re.sub(r"\\([A-Za-z]+)(?:\{\})?", sub, text)


def word_count(tex: str, macros: dict) -> int:
    """The words of ``tex`` as typeset (:func:`expand_macros`): a formula or a number one word, a command none.

    >>> word_count(r"tight on \\Share{} of the $n = 4$ inputs \\cite{x}", {"Share": "3/4 [0.30, 0.95]"})
    9
    """
    text = expand_macros(tex, macros)
    text = re.sub(r"\$[^$]*\$", " formula ", text)
    text = re.sub(r"\\(?:ref|cite[a-z]*|label)\*?\{[^}]*\}", " ", text)
    text = re.sub(r"\\[A-Za-z]+\*?|[{}~]", " ", text)
    return len([w for w in text.split() if re.search(r"[A-Za-z0-9]", w)])


def abstract_problems(abstract: str, intro: str, macros: dict, limit: int = ABSTRACT_WORDS) -> list[str]:
    """The abstract at ``limit`` words or more (counted as typeset, :func:`word_count`), and a word of
    :data:`UNSUPPORTED` or a phrase of :data:`ELSEWHERE` in the abstract or the introduction (after
    the macros are expanded: a generated phrase counts).

    >>> abstract_problems("We prove it.", "Reproduction reports test three papers.", {})
    ["the introduction says 'reproduction report': the reports are separate documents, named in the conclusion"]
    >>> abstract_problems(r"Models \\Phrase{}.", "", {"Phrase": "are indistinguishable from random"}, limit=3)
    ['the abstract has 5 words, not under 3', "the abstract says 'indistinguishable': no equivalence test decides it (a comparison that separates nothing is 'not separable from', not equivalence)"]
    """
    out = []
    n = word_count(abstract, macros)
    if n >= limit:
        out.append(f"the abstract has {n} words, not under {limit}")
    for where, tex in (("abstract", abstract), ("introduction", intro)):
        text = " ".join(expand_macros(tex, macros).lower().split())
        for word, why in list(UNSUPPORTED.items()) + list(ELSEWHERE.items()):
            if word in text:
                out.append(f"the {where} says {word!r}: {why}")
    return out


def repeated_words(text: str) -> list[str]:
    """A word typed twice in a row (``here here``) in prose (macros expanded); not numbers, one letter.

    >>> repeated_words("goes to the exact path (here here none did), and the the rest")
    ["'here here'", "'the the'"]
    >>> repeated_words("that that is, 0.5 0.5 and a a")
    []
    """
    out = []
    for m in re.finditer(r"(?<![A-Za-z-])([A-Za-z]{2,})\s+\1(?![A-Za-z-])", text, re.I):
        if m.group(1).lower() in ("that", "had"):          # English doubles them legitimately
            continue
        item = f"'{m.group(0).split()[0]} {m.group(0).split()[-1]}'"
        if item not in out:
            out.append(item)
    return out
