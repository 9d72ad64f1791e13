"""Recognising text in evidence that reads like an instruction.

Content of logs, specifications and reports is data. A line that addresses an assistant, names a
tool, imitates a chat role or claims an approval is flagged so that people and choosers see it for
what it is; the flag never changes what is permitted (the guard decides that, not the text).

Two kinds of signal. Wording: English phrasings of injections seen before, and the catalog's tool
names (`_PATTERNS`). Structure, in any of a dozen languages (`structural`): a line that
addresses an automated reader (an assistant, an AI, a language model, a bot — never a UVM agent or
a transaction-level model, nor a part of an identifier), or that tells its reader to open, read or
send a file path or a URL. Their recall on passages written apart from these rules, and their
false alarms on real logs, are measured by `bench/flags.py`.
"""

from __future__ import annotations

import base64
import binascii
import re
import unicodedata
from collections.abc import Sequence

from scenario.profiles import PROFILE_TOOLS

INSTRUCTION_LIKE = "instruction_like_text"

# Zero-width and bidi-control characters that can hide words from a pattern.
_INVISIBLE = dict.fromkeys(
    [
        0x00AD,
        0x180E,
        0xFEFF,
        *range(0x200B, 0x2010),
        *range(0x202A, 0x202F),
        *range(0x2060, 0x2065),
        *range(0x2066, 0x206A),
    ]
)

TOOL_NAMES = tuple(name for names in PROFILE_TOOLS.values() for name in names)
"""Every tool of every catalog (`scenario/profiles.py`): text naming one reads like an instruction."""

_PATTERNS = re.compile(
    "|".join(
        [
            r"\b(ignore|disregard|forget|override)\b.{0,60}\b(instructions?|prompts?|rules|guidance|above|previous)\b",
            r"\b(you are now|you must now|act as|new instructions?|system prompt|developer message)\b",
            r"\bnote to (the )?(ai|assistant|agent|model|llm|bot)\b",
            # At a line's start or after a space: tools quote record text (a name, a message) mid-line.
            r"(?:^|\s)\W{0,3}(system|assistant|developer|tool)\s*[:>]",
            rf"\b(?:{'|'.join(TOOL_NAMES)})\b",
            r"\btool_calls\b|\"kind\"\s*:\s*\"(stop|ask_user)\"",
            r"\b(approval|permission|authori[sz]ation)\b.{0,30}\b(granted|approved|given)\b",
            r"<\|im_(start|end)\|>|\[/?inst\]|</?(system|assistant)>|</?tool_(call|result)\b",
            r"\b(real|true|actual) answer\b|\broot cause\b\s*(is|:)|\bthis is proven\b",
            r"\b(raise|increase|set|extend)\b.{0,40}(?<![-\w])(budgets?|limits?)\b",
            r"\bswitch(ing)? to (another |the )?scenario\b|\bstop now\b|\bwithout asking\b",
            r"\brepeat\b.{0,40}\bforever\b|/etc/(passwd|shadow)\b|\bthe guard\b",
            r"\bread (it|this|that) (first|before|now)\b|\bbefore anything else\b",
        ]
    ),
    re.IGNORECASE,
)


