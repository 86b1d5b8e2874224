"""Character encodings: declared ones win in the browser's order, undeclared
legacy ones are detected, labels map as the Encoding Standard maps them."""

from __future__ import annotations

import codecs

import pytest
from support.hostile_helpers import fetch_config, fetcher, hostile_web, url
from support.legacy import BY_NAME, FIELDS, TEXTS, LegacySite, LegacyText

from nadird.common.typecheck import build
from nadird.common.urls import fingerprint
from nadird.job.spec import Job
from nadird.worker.follow.filter import DomainCounts, LinkPipeline
from nadird.worker.pages import PageProcessor, PageTask
from nadird.worker.parse import charsets
from nadird.worker.parse.charsets import (
    DETECT_BYTES,
    charset_to_declare,
    codec_for,
    decode_html,
    web_label,
)

# Every label the Encoding Standard gives these encodings, and Python's codec for it.
WHATWG_LABELS = {
    "gb18030": "chinese csgb2312 csiso58gb231280 gb2312 gb_2312 gb_2312-80 gbk iso-ir-58 "
    "x-gbk gb18030",
    "big5hkscs": "big5 big5-hkscs cn-big5 csbig5 x-x-big5",
    "euc_jp": "cseucpkdfmtjapanese euc-jp x-euc-jp",
    "iso2022_jp": "csiso2022jp iso-2022-jp",
    "cp932": "csshiftjis ms932 ms_kanji shift-jis shift_jis sjis windows-31j x-sjis",
    "cp949": "cseuckr csksc56011987 euc-kr iso-ir-149 korean ks_c_5601-1987 ks_c_5601-1989 "
    "ksc5601 ksc_5601 windows-949",
    "cp1252": "ansi_x3.4-1968 ascii cp1252 cp819 csisolatin1 ibm819 iso-8859-1 iso-ir-100 "
    "iso8859-1 iso88591 iso_8859-1 iso_8859-1:1987 l1 latin1 us-ascii windows-1252 x-cp1252",
    "utf-8": "unicode-1-1-utf-8 unicode11utf8 unicode20utf8 utf-8 utf8 x-unicode20utf8",
}
CASES = [(label, codec) for codec, labels in WHATWG_LABELS.items() for label in labels.split()]


@pytest.mark.parametrize(("label", "codec"), CASES, ids=[label for label, _ in CASES])
def test_labels_map_as_the_encoding_standard_does(label: str, codec: str) -> None:
    assert codec_for(label) == codec
    assert codec_for(label.upper()) == codec
    if "." not in label:  # <meta> labels are read up to a character outside [\w-]
        gbk = "中文".encode("gbk")  # the same bytes, read through each label
        assert decode_html(b"<meta charset=" + label.encode() + b">" + gbk)[0] == codec


def test_unknown_and_unsafe_labels_are_no_encoding() -> None:
    assert codec_for("no-such-charset") is None
    assert codec_for("utf-7") is None  # it could smuggle markup past a browser


def test_the_browser_is_told_a_label_it_knows() -> None:
    # Each label given to the browser maps back to the codec it came from.
    for codec in ("gb18030", "big5hkscs", "cp932", "cp949", "euc_jp", "cp1252", "koi8_r"):
        label = web_label(codec)
        assert codec_for(label) == codecs.lookup(codec).name, label
    assert web_label("cp932") == "shift_jis" and web_label("cp1251") == "windows-1251"


def test_a_browser_is_told_the_charset_the_page_was_read_in() -> None:
    gbk, big5, sjis, euc_kr = (BY_NAME[name] for name in ("gbk", "big5", "shift_jis", "euc-kr"))
    # Detected: the browser gets a label for it, not its own guess.
    assert charset_to_declare(gbk.page(), None) == "gb18030"
    assert [charset_to_declare(t.page(), None) for t in (big5, sjis, euc_kr)] == [
        "big5",
        "shift_jis",
        "euc-kr",
    ]
    assert charset_to_declare(b"<p>plain</p>", None) == "utf-8"
    # Declared: the header as it was; a page's own BOM or <meta> is left to the browser.
    assert charset_to_declare(gbk.page(), "gbk") == "gbk"
    assert charset_to_declare(gbk.page(meta="gbk"), None) is None
    assert charset_to_declare(gbk.page(meta="gbk"), "no-such-charset") is None
    assert charset_to_declare(codecs.BOM_UTF8 + b"<p>x</p>", None) is None


