"""Questions about anything but code: a search by meaning over a code archive must find
nothing for them. They calibrate the absolute similarity floor of meaning-only hits.

    .venv/bin/python -m tests.relevance.offtopic    # the cosines, per set
"""

from __future__ import annotations

OFF_TOPIC: tuple[str, ...] = (
    # recipes
    "how long do I bake banana bread",
    "a vegetarian lasagna recipe with spinach",
    "how much salt goes into pasta water",
    "can I freeze cooked rice",
    "what wine goes with grilled salmon",
    "sourdough starter smells like acetone",
    # weather
    "will it rain in Lisbon tomorrow",
    "what is the temperature outside",
    "hurricane season forecast for Florida",
    "why is the sky red at sunset",
    "snow expected this weekend in the Alps",
    # sport
    "who won the football world cup in 2014",
    "offside rule explained",
    "how many players are on a basketball team",
    "best marathon training plan for beginners",
    "tennis grand slam winners list",
    "the score of last night's hockey game",
    # everyday life
    "cheap flights to Tokyo in April",
    "how to remove a red wine stain from a carpet",
    "symptoms of the common cold",
    "what time does the museum open on Sunday",
    "learn to play the guitar chords G C D",
    "the plot of Pride and Prejudice",
    "how to water a cactus",
    # nonsense
    "xyzzyplugh",
    "qwertyuiop asdfghjkl",
    "flibbertigibbet wobble",
    "zzz",
    # more of every kind, and words people type to try a search box
    "how do I make pancakes fluffy",
    "chocolate chip cookie recipe without eggs",
    "is it going to be sunny on Saturday",
    "what is the humidity in Singapore today",
    "who scored the winning goal in the final",
    "rules of cricket for beginners",
    "how to tie a tie",
    "best time to visit Iceland",
    "how many calories in an avocado",
    "what is the capital of Australia",
    "recommend a good science fiction novel",
    "how to fix a flat bicycle tire",
    "the history of the Roman empire",
    "when is the next full moon",
    "how to grow tomatoes on a balcony",
    "what should I name my dog",
    "how to cook a perfect steak medium rare",
    "weather forecast for London next week",
    "Formula 1 race results",
    "how to make cold brew coffee",
    "the lyrics of a famous song",
    "yoga poses for back pain",
    "how to knit a scarf",
    "stock market news today",
    "the best pizza in Naples",
    "how tall is Mount Everest",
    "baseball world series champions",
    "how to train for a triathlon",
    "what is the boiling point of water at altitude",
    "is tomato a fruit or a vegetable",
    "can dogs eat grapes",
    "how long does it take to learn french",
    "ski resorts in Colorado",
    "a lemon drizzle cake",
    "how do rainbows form",
    "golf handicap calculation",
    "hello",
    "thanks",
    "ok",
    "lorem ipsum dolor sit amet",
    "blorp",
    "asdf",
)


if __name__ == "__main__":
    import tempfile
    from pathlib import Path

    from contextls.search.retrieval import SEMANTIC_FLOOR

    from .score import ROOT, SETS, Bench

    for name in SETS:
        with tempfile.TemporaryDirectory() as directory:
            bench = Bench(Path(directory), name)
            tops = sorted(
                ((bench.engine.search(ROOT, query, 1) or [("", 0.0)])[0][1], query)
                for query in OFF_TOPIC
            )
            print(f"== {name}: off-topic top cosines (floor {SEMANTIC_FLOOR})")
            for cosine, query in tops[-8:]:
                print(f"  {cosine:.3f}  {query}")
            wanted = []
            for query, key in bench.queries:
                nearest = bench.engine.search(ROOT, query, 50)
                keys = [(bench.key_of[i], s) for i, s in nearest]
                score = next((s for k, s in keys if k == key), None)
                wanted.append((score if score is not None else -1.0, query))
            wanted.sort()
            print("  wanted items, lowest cosines:")
            for cosine, query in wanted[:8]:
                print(f"  {cosine:.3f}  {query}")
            bench.close()
