"""The size of the rollout bounds' slack and the mechanism of D1's equality (verification.trained.findings.size,
verification.trained.paper.size), computed from a tiny planted store of records: every number the paper
prints is the records' own (counted here independently), and a planted change moves it."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from verification.findings import Share
from verification.measure.baselines import chain_ratio_null
from verification.report.part import Part
from verification.trained.findings import Findings, Model
from verification.trained.findings.model import model_findings
from verification.trained.findings.records import collect_records, source_order
from verification.trained.findings.size import size_findings, token_bin
from verification.trained.paper.size import NEARLY_EXACT, size_part

L = 3


def planted(seed: int = 0, inputs: int = 12, slack_scale: float = 0.01, ratio: float = 0.6) -> list[dict]:
    """Head-mean D1 records (all tokens, ``L`` layers) of ``inputs`` inputs from two sources and two token
    counts, with strict verdicts of relative slack about ``slack_scale``, tight ones through token 0 or
    not, both controls; and the chain's records at each layer with the D2 ratio ``ratio`` +- noise."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(inputs):
        n = 6 if i % 2 else 40
        src = "pydoc" if i < inputs // 2 else "licenses"
        prov = dict(input=f"in{i}", text_sha=f"{i:04x}", source=src, variant="all", head=None, n=n)
        for l in range(L):
            strict = rng.random() < 0.3
            bound = 0.8 + 0.1 * rng.random()
            slack = slack_scale * bound * rng.random() if strict else 0.0
            first = bool(rng.random() < 0.7)
            extra = dict(through_first=first and not strict, through_other=(not first) and not strict,
                         control_columns="tight" if rng.random() < 0.25 else "holds",
                         control_offdiagonal="tight" if rng.random() < 0.9 else "holds")
            out.append(dict(theorem="dobrushin.factor", verdict="holds" if strict else "tight", slack=slack,
                            value=bound - slack, bound=bound, extra=extra, provenance=dict(prov, layer=l)))
            out.append(dict(theorem="dobrushin.product", verdict="holds", slack=0.1, value=0.5, bound=0.6,
                            extra=dict(ratio_R=float(np.clip(ratio + 0.05 * rng.standard_normal(), 0.01, 1))),
                            provenance=dict(prov, layer=l)))
    return out


