"""Test PPL by kind, and Grassmann − Transformer paired by seed, read across study ledgers (issue 28, item 4b).

Runs are chosen by training tokens, norm placement (`--norm pre|post`) and, for each kind, by lr (`--lr KIND=LR`), so
that runs of several studies read as one: the ladder's Grassmann and EA runs at 3.2M tokens beside the DPA runs at
4e-3 of lr-check (seed 1) and lr-check-2 (seeds 2, 3). Two chosen runs with the same tokens, kind and seed are an
error (say which with `--lr` or `--norm`: paper-size has a post-LN and a pre-LN seed 1 of each kind).
Paired by seed (same initialisation seed and data order); 95% t-intervals; the relative column is the interval of the
paired difference over the Transformer's mean, as `study report` has it.

    python3 docs/results/evidence-2/ladder/paired.py --tokens 3200000 \
      --lr grassmann=0.004 --lr transformer-dpa=0.004 --lr transformer-ea=0.004 \
      docs/results/evidence-2/ladder/ledger.jsonl docs/results/evidence-2/lr-check/ledger.jsonl \
      docs/results/evidence-2/lr-check-2/ledger.jsonl
"""
import argparse
import json
import math
import statistics as st
import sys
from collections import defaultdict

T975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571}
KINDS = ("grassmann", "transformer-dpa", "transformer-ea")


def interval(xs):
    """Mean and 95% t-interval of xs (None with one value)."""
    m = st.mean(xs)
    if len(xs) < 2:
        return m, None
    h = T975[len(xs) - 1] * st.stdev(xs) / math.sqrt(len(xs))
    return m, (m - h, m + h)


def parse_args(argv, description):
    p = argparse.ArgumentParser(description=description)
    p.add_argument("ledgers", nargs="+", help="ledger.jsonl files of `study run`")
    p.add_argument("--tokens", type=int, action="append", help="training tokens to keep (repeatable; default all)")
    p.add_argument("--lr", action="append", default=[], metavar="KIND=LR", help="keep only this lr for KIND")
    p.add_argument("--norm", choices=("pre", "post"), help="keep only runs with this LayerNorm placement")
    return p.parse_args(argv)


def load_runs(args):
    """(tokens, kind) -> seed -> ledger record, for the runs the filters keep."""
    lrs = {}
    for spec in args.lr:
        kind, _, lr = spec.partition("=")
        if kind not in KINDS or not lr:
            sys.exit(f"--lr {spec}: expected KIND=LR with KIND one of {', '.join(KINDS)}")
        lrs[kind] = float(lr)
    runs = defaultdict(dict)
    where = {}
    for path in args.ledgers:
        try:
            lines = open(path).read().splitlines()
        except OSError as e:
            sys.exit(f"{path}: {e.strerror}; pass the ledger.jsonl files that `study run` wrote")
        for n, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                r = json.loads(line)
                training = r["config"]["training"]
                kind, tokens = r["flags"]["model"], r["flags"]["tokens"]
            except (ValueError, KeyError) as e:
                sys.exit(f"{path}:{n}: not a `study run` ledger record ({e})")
            if args.tokens and tokens not in args.tokens:
                continue
            if kind in lrs and not math.isclose(training["lr"], lrs[kind]):
                continue
            if args.norm and r["config"]["model"]["norm"] != args.norm:
                continue
            seed = training["seed"]
            if seed in runs[(tokens, kind)]:
                sys.exit(f"{path}:{n}: {kind} at {tokens} tokens, seed {seed} is also {where[(tokens, kind, seed)]} "
                         f"(lr {runs[(tokens, kind)][seed]['config']['training']['lr']} and {training['lr']}): "
                         f"choose one with --lr {kind}=LR or --norm")
            runs[(tokens, kind)][seed] = r
            where[(tokens, kind, seed)] = f"{path}:{n}"
    if not runs:
        sys.exit("no runs left after --tokens/--lr/--norm")
    return runs


def fmt_interval(ci, f="{:+.1f}"):
    return "none (one pair)" if ci is None else f"{f.format(ci[0])} … {f.format(ci[1])}"


def main(argv):
    args = parse_args(argv, __doc__.splitlines()[0])
    runs = load_runs(args)
    test = {key: {s: r["heldOut"]["test"]["ppl"] for s, r in by_seed.items()} for key, by_seed in runs.items()}

    print("| tokens | model | lr | seeds | valid PPL, all targets (mean) | test PPL, all targets: mean | sd | 95% interval |")
    print("|---|---|---:|---|---:|---:|---:|---|")
    for (tokens, kind), by_seed in sorted(runs.items()):
        xs = [test[(tokens, kind)][s] for s in sorted(by_seed)]
        lr = sorted({r["config"]["training"]["lr"] for r in by_seed.values()})
        valid = st.mean(r["heldOut"]["valid"]["ppl"] for r in by_seed.values())
        m, ci = interval(xs)
        sd = f"{st.stdev(xs):.1f}" if len(xs) > 1 else "–"
        ci_s = "none (one seed)" if ci is None else f"{ci[0]:.1f} … {ci[1]:.1f}"
        print(f"| {tokens / 1e6:g}M | {kind} | {'/'.join(f'{x:g}' for x in lr)} | "
              f"{', '.join(str(s) for s in sorted(by_seed))} | {valid:.1f} | {m:.1f} | {sd} | {ci_s} |")

    print()
    print("| tokens | Grassmann − | pairs | test PPL, mean Δ | sd | 95% interval | relative to the Transformer mean |")
    print("|---|---|---:|---:|---:|---|---|")
    for tokens in sorted({t for t, _ in runs}):
        g = test.get((tokens, "grassmann"), {})
        for other in KINDS[1:]:
            o = test.get((tokens, other), {})
            seeds = sorted(set(g) & set(o))
            if not seeds:
                continue
            d = [g[s] - o[s] for s in seeds]
            m, ci = interval(d)
            base = st.mean(o[s] for s in seeds)
            sd = f"{st.stdev(d):.2f}" if len(d) > 1 else "–"
            rel = f"{m / base * 100:+.1f}%" + ("" if ci is None else f" ({ci[0] / base * 100:+.1f}% … "
                                                                     f"{ci[1] / base * 100:+.1f}%)")
            print(f"| {tokens / 1e6:g}M | {other} | {len(seeds)} | {m:+.1f} | {sd} | {fmt_interval(ci)} | {rel} |")


if __name__ == "__main__":
    main(sys.argv[1:])
