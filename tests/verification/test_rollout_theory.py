"""``attnbounds rollout --theory FILE.py --check ID``: a user's statement over A decided on every
attention head of a model (verification.trained.checks.run_check), on a tiny random BERT
(:func:`verification.testing.fakes.tiny_bert`, 2 layers x 2 heads) and three short texts."""
from __future__ import annotations

import csv
import sqlite3
from fractions import Fraction

import pytest

from verification.cli import main
from verification.testing.fakes import tiny_bert

pytestmark = pytest.mark.models

LAYERS, HEADS = 2, 2
TEXTS = ["The cat sat on the mat.", "A dog barked at the moon tonight.", "Colourless green ideas sleep furiously."]
THEORY = '''
from theory import Theorem, register
from theory.expr import A, B, delta
register(Theorem(id="rolltest.square", title="delta(A^2) <= delta(A)^2", category="proved",
                 statement=delta(A**2) <= delta(A)**2))
register(Theorem(id="rolltest.wrong", title="a false bound", category="conjecture",
                 statement=delta(A) <= delta(A**2)))
register(Theorem(id="rolltest.claimed", title="a false bound filed as proved", category="proved",
                 statement=delta(A) <= delta(A**2)))
register(Theorem(id="rolltest.ab", title="two matrices", category="conjecture",
                 statement=delta(A * B) <= delta(A)))
register(Theorem(id="rolltest.ge", title="the false bound, written with >=", category="conjecture",
                 statement=delta(A**2) >= delta(A)))
'''


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    """The model folder, the texts file and the theory file (outside every test's working folder);
    the theory's ids leave the registry afterwards."""
    from theory.plugins import unload_files

    d = tmp_path_factory.mktemp("rollout_theory")
    folder = tiny_bert(d / "bert")
    texts = d / "texts.txt"
    texts.write_text("\n".join(TEXTS) + "\n")
    theory = d / "my_bounds.py"
    theory.write_text(THEORY)
    yield {"model": str(folder), "texts": str(texts), "theory": str(theory)}
    unload_files()


def rollout(setup, db, out, *checks):
    argv = ["rollout", "--model", setup["model"], "--texts", setup["texts"], "--theory", setup["theory"],
            "--db", str(db), "--out", str(out)]
    for c in checks:
        argv += ["--check", c]
    return main(argv)


def table(out, theorem_id):
    (path,) = (out / "tables").glob(f"trained-check-{theorem_id.replace('.', '_')}-*.csv")
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    return {r["layer"]: {k: (v if k in ("layer", "tight share [95% Wilson]") else int(v)) for k, v in r.items()}
            for r in rows}


def check_records(db, theorem_id):
    from verification.store import ResultStore

    with ResultStore(db) as s:
        return list(s.records(theorem=theorem_id))


def marks(db):
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as con:
        return sorted(con.execute("SELECT campaign, chunk, created, digest FROM chunks").fetchall())


def exact_rows(A):
    """The float rows as exact rationals, each divided by its exact sum."""
    out = []
    for row in A:
        r = [Fraction(float(x)) for x in row]
        s = sum(r)
        out.append([x / s for x in r])
    return out


def delta_by_definition(M):
    n = len(M)
    return max((sum(abs(a - b) for a, b in zip(M[i], M[j])) / 2 for i in range(n) for j in range(n)),
               default=Fraction(0))


def square(M):
    n = len(M)
    return [[sum(M[i][k] * M[k][j] for k in range(n)) for j in range(n)] for i in range(n)]


