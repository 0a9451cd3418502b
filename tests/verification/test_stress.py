"""Stress sweeps: certified verdicts against the brute-force definitions, compact summaries that
add up, any stored instance regenerated from (campaign, chunk, index) and re-checked, resume and
extension, the torch filter path equal to the CPU path, the loud stop, the search, the command."""
from fractions import Fraction

import numpy as np
import pytest

from theory.verdicts import ViolationError
from verification import campaign
from verification.campaign import Chunk
from verification.cli import main
from verification.report.part import MissingCampaign
from verification.stress.checks import Plan
from verification.stress.paper import paper_part
from verification.stress.checks.campaigns import parse_chunk
from verification.stress.checks.plan import StressPlan, draw, regenerate
from verification.stress.checks.search import (descend, hypothesis_search, matrix_of, scorer,
                                        search_campaign, search_chunk, shrink)
from numerics.dobrushin.batch import HOLDS, NAMES, TIGHT, VIOLATED
from numerics.dobrushin.batch import check_batch, exact_product_slack
from verification.stress.checks.sweep import run_chunk
from verification.stress.checks import chunks as plan_chunks
from verification.stress.checks.sweep import chunks as stress_chunks
from verification.testing import reference as ref

SMALL = StressPlan("dobrushin.factor", ("dirichlet", "softmax-T0.25"), (3,), instances=20_000)


def test_factor_verdicts_match_the_definitions():
    A = draw("dobrushin.factor", "softmax-T0.25", 3, 0, 0)[:60]
    out = check_batch("dobrushin.factor", A)
    for k in range(len(A)):
        exact = ref.factor_slack(A[k])
        assert NAMES[out["verdict"][k]] == ("tight" if exact == 0 else "holds")
        assert abs(Fraction(float(out["slack"][k])) - exact) <= Fraction(1, 10 ** 12) + exact / 10


def test_product_verdicts_match_the_definitions():
    A = draw("dobrushin.product", "hard", 3, 0, 0)[:80]          # exact zeros: equality is frequent
    out = check_batch("dobrushin.product", A)
    want = [ref.product_equality(A[2 * k], A[2 * k + 1]) for k in range(40)]
    assert [v == TIGHT for v in out["verdict"]] == want and any(want) and not all(want)
    for k in range(5):         # the exact slack given to strict pairs whose float slack is within err
        P, Q = A[2 * k], A[2 * k + 1]
        Pr, Qr = ref.exact_rows(P), ref.exact_rows(Q)
        assert exact_product_slack(P, Q) == float(ref.delta(Pr) * ref.delta(Qr) - ref.delta(ref.matmul(Pr, Qr)))


def test_summaries_add_up_and_kept_instances_regenerate(store):
    res = campaign.run(store, SMALL.campaign, stress_chunks(SMALL), progress=False)
    assert res.computed == 2
    rows = list(store.summaries(SMALL.campaign))
    assert len(rows) == 2
    for row in rows:
        b = row["body"]
        assert sum(b["counts"].values()) == b["n"] == 10_000
        assert sum(b["hist"]) == b["counts"]["holds"]
    recs = list(store.records(SMALL.campaign))
    assert 0 < len(recs) <= 2 * 20                                   # compact: only the kept instances
    for r in recs:                                                    # any instance from (campaign, chunk, index)
        A = regenerate(SMALL.campaign, r["chunk"], r["provenance"]["index"])
        assert r["instance"] == f"{r['chunk']}/i{r['provenance']['index']}"
        exact = ref.factor_slack(A)
        assert (r["verdict"] == "tight") == (exact == 0)
        assert abs(Fraction(r["slack"]) - exact) <= exact / 10 + Fraction(1, 10 ** 12)
    smallest = min(r["body"]["min_slack"] for r in rows)
    assert smallest == min(r["slack"] for r in recs if r["verdict"] == "holds")


