# The tables of docs/results.md from the study ledger: per group mean ± sd and 95% t-interval of the final
# validation PPL, paired Grassmann − Transformer differences by seed, and the paired gap at each evaluation point.
# Usage: python3 docs/results/cpu-study/tables.py docs/results/cpu-study/ledger.jsonl docs/results/cpu-study/study.json
import json, math, sys
T={1:12.706,2:4.303,3:3.182,4:2.776}
recs=[json.loads(l) for l in open(sys.argv[1])]
BASE=json.load(open(sys.argv[2]))['base']
base_keys={'seed','model','d-model','r'}
def group(r):
    f=r['flags']; abl=tuple(sorted((k,v) for k,v in f.items() if k not in base_keys and k != 'preset' and BASE.get(k) != v))
    pre=f.get('preset','paper-6l')
    if pre!='paper-6l': abl=abl+(('preset',pre),)
    return (f.get('d-model'), abl, f.get('model','grassmann'))
groups={}
for r in recs: groups.setdefault(group(r),[]).append(r)
def stats(xs):
    n=len(xs); m=sum(xs)/n
    if n<2: return m,None,None
    sd=math.sqrt(sum((x-m)**2 for x in xs)/(n-1)); h=T[n-1]*sd/math.sqrt(n); return m,sd,h
print('| size | variant | model | seeds | final val PPL, each seed | mean | sd | 95% interval |')
print('|---|---|---|---|---|---:|---:|---|')
for k in sorted(groups, key=lambda k:(k[0],k[1],k[2])):
    rs=sorted(groups[k], key=lambda r:r['flags']['seed'])
    xs=[r['finalValPpl'] for r in rs]; m,sd,h=stats(xs)
    var=', '.join(f'{a} {b}' for a,b in k[1]) or 'headline (pre-LN)'
    size='S (d 64)' if k[0]==64 else 'M (d 128)'
    print(f"| {size} | {var} | {k[2]} | {','.join(str(r['flags']['seed']) for r in rs)} | {' / '.join(f'{x:.1f}' for x in xs)} | {m:.1f} | {'–' if sd is None else f'{sd:.1f}'} | {'–' if h is None else f'{m-h:.1f} – {m+h:.1f}'} |")
print()
print('| size | variant | Grassmann − | pairs (seeds) | Δ PPL each seed | mean Δ | sd | 95% interval | mean Δ / Transformer |')
print('|---|---|---|---|---|---:|---:|---|---:|')
for k in sorted(groups):
    if k[2]!='grassmann': continue
    for other in ('transformer-dpa','transformer-ea'):
        k2=(k[0],k[1],other)
        if k2 not in groups: continue
        g={r['flags']['seed']:r['finalValPpl'] for r in groups[k]}; t={r['flags']['seed']:r['finalValPpl'] for r in groups[k2]}
        seeds=sorted(set(g)&set(t))
        if not seeds: continue
        d=[g[s]-t[s] for s in seeds]; rel=sum(d)/len(d)/(sum(t[s] for s in seeds)/len(seeds))*100
        var=', '.join(f'{a} {b}' for a,b in k[1]) or 'headline (pre-LN)'
        size='S (d 64)' if k[0]==64 else 'M (d 128)'
        m,sd,h=stats(d)
        ci='–' if h is None else f'{m-h:+.1f} – {m+h:+.1f}'
        print(f"| {size} | {var} | {other} | {len(seeds)} ({','.join(map(str,seeds))}) | {' / '.join(f'{x:+.1f}' for x in d)} | {m:+.1f} | {'–' if sd is None else f'{sd:.1f}'} | {ci} | {rel:+.1f}% |")
print()
# the paired gap along the curve (same seed, same evaluation points), headline groups only
head={}
for k,rs in groups.items():
    if k[1]==(): 
        for r in rs: head[(k[0],k[2],r['flags']['seed'])]=r['curve']
