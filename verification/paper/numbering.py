"""One number per result: a result with a name (the registry's ``Theorem.label``, "Theorem D1") is
called by that kind and name in every text (docs/theory.md, the paper's sections, the registry's
strings), is never numbered by a LaTeX counter, and prints its name where the compiled paper
refers to it. :func:`source_problems` reads the sources (no TeX engine needed; the paper build and
tests/theory/test_numbering.py run it), :func:`aux_problems` the ``.aux`` file of a compiled document.

>>> labels = {"D1": "Theorem", "D1a": "Proposition"}
>>> source_problems({"a.tex": r"\\begin{theorem}[Theorem D1]\\label{thm:d1} x \\end{theorem}"}, labels)
['a.tex:1: result D1 is numbered by the counter (\\\\begin{theorem}); write \\\\begin{named}{Theorem}{D1}']
>>> source_problems({"b.md": "Theorem D1a holds; see Theorem 3."}, labels)
['b.md:1: Theorem D1a is Proposition D1a (one name per result)', 'b.md:1: Theorem 3: a result numbered by hand']
>>> source_problems({"c.tex": r"\\begin{named}{Proposition}{D1a}\\label{p} x \\end{named} Theorem~\\ref{p}"}, labels)
['c.tex:1: Theorem~\\\\ref{p} refers to Proposition D1a']
"""
from __future__ import annotations

import re
from typing import Mapping

from verification.paper.checks import aux_labels

ENVIRONMENTS = {"theorem": "Theorem", "proposition": "Proposition", "lemma": "Lemma", "corollary": "Corollary",
                "conjecture": "Conjecture", "remark": "Remark"}
"""The numbered environments of the documents' preamble and the kind each prints."""

_KIND = r"(Theorems?|Propositions?|Corollary|Corollaries|Lemmas?|Remarks?|Conjectures?)"
_NAMED = re.compile(r"\\begin\{named\}\{(\w+)\}\{(\w+)\}(?:\[[^\]\n]*\])?\s*(?:\\label\{([^}]+)\})?")
_NUMBERED = re.compile(r"\\begin\{(" + "|".join(ENVIRONMENTS) + r")\}(?:\[([^\]\n]*)\])?\s*(?:\\label\{([^}]+)\})?")
_MENTION = re.compile(_KIND + r"(?:~|[ \t]+|\n)(?:\\ref\{([^}]+)\}|([A-Z]+\d[A-Za-z0-9]*)\b|(\d+)\b(?![.,]\d))")


def _kind(word: str) -> str:
    return {"Corollaries": "Corollary"}.get(word, word[:-1] if word.endswith("s") else word)


