"""A small stand-in for the GitHub REST API, served over real HTTP on 127.0.0.1.

It implements the repository routes a GitHub client uses, as GitHub's public REST
documentation describes them (request bodies, answers, status codes), not as memvault
happens to call them: real git object ids (blob/tree/commit SHA-1); the branch
(`GET /branches/{branch}`: head commit and its tree); the Git Data routes — get and
create references (`POST /git/refs`, 422 when it exists), update one (`PATCH`, 422
"Update is not a fast forward" unless `force`), trees (`GET` by tree id or ref name,
`recursive` given any value lists every entry; `POST` with `base_tree` and entries that
give either `sha` — `null` deletes, a missing path to delete is 422 — or inline
`content`, never both), commits, blobs (`utf-8` or `base64`); the contents API (GET/PUT/
DELETE with SHA checks: 409 stale, 422 missing), `encoding: "none"` above 1 MB; the
tarball of a ref (`GET /tarball/{ref}`: 302 to a short-lived link that needs no token,
serving a gzipped tar whose one top folder is `{owner}-{name}-{short sha}/`); token
checks (401); URLs built from the Host header so PyGithub can follow them.

Faults: per route (`inject`), or by position in the request sequence (`fail_from`: the
N-th request from a mark on, and every later one, answers an error — optionally after
carrying the N-th out, its answer lost), so a test can cut a command at every request.

Test code only: never shipped, never a substitute for the backend itself.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import re
import secrets
import tarfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

LARGE_FILE = 1024 * 1024


@dataclass
class Fault:
    """Answer matching requests with `status` (or just run `before` and go on)."""

    method: str
    path: str  # regex searched in the path after /repos/{owner}/{name}
    status: int = 0
    body: dict[str, Any] = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)
    times: int = 1
    before: Callable[[], None] | None = None
    lose_answer: bool = False  # handle the request, then answer `status` instead
    hits: int = 0


def git_sha(kind: str, payload: bytes) -> str:
    return hashlib.sha1(f"{kind} {len(payload)}\0".encode() + payload).hexdigest()


class GithubStandin:
    def __init__(self, token: str = "test-token-s3cr3t", repo: str = "owner/vault",
                 branch: str = "main") -> None:
        self.token = token
        self.repo = repo
        self.branch = branch
        self.objects: dict[str, tuple[str, Any]] = {}
        self.refs: dict[str, str] = {}
        self.faults: list[Fault] = []
        self.requests: list[tuple[str, str]] = []
        self.archive_links: dict[str, str] = {}  # secret in a tarball link -> commit
        self._mark = 0
        self._outage: tuple[int, int, bool] | None = None  # (index, status, lose_first)
        self.lock = threading.RLock()
        self._server: ThreadingHTTPServer | None = None
        self.base_url = ""

    # -- git objects -------------------------------------------------------------------

    def put_blob(self, data: bytes) -> str:
        sha = git_sha("blob", data)
        self.objects[sha] = ("blob", data)
        return sha

    def _put_tree(self, entries: dict[str, tuple[str, str]]) -> str:
        def order(name: str) -> bytes:
            return (name + ("/" if entries[name][0] == "40000" else "")).encode()

        payload = b"".join(f"{entries[n][0]} {n}\0".encode() + bytes.fromhex(entries[n][1])
                           for n in sorted(entries, key=order))
        sha = git_sha("tree", payload)
        self.objects[sha] = ("tree", dict(entries))
        return sha

    def build_tree(self, flat: dict[str, str]) -> str:
        children: dict[str, dict[str, str]] = {}
        entries: dict[str, tuple[str, str]] = {}
        for path, sha in flat.items():
            head, _, rest = path.partition("/")
            if rest:
                children.setdefault(head, {})[rest] = sha
            else:
                entries[head] = ("100644", sha)
        for name, sub in children.items():
            entries[name] = ("40000", self.build_tree(sub))
        return self._put_tree(entries)

    def flat(self, tree_sha: str, prefix: str = "") -> dict[str, str]:
        out: dict[str, str] = {}
        for name, (mode, sha) in self.objects[tree_sha][1].items():
            if mode == "40000":
                out.update(self.flat(sha, f"{prefix}{name}/"))
            else:
                out[prefix + name] = sha
        return out

    def put_commit(self, tree: str, parents: list[str], message: str) -> str:
        ts = int(time.time())
        payload = (f"tree {tree}\n" + "".join(f"parent {p}\n" for p in parents)
                   + f"author standin <s@example.com> {ts} +0000\n"
                   + f"committer standin <s@example.com> {ts} +0000\n\n{message}").encode()
        sha = git_sha("commit", payload)
        self.objects[sha] = ("commit", {"tree": tree, "parents": parents, "message": message})
        return sha

    def head(self, branch: str | None = None) -> str | None:
        return self.refs.get(f"heads/{branch or self.branch}")

    def files(self, branch: str | None = None) -> dict[str, bytes]:
        head = self.head(branch)
        if head is None:
            return {}
        tree = self.objects[head][1]["tree"]
        return {p: self.objects[s][1] for p, s in self.flat(tree).items()}

    def commit_files(self, changes: dict[str, bytes | None], message: str = "standin") -> str:
        """Commit directly (as another client would), moving the branch."""
        with self.lock:
            head = self.head()
            flat = self.flat(self.objects[head][1]["tree"]) if head else {}
            for path, data in changes.items():
                if data is None:
                    flat.pop(path, None)
                else:
                    flat[path] = self.put_blob(data)
            sha = self.put_commit(self.build_tree(flat), [head] if head else [], message)
            self.refs[f"heads/{self.branch}"] = sha
            return sha

    def is_ancestor(self, old: str, new: str) -> bool:
        todo, seen = [new], set()
        while todo:
            c = todo.pop()
            if c == old:
                return True
            if c in seen or c not in self.objects:
                continue
            seen.add(c)
            todo.extend(self.objects[c][1]["parents"])
        return False

    # -- faults ------------------------------------------------------------------------

    def inject(self, method: str, path: str, status: int = 0, *, body: dict[str, Any] | None = None,
               headers: dict[str, str] | None = None, times: int = 1,
               before: Callable[[], None] | None = None, lose_answer: bool = False) -> Fault:
        fault = Fault(method, path, status, body or {"message": f"injected {status}"},
                      headers or {}, times, before, lose_answer)
        with self.lock:
            self.faults.append(fault)
        return fault

    def count(self, method: str, pattern: str = "") -> int:
        return sum(1 for m, p in self.requests if m == method and re.search(pattern, p))

    def mark(self) -> None:
        """Start counting requests (for `since_mark` and `fail_from`) from here."""
        with self.lock:
            self._mark = len(self.requests)

    def since_mark(self) -> list[tuple[str, str]]:
        with self.lock:
            return self.requests[self._mark:]

    def fail_from(self, index: int, status: int = 500, *, lose_answer: bool = False) -> None:
        """From the `index`-th request after the mark on, answer `status` (an outage).
        `lose_answer`: that first request is carried out, only its answer is lost."""
        with self.lock:
            self._outage = (index, status, lose_answer)

    def heal(self) -> None:
        with self.lock:
            self._outage = None
            self.faults.clear()

    def save(self) -> tuple[dict[str, Any], dict[str, str]]:
        with self.lock:
            return dict(self.objects), dict(self.refs)

    def restore(self, saved: tuple[dict[str, Any], dict[str, str]]) -> None:
        with self.lock:
            self.objects, self.refs = dict(saved[0]), dict(saved[1])

    # -- server ------------------------------------------------------------------------

    def start(self) -> GithubStandin:
        standin = self

        class Handler(_Handler):
            owner = standin

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        port = self._server.server_address[1]
        self.base_url = f"http://127.0.0.1:{port}"
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()


class _Handler(BaseHTTPRequestHandler):
    owner: GithubStandin
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # else keep-alive answers wait for delayed ACKs

    def log_message(self, *args: Any) -> None:  # quiet
        pass

    def do_GET(self) -> None:
        self._handle("GET")

    def do_PUT(self) -> None:
        self._handle("PUT")

    def do_POST(self) -> None:
        self._handle("POST")

    def do_PATCH(self) -> None:
        self._handle("PATCH")

    def do_DELETE(self) -> None:
        self._handle("DELETE")

    # -- plumbing ------------------------------------------------------------------------

    def _send(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        merged = {"X-RateLimit-Limit": "5000", "X-RateLimit-Remaining": "4999",
                  **(headers or {})}
        for k, v in merged.items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def _handle(self, method: str) -> None:
        st = self.owner
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        parts = urlsplit(self.path)
        path = unquote(parts.path)
        query = parse_qs(parts.query)
        self.base = f"http://{self.headers.get('Host')}"
        hook = None
        lost: Fault | None = None
        with st.lock:
            st.requests.append((method, path))
            position = len(st.requests) - 1 - st._mark
            if st._outage is not None and position >= st._outage[0]:
                index, status, lose_first = st._outage
                if not (lose_first and position == index):
                    return self._send(status, {"message": f"injected {status}"})
                lost = Fault(method, path, status, {"message": f"injected {status}"},
                             lose_answer=True)
            for fault in st.faults if lost is None else []:
                if fault.hits < fault.times and fault.method == method and \
                        re.search(fault.path, path):
                    fault.hits += 1
                    if fault.lose_answer:
                        lost = fault
                        break
                    if fault.before is None:
                        return self._send(fault.status, fault.body, fault.headers)
                    hook = fault.before
                    break
        if hook is not None:
            hook()  # outside the lock: a hook may wait for another request
        with st.lock:
            if path.startswith("/_codeload/"):  # an archive link: it is the authorisation
                return self._codeload(path[len("/_codeload/"):])
            auth = self.headers.get("Authorization", "")
            if auth not in (f"token {st.token}", f"Bearer {st.token}"):
                return self._send(401, {"message": "Bad credentials"})
            prefix = f"/repos/{st.repo}"
            if not (path == prefix or path.startswith(prefix + "/")):
                return self._send(404, {"message": "Not Found"})
            body = json.loads(raw) if raw else {}
            try:
                status, out = self._route(method, path[len(prefix):], query, body)
            except KeyError:
                status, out = 404, {"message": "Not Found"}
            if status == 302:
                return self._send(302, None, {"Location": out})
            if lost is not None:  # the change was made, but the client never learns it
                return self._send(lost.status, lost.body, lost.headers)
            return self._send(status, out)

    # -- routes ------------------------------------------------------------------------

    def _url(self, rest: str) -> str:
        return f"{self.base}/repos/{self.owner.repo}{rest}"

    def _route(self, method: str, rest: str, query: dict[str, list[str]],
               body: dict[str, Any]) -> tuple[int, Any]:
        st = self.owner
        if rest == "" and method == "GET":
            o, n = st.repo.split("/")
            return 200, {"id": 1, "name": n, "full_name": st.repo, "private": True,
                         "owner": {"login": o, "id": 1, "url": f"{self.base}/users/{o}"},
                         "url": self._url(""), "default_branch": st.branch}
        if rest.startswith("/contents/"):
            return self._contents(method, rest[len("/contents/"):], query, body)
        m = re.fullmatch(r"/branches/(.+)", rest)
        if m and method == "GET":
            return self._branch(m.group(1))
        m = re.fullmatch(r"/tarball/(.+)", rest)
        if m and method == "GET":
            commit = m.group(1) if m.group(1) in st.objects else st.head(m.group(1))
            if commit is None or st.objects.get(commit, ("",))[0] != "commit":
                return 404, {"message": "Not Found"}
            secret = secrets.token_hex(8)
            st.archive_links[secret] = commit
            name = st.repo.replace("/", "-")
            return 302, f"{self.base}/_codeload/{secret}/{name}-{commit[:7]}.tar.gz"
        if rest == "/git/refs" and method == "POST":
            return self._create_ref(body)
        m = re.fullmatch(r"/git/refs?/heads/(.+)", rest)
        if m:
            return self._ref(method, m.group(1), body)
        m = re.fullmatch(r"/git/(commits|trees|blobs)(?:/(.+))?", rest)
        if m:
            kind, sha = m.groups()
            if method == "POST" and sha is None:
                return getattr(self, f"_create_{kind}")(body)
            if method == "GET" and sha:
                return 200, getattr(self, f"_{kind}_json")(sha, query)
        return 404, {"message": "Not Found"}

    def _codeload(self, rest: str) -> None:
        st = self.owner
        commit = st.archive_links.get(rest.split("/", 1)[0])
        if commit is None:
            return self._send(404, {"message": "Not Found"})
        top = f"{st.repo.replace('/', '-')}-{commit[:7]}/"
        out = io.BytesIO()
        with tarfile.open(fileobj=out, mode="w:gz") as tar:
            for path, sha in sorted(st.flat(st.objects[commit][1]["tree"]).items()):
                data = st.objects[sha][1]
                info = tarfile.TarInfo(top + path)
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
        data = out.getvalue()
        self.send_response(200)
        self.send_header("Content-Type", "application/x-gzip")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _tree_of(self, ref: str | None) -> str | None:
        st = self.owner
        commit = st.head(ref) if ref is None or not re.fullmatch(r"[0-9a-f]{40}", ref) else ref
        if commit is None or commit not in st.objects:
            return None
        return st.objects[commit][1]["tree"]

    def _file_json(self, path: str, sha: str, data: bytes | None) -> dict[str, Any]:
        out: dict[str, Any] = {
            "type": "file", "name": path.rsplit("/", 1)[-1], "path": path, "sha": sha,
            "size": len(self.owner.objects[sha][1]),
            "url": self._url(f"/contents/{path}"), "git_url": self._url(f"/git/blobs/{sha}"),
            "html_url": None, "download_url": None}
        if data is not None:
            if len(data) > LARGE_FILE:
                out.update(encoding="none", content="")
            else:
                b64 = base64.b64encode(data).decode()
                out.update(encoding="base64",
                           content="\n".join(b64[i:i + 60] for i in range(0, len(b64), 60)))
        return out

    def _contents(self, method: str, path: str, query: dict[str, list[str]],
                  body: dict[str, Any]) -> tuple[int, Any]:
        st = self.owner
        path = path.strip("/")
        if method == "GET":
            tree = self._tree_of((query.get("ref") or [None])[0])
            if tree is None:
                return 404, {"message": "Not Found"}
            flat = st.flat(tree)
            if path in flat:
                sha = flat[path]
                return 200, self._file_json(path, sha, st.objects[sha][1])
            listing = [self._file_json(p, s, None) for p, s in sorted(flat.items())
                       if p.startswith(path + "/") and "/" not in p[len(path) + 1:]]
            if listing:
                return 200, listing
            return 404, {"message": "Not Found"}
        branch = body.get("branch") or st.branch
        head = st.head(branch)
        flat = st.flat(st.objects[head][1]["tree"]) if head else {}
        current = flat.get(path)
        given = body.get("sha")
        if method == "DELETE":
            if current is None:
                return 404, {"message": "Not Found"}
            if not given:
                return 422, {"message": "Invalid request.\n\n\"sha\" wasn't supplied."}
            if given != current:
                return 409, {"message": f"{path} does not match {given}"}
            flat.pop(path)
            commit = st.put_commit(st.build_tree(flat), [head] if head else [], body["message"])
            st.refs[f"heads/{branch}"] = commit
            return 200, {"content": None, "commit": self._commits_json(commit, {})}
        if method != "PUT":
            return 404, {"message": "Not Found"}
        if current is not None and not given:
            return 422, {"message": "Invalid request.\n\n\"sha\" wasn't supplied."}
        if given and given != current:
            return 409, {"message": f"{path} does not match {given}"}
        data = base64.b64decode(body["content"])
        flat[path] = st.put_blob(data)
        commit = st.put_commit(st.build_tree(flat), [head] if head else [], body["message"])
        st.refs[f"heads/{branch}"] = commit
        return (200 if current else 201), {
            "content": self._file_json(path, flat[path], None),
            "commit": self._commits_json(commit, {})}

    def _ref(self, method: str, branch: str, body: dict[str, Any]) -> tuple[int, Any]:
        st = self.owner
        head = st.head(branch)
        if head is None:
            return 404, {"message": "Not Found"}
        if method == "PATCH":
            new = body["sha"]
            if new not in st.objects:
                return 422, {"message": "Object does not exist"}
            if not body.get("force") and not st.is_ancestor(head, new):
                return 422, {"message": "Update is not a fast forward"}
            st.refs[f"heads/{branch}"] = head = new
        elif method != "GET":
            return 404, {"message": "Not Found"}
        return 200, {"ref": f"refs/heads/{branch}", "url": self._url(f"/git/refs/heads/{branch}"),
                     "object": {"sha": head, "type": "commit",
                                "url": self._url(f"/git/commits/{head}")}}

    def _branch(self, branch: str) -> tuple[int, Any]:
        """`GET /repos/{owner}/{repo}/branches/{branch}`: the branch and its head commit."""
        st = self.owner
        head = st.head(branch)
        if head is None:
            return 404, {"message": "Branch not found"}
        commit = self._commits_json(head, {})
        return 200, {"name": branch, "protected": False,
                     "commit": {"sha": head, "url": self._url(f"/commits/{head}"),
                                "commit": commit, "parents": commit["parents"]},
                     "_links": {"self": self._url(f"/branches/{branch}"),
                                "html": f"{self.base}/{st.repo}/tree/{branch}"}}

    def _create_ref(self, body: dict[str, Any]) -> tuple[int, Any]:
        """`POST /repos/{owner}/{repo}/git/refs` with `ref` (fully qualified) and `sha`."""
        st = self.owner
        ref, sha = str(body.get("ref", "")), body.get("sha")
        if not ref.startswith("refs/") or ref.count("/") < 2:
            return 422, {"message": "Reference name must start with 'refs/' and have at "
                                    "least two slashes."}
        name = ref[len("refs/"):]
        if name in st.refs:
            return 422, {"message": "Reference already exists"}
        if sha not in st.objects or st.objects[sha][0] != "commit":
            return 422, {"message": "Object does not exist"}
        st.refs[name] = sha
        return 201, {"ref": ref, "url": self._url(f"/git/{ref}"),
                     "object": {"sha": sha, "type": "commit",
                                "url": self._url(f"/git/commits/{sha}")}}

    def _commits_json(self, sha: str, _query: Any) -> dict[str, Any]:
        c = self.owner.objects[sha][1]
        person = {"name": "standin", "email": "s@example.com", "date": "2026-01-01T00:00:00Z"}
        return {"sha": sha, "url": self._url(f"/git/commits/{sha}"), "message": c["message"],
                "tree": {"sha": c["tree"], "url": self._url(f"/git/trees/{c['tree']}")},
                "parents": [{"sha": p, "url": self._url(f"/git/commits/{p}")}
                            for p in c["parents"]], "author": person, "committer": person}

    def _trees_json(self, sha: str, query: dict[str, list[str]]) -> dict[str, Any]:
        st = self.owner
        tree = sha if sha in st.objects and st.objects[sha][0] == "tree" else self._tree_of(sha)
        if tree is None:
            raise KeyError(sha)
        recursive = bool(query.get("recursive"))
        entries = []

        def walk(t: str, prefix: str) -> None:
            for name, (mode, s) in sorted(st.objects[t][1].items()):
                is_tree = mode == "40000"
                entry = {"path": prefix + name, "mode": "040000" if is_tree else mode,
                         "type": "tree" if is_tree else "blob", "sha": s,
                         "url": self._url(f"/git/{'trees' if is_tree else 'blobs'}/{s}")}
                if not is_tree:
                    entry["size"] = len(st.objects[s][1])
                entries.append(entry)
                if is_tree and recursive:
                    walk(s, prefix + name + "/")

        walk(tree, "")
        return {"sha": tree, "url": self._url(f"/git/trees/{tree}"), "tree": entries,
                "truncated": False}

    def _blobs_json(self, sha: str, _query: Any) -> dict[str, Any]:
        kind, data = self.owner.objects[sha]
        if kind != "blob":
            raise KeyError(sha)
        return {"sha": sha, "url": self._url(f"/git/blobs/{sha}"), "size": len(data),
                "encoding": "base64", "content": base64.b64encode(data).decode()}

    def _create_blobs(self, body: dict[str, Any]) -> tuple[int, Any]:
        content = body.get("content", "")
        data = base64.b64decode(content) if body.get("encoding") == "base64" else \
            content.encode()
        sha = self.owner.put_blob(data)
        return 201, {"sha": sha, "url": self._url(f"/git/blobs/{sha}")}

    def _create_trees(self, body: dict[str, Any]) -> tuple[int, Any]:
        st = self.owner
        base = body.get("base_tree")
        if base and base not in st.objects:
            return 422, {"message": "base_tree is not a valid tree"}
        flat = st.flat(base) if base else {}
        for el in body.get("tree", []):
            if el.get("mode") not in ("100644", "100755", "040000", "160000", "120000") or \
                    el.get("type") not in ("blob", "tree", "commit") or not el.get("path"):
                return 422, {"message": "Invalid tree info"}
            if "content" in el and "sha" in el:
                return 422, {"message": "Must supply either tree.sha or tree.content, not "
                                        "both"}
            if "content" in el:
                flat[el["path"]] = st.put_blob(el["content"].encode())
            elif el.get("sha") is None:
                if el["path"] not in flat:
                    return 422, {"message": f"path {el['path']} does not exist"}
                flat.pop(el["path"])
            else:
                if el["sha"] not in st.objects:
                    return 422, {"message": "tree.sha is not a valid blob"}
                flat[el["path"]] = el["sha"]
        sha = st.build_tree(flat)
        return 201, self._trees_json(sha, {})

    def _create_commits(self, body: dict[str, Any]) -> tuple[int, Any]:
        st = self.owner
        if body["tree"] not in st.objects or any(p not in st.objects for p in body["parents"]):
            return 422, {"message": "Invalid tree or parent"}
        sha = st.put_commit(body["tree"], list(body["parents"]), body["message"])
        return 201, self._commits_json(sha, {})
