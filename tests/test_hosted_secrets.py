"""The hosted secret rule: at least 32 characters, counted as characters (not bytes)."""

from __future__ import annotations

import pytest

from memvault.hosted import MIN_SECRET_CHARS, SecretError
from memvault.hosted.secrets import check_secret, secrets_from_env


@pytest.mark.parametrize("value", ["é" * 16,             # 32 bytes, 16 characters
                                   "e\u0301" * 16,       # 32 code points, 16 characters (NFC)
                                   "a" * 31, "🔑" * 8 + "x" * 23])
def test_fewer_than_32_characters_is_refused_whatever_the_byte_count(value: str) -> None:
    with pytest.raises(SecretError, match="too short") as err:
        check_secret(value)
    assert value not in str(err.value)
    assert "at least 32 characters" in str(err.value)


@pytest.mark.parametrize("value", ["a" * 32, "é" * 32, "🔑" * 32, "e\u0301" * 32])
def test_32_characters_pass_and_the_key_material_is_the_exact_bytes(value: str) -> None:
    assert check_secret(value) == value.encode("utf-8")
    assert MIN_SECRET_CHARS == 32


def test_missing_secret_and_a_short_previous_one_are_named() -> None:
    with pytest.raises(SecretError, match="SESSION_SECRET is not set"):
        secrets_from_env({})
    with pytest.raises(SecretError, match="SESSION_SECRET_PREVIOUS is too short"):
        secrets_from_env({"SESSION_SECRET": "c" * 40, "SESSION_SECRET_PREVIOUS": "é" * 20})
    both = secrets_from_env({"SESSION_SECRET": "c" * 40, "SESSION_SECRET_PREVIOUS": "p" * 40})
    assert both.previous == b"p" * 40
    assert "ccc" not in repr(both) and "ppp" not in repr(both)
    same = secrets_from_env({"SESSION_SECRET": "c" * 40, "SESSION_SECRET_PREVIOUS": "c" * 40})
    assert same.previous is None

