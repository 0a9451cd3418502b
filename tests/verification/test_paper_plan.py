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


def test_dinov2s_share_enters_the_abstract_only_when_measured_on_every_photograph():
    assert BUNDLED_COUNT == len(SKIMAGE_PHOTOS) + len(SKLEARN_PHOTOS) == 19
    part = Part("trained")
    _abstract_macro(part, "dinov2", "DINOvTwo", _findings(4, 3))
    assert part.macros["DINOvTwoAbstract"] == ""                      # the quick plan's 4 photographs: not a word
    part = Part("trained")
    _abstract_macro(part, "dinov2", "DINOvTwo", _findings(BUNDLED_COUNT, 7))
    text = part.macros["DINOvTwoAbstract"]
    assert text.startswith(", of DINOv2-S on 0.37 [") and text.endswith("(19 photographs)"), text
    part = Part("trained")
    _abstract_macro(part, "minilm", "MiniLM", _findings(120, 50))      # a text model: no such clause
    assert "MiniLMAbstract" not in part.macros
