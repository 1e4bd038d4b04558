"""The `Vault` service: the one object the CLI, the MCP server and Python callers use.

It resolves where the vault is, reads its config, picks the backend, and hands out one
service per capability (`vault.memory`, ...). Services are created on first use so a
command pays only for what it touches.
"""

from __future__ import annotations

import os
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from memvault.backends.base import Backend
from memvault.config import Config, locate_vault, parse_config
from memvault.errors import InvalidInput
from memvault.layout import Layout
from memvault.services.migrations import CURRENT_FORMAT, upgrade
from memvault.state_paths import CONFIG, PENDING_FORGETS

if TYPE_CHECKING:
    from memvault.services.context import ContextService
    from memvault.services.controls import ControlService
    from memvault.services.doctor import DoctorService
    from memvault.services.extraction import ExtractionService
    from memvault.services.journal import EventLog, Tombstones
    from memvault.services.learning import LearningService
    from memvault.services.lessons import LessonService
    from memvault.services.lifecycle import LifecycleService
    from memvault.services.memory import MemoryService
    from memvault.services.policy import PolicyService
    from memvault.services.profile import ProfileService
    from memvault.services.proposals import InboxEdits, ProposalService
    from memvault.services.recall import RecallService
    from memvault.services.records import RecordService
    from memvault.services.recovery import RecoveryService
    from memvault.services.resolve import ResolveService
    from memvault.services.search import SearchService
    from memvault.services.trades import TradeService
    from memvault.services.transfer import TransferService


