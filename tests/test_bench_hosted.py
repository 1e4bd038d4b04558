"""benchmarks/bench_hosted.py runs and its checks pass (a small load: 2 workers)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.hosted_backends import no_postgres

BENCH = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_hosted.py"


def test_the_hosted_load_test_holds_every_guarantee_on_a_small_load(pg_server) -> None:
    if isinstance(pg_server, str):
        no_postgres(pg_server)
    done = subprocess.run([sys.executable, str(BENCH), "--workers", "2", "--ops", "80",
                           "--principals", "20", "--hot", "1", "--pg-url", pg_server.url],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "| SQLite, one writer | 1 × 80 |" in done.stdout
    assert "| PostgreSQL, 2 workers | 2 × 80 |" in done.stdout
    assert done.stdout.count("all held") == 2