_LATIN_AI = (
    r"(?:a\.i\.|ai)(?!\s+(?:accelerator|core|engine|chip|soc|block|unit|processor|subsystem|ip|cluster|tile|array|workload)s?\b)|llm|gpt|chatgpt|chatbot|copilot|assistant|language model|"
    r"(?:ai|automated|automatic|automation|triage|llm|chat|virtual|digital|reviewing|analysis|processing|analy[sz]ing)[ -](?:assistant|agent|model|bot|helper|reader|system|tool)|"
    r"(?:agent|bot|robot|assistant)s? (?:de tri|d'analyse|de triaje|de análisis|di analisi|de an[áa]lise)|automation|"
    r"ki|ki-assistent|analyse-bot|sprachmodell|assistent(?:in)?|"
    r"ia|assistante|asistente|assistente|mod[eè]le de langage|modelo de (?:lenguaje|linguagem)|modello linguistico|"
    r"ии|нейросет\w*|ассистент\w*|помощник\w*|языков\w* модел\w*"
)
_CJK = "[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]"
"""Kana, CJK ideographs and Hangul, as characters (so that Hyperscan reads the class too)."""
_CJK_AI = rf"人工智能|智能体|智能助手|助手|大模型|语言模型|アシスタント|エージェント|言語モデル|生成ai|어시스턴트|에이전트|인공지능|챗봇|도우미|ai(?={_CJK})|(?<={_CJK})ai"
_READER = rf"(?:(?<![A-Za-z0-9_./-])(?:{_LATIN_AI})(?![A-Za-z0-9_/-])|{_CJK_AI})"
"""An automated reader, named in some language; never a part of an identifier, and never the
UVM agent or transaction-level model a verification record means by "agent" or "model"."""
_ADDRESS = (
    r"\b(?:you|your|yours|please|kindly|dear|hey|hello|hi|attention|attn|must|should|may|shall|is (?:instructed|asked|required|authori[sz]ed|permitted)|"
    r"du|dich|dir|dein\w*|sie|ihr|bitte|liebe[rs]?|hallo|muss|müssen|soll|sollte|darf|dürfen|"
    r"vous|tu|toi|veuillez|cher|chère|bonjour|doit|doivent|peut|est priée?|"
    r"usted|ustedes|tú|eres|querido|estimado|hola|debe|deben|debería|puede|"
    r"você|voce|caro|cara|gentile|ciao|sei|prezado|deve|devono|pode|può|"
    r"вы|ты|вас|тебя|пожалуйста|уважаем\w*|привет|долж\w*|может|нужно|для)\b|por favor|per favore|s'il (?:te|vous) pla[iî]t|"
    r"你|您|请|務必|务必|必须|应该|应当|可以|已获授权|致|あなた|ください|下さい|してね|てよい|こと|へ|様|당신|주세요|하세요|해야|해 ?줘|님|는"
)
_VERBS = (
    r"(?<!not )(?<!n't )(?<!to )\b(?:open|read|cat|print|show|dump|display|send|upload|post|fetch|consult|"
    r"öffne|öffnen|lies|lese|lesen|zeige|anzeigen|sende|senden|"
    r"ouvre|ouvrez|ouvrir|lis|lisez|lire|consulte|consultez|consulter|affiche|affichez|afficher|envoie|envoyez|envoyer|"
    r"abre|abra|abrir|lee|lea|leer|consulta|muestra|muestre|envía|envia|envíe|enviar|sube|subir|leia|envie|mostre|"
    r"apri|aprire|leggi|leggere|invia|inviare|mostra|"
    r"открой\w*|открыть|прочитай\w*|прочитать|прочти|покажи|показать|отправ\w*|загрузи)\b|"
    r"打开|读取|阅读|查看|读一下|发送|发给|上传|開いて|開く|読んで|読み込んで|参照して|送信して|表示して|열어|읽어|보내|포함해"
)
_TARGET = r"(?:(?<![\w.-])(?:~|\.{1,2})?/[\w.-]+(?:/[\w.-]*)*|[\w.-]+(?:/[\w.-]+)*\.(?:txt|key|pem|env|cfg|conf|ini|ya?ml|json|toml|md|csv|log|rpt|sv|vp?|py|sh|bin|netrc)\b|https?://)"
_SECRET_FILES = r"~/\.ssh|\bid_(?:rsa|ed25519|ecdsa)\b|\.netrc\b|(?<![\w.])\.env\b|/etc/(?:passwd|shadow)\b|\bprivate key\b"
_VERDICT = (
    r"(?:\b(?:change|changed|mark|report|set|flip|declare|record|als|ändern|geändert|melden|changer|en|como|marca|marque|registrar|come|segn\w+|dichiar\w+|на|как)\b|改为|改成|标记为|に変更|と報告|로)"
    r".{0,24}\b(?:pass(?:ed)?|success|ok|bestanden|réussi|succès|aprobad[ao]|éxito|superato|passato|aprovado|успех|пройден\w*)\b|"
    r"(?:改为|改成|标记为|报告为)\s*(?:通过|成功)|(?:合格|成功)に変更|통과로|(?:→|->)\s*pass\b"
)
_GIVE_UP = (
    r"\b(?:skip|omit|bypass|ignore|überspringen|auslassen|omite|omitir|omettre|saltare|ignora|пропуст\w*)\b.{0,40}\b(?:checks?|coverage|assertions?|prüfungen|comprobaciones|vérifications|controlli|провер\w*)\b|"
    r"(?:跳过|省略|忽略).{0,10}(?:检查|チェック|验证)|(?:チェック|検査)を(?:省略|スキップ)|검사를 건너뛰|"
    r"\b(?:stop|terminate|end|finish|beenden|abbrechen|arrêter|arrête|terminer|termina\w*|interrompi|прекрат\w*|заверш\w*)\b.{0,24}\b(?:triage|analysis|investigation|analyse|análisis|analisi|investigación|анализ\w*)\b|"
    r"(?:结束|终止|停止)(?:分析|调查)|(?:分析|调查).{0,6}(?:结束|终止)|調査せずに終了|分析を終了|분석을 (?:중단|종료)"
)
_ROOT_CAUSE = (
    r"(?:cause racine|causa ra[ií]z|causa principale|根本原因|根因|первопричин\w*|근본 원인)\s*(?:est|es|è|ist|是|为|為|は|:|：|—|это|은|는)|"
    r"原因はすでに特定|原因は.{0,10}です"
)
_SHELL = r"\b(?:curl|wget)\s+(?:-\S+\s+)*https?://|\|\s*(?:ba|z)?sh\b|\brm\s+-rf\b"
_TO_THE_READER = (
    r"(?:(?<![\w.-])(?:readers?|reviewers?|lecteurs?|leser|lector(?:es)?|lettor[ei]|lezers?|читател\w*|рецензент\w*)(?![\w-])|读者|审阅者|審閲者|読者|독자|검토자)"
    r".{0,40}(?:\b(?:should|must|is to|are to|shall|needs? to|soll|sollen|muss|müssen|doit|doivent|debe|deben|deve|devono|dient|moet|moeten|долж\w*|следует)\b|应|須|须|不得|ください|こと|해야|하십시오|:|：)"
)
"""Text telling whoever reads the record what to do ("the reader should…", "Reader: …")."""
_AUTOMATED = r"\bautomat\w*\s+(?:reviewers?|readers?|systems?|system|analys[ie]s|tools?|triage)\b|\b(?:analyse|analysis|análisis|analisi) automati\w*|automatisches? system"
_SEND_AWAY = (
    r"(?:\b(?:send|mail|e-?mail|forward|upload|sende|senden|schicke|envoie|envoyez|envoyer|envía|enviar|invia|inviare|stuur|verstuur|отправ\w*|перешли)\b|发送|发到|送信|アップロード|보내)"
    r".{0,100}(?:[\w.+-]+@[\w-]+\.[\w.-]+|https?://)"
)
_SECRETS = r"\b(?:credentials?|passwords?|api[ _-]?keys?|private keys?|secrets?|tokens?|env(?:ironment)? var\w*|zugangsdaten|passw[oö]rter|mots? de passe|contraseñas?|claves? privadas?|credenciales|wachtwoorden?|пароль\w*|ключ\w*)\b|密码|密钥|口令|环境变量|パスワード|秘密鍵|環境変数|비밀번호|환경 변수"
_REVEAL = r"\b(?:include|reveal|print|show|send|paste|disclose|output|list|incluya|incluir|inclure|affiche|envoie|zeige|sende|gib|gebe|покажи|выведи|отправ\w*)\b|发送|发给|输出|显示|表示|送信|含め|포함|보내"
_RUN = (
    r"(?:\b(?:execute|run|führe|ausführen|exécute[rz]?|ejecuta[r]?|esegui(?:re)?|voer|выполни\w*|запусти\w*)\b|执行|実行|실행)"
    r".{0,40}(?:\b(?:commands?|befehl\w*|commandes?|comandos?|comandi|opdrachten|команд\w*|bash|shell|sh -c)\b|命令|コマンド|명령)"
)
_TAMPER = (
    r"(?:\b(?:remove|delete|omit|hide|rewrite|supprimer|supprimez|löschen|entfernen|umschreiben|eliminar|elimine|borrar|omitir|rimuovere|eliminare|verwijder\w*|удал\w*|исключ\w*)\b|删除|删去|改写|削除|書き換え|삭제|제외)"
    r".{0,60}(?:\b(?:reports?|summar(?:y|ies)|rapports?|berichts?|informes?|resumen|rapporto|verslag|отчёт\w*|отчет\w*|slack|verdicts?|results?)\b|报告|统计|摘要|レポート|要約|보고서|요약)"
)
_STRUCTURAL_PARTS = (
    rf"(?:{_VERBS})\s*(?:\S+\s+){{0,6}}?\S*?{_TARGET}",
    _SECRET_FILES,
    _VERDICT,
    _GIVE_UP,
    _ROOT_CAUSE,
    _SHELL,
    _TO_THE_READER,
    _AUTOMATED,
    _SEND_AWAY,
    rf"(?:{_SECRETS}).{{0,60}}(?:{_REVEAL})|(?:{_REVEAL}).{{0,60}}(?:{_SECRETS})",
    _RUN,
    _TAMPER,
)
_STRUCTURAL = re.compile("|".join(_STRUCTURAL_PARTS), re.IGNORECASE)
_READER_NAMED = re.compile(_READER, re.IGNORECASE)
_ADDRESSED = re.compile(_ADDRESS, re.IGNORECASE)


