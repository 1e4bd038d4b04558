"""`memvault init`."""

from __future__ import annotations

from pathlib import Path

import click

from memvault.cli.state import console, esc, print_json, state, wants_json


@click.command("init")
@click.argument("path", required=False, type=click.Path(path_type=Path))
@click.option("--trading", is_flag=True,
              help="Also create Policy.md and the trade-note folders now (otherwise they "
                   "appear with the first `policy set` and the first recorded trade).")
@click.option("--git/--no-git", default=None,
              help="Install the git merge driver (`memvault sync --setup`); default: when the "
                   "folder has .git.")
@click.pass_context
def init(ctx: click.Context, path: Path | None, trading: bool, git: bool | None) -> None:
    """Create the memvault layout in the vault folder PATH (default: --vault,
    MEMVAULT_VAULT, or the current folder): Memory.md, Lessons.md, Inbox.md and
    Profile.md in Pilot/, settings in .memvault/. Idempotent; never overwrites a file.

    With MEMVAULT_BACKEND=github, or `backend = "github"` in the folder's
    .memvault/config.toml, the layout is created in the GitHub repository (one commit).

    Example: memvault init ~/Notes
    """
    import os

    from memvault.config import parse_config
    from memvault.services.setup import init_vault
    from memvault.state_paths import CONFIG

    st = state(ctx)
    root = (path or Path(st.vault_path or Path.cwd())).expanduser().absolute()
    local = root / CONFIG
    config = parse_config(local.read_bytes() if local.is_file() else None)
    # The backend named in the environment, else in the folder's own config.toml.
    from memvault.backends.registry import backend_type

    chosen = backend_type(os.environ.get("MEMVAULT_BACKEND") or config.backend, path=CONFIG)
    remote = not chosen.local
    backend = None if chosen.local else chosen.open(root, config)
    report = init_vault(root, scope=st.scope, backend=backend, trading=trading)
    if report.root and backend is not None:
        report.root = backend.describe()
    git_lines: list[str] = []
    if git or (git is None and not remote and (root / ".git").exists()):
        from memvault.services.sync import GitSync
        from memvault.services.vault import Vault

        git_lines = GitSync(Vault.open(root, scope=st.scope)).setup().lines()
    if wants_json(ctx):
        print_json({**report.to_dict(), "git": git_lines})
        return
    if st.quiet:
        return
    c = console()
    c.print(f"vault: {esc(report.root)}")
    for p in report.created:
        c.print(f"  [green]created[/green] {esc(p)}")
    for p in report.kept:
        c.print(f"  [dim]kept    {esc(p)}[/dim]")
    for line in git_lines:
        c.print(f"  {esc(line)}")
