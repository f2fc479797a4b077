# Two entry points do all set-up on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip --disable-pip-version-check -q
# The CPU build of torch lies on this machine's disk; an unpinned torch would pull a CUDA build.
TORCH := torch==2.13.0
# Reference implementations the optimizer tests compare against. --no-deps: timm would
# otherwise drag in torchvision and another torch (pytorch-lamb: tensorboardX and torchvision).
REFS := timm==1.0.31 pytorch-pretrained-bert==0.6.2 pytorch-lamb==1.0.0
# The frameworks the fidelity pattern projects train with (tests/fidelity/frameworks): their CPU builds,
# with torch pinned beside them so that nothing they ask for replaces the torch above.
FRAMEWORKS := transformers==5.25.0 diffusers==0.42.1 lightning==2.6.6

.PHONY: demo test fidelity bench venv clean

$(VENV)/.installed: pyproject.toml Makefile
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install $(TORCH)
	$(PIP) install -e '.[test]'
	$(PIP) install --no-deps $(REFS)
	$(PIP) install $(TORCH) $(FRAMEWORKS)
	touch $@

venv: $(VENV)/.installed

# The unit suite: under 5 CPU-minutes on 2 cores.
test: venv
	$(PY) -m pytest -m "not fidelity"

# Pattern projects run before and after migration, in every mode (the multi-card ones under torchrun,
# two ranks), the apex projects against their torch.amp references, the wheel installed into fresh
# venvs, pre-commit's try-repo, the HTML report in headless Chromium, the launcher tests and the
# benchmark scripts' smoke runs, the FSDP2 trainer, the framework projects (transformers, diffusers,
# Lightning), the --amp and LLM-kernel pattern projects: 894 tests (the 890 of 25a3e68 took 950 s wall on two cores
# there, where make test takes about 280 s wall, 4 min 50 s of CPU).
fidelity: venv
	$(PY) -m pytest -m fidelity

demo: venv
	$(PY) tools/demo.py

bench: venv
	$(PY) bench/migrate.py
	$(PY) bench/runtime.py
	$(PY) bench/fallback.py
	$(PY) bench/optim.py
	$(PY) bench/shapes.py
	$(PY) bench/dump.py
	$(PY) bench/distributed.py

clean:
	rm -rf $(VENV) demo_out
