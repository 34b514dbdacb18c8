"""Held-out sessions, written and labelled after the heuristics were built and never used to tune
them: the honest estimate of how extraction does on phrasings it was not written against."""

from session_dsl import COMPACT, CTX, SIDE, TASK, TOOL, A, T, U

SESSIONS = [
    ("ho01_en_poetry_shop", {
        "lang": "en", "cwd": "/home/dev/projects/quotes-engine",
        "turns": [
            U("hey, quick one. We're a poetry shop, so add the new dependency through poetry, not by editing "
              "requirements.txt by hand."),
            CTX("- [fact] quotes-engine publishes to the internal index at pypi.acme.dev"),
            TOOL("Bash", {"command": "poetry add tenacity"}, "Using version ^9.0.0 for tenacity\nWriting lock file"),
            A("Added `tenacity` with poetry."),
            U("Our convention for retries is exponential backoff with jitter, capped at 30 seconds. Please keep "
              "it that way for anything that calls the pricing API."),
            A("Understood."),
            TOOL("Bash", {"command": "poetry run pytest tests/pricing -q"},
                 "E   AssertionError: expected 3 calls, got 1\n1 failed, 11 passed", error=True, code=1),
            A("Root cause: the retry decorator was applied to the inner helper instead of the public "
              "`fetch_quote()`, so the test's mock saw a single call. Moving the decorator to `fetch_quote()` "
              "makes all 12 tests pass."),
            U("It's important that the pricing API key is never logged, even at debug level."),
            A("Agreed, I checked: the key is masked in the request logger."),
            U("What's the difference between tenacity's stop_after_delay and stop_after_attempt again?"),
            A("`stop_after_delay` stops after a total elapsed time; `stop_after_attempt` after a number of tries."),
        ],
        "expected": [
            ("fact", ["poetry"]),
            ("fact", ["exponential backoff", "30 seconds"]),
            ("experience", ["fetch_quote()"]),
            ("fact", ["never logged"]),
        ],
        "forbidden": ["pypi.acme.dev", "Writing lock file", "1 failed, 11 passed"],
    }),

    ("ho02_en_k8s_deploys", {
        "lang": "en", "cwd": "/home/dev/infra/k8s-apps",
        "turns": [
            U("we never merge to main on Fridays, deploy freeze starts Friday 12:00 UTC"),
            A("Noted - no merges to main on Fridays."),
            U("can you bump the memory limit for the search-indexer deployment to 2Gi?"),
            TOOL("Edit", {"file_path": "/home/dev/infra/k8s-apps/search-indexer/values.yaml",
                          "old_string": "memory: 1Gi", "new_string": "memory: 2Gi"},
                 "The file /home/dev/infra/k8s-apps/search-indexer/values.yaml has been updated."),
            TOOL("Bash", {"command": "helm lint search-indexer"}, "1 chart(s) linted, 0 chart(s) failed"),
            A("Bumped to 2Gi and the chart lints cleanly."),
            U("thanks. the indexer got OOMKilled three times last night, which is why. Also, Priya is the owner "
              "of search-indexer, so tag her on the PR."),
            A("Will do."),
            TOOL("Bash", {"command": "kubectl --context prod get pods -n search"},
                 "error: context \"prod\" does not exist", error=True, code=1),
            U("the kube context for production is called prod-eu-1, not prod"),
            TOOL("Bash", {"command": "kubectl --context prod-eu-1 get pods -n search"},
                 "NAME                              READY   STATUS    RESTARTS\nsearch-indexer-7d9f6b-x2kq   1/1     Running   3"),
            A("The indexer pod is running with 3 restarts."),
            U("The reason we pin helm to 3.14 is that 3.15 broke our post-renderer plugin. Don't upgrade it."),
            A("Understood, I'll leave helm at 3.14."),
            SIDE("list deployments without resource limits", "3 deployments lack limits: web, cron-runner, mailer."),
        ],
        "expected": [
            ("fact", ["Fridays"]),
            ("fact", ["Priya"]),
            ("fact", ["prod-eu-1"]),
            (["decision", "fact"], ["3.14", "post-renderer"]),
        ],
        "forbidden": ["0 chart(s) failed", "cron-runner", "READY   STATUS"],
    }),

    ("ho03_en_frontend_a11y", {
        "lang": "en", "cwd": "/home/dev/web/storefront",
        "turns": [
            U("I'm not a fan of default exports, use named exports in new files please."),
            A("Sure, named exports from now on."),
            U("Every interactive element needs an aria-label if it has no visible text - our a11y audit failed on "
              "that last quarter."),
            A("Got it."),
            U("please make the search box debounce at 300ms"),
            TOOL("Edit", {"file_path": "/home/dev/web/storefront/src/search/SearchBox.tsx", "old_string": "a",
                          "new_string": "b"},
                 "The file /home/dev/web/storefront/src/search/SearchBox.tsx has been updated."),
            TOOL("Bash", {"command": "pnpm test SearchBox"},
                 "FAIL src/search/SearchBox.test.tsx\n  ● debounces input\n    expected 1 call, received 3",
                 error=True, code=1),
            T("fake timers missing"),
            A("The test failed because it typed without fake timers, so all three keystrokes fired; switching the "
              "test to `vi.useFakeTimers()` and advancing 300ms fixed it."),
            TOOL("Bash", {"command": "pnpm test SearchBox"}, "PASS src/search/SearchBox.test.tsx"),
            U("great. design tokens live in src/theme/tokens.ts, never hardcode hex colours."),
            A("Will use the tokens."),
            COMPACT("Worked on the search box debounce; the store uses Zustand for state."),
            U("what was the debounce value again?"),
            A("300ms."),
        ],
        "expected": [
            (["fact"], ["named exports"]),
            ("fact", ["aria-label"]),
            ("experience", ["useFakeTimers"]),
            ("fact", ["src/theme/tokens.ts"]),
        ],
        "forbidden": ["Zustand", "fake timers missing", "received 3"],
    }),

    ("ho04_zh_data_pipeline", {
        "lang": "zh", "cwd": "/home/dev/data/etl-jobs",
        "turns": [
            U("这个项目的定时任务都用 Airflow 调度，DAG 文件放在 `dags/` 目录下。"),
            A("明白。"),
            U("帮我写一个每天凌晨两点同步订单表的 DAG。"),
            TOOL("Write", {"file_path": "/home/dev/data/etl-jobs/dags/sync_orders.py", "content": "..."},
                 "File created successfully at: /home/dev/data/etl-jobs/dags/sync_orders.py"),
            TOOL("Bash", {"command": "airflow dags test sync_orders 2026-09-01"},
                 "psycopg2.OperationalError: could not translate host name \"warehouse\" to address", error=True, code=1),
            A("报错是因为本地没有 `warehouse` 这个主机名，需要先连上 VPN；在 `/etc/hosts` 里临时指向 127.0.0.1 之后，用本地 docker 的库测试通过了。"),
            U("时间一律用 UTC 存，展示的时候再转成北京时间。"),
            A("好的。"),
            U("凭证不要写在代码里，统一从 Airflow 的 Connections 读。"),
            A("好的，已改成 `BaseHook.get_connection('warehouse')`。"),
            U("这个 DAG 多久能跑完？"),
            A("本地测试大概 4 分钟。"),
            TASK("后台任务 \"回填 9 月数据\" 已完成：共 31 个分区"),
        ],
        "expected": [
            ("fact", ["Airflow", "dags/"]),
            ("experience", ["warehouse"]),
            ("fact", ["UTC"]),
            ("fact", ["Connections"]),
        ],
        "forbidden": ["31 个分区", "could not translate host name"],
    }),

    ("ho05_zh_mobile_release", {
        "lang": "zh", "cwd": "/home/dev/app/shop-ios",
        "turns": [
            U("我们的 iOS 最低支持版本是 iOS 15，别用只有 16 才有的 API。"),
            A("明白。"),
            U("发版流程是先打 tag，然后 CI 会自动上传到 TestFlight，不需要手动上传。"),
            A("好的。"),
            TOOL("Bash", {"command": "xcodebuild -scheme Shop -destination 'platform=iOS Simulator,name=iPhone 15' test"},
                 "error: Signing for \"ShopTests\" requires a development team.", error=True, code=65),
            A("签名报错的原因是测试 target 没有设置开发团队；在 `ShopTests` 的 Signing 里选了 Team 之后测试可以跑了。"),
            U("我讨厌 storyboard，新页面都用 SwiftUI 写。"),
            A("好的，新页面用 SwiftUI。"),
            U("这个动画会不会太快了？"),
            A("现在是 0.2 秒，可以调到 0.3 秒。"),
        ],
        "expected": [
            ("fact", ["iOS 15"]),
            ("fact", ["TestFlight"]),
            ("experience", ["Team"]),
            ("fact", ["SwiftUI"]),
        ],
        "forbidden": ["requires a development team"],
    }),

    ("ho06_mixed_ml_serving", {
        "lang": "mixed", "cwd": "/home/dev/ml/serving",
        "turns": [
            U("模型服务用 Triton 部署，不要自己写 Flask wrapper。"),
            A("明白。"),
            U("We benchmark latency with `locust -f bench/locustfile.py`, p95 has to stay under 120ms."),
            A("Got it."),
            TOOL("Bash", {"command": "locust -f bench/locustfile.py --headless -u 50 -t 1m"},
                 "Aggregated  p95: 184ms", code=0),
            A("p95 is 184ms, above the 120ms budget. The slowdown comes from dynamic batching being off in the "
              "model config; enabling `dynamic_batching` with a 5ms queue delay brought p95 down to 96ms."),
            U("好。以后模型配置的改动都要在 PR 描述里附上 locust 的结果。"),
            A("好的。"),
            U("we switched the embedding model from bge-small to e5-small last sprint, the old one is gone from the "
              "registry"),
            A("Noted."),
        ],
        "expected": [
            ("fact", ["Triton"]),
            ("fact", ["locust", "120ms"]),
            ("experience", ["dynamic_batching"]),
            ("fact", ["PR", "locust"]),
            ("fact", ["e5-small"]),
        ],
        "forbidden": ["Aggregated"],
    }),
]
