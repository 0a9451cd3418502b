"""The table of a user's statement checked on every head of a model (``rollout --check``,
:mod:`verification.trained.checks.heads`): the verdict counts per layer (a chain's first layer)
and in all, as :class:`~verification.findings.Tally` values read from the chunks' summaries, with
the tight share of the heads where the statement applies and is decided (95% Wilson).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from theory.errors import InvalidInput
from verification.findings import Share, Tally
from verification.report.tables import print_table, write_table
from verification.trained.checks.heads import VERDICT_NAMES, binding_of, compiled_of
from verification.trained.findings.records import slug

COLUMNS = ["layer", "heads checked", "holds", "tight", "tight share [95% Wilson]", "violated", "not-applicable",
           "undecided"]


@dataclass(frozen=True)
class Checked:
    """A statement's verdicts on every head: per layer and in all (:class:`Tally`), over ``inputs`` inputs."""

    layers: dict[int, Tally]
    total: Tally
    inputs: int

    @staticmethod
    def tight(t: Tally) -> Share:
        """Tight among the decided heads (holds, tight, violated), Wilson."""
        return Share.wilson(t.count("tight"), t.count("holds", "tight", "violated"))


def stored_counts(store: Any, name: str, theorem_id: str, keys: set) -> Checked:
    """The verdict counts summed over the stored chunks of ``name`` whose keys are in ``keys`` (the
    chunk keys of the plan's inputs), verified ones only."""
    done = store.done_chunks(name)
    per: dict = {}
    inputs = 0
    for s in store.summaries(name, theorem_id):
        if s["chunk"] not in keys or s["chunk"] not in done:
            continue
        inputs += 1
        for l, c in enumerate(s["body"]["layers"]):
            cell = per.setdefault(l, dict.fromkeys(VERDICT_NAMES, 0))
            for v in VERDICT_NAMES:
                cell[v] += int(c.get(v, 0))         # a chunk stored before "undecided" was counted: none
    return checked(per, inputs)


def checked(per: dict, inputs: int = 0) -> Checked:
    """:class:`Checked` of ``{layer: {verdict: count}}``."""
    layers = {l: Tally({v: per[l][v] for v in VERDICT_NAMES}) for l in sorted(per)}
    total = Tally({v: sum(per[l][v] for l in per) for v in VERDICT_NAMES})
    return Checked(layers, total, inputs)


def table_rows(found: Checked) -> tuple[list, list]:
    """Per layer and in all: heads checked, holds, tight, tight share of the heads it applies to and
    that are decided (95% Wilson), violated, not-applicable, undecided (never counted as tight or holds).

    >>> rows, cols = table_rows(checked({0: {"holds": 3, "tight": 1, "violated": 0, "not-applicable": 0, "undecided": 2}}))
    >>> rows[0], rows[-1][0]
    ([0, 6, 3, 1, '0.250 [0.046, 0.699]', 0, 0, 2], 'all')
    """
    def row(label: Any, t: Tally) -> list:
        s = Checked.tight(t)
        share = f"{s.value:.3f} [{s.lo:.3f}, {s.hi:.3f}]" if s.n else "-"
        return [label, t.total, t.count("holds"), t.count("tight"), share, t.count("violated"),
                t.count("not-applicable"), t.count("undecided")]
    return [row(l, t) for l, t in found.layers.items()] + [row("all", found.total)], list(COLUMNS)


def check_table(store: Any, run: Any, theorem_id: str, out_dir: Any, console: Any) -> dict:
    """The table ``trained-check-<theorem>-<model>`` of ``theorem_id`` on the model run ``run``
    (:class:`verification.trained.checks.Measured`: its campaign of the statement, its inputs); the
    caption says what each symbol is bound to (:func:`bound_words`). Printed too."""
    from theory import get
    from theory.verdicts import Outcome, vocabulary

    th, model = get(theorem_id), run.model
    name = run.checks[theorem_id]
    found = stored_counts(store, name, theorem_id, {f"{i}#{sha}" for i, sha in run.inputs})
    if not found.layers:
        raise InvalidInput(f"no stored checks of {theorem_id} for campaign {name!r}")
    rows, cols = table_rows(found)
    violated, undecided = found.total.count("violated"), found.total.count("undecided")
    kind = ("a refuted record (a counterexample to a conjecture: a finding)" if vocabulary(th.category) is Outcome
            else "a violated record")
    said = ("No head violates it." if not violated else
            f"{violated} head{'s violate' if violated > 1 else ' violates'} it, each stored as {kind}.")
    if undecided:
        said += (f" {undecided} head{'s are' if undecided > 1 else ' is'} undecided (no exact or certified method "
                 "decided within its budget): neither holds nor tight.")
    n = found.inputs
    bound = bound_words(th, bool(getattr(model, "causal", False)))
    cap = (f"{model.name}: {theorem_id} ({th.category}), {th.statement}, decided on every head ({bound}), {n} inputs; "
           f"certified verdicts; tight share of the heads where the statement applies and is decided. {said}")
    prov = (f"model {model.name} (files sha256 {model.fingerprint}); corpus {run.corpus}; {n} inputs; "
            f"max {model.max_tokens} tokens; theorem {theorem_id} from {source_name(theorem_id)}: "
            f"{th.statement}; campaign {name}")
    paths = write_table(rows, cols, f"trained-check-{slug(theorem_id)}-{slug(model.name)}", cap, prov,
                        Path(out_dir) / "tables")
    print_table(console, rows, cols, cap)
    return paths


def bound_words(th: Any, causal: bool) -> str:
    """What the statement's symbols are bound to on a model (``causal``: a decoder), for the caption
    (:class:`verification.trained.checks.heads.Binding`)."""
    b = binding_of(compiled_of(th))
    if b.symbols == (("A", "stochastic", 0),):
        return "A = the head's attention probabilities on all tokens, rows renormalised exactly"
    text = b.words().replace("at layer l", "of layer l")
    if "logits" in b.kinds:
        text += ("; the scores as the model passes them to its softmax, its causal mask made explicit: the entries "
                 'above the diagonal 0, the attention softmax(L, mask="causal")' if causal else
                 "; the scores as the model passes them to its softmax (nothing masked), the attention softmax(L)")
    if b.chain > 1:
        text += f"; a row per first layer l of a chain of {b.chain} layers, the same head index in each"
    return text + "; attention rows renormalised exactly"


def source_name(theorem_id: str) -> str:
    """Where the theorem came from (:func:`theory.plugins.source`), a file by its name only (no path of
    this machine in a table)."""
    from theory.plugins import source

    where = source(theorem_id)
    return where if where == "built-in" or where.startswith("entry point") else Path(where).name
