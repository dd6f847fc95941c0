# qoslab: everything a fresh machine needs is installed by these targets.
SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
STAMP := $(VENV)/.qoslab-built
SRC := $(shell find crates python -name '*.rs' -o -name '*.py' -o -name 'Cargo.toml' 2>/dev/null) Cargo.toml pyproject.toml

.PHONY: venv build demo docs validate-linux test verdicts refresh figures todays-tcp-full fmt bench reproduce ns2 ns3 emu-deps slurm-deps browser-deps slurm-up slurm-down lock wheel clean fuzz fuzz-smoke regenerate

# Python dependencies come from requirements.lock (exact versions with hashes, for CPython 3.11+
# on Linux), so that two installs a month apart are the same; pyproject.toml keeps ranges for
# the wheel. `make lock` re-resolves it (uv) after a change of pyproject.toml's dependencies.
$(VENV)/.deps: pyproject.toml requirements.lock Makefile
	python3 -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q --require-hashes -r requirements.lock
	touch $@

lock: $(VENV)/.deps
	$(PIP) install -q uv
	$(VENV)/bin/uv pip compile pyproject.toml --extra dask --extra dev --generate-hashes \
		--python-version 3.11 --python-platform x86_64-manylinux_2_28 --no-header -q $(LOCK_ARGS) -o requirements.lock

