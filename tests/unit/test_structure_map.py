"""The repository map: what the window's code uses ranks first (a known call graph),
and the map never takes more than its share in the model's tokens, on 1,000 files."""

from __future__ import annotations

import pytest

from contextls.app.tokenizers import tokenizer
from contextls.structure.repomap import fit, rank, render, shown
from contextls.structure.tags import FileFacts, facts

APP = """from store import Store
from cache import lru


def main():
    store = Store()
    lru(store.get(1))
"""
STORE = """class Store:
    def get(self, key):
        return self.rows[key]

    def put(self, key, value):
        self.rows[key] = value
"""
CACHE = "def lru(value):\n    return value\n"
UTILS = "def helper(x):\n    return x + 1\n\ndef unused_thing():\n    pass\n"


def graph() -> dict[str, FileFacts]:
    files = {"app.py": APP, "store.py": STORE, "cache.py": CACHE, "utils.py": UTILS}
    for n in range(20):  # a hub the window does not use: many files call helper()
        files[f"noise{n}.py"] = f"from utils import helper\n\ndef n{n}():\n    return helper({n})\n"
    return {path: facts(text, "python") for path, text in files.items()}


def names(ranked: list, count: int) -> list[str]:  # type: ignore[type-arg]
    return [r.symbol.qualified for r in ranked[:count]]


def test_without_a_window_the_hub_ranks_first() -> None:
    assert names(rank(graph()), 1) == ["helper"]


def test_the_definitions_the_window_uses_rank_first() -> None:
    ranked = rank(graph(), focus_files=["app.py"], leave_out=[("app.py", "")])
    assert set(names(ranked, 3)) == {"Store", "Store.get", "lru"}
    assert names(ranked, 4)[3] != "main"  # the window's own file is not listed again
    assert "app.py" not in {r.path for r in ranked}


def test_a_query_ranks_what_it_names_first() -> None:
    ranked = rank(graph(), focus_files=["app.py"], query="where is unused_thing")
    assert names(ranked, 1) == ["unused_thing"]


@pytest.mark.parametrize("limit", [1, 3, 8, 25, 40, 200])
def test_the_best_few_are_the_first_of_them_all(limit: int) -> None:
    """A ranking with a limit scores first what something flows to: the definitions no
    use reaches, placed by their file's rank alone, still come where they belong."""
    files = graph()
    for focus, query in [([], None), (["app.py"], None), (["app.py"], "where is unused_thing")]:
        every = rank(files, focus_files=focus, query=query, leave_out=[("store.py", "Store.put")])
        best = rank(
            files,
            focus_files=focus,
            query=query,
            leave_out=[("store.py", "Store.put")],
            limit=limit,
        )
        assert [(r.path, r.symbol.qualified, r.score) for r in best] == [
            (r.path, r.symbol.qualified, r.score) for r in every[:limit]
        ]
    assert len(every) > 25  # most are definitions nothing uses (n0..n19, main, put)


def test_no_body_is_shown() -> None:
    files = {"a.py": facts("def one(): return 1\n\nclass K:\n    def m(self): pass\n", "python")}
    text = render(rank(files), files)
    assert "return 1" not in text and "pass" not in text
    assert "│def one(): …" in text and "│    def m(self): …" in text


def thousand_files() -> dict[str, FileFacts]:
    """1,000 modules of a package, each calling a few others' functions."""
    files = {}
    for n in range(1000):
        calls = "\n".join(
            f"    m{(n * 7 + k) % 1000}.work_{(n * 7 + k) % 1000}(x)" for k in (1, 2, 3)
        )
        text = (
            f'"""Module {n}."""\nimport m{(n * 7 + 1) % 1000}\n\n\n'
            f"class Service{n}:\n    def work_{n}(self, x):\n        return x * {n}\n\n"
            f"    def other_{n}(self, x):\n{calls}\n\n\n"
            f"def work_{n}(x):\n    return Service{n}().work_{n}(x)\n"
        )
        files[f"pkg/m{n}.py"] = facts(text, "python")
    return files


@pytest.mark.parametrize("share", [128, 1024, 2048, 4096])
def test_the_map_never_exceeds_its_share_on_a_thousand_files(share: int) -> None:
    files = thousand_files()
    count = tokenizer("o200k_base").count
    ranked = rank(files, focus_files=["pkg/m1.py"])
    text, listed = fit(shown(ranked, files), count, share)
    assert count(text) <= share
    assert listed > 0 and count(render(ranked[: listed + 1], files)) > share  # and it is full
    assert "return x *" not in text  # no bodies


def test_no_body_of_a_one_line_definition_in_any_language() -> None:
    sources = {
        "a.go": ("go", "package a\n\nfunc Len() int { return len(x) }\n", "return len"),
        "b.rs": ("rust", "fn one() -> u8 { 1 + 0 }\n", "1 + 0"),
        "c.js": ("javascript", "function f(a) { return a * 2; }\n", "return a"),
        "d.el": ("elisp", "(defun h (x) (+ x 1))\n", "(+ x 1)"),
    }
    for path, (language, text, body) in sources.items():
        files = {path: facts(text, language)}
        shown = render(rank(files), files)
        assert body not in shown and "…" in shown, (path, shown)


