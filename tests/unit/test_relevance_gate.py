"""The relevance gate's parts, with made-up counts and cosines (no model, no store)."""

import itertools

import pytest

from contextls.core.items import Item
from contextls.search import relevance
from contextls.search.relevance import Gate, meaning_floor, telling_terms, words_of
from contextls.storage.search_index import name_words

_ids = itertools.count(1)


def _item(content: str, label_path: str = "") -> Item:
    metadata = {"path": label_path} if label_path else {}
    return Item(f"ctx-{next(_ids)}", "code", content, metadata, 0, 5)


def _words(
    query: str, counts: dict[str, int], documents: int = 1000, prefixes: str = ""
) -> relevance.Words:
    return words_of(
        query,
        documents,
        lambda terms: {term: counts.get(term, 0) for term in terms},
        lambda stem: any(stem == known for known in prefixes.split()),
    )


def test_telling_terms_fold_case_and_diacritics_split_identifiers_and_drop_stop_words() -> None:
    assert telling_terms("Where do we retry the _backoff_put? Café") == (
        "retry",
        "backoff",
        "put",
        "cafe",
    )
    assert telling_terms("how to do it") == ()


def test_a_rare_word_weighs_more_than_a_common_one() -> None:
    words = _words("retry upload", {"retry": 3, "upload": 600})
    assert words.weights["retry"] > 3 * words.weights["upload"]
    assert words.unknown == 0.0
    assert words.share(_item("def f():\n    retry()\n")) > 0.75
    assert words.share(_item("upload(x)")) < 0.25


def test_words_are_matched_whole_not_inside_other_words() -> None:
    words = _words("ok", {"ok": 40})
    assert words.share(_item("tokens = broken")) == 0.0
    assert words.share(_item("if ok:\n    return_ok = 1")) == 1.0


def test_the_label_counts_as_the_items_words() -> None:
    words = _words("backoff", {"backoff": 1})
    assert words.share(_item("pass", label_path="src/backoff.py")) == 1.0


def test_words_no_item_holds_are_unknown_unless_a_longer_form_is_known() -> None:
    words = _words("spices curry", {"curry": 2})
    assert words.unknown == 0.5
    plural = _words("spices curry", {"curry": 2}, prefixes="spic")
    assert plural.unknown == 0.0
    assert _words("how to do it", {}).unknown == 1.0


def test_the_meaning_floor_grows_with_the_vectors_searched_and_mostly_unknown_words() -> None:
    assert meaning_floor(1, 0.0) == meaning_floor(relevance.FEWEST_ROWS, 0.0)
    assert meaning_floor(100, 0.0) < meaning_floor(5_000, 0.0) < meaning_floor(100_000, 0.0)
    # A paraphrase's word or two that code never uses ("web address") costs nothing...
    assert meaning_floor(5_000, relevance.UNKNOWN_FREE) == meaning_floor(5_000, 0.0)
    # ...a question whose words are mostly unknown to the archive (recipes) pays.
    assert meaning_floor(5_000, 1.0) == pytest.approx(
        meaning_floor(5_000, 0.0) + relevance.MEANING_UNKNOWN * (1 - relevance.UNKNOWN_FREE)
    )


def test_a_query_below_the_meaning_floor_finds_nothing_by_meaning() -> None:
    words = _words("banana bread", {})
    item = _item("def bake(): pass")
    low = Gate(words, best=0.30, rows=5_000)
    assert not low.answers_by_meaning
    assert low.evidence(item, 0.30) == ()
    high = Gate(_words("bake", {"bake": 1}), best=0.60, rows=5_000)
    assert high.answers_by_meaning
    assert "semantic" in high.evidence(item, 0.55)
    assert "semantic" not in high.evidence(item, 0.60 - relevance.MEANING_SPREAD - 0.01)


def test_words_evidence_needs_the_words_and_a_meaning_that_does_not_contradict_them() -> None:
    words = _words("ok", {"ok": 40})
    item = _item("if ok: pass")
    assert Gate(words).evidence(item, None) == ("keyword",)  # no search by meaning here
    with_meaning = Gate(words, best=0.2, rows=5_000)
    assert with_meaning.evidence(item, relevance.WORDS_AGREE) == ("keyword",)
    assert with_meaning.evidence(item, relevance.WORDS_AGREE - 0.01) == ()
    assert Gate(words).evidence(_item("nothing here"), None) == ()


def test_a_snake_case_name_is_held_whole_not_as_its_words_anywhere() -> None:
    words = _words("get_close_matches", {"get": 900, "close": 300, "matches": 40})
    assert words.share(_item("def get_close_matches(word, possibilities): ...")) == 1.0
    assert words.share(_item("get the matches, then close the file")) == 0.0
    assert words.for_keyword_search(1000) == "get_close_matches"


def test_a_word_inside_a_camel_case_name_is_held() -> None:
    words = _words("weekend", {"weekend": 1})
    assert words.share(_item("export function isWeekend(date) { return false; }")) == 1.0
    assert words.share(_item("export function isWeekday(date) { return false; }")) == 0.0


def test_a_name_the_item_defines_or_calls_needs_no_agreeing_meaning() -> None:
    # One word against a whole module: its cosine says nothing (0.09 for urllib/parse.py
    # against "quote"), the definition says it all.
    words = _words("quote", {"quote": 2})
    gate = Gate(words, best=0.1, rows=5_000)
    defines = _item("def quote(string, safe='/'):\n    return string\n")
    assert gate.evidence(defines, 0.05) == ("keyword",)
    calls = _item("path = quote(path)\n")
    assert gate.evidence(calls, 0.05) == ("keyword",)
    prose = _item("a quote from the manual, set in italics")
    assert gate.evidence(prose, 0.05) == ()


@pytest.mark.parametrize(
    ("text", "word", "inside"),
    [
        ("function isWeekend(d)", "weekend", True),
        ("XMLHttpRequest", "http", True),
        ("getURLParts", "url", True),
        ("base64Encode", "base", True),
        ("weekend", "end", False),  # not a word of the name
        ("isweekend", "weekend", False),  # no case to split at
        ("sendEmail", "mail", False),
    ],
)
def test_a_word_is_inside_a_name_as_the_keyword_index_splits_it(
    text: str, word: str, inside: bool
) -> None:
    assert relevance.inside_a_name(text, word) is inside
    assert (word in name_words(text)) is inside


def test_a_long_query_is_searched_by_its_first_telling_words() -> None:
    words = [f"word{n}" for n in range(relevance.QUERY_TERMS + 30)]
    # Stop words and repeats are not telling words: they do not count towards the bound.
    query = " the ".join(words[:10]) + " " + " ".join(words[:10] + words[10:])
    kept, left_out = relevance.bounded(query)
    assert telling_terms(kept) == tuple(words[: relevance.QUERY_TERMS])
    assert left_out == 30
    assert query.startswith(kept)
    short = "where do we retry the uploads"
    assert relevance.bounded(short) == (short, 0)