def test_resume_and_extend(store):
    first = campaign.run(store, SMALL.campaign, stress_chunks(SMALL), progress=False)
    bigger = StressPlan(SMALL.theorem, SMALL.families, SMALL.sizes, instances=40_000)
    more = campaign.run(store, bigger.campaign, stress_chunks(bigger), progress=False)
    again = campaign.run(store, bigger.campaign, stress_chunks(bigger), progress=False)
    assert (first.computed, more.computed, more.skipped, again.computed) == (2, 2, 2, 0)
    assert sum(r["body"]["n"] for r in store.summaries(bigger.campaign)) == 40_000


def test_torch_filter_path_gives_the_cpu_answers():
    pytest.importorskip("torch")
    for theorem, family, n in (("dobrushin.factor", "dirichlet", 5), ("dobrushin.factor", "hard", 4),
                               ("dobrushin.product", "sparse", 4)):
        A = draw(theorem, family, n, 1, 0)[:400]
        cpu, tor = check_batch(theorem, A, "cpu"), check_batch(theorem, A, "torch:cpu")
        assert np.array_equal(cpu["verdict"], tor["verdict"])
        assert np.allclose(cpu["slack"], tor["slack"], rtol=1e-9, atol=1e-13)
        assert tor["sent"].sum() < len(tor["sent"]) or family == "hard"   # only undecided go to the CPU


@pytest.mark.gpu
def test_cuda_filter_path_gives_the_cpu_answers():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU")
    A = draw("dobrushin.factor", "softmax-T1", 16, 0, 0)
    cpu, gpu = check_batch("dobrushin.factor", A, "cpu"), check_batch("dobrushin.factor", A, "cuda")
    assert np.array_equal(cpu["verdict"], gpu["verdict"])
    assert np.allclose(cpu["slack"], gpu["slack"], rtol=1e-9, atol=1e-13)


def test_a_violation_is_kept_in_full_and_stops_loudly(store):
    # the causal theorem's equality is false on Dirichlet matrices: its strict verdicts are violations
    spec = {"theorem": "dobrushin.factor.causal", "family": "dirichlet", "n": 3, "count": 10_000, "seed": 0}
    with pytest.raises(ViolationError, match="dobrushin.factor.causal"):
        campaign.run(store, "toy", [Chunk("dirichlet/n3/c0", run_chunk, (spec, 0))], progress=False)
    body = next(store.summaries("toy"))["body"]
    bad = [r for r in store.records("toy") if r["verdict"] == "violated"]
    assert len(bad) == body["counts"]["violated"] > 0 and body["counts"]["tight"] > 0


def test_chunks_of_any_plan_come_from_one_place():
    """The sweep makes the chunks of single matrices and pairs, the rollout those of stacks of
    layers; :func:`verification.stress.checks.chunks` picks one, and each refuses the other's plans."""
    from verification.stress.checks import rollout, sweep

    stacks = StressPlan("dobrushin.rollout", ("dirichlet",), (3,), instances=10, layers=(2,))
    assert [c.key for c in plan_chunks(SMALL)] == [c.key for c in sweep.chunks(SMALL)] == SMALL.chunk_keys()
    assert [c.key for c in plan_chunks(stacks)] == [c.key for c in rollout.chunks(stacks)] == stacks.chunk_keys()
    with pytest.raises(ValueError, match="stacks of layers"):
        sweep.chunks(stacks)
    with pytest.raises(ValueError, match="single matrices or pairs"):
        rollout.chunks(SMALL)


def test_plan_refuses_bad_input():
    with pytest.raises(ValueError, match="no stress sampler"):
        StressPlan("rank.linear.deficiency", ("dirichlet",), (4,), 10)
    with pytest.raises(ValueError, match="needs one of causal"):
        StressPlan("dobrushin.factor.causal", ("dirichlet",), (4,), 10)
    with pytest.raises(ValueError, match="not <family>"):
        parse_chunk("dirichlet-n4")
    with pytest.raises(ValueError, match="outside chunk"):
        regenerate(SMALL.campaign, "dirichlet/n3/c0", 10_000)