def _line(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


def reference_kinds(texts: Mapping[str, str], registry: Mapping[str, str] = {}) -> dict[str, tuple[str, str]]:
    """Every label of a result in ``texts``: label -> (kind, its name or "" for a numbered one), from
    the ``named`` and numbered environments, and ``registry`` (``thm:<id>`` -> its label, "Theorem D1")."""
    out = {lab: tuple(label.split(" ", 1)) for lab, label in registry.items()}
    for text in texts.values():
        out.update({m.group(3): (m.group(1), m.group(2)) for m in _NAMED.finditer(text) if m.group(3)})
        out.update({m.group(3): (ENVIRONMENTS[m.group(1)], "") for m in _NUMBERED.finditer(text) if m.group(3)})
    return out


def source_problems(texts: Mapping[str, str], labels: Mapping[str, str],
                    registry: Mapping[str, str] = {}) -> list[str]:
    """Where ``texts`` (path -> text) number or name a result two ways, given the registry's labels
    (``labels``: name -> kind, {"D1": "Theorem"}; ``registry``: ``thm:<id>`` -> "Theorem D1"): a named
    result in a numbered environment (its title "Theorem D1, ..." or "D1"); a ``named`` environment with another kind or a name the
    registry does not give; a mention "Kind Name" of a registered name with another kind, or of a
    name the registry does not give; "Kind~\\ref{label}" of another kind than the label's result;
    "Theorem 3", a result numbered by hand."""
    refs = reference_kinds(texts, registry)
    out = []
    for path, text in texts.items():
        for m in _NUMBERED.finditer(text):
            title = m.group(2) or ""
            for name in labels:      # the title names the result itself: "Theorem D1, ..." or "D1"
                if title.strip() == name or re.search(rf"\b{_KIND}\s+{re.escape(name)}(?![\w-])", title):
                    out.append(f"{path}:{_line(text, m.start())}: result {name} is numbered by the counter "
                               f"(\\begin{{{m.group(1)}}}); write \\begin{{named}}{{{labels[name]}}}{{{name}}}")
        for m in _NAMED.finditer(text):
            kind, name = m.group(1), m.group(2)
            if labels.get(name) != kind:
                why = f"the registry calls it {labels[name]} {name}" if name in labels else "no registered result has it"
                out.append(f"{path}:{_line(text, m.start())}: \\begin{{named}}{{{kind}}}{{{name}}}: {why}")
        for m in _MENTION.finditer(text):
            kind, ref, name, number = _kind(m.group(1)), m.group(2), m.group(3), m.group(4)
            where = f"{path}:{_line(text, m.start())}"
            if name and name in labels and labels[name] != kind:
                out.append(f"{where}: {kind} {name} is {labels[name]} {name} (one name per result)")
            elif name and name not in labels and re.fullmatch(r"D\d[A-Za-z0-9]*", name):
                out.append(f"{where}: {kind} {name}: no registered result has that name")
            elif ref and ref in refs and refs[ref][0] != kind:
                real = " ".join(x for x in refs[ref] if x)
                out.append(f"{where}: {m.group(1)}~\\ref{{{ref}}} refers to {real or refs[ref][0]}")
            elif number:
                out.append(f"{where}: {m.group(1)} {number}: a result numbered by hand")
    return out


def aux_problems(aux: str, expected: Mapping[str, str]) -> list[str]:
    """Labels of named results (``expected``: label -> name) that the compiled document (its ``.aux``)
    numbers otherwise than by the name: the ``named`` environment missing or broken."""
    got = aux_labels(aux)
    return [f"\\label{{{lab}}} of result {name} prints {got[lab][0]!r}, not its name"
            for lab, name in expected.items() if lab in got and got[lab][0] != name]


def named_labels(texts: Mapping[str, str], registry: Mapping[str, str]) -> dict[str, str]:
    """label -> name for every named result (the ``named`` environments of ``texts``, the registry's)."""
    return {lab: name for lab, (kind, name) in reference_kinds(texts, registry).items() if name}


def registry_labels() -> tuple[dict[str, str], dict[str, str]]:
    """The registry's labels: (name -> kind, ``thm:<id>`` -> label), e.g. ({"D1": "Theorem"},
    {"thm:dobrushin.factor": "Theorem D1"})."""
    from theory import theorems

    named = [th for th in theorems() if th.label]
    return {th.label_name: th.label_kind for th in named}, {f"thm:{th.id}": th.label for th in named}


def document_problems(root, main: str) -> list[str]:
    """:func:`source_problems` of the document ``main`` in the folder ``root`` and every file it inputs."""
    from verification.paper.latex import tex_tree

    texts, _ = tex_tree(root, main)
    labels, registry = registry_labels()
    return source_problems({str(p.relative_to(root)): t for p, t in texts.items()}, labels, registry)


def compiled_problems(root, main: str, aux: str) -> list[str]:
    """:func:`aux_problems` of the compiled document ``main`` (its ``.aux`` text ``aux``): every
    named result of its sources and of the registry printed by its name."""
    from verification.paper.latex import tex_tree

    texts, _ = tex_tree(root, main)
    return aux_problems(aux, named_labels(texts, registry_labels()[1]))
