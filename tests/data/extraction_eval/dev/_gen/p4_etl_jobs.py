from cc import Session
from common import A, E, gold

CWD = "/home/dev/work/etl-jobs"
SF_PW = "Snowfl4ke#Dev2026"
SLACK = "https://hooks.slack.com/services/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"
SLACK_TOKEN = "q8Vn3RtY5uWz1pLk0aSdF4gH"


def dbt_head(ts, target="dev"):
    return (f"{ts}  Running with dbt=1.8.7\n{ts}  Registered adapter: snowflake=1.8.4\n"
            f"{ts}  Found 143 models, 412 data tests, 31 sources, 1 exposure, 702 macros\n{ts}  \n"
            f"{ts}  Concurrency: 8 threads (target='{target}')\n{ts}  \n")


# ---------------------------------------------------------------- s1
def s1():
    name = "p4s1_etl_jobs_fct_orders_dupes"
    s = Session(name, CWD, "2026-09-11T19:58:02.000Z", version="2.1.303", branch="fix/fct-orders-dupes",
                title="Fix duplicate rows in fct_orders after backfill")
    s.snapshot()
    s.user("fct_orders has dupes since the backfill last night. finance dashboard shows revenue roughly 2x for sept 3-5. figure out why")
    s.think("Check the model config first (incremental? unique_key?), then confirm dupes, then see what the backfill ran.")
    s.read(f"{CWD}/dbt/models/marts/fct_orders.sql", """{{ config(materialized='incremental') }}

select
    o.order_id,
    o.customer_id,
    o.order_status,
    o.amount_minor,
    o.currency,
    o.updated_at,
    o.order_date
from {{ ref('stg_shop__orders') }} o
{% if is_incremental() %}
where o.updated_at > (select max(updated_at) from {{ this }})
{% endif %}
""")
    s.bash("cd dbt && dbt show --inline \"select order_id, count(*) as n from {{ ref('fct_orders') }} group by 1 having count(*) > 1\" --limit 5",
           "20:01:44  Running with dbt=1.8.7\n20:01:44  Encountered an error:\nRuntime Error\n  Could not find profile named 'analytics'",
           code=2, desc="Look for duplicate order_ids")
    s.user(f"""ah, new machine. put this in ~/.dbt/profiles.yml:
```
analytics:
  target: dev
  outputs:
    dev:
      type: snowflake
      account: xy12345.eu-central-1
      user: JLI
      password: '{SF_PW}'
      role: TRANSFORMER_DEV
      warehouse: TRANSFORM_WH_XS
      database: ANALYTICS_DEV
      schema: dbt_jli
      threads: 8
```""")
    s.write("/home/dev/.dbt/profiles.yml", f"""analytics:
  target: dev
  outputs:
    dev:
      type: snowflake
      account: xy12345.eu-central-1
      user: JLI
      password: '{SF_PW}'
      role: TRANSFORMER_DEV
      warehouse: TRANSFORM_WH_XS
      database: ANALYTICS_DEV
      schema: dbt_jli
      threads: 8
""")
    s.say("Written. Side note: a plain password in profiles.yml is easy to leak; `password: \"{{ env_var('SNOWFLAKE_PASSWORD') }}\"` or key-pair auth would keep it out of the file.")
    s.bash("cd dbt && dbt show --inline \"select order_id, count(*) as n from analytics_prod.marts.fct_orders where order_date between '2026-09-03' and '2026-09-05' group by 1 having count(*) > 1\" --limit 5",
           dbt_head("20:03:10") + """20:03:19  Previewing inline node:
| ORDER_ID   | N |
| ---------- | - |
| 9001842231 | 2 |
| 9001842240 | 2 |
| 9001842257 | 2 |
| 9001842262 | 2 |
| 9001842290 | 2 |""", desc="Look for duplicate order_ids in prod (read-only)", gap=(8, 15))
    s.grep("catchup|fct_orders|schedule", """dags/shop_daily.py:14:    schedule="0 2 * * *",
dags/shop_daily.py:15:    catchup=True,
dags/shop_daily.py:31:        bash_command="cd /opt/airflow/dbt && dbt run --select +fct_orders --target prod",""", path="dags/shop_daily.py")
    s.say("Root cause: `fct_orders` is `incremental` **without a `unique_key`**, so every incremental run is a plain INSERT of whatever the filter selects. An order that gets selected a second time (here: Sep 3-5 orders whose `updated_at` moved because of refunds, picked up again by the backfill runs) becomes a second row instead of replacing the first one.\n\nFix: `unique_key='order_id'`, so re-selected rows update in place.")
    s.user("merge or delete+insert? the table's around 400M rows")
    s.say("On Snowflake both have to find the matching target rows; without help that's a scan of the whole 400M-row table on every run. `merge` with `incremental_predicates` lets you bound the target side, e.g. `DBT_INTERNAL_DEST.updated_at > dateadd(day, -7, current_date)`, so the MERGE only looks at recent rows. delete+insert doesn't buy anything over that here. I'd do merge with a 7-day predicate.")
    s.user("merge is fine but 7 days is too short. refunds update orders up to 30 days later")
    s.say("Then a row updated by a refund on day 25 wouldn't be matched and would be inserted again. Use 35 days to leave a margin over the 30.")
    s.user("make it 35. merge it is.")
    s.edit(f"{CWD}/dbt/models/marts/fct_orders.sql", "{{ config(materialized='incremental') }}", """{{ config(
    materialized='incremental',
    incremental_strategy='merge',
    unique_key='order_id',
    -- refunds touch orders up to 30 days later; 35 leaves margin. keeps MERGE off the full 400M rows
    incremental_predicates=["DBT_INTERNAL_DEST.updated_at > dateadd(day, -35, current_date)"]
) }}""")
    s.say("While I'm here I'd also add a small `stg_orders_deduped` model in front as a safety net.")
    s.user("no new model, the merge is enough. fyi since you're new in this repo: staging models are named stg_<source>__<entity>, double underscore (stg_shop__orders), marts are fct_/dim_. and your dev builds land in your own schema dbt_<initials>")
    s.bash("cd dbt && dbt build --select fct_orders", dbt_head("20:22:43") + """20:22:45  1 of 3 START sql incremental model dbt_jli.fct_orders .......................... [RUN]
20:23:31  1 of 3 OK created sql incremental model dbt_jli.fct_orders ..................... [SUCCESS 1 in 46.02s]
20:23:31  2 of 3 START test not_null_fct_orders_order_id ................................. [RUN]
20:23:31  3 of 3 START test unique_fct_orders_order_id ................................... [RUN]
20:23:33  2 of 3 PASS not_null_fct_orders_order_id ....................................... [PASS in 1.88s]
20:23:34  3 of 3 PASS unique_fct_orders_order_id ......................................... [PASS in 2.41s]
20:23:34  
20:23:34  Finished running 1 incremental model, 2 data tests in 0 hours 0 minutes and 50.77 seconds (50.77s).
20:23:34  
20:23:34  Completed successfully
20:23:34  
20:23:34  Done. PASS=3 WARN=0 ERROR=0 SKIP=0 TOTAL=3""", desc="Build fct_orders in dev", gap=(50, 60))
    s.user("the dupes in prod still need cleaning. how do we full-refresh just that model in prod? we never run dbt by hand against prod")
    s.read(f"{CWD}/dags/dbt_full_refresh.py", """with DAG(
    dag_id="dbt_full_refresh",
    schedule=None,  # manual only
    params={"select": Param("", type="string", description="dbt selector, e.g. fct_orders")},
    catchup=False,
) as dag:
    BashOperator(
        task_id="full_refresh",
        bash_command="cd /opt/airflow/dbt && dbt build --full-refresh --select {{ params.select }} --target prod",
    )
""", start=9, total=22)
    s.say("There's a manual-only DAG for exactly this: trigger `dbt_full_refresh` with conf `{\"select\": \"fct_orders\"}`. It runs `dbt build --full-refresh --select fct_orders --target prod` inside Airflow.")
    s.user("ok I'll trigger it from the UI. also shop_daily has catchup=True?? that's how the backfill happened by accident, someone unpaused it after a week")
    s.grep("catchup", """dags/common/factory.py:22:        catchup=False,
dags/shop_daily.py:15:    catchup=True,""", path="dags")
    s.say("The factory defaults to `catchup=False`, `shop_daily.py` overrides it with `True`.")
    s.user("set it false. rule from now on: catchup stays off on every DAG, backfills are always explicit: `airflow dags backfill --reset-dagruns -s <start> -e <end> <dag_id>`")
    s.edit(f"{CWD}/dags/shop_daily.py", "    catchup=True,", "    catchup=False,  # backfills are explicit, never via catchup", at_line=15)
    s.bash("git add -A && git commit -m 'fix(fct_orders): merge on order_id with 35d predicate; disable catchup on shop_daily'", """[fix/fct-orders-dupes e3b90a1] fix(fct_orders): merge on order_id with 35d predicate; disable catchup on shop_daily
 2 files changed, 8 insertions(+), 2 deletions(-)""", desc="Commit")
    s.stop_hook()
    s.turn_duration()
    g = gold(name, CWD, 1, "en", [
        E("e1", "experience", "root_cause", "en", "fct_orders got duplicate rows after the backfill because the incremental model had no unique_key, so dbt appended and re-run windows inserted the same orders again.", ["unique_key"]),
        E("e2", "decision", "decision", "en", "fct_orders uses incremental_strategy='merge' on unique_key order_id with incremental_predicates limiting the target to the last 35 days (refunds update orders up to 30 days later; table ~400M rows), rather than delete+insert.", ["merge", "35"], chosen="merge", over=["delete+insert"], why=["refund"]),
        E("e3", "fact", "convention", "en", "catchup stays off (catchup=False) on every Airflow DAG; the DAG factory defaults to it.", ["catchup"]),
        E("e4", "fact", "command", "en", "Backfills are always explicit: `airflow dags backfill --reset-dagruns -s <start> -e <end> <dag_id>`.", ["airflow dags backfill", "--reset-dagruns"]),
        E("e5", "fact", "command", "en", "To full-refresh a model in prod, trigger the manual `dbt_full_refresh` DAG with conf {\"select\": \"<model>\"}; never run dbt by hand against prod.", ["dbt_full_refresh"]),
        E("e6", "fact", "config", "en", "The dbt dev target uses warehouse TRANSFORM_WH_XS (role TRANSFORMER_DEV).", ["TRANSFORM_WH_XS"]),
        E("e7", "fact", "config", "en", "dbt dev builds go to database ANALYTICS_DEV in a personal schema dbt_<initials> (profile name `analytics` in ~/.dbt/profiles.yml).", ["ANALYTICS_DEV"]),
        E("e8", "fact", "convention", "en", "dbt naming: staging models are stg_<source>__<entity> with a double underscore (e.g. stg_shop__orders); marts are fct_/dim_.", ["stg_<source>__<entity>"]),
    ], [
        A(["xy12345"], "snowflake account locator is not secret"),
        A(["env_var"], "suggestion to use env_var for the password"),
        A(["400M"], "fct_orders ~400M rows"),
    ], ["PASS=3", "Found 143 models", "9001842231", "e3b90a1", "new machine"], [SF_PW])
    return s, g