def test_search_shrinks_a_counterexample_and_reaches_tight():
    def false_claim(X):              # a false "theorem": every entry (0, 0) is at most 1/2
        v = np.where(X.reshape(-1, X.shape[-2], X.shape[-1])[:, 0, 0] > 0.5, VIOLATED, HOLDS)
        return v, np.ones(len(v))
    found = hypothesis_search("dobrushin.factor", 4, 30, seed=1, score=false_claim)
    bad = [f for f in found if f.verdict == VIOLATED]
    assert bad and bad[0].matrix[0, 0] > 0.5
    small = shrink(bad[0].matrix, lambda M: bool(M[0, 0] > 0.5))
    assert small.shape == (2, 2) and small[0, 0] > 0.5
    score = scorer("dobrushin.factor")
    A = draw("dobrushin.factor", "dirichlet", 4, 0, 3)
    v, _ = score(A[:20])
    start = A[int(np.flatnonzero(v == HOLDS)[0])]
    f = descend(start, 600, score, "tight")
    assert f.verdict == TIGHT and ref.factor_equality(f.matrix)


def test_search_records_hold_their_instances(store):
    chunk = Chunk("n3/b40", search_chunk, ("dobrushin.factor", 3, 40, 0))
    campaign.run(store, search_campaign("dobrushin.factor", 0), [chunk], progress=False)
    recs = list(store.records(search_campaign("dobrushin.factor", 0)))
    assert recs
    for r in recs:
        A = matrix_of(r)
        exact = ref.factor_slack(A)
        assert (r["verdict"] == "tight") == (exact == 0)


def test_command_runs_resumes_and_refuses_bad_arguments(tmp_path, capsys):
    db, out = str(tmp_path / "s.db"), str(tmp_path / "out")
    args = ["stress", "dobrushin.factor", "--family", "dirichlet", "--sizes", "3", "--instances", "10000",
            "--db", db, "--out", out]
    assert main(args) == 0
    assert "1 chunks computed" in capsys.readouterr().out
    assert main(args) == 0
    assert "0 chunks computed, 1 already stored" in capsys.readouterr().out
    for bad, what in ((["stress", "no.such"], "no stress sampler"),
                      (["stress", "dobrushin.factor", "--family", "gauss"], "unknown family"),
                      (["stress", "dobrushin.factor", "--workers", "0"], "--workers"),
                      (["stress", "dobrushin.factor", "--workers", "2", "--scheduler", "tcp://x:1"], "not allowed"),
                      (["stress", "dobrushin.factor.causal", "--family", "dirichlet", "--db", db], "needs one of")):
        assert main(bad) == 2
        err = capsys.readouterr().err
        assert what in err and len(err.strip().splitlines()) == 1
    import torch

    if not torch.cuda.is_available():          # asking for a GPU that is not there: one line, status 2
        assert main(["stress", "dobrushin.factor", "--device", "cuda", "--db", db, "--out", out]) == 2
        assert "no CUDA device" in capsys.readouterr().err


