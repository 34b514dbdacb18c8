"""Project C (mixed): llm-gateway, 内部 LLM 网关 (Python 3.12, FastAPI, httpx, Redis; OpenAI-compatible vendors + vLLM)."""
from lib import Session, reminder

CWD = "/home/dev/work/llm-gateway"


def s1():
    s = Session("c1_llmgw_sse_buffering", CWD, "2026-10-06T07:00:00Z", branch="fix/sse", lang="mixed", order=1)
    s.snapshot()
    s.user("gateway 的 streaming 有问题，业务方说 client 要等整段生成完才一次性收到，not really streaming。"
           "本地跑是好的。先帮我看下")
    s.bash("curl -sN https://llm-gw.corp.example.com/v1/chat/completions -H \"Authorization: Bearer $GW_KEY\" "
           "-d '{\"model\":\"chat-default\",\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":\"count to 5\"}]}' "
           "| ts '%.s' | head -4",
           "1759734061.902311 data: {\"id\":\"chatcmpl-9f2\",\"choices\":[{\"delta\":{\"content\":\"1\"}}]}\n"
           "1759734061.902388 data: {\"id\":\"chatcmpl-9f2\",\"choices\":[{\"delta\":{\"content\":\",\"}}]}\n"
           "1759734061.902401 data: {\"id\":\"chatcmpl-9f2\",\"choices\":[{\"delta\":{\"content\":\" 2\"}}]}\n"
           "1759734061.902415 data: {\"id\":\"chatcmpl-9f2\",\"choices\":[{\"delta\":{\"content\":\",\"}}]}",
           desc="Timestamp SSE chunks via ingress")
    s.bash("kubectl -n llm port-forward deploy/llm-gateway 18087:8087 >/dev/null & sleep 1; curl -sN localhost:18087/v1/chat/completions "
           "-H \"Authorization: Bearer $GW_KEY\" -d '{\"model\":\"chat-default\",\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":\"count to 5\"}]}' | ts '%.s' | head -4",
           "1759734088.114020 data: {\"id\":\"chatcmpl-a01\",\"choices\":[{\"delta\":{\"content\":\"1\"}}]}\n"
           "1759734088.161874 data: {\"id\":\"chatcmpl-a01\",\"choices\":[{\"delta\":{\"content\":\",\"}}]}\n"
           "1759734088.203355 data: {\"id\":\"chatcmpl-a01\",\"choices\":[{\"delta\":{\"content\":\" 2\"}}]}\n"
           "1759734088.247910 data: {\"id\":\"chatcmpl-a01\",\"choices\":[{\"delta\":{\"content\":\",\"}}]}",
           desc="Same request straight to the pod")
    s.say("直连 pod 每个 chunk 间隔 ~45ms，是真 streaming；走 ingress 所有 chunk 的时间戳挤在同一毫秒。ingress-nginx 默认 "
          "`proxy_buffering on`，上游的响应先攒进 buffer，满了或者结束才往下游吐。\n\n两个改法：\n"
          "1. StreamingResponse 里加 response header `X-Accel-Buffering: no`，nginx 只对这个响应关 buffering\n"
          "2. ingress 上加 annotation `nginx.ingress.kubernetes.io/proxy-buffering: \"off\"`，整个 host 都关")
    s.user("ingress 是平台组统一管的，annotation 要提工单，而且会影响我们非 stream 的 path。用 header 吧")
    s.edit("/home/dev/work/llm-gateway/gateway/routes/chat.py",
           "return StreamingResponse(gen, media_type=\"text/event-stream\")",
           "return StreamingResponse(gen, media_type=\"text/event-stream\",\n                         headers={\"X-Accel-Buffering\": \"no\", \"Cache-Control\": \"no-cache\"})")
    s.bash("uv run pytest -q -m 'not live'",
           "........................................................................ [ 61%]\n"
           ".............................................                            [100%]\n117 passed, 9 deselected in 6.84s")
    s.user("ok. 顺便，tests 里 live 那几个是打真实 vendor 的对吧，CI 里不跑？")
    s.say("对，`-m live` 标记的会真实调用 vendor（要 key，花钱），CI 只跑 `uv run pytest -q -m 'not live'`。")
    s.user("下一个问题：rate limit。现在 limiter 是 in-memory 的 dict，我们线上 6 个 replica")
    s.say("那等于每个 replica 各算各的，实际上限是配置的 6 倍，而且 pod 重启就清零。可以用 Redis 做 per-API-key 的 token bucket"
          "（Lua 脚本原子扣减），或者在 ingress 层限。ingress 层拿不到我们按 team 配的 quota。")
    s.user("Redis 吧，infra 有现成的。连接串：redis://:h7Gd92kLqPzz@10.30.1.7:6379/2 ，db 2 是给我们的")
    s.say("好，连接串放 `GW_REDIS_URL` 环境变量（k8s secret），代码里不落。用 db 2。")
    s.edit("/home/dev/work/llm-gateway/gateway/ratelimit.py", "_buckets: dict[str, Bucket] = {}",
           "_redis = redis.asyncio.from_url(settings.redis_url)\n_take = _redis.register_script(TOKEN_BUCKET_LUA)")
    s.bash("uv run pytest -q tests/test_ratelimit.py",
           "E   redis.exceptions.ConnectionError: Error 111 connecting to localhost:6379. Connection refused.\n"
           "FAILED tests/test_ratelimit.py::test_bucket_refills - redis.exceptions.ConnectionError\n1 failed, 3 passed in 0.52s",
           err=True)
    s.bash("ls docker-compose*.yml; grep -n -A3 'redis:' docker-compose.yml",
           "docker-compose.yml\n8:  redis:\n9:    image: redis:7-alpine\n10:    ports: [\"6380:6379\"]")
    s.say("本地 compose 里的 redis 映射在 6380，不是 6379。测试用 `GW_REDIS_URL=redis://localhost:6380/0`，我加到 `tests/conftest.py` 的默认值里。")
    s.edit("/home/dev/work/llm-gateway/tests/conftest.py", "os.environ.setdefault(\"GW_REDIS_URL\", \"redis://localhost:6379/0\")",
           "os.environ.setdefault(\"GW_REDIS_URL\", \"redis://localhost:6380/0\")")
    s.bash("docker compose up -d redis && uv run pytest -q tests/test_ratelimit.py", " ✔ Container llm-gateway-redis-1  Started\n....                                                                     [100%]\n4 passed in 0.61s")
    s.user("nice 👍 本地起服务的命令是啥来着，我每次都要翻 README")
    s.say("`uv run uvicorn gateway.main:app --reload --port 8087`")
    s.user("ok。还有以后新 vendor 的 adapter 都放 gateway/providers/<vendor>.py，实现 Provider protocol，别散在 routes 里。"
           "另外解释你可以用中文，但 code 里的 identifier 和 log message 全部英文")
    s.say("好，记住了。")
    s.user("哦还有 model alias 在 config/models.yaml，chat-default 目前指向 qwen2.5-72b-instruct，别在代码里写死模型名")
    s.say("收到。")
    s.stop(ms=1720880)
    s.title("Fix SSE buffering and move rate limit to Redis")

    s.exp("root_cause", "zh", "SSE 经过 ingress 后变成整段返回：ingress-nginx 默认 proxy_buffering on，上游响应先进 buffer；直连 pod 正常。",
          ["proxy_buffering", "ingress"])
    s.decision("zh", "流式响应加 header `X-Accel-Buffering: no` 关 buffering，不在 ingress 加 proxy-buffering annotation：ingress 归平台组管"
               "要提工单，而且会影响非 stream 的 path。", ["X-Accel-Buffering"], "X-Accel-Buffering", ["annotation"], ["平台组"])
    s.fact("command", "zh", "CI 和本地跑测试用 `uv run pytest -q -m 'not live'`；标 live 的测试会真实调用 vendor（要 key、花钱）。",
           ["not live"])
    s.decision("zh", "限流改成 Redis 上按 API key 的 token bucket（Lua 原子扣减），不用进程内 in-memory dict：线上 6 个 replica 各算各的，"
               "重启还清零；也不在 ingress 限，拿不到按 team 配的 quota。", ["token bucket"], "Redis", ["in-memory"], ["replica"])
    s.fact("config", "zh", "Redis 连接串从 GW_REDIS_URL 环境变量（k8s secret）读，网关用 db 2；本地 docker compose 的 redis 映射在 6380 不是 6379。",
           ["GW_REDIS_URL", "6380"])
    s.fact("command", "zh", "本地起服务：`uv run uvicorn gateway.main:app --reload --port 8087`。", ["--port 8087"])
    s.fact("convention", "zh", "新 vendor adapter 放 gateway/providers/<vendor>.py，实现 Provider protocol，不散在 routes 里。",
           ["gateway/providers", "Provider"])
    s.fact("preference", "zh", "解释可以用中文，但代码里的 identifier 和 log message 一律英文。", ["log message"])
    s.fact("config", "zh", "模型别名在 config/models.yaml，chat-default 指向 qwen2.5-72b-instruct；代码里不写死模型名。",
           ["chat-default", "qwen2.5-72b-instruct"])
    s.ok(["Cache-Control"], "also set Cache-Control: no-cache on SSE")
    s.forbid("每次都要翻 README", "117 passed", "4 passed in", "Connection refused")
    s.secret("h7Gd92kLqPzz", "redis://:h7Gd92kLqPzz@10.30.1.7:6379/2")
    return s


