"""A SHA-256 whose state can be saved and resumed in another process: OpenSSL's SHA256_CTX through ctypes.

Python's hashlib cannot export a hash's state, and hashing 5 TiB takes hours, far more than one Lambda invocation:
the background verification of multipart content (arca.services.verification) hashes for one invocation, saves
the state with the item, and the next invocation goes on from it. OpenSSL's low-level SHA-256 keeps its whole
state in a plain struct (`SHA256_CTX`, <openssl/sha.h>: eight 32-bit words of the chain, the bit count in two
words, a 64-byte block and its fill, the digest length), whose layout is part of OpenSSL's public ABI since 0.9.8
and the same in 1.1 and 3.x. Its bytes are the state: restored into a fresh struct, the hash goes on exactly.

The library is the libcrypto Python's own `_hashlib` is linked against (found in this process's memory map, as
the Lambda runtime ships it), else the one the loader finds. The same code hashes as hashlib does: the speed is
OpenSSL's (SHA extensions where the CPU has them).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
from typing import Any

STATE_BYTES = 112  # sizeof(SHA256_CTX) on every platform OpenSSL supports (unsigned int is 32 bits)


class _Context(ctypes.Structure):
    _fields_ = (
        ("h", ctypes.c_uint32 * 8),
        ("Nl", ctypes.c_uint32),
        ("Nh", ctypes.c_uint32),
        ("data", ctypes.c_uint32 * 16),
        ("num", ctypes.c_uint),
        ("md_len", ctypes.c_uint),
    )


class StateError(ValueError):
    """Saved bytes that are not a SHA-256 state."""


@functools.cache
def _library() -> Any:
    import _hashlib  # loads the libcrypto Python uses, so that its path is in the memory map

    del _hashlib

    paths: list[str] = []
    try:
        with open("/proc/self/maps", encoding="utf-8") as maps:
            paths = sorted({line.split()[-1] for line in maps if "/libcrypto" in line})
    except OSError:
        pass
    name = paths[0] if paths else ctypes.util.find_library("crypto")
    if name is None:
        raise OSError("no libcrypto to hash with")
    library = ctypes.CDLL(name)
    pointer = ctypes.POINTER(_Context)
    library.SHA256_Init.argtypes = (pointer,)
    library.SHA256_Update.argtypes = (pointer, ctypes.c_char_p, ctypes.c_size_t)
    library.SHA256_Final.argtypes = (ctypes.c_char_p, pointer)
    for function in (library.SHA256_Init, library.SHA256_Update, library.SHA256_Final):
        function.restype = ctypes.c_int
    if ctypes.sizeof(_Context) != STATE_BYTES:
        raise OSError(f"SHA256_CTX is {ctypes.sizeof(_Context)} bytes here, not {STATE_BYTES}")
    return library


class ResumableSha256:
    """SHA-256 over bytes given in order; `state()` saves it, `ResumableSha256(state)` resumes it."""

    def __init__(self, state: bytes | None = None) -> None:
        self._library = _library()
        if state is None:
            self._context = _Context()
            if self._library.SHA256_Init(ctypes.byref(self._context)) != 1:
                raise OSError("SHA256_Init failed")
            return
        if len(state) != STATE_BYTES:
            raise StateError(f"a SHA-256 state is {STATE_BYTES} bytes, not {len(state)}")
        self._context = _Context.from_buffer_copy(state)
        if self._context.md_len != 32 or self._context.num >= 64:
            raise StateError("these bytes are not a SHA-256 state")

    def update(self, data: bytes) -> None:
        """Hash `data` next (bytes are handed to OpenSSL where they lie, never copied)."""
        if data and self._library.SHA256_Update(ctypes.byref(self._context), data, len(data)) != 1:
            raise OSError("SHA256_Update failed")

    def state(self) -> bytes:
        """The state so far, to resume from (STATE_BYTES bytes)."""
        return bytes(self._context)

    def hexdigest(self) -> str:
        """The digest of everything given so far (the state is left as it was)."""
        final = _Context.from_buffer_copy(bytes(self._context))
        out = ctypes.create_string_buffer(32)
        if self._library.SHA256_Final(out, ctypes.byref(final)) != 1:
            raise OSError("SHA256_Final failed")
        return out.raw.hex()
