"""Context use from the ledger's test NLL by window position (issue 28, item 3).

For each run, the test PPL over bands of positions in the window (every model scores the same targets at the same
positions, so a band compares models on the same tokens), and the context gain: the band 65-128 against the band
9-16, as a log ratio (negative: later positions are predicted better, the model uses the context it has there). A
4-layer Grassmann stack with offsets 1, 2, 4, 8 sees 15 tokens back; attention sees the whole window. Paired by seed
(Grassmann minus each Transformer), with a 95% t-interval where there are at least two seeds.

    python3 docs/results/evidence-2/ladder/by_position.py docs/results/evidence-2/ladder/ledger.jsonl [more ledgers]

with paired.py's run selection (`--tokens`, `--lr KIND=LR`) to read several studies' ledgers as one.
"""
import math
import statistics as st
import sys

from paired import interval, load_runs, parse_args

BANDS = [(1, 1), (2, 8), (9, 16), (17, 32), (33, 64), (65, 128)]


def band_nll(nll, lo, hi):
    return st.mean(nll[lo - 1 : hi])


def gain(nll):
    return band_nll(nll, 65, 128) - band_nll(nll, 9, 16)


def pct(x):
    return f"{(math.exp(x) - 1) * 100:+.1f}%"


args = parse_args(sys.argv[1:], "Context use from the ledger's test NLL by window position")
runs = {key: {s: r["heldOut"]["test"]["nllByPosition"] for s, r in by_seed.items()}
        for key, by_seed in load_runs(args).items()}

print("| tokens | model | n | " + " | ".join(f"test PPL, positions {a}-{b}" if a != b else f"position {a}" for a, b in BANDS)
      + " | context gain (65-128 vs 9-16) |")
print("|" + "---|" * (4 + len(BANDS)))
for (tokens, model), by_seed in sorted(runs.items()):
    rows = list(by_seed.values())
    L = len(rows[0])
    mean = [st.mean(x[i] for x in rows) for i in range(L)]
    cells = [f"{math.exp(band_nll(mean, a, b)):.1f}" for a, b in BANDS]
    m, ci = interval([gain(x) for x in rows])
    ci_s = "" if ci is None else f" ({pct(ci[0])} … {pct(ci[1])})"
    print(f"| {tokens / 1e6:g}M | {model} | {len(rows)} | " + " | ".join(cells) + f" | {pct(m)}{ci_s} |")

print()
print("| tokens | Grassmann − | pairs | context gain difference | 95% interval |")
print("|---|---|---:|---:|---|")
for tokens in sorted({t for t, _ in runs}):
    g = runs.get((tokens, "grassmann"), {})
    for other in ("transformer-dpa", "transformer-ea"):
        o = runs.get((tokens, other), {})
        seeds = sorted(set(g) & set(o))
        if not seeds:
            continue
        m, ci = interval([gain(g[s]) - gain(o[s]) for s in seeds])
        print(f"| {tokens / 1e6:g}M | {other} | {len(seeds)} | {m * 100:+.2f} points of log PPL | "
              + ("none (one pair)" if ci is None else f"{ci[0] * 100:+.2f} … {ci[1] * 100:+.2f}") + " |")
