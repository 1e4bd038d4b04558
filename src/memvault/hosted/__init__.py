"""Hosted mode (docs/hosted.md): many principals' documents, encrypted at rest.

    from memvault.hosted import HostedMemory

    # SESSION_SECRET from the environment; a SQLite file, or "postgresql://app@db/app"
    with HostedMemory.open("/var/lib/app/memory.sqlite") as hm:
        hm.put("user-42", "answer-style", "Prefers short answers", kind="preference")
        print(hm.get("user-42", "answer-style").text)

See docs/hosted.md. Nothing here is imported by the vault CLI. Without the `hosted`
extra, importing this package fails with one line naming it.
"""

from memvault.extras import check_installed

check_installed("hosted")

from memvault.hosted.keys import DecryptError
from memvault.hosted.secrets import MIN_SECRET_CHARS, SecretError
from memvault.hosted.service import (
                                     KINDS,
                                     MAX_DOC_BYTES,
                                     MAX_RECORDS,
                                     Document,
                                     DocumentInfo,
                                     EventResult,
                                     HostedMemory,
                                     LimitExceeded,
)
from memvault.hosted.store import SchemaError, StoreUnavailable

__all__ = ["HostedMemory", "Document", "DocumentInfo", "EventResult", "SecretError",
           "DecryptError", "LimitExceeded", "StoreUnavailable", "SchemaError", "MAX_DOC_BYTES",
           "MAX_RECORDS", "KINDS", "MIN_SECRET_CHARS"]
