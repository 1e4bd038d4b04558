"""`memvault context`: print the block an assistant prepends to its system prompt."""

from __future__ import annotations

from typing import Optional

import typer

from memvault.cli.state import print_json, state, wants_json


def register(app: typer.Typer) -> None:
    app.command("context")(context)


def context(
    ctx: typer.Context,
    request: str = typer.Option("", "--request", "-r",
                                help="The user's current request (overrides and opt-outs "
                                     "are read from it)."),
    budget: Optional[int] = typer.Option(None, "--budget", "-b", metavar="CHARS",
                                         help="Characters of personal memory (default 4000, "
                                              "or [context] budget in config)."),
    no_personal: bool = typer.Option(False, "--no-personal",
                                     help="Leave personal memory out; keep the limits."),
    manifest_offset: int = typer.Option(0, "--manifest-offset", metavar="N",
                                        help="Start the manifest page (records not shown) "
                                             "at N; JSON gives the next one as "
                                             "manifest_next."),
    json_out: bool = typer.Option(False, "--json", help="The selection as JSON."),
) -> None:
    """The context block: policy limits, then the remembered facts, preferences and
    lessons most relevant to the request, as quoted, untrusted data within a character
    budget (the rest counted, and paged by id in a manifest).

    Example: memvault context --request "give me full detail this time" --json
    """
    if manifest_offset < 0:
        from memvault.errors import UsageError

        raise UsageError("--manifest-offset must be 0 or more")
    block = state(ctx).vault().context.build(request, budget=budget, no_personal=no_personal,
                                             manifest_offset=manifest_offset)
    if wants_json(ctx, json_out):
        print_json(block.to_dict())
        return
    typer.echo(block.text, nl=False)