def test_help_gives_each_theorems_own_defaults(monkeypatch, capsys):
    """``stress --help`` states every theorem's default families, sizes and layer counts, read
    from the plans' table (issue 48: it gave dobrushin.product's to every theorem)."""
    from verification.stress.checks import SIZES
    from verification.stress.checks.specs import THEOREMS

    import argparse

    from verification.cli import build_parser

    monkeypatch.setenv("COLUMNS", "100000")        # the help as printed, one line per option
    assert main(["stress", "--help"]) == 0
    assert capsys.readouterr().out.count("default per theorem: ") == 3
    sub = next(a for a in build_parser(["stress"])._actions if isinstance(a, argparse._SubParsersAction))
    lines = {a.option_strings[0]: a.help for a in sub.choices["stress"]._actions if a.option_strings}
    for option, value in (("--family", lambda spec: ",".join(spec.families)),
                          ("--sizes", lambda spec: ",".join(map(str, spec.sizes))),
                          ("--layers", lambda spec: ",".join(map(str, spec.layers)))):
        shown = lines[option].split("default per theorem: ", 1)[1].rstrip(")")
        entries = dict(e.rsplit(": ", 1) for e in shown.split("; "))
        said = {th.strip(): v for ths, v in entries.items() for th in ths.split(",")}
        want = {th: value(spec) for th, spec in THEOREMS.items() if value(spec)}
        if option == "--sizes":
            want["with --search"] = ",".join(map(str, SIZES))
        assert said == want, option
    assert said == {"dobrushin.rollout": "2,4,12"}
    assert said != {th: "4,16" for th in THEOREMS}             # the planted old help, for contrast
    assert "rounded up to whole chunks" in lines["--instances"] and "how many" in lines["--instances"]


