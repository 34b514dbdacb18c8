"""Project 3: asr-train (PyTorch ASR training), mixed Chinese/English."""
from common import Session

P = "/home/dev/work/asr-train"

WANDB_KEY = "3f9c2a71e84b0d56c1e9a7f2b48d03e6a5c7f190"
HF_TOKEN = "hf_QmZtR8vLx2NcW7pKd4YsJ9bF1gHa6EoTuXe"
PG_PW = "Zt8@mQ2wLp"
PG_URL = f"postgresql://asr_writer:{PG_PW}@10.0.8.21:5432/exp_meta"
PG_URL_ENC = "postgresql://asr_writer:Zt8%40mQ2wLp@10.0.8.21:5432/exp_meta"
FEISHU_HOOK = "https://open.feishu.cn/open-apis/bot/v2/hook/8c2f6e1a-4b7d-4e3a-9f10-2d5c7b9e0a41"


def h3s1():
    s = Session("h3s1_asr_train_ddp_hang", P, 1, "mixed", "2026-09-04T11:26:33.000Z", "main", "2.1.305")
    s.title("8 卡 DDP 训练 hang 住")
    s.user("8 卡训练 conformer_ctc_l 跑到 epoch 3 左右就 hang 住了，没报错，nvidia-smi 看 GPU util 全是 100% 但 step 不动。"
           "启动命令 `torchrun --nproc_per_node=8 train.py +experiment=conformer_ctc_l`，log 在 exp/conformer_ctc_l/log/train.log，帮我看看",
           gap=0)
    s.bash("tail -n 12 exp/conformer_ctc_l/log/train.log", """2026-09-04 03:11:52 [rank0] epoch 3 step 41220 loss 38.917 lr 1.43e-03 grad_norm 2.81
2026-09-04 03:11:58 [rank0] epoch 3 step 41230 loss 39.204 lr 1.43e-03 grad_norm 3.02
[rank5]:[E904 03:42:01.338] [PG ID 0 PG GUID 0(default_pg) Rank 5] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=82461, OpType=ALLREDUCE, NumelIn=30517184, NumelOut=30517184, Timeout(ms)=1800000) ran for 1800087 milliseconds before timing out.
[rank2]:[E904 03:42:01.412] [PG ID 0 PG GUID 0(default_pg) Rank 2] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=82462, OpType=ALLREDUCE, NumelIn=30517184, NumelOut=30517184, Timeout(ms)=1800000) ran for 1800093 milliseconds before timing out.
[rank0]:[E904 03:42:01.420] [PG ID 0 PG GUID 0(default_pg) Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=82462, OpType=ALLREDUCE, NumelIn=30517184, NumelOut=30517184, Timeout(ms)=1800000) ran for 1800101 milliseconds before timing out.
[rank5]:[E904 03:42:01.511] [PG ID 0 PG GUID 0(default_pg) Rank 5] Some NCCL operations have failed or timed out. Due to the asynchronous nature of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data.
[rank5]:[E904 03:42:01.512] [PG ID 0 PG GUID 0(default_pg) Rank 5] To avoid data inconsistency, we are taking the entire process down.""",
           description="看训练 log 末尾")
    s.say("rank 5 的 SeqNum 是 82461，其他 rank 是 82462：rank 5 少做了一次 collective，其他 rank 都在等它，30 分钟后 watchdog 超时。"
          "一般是某个 rank 跳过了一个 step。看下 train loop：")
    s.grep("continue", P + "/asr", """asr/train_loop.py:88:            if batch is None:
asr/train_loop.py:89:                continue  # every cut in the batch was filtered out (too long)""")
    s.read(P + "/asr/data/collate.py", """    def __call__(self, cuts: CutSet):
        cuts = cuts.filter(lambda c: c.duration <= self.max_cut_duration)  # 20.0 s
        if len(cuts) == 0:
            return None
        feats, feat_lens = collate_features(cuts)
        return {"feats": feats, "feat_lens": feat_lens, "tokens": self.tokenize(cuts)}""", offset=40)
    s.say("根因找到了：\n\n"
          "- collate 里把超过 20s 的 cut 丢掉，整个 batch 都被丢掉时返回 `None`，train loop 里 `continue`。\n"
          "- 这只发生在某一个 rank 上（这次是 rank 5）。它跳过了这一步的 forward/backward，其他 7 个 rank 在 backward 的 gradient allreduce 里等它，"
          "它却已经进入下一个 batch 的 allreduce，序号错开了。\n"
          "- NCCL 默认 timeout 是 30 分钟（1800000 ms），这期间 NCCL kernel 一直在 spin，所以 GPU util 100% 但没进度。\n\n"
          "修法：别在 collate 里过滤，在 datamodule 里对 CutSet 先 `filter` 掉太长/太短的（0.5s～20s），再交给 DynamicBucketingSampler，"
          "这样每个 rank 拿到的 batch 都不会是空的，`continue` 那段也删掉。\n\n"
          "以后查这类分布式问题可以加 `NCCL_DEBUG=INFO TORCH_DISTRIBUTED_DEBUG=DETAIL`，DETAIL 模式下 collective 不一致时会直接报出哪个 rank 的哪个 op 对不上，"
          "不用干等 30 分钟。")
    s.user("ok 改吧")
    s.edit(P + "/asr/data/datamodule.py", """        cuts = load_manifest_lazy(self.cfg.train_manifest)""",
           """        cuts = load_manifest_lazy(self.cfg.train_manifest)
        # filter here, before the sampler: an empty batch on one rank desyncs DDP collectives
        cuts = cuts.filter(lambda c: 0.5 <= c.duration <= 20.0)""", snippet_start=37)
    s.edit(P + "/asr/train_loop.py", """            if batch is None:
                continue  # every cut in the batch was filtered out (too long)""",
           """            assert batch is not None, "empty batch: filter cuts in the datamodule, not in collate\"""", snippet_start=88)
    s.bash("python -m pytest tests/test_datamodule.py -q", """ImportError while loading conftest '/home/dev/work/asr-train/tests/conftest.py'.
tests/conftest.py:3: in <module>
    from lhotse import CutSet
E   ModuleNotFoundError: No module named 'lhotse'""", is_error=True, code=4)
    s.say("当前 python 里没有 lhotse。要我 `pip install -e .` 装一下吗？")
    s.user("项目用 uv 管环境，跑什么都用 `uv run`，别用系统 python")
    s.bash("uv run pytest tests/test_datamodule.py -q", """.......                                                                  [100%]
7 passed in 12.31s""")
    s.bash("uv run python -m asr.tools.check_durations --manifest /mnt/data/wenetspeech/lhotse/cuts_train.jsonl.gz",
           """scanning /mnt/data/wenetspeech/lhotse/cuts_train.jsonl.gz ...
total=3921447  >20s=1283  <0.5s=96  max=39.72s  mean=4.31s""", gap=140)
    s.say("测试过了。训练集里 >20s 的 cut 有 1283 条、<0.5s 的 96 条，现在都在 sampler 之前被过滤掉，不会再出现某个 rank 拿到空 batch。")
    s.end_turn()

    s.user("另外顺便把 fp16 换掉吧，GradScaler 那套老是 loss scale 掉到 0 然后 NaN，这周已经两次了")
    s.say("两个选择：\n\n"
          "1. **bf16 autocast**：指数位和 fp32 一样，基本不会 overflow/underflow，不需要 GradScaler。A100/H800 都原生支持。\n"
          "2. **继续 fp16**，调 GradScaler 的 `init_scale`/`growth_interval`，或者把某些层强制 fp32。治标。\n\n"
          "硬件支持的话推荐 bf16。")
    s.user("bf16，咱们机器全是 A100/H800")
    s.grep("GradScaler|autocast", P + "/asr", """asr/trainer.py:61:        self.scaler = torch.cuda.amp.GradScaler(enabled=cfg.trainer.precision == "fp16")
asr/trainer.py:118:            with torch.autocast("cuda", dtype=torch.float16, enabled=self.use_amp):
asr/trainer.py:124:            self.scaler.scale(loss).backward()""")
    s.edit(P + "/asr/trainer.py", """            with torch.autocast("cuda", dtype=torch.float16, enabled=self.use_amp):""",
           """            with torch.autocast("cuda", dtype=torch.bfloat16, enabled=self.use_amp):""", snippet_start=118)
    s.edit(P + "/conf/trainer/default.yaml", "precision: fp16", "precision: bf16  # fp16+GradScaler kept hitting NaN", snippet_start=4)
    s.say("已切到 bf16：autocast dtype 改成 `torch.bfloat16`，`trainer.precision` 改成 bf16，GradScaler 只在 fp16 时启用，现在等于关掉了。")
    s.user("顺便看下 wandb 为啥这个 run 没上报，project 应该是 asr-conformer，entity speech-lab")
    s.bash("env | grep -iE 'wandb|hf_'", f"""WANDB_API_KEY={WANDB_KEY}
WANDB_ENTITY=speech-lab
WANDB_PROJECT=asr-conform
HF_TOKEN={HF_TOKEN}""")
    s.say("你 shell 里的 `WANDB_PROJECT` 拼成了 `asr-conform`（少了 `er`），它会覆盖 conf 里 `logger.wandb.project: asr-conformer`，"
          "所以这个 run 其实上报到另一个 project 去了。改一下你的 ~/.zshrc 就行，代码不用动。")
    s.user("我去改。最后帮我 commit 一下，message 用英文，格式 `[module] summary`，比如 `[data] filter long cuts before sampler`")
    s.bash("git add asr/data/datamodule.py asr/train_loop.py asr/trainer.py conf/trainer/default.yaml && "
           "git commit -q -m '[data] filter long cuts before sampler' -m '[trainer] switch AMP to bf16' && git log --oneline -1",
           "a4c19e2 [data] filter long cuts before sampler")
    s.end_turn()

    s.expect("e1", "fact", "command", "zh",
             "8 卡训练启动命令：`torchrun --nproc_per_node=8 train.py +experiment=conformer_ctc_l`。",
             ["torchrun", "+experiment=conformer_ctc_l"])
    s.expect("e2", "experience", "root_cause", "zh",
             "DDP 训练 hang（NCCL watchdog 30 分钟超时、GPU 100%）：collate 过滤超长 cut 后整 batch 为空返回 None，train loop 里 continue，"
             "只有某个 rank 跳过一步，导致 allreduce 错位。", ["continue", "rank"])
    s.expect("e3", "experience", "fix", "zh",
             "修复：在 datamodule 里对 CutSet 先 filter（0.5s～20s）再交给 DynamicBucketingSampler，不在 collate 里过滤，删掉 continue。",
             ["filter", "20"])
    s.expect("e4", "fact", "command", "zh",
             "排查分布式问题时加 `NCCL_DEBUG=INFO TORCH_DISTRIBUTED_DEBUG=DETAIL`，collective 不一致会直接报出哪个 rank 的哪个 op。",
             ["TORCH_DISTRIBUTED_DEBUG"])
    s.expect("e5", "decision", "decision", "zh",
             "混合精度改用 bf16 autocast，去掉 fp16 + GradScaler，因为 fp16 的 loss scale 老掉到 0 出 NaN；机器都是 A100/H800，支持 bf16。",
             ["bf16"], chosen="bf16", over=["fp16"], why=["NaN"])
    s.expect("e6", "fact", "config", "zh",
             "WenetSpeech 的 lhotse manifests 在 /mnt/data/wenetspeech/lhotse/（如 cuts_train.jsonl.gz）。",
             ["/mnt/data/wenetspeech/lhotse"])
    s.expect("e7", "fact", "config", "zh",
             "实验记录在 wandb：entity speech-lab，project asr-conformer（conf 里 logger.wandb.project；WANDB_PROJECT 环境变量会覆盖它）。",
             ["asr-conformer"])
    s.expect("e8", "fact", "convention", "zh",
             "commit message 用英文，格式 `[module] summary`，例如 `[data] filter long cuts before sampler`。",
             ["[module]"])
    s.expect("e9", "fact", "command", "zh",
             "项目用 uv 管环境，运行任何东西都用 `uv run`（如 `uv run pytest`），不要用系统 python。", ["uv run"])
    s.acceptable(["1800"], "NCCL watchdog 默认超时 30 分钟 (1800000 ms)")
    s.acceptable(["check_durations"], "asr.tools.check_durations 统计 manifest 时长分布")
    s.forbid("zshrc", "7 passed", "a4c19e2", "这周已经两次", "41230")
    s.secret(WANDB_KEY, HF_TOKEN)
    return s


