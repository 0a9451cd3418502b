"""The formal proofs in theory/formal (Coq 8.16 and mathcomp; docs/theory.md, section 1): every file
of the _CoqProject compiles, the main results are closed under the global context, coqchk reports no
axiom, no file leaves a proof out, and the Coq definition of delta is the suite's: evaluated by Coq
on rational matrices, it gives exactly the values of numerics.dobrushin.dobrushin and of the exact
rational evaluator (numerics.stochastic.ExactMatrix). The build is `make proofs` itself (run here in a
temporary folder, so `make test` runs it), and a changed lemma statement fails it. Where coqc or
coqchk is missing the tests that need them skip, naming the packages: apt-get install coq
libcoq-mathcomp (with CI=true such a skip fails the suite: tests/conftest.py; .ci/run installs them)."""
from __future__ import annotations

import random
import re
import shutil
import subprocess
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
FORMAL = ROOT / "theory" / "formal"
INSTALL = "apt-get install coq libcoq-mathcomp"
MISSING = [tool for tool in ("coqc", "coqchk", "make") if shutil.which(tool) is None]
needs_coq = pytest.mark.skipif(bool(MISSING), reason=f"{' and '.join(MISSING)} not found: install Coq 8.16 "
                                                      f"and mathcomp with `{INSTALL}`")
FORBIDDEN = re.compile(r"\b(Admitted|admit|Axiom|Parameter)\b")
# the lemmas the registry and the paper cite (theory/formal/<file>.v:<lemma>)
MAIN = {"dobrushin.v": ("d1_bound", "d1_equality", "d1_equality_sufficient", "d1_equality_necessary"),
        "lazy.v": ("lazy_bound", "lazy_equality", "lazy_bound_any", "lazy_equality_any", "lazy_half"),
        "causal.v": ("d1_causal", "d1_causal_submatrix"),
        "product.v": ("d2_bound", "rollout_bound"),
        "product_equality.v": ("d2_equality", "rollout_le_prod", "rollout_chain"),
        "causal_product.v": ("d2_causal", "d2_causal_first_column"),
        "stochastic.v": ("tv_min", "sum_norm_pos", "delta_natE")}


def project() -> tuple[list[str], list[str]]:
    """(coqc flags, files in build order) of theory/formal/_CoqProject (``-arg X`` passes X)."""
    lines = [line.strip() for line in (FORMAL / "_CoqProject").read_text().splitlines()]
    flags = [tok for line in lines if line.startswith("-") for tok in line.split() if tok != "-arg"]
    return flags, [line for line in lines if line.endswith(".v")]


def coqc(folder: Path, name: str) -> subprocess.CompletedProcess:
    return subprocess.run(["coqc", *project()[0], name], cwd=folder, capture_output=True, text=True, timeout=600)


def copy_sources(folder: Path) -> None:
    for path in FORMAL.iterdir():
        if path.suffix == ".v" or path.name == "_CoqProject":
            shutil.copy(path, folder / path.name)


def make_proofs(build: Path, formal: Path = FORMAL) -> subprocess.CompletedProcess:
    """``make proofs`` (the Makefile's target, exactly as a user runs it) on the sources in ``formal``,
    compiled in ``build``: the forbidden-word scan, coqc on every file of the _CoqProject, every
    ``Print Assumptions`` closed, coqchk reporting no axiom."""
    return subprocess.run(["make", "-s", "--no-print-directory", "-C", str(ROOT), "proofs", f"FORMAL={formal}",
                           f"FORMAL_BUILD={build}"], capture_output=True, text=True, timeout=1800)


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> tuple[Path, dict[str, str]]:
    """theory/formal built by ``make proofs`` in a temporary folder (the sources and build/ stay
    clean): (folder, coqc's stdout by file)."""
    folder = tmp_path_factory.mktemp("formal")
    run = make_proofs(folder)
    assert run.returncode == 0, f"make proofs fails:\n{run.stdout[-4000:]}\n{run.stderr[-4000:]}"
    names = project()[1]
    assert f"make proofs: {len(names)} files compiled, no axiom (coqchk)" in run.stdout, run.stdout
    return folder, {name: (folder / f"{name}.log").read_text() for name in names}