def test_the_run_says_how_many_instances_the_rounding_gives(tmp_path, capsys):
    """``--instances 1`` runs one whole chunk per cell: the first line of the run says so, with the
    count the chunks hold (the number the run then checks); an exact count prints no such line."""
    db, out = str(tmp_path / "s.db"), str(tmp_path / "out")
    base = ["stress", "dobrushin.factor", "--family", "dirichlet", "--sizes", "3,32", "--db", db, "--out", out]
    assert main(base + ["--instances", "1"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == ("--instances 1: rounded up to whole chunks: 14,096 instances in 2 chunks (1 family x 2 sizes "
                        "= 2 cells, 1 asked of each; a chunk holds 10,000 at n = 3; 4,096 at n = 32)")
    assert "14,096 instances in" in " ".join(lines[1:])          # and that is what ran
    plan = StressPlan("dobrushin.factor", ("dirichlet", "softmax-T0.25", "softmax-T1", "softmax-T4"),
                      (2, 3, 4, 5, 8, 16, 32, 64), instances=1)
    assert plan.rounding().startswith("--instances 1: rounded up to whole chunks: 260,480 instances in 32 chunks "
                                      "(4 families x 8 sizes = 32 cells")
    exact = ["stress", "dobrushin.factor", "--family", "dirichlet", "--sizes", "3", "--instances", "10000",
             "--db", db, "--out", out]
    assert main(exact) == 0                                       # one whole chunk: nothing to say
    assert "rounded up" not in capsys.readouterr().out


def test_paper_part_reads_the_store(store, small_stress_section):
    plans = small_stress_section()
    with pytest.raises(MissingCampaign, match="attnbounds stress dobrushin.factor"):
        paper_part(store, Plan.for_verify(0, False))
    plan = plans["dobrushin.factor"]
    campaign.run(store, plan.campaign, stress_chunks(plan), progress=False)
    with pytest.raises(MissingCampaign, match="--search"):
        paper_part(store, Plan.for_verify(0, False))
    campaign.run(store, search_campaign("dobrushin.factor", 0), [Chunk("n3/b40", search_chunk,
                                                                       ("dobrushin.factor", 3, 40, 0))], progress=False)
    with pytest.raises(MissingCampaign, match="dobrushin.rollout"):
        paper_part(store, Plan.for_verify(0, False))
    rollout = plans["dobrushin.rollout"]
    campaign.run(store, rollout.campaign, plan_chunks(rollout), progress=False)
    part = paper_part(store, Plan.for_verify(0, False))
    assert part.macros["StressInstances"] == 10_000 and part.macros["StressViolated"] == "0"
    assert part.tables[0].frame["instances"].tolist() == [10_000]
    assert part.macros["StressSearchBudget"] == "40" and int(part.macros["StressSearchFound"]) >= 1
    assert part.macros["StressTightShareDirichletNThree"] == f"{next(store.summaries(plan.campaign))['body']['counts']['tight'] / 10_000:.3f}"


def test_paper_part_ignores_other_runs_in_the_same_store(store, small_stress_section):
    """Issue: one extra run into the main store (other cells, a larger run of the same cells,
    another search) changed the paper's numbers. The paper reads exactly the main job's chunks."""
    plans = small_stress_section()
    for plan in plans.values():
        campaign.run(store, plan.campaign, plan_chunks(plan), progress=False)
    search = search_campaign("dobrushin.factor", 0)
    campaign.run(store, search, [Chunk("n3/b40", search_chunk, ("dobrushin.factor", 3, 40, 0))], progress=False)
    clean = paper_part(store, Plan.for_verify(0, False))
    other = StressPlan("dobrushin.factor", ("hard",), (5,), instances=10_000)           # other cells
    bigger = StressPlan("dobrushin.factor", ("dirichlet",), (3,), instances=30_000)     # the same cells, extended
    assert other.campaign != plans["dobrushin.factor"].campaign == bigger.campaign
    for plan in (other, bigger):
        campaign.run(store, plan.campaign, stress_chunks(plan), progress=False)
    campaign.run(store, search, [Chunk("n4/b60", search_chunk, ("dobrushin.factor", 4, 60, 0))], progress=False)
    mixed = paper_part(store, Plan.for_verify(0, False))
    assert mixed.macros == clean.macros
    for a, b in zip(clean.tables, mixed.tables):
        assert a.frame.equals(b.frame)


def test_campaign_names_carry_the_cells():
    base = StressPlan("dobrushin.factor", ("dirichlet", "softmax-T1"), (4, 16), instances=10)
    same = StressPlan("dobrushin.factor", ("softmax-T1", "dirichlet"), (16, 4), instances=10 ** 6)
    assert base.campaign == same.campaign                       # order and size do not define it
    for other in (StressPlan("dobrushin.factor", ("dirichlet",), (4, 16), instances=10),
                  StressPlan("dobrushin.factor", ("dirichlet", "softmax-T1"), (4,), instances=10),
                  StressPlan("dobrushin.factor", ("dirichlet", "softmax-T1"), (4, 16), instances=10, seed=1)):
        assert other.campaign != base.campaign
    r2 = StressPlan("dobrushin.rollout", ("dirichlet",), (4,), instances=10, layers=(2,))
    r4 = StressPlan("dobrushin.rollout", ("dirichlet",), (4,), instances=10, layers=(4,))
    assert r2.campaign != r4.campaign


@pytest.mark.parametrize("argv, what", [
    (["--instances", str(10 ** 12)], "chunks per plan"),
    (["--sizes", "100000"], "memory budget"),
    (["--search", "--sizes", "100000"], "memory budget"),
    (["--search", "--budget", str(10 ** 12)], "--budget"),
    (["--families", "softmax-T1e-320"], "temperature"),
])
def test_unbounded_work_is_refused_at_once(argv, what, tmp_path, capsys):
    import time
    import tracemalloc

    tracemalloc.start()
    t0 = time.perf_counter()
    assert main(["stress", "dobrushin.factor", *argv, "--db", str(tmp_path / "s.db"), "--out", str(tmp_path)]) == 2
    seconds = time.perf_counter() - t0
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    err = capsys.readouterr().err
    assert what in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert seconds < 5 and peak < 50 * 2 ** 20


@pytest.mark.parametrize("theorem", ["dobrushin.factor", "dobrushin.product"])
def test_samplers_name_their_campaigns_and_regenerate_their_instances(theorem):
    """The counter sampler (default, campaign v2) and numpy's (v1) give different campaigns; each
    campaign's instances regenerate from (campaign, chunk, index) alone, bit for bit, through the
    sampler its version names; the chunk's provenance names that generator."""
    from numerics.sources.counter_random import COUNTER_GENERATOR
    from numerics.sources.random import GENERATOR
    from verification.stress.checks.campaigns import campaign_sampler

    plans = {s: StressPlan(theorem, ("softmax-T1",), (5,), instances=10, sampler=s) for s in ("counter", "numpy")}
    assert StressPlan(theorem, ("softmax-T1",), (5,), instances=10).sampler == "counter"
    assert "-v2-" in plans["counter"].campaign and "-v1-" in plans["numpy"].campaign
    per = 2 if theorem == "dobrushin.product" else 1
    mats = {}
    for s, plan in plans.items():
        assert campaign_sampler(plan.campaign) == s
        chunk = stress_chunks(plan)[0]
        A = draw(theorem, "softmax-T1", 5, 0, 0, s)
        mats[s] = A
        for i in (0, 3, len(A) // per - 1):
            got = regenerate(plan.campaign, chunk.key, i)
            want = A[per * i:per * i + per] if per == 2 else A[i]
            assert np.array_equal(got, want), (s, i)
        res = chunk.run()
        prov = [r.provenance for r in res]
        assert prov                                          # kept instances: the extremes at least
        assert all(p["generator"] == (COUNTER_GENERATOR if s == "counter" else GENERATOR) for p in prov)
    assert not np.array_equal(mats["counter"], mats["numpy"])
    with pytest.raises(ValueError, match="numpy's generator only"):
        StressPlan("dobrushin.rollout", ("dirichlet",), (4,), instances=10, sampler="counter")


@pytest.mark.parametrize("sampler, words", [("counter", "Philox4x32-10 counter-based sampler"),
                                            ("numpy", "numpy default_rng seeded by SeedSequence")])
def test_a_tables_provenance_names_the_sampler_that_drew_it(tmp_path, capsys, sampler, words):
    out = tmp_path / "out"
    assert main(["stress", "dobrushin.factor", "--family", "dirichlet", "--sizes", "3", "--instances", "10",
                 "--sampler", sampler, "--db", str(tmp_path / "s.db"), "--out", str(out)]) == 0
    md = (out / "tables" / "stress-factor.md").read_text()
    prov = next(line for line in md.splitlines() if line.startswith("_Provenance"))
    other = {"counter": "numpy default_rng", "numpy": "Philox"}[sampler]
    assert words in prov and other not in prov


def _replan(command: str) -> Plan:
    """The plan the command line ``command`` runs (``stress``'s ``Plan.from_args``, the ``verify``
    section's ``Plan.for_verify``)."""
    import shlex

    from verification.cli import build_parser

    argv = shlex.split(command)[1:]
    args = build_parser(argv).parse_args(argv)
    return Plan.for_verify(args.seed, args.full) if argv[0] == "verify" else Plan.from_args(args)


@pytest.mark.parametrize("argv", [["dobrushin.factor", "--families", "dirichlet", "--sizes", "5", "--instances", "20000"],
                                  ["dobrushin.factor", "--instances", "320000", "--seed", "2"],
                                  ["dobrushin.factor", "--sampler", "numpy", "--instances", "50"],
                                  ["dobrushin.rollout", "--layers", "3", "--sizes", "4", "--instances", "30"],
                                  ["dobrushin.product.causal", "--instances", "7"],
                                  ["dobrushin.factor", "--search", "--budget", "40", "--sizes", "3"]])
def test_a_stress_command_lines_plan_is_reproduced_by_its_command(argv):
    """``plan.command()`` of a plan of ``attnbounds stress ...`` plans it again: the short line for
    the theorem's default cells and sampler, every option otherwise (a sweep of other cells named by
    the short line would be the default cells' campaign: the planted contrast)."""
    plan = _replan(" ".join(["attnbounds", "stress"] + argv))
    assert _replan(plan.command()) == plan, plan.command()
    for sweep in plan.sweeps:
        spec = sweep.spec
        short = f"attnbounds stress {sweep.theorem} --instances {sweep.instances} --seed {sweep.seed}"
        assert (sweep.command() == short) == ((sweep.families, sweep.sizes, sweep.layers) ==
                                             (spec.families, spec.sizes, spec.layers) and "--sampler" not in argv)
        assert _replan(short).sweeps[0].campaign != sweep.campaign or sweep.command() == short
    prov = plan.provenance()
    assert prov["seed"] == plan.seed and prov["preset"] == "custom"
    assert all(s.theorem in prov and f"{s.theorem} sampler" in prov for s in plan.sweeps)
    assert ("search" in prov) == (plan.search is not None)


@pytest.mark.parametrize("full", [False, True])
def test_the_main_jobs_stress_plan_is_the_verify_section(full):
    plan = Plan.for_verify(5, full)
    assert plan.command() == "attnbounds verify --only stress --seed 5" + (" --full" if full else "")
    assert _replan(plan.command()) == plan and (plan.seed, plan.full) == (5, full)
    prov = plan.provenance()
    assert prov["preset"] == ("full" if full else "quick")
    # the sampler of each sweep, as its campaign's version names it
    assert prov["dobrushin.factor sampler"].startswith("Philox4x32-10")
    assert prov["dobrushin.rollout sampler"].startswith("numpy default_rng")


def test_run_returns_what_each_campaign_did(store):
    from verification.plan import RunResult
    from verification.stress.checks import Search, run

    plan = Plan((SMALL,), Search("dobrushin.factor", (3,), 40))
    first, again = run(plan, store), run(plan, store)
    assert isinstance(first, RunResult) and first.family == "stress"
    assert first.names() == plan.campaigns() == (SMALL.campaign, plan.search.campaign)
    assert first.computed == len(SMALL.chunk_keys()) + 1 and first.records > 0
    assert (again.computed, again.skipped) == (0, len(SMALL.chunk_keys()) + 1)


def test_findings_hold_the_stored_tallies_as_typed_values(store):
    """The sweep's findings against the stored summaries and records: per cell the verdict counts,
    the tight share (k of the applicable n, its Wilson interval), the smallest strict slack and where;
    the total; only the plan's chunks (another run of the same cells adds chunks it does not read)."""
    from verification.findings import Share
    from verification.stress.findings import findings

    campaign.run(store, SMALL.campaign, stress_chunks(SMALL), progress=False)
    bigger = StressPlan(SMALL.theorem, SMALL.families, SMALL.sizes, instances=40_000)
    campaign.run(store, bigger.campaign, stress_chunks(bigger), progress=False)
    (sweep,) = findings(store, Plan((SMALL,))).sweeps
    assert sweep.complete and sweep.campaign == SMALL.campaign and sweep.command == SMALL.command()
    bodies = {r["chunk"]: r["body"] for r in store.summaries(SMALL.campaign) if r["chunk"] in set(SMALL.chunk_keys())}
    assert [(c.family, c.n, c.layers, c.d) for c in sweep.cells] == [("dirichlet", 3, None, None),
                                                                      ("softmax-T0.25", 3, None, None)]
    for c in sweep.cells:
        (chunk, body), = [(k, b) for k, b in bodies.items() if k.startswith(f"{c.family}/n{c.n}/")]
        assert dict(c.counts.verdicts.counts) == body["counts"] and c.counts.instances == 10_000 == c.counts.chunks * 10_000
        tight = body["counts"].get("tight", 0)
        assert c.counts.tight == Share.wilson(tight, 10_000) and c.counts.tight.k == tight
        assert (c.counts.smallest.value, c.counts.smallest.chunk, c.counts.smallest.index) == (
            body["min_slack"], chunk, body["min_index"])
    assert sweep.total.instances == 20_000 and sweep.total.count("tight") == sum(c.counts.count("tight") for c in sweep.cells)
    assert sweep.total.smallest.value == min(b["min_slack"] for b in bodies.values())
    assert sweep.condition is None and sweep.counterexample is None
    rank = {"violated": 0, "undecided": 1, "holds": 2, "tight": 3}
    kept = [(rank[k.verdict], k.slack) for k in sweep.kept]
    assert len(kept) == 3 and kept == sorted(kept)
