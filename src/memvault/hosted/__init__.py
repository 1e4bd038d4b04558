"""Hosted mode (docs/hosted.md): many principals' documents, encrypted at rest.

    from memvault.hosted import HostedMemory

    with HostedMemory.open("/var/lib/app/memory.sqlite") as hm:   # SESSION_SECRET from env
        hm.put("user-42", "answer-style", "Prefers short answers", kind="preference")
        print(hm.get("user-42", "answer-style").text)

See docs/hosted.md. Nothing here is imported by the vault CLI.
"""

from memvault.hosted.keys import DecryptError, SecretError
from memvault.hosted.service import (KINDS, MAX_DOC_BYTES, MAX_RECORDS, Document,
                                     DocumentInfo, EventResult, HostedMemory, LimitExceeded)

__all__ = ["HostedMemory", "Document", "DocumentInfo", "EventResult", "SecretError",
           "DecryptError", "LimitExceeded", "MAX_DOC_BYTES", "MAX_RECORDS", "KINDS"]