def h3s2():
    s = Session("h3s2_asr_train_tokenizer", P, 2, "mixed", "2026-09-11T08:05:12.000Z", "exp/char-bpe", "2.1.310")
    s.title("CER 偏高排查 + tokenizer 换 char_bpe500")
    s.user("eval 出来 wenet_test_net CER 12.4%，比 paper 高太多了，怀疑 eval 本身有问题。eval 命令是 "
           "`uv run python -m asr.eval --ckpt exp/conformer_ctc_l/epoch-30.pt --test-sets aishell1_test,wenet_test_net`", gap=0)
    s.recall_attachment([
        ("2", "fact", "1 week ago", "排查 DDP 问题加 NCCL_DEBUG=INFO TORCH_DISTRIBUTED_DEBUG=DETAIL。"),
        ("6", "decision", "1 week ago", "混合精度用 bf16 autocast，弃用 fp16 + GradScaler（loss scale 掉到 0 导致 NaN）。"),
        ("9", "fact", "1 week ago", "commit message 用英文，格式 [module] summary。"),
    ])
    s.bash("uv run python -m asr.eval --ckpt exp/conformer_ctc_l/epoch-30.pt --test-sets aishell1_test,wenet_test_net --dump-errors 4",
           """loading exp/conformer_ctc_l/epoch-30.pt (tokenizer=spm_bpe5000)
| test_set       | utts  | CER    | ins  | del  | sub   |
|----------------|-------|--------|------|------|-------|
| aishell1_test  | 7176  | 4.91%  | 312  | 1180 | 3651  |
| wenet_test_net | 24774 | 12.40% | 2210 | 9873 | 40192 |
--- worst utterances (wenet_test_net) ---
REF: 我们今天去ＫＴＶ唱歌，好不好？
HYP: 我们今天去ktv唱歌好不好
REF: 这款ＡＰＰ我用了三年了。
HYP: 这款app我用了三年了
REF: 嗯，Ｏｋａｙ，那就这样吧！
HYP: 嗯okay那就这样吧""", description="跑 eval 并导出错误样例", gap=300)
    s.read(P + "/asr/eval.py", """def score(refs, hyps):
    errs = total = 0
    for r, h in zip(refs, hyps):
        errs += editdistance.eval(list(r), list(h))
        total += len(r)
    return errs / total""", offset=71)
    s.say("问题在 eval 本身：`score()` 直接拿原始字符串算编辑距离。wenet_test_net 的参考文本里有全角字母（ＫＴＶ）和中文标点，"
          "模型输出是半角小写、没有标点，这些全算成错误。比如第一条其实模型完全对，却记了 7 个错。\n\n"
          "项目里 `asr/utils/text_norm.py` 已经有 `normalize_text`（NFKC 全角转半角 → 去标点 → 英文转大写），目前只在数据准备时用。"
          "eval 时 ref 和 hyp 都过一遍它就行。")
    s.edit(P + "/asr/eval.py", """    for r, h in zip(refs, hyps):
        errs += editdistance.eval(list(r), list(h))""", """    for r, h in zip(refs, hyps):
        r, h = normalize_text(r), normalize_text(h)
        errs += editdistance.eval(list(r), list(h))""", snippet_start=73)
    s.bash("uv run python -m asr.eval --ckpt exp/conformer_ctc_l/epoch-30.pt --test-sets aishell1_test,wenet_test_net",
           """loading exp/conformer_ctc_l/epoch-30.pt (tokenizer=spm_bpe5000)
| test_set       | utts  | CER   | ins  | del  | sub   |
|----------------|-------|-------|------|------|-------|
| aishell1_test  | 7176  | 4.83% | 301  | 1152 | 3601  |
| wenet_test_net | 24774 | 9.02% | 1987 | 4410 | 32118 |""", gap=280)
    s.say("normalize 之后 wenet_test_net 从 12.40% 降到 9.02%，aishell1_test 基本不变（它的参考文本本来就没有标点）。")
    s.end_turn()

    s.user("ok that explains a good chunk. when you show CER numbers give me a table per test set like that, not prose. "
           "second thing: tokenizer. we're on spm_bpe5000 over mixed zh/en text and rare chars get split into byte pieces. "
           "I'm thinking chars for Chinese + a small BPE for English. thoughts?")
    s.bash("uv run python -m asr.tools.token_stats --lang data/lang/spm_bpe5000 --text data/text/train.txt", """tokens total         : 61,204,877
byte-fallback pieces : 1,041,283 (1.70%)
chars needing bytes  : 2,114 distinct
pieces per such char : 3.0 avg
english words        : 4.1% of tokens""", gap=60)
    s.say("Numbers back up the concern: 2,114 distinct Chinese characters only exist as 3 byte pieces in spm_bpe5000. "
          "With CTC the model has to emit all 3 bytes in the right order; miss one and the decoded text has `<0xE4>`-style garbage "
          "instead of a character.\n\nOptions:\n"
          "1. **char_bpe500**: every CJK char that covers 99.98% of training text is its own unit, English goes through a 500-piece BPE, rare chars → `<unk>`.\n"
          "2. **Bigger BPE** (8k–10k) with `character_coverage=0.9999`: fewer byte pieces, but the softmax grows and English pieces get fragmented weirdly.\n"
          "3. Keep spm_bpe5000.\n\nI'd go with 1; it's also what most Mandarin recipes do.")
    s.user("行，就 char_bpe500。OOV 的字映射到 <unk>，反正 test 集里 OOV 率才 0.02%")
    s.bash("uv run python -m asr.tools.build_tokenizer --type char_bpe --en-vocab 500 --text data/text/train.txt --out data/lang/char_bpe500",
           """[build_tokenizer] cjk chars: 5323 (coverage 99.98%)
[build_tokenizer] english bpe: 500 pieces (sentencepiece, model_type=bpe)
[build_tokenizer] specials: <blk> <unk> <sos/eos>
[build_tokenizer] total units: 5826 -> data/lang/char_bpe500/tokens.txt""", gap=75)
    s.say("Tokenizer built: 5323 CJK chars + 500 English BPE pieces + 3 specials = 5826 units, in `data/lang/char_bpe500/`.")
    s.user("btw we don't call torchrun directly anymore, Jun wrapped it in scripts/launch.sh: `scripts/launch.sh conformer_ctc_l [overrides]`. "
           "it sets OMP_NUM_THREADS=8 and the nccl env and takes the GPUs from CUDA_VISIBLE_DEVICES. do a short smoke run with the new tokenizer")
    s.bash("scripts/launch.sh conformer_ctc_l tokenizer=char_bpe500 trainer.max_steps=200", """[launch] experiment=conformer_ctc_l gpus=0,1,2,3,4,5,6,7 OMP_NUM_THREADS=8
[rank0] building model: ConformerCTC(d_model=512, layers=16, vocab=5826)
[rank0] init_from exp/conformer_ctc_l/epoch-30.pt
Traceback (most recent call last):
  File "/home/dev/work/asr-train/train.py", line 41, in main
    load_init(model, cfg.model.init_from)
  File "/home/dev/work/asr-train/asr/checkpoint.py", line 88, in load_init
    model.load_state_dict(state, strict=True)
RuntimeError: Error(s) in loading state_dict for ConformerCTC:
	size mismatch for ctc_head.weight: copying a param with shape torch.Size([5000, 512]) from checkpoint, the shape in current model is torch.Size([5826, 512]).
	size mismatch for ctc_head.bias: copying a param with shape torch.Size([5000]) from checkpoint, the shape in current model is torch.Size([5826]).
E0911 17:22:40.117000 140 torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: 1) local_rank: 0 (pid: 88213) of binary: /home/dev/work/asr-train/.venv/bin/python""",
           is_error=True, description="smoke run with char_bpe500")
    s.grep("def load_init|init_from|init_ignore", P, """asr/checkpoint.py:80:def load_init(model, path, ignore_keys=()):
conf/experiment/conformer_ctc_l.yaml:12:  init_from: exp/conformer_ctc_l/epoch-30.pt""")
    s.say("The experiment config initialises from the old epoch-30 checkpoint, whose `ctc_head` is sized for 5000 units; the new "
          "vocab has 5826. `load_init` already supports `ignore_keys`, so I'll keep the encoder weights and only re-init the output "
          "layer: `init_ignore_keys: [ctc_head]`.")
    s.edit(P + "/conf/experiment/conformer_ctc_l.yaml", """  init_from: exp/conformer_ctc_l/epoch-30.pt""",
           """  init_from: exp/conformer_ctc_l/epoch-30.pt
  init_ignore_keys: [ctc_head]  # vocab size differs between tokenizers""", snippet_start=12)
    s.bash("scripts/launch.sh conformer_ctc_l tokenizer=char_bpe500 trainer.max_steps=200 2>&1 | grep -E 'init_from|step (100|200)|done'",
           """[rank0] init_from exp/conformer_ctc_l/epoch-30.pt (ignored: ctc_head.weight, ctc_head.bias)
[rank0] epoch 1 step 100 loss 187.42 lr 8.0e-06
[rank0] epoch 1 step 200 loss 121.07 lr 1.6e-05
[rank0] done: max_steps=200 reached""", gap=420)
    s.say("| check | result |\n|---|---|\n| init from epoch-30 (minus ctc_head) | ok |\n| 200 steps with char_bpe500 | ok, loss 187 → 121 |")
    s.user("haha nice. Jun 周五请假，launch.sh 有问题先别找他")
    s.end_turn()

    s.expect("e1", "fact", "command", "en",
             "Evaluate with `uv run python -m asr.eval --ckpt <ckpt> --test-sets aishell1_test,wenet_test_net` (`--dump-errors N` shows worst utterances).",
             ["asr.eval", "--test-sets"])
    s.expect("e2", "experience", "root_cause", "zh",
             "CER 偏高是 eval 的问题：参考文本有全角字母和中文标点、大小写不一致，score() 直接比原始字符串；eval 时 ref/hyp 都过 "
             "asr/utils/text_norm.py 的 normalize_text（NFKC、去标点、英文大写），wenet_test_net 从 12.40% 降到 9.02%。",
             ["normalize", "CER"])
    s.expect("e3", "fact", "preference", "en",
             "When reporting CER, show a table per test set, not prose.", ["table"])
    s.expect("e4", "decision", "decision", "en",
             "Switch the tokenizer from spm_bpe5000 to char_bpe500 (CJK chars as units + 500-piece English BPE, rare chars → <unk>), "
             "because spm_bpe5000 splits ~2.1k rare Chinese chars into byte-fallback pieces that CTC has to emit in order.",
             ["char_bpe500"], chosen="char_bpe500", over=["spm_bpe5000"], why=["byte"])
    s.expect("e5", "fact", "command", "en",
             "Build the tokenizer with `uv run python -m asr.tools.build_tokenizer --type char_bpe --en-vocab 500 --text data/text/train.txt "
             "--out data/lang/char_bpe500` (5826 units).", ["build_tokenizer"])
    s.expect("e6", "fact", "command", "en",
             "Launch training with `scripts/launch.sh <experiment> [overrides]` (sets OMP_NUM_THREADS=8 and NCCL env, GPUs from "
             "CUDA_VISIBLE_DEVICES) instead of calling torchrun directly.", ["scripts/launch.sh"],
             supersedes="h3s1_asr_train_ddp_hang#e1")
    s.expect("e7", "experience", "fix", "en",
             "Initialising from a checkpoint trained with another tokenizer fails with a ctc_head size mismatch; set "
             "`init_ignore_keys: [ctc_head]` in the experiment config to reuse the encoder and re-init the output layer.",
             ["ctc_head", "init_ignore_keys"])
    s.acceptable(["<unk>"], "OOV chars map to <unk>; OOV rate on test is 0.02%")
    s.acceptable(["token_stats"], "asr.tools.token_stats reports byte-fallback rates")
    s.forbid("TORCH_DISTRIBUTED_DEBUG", "GradScaler", "[module]", "请假", "187.42", "121.07", "4.91%")
    return s