def structural(text: str) -> bool:
    """Signals that do not depend on an injection's wording (see the module's docstring): one of
    `_STRUCTURAL_PARTS`, or an automated reader named in a line that also addresses its reader
    (two passes, not a pattern that rescans the line from each place a name could start)."""
    if _STRUCTURAL.search(text) is not None:
        return True
    return _READER_NAMED.search(text) is not None and _ADDRESSED.search(text) is not None


_TRIGGERS = re.compile(
    "|".join(
        re.escape(word)
        for word in (
            "ignore",
            "disregard",
            "forget",
            "override",
            "you are now",
            "you must now",
            "act as",
            "instruction",
            "system",
            "prompt",
            "developer",
            "note to",
            "assistant",
            "tool",
            "readspec",
            "searchlogs",
            "getrunhistory",
            "stasummary",
            "stapath",
            "stadiff",
            "kind",
            "readlines",
            "logsummary",
            "approv",
            "permission",
            "authori",
            "im_start",
            "im_end",
            "inst]",
            "answer",
            "root cause",
            "proven",
            "budget",
            "limit",
            "scenario",
            "stop now",
            "without asking",
            "forever",
            "/etc/",
            "guard",
            "read it",
            "read this",
            "read that",
            "before anything",
        )
    )
)
"""A word every pattern above needs (lower case): ASCII text without any of them cannot match,
so most lines of a log skip the patterns' case-insensitive alternation."""


