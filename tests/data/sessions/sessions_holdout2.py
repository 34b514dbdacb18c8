"""A second held-out set, written and labelled after all tuning and committed before the
extractor was first run on it; its figures are reported as measured, never tuned against."""

from session_dsl import TOOL, A, U

SESSIONS = [
    ("hb01_en_django_shop", {
        "lang": "en", "cwd": "/home/dev/projects/bookstore",
        "turns": [
            U("FWIW the default branch here is develop, not main. Feature branches get merged into develop and "
              "we cut releases from it every two weeks."),
            A("Thanks, I'll base the branch on develop."),
            U("add a `published_at` field to the Book model and write the migration"),
            TOOL("Edit", {"file_path": "/home/dev/projects/bookstore/shop/models.py", "old_string": "a",
                          "new_string": "b"}, "The file /home/dev/projects/bookstore/shop/models.py has been updated."),
            TOOL("Bash", {"command": "python manage.py makemigrations shop"},
                 "django.db.utils.OperationalError: no such table: shop_book", error=True, code=1),
            TOOL("Bash", {"command": "python manage.py migrate"}, "Applying shop.0007_genre... OK"),
            TOOL("Bash", {"command": "python manage.py makemigrations shop"},
                 "Migrations for 'shop':\n  shop/migrations/0008_book_published_at.py"),
            A("Created migration `0008_book_published_at`."),
            U("Heads-up: the staging database is read-only for us, migrations there are run by the platform team."),
            A("Understood."),
            U("Stick to Django's ORM - raw SQL needs sign-off from Tomasz."),
            A("OK, ORM only."),
            U("how many books are in the fixture file?"),
            A("42."),
        ],
        "expected": [
            ("fact", ["develop"]),
            ("experience", ["no such table", "migrate"]),
            ("fact", ["read-only"]),
            ("fact", ["ORM", "Tomasz"]),
        ],
        "forbidden": ["0007_genre", "fixture file"],
    }),

    ("hb02_en_payments_incident", {
        "lang": "en", "cwd": "/home/dev/services/payments",
        "turns": [
            U("webhooks from the card processor are being rejected since this morning, can you dig in?"),
            TOOL("Bash", {"command": "grep -c 'signature mismatch' logs/webhooks.log"}, "1843"),
            A("It turned out the processor rotated its signing secret and our config still had the old one; "
              "once the new secret is loaded from the vault the signatures verify again."),
            U("ugh, this is the second time this quarter. Idempotency keys are mandatory on every payment "
              "endpoint, and we retry webhooks for up to 72 hours, so nothing should be lost."),
            A("Good - then the rejected webhooks will be redelivered."),
            U("please add an alert when signature failures go above 1% in 5 minutes"),
            TOOL("Write", {"file_path": "/home/dev/services/payments/alerts/webhooks.yaml", "content": "..."},
                 "File created successfully at: /home/dev/services/payments/alerts/webhooks.yaml"),
            A("Added the alert in `alerts/webhooks.yaml`."),
            U("Amounts are always integers in minor units (cents) in this codebase - never floats."),
            A("Noted."),
        ],
        "expected": [
            ("experience", ["signing secret"]),
            ("fact", ["Idempotency"]),
            ("fact", ["72 hours"]),
            ("fact", ["minor units"]),
        ],
        "forbidden": ["1843"],
    }),

    ("hb03_zh_backend_rules", {
        "lang": "zh", "cwd": "/home/dev/projects/crm-server",
        "turns": [
            U("咱们这个项目接口返回统一用 `{code, data, message}` 这个结构，不允许直接返回裸数据。"),
            A("明白。"),
            U("帮我给客户列表加个分页。"),
            TOOL("Edit", {"file_path": "/home/dev/projects/crm-server/app/api/customers.py", "old_string": "a",
                          "new_string": "b"}, "The file /home/dev/projects/crm-server/app/api/customers.py has been updated."),
            TOOL("Bash", {"command": "pytest tests/api/test_customers.py"},
                 "E   KeyError: 'total'\n1 failed", error=True, code=1),
            A("测试挂了是因为分页结果里少了 `total` 字段，前端依赖它算页数；补上 `total` 之后测试通过。"),
            U("分页参数名用 page 和 page_size，page 从 1 开始。"),
            A("好的。"),
            U("另外日志尽量用结构化的 JSON 格式，方便 ELK 检索。"),
            A("好的。"),
            U("今天先到这吧，辛苦了"),
        ],
        "expected": [
            ("fact", ["{code, data, message}"]),
            ("experience", ["total"]),
            ("fact", ["page_size"]),
            ("fact", ["JSON"]),
        ],
        "forbidden": ["1 failed", "辛苦"],
    }),

    ("hb04_zh_infra_oncall", {
        "lang": "zh", "cwd": "/home/dev/infra/monitoring",
        "turns": [
            U("告警规则都写在 `rules/` 目录下，每个服务一个文件。"),
            A("了解。"),
            U("原则上 P1 告警五分钟内没人响应就自动升级给值班经理。"),
            A("好的。"),
            TOOL("Bash", {"command": "promtool check rules rules/payments.yml"},
                 "rules/payments.yml: 1:1: group \"payments\", rule 3: could not parse expression", error=True, code=1),
            A("规则第 3 条的表达式少了一个右括号，补上之后 `promtool check rules` 通过了。"),
            TOOL("Bash", {"command": "promtool check rules rules/payments.yml"}, "SUCCESS: 4 rules found"),
            U("请勿在告警文案里写内部 IP 地址。"),
            A("好的。"),
            U("Grafana 看板的 JSON 由 CI 从 `dashboards/` 目录同步，不要在网页上直接改。"),
            A("明白，改看板都走仓库。"),
        ],
        "expected": [
            ("fact", ["rules/"]),
            ("fact", ["P1", "五分钟"]),
            ("experience", ["右括号"]),
            ("fact", ["内部 IP"]),
            ("fact", ["dashboards/"]),
        ],
        "forbidden": ["4 rules found"],
    }),

    ("hb05_mixed_mobile_api", {
        "lang": "mixed", "cwd": "/home/dev/projects/rider-app",
        "turns": [
            U("我们 API client 是用 openapi-generator 从 `spec/openapi.yaml` 生成的，generated 目录下的代码不要手改。"),
            A("明白。"),
            U("Also keep in mind the Android app still supports API level 26, so no java.time without desugaring."),
            A("Got it."),
            TOOL("Bash", {"command": "./gradlew assembleDebug"},
                 "e: RiderRepository.kt:88: Unresolved reference: LocalDateTime", error=True, code=1),
            A("The build broke because `LocalDateTime` needs core library desugaring on API 26; I enabled "
              "`coreLibraryDesugaringEnabled true` in `app/build.gradle` and the build passes."),
            U("好的。以后新加的页面都要接入埋点，事件名用 snake_case。"),
            A("好的。"),
        ],
        "expected": [
            ("fact", ["openapi-generator"]),
            ("fact", ["API level 26"]),
            ("experience", ["desugaring"]),
            ("fact", ["snake_case"]),
        ],
        "forbidden": ["RiderRepository.kt:88"],
    }),

    ("hb06_en_chat_only", {
        "lang": "en", "cwd": "/home/dev/projects/playground",
        "turns": [
            U("explain the difference between a process and a thread in two sentences"),
            A("A process has its own memory space; threads share the memory of the process they belong to."),
            U("and why is the GIL a problem for threads in Python?"),
            A("Because only one thread executes Python bytecode at a time, CPU-bound threads don't run in parallel."),
            U("cool, thanks!"),
            A("You're welcome!"),
        ],
        "expected": [],
        "forbidden": ["own memory space", "GIL"],
    }),
]