def h3s3():
    s = Session("h3s3_asr_train_specaug", P, 3, "mixed", "2026-09-18T15:48:27.000Z", "main", "2.1.316")
    s.title("SpecAugment 配置问答")
    s.user("SpecAugment 现在是怎么配的？time mask 几个、多宽？只是问问，不用改", gap=0)
    s.mcp_search("SpecAugment time mask config", [
        {"id": "44", "content": "Tokenizer 改用 char_bpe500（汉字 + 英文 BPE 500），弃用 spm_bpe5000。"},
        {"id": "47", "content": "eval 前 ref/hyp 都要过 asr/utils/text_norm.py 的 normalize_text。"},
        {"id": "51", "content": "训练用 scripts/launch.sh <experiment> 启动，会设置 OMP_NUM_THREADS=8。"},
    ])
    s.say("记忆里没有 SpecAugment 的信息，直接看代码。")
    s.bash("uv run python -c \"from asr.augment import SpecAugment; print(SpecAugment())\"", """Traceback (most recent call last):
  File "<string>", line 1, in <module>
ImportError: cannot import name 'SpecAugment' from 'asr.augment' (/home/dev/work/asr-train/asr/augment.py)""",
           is_error=True)
    s.grep("SpecAugment", P, """conf/data/wenetspeech.yaml:31:  _target_: lhotse.dataset.SpecAugment
asr/data/datamodule.py:58:        input_transforms=[instantiate(self.cfg.spec_augment)],""")
    s.read(P + "/conf/data/wenetspeech.yaml", """spec_augment:
  _target_: lhotse.dataset.SpecAugment
  time_warp_factor: 80
  num_feature_masks: 2
  features_mask_size: 27
  num_frame_masks: 10
  frames_mask_size: 100
  max_frames_mask_fraction: 0.15
  p: 0.9""", offset=30)
    s.tool("Read", {"file_path": P + "/asr/data/datamodule.py"}, "     1\t\"\"\"Lhotse-based data module.\"\"\"\n     2\timport logging\n",
           result_gap=1.0)
    s.interrupt()
    s.user("不用看那么多，yaml 里的就够了")
    s.say("用的是 lhotse 自带的 `SpecAugment`（不是 asr.augment 里的），参数在 `conf/data/wenetspeech.yaml`：\n\n"
          "- time mask：`num_frame_masks: 10` 个，每个最多 `frames_mask_size: 100` 帧，并且所有 time mask 加起来最多遮住 15% 的帧（`max_frames_mask_fraction`）\n"
          "- freq mask：2 个，每个最多 27 维\n- time warp factor 80\n- 以 0.9 的概率作用在每个 batch 上")
    s.user("ok 懂了 thx。那 speed perturb 呢")
    s.grep("perturb_speed", P + "/asr", """asr/data/datamodule.py:44:        cuts = cuts + cuts.perturb_speed(0.9) + cuts.perturb_speed(1.1)""")
    s.say("在 datamodule 里做的：原始数据 + 0.9 倍速 + 1.1 倍速拼在一起，所以一个 epoch 实际是 3 倍数据量，lazy 的，特征是 on-the-fly 算的。")
    s.user("好，没事了")
    s.end_turn()
    s.local_command("cost", "", "Total cost:            $0.41\nTotal duration (API):  1m 12s\nTotal duration (wall): 9m 3s")

    s.acceptable(["SpecAugment"], "lhotse SpecAugment params in conf/data/wenetspeech.yaml (10 frame masks x 100, 15%, 2 freq masks x 27)")
    s.acceptable(["perturb_speed"], "speed perturb 0.9/1.1 concatenated in datamodule, epoch = 3x data")
    s.forbid("spm_bpe5000", "normalize_text", "OMP_NUM_THREADS", "$0.41", "没事了", "不用看那么多")
    return s


