"""`memvault hosted ...`: operate a hosted-mode database (thin; see memvault.hosted).

SESSION_SECRET is read from the environment only; no option takes it, and nothing here
prints it. The vault options (--vault, --scope) do not apply: hosted mode is a database.
"""

from __future__ import annotations

import sys
from typing import Optional

import typer

from memvault.cli.state import confirm, print_json, wants_json

hosted_app = typer.Typer(help="Hosted mode: per-principal documents encrypted in a database "
                              "(SESSION_SECRET from the environment).\n\n"
                              "Example: SESSION_SECRET=... memvault hosted status --db memory.sqlite",
                         no_args_is_help=True)

DB_OPT = typer.Option(..., "--db", envvar="MEMVAULT_HOSTED_DB",
                      help="The hosted SQLite database file.")
JSON_OPT = typer.Option(False, "--json", help="JSON output.")


def register(app: typer.Typer) -> None:
    app.add_typer(hosted_app, name="hosted")


def _open(db: str):  # type: ignore[no-untyped-def]
    from memvault.hosted import HostedMemory

    return HostedMemory.open(db)


@hosted_app.command("status")
def status(ctx: typer.Context, db: str = DB_OPT, json_out: bool = JSON_OPT) -> None:
    """Check that SESSION_SECRET opens this database (creating it if new); count principals.

    Example: SESSION_SECRET=... memvault hosted status --db memory.sqlite
    """
    with _open(db) as hm:
        data = {"db": db, "secret": "ok", "principals": hm.principal_count()}
    if wants_json(ctx, json_out):
        print_json(data)
    else:
        typer.echo(f"{db}: SESSION_SECRET matches; {data['principals']} principal(s)")


@hosted_app.command("put")
def put(
    ctx: typer.Context,
    principal: str = typer.Argument(..., help="The principal (user, wallet) id."),
    doc_id: str = typer.Argument(..., metavar="DOC_ID"),
    text: str = typer.Argument(..., help="The document text; - reads stdin."),
    kind: str = typer.Option("preference", "--kind", help="preference or lesson."),
    db: str = DB_OPT,
    json_out: bool = JSON_OPT,
) -> None:
    """Store (or replace) one document, encrypted (at most 1 MiB; 4,096 per principal).

    Example: memvault hosted put user-42 answer-style "Prefers short answers" --db m.sqlite
    """
    content: str | bytes = sys.stdin.buffer.read() if text == "-" else text
    with _open(db) as hm:
        info = hm.put(principal, doc_id, content, kind=kind)
    if wants_json(ctx, json_out):
        print_json(info.to_dict())
    else:
        typer.echo(f"stored {info.doc_id} ({info.kind}, {info.size} bytes)")


@hosted_app.command("get")
def get(ctx: typer.Context, principal: str = typer.Argument(...),
        doc_id: str = typer.Argument(..., metavar="DOC_ID"), db: str = DB_OPT,
        json_out: bool = JSON_OPT) -> None:
    """Print one document, decrypted.

    Example: memvault hosted get user-42 answer-style --db m.sqlite
    """
    with _open(db) as hm:
        doc = hm.get(principal, doc_id)
    if wants_json(ctx, json_out):
        print_json({**doc.info.to_dict(), "text": doc.content.decode("utf-8", "replace")})
    else:
        sys.stdout.buffer.write(doc.content)
        if not doc.content.endswith(b"\n"):
            sys.stdout.write("\n")


@hosted_app.command("list")
def list_docs(ctx: typer.Context, principal: str = typer.Argument(...),
              kind: Optional[str] = typer.Option(None, "--kind"), db: str = DB_OPT,
              json_out: bool = JSON_OPT) -> None:
    """A principal's documents (id, kind, size), newest first.

    Example: memvault hosted list user-42 --kind lesson --db m.sqlite --json
    """
    with _open(db) as hm:
        infos = hm.list(principal, kind=kind)
    if wants_json(ctx, json_out):
        print_json({"documents": [i.to_dict() for i in infos]})
        return
    for i in infos:
        typer.echo(f"{i.doc_id}\t{i.kind}\t{i.size} bytes")


@hosted_app.command("forget")
def forget(ctx: typer.Context, principal: str = typer.Argument(...),
           doc_id: str = typer.Argument(..., metavar="DOC_ID"), db: str = DB_OPT,
           yes: bool = typer.Option(False, "--yes", "-y", help="Do not ask."),
           json_out: bool = JSON_OPT) -> None:
    """Forget one document; a content-free tombstone keeps it from coming back.

    Example: memvault hosted forget user-42 answer-style --db m.sqlite --yes
    """
    if not confirm(f"Forget {doc_id}?", yes=yes, action="forget a hosted document"):
        raise typer.Exit(1)
    with _open(db) as hm:
        info = hm.forget(principal, doc_id)
    if wants_json(ctx, json_out):
        print_json({"forgotten": info.to_dict()})
    else:
        typer.echo(f"forgot {info.doc_id}")