# ---------------------------------------------------------------- s2
R_P4S2 = [(2, "fact", "3 weeks ago", "Airflow runs on MWAA in eu-central-1."),
          (11, "fact", "7 days ago", "catchup stays off (catchup=False) on every Airflow DAG."),
          (13, "decision", "7 days ago", "fct_orders uses merge on order_id with a 35-day incremental predicate.")]


def s2():
    name = "p4s2_etl_jobs_missing_alerts"
    s = Session(name, CWD, "2026-09-18T08:14:40.000Z", version="2.1.306", branch="fix/failure-alerts",
                title="Why shop_daily failure sent no Slack alert")
    s.snapshot()
    s.user("we didn't get a slack alert when shop_daily failed on tuesday. the alerting works for other dags. check the callbacks?")
    s.recall_attachment(R_P4S2)
    s.read(f"{CWD}/dags/common/factory.py", """def make_dag(dag_id: str, schedule: str, **kwargs) -> DAG:
    return DAG(
        dag_id=dag_id,
        schedule=schedule,
        start_date=pendulum.datetime(2025, 1, 1, tz="UTC"),
        catchup=False,
        on_failure_callback=notify_slack,
        default_args={"owner": "data", "retries": 2, "retry_delay": timedelta(minutes=5)},
        **kwargs,
    )
""", start=14, total=30)
    s.read(f"{CWD}/dags/common/alerts.py", """def notify_slack(context):
    dag_run = context["dag_run"]
    text = f":red_circle: {dag_run.dag_id} failed ({dag_run.run_id})"
    requests.post(os.environ["SLACK_WEBHOOK_URL"], json={"text": text}, timeout=10)
""", start=6, total=10)
    s.bash("docker compose exec airflow-scheduler airflow tasks states-for-dag-run shop_daily scheduled__2026-09-15T02:00:00+00:00",
           """dag_id     | execution_date            | task_id        | state   | start_date                       | end_date
===========+===========================+================+=========+==================================+=================================
shop_daily | 2026-09-15T02:00:00+00:00 | extract_orders | success | 2026-09-16T02:00:04.118321+00:00 | 2026-09-16T02:03:51.902114+00:00
shop_daily | 2026-09-15T02:00:00+00:00 | dbt_run        | failed  | 2026-09-16T02:03:55.410007+00:00 | 2026-09-16T02:31:12.007731+00:00
shop_daily | 2026-09-15T02:00:00+00:00 | cleanup_tmp    | success | 2026-09-16T02:31:14.662190+00:00 | 2026-09-16T02:31:16.120455+00:00""",
           desc="Task states for tuesday's run")
    s.grep("cleanup_tmp", "dags/shop_daily.py:38:    cleanup = BashOperator(task_id=\"cleanup_tmp\", bash_command=\"rm -rf /tmp/shop_daily/*\", trigger_rule=\"all_done\")", path="dags/shop_daily.py")
    s.say("That explains it. The callback is only set at DAG level (`DAG(on_failure_callback=...)`), which fires when the **DagRun** fails. A DagRun's final state is decided by its leaf tasks, and the only leaf in shop_daily is `cleanup_tmp` with `trigger_rule=\"all_done\"`: it runs and succeeds even after `dbt_run` failed, so the run was marked **success** and the DAG-level callback never had a reason to fire.\n\nOptions: put the callback into `default_args` so it fires per failed task, and/or stop the cleanup task from deciding the run state.")
    s.user("put it in default_args in the factory, then every task failure alerts. and while you're in there: the webhook is an env var right now. security wants it rotated every quarter and changing env vars means a redeploy. can we use an airflow connection instead?")
    s.say("Yes: the Slack provider has `SlackWebhookHook`, which reads the URL from a connection (`slack_webhook_conn_id`). The connection lives in the secrets backend, so rotating is just updating the connection, no redeploy. I'd call it `slack_alerts`.")
    s.user(f"yes, connection `slack_alerts`. the new hook url is {SLACK} — I'll put it in the secrets backend myself, use it only for local testing")
    s.bash(f"docker compose exec airflow-scheduler airflow connections add slack_alerts --conn-type slackwebhook --conn-password '{SLACK}'",
           "Successfully added `conn_id`=slack_alerts : slackwebhook://:******@:", desc="Create local slack connection")
    s.edit(f"{CWD}/dags/common/alerts.py", """    requests.post(os.environ["SLACK_WEBHOOK_URL"], json={"text": text}, timeout=10)""",
           """    SlackWebhookHook(slack_webhook_conn_id="slack_alerts").send(text=text)""", at_line=9)
    s.edit(f"{CWD}/dags/common/factory.py", """        on_failure_callback=notify_slack,
        default_args={"owner": "data", "retries": 2, "retry_delay": timedelta(minutes=5)},""",
           """        # task-level: a run can end "success" when an all_done cleanup task is the leaf
        default_args={"owner": "data", "retries": 2, "retry_delay": timedelta(minutes=5),
                      "on_failure_callback": notify_slack},""", at_line=20)
    s.bash("docker compose exec airflow-scheduler python -c \"from common.alerts import notify_slack\"", """Traceback (most recent call last):
  File "<string>", line 1, in <module>
  File "/opt/airflow/dags/common/alerts.py", line 3, in <module>
    from airflow.providers.slack.hooks.slack_webhook import SlackWebhookHook
ModuleNotFoundError: No module named 'airflow.providers.slack'""", code=1, desc="Import check")
    s.bash("grep -n providers requirements.txt", "3:apache-airflow-providers-snowflake==5.7.0\n4:astronomer-cosmos==1.6.0", desc="Check installed providers")
    s.edit(f"{CWD}/requirements.txt", "apache-airflow-providers-snowflake==5.7.0", "apache-airflow-providers-snowflake==5.7.0\napache-airflow-providers-slack==8.9.0", at_line=3)
    s.bash("docker compose build -q && docker compose up -d && docker compose exec airflow-scheduler python -c \"from common.alerts import notify_slack; print('ok')\"",
           """[+] Running 4/4
 ✔ Container etl-jobs-postgres-1           Healthy                        1.2s
 ✔ Container etl-jobs-airflow-scheduler-1  Started                        3.8s
 ✔ Container etl-jobs-airflow-webserver-1  Started                        3.9s
 ✔ Container etl-jobs-airflow-triggerer-1  Started                        3.7s
ok""", desc="Rebuild image with slack provider", gap=(60, 120))
    s.user("also for dev: TRANSFORM_WH_XS is gone, finance complained about credits. everyone uses DEV_WH now (XS, auto-suspend 60s). update the profiles template")
    s.edit(f"{CWD}/dbt/profiles.example.yml", "      warehouse: TRANSFORM_WH_XS", "      warehouse: DEV_WH  # shared XS, auto-suspend 60s", at_line=9)
    s.bash("uv run pytest tests/dags -q", """........................                                                 [100%]
24 passed in 8.13s""", desc="DAG integrity tests")
    s.user("nice, ship it")
    s.bash("git add -A && git commit -m 'fix(alerts): task-level failure callback via slack_alerts connection'", """[fix/failure-alerts 71c0d2f] fix(alerts): task-level failure callback via slack_alerts connection
 4 files changed, 9 insertions(+), 5 deletions(-)""", desc="Commit")
    s.stop_hook()
    g = gold(name, CWD, 2, "en", [
        E("e1", "experience", "root_cause", "en", "shop_daily's failure sent no Slack alert: the callback was only DAG-level, and the leaf task cleanup_tmp (trigger_rule=all_done) succeeded, so the DagRun was marked success and on_failure_callback never fired.", ["all_done"]),
        E("e2", "fact", "convention", "en", "Failure alerts are a task-level on_failure_callback in default_args of the DAG factory (dags/common/factory.py), so every failed task alerts.", ["default_args"]),
        E("e3", "decision", "decision", "en", "Slack alerts use SlackWebhookHook with the Airflow connection `slack_alerts` (secrets backend) instead of the SLACK_WEBHOOK_URL env var, because the webhook is rotated quarterly and env var changes need a redeploy.", ["slack_alerts"], chosen="slack_alerts", over=["SLACK_WEBHOOK_URL"], why=["rotat"]),
        E("e4", "experience", "fix", "en", "The Slack provider wasn't installed (ModuleNotFoundError airflow.providers.slack); pinned apache-airflow-providers-slack==8.9.0 in requirements.txt and rebuilt with `docker compose build`.", ["apache-airflow-providers-slack"]),
        E("e5", "fact", "config", "en", "Dev dbt warehouse is DEV_WH now (shared XS, auto-suspend 60s); TRANSFORM_WH_XS was removed.", ["DEV_WH"], supersedes="p4s1_etl_jobs_fct_orders_dupes#e6"),
        E("e6", "fact", "command", "en", "DAG integrity tests: `uv run pytest tests/dags -q`.", ["pytest tests/dags"]),
        E("e7", "fact", "command", "en", "Local Airflow runs in docker compose; use the CLI via `docker compose exec airflow-scheduler airflow ...`.", ["docker compose exec airflow-scheduler"]),
    ], [
        A(["astronomer-cosmos"], "cosmos 1.6.0 pinned in requirements.txt"),
        A(["quarter"], "security rotates the webhook quarterly"),
    ], ["MWAA", R_P4S2[1][3], R_P4S2[2][3], "24 passed", "71c0d2f", "nice, ship it"], [SLACK, SLACK_TOKEN])
    return s, g