def h3s4():
    s = Session("h3s4_asr_train_resume", P, 4, "mixed", "2026-10-02T09:14:06.000Z", "fix/resume-sched", "2.1.324")
    s.title("resume 后 loss 跳高 + eval 平均 + 通知")
    s.user("两个变化先同步下：数据整体搬到新 NAS 了，manifests 现在在 /mnt/nas2/asr/manifests/wenetspeech/，老的 /mnt/data 下周下线；"
           "实验跟踪也从 wandb 换成组里自建的 ClearML 了，project 叫 asr/conformer，train.py 里 wandb 相关的可以删了。\n"
           "然后问题：从 epoch-12 resume 以后 loss 一下子跳上去了，看着像是重新 warmup 了", gap=0)
    s.read(P + "/asr/checkpoint.py", """def save_checkpoint(path, model, optimizer, epoch):
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": epoch}, path)


def load_checkpoint(path, model, optimizer):
    ckpt = torch.load(path, map_location="cpu")
    model.load_state_dict(ckpt["model"])
    optimizer.load_state_dict(ckpt["optimizer"])
    return ckpt["epoch"]""", offset=20)
    s.grep("WarmupLR", P + "/asr", """asr/trainer.py:66:        self.scheduler = WarmupLR(self.optimizer, warmup_steps=25000, peak_lr=2e-3)""")
    s.say("checkpoint 里只有 model、optimizer 和 epoch，没有 scheduler 的 state 和 global_step。resume 时 `WarmupLR` 是新建的，step 从 0 开始，"
          "LR 又从 0 往 2e-3 爬一遍 warmup；模型在 epoch 12 已经到了 LR 衰减后的区域，再被拉回 peak LR，loss 就跳上去了。\n\n"
          "另外 sampler 的状态也没存，resume 的那个 epoch 会从头重新过一遍数据。")
    s.user("yeah fix it. save scheduler + global_step + sampler state")
    s.edit(P + "/asr/checkpoint.py", """def save_checkpoint(path, model, optimizer, epoch):
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": epoch}, path)""",
           """def save_checkpoint(path, model, optimizer, scheduler, sampler, epoch, global_step):
    torch.save({
        "model": model.state_dict(),
        "optimizer": optimizer.state_dict(),
        "scheduler": scheduler.state_dict(),
        "sampler": sampler.state_dict(),
        "epoch": epoch,
        "global_step": global_step,
    }, path)""", snippet_start=20)
    s.bash("uv run pytest tests/test_checkpoint.py -q", """..F......                                                                [100%]
=================================== FAILURES ===================================
_____________________ test_resume_from_legacy_checkpoint ______________________

    def test_resume_from_legacy_checkpoint(tmp_path, tiny_model, legacy_ckpt):
>       state = load_checkpoint(legacy_ckpt, tiny_model, opt, sched, sampler)

tests/test_checkpoint.py:57:
_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _
asr/checkpoint.py:39: in load_checkpoint
    scheduler.load_state_dict(ckpt["scheduler"])
E   KeyError: 'scheduler'
=========================== short test summary info ============================
FAILED tests/test_checkpoint.py::test_resume_from_legacy_checkpoint - KeyError: 'scheduler'
1 failed, 8 passed in 4.77s""", is_error=True)
    s.say("老格式的 checkpoint 没有 `scheduler` 字段。两种处理：\n"
          "1. fast-forward：按 `epoch * steps_per_epoch` 推算 global_step，把 scheduler step 到那个位置；\n"
          "2. 直接报错，要求显式加 `--reset-scheduler` 才允许从头 warmup。")
    s.user("别搞 fast-forward，用了 DynamicBucketingSampler 每个 epoch 的 step 数都不一样，算不准。老 checkpoint 直接 raise，提示加 --reset-scheduler 显式确认")
    s.edit(P + "/asr/checkpoint.py", """    scheduler.load_state_dict(ckpt["scheduler"])""", """    if "scheduler" not in ckpt:
        if not reset_scheduler:
            raise RuntimeError(f"{path} has no scheduler state (legacy checkpoint); "
                               "pass --reset-scheduler to resume with a fresh warmup")
    else:
        scheduler.load_state_dict(ckpt["scheduler"])
        sampler.load_state_dict(ckpt["sampler"])""", snippet_start=39)
    s.bash("uv run pytest tests/test_checkpoint.py -q", """.........                                                                [100%]
9 passed in 4.51s""")
    s.say("9 个测试全过。老 checkpoint 不加 `--reset-scheduler` 会直接报错。")
    s.compact("- Manifests moved to /mnt/nas2/asr/manifests/wenetspeech/; tracking moved from wandb to ClearML (project asr/conformer).\n"
              "- Resume bug: checkpoints lacked scheduler state/global_step, so WarmupLR restarted warmup. Now saving scheduler, sampler, "
              "global_step; legacy checkpoints raise unless --reset-scheduler.\n- tests/test_checkpoint.py: 9 passed.")
    s.user("ok next: final eval. let's average the last 10 epochs instead of picking the best checkpoint, averaging gave like -0.3 CER "
           "on dev last time. add --avg to asr.eval")
    s.grep("def average_checkpoints", P + "/asr", """asr/tools/avg_ckpt.py:9:def average_checkpoints(paths: list[Path]) -> dict:""")
    s.edit(P + "/asr/eval.py", """    parser.add_argument("--ckpt", required=True)""", """    parser.add_argument("--ckpt", required=True)
    parser.add_argument("--avg", type=int, default=1,
                        help="average this many epoch checkpoints ending at --ckpt")""", snippet_start=18)
    s.bash("uv run python -m asr.eval --ckpt exp/conformer_ctc_l/epoch-40.pt --avg 10 --test-sets aishell1_test,wenet_test_net",
           """averaging 10 checkpoints: epoch-31.pt .. epoch-40.pt
| test_set       | utts  | CER   | ins  | del  | sub   |
|----------------|-------|-------|------|------|-------|
| aishell1_test  | 7176  | 4.52% | 288  | 1040 | 3410  |
| wenet_test_net | 24774 | 8.61% | 1901 | 4122 | 30790 |""", gap=600)
    s.say("| test_set | epoch-40 | avg 10 (31–40) |\n|---|---|---|\n| aishell1_test | 4.77% | 4.52% |\n| wenet_test_net | 8.93% | 8.61% |")
    s.user("好。eval 结果要写进 exp_meta 库，scripts/report_cer.py 读的是 EXP_DB_URL，看下为啥我这报连不上")
    s.bash("grep -rn EXP_DB_URL scripts/ .env", f"""scripts/report_cer.py:12:    dsn = os.environ["EXP_DB_URL"]
.env:3:EXP_DB_URL={PG_URL}""")
    s.bash("uv run python scripts/report_cer.py --exp conformer_ctc_l --avg 10", """Traceback (most recent call last):
  File "/home/dev/work/asr-train/scripts/report_cer.py", line 13, in <module>
    conn = psycopg.connect(dsn)
psycopg.OperationalError: could not translate host name "mQ2wLp@10.0.8.21" to address: Name or service not known""",
           is_error=True)
    s.say("密码里有一个 `@`，连接串被从第一个 `@` 处切开了，后半截密码被当成了 host。URL 里的密码需要 percent-encode，`@` 写成 `%40`。我改一下 .env：")
    s.bash(f"sed -i 's#^EXP_DB_URL=.*#EXP_DB_URL={PG_URL_ENC}#' .env && uv run python scripts/report_cer.py --exp conformer_ctc_l --avg 10",
           """connected to exp_meta
inserted 2 rows into cer_results (exp=conformer_ctc_l, avg=10)""")
    s.say("连上了，写入了 2 行到 `cer_results`。")
    s.user(f"训练完的通知改发飞书群，webhook 是 {FEISHU_HOOK} ，放 ClearML 的 secret 里，环境变量名 FEISHU_BOT_WEBHOOK，别进 git")
    s.grep("WEBHOOK", P + "/asr", """asr/utils/notify.py:7:    url = os.environ.get("SLACK_WEBHOOK")
asr/utils/notify.py:10:    requests.post(url, json={"text": text}, timeout=5)""")
    s.edit(P + "/asr/utils/notify.py", """    url = os.environ.get("SLACK_WEBHOOK")""", """    url = os.environ.get("FEISHU_BOT_WEBHOOK")""",
           snippet_start=7)
    s.edit(P + "/asr/utils/notify.py", """    requests.post(url, json={"text": text}, timeout=5)""",
           """    requests.post(url, json={"msg_type": "text", "content": {"text": text}}, timeout=5)""", snippet_start=10)
    s.say("通知改成读 `FEISHU_BOT_WEBHOOK`，payload 换成飞书的 `msg_type/content` 格式。webhook 本身没写进任何文件，你在 ClearML 里配上就行。")
    s.end_turn()

    s.expect("e1", "fact", "config", "zh",
             "WenetSpeech manifests 已搬到新 NAS：/mnt/nas2/asr/manifests/wenetspeech/（/mnt/data 即将下线）。",
             ["/mnt/nas2/asr/manifests"], supersedes="h3s1_asr_train_ddp_hang#e6")
    s.expect("e2", "fact", "config", "zh",
             "实验跟踪从 wandb 换成组里自建的 ClearML，project 为 asr/conformer；wandb 相关代码可以删掉。",
             ["ClearML", "asr/conformer"], supersedes="h3s1_asr_train_ddp_hang#e7")
    s.expect("e3", "experience", "root_cause", "zh",
             "resume 后 loss 跳高：checkpoint 只存了 model/optimizer/epoch，没存 scheduler state 和 global_step，WarmupLR 从 0 重新 warmup 到 peak LR。",
             ["scheduler", "warmup"])
    s.expect("e4", "experience", "fix", "en",
             "save_checkpoint now also stores scheduler.state_dict(), sampler.state_dict() and global_step, so resume continues the LR "
             "schedule and doesn't replay the epoch's data.", ["global_step", "sampler"])
    s.expect("e5", "decision", "decision", "zh",
             "没有 scheduler state 的老 checkpoint 直接 raise，需要显式加 --reset-scheduler 才从头 warmup；不做 fast-forward，"
             "因为 DynamicBucketingSampler 每个 epoch 的 step 数不固定，算不准。",
             ["--reset-scheduler"], chosen="--reset-scheduler", over=["fast-forward"], why=["bucket"])
    s.expect("e6", "decision", "decision", "en",
             "Final eval averages the last 10 epoch checkpoints (`asr.eval --avg 10`) instead of picking the best checkpoint; "
             "averaging gave about -0.3 CER on dev.", ["--avg"], chosen="--avg", over=["best"], why=["CER"])
    s.expect("e7", "fact", "config", "zh",
             "eval 结果由 scripts/report_cer.py 写入 exp_meta Postgres（cer_results 表），连接串从环境变量 EXP_DB_URL 读（在 .env 里）。",
             ["EXP_DB_URL", "report_cer"])
    s.expect("e8", "experience", "gotcha", "zh",
             "EXP_DB_URL 的密码里有 @，必须 percent-encode 成 %40，否则 psycopg 把后半截当成 host（could not translate host name）。",
             ["%40"])
    s.expect("e9", "fact", "config", "zh",
             "训练完成通知发飞书群：asr/utils/notify.py 读环境变量 FEISHU_BOT_WEBHOOK（配在 ClearML secret 里，不进 git），payload 用 msg_type/content 格式。",
             ["FEISHU_BOT_WEBHOOK"])
    s.acceptable(["average_checkpoints"], "asr/tools/avg_ckpt.py has average_checkpoints")
    s.acceptable(["25000"], "WarmupLR warmup_steps=25000, peak_lr=2e-3")
    s.forbid("inserted 2 rows", "9 passed", "1 failed, 8 passed")
    s.secret(PG_PW, PG_URL, PG_URL_ENC, FEISHU_HOOK)
    return s


SESSIONS = [h3s1, h3s2, h3s3, h3s4]