# -- without Coq ----------------------------------------------------------------------------------
def test_every_file_is_built_and_the_main_lemmas_exist():
    on_disk = sorted(p.name for p in FORMAL.glob("*.v"))
    assert sorted(project()[1]) == on_disk, "theory/formal/_CoqProject must list every .v file"
    for name, lemmas in MAIN.items():
        text = (FORMAL / name).read_text()
        for lemma in lemmas:
            assert re.search(rf"^(Lemma|Theorem) {lemma}\b", text, re.M), f"{name}: no lemma {lemma}"
            assert f"Print Assumptions {lemma}." in (FORMAL / "assumptions.v").read_text(), lemma


def test_no_file_leaves_a_proof_out():
    found = [f"{p.name}:{i}: {line.strip()}" for p in sorted(FORMAL.glob("*.v"))
             for i, line in enumerate(p.read_text().splitlines(), 1) if FORBIDDEN.search(line)]
    assert not found, "\n".join(found)


def test_the_scan_finds_planted_gaps():
    planted = ["Lemma x : False. Proof. admit. Admitted.", "Axiom choice : False.", "Parameter p : nat."]
    assert all(FORBIDDEN.search(line) for line in planted)
    assert not FORBIDDEN.search("(* admits no axiom; Parameters of the section *)")


# -- with Coq -------------------------------------------------------------------------------------
def all_closed(source: str, log: str) -> bool:
    """Every ``Print Assumptions`` of ``source`` printed "Closed under the global context"."""
    asked = re.findall(r"^Print Assumptions (\w+)\.", source, re.M)
    return bool(asked) and log.count("Closed under the global context") == len(asked)


def coqchk(folder: Path, modules: list[str]) -> tuple[bool, str]:
    """(coqchk succeeded and reports no axiom, its output)."""
    run = subprocess.run(["coqchk", "-silent", "-o", "-Q", ".", "AttnBounds", *modules], cwd=folder,
                         capture_output=True, text=True, timeout=900)
    out = run.stdout + run.stderr
    return run.returncode == 0 and re.search(r"Axioms:\s*<none>", out) is not None, out


@needs_coq
def test_main_results_are_closed_under_the_global_context(built):
    _, logs = built
    assert all_closed((FORMAL / "assumptions.v").read_text(), logs["assumptions.v"]), logs["assumptions.v"]


@needs_coq
def test_every_file_compiles_and_coqchk_reports_no_axiom(built):
    """make proofs (the fixture) compiled every file of the _CoqProject and ran coqchk on all of them;
    its log is read here again, independently of the Makefile's own grep."""
    folder, _ = built
    for name in project()[1]:
        assert (folder / f"{name}o").exists(), f"{name} was not compiled"
    out = (folder / "coqchk.log").read_text()
    assert re.search(r"Axioms:\s*<none>", out) and "Error" not in out, out


@needs_coq
def test_a_changed_lemma_statement_fails_make_proofs(tmp_path):
    """Planted: D1's bound stated without its 1 (delta((I+A)/2) <= delta(A)/2, false for the identity);
    its proof no longer goes through, and make proofs fails naming the file. A planted Admitted fails
    it before anything is compiled."""
    src = tmp_path / "src"
    src.mkdir()
    copy_sources(src)
    text = (src / "dobrushin.v").read_text()
    stated = "delta (rollout_factor A) <= (1 + delta A) / 2%:R."
    assert text.count(stated) == 1, "the statement of d1_bound moved: update the plant"
    (src / "dobrushin.v").write_text(text.replace(stated, "delta (rollout_factor A) <= delta A / 2%:R."))
    run = make_proofs(tmp_path / "build", src)
    assert run.returncode != 0 and 'File "./dobrushin.v", line' in run.stderr, run.stdout + run.stderr
    assert "Error:" in run.stderr and not (tmp_path / "build" / "dobrushin.vo").exists()
    (src / "dobrushin.v").write_text(text.replace("Proof. by move=> _; rewrite mulrC d1_bound_any. Qed.",
                                                  "Proof. Admitted.", 1))
    run = make_proofs(tmp_path / "build2", src)
    assert run.returncode != 0 and "leave a proof out" in run.stderr, run.stderr
    assert not (tmp_path / "build2").exists()