def s2():
    s = Session("c2_llmgw_usage_accounting", CWD, "2026-10-14T03:20:00Z", branch="feat/usage", lang="mixed", order=2)
    s.snapshot()
    s.recall([(81, "fact", "8 days ago", "本地起服务：`uv run uvicorn gateway.main:app --reload --port 8087`。"),
              (84, "decision", "8 days ago", "限流改成 Redis 上按 API key 的 token bucket。")], event="SessionStart")
    s.user("finance wants per-team token usage for chargeback starting next month. Right now we count tokens ourselves "
           "with tiktoken in gateway/usage.py. Can you check how far off we are vs what the vendors bill?")
    s.bash("uv run python scripts/compare_usage.py --since 2026-10-07 --limit 200",
           "model                    n    ours_prompt  vendor_prompt  diff\n"
           "gpt-4o-mini              61   48211        48109          +0.2%\n"
           "qwen2.5-72b-instruct     88   91342        118870         -23.2%\n"
           "deepseek-v3              51   40077        47210          -15.1%\n", desc="Compare local vs vendor token counts")
    s.say("tiktoken matches OpenAI models almost exactly and undercounts Qwen by ~23% and DeepSeek by ~15%. "
          "tiktoken only knows OpenAI's BPE vocabularies; Qwen and DeepSeek ship their own tokenizers, so any local count "
          "for them is a guess. Options: load each vendor's HF tokenizer locally, or stop counting and record the "
          "`usage` object the upstream returns (for streams, request `stream_options: {\"include_usage\": true}`; "
          "our vLLM version supports it too).")
    s.user("vendor's numbers are what we get billed on anyway. take their usage, drop tiktoken")
    s.edit("/home/dev/work/llm-gateway/gateway/usage.py", "    prompt_tokens = len(enc.encode(prompt_text))",
           "    prompt_tokens = upstream_usage.prompt_tokens")
    s.bash("uv run pytest -q -m 'not live' tests/test_stream.py",
           "    async for chunk in upstream:\n>       delta = chunk.choices[0].delta\nE       IndexError: list index out of range\n\n"
           "gateway/routes/chat.py:71: IndexError\nFAILED tests/test_stream.py::test_stream_records_usage - IndexError: list index out of range\n"
           "1 failed, 12 passed in 1.33s", err=True)
    s.say("With include_usage the last chunk has `choices: []` and only carries `usage`. The loop indexes `choices[0]` "
          "on every chunk. Guarding it: if `chunk.usage` is set, record it; only read delta when choices is non-empty.")
    s.edit("/home/dev/work/llm-gateway/gateway/routes/chat.py", "        delta = chunk.choices[0].delta",
           "        if chunk.usage:\n            usage = chunk.usage\n        if not chunk.choices:\n            continue\n        delta = chunk.choices[0].delta")
    s.bash("uv run pytest -q -m 'not live' tests/test_stream.py", ".............                                                            [100%]\n13 passed in 1.29s")
    s.user("good. 存储这块我想了下，usage 记录每天几百万条，直接写 Postgres 的 usage_events 表有点扛不住，写放大也大。"
           "data 组那边已经有 Kafka → ClickHouse 的 sink connector 了")
    s.say("那就 gateway 只往 Kafka topic 投 usage event（异步、batch），由 data 组现成的 sink 落 ClickHouse；PG 里不再存明细。"
          "topic 名要跟他们对一下。")
    s.user("定了，就 Kafka → ClickHouse。topic 叫 llm.usage.v1，key 用 team_id")
    s.edit("/home/dev/work/llm-gateway/gateway/usage.py", "    await db.insert_usage(event)",
           "    await producer.send(\"llm.usage.v1\", key=event.team_id, value=event.model_dump_json())")
    s.user("对了两个变化 FYI: 1) 本地端口不是 8087 了，改成 8090，8087 被 otel collector 占了。2) providers 目录上周重命名成 "
           "gateway/backends/ 了，Provider protocol 也改名叫 Backend")
    s.bash("git log --oneline -3 -- gateway/backends", "e1f0a9b refactor: rename providers -> backends, Provider -> Backend\n"
           "77c2d10 feat(backends): add deepseek\nb0a3e44 feat(backends): vllm health probe")
    s.say("看到了，e1f0a9b。后面新加的 usage 钩子我放在 `Backend` 基类上。")
    s.user("还有一个新规矩：以后所有 backend 都必须实现 `async def health()`，gateway 启动时逐个调，挂了的 backend 不注册路由。"
           "这个是在 Backend protocol 之外新加的要求，不是同一件事")
    s.say("明白，这是额外的一条：Backend 之外还要有 health()，启动时探活。")
    s.user("btw 调试用这个 team token：eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJ0ZWFtIjoic2VhcmNoLXJlYyIsInF1b3RhIjoxMDAwMDB9.Xk2pQm8sVw1rN4tLc7yZ0aHfB3uE9dJ6gTqR5oPiMnA")
    s.bash("curl -s localhost:8090/v1/usage/me -H 'Authorization: Bearer eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJ0ZWFtIjoic2VhcmNoLXJlYyIsInF1b3RhIjoxMDAwMDB9.Xk2pQm8sVw1rN4tLc7yZ0aHfB3uE9dJ6gTqR5oPiMnA'",
           "{\"team\":\"search-rec\",\"month\":\"2026-10\",\"prompt_tokens\":1827731,\"completion_tokens\":402118}")
    s.say("8090 上能通，`search-rec` 本月 usage 能查到。")
    s.user("thx! that's it for today")
    s.stop(ms=2011330)
    s.title("Per-team usage accounting from vendor usage")

    s.exp("root_cause", "en", "Local tiktoken counts undercount Qwen (~23%) and DeepSeek (~15%): tiktoken only has OpenAI's BPE "
          "vocabularies, those vendors use their own tokenizers.", ["tiktoken", "Qwen"])
    s.decision("en", "Token usage for chargeback is taken from the upstream `usage` object (stream_options include_usage for "
               "streams) instead of counting locally with tiktoken, since vendor numbers are what we're billed on.",
               ["include_usage"], "usage", ["tiktoken"], ["billed"])
    s.exp("fix", "en", "With stream_options include_usage the final stream chunk has empty `choices` and only `usage`; "
          "the stream loop now records chunk.usage and skips chunks without choices instead of indexing choices[0] (IndexError).", ["choices", "include_usage"])
    s.decision("zh", "usage 明细不写 Postgres usage_events 表，gateway 异步投 Kafka topic llm.usage.v1（key=team_id），由 data 组现成的 "
               "sink connector 落 ClickHouse：每天几百万条，PG 扛不住。", ["llm.usage.v1"], "ClickHouse", ["Postgres"], ["sink"])
    s.fact("command", "zh", "本地端口改为 8090（8087 被 otel collector 占了），启动命令相应改为 --port 8090。", ["8090"],
           sup="c1_llmgw_sse_buffering#e6")
    s.fact("convention", "zh", "vendor adapter 目录已重命名为 gateway/backends/，Provider protocol 改名为 Backend。",
           ["gateway/backends", "Backend"], sup="c1_llmgw_sse_buffering#e7")
    s.fact("convention", "zh", "新规矩：所有 backend 必须实现 `async def health()`，gateway 启动时逐个调用，health 失败的 backend 不注册路由。",
           ["health()"])
    s.ok(["compare_usage.py"], "script comparing local vs vendor token counts")
    s.forbid("thx! that's it", "13 passed", "--port 8087`。", "按 API key 的 token bucket。", "1827731")
    s.secret("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJ0ZWFtIjoic2VhcmNoLXJlYyIsInF1b3RhIjoxMDAwMDB9.Xk2pQm8sVw1rN4tLc7yZ0aHfB3uE9dJ6gTqR5oPiMnA")
    return s