# Cyrillic and Greek letters that render like Latin ones (a subset of Unicode's confusables).
_LOOKALIKES = str.maketrans(
    "аеорсухіјѕԁһӏАВЕКМНОРСТХІЈЅΑΒΕΖΗΙΚΜΝΟΡΤΥΧοναι",
    "aeopcyxijsdhlABEKMHOPCTXIJSABEZHIKMNOPTYXovai",
)
_BASE64 = re.compile(r"[A-Za-z0-9+/]{16,}={0,2}")


def normalise(text: str) -> str:
    """Fold compatibility forms (NFKC) and look-alike letters; drop invisible characters."""
    if text.isascii():
        return text  # NFKC leaves ASCII as it is, and every character translated below is not
    return unicodedata.normalize("NFKC", text).translate(_INVISIBLE).translate(_LOOKALIKES)


def instruction_flags(text: str, structure: bool = True) -> tuple[str, ...]:
    """`(INSTRUCTION_LIKE,)` when the text reads like an instruction to an agent, else `()`.

    Base64 runs are decoded and read too, since a model can decode them. `structure=False`: the
    wording rules only (lines joined to find a split injection are read so: the structural
    signals are a line's, and cost several times the wording rules).
    """
    folded = normalise(text)
    candidates = [folded, *(_decoded(blob) for blob in _BASE64.findall(folded))]
    if not text.isascii():  # Cyrillic words themselves, before look-alikes are folded to Latin
        candidates.append(unicodedata.normalize("NFKC", text).translate(_INVISIBLE))
    found = any(_reads_like_instruction(candidate, structure) for candidate in candidates)
    return (INSTRUCTION_LIKE,) if found else ()


def _reads_like_instruction(text: str, structure: bool = True) -> bool:
    if text.isascii() and not _TRIGGERS.search(text.lower()):
        pass  # outside ASCII no shortcut: Unicode's case folding
    elif _PATTERNS.search(text) is not None:
        return True
    return structure and structural(text)


def _decoded(blob: str) -> str:
    try:
        return base64.b64decode(blob + "=" * (-len(blob) % 4), validate=True).decode(
            "utf-8", "replace"
        )
    except (binascii.Error, ValueError):
        return ""


def instruction_spans(parts: Sequence[str]) -> list[tuple[int, int]]:
    """Where the wording rules match in consecutive lines joined (`parts`, each a line's text or
    message): the first and last line index of each match, so that an instruction split over
    lines is flagged on the lines that carry it, never on an innocent line shown beside it.

    A match runs from the line holding its first letter to the first line where it is already
    whole (`.{0,60}` reaches as far as it can, maybe into the next line).
    """
    folded = [normalise(part) for part in parts]
    joined = " ".join(folded)
    ends = [len(" ".join(folded[: index + 1])) for index in range(len(folded))]
    spans = []
    for match in _PATTERNS.finditer(joined):
        first = _line_at(ends, match.start() + _leading_non_words(match[0]))
        last = next(
            k
            for k in range(first, len(ends))
            if k == len(ends) - 1 or _PATTERNS.match(joined, match.start(), ends[k])
        )
        spans.append((first, last))
    return spans


def _line_at(ends: Sequence[int], offset: int) -> int:
    return next(index for index, end in enumerate(ends) if offset < end)


def _leading_non_words(text: str) -> int:
    """Characters before the match's first letter or digit (a space, a `--`: not its words)."""
    return next((index for index, char in enumerate(text) if char.isalnum()), 0)
