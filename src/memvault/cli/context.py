"""`memvault context`: print the block an assistant prepends to its system prompt."""

from __future__ import annotations

import click

from memvault.cli.state import print_json, state, wants_json, warn


@click.command("context")
@click.option("--request", "-r", default="",
              help="The user's current request (overrides and opt-outs are read from it).")
@click.option("--budget", "-b", type=int, metavar="CHARS",
              help="Characters of personal memory (default 4000, or [context] budget in "
                   "config).")
@click.option("--no-personal", is_flag=True, help="Leave personal memory out; keep the limits.")
@click.option("--manifest-offset", type=click.IntRange(min=0), default=0, metavar="N",
              help="Start the manifest page (records not shown) at N; JSON gives the next one "
                   "as manifest_next.")
@click.pass_context
def context(ctx: click.Context, request: str, budget: int | None, no_personal: bool,
            manifest_offset: int) -> None:
    """The context block: the remembered facts, preferences and lessons most relevant to
    the request, as quoted, untrusted data within a character budget (the rest counted,
    and paged by id in a manifest), after the policy limits in a vault that uses trading.

    Example: memvault context --request "give me full detail this time" --json
    """
    block = state(ctx).vault().context.build(request, budget=budget, no_personal=no_personal,
                                             manifest_offset=manifest_offset)
    if wants_json(ctx):
        print_json(block.to_dict())
        return
    for warning in block.warnings:
        warn(warning)
    click.echo(block.text, nl=False)
