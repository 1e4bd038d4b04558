"""`memvault hosted ...` as a real subprocess: the secret only from the environment."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import run_memvault
from tests.hosted_backends import no_postgres

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


def test_refusing_for_the_secret_creates_no_database_file(tmp_path: Path) -> None:
    db = tmp_path / "sub" / "hosted.sqlite"
    for env in ({"SESSION_SECRET": ""}, {"SESSION_SECRET": "é" * 16}):
        done = run_memvault("hosted", "put", "u", "d", "text", "--db", str(db), env=env)
        assert done.returncode == 1 and done.stderr.count("\n") == 1, done.stderr
        assert "é" not in done.stderr
    missing = run_memvault("hosted", "status", "--db", str(db), env={"SESSION_SECRET": SECRET})
    assert missing.returncode == 1 and "no hosted database" in missing.stderr
    assert not db.exists() and not db.parent.exists()


def test_rotation_and_a_move_to_postgres_from_the_command_line(tmp_path: Path,
                                                                pg_server) -> None:
    if isinstance(pg_server, str):
        no_postgres(pg_server)
    db = str(tmp_path / "hosted.sqlite")
    old, new = {"SESSION_SECRET": SECRET}, {"SESSION_SECRET": "n" * 40}
    for i in range(5):
        assert run_memvault("hosted", "put", "user-1", f"d{i}", f"text {i}", "--db", db,
                            env=old).returncode == 0
    rotating = {**new, "SESSION_SECRET_PREVIOUS": SECRET}
    done = run_memvault("hosted", "rekey", "--db", db, "--batch", "2", "--json", env=rotating)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["resealed"] == 5
    assert run_memvault("hosted", "get", "user-1", "d0", "--db", db, env=old).returncode == 1
    dump = str(tmp_path / "moved.dump")
    assert run_memvault("hosted", "export", dump, "--db", db, env=new).returncode == 0
    url = pg_server.create_database()
    pg_env = {**new, "MEMVAULT_HOSTED_DB": url}
    done = run_memvault("hosted", "import", dump, env=pg_env)
    assert done.returncode == 0, done.stderr
    got = run_memvault("hosted", "get", "user-1", "d3", env=pg_env)
    assert got.stdout == "text 3\n", got.stderr
    status = json.loads(run_memvault("hosted", "status", "--json", env=pg_env).stdout)
    assert (status["store"], status["schema"], status["documents"]) == ("postgresql", 2, 5)
