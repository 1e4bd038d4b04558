"""Export and import of one principal's memory (docs/learning.md#export-and-import).

Export (version 2) is one JSON object::

    {"format": "memvault", "version": 2, "exported_at": 1784594521, "scope": "default",
     "facts": [REC], "preferences": [REC], "lessons": [REC], "proposals": [REC],
     "controls": {"learning": true, "retrieval": true, "capture": "ask"},
     "tombstones": {"salt": "...", "keys": ["<hmac>", ...]}}

    REC = {"id", "text", "category" (as written, or null), "meta": {every key:value},
           "authority", "status"}   (+ "kind", "task" for proposals)

`preferences` holds records in the categories preference, communication, presentation,
workflow and research; `facts` holds the rest. Tombstones are content-free keys only:
forgotten text is never exported.

Import reads version 2, version 1 (a JSON list of `{"content", "category"}`, or
`{"version": 1, "memories": [...]}`) and plain Markdown bullet lists (parsed with the
one bullet grammar). What becomes what:

- v2 facts, preferences and lessons the user confirmed (explicit, or accepted in
  review) are restored as they were (same id and metadata); unreviewed inferences
  (`review:skipped`, from silent capture) arrive as proposals;
- v2 proposals stay proposals (same id, metadata and box);
- v1 items and Markdown bullets carry no authority: they arrive as proposals
  (`src:import auth:inferred`), never as accepted memory;
- v2 controls (`learning`, `retrieval`, `capture`) are restored only when the caller
  asks (`with_controls`, the CLI's `--with-controls`); otherwise they are reported as not
  applied. Tombstone keys are merged when the export comes from a vault with the same
  tombstone salt, and in every case an item whose text is tombstoned (in this vault, or
  by the export's own keys) is skipped, so import never resurrects it;
- nothing is overwritten: a text already present (compared by `match_key`), or an id
  already used by another text, is skipped. Re-importing the same file therefore changes
  nothing, and so do concurrent imports of one file: `apply` holds the vault lock and
  checks every action again against the files as they are then.

Validated like `remember`, before anything is written: every text passes
`check_record_text`; ids are letters, digits, `_ . -` (at most 64); categories follow the
bullet grammar; metadata keys and values are single tokens without comment markers
(`%%`, `<!--`, `-->`), control characters or NUL; and each line memvault would write is
parsed back with the bullet grammar and must give exactly the same record. Proposals
always arrive with an empty task box (never ticked, so never auto-accepted). Import
never writes Policy.md.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from memvault.core.bullets import BulletDocument, parse_bullets, render_new_item
from memvault.core.kinds import all_kinds
from memvault.core.records import (
    FACT_CATEGORIES,
    INBOX_CATEGORIES,
    LESSON_CATEGORIES,
    PREFERENCE_CATEGORIES,
    Lesson,
    Proposal,
    Record,
    check_record_text,
    fact_from_item,
    match_key,
    record_from_item,
    tombstone_keys,
)
from memvault.errors import InvalidInput
from memvault.services.bullet_files import (
    NoChange,
    edit_bullet_file,
    ids_beside,
    load_bullet_file,
    new_record_id,
)

if TYPE_CHECKING:
    from memvault.services.vault import Vault

EXPORT_VERSION = 2
PREFERENCE_SET = ("preference",) + PREFERENCE_CATEGORIES
BATCH = 200
MAX_IMPORT_BYTES = 64 * 1024 * 1024
MAX_META_KEYS = 32
MAX_META_VALUE = 256
_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}\Z")
_CATEGORY = re.compile(r"[A-Za-z][A-Za-z0-9_-]{0,63}\Z")
_META_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]{0,63}\Z")
_META_VALUE_BAD = re.compile(r"[\s\x00-\x1f\x7f-\x9f]|%%|<!--|-->")
_TOMBSTONE_KEY = re.compile(r"[0-9a-f]{32}\Z")


def _record(f: Record) -> dict[str, Any]:
    meta = dict(f.meta)
    meta.setdefault("id", f.id)
    rec: dict[str, Any] = {"id": f.id, "text": f.text, "category": f.category_raw,
                           "meta": meta, "authority": f.authority, "status": f.status}
    if isinstance(f, Proposal):  # a proposal says what accepting it makes, and its box
        rec["kind"] = f.kind
        rec["task"] = f.task
    return rec


@dataclass(slots=True)
class Action:
    target: str  # memory, lessons, inbox
    text: str
    category: str | None
    meta: dict[str, str]
    task: str | None = None
    origin: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"to": self.target, "text": self.text, "category": self.category,
                "id": self.meta.get("id"), "from": self.origin}


@dataclass(slots=True)
class ImportPlan:
    source_format: str
    actions: list[Action] = field(default_factory=list)
    skipped: list[dict[str, Any]] = field(default_factory=list)
    controls: dict[str, Any] = field(default_factory=dict)
    controls_not_applied: dict[str, Any] = field(default_factory=dict)
    tombstone_keys: list[str] = field(default_factory=list)
    applied: bool = False
    foreign_salt: str = ""
    foreign_keys: set[str] = field(default_factory=set)

    @property
    def changes(self) -> int:
        return len(self.actions) + len(self.controls) + len(self.tombstone_keys)

    def to_dict(self) -> dict[str, Any]:
        counts: dict[str, int] = {}
        for a in self.actions:
            counts[a.target] = counts.get(a.target, 0) + 1
        return {"format": self.source_format, "applied": self.applied,
                "changes": self.changes, "added": counts,
                "actions": [a.to_dict() for a in self.actions], "skipped": self.skipped,
                "controls": self.controls,
                "controls_not_applied": self.controls_not_applied,
                "tombstones_added": len(self.tombstone_keys)}


class TransferService:
    def __init__(self, vault: Vault) -> None:
        self.vault = vault

    # -- export ------------------------------------------------------------------------

    def export(self) -> dict[str, Any]:
        lay = self.vault.layout
        backend = self.vault.backend
        facts = [fact_from_item(it, FACT_CATEGORIES)
                 for it in load_bullet_file(backend, lay.memory).doc.items]
        lessons = [record_from_item(it, Lesson, LESSON_CATEGORIES)
                   for it in load_bullet_file(backend, lay.lessons).doc.items]
        inbox = [record_from_item(it, Proposal, INBOX_CATEGORIES)
                 for it in load_bullet_file(backend, lay.inbox).doc.items]
        return {
            "format": "memvault", "version": EXPORT_VERSION, "exported_at": int(time.time()),
            "scope": lay.scope_name,
            "facts": [_record(f) for f in facts if (f.category_raw or "other").lower()
                      not in PREFERENCE_SET],
            "preferences": [_record(f) for f in facts if (f.category_raw or "other").lower()
                            in PREFERENCE_SET],
            "lessons": [_record(f) for f in lessons],
            "proposals": [_record(f) for f in inbox],
            "controls": self.vault.controls.all(),
            "tombstones": {"salt": self.vault.tombstones.salt,
                           "keys": sorted(self.vault.tombstones.active_keys())},
        }

    # -- import ------------------------------------------------------------------------

    def plan(self, data: bytes, source: str = "import file", *,
             with_controls: bool = False) -> ImportPlan:
        """Parse and validate an import file; say what it would change (no writes).
        Its controls are planned only `with_controls`."""
        if len(data) > MAX_IMPORT_BYTES:
            raise InvalidInput(f"the file is {len(data):,} bytes; an import is at most "
                               f"{MAX_IMPORT_BYTES:,}", path=source)
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError:
            raise InvalidInput("not valid UTF-8", path=source) from None
        stripped = text.strip()
        if not stripped:
            raise InvalidInput("the file is empty", path=source)
        if stripped[0] in "[{":
            try:
                obj = json.loads(stripped)
            except ValueError as exc:
                raise InvalidInput(f"invalid JSON: {exc}", path=source) from None
            return self._plan_json(obj, source, with_controls)
        return self._plan_markdown(text.encode("utf-8"), source)

    def _plan_json(self, obj: Any, source: str, with_controls: bool) -> ImportPlan:
        if isinstance(obj, list):
            return self._plan_v1(obj, source)
        if not isinstance(obj, dict):
            raise InvalidInput("expected a JSON object or list", path=source)
        version = obj.get("version")
        if version == 1 or (version is None and isinstance(obj.get("memories"), list)):
            items = obj.get("memories", obj.get("facts"))
            if not isinstance(items, list):
                raise InvalidInput('version 1 needs a "memories" list', path=source)
            return self._plan_v1(items, source)
        if version != 2:
            raise InvalidInput(f"unsupported export version {version!r} (1 and 2 are read)",
                               path=source)
        return self._plan_v2(obj, source, with_controls)

    def _plan_v1(self, items: list[Any], source: str) -> ImportPlan:
        plan = ImportPlan("v1")
        ctx = _Context(self.vault)
        for n, item in enumerate(items, 1):
            if not isinstance(item, dict):
                raise InvalidInput(f"item {n} is not an object", path=source)
            content = item.get("content", item.get("text"))
            if not isinstance(content, str):
                raise InvalidInput(f'item {n} has no "content" text', path=source)
            cat = item.get("category")
            ctx.add_proposal(plan, _checked(content, n, source), _fact_category(cat), "v1",
                             where=f"item {n}", source=source)
        return plan

    def _plan_markdown(self, data: bytes, source: str) -> ImportPlan:
        doc = parse_bullets(data)
        if not doc.items:
            raise InvalidInput("no JSON and no Markdown bullets found", path=source)
        plan = ImportPlan("markdown")
        ctx = _Context(self.vault)
        for it in doc.items:
            try:
                text = check_record_text(it.text)
            except InvalidInput as exc:
                plan.skipped.append({"text": it.text, "reason": f"line {it.line_no}: {exc}"})
                continue
            ctx.add_proposal(plan, text, _fact_category(it.category_raw), "markdown",
                             where=f"line {it.line_no}", source=source)
        return plan

    def _plan_v2(self, obj: dict[str, Any], source: str, with_controls: bool) -> ImportPlan:
        plan = ImportPlan("v2")
        stones = obj.get("tombstones") or {}
        if not isinstance(stones, dict):
            raise InvalidInput('"tombstones" must be an object', path=source)
        keys = stones.get("keys") or []
        if not isinstance(keys, list) or not all(isinstance(k, str) and _TOMBSTONE_KEY.match(k)
                                                 for k in keys):
            raise InvalidInput('"tombstones" keys must be 32 hex characters each', path=source)
        plan.foreign_salt = str(stones.get("salt") or "")
        plan.foreign_keys = set(keys)
        ctx = _Context(self.vault, plan.foreign_salt, plan.foreign_keys)
        for section in ("facts", "preferences", "lessons", "proposals"):
            records = obj.get(section, [])
            if not isinstance(records, list):
                raise InvalidInput(f'"{section}" must be a list', path=source)
            for n, rec in enumerate(records, 1):
                where = f"{section} item {n}"
                if not isinstance(rec, dict) or not isinstance(rec.get("text"), str):
                    raise InvalidInput(f"{where} has no text", path=source)
                text = _checked(rec["text"], where, source)
                meta = _checked_meta(rec.get("meta"), rec.get("id"), where, source)
                cat = _checked_category(rec.get("category"), text, where, source)
                if section == "proposals":
                    # never ticked: a ticked box would be accepted by the next command
                    ctx.add(plan, _checked_action(
                        Action("inbox", text, cat, meta, " ", "v2 proposal"), where, source))
                    continue
                target = "lessons" if section == "lessons" else "memory"
                confirmed = meta.get("auth") != "inferred" or meta.get("review") != "skipped"
                if confirmed:
                    ctx.add(plan, _checked_action(
                        Action(target, text, cat, meta, None, f"v2 {section}"), where, source))
                else:
                    kind = "lesson" if section == "lessons" else "fact"
                    ctx.add_proposal(plan, text, cat, f"v2 unreviewed {section}", kind=kind,
                                     extra={k: v for k, v in meta.items()
                                            if k in ("src", "evidence")},
                                     where=where, source=source)
        controls = obj.get("controls") or {}
        if not isinstance(controls, dict):
            raise InvalidInput('"controls" must be an object', path=source)
        from memvault.services.controls import CONTROL_KEYS, parse_control

        current = self.vault.controls.all()
        for key, value in controls.items():
            if key not in CONTROL_KEYS:
                continue
            try:
                parsed = parse_control(key, value)
            except InvalidInput as exc:
                raise InvalidInput(f"controls: {exc}", path=source) from None
            if current[key] != parsed:
                (plan.controls if with_controls else plan.controls_not_applied)[key] = parsed
        if plan.foreign_salt and plan.foreign_salt == self.vault.tombstones.salt:
            active = self.vault.tombstones.active_keys()
            plan.tombstone_keys = sorted(k for k in plan.foreign_keys if k not in active)
        return plan

    def apply(self, plan: ImportPlan,
              progress: Callable[[int, int], None] | None = None) -> ImportPlan:
        """Write the plan: one edit per file per batch, then journal events.

        Under the vault lock, every action is checked again against the files as they are
        now, so a concurrent import of the same file (or a `remember` in between) never
        stores a text twice; what became a duplicate is moved to `skipped`."""
        with self.vault.backend.lock():
            fresh = _Context(self.vault, plan.foreign_salt, plan.foreign_keys)
            planned, plan.actions = plan.actions, []
            for action in planned:
                fresh.add(plan, action)
            return self._write(plan, progress)

    def _write(self, plan: ImportPlan,
               progress: Callable[[int, int], None] | None) -> ImportPlan:
        lay = self.vault.layout
        total = len(plan.actions)
        done = 0
        events: list[dict[str, Any]] = []
        for kind in all_kinds():
            target, path = kind.collection, lay.path(kind)
            todo = [a for a in plan.actions if a.target == target]
            for start in range(0, len(todo), BATCH):
                chunk = todo[start:start + BATCH]

                def add(doc: BulletDocument, chunk: list[Action] = chunk,
                        path: str = path) -> list[Action]:
                    taken = {it.id for it in doc.items} | ids_beside(
                        self.vault.backend, lay.memory_files, path)
                    present = {match_key(it.text) for it in doc.items}
                    written = []
                    for a in chunk:
                        if match_key(a.text) in present:  # typed in by hand meanwhile
                            continue
                        present.add(match_key(a.text))
                        if a.meta["id"] in taken:
                            a.meta["id"] = new_record_id(taken)
                        taken.add(a.meta["id"])
                        written.append(a)
                    if not written:
                        raise NoChange([])
                    doc.insert_items([render_new_item(a.text, a.category, a.meta, task=a.task)
                                      for a in written])
                    return written

                written = edit_bullet_file(self.vault.backend, path, add,
                                           message="memvault: import",
                                           initial=kind.new_file())
                for a in written:
                    if kind.inbox:
                        events.append({"type": "proposal.proposed", "record": a.meta["id"],
                                       "text": a.text, "category": a.category,
                                       "kind": a.meta.get("kind", "fact"), "source": "import"})
                    else:
                        events.append({"type": "fact.imported", "record": a.meta["id"],
                                       "text": a.text, "category": a.category,
                                       "file": path})
                done += len(chunk)
                if progress:
                    progress(done, total)
        if events:
            self.vault.events.append_many(events)
        for key, value in plan.controls.items():
            self.vault.controls.set(key, value)
        if plan.tombstone_keys:
            now = int(time.time())
            lines = b"".join(
                (json.dumps({"key": k, "record": "import", "ts": now, "kind": "imported",
                             "scope": lay.scope_name}) + "\n").encode()
                for k in plan.tombstone_keys)
            from memvault.state_paths import TOMBSTONES

            self.vault.backend.append(TOMBSTONES, lines, message="memvault: import tombstones")
        plan.applied = True
        return plan


class _Context:
    """What the vault already holds, to skip duplicates, id clashes and tombstones."""

    def __init__(self, vault: Vault, foreign_salt: str = "",
                 foreign_keys: set[str] | None = None) -> None:
        self.vault = vault
        self.foreign_salt = foreign_salt
        self.foreign_keys = foreign_keys or set()
        self.active = vault.tombstones.active_keys()
        self.texts: set[str] = set()
        self.ids: set[str] = set()  # ids are unique across the kinds
        lay = vault.layout
        for path in lay.memory_files:
            items = load_bullet_file(vault.backend, path).doc.items
            self.texts.update(match_key(it.text) for it in items)
            self.ids.update(it.id for it in items)

    def tombstoned(self, text: str) -> bool:
        if self.vault.tombstones.matches(text, self.active):
            return True
        if self.foreign_salt and self.foreign_keys:
            return any(k in self.foreign_keys for k in tombstone_keys(self.foreign_salt, text))
        return False

    def add(self, plan: ImportPlan, action: Action) -> None:
        key = match_key(action.text)
        if self.tombstoned(action.text):
            plan.skipped.append({"text": None, "id": action.meta.get("id"),
                                 "reason": "forgotten or rejected before (tombstoned)"})
            return
        if key in self.texts:
            plan.skipped.append({"text": action.text, "reason": "already present"})
            return
        if action.meta["id"] in self.ids:
            plan.skipped.append({"text": action.text, "id": action.meta["id"],
                                 "reason": "id already used by another text (kept yours)"})
            return
        self.texts.add(key)
        self.ids.add(action.meta["id"])
        plan.actions.append(action)

    def add_proposal(self, plan: ImportPlan, text: str, category: str | None, origin: str,
                     *, kind: str = "fact", extra: dict[str, str] | None = None,
                     where: str = "", source: str = "") -> None:
        meta = {"id": new_record_id(self.ids), "kind": kind, "src": "import",
                "proposed": str(int(time.time())), "auth": "inferred", **(extra or {})}
        known = LESSON_CATEGORIES if kind == "lesson" else FACT_CATEGORIES
        cat = category if category and category.lower() in known else (
            "other" if kind == "fact" else category)
        self.add(plan, _checked_action(Action("inbox", text, cat, meta, " ", origin),
                                       where, source))


def _checked(text: str, where: object, source: str) -> str:
    try:
        return check_record_text(text)
    except InvalidInput as exc:
        label = f"item {where}" if isinstance(where, int) else str(where)
        raise InvalidInput(f"{label}: {exc}", path=source) from None


def _checked_meta(meta: Any, rec_id: Any, where: str, source: str) -> dict[str, str]:
    """Metadata as `key:value` tokens the bullet grammar reads back exactly."""
    if meta is None:
        meta = {}
    if not isinstance(meta, dict):
        raise InvalidInput(f"{where}: meta must be an object", path=source)
    if len(meta) > MAX_META_KEYS:
        raise InvalidInput(f"{where}: more than {MAX_META_KEYS} metadata keys", path=source)
    out: dict[str, str] = {}
    for k, v in meta.items():
        if not isinstance(k, str) or not _META_KEY.match(k):
            raise InvalidInput(f"{where}: metadata key {_short(k)} is not a plain name "
                               "(letters, digits, _ . -)", path=source)
        if isinstance(v, bool) or not isinstance(v, (str, int)):
            raise InvalidInput(f"{where}: metadata {k} must be text or a whole number",
                               path=source)
        sv = str(v)
        if len(sv) > MAX_META_VALUE or _META_VALUE_BAD.search(sv):
            raise InvalidInput(f"{where}: metadata {k}:{_short(sv)} must be one token without "
                               "spaces, control characters, %% or comment markers, at most "
                               f"{MAX_META_VALUE} characters", path=source)
        out[k] = sv
    if "id" not in out:
        if not isinstance(rec_id, str):
            raise InvalidInput(f"{where} has no id", path=source)
        out = {"id": rec_id, **out}
    if not _ID.match(out["id"]):
        raise InvalidInput(f"{where}: id {_short(out['id'])} is not a record id (letters, "
                           "digits, _ . -, at most 64)", path=source)
    if isinstance(rec_id, str) and rec_id != out["id"]:
        raise InvalidInput(f"{where}: id {_short(rec_id)} differs from meta id "
                           f"{_short(out['id'])}", path=source)
    return out


def _checked_category(cat: Any, text: str, where: str, source: str) -> str | None:
    if cat is None:
        # a text ending in "[word]" would read as that category: give it one
        return "other" if text.endswith("]") else None
    if not isinstance(cat, str) or not _CATEGORY.match(cat):
        raise InvalidInput(f"{where}: category {_short(cat)} is not a category name "
                           "(a letter, then letters, digits, _ or -)", path=source)
    return cat


def _checked_action(action: Action, where: str, source: str) -> Action:
    """The action, if the line it writes parses back to exactly the same record."""
    line = render_new_item(action.text, action.category, action.meta, task=action.task)
    doc = parse_bullets(line.encode("utf-8") + b"\n")
    item = doc.items[0] if len(doc.items) == 1 else None
    if item is None or doc.readonly_reason or not item.editable or item.provisional or \
            item.text != action.text or item.category_raw != action.category or \
            item.meta != action.meta or item.task != action.task:
        raise InvalidInput(f"{where}: would not be read back as the same record "
                           "(its text, category or metadata confuses the bullet grammar)",
                           path=source)
    return action


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:39] + "\u2026"


def _fact_category(cat: Any) -> str | None:
    if isinstance(cat, str) and cat.strip().lower() in FACT_CATEGORIES:
        return cat.strip().lower()
    return "other"
