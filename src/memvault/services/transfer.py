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
- v2 controls are restored; tombstone keys are merged when the export comes from a vault
  with the same tombstone salt, and in every case an item whose text is tombstoned (in
  this vault, or by the export's own keys) is skipped, so import never resurrects it;
- nothing is overwritten: a text already present, or an id already used by another
  text, is skipped. Re-importing the same file therefore changes nothing.

Everything is validated before anything is written. Import never writes Policy.md.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from memvault.core.bullets import (BulletDocument, normalise_text, parse_bullets,
                                   render_new_item)
from memvault.core.records import (FACT_CATEGORIES, LESSON_CATEGORIES, PREFERENCE_CATEGORIES,
                                   Fact, check_record_text, fact_from_item)
from memvault.errors import InvalidInput
from memvault.services.bullet_files import edit_bullet_file, load_bullet_file, new_record_id

if TYPE_CHECKING:
    from memvault.services.vault import Vault

EXPORT_VERSION = 2
PREFERENCE_SET = ("preference",) + PREFERENCE_CATEGORIES
BATCH = 200


def _record(f: Fact, *, proposal: bool = False) -> dict[str, Any]:
    meta = dict(f.meta)
    meta.setdefault("id", f.id)
    rec: dict[str, Any] = {"id": f.id, "text": f.text, "category": f.category_raw,
                           "meta": meta, "authority": f.authority, "status": f.status}
    if proposal:
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
    tombstone_keys: list[str] = field(default_factory=list)
    applied: bool = False

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
                "controls": self.controls, "tombstones_added": len(self.tombstone_keys)}