GBK = BY_NAME["gbk"]


@pytest.mark.parametrize(
    ("body", "header", "codec"),
    [
        # A byte order mark beats the header.
        (codecs.BOM_UTF8 + "<p>中文</p>".encode(), "shift_jis", "utf-8"),
        # The header beats <meta> and detection, even when it is wrong.
        (GBK.page(meta="big5"), "windows-1252", "cp1252"),
        (GBK.page(meta="shift_jis"), "x-gbk", "gb18030"),
        # <meta> beats detection.
        (GBK.page(meta="big5"), None, "big5hkscs"),
        # An unknown label is no declaration: the next rule decides.
        (GBK.page(meta="big5"), "no-such-charset", "big5hkscs"),
        (GBK.page(meta="no-such-charset"), None, "gb18030"),
        # Nothing declared: valid UTF-8 is UTF-8; legacy text is detected.
        ("<p>中文 café</p>".encode(), None, "utf-8"),
        (GBK.page(), None, "gb18030"),
    ],
)
def test_declared_charsets_win_in_the_browsers_order(
    body: bytes, header: str | None, codec: str
) -> None:
    assert decode_html(body, header)[0] == codec


FRENCH = "<title>Un été à Paris</title><p>Le café était crème; les élèves étaient déjà à côté.</p>"
RUSSIAN = (
    "<title>Новости</title><p>Сегодня в городе прошёл большой фестиваль, пришли тысячи жителей.</p>"
)


@pytest.mark.parametrize(
    ("text", "encoding", "codec"),
    [
        # Between Latin-script encodings the detector guesses poorly: a
        # browser's default stays (it would say windows-1257 here).
        (FRENCH, "cp1252", "cp1252"),
        (FRENCH, "iso-8859-15", "cp1252"),
        # Another script it tells apart.
        (RUSSIAN, "cp1251", "cp1251"),
        (RUSSIAN, "koi8-r", "koi8-r"),
    ],
)
def test_undeclared_single_byte_text(text: str, encoding: str, codec: str) -> None:
    assert decode_html(text.encode(encoding)) == (codec, text)


@pytest.mark.parametrize("text", TEXTS, ids=[t.name for t in TEXTS])
def test_undeclared_legacy_pages_are_detected(text: LegacyText) -> None:
    decoded = decode_html(text.page())[1]
    assert text.title in decoded and text.text in decoded


@pytest.mark.parametrize("text", TEXTS, ids=[t.name for t in TEXTS])
def test_the_detector_reads_a_bounded_prefix_cut_between_characters(text: LegacyText) -> None:
    long_page = text.page(repeat=400)
    assert len(long_page) > 2 * DETECT_BYTES
    # Cut at the limit, the prefix would end inside a two-byte character for
    # some of these; the detector would then reject the right encoding.
    prefix = charsets._prefix(long_page)
    assert len(prefix) <= DETECT_BYTES and prefix.endswith((b">", b"\n"))
    prefix.decode(text.codec)  # whole characters only
    assert charsets.detect(long_page) == codec_for(text.codec)


FETCHED = [
    *[(t.name, "") for t in TEXTS],  # undeclared
    *[(t.name, "?repeat=300") for t in TEXTS],  # longer than the detector reads
    ("gbk", "?meta=x-gbk"),
    ("shift_jis", "?meta=windows-31j"),
    ("euc-kr", "?header=ks_c_5601-1987"),
    ("big5", "?header=x-x-big5"),
]


@pytest.mark.parametrize(("name", "query"), FETCHED)
async def test_fetched_legacy_pages_extract_the_original_text(name: str, query: str) -> None:
    text = BY_NAME[name]
    job = build(Job, {"fields": FIELDS})
    cfg = fetch_config()
    with hostile_web() as (web, _hostile):
        LegacySite().install(web)
        async with fetcher() as client:
            processor = PageProcessor(client, job, cfg, LinkPipeline(job, cfg, DomainCounts()))
            target = url(web, "cjk.test", f"/legacy/{name}{query}")
            result = (await processor.process(PageTask(target, fingerprint(target), 0))).result
        served = [(e.path, e.status) for e in web.entries()]
    assert served == [(f"/legacy/{name}{query}", 200)]
    assert result is not None and result.error is None, result
    # Field by field, the very Unicode text the page was written in.
    assert result.data == text.fields()