@needs_coq
def test_the_axiom_checks_catch_a_planted_axiom(tmp_path):
    """Planted: a lemma proved from an axiom. Print Assumptions names it, and coqchk reports it."""
    source = "Axiom bad : False.\nLemma l : 0 = 1.\nProof. destruct bad. Qed.\nPrint Assumptions l.\n"
    (tmp_path / "planted.v").write_text(source)
    run = subprocess.run(["coqc", "-Q", ".", "AttnBounds", "planted.v"], cwd=tmp_path, capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert not all_closed(source, run.stdout) and "bad" in run.stdout
    ok, out = coqchk(tmp_path, ["AttnBounds.planted"])
    assert not ok and "AttnBounds.planted.bad" in out, out


# -- the definition of delta is the suite's --------------------------------------------------------
def rational_cases() -> list[list[list[Fraction]]]:
    """Small row-stochastic rational matrices: square and rectangular, one row, the identity, causal,
    dyadic (exact in float64) and not (thirds, fifths, sevenths)."""
    F = Fraction
    cases = [[[F(9, 10), F(1, 10)], [F(2, 10), F(8, 10)]],                  # 2x2: |det| = 7/10
             [[F(int(i == k)) for k in range(3)] for i in range(3)],       # identity: 1
             [[F(1, 4), F(1, 2), F(1, 4)]],                                 # one row: 0
             [[F(1), F(0), F(0)], [F(1, 2), F(1, 2), F(0)], [F(1, 4), F(1, 4), F(1, 2)]]]  # causal
    rng = random.Random(28)
    for n, m, dyadic in ((2, 3, True), (3, 2, True), (4, 3, True), (3, 4, True), (3, 3, False),
                         (4, 2, False), (2, 4, False), (4, 4, False)):
        rows = []
        for _ in range(n):
            den = rng.choice((4, 8, 16) if dyadic else (3, 5, 6, 7, 12))
            cuts = sorted(rng.randint(0, den) for _ in range(m - 1))
            parts = [b - a for a, b in zip([0] + cuts, cuts + [den])]
            rows.append([F(p, den) for p in parts])
        cases.append(rows)
    return cases


def exact_delta(rows: list[list[Fraction]]) -> Fraction:
    from numerics.stochastic import ExactMatrix

    E = ExactMatrix.from_rationals(rows)
    return max((E.tv(i, j) for i in range(len(rows)) for j in range(len(rows))), default=Fraction(0))


def coq_rat(x: Fraction) -> str:
    assert x >= 0
    return f"q {x.numerator} {x.denominator}"


def check_file(cases: list[tuple[list[list[Fraction]], Fraction]]) -> str:
    """A Coq file asserting delta (\\matrix of the rows) = value for every case, by vm_compute on rat
    through delta_natE (the definition over any realFieldType, proved equal to its nat-indexed form)."""
    out = ["From mathcomp Require Import all_ssreflect all_algebra.",
           "From AttnBounds Require Import stochastic.",
           "Local Open Scope ring_scope.",
           "Definition q (a b : nat) : rat := fracq (Posz a, Posz b)."]
    for c, (rows, value) in enumerate(cases):
        n, m = len(rows), len(rows[0])
        body = "; ".join("[:: " + "; ".join(coq_rat(x) for x in row) + "]" for row in rows)
        f = f"(fun i k => nth 0 (nth [::] rows{c} i) k)"
        out += [f"Definition rows{c} : seq (seq rat) := [:: {body}].",
                f"Lemma delta{c} : (delta (\\matrix_(i < {n}, k < {m}) nth 0 (nth [::] rows{c} i) k) "
                f"== {coq_rat(value)}) = true.",
                f"Proof. by rewrite (delta_natE {n} {m} {f}) /delta_nat unlock; vm_compute. Qed."]
    return "\n".join(out) + "\n"


def test_the_cases_agree_with_numerics():
    """The expected values: the exact evaluator, and numerics.dobrushin.dobrushin exactly where the
    entries are dyadic (float64 arithmetic is then exact), within rounding elsewhere."""
    from numerics.dobrushin import dobrushin

    for rows in rational_cases():
        exact = exact_delta(rows)
        got = float(dobrushin(np.array([[float(x) for x in row] for row in rows])))
        if all(x.denominator & (x.denominator - 1) == 0 for row in rows for x in row):
            assert Fraction(got) == exact, rows
        else:
            assert abs(got - float(exact)) <= 1e-12, rows
    assert exact_delta(rational_cases()[0]) == Fraction(7, 10)


@needs_coq
def test_coq_delta_is_the_suites(built, tmp_path):
    folder, _ = built
    cases = [(rows, exact_delta(rows)) for rows in rational_cases()]
    (folder / "delta_check.v").write_text(check_file(cases))
    run = coqc(folder, "delta_check.v")
    assert run.returncode == 0, f"Coq's delta differs from the suite's:\n{run.stdout}\n{run.stderr}"
    # the same file with delta doubled (the 1/2 dropped) is rejected
    doubled = [(rows, 2 * value) for rows, value in cases if value]
    (folder / "delta_doubled.v").write_text(check_file(doubled))
    assert coqc(folder, "delta_doubled.v").returncode != 0


@needs_coq
def test_a_changed_definition_is_caught(tmp_path):
    """Planted: stochastic.v's definitions with the 1/2 dropped from tv (and from its nat-indexed
    form, so that delta_natE still holds) compile, and the check against numerics then fails."""
    text = (FORMAL / "stochastic.v").read_text()
    head = text[:text.index("Section Halves.")]
    planted = head.replace("2%:R^-1 * \\sum", "1 * \\sum")
    assert planted.count("1 * \\sum") == 2, "the definitions of tv and delta_nat moved: update the plant"
    cases = [(rows, exact_delta(rows)) for rows in rational_cases()[:2]]
    (tmp_path / "delta_check.v").write_text(check_file(cases))
    (tmp_path / "stochastic.v").write_text(head)
    assert coqc(tmp_path, "stochastic.v").returncode == 0
    assert coqc(tmp_path, "delta_check.v").returncode == 0, "the unplanted definitions must pass"
    (tmp_path / "stochastic.v").write_text(planted)
    assert coqc(tmp_path, "stochastic.v").returncode == 0
    assert coqc(tmp_path, "delta_check.v").returncode != 0


def test_the_registry_names_formal_proofs_that_exist():
    """Theorem.formal: D1 (bound and equality condition), the causal corollary and D2's bound name a
    lemma that is stated in its file (a text scan: runs without Coq)."""
    from theory import theorems

    named = {th.id: th.formal for th in theorems()}
    assert "dobrushin.v:d1_bound" in named["dobrushin.factor"] and "dobrushin.v:d1_equality" in named["dobrushin.factor"]
    assert "causal.v:d1_causal" in named["dobrushin.factor.causal"] and "product.v:d2_bound" in named["dobrushin.product"]
    for tid, refs in named.items():
        for ref in refs:
            file, _, lemma = ref.partition(":")
            text = (FORMAL / file).read_text()
            assert re.search(rf"^\s*(Lemma|Theorem|Corollary)\s+{re.escape(lemma)}\b", text, re.M), (tid, ref)
            assert lemma in MAIN.get(file, ()), f"{tid}: {ref} is not among the lemmas whose assumptions are checked"


def test_the_paper_names_every_lemma_the_registry_names():
    """The paper names the Coq lemmas in its generated table of what is machine-checked (not in the
    prose, which names no code), and its proofs section points to that table and to the printed Coq
    statements; every lemma of the registry is in that table, with its file."""
    from theory import theorems
    from verification.prove.paper import formal_table

    tex = (ROOT / "paper" / "sections" / "proofs.tex").read_text()
    assert "\\ref{tab:prove-formal}" in tex and "\\ref{app:registry}" in tex and "\\texttt" not in tex
    cells = " ".join(formal_table("attnbounds prove", {}).frame["Coq lemmas (every size)"])
    for th in theorems():
        if not th.id.startswith("dobrushin.") or th.category != "proved":
            continue
        for ref in th.formal:
            file, _, lemma = ref.partition(":")
            assert f"{lemma} ({file})" in cells, (th.id, ref)
