"""What the main job's stress section runs (quick, or ``--full``): Theorem D1's sweep, its guided
search and the rollout sweep (Theorem D2 at every step of attention rollout). The section
(:func:`verification.stress.command.verify_section`) runs these plans and the paper
(:func:`verification.stress.paper.paper_part`) reads exactly their chunks.

>>> section_plan(THEOREM, 0, False).instances, sorted(search_chunks(False))
(200000, ['n3/b500', 'n4/b500', 'n5/b500'])
>>> sweep_command(ROLLOUT, 0, False)
'attnbounds stress dobrushin.rollout --instances 20000 --seed 0'
"""
from __future__ import annotations

from verification.stress.checks.plan import THEOREMS, StressPlan

THEOREM = "dobrushin.factor"                    # the sweep and the guided search
INSTANCES = {False: 200_000, True: 1_000_000}   # quick / --full
BUDGET = {False: 500, True: 4000}               # the search's evaluations per size
SIZES = (3, 4, 5)                               # the search's sizes
ROLLOUT = "dobrushin.rollout"                   # stacks of layers, the theorem's default cells
ROLLOUT_INSTANCES = {False: 20_000, True: 100_000}


def section_plan(theorem: str, seed: int, full: bool) -> StressPlan:
    """The plan the main job's stress section runs for ``theorem`` (:data:`THEOREM` or
    :data:`ROLLOUT`, the theorem's default cells): the paper reads exactly its chunks (a user's run
    with other cells is another campaign; a larger run of the same cells adds chunks the paper does
    not read)."""
    spec = THEOREMS[theorem]
    return StressPlan(theorem, spec.families, spec.sizes, instance_count(theorem, full), seed=seed)


def instance_count(theorem: str, full: bool) -> int:
    return ROLLOUT_INSTANCES[full] if theorem == ROLLOUT else INSTANCES[full]


def search_chunks(full: bool) -> set[str]:
    """The chunk keys of the main job's guided search (one per size, at its budget)."""
    return {f"n{n}/b{BUDGET[full]}" for n in SIZES}


def sweep_command(theorem: str, seed: int, full: bool) -> str:
    """The command that fills the section's sweep of ``theorem`` (a larger ``--instances`` extends
    the same campaign; the paper reads the section's chunks only)."""
    return f"attnbounds stress {theorem} --instances {instance_count(theorem, full)} --seed {seed}"


def search_command(seed: int, full: bool = False) -> str:
    """The command that fills the section's guided search."""
    return (f"attnbounds stress {THEOREM} --search --budget {BUDGET[full]} "
            f"--sizes {','.join(map(str, SIZES))} --seed {seed}")
