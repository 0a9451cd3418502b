"""The appendix's software, machine and wall-time paragraphs (verification.paper.environment,
verification.provenance): the versions every record stores (solvers, python-flint, onnx and the
machine among them), the prover's versions read at build time ("absent" without coqc), and the wall
time as the union of the stamps' spans of the campaigns a document reads, per family and in all."""
from types import SimpleNamespace

from verification import provenance
from verification.paper.environment import Environment, environment, environment_tex
from verification.report.part import Part, Table
from verification.store import Record, ResultStore


def test_every_record_stores_the_solvers_flint_onnx_and_the_machine():
    v = provenance.versions()
    assert {"z3-solver", "cvc5", "python-flint", "onnx", "onnxruntime", "machine"} <= set(v)
    assert "logical CPUs" in v["machine"]
    with ResultStore(":memory:") as store:
        store.write_chunk("d", "k", [Record("dobrushin.factor", "i", "holds", slack=0.5)])
        (r,) = list(store.records("d"))
        assert r["versions"]["machine"] == v["machine"] and r["versions"]["cvc5"] == v["cvc5"]


def test_the_provers_are_absent_without_coqc(monkeypatch):
    provenance.prover_versions.cache_clear()
    monkeypatch.setattr(provenance.shutil, "which", lambda name: None)
    try:
        assert provenance.prover_versions() == {"Coq": "absent", "mathcomp": "absent"}
    finally:
        provenance.prover_versions.cache_clear()


def test_the_wall_time_is_the_union_of_each_family_campaigns_stamped_spans(monkeypatch):
    import verification.store as S

    clock = iter([100.0, 160.0, 130.0, 400.0, 1000.0])           # a: 100-160, b: 130-400, c: 1000 alone
    monkeypatch.setattr(S.time, "time", lambda: next(clock))
    store = ResultStore(":memory:")
    for camp, key in (("a", "k0"), ("a", "k1"), ("b", "k0"), ("b", "k1"), ("c", "k0")):
        store.write_chunk(camp, key, [])
    table = lambda camps: Table("t", None, "", campaigns=camps)        # noqa: E731
    parts = [Part("one", tables=[table(("a", "b"))]), Part("two", data_tables=[table(("c",))])]
    env = environment(store, parts)
    assert env.spans == {"one": 300.0, "two": 0.0} and env.total == 300.0
    (text,) = environment_tex(env)
    assert text.startswith("\\paragraph{Software, machine, wall time.} ")
    assert "campaigns read span 5 min 0 s of chunk stamps" in text
    from verification.paper.environment import environment_md
    assert "span 5 min 0 s in all: one 5 min 0 s, two 0 s" in "\n".join(environment_md(env))
    assert "Coq " in text and "z3-solver" in text and "python-flint" in text
    fake = SimpleNamespace(campaigns=lambda prefix="": {})          # a store without first stamps
    assert environment(fake, parts).spans == {}


def test_the_paragraph_escapes_what_it_quotes():
    env = Environment({"torch": "2.13.0+cpu", "kernels": "pinned (numerics.pins)", "platform": "linux_x86"},
                      {"Coq": "8.16.1", "mathcomp": "1.15.0"}, "CPU_model #1, 2 logical CPUs", {}, 0.0)
    (line,) = environment_tex(env)
    assert line.startswith("\\paragraph{Software, machine.} ")          # no stamps: no wall time
    assert "CPU\\_model \\#1" in line and "mathcomp 1.15.0" in line and "torch 2.13.0+cpu" in line
