"""The OpenAI wire format as the HTTP judge uses it: request bodies out, bounded answers in.

Everything here treats the server as untrusted: an answer is read in chunks up to a byte cap (a 200 MB
body is never held in memory; a compressed one is inflated piece by piece and its inflated bytes count
against the cap, so a gzip bomb is cut at the cap; at most one content encoding is decoded), decoded as UTF-8 JSON with a bounded nesting depth and without the
non-JSON ``NaN``/``Infinity``, and its logprobs are checked later, where they are summed
(:func:`botgrpo_judge.backends.base.yes_no_probs`). Prompts that cannot be encoded as UTF-8 (lone
surrogates, e.g. from text decoded with ``surrogateescape``) are sent with U+FFFD in their place.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import zlib
from typing import Any

import httpx

from botgrpo_judge.bounded_json import JSONTooDeep, loads_bounded

#: Deepest JSON nesting accepted in an answer (a chat logprob answer is 7 levels deep).
MAX_ANSWER_DEPTH = 64


class Malformed(Exception):
    """The server answered with something that is not the expected JSON (retried)."""


class TooLarge(Exception):
    """The answer is longer than ``max_response_bytes`` (not retried)."""


class BadEncoding(Exception):
    """The answer's ``Content-Encoding`` is not one of :data:`ENCODINGS`, or names more than one (not retried)."""


#: The content encodings an answer may have (at most one), with zlib's ``wbits`` for each; the client asks
#: for ``identity``, so a compliant server sends none.
ENCODINGS = {"gzip": 16 + zlib.MAX_WBITS, "x-gzip": 16 + zlib.MAX_WBITS, "deflate": zlib.MAX_WBITS}
#: Most bytes inflated per step: the loop gets control back (the batch deadline) between steps.
INFLATE_STEP = 256 * 1024


def _decoder(header: str) -> Any:
    """A zlib decompressor for the ``Content-Encoding`` header, or ``None`` for an unencoded answer."""
    names = [n.strip().lower() for n in header.split(",") if n.strip()]
    names = [n for n in names if n != "identity"]
    if len(names) > 1:
        raise BadEncoding(
            f"the answer is encoded {len(names)} times ({header!r}); at most one encoding is decoded"
        )
    if not names:
        return None
    if names[0] not in ENCODINGS:
        raise BadEncoding(f"unsupported content encoding {names[0]!r} (decoded: {', '.join(ENCODINGS)})")
    return zlib.decompressobj(ENCODINGS[names[0]])


def encode_body(body: dict[str, Any]) -> tuple[bytes, bool]:
    """UTF-8 JSON of a request body, and whether lone surrogates had to be replaced by U+FFFD.

    A surrogate pair split into two code points is joined back into its character.
    """
    text = json.dumps(body, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    try:
        return text.encode("utf-8"), False
    except UnicodeEncodeError:
        repaired = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
        return repaired.encode("utf-8"), True


async def read_capped(response: httpx.Response, cap: int) -> bytes:
    """The (decoded) body of a streamed response, stopping once it passes ``cap`` bytes.

    A compressed body (one ``gzip`` or ``deflate`` encoding) is inflated at most :data:`INFLATE_STEP`
    bytes at a time; the inflated bytes count against ``cap`` as they come (and so do the bytes received).

    :raises TooLarge: ``Content-Length`` announces more than ``cap``, or the body runs past it.
    :raises BadEncoding: more than one content encoding, or one that is not gzip/deflate.
    """
    declared = response.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > cap:
        raise TooLarge(f"the answer announces {int(declared)} bytes, over max_response_bytes={cap}")
    decoder = _decoder(response.headers.get("content-encoding", ""))
    body, received = bytearray(), 0
    async with contextlib.aclosing(response.aiter_raw()) as chunks:  # closed here, not by the GC
        async for chunk in chunks:
            received += len(chunk)
            if received > cap:
                raise TooLarge(f"the answer runs past max_response_bytes={cap}")
            if decoder is None:
                body += chunk
                continue
            data = chunk
            while data and not decoder.eof:
                try:
                    body += decoder.decompress(data, min(INFLATE_STEP, cap + 1 - len(body)))
                except zlib.error as exc:
                    raise httpx.DecodingError(f"the compressed answer does not inflate ({exc})") from exc
                if len(body) > cap:
                    raise TooLarge(f"the inflated answer runs past max_response_bytes={cap}")
                data = decoder.unconsumed_tail
                await asyncio.sleep(0)  # between steps the batch deadline can cut the request
    if decoder is not None and not decoder.eof:
        body += decoder.flush(cap + 1 - len(body))
        if len(body) > cap:
            raise TooLarge(f"the inflated answer runs past max_response_bytes={cap}")
    return bytes(body)


def parse_answer(raw: bytes) -> Any:
    """The JSON document of an answer body.

    :raises Malformed: not UTF-8, not one JSON object, nested too deep, or ``NaN``/``Infinity`` in it.
    """
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise Malformed(f"the answer is not UTF-8 ({exc.reason} at byte {exc.start})") from exc
    try:
        return loads_bounded(text, MAX_ANSWER_DEPTH)
    except JSONTooDeep as exc:
        raise Malformed(str(exc)) from exc
    except ValueError as exc:
        raise Malformed(f"not JSON ({exc})") from exc


def top_logprobs_of(data: Any, chat: bool) -> list[tuple[str, Any]]:
    """``(token text, logprob)`` of the first generated token's top-k, from a completions or chat answer.

    The logprobs come back as sent (checked where they are summed); the structure is checked here.
    """
    try:
        logprobs = data["choices"][0]["logprobs"]
        if chat:
            entries = logprobs["content"][0]["top_logprobs"]
            pairs = [(str(e["token"]), e["logprob"]) for e in entries]
        else:
            table = logprobs["top_logprobs"][0]
            pairs = [(str(tok), lp) for tok, lp in table.items()]
    except (KeyError, IndexError, TypeError, AttributeError) as exc:
        raise Malformed(f"no top logprobs in the answer ({type(exc).__name__}: {exc})") from exc
    if not pairs:
        raise Malformed("empty top logprobs; does the server support logprobs?")
    return pairs


def text_of(data: Any, chat: bool) -> str:
    """The generated text of a completions or chat answer."""
    try:
        choice = data["choices"][0]
        text = choice["message"]["content"] if chat else choice["text"]
    except (KeyError, IndexError, TypeError) as exc:
        raise Malformed(f"no generated text in the answer ({type(exc).__name__}: {exc})") from exc
    if not isinstance(text, str):
        raise Malformed("the generated text is not a string")
    return text
