#!/usr/bin/env python3
"""PyTorch reference for `grassflow-lm bench`: the same models, init and full training steps, timed.

The models follow grassflow's (packages/gpu-layers/src, /work docs paper-notes §1-2):
  embed:  x = Dropout(tok_emb[ids] + pos_emb[t])                     learned positions, maxLen rows
  Grassmann block (post-LN):  h_hat = Dropout(LN1(Mix(h))); out = LN2(h_hat + Dropout(FFN(h_hat)))
  Transformer block (post-LN): x = LN1(h + Dropout(Attn(h)));  out = LN2(x + Dropout(FFN(x)))
  pre-LN: x = h + Dropout(Mix(LN1(h))); out = x + Dropout(FFN(LN2(x))); then a final ln_f
  Mix: z_t = W_red h_t + b_red;  p_ij = z_{t-D,i} z_{t,j} - z_{t-D,j} z_{t,i} (i < j, lexicographic);
       p_hat = p / sqrt(|p|^2 + eps^2);  g_t = W_plu mean_D p_hat + b_plu (0 where no pair exists);
       alpha = sigmoid(W_gate [h; g] + b_gate);  h_mix = alpha * h + (1 - alpha) * g
  FFN(x) = fc2(GELU(fc1(x))), exact erf GELU, LayerNorm eps 1e-5; head tied: logits = h . tok_emb^T
  init: N(0, 0.02) for every linear and embedding weight, zero biases, LayerNorm ones/zeros (PyTorch's
  default N(0, 1) embeddings make the tied head's softmax underflow into denormals: ~30x slower backward).
A step: forward, mean cross-entropy on the full [B*L, V] logits, backward, clip_grad_norm_(1.0), AdamW
(lr 5e-4, betas 0.9/0.98, eps 1e-8, weight decay 0.01 on matrices except the embeddings), then loss.item().

Prints one JSON line in the shape of `grassflow-lm bench --json` (backend "pytorch").
Run:  python3 bench/pytorch/bench_lm.py --preset paper-6l --batch 8 --steps 5
      python3 bench/pytorch/bench_lm.py --config '{"kind": "grassmann", ...}'   (a grassflow ModelConfig)
"""

import argparse
import ctypes
import json
import math
import os
import resource
import sys
import time

WORDPIECE_V = 30522
INIT_STD = 0.02
LN_EPS = 1e-5

PAPER_6L = {
    "kind": "grassmann",
    "vocabSize": WORDPIECE_V,
    "dModel": 256,
    "nLayers": 6,
    "dFF": 1024,
    "maxLen": 128,
    "r": 32,
    "offsets": [[1], [2], [4], [8], [12], [16]],
    "eps": 1e-6,
    "attention": "dpa",
    "nHeads": 4,
    "norm": "post",
    "dropout": 0.1,
}
# The size presets of packages/gpu-layers/src/shared/config.ts (PRESETS), for running this file on its own.
PRESETS = {
    "paper-6l": PAPER_6L,
    "paper-6l-multi": {**PAPER_6L, "offsets": [[1, 2, 4, 8, 12, 16]] * 6},
    "paper-12l": {
        **PAPER_6L,
        "nLayers": 12,
        "maxLen": 256,
        "offsets": [[o] for o in (1, 1, 2, 2, 4, 4, 8, 8, 12, 12, 16, 16)],
    },
    "tiny": {
        **PAPER_6L,
        "vocabSize": 64,
        "dModel": 16,
        "nLayers": 2,
        "dFF": 64,
        "maxLen": 16,
        "r": 4,
        "offsets": [[1], [2]],
        "nHeads": 2,
    },
}
BASE_OFFSETS = [1, 2, 4, 8, 12, 16]