for size in sorted({k[0] for k in head}):
    for other in ('transformer-dpa','transformer-ea'):
        rows=[]
        for seed in (1,2,3):
            g=head.get((size,'grassmann',seed)); t=head.get((size,other,seed))
            if g and t: rows.append((seed,[(a[0],(a[1]/b[1]-1)*100) for a,b in zip(g,t)]))
        if not rows: continue
        pts=[p[0] for p in rows[0][1]]
        if size==64 and other=='transformer-dpa':
            print('| size | Grassmann vs | seed | ' + ' | '.join(f'{p/1000:.0f}k tokens' for p in pts) + ' |')
            print('|---|---|---|' + '---:|'*len(pts))
        for seed,vals in rows:
            print(f"| {'S (d 64)' if size==64 else 'M (d 128)'} | {other} | {seed} | " + ' | '.join(f'{v:+.1f}%' for _,v in vals) + ' |')
print()
# every ablation run's validation PPL along training (whether and when it left the unigram plateau)
abl=[(k,r) for k,rs in groups.items() if k[1]!=() for r in rs]
if abl:
    pts=[p[0] for p in abl[0][1]['curve']]
    print('| size | variant | model | seed | ' + ' | '.join(f'{p/1000:.0f}k tokens' for p in pts) + ' |')
    print('|---|---|---|---|' + '---:|'*len(pts))
    for k,r in sorted(abl, key=lambda kr:(kr[0][0],kr[0][1],kr[0][2],kr[1]['flags']['seed'])):
        var=', '.join(f'{a} {b}' for a,b in k[1])
        size='S (d 64)' if k[0]==64 else 'M (d 128)'
        print(f"| {size} | {var} | {k[2]} | {r['flags']['seed']} | " + ' | '.join(f'{v:.1f}' for _,v in r['curve']) + ' |')
print()
# each ablation against the setting it changes (its flags above removed; same size, paired by seed): the option's
# effect on its own kind, and the Grassmann − Transformer gap in the changed setting (a Grassmann option against
# that setting's DPA; an EA option against that setting's Grassmann)
OPTIONS=('dropout-at','gate','ea-eps','mixer-norm','preset')
def finals(k): return {r['flags']['seed']:r['finalValPpl'] for r in groups.get(k,[])}
rows=[]
for k in sorted(groups, key=lambda k:(k[0],k[1],k[2])):
    if not any(a in OPTIONS for a,_ in k[1]): continue
    ref=(k[0],tuple(ab for ab in k[1] if ab[0] not in OPTIONS),k[2])
    var=', '.join(f'{a} {b}' for a,b in k[1] if a in OPTIONS)
    refvar=', '.join(f'{a} {b}' for a,b in ref[1]) or 'headline (pre-LN)'
    pairs=[(f'effect: this − {k[2]} of {refvar}', finals(k), finals(ref))]
    opts=[ab for ab in k[1] if ab[0] in OPTIONS]
    if len(opts)>1:  # a combined option also against each setting with one of its options less
        for o in opts:
            sub=(k[0],tuple(ab for ab in k[1] if ab!=o),k[2])
            if sub in groups:
                subvar=', '.join(f'{a} {b}' for a,b in sub[1] if a in OPTIONS)
                pairs.append((f'effect of {o[0]} {o[1]}: this − {k[2]} with {subvar}', finals(k), finals(sub)))
    if k[2]=='grassmann': pairs.append((f'gap: this − transformer-dpa of {refvar}', finals(k), finals((k[0],ref[1],'transformer-dpa'))))
    else: pairs.append((f'gap: grassmann of {refvar} − this', finals((k[0],ref[1],'grassmann')), finals(k)))
    for label,a,b in pairs:
        seeds=sorted(set(a)&set(b))
        if not seeds: continue
        d=[a[s]-b[s] for s in seeds]; m,sd,h=stats(d); rel=m/(sum(b[s] for s in seeds)/len(seeds))*100
        size='S (d 64)' if k[0]==64 else 'M (d 128)'
        rows.append(f"| {size} | {var} | {k[2]} | {label} | {','.join(map(str,seeds))} | {' / '.join(f'{x:+.1f}' for x in d)} | {m:+.1f} | {rel:+.1f}% |")
if rows:
    print('| size | option | model | difference | seeds | Δ PPL each seed | mean Δ | mean Δ / subtrahend |')
    print('|---|---|---|---|---|---|---:|---:|')
    print('\n'.join(rows))
