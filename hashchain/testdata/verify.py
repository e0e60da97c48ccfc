#!/usr/bin/env python3
"""Independent verifier for agent-rewind hash chains, written from FORMAT.md alone.

Python 3 standard library only. Usage:

    verify.py CHAIN.jsonl... [--head HEAD]  chain files, and optionally the head they must match
    verify.py EXPORT.tar...                 exports (FORMAT.md section 9): chain.jsonl and head

It checks every line (FORMAT.md section 5.1) and, given a head, that the chain has exactly the
head's size and Merkle root (section 6). It does not check Ed25519 signatures on a signed head:
the standard library has none. It prints one line per file: "verify.py: FILE: ok: …", or the
first problem as "verify.py: FILE: line L (seq S): PROBLEM: detail". Exit status: 0 all intact,
1 some chain broken, 2 bad usage or unreadable input.
"""

import base64
import hashlib
import json
import math
import re
import sys
import tarfile

PREFIX = b"agent-rewind/hashchain/v1\n"  # section 4
MAX_LINE = 1048576  # section 2, bytes without the LF
MAX_DEPTH = 64  # section 2, the entry object is depth 1
ZERO = "0" * 64
HEX64 = re.compile(r"[0-9a-f]{64}\Z")
TIME = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,9})?Z\Z")
MEMBERS = ["data", "hash", "kind", "prev", "seq", "time"]


class Broken(Exception):
    def __init__(self, line, problem, detail):
        super().__init__(f"line {line} (seq {line - 1}): {problem}: {detail}" if line else f"{problem}: {detail}")


class Invalid(Exception):
    """The input is not JSON as FORMAT.md section 3 accepts it."""


# ---- RFC 8785 canonical JSON (FORMAT.md section 3) ----

def _no_constants(name):
    raise Invalid(f"{name} is not JSON")


def _pairs(pairs):
    keys = [k for k, _ in pairs]
    if len(set(keys)) != len(keys):
        raise Invalid("duplicate member name")
    return dict(pairs)


def parse(text):
    """Parses JSON text into Python values; every number becomes a float (a double)."""
    try:
        return json.loads(text, object_pairs_hook=_pairs, parse_int=float, parse_float=float,
                          parse_constant=_no_constants)
    except RecursionError:
        raise Invalid("nests too deep")
    except ValueError as e:  # json.JSONDecodeError is a ValueError
        raise Invalid(str(e))


def depth(v):
    """Nesting depth: an object or array is 1 plus its deepest child."""
    todo, deepest = [(v, 1)], 0
    while todo:
        x, d = todo.pop()
        if isinstance(x, dict):
            deepest = max(deepest, d)
            todo.extend((c, d + 1) for c in x.values())
        elif isinstance(x, list):
            deepest = max(deepest, d)
            todo.extend((c, d + 1) for c in x)
    return deepest


def es_number(x):
    """ECMAScript Number.prototype.toString of a finite double."""
    if math.isnan(x) or math.isinf(x):
        raise Invalid("number out of range")
    if x == 0:
        return "0"
    sign = "-" if x < 0 else ""
    r = repr(abs(x))  # shortest digits that read back as the same double
    mant, _, exp = r.partition("e")
    ip, _, fp = mant.partition(".")
    raw = ip + fp
    digits = raw.lstrip("0")
    trailing = len(digits) - len(digits.rstrip("0"))
    digits = digits.rstrip("0")
    k = len(digits)
    n = k + int(exp or 0) - len(fp) + trailing  # value = 0.digits * 10^n
    if k <= n <= 21:
        s = digits + "0" * (n - k)
    elif 0 < n <= 21:
        s = digits[:n] + "." + digits[n:]
    elif -6 < n <= 0:
        s = "0." + "0" * (-n) + digits
    else:
        e = n - 1
        s = digits[0] + ("." + digits[1:] if k > 1 else "") + "e" + ("+" if e >= 0 else "-") + str(abs(e))
    return sign + s


SHORT = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}


ESCAPE = re.compile('[\x00-\x1f"\\\\]')


def _escape(m):
    ch = m.group(0)
    return SHORT.get(ch) or "\\u%04x" % ord(ch)


def jcs_string(s):
    try:
        s.encode("utf-8")  # a lone surrogate cannot be encoded: not valid Unicode
    except UnicodeEncodeError:
        raise Invalid("string is not valid Unicode (lone surrogate)")
    return '"' + ESCAPE.sub(_escape, s) + '"'


def jcs(v):
    if v is True:
        return "true"
    if v is False:
        return "false"
    if v is None:
        return "null"
    if isinstance(v, float):
        return es_number(v)
    if isinstance(v, str):
        return jcs_string(v)
    if isinstance(v, list):
        return "[" + ",".join(jcs(x) for x in v) + "]"
    if isinstance(v, dict):
        for k in v:
            jcs_string(k)
        keys = sorted(v, key=lambda k: k.encode("utf-16-be", "surrogatepass"))  # UTF-16 code units
        return "{" + ",".join(jcs_string(k) + ":" + jcs(v[k]) for k in keys) + "}"
    raise Invalid("unexpected value")


# ---- entries and the chain (FORMAT.md sections 2, 4, 5) ----

def entry_hash(entry):
    hashed = {k: v for k, v in entry.items() if k != "hash"}
    return hashlib.sha256(PREFIX + jcs(hashed).encode("utf-8")).hexdigest()