def s3():
    s = Session("c3_llmgw_max_tokens_questions", CWD, "2026-10-20T09:30:00Z", branch="main", lang="mixed", order=3)
    s.snapshot()
    s.user("问几个问题 just tell me，不用改代码：我们 gateway 的 max_tokens 校验和 vLLM 那边的 max_model_len 是什么关系？"
           "有业务方说偶尔 400")
    s.maple_search("max_tokens validation vllm max_model_len", [
        (91, "fact", "本地端口改为 8090（8087 被 otel collector 占了）。"),
        (93, "decision", "usage 明细由 gateway 异步投 Kafka topic llm.usage.v1，由 data 组的 sink 落 ClickHouse。"),
    ])
    s.grep("max_tokens", "gateway/validate.py:19:    if req.max_tokens and req.max_tokens > model.max_output:\n"
           "gateway/validate.py:20:        raise BadRequest(\"max_tokens exceeds model limit\")", path="gateway")
    s.read("/home/dev/work/llm-gateway/config/models.yaml",
           "chat-default:\n  backend: vllm-qwen\n  model: qwen2.5-72b-instruct\n  max_output: 8192\n  context: 32768\n"
           "deepseek-v3:\n  backend: deepseek\n  max_output: 8192\n  context: 65536")
    s.say("我们只检查 `max_tokens <= max_output`（8192）。vLLM 检查的是 `prompt_tokens + max_tokens <= max_model_len`（32768）。"
          "所以 prompt 很长时，我们放行了，vLLM 还是会 400。")
    s.user("嗯 makes sense. 那 deepseek 那边呢")
    s.say("同理，上限是它的 context 65536，但 DeepSeek 官方会自动截 max_tokens 而不是报错，所以业务方只在 qwen 上看到 400。")
    s.user("ok 我先记下，回头开个 issue。don't fix it now")
    s.bash("gh issue list --search 'max_model_len' --state all", "")
    s.say("目前没有相关 issue。")
    s.user("好的 thanks，我去开。another q: vllm 那边的 metrics 我们有在采吗")
    s.grep("vllm:", "deploy/prometheus/scrape.yaml:31:  - job_name: vllm\ndeploy/prometheus/scrape.yaml:34:      - targets: ['vllm-qwen.llm.svc:8000']")
    s.say("有，Prometheus job `vllm` 采 `vllm-qwen.llm.svc:8000/metrics`。")
    s.interrupt()
    s.user("算了不看了，今天先这样")
    s.stop(ms=402210)
    s.title("Questions on max_tokens vs vLLM max_model_len")
    s.ok(["max_model_len"], "explanation of a known gap (prompt + max_tokens vs max_model_len); fine to store, not required")
    s.ok(["vllm-qwen.llm.svc:8000"], "vLLM metrics scrape target")
    s.forbid("don't fix it now", "今天先这样", "8087 被 otel collector 占了", "由 data 组的 sink 落 ClickHouse")
    return s


