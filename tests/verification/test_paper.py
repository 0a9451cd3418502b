"""The paper builder: generated files from stored parts only, byte-identical rebuilds, a missing
campaign named, and a static check that can fail (unbalanced environment, undefined macro, missing
figure). The PDF is compiled where a TeX engine is installed."""
import sys
import types
from fractions import Fraction

import pandas as pd
import pytest

from verification.cli import main
from verification.paper.build import build, tex_engine
from verification.paper.latex import check_tree, macro_value, macros_tex, table_tex
from verification.report.part import Figure, MissingCampaign, Part, Table, macro_name
from verification.store import Record, ResultStore
from theory.verdicts import Verdict

from verification.testing.fakes import TOY_MAIN as MAIN  # noqa: E402
TOY = r"""\section{Toy}
The share of tight instances is \ToyShare{} over \ToyCount{} instances.
\input{tables/toy-table}
\begin{figure}[ht]\centering\includegraphics[width=0.5\textwidth]{figures/toy-figure.pdf}
\caption{A toy figure.}\end{figure}
"""


def toy_part(store, plan=None):
    """A family whose part reads its campaign from the store."""
    rows = list(store.records("toy-campaign"))
    if not rows:
        raise MissingCampaign("toy-campaign", "attnbounds toy")
    tight = sum(r["verdict"] == "tight" for r in rows)
    part = Part("toy", commands=["attnbounds toy --seed 0"])
    part.macro(Fraction(tight, len(rows)), "toy", "share")
    part.macro(len(rows), "toy", "count")
    frame = pd.DataFrame({"instance": [r["instance"] for r in rows], "verdict": [r["verdict"] for r in rows],
                          "slack": [r["slack"] for r in rows]})
    part.tables.append(Table("toy-table", frame, "Verdicts of the toy campaign (at least 50% & more)", "seed 0"))
    part.figures.append(Figure("toy-figure", lambda ax: ax.plot(frame["slack"].to_numpy()), "slack", "seed 0"))
    return part


@pytest.fixture
def toy(monkeypatch, tmp_path):
    mod = types.ModuleType("toy_family")
    mod.paper_part = toy_part
    monkeypatch.setitem(sys.modules, "toy_family", mod)
    src = tmp_path / "src"
    (src / "sections").mkdir(parents=True)
    (src / "main.tex").write_text(MAIN)
    (src / "sections" / "toy.tex").write_text(TOY)
    store = ResultStore(str(tmp_path / "r.db"))
    yield store, src
    store.close()


def fill(store):
    recs = [Record(theorem="dobrushin.factor", instance=f"i{k}", verdict=Verdict.TIGHT if k % 2 else Verdict.HOLDS,
                   slack=0.0 if k % 2 else 0.125 * k) for k in range(4)]
    store.write_chunk("toy-campaign", "c0", recs)


def snapshot(root):
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_build_writes_every_file_and_rebuilds_byte_identically(toy, tmp_path):
    store, src = toy
    fill(store)
    out = tmp_path / "paper"
    res = build(store, out, families=["toy_family"], source=src)
    assert {k: v for k, v in res.macros.items() if not k.startswith("Build")} == {"ToyShare": Fraction(1, 2),
                                                                                  "ToyCount": 4}
    macros = (out / "generated" / "macros.tex").read_text()
    # each quoted number links to its family's entry in the appendix
    assert "\\newcommand{\\ToyShare}{\\ProvLink{prov:toy}{1/2}}" in macros
    assert "\\newcommand{\\ToyCount}{\\ProvLink{prov:toy}{4}}" in macros
    assert "\\newcommand{\\BuildKind}{quick}" in macros
    tex = (out / "tables" / "toy-table.tex").read_text()
    assert "\\toprule" in tex and "toy campaign" in tex and "50\\%" in tex and "\\&" in tex and "0.25" in tex
    assert (out / "figures" / "toy-figure.pdf").exists() and (out / "figures" / "toy-figure.png").exists()
    theorems = (out / "generated" / "theorems.tex").read_text()
    assert "\\label{thm:dobrushin.factor}" in theorems
    assert "attnbounds toy --seed 0" in (out / "generated" / "appendix.tex").read_text()
    first = snapshot(out)
    build(store, tmp_path / "again", families=["toy_family"], source=src)
    assert snapshot(tmp_path / "again") == first       # a second folder: byte for byte the same
    build(store, out, families=["toy_family"], source=src)
    assert snapshot(out) == first
    # the data changes -> the generated files change (the test can fail)
    store.write_chunk("toy-campaign", "c1", [Record(theorem="dobrushin.factor", instance="i9",
                                                    verdict=Verdict.TIGHT, slack=0.0)])
    build(store, out, families=["toy_family"], source=src)
    assert "\\newcommand{\\ToyCount}{\\ProvLink{prov:toy}{5}}" in (out / "generated" / "macros.tex").read_text()


def test_missing_campaign_is_named(toy, tmp_path):
    store, src = toy
    with pytest.raises(MissingCampaign, match="toy-campaign.*attnbounds toy"):
        build(store, tmp_path / "p", families=["toy_family"], source=src)


