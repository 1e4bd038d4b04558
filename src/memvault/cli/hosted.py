"""`memvault hosted ...`: operate a hosted-mode database (thin; see memvault.hosted).

SESSION_SECRET is read from the environment only; no option takes it, and nothing here
prints it. The vault options (--vault, --scope) do not apply: hosted mode is a database.
"""

from __future__ import annotations

import sys
from typing import Any

import click

from memvault.cli.base import group
from memvault.cli.state import confirm, print_json, wants_json

hosted_group = group("hosted", "Hosted mode: per-principal documents encrypted in a database "
                               "(SESSION_SECRET from the environment).\n\n"
                               "Example: SESSION_SECRET=... memvault hosted status --db "
                               "memory.sqlite")

db_option = click.option("--db", required=True, envvar="MEMVAULT_HOSTED_DB", metavar="FILE",
                         help="The hosted SQLite database file (also MEMVAULT_HOSTED_DB).")


def _open(db: str) -> Any:
    from memvault.hosted import HostedMemory

    return HostedMemory.open(db)


@hosted_group.command("status")
@db_option
@click.pass_context
def status(ctx: click.Context, db: str) -> None:
    """Check that SESSION_SECRET opens this database (creating it if new); count principals.

    Example: SESSION_SECRET=... memvault hosted status --db memory.sqlite
    """
    with _open(db) as hm:
        data = {"db": db, "secret": "ok", "principals": hm.principal_count()}
    if wants_json(ctx):
        print_json(data)
    else:
        click.echo(f"{db}: SESSION_SECRET matches; {data['principals']} principal(s)")


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
        sys.stdout.buffer.write(doc.content)
        if not doc.content.endswith(b"\n"):
            sys.stdout.write("\n")


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
