"""Many files in two requests: a commit's tarball, for a machine that lacks many blobs.

The Git Data API serves one blob per request, so a first search on a machine (which
copies every note of the repository) would cost one request per note: 2,000 notes are
2,000 requests, 40 % of GitHub's hourly budget, and eight minutes at the default
throttle. `GET /repos/{owner}/{repo}/tarball/{commit}` answers with a short-lived link
to the gzipped tar of the whole tree; downloading it is the second request.

The archive holds every file, attachments included, so it is used only when it is
worth it (`worth_it`): at least `MIN_FILES` blobs are missing, the whole tree is at most
`MAX_BYTES`, and it is at most four times (plus 1 MiB) the bytes actually needed. Each
file taken from it is checked against the blob id the tree listing gave, so a wrong or
stale archive can only cost requests, never serve wrong bytes; anything it lacks is
read blob by blob as before.
"""

from __future__ import annotations

import io
import tarfile
from typing import TYPE_CHECKING

from memvault.backends.github_cache import git_blob_id
from memvault.errors import RemoteError

if TYPE_CHECKING:
    from memvault.backends.github_api import GithubApi
    from memvault.backends.github_cache import BlobCache

MIN_FILES = 8
MAX_BYTES = 64 << 20


def worth_it(missing: dict[str, str], sizes: dict[str, int]) -> bool:
    """Whether the archive is cheaper than `missing` (path -> blob id) one by one."""
    if len(missing) < MIN_FILES or not sizes:
        return False
    total = sum(sizes.values())
    needed = sum(sizes.get(path, 0) for path in missing)
    return total <= MAX_BYTES and total <= 4 * needed + (1 << 20)


def files_in(archive: bytes, wanted: set[str]) -> dict[str, bytes]:
    """The regular files of a GitHub tarball whose path (below its one top folder) is in
    `wanted`; nothing else is read, and nothing is written anywhere."""
    out: dict[str, bytes] = {}
    budget = MAX_BYTES
    with tarfile.open(fileobj=io.BytesIO(archive), mode="r:gz") as tar:
        for member in tar:
            if not member.isreg():
                continue
            _, _, path = member.name.partition("/")
            if path not in wanted or member.size > budget:
                continue
            handle = tar.extractfile(member)
            if handle is not None:
                out[path] = handle.read()
                budget -= member.size
    return out


def fill_cache(api: GithubApi, cache: BlobCache, commit: str, missing: dict[str, str],
               sizes: dict[str, int]) -> None:
    """Put the `missing` blobs (repository path -> blob id) of `commit` in the cache from
    its archive, when `worth_it`; a failed archive is announced and changes nothing."""
    if not worth_it(missing, sizes):
        return
    try:
        found = files_in(api.archive(commit), set(missing))
    except (RemoteError, OSError, EOFError, ValueError, tarfile.TarError) as exc:
        api.notify(f"memvault: GitHub archive not used ({exc}); reading the files one by one")
        return
    for path, data in found.items():
        if git_blob_id(data) == missing[path]:  # never trust bytes the id does not name
            cache.put(data, missing[path])
