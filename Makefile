# qoslab: everything a fresh machine needs is installed by these targets.
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
STAMP := $(VENV)/.qoslab-built
SRC := $(shell find crates python -name '*.rs' -o -name '*.py' -o -name 'Cargo.toml' 2>/dev/null) Cargo.toml pyproject.toml

.PHONY: venv build demo test test-rust test-python lint fmt bench reproduce ns2 clean

$(VENV)/.deps: pyproject.toml Makefile
	python3 -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q "maturin>=1.5,<2" "numpy>=1.26" "pandas>=2.1" "pyarrow>=14" "matplotlib>=3.8" \
		"typer>=0.12" "rich>=13" "pytest>=8" "hypothesis>=6" "ruff>=0.5" "scipy>=1.11" \
		"dask[distributed]>=2024.1" "dask-jobqueue>=0.8"
	touch $@

venv: $(VENV)/.deps

$(STAMP): $(VENV)/.deps $(SRC)
	VIRTUAL_ENV=$(abspath $(VENV)) PATH=$(abspath $(VENV))/bin:$$PATH $(VENV)/bin/maturin develop --release -q
	touch $@

build: $(STAMP)

# ns-2 for the cross-checks (Debian's ns2 package); skipped with a message where apt is absent.
ns2:
	@if command -v ns >/dev/null 2>&1; then echo "ns-2: $$(command -v ns)"; \
	elif command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ]; then \
		echo "installing ns2 and tshark (Debian packages) for the cross-check tests"; \
		(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ns2 tshark) >/tmp/qoslab-apt.log 2>&1 \
		|| echo "could not install ns2/tshark (see /tmp/qoslab-apt.log): those tests will be skipped"; \
	else echo "ns-2 not found and apt-get unavailable (or not root): ns-2 tests will be skipped"; fi

demo: build
	$(VENV)/bin/qoslab run scenarios/fdd-red-s1.toml --seed 1 --out results/demo

test: build ns2
	cargo fmt --all -- --check
	cargo clippy --workspace --all-targets -q -- -D warnings
	cargo test --workspace --release -q
	$(VENV)/bin/ruff check python tests
	$(VENV)/bin/pytest -q

bench: build ns2
	$(VENV)/bin/qoslab bench

reproduce: build ns2
	$(VENV)/bin/pytest -q -m slow
	$(VENV)/bin/qoslab reproduce red-baseline
	$(VENV)/bin/qoslab reproduce probe-marker

fmt:
	cargo fmt --all
	$(VENV)/bin/ruff format python tests || true

clean:
	rm -rf $(VENV) target results
