"""Every family's plan, quick and full (what ``attnbounds verify [--full]`` builds), is valid before
anything runs: ``plan.check()`` (the protocol method of :class:`verification.plan.Plan`) validates
every chunk's parameters as its kernels will, with nothing computed; the rank family's chunks are
also handed to the kernels' own validation on data of the chunk's shape. A failure in a plan the
package made is a bug (RuntimeError, a traceback), raised before the main job opens its store; a
plan made from a command line is refused as the user's input (one line, exit 2). Nothing here
trains, solves or loads a model."""
from dataclasses import replace

import numpy as np
import pytest

from numerics.rank import gd as G
from numerics.rank import linear as R
from theory.errors import InvalidInput
from verification.cli import build_parser, main
from verification.commands import FAMILIES
from verification.family import main_plans, role
from verification.plan import PLAN_PROTOCOL, Plan as PlanProtocol
from verification.rank.checks import Plan as RankPlan
from verification.rank.checks import attention as J
from verification.rank.checks import linear as V


@pytest.mark.parametrize("full", [False, True], ids=["quick", "full"])
@pytest.mark.parametrize("section", list(FAMILIES))
def test_every_familys_main_plan_passes_its_check(section, full):
    plan = role(section, "checks").Plan.for_verify(0, full)
    assert isinstance(plan, PlanProtocol) and "check" in PLAN_PROTOCOL and plan.full is full
    plan.check()                     # raises InvalidInput naming the first parameter that fails


def test_the_main_job_checks_every_sections_plan():
    plans = main_plans(list(FAMILIES), 0, True)
    assert [type(p).__module__ for p in plans] == [f"{pkg}.checks" for pkg in FAMILIES.values()]


# -- rank: the plan that failed, and every chunk against the kernels' own validation ---------------

OLD_FULL = replace(V.FULL, samples=(4, 8, 16, 64, 256))      # the full plan as it was: N = 4 at n = 16


def test_the_old_rank_full_plan_fails_its_check():
    with pytest.raises(InvalidInput, match=r"sample size N = 4: 4 inputs x 4 columns = 16 columns.*n = 16 \(N >= 5\)"):
        OLD_FULL.check()
    with pytest.raises(InvalidInput, match="N = 4"):
        RankPlan(OLD_FULL).check()
    RankPlan(OLD_FULL, parts=("attention", "weights")).check()     # only the parts it runs are checked


@pytest.mark.parametrize("plan", [V.QUICK, V.FULL], ids=["quick", "full"])
def test_every_rank_linear_chunk_passes_the_kernels_validation(plan):
    """Each chunk's arguments handed to the kernels it calls, on data of the chunk's shape (the
    least-squares fit of N D columns, GD at the chunk's rank, the teacher at r*), steps 0."""
    chunks = V.linear_chunks(plan)
    K = R.covariance(plan.n, "spread", 0)
    M = R.teacher(plan.n, plan.r_star, "flat", K, 0)
    rng = np.random.default_rng(0)
    seen = set()
    for name, cs in chunks.items():
        for c in cs:
            fn, args = c.fn, c.args
            if fn in (V.gd_data_chunk, V.estimator_chunk) and args[2] not in seen:
                N = args[2]
                seen.add(N)
                X = rng.standard_normal((plan.n, N * V.D))
                R.least_squares(X, M @ X)
            elif fn is V.gd_population_chunk:
                G.gd_factorised(M, K, args[2], [0], init_scale=args[3], steps=0)
    assert seen == set(plan.samples) and sum(map(len, chunks.values())) > 0


def test_the_old_rank_full_plan_fails_the_kernels_validation():
    """What the chunk test above would meet on the old plan: the kernel's refusal (whose message
    says what it needs), and inside a chunk a bug, never the user's input."""
    X = np.zeros((16, 16))
    with pytest.raises(InvalidInput, match=r"X has 16 columns and 16 rows; the fit needs more columns than rows "
                                           r"\(at least 17"):
        R.least_squares(X, X)
    with pytest.raises(RuntimeError, match="N = 4 inputs give 16 columns for n = 16.*a bug"):
        V.gd_data_chunk(replace(OLD_FULL, gd_steps=1, gd_seeds=1), "flat", 4, 0.1, 1e-3)
    with pytest.raises(RuntimeError, match="N = 4"):
        V.estimator_chunk(replace(OLD_FULL, est_seeds=1), "flat", 4, 0.1)


def test_an_invalid_preset_is_a_bug_before_the_main_job_opens_its_store(tmp_path, monkeypatch):
    monkeypatch.setattr(V, "FULL", OLD_FULL)
    db = tmp_path / "r.db"
    with pytest.raises(RuntimeError, match=r"`attnbounds verify --only rank --seed 0 --full` is invalid \(a bug"):
        main(["verify", "--only", "rank", "--full", "--serial", "--db", str(db), "--out", str(tmp_path / "out")])
    assert not db.exists() and not (tmp_path / "out").exists()


