"""The plans of the rank, Poincare and SAN families (:class:`verification.plan.Plan`): the main
job's plan says the command the paper prints for it, a plan made from the family's own command
line says a line that, parsed and planned again, gives the same campaigns and the same line, and
the provenance is one flat dict of strings and numbers."""
import shlex

import pytest

from verification.cli import build_parser
from verification.family import role
from verification.plan import PLAN_PROTOCOL, Plan as PlanProtocol, provenance_line

FAMILIES = ("rank", "poincare", "san")
# the paper's command of Plan.for_verify(seed, full), as the paper printed it before the plan said it
VERIFY = {("rank", 0, False): "attnbounds verify --only rank --seed 0",
          ("rank", 3, True): "attnbounds verify --only rank --seed 3 --full",
          ("poincare", 0, False): "attnbounds verify --only poincare --seed 0",
          ("poincare", 3, True): "attnbounds verify --only poincare --seed 3 --full",
          ("san", 0, False): "attnbounds san --preset quick --seed 0",
          ("san", 3, True): "attnbounds san --preset paper --seed 3"}
# family command lines and the line their plan says (None: the same line)
LINES = [("rank", "rank", "attnbounds rank --seed 0"),
         ("rank", "rank --full --seed 2", "attnbounds rank --seed 2 --full"),
         ("rank", "rank --part linear,weights --n 12 --r-star 5", "attnbounds rank --part linear,weights --seed 0 --n 12 --r-star 5"),
         ("rank", "rank --part attention --n 12", "attnbounds rank --part attention --seed 0"),
         ("rank", "rank --n 8 --r-star 3", "attnbounds rank --seed 0"),
         ("poincare", "poincare", "attnbounds poincare --seed 0"),
         ("poincare", "poincare --families attn1,lora2 --no-sde --full --seed 4",
          "attnbounds poincare --seed 4 --full --families attn1,lora2 --no-sde"),
         ("san", "san", "attnbounds san --preset quick --seed 0"),
         ("san", "san --full --seed 1", "attnbounds san --preset paper --seed 1"),
         ("san", "san --preset tiny --kernels explicit --device cuda",
          "attnbounds san --preset tiny --seed 0 --kernels explicit --device cuda"),
         ("san", "san --preset tiny --kernels explicit,sdpa", "attnbounds san --preset tiny --seed 0 --kernels explicit,sdpa")]


def planned(family: str, line: str, tmp_path):
    words = shlex.split(line)
    words = words[1:] if words[0] == "attnbounds" else words
    common = ["--db", str(tmp_path / "r.db"), "--out", str(tmp_path / "out")]
    return role(family, "checks").Plan.from_args(build_parser(words).parse_args(words + common))


@pytest.mark.parametrize("family", FAMILIES)
def test_the_plan_has_the_protocol(family):
    Plan = role(family, "checks").Plan
    plan = Plan.for_verify(0, False)
    assert isinstance(plan, PlanProtocol) and all(hasattr(Plan, m) for m in PLAN_PROTOCOL)
    assert (plan.seed, plan.full) == (0, False) and Plan.for_verify(3, True).full is True
    prov = plan.provenance()
    assert prov["seed"] == 0 and prov["preset"] == "quick" and Plan.for_verify(0, True).provenance()["preset"] != "quick"
    assert all(isinstance(k, str) and isinstance(v, (str, int, float)) for k, v in prov.items()), prov
    assert provenance_line(prov).startswith("seed 0; preset quick")


@pytest.mark.parametrize("family, seed, full", sorted(VERIFY))
def test_the_main_jobs_plan_says_the_command_the_paper_prints(family, seed, full):
    assert role(family, "checks").Plan.for_verify(seed, full).command() == VERIFY[family, seed, full]


@pytest.mark.parametrize("family, line, said", LINES)
def test_a_command_lines_plan_says_a_line_that_reproduces_it(family, line, said, tmp_path):
    plan = planned(family, line, tmp_path)
    assert plan.command() == said
    again = planned(family, said, tmp_path)
    assert again.campaigns() == plan.campaigns() and again.command() == said


def test_a_line_that_differs_plans_other_campaigns(tmp_path):
    """The round trip can fail: a line missing an option the plan needs plans other campaigns."""
    plan = planned("rank", "rank --n 12", tmp_path)
    assert planned("rank", "rank", tmp_path).campaigns() != plan.campaigns()
    assert planned("poincare", "poincare --no-sde", tmp_path).campaigns() != planned("poincare", "poincare", tmp_path).campaigns()
    assert planned("san", "san --device cuda", tmp_path).campaigns() != planned("san", "san", tmp_path).campaigns()


def test_the_rank_paper_refuses_a_plan_of_fewer_parts(tmp_path):
    from theory.errors import InvalidInput
    from verification.rank.paper import check_plan

    check_plan(planned("rank", "rank --n 12", tmp_path))
    with pytest.raises(InvalidInput, match="--part linear: the paper's rank part shows every part"):
        check_plan(planned("rank", "rank --part linear", tmp_path))
