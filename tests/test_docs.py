"""The documentation lives in the repository and cannot drift from the code."""
import dataclasses
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_no_readme_link_leaves_the_repository():
    for doc in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        text = doc.read_text()
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            assert "://" not in target and not target.startswith(".."), (doc.name, target)
            assert (doc.parent / target.split("#")[0]).exists(), (doc.name, target)
        assert "../shared" not in text, doc.name


def test_theorem_list_is_generated_from_the_registry():
    from theory.registry import theorems_markdown

    assert (ROOT / "docs" / "theorems.md").read_text() == theorems_markdown(), \
        "docs/theorems.md is stale: attnbounds theorems --markdown > docs/theorems.md"


def test_api_reference_covers_every_public_name_and_field():
    import numerics.dobrushin as D

    api = (ROOT / "docs" / "api.md").read_text()
    missing = [n for n in D.__all__ if f"`{n}" not in api]
    for cls in (D.FactorCheck, D.RolloutTightness):
        missing += [f"{cls.__name__}.{f.name}" for f in dataclasses.fields(cls) if f"`{f.name}`" not in api]
    assert not missing, missing
    glossary = api[api.index("## Glossary"):]
    for term in ("content tokens", "only via token 0", "Ahat", "chain", "slack", "certified"):
        assert term in glossary, term
