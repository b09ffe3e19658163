"""Encodings: files written in the test in each encoding decode right.

Each sample is a realistic paragraph (the detector needs some text:
docs/ingestion.md gives the sizes that work).
"""

from __future__ import annotations

import time

import pytest

from kgrag.errors import ConfigError, LoaderError
from kgrag.ingest.encoding import SAMPLE_BYTES, decode_bytes
from kgrag.ingest.loaders import load_file
from kgrag.ingest.options import LoadOptions

ZH = (
    "北京是中华人民共和国的首都，也是全国的政治、文化和国际交往中心。这座城市有三千多年的建城史和"
    "八百多年的建都史。故宫、天坛和长城等名胜古迹吸引了世界各地的游客。近年来，北京在科技创新和城市"
    "建设方面取得了很大的进步。"
)
ZH_TW = (
    "臺灣是一個位於東亞的島嶼，四面環海，氣候溫暖潮濕。臺北是最大的城市，擁有許多著名的景點，例如"
    "故宮博物院和臺北一百零一大樓。這裡的夜市非常熱鬧，吸引了很多觀光客前來品嚐各種傳統小吃。"
)
JA = (
    "東京は日本の首都であり、世界でも有数の大都市です。多くの人々が毎日電車で通勤しています。春には"
    "桜が咲き、公園は花見を楽しむ人々でにぎわいます。伝統的な寺院と近代的な高層ビルが共存する街並みは、"
    "訪れる人々を魅了しています。"
)
KO = (
    "서울은 대한민국의 수도이며 가장 큰 도시입니다. 한강이 도시의 중심을 흐르고 있으며, 많은 사람들이 "
    "강변 공원에서 여가를 즐깁니다. 경복궁과 같은 역사적인 궁궐과 현대적인 건물이 함께 어우러져 독특한 "
    "풍경을 만들어 냅니다."
)
FR = (
    "Le château se dressait au-dessus du village, entouré de forêts épaisses. Les habitants "
    "racontaient que l'été, on entendait encore les chants des anciens maîtres. Élise, la fille "
    "du boulanger, rêvait de découvrir ses secrets — mais son père lui répétait: « Ne t'approche "
    "pas de ces murs, ma chérie ». Déjà, à l'aube, elle préparait son départ."
)
DE = (
    "Die Straße führte über die Brücke zum Marktplatz, wo die Bäuerinnen Äpfel, Birnen und "
    "frisches Gemüse verkauften. Der alte Müller grüßte jeden Vorübergehenden freundlich und "
    "erzählte Geschichten über die Überschwemmung vor vielen Jahren."
)
ES = (
    "El niño corrió hacia la estación mientras su madre, preocupada, lo llamaba desde la ventana. "
    "¿Adónde vas tan temprano? preguntó. El pequeño respondió que quería ver el tren que llegaba "
    "de Córdoba, porque su abuelo venía a pasar el verano con ellos en la montaña."
)
PT = (
    "A população da região aumentou nos últimos anos, e as autoridades locais começaram a "
    "construir novas escolas e hospitais. O governador afirmou que a educação é a prioridade, mas "
    "muitos cidadãos estão preocupados com a falta de água durante o verão e com a poluição dos rios."
)
# GB18030 beyond GBK: 𠮷 (U+20BB7) and ㊣ are four-byte sequences.
ZH_18030 = ZH + "“𠮷野家”的招牌上写着㊣字。"

CASES = [
    ("gbk", ZH),
    ("gb18030", ZH_18030),
    ("big5", ZH_TW),
    ("shift_jis", JA),
    ("euc_kr", KO),
    ("cp1252", FR),
    ("cp1252", DE),
    ("latin-1", DE),
    ("latin-1", ES),
    ("utf-8", ZH + FR),
    ("utf-8-sig", JA),
    ("utf-16", KO),
    ("utf-16-le", FR),
    ("utf-16-be", ZH),  # "utf-16": with a BOM
    ("utf-32", DE),
    ("utf-32-le", JA),
    ("utf-32-be", FR),
]


@pytest.mark.parametrize("encoding, text", CASES, ids=[f"{e}-{t[:3]}" for e, t in CASES])
def test_each_encoding_decodes_right(tmp_path, encoding, text):
    p = tmp_path / "doc.txt"
    p.write_bytes(text.encode(encoding))
    doc = load_file(p)
    assert doc.content == text


@pytest.mark.parametrize("encoding, text", [("utf-16-le", FR), ("utf-32-be", JA)])
def test_utf16_32_without_bom_are_not_taken_for_binary(encoding, text):
    data = text.encode(encoding)
    assert b"\x00" in data
    assert decode_bytes(data).text == text


def test_gbk_is_read_as_its_superset_gb18030():
    assert decode_bytes(ZH.encode("gbk")).encoding == "gb18030"


