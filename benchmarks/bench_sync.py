#!/usr/bin/env python3
"""Benchmark git sync (the fact-by-fact merge) and the watcher's latency.

Merge: a Memory.md of N facts (default 2,000); each side changes a different 50 facts and
adds 5. Measured in one run, medians of --runs:

- `merge_bullet_files` in-process (the merge driver's core),
- `memvault merge-driver %O %A %B %P` as git runs it (a new Python process each time),
- baseline: `git merge-file -p` on the same three files (git's line merge; it knows
  nothing of facts and may report conflicts where memvault does not),
- a full `memvault sync` between two real clones of a bare repository, machine B pulling
  A's 50 changes over its own 50 (commit + fetch + rebase with the driver + push),
  next to a baseline `git pull --rebase` of a plain text change in the same clones.

Watcher: a real `VaultWatcher` on a vault of N facts; the time from writing Memory.md (one
fact changed) to the callback's line, median of --samples writes, next to the latency of
a bare watchdog observer's first event for the same write (the OS notification floor).
The watcher's figure includes its 150 ms debounce by design.

GitHub backend (`--github`, or alone with `--only-github`): the real PyGithub client over
HTTP against the loopback stand-in (tests/github_standin.py), real `memvault` processes on
a vault whose journal is over 1 MB and that holds 200 notes. Per command: the requests
made (reads, writes), blob downloads and commits (`search` reads the notes through its
local copy, copied again only when a note's blob id changed), once with this machine's
blob cache warm and once cold (first use on a machine); and the time of a `remember`
with PyGithub's default spacing of requests (0.25 s apart, writes 1 s apart:
MEMVAULT_GITHUB_THROTTLE=1, the default) next to the same with MEMVAULT_GITHUB_THROTTLE=0
(the stand-in answers in about a millisecond, so the difference is the spacing itself).

    python benchmarks/bench_sync.py
    python benchmarks/bench_sync.py --facts 500 --runs 3 --samples 5
    python benchmarks/bench_sync.py --only-github
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HEADER = "# Memory\n\nLong-term facts about the user.\n\n"
CATS = ("preference", "project", "identity", "workflow", "other")


def memory_file(n: int, seed: int = 1) -> list[str]:
    rnd = random.Random(seed)
    return [f"- Fact number {i} about topic {rnd.randint(0, 999)} [{CATS[i % len(CATS)]}] "
            f"<!-- id:f{i:05d} updated:{1_700_000_000 + i} -->\n" for i in range(n)]


def sides(n: int) -> tuple[bytes, bytes, bytes]:
    base = memory_file(n)
    rnd = random.Random(7)
    picks = rnd.sample(range(n), 100)
    ours, theirs = list(base), list(base)
    for k in picks[:50]:
        ours[k] = ours[k].replace("Fact number", "Ours edited fact")
    for k in picks[50:]:
        theirs[k] = theirs[k].replace("Fact number", "Theirs edited fact")
    ours += [f"- Ours new {i} [other] <!-- id:o{i:05d} -->\n" for i in range(5)]
    theirs += [f"- Theirs new {i} [other] <!-- id:t{i:05d} -->\n" for i in range(5)]
    return tuple((HEADER + "".join(x)).encode() for x in (base, ours, theirs))  # type: ignore[return-value]


def median_time(fn, runs: int) -> float:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def bench_merge(n: int, runs: int) -> list[tuple[str, float]]:
    from memvault.core.merge import merge_bullet_files

    base, ours, theirs = sides(n)
    result = merge_bullet_files(base, ours, theirs)
    assert result.clean and result.data.count(b"edited fact") == 100
    out = [("merge_bullet_files (in-process)",
            median_time(lambda: merge_bullet_files(base, ours, theirs), runs))]
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        (d / "O").write_bytes(base)
        (d / "B").write_bytes(theirs)

        def driver() -> None:
            (d / "A").write_bytes(ours)
            subprocess.run([sys.executable, "-m", "memvault", "merge-driver", "O", "A", "B",
                            "Pilot/Memory.md"], cwd=d, check=True, capture_output=True)

        def baseline() -> None:
            (d / "A").write_bytes(ours)
            subprocess.run(["git", "merge-file", "-p", "A", "O", "B"], cwd=d,
                           capture_output=True)

        out.append(("memvault merge-driver (process)", median_time(driver, runs)))
        out.append(("baseline: git merge-file -p", median_time(baseline, runs)))
    return out


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def bench_sync(n: int, runs: int) -> list[tuple[str, float]]:
    env = dict(os.environ, GIT_AUTHOR_NAME="b", GIT_AUTHOR_EMAIL="b@x", GIT_COMMITTER_NAME="b",
               GIT_COMMITTER_EMAIL="b@x")
    os.environ.update(env)
    base, ours, theirs = sides(n)
    sync_times, pull_times = [], []
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as tmp:
            t = Path(tmp)
            git(t, "init", "-q", "--bare", "-b", "main", "r.git")
            git(t, "clone", "-q", "r.git", "a")
            a, b = t / "a", t / "b"
            mv = [sys.executable, "-m", "memvault", "--vault"]
            subprocess.run([*mv, str(a), "init", "--git"], check=True, capture_output=True)
            (a / "Pilot/Memory.md").write_bytes(base)
            (a / "notes.md").write_text("plain note\n")
            git(a, "add", "-A")
            git(a, "commit", "-qm", "base")
            git(a, "push", "-q", "origin", "main")
            git(t, "clone", "-q", "r.git", "b")
            subprocess.run([*mv, str(b), "sync", "--setup"], check=True, capture_output=True)
            (a / "Pilot/Memory.md").write_bytes(theirs)
            (a / "notes.md").write_text("plain note, edited\n")
            subprocess.run([*mv, str(a), "sync"], check=True, capture_output=True)
            # Baseline: a plain text pull in a third clone (no local changes, no driver).
            git(t, "clone", "-q", "r.git", "c")
            git(t / "c", "reset", "-q", "--hard", "HEAD~1")
            start = time.perf_counter()
            git(t / "c", "pull", "-q", "--rebase")
            pull_times.append(time.perf_counter() - start)
            (b / "Pilot/Memory.md").write_bytes(ours)
            start = time.perf_counter()
            proc = subprocess.run([*mv, str(b), "sync"], capture_output=True, text=True)
            sync_times.append(time.perf_counter() - start)
            assert proc.returncode == 0, proc.stdout + proc.stderr
            merged = (b / "Pilot/Memory.md").read_bytes()
            assert merged.count(b"edited fact") == 100 and b"<<<<<<<" not in merged
    return [(f"memvault sync, {n} facts, 50+50 changed (process)", statistics.median(sync_times)),
            ("baseline: git pull --rebase of a plain change", statistics.median(pull_times))]


def bench_watch(n: int, samples: int) -> list[tuple[str, float]]:
    from watchdog.events import FileSystemEventHandler
    from watchdog.observers import Observer

    from memvault import Vault
    from memvault.services.setup import init_vault
    from memvault.services.watcher import VaultWatcher

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "v"
        init_vault(root)
        path = root / "Pilot/Memory.md"
        lines = memory_file(n)
        path.write_text(HEADER + "".join(lines))
        got = threading.Event()
        watcher = VaultWatcher(Vault.open(root), lambda ev: got.set())
        watcher.start()
        raw = threading.Event()

        class Raw(FileSystemEventHandler):
            def on_modified(self, event):  # type: ignore[no-untyped-def]
                if event.src_path.endswith("Memory.md"):
                    raw.set()

        observer = Observer()
        observer.schedule(Raw(), str(path.parent))
        observer.start()
        time.sleep(0.3)
        w_lat, raw_lat = [], []
        for i in range(samples):
            got.clear()
            raw.clear()
            lines[i] = lines[i].replace("Fact number", f"Edited {i}")
            start = time.perf_counter()
            path.write_text(HEADER + "".join(lines))
            raw.wait(5)
            raw_lat.append(time.perf_counter() - start)
            got.wait(5)
            w_lat.append(time.perf_counter() - start)
            time.sleep(0.3)
        watcher.stop()
        observer.stop()
        observer.join()
    return [(f"watcher: write -> printed line ({n} facts)", statistics.median(w_lat)),
            ("baseline: write -> first raw watchdog event", statistics.median(raw_lat))]


NOTES = 200


def bench_github(journal_bytes: int = 1_100_000) -> None:
    """Requests per command against the stand-in (see the module doc)."""
    import json
    import shutil

    root = Path(__file__).resolve().parents[1]
    sys.path.insert(0, str(root))
    from tests.github_standin import GithubStandin

    token = "bench-token-0123456789"
    server = GithubStandin(token=token).start()
    home = Path(tempfile.mkdtemp(prefix="memvault-bench-gh-"))
    env = dict(os.environ, HOME=str(home), XDG_CACHE_HOME=str(home / ".cache"),
               MEMVAULT_BACKEND="github", MEMVAULT_GITHUB_REPO=server.repo,
               MEMVAULT_GITHUB_API=server.base_url, MEMVAULT_GITHUB_TOKEN=token,
               MEMVAULT_GITHUB_THROTTLE="0")

    def cli(*args: str, throttle: str = "0", stdin: str | None = None
            ) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "memvault", "--vault", "/nowhere",
                               *args], env=dict(env, MEMVAULT_GITHUB_THROTTLE=throttle),
                              input=stdin, capture_output=True, text=True, timeout=300)

    try:
        server.commit_files({"README.md": b"# notes\n"}, "initial commit")
        assert cli("init").returncode == 0
        for i in range(20):
            cli("remember", f"Fact number {i} about the vault")
        line = '{"id":"ev-%07d","ts":1,"type":"feedback","scope":"default","note":"%s"}\n'
        journal = server.files()[".memvault/events.jsonl"]
        journal += "".join(line % (i, "x" * 60) for i in range(journal_bytes // 110)).encode()
        server.commit_files({".memvault/events.jsonl": journal}, "a long history")
        server.commit_files({f"Notes/note-{i:03d}.md": (
            f"# Note {i}\n\nAbout topic {i % 17} and the harbour.\n" * 20).encode()
            for i in range(NOTES)}, "notes")
        fid = json.loads(cli("remember", "I live in Oslo", "--json").stdout)["fact"]["id"]
        trade = home / "trade.json"
        trade.write_text(json.dumps({
            "hash": "0x" + "ab" * 32, "network": "base", "wallet": "0x7c3f5e2a91b04d6e8a2c",
            "timestamp": "2026-11-20T09:00:00Z", "status": "validated", "venue": "Uniswap",
            "asset_in": "ETH", "amount_in": "0.50", "asset_out": "USDC",
            "amount_out": "1708.35", "fill_price": "3416.70", "value_usd": "1708.35"}))
        commands = [("remember", ("remember", "I prefer short answers")),
                    ("memory edit", ("memory", "edit", fid, "I live in Bergen")),
                    ("memory list", ("memory", "list")),
                    ("context", ("context",)),
                    (f"search ({NOTES} notes), first", ("search", "harbour")),
                    ("search again", ("search", "topic")),
                    ("trade record", ("trade", "record", str(trade))),
                    ("forget --permanent", ("forget", fid, "--permanent", "--yes"))]
        kb = len(server.files()[".memvault/events.jsonl"]) / 1024
        print(f"\n# GitHub backend: requests per command (journal {kb:.0f} KiB)\n")
        print("| command | cache | requests | GET | writes | blob downloads | commits |")
        print("| --- | --- | ---: | ---: | ---: | ---: | ---: |")
        for cache in ("warm", "cold"):
            for name, args in commands:
                if name == "remember" and cache == "cold":
                    args = ("remember", "I prefer answers with examples")
                if name == "forget --permanent" and cache == "cold":
                    fid = json.loads(cli("remember", "I live in Oslo", "--json").stdout)[
                        "fact"]["id"]
                    args = ("forget", fid, "--permanent", "--yes")
                if name in ("memory edit",) and cache == "cold":
                    fid2 = json.loads(cli("remember", "Edit me", "--json").stdout)["fact"]["id"]
                    args = ("memory", "edit", fid2, "Edited")
                if name == "trade record" and cache == "cold":
                    data = json.loads(trade.read_text())
                    data["hash"] = "0x" + "cd" * 32
                    trade.write_text(json.dumps(data))
                if cache == "cold":
                    shutil.rmtree(home / ".cache", ignore_errors=True)
                else:
                    cli("memory", "list")  # this machine has read the vault before
                before = sum(1 for kind, _ in server.objects.values() if kind == "commit")
                server.mark()
                out = cli(*args)
                assert out.returncode == 0, (name, out.stderr)
                sent = server.since_mark()
                after = sum(1 for kind, _ in server.objects.values() if kind == "commit")
                gets = sum(1 for m, _ in sent if m == "GET")
                blobs = sum(1 for m, p in sent if m == "GET" and "/git/blobs/" in p)
                print(f"| `{name}` | {cache} | {len(sent)} | {gets} | {len(sent) - gets} | "
                      f"{blobs} | {after - before} |")
        times: dict[str, list[float]] = {"1": [], "0": []}
        for i in range(3):
            for throttle in ("1", "0"):
                start = time.perf_counter()
                out = cli("remember", f"Timed fact {i} {throttle}", throttle=throttle)
                times[throttle].append(time.perf_counter() - start)
                assert out.returncode == 0, out.stderr
        on, off = statistics.median(times["1"]), statistics.median(times["0"])
        print("\n| remember (process, warm cache) | median | ratio |")
        print("| --- | ---: | ---: |")
        print(f"| PyGithub's default spacing (MEMVAULT_GITHUB_THROTTLE=1) | {on:.2f} s | "
              f"{on / off:.1f}× |")
        print(f"| baseline: no spacing (MEMVAULT_GITHUB_THROTTLE=0) | {off:.2f} s | 1.0× |")
    finally:
        server.stop()
        shutil.rmtree(home, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--facts", type=int, default=2000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--samples", type=int, default=15)
    ap.add_argument("--github", action="store_true", help="also the GitHub backend section")
    ap.add_argument("--only-github", action="store_true", help="only the GitHub section")
    args = ap.parse_args()
    if args.only_github:
        bench_github()
        return
    print(f"# bench_sync: {args.facts} facts, {args.runs} runs, {args.samples} watcher samples")
    rows = bench_merge(args.facts, args.runs)
    rows += bench_sync(args.facts, max(1, args.runs // 2 + 1))
    rows += bench_watch(args.facts, args.samples)
    print("\n| measurement | median | ratio to its baseline |")
    print("| --- | ---: | ---: |")
    baselines = {0: 2, 1: 2, 3: 4, 5: 6}
    for i, (name, secs) in enumerate(rows):
        ratio = f"{secs / rows[baselines[i]][1]:.1f}×" if i in baselines else "—"
        print(f"| {name} | {secs * 1000:.1f} ms | {ratio} |")
    if args.github:
        bench_github()


if __name__ == "__main__":
    main()