def config_from_args(a):
    """The model config: --config JSON (what `grassflow-lm bench --against pytorch` passes), else preset + flags
    resolved as grassflow's modelConfigFrom does (d_ff = 4d with --d-model, layer i gets offset list[i mod n])."""
    if a.config is not None:
        return {**PAPER_6L, **json.loads(a.config)}  # fields of the other kind are unused
    c = dict(PRESETS[a.preset])
    c["kind"] = "grassmann" if a.model == "grassmann" else "transformer"
    c["attention"] = "ea" if a.model == "transformer-ea" else "dpa"
    c["vocabSize"] = a.vocab
    n = a.layers if a.layers is not None else c["nLayers"]
    if a.offsets is not None:
        offs = [int(s) for s in a.offsets.split(",")]
        c["offsets"] = [list(offs)] * n if a.preset == "paper-6l-multi" else [[offs[i % len(offs)]] for i in range(n)]
    elif n != c["nLayers"]:
        base = c["offsets"]
        c["offsets"] = [list(base[i % len(base)]) for i in range(n)]
    c["nLayers"] = n
    if a.d_model is not None:
        c["dModel"], c["dFF"] = a.d_model, 4 * a.d_model
    if a.r is not None:
        c["r"] = a.r
    if a.seq_len is not None:
        c["maxLen"] = a.seq_len
    if a.dropout is not None:
        c["dropout"] = a.dropout
    if a.norm is not None:
        c["norm"] = a.norm
    return c