class TransferService:
    def __init__(self, vault: Vault) -> None:
        self.vault = vault

    # -- export ------------------------------------------------------------------------

    def export(self) -> dict[str, Any]:
        lay = self.vault.layout
        backend = self.vault.backend
        facts = [fact_from_item(it, FACT_CATEGORIES)
                 for it in load_bullet_file(backend, lay.memory).doc.items]
        lessons = [fact_from_item(it, LESSON_CATEGORIES)
                   for it in load_bullet_file(backend, lay.lessons).doc.items]
        inbox = [fact_from_item(it, FACT_CATEGORIES + LESSON_CATEGORIES)
                 for it in load_bullet_file(backend, lay.inbox).doc.items]
        return {
            "format": "memvault", "version": EXPORT_VERSION, "exported_at": int(time.time()),
            "scope": lay.scope_name,
            "facts": [_record(f) for f in facts if (f.category_raw or "other").lower()
                      not in PREFERENCE_SET],
            "preferences": [_record(f) for f in facts if (f.category_raw or "other").lower()
                            in PREFERENCE_SET],
            "lessons": [_record(f) for f in lessons],
            "proposals": [_record(f, proposal=True) for f in inbox],
            "controls": self.vault.controls.all(),
            "tombstones": {"salt": self.vault.tombstones.salt,
                           "keys": sorted(self.vault.tombstones.active_keys())},
        }

    # -- import ------------------------------------------------------------------------

    def plan(self, data: bytes, source: str = "import file") -> ImportPlan:
        """Parse and validate an import file; say what it would change (no writes)."""
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
            return self._plan_json(obj, source)
        return self._plan_markdown(text.encode("utf-8"), source)

    def _plan_json(self, obj: Any, source: str) -> ImportPlan:
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
        return self._plan_v2(obj, source)

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
            ctx.add_proposal(plan, _checked(content, n, source), _fact_category(cat), "v1")
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
            ctx.add_proposal(plan, text, _fact_category(it.category_raw), "markdown")
        return plan

    def _plan_v2(self, obj: dict[str, Any], source: str) -> ImportPlan:
        plan = ImportPlan("v2")
        stones = obj.get("tombstones") or {}
        ctx = _Context(self.vault, foreign_salt=str(stones.get("salt") or ""),
                       foreign_keys=set(stones.get("keys") or []))
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
                cat = rec.get("category")
                if cat is not None and not isinstance(cat, str):
                    raise InvalidInput(f"{where}: category must be text", path=source)
                if section == "proposals":
                    task = rec.get("task") if isinstance(rec.get("task"), str) and \
                        len(rec["task"]) == 1 else " "
                    ctx.add(plan, Action("inbox", text, cat, meta, task, "v2 proposal"))
                    continue
                target = "lessons" if section == "lessons" else "memory"
                confirmed = meta.get("auth") != "inferred" or meta.get("review") != "skipped"
                if confirmed:
                    ctx.add(plan, Action(target, text, cat, meta, None, f"v2 {section}"))
                else:
                    kind = "lesson" if section == "lessons" else "fact"
                    ctx.add_proposal(plan, text, cat, f"v2 unreviewed {section}", kind=kind,
                                     extra={k: v for k, v in meta.items()
                                            if k in ("src", "evidence")})
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
                plan.controls[key] = parsed
        if ctx.foreign_salt and ctx.foreign_salt == self.vault.tombstones.salt:
            active = self.vault.tombstones.active_keys()
            plan.tombstone_keys = sorted(k for k in ctx.foreign_keys
                                         if isinstance(k, str) and k not in active)
        return plan

    def apply(self, plan: ImportPlan,
              progress: Callable[[int, int], None] | None = None) -> ImportPlan:
        """Write the plan: one edit per file per batch, then journal events."""
        lay = self.vault.layout
        paths = {"memory": lay.memory, "lessons": lay.lessons, "inbox": lay.inbox}
        from memvault.services.memory import MEMORY_HEADER
        from memvault.services.proposals import INBOX_HEADER, LESSONS_HEADER

        headers = {"memory": MEMORY_HEADER, "lessons": LESSONS_HEADER, "inbox": INBOX_HEADER}
        total = len(plan.actions)
        done = 0
        events: list[dict[str, Any]] = []
        for target in ("memory", "lessons", "inbox"):
            todo = [a for a in plan.actions if a.target == target]
            for start in range(0, len(todo), BATCH):
                chunk = todo[start:start + BATCH]

                def add(doc: BulletDocument, chunk: list[Action] = chunk) -> None:
                    taken = {it.id for it in doc.items}
                    for a in chunk:
                        if a.meta["id"] in taken:
                            a.meta["id"] = new_record_id(taken)
                        taken.add(a.meta["id"])
                        doc.insert_item(render_new_item(a.text, a.category, a.meta,
                                                        task=a.task))

                edit_bullet_file(self.vault.backend, paths[target], add,
                                 message="memvault: import", initial=headers[target].encode())
                for a in chunk:
                    if target == "inbox":
                        events.append({"type": "proposal.proposed", "record": a.meta["id"],
                                       "text": a.text, "category": a.category,
                                       "kind": a.meta.get("kind", "fact"), "source": "import"})
                    else:
                        events.append({"type": "fact.imported", "record": a.meta["id"],
                                       "text": a.text, "category": a.category,
                                       "file": paths[target]})
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
        self.ids: dict[str, set[str]] = {}
        lay = vault.layout
        for target, path in (("memory", lay.memory), ("lessons", lay.lessons),
                             ("inbox", lay.inbox)):
            items = load_bullet_file(vault.backend, path).doc.items
            self.texts.update(normalise_text(it.text) for it in items)
            self.ids[target] = {it.id for it in items}

    def tombstoned(self, text: str) -> bool:
        if self.vault.tombstones.key_for(text) in self.active:
            return True
        if self.foreign_salt and self.foreign_keys:
            msg = normalise_text(text).encode("utf-8", "surrogateescape")
            key = hmac.new(self.foreign_salt.encode(), msg, hashlib.sha256).hexdigest()[:32]
            return key in self.foreign_keys
        return False

    def add(self, plan: ImportPlan, action: Action) -> None:
        key = normalise_text(action.text)
        if self.tombstoned(action.text):
            plan.skipped.append({"text": None, "id": action.meta.get("id"),
                                 "reason": "forgotten or rejected before (tombstoned)"})
            return
        if key in self.texts:
            plan.skipped.append({"text": action.text, "reason": "already present"})
            return
        if action.meta["id"] in self.ids[action.target]:
            plan.skipped.append({"text": action.text, "id": action.meta["id"],
                                 "reason": "id already used by another text (kept yours)"})
            return
        self.texts.add(key)
        self.ids[action.target].add(action.meta["id"])
        plan.actions.append(action)

    def add_proposal(self, plan: ImportPlan, text: str, category: str | None, origin: str,
                     *, kind: str = "fact", extra: dict[str, str] | None = None) -> None:
        taken = set().union(*self.ids.values())
        meta = {"id": new_record_id(taken), "kind": kind, "src": "import",
                "proposed": str(int(time.time())), "auth": "inferred", **(extra or {})}
        known = LESSON_CATEGORIES if kind == "lesson" else FACT_CATEGORIES
        cat = category if category and category.lower() in known else (
            "other" if kind == "fact" else category)
        self.add(plan, Action("inbox", text, cat, meta, " ", origin))


def _checked(text: str, where: object, source: str) -> str:
    try:
        return check_record_text(text)
    except InvalidInput as exc:
        label = f"item {where}" if isinstance(where, int) else str(where)
        raise InvalidInput(f"{label}: {exc}", path=source) from None


def _checked_meta(meta: Any, rec_id: Any, where: str, source: str) -> dict[str, str]:
    if meta is None:
        meta = {}
    if not isinstance(meta, dict):
        raise InvalidInput(f"{where}: meta must be an object", path=source)
    out: dict[str, str] = {}
    for k, v in meta.items():
        sv = str(v)
        if not isinstance(k, str) or not k or any(c in k + sv for c in " \t\n\r") or \
                "-->" in sv or ":" in k:
            raise InvalidInput(f"{where}: bad metadata {k}:{v}", path=source)
        out[k] = sv
    if "id" not in out:
        if not isinstance(rec_id, str) or not rec_id.isalnum():
            raise InvalidInput(f"{where} has no id", path=source)
        out = {"id": rec_id, **out}
    return out


def _fact_category(cat: Any) -> str | None:
    if isinstance(cat, str) and cat.strip().lower() in FACT_CATEGORIES:
        return cat.strip().lower()
    return "other"