# An abi3 wheel (CPython >= 3.11, manylinux) with the emulation link daemon inside; pip installs
# it with no Rust toolchain: `pip install dist/qoslab-*.whl` (or 'dist/qoslab-*.whl[dask]').
wheel: $(VENV)/.deps
	cargo build --release -q -p qoslab-emu
	rm -rf build/wheel-data dist && mkdir -p build/wheel-data/scripts
	cp target/release/qoslab-linkd build/wheel-data/scripts/
	echo "GIT_REVISION = \"$$(git rev-parse --short HEAD 2>/dev/null || echo unknown)$$(git diff --quiet HEAD 2>/dev/null || echo -dirty)\"" > python/qoslab/_build_info.py
	$(VENV)/bin/maturin build --release --strip --out dist -q; rc=$$?; rm -f python/qoslab/_build_info.py; exit $$rc
	@ls dist/*.whl

venv: $(VENV)/.deps

$(STAMP): $(VENV)/.deps $(SRC)
	mkdir -p build/wheel-data  # pyproject's [tool.maturin] data: empty but for `make wheel`
	VIRTUAL_ENV=$(abspath $(VENV)) PATH=$(abspath $(VENV))/bin:$$PATH $(VENV)/bin/maturin develop --release -q
	cargo build --release -q -p qoslab-emu
	# Bytecode of the package, written once: with PYTHONDONTWRITEBYTECODE set (as on the CI
	# machines) every `qoslab` call would otherwise compile qoslab's modules again (~0.07 s).
	$(PY) -m compileall -q python/qoslab >/dev/null
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

# ns-3.37 for `qoslab crosscheck --against ns3` (Debian's libns3-dev, and nlohmann-json3-dev for
# the JSON header the program reads its input with); tools/ns3/qoslab_ns3.cc is compiled into
# ~/.cache/qoslab/ns3/<hash of the source> here (or on first use). Skipped with a message where
# apt is absent or we are not root (tests/test_ns3.py then skips its ns-3 runs).
ns3:
	@if [ -f /usr/include/ns3/core-module.h ] && [ -f /usr/include/nlohmann/json.hpp ]; then echo "ns-3: /usr/include/ns3"; \
	elif command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ]; then \
		echo "installing libns3-dev and nlohmann-json3-dev (Debian packages) for the ns-3 cross-checks"; \
		(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libns3-dev nlohmann-json3-dev g++) >/tmp/qoslab-apt-ns3.log 2>&1 \
		|| echo "could not install ns-3 (see /tmp/qoslab-apt-ns3.log): the ns-3 tests will be skipped"; \
	else echo "ns-3 not found and apt-get unavailable (or not root): the ns-3 tests will be skipped"; fi
	@if [ -f /usr/include/ns3/core-module.h ] && [ -x $(PY) ]; then \
		$(PY) -c "from qoslab import ns3; print('ns-3 program:', ns3.build_program())" || true; fi

# Emulation mode's tools (iproute2, iptables, ethtool; Debian packages) for tests/test_emulate.py;
# skipped with a message where apt is absent or we are not root (those tests are then skipped).
emu-deps:
	@if command -v iptables >/dev/null 2>&1 && command -v ethtool >/dev/null 2>&1 && command -v ip >/dev/null 2>&1; then \
		echo "emulation tools: $$(command -v iptables) $$(command -v ethtool)"; \
	elif command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ]; then \
		echo "installing iproute2, iptables and ethtool (Debian packages) for the emulation tests"; \
		(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq iproute2 iptables ethtool) >/tmp/qoslab-apt-emu.log 2>&1 \
		|| echo "could not install the emulation tools (see /tmp/qoslab-apt-emu.log): emulation tests will be skipped"; \
	else echo "emulation tools missing and apt-get unavailable (or not root): emulation tests will be skipped"; fi

# A headless Chromium (Debian's chromium-headless-shell) for tests/test_site_browser.py, which
# builds the documentation site and checks every page in the browser at 1280 px. Skipped with a
# message where apt is absent or we are not root (that test is then skipped).
browser-deps:
	@if command -v chromium-headless-shell >/dev/null 2>&1 || command -v chromium >/dev/null 2>&1; then \
		echo "browser: $$(command -v chromium-headless-shell || command -v chromium)"; \
	elif command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ]; then \
		echo "installing chromium-headless-shell (Debian package) for the documentation site's browser test"; \
		(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium-headless-shell) >/tmp/qoslab-apt-browser.log 2>&1 \
		|| echo "could not install chromium-headless-shell (see /tmp/qoslab-apt-browser.log): the site browser test will be skipped"; \
	else echo "no headless browser and apt-get unavailable (or not root): the site browser test will be skipped"; fi

# A real one-node Slurm cluster (Debian's slurm-wlm and munge) for tests/test_slurm.py, which
# starts and stops its own; `make slurm-up` starts one by hand in /tmp/qoslab-slurm (it prints
# the SLURM_CONF to export) and `make slurm-down` stops it. Skipped with a message where apt is
# absent or we are not root (the Slurm tests are then skipped).
slurm-deps:
	@if command -v slurmctld >/dev/null 2>&1 && command -v munged >/dev/null 2>&1; then \
		echo "slurm: $$(command -v slurmctld) $$(command -v munged)"; \
	elif command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ]; then \
		echo "installing slurm-wlm and munge (Debian packages) for the Slurm tests"; \
		(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq slurm-wlm munge) >/tmp/qoslab-apt-slurm.log 2>&1 \
		|| echo "could not install slurm-wlm/munge (see /tmp/qoslab-apt-slurm.log): Slurm tests will be skipped"; \
	else echo "slurm-wlm missing and apt-get unavailable (or not root): Slurm tests will be skipped"; fi

slurm-up: build slurm-deps
	$(PY) tools/slurm_local.py up

slurm-down:
	$(PY) tools/slurm_local.py down

# cargo-fuzz on the scenario parser, resolver and builder (crates/qoslab-core/fuzz): a bounded
# run in `make test` (FUZZ_SECONDS, default 30, with the corpus of every scenario file), a long one with `make fuzz`. The corpus starts
# from the project's scenario files; the target's mutator adds the format's own operators (tcp
# flavour, tcp.cc.*, jitter, a flow's tcp table, durations). A run that stops simulated time is
# a crash (the target's stall bound); -timeout is the watchdog for any other hang (10 s an input).
# Needs the nightly toolchain; skipped with a message without.
FUZZ_SECONDS ?= 30
FUZZ_DIR := crates/qoslab-core/fuzz
fuzz-smoke:
	@if ! rustup run nightly rustc --version >/dev/null 2>&1; then \
		echo "fuzz: no nightly toolchain (rustup toolchain install nightly): skipped"; exit 0; fi; \
	command -v cargo-fuzz >/dev/null 2>&1 || cargo install -q cargo-fuzz --locked; \
	mkdir -p $(FUZZ_DIR)/corpus/scenario && cp scenarios/*.toml scenarios/linux/*.toml tests/bad_scenarios/*.toml $(FUZZ_DIR)/corpus/scenario/ 2>/dev/null; \
	cd $(FUZZ_DIR) && cargo +nightly fuzz run scenario -- -max_total_time=$(FUZZ_SECONDS) -max_len=8192 -rss_limit_mb=2048 -timeout=10 2>&1 | \
		grep -E "^#[0-9]+ *DONE|^Done|SUMMARY|panicked|ERROR|crash-|timeout-" ; test $${PIPESTATUS[0]} -eq 0

FUZZ_LONG ?= 600
fuzz:
	$(MAKE) fuzz-smoke FUZZ_SECONDS=$(FUZZ_LONG)

demo: build
	$(VENV)/bin/qoslab run scenarios/fdd-red-s1.toml --seed 1 --out results/demo --force

# The documentation site: docs/ → build/site, nav and theme in mkdocs.yml (`.venv/bin/mkdocs serve`
# previews it). --strict: a link to a missing page or anchor, or a page left out of the nav,
# fails (not with -q, which hides the warnings that --strict counts). mkdocs is in the dev extra
# (requirements.lock); installed here if the venv predates it.
docs: $(VENV)/.deps
	@$(PY) -c "import mkdocs" 2>/dev/null || $(PIP) install -q 'mkdocs>=1.6,<2'
	$(VENV)/bin/mkdocs build --strict

# Every file generated from the core's declarations and the model pages (the builder's kind
# classes, the reference and kind tables, docs/outputs.md, the examples index, the models nav).
regenerate: build
	$(PY) tools/regenerate.py

test: build ns2 ns3 emu-deps slurm-deps browser-deps
	cargo fmt --all -- --check
	cargo clippy --workspace --all-targets -q -- -D warnings
	cargo test --workspace --profile ci-test -q
	$(VENV)/bin/ruff check python tests
	$(VENV)/bin/mypy
	$(PY) -m mypy.stubtest qoslab._core --mypy-config-file pyproject.toml --allowlist tools/stubtest-allowlist.txt
	$(MAKE) -s fuzz-smoke
	$(PY) -m qoslab.verdicts check --allow-stale
	$(VENV)/bin/pytest -q -n 3 --dist loadfile --no-loadscope-reorder --durations=25

bench: build ns2 ns3
	$(VENV)/bin/qoslab bench
	cargo bench -p qoslab-core --bench components

reproduce: build ns2 ns3
	$(VENV)/bin/pytest -q -m slow
	$(VENV)/bin/qoslab reproduce all
	for s in sack cubic bbr; do $(VENV)/bin/qoslab reproduce all --sender $$s || exit 1; done
	for s in sack cubic bbr; do $(VENV)/bin/qoslab reproduce all --sender $$s --tcp-flavour linux || exit 1; done

# The simulated senders against the Linux kernel on the committed grid (docs/validation/linux.md).
# Kernel side (root, emulation; ~45 min): `make validate-linux`. The simulated side alone, reusing
# the committed kernel results (no root): `make validate-linux SIM_ONLY=1 FLAVOUR=linux`.
# The held-out grid (points the model was not tuned on; docs/validation/linux-heldout.md):
# `make validate-linux GRID=heldout`; the AQM grid (docs/validation/linux-aqm.md): GRID=aqm.
FLAVOUR ?= ns2
GRID ?= committed
validate-linux: build
	$(if $(SIM_ONLY),,$(MAKE) emu-deps)
	$(PY) -m qoslab.emulation.validation --grid $(GRID) --flavour $(FLAVOUR) $(if $(SIM_ONLY),--sim-only) $(VALIDATE_ARGS)

# The experiment pages' figures (docs/experiments/img/, the pages' generated sections) and the
# studies' verdict files, from one full reproduction per experiment: sequential where the claims
# declare magnitudes (with futility), fixed seeds for the studies of our own, which declare none
# (about 30 min on two cores from an empty store, docs/experiments.md; the runs are kept in
# results/store, so a rerun of unchanged code only redoes the analysis). `python -m qoslab.verdicts.docfigures check` (and tests/test_docfigures.py)
# fails when a page's image is missing or of another version than its verdict file.
# The two lists are the registry's (qoslab.studies: with_claims() and own(); tests/test_study_registry.py).
VERDICT_STUDIES := ard buffer-sizing fdd-red probe-marker rio-plus-o twam-dwred
# the studies run again under every sender (buffer-sizing compares senders itself: its linux
# column is its own run with --tcp-flavour linux)
SENDER_STUDIES := $(filter-out buffer-sizing,$(VERDICT_STUDIES))
OWN_STUDIES := red-baseline mixed-traffic modern-aqm
# modern-aqm's page shows the linux flavour's run in its validated timing (its ns2-flavour table
# is the default run's): collected from that run's folder.
FIGURE_STUDIES := $(VERDICT_STUDIES) $(filter-out modern-aqm,$(OWN_STUDIES)) modern-aqm=modern-aqm-tcp-linux-timing-testbed
figures: build
	for e in $(VERDICT_STUDIES); do $(VENV)/bin/qoslab reproduce $$e --sequential --out results/verdicts || exit 1; done
	for e in $(OWN_STUDIES); do $(VENV)/bin/qoslab reproduce $$e --out results/verdicts || exit 1; done
	$(VENV)/bin/qoslab reproduce modern-aqm --tcp-flavour linux --timing testbed --out results/verdicts
	for e in $(VERDICT_STUDIES); do cp results/verdicts/$$e/verdicts.json docs/verdicts/$$e.json || exit 1; done
	$(PY) -m qoslab.verdicts.docfigures collect results/verdicts $(FIGURE_STUDIES)
	$(PY) -m qoslab.verdicts.docfigures todays-tcp
	$(PY) -m qoslab.verdicts readme

# Recomputes every committed verdict file: the figures' full runs above, and each study under each
# sender as committed (quick: 5 seeds in the ns2 flavour, 10 in the linux flavour with the testbed's
# timing, as validated, and with exact timing beside it; buffer-sizing's linux column, its kernel
# Reno, CUBIC and BBR, quick with 10 seeds in the testbed's timing), then regenerates README and pages.
# `python -m qoslab.verdicts check` lists which files are stale; this target is the cure.
verdicts: figures
	$(VENV)/bin/qoslab reproduce buffer-sizing --quick --seeds 10 --out results/verdicts-senders --tcp-flavour linux --timing testbed
	cp results/verdicts-senders/buffer-sizing-tcp-linux-timing-testbed/verdicts.json docs/verdicts/senders/buffer-sizing-tcp-linux-timing-testbed.json
	for e in $(SENDER_STUDIES); do \
	  for s in "" sack cubic bbr; do \
	    $(VENV)/bin/qoslab reproduce $$e --quick --seeds 5 --out results/verdicts-senders $${s:+--sender $$s} || exit 1; \
	    cp results/verdicts-senders/$$e$${s:+-$$s}/verdicts.json docs/verdicts/senders/$$e$${s:+-$$s}.json || exit 1; \
	  done; \
	  for s in sack cubic bbr; do \
	    for t in testbed exact; do \
	      $(VENV)/bin/qoslab reproduce $$e --quick --seeds 10 --out results/verdicts-senders --sender $$s --tcp-flavour linux --timing $$t || exit 1; \
	    done; \
	    cp results/verdicts-senders/$$e-$$s-tcp-linux-timing-testbed/verdicts.json docs/verdicts/senders/$$e-$$s-tcp-linux-timing-testbed.json || exit 1; \
	    cp results/verdicts-senders/$$e-$$s-tcp-linux-timing-exact/verdicts.json docs/verdicts/senders-exact/$$e-$$s-tcp-linux-timing-exact.json || exit 1; \
	  done; \
	done
	$(PY) -m qoslab.verdicts.docfigures todays-tcp
	$(PY) -m qoslab.verdicts readme

# Every committed result the core simulated (validation grids, tcp-linux-measured.json,
# modern-aqm's runs, the verdict files and their figures), brought to the checkout's core:
# only what is stale, cheapest first, resuming where an interrupted refresh stopped
# (tools/refresh_results.py; `--dry-run` lists the steps and their commands).
refresh: build
	$(PY) tools/refresh_results.py

# The todays-tcp page's full-length columns: each study the page covers in full (sequential
# seeds, as the studies' own reproductions) under Linux's reno, CUBIC and BBR in the linux transport flavour,
# in the testbed's timing as validated (each sender 40-60 min of two cores from an empty store),
# copied to docs/verdicts/senders-full/ (replacing a sender's file of an earlier timing).
todays-tcp-full: build
	for s in sack cubic bbr; do \
	  for e in $(SENDER_STUDIES); do \
	    $(VENV)/bin/qoslab reproduce $$e --sender $$s --tcp-flavour linux --timing testbed --out results/todays-tcp || exit 1; \
	    cp results/todays-tcp/$$e-$$s-tcp-linux-timing-testbed/verdicts.json docs/verdicts/senders-full/$$e-$$s-tcp-linux-timing-testbed.json || exit 1; \
	    rm -f docs/verdicts/senders-full/$$e-$$s-tcp-linux.json; \
	  done; \
	done
	$(PY) -m qoslab.verdicts.docfigures todays-tcp
	$(PY) -m qoslab.verdicts readme

fmt:
	cargo fmt --all
	$(VENV)/bin/ruff format python tests || true

clean:
	rm -rf $(VENV) target results
