"""The languages kgrag writes descriptions, summaries and keywords in (``KGRAG_LANGUAGE``).

The language is put into the extraction, summary and keyword prompts by
name (``Write descriptions and keywords in German``), so it must be a
language a model knows by that name, and the multilingual local embedder
(e5-small, trained on the ~100 languages of XLM-R) must cover it. These
are those languages. A setting names one by its English name, its ISO
639-1 code or, for the most used ones, its own name, in any case
(``german``, ``de``, ``Deutsch``); it is stored under its English name.
Anything else (a typo, ``Klingon``) is a configuration error listing
them.
"""

from __future__ import annotations

# English name, ISO 639-1 code, other names it is known by
_TABLE: tuple[tuple[str, ...], ...] = (
    ("Afrikaans", "af"),
    ("Albanian", "sq", "shqip"),
    ("Amharic", "am"),
    ("Arabic", "ar", "العربية"),
    ("Armenian", "hy"),
    ("Assamese", "as"),
    ("Azerbaijani", "az"),
    ("Basque", "eu", "euskara"),
    ("Belarusian", "be"),
    ("Bengali", "bn", "bangla", "বাংলা"),
    ("Bosnian", "bs"),
    ("Breton", "br"),
    ("Bulgarian", "bg", "български"),
    ("Burmese", "my"),
    ("Catalan", "ca", "català"),
    ("Chinese", "zh", "中文", "汉语", "漢語", "mandarin"),
    ("Simplified Chinese", "zh-hans", "zh-cn", "简体中文"),
    ("Traditional Chinese", "zh-hant", "zh-tw", "繁體中文"),
    ("Croatian", "hr", "hrvatski"),
    ("Czech", "cs", "čeština"),
    ("Danish", "da", "dansk"),
    ("Dutch", "nl", "nederlands"),
    ("English", "en", "eng"),
    ("Esperanto", "eo"),
    ("Estonian", "et", "eesti"),
    ("Filipino", "tl", "tagalog"),
    ("Finnish", "fi", "suomi"),
    ("French", "fr", "français", "francais"),
    ("Galician", "gl", "galego"),
    ("Georgian", "ka"),
    ("German", "de", "deutsch"),
    ("Greek", "el", "ελληνικά"),
    ("Gujarati", "gu"),
    ("Hausa", "ha"),
    ("Hebrew", "he", "עברית"),
    ("Hindi", "hi", "हिन्दी"),
    ("Hungarian", "hu", "magyar"),
    ("Icelandic", "is", "íslenska"),
    ("Indonesian", "id", "bahasa indonesia"),
    ("Irish", "ga", "gaeilge"),
    ("Italian", "it", "italiano"),
    ("Japanese", "ja", "日本語"),
    ("Javanese", "jv"),
    ("Kannada", "kn"),
    ("Kazakh", "kk"),
    ("Khmer", "km"),
    ("Korean", "ko", "한국어"),
    ("Kurdish", "ku"),
    ("Kyrgyz", "ky"),
    ("Lao", "lo"),
    ("Latin", "la"),
    ("Latvian", "lv", "latviešu"),
    ("Lithuanian", "lt", "lietuvių"),
    ("Macedonian", "mk"),
    ("Malagasy", "mg"),
    ("Malay", "ms", "bahasa melayu"),
    ("Malayalam", "ml"),
    ("Marathi", "mr"),
    ("Mongolian", "mn"),
    ("Nepali", "ne"),
    ("Norwegian", "no", "norsk", "nb", "bokmål"),
    ("Oriya", "or", "odia"),
    ("Oromo", "om"),
    ("Pashto", "ps"),
    ("Persian", "fa", "farsi", "فارسی"),
    ("Polish", "pl", "polski"),
    ("Portuguese", "pt", "português", "portugues"),
    ("Punjabi", "pa"),
    ("Romanian", "ro", "română"),
    ("Russian", "ru", "русский"),
    ("Sanskrit", "sa"),
    ("Scottish Gaelic", "gd"),
    ("Serbian", "sr", "српски", "srpski"),
    ("Sindhi", "sd"),
    ("Sinhala", "si"),
    ("Slovak", "sk", "slovenčina"),
    ("Slovenian", "sl", "slovenščina"),
    ("Somali", "so"),
    ("Spanish", "es", "español", "espanol"),
    ("Sundanese", "su"),
    ("Swahili", "sw", "kiswahili"),
    ("Swedish", "sv", "svenska"),
    ("Tamil", "ta", "தமிழ்"),
    ("Telugu", "te"),
    ("Thai", "th", "ไทย"),
    ("Turkish", "tr", "türkçe"),
    ("Ukrainian", "uk", "українська"),
    ("Urdu", "ur", "اردو"),
    ("Uyghur", "ug"),
    ("Uzbek", "uz"),
    ("Vietnamese", "vi", "tiếng việt"),
    ("Welsh", "cy", "cymraeg"),
    ("Western Frisian", "fy", "frisian"),
    ("Xhosa", "xh"),
    ("Yiddish", "yi"),
)
NAMES: tuple[str, ...] = tuple(row[0] for row in _TABLE)
_BY_KEY: dict[str, str] = {key.casefold(): row[0] for row in _TABLE for key in row}


def canonical(value: str) -> str | None:
    """The English name of the language ``value`` names (any case, code or own name), or None."""
    key = " ".join(value.replace("_", "-").split()).casefold()
    return _BY_KEY.get(key)


def check(value: str) -> str:
    """``value``'s English name; a ValueError listing the known languages when it names none."""
    name = canonical(value)
    if name is None:
        raise ValueError(
            "not a language kgrag knows; known: "
            + ", ".join(NAMES)
            + " (or the ISO 639-1 code, e.g. 'de')"
        )
    return name
