"""The LLM extractor against a small OpenAI-compatible stand-in served on 127.0.0.1."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.conftest import run_memvault

KEY = "sk-test-DO-NOT-LEAK-5f2a9c"
TURN = json.dumps({"user": "I prefer concise answers. Right now, list three cafes.",
                   "assistant": "Sure."})


class StandIn:
    """Answers /v1/chat/completions according to `mode`; records what it received."""

    def __init__(self) -> None:
        self.mode = "valid"
        self.requests: list[dict] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:  # quiet
                pass

            def do_POST(self) -> None:  # noqa: N802
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                owner.requests.append({"path": self.path, "auth": self.headers.get(
                    "Authorization"), "body": json.loads(body)})
                mode = owner.mode
                if mode == "500":
                    self.send_response(500)
                    self.end_headers()
                    self.wfile.write(b'{"error": "boom"}')
                    return
                if mode == "timeout":
                    time.sleep(2.0)
                content = {
                    "valid": json.dumps([
                        {"text": "I prefer concise answers", "category": "communication"},
                        {"text": "List three cafes right now", "category": "preference"},
                        "My main project is Aurora"]),
                    "fenced": '```json\n["I like tables when you compare options"]\n```',
                    "malformed": "Sure! Here are the facts: I prefer concise answers",
                    "too-many": json.dumps([f"I like fruit number {i}" for i in range(5)]),
                    "timeout": "[]",
                }[mode]
                payload = json.dumps({"choices": [{"message": {"role": "assistant",
                                                               "content": content}}]})
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(payload.encode())

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def standin():
    s = StandIn()
    yield s
    s.close()


def _configure(vault_dir: Path, base_url: str, fallback: str = "none") -> None:
    cfg = vault_dir / ".memvault" / "config.toml"
    cfg.write_text(cfg.read_text() + f'\n[extractor]\nkind = "llm"\nbase_url = "{base_url}"\n'
                   f'model = "stand-in"\ntimeout = 0.5\nfallback = "{fallback}"\n')


def _snapshot(vault_dir: Path) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for p in vault_dir.rglob("*") if p.is_file()
            and "index" not in p.name}


def test_valid_llm_output_becomes_proposals_and_one_off_items_are_dropped(vault_dir,
                                                                          standin) -> None:
    _configure(vault_dir, standin.url)
    out = run_memvault("--vault", str(vault_dir), "extract", "-", "--json", input=TURN,
                       env={"MEMVAULT_LLM_API_KEY": KEY})
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["extractor"] == "llm"
    assert [o["text"] for o in result["outcomes"] if o["status"] == "proposed"] == [
        "I prefer concise answers", "My main project is Aurora"]
    inbox = (vault_dir / "Pilot" / "Inbox.md").read_text()
    assert "right now" not in inbox
    [req] = standin.requests
    assert req["path"] == "/v1/chat/completions" and req["auth"] == f"Bearer {KEY}"
    assert req["body"]["model"] == "stand-in"
    assert "JSON" in req["body"]["messages"][0]["content"]
    assert KEY not in out.stdout + out.stderr


def test_fenced_json_answer_is_accepted(cli, vault_dir, standin) -> None:
    standin.mode = "fenced"
    _configure(vault_dir, standin.url)
    out = json.loads(cli("extract", "-", "--json", input=TURN).stdout)
    assert [o["status"] for o in out["outcomes"]] == ["proposed"]


@pytest.mark.parametrize("mode", ["malformed", "500", "timeout", "too-many", "refused"])
def test_llm_failures_are_silent_exit_0_and_write_nothing(vault_dir, standin, mode,
                                                          refused_port) -> None:
    url = standin.url if mode != "refused" else f"http://127.0.0.1:{refused_port}/v1"
    standin.mode = mode if mode != "refused" else "valid"
    _configure(vault_dir, url)
    before = _snapshot(vault_dir)
    env = {"MEMVAULT_LLM_API_KEY": KEY}
    quiet = run_memvault("--vault", str(vault_dir), "extract", "-", input=TURN, env=env)
    assert quiet.returncode == 0
    assert quiet.stderr == ""
    verbose = run_memvault("--vault", str(vault_dir), "--verbose", "extract", "-", "--json",
                           input=TURN, env=env)
    assert verbose.returncode == 0
    assert "extractor failed" in verbose.stderr
    assert json.loads(verbose.stdout)["outcomes"] == []
    for out in (quiet, verbose):
        assert KEY not in out.stdout and KEY not in out.stderr
    assert _snapshot(vault_dir) == before


def test_builtin_is_used_on_failure_only_when_configured_as_fallback(vault_dir,
                                                                     refused_port) -> None:
    _configure(vault_dir, f"http://127.0.0.1:{refused_port}/v1", fallback="builtin")
    out = run_memvault("--vault", str(vault_dir), "extract", "-", "--json", input=TURN,
                       env={"MEMVAULT_LLM_API_KEY": KEY})
    result = json.loads(out.stdout)
    assert out.returncode == 0 and result["used_fallback"] is True
    assert [o["text"] for o in result["outcomes"]] == ["I prefer concise answers"]
    assert KEY not in out.stdout + out.stderr


def test_a_config_that_names_a_key_instead_of_a_variable_is_refused(cli, vault_dir) -> None:
    cfg = vault_dir / ".memvault" / "config.toml"
    cfg.write_text(cfg.read_text() + '\n[extractor]\nkind = "llm"\nbase_url = '
                   '"http://127.0.0.1:9/v1"\nmodel = "m"\napi_key_env = "sk-abc 123"\n')
    out = cli("extract", "-", input=TURN, expect=1)
    assert "api_key_env" in out.stderr and "sk-abc 123" not in out.stderr
