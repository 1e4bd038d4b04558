"""`memvault hosted ...`: operate a hosted-mode database (thin; see memvault.hosted).

`--db` is a SQLite file path or a `postgresql://` URL (put the password in PGPASSWORD or
~/.pgpass, not in the URL). SESSION_SECRET (and, while rotating, SESSION_SECRET_PREVIOUS)
is read from the environment only; no option takes it, and nothing here prints it. The
vault options (--vault, --scope) do not apply: hosted mode is a database.
"""

from __future__ import annotations

import sys
from typing import Any

import click

from memvault.cli.base import group
from memvault.cli.state import confirm, print_json, wants_json


def _needs_the_hosted_extra() -> None:
    """Every hosted command needs cryptography (an optional part): say so in one line."""
    from memvault.extras import require

    require("hosted")


hosted_group = group("hosted", "Hosted mode: per-principal documents encrypted in SQLite or "
                               "PostgreSQL (SESSION_SECRET from the environment).\n\n"
                               "Example: SESSION_SECRET=... memvault hosted status --db "
                               "memory.sqlite", callback=_needs_the_hosted_extra)

db_option = click.option("--db", required=True, envvar="MEMVAULT_HOSTED_DB", metavar="FILE|URL",
                         help="A SQLite database file, or a postgresql://user@host/db URL "
                              "(also MEMVAULT_HOSTED_DB).")


def _open(db: str) -> Any:
    from memvault.hosted import HostedMemory

    return HostedMemory.open(db)


def _progress(label: str) -> Any:
    def show(what: Any, count: int, total: int | None = None) -> None:
        of = f"/{total}" if total is not None else ""
        click.echo(f"{label}: {what} {count}{of}", err=True)
    return show


@hosted_group.command("status")
@db_option
@click.pass_context
def status(ctx: click.Context, db: str) -> None:
    """Schema version, row counts and key ids; checks that SESSION_SECRET opens the
    database. Changes nothing (a missing SQLite file is an error, not created).

    Example: SESSION_SECRET=... memvault hosted status --db postgresql://app@db/app --json
    """
    from memvault.hosted.admin import status as read_status

    data = read_status(db)
    if wants_json(ctx):
        print_json(data)
        return
    schema = f"schema {data['schema']}"
    if data["schema"] < data["schema_expected"]:
        schema += f" (run `memvault hosted migrate` for {data['schema_expected']})"
    click.echo(f"{data['db']} ({data['store']}, {schema}): SESSION_SECRET "
               f"{'matches' if data['secret'] == 'ok' else 'will create this store'}")
    click.echo(f"{data['principals']} principal(s), {data['documents']} document(s), "
               f"{data['tombstones']} tombstone(s), {data['events']} applied event(s)")
    click.echo(f"current key {data['current_key']}; keyring: {', '.join(data['keyring']) or '-'}")
    if data["needs_rekey"]:
        click.echo(f"{data['needs_rekey']} document(s) under another secret: run "
                   "`memvault hosted rekey`")
    if data["legacy_documents"]:
        click.echo(f"{data['legacy_documents']} document(s) in the 0.1.0 format (resealed "
                   "when their principal is next used, or `hosted migrate --principals FILE`)")


@hosted_group.command("migrate")
@db_option
@click.option("--principals", type=click.Path(exists=True, dir_okay=False), metavar="FILE",
              help="A file of principal ids, one a line: reseal their 0.1.0-format "
                   "documents now.")
@click.pass_context
def migrate(ctx: click.Context, db: str, principals: str | None) -> None:
    """Create or upgrade the schema (versioned migrations; safe to re-run).

    Example: SESSION_SECRET=... memvault hosted migrate --db postgresql://app@db/app
    """
    from pathlib import Path

    from memvault.hosted.admin import migrate as run_migrate

    ids: list[str] = []
    if principals is not None:
        ids = [line.strip() for line in Path(principals).read_text(encoding="utf-8")
               .splitlines() if line.strip()]
    data = run_migrate(db, principals=ids)
    if wants_json(ctx):
        print_json(data)
        return
    applied = ", ".join(map(str, data["applied"])) or "none needed"
    click.echo(f"{data['db']}: schema {data['schema']} (migrations applied: {applied}); "
               f"{data['resealed']} document(s) resealed, {data['legacy_documents']} "
               "in the 0.1.0 format left")


@hosted_group.command("rekey")
@db_option
@click.option("--batch", type=click.IntRange(min=1), default=200, show_default=True,
              help="Documents per batch.")
