"""The build checks of the words of the paper (:mod:`verification.paper.checks` holds the rest): the
abstract's length counted as typeset (macros expanded), words no test of the suite supports and
phrases that belong to the reproduction reports in the abstract or the introduction, a word
typed twice in a row, and a related-work section that lost one of its groups (:data:`RELATED_GROUPS`:
each its paragraph, citing its works) or cites a key without an entry. :func:`verification.paper.build.build` fails on any of them, on every build
(no TeX engine needed).
"""
from __future__ import annotations

import re
from pathlib import Path

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


# The groups of related work the paper's Related work section must keep (the referee's list, issue 62):
# name -> (the start of its paragraph's title, the works that paragraph must cite).
RELATED_GROUPS = {
    "coefficients of ergodicity": ("Coefficients of ergodicity",
                                   ("dobrushin1956", "seneta1981", "seneta1979", "hartfiel2002", "ipsen2011",
                                    "cohen1998")),
    "rank collapse and oversmoothing": ("Rank collapse and oversmoothing",
                                        ("dong2021", "noci2022", "shi2022", "wang2022", "wu2023", "geshkovski2023",
                                         "dovonon2024", "wu2024")),
    "Lipschitz constants of attention": ("Lipschitz constants of attention", ("kim2021",)),
    "rollout, its alternatives and residual weighting": ("Rollout", ("abnar2020", "chefer2021", "chefer2021b",
                                                                    "kobayashi2020", "kobayashi2021",
                                                                    "ferrando2022", "modarressi2022")),
    "attention sinks and special tokens": ("Attention sinks", ("clark2019", "kovaleva2019", "xiao2024",
                                                               "darcet2024")),
}


def related_problems(related: str, bib: str, groups: dict = RELATED_GROUPS) -> list[str]:
    """The related-work section ``related`` (LaTeX, comments ignored) against the bibliography ``bib``:
    a key it cites that has no entry, a group of :data:`RELATED_GROUPS` without its paragraph (a
    ``\\paragraph{...}`` whose title starts with the group's), and a work the group's paragraph does not
    cite (its text runs to the next ``\\paragraph``).

    >>> bib = "@misc{a1, title={T}, howpublished={x}, year={2020}}\\n"
    >>> groups = {"sinks": ("Attention sinks", ("a1",)), "tools": ("Tools", ("a1",))}
    >>> related_problems(r"\\paragraph{Attention sinks.} \\citet{a1}, \\citep{b2}.", bib, groups)
    ['the related work cites b2, which has no entry in refs.bib', 'the related work has no paragraph on tools (\\\\paragraph{Tools...})']
    >>> related_problems(r"\\paragraph{Attention sinks and tokens.} None.", bib, {"sinks": ("Attention sinks", ("a1",))})
    ['the related-work paragraph on sinks does not cite a1']
    """
    from verification.paper.checks import bib_entries, cited_keys

    text = re.sub(r"(?<!\\)%.*", "", related)
    entries = bib_entries(bib)
    out = [f"the related work cites {k}, which has no entry in refs.bib" for k in sorted(cited_keys([text]) - set(entries))]
    paragraphs = re.split(r"(?=\\paragraph\{)", text)
    for name, (title, keys) in groups.items():
        found = [p for p in paragraphs if re.match(r"\\paragraph\{\s*" + re.escape(title), p)]
        if not found:
            out.append(f"the related work has no paragraph on {name} (\\paragraph{{{title}...}})")
            continue
        missing = [k for k in keys if k not in cited_keys(found)]
        if missing:
            out.append(f"the related-work paragraph on {name} does not cite {', '.join(missing)}")
    return out


def related_section_problems(text: str, bib: Path) -> list[str]:
    """:func:`related_problems` of the section ``Related work`` of the main text ``text`` against the
    bibliography file ``bib`` (none: no entry); nothing where the text has no such section."""
    related = re.search(r"\\section\{Related work\}(.*?)(?=\\section\{|\Z)", text, re.S)
    return related_problems(related.group(1), bib.read_text() if bib.exists() else "") if related else []
