"""A hypothesis state machine over the real Vault API: random remember / edit / forget /
restore / hand edits keep Memory.md equal to a simple model, parseable and id-unique."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from memvault import Vault
from memvault.core.bullets import normalise_text, parse_bullets
from memvault.errors import VaultError
from memvault.services.setup import init_vault

WORDS = st.sampled_from(["tea", "Tea", "coffee", "Aurora", "[[Rust]]", "café", "👩‍💻",
                         "أفضل", "[x]", "flag", "uses", "the"])
TEXTS = st.lists(WORDS, min_size=1, max_size=4).map(" ".join).filter(
    lambda t: not t.startswith("[x]"))  # a leading task box is refused by design
CATEGORIES = st.sampled_from([None, "preference", "Project", "identity"])


class MemoryMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.tmp = Path(tempfile.mkdtemp(prefix="memvault-stateful-"))
        init_vault(self.tmp / "v")
        self.vault = Vault.open(self.tmp / "v")
        self.path = self.tmp / "v" / self.vault.layout.memory
        self.model: list[tuple[str, str]] = []  # (id, text) in file order
        self.forgotten: dict[str, str] = {}  # id -> last text (restorable)

    def teardown(self) -> None:
        shutil.rmtree(self.tmp, ignore_errors=True)

    def _ids(self) -> list[str]:
        return [i for i, _ in self.model]

    @rule(text=TEXTS, category=CATEGORIES)
    def remember(self, text: str, category: str | None) -> None:
        result = self.vault.memory.remember(text, category)
        same = [i for i, t in self.model if normalise_text(t) == normalise_text(text)]
        if same:
            assert not result.created and result.fact.id == same[0]
        else:
            assert result.created
            self.model.append((result.fact.id, text))
            self.forgotten.pop(result.fact.id, None)

    @precondition(lambda self: self.model)
    @rule(data=st.data(), text=TEXTS)
    def edit(self, data: st.DataObject, text: str) -> None:
        index = data.draw(st.integers(0, len(self.model) - 1))
        if any(normalise_text(t) == normalise_text(text)
               for k, (_, t) in enumerate(self.model) if k != index):
            return  # the same words twice are one fact: a hand-written copy goes (tidy)
        fact_id = self.model[index][0]
        fact = self.vault.memory.edit(fact_id, text).fact
        assert (fact.id, fact.text) == (fact_id, text)
        self.model[index] = (fact_id, text)

    @precondition(lambda self: self.model)
    @rule(data=st.data(), permanent=st.booleans())
    def forget(self, data: st.DataObject, permanent: bool) -> None:
        index = data.draw(st.integers(0, len(self.model) - 1))
        fact_id, text = self.model.pop(index)
        result = self.vault.memory.forget([fact_id], permanent=permanent)
        assert [f.id for f in result.forgotten] == [fact_id]
        assert self.vault.tombstones.is_tombstoned(text)
        if permanent:
            # Linked records (same words under another id) lose their history too.
            key = normalise_text(text)
            self.forgotten = {i: t for i, t in self.forgotten.items()
                              if normalise_text(t) != key}
        else:
            self.forgotten[fact_id] = text

    @precondition(lambda self: self.forgotten)
    @rule(data=st.data())
    def restore(self, data: st.DataObject) -> None:
        # Forgetting order, not sorted ids: ids are random, so a sorted pick would restore
        # a different fact for the same drawn index on a replay, and the model (whose size
        # later draws depend on) would differ: Hypothesis reports that as flaky generation.
        fact_id = data.draw(st.sampled_from(list(self.forgotten)))
        try:
            fact = self.vault.memory.restore(fact_id)
        except VaultError:
            # History purged by a permanent forget of an edited successor: acceptable.
            self.forgotten.pop(fact_id)
            return
        assert fact.id == fact_id
        self.model.append((fact_id, fact.text))
        self.forgotten.pop(fact_id)

    @rule(text=TEXTS, crlf=st.booleans())
    def hand_edit(self, text: str, crlf: bool) -> None:
        """The user types a bullet in Obsidian (no metadata)."""
        bare = text.removesuffix(" [x]")
        if any(normalise_text(t) in (normalise_text(text), normalise_text(bare))
               for _, t in self.model):
            return  # identical hand-written lines share provisional ids by occurrence
        data = self.path.read_bytes()
        eol = b"\r\n" if crlf else b"\n"
        sep = b"" if data.endswith(b"\n") else eol
        self.path.write_bytes(data + sep + f"- {text}".encode() + eol)
        item = parse_bullets(self.path.read_bytes()).items[-1]
        assert item.provisional
        self.model.append((item.id, item.text))  # "tea [x]" by hand is "tea" in category x

    @invariant()
    def file_matches_the_model(self) -> None:
        data = self.path.read_bytes()
        doc = parse_bullets(data)
        assert doc.readonly_reason is None
        assert not doc.duplicate_ids
        assert [it.text for it in doc.items] == [t for _, t in self.model]
        # Written ids never change; a hand-written bullet's provisional id is derived from
        # the file (it may shift when another line changes), so follow it.
        for index, it in enumerate(doc.items):
            if it.provisional:
                self.model[index] = (it.id, it.text)
        assert [it.id for it in doc.items] == self._ids()
        assert data.startswith(b"# Memory")  # the header and prose are never touched


MemoryMachine.TestCase.settings = settings(
    max_examples=25, stateful_step_count=20, deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
TestMemoryMachine = MemoryMachine.TestCase
