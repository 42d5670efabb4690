# The tables of docs/results.md for the dropout control, from its ledger: test PPL of each cell (kind × post-LN dropout
# placement) per seed, the placement's effect within each kind, and the interaction — is moving dropout from the
# stream onto the branch worth more to the Grassmann model than to the Transformer? — as a paired difference of log
# ratios per seed, with its 95% t-interval (n seeds, t with n − 1 degrees of freedom).
# Usage: python3 docs/results/evidence-2/dropout-control/interaction.py docs/results/evidence-2/dropout-control/ledger.jsonl
import json, math, sys

T = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776}
DEFAULT_AT = {'grassmann': 'stream', 'transformer-dpa': 'branch'}  # each kind's block when --dropout-at is not given
recs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
split = sys.argv[2] if len(sys.argv) > 2 else 'test'
cells = {}  # (model, placement) -> {seed: ppl}
for r in recs:
    f = r['flags']
    model = f['model']
    at = f.get('dropout-at', DEFAULT_AT[model])
    cells.setdefault((model, at), {})[f['seed']] = r['heldOut'][split]['ppl']


def stats(xs):
    n = len(xs)
    m = sum(xs) / n
    if n < 2:
        return m, None, None
    sd = math.sqrt(sum((x - m) ** 2 for x in xs) / (n - 1))
    return m, sd, T[n - 1] * sd / math.sqrt(n)


def pct(x):
    return f'{(math.exp(x) - 1) * 100:+.1f}%'


def row(label, xs):
    m, sd, h = stats(xs)
    interval = '–' if h is None else f'{pct(m - h)} … {pct(m + h)}'
    each = ' / '.join(pct(x) for x in xs)
    return f'| {label} | {len(xs)} | {each} | {pct(m)} | {"–" if sd is None else f"{sd:.4f}"} | {interval} |'


print(f'{split} PPL on all targets, per seed:\n')
print('| model | dropout at | seeds | PPL each seed | mean |')
print('|---|---|---|---|---:|')
for (model, at), by_seed in sorted(cells.items()):
    seeds = sorted(by_seed)
    xs = [by_seed[s] for s in seeds]
    print(f"| {model} | {at} | {','.join(map(str, seeds))} | {' / '.join(f'{x:.1f}' for x in xs)} | {sum(xs) / len(xs):.1f} |")

print('\nPaired by seed, as PPL ratios (log-ratio mean and sd; the interval turned back into percent):\n')
print('| comparison | pairs | each seed | mean | sd (log) | 95% interval |')
print('|---|---:|---|---:|---:|---|')


def log_ratios(a, b):
    seeds = sorted(set(cells.get(a, {})) & set(cells.get(b, {})))
    return seeds, [math.log(cells[a][s] / cells[b][s]) for s in seeds]


for model in ('grassmann', 'transformer-dpa'):
    _, xs = log_ratios((model, 'branch'), (model, 'stream'))
    if xs:
        print(row(f'{model}: branch / stream', xs))
for at in ('stream', 'branch'):
    _, xs = log_ratios(('grassmann', at), ('transformer-dpa', at))
    if xs:
        print(row(f'grassmann / transformer-dpa, both {at}', xs))
_, xs = log_ratios(('grassmann', 'stream'), ('transformer-dpa', 'branch'))
if xs:
    print(row("grassmann / transformer-dpa, each kind's own block", xs))
sg, g = log_ratios(('grassmann', 'branch'), ('grassmann', 'stream'))
st, t = log_ratios(('transformer-dpa', 'branch'), ('transformer-dpa', 'stream'))
seeds = sorted(set(sg) & set(st))
if seeds:
    gi = dict(zip(sg, g))
    ti = dict(zip(st, t))
    print(row('interaction: (branch / stream of grassmann) / (branch / stream of transformer-dpa)', [gi[s] - ti[s] for s in seeds]))
