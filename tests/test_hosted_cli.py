"""`memvault hosted ...` as a real subprocess: the secret only from the environment."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import run_memvault

SECRET = "cli-secret-" + "q" * 32


def test_hosted_commands_round_trip_and_a_wrong_secret_fails_cleanly(tmp_path: Path) -> None:
    db = str(tmp_path / "hosted.sqlite")
    env = {"SESSION_SECRET": SECRET}
    done = run_memvault("hosted", "put", "user-1", "style", "Prefers marzipan tables",
                        "--db", db, "--json", env=env)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["size"] == len("Prefers marzipan tables")
    got = run_memvault("hosted", "get", "user-1", "style", "--db", db, env=env)
    assert got.stdout == "Prefers marzipan tables\n"
    listed = run_memvault("hosted", "list", "user-1", "--db", db, "--json", env=env)
    assert [d["id"] for d in json.loads(listed.stdout)["documents"]] == ["style"]
    status = run_memvault("hosted", "status", "--db", db, "--json", env=env)
    assert json.loads(status.stdout)["principals"] == 1
    assert b"marzipan" not in Path(db).read_bytes()

    wrong = run_memvault("hosted", "get", "user-1", "style", "--db", db,
                         env={"SESSION_SECRET": "w" * 40})
    assert wrong.returncode == 1
    assert "does not match" in wrong.stderr
    assert "marzipan" not in wrong.stderr + wrong.stdout and "w" * 40 not in wrong.stderr
    missing = run_memvault("hosted", "status", "--db", db, env={"SESSION_SECRET": ""})
    assert missing.returncode == 1 and "SESSION_SECRET is not set" in missing.stderr

    gone = run_memvault("hosted", "forget", "user-1", "style", "--db", db, "--yes", env=env)
    assert gone.returncode == 0, gone.stderr
    after = run_memvault("hosted", "get", "user-1", "style", "--db", db, env=env)
    assert after.returncode == 1 and "no document" in after.stderr