def test_uses_brought_up_to_date_file_by_file_are_the_uses_made_anew() -> None:
    """One file changes: only it and the files using the names it gained or lost are
    looked at again, and every file's uses are those a fresh start finds."""
    from contextls.structure.uses import uses

    before = graph()
    known: list = []  # type: ignore[type-arg]
    uses(before, known)
    after = dict(before)
    after["cache.py"] = facts("def fresh_name(value):\n    return value\n", "python")
    after["noise3.py"] = facts("from cache import fresh_name\n\nfresh_name(3)\n", "python")
    del after["noise4.py"]
    updated = uses(after, known)
    made_anew = uses(after, [])
    assert updated is known[0] and updated is not made_anew
    for path in after:
        assert updated.edges(path).keys() == made_anew.edges(path).keys(), path
        assert updated.strongest[path].keys() == made_anew.strongest[path].keys(), path
        assert updated.listing[path] == made_anew.listing[path], path
        assert updated.lowered[path] == made_anew.lowered[path], path
        assert updated.used[path] == made_anew.used[path], path
    assert updated.listing.keys() == made_anew.listing.keys() == after.keys()
    assert updated.spelled == made_anew.spelled and "fresh_name" in updated.spelled["fresh_name"]
    assert ("cache.py", "fresh_name") in updated.edges("noise3.py")
    assert not any(word == "lru" for _, word in updated.edges("app.py"))  # lru is gone


@pytest.mark.parametrize("renumbering", [False, True])
def test_a_graph_kept_over_many_rankings_ranks_as_one_made_anew(
    renumbering: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What a kept graph keeps between rankings (spreads, their walk, uses weighed for a
    focus, the uses' numbers, numbered again when most are stale) changes no ranking:
    each is the ranking of the same uses with none of it kept, walked from the same
    ranks."""
    from dataclasses import replace

    from contextls.structure import repomap
    from contextls.structure.walk import Numbering

    if renumbering:  # at every ranking
        monkeypatch.setattr(repomap, "RENUMBER_SLACK", -(10**9))
    files = thousand_files()
    known: list = []  # type: ignore[type-arg]
    # Each case twice in a row (two limits), then the next. m429 calls work_4, work_5
    # and work_6; it changes at step 4 (its uses weighed again for the same focus) and
    # is weighed for another focus at step 5.
    asked = [
        {"focus_files": ["pkg/m1.py"]},
        {"focus_files": ["pkg/m1.py"], "query": "work other"},
        {"query": "Service3 other_3", "focus_names": ["Service3.other_3"]},
        {"query": "work_5 work_6"},
        {"query": "work_5 work_6", "leave_out": [("pkg/m6.py", "")]},
        {"query": "work_5", "focus_files": ["pkg/m7.py", "pkg/m8.py"]},
    ]
    renumbered = 0
    for step in range(12):
        if step % 6 == 4:
            files = dict(files)
            files["pkg/m429.py"] = facts(
                f"def changed_{step}(x):\n"
                f"    return work_5(x) + work_6(x) + work_{step + 100}(x)\n",
                "python",
            )
        for limit in (30, None):
            case = asked[step % len(asked)]
            start = dict(known[0].ranks) if known else {}
            numbers = known[0].numbering if known else None
            kept = rank(files, known=known, limit=limit, **case)  # type: ignore[arg-type]
            renumbered += numbers is not None and known[0].numbering is not numbers
            # The same uses, with nothing kept from earlier rankings.
            fresh = replace(
                known[0], spread={}, walk=None, refocused={}, numbering=Numbering(), ranks=start
            )
            anew = rank(files, known=[fresh], limit=limit, **case)  # type: ignore[arg-type]
            assert [(r.path, r.symbol.qualified, r.score) for r in kept] == [
                (r.path, r.symbol.qualified, r.score) for r in anew
            ], (step, limit, case)
    assert (renumbered > 0) is renumbering


def test_a_graph_begun_file_by_file_is_the_graph_made_at_once() -> None:
    """The files are defined as they are read (``begin``), some change or go before the
    ranking asks, and the graph it gets is the one made of what it asks about."""
    from contextls.structure.uses import begin, uses

    read = graph()
    known: list = []  # type: ignore[type-arg]
    for path, found in read.items():
        begin(known, path, found)
    assert not known[0].complete and not known[0].strongest
    asked = dict(read)
    asked["cache.py"] = facts("def fresh_name(value):\n    return value\n", "python")
    del asked["noise4.py"]
    begun = uses(asked, known)
    made_at_once = uses(asked, [])
    assert begun is known[0] and begun.complete
    for path in asked:
        assert begun.strongest[path] == made_at_once.strongest[path], path
        assert begun.listing[path] == made_at_once.listing[path], path
        assert begun.used[path] == made_at_once.used[path], path
    assert begun.definers == made_at_once.definers and begun.members == made_at_once.members
    assert begun.listing.keys() == asked.keys() and "lru" not in begun.definers
    begin(known, "late.py", facts("def late(): pass\n", "python"))  # a made graph stays
    assert "late" not in begun.definers