def test_static_check_catches_what_tex_would(toy, tmp_path):
    store, src = toy
    fill(store)
    out = tmp_path / "p"
    build(store, out, families=["toy_family"], source=src)
    assert check_tree(out) == []
    sec = out / "sections" / "toy.tex"
    good = sec.read_text()
    sec.write_text(good + "\\begin{itemize}\\item x\n")
    assert any("unclosed" in p for p in check_tree(out))
    sec.write_text(good + "\\UnknownNumber\n")
    assert any("\\UnknownNumber" in p for p in check_tree(out))
    sec.write_text(good.replace("toy-figure.pdf", "nowhere.pdf"))
    assert any("nowhere.pdf" in p for p in check_tree(out))
    sec.write_text(good + "\\input{tables/absent}\n")
    assert any("absent" in p for p in check_tree(out))
    # the builder refuses an inconsistent folder
    (src / "sections" / "toy.tex").write_text(TOY + "\\NotInTheStore\n")
    with pytest.raises(ValueError, match="NotInTheStore"):
        build(store, tmp_path / "q", families=["toy_family"], source=src)


def test_macros_and_tables_render_deterministically():
    assert macro_name("D1 share", "MiniLM", "layer 6") == "DOneShareMiniLMLayerSix"
    assert macro_value("X", 0.59) == "0.59" and macro_value("X", 12345678.0).startswith("\\ensuremath{1.23")
    assert macro_value("X", 2.5e-5) == "\\ensuremath{2.50\\times 10^{-5}}"
    assert macro_value("X", "a_b & c") == "a\\_b \\& c"
    with pytest.raises(ValueError, match="finite"):
        macro_value("X", float("nan"))
    with pytest.raises(ValueError, match="letters only"):
        macros_tex({"Bad1": 1})
    with pytest.raises(ValueError, match="no columns"):
        table_tex(Table("t", pd.DataFrame(), "c"))
    with pytest.raises(ValueError, match="file name"):
        table_tex(Table("a b", pd.DataFrame({"x": [1]}), "c"))


def test_cli_paper_names_a_missing_store(tmp_path, capsys):
    assert main(["paper", "--db", str(tmp_path / "none.db"), "--out", str(tmp_path / "p")]) == 2
    err = capsys.readouterr().err
    assert "none.db" in err and "attnbounds verify" in err and "Traceback" not in err


def test_the_repository_paper_compiles_where_tex_is_installed(toy, tmp_path):
    """With a TeX engine the toy paper compiles to a PDF; without one, --pdf says how to get one."""
    store, src = toy
    fill(store)
    if tex_engine() is None:
        with pytest.raises(ValueError, match="apt-get install"):
            build(store, tmp_path / "p", families=["toy_family"], source=src, pdf=True)
        return
    res = build(store, tmp_path / "p", families=["toy_family"], source=src, pdf=True)
    assert res.pdf.exists() and res.pdf.stat().st_size > 1000


def test_findings_block_cites_the_store(toy, tmp_path):
    from verification.paper.build import BEGIN, END, findings_md, update_readme

    store, src = toy
    fill(store)
    (src / "findings.md.j2").write_text("- tight share {{ ToyShare }} of {{ ToyCount }} instances\n")
    out = tmp_path / "p"
    build(store, out, families=["toy_family"], source=src)
    text = (out / "generated" / "findings.md").read_text()
    assert text == "- tight share 1/2 of 4 instances\n"
    readme = tmp_path / "README.md"
    readme.write_text(f"# x\n{BEGIN}\n- stale numbers\n{END}\nrest\n")
    assert update_readme(readme, text) is True
    assert readme.read_text() == f"# x\n{BEGIN}\n- tight share 1/2 of 4 instances\n{END}\nrest\n"
    assert update_readme(readme, text) is False
    (src / "findings.md.j2").write_text("{{ NotAMacro }}\n")
    with pytest.raises(ValueError, match="NotAMacro"):
        findings_md({"ToyShare": 1}, src / "findings.md.j2")
    with pytest.raises(ValueError, match="no findings block"):
        update_readme(tmp_path / "r2.md" if (tmp_path / "r2.md").write_text("none") else None, text)


def test_dangling_refs_are_problems_and_a_table_no_document_inputs_is_data(toy, tmp_path):
    store, src = toy
    fill(store)
    sec = src / "sections" / "toy.tex"
    sec.write_text(TOY + "See Table~\\ref{tab:nowhere}.\n")
    with pytest.raises(ValueError, match="tab:nowhere"):
        build(store, tmp_path / "a", families=["toy_family"], source=src)
    sec.write_text(TOY.replace("\\input{tables/toy-table}\n", ""))
    res = build(store, tmp_path / "b", families=["toy_family"], source=src)     # not input: data only
    assert not (tmp_path / "b" / "tables" / "toy-table.tex").exists() and res.tables == []
    assert (tmp_path / "b" / "data" / "toy-table.csv").is_file()
    assert "prov:data:toy-table" in (tmp_path / "b" / "generated" / "appendix.tex").read_text()


def test_the_families_parts_come_from_their_paper_roles():
    """The builder asks each family of the one table (verification.commands), in main-job order,
    through its ``paper`` role; the CLI is not imported for it."""
    import subprocess

    from verification.commands import FAMILIES
    from verification.paper.build import paper_modules

    assert paper_modules() == tuple(f"{package}.paper" for package in FAMILIES.values())
    code = ("import sys; from importlib import import_module; from verification.paper.build import paper_modules\n"
            "assert all(callable(import_module(m).paper_part) for m in paper_modules())\n"
            "assert 'verification.cli' not in sys.modules, 'the paper imported the CLI'")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=300)