def test_rank_command_lines_plan_valid_sizes(tmp_path):
    def plan(*argv):
        words = ["rank", *argv, "--db", str(tmp_path / "r.db")]
        return RankPlan.from_args(build_parser(words).parse_args(words))

    big = plan("--n", "40")                   # N = 8 inputs (32 columns) cannot fit n = 40: raised to 11
    assert big.linear.samples == (11, 64) and big.command() == "attnbounds rank --seed 0 --n 40"
    assert plan("--full", "--n", "64").linear.samples == (17, 64, 256)
    assert plan("--full").linear == V.FULL and plan().linear == V.QUICK
    one = plan("--r-star", "1")               # GD students of rank r* - 1 = 0 are not planned
    assert one.linear.gd_ranks() == (1, 3) and all("/r0/" not in k
                                                   for k in (c.key for c in V.linear_chunks(one.linear)[
                                                       f"rank.gd-pop-{one.linear.tag}"]))
    for p in (big, one):
        p.check()


@pytest.mark.parametrize("bad, match", [
    (dict(r_star=1), "r\\* = 1"), (dict(d=3, r_star=4), "r\\* = 4"), (dict(T=2, r_star=3, d=4), "r\\* <= T"),
    (dict(betas=(0.0,)), "beta > 0"), (dict(lams=(1.5,)), "lambda"), (dict(T=1, d=4, r_star=2), "r\\* <= T"),
    (dict(d=7, T=8, r_star=3), "d \\+ d\\^3 = 350"),
])
def test_the_rank_attention_plan_check_names_what_fails(bad, match):
    with pytest.raises(InvalidInput, match=match):
        replace(J.QUICK_ATT, **bad).check()


# -- every family's check refuses what its kernels would --------------------------------------------

def _planted(section):
    """A plan of ``section`` with one parameter its kernels refuse (and what the refusal names)."""
    checks = role(section, "checks")
    if section == "dobrushin":
        return replace(checks.Plan.for_verify(0, True), sizes=(2, 1)), "n = 1"
    if section == "trained":
        plan = checks.Plan.for_verify(0, True)
        return replace(plan, models=(replace(plan.models[0], max_tokens=1),)), "--max-tokens 1"
    if section == "rank":
        return checks.Plan(replace(V.FULL, init_scales=(0.1, 0.0))), "init_scales"
    if section == "poincare":
        return replace(checks.Plan.for_verify(0, True), families=("attn1", "attn3")), "attn3"
    if section == "modalities":
        return replace(checks.Plan.for_verify(0, True), models=("vit", "bert")), "bert"
    if section == "san":
        return replace(checks.Plan.for_verify(0, True), kernels=("sdpa", "flash")), "flash"
    if section == "prove":
        return replace(checks.Plan.for_verify(0, True), upto=(("d2.iff", 1),)), "d2.iff"
    if section == "stress":
        plan = checks.Plan.for_verify(0, True)
        return replace(plan, search=replace(plan.search, budget=10 ** 7)), "--budget"
    raise AssertionError(f"no planted plan for {section}")


@pytest.mark.parametrize("section", list(FAMILIES))
def test_every_familys_check_refuses_a_planted_parameter(section):
    plan, match = _planted(section)
    with pytest.raises(InvalidInput, match=match):
        plan.check()


def test_the_paper_presets_checked_as_their_networks_build_them(monkeypatch):
    """modalities and san: a preset whose networks cannot be built fails the check (the same
    validation the training applies), nothing trained."""
    from numerics.modalities import presets as MP
    from verification.san.checks import presets as SP

    monkeypatch.setitem(MP.PRESETS, "paper", replace(MP.PRESETS["paper"], dim=60))       # 60 heads of 8?
    with pytest.raises(InvalidInput, match="dim 60 is not a multiple of heads 8"):
        role("modalities", "checks").Plan.for_verify(0, True).check()
    monkeypatch.setitem(SP.PRESETS, "paper", replace(SP.PRESETS["paper"], d_model=50))
    with pytest.raises(InvalidInput, match="d_model 50 is not a multiple of n_head 4"):
        role("san", "checks").Plan.for_verify(0, True).check()


def test_a_rank_one_teacher_runs_its_gd_students(tmp_path):
    """r* = 1 (allowed by ``--r-star``): the population GD students are of rank 1 and 3, none of rank 0
    (which the GD kernel refuses), and they run."""
    from verification import campaign
    from verification.store import ResultStore

    plan = replace(V.QUICK, n=5, r_star=1, seeds=1, gd_seeds=2, gd_steps=20, init_scales=(1e-3,))
    plan.check()
    chunks = V.linear_chunks(plan)[f"rank.gd-pop-{plan.tag}"]
    assert sorted({c.args[2] for c in chunks}) == [1, 3]
    with ResultStore(tmp_path / "r.db") as store:
        assert campaign.run(store, f"rank.gd-pop-{plan.tag}", chunks, progress=False).computed == len(chunks)
