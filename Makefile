# Two commands on a fresh machine: `make report` and `make test`.
# Both create .venv on first use and install the pinned tree from requirements.lock.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   := .venv
BIN    := $(VENV)/bin
MB     := $(BIN)/meterbook
MONTH  ?= 2026-10
DEMO   := build/demo/$(MONTH)
WH     := build/meterbook.duckdb
OUT    := build/reports/$(MONTH)

.PHONY: venv report demo test lint bench lock peers clean docs-check prometheus

venv: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml requirements.lock
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps -r requirements.lock
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps -e .
	@touch $@

demo: venv
	$(MB) demo --month $(MONTH) --out $(DEMO)

report: demo
	$(MB) ingest $(DEMO)/billing $(DEMO)/invoices $(DEMO)/dcgm $(DEMO)/codecarbon $(DEMO)/disclosures $(DEMO)/work $(DEMO)/grid $(DEMO)/instruments $(DEMO)/slurm --warehouse $(WH)
	$(MB) validate --warehouse $(WH)
	$(MB) report chargeback --month $(MONTH) --warehouse $(WH) --config $(DEMO)/meterbook.toml --out $(OUT) --per-team
	$(MB) report audit --month $(MONTH) --warehouse $(WH) --config $(DEMO)/meterbook.toml --out $(OUT)
	$(MB) report methodology --out build/reports

test: venv prometheus
	$(BIN)/python -m pytest

# The README and docs/: every link resolves, every meterbook command shown parses (make test runs it too).
docs-check: venv
	$(BIN)/python -m pytest -n0 tests/test_docs.py

# The Prometheus pull is tested against a real server (tests/test_prometheus_server.py): Debian's
# prometheus and promtool, installed here when missing and apt-get can (as root: CI). Elsewhere
# the tests skip without them, except under CI=true, where they fail.
prometheus:
	@command -v prometheus >/dev/null && command -v promtool >/dev/null || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus; \
	  else echo "prometheus/promtool missing (apt-get install prometheus): the Prometheus tests will skip, or fail under CI"; fi; }

# Lint gate (CI runs it before the tests): ruff (pyflakes, import order, bugbear) and mypy, both
# configured in pyproject.toml, and sqlfluff on the models (.sqlfluff says which rules and why).
lint: venv
	$(BIN)/ruff check .
	$(BIN)/mypy
	@$(MAKE) --no-print-directory build/.sqlfluff-clean

# sqlfluff parses at about 1 s a model: a clean run leaves a stamp, and the next one lints only
# the models changed since, or all of them when .sqlfluff or the installed tools changed.
SQL_MODELS := $(wildcard pipelines/sql/*/*.sql)
build/.sqlfluff-clean: $(SQL_MODELS) .sqlfluff $(VENV)/.installed
	$(BIN)/sqlfluff lint --processes 0 $(if $(filter-out %.sql,$?),pipelines/sql,$(filter %.sql,$?))
	@mkdir -p build && touch $@

bench: venv
	$(BIN)/python -m benchmarks.run $(BENCH)

# Re-read the peer tools' values (../shared/reference/data, boaviztapi) into
# sources/reference/peer_values.csv and print the comparison with our ranges.
peers: venv
	$(BIN)/python -m tools.peers

# Refresh the pinned tree after changing pyproject.toml's dependencies.
lock: venv
	$(BIN)/python -m pip freeze --exclude-editable | sed '1i # Exact versions for a reproducible install (pip freeze of a working venv, Python 3.11).\n# Regenerate: make lock. Installed with --no-deps: the tree is complete, and boaviztapi (a test\n# dependency) declares pandas<3 and a web stack; the models the tests call run on this tree.' > requirements.lock

clean:
	rm -rf build
