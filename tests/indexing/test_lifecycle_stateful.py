"""Random sequences of index, edit, move, delete, disable/enable, retry and curation.

After every step the index is sound (``check``) and its export equals the
export of a fresh index of the live documents (with the same documents
disabled) given the same curation records (merges, unmerges, manual edits
and deletions of entities): the graph is a function of the documents and
the records, whatever happened before (a moved file keeps its id, so
ids are compared by source: :func:`export_ids.by_source`). Documents are
drawn from a small paragraph pool, so they share chunks and entities.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from kgrag.api.blocking import SyncKGRag
from kgrag.curation.ops import Curator
from kgrag.knowledge.curation import import_records
from kgrag.maintenance.export import dumps

from .export_ids import by_source
from .lifecycle_corpus import document, lifecycle_settings, write

NAMES = ["a.txt", "b.txt", "c.txt", "d.txt"]
PARAGRAPHS = st.lists(st.integers(0, 7), min_size=1, max_size=3, unique=True)


class Lifecycle(RuleBasedStateMachine):
    extractor = "llm"

    def __init__(self) -> None:
        super().__init__()
        self.root = Path(tempfile.mkdtemp(prefix="kgrag-stateful-"))
        self.folder = self.root / "docs"
        self.live: dict[str, tuple[list[int], int]] = {}  # file name -> (paragraphs, version)
        self.disabled: set[str] = set()
        self.fresh_runs = 0
        self.rag = SyncKGRag(self._settings("idx"))
        self.rag.__enter__()

    def _settings(self, name: str):
        return lifecycle_settings(self.root / name, extractor=self.extractor)

    def _path(self, name: str) -> Path:
        return self.folder / name

    def _write(self, name: str) -> Path:
        paragraphs, version = self.live[name]
        return write(self.folder, name, document(paragraphs, version, edited={paragraphs[0]}))

    @rule(name=st.sampled_from(NAMES), paragraphs=PARAGRAPHS)
    def index(self, name, paragraphs):
        self.live[name] = (paragraphs, self.live.get(name, ([], 0))[1])
        assert self.rag.index_paths([self._write(name)]).ok

    @precondition(lambda self: self.live)
    @rule(data=st.data())
    def edit(self, data):
        name = data.draw(st.sampled_from(sorted(self.live)))
        paragraphs, version = self.live[name]
        self.live[name] = (paragraphs, version + 1)
        assert self.rag.index_paths([self._write(name)]).ok

    @precondition(lambda self: self.live and len(self.live) < len(NAMES))
    @rule(data=st.data())
    def move(self, data):
        old = data.draw(st.sampled_from(sorted(self.live)))
        new = data.draw(st.sampled_from([n for n in NAMES if n not in self.live]))
        self._path(old).rename(self._path(new))
        self.live[new] = self.live.pop(old)
        if old in self.disabled:
            self.disabled.discard(old)
            self.disabled.add(new)
        kept = self._ids().get(str(self._path(old).resolve()))
        report = self.rag.index_paths([self._path(new)])
        assert report.ok and (report.moved or report.new)
        if report.moved:
            assert report.moved == [kept]  # a move keeps the id
        if report.new:  # the same content also lives elsewhere: not a move, so retract it
            self.rag.delete([str(self._path(old))])

    def _ids(self) -> dict[str, str]:
        return {d["path"]: d["id"] for d in self.rag.documents()["documents"]}

    @precondition(lambda self: self.live)
    @rule(data=st.data())
    def delete(self, data):
        name = data.draw(st.sampled_from(sorted(self.live)))
        self.rag.delete([str(self._path(name))])
        self._path(name).unlink()
        del self.live[name]
        self.disabled.discard(name)

    @precondition(lambda self: self.live)
    @rule(data=st.data(), disable=st.booleans())
    def toggle(self, data, disable):
        name = data.draw(st.sampled_from(sorted(self.live)))
        self.rag.set_disabled([str(self._path(name))], disable)
        (self.disabled.add if disable else self.disabled.discard)(name)

    @rule()
    def retry(self):
        assert not self.rag.retry_failed().failed

    def _entities(self) -> list[str]:
        return sorted(e["name"] for e in self.rag.export(timestamps=False)["entities"])

    @precondition(lambda self: self.live)
    @rule(data=st.data())
    def merge(self, data):
        names = self._entities()
        if len(names) >= 2:
            target, source = data.draw(st.permutations(names))[:2]
            self.rag.merge_entities(target, [source])

    @precondition(lambda self: self.rag.merges())
    @rule(data=st.data())
    def unmerge(self, data):
        self.rag.unmerge(data.draw(st.sampled_from([m["id"] for m in self.rag.merges()])))

    @precondition(lambda self: self.live)
    @rule(data=st.data(), delete=st.booleans())
    def curate_entity(self, data, delete):
        names = self._entities()
        if names:
            name = data.draw(st.sampled_from(names))
            if delete:
                self.rag.delete_entity(name)
            else:
                self.rag.edit_entity(name, description=f"edited {name}")

    @precondition(lambda self: self.live)
    @rule(min_score=st.sampled_from([0.5, 0.7, 0.9]))
    def dedupe(self, min_score):
        """Resolution applied: its merges are records like any other."""
        report = self.rag.resolve_entities(min_score=min_score, apply=True)
        assert len(report.merges) <= len(report.groups)

    def _fresh_with_records(self, fresh: SyncKGRag) -> None:
        """Give a fresh index our curation records first, as an import would."""
        block = self.rag.export(timestamps=False)["curation"]
        fresh._run(import_records(fresh.rag.storage, block))

    @invariant()
    def equals_a_fresh_index(self):
        report = self.rag.check()
        assert report.ok, report.problems
        ours = dumps(self.rag.export(timestamps=False))
        self.fresh_runs += 1
        with SyncKGRag(self._settings(f"fresh{self.fresh_runs}")) as fresh:
            self._fresh_with_records(fresh)
            paths = [self._path(n) for n in sorted(self.live)]
            if paths:
                assert fresh.index_paths(paths).ok
            if self.disabled:
                fresh.set_disabled([str(self._path(n)) for n in sorted(self.disabled)])
            inner = fresh.rag
            fresh._run(Curator(inner.storage, inner.indexer.applier).replay())
            theirs = dumps(fresh.export(timestamps=False))
        shutil.rmtree(self.root / f"fresh{self.fresh_runs}", ignore_errors=True)
        assert by_source(ours) == by_source(theirs)

    def teardown(self):
        self.rag.__exit__(None, None, None)
        shutil.rmtree(self.root, ignore_errors=True)


class NLPLifecycle(Lifecycle):
    extractor = "nlp"


_SETTINGS = {"deadline": None, "suppress_health_check": [HealthCheck.too_slow]}
TestLifecycleWithFakeLLM = Lifecycle.TestCase
TestLifecycleWithFakeLLM.settings = settings(max_examples=12, stateful_step_count=7, **_SETTINGS)
TestLifecycleWithNLPExtractor = NLPLifecycle.TestCase
TestLifecycleWithNLPExtractor.settings = settings(
    max_examples=5, stateful_step_count=5, **_SETTINGS
)
