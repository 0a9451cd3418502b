"""The paper's plan (``attnbounds verify --full``, ``make paper-full``): what the abstract may say
about a model measured on part of its inputs."""
from types import SimpleNamespace

from numerics.sources.images import BUNDLED_COUNT, SKIMAGE_PHOTOS, SKLEARN_PHOTOS
from verification.findings import Share
from verification.report.part import Part
from verification.trained.paper.model import _abstract_macro


def _findings(inputs: int, k: int):
    layer = SimpleNamespace(tight=Share.wilson(k, inputs))
    return SimpleNamespace(inputs=inputs, layers=2, sets={"all": SimpleNamespace(layers={0: layer, 1: layer})})


BUNDLED = "trained-v6:dinov2:bundled-photos:max257:r0.5:mean:w0"
OWN = "trained-v6:dinov2:my-photos:max257:r0.5:mean:w0"


def test_dinov2s_share_enters_the_abstract_only_when_measured_on_every_photograph():
    assert BUNDLED_COUNT == len(SKIMAGE_PHOTOS) + len(SKLEARN_PHOTOS) == 19
    part = Part("trained")
    _abstract_macro(part, "dinov2", "DINOvTwo", _findings(4, 3), BUNDLED)
    assert part.macros["DINOvTwoAbstract"] == ""                      # the quick plan's 4 photographs: not a word
    part = Part("trained")
    _abstract_macro(part, "dinov2", "DINOvTwo", _findings(BUNDLED_COUNT, 7), BUNDLED)
    text = part.macros["DINOvTwoAbstract"]
    assert text.startswith(", of DINOv2-S on 0.37 [") and text.endswith("(19 photographs)"), text
    part = Part("trained")                                            # a user's own 19 images: not the bundled corpus
    _abstract_macro(part, "dinov2", "DINOvTwo", _findings(BUNDLED_COUNT, 7), OWN)
    assert part.macros["DINOvTwoAbstract"] == ""
    part = Part("trained")
    _abstract_macro(part, "minilm", "MiniLM", _findings(120, 50), "trained-v6:minilm:pydoc+doc+lic")
    assert "MiniLMAbstract" not in part.macros


def test_a_sections_cost_reads_as_not_measured_once_its_full_plan_changes(monkeypatch):
    from verification import plan_cost as P
    from verification.commands import FAMILIES, SECOND_LANE_FULL as SECOND_LANE

    digests = {s: P.plan_digest(s) for s in FAMILIES}
    assert len(set(digests.values())) == len(FAMILIES)
    assert P.plan_digest("stress", 1) != digests["stress"]              # the seed is part of the plan
    costs = {s: P.SectionCost(d, 10.0 if s in SECOND_LANE else 4.0, 12.0, "c", "m", "x", "d") for s, d in digests.items()}
    monkeypatch.setattr(P, "MEASURED", costs)
    first, second = P.plan_cost()["lanes"]
    assert second == 10.0 * len(SECOND_LANE) and first == 4.0 * (len(FAMILIES) - len(SECOND_LANE))
    monkeypatch.setattr(P, "MEASURED", dict(costs, stress=P.SectionCost("00000000", 1.0, 1.0, "c", "m", "x", "d")))
    assert P.measured("stress") is None and P.plan_cost()["lanes"] is None
    from verification.paper.appendix import plan_cost_sentence
    text = plan_cost_sentence(True, 0)
    assert "stress not measured at its present plan" in text and "dobrushin 10.0" in text
    assert plan_cost_sentence(False, 0) == ""


def test_the_full_build_note_quotes_the_plans_cost_only_when_every_section_is_measured(monkeypatch):
    from verification import plan_cost as P
    from verification.commands import FAMILIES
    from verification.paper.build import build_macros

    monkeypatch.setattr(P, "MEASURED", {})
    assert build_macros(True)["BuildNote"] == "Built from the full settings of the main job (attnbounds verify --full)."
    monkeypatch.setattr(P, "MEASURED", {s: P.SectionCost(P.plan_digest(s), 30.0, 30.0, "c", "m", "x", "d")
                                        for s in FAMILIES})
    from verification.commands import SECOND_LANE_FULL as SECOND_LANE
    longer = 30 * max(len(SECOND_LANE), len(FAMILIES) - len(SECOND_LANE))
    assert f"about {longer} minutes on 2 cores" in build_macros(True)["BuildNote"]


def test_a_presets_settings_are_part_of_its_sections_plan(monkeypatch):
    """SAN's and the modalities' full plans name a preset ("paper"): a change inside that preset (here its
    seeds) is a changed plan, so its measured cost reads as not measured."""
    import dataclasses

    from numerics.modalities import presets as mod_presets
    from verification import plan_cost as P
    from verification.san.checks import presets as san_presets

    before = {s: P.plan_digest(s) for s in ("san", "modalities", "stress")}
    assert P.measured("san") is not None and P.measured("modalities") is not None      # as measured
    for table in (san_presets.PRESETS, mod_presets.PRESETS):
        monkeypatch.setitem(table, "paper", dataclasses.replace(table["paper"], seeds=table["paper"].seeds + 1))
    after = {s: P.plan_digest(s) for s in before}
    assert after["san"] != before["san"] and after["modalities"] != before["modalities"]
    assert after["stress"] == before["stress"]                          # a section without a preset: unchanged
    assert P.measured("san") is None and P.measured("modalities") is None
