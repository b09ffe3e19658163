# kgrag developer commands. `make demo` and `make test` work on a fresh clone.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
DEMO_DIR ?= .demo
BOOK ?= $(firstword $(wildcard ../shared/data/christmas_carol/book.txt) src/kgrag/data/christmas_carol.txt)

.PHONY: install demo test bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(BIN)/kgrag index --workdir $(DEMO_DIR) $(BOOK)
	$(BIN)/kgrag query --workdir $(DEMO_DIR) "What are the main themes of the story, and who is Scrooge?"

test: $(STAMP)
	$(BIN)/python -m pytest

clean:
	rm -rf $(VENV) $(DEMO_DIR) .pytest_cache .hypothesis
