"""The same behaviour over both backends, and the GitHub backend's failure handling.

The GitHub backend runs the real PyGithub client over real HTTP against the stand-in in
tests/github_standin.py (127.0.0.1, real git SHAs, GitHub's status codes).
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from memvault import Vault
from memvault.backends.base import MISSING, Change
from memvault.config import Config
from memvault.errors import Conflict
from memvault.services.setup import init_vault
from tests.conftest import Cli, run_memvault
from tests.github_standin import GithubStandin

MEMORY = "Pilot/Memory.md"
TOKEN = "ghp_standinTOKEN0123456789"
REF = r"/git/refs/heads/main$"


@pytest.fixture
def standin():  # type: ignore[no-untyped-def]
    server = GithubStandin(token=TOKEN).start()
    yield server
    server.stop()


def use_github(monkeypatch: pytest.MonkeyPatch, standin: GithubStandin) -> None:
    for key, value in {"BACKEND": "github", "GITHUB_REPO": standin.repo,
                       "GITHUB_API": standin.base_url, "GITHUB_TOKEN": TOKEN,
                       "GITHUB_THROTTLE": "0", "GITHUB_RETRIES": "2",
                       "GITHUB_BACKOFF": "0.05", "GITHUB_MAX_WAIT": "5",
                       "GITHUB_TIMEOUT": "5"}.items():
        monkeypatch.setenv(f"MEMVAULT_{key}", value)


def seed(standin: GithubStandin) -> None:
    """An initialised vault in the repository, written through the backend itself."""
    from memvault.backends.github import GithubBackend

    standin.commit_files({"README.md": b"# my vault\n"}, "initial commit")
    init_vault(Path("/nonexistent-never-created"), backend=GithubBackend.from_config(Config()))


@pytest.fixture(params=["fs", "github"])
def any_vault(request, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """(local root, standin or None). On github the local root must never appear."""
    root = tmp_path / "vault"
    if request.param == "fs":
        init_vault(root)
        yield root, None
        return
    server = GithubStandin(token=TOKEN).start()
    use_github(monkeypatch, server)
    seed(server)
    yield root, server
    server.stop()
    assert not root.exists(), "the github backend wrote local files"


# -- the same behaviour on both backends -----------------------------------------------------


def test_remember_list_edit_forget_and_doctor_behave_the_same(any_vault) -> None:
    root, server = any_vault
    cli = Cli(root)
    saved = json.loads(cli("remember", "I prefer concise answers", "-c", "preference",
                           "--json").stdout)
    fid = saved["fact"]["id"]
    again = json.loads(cli("remember", "i prefer  CONCISE answers", "--json").stdout)
    assert again["created"] is False and again["fact"]["id"] == fid
    other = json.loads(cli("remember", "My project is Aurora", "-c", "project",
                           "--json").stdout)["fact"]["id"]
    listed = json.loads(cli("memory", "list", "--json").stdout)["facts"]
    assert {f["id"] for f in listed} == {fid, other}
    cli("memory", "edit", fid, "I prefer very concise answers")
    shown = json.loads(cli("memory", "show", fid, "--json").stdout)
    assert "I prefer very concise answers" in json.dumps(shown)
    cli("forget", "Aurora", "--yes")
    listed = json.loads(cli("memory", "list", "--json").stdout)["facts"]
    assert [f["text"] for f in listed] == ["I prefer very concise answers"]
    cli("doctor")
    vault = Vault.open(root)
    assert vault.tombstones.is_tombstoned("My project is Aurora")
    assert [e["type"] for e in vault.events.events()][:2] == ["fact.remembered"] * 2
    if server is not None:
        memory = server.files()[MEMORY].decode()
        assert "I prefer very concise answers" in memory and "Aurora" not in memory


def test_the_vault_api_restores_a_forgotten_fact_on_both_backends(any_vault) -> None:
    root, _ = any_vault
    vault = Vault.open(root)
    fact = vault.memory.remember("I live in Oslo", "identity").fact
    vault.memory.forget([fact.id])
    assert vault.memory.all() == []
    back = vault.memory.restore(fact.id)
    assert back.id == fact.id and [f.text for f in vault.memory.all()] == ["I live in Oslo"]
    assert vault.backend.list("Pilot") == sorted(vault.backend.list("Pilot"))
    assert MEMORY in vault.backend.list("Pilot")


def test_a_multi_file_commit_is_all_or_nothing_on_both_backends(any_vault) -> None:
    root, server = any_vault
    backend = Vault.open(root).backend
    backend.commit([Change("Pilot/Trades/t1.md", b"trade\n", MISSING),
                    Change("Pilot/Journal/2026-01-01.md", b"- [[t1]]\n", MISSING)],
                   message="memvault: record trade t1")
    assert backend.read("Pilot/Trades/t1.md").data == b"trade\n"
    with pytest.raises(Conflict):
        backend.commit([Change("Pilot/Trades/t2.md", b"x\n", MISSING),
                        Change("Pilot/Trades/t1.md", b"other\n", MISSING)])
    assert backend.read("Pilot/Trades/t2.md") is None
    if server is not None:
        messages = [o[1]["message"] for o in server.objects.values() if o[0] == "commit"]
        assert messages.count("memvault: record trade t1") == 1


def test_only_the_policy_writer_may_write_policy_md_on_both_backends(any_vault) -> None:
    """The Policy.md rule is the backend's own: a caller that skips the services (a
    plug-in, a future command) still cannot write it, on a folder or on GitHub, and a
    commit that includes it lands nothing."""
    from memvault.backends.base import policy_writer
    from memvault.errors import InvalidInput

    root, server = any_vault
    backend = Vault.open(root).backend
    policy = "Pilot/Policy.md"
    before = backend.read(policy)
    head = server.head() if server is not None else None
    for op in (lambda: backend.write(policy, b"---\nmax_trade_usd: 1000000\n---\n"),
               lambda: backend.append("Pilot/scopes/bob/POLICY.md", b"x\n"),
               lambda: backend.delete(policy),
               lambda: backend.commit([Change("Pilot/Trades/t9.md", b"trade\n", MISSING),
                                       Change(policy, b"---\n---\n")])):
        with pytest.raises(InvalidInput, match="only by `memvault policy set`"):
            op()
    assert backend.read(policy) == before and backend.read("Pilot/Trades/t9.md") is None
    if server is not None:
        assert server.head() == head, "a refused write still made a commit"
    with policy_writer():
        backend.write(policy, b"---\nmax_trade_usd: 5\n---\n")
    assert backend.read(policy).data == b"---\nmax_trade_usd: 5\n---\n"


# -- concurrency and conflicts over GitHub ---------------------------------------------------


def test_two_processes_editing_different_facts_both_land(standin, monkeypatch) -> None:
    use_github(monkeypatch, standin)
    seed(standin)
    vault = Vault.open("/nowhere")
    a = vault.memory.remember("Fact A", "other").fact.id
    b = vault.memory.remember("Fact B", "other").fact.id
    moves = standin.count("PATCH", REF)
    barrier = threading.Barrier(2, timeout=10)
    standin.inject("PATCH", REF, times=2,
                   before=lambda: _wait(barrier))  # both commits start from the same head
    procs = [subprocess.Popen([sys.executable, "-m", "memvault", "memory", "edit", fid,
                               f"Fact {fid} edited"], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for fid in (a, b)]
    outs = [p.communicate(timeout=60) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    memory = standin.files()[MEMORY].decode()
    assert f"Fact {a} edited" in memory and f"Fact {b} edited" in memory
    assert standin.count("PATCH", REF) - moves == 3  # one of them was done again
    assert not Path("/nowhere").exists()


def _wait(barrier: threading.Barrier) -> None:
    try:
        barrier.wait()
    except threading.BrokenBarrierError:
        pass


def test_a_branch_moved_by_another_machine_is_re_read_and_the_edit_re_applied_by_id(
        standin, monkeypatch) -> None:
    use_github(monkeypatch, standin)
    seed(standin)
    vault = Vault.open("/nowhere")
    fid = vault.memory.remember("I like tea", "preference").fact.id

    def someone_else_writes() -> None:
        data = standin.files()[MEMORY] + b"- Added elsewhere [other] <!-- id:elsew1 -->\n"
        standin.commit_files({MEMORY: data}, "another machine")

    standin.inject("PATCH", REF, before=someone_else_writes)
    moves = standin.count("PATCH", REF)
    vault.memory.edit(fid, "I like green tea")
    texts = {f.text for f in vault.memory.all()}
    assert texts == {"I like green tea", "Added elsewhere"}
    assert standin.count("PATCH", REF) - moves == 2  # the stale one, the one done again


def test_a_fact_changed_on_github_since_it_was_read_is_a_conflict_not_an_overwrite(
        standin, monkeypatch) -> None:
    use_github(monkeypatch, standin)
    seed(standin)
    vault = Vault.open("/nowhere")
    fid = vault.memory.remember("I live in Oslo", "identity").fact.id

    def another_machine_edits_it() -> None:
        data = standin.files()[MEMORY].replace(b"I live in Oslo", b"I live in Bergen")
        standin.commit_files({MEMORY: data}, "another machine")

    standin.inject("PATCH", REF, before=another_machine_edits_it)
    out = run_cli("memory", "edit", fid, "I live in Trondheim")
    assert out.returncode == 1
    assert f"fact {fid} was changed elsewhere since memvault read it" in out.stderr
    assert "I live in Bergen" in out.stderr
    memory = standin.files()[MEMORY].decode()
    assert "I live in Bergen" in memory and "Trondheim" not in memory


def test_a_commit_whose_answer_was_lost_is_recognised_on_retry(standin, monkeypatch) -> None:
    use_github(monkeypatch, standin)
    seed(standin)
    vault = Vault.open("/nowhere")
    standin.inject("PATCH", REF, 502, lose_answer=True)
    moves = standin.count("PATCH", REF)
    fact = vault.memory.remember("I like tea", "preference").fact
    assert [f.id for f in vault.memory.all()] == [fact.id]
    assert standin.files()[MEMORY].count(b"I like tea") == 1
    assert standin.count("PATCH", REF) - moves == 2  # the lost one, the retry (a no-op)


def test_a_write_that_keeps_conflicting_ends_in_a_clear_conflict_error(standin,
                                                                       monkeypatch) -> None:
    use_github(monkeypatch, standin)
    seed(standin)
    counter = iter(range(1000))

    def always_someone_else() -> None:
        data = standin.files()[MEMORY] + f"- Noise {next(counter)}\n".encode()
        standin.commit_files({MEMORY: data})

    standin.inject("PATCH", REF, times=50, before=always_someone_else)
    out = Cli(Path("/nowhere"))("remember", "I like tea", expect=1)
    assert out.stderr.strip() == ("error: Pilot/Memory.md: kept changing while memvault tried "
                                  "to update it; nothing was written")


def test_a_non_fast_forward_commit_is_rebuilt_on_the_new_head(standin, monkeypatch) -> None:
    use_github(monkeypatch, standin)
    seed(standin)
    backend = Vault.open("/nowhere").backend
    standin.inject("PATCH", REF,
                   before=lambda: standin.commit_files({"Pilot/other.md": b"elsewhere\n"}))
    moves = standin.count("PATCH")
    backend.commit([Change("Pilot/Trades/t1.md", b"trade\n"),
                    Change("Pilot/Journal/d.md", b"day\n")], message="trade t1")
    files = standin.files()
    assert files["Pilot/Trades/t1.md"] == b"trade\n" and files["Pilot/other.md"] == b"elsewhere\n"
    assert standin.count("PATCH") - moves == 2


def test_files_over_one_megabyte_are_read_through_the_blob_api(standin, monkeypatch) -> None:
    use_github(monkeypatch, standin)
    seed(standin)
    big = ("- a fact line that repeats [other]\n" * 40_000).encode()
    assert len(big) > 1024 * 1024
    standin.commit_files({MEMORY: b"# Memory\n\n" + big})
    vault = Vault.open("/nowhere")
    assert len(vault.memory.all()) >= 1
    assert standin.count("GET", r"/git/blobs/") >= 1


# -- remote failures: one line, exit 1, no token, no local file ------------------------------


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return run_memvault("--vault", "/nowhere", *args)


def assert_clean_failure(out: subprocess.CompletedProcess[str], *needles: str) -> None:
    assert out.returncode == 1, (out.stdout, out.stderr)
    errors = [ln for ln in out.stderr.splitlines() if ln.startswith("error:")]
    assert len(errors) == 1 and "Traceback" not in out.stderr, out.stderr
    for needle in needles:
        assert needle in errors[0], errors[0]
    assert TOKEN not in out.stdout + out.stderr
    assert not Path("/nowhere").exists()


def test_a_secondary_rate_limit_with_retry_after_is_waited_out_and_announced(
        standin, monkeypatch) -> None:
    use_github(monkeypatch, standin)
    seed(standin)
    standin.inject("GET", r"/branches/main$", 403, headers={"Retry-After": "1"},
                   body={"message": "You have exceeded a secondary rate limit. Please wait "
                                    "a few minutes before you try again."})
    start = time.monotonic()
    out = run_cli("remember", "I like tea")
    assert out.returncode == 0, out.stderr
    assert time.monotonic() - start >= 1.0
    assert "rate limited (403); waiting 1.0 s" in out.stderr
    assert "I like tea" in standin.files()[MEMORY].decode()


def test_an_exhausted_primary_rate_limit_waits_until_the_reset_time(standin,
                                                                     monkeypatch) -> None:
    use_github(monkeypatch, standin)
    seed(standin)
    standin.inject("GET", r"/branches/", 403, body={"message": "API rate limit exceeded"},
                   headers={"X-RateLimit-Remaining": "0",
                            "X-RateLimit-Reset": str(int(time.time()) + 2)})
    start = time.monotonic()
    out = run_cli("memory", "list")
    assert out.returncode == 0, out.stderr
    assert "rate limited (403); waiting" in out.stderr
    assert time.monotonic() - start >= 0.9


def test_a_rate_limit_longer_than_the_wait_budget_fails_at_once(standin, monkeypatch) -> None:
    use_github(monkeypatch, standin)
    seed(standin)
    standin.inject("GET", r"/branches/", 429, headers={"Retry-After": "3600"})
    assert_clean_failure(run_cli("memory", "list"), "rate limited (429)", "3600")


def test_a_502_is_retried_and_a_persistent_502_is_a_remote_error(standin, monkeypatch) -> None:
    use_github(monkeypatch, standin)
    seed(standin)
    standin.inject("PATCH", REF, 502)
    assert run_cli("remember", "I like tea").returncode == 0
    standin.inject("GET", r"/git/trees/", 502, times=100)
    assert_clean_failure(run_cli("memory", "list"), "server error 502", "3 attempt(s)")


def test_connection_refused_is_a_one_line_remote_error(standin, monkeypatch,
                                                       refused_port) -> None:
    use_github(monkeypatch, standin)
    monkeypatch.setenv("MEMVAULT_GITHUB_API", f"http://127.0.0.1:{refused_port}")
    assert_clean_failure(run_cli("memory", "list"), "cannot connect")


def test_a_wrong_token_is_rejected_without_showing_any_token(standin, monkeypatch) -> None:
    use_github(monkeypatch, standin)
    seed(standin)
    monkeypatch.setenv("MEMVAULT_GITHUB_TOKEN", "ghp_wrongTOKEN999")
    out = run_cli("remember", "I like tea")
    assert_clean_failure(out, "token was rejected")
    assert "ghp_wrongTOKEN999" not in out.stdout + out.stderr


def test_an_answer_that_is_not_json_is_a_one_line_remote_error(standin, monkeypatch) -> None:
    use_github(monkeypatch, standin)
    seed(standin)
    for body in (["not", "a", "file"], {"unexpected": True}):
        standin.faults.clear()
        standin.inject("GET", r"/branches/", 200, times=5, body=body)  # type: ignore[arg-type]
        assert_clean_failure(run_cli("memory", "list"), "unexpected answer")


def test_a_missing_repository_or_token_is_a_clear_error(standin, monkeypatch) -> None:
    use_github(monkeypatch, standin)
    monkeypatch.setenv("MEMVAULT_GITHUB_REPO", "owner/missing")
    assert_clean_failure(run_cli("memory", "list"), "owner/missing", "not found")
    monkeypatch.delenv("MEMVAULT_GITHUB_TOKEN")
    assert_clean_failure(run_cli("memory", "list"), "no GitHub token")


def test_init_creates_the_layout_in_the_repository_and_nothing_locally(standin,
                                                                      monkeypatch) -> None:
    use_github(monkeypatch, standin)
    standin.commit_files({"README.md": b"hi\n"})
    out = run_cli("init", "--json")
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert MEMORY in report["created"] and report["vault"].startswith("github:owner/vault")
    assert {MEMORY, ".memvault/config.toml", "README.md"} <= set(standin.files())
    again = json.loads(run_cli("init", "--json").stdout)
    assert again["created"] == [] and MEMORY in again["kept"]
    assert not Path("/nowhere").exists()


def test_the_github_backend_imports_pygithub_only_when_used(vault_dir: Path) -> None:
    code = ("import sys; from memvault import Vault; v = Vault.open(sys.argv[1]); "
            "v.memory.list(); print('github' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code, str(vault_dir)], capture_output=True,
                         text=True, check=True)
    assert out.stdout.strip() == "False"


def test_watch_and_git_sync_refuse_the_github_backend_in_one_line(standin, monkeypatch) -> None:
    use_github(monkeypatch, standin)
    seed(standin)
    assert_clean_failure(run_cli("watch"), "local vault folder")
    assert_clean_failure(run_cli("sync"), "local git clone")
