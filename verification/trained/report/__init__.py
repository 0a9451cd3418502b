"""Tables and figures of the trained-model campaign (verification.trained.checks), from stored records only.

Per model, each table under the name the paper gives it: ``trained-d1-<model>`` (share of inputs
where D1's equality holds, per layer, all vs content tokens [vs first position dropped], 95% Wilson
intervals, and the share through the first token), ``trained-heads-<model>`` and
``trained-heads-content-<model>`` (layer x head shares), ``trained-rollout-<model>`` (medians of
delta(R_l), prod delta(Ahat), prod (1+delta(A))/2 and their ratios, D2 chain verdicts),
``trained-compare-<model>`` (Birkhoff and softmax-logit comparison bounds), ``trained-sources-<model>``
(per source and pooled: D1 shares beside random matrices of the same token counts; its column "D1
tight, layer with the lowest share" names that layer), ``trained-float-<model>`` (what a float test
of D1 at tolerance 0 gets wrong against the exact verdicts, the paper's ``trained-float`` for this
model alone), ``trained-float-sweep-<model>`` and ``trained-float-ties-<model>`` (the float tests at
every tolerance of a sweep, the verdicts within rounding of a tie: campaigns from v6 on); medians of ratios and slacks with 95% order-statistic intervals (none under six inputs);
a speech model's ``trained-functional-<model>`` (its transcripts and word errors: :func:`functional_rows`);
for the main job's models ``trained-functional`` (each checkpoint's
functional check and origin: :mod:`verification.trained.report.functional`);
figures ``trained_heatmap_<model>``, ``trained_slack_<model>``, ``trained_rollout_<model>`` (PNG +
PDF). Every number is a finding (:mod:`verification.trained.findings.model`), rendered by
:mod:`verification.trained.report.tables`; a ``--check`` statement's table:
:mod:`verification.trained.report.checked`.

A token set needs two tokens (D1 needs n >= 2): an input that keeps fewer (a text the tokenizer
turns into special tokens only, such as English through a residue vocabulary, where every letter is
``[UNK]``) has no records of it. When no input keeps one, the token set has no column, no
``trained-heads-content-<model>`` table and no figure panel, and a one-line note says so on the
console and in the D1 table's caption (:func:`variant_notes`); so does a note counting the inputs
left out when only some are.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

from theory.errors import InvalidInput
from verification.measure.baselines import FAMILIES, read_baselines
from verification.report.tables import print_table, write_table
from verification.trained.report.figures import figures as draw_figures
from verification.trained.findings.model import ModelFindings, model_findings
from verification.trained.findings.records import collect, slug
from verification.trained.report.tables import (CLUSTER_NOTE, FLOAT_CAPTION, FLOAT_COLUMNS, SWEEP_CAPTION,
                                                 SWEEP_COLUMNS, TIES_CAPTION, TIES_COLUMNS, VARIANT_TITLES,
                                                 compare_table, d1_table, float_rows, heads_table, rollout_table,
                                                 source_table, sweep_rows, ties_rows)


def _provenance(model: Any, campaign: str, n_inputs: int, seed: int) -> str:
    q = "".join(f"; {note}" for note in getattr(model, "notes", ()))
    return (f"model {model.name} (files sha256 {model.fingerprint}){q}; campaign {campaign}; {n_inputs} inputs; "
            f"max {model.max_tokens} tokens; rollout residual 0.5, mean head fusion; seed {seed} "
            "(no random draws); D1 verdicts exact (rational), shares with 95% Wilson intervals")


def variant_notes(f: ModelFindings, causal: bool) -> list[str]:
    """One line per token set the model's inputs measure (all, content; nofirst if ``causal``) that
    some or all inputs could not keep: fewer than two of its tokens (see the module docstring)."""
    n = f.inputs
    notes = []
    for v in ["all", "content"] + (["nofirst"] if causal else []):
        k = f.kept.get(v, 0)
        if k == 0:
            notes.append(f"{VARIANT_TITLES[v]}: none of the {n} inputs keeps two or more (the tokenizer made "
                         "every token of them special, e.g. [UNK]): nothing measured on this token set")
        elif k < n:
            notes.append(f"{VARIANT_TITLES[v]}: {n - k} of the {n} inputs keep fewer than two and are left out "
                         "of this token set")
    return notes


def report_model(store: Any, campaign: str, model: Any, out_dir: Any, console: Any,
                 inputs: Optional[set] = None, plan: Any = None) -> dict:
    """Write every table and figure of one model's campaign; return {name: paths}. ``plan``: the
    :class:`verification.trained.checks.Plan` the model was measured in: its seed in the provenance
    and its matched-n random baselines (:func:`verification.trained.checks.baseline_campaign`), which
    add the table ``trained-sources-<model>`` (None: seed 0, no baselines)."""
    from verification.trained.checks import baseline_campaign

    seed = 0 if plan is None else plan.seed
    baselines = None if plan is None else baseline_campaign(plan.seed)
    out_dir = Path(out_dir)
    data = collect(store, campaign, inputs)
    if not data["layer"]:
        raise InvalidInput(f"no stored records for campaign {campaign!r}")
    f = model_findings(data, None if baselines is None else read_baselines(store.records(campaign=baselines)),
                       bool(model.causal), bool(model.quantised))
    s, n = slug(model.name), f.inputs
    prov = _provenance(model, campaign, n, seed)
    q = " 4-bit QUANTISED weights (GGUF): the quantised model's attention." if model.quantised else ""
    tables = out_dir / "tables"
    written: dict = {}
    rows, cols = d1_table(f)
    cap = (f"{model.name}: share of {n} inputs where Theorem D1 holds with equality (exact), per layer, "
           f"head-averaged attention. The float filter decided {f.verdicts - f.exact} of {f.verdicts} "
           f"verdicts (layer and head); {f.exact} needed the exact rational path.{q}")
    if model.causal:
        cap += (" Causal attention forces equality: row 0 is one-hot, so delta(A) = max_j (1 - A_j0) is "
                "always attained by a mutually self-dominant pair (0, j) (d_ij <= max(d_0i, d_0j)); "
                "the same holds after dropping any prefix, hence 'tight' is structural here.")
    notes = variant_notes(f, bool(model.causal))
    for note in notes:
        console.print(f"{model.name}: {note}", markup=False, highlight=False, soft_wrap=True)
    cap += "".join(f" Note: {note}." for note in notes)
    written["d1"] = write_table(rows, cols, f"trained-d1-{s}", cap, prov, tables)
    print_table(console, rows, cols, cap)
    for v in ("all", "content"):
        if v not in f.sets or not f.sets[v].heads.size:
            continue                     # no input kept two tokens of it: said in the notes, no empty table
        hrows, hcols = heads_table(f, v)
        written[f"heads_{v}"] = write_table(
            hrows, hcols, f"trained-heads-{s}" if v == "all" else f"trained-heads-{v}-{s}",
            f"{model.name}: per-head share of {n} inputs with D1 equality ({VARIANT_TITLES[v]}).{q}", prov, tables)
    rows, cols = rollout_table(f)
    cap = f"{model.name}: rollout bounds per layer, all tokens, medians over {n} inputs.{q}"
    written["rollout"] = write_table(rows, cols, f"trained-rollout-{s}", cap, prov, tables)
    print_table(console, rows, cols, cap)
    rows, cols = compare_table(f)
    cap = (f"{model.name}: comparison bounds on delta(A) of head-averaged attention (Birkhoff = "
           f"softmax-logit bound per head; trivial (1) wherever A has zeros, e.g. causal masks).{q}")
    written["compare"] = write_table(rows, cols, f"trained-compare-{s}", cap, prov, tables)
    if baselines is not None:
        rows, cols = source_table(f.sources, FAMILIES)
        cap = (f"{model.name}: share of inputs where D1 holds with equality, per source and pooled (95% Wilson), "
               f"beside random matrices of the same token counts (campaign {baselines}).{q}")
        written["sources"] = write_table(rows, cols, f"trained-sources-{s}", cap, prov, tables)
        print_table(console, rows, cols, cap)
    if f.floats and f.floats[0].verdicts:      # records that carry the float tests' verdicts
        rows = float_rows({model.name: f})
        cap = f"{model.name}: " + FLOAT_CAPTION.format(of=f"on {n} inputs", cluster=CLUSTER_NOTE) + q
        written["float"] = write_table(rows, FLOAT_COLUMNS, f"trained-float-{s}", cap, prov, tables)
        print_table(console, rows, FLOAT_COLUMNS, cap)
    if f.sweep is not None:                    # records that carry the floats each float verdict decides by
        of = dict(of=f"on {n} inputs", cluster=CLUSTER_NOTE)
        written["float_sweep"] = write_table(sweep_rows({model.name: f}), SWEEP_COLUMNS, f"trained-float-sweep-{s}",
                                             f"{model.name}: " + SWEEP_CAPTION.format(**of) + q, prov, tables)
        written["float_ties"] = write_table(ties_rows({model.name: f}), TIES_COLUMNS, f"trained-float-ties-{s}",
                                            f"{model.name}: " + TIES_CAPTION.format(**of) + q, prov, tables)
    functional = functional_rows(data)
    if functional:
        cols = ["input", "audio (s)", "transcript", "reference", "word errors / reference words"]
        cap = (f"{model.name}: functional check, the transcript greedy-decoded (English, transcribe, no timestamps) "
               "of each recording, and its word errors against the recording's reference words where known")
        written["functional"] = write_table(functional, cols, f"trained-functional-{s}", cap, prov, tables)
        print_table(console, functional, cols, cap)
    written["figures"] = draw_figures(f, model, out_dir / "figures", s, prov)
    return written


def functional_rows(data: dict) -> list[list]:
    """A speech model's functional check per recording, from its stored records (the provenance of
    the layer-0 head-mean record of all tokens: transcript, reference, word errors); [] for a model
    without one."""
    rows = []
    for r in data["layer"].get("all", {}).get(0, []):
        p = r["provenance"]
        if "transcript" not in p:
            continue
        errs = "no reference" if p.get("reference") is None else f"{p['word_errors']} / {p['reference_words']}"
        rows.append([p["input"], p.get("audio_seconds"), p["transcript"], p.get("reference") or "", errs])
    return sorted(rows)


def report(store: Any, plan: Any, out_dir: Any, console: Any) -> dict:
    """Every model of ``plan`` (:class:`verification.trained.checks.Plan`): :func:`report_model`
    on its campaign and inputs, with the plan's random baselines, and the table of each ``--check``
    statement (:func:`verification.trained.report.checked.check_table`); {model name: {table: paths}}."""
    from verification.trained.report.checked import check_table

    out = {}
    for run in plan.measured():
        model = run.model
        out[model.name] = report_model(store, run.campaign, model, out_dir, console, set(run.inputs), plan)
        for theorem_id in run.checks:
            out[model.name][f"check:{theorem_id}"] = check_table(store, run, theorem_id, out_dir, console)
    if plan.is_main():      # each checkpoint's functional check and origin (verification.trained.report.functional)
        from verification.trained.report.functional import report_functional

        out["functional"] = report_functional(store, plan, out_dir, console)
    return out