def test_the_slack_and_mechanism_are_the_records_own():
    """Relative slack (slack / bound of the strict verdicts), per layer and pooled; tight only through token 0
    (through_first and not through_other) and the controls per layer and stratum: each counted here
    from the records, independently of the findings."""
    records = planted()
    data = collect_records(records, None)
    size = size_findings(data, False, 0, source_order(data))
    means = [r for r in records if r["theorem"] == "dobrushin.factor"]
    rel = np.array([r["slack"] / r["bound"] for r in means if r["verdict"] == "holds"])
    assert size.means.strict.k == rel.size and size.means.strict.n == len(means)
    assert size.means.median.value == pytest.approx(float(np.median(rel)))
    assert size.means.max == pytest.approx(float(rel.max()))
    assert size.means.median.lo <= size.means.median.value <= size.means.median.hi
    for l, s in enumerate(size.layers):
        rl = [r["slack"] / r["bound"] for r in means if r["provenance"]["layer"] == l and r["verdict"] == "holds"]
        assert s.strict.k == len(rl) and (s.max is None if not rl else s.max == pytest.approx(max(rl)))
    for m in size.mechanism:
        rs = [r for r in means if r["provenance"]["layer"] == m.layer]
        ts = [r for r in rs if r["verdict"] == "tight"]
        assert (m.tight.k, m.tight.n) == (len(ts), len(rs))
        assert (m.only_first.k, m.only_first.n) == (sum(r["extra"]["through_first"] for r in ts), len(ts))
        assert m.columns.k == sum(r["extra"]["control_columns"] == "tight" for r in rs)
        assert m.offdiagonal.k == sum(r["extra"]["control_offdiagonal"] == "tight" for r in rs)
    strata = {m.stratum: m for m in size.strata}
    assert set(strata) == {("source", "pydoc"), ("source", "licenses"), ("tokens", "2-8 tokens"),
                           ("tokens", "33-64 tokens")}
    for (kind, name), m in strata.items():
        rs = [r for r in means if (r["provenance"]["source"] == name if kind == "source"
                                   else token_bin(r["provenance"]["n"]) == name)]
        assert (m.tight.k, m.tight.n, m.inputs) == (sum(r["verdict"] == "tight" for r in rs), len(rs), len(rs) // L)
        assert m.tight.lo <= m.tight.value <= m.tight.hi
    # planted: one strict verdict's slack made the largest moves the maximum and only it
    big = next(r for r in means if r["verdict"] == "holds")
    big["slack"] = 0.5 * big["bound"]
    again = size_findings(collect_records(records, None), False, 0, source_order(data))
    assert again.means.max == pytest.approx(0.5) != size.means.max


def test_token_bins():
    assert [token_bin(n) for n in (2, 8, 9, 16, 17, 128, 129, 257, 600)] == [
        "2-8 tokens", "2-8 tokens", "9-16 tokens", "9-16 tokens", "17-32 tokens", "65-128 tokens", "129-256 tokens",
        "257-512 tokens", "more than 512 tokens"]


def test_the_chain_null_is_seeded_and_its_word_follows_its_interval():
    """Random stacks: seeded, every ratio in (0, 1] (Theorem D2), a causal family for causal models; the
    difference's word is the sign of an interval excluding 0: a planted trained ratio far above the null
    is "above", one at the null's own median is not decided."""
    a, b = chain_ratio_null("dirichlet", 6, L, 0), chain_ratio_null("dirichlet", 6, L, 0)
    assert np.array_equal(a, b) and not np.array_equal(a, chain_ratio_null("dirichlet", 6, L, 1))
    assert ((a > 0) & (a <= 1 + 1e-12)).all()
    assert ((chain_ratio_null("causal", 5, 4, 0) > 0)).all()
    high = size_findings(collect_records(planted(ratio=0.9), None), False, 0).chain
    assert high.difference.outcome == "supported" and high.difference.statistic > 0
    assert high.model.value == pytest.approx(float(np.median([r["extra"]["ratio_R"] for r in planted(ratio=0.9)
                                                               if r["theorem"] == "dobrushin.product"
                                                               and r["provenance"]["layer"] == L - 1])))
    null_median = float(np.median([np.median(chain_ratio_null("dirichlet", n, L, 0)) for n in (6, 40)]))
    level = size_findings(collect_records(planted(ratio=null_median), None), False, 0).chain
    lo, hi = level.difference.interval
    assert level.difference.outcome == ("inconclusive" if lo <= 0 <= hi else "supported")
    with pytest.raises(Exception):
        chain_ratio_null("dirichlet", 1, L, 0)


def _found(records: list, causal: bool = False, columns: Share = Share.wilson(3, 20)) -> Findings:
    data = collect_records(records, None)
    model = Model("minilm", "camp", model_findings(data, None, causal), SimpleNamespace(shares={"columns": columns}),
                  {}, size_findings(data, causal, 0, source_order(data)))
    return Findings({"minilm": model}, "base", 0, 0.95)


def test_the_paper_prints_the_records_numbers_and_guards_its_words():
    """The macros and the abstract's sentence carry the findings' numbers (never typed); "nearly exact"
    holds only while every median relative slack is at most NEARLY_EXACT (planted: slacks ten times
    larger turn it false); the column-permuted share's guard fails on a planted share far above 1/2."""
    records = planted()
    part = Part("trained", commands=["attnbounds verify --only trained"])
    size_part(part, _found(records))
    means = [r for r in records if r["theorem"] == "dobrushin.factor"]
    rel = [r["slack"] / r["bound"] for r in means if r["verdict"] == "holds"]
    assert part.macros["MiniLMRelSlackStrict"] == f"{len(rel)}/{len(means)}"
    shown = part.macros["MiniLMRelSlackMedian"].split()[0]
    assert abs(float(shown) - float(np.median(rel))) <= 0.5 * 10.0 ** -len(shown.split(".")[1])
    assert part.guards["FactorBoundNearlyExact"].holds and part.guards["ColumnsChanceLevel"].holds
    ts = [r for r in means if r["verdict"] == "tight"]
    by_layer = {l: [r for r in ts if r["provenance"]["layer"] == l] for l in range(L)}
    most = [l for l, rs in by_layer.items() if 2 * sum(r["extra"]["through_first"] for r in rs) > len(rs)]
    k = sum(r["extra"]["through_first"] for l in most for r in by_layer[l])
    assert part.macros["MiniLMSinkCount"] == f"{k} of {sum(len(by_layer[l]) for l in most)}"
    assert part.guards["MiniLMSinkMost"].holds == bool(most)
    assert part.macros["MiniLMRelSlackMedian"] in part.macros["TrainedSizeAbstract"]
    assert part.macros["TrainedSizeAbstract"].endswith("so the rollout bound's slack lies mostly in submultiplicativity.")
    assert (part.macros["MiniLMSinkCount"] in part.macros["TrainedSizeAbstract"]) == bool(most)
    assert part.tables == []
    assert {t.name for t in part.data_tables} == {"trained-size", "trained-slack-layers", "trained-mechanism",
                                                  "trained-mechanism-strata"}
    size_row = next(t for t in part.data_tables if t.name == "trained-size").frame.iloc[0]
    assert size_row["strict D1, head means"] == part.macros["MiniLMRelSlackStrict"]
    loose = Part("trained", commands=["x"])
    size_part(loose, _found(planted(slack_scale=20 * NEARLY_EXACT)))
    assert not loose.guards["FactorBoundNearlyExact"].holds
    high = Part("trained", commands=["x"])
    size_part(high, _found(records, columns=Share.wilson(19, 20)))
    assert not high.guards["ColumnsChanceLevel"].holds