def check_line(number, raw):
    """Checks steps 2 and 3 of section 5.1 and returns the entry."""
    if len(raw) > MAX_LINE:
        raise Broken(number, "unparsable", f"line is {len(raw)} bytes, over the limit")
    try:
        text = raw.decode("utf-8")
        entry = parse(text)
        if depth(entry) > MAX_DEPTH:
            raise Invalid("nests deeper than 64")
        if not isinstance(entry, dict) or sorted(entry) != MEMBERS:
            raise Invalid("not an object with exactly the members " + ", ".join(MEMBERS))
        if not isinstance(entry["data"], dict):
            raise Invalid("data is not an object")
        if not isinstance(entry["kind"], str) or entry["kind"] == "":
            raise Invalid("kind is not a non-empty string")
        if not isinstance(entry["time"], str) or not TIME.match(entry["time"]):
            raise Invalid("time is not RFC 3339 UTC")
        seq = entry["seq"]
        if not isinstance(seq, float) or seq < 0 or seq != math.floor(seq) or seq > 2 ** 53 - 1:
            raise Invalid("seq is not a non-negative integer")
        for m in ("prev", "hash"):
            if not isinstance(entry[m], str) or not HEX64.match(entry[m]):
                raise Invalid(f"{m} is not 64 lowercase hex digits")
        canonical = jcs(entry)
    except UnicodeDecodeError:
        raise Broken(number, "unparsable", "not valid UTF-8")
    except Invalid as e:
        raise Broken(number, "unparsable", str(e))
    if canonical != text:
        raise Broken(number, "non-canonical", "the line is not its RFC 8785 canonical form")
    return entry


def verify_chain(data):
    """Verifies a chain file's bytes; returns the entry hashes (as bytes)."""
    hashes, prev = [], ZERO
    lines = data.split(b"\n")
    if lines[-1] == b"":
        lines.pop()
    for i, raw in enumerate(lines):
        number = i + 1
        if i == len(lines) - 1 and not data.endswith(b"\n"):
            raise Broken(number, "torn", "the last line has no final newline")
        entry = check_line(number, raw)
        if int(entry["seq"]) != i:
            raise Broken(number, "seq gap", f"seq is {int(entry['seq'])}, want {i}")
        if entry["prev"] != prev:
            raise Broken(number, "prev mismatch", "prev is not the previous entry's hash")
        h = entry_hash(entry)
        if entry["hash"] != h:
            raise Broken(number, "hash mismatch", f"hash is {entry['hash']}, the entry hashes to {h}")
        hashes.append(bytes.fromhex(h))
        prev = h
    return hashes


# ---- the Merkle tree and the head (FORMAT.md section 6) ----

def mth(leaves):
    """RFC 6962 Merkle tree hash of a list of leaves (entry hashes)."""
    if not leaves:
        return hashlib.sha256(b"").digest()
    if len(leaves) == 1:
        return hashlib.sha256(b"\x00" + leaves[0]).digest()
    k = 1
    while k * 2 < len(leaves):
        k *= 2
    return hashlib.sha256(b"\x01" + mth(leaves[:k]) + mth(leaves[k:])).digest()


def parse_head(text):
    """Reads origin, size and root from a checkpoint, or from the text of a signed note."""
    body = text.split("\n\n", 1)[0] + "\n"
    lines = body.split("\n")
    if len(lines) < 4 or not lines[0] or not re.fullmatch(r"0|[1-9][0-9]*", lines[1]):
        raise ValueError("not a checkpoint (origin, size, base64 root)")
    root = base64.b64decode(lines[2], validate=True)
    if len(root) != 32:
        raise ValueError("the root is not a base64 SHA-256 hash")
    return lines[0], int(lines[1]), root


def check_head(hashes, head_text):
    origin, size, root = parse_head(head_text)
    if len(hashes) < size:
        raise Broken(0, "cut", f"the chain has {len(hashes)} entries, the head records {size}")
    if len(hashes) > size:
        raise Broken(size + 1, "beyond head", f"the chain has {len(hashes)} entries, the head covers {size}")
    want_origin = "agent-rewind/" + hashes[0].hex()[:32] if hashes else "agent-rewind/empty"
    if origin != want_origin:
        raise Broken(0, "rewritten", f"the head's origin is {origin!r}, this chain's is {want_origin!r}")
    if mth(hashes) != root:
        raise Broken(0, "rewritten", "the chain's Merkle root is not the head's")
    return base64.b64encode(root).decode()


USAGE = "usage: verify.py CHAIN.jsonl... [--head HEAD] | verify.py EXPORT.tar..."


def verify_path(path, head_path):
    """Verifies one chain file or export; prints one line; returns the exit status."""
    try:
        head_text = None
        if tarfile.is_tarfile(path):
            with tarfile.open(path) as tar:
                data = tar.extractfile("chain.jsonl").read()
                head_text = tar.extractfile("head").read().decode("utf-8")
        else:
            with open(path, "rb") as f:
                data = f.read()
        if head_path:
            with open(head_path, encoding="utf-8") as f:
                head_text = f.read()
    except (OSError, KeyError, tarfile.TarError, UnicodeDecodeError) as e:
        print(f"verify.py: {path}: cannot read: {e}")
        return 2
    try:
        hashes = verify_chain(data)
        root = None
        if head_text is not None:
            try:
                root = check_head(hashes, head_text)
            except ValueError as e:
                print(f"verify.py: {path}: bad head: {e}")
                return 2
    except Broken as e:
        print(f"verify.py: {path}: {e}")
        return 1
    print(f"verify.py: {path}: ok: {len(hashes)} entries" + (f", matching the head (root {root})" if root else ""))
    return 0


def main(argv):
    args = argv[1:]
    head_path = None
    if "--head" in args:
        i = args.index("--head")
        if i + 1 >= len(args):
            print(USAGE, file=sys.stderr)
            return 2
        head_path = args[i + 1]
        del args[i:i + 2]
    if not args or any(a.startswith("-") for a in args):
        print(USAGE, file=sys.stderr)
        return 2
    return max(verify_path(p, head_path) for p in args)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