def test_counts_add_up_and_the_false_conjecture_is_refuted_on_stored_heads(setup, tmp_path):
    db, out = tmp_path / "r.db", tmp_path / "out"
    assert rollout(setup, db, out, "rolltest.square", "rolltest.wrong") == 0
    total = LAYERS * HEADS * len(TEXTS)
    for tid in ("rolltest.square", "rolltest.wrong"):
        t = table(out, tid)
        assert set(t) == {"0", "1", "all"}
        for row in t.values():
            assert row["heads checked"] == row["holds"] + row["tight"] + row["violated"] + row["not-applicable"]
        assert sum(t[str(l)]["heads checked"] for l in range(LAYERS)) == t["all"]["heads checked"] == total
        assert all(t[str(l)]["heads checked"] == HEADS * len(TEXTS) for l in range(LAYERS))
    true, false = table(out, "rolltest.square"), table(out, "rolltest.wrong")
    assert true["all"]["violated"] == 0 and not check_records(db, "rolltest.square")
    # delta(A) > 0 on every head of a random model, and then delta(A^2) <= delta(A)^2 < delta(A)
    assert false["all"]["violated"] == total
    recs = check_records(db, "rolltest.wrong")
    assert len(recs) == false["all"]["violated"]
    assert {(r["provenance"]["input"], r["provenance"]["layer"], r["provenance"]["head"]) for r in recs} == \
        {(f"texts.txt:{k + 1}", l, h) for k in range(len(TEXTS)) for l in range(LAYERS) for h in range(HEADS)}
    assert all(r["verdict"] == "refuted" for r in recs)       # a conjecture's counterexample: an outcome
    md = next((out / "tables").glob("trained-check-rolltest_wrong-*.md")).read_text()
    assert "rolltest.wrong" in md and "my_bounds.py" in md and "delta(A) <= delta(A**2)" in md
    assert str(tmp_path) not in md                               # the theory file by its name only

    # the stored sides, against an independent exact computation on the model's own floats
    from numerics.sources.corpus import load_corpus
    from numerics.sources.models import load_model

    model, corpus = load_model(setup["model"]), load_corpus(setup["texts"])
    by_id = {t.id: t for t in corpus.inputs}
    for r in recs[:3]:
        p = r["provenance"]
        A = model.instance(by_id[p["input"]]).attention[p["layer"], p["head"]]
        M = exact_rows(A)
        lhs, rhs = Fraction(r["extra"]["lhs"]), Fraction(r["extra"]["rhs"])
        assert (lhs, rhs) == (delta_by_definition(M), delta_by_definition(square(M)))
        assert lhs > rhs and p["n"] == len(M)


def test_a_ge_statement_keeps_its_sides_as_written(setup, tmp_path):
    """delta(A^2) >= delta(A): a refuted head's record says lhs = delta(A^2), relation >=, rhs = delta(A)
    (exact and float sides alike), not the normal form delta(A) <= delta(A^2) it is decided as."""
    from numerics.sources.corpus import load_corpus
    from numerics.sources.models import load_model

    db, out = tmp_path / "r.db", tmp_path / "out"
    assert rollout(setup, db, out, "rolltest.ge") == 0
    recs = check_records(db, "rolltest.ge")
    assert len(recs) == LAYERS * HEADS * len(TEXTS)
    model, corpus = load_model(setup["model"]), load_corpus(setup["texts"])
    by_id = {t.id: t for t in corpus.inputs}
    for r in recs[:3]:
        p, e = r["provenance"], r["extra"]
        M = exact_rows(model.instance(by_id[p["input"]]).attention[p["layer"], p["head"]])
        assert e["relation"] == ">=" and (Fraction(e["lhs"]), Fraction(e["rhs"])) == \
            (delta_by_definition(square(M)), delta_by_definition(M))
        assert e["lhs_float"] < e["rhs_float"] and abs(e["lhs_float"] - float(Fraction(e["lhs"]))) <= e["err"][0]


def test_the_built_in_d1_checked_this_way_agrees_with_the_d1_records(setup, tmp_path):
    """dobrushin.factor is a statement over A too: decided per head by numerics.expr, its per-layer
    verdicts are those of the suite's own D1 records (numerics.dobrushin.factor_check) on all tokens."""
    db, out = tmp_path / "r.db", tmp_path / "out"
    assert rollout(setup, db, out, "dobrushin.factor") == 0
    t = table(out, "dobrushin.factor")
    d1 = [r for r in check_records(db, "dobrushin.factor") if r["campaign"].startswith("trained-v")
          and r["provenance"]["variant"] == "all" and r["provenance"]["head"] is not None]
    assert len(d1) == LAYERS * HEADS * len(TEXTS)
    for l in range(LAYERS):
        tight = sum(r["verdict"] == "tight" for r in d1 if r["provenance"]["layer"] == l)
        holds = sum(r["verdict"] == "holds" for r in d1 if r["provenance"]["layer"] == l)
        assert (t[str(l)]["tight"], t[str(l)]["holds"], t[str(l)]["violated"]) == (tight, holds, 0)
    assert 0 < t["all"]["tight"] < t["all"]["heads checked"]       # both verdicts occur: the comparison can fail


