"""Which character encoding an HTML body is in, chosen as a browser chooses.

In order (WHATWG HTML, "determining the character encoding"): a byte order
mark; the charset of the HTTP Content-Type header; a <meta charset> or
<meta http-equiv=Content-Type> near the top; and with nothing declared,
UTF-8 when the whole body is valid UTF-8, else what a detector
(charset-normalizer) makes of its first DETECT_BYTES, else windows-1252.
Chinese, Japanese and Korean sites still serve GBK, Big5, Shift_JIS and
EUC-KR without saying so, and windows-1252 would turn all of it into
mojibake.

Labels map to codecs as the Encoding Standard maps them to encodings (gbk,
gb2312 -> gb18030; iso-8859-1, ascii -> windows-1252; shift_jis -> cp932;
euc-kr -> cp949; big5 -> big5hkscs): w3lib's table, plus the standard's
labels Python has no name for, taught to `codecs` below so that the header,
the <meta> scan and the detector all resolve labels the same way.
"""

from __future__ import annotations

import codecs

import charset_normalizer
from w3lib.encoding import html_body_declared_encoding, html_to_unicode, read_bom, resolve_encoding

# The detector reads at most this much: its cost grows with the input, and a
# page's first 64 KiB tell its script as well as all of it would.
DETECT_BYTES = 64 * 1024
FALLBACK = "cp1252"

# Labels of the Encoding Standard that Python does not know (normalized as
# codecs passes them to a search function), and the codec each names.
_MISSING_LABELS = {
    "csgb2312": "gb18030",
    "gb_2312": "gb18030",
    "x_gbk": "gb18030",
    "cn_big5": "big5hkscs",
    "x_x_big5": "big5hkscs",
    "cseucpkdfmtjapanese": "euc_jp",
    "x_euc_jp": "euc_jp",
    "cseuckr": "cp949",
    "csksc56011987": "cp949",
    "iso_ir_149": "cp949",
    "ks_c_5601_1989": "cp949",
    "ksc_5601": "cp949",
    "windows_949": "cp949",
    "iso88591": "cp1252",
    "x_cp1252": "cp1252",
    "unicode_1_1_utf_8": "utf-8",
    "unicode11utf8": "utf-8",
    "unicode20utf8": "utf-8",
    "x_unicode20utf8": "utf-8",
}

# What the detector may answer: the legacy encodings a browser supports (a
# page in any other cannot be displayed either), in Python's names.
_WEB_CODECS = [
    "utf_8", "gb18030", "big5", "cp932", "shift_jis", "euc_jp", "cp949", "euc_kr",
    "cp866", "koi8_r", "koi8_u", "mac_cyrillic", "mac_roman", "cp874",
    "cp1250", "cp1251", "cp1252", "cp1253", "cp1254", "cp1255", "cp1256", "cp1257", "cp1258",
    "iso8859_2", "iso8859_3", "iso8859_4", "iso8859_5", "iso8859_6", "iso8859_7",
    "iso8859_8", "iso8859_10", "iso8859_13", "iso8859_14", "iso8859_15", "iso8859_16",
]  # fmt: skip
# Between encodings of the Latin script the detector guesses poorly (French
# comes out as Baltic windows-1257): there a browser's default, windows-1252,
# is kept. Other scripts and the multi-byte encodings it tells apart well.
_LATIN_CODECS = frozenset(
    {"cp1250", "cp1252", "cp1254", "cp1257", "cp1258", "mac_roman"}
    | {f"iso8859_{n}" for n in (2, 3, 4, 10, 13, 14, 15, 16)}
)


def _search(name: str) -> codecs.CodecInfo | None:
    target = _MISSING_LABELS.get(name)
    return codecs.lookup(target) if target is not None else None


codecs.register(_search)


def codec_for(label: str) -> str | None:
    """The Python codec an encoding label stands for on the web; None if unknown."""
    return resolve_encoding(label.strip())


def decode_html(body: bytes, declared: str | None = None) -> tuple[str, str]:
    """(codec, text) of an HTML body; `declared` is the HTTP header's charset.

    Never raises: bytes the codec cannot decode become U+FFFD.
    """
    header = f"text/html; charset={declared}" if declared else None
    return html_to_unicode(header, body, auto_detect_fun=undeclared_codec)


def charset_to_declare(body: bytes, declared: str | None) -> str | None:
    """The charset to send a browser with `body` (whose header said
    `declared`), so that it reads the page as decode_html does: the header's
    when it names an encoding, None when the page declares its own (a BOM or
    <meta>), else a label for what decode_html finds."""
    if declared and codec_for(declared) is not None:
        return declared
    if read_bom(body)[0] is not None or html_body_declared_encoding(body) is not None:
        return None
    return web_label(undeclared_codec(body))


def undeclared_codec(body: bytes) -> str:
    """The codec of a body that declares none (see the module doc)."""
    try:
        body.decode("utf-8")
    except UnicodeDecodeError:
        pass
    else:
        return "utf-8"
    return detect(body) or FALLBACK


def detect(body: bytes) -> str | None:
    """The detector's codec for the start of `body`, None when it has no
    answer or the answer is a Latin-script single-byte encoding."""
    best = charset_normalizer.from_bytes(
        _prefix(body), cp_isolation=_WEB_CODECS, enable_fallback=False
    ).best()
    if best is None:
        return None
    codec = codec_for(best.encoding)
    if codec is None or codec in _LATIN_CODECS:
        return None
    return codec


def _prefix(body: bytes) -> bytes:
    """At most DETECT_BYTES, cut where no character can be split.

    The detector rejects an encoding whose decoding fails, and a cut through
    a two-byte character would fail. A '>' or newline byte is never part of
    a multi-byte character in these encodings (their trail bytes are 0x40
    and above, or digits in GB18030's four-byte form), so the cut goes
    right after the last one.
    """
    if len(body) <= DETECT_BYTES:
        return body
    head = body[:DETECT_BYTES]
    cut = max(head.rfind(b">"), head.rfind(b"\n"))
    return head[: cut + 1] if cut > 0 else head


def web_label(codec: str) -> str:
    """An Encoding Standard label for a Python codec (what a browser is told)."""
    name = codecs.lookup(codec).name
    return _WEB_LABELS.get(name, name.replace("_", "-"))


_WEB_LABELS = {
    "cp932": "shift_jis",
    "cp949": "euc-kr",
    "big5hkscs": "big5",
    "cp866": "ibm866",
    "cp874": "windows-874",
    "mac-roman": "macintosh",
    "mac-cyrillic": "x-mac-cyrillic",
    **{f"cp125{n}": f"windows-125{n}" for n in range(9)},
}
