"""English sessions (see build_sessions.py for the format and what the labels mean)."""

from session_dsl import CAVEAT, CMD, COMPACT, CTX, INTERRUPT, SIDE, TASK, TOOL, A, T, U

SESSIONS = [
    ("en01_invoicer_uv_postgres", {
        "lang": "en", "cwd": "/home/dev/projects/invoicer",
        "turns": [
            U("I'm picking this repo back up after a while. Can you get the test suite running? Heads up: we "
              "always use uv here, never plain pip install - it messes up the lockfile."),
            CTX("- [fact] Invoice PDFs are rendered with WeasyPrint 61\n- [decision] Chose Celery over RQ for "
                "scheduled reminders"),
            T("Let me check pyproject and the test layout first."),
            TOOL("Read", {"file_path": "/home/dev/projects/invoicer/pyproject.toml"},
                 "     1\t[project]\n     2\tname = \"invoicer-core\"\n     3\trequires-python = \">=3.11\"\n"),
            A("Let me run the suite."),
            TOOL("Bash", {"command": "uv run pytest -n auto", "description": "Run tests"},
                 "ImportError while loading conftest '/home/dev/projects/invoicer/tests/conftest.py'.\n"
                 "tests/conftest.py:4: in <module>\n    import psycopg\n"
                 "E   ModuleNotFoundError: No module named 'psycopg'", error=True, code=4),
            A("The conftest imports `psycopg`, but it isn't in the dev dependencies. I'll add it with uv."),
            TOOL("Bash", {"command": "uv add --dev 'psycopg[binary]'"},
                 "Resolved 48 packages in 312ms\nInstalled 1 package in 9ms\n + psycopg-binary==3.2.3"),
            TOOL("Bash", {"command": "uv run pytest -n auto"}, "........................\n212 passed in 14.31s"),
            A("Fixed: the suite failed with `ModuleNotFoundError: No module named 'psycopg'` because psycopg was "
              "missing from the dev dependencies; adding it with `uv add --dev 'psycopg[binary]'` fixed it. "
              "All 212 tests pass with `uv run pytest -n auto`."),
            U("Great. One more rule: don't mock the database in tests. We had a migration bug slip through last "
              "quarter because everything was mocked. Use the real Postgres from docker compose, the fixtures in "
              "tests/conftest.py already spin it up."),
            A("Understood - I'll keep tests on the real Postgres instance and won't add database mocks."),
            U("Also the test DB listens on port 5433, not 5432, so it doesn't clash with a local Postgres."),
            A("Got it."),
            U("Now can you look at why `InvoiceTotal.compute()` rounds 0.005 down?"),
            TOOL("Read", {"file_path": "/home/dev/projects/invoicer/src/invoicer/totals.py"},
                 "    40\t        return round(amount, 2)\n"),
            A("`compute()` uses Python's built-in `round()`, which does banker's rounding, so 0.005 rounds to "
              "0.00. I'll switch it to `Decimal.quantize(Decimal('0.01'), rounding=ROUND_HALF_UP)`."),
            TOOL("Edit", {"file_path": "/home/dev/projects/invoicer/src/invoicer/totals.py",
                          "old_string": "round(amount, 2)", "new_string": "amount.quantize(CENT, ROUND_HALF_UP)"},
                 "The file /home/dev/projects/invoicer/src/invoicer/totals.py has been updated."),
            A("Done. Money amounts are now rounded half-up with `Decimal.quantize`, and I added a regression "
              "test for 0.005."),
            CAVEAT(),
            CMD("/cost", "Total cost: $0.42\nTotal duration (API): 1m 12s"),
        ],
        "expected": [
            ("fact", ["uv", "pip install"]),
            ("experience", ["psycopg"]),
            ("fact", ["mock the database"]),
            ("fact", ["5433"]),
            ("fact", ["uv run pytest -n auto"]),
            ("experience", ["ROUND_HALF_UP"]),
        ],
        "forbidden": ["WeasyPrint", "Celery over RQ", "invoicer-core", "Resolved 48 packages",
                      "Let me check pyproject", "Total cost", "212 passed in"],
    }),

    ("en02_atlas_ruff_commits", {
        "lang": "en", "cwd": "/home/dev/projects/atlas-api",
        "turns": [
            U("Please format the new files in src/atlas/routes/ and fix the lint warnings."),
            T("I'll run black then flake8."),
            TOOL("Bash", {"command": "black src/atlas/routes/"}, "bash: black: command not found", error=True, code=127),
            U("No, we use ruff for both formatting and linting here, not black or flake8. Run `ruff format` and "
              "`ruff check --fix`."),
            A("Thanks for the correction. Running ruff instead."),
            TOOL("Bash", {"command": "ruff format src/atlas/routes/ && ruff check --fix src/atlas/routes/"},
                 "3 files reformatted\nFound 5 errors (5 fixed, 0 remaining)."),
            A("Formatted 3 files and fixed 5 lint issues with ruff."),
            U("Line length is 100 in this repo, it's set in pyproject. And I prefer small, focused commits with "
              "conventional commit prefixes like feat: and fix:."),
            A("Noted. I'll keep lines under 100 characters and split the work into small conventional commits."),
            TOOL("Bash", {"command": "git add src/atlas/routes && git commit -m 'style: format routes with ruff'"},
                 "[main 3f2a91c] style: format routes with ruff\n 3 files changed, 41 insertions(+), 38 deletions(-)"),
            COMPACT("The user asked to format the routes; ruff was used; commits follow conventional prefixes. "
                    "Atlas publishes domain events on Redis streams."),
            U("ok next: the /health endpoint returns 500 when Redis is down. it should return 200 with a degraded "
              "status instead, because the load balancer pulls the pod out of rotation on any 500."),
            A("I'll make `/health` catch the Redis connection error and report `{\"status\": \"degraded\"}` with "
              "a 200."),
            TOOL("Edit", {"file_path": "/home/dev/projects/atlas-api/src/atlas/routes/health.py",
                          "old_string": "raise", "new_string": "return {\"status\": \"degraded\"}"},
                 "The file /home/dev/projects/atlas-api/src/atlas/routes/health.py has been updated."),
            TOOL("Bash", {"command": "pytest tests/test_health.py -q"}, "....\n4 passed in 0.31s"),
            A("Done - `/health` now returns 200 with `status: degraded` when Redis is unreachable."),
        ],
        "expected": [
            ("fact", ["ruff", "black"]),
            ("fact", ["line length", "100"]),
            ("fact", ["conventional commit"]),
            ("decision", ["degraded", "load balancer"]),
        ],
        "forbidden": ["Redis streams", "command not found", "3 files reformatted", "I'll run black then flake8",
                      "41 insertions"],
    }),

    ("en03_orders_fastapi", {
        "lang": "en", "cwd": "/home/dev/projects/orders",
        "turns": [
            U("We're moving the orders service from Flask to FastAPI because we need async DB access and the "
              "auto-generated OpenAPI docs. Start with the /orders blueprint."),
            CTX("- [fact] orders service listens on port 5000 (Flask dev server)"),
            T("I should read the blueprint before porting it."),
            TOOL("Read", {"file_path": "/home/dev/projects/orders/src/orders/views.py"},
                 "     1\tfrom flask import Blueprint, request\n     2\tbp = Blueprint('orders', __name__)\n"),
            A("I'll port the blueprint to an `APIRouter` and keep the route paths identical so clients don't change."),
            TOOL("Write", {"file_path": "/home/dev/projects/orders/src/orders/api/orders.py", "content": "..."},
                 "File created successfully at: /home/dev/projects/orders/src/orders/api/orders.py"),
            TOOL("Bash", {"command": "uvicorn orders.main:app --port 8080"},
                 "ERROR:    Error loading ASGI app. Could not import module \"orders.main\".", error=True, code=1),
            A("uvicorn couldn't import `orders.main` because the package lives under `src/`. Running it with "
              "`--app-dir src` fixes the import."),
            TOOL("Bash", {"command": "uvicorn orders.main:app --app-dir src --port 8080"},
                 "INFO:     Uvicorn running on http://127.0.0.1:8080 (Press CTRL+C to quit)"),
            U("right, the API listens on 8080 in dev now. staging is at https://orders.staging.internal and prod "
              "deploys happen only from the release branch."),
            A("Noted."),
            U("for the DB layer let's go with SQLAlchemy 2.0 async sessions since the rest of the platform already "
              "uses them, rather than switching to Tortoise."),
            A("Makes sense. I'll wire `AsyncSession` through a dependency."),
            TOOL("Edit", {"file_path": "/home/dev/projects/orders/src/orders/db.py", "old_string": "x",
                          "new_string": "y"}, "The file /home/dev/projects/orders/src/orders/db.py has been updated."),
            A("The `/orders` router is ported. One gotcha: FastAPI returns 422 for validation errors where Flask "
              "returned 400, so I updated the two client tests that asserted 400."),
            INTERRUPT(),
            U("Actually hold on, don't touch the payments router, Maria owns that and she's refactoring it this week."),
            A("Understood, I'll leave the payments router alone."),
        ],
        "expected": [
            ("decision", ["Flask", "FastAPI", "async"]),
            ("experience", ["--app-dir src"]),
            ("fact", ["8080"]),
            ("fact", ["orders.staging.internal"]),
            ("fact", ["release branch"]),
            ("decision", ["SQLAlchemy", "async sessions"]),
            (["fact", "experience"], ["422"]),
            ("fact", ["Maria", "payments"]),
        ],
        "forbidden": ["port 5000", "Could not import module", "Uvicorn running on", "read the blueprint",
                      "File created successfully"],
    }),

    ("en04_scheduler_flaky", {
        "lang": "en", "cwd": "/home/dev/work/scheduler",
        "turns": [
            U("test_export_creates_file fails maybe one run in five on CI. can you figure out why?"),
            TOOL("Bash", {"command": "pytest tests/test_export.py --count 20 -n 4"},
                 "FAILED tests/test_export.py::test_export_creates_file - FileExistsError: [Errno 17] File exists: "
                 "'/tmp/export'\n1 failed, 19 passed in 2.11s", error=True, code=1),
            T("Shared /tmp path across parallel workers."),
            A("Found it: the flaky failure was caused by every test writing to the same hard-coded `/tmp/export` "
              "directory, so parallel xdist workers collided. I switched the test to pytest's `tmp_path` fixture "
              "and the failure is gone."),
            TOOL("Bash", {"command": "pytest tests/test_export.py --count 50 -n 4"}, "50 passed in 3.02s"),
            U("nice. Remember that CI runs on Python 3.10, so don't use match statements or the 3.11 "
              "ExceptionGroup stuff."),
            A("Will do."),
            U("also please stop adding type: ignore comments to silence mypy, fix the types properly."),
            A("Understood."),
            U("How long does the full suite take locally for you?"),
            A("About 40 seconds with `-n 4`."),
            TASK("Background command \"pytest -n 4\" completed (exit code 0): 318 passed"),
            U("ok. the nightly job is defined in .github/workflows/nightly.yml and it posts failures to the "
              "#sched-alerts Slack channel, fyi"),
            A("Thanks, good to know."),
        ],
        "expected": [
            ("experience", ["tmp_path"]),
            ("fact", ["Python 3.10", "match"]),
            ("fact", ["type: ignore"]),
            ("fact", ["nightly", "sched-alerts"]),
        ],
        "forbidden": ["File exists", "318 passed", "Shared /tmp path across parallel workers", "50 passed"],
    }),

    ("en05_shopfront_conventions", {
        "lang": "en", "cwd": "/home/dev/src/shopfront", "branch": "feature/SF-412-cart-badge",
        "turns": [
            U("I'm adding the cart badge. Branch names here follow feature/<ticket>-short-desc, which I've done. "
              "Where should the new component go?"),
            A("Let me look at the layout."),
            TOOL("Glob", {"pattern": "src/components/**/*.tsx"},
                 "src/components/cart/CartDrawer.tsx\nsrc/components/header/Header.tsx\n"
                 "src/components/checkout/AddressForm.tsx"),
            A("Components are grouped by feature under `src/components/<feature>/`. I'd put it in "
              "`src/components/cart/CartBadge.tsx`."),
            U("yes. and we use CSS modules, not styled-components - styled-components is being phased out."),
            A("Got it, I'll write `CartBadge.module.css`."),
            TOOL("Write", {"file_path": "/home/dev/src/shopfront/src/components/cart/CartBadge.tsx", "content": "..."},
                 "File created successfully at: /home/dev/src/shopfront/src/components/cart/CartBadge.tsx"),
            TOOL("Bash", {"command": "pnpm test -- CartBadge"}, "PASS src/components/cart/CartBadge.test.tsx (1.2 s)"),
            U("the badge count comes from the cart service. Alice owns the cart service, so if the API shape needs "
              "to change ask her first."),
            A("Understood."),
            U("The cart service depends on the inventory service for stock counts, which is why it's slow sometimes."),
            A("That explains the latency."),
            U("ship it"),
            TOOL("Bash", {"command": "git push -u origin feature/SF-412-cart-badge"},
                 "To github.com:acme/shopfront.git\n * [new branch]      feature/SF-412-cart-badge -> "
                 "feature/SF-412-cart-badge"),
            A("Pushed `feature/SF-412-cart-badge`."),
            SIDE("List every component that imports styled-components",
                 "Found 14 files importing styled-components: Header.tsx, Footer.tsx and 12 more."),
        ],
        "expected": [
            ("fact", ["feature/<ticket>"]),
            ("fact", ["grouped by feature"]),
            ("fact", ["CSS modules", "styled-components"]),
            ("fact", ["Alice", "cart service"]),
            ("fact", ["cart service", "inventory service"]),
        ],
        "forbidden": ["Found 14 files", "new branch", "Let me look at the layout", "CartDrawer.tsx"],
    }),

    ("en06_tidy_rust", {
        "lang": "en", "cwd": "/home/dev/code/tidy-rs",
        "turns": [
            CTX("- [fact] Release binaries are built with `cross` for aarch64"),
            U("Add a --dry-run flag to the `prune` subcommand. Always run `cargo clippy -- -D warnings` before you "
              "tell me you're done."),
            T("clap derive is used, so this is a new bool field."),
            TOOL("Read", {"file_path": "/home/dev/code/tidy-rs/src/cli.rs"},
                 "    12\t#[derive(Subcommand)]\n    13\tenum Command { Prune { path: PathBuf } }\n"),
            TOOL("Edit", {"file_path": "/home/dev/code/tidy-rs/src/cli.rs", "old_string": "a", "new_string": "b"},
                 "The file /home/dev/code/tidy-rs/src/cli.rs has been updated."),
            TOOL("Bash", {"command": "cargo build"},
                 "error[E0502]: cannot borrow `self.entries` as mutable because it is also borrowed as immutable\n"
                 "  --> src/prune.rs:41:13", error=True, code=101),
            A("The borrow error came from removing entries from `self.entries` while iterating over it; I now "
              "collect the paths to delete first and remove them after the loop, which compiles cleanly."),
            TOOL("Bash", {"command": "cargo build"},
                 "   Compiling tidy v0.4.0\n    Finished `dev` profile [unoptimized + debuginfo] target(s) in 4.12s"),
            TOOL("Bash", {"command": "cargo clippy -- -D warnings"},
                 "    Finished `dev` profile [unoptimized + debuginfo] target(s) in 0.98s"),
            A("Done: `prune --dry-run` lists what would be removed without deleting anything. Clippy is clean."),
            U("we target MSRV 1.74, so check you didn't use anything newer"),
            TOOL("Bash", {"command": "cargo +1.74 check"}, "    Finished `dev` profile target(s) in 6.40s"),
            A("It builds on 1.74."),
            U("cool. fyi we picked anyhow over thiserror for the binary because the errors are only ever shown to "
              "humans; thiserror stays in the library crate."),
            A("Makes sense."),
        ],
        "expected": [
            ("fact", ["cargo clippy -- -D warnings"]),
            ("experience", ["collect the paths"]),
            ("fact", ["MSRV 1.74"]),
            ("decision", ["anyhow", "thiserror"]),
        ],
        "forbidden": ["built with `cross`", "clap derive is used", "unoptimized + debuginfo", "enum Command"],
    }),

    ("en07_platform_terraform_incident", {
        "lang": "en", "cwd": "/home/dev/infra/platform-tf",
        "turns": [
            U("I need to bump the RDS instance class for checkout-db to db.r6g.xlarge."),
            A("I'll update the Terraform variable and run a plan."),
            TOOL("Edit", {"file_path": "/home/dev/infra/platform-tf/envs/prod/checkout.tfvars",
                          "old_string": "db.r6g.large", "new_string": "db.r6g.xlarge"},
                 "The file /home/dev/infra/platform-tf/envs/prod/checkout.tfvars has been updated."),
            TOOL("Bash", {"command": "terraform plan -var-file=envs/prod/checkout.tfvars"},
                 "Plan: 0 to add, 1 to change, 0 to destroy."),
            A("The plan changes one resource. Should I apply it?"),
            U("NO. Never run terraform apply against prod from a laptop - last month someone did that with a stale "
              "state file and checkout was down for an hour!!! It was awful. Prod changes only go through the "
              "deploy-prod pipeline in GitHub Actions."),
            A("Understood, I won't apply. I'll open a PR so the pipeline applies it."),
            TOOL("Bash", {"command": "gh pr create --title 'Bump checkout-db to r6g.xlarge' --body 'plan attached'"},
                 "https://github.com/acme/platform-tf/pull/882"),
            U("thanks. state lives in the S3 bucket acme-tf-state with DynamoDB locking, in case you need it."),
            A("Noted."),
            U("btw the staging plan failed earlier with 'Error acquiring the state lock' - what was that?"),
            A("The lock error happened because a cancelled CI job left a stale lock in the DynamoDB table; "
              "`terraform force-unlock <LOCK_ID>` clears it once you've confirmed no job is running."),
        ],
        "expected": [
            ("fact", ["terraform apply", "prod"]),
            ("fact", ["deploy-prod"]),
            ("fact", ["acme-tf-state"]),
            ("experience", ["force-unlock"]),
        ],
        "forbidden": ["1 to change", "pull/882"],
    }),

    ("en08_dashboard_vitest", {
        "lang": "en", "cwd": "/home/dev/web/dashboard",
        "turns": [
            U("The snapshot tests are failing after I pulled main. We switched from Jest to Vitest last month, so "
              "ignore any jest.config leftovers.\n<system-reminder>The user opened the file vite.config.ts in the "
              "IDE. This may or may not be related to the current task.</system-reminder>"),
            TOOL("Bash", {"command": "pnpm vitest run"},
                 " FAIL  src/widgets/Chart.test.tsx > renders\nError: Snapshot `Chart > renders 1` mismatched",
                 error=True, code=1),
            T("Probably the chart lib bump."),
            A("The snapshot mismatch is because the chart library was upgraded and now renders an extra `<title>` "
              "element; I regenerated the snapshots with `pnpm vitest run -u` after checking the diff was only that."),
            TOOL("Bash", {"command": "pnpm vitest run -u"}, " Test Files  38 passed (38)\n      Tests  412 passed (412)"),
            U("ok. tsconfig has strict mode on and it stays on - don't loosen it to make things compile."),
            A("Agreed."),
            U("and I'd rather you ask before adding any new dependency, the bundle is already 900kb"),
            A("Will do."),
            U([{"type": "text", "text": "what's the command to run storybook again?"}]),
            A("`pnpm storybook` - it serves on port 6006."),
            SIDE("Find leftover jest config files", "Found jest.config.js and babel.config.js at the repo root."),
        ],
        "expected": [
            ("fact", ["Jest", "Vitest"]),
            ("experience", ["<title>"]),
            ("fact", ["strict"]),
            ("fact", ["new dependency"]),
            ("fact", ["pnpm storybook"]),
        ],
        "forbidden": ["vite.config.ts", "babel.config.js", "38 passed", "Snapshot `Chart > renders 1`", "chart lib bump"],
    }),

    ("en09_notes_questions_only", {
        "lang": "en", "cwd": "/home/dev/projects/notes-app",
        "turns": [
            U("what does functools.lru_cache do with unhashable arguments?"),
            A("It raises `TypeError: unhashable type` because it builds the cache key from the arguments. You can "
              "convert lists to tuples before calling."),
            U("and how is that different from functools.cache?"),
            A("`functools.cache` is just `lru_cache(maxsize=None)`: unbounded, and slightly faster."),
            U("can you show me where we call lru_cache in this repo"),
            TOOL("Grep", {"pattern": "lru_cache", "path": "src"}, "src/notes/search.py:12:@lru_cache(maxsize=256)"),
            A("Only in `src/notes/search.py`, on `tokenize()`, with maxsize 256."),
            U("thanks, that's all for now"),
            A("You're welcome!"),
        ],
        "expected": [],
        "forbidden": ["search.py:12"],
    }),
]