@click.pass_context
def rekey(ctx: click.Context, db: str, batch: int) -> None:
    """Re-encrypt every document under SESSION_SECRET, reading old ones with
    SESSION_SECRET_PREVIOUS; resumable; the app keeps running. When done, the previous
    secret no longer opens the database.

    Example: SESSION_SECRET=new SESSION_SECRET_PREVIOUS=old memvault hosted rekey --db m.sqlite
    """
    from memvault.hosted.rotation import rekey as run_rekey

    show = _progress("rekey")
    with _open(db) as hm:
        result = run_rekey(hm, batch=batch,
                           progress=lambda done, total: show("resealed", done, total))
    if wants_json(ctx):
        print_json(result.to_dict())
    else:
        click.echo(f"resealed {result.resealed} document(s); removed "
                   f"{len(result.removed_keys)} old key(s)")
        if not result.finished:
            click.echo(f"{result.legacy_left} document(s) in the 0.1.0 format need their "
                       "principal ids: `memvault hosted migrate --principals FILE`, then "
                       "rekey again")
    if not result.finished:
        ctx.exit(1)


@hosted_group.command("export")
@click.argument("out", metavar="FILE")
@db_option
@click.pass_context
def export(ctx: click.Context, out: str, db: str) -> None:
    """Write the whole store, still encrypted, to a dump FILE (to move between SQLite and
    PostgreSQL).

    Example: memvault hosted export memory.dump --db memory.sqlite
    """
    from memvault.hosted.dump import export as run_export

    counts = run_export(db, out, progress=_progress("export"))
    if wants_json(ctx):
        print_json({"file": out, **counts})
    else:
        click.echo(f"exported {counts['document']} document(s), {counts['marker']} "
                   f"marker(s) to {out}")


@hosted_group.command("import")
@click.argument("dump", metavar="FILE")
@db_option
@click.pass_context
def import_(ctx: click.Context, dump: str, db: str) -> None:
    """Load a dump FILE made by export into an empty database (or finish an interrupted
    import).

    Example: memvault hosted import memory.dump --db postgresql://app@db/app
    """
    from memvault.hosted.dump import import_dump

    counts = import_dump(db, dump, progress=_progress("import"))
    if wants_json(ctx):
        print_json({"file": dump, **counts})
    else:
        click.echo(f"imported {counts['document']} document(s), {counts['marker']} marker(s)")


@hosted_group.command("put")
@click.argument("principal")
@click.argument("doc_id", metavar="DOC_ID")
@click.argument("text")
@click.option("--kind", default="preference", show_default=True, help="preference or lesson.")
@db_option
@click.pass_context
def put(ctx: click.Context, principal: str, doc_id: str, text: str, kind: str, db: str) -> None:
    """Store (or replace) document DOC_ID of PRINCIPAL (a user or wallet id), encrypted:
    TEXT, or - to read stdin (at most 1 MiB; 4,096 per principal).

    Example: memvault hosted put user-42 answer-style "Prefers short answers" --db m.sqlite
    """
    content: str | bytes = sys.stdin.buffer.read() if text == "-" else text
    with _open(db) as hm:
        info = hm.put(principal, doc_id, content, kind=kind)
    if wants_json(ctx):
        print_json(info.to_dict())
    else:
        click.echo(f"stored {info.doc_id} ({info.kind}, {info.size} bytes)")


@hosted_group.command("get")
@click.argument("principal")
@click.argument("doc_id", metavar="DOC_ID")
@db_option
@click.pass_context
def get(ctx: click.Context, principal: str, doc_id: str, db: str) -> None:
    """Print one document, decrypted.

    Example: memvault hosted get user-42 answer-style --db m.sqlite
    """
    with _open(db) as hm:
        doc = hm.get(principal, doc_id)
    if wants_json(ctx):
        print_json({**doc.info.to_dict(), "text": doc.content.decode("utf-8", "replace")})
    else:
        sys.stdout.buffer.write(doc.content if doc.content.endswith(b"\n")
                                else doc.content + b"\n")
        sys.stdout.flush()


@hosted_group.command("list")
@click.argument("principal")
@click.option("--kind", help="Only preference or lesson documents.")
@db_option
@click.pass_context
def list_docs(ctx: click.Context, principal: str, kind: str | None, db: str) -> None:
    """A principal's documents (id, kind, size), newest first.

    Example: memvault hosted list user-42 --kind lesson --db m.sqlite --json
    """
    with _open(db) as hm:
        infos = hm.list(principal, kind=kind)
    if wants_json(ctx):
        print_json({"documents": [i.to_dict() for i in infos]})
        return
    for i in infos:
        click.echo(f"{i.doc_id}\t{i.kind}\t{i.size} bytes")


@hosted_group.command("forget")
@click.argument("principal")
@click.argument("doc_id", metavar="DOC_ID")
@db_option
@click.option("--yes", "-y", is_flag=True, help="Do not ask.")
@click.pass_context
def forget(ctx: click.Context, principal: str, doc_id: str, db: str, yes: bool) -> None:
    """Forget one document; a content-free tombstone keeps it from coming back.

    Example: memvault hosted forget user-42 answer-style --db m.sqlite --yes
    """
    if not confirm(f"Forget {doc_id}?", yes=yes, action="forget a hosted document"):
        ctx.exit(1)
    with _open(db) as hm:
        info = hm.forget(principal, doc_id)
    if wants_json(ctx):
        print_json({"forgotten": info.to_dict()})
    else:
        click.echo(f"forgot {info.doc_id}")
