"""The vault watcher: notices hand edits of memory files and reports one line per change.

`VaultWatcher(vault, callback)` is the reusable engine (the CLI's `memvault watch` and the
MCP server both use it): `start()` runs a watchdog observer plus one worker thread,
`stop()` ends both. It is the process's one observer: `on_event` hands every raw event
to another listener (the MCP server's index freshness) instead of a second observer. For
every change to Memory.md, Lessons.md or Inbox.md it reloads the file, validates it,
reports what changed by record id (`+ fact k3v9qa "…"`, `~ …`, `- …`), applies ticked
Inbox boxes, and refreshes the search index; Policy.md is validated
(`! Pilot/Policy.md invalid: …; keeping last valid`).

Rules it keeps:
- Editor bursts are debounced: a file is read only after `debounce` seconds without an
  event, and (where the OS reports closes, as inotify does) only once the writer has
  closed it, so a half-written file is never acted on. A file that does not parse
  cleanly is reported and ignored; the last valid state is kept.
- It never crashes on bad input: every failure becomes a `!` line.
- Idle, it sleeps on a condition variable (near-zero CPU); every `health_interval`
  seconds it checks the observer thread and restarts a dead one (then rescans).
- It writes nothing itself except through the services it calls (the inbox).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from memvault.core.bullets import parse_bullets
from memvault.core.kinds import all_kinds
from memvault.errors import InvalidInput
from memvault.state_paths import INDEX, STATE_DIR

if TYPE_CHECKING:
    from watchdog.events import FileSystemEventHandler

    from memvault.services.vault import Vault

IGNORED_TOP = (".git", ".obsidian", STATE_DIR, ".trash")


@dataclass(frozen=True, slots=True)
class WatchEvent:
    """One reported change. `op`: "+", "~", "-", "!" (problem) or "✓" (applied)."""

    op: str
    kind: str  # fact | lesson | proposal | policy | file | watcher
    path: str
    id: str | None = None
    text: str | None = None
    message: str | None = None

    def line(self) -> str:
        if self.id is not None:
            body = f'{self.op} {self.kind} {self.id}'
            if self.text is not None:
                body += f' "{self.text}"'
            if self.message:
                body += f" ({self.message})"
            return body
        return f"{self.op} {self.path}: {self.message}" if self.message else \
            f"{self.op} {self.path}"

    def to_dict(self) -> dict[str, Any]:
        return {"op": self.op, "kind": self.kind, "path": self.path, "id": self.id,
                "text": self.text, "message": self.message, "ts": time.time()}


Snapshot = dict[str, tuple[str, str | None, str | None]]


class VaultWatcher:
    """Watch one local vault; call `callback(WatchEvent)` for every change."""

    def __init__(self, vault: Vault, callback: Callable[[WatchEvent], None], *,
                 debounce: float = 0.15, settle_max: float = 3.0,
                 health_interval: float = 2.0,
                 on_event: Callable[[Any], None] | None = None,
                 refresh_index: bool = True) -> None:
        if vault.backend.capabilities.local_root is None:
            raise InvalidInput("`memvault watch` works on a local vault folder, not on "
                               f"{vault.backend.describe()}")
        self.vault = vault
        self.root = Path(vault.root).absolute()
        self.callback = callback
        self.debounce = debounce
        self.settle_max = settle_max
        self.health_interval = health_interval
        lay = vault.layout
        self.kinds = {lay.path(k): k.name for k in all_kinds()}
        self.inbox_path = next(lay.path(k) for k in all_kinds() if k.inbox)
        self.policy_path = lay.policy
        self._cond = threading.Condition()
        self._pending: dict[str, float] = {}
        self._writing: set[str] = set()
        self._stopping = False
        self._observer: Any = None
        self._worker: threading.Thread | None = None
        self._snapshots: dict[str, Snapshot | None] = {}
        self._deleted: set[str] = set()
        self._policy_last: str | None = None
        self.on_event = on_event
        """Also called with every raw watchdog event, so another part of this process (the
        MCP server's index freshness) shares this observer instead of running its own."""
        self.refresh_index = refresh_index
        """Refresh the search index after a memory file changed (`memvault watch`); the
        MCP server turns it off: its searches refresh exactly the changed paths."""
        self.reloads = 0
        """How many times a memory file was re-read (for tests and benchmarks)."""
        self.restarts = 0

    # -- lifecycle -----------------------------------------------------------------------

    def start(self) -> None:
        for path in self.kinds:
            self._snapshots[path] = self._load(path)[0]
        self._policy_last = self._policy_problem()
        self._start_observer()
        self._worker = threading.Thread(target=self._run, name="memvault-watch", daemon=True)
        self._worker.start()

    def stop(self) -> None:
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        if self._observer is not None:
            self._observer.stop()
            self._observer.join(timeout=5)
        if self._worker is not None:
            self._worker.join(timeout=5)

    def __enter__(self) -> VaultWatcher:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _start_observer(self) -> None:
        from watchdog.observers import Observer

        observer = Observer()
        handler = cast("FileSystemEventHandler", _Handler(self))  # duck-typed, see _Handler
        observer.schedule(handler, str(self.root), recursive=True)
        observer.daemon = True
        observer.start()
        self._observer = observer

    # -- events from watchdog (observer thread) ------------------------------------------

    def _note(self, abs_path: str, event_type: str, is_dest: bool = False) -> None:
        try:
            rel = Path(abs_path).absolute().relative_to(self.root).as_posix()
        except ValueError:
            return
        if rel.split("/", 1)[0] in IGNORED_TOP or not rel.endswith(".md"):
            return
        with self._cond:
            if event_type in ("modified", "created") and not is_dest:
                self._writing.add(rel)
            elif event_type in ("closed", "deleted", "moved"):
                self._writing.discard(rel)
            self._pending[rel] = time.monotonic()
            self._cond.notify()

    # -- the worker ----------------------------------------------------------------------

    def _run(self) -> None:
        last_health = time.monotonic()
        while True:
            with self._cond:
                ready: list[str] = []
                while not self._stopping:
                    now = time.monotonic()
                    ready = [p for p, t in self._pending.items()
                             if now - t >= self.debounce and
                             (p not in self._writing or now - t >= self.settle_max)]
                    if ready or now - last_health >= self.health_interval:
                        break
                    waits = [self.debounce - (now - t) if p not in self._writing
                             else self.settle_max - (now - t)
                             for p, t in self._pending.items()]
                    timeout = min([self.health_interval - (now - last_health), *waits])
                    self._cond.wait(max(timeout, 0.01))
                if self._stopping:
                    return
                for p in ready:
                    self._pending.pop(p, None)
                    self._writing.discard(p)
            if time.monotonic() - last_health >= self.health_interval:
                last_health = time.monotonic()
                self._check_observer()
            if ready:
                self._process(ready)

    def _check_observer(self) -> None:
        if self._stopping or self._observer is None or self._observer.is_alive():
            return
        self.restarts += 1
        try:
            self._start_observer()
        except Exception as exc:  # noqa: BLE001 - reported, retried at the next check
            self._emit(WatchEvent("!", "watcher", str(self.root),
                                  message=f"cannot restart the observer: {exc}"))
            return
        with self._cond:  # rescan what may have changed meanwhile, debounced like events
            now = time.monotonic()
            for path in (*self.kinds, self.policy_path):
                self._pending.setdefault(path, now)
        self._emit(WatchEvent("!", "watcher", str(self.root),
                              message="file observer stopped; restarted it and rescanned"))

    def _process(self, paths: list[str]) -> None:
        changed_notes = False
        for path in paths:
            try:
                if path in self.kinds:
                    self._process_bullets(path)
                elif path == self.policy_path:
                    self._process_policy()
                changed_notes = True
            except Exception as exc:  # noqa: BLE001 - the watcher never dies on input
                self._emit(WatchEvent("!", "file", path, message=f"not processed: {exc}"))
        if changed_notes and self.refresh_index:
            self._refresh_index(set(paths))

    # -- memory files --------------------------------------------------------------------

    def _load(self, path: str) -> tuple[Snapshot | None, str | None]:
        """(snapshot, None) for a valid file; (None, None) when missing; (None, why)."""
        blob = self.vault.backend.read(path)
        if blob is None:
            return None, None
        doc = parse_bullets(blob.data)
        if doc.readonly_reason:
            return None, doc.readonly_reason
        snap: Snapshot = {}
        for it in doc.items:
            if it.readonly_reason:
                return None, f"line {it.line_no}: {it.readonly_reason}"
            snap.setdefault(it.id, (it.text, it.category_raw, it.task))
        return snap, None

    def _process_bullets(self, path: str) -> None:
        self.reloads += 1
        kind = self.kinds[path]
        old = self._snapshots.get(path)
        new, problem = self._load(path)
        if problem:
            self._emit(WatchEvent("!", "file", path,
                                  message=f"invalid: {problem}; keeping last valid"))
            return
        if new is None:
            if path not in self._deleted:
                self._deleted.add(path)
                self._emit(WatchEvent("!", "file", path, message="deleted; keeping the last "
                                      "valid records until it comes back"))
            return
        recreated = path in self._deleted
        self._deleted.discard(path)
        self._snapshots[path] = new
        before = old or {}
        lines = []
        for rid, (text, cat, task) in new.items():
            if rid not in before:
                lines.append(WatchEvent("+", kind, path, rid, text))
            elif before[rid] != (text, cat, task):
                lines.append(WatchEvent("~", kind, path, rid, text,
                                        "ticked" if task in ("x", "X") and
                                        before[rid][2] not in ("x", "X") else None))
        lines += [WatchEvent("-", kind, path, rid) for rid in before if rid not in new]
        if recreated and not lines:
            lines.append(WatchEvent("+", "file", path, message="re-created; no record changed"))
        for ev in lines:
            self._emit(ev)
        if path == self.inbox_path and lines:
            self._apply_inbox()

    def _apply_inbox(self) -> None:
        """Make ticked boxes and deleted lines in Inbox.md take effect: the one Vault step
        every front end uses (`Vault.apply_inbox_edits`, which never raises)."""
        edits = self.vault.apply_inbox_edits()
        if edits.problem:
            self._emit(WatchEvent("!", "file", self.vault.layout.inbox,
                                  message=f"inbox decisions not applied: {edits.problem}"))
        for held in edits.to_report:
            self._emit(WatchEvent("!", "file", held.path,
                                  message=f"line {held.line}: {held.message}"))
        for action, record in edits.applied:
            self._emit(WatchEvent("✓", "proposal", self.vault.layout.inbox, record.id,
                                  record.text, action))

    # -- policy and index ----------------------------------------------------------------

    def _policy_problem(self) -> str | None:
        try:
            from memvault.services.policy import PolicyService
        except ImportError:
            return _frontmatter_problem(self.vault.backend.read(self.policy_path))
        state = PolicyService(self.vault).check()
        if state.valid:
            return None
        return "; ".join(str(i) for i in state.issues) or "invalid"

    def _process_policy(self) -> None:
        problem = self._policy_problem()
        if problem is not None and problem == self._policy_last:
            return  # the same problem, already reported
        self._policy_last = problem
        if problem:
            self._emit(WatchEvent("!", "policy", self.policy_path,
                                  message=f"invalid: {problem}; keeping last valid"))
        else:
            self._emit(WatchEvent("~", "policy", self.policy_path, message="valid"))

    def _refresh_index(self, paths: set[str]) -> None:
        """Bring the search index in step with exactly these changed files."""
        try:
            self.vault.search.refresh_paths(paths)
        except Exception as exc:  # noqa: BLE001
            self._emit(WatchEvent("!", "file", INDEX,
                                  message=f"index not refreshed: {exc}"))

    @property
    def observing(self) -> bool:
        """Whether the observer thread runs (it is restarted when it dies)."""
        return self._observer is not None and self._observer.is_alive()

    def _emit(self, event: WatchEvent) -> None:
        try:
            self.callback(event)
        except Exception:  # noqa: BLE001 - a broken consumer must not stop the watcher
            pass


def _frontmatter_problem(blob: Any) -> str | None:
    if blob is None:
        return None
    text = blob.data.decode("utf-8", "replace")
    if not text.startswith("---"):
        return None
    end = text.find("\n---", 3)
    if end < 0:
        return "frontmatter is never closed"
    import yaml

    from memvault.core.yaml_limits import YamlLimitError, load_limited

    try:
        load_limited(text[3:end], getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except YamlLimitError as exc:
        return f"YAML: {exc}"
    except yaml.YAMLError as exc:
        return f"YAML: {str(exc).splitlines()[0]}"
    return None


class _Handler:
    """watchdog event handler forwarding paths to the watcher (duck-typed dispatch)."""

    def __init__(self, watcher: VaultWatcher) -> None:
        self.watcher = watcher

    def dispatch(self, event: Any) -> None:
        if event.event_type in ("opened", "closed_no_write"):
            return
        if self.watcher.on_event is not None:
            try:
                self.watcher.on_event(event)
            except Exception:  # noqa: BLE001 - a listener must not stop the observer
                pass
        if event.is_directory:
            return
        self.watcher._note(event.src_path, event.event_type)
        dest = getattr(event, "dest_path", "")
        if dest:
            self.watcher._note(dest, event.event_type, is_dest=True)