# ---------------------------------------------------------------- s3
def s3():
    name = "p4s3_etl_jobs_dbt_deps"
    s = Session(name, CWD, "2026-10-01T09:31:55.000Z", version="2.1.312", branch="fix/dbt-deps",
                title="Fix dbt deps version conflict in CI")
    s.snapshot()
    s.user("""dbt deps is broken on CI since this morning:
```
10:02:13  Running with dbt=1.8.7
10:02:14  Updating lock file in file path: /builds/data/etl-jobs/dbt/package-lock.yml
10:02:15  Encountered an error:
Version error for package dbt-labs/dbt_utils: Could not find a satisfactory version from options: ['>=1.1.0', '<1.2.0', '>=1.3.0', '<2.0.0']
```""")
    s.think("Two constraints on dbt_utils: ours (<1.2.0) and a transitive one (>=1.3.0). Probably a package with an open range upgraded. Lock file is being regenerated in CI, so it's not committed.")
    s.read(f"{CWD}/dbt/packages.yml", """packages:
  - package: dbt-labs/dbt_utils
    version: [">=1.1.0", "<1.2.0"]
  - package: metaplane/dbt_expectations
    version: [">=0.10.0"]
  - package: dbt-labs/codegen
    version: 0.12.1
""")
    s.bash("git log -3 --format='%h %an %ad %s' --date=short -- dbt/packages.yml; git check-ignore -v dbt/package-lock.yml",
           """c0ffe71 Priya S 2026-08-28 chore(dbt): add dbt_expectations for range tests
8a1b2c3 Jonas L 2026-06-02 chore(dbt): bump dbt_utils to 1.1.x
.gitignore:14:dbt/package-lock.yml	dbt/package-lock.yml""", desc="History of packages.yml and lock file status")
    s.bash("cd dbt && dbt deps 2>&1 | tail -3; grep -rn 'dbt_utils' dbt_packages/dbt_expectations/packages.yml 2>/dev/null || curl -s https://hub.getdbt.com/api/v1/metaplane/dbt_expectations.json | python3 -c \"import json,sys; d=json.load(sys.stdin); print(d['latest'])\"",
           "10:41:07  Encountered an error:\nVersion error for package dbt-labs/dbt_utils: Could not find a satisfactory version from options: ['>=1.1.0', '<1.2.0', '>=1.3.0', '<2.0.0']\n0.10.5", desc="Reproduce and check latest dbt_expectations")
    s.say("Reproduced. dbt_expectations is pinned only as `>=0.10.0`, and `package-lock.yml` is gitignored, so every CI run resolves fresh. 0.10.5 came out yesterday and needs `dbt_utils >=1.3.0`; our own pin says `<1.2.0`. Nothing changed in our repo.\n\nWays out:\n1. bump dbt_utils to 1.3.x\n2. pin dbt_expectations to 0.10.4\n3. drop dbt_expectations: it's only used for `expect_column_values_to_be_between`, in two models")
    s.grep("dbt_expectations\\.", """models/marts/schema.yml:48:          - dbt_expectations.expect_column_values_to_be_between:
models/finance/schema.yml:21:          - dbt_expectations.expect_column_values_to_be_between:""", path="dbt/models")
    s.user("drop it. we use that one test twice and every time that package releases something breaks. write our own generic test in tests/generic/")
    s.write(f"{CWD}/dbt/tests/generic/value_between.sql", """{% test value_between(model, column_name, min_value=none, max_value=none) %}
select *
from {{ model }}
where {{ column_name }} is not null
  and (
    {% if min_value is not none %} {{ column_name }} < {{ min_value }} {% else %} false {% endif %}
    or
    {% if max_value is not none %} {{ column_name }} > {{ max_value }} {% else %} false {% endif %}
  )
{% endtest %}
""")
    s.edit(f"{CWD}/dbt/models/marts/schema.yml", """          - dbt_expectations.expect_column_values_to_be_between:
              min_value: 0""", """          - value_between:
              min_value: 0""", at_line=48)
    s.edit(f"{CWD}/dbt/models/finance/schema.yml", """          - dbt_expectations.expect_column_values_to_be_between:
              min_value: 0
              max_value: 100""", """          - value_between:
              min_value: 0
              max_value: 100""", at_line=21)
    s.user("and pin everything exactly in packages.yml, no ranges. and stop ignoring package-lock.yml, commit it")
    s.edit(f"{CWD}/dbt/packages.yml", """  - package: dbt-labs/dbt_utils
    version: [">=1.1.0", "<1.2.0"]
  - package: metaplane/dbt_expectations
    version: [">=0.10.0"]
  - package: dbt-labs/codegen
    version: 0.12.1""", """  - package: dbt-labs/dbt_utils
    version: 1.1.1
  - package: dbt-labs/codegen
    version: 0.12.1""", at_line=2)
    s.edit(f"{CWD}/.gitignore", "dbt/package-lock.yml\n", "", at_line=14)
    s.bash("cd dbt && dbt deps && dbt build --select tag:finance", """10:52:30  Running with dbt=1.8.7
10:52:31  Updating lock file in file path: /home/dev/work/etl-jobs/dbt/package-lock.yml
10:52:32  Installing dbt-labs/dbt_utils
10:52:33  Installed from version 1.1.1
10:52:33  Installing dbt-labs/codegen
10:52:34  Installed from version 0.12.1
""" + dbt_head("10:52:41") + """10:52:44  1 of 9 START sql view model dbt_jli.stg_billing__invoices ...................... [RUN]
...
10:53:40  9 of 9 PASS value_between_fct_revenue_daily_margin_pct__100__0 ................. [PASS in 1.91s]
10:53:40  
10:53:40  Finished running 3 view models, 1 table model, 5 data tests in 0 hours 0 minutes and 58.86 seconds (58.86s).
10:53:40  
10:53:40  Completed successfully
10:53:40  
10:53:40  Done. PASS=9 WARN=0 ERROR=0 SKIP=0 TOTAL=9""", desc="Install deps and build finance models", gap=(60, 75))
    s.user("while we're at it, naming. the double underscore thing confuses everyone and the docs site sorts it weird. from now on new staging models are stg_<source>_<entity>, single underscore. don't rename the old ones yet")
    s.say("OK: new staging models use `stg_<source>_<entity>`; existing `stg_x__y` models stay as they are for now.")
    s.user("and a separate rule: every new model needs unique + not_null tests on its primary key in the schema yml. we'll enforce it with dbt-checkpoint in CI later")
    s.edit(f"{CWD}/CONTRIBUTING.md", "## dbt models\n", """## dbt models

- New staging models: `stg_<source>_<entity>` (single underscore). Older `stg_<source>__<entity>` names stay until renamed.
- Every new model declares `unique` + `not_null` tests on its primary key in its schema yml.
- Package versions in `packages.yml` are exact pins; `package-lock.yml` is committed.
""", at_line=31)
    s.bash("git add -A && git commit -m 'fix(dbt): drop dbt_expectations, exact package pins, commit lock file'", """[fix/dbt-deps 5f1e9ab] fix(dbt): drop dbt_expectations, exact package pins, commit lock file
 7 files changed, 43 insertions(+), 12 deletions(-)
 create mode 100644 dbt/package-lock.yml
 create mode 100644 dbt/tests/generic/value_between.sql""", desc="Commit")
    s.stop_hook()
    g = gold(name, CWD, 3, "en", [
        E("e1", "experience", "root_cause", "en", "CI `dbt deps` broke because dbt_expectations was only pinned as >=0.10.0 and package-lock.yml was gitignored; the new 0.10.5 release requires dbt_utils>=1.3.0 while packages.yml pinned dbt_utils <1.2.0.", ["dbt_expectations", "dbt_utils"]),
        E("e2", "decision", "decision", "en", "Dropped dbt_expectations; range checks use our own generic test `value_between` in dbt/tests/generic/, because the package was used for only two tests and its releases keep breaking things.", ["value_between"], chosen="value_between", over=["dbt_expectations"], why=["break"]),
        E("e3", "fact", "convention", "en", "dbt packages.yml uses exact version pins only (no ranges), and dbt/package-lock.yml is committed.", ["package-lock.yml"]),
        E("e4", "fact", "convention", "en", "New dbt staging models are named stg_<source>_<entity> (single underscore); existing double-underscore models are not renamed yet.", ["stg_<source>_<entity>"], supersedes="p4s1_etl_jobs_fct_orders_dupes#e8"),
        E("e5", "fact", "convention", "en", "Every new dbt model must declare unique + not_null tests on its primary key in its schema yml (dbt-checkpoint will enforce it in CI).", ["not_null", "unique"]),
    ], [
        A(["CONTRIBUTING.md"], "dbt rules written to CONTRIBUTING.md"),
        A(["tag:finance"], "dbt build --select tag:finance"),
        A(["1.1.1"], "dbt_utils pinned at 1.1.1"),
    ], ["PASS=9", "5f1e9ab", "43 insertions", "10:52:30"], [])
    return s, g