def test_a_two_matrix_statement_is_refused_in_one_line_and_creates_nothing(setup, tmp_path, monkeypatch, capsys):
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    for bad, words in (("rolltest.ab", ("rolltest.ab", "A and B", "over A alone")),
                       ("rolltest.nope", ("rolltest.nope", "no such theorem", "--theory"))):
        rc = rollout(setup, work / "sub" / "r.db", work / "out", "rolltest.square", bad)
        err = capsys.readouterr().err
        lines = [ln for ln in err.splitlines() if ln.strip()]
        assert rc == 2 and len(lines) == 1 and "Traceback" not in err, err
        assert all(w in lines[0] for w in ("--check",) + words), lines[0]
        assert list(work.rglob("*")) == []


def test_a_rerun_resumes_and_computes_nothing(setup, tmp_path, monkeypatch):
    from verification.trained import checks

    db, out = tmp_path / "r.db", tmp_path / "out"
    assert rollout(setup, db, out, "rolltest.wrong") == 0
    before = marks(db)
    assert sum(c.startswith("trained-check-") for c, *_ in before) == len(TEXTS)

    def never(*args, **kw):
        raise AssertionError("a stored chunk was computed again")

    monkeypatch.setattr(checks, "head_checks", never)
    assert rollout(setup, db, out, "rolltest.wrong") == 0
    assert marks(db) == before
    assert table(out, "rolltest.wrong")["all"]["violated"] == LAYERS * HEADS * len(TEXTS)
    # the planted case: a chunk deleted is computed again, so the patched function is reached
    with sqlite3.connect(db) as con:
        con.execute("DELETE FROM chunks WHERE campaign LIKE 'trained-check-%' AND chunk LIKE 'texts.txt:1#%'")
    with pytest.raises(AssertionError, match="computed again"):
        rollout(setup, db, out, "rolltest.wrong")


def test_a_violated_proved_statement_stops_loudly_after_storing_its_chunk(setup, tmp_path):
    from theory.verdicts import ViolationError

    db, out = tmp_path / "r.db", tmp_path / "out"
    with pytest.raises(ViolationError, match="rolltest.claimed"):
        rollout(setup, db, out, "rolltest.claimed")
    recs = check_records(db, "rolltest.claimed")
    assert recs and all(r["verdict"] == "violated" and r["slack"] < 0 for r in recs)
    assert {r["provenance"]["input"] for r in recs} == {"texts.txt:1"}      # stopped after the first chunk
    assert not list((out / "tables").glob("trained-check-rolltest_claimed-*"))   # it stopped: no table


def test_the_campaign_changes_with_the_statement_and_the_plan_replans(setup):
    import shlex

    from verification.cli import build_parser
    from verification.trained.checks import Plan
    from verification.trained.checks import statement_digest

    assert statement_digest("x.y", "delta(A) <= 1") != statement_digest("x.y", "delta(A) <= 1/2")
    assert statement_digest("x.y", "delta(A) <= 1") != statement_digest("x.z", "delta(A) <= 1")
    words = ["rollout", "--model", setup["model"], "--theory", setup["theory"], "--check", "rolltest.wrong",
             "--check", "rolltest.square", "--db", ":memory:"]
    plan = Plan.from_args(build_parser(words).parse_args(words))
    assert plan.checks == ("rolltest.wrong", "rolltest.square") and plan.provenance()["checks"]
    again = shlex.split(plan.command())[1:] + ["--db", ":memory:"]
    assert Plan.from_args(build_parser(again).parse_args(again)) == plan
    plain = Plan.from_args(build_parser(words[:3] + ["--db", ":memory:"]).parse_args(words[:3] + ["--db", ":memory:"]))
    assert plain.checks == () and "--check" not in plain.command() and "checks" not in plain.provenance()
