"""`memvault completion SHELL`: print the shell completion script (click's own).

    eval "$(memvault completion bash)"      # add to ~/.bashrc
    eval "$(memvault completion zsh)"       # add to ~/.zshrc
    memvault completion fish > ~/.config/fish/completions/memvault.fish
"""

from __future__ import annotations

import click

SHELLS = ("bash", "zsh", "fish")


@click.command("completion")
@click.argument("shell", type=click.Choice(SHELLS))
@click.pass_context
def completion(ctx: click.Context, shell: str) -> None:
    """Print the completion script for SHELL (bash, zsh or fish).

    Example: eval "$(memvault completion bash)"
    """
    from click.shell_completion import get_completion_class

    cls = get_completion_class(shell)
    if cls is None:  # pragma: no cover - the choices above are click's built-in shells
        raise click.UsageError(f"no completion for {shell}")
    root = ctx.find_root()
    script = cls(root.command, {}, "memvault", "_MEMVAULT_COMPLETE").source()
    click.echo(script)