class Vault:
    """One vault, seen as one principal (the default, or `scope`)."""

    def __init__(self, root: Path, backend: Backend, config: Config,
                 scope: str | None = None) -> None:
        self.root = root
        self.backend = backend
        self.config = config
        # Folders already on disk are reused whatever their case or Unicode form
        # (`pilot/` for `Pilot/`); config.home then holds that spelling, so the index,
        # sync and history name the folder that exists.
        self.layout = Layout.for_scope(config.home, scope, spell=getattr(backend, "spelled",
                                                                         None))
        config.home = self.layout.home_root
        self.created = False
        """True when `Vault.open` has just created this vault (the per-user default)."""

    def _finish_interrupted_work(self) -> Vault:
        """Complete forgets a killed process left half done (a local vault keeps their
        content-free intents in `.memvault/pending-forgets.jsonl`), and scrub this
        machine's caches of forgets that arrived from another clone
        (`services/forgets_applied.py`); cheap when there are none."""
        local = self.backend.capabilities.local_root
        from memvault.errors import VaultError

        if local is None:
            if self.backend.capabilities.cache_dir is not None:
                from memvault.services import forgets_applied

                try:
                    forgets_applied.apply_cached(self)
                except (OSError, VaultError):
                    pass  # e.g. GitHub unreachable: the command says so itself
            return self

        if (local / PENDING_FORGETS).exists():
            from memvault.services.forgetting import complete_pending

            try:
                complete_pending(self)
            except VaultError:
                pass  # e.g. git mid-rebase refuses writes: the intent waits for a later open
        from memvault.services import forgets_applied

        if not forgets_applied.in_step(local):
            try:
                forgets_applied.apply(self)
            except (OSError, VaultError):
                pass  # e.g. a read-only vault: the next command that can write does it
        return self

    # -- opening -----------------------------------------------------------------------

    @classmethod
    def open(cls, path: str | os.PathLike[str] | None = None, *, scope: str | None = None,
             create: bool | None = None, backend: Backend | None = None) -> Vault:
        """Open the vault at `path` (or find it: see `memvault.config.locate_vault`).

        A missing folder is initialised only for the default per-user vault (created on
        first use, memory only) or when `create=True`; otherwise a missing folder is an
        error, so a typo in `--vault` never scatters new vaults around the disk. A vault
        created here has `created` set, so the caller can say where it is.
        """
        root, how = locate_vault(path)
        if create is None:
            create = how == "default per-user vault"
        scope = scope if scope is not None else (os.environ.get("MEMVAULT_SCOPE") or None)
        from memvault.backends.registry import DEFAULT, backend_type

        env_backend = os.environ.get("MEMVAULT_BACKEND")
        if backend is None and env_backend and not backend_type(env_backend).local:
            # A remote vault: the local folder is never created, and only its settings
            # file (if any) is read, for the store's own table; the content lives remotely.
            local_config = root / CONFIG
            config = parse_config(local_config.read_bytes() if local_config.is_file() else None)
            backend = backend_type(env_backend).open(root, config)
            remote_blob = backend.read(CONFIG)
            if remote_blob is not None:
                config = parse_config(remote_blob.data)
            return cls._up_to_date(root, backend, config, scope)._finish_interrupted_work()
        created = False
        if backend is None:
            if root.exists() and not root.is_dir():
                raise InvalidInput("vault path is a file, not a folder", path=str(root))
            if not root.exists():
                if not create:
                    raise InvalidInput("no such folder; create the vault with "
                                       f"`memvault init {root}`", path=str(root))
                from memvault.services.setup import init_vault

                init_vault(root)
                created = True
            from memvault.backends.fs_git import local_backend

            local: Backend = local_backend(root)
            blob = local.read(CONFIG)
            config = parse_config(blob.data if blob else None)
            chosen = backend_type(env_backend or config.backend, path=CONFIG)
            # the folder was opened to read its settings; another store is opened anew
            backend = local if chosen is backend_type(DEFAULT) else chosen.open(root, config)
            if not chosen.local:
                remote_blob = backend.read(CONFIG)
                if remote_blob is not None:
                    config = parse_config(remote_blob.data)
        else:
            blob = backend.read(CONFIG)
            config = parse_config(blob.data if blob else None)
        vault = cls._up_to_date(root, backend, config, scope)
        vault.created = created
        return vault._finish_interrupted_work()

    @classmethod
    def _up_to_date(cls, root: Path, backend: Backend, config: Config,
                    scope: str | None) -> Vault:
        """The opened vault, after upgrading an older vault format (see services/migrations)."""
        from memvault.backends.fs_git import operation_in_progress

        waiting = config.vault_format < CURRENT_FORMAT and \
            operation_in_progress(backend.capabilities.git_dir) is not None
        if config.vault_format != CURRENT_FORMAT and not waiting:  # mid-rebase: after it
            if upgrade(backend).applied:
                blob = backend.read(CONFIG)
                config = parse_config(blob.data if blob else None)
        return cls(root, backend, config, scope)

    def uses_trading(self) -> bool:
        """Whether this principal uses the trading parts: it has a Policy.md (its own or
        from `init --trading`) or has recorded a trade. A memory-only vault sees no
        trading text (no limits section in the context block, no trading lesson
        categories)."""
        if self.backend.read(self.layout.policy) is not None:
            return True
        return bool(self.backend.list(self.layout.trades_dir))

    # -- services ----------------------------------------------------------------------

    @cached_property
    def events(self) -> EventLog:
        from memvault.services.journal import EventLog

        return EventLog(self.backend, self.layout.scope_name)

    @cached_property
    def tombstones(self) -> Tombstones:
        from memvault.services.journal import Tombstones

        return Tombstones(self.backend, self.layout.scope_name, self._salt())

    @cached_property
    def memory(self) -> MemoryService:
        from memvault.services.memory import MemoryService

        return MemoryService(self)

    @cached_property
    def proposals(self) -> ProposalService:
        from memvault.services.proposals import ProposalService

        return ProposalService(self)

    @cached_property
    def profile(self) -> ProfileService:
        from memvault.services.profile import ProfileService

        return ProfileService(self)

    @cached_property
    def policy(self) -> PolicyService:
        from memvault.services.policy import PolicyService

        return PolicyService(self)

    @cached_property
    def trades(self) -> TradeService:
        from memvault.services.trades import TradeService

        return TradeService(self)

    @cached_property
    def learning(self) -> LearningService:
        from memvault.services.learning import LearningService

        return LearningService(self)

    @cached_property
    def extraction(self) -> ExtractionService:
        from memvault.services.extraction import ExtractionService

        return ExtractionService(self)

    @cached_property
    def lessons(self) -> LessonService:
        from memvault.services.lessons import LessonService

        return LessonService(self)

    @cached_property
    def lifecycle(self) -> LifecycleService:
        from memvault.services.lifecycle import LifecycleService

        return LifecycleService(self)

    @cached_property
    def controls(self) -> ControlService:
        from memvault.services.controls import ControlService

        return ControlService(self)

    @cached_property
    def transfer(self) -> TransferService:
        from memvault.services.transfer import TransferService

        return TransferService(self)

    @cached_property
    def context(self) -> ContextService:
        from memvault.services.context import ContextService

        return ContextService(self)

    @cached_property
    def recall(self) -> RecallService:
        from memvault.services.recall import RecallService

        return RecallService(self)

    @cached_property
    def search(self) -> SearchService:
        from memvault.services.search import SearchService

        return SearchService(self)

    @cached_property
    def recovery(self) -> RecoveryService:
        from memvault.services.recovery import RecoveryService

        return RecoveryService(self)

    @cached_property
    def resolver(self) -> ResolveService:
        from memvault.services.resolve import ResolveService

        return ResolveService(self)

    @cached_property
    def records(self) -> RecordService:
        """Records of every kind by id (`memory_show`)."""
        from memvault.services.records import RecordService

        return RecordService(self)

    @cached_property
    def doctor(self) -> DoctorService:
        from memvault.services.doctor import DoctorService

        return DoctorService(self)

    # -- the user's decisions in Inbox.md ----------------------------------------------

    def apply_inbox_edits(self) -> InboxEdits:
        """Make the user's decisions in Inbox.md take effect: a ticked box accepts its
        proposal, a deleted line rejects it (see `ProposalService.apply_inbox_edits`).

        Every front end calls this once when it opens the vault for a command or a tool
        call, before doing anything else, so Obsidian edits count wherever the user looks
        next. It never raises: a problem reading the inbox is returned as `problem`, the
        inbox is left as it is, and the command goes on. A ticked line that cannot be
        accepted is held (`held`) without stopping the others; `to_report` lists the held
        lines no command has mentioned yet, so front ends say each once (doctor lists
        them every time).
        """
        from memvault.errors import VaultError
        from memvault.services.notices import not_yet_told
        from memvault.services.proposals import InboxEdits

        if self._inbox_as_written():
            return InboxEdits()
        try:
            edits = self.proposals.apply_inbox_edits()
        except VaultError as exc:
            return InboxEdits(problem=str(exc))
        fresh = not_yet_told(self.backend, f"held-ticks:{self.layout.inbox}",
                             [h.key for h in edits.held])
        edits.to_report = [h for h in edits.held if h.key in fresh]
        return edits

    def _inbox_as_written(self) -> bool:
        """True when the user cannot have decided anything in Inbox.md since memvault
        last applied it (`services.inbox_state`): a few small reads that spare every
        command the inbox parse and the journal scan. Only a local vault has the safety
        net this relies on."""
        from memvault.services.inbox_state import inbox_as_written

        if self.backend.capabilities.local_root is None:
            return False

        def read(path: str) -> bytes | None:
            blob = self.backend.read(path)
            return None if blob is None else blob.data

        return inbox_as_written(read, self.layout.inbox, self.layout.scope_name)

    # -- helpers shared by services ----------------------------------------------------

    def _salt(self) -> str:
        """The tombstone key; created (one config line) the first time one is needed."""
        if self.config.tombstone_salt:
            return self.config.tombstone_salt
        import secrets

        from memvault.backends.base import MISSING
        from memvault.config import set_config_value

        with self.backend.lock():
            blob = self.backend.read(CONFIG)
            current = parse_config(blob.data if blob else None)
            if not current.tombstone_salt:
                salt = secrets.token_hex(16)
                text = blob.data.decode("utf-8") if blob else ""
                new = set_config_value(text, "tombstone_salt", salt)
                self.backend.write(CONFIG, new.encode("utf-8"),
                                   expected=blob.version if blob else MISSING,
                                   message="memvault: add tombstone salt")
                current.tombstone_salt = salt
        self.config.tombstone_salt = current.tombstone_salt
        return current.tombstone_salt

    def scrub_text_elsewhere(self, text: str) -> int:
        """Remove items with this exact (normalised) text from the bullet files of every
        kind but facts (Lessons.md and Inbox.md)."""
        from memvault.core.kinds import FACT, all_kinds
        from memvault.core.records import match_key
        from memvault.services.bullet_files import NoChange, edit_bullet_file, load_bullet_file

        key = match_key(text)
        removed = 0
        for path in [self.layout.path(k) for k in all_kinds() if k is not FACT]:
            loaded = load_bullet_file(self.backend, path)
            if not loaded.exists or not any(match_key(i.text) == key and i.editable
                                            for i in loaded.doc.items):
                continue

            def apply(doc, key=key):  # type: ignore[no-untyped-def]
                hits = [i for i in doc.items if match_key(i.text) == key and i.editable]
                if not hits:
                    raise NoChange(0)
                for it in sorted(hits, key=lambda i: i.start, reverse=True):
                    doc.delete_item(it)
                return len(hits)

            removed += edit_bullet_file(self.backend, path, apply,
                                        message="memvault: scrub forgotten text")
        return removed