def s4():
    s = Session("c4_llmgw_envoy_granian", CWD, "2026-11-02T02:10:00Z", branch="chore/platform-migration", lang="mixed", order=4)
    s.snapshot()
    s.user([reminder([(84, "decision", "4 weeks ago", "限流改成 Redis 上按 API key 的 token bucket。"),
                      (81, "fact", "4 weeks ago", "本地端口改为 8090（8087 被 otel collector 占了）。"),
                      (88, "fact", "4 weeks ago", "chat-default 指向 qwen2.5-72b-instruct。")]),
            "平台组把 Envoy Gateway 铺开了，自带 global rate limit service。我们自己的 Redis limiter 再留着就是双重限流，"
            "两边 quota 还得对齐。我倾向于下线 Redis limiter，limits 全部配到 Envoy 的 BackendTrafficPolicy 里，你觉得呢"])
    s.say("同意。唯一要注意的是我们按 team 的 quota：Envoy global rate limit 可以按 header descriptor 限，我们在网关前面由 "
          "auth filter 把 `x-team-id` 写进 header，就能按 team 限。Redis limiter 下线后 `ratelimit.py` 和 GW_REDIS_URL 可以一起删。")
    s.user("那就这么办。Redis 那个 db 2 也还给 infra")
    s.bash("git rm -q gateway/ratelimit.py tests/test_ratelimit.py && grep -rn GW_REDIS_URL --include='*.py' --include='*.yaml' . | head",
           "./deploy/k8s/deployment.yaml:41:        - name: GW_REDIS_URL\n./tests/conftest.py:9:os.environ.setdefault(\"GW_REDIS_URL\", \"redis://localhost:6380/0\")")
    s.edit("/home/dev/work/llm-gateway/deploy/k8s/deployment.yaml", "        - name: GW_REDIS_URL\n          valueFrom:\n            secretKeyRef: {name: llm-gw, key: redis_url}\n", "")
    s.user("另外 server 我们已经从 uvicorn 换成 granian 了，上周合的。本地启动现在是 "
           "`uv run granian --interface asgi gateway.main:app --port 8090 --reload`")
    s.bash("timeout 8 uv run granian --interface asgi gateway.main:app --port 8090",
           "[INFO] Starting granian (main PID: 48211)\n[INFO] Listening at: http://127.0.0.1:8090\n[INFO] Spawning worker-1 with pid: 48230\n"
           "[INFO] Started worker-1\n[INFO] Started worker-1 runtime-1")
    s.user("有个怪事：业务方 client 断开以后，vendor 那边的 stream 还在跑，deepseek 账单上能看到完整的 completion tokens")
    s.read("/home/dev/work/llm-gateway/gateway/backends/openai_compat.py",
           "    async def stream(self, payload):\n        resp = await self.client.send(self.client.build_request(\"POST\", self.url, json=payload), stream=True)\n"
           "        async for line in resp.aiter_lines():\n            yield parse_sse(line)")
    s.think("Cancellation of the generator raises CancelledError/GeneratorExit at the yield, but resp is never closed.")
    s.say("client 断开时 StreamingResponse 会取消我们的 generator，但这里的 `resp` 是手动 `send(stream=True)` 拿的，没有 "
          "`async with`，也没有 `finally: await resp.aclose()`。generator 被取消后上游连接没人关，vendor 继续生成到结束，"
          "连接回池之前还一直占着。改成 `async with self.client.stream(...) as resp:`，退出时一定会 aclose。")
    s.edit("/home/dev/work/llm-gateway/gateway/backends/openai_compat.py",
           "        resp = await self.client.send(self.client.build_request(\"POST\", self.url, json=payload), stream=True)\n        async for line in resp.aiter_lines():\n            yield parse_sse(line)",
           "        async with self.client.stream(\"POST\", self.url, json=payload) as resp:\n            async for line in resp.aiter_lines():\n                yield parse_sse(line)")
    s.bash("uv run pytest -q -m 'not live' tests/test_disconnect.py",
           "F\n>       assert upstream.closed_at is not None\nE       AssertionError: assert None is not None\n"
           "FAILED tests/test_disconnect.py::test_upstream_closed_on_client_disconnect\n1 failed in 0.44s", err=True)
    s.bash("sed -n 1,20p tests/test_disconnect.py", "import pytest\nfrom httpx import ASGITransport\n\n"
           "@pytest.mark.anyio\nasync def test_upstream_closed_on_client_disconnect(fake_upstream, app):\n"
           "    async with httpx.AsyncClient(transport=ASGITransport(app)) as c:\n        ...\n")
    s.say("这个测试是用 httpx 的 ASGITransport 跑的，它不会模拟 client 断开（不会发 `http.disconnect`），所以看不出修复效果。"
          "我换成起真实 granian + 中途关 socket 的方式验证。")
    s.bash("uv run pytest -q -m 'not live' tests/test_disconnect.py --real-server",
           ".\n1 passed in 3.12s")
    s.user("ok. 还有 fallback：主 vendor 5xx 的时候要不要切备用模型？stream 的也切？")
    s.say("非流式可以安全地重试到备用 backend。流式如果已经往 client 吐了 token，中途切换就会拼出两个模型的半截回答，没法撤回；"
          "只能在第一个 chunk 之前失败时切。")
    s.user("ok let's go with：non-stream 全部可以 fallback，stream 只在首包之前失败才 fallback，吐了字就直接报错")
    s.say("OK，我在 router 里按 `stream` 和是否已发首包区分。")
    s.user("最后：chat-default 这周起指向 deepseek-v3 了，qwen 那台要下线做升级。告警发钉钉群，"
           "webhook 是 https://oapi.dingtalk.com/robot/send?access_token=4c1e9f7a2b8d3e6f0a5c9b1d7e2f8a3c6b0d4e9f1a7c2b5d8e3f6a9c0b1d2e4f "
           "你配到 alertmanager 的 secret 里就行，别提交")
    s.edit("/home/dev/work/llm-gateway/config/models.yaml", "chat-default:\n  backend: vllm-qwen\n  model: qwen2.5-72b-instruct",
           "chat-default:\n  backend: deepseek\n  model: deepseek-v3")
    s.say("models.yaml 已改；钉钉 webhook 只放进 alertmanager 的 secret `alert-dingtalk`，没有进仓库。")
    s.user("辛苦了 🙏")
    s.stop(ms=3320110)
    s.title("Drop Redis limiter for Envoy, granian, upstream close fix")

    s.decision("zh", "下线网关自己的 Redis 限流，limits 全部配在 Envoy Gateway 的 BackendTrafficPolicy（global rate limit，按 x-team-id "
               "header 限 team quota）：继续保留 Redis limiter 就是双重限流，quota 还得两边对齐。", ["Envoy"], "Envoy", ["Redis"],
               ["双重限流"], sup="c1_llmgw_sse_buffering#e4")
    s.fact("command", "zh", "服务已从 uvicorn 换成 granian，本地启动：`uv run granian --interface asgi gateway.main:app --port 8090 --reload`。",
           ["granian --interface asgi"], sup="c2_llmgw_usage_accounting#e5")
    s.exp("root_cause", "zh", "client 断开后 vendor 仍生成完整 completion：backend 用 client.send(stream=True) 拿响应，没有 async with / aclose，"
          "generator 被取消后上游连接没人关；改为 `async with self.client.stream(...)`。", ["aclose", "async with"])
    s.exp("workaround", "zh", "httpx ASGITransport 不会模拟 client 断开（不发 http.disconnect），断连相关的测试要起真实 server（--real-server）。",
          ["ASGITransport"])
    s.decision("zh", "fallback 策略：非流式请求都可以 fallback 到备用 backend；流式只在首包之前失败才 fallback，已经吐了 token 就直接报错，"
               "不在 stream 中途切换，因为已经发出的内容没法撤回。", ["fallback"], "首包", ["中途切换"], ["撤回"])
    s.fact("config", "zh", "chat-default 现在指向 deepseek-v3（qwen 那台下线升级）。", ["deepseek-v3", "chat-default"],
           sup="c1_llmgw_sse_buffering#e9")
    s.fact("config", "zh", "告警发钉钉群，webhook 只放在 alertmanager 的 secret alert-dingtalk 里，不进仓库。", ["alert-dingtalk"])
    s.ok(["GW_REDIS_URL"], "GW_REDIS_URL removed along with the Redis limiter")
    s.ok(["BackendTrafficPolicy"], "where limits are configured")
    s.forbid("辛苦了", "1 passed in 3.12s", "按 API key 的 token bucket。", "8087 被 otel collector 占了",
             "指向 qwen2.5-72b-instruct。", "Listening at: http://127.0.0.1:8090")
    s.secret("4c1e9f7a2b8d3e6f0a5c9b1d7e2f8a3c6b0d4e9f1a7c2b5d8e3f6a9c0b1d2e4f")
    return s


SESSIONS = [s1, s2, s3, s4]