def test_uncertain_guess_is_decoded_and_named_in_a_warning(tmp_path):
    # Portuguese in cp1252 reads the same in cp1250 up to ã/õ: the detector cannot tell.
    p = tmp_path / "pt.txt"
    p.write_bytes(PT.encode("cp1252"))
    doc = load_file(p)
    assert doc.content == PT
    assert doc.warnings and doc.warnings[0].startswith("encoding not certain; read as cp1252")


def test_clear_cases_carry_no_warning():
    for encoding, text in [("gbk", ZH), ("shift_jis", JA), ("cp1252", DE), ("utf-16-le", FR)]:
        assert decode_bytes(text.encode(encoding)).warnings == []


def test_override_encoding_is_used(tmp_path):
    p = tmp_path / "ru.txt"
    text = "Москва является столицей России и крупнейшим городом страны."
    p.write_bytes(text.encode("koi8_r"))
    doc = load_file(p, LoadOptions(encoding="KOI8-R"))
    assert doc.content == text and doc.warnings == []


def test_override_that_does_not_fit_replaces_and_warns():
    decoded = decode_bytes("中文".encode("gbk") + b"\xff", override="utf-8")
    assert "\ufffd" in decoded.text
    assert "not valid utf-8" in decoded.warnings[0]


def test_bom_wins_over_the_override():
    assert decode_bytes(("\ufeff" + FR).encode("utf-16-le"), override="cp1252").text == FR


@pytest.mark.parametrize("name", ["no-such-codec", "base64"])
def test_unknown_or_non_text_codec_is_a_config_error(name):
    with pytest.raises(ConfigError, match=name):
        LoadOptions(encoding=name)


def test_settings_build_load_options():
    from kgrag.config.settings import Settings

    options = LoadOptions.from_settings(Settings(input_encoding="latin1", follow_symlinks=True))
    assert options.encoding == "iso8859-1" and options.follow_symlinks
    with pytest.raises(ConfigError):
        LoadOptions.from_settings(Settings(input_encoding="klingon"))


def _page(charset_tag: str, body: str) -> str:
    return f"<html><head>{charset_tag}<title>T</title></head><body><p>{body}</p></body></html>"


@pytest.mark.parametrize(
    "tag, encoding",
    [
        ('<meta charset="shift_jis">', "shift_jis"),
        ('<meta http-equiv="Content-Type" content="text/html; charset=GBK">', "gbk"),
        ("<META CHARSET='big5'>", "big5"),
        ('<meta charset="iso-8859-1">', "cp1252"),  # read as windows-1252, as browsers do
    ],
)
def test_html_declared_charset_is_honoured(tmp_path, tag, encoding):
    body = {"shift_jis": "東京", "gbk": "北京", "big5": "臺北", "cp1252": "naïve “quote”"}[encoding]
    p = tmp_path / "page.html"
    p.write_bytes(_page(tag, body).encode(encoding))  # too short to detect: the tag decides
    doc = load_file(p)
    assert doc.content == f"T\n\n{body}" and doc.warnings == []


def test_html_declared_charset_that_does_not_fit_is_detected_with_a_warning(tmp_path):
    p = tmp_path / "page.html"
    p.write_bytes(_page('<meta charset="utf-8">', ZH).encode("gbk"))
    doc = load_file(p)
    assert doc.content == f"T\n\n{ZH}"
    assert "declared charset 'utf-8' does not fit" in doc.warnings[0]


def test_random_bytes_with_a_text_suffix_are_binary(tmp_path):
    p = tmp_path / "noise.txt"
    p.write_bytes(bytes((i * 97 + 13) % 256 for i in range(4000)))
    with pytest.raises(LoaderError, match="binary"):
        load_file(p)


def test_big_file_is_detected_from_a_sample_quickly():
    data = ("ASCII header line\n" * 20000 + ZH + "\n").encode("gbk")
    data += (ZH + "\n").encode("gbk") * (10 * 1024 * 1024 // len(ZH.encode("gbk")))
    assert len(data) > 10 * SAMPLE_BYTES
    started = time.perf_counter()
    decoded = decode_bytes(data)
    elapsed = time.perf_counter() - started
    assert decoded.encoding == "gb18030" and decoded.text.endswith(ZH + "\n")
    assert elapsed < 3, f"{elapsed:.2f} s for {len(data) / 2**20:.0f} MiB"


def test_utf8_log_with_one_cp1252_line_stays_utf8_with_a_warning():
    good = "2024-05-01 INFO démarrage du service à Zürich\n" * 50
    data = good.encode() + "ligne écrite en cp1252: café\n".encode("cp1252") + good.encode()
    decoded = decode_bytes(data)
    assert decoded.text.startswith(good) and decoded.text.endswith(good)
    assert decoded.warnings == ["mostly utf-8; 2 undecodable byte sequence(s) replaced with U+FFFD"]


def test_big_ascii_file_with_its_only_legacy_text_at_the_end():
    data = b"plain ascii line of a long log\n" * 40000 + (FR + "\n").encode("cp1252")
    assert len(data) > 8 * SAMPLE_BYTES
    assert decode_bytes(data).text.endswith(FR + "\n")