# ---------------------------------------------------------------- s4
R_P4S4 = [(15, "fact", "34 days ago", "Backfills are always explicit: airflow dags backfill --reset-dagruns -s <start> -e <end> <dag_id>."),
          (21, "fact", "27 days ago", "Dev dbt warehouse is DEV_WH (XS, auto-suspend 60s)."),
          (27, "fact", "14 days ago", "New dbt staging models are named stg_<source>_<entity>.")]


def s4():
    name = "p4s4_etl_jobs_cosmos_manifest"
    s = Session(name, CWD, "2026-10-15T12:07:33.000Z", version="2.1.321", branch="perf/cosmos-manifest",
                title="Cosmos DAG parse timeouts; switch to manifest load mode")
    s.recall_attachment(R_P4S4, event="SessionStart")
    s.user("scheduler keeps logging DagFileProcessor timeouts for dbt_analytics.py, parse takes ~45s. this is the cosmos thing, right?")
    s.read(f"{CWD}/dags/dbt_analytics.py", """dbt_analytics = DbtDag(
    dag_id="dbt_analytics",
    schedule="30 3 * * *",
    project_config=ProjectConfig(DBT_DIR),
    profile_config=PROFILE,
    execution_config=ExecutionConfig(dbt_executable_path="/home/airflow/.local/bin/dbt"),
    render_config=RenderConfig(load_method=LoadMode.DBT_LS, select=["path:models"]),
    catchup=False,
)
""", start=12, total=21)
    s.bash("grep -nE 'dagbag_import_timeout|dag_file_processor_timeout|parsing_processes' airflow.cfg; docker compose logs airflow-scheduler --since 1h 2>&1 | grep -m2 'timed out'",
           """212:dagbag_import_timeout = 30
219:dag_file_processor_timeout = 50
231:parsing_processes = 2
etl-jobs-airflow-scheduler-1  | [2026-10-15T11:58:02.114+0000] {manager.py:1162} ERROR - Processor for /opt/airflow/dags/dbt_analytics.py with PID 4411 started at 2026-10-15T11:57:12.090+00:00 has timed out, killing it.
etl-jobs-airflow-scheduler-1  | [2026-10-15T12:03:05.551+0000] {manager.py:1162} ERROR - Processor for /opt/airflow/dags/dbt_analytics.py with PID 4630 started at 2026-10-15T12:02:15.472+00:00 has timed out, killing it.""",
           desc="Check parse timeouts")
    s.say("Yes. With `LoadMode.DBT_LS`, Cosmos shells out to `dbt ls` every time the file is parsed to build the task graph. With 143 models plus deps that's ~40s, against `dagbag_import_timeout = 30` / `dag_file_processor_timeout = 50`.\n\nOptions:\n1. Raise the timeouts.\n2. `LoadMode.DBT_LS_CACHE`: Cosmos caches the `dbt ls` output in an Airflow Variable and re-runs it only when the project hash changes.\n3. `LoadMode.DBT_MANIFEST`: read `target/manifest.json`, no dbt subprocess at parse time. Needs a manifest shipped with the DAGs.")
    s.user("raising timeouts is a band-aid. the cache sounds fragile with our 4 schedulers all racing to refresh it. manifest, but then the manifest has to be in the image")
    s.say("Right. CI would run `dbt parse` before the image build and copy `dbt/target/manifest.json` into the image; the DAG points Cosmos at it.")
    s.user("go with manifest")
    s.edit(f"{CWD}/dags/dbt_analytics.py", """    project_config=ProjectConfig(DBT_DIR),""", """    project_config=ProjectConfig(DBT_DIR, manifest_path=f"{DBT_DIR}/target/manifest.json"),""", at_line=15)
    s.edit(f"{CWD}/dags/dbt_analytics.py", """    render_config=RenderConfig(load_method=LoadMode.DBT_LS, select=["path:models"]),""",
           """    # manifest is built by CI (`dbt parse --target ci`) and baked into the image; no dbt ls at parse time
    render_config=RenderConfig(load_method=LoadMode.DBT_MANIFEST, select=["path:models"]),""", at_line=18)
    s.edit(f"{CWD}/.gitlab-ci.yml", """build-image:
  stage: build
  script:""", """build-image:
  stage: build
  script:
    - (cd dbt && dbt deps && dbt parse --target ci)   # manifest.json for Cosmos DBT_MANIFEST""", at_line=58)
    s.bash("docker compose exec airflow-scheduler python -c \"import time; t=time.time(); from airflow.models import DagBag; b=DagBag('/opt/airflow/dags/dbt_analytics.py', include_examples=False); print(b.import_errors or 'ok', round(time.time()-t, 2))\"",
           """Traceback (most recent call last):
  ...
  File "/home/airflow/.local/lib/python3.11/site-packages/cosmos/dbt/graph.py", line 731, in load_from_dbt_manifest
    with open(self.project.manifest_path) as fp:
FileNotFoundError: [Errno 2] No such file or directory: '/opt/airflow/dbt/target/manifest.json'""", code=1, desc="Time the DAG parse")
    s.bash("cd dbt && dbt parse && ls -la target/manifest.json", """12:31:50  Running with dbt=1.8.7
12:31:51  Registered adapter: snowflake=1.8.4
12:31:58  Performance info: /home/dev/work/etl-jobs/dbt/target/perf_info.json
-rw-r--r-- 1 dev dev 9381027 Oct 15 12:31 target/manifest.json""", desc="Generate manifest locally")
    s.bash("docker compose exec airflow-scheduler python -c \"import time; t=time.time(); from airflow.models import DagBag; b=DagBag('/opt/airflow/dags/dbt_analytics.py', include_examples=False); print(b.import_errors or 'ok', round(time.time()-t, 2))\"",
           "ok 1.84", desc="Time the DAG parse again")
    s.say("Parse time went from ~45s to under 2s.")
    s.compact("""Summary:
1. Primary request: dbt_analytics.py hit DagFileProcessor timeouts (~45s parse).
2. Cause: Cosmos RenderConfig used LoadMode.DBT_LS, which runs `dbt ls` on every parse (dagbag_import_timeout 30, dag_file_processor_timeout 50).
3. Decision: switch to LoadMode.DBT_MANIFEST. Rejected raising timeouts (band-aid) and DBT_LS_CACHE (fragile with 4 schedulers). CI runs `dbt parse --target ci` before build-image so manifest.json is baked into the image.
4. Verified locally after `dbt parse`: DAG parses in ~1.8s.
5. Files changed: dags/dbt_analytics.py, .gitlab-ci.yml.""")
    s.user("one more thing. backfills: we stopped using the CLI. people kept forgetting --reset-dagruns and the CLI backfill ran for hours on someone's laptop. there's a `backfill_runner` DAG now, you trigger it with conf {dag_id, start, end}. update the runbook")
    s.grep("backfill", """docs/runbook.md:41:## Backfills
docs/runbook.md:43:Run `airflow dags backfill --reset-dagruns -s <start> -e <end> <dag_id>` from a machine with prod access.""", path="docs/runbook.md")
    s.edit(f"{CWD}/docs/runbook.md", "Run `airflow dags backfill --reset-dagruns -s <start> -e <end> <dag_id>` from a machine with prod access.",
           "Trigger the `backfill_runner` DAG with conf `{\"dag_id\": \"<dag>\", \"start\": \"YYYY-MM-DD\", \"end\": \"YYYY-MM-DD\"}`.\nDo not use the `airflow dags backfill` CLI any more.", at_line=43)
    s.user("also add to the runbook: after changing dbt models locally, run `dbt parse` before testing the DAG, otherwise cosmos reads a stale manifest")
    s.edit(f"{CWD}/docs/runbook.md", "## Local development\n", "## Local development\n\n- After changing dbt models, run `cd dbt && dbt parse` before testing DAGs: Cosmos reads `dbt/target/manifest.json` and will otherwise render a stale graph.\n", at_line=12)
    s.bash("uv run pytest tests/dags -q", """........................                                                 [100%]
24 passed in 7.62s""", desc="DAG integrity tests")
    s.bash("git add -A && git commit -m 'perf(cosmos): load dbt graph from manifest; runbook: backfill_runner'", """[perf/cosmos-manifest 2b8d4e6] perf(cosmos): load dbt graph from manifest; runbook: backfill_runner
 3 files changed, 11 insertions(+), 4 deletions(-)""", desc="Commit")
    s.user("thanks, that's it for today")
    s.say("👍")
    s.stop_hook()
    g = gold(name, CWD, 4, "en", [
        E("e1", "experience", "root_cause", "en", "dbt_analytics.py hit DagFileProcessor timeouts (~45s parse) because Cosmos LoadMode.DBT_LS runs `dbt ls` on every DAG parse.", ["DBT_LS"]),
        E("e2", "decision", "decision", "en", "Cosmos loads the dbt graph with LoadMode.DBT_MANIFEST from dbt/target/manifest.json baked into the image; raising the timeouts was a band-aid and DBT_LS_CACHE is fragile with 4 schedulers refreshing it.", ["DBT_MANIFEST"], chosen="DBT_MANIFEST", over=["cache"], why=["scheduler"]),
        E("e3", "fact", "config", "en", "CI's build-image job runs `dbt deps && dbt parse --target ci` before building so manifest.json ships in the image.", ["dbt parse --target ci"]),
        E("e4", "fact", "gotcha", "en", "After changing dbt models locally, run `dbt parse` before testing DAGs, otherwise Cosmos reads a stale or missing manifest.json.", ["dbt parse", "manifest"]),
        E("e5", "fact", "command", "en", "Backfills go through the `backfill_runner` DAG triggered with conf {dag_id, start, end}; the `airflow dags backfill` CLI is no longer used.", ["backfill_runner"], supersedes="p4s1_etl_jobs_fct_orders_dupes#e4"),
        E("e6", "fact", "config", "en", "Production Airflow runs 4 schedulers.", ["4 schedulers"]),
    ], [
        A(["dagbag_import_timeout"], "dagbag_import_timeout 30 / dag_file_processor_timeout 50"),
        A(["docs/runbook.md"], "runbook location"),
    ], ["ok 1.84", "24 passed", "2b8d4e6", "that's it for today", R_P4S4[0][3], R_P4S4[1][3], R_P4S4[2][3]], [])
    return s, g


SESSIONS = [s1, s2, s3, s4]