def count_params(c):
    """grassflow's countParams(config), analytically (the script checks its model against it)."""
    d, f = c["dModel"], c["dFF"]
    ffn = d * f + f + f * d + d
    if c["kind"] == "grassmann":
        C = c["r"] * (c["r"] - 1) // 2
        mixer = d * c["r"] + c["r"] + C * d + d + 2 * d * d + d
    else:
        mixer = 3 * d * d + 3 * d + d * d + d
    per_layer = mixer + 2 * 2 * d + ffn
    head = 0
    if c.get("head") == "adaptive":  # AdaptiveLogSoftmaxWithLoss, div_value 4, no bias (grassflow's adaptiveHeadShapes)
        bounds = list(c["cutoffs"]) + [c["vocabSize"]]
        head = d * (bounds[0] + len(c["cutoffs"]))
        for i in range(len(c["cutoffs"])):
            di = max(1, d // 4 ** (i + 1))
            head += d * di + di * (bounds[i + 1] - bounds[i])
    return c["vocabSize"] * d + c["maxLen"] * d + c["nLayers"] * per_layer + (2 * d if c["norm"] == "pre" else 0) + head


def build(torch, c):
    nn = torch.nn
    F = torch.nn.functional

    class GrassmannMixing(nn.Module):
        """Causal Grassmann mixing of h [B, L, d] with the offsets of one layer (see the module docstring)."""

        def __init__(self, d, r, offsets, eps, max_len):
            super().__init__()
            self.w_red = nn.Linear(d, r)
            C = r * (r - 1) // 2
            self.w_plu = nn.Linear(C, d)
            self.w_gate = nn.Linear(2 * d, d)
            self.offsets = list(offsets)
            self.eps = eps
            pairs = [(i, j) for i in range(r) for j in range(i + 1, r)]  # lexicographic (0,1), (0,2), ...
            self.register_buffer("cols_i", torch.tensor([i for i, _ in pairs]), persistent=False)
            self.register_buffer("cols_j", torch.tensor([j for _, j in pairs]), persistent=False)
            # 1 / (number of existing pairs at t) [L, 1] and whether any exists, for every L <= max_len
            counts = torch.tensor([sum(1 for o in offsets if t - o >= 0) for t in range(max_len)], dtype=torch.float32)
            self.register_buffer("inv_count", ((counts > 0) / counts.clamp(min=1))[:, None], False)
            self.register_buffer("has_pair", (counts > 0).float()[:, None], persistent=False)

        def forward(self, h):
            B, L, d = h.shape
            z = self.w_red(h)  # [B, L, r]
            zi = z[..., self.cols_i]  # [B, L, C] z_{t,i}
            zj = z[..., self.cols_j]  # [B, L, C] z_{t,j}
            total = None
            for o in self.offsets:
                if o >= L:
                    continue  # no position has a pair at this offset
                # p_t = z_{t-D,i} z_{t,j} - z_{t-D,j} z_{t,i} for t >= D; rows t < D have no pair (p = 0 -> p_hat = 0)
                p = zi[:, :-o] * zj[:, o:] - zj[:, :-o] * zi[:, o:]  # [B, L - D, C]
                p_hat = p / torch.sqrt((p * p).sum(-1, keepdim=True) + self.eps * self.eps)
                p_hat = F.pad(p_hat, (0, 0, o, 0))  # [B, L, C]
                total = p_hat if total is None else total + p_hat
            if total is None:
                g = h.new_zeros(B, L, d)
            else:
                g = F.linear(total * self.inv_count[:L], self.w_plu.weight) + self.w_plu.bias * self.has_pair[:L]
            alpha = torch.sigmoid(self.w_gate(torch.cat([h, g], -1)))  # [B, L, d]
            return g + alpha * (h - g)

    class Attention(nn.Module):
        """Causal multi-head attention: DPA softmax(qk^T/sqrt(d_h) + mask) or EA e = m s^2/(1+s^2), e/(sum e + eps)."""

        def __init__(self, d, heads, kind, eps, max_len):
            super().__init__()
            self.qkv = nn.Linear(d, 3 * d)
            self.proj = nn.Linear(d, d)
            self.heads, self.kind, self.eps = heads, kind, eps
            self.register_buffer("mask", torch.tril(torch.ones(max_len, max_len)), persistent=False)

        def forward(self, h):
            B, L, d = h.shape
            H = self.heads
            q, k, v = self.qkv(h).view(B, L, 3, H, d // H).permute(2, 0, 3, 1, 4)  # [B, H, L, d_h] each
            s = q @ k.transpose(-1, -2) / math.sqrt(d // H)  # [B, H, L, L]
            m = self.mask[:L, :L]
            if self.kind == "dpa":
                a = torch.softmax(s + (m - 1) * 1e9, -1)
            else:
                s2 = s * s
                e = m * (s2 / (s2 + 1))
                a = e / (e.sum(-1, keepdim=True) + self.eps)
            y = (a @ v).transpose(1, 2).reshape(B, L, d)
            return self.proj(y)

    class Block(nn.Module):
        def __init__(self, i):
            super().__init__()
            d = c["dModel"]
            if c["kind"] == "grassmann":
                self.mixer = GrassmannMixing(d, c["r"], c["offsets"][i], c["eps"], c["maxLen"])
            else:
                self.mixer = Attention(d, c["nHeads"], c["attention"], c["eps"], c["maxLen"])
            self.ln1 = nn.LayerNorm(d, eps=LN_EPS)
            self.ln2 = nn.LayerNorm(d, eps=LN_EPS)
            self.ffn = nn.ModuleDict({"fc1": nn.Linear(d, c["dFF"]), "fc2": nn.Linear(c["dFF"], d)})  # grassflow's names
            self.drop = nn.Dropout(c["dropout"])
            self.pre = c["norm"] == "pre"
            self.grassmann = c["kind"] == "grassmann"

        def feed_forward(self, x):
            return self.ffn["fc2"](F.gelu(self.ffn["fc1"](x)))

        def forward(self, h):
            if self.pre:
                x = h + self.drop(self.mixer(self.ln1(h)))
                return x + self.drop(self.feed_forward(self.ln2(x)))
            if self.grassmann:
                x = self.drop(self.ln1(self.mixer(h)))  # the gate is the skip path: no residual around mixing
            else:
                x = self.ln1(h + self.drop(self.mixer(h)))
            return self.ln2(x + self.drop(self.feed_forward(x)))

    class LM(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok_emb = nn.Embedding(c["vocabSize"], c["dModel"])
            self.pos_emb = nn.Embedding(c["maxLen"], c["dModel"])
            self.drop = nn.Dropout(c["dropout"])
            self.blocks = nn.ModuleList([Block(i) for i in range(c["nLayers"])])
            self.ln_f = nn.LayerNorm(c["dModel"], eps=LN_EPS) if c["norm"] == "pre" else None
            self.adaptive = (
                nn.AdaptiveLogSoftmaxWithLoss(c["dModel"], c["vocabSize"], list(c["cutoffs"]), div_value=4.0, head_bias=False)
                if c.get("head") == "adaptive"
                else None
            )
            for mod in self.modules():
                if isinstance(mod, (nn.Linear, nn.Embedding)):
                    nn.init.normal_(mod.weight, 0.0, INIT_STD)
                if isinstance(mod, nn.Linear) and mod.bias is not None:
                    nn.init.zeros_(mod.bias)

        def forward(self, ids, targets):
            B, L = ids.shape
            x = self.drop(self.tok_emb(ids) + self.pos_emb.weight[:L])
            for block in self.blocks:
                x = block(x)
            if self.ln_f is not None:
                x = self.ln_f(x)
            if self.adaptive is not None:  # targets are frequency ranks here (the clusters are rank ranges)
                return self.adaptive(x.reshape(B * L, -1), targets.reshape(B * L)).loss
            logits = x.reshape(B * L, -1) @ self.tok_emb.weight.t()  # tied head [B*L, V]
            return F.cross_entropy(logits, targets.reshape(B * L))

    return LM()


def read_safetensors(torch, path):
    """Tensors of a safetensors file (8-byte little-endian header size, JSON header, raw little-endian data)."""
    with open(path, "rb") as f:
        raw = f.read()
    n = int.from_bytes(raw[:8], "little")
    header = json.loads(raw[8 : 8 + n])
    types = {"F32": torch.float32, "I32": torch.int32, "F64": torch.float64}
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        buf = bytearray(raw[8 + n + begin : 8 + n + end])
        out[name] = torch.frombuffer(buf, dtype=types[info["dtype"]]).reshape(info["shape"]).clone()
    return out


def parity_loss(torch, model, a):
    """Mean cross-entropy (no dropout) of the ids in --loss-of {"x": [[...]], "y": [[...]]} with the weights of
    --state-dict (grassflow's stateDict: PyTorch names, linear weights [out, in]): compared with grassflow's."""
    model.load_state_dict(read_safetensors(torch, a.state_dict), strict=True)
    model.eval()
    with open(a.loss_of) as f:
        data = json.load(f)
    with torch.no_grad():
        loss = model(torch.tensor(data["x"]), torch.tensor(data["y"]))
    print(json.dumps({"loss": loss.item(), "params": sum(p.numel() for p in model.parameters())}))
    return 0


def loaded_blas():
    """The BLAS library this process loaded (Debian's torch calls whichever libblas.so.3 the alternatives system
    selects: the reference BLAS is ~20x slower than OpenBLAS), from /proc/self/maps; None where unknown."""
    try:
        with open("/proc/self/maps") as f:
            paths = {line.split()[-1] for line in f if "blas" in line.lower() and "/" in line}
    except OSError:
        return None
    real = sorted({os.path.realpath(p) for p in paths if "lapack" not in p})
    return ", ".join(real) if real else None


def openblas_core():
    """openblas_get_corename() of the OpenBLAS this process loaded ('SkylakeX', 'Prescott'), or None."""
    try:
        with open("/proc/self/maps") as f:
            paths = sorted({line.split()[-1] for line in f if "openblas" in line.lower() and "/" in line})
        for path in paths:
            fn = getattr(ctypes.CDLL(path), "openblas_get_corename", None)
            if fn is not None:
                fn.restype = ctypes.c_char_p
                return fn().decode()
    except OSError:
        return None
    return None


def loadavg1():
    try:
        return os.getloadavg()[0]
    except OSError:
        return 0.0


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", choices=["grassmann", "transformer-dpa", "transformer-ea"], default="grassmann")
    ap.add_argument("--preset", choices=list(PRESETS), default="paper-6l")
    ap.add_argument("--config", help="a grassflow ModelConfig as JSON (overrides --model/--preset and the overrides)")
    ap.add_argument("--layers", type=int)
    ap.add_argument("--d-model", type=int)
    ap.add_argument("--r", type=int)
    ap.add_argument("--offsets", help="comma-separated, one per layer cycling (all in every layer for paper-6l-multi)")
    ap.add_argument("--seq-len", "--block", type=int, dest="seq_len")
    ap.add_argument("--vocab", type=int, default=WORDPIECE_V)
    ap.add_argument("--dropout", type=float)
    ap.add_argument("--norm", choices=["post", "pre"])
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--threads", type=int, default=2, help="torch.set_num_threads (default 2)")
    ap.add_argument("--expect-params", type=int, help="exit 3 unless the model has exactly this many parameters")
    ap.add_argument("--label", default=None, help="the preset name reported in the JSON line")
    ap.add_argument("--state-dict", help="with --loss-of: a safetensors state dict (grassflow's stateDict) to load")
    ap.add_argument("--loss-of", help="with --state-dict: JSON {x, y} token ids; print the loss, do not time")
    ap.add_argument(
        "--ids-file",
        help="int32 little-endian token ids to train on (consecutive B x (L + 1) windows), default uniform random ids",
    )
    ap.add_argument(
        "--order-file",
        help="with --ids-file and an adaptive head: int32 rank -> token id (the targets become frequency ranks)",
    )
    ap.add_argument("--json", action="store_true", help="accepted for symmetry with grassflow-lm bench (always JSON)")
    a = ap.parse_args(argv)

    # OpenBLAS's pthread build (Debian's libopenblas0-pthread) sizes its own pool from this, not set_num_threads
    os.environ.setdefault("OPENBLAS_NUM_THREADS", str(a.threads))
    import torch

    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    blas = loaded_blas()
    if blas is not None and "openblas" not in blas.lower() and "mkl" not in blas.lower():
        print(f"bench_lm.py: warning: torch uses {blas}, not OpenBLAS: apt-get install libopenblas0-pthread", file=sys.stderr)
    c = config_from_args(a)
    model = build(torch, c)
    model.train()
    params = sum(p.numel() for p in model.parameters())
    want = count_params(c)
    if params != want:
        print(f"bench_lm.py: the PyTorch model has {params} parameters, grassflow's countParams gives {want}", file=sys.stderr)
        return 3
    if a.expect_params is not None and params != a.expect_params:
        print(f"bench_lm.py: {params} parameters, expected {a.expect_params}", file=sys.stderr)
        return 3
    if a.state_dict is not None or a.loss_of is not None:
        return parity_loss(torch, model, a)
    # grassflow's defaultDecayFilter: decay matrices (rank >= 2) except the embedding tables
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2 and not n.startswith(("tok_emb", "pos_emb"))]
    rest = [p for n, p in model.named_parameters() if not (p.dim() >= 2 and not n.startswith(("tok_emb", "pos_emb")))]
    opt = torch.optim.AdamW(
        [{"params": decay, "weight_decay": 0.01}, {"params": rest, "weight_decay": 0.0}],
        lr=5e-4,
        betas=(0.9, 0.98),
        eps=1e-8,
    )
    B, L, V = a.batch, c["maxLen"], c["vocabSize"]
    gen = torch.Generator().manual_seed(a.seed)
    ids = rank_of = None
    if a.ids_file is not None:
        import numpy as np

        ids = torch.from_numpy(np.fromfile(a.ids_file, dtype="<i4").astype("int64"))
        if ids.numel() < (a.warmup + a.steps) * B * (L + 1):
            print(f"bench_lm.py: {a.ids_file} holds {ids.numel()} ids, fewer than the steps need", file=sys.stderr)
            return 2
        if a.order_file is not None:
            order = torch.from_numpy(np.fromfile(a.order_file, dtype="<i4").astype("int64"))
            rank_of = torch.empty_like(order)
            rank_of[order] = torch.arange(order.numel())
    times, cpu, last_loss, load0 = [], 0.0, float("nan"), 0.0
    for s in range(a.warmup + a.steps):
        if s == a.warmup:
            load0 = loadavg1()
        if ids is None:
            rows = torch.randint(0, V, (B, L + 1), generator=gen)
        else:
            n = B * (L + 1)
            rows = ids[s * n : (s + 1) * n].reshape(B, L + 1)
        x, y = rows[:, :L], rows[:, 1:]
        if rank_of is not None:
            y = rank_of[y]
        c0, t0 = time.process_time(), time.perf_counter()
        opt.zero_grad(set_to_none=True)
        loss = model(x, y)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        last_loss = loss.item()
        dt, dc = time.perf_counter() - t0, time.process_time() - c0
        if s >= a.warmup:
            times.append(dt)
            cpu += dc
    total = sum(times)
    kind = "grassmann" if c["kind"] == "grassmann" else f"transformer-{c['attention']}"
    out = {
        "model": kind,
        "preset": a.label if a.label is not None else ("config" if a.config is not None else a.preset),
        "batch": B,
        "micro_batch": B,
        "block": L,
        "vocab": V,
        "params": params,
        "steps": a.steps,
        "warmup_steps": a.warmup,
        "loss": "adaptive" if c.get("head") == "adaptive" else "full",
        "head": c.get("head", "tied"),
        "ids": "wiki" if ids is not None else "synthetic",
        "train_tokens_per_s": a.steps * B * L / total,
        "sec_per_step": total / a.steps,
        "sec_per_step_min": min(times),
        "sec_per_step_max": max(times),
        "cpu_sec_per_step": cpu / a.steps,
        "last_loss": last_loss,
        "backend": "pytorch",
        "threads": torch.get_num_threads(),
        "simd": None,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "wasm_heap_peak_mb": None,
        "loadavg_start": load0,
        "loadavg_end": loadavg1(),
        "torch_version": torch.__version__,
        "blas": blas,
        "blas_core": openblas_core(),
        "init_std": INIT_STD,
        "dtype": "float32",
    }
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
