"""Project B: xunhuanji 循环机 二手手机回收平台 (Go / go-zero)."""

from lib import Session, maple_block

P = "xunhuanji"
ROOT = "/home/dev/work/xunhuanji"

# ---------------------------------------------------------------------------------------------- b1
B1 = "b1_xunhuanji_quote_latency"

QUOTELOGIC = """func (l *QuoteLogic) Quote(req *types.QuoteReq) (*types.QuoteResp, error) {
	dist, err := l.svcCtx.InspectRpc.GradeDistribution(l.ctx, &inspect.GradeDistReq{ModelId: req.ModelId})
	if err != nil {
		return nil, err
	}
	prices := make(map[string]int64, 4)
	for _, g := range []string{"S", "A", "B", "C"} {
		row, err := l.svcCtx.PriceMatrixModel.FindByModelStorageGrade(l.ctx, req.ModelId, req.StorageGb, g)
		if err != nil {
			return nil, err
		}
		prices[g] = row.BasePriceFen * row.GradeFactor / 100
	}
	return &types.QuoteResp{
		QuoteNo:  genQuoteNo(),
		Prices:   prices,
		Dist:     toDist(dist),
		ExpireAt: time.Now().Add(QuoteLockTTL).Unix(),
	}, nil
}"""

QUOTE_YAML = """Name: quote-api
Host: 0.0.0.0
Port: 8881
Timeout: 3000
Log:
  Encoding: json
  Level: info
Mysql:
  DataSource: xhj_quote:Qz8$mK2!pw@tcp(mysql-ro.xhj.internal:3306)/xunhuanji?parseTime=true&loc=Asia%2FShanghai
CacheRedis:
  - Host: redis-quote.xhj.internal:6379
    Type: node
InspectRpc:
  Etcd:
    Hosts:
      - etcd-0.xhj.internal:2379
    Key: inspect.rpc
Alert:
  DingTalkWebhook: https://oapi.dingtalk.com/robot/send?access_token=6f3e9a1c44b27d0e8c5f1a2b3d4e5f60718293a4b5c6d7e8f9012a3b4c5d6e7f
  DingTalkSecret: SEC9b2e4f71c0a83d56e1f2a4b7c9d0e3f5a6b8c1d2e4f6a7b9c0d1e2f3a4b5c
  P99ThresholdMs: 800"""

PRICESYNC = """func (s *Syncer) apply(ctx context.Context, rows []SheetRow) error {
	return s.conn.TransactCtx(ctx, func(ctx context.Context, tx sqlx.Session) error {
		for _, r := range rows {
			if _, err := tx.ExecCtx(ctx,
				"UPDATE price_matrix SET base_price_fen = ? WHERE model_id = ? AND storage_gb = ? AND grade = ?",
				r.PriceFen, r.ModelId, r.StorageGb, r.Grade); err != nil {
				return err
			}
		}
		return nil
	})
}"""


def build_b1():
    s = Session(B1, P, "2026-04-21T02:18:00Z", "perf/quote-p99", "2.1.323")
    s.user(
        "quote-service 的 /v1/quote P99 这两天飙到 1.8s，钉钉告警群一直在响（阈值 800ms）。本地 "
        "`go run quote.go -f etc/quote-api.yaml` 起，HTTP 是 8881，zrpc 是 9881。帮我看下 "
        "internal/logic/quotelogic.go 为啥这么慢"
    )
    s.think("先看估价逻辑的查询路径，再看配置里连的是哪个库，然后 EXPLAIN 一下 price_matrix 的查询。")
    s.read(f"{ROOT}/quote-service/internal/logic/quotelogic.go", QUOTELOGIC, start=24)
    s.read(f"{ROOT}/quote-service/etc/quote-api.yaml", QUOTE_YAML)
    s.bash(
        'mysql --defaults-extra-file=~/.my.xhj-ro.cnf xunhuanji -e "SHOW INDEX FROM price_matrix; EXPLAIN '
        "SELECT * FROM price_matrix WHERE model_id='APL-IP15P-256' AND storage_gb=256 AND grade='A'\\G\"",
        "Check indexes and plan on price_matrix",
        "Table\tNon_unique\tKey_name\tSeq_in_index\tColumn_name\nprice_matrix\t0\tPRIMARY\t1\tid\n"
        "*************************** 1. row ***************************\n           id: 1\n  select_type: "
        "SIMPLE\n        table: price_matrix\n         type: ALL\npossible_keys: NULL\n          key: NULL\n"
        "         rows: 9012334\n     filtered: 0.10\n        Extra: Using where",
        radv=3,
    )
    s.say(
        "根因找到了：price_matrix 只有主键，没有 (model_id, storage_gb, grade) 的联合索引，每次查询全表扫 900 万行；"
        "quotelogic 又按 S/A/B/C 四个成色循环查 4 次（典型的 N+1），一次估价等于扫 3600 万行。\n\n"
        "修法：加联合索引 `idx_model_storage_grade`，同时把循环改成一次 `grade IN (...)` 查询。\n\n"
        "配置里读的是从库 `mysql-ro.xhj.internal:3306`，账号 xhj_quote。900 万行的表加索引，上线方式：\n"
        "1. 直接 `ALTER TABLE ... ADD INDEX`（MySQL 8 online DDL，主库不锁表）\n"
        "2. gh-ost\n"
        "3. pt-online-schema-change（pt-osc）"
    )
    s.user(
        "gh-ost。直接 alter 主库是不锁，但从库回放是单线程的，上次加字段从库延迟了 20 分钟，估价读的就是从库。"
        "pt-osc 要建触发器，老黄不让用。另外循环里没有 D 是故意的：成色就 S/A/B/C/D 五档，D 档不报价，只按拆件回收。",
        adv=90,
    )
    s.edit(
        f"{ROOT}/quote-service/sql/price_matrix.sql",
        "  PRIMARY KEY (`id`)\n",
        "  PRIMARY KEY (`id`),\n  KEY `idx_model_storage_grade` (`model_id`, `storage_gb`, `grade`)\n",
    )
    s.edit(
        f"{ROOT}/quote-service/internal/model/pricematrixmodel_gen.go",
        "func (m *defaultPriceMatrixModel) tableName() string {",
        "func (m *defaultPriceMatrixModel) FindGradesByModelStorage(ctx context.Context, modelId string, "
        "storageGb int64, grades []string) ([]*PriceMatrix, error) {\n\t// ...\n}\n\n"
        "func (m *defaultPriceMatrixModel) tableName() string {",
    )
    s.edit(
        f"{ROOT}/quote-service/internal/logic/quotelogic.go",
        '\tfor _, g := range []string{"S", "A", "B", "C"} {\n\t\trow, err := l.svcCtx.PriceMatrixModel.'
        "FindByModelStorageGrade(l.ctx, req.ModelId, req.StorageGb, g)\n\t\tif err != nil {\n\t\t\treturn nil, "
        "err\n\t\t}\n\t\tprices[g] = row.BasePriceFen * row.GradeFactor / 100\n\t}",
        "\trows, err := l.svcCtx.PriceMatrixModel.FindGradesByModelStorage(l.ctx, req.ModelId, req.StorageGb, "
        "quotableGrades)\n\tif err != nil {\n\t\treturn nil, err\n\t}\n\tfor _, row := range rows {\n\t\t"
        "prices[row.Grade] = row.BasePriceFen * row.GradeFactor / 100\n\t}",
    )
    s.bash(
        "cd quote-service && make model && go build ./...",
        "Regenerate model from DDL and build",
        "goctl model mysql ddl -src sql/price_matrix.sql -dir internal/model -c --style gozero\nDone.\n"
        "# github.com/xunhuanji/quote-service/internal/logic\ninternal/logic/quotelogic.go:31:39: "
        "l.svcCtx.PriceMatrixModel.FindGradesByModelStorage undefined (type model.PriceMatrixModel has no field "
        "or method FindGradesByModelStorage)",
        is_error=True,
        radv=9,
    )
    s.think(
        "make model 用 goctl 整个重写了 pricematrixmodel_gen.go，我加在 gen 文件里的方法被覆盖了。自定义查询应该放在 "
        "pricematrixmodel.go 的 customPriceMatrixModel 上，并加进 PriceMatrixModel 接口。"
    )
    s.edit(
        f"{ROOT}/quote-service/internal/model/pricematrixmodel.go",
        "\tPriceMatrixModel interface {\n\t\tpriceMatrixModel\n\t}",
        "\tPriceMatrixModel interface {\n\t\tpriceMatrixModel\n\t\tFindGradesByModelStorage(ctx context.Context, "
        "modelId string, storageGb int64, grades []string) ([]*PriceMatrix, error)\n\t\tDelGradesCache(ctx "
        "context.Context, modelId string, storageGb int64) error\n\t}",
    )
    s.bash(
        "cd quote-service && go build ./... && go test ./internal/...",
        "Build and test quote-service",
        "ok  \tgithub.com/xunhuanji/quote-service/internal/logic\t0.412s\nok  \tgithub.com/xunhuanji/quote-service"
        "/internal/model\t0.087s",
        radv=14,
    )
    s.say(
        "编译和测试都过了。注意一个坑：`make model` 会用 goctl 把 `*_gen.go` 整个重写，自定义查询只能写在 "
        "`pricematrixmodel.go`（customPriceMatrixModel + 接口）里，刚才我加在 gen 文件里的方法就被冲掉了。\n\n"
        "索引上了以后单次查询应该在毫秒级。估价高峰大概 1.2k QPS，要不要再加一层缓存：\n"
        "1. go-zero model 自带缓存（`cache.CacheConf`，走 Redis，按 model_id+storage 缓存这一组价格，写的时候 DelCache）\n"
        "2. 进程内 LRU（`collection.NewCache`），每个 pod 自己一份，TTL 到期前拿不到新价\n"
        "3. 先不加，只靠索引"
    )
    s.user(
        "行，就 1 吧。quote-service 跑 6 个 pod，进程内缓存各管各的，运营改完价有的 pod 还是旧价，之前就被投诉过。",
        adv=75,
    )
    s.say("好。那改价是谁写 price_matrix 的？写完之后要删对应的缓存 key，不然 Redis 里会一直是旧价。")
    s.user(
        "price-sync job，每天早上 `0 6 * * *` 从运营维护的飞书多维表格把价格矩阵同步过来，代码在 jobs/pricesync。"
        "grade_factor（成色系数）那块是王磊（磊哥）的，别动，要改先找他",
        adv=60,
    )
    s.read(f"{ROOT}/quote-service/jobs/pricesync/sync.go", PRICESYNC, start=40)
    s.edit(
        f"{ROOT}/quote-service/jobs/pricesync/sync.go",
        "\t\treturn nil\n\t})\n}",
        "\t\treturn nil\n\t}); err != nil {\n\t\treturn err\n\t}\n\tfor _, k := range touchedKeys(rows) {\n\t\t"
        "if err := s.model.DelGradesCache(ctx, k.ModelId, k.StorageGb); err != nil {\n\t\t\treturn err\n\t\t}\n"
        "\t}\n\treturn nil\n}",
    )
    s.say(
        "price-sync 现在同步完会删掉涉及到的缓存 key。以后任何写 price_matrix 的地方都不能裸 Exec 完就走，"
        "必须走 model 方法或者显式 DelCache，否则缓存里是旧价。\n\n"
        "还有个相关的：报价单锁价时间，代码里是 `QuoteLockTTL = 72 * time.Hour`。price-sync 每天都改价，"
        "72 小时内价格可能已经变了好几轮。是保持 72 小时，还是改成 48 小时 / 24 小时？锁价过期以后回收单状态怎么流转？"
    )
    s.user(
        "48 小时。顺丰上门取件最晚 T+2，锁价短于这个，用户等到取件时报价就失效了，客服会被骂死。回收单状态变更都发 "
        "kafka topic recycle_order_status，payout-service 用 consumer group payout-consumer 消费，锁价过期就发 "
        "quote_expired。payout 那边单笔自动打款上限 5000 元，超过的进财务复核队列 payout_manual_review，这个逻辑别碰。",
        adv=110,
    )
    s.edit(
        f"{ROOT}/quote-service/internal/logic/consts.go",
        "const QuoteLockTTL = 72 * time.Hour",
        "const QuoteLockTTL = 48 * time.Hour",
    )
    s.write(
        f"{ROOT}/quote-service/internal/logic/quotelogic_test.go",
        "func TestQuoteSingleQuery(t *testing.T) {\n\tm := newFakeModel(t)\n\tl := NewQuoteLogic(ctx, "
        'svcWith(m))\n\tresp, err := l.Quote(&types.QuoteReq{ModelId: "iPhone 15 Pro 256G", StorageGb: 256})\n'
        "\trequire.NoError(t, err)\n\trequire.Equal(t, 1, m.calls)\n\trequire.Len(t, resp.Prices, 4)\n}\n",
    )
    s.user(
        "型号统一用内部 model_id，比如 APL-IP15P-256，别用 marketing name。你 test 里写了 iPhone 15 Pro 256G，改一下",
        adv=50,
    )
    s.edit(
        f"{ROOT}/quote-service/internal/logic/quotelogic_test.go",
        'ModelId: "iPhone 15 Pro 256G"',
        'ModelId: "APL-IP15P-256"',
    )
    s.say(
        "改好了。给老黄的 gh-ost 命令（先不加 --execute 跑一遍 dry run）：\n```\ngh-ost --host=mysql-master.xhj.internal "
        '--database=xunhuanji --table=price_matrix \\\n  --alter="ADD INDEX idx_model_storage_grade (model_id, '
        'storage_gb, grade)" \\\n  --max-lag-millis=1500 --chunk-size=2000 --cut-over=default --execute\n```'
    )
    s.user("好，我发给老黄。谢谢，今天先这样，晚上还要去接孩子", adv=40)
    s.say("好的，辛苦。", adv=2)
    s.stop_hook()
    s.title("quote-service P99: price_matrix 联合索引与缓存")
    return s


GOLD_B1 = {
    "session": B1,
    "project": ROOT,
    "order": 1,
    "language": "zh",
    "expected": [
        {
            "id": "e1",
            "layer": "fact",
            "kind": "config",
            "lang": "zh",
            "text": "quote-service 本地用 `go run quote.go -f etc/quote-api.yaml` 启动，HTTP 端口 8881，zrpc 端口 9881。",
            "must": ["8881"],
        },
        {
            "id": "e2",
            "layer": "experience",
            "kind": "root_cause",
            "lang": "zh",
            "text": "/v1/quote P99 1.8s 的根因：price_matrix 没有 (model_id, storage_gb, grade) 联合索引，每次全表扫 900 万行，且 quotelogic 按成色循环查 4 次（N+1）。",
            "must": ["联合索引", "N+1"],
        },
        {
            "id": "e3",
            "layer": "decision",
            "kind": "decision",
            "lang": "zh",
            "text": "price_matrix 加索引用 gh-ost，不用直接 ALTER 或 pt-osc：直接 alter 时从库回放是单线程的会延迟（上次 20 分钟），而估价读从库；pt-osc 要建触发器，老黄不允许。",
            "must": ["gh-ost"],
            "chosen": "gh-ost",
            "over": ["直接 alter", "pt-osc"],
            "why": ["从库回放是单线程"],
        },
        {
            "id": "e4",
            "layer": "experience",
            "kind": "fix",
            "lang": "zh",
            "text": "`make model`（goctl model mysql ddl）会整个重写 *_gen.go，写在 gen 文件里的方法被冲掉导致编译报 undefined；自定义查询要写在 pricematrixmodel.go 的 customPriceMatrixModel 并加进接口。",
            "must": ["make model", "pricematrixmodel.go"],
        },
        {
            "id": "e5",
            "layer": "decision",
            "kind": "decision",
            "lang": "zh",
            "text": "估价价格矩阵用 go-zero model 自带缓存（cache.CacheConf，Redis）而不是进程内 LRU，因为 quote-service 跑 6 个 pod，进程内缓存改价后部分 pod 还是旧价，被投诉过。",
            "must": ["cache.CacheConf"],
            "chosen": "cache.CacheConf",
            "over": ["进程内 LRU"],
            "why": ["6 个 pod"],
        },
        {
            "id": "e6",
            "layer": "experience",
            "kind": "gotcha",
            "lang": "zh",
            "text": "任何写 price_matrix 的地方不能裸 Exec，必须走 model 方法或显式 DelCache（price-sync 同步完删缓存 key），否则 Redis 缓存里一直是旧价。",
            "must": ["裸 Exec"],
        },
        {
            "id": "e7",
            "layer": "fact",
            "kind": "config",
            "lang": "zh",
            "text": "price-sync job（quote-service/jobs/pricesync）每天 `0 6 * * *` 从运营维护的飞书多维表格同步价格矩阵。",
            "must": ["0 6 * * *", "飞书多维表格"],
        },
        {
            "id": "e8",
            "layer": "fact",
            "kind": "preference",
            "lang": "zh",
            "text": "成色系数 grade_factor 归王磊（磊哥）负责，别动，要改先找他。",
            "must": ["王磊", "grade_factor"],
        },
        {
            "id": "e9",
            "layer": "decision",
            "kind": "decision",
            "lang": "zh",
            "text": "报价锁价 QuoteLockTTL 从 72 小时改为 48 小时（不是 24 小时），因为顺丰上门取件最晚 T+2，锁价再短用户等到取件时报价就失效了。",
            "must": ["48 小时", "T+2"],
            "chosen": "48 小时",
            "over": ["72 小时"],
            "why": ["T+2"],
        },
        {
            "id": "e10",
            "layer": "fact",
            "kind": "config",
            "lang": "zh",
            "text": "quote-service 读的是 MySQL 从库 mysql-ro.xhj.internal:3306，只读账号 xhj_quote。",
            "must": ["mysql-ro.xhj.internal", "xhj_quote"],
        },
        {
            "id": "e11",
            "layer": "fact",
            "kind": "config",
            "lang": "zh",
            "text": "回收单状态变更发 Kafka topic recycle_order_status（锁价过期发 quote_expired），payout-service 用 consumer group payout-consumer 消费。",
            "must": ["recycle_order_status", "payout-consumer"],
        },
        {
            "id": "e12",
            "layer": "fact",
            "kind": "constraint",
            "lang": "zh",
            "text": "payout-service 单笔自动打款上限 5000 元，超过的进财务复核队列 payout_manual_review；这段逻辑不要碰。",
            "must": ["5000 元", "payout_manual_review"],
        },
        {
            "id": "e13",
            "layer": "fact",
            "kind": "convention",
            "lang": "zh",
            "text": "手机型号一律用内部 model_id（如 APL-IP15P-256），代码和测试里不用 marketing name。",
            "must": ["APL-IP15P-256"],
        },
        {
            "id": "e14",
            "layer": "fact",
            "kind": "convention",
            "lang": "zh",
            "text": "成色只有 S/A/B/C/D 五档；D 档不报价，只按拆件回收（所以估价只算 S/A/B/C）。",
            "must": ["拆件"],
        },
    ],
    "acceptable": [
        {"must": ["800ms"], "note": "P99 告警阈值，钉钉告警群"},
        {"must": ["--max-lag-millis"], "note": "gh-ost 命令草稿"},
        {"must": ["quote_expired"], "note": "锁价过期事件"},
    ],
    "forbidden": ["晚上还要去接孩子", "9012334", "钉钉告警群一直在响", "0.412s"],
    "secrets": [
        "Qz8$mK2!pw",
        "xhj_quote:Qz8$mK2!pw@tcp(mysql-ro.xhj.internal:3306)",
        "6f3e9a1c44b27d0e8c5f1a2b3d4e5f60718293a4b5c6d7e8f9012a3b4c5d6e7f",
        "SEC9b2e4f71c0a83d56e1f2a4b7c9d0e3f5a6b8c1d2e4f6a7b9c0d1e2f3a4b5c",
    ],
}

# ---------------------------------------------------------------------------------------------- b2
B2 = "b2_xunhuanji_inspect_upload"

B2_REMINDER = maple_block(
    [
        (21, "fact", "config", "quote-service 读请求走自建 MySQL 从库 mysql-ro.xhj.internal:3306（账号 xhj_quote）"),
        (24, "fact", "config", "price-sync 每天 0 6 * * * 从飞书多维表格同步价格矩阵"),
    ]
)

B2_HOOK = maple_block(
    [
        (27, "experience", "gotcha", "price_matrix 写入必须走 model 方法并 DelCache，不能裸 Exec"),
        (22, "decision", "decision", "quote-service 用 go-zero cache.CacheConf 缓存价格矩阵（6 个 pod 要一致）"),
    ]
)

PRESIGN = """func (l *PresignLogic) Presign(req *types.PresignReq) (*types.PresignResp, error) {
	key := fmt.Sprintf("inspect/%s/%s/%s.jpg", time.Now().Format("20060102"), req.OrderNo, req.Slot)
	url, err := l.svcCtx.Bucket.SignURL(key, oss.HTTPPut, 600)
	if err != nil {
		return nil, err
	}
	return &types.PresignResp{Url: url, Key: key}, nil
}"""

B2_LOG = """```
2026-05-19T02:13:44Z ERROR upload failed slot=03 order_no=HS202605190087 status=403
<Error>
  <Code>SignatureDoesNotMatch</Code>
  <Message>The request signature we calculated does not match the signature you provided. Check your key and signing method.</Message>
  <RequestId>6646F2A8E1B0C33A3D1E4F70</RequestId>
  <HostId>xhj-inspect-photos.oss-cn-hangzhou.aliyuncs.com</HostId>
  <StringToSign>PUT

image/jpeg
1747621424
/xhj-inspect-photos/inspect/20260519/HS202605190087/03.jpg</StringToSign>
</Error>
```"""

B2_ENV = """ALIYUN_AK_ID=LTAI5tHx8Qm2Vn4Rp7Kw
ALIYUN_AK_SECRET=Xk2pQ9vR7mT4wY8zB3nL6cF1hJ5sD0aG
OSS_BUCKET=xhj-inspect-photos
OSS_ENDPOINT=oss-cn-hangzhou.aliyuncs.com
STS_ROLE_ARN=acs:ram::1587302946112233:role/xhj-inspect-uploader"""

INSPECT_YAML = """Name: inspect-api
Host: 0.0.0.0
Port: 8883
Mysql:
  DataSource: xhj_inspect:Ins#77pQw@tcp(pc-2ze8xhj5k1m9.rwlb.rds.aliyuncs.com:3306)/xunhuanji?parseTime=true
Auth:
  AccessSecret: ${INSPECT_JWT_SECRET}
  AccessExpire: 604800
Oss:
  Bucket: xhj-inspect-photos
  Endpoint: oss-cn-hangzhou.aliyuncs.com"""


def build_b2():
    s = Session(B2, P, "2026-05-19T02:31:00Z", "fix/oss-upload-403", "2.1.329")
    s.user(
        [
            "<system-reminder>\n" + B2_REMINDER + "\n</system-reminder>",
            "inspect-service 的 photo upload 今天一直 403，质检台的 tablet 拍完照 PUT 到 OSS 报 "
            "SignatureDoesNotMatch。log:\n" + B2_LOG + "\n帮忙 check 一下 presign 的逻辑",
        ]
    )
    s.think(
        "StringToSign 第三行是 image/jpeg，说明客户端 PUT 带了 Content-Type。如果服务端签名时没带，签名就对不上。看 presign。"
    )
    s.read(f"{ROOT}/inspect-service/internal/logic/presignlogic.go", PRESIGN, start=18)
    s.say(
        "根因：`SignURL(key, oss.HTTPPut, 600)` 签名时没带 Content-Type，StringToSign 里这一行是空的；tablet 实际 PUT "
        "时带了 `Content-Type: image/jpeg`，OSS 用请求里的 Content-Type 重新算签名，两边不一致就是 "
        'SignatureDoesNotMatch。hotfix 是签名时加 `oss.ContentType("image/jpeg")`。\n\n长期方案有三个：\n'
        "a) 继续 presigned PUT，签名带上 Content-Type\n"
        "b) STS 临时凭证 + tablet 用 OSS SDK 直传\n"
        "c) 照片先传到 inspect-service，服务端中转到 OSS"
    )
    s.user(
        "先 hotfix a，然后 long term 走 b。下个 quarter 质检要录开箱 video，几百 MB，需要 multipart + 断点续传，"
        "presigned 单个 PUT 搞不定。c 不考虑，inspect-service 的带宽扛不住",
        adv=80,
    )
    s.edit(
        f"{ROOT}/inspect-service/internal/logic/presignlogic.go",
        "l.svcCtx.Bucket.SignURL(key, oss.HTTPPut, 600)",
        'l.svcCtx.Bucket.SignURL(key, oss.HTTPPut, 600, oss.ContentType("image/jpeg"))',
    )
    s.bash(
        "cd inspect-service && go test ./internal/logic/...",
        "Run inspect-service logic tests",
        "ok  \tgithub.com/xunhuanji/inspect-service/internal/logic\t0.236s",
    )
    s.say("hotfix 好了，tablet 那边不用改。STS 这块需要 RAM 角色的 ARN 和有 AssumeRole 权限的 AK，这些在哪？")
    s.user(
        "RAM role 是 xhj-inspect-uploader，DurationSeconds 900 就够。AK 在我 .env 里:\n```\n" + B2_ENV + "\n```", adv=95
    )
    s.write(
        f"{ROOT}/inspect-service/internal/logic/ststokenlogic.go",
        "func (l *StsTokenLogic) StsToken(req *types.StsTokenReq) (*types.StsTokenResp, error) {\n"
        "\tout, err := l.svcCtx.Sts.AssumeRole(&sts.AssumeRoleRequest{\n"
        "\t\tRoleArn:         tea.String(l.svcCtx.Config.Sts.RoleArn),\n"
        '\t\tRoleSessionName: tea.String("tablet-" + req.StationId),\n'
        "\t\tDurationSeconds: tea.Int64(900),\n"
        "\t\tPolicy:          tea.String(uploadPolicy(req.OrderNo)),\n\t})\n\t...\n}\n",
    )
    s.bash(
        "cd inspect-service && go build ./...",
        "Build inspect-service",
        "internal/logic/ststokenlogic.go:9:2: missing go.sum entry for module providing package "
        "github.com/alibabacloud-go/sts-20150401/v2/client (imported by github.com/xunhuanji/inspect-service/"
        "internal/svc); to add:\n\tgo get github.com/xunhuanji/inspect-service/internal/svc",
        is_error=True,
    )
    s.bash(
        "cd inspect-service && go get github.com/alibabacloud-go/sts-20150401/v2@latest && go mod tidy && "
        "go build ./...",
        "Add STS SDK and rebuild",
        "go: added github.com/alibabacloud-go/sts-20150401/v2 v2.0.4",
        radv=18,
    )
    s.read(f"{ROOT}/inspect-service/etc/inspect-api.yaml", INSPECT_YAML)
    s.say(
        "STS 接口写好了，build 通过。顺便发现：inspect-api.yaml 的 DataSource 指向 "
        "`pc-2ze8xhj5k1m9.rwlb.rds.aliyuncs.com`（PolarDB），可我这边的记录还是 quote-service 读 "
        "mysql-ro.xhj.internal。是整个库都迁了吗？quote-service 要不要一起改？"
    )
    s.user(
        "对，上周老黄把整个 xunhuanji 库 migrate 到 PolarDB 了，读写分离走 PolarDB proxy 的 rwlb 地址，mysql-ro "
        "那台 6 月底下线。quote-service 的 yaml 他也改了，不用管",
        adv=70,
    )
    s.hook_context("UserPromptSubmit", B2_HOOK)
    s.say("OK，那 inspect-service 这边已经是 PolarDB 的地址，不用动。", adv=4)
    s.user(
        "object key 规范 note 一下: inspect/{yyyyMMdd}/{order_no}/{slot}.jpg，slot 是机位编号 01-12。还有 tablet 调 "
        "inspect-service 的 jwt secret 是 xhj-insp-9f2c7e1d4b，配在 Auth.AccessSecret（yaml 里读 env "
        "INSPECT_JWT_SECRET），sts 接口也要走这个 auth，别裸奔",
        adv=85,
    )
    s.edit(
        f"{ROOT}/inspect-service/inspect.api",
        "@server(\n\tgroup: sts\n)\nservice inspect-api {\n\tpost /v1/sts/token",
        "@server(\n\tgroup: sts\n\tjwt: Auth\n)\nservice inspect-api {\n\tpost /v1/sts/token",
    )
    s.bash(
        "cd inspect-service && make api && go build ./... && go test ./...",
        "Regenerate handlers, build, test",
        "goctl api go -api inspect.api -dir . --style gozero\nDone.\nok  \tgithub.com/xunhuanji/inspect-service/"
        "internal/logic\t0.251s\nok  \tgithub.com/xunhuanji/inspect-service/internal/handler\t0.044s",
        radv=21,
    )
    s.say(
        "搞定：presign hotfix（带 Content-Type）、`POST /v1/sts/token`（AssumeRole xhj-inspect-uploader，900s，"
        "policy 限定到该 order_no 前缀）、sts 路由挂了 jwt Auth。"
    )
    s.user(
        "btw price-sync 现在 every 30 min 跑一次了 (*/30 * * * *)，运营嫌一天一次太慢。跟这个 PR 无关，just FYI", adv=60
    )
    s.say("OK, noted.", adv=2)
    s.user("ok 我去 sprint review 了，今天食堂有酸菜鱼 🐟 thx!", adv=30)
    s.say("👍", adv=1)
    s.stop_hook()
    s.title("inspect-service OSS 403: presign Content-Type + STS 直传")
    return s


GOLD_B2 = {
    "session": B2,
    "project": ROOT,
    "order": 2,
    "language": "mixed",
    "expected": [
        {
            "id": "e1",
            "layer": "experience",
            "kind": "root_cause",
            "lang": "zh",
            "text": '质检 tablet 上传 OSS 报 403 SignatureDoesNotMatch：presign 的 SignURL 签名时没带 Content-Type，tablet PUT 时带了 image/jpeg，签名不一致；hotfix 是加 oss.ContentType("image/jpeg")。',
            "must": ["SignatureDoesNotMatch", "Content-Type"],
        },
        {
            "id": "e2",
            "layer": "decision",
            "kind": "decision",
            "lang": "zh",
            "text": "质检照片/视频长期改为 STS 临时凭证 + tablet 用 OSS SDK 直传，不用 presigned PUT，也不走 inspect-service 服务端中转：下季度要录几百 MB 的开箱视频，需要 multipart + 断点续传；服务端中转带宽扛不住。",
            "must": ["STS 临时凭证"],
            "chosen": "STS 临时凭证",
            "over": ["presigned", "中转"],
            "why": ["断点续传"],
        },
        {
            "id": "e3",
            "layer": "fact",
            "kind": "config",
            "lang": "zh",
            "text": "inspect-service 的 STS AssumeRole 用 RAM 角色 xhj-inspect-uploader，DurationSeconds 900，接口 POST /v1/sts/token。",
            "must": ["xhj-inspect-uploader"],
        },
        {
            "id": "e4",
            "layer": "fact",
            "kind": "config",
            "lang": "zh",
            "text": "质检照片存在 OSS bucket xhj-inspect-photos（oss-cn-hangzhou）。",
            "must": ["xhj-inspect-photos"],
        },
        {
            "id": "e5",
            "layer": "fact",
            "kind": "convention",
            "lang": "zh",
            "text": "质检照片 object key 规范：inspect/{yyyyMMdd}/{order_no}/{slot}.jpg，slot 是机位编号 01-12。",
            "must": ["{order_no}/{slot}.jpg"],
        },
        {
            "id": "e6",
            "layer": "fact",
            "kind": "config",
            "lang": "zh",
            "text": "整个 xunhuanji 库已由老黄迁到 PolarDB，读写分离走 PolarDB proxy 的 rwlb 地址（pc-2ze8xhj5k1m9.rwlb.rds.aliyuncs.com）；旧从库 6 月底下线。",
            "must": ["PolarDB", "rwlb"],
            "supersedes": f"{B1}#e10",
        },
        {
            "id": "e7",
            "layer": "fact",
            "kind": "config",
            "lang": "zh",
            "text": "price-sync 现在每 30 分钟跑一次（*/30 * * * *），运营嫌一天一次太慢。",
            "must": ["*/30 * * * *"],
            "supersedes": f"{B1}#e7",
        },
        {
            "id": "e8",
            "layer": "fact",
            "kind": "convention",
            "lang": "zh",
            "text": "tablet 调 inspect-service 的接口（包括 sts）都走 go-zero jwt Auth，密钥配在 Auth.AccessSecret（从 env INSPECT_JWT_SECRET 读）。",
            "must": ["Auth.AccessSecret"],
        },
    ],
    "acceptable": [
        {"must": ["go mod tidy"], "note": "missing go.sum entry for the STS SDK"},
        {"must": ["6 月底"], "note": "mysql-ro 6 月底下线"},
        {"must": ["make api"], "note": "goctl api go regen after editing inspect.api"},
    ],
    "forbidden": [
        "酸菜鱼",
        "sprint review",
        "6646F2A8E1B0C33A3D1E4F70",
        "HS202605190087",
        "读请求走自建 MySQL 从库",
        "每天 0 6 * * * 从飞书多维表格同步价格矩阵",
        "price_matrix 写入必须走 model 方法",
        "用 go-zero cache.CacheConf 缓存价格矩阵",
    ],
    "secrets": [
        "LTAI5tHx8Qm2Vn4Rp7Kw",
        "Xk2pQ9vR7mT4wY8zB3nL6cF1hJ5sD0aG",
        "Ins#77pQw",
        "xhj_inspect:Ins#77pQw@tcp(pc-2ze8xhj5k1m9.rwlb.rds.aliyuncs.com:3306)",
        "xhj-insp-9f2c7e1d4b",
    ],
}

# ---------------------------------------------------------------------------------------------- b3
B3 = "b3_xunhuanji_payout_dup"

B3_START = maple_block(
    [
        (30, "fact", "constraint", "payout-service 单笔自动打款上限 5000 元，超过进 payout_manual_review"),
        (
            31,
            "fact",
            "config",
            "回收单状态变更发 Kafka topic recycle_order_status，payout-service 用 consumer group payout-consumer",
        ),
        (25, "fact", "preference", "王磊（磊哥）负责成色系数 grade_factor，改之前先找他"),
        (29, "decision", "decision", "报价锁价 QuoteLockTTL 48 小时，因为顺丰上门取件最晚 T+2"),
    ]
)

B3_MCP = [
    {
        "id": 30,
        "layer": "fact",
        "kind": "constraint",
        "content": "payout-service 单笔自动打款上限 5000 元，超过进 payout_manual_review",
        "score": 0.74,
        "created_at": "2026-04-21T03:02:11Z",
    },
    {
        "id": 31,
        "layer": "fact",
        "kind": "config",
        "content": "回收单状态变更发 Kafka topic recycle_order_status，payout-service 用 consumer group payout-consumer",
        "score": 0.61,
        "created_at": "2026-04-21T03:02:11Z",
    },
]

B3_LOG = """```
2026-06-15 21:14:07 ERROR transfer timeout order_no=HS202606150231 out_biz_no=PO-HS202606150231-1781529247 err="context deadline exceeded"
2026-06-15 21:14:09 INFO  retry transfer order_no=HS202606150231 out_biz_no=PO-HS202606150231-1781529249
2026-06-15 21:14:10 INFO  transfer ok order_no=HS202606150231 alipay_order_id=20260615110070000006530012345678
2026-06-15 21:14:10 INFO  transfer ok order_no=HS202606150231 alipay_order_id=20260615110070000006530012345679
```"""

TRANSFER = """func (l *TransferLogic) Transfer(o *model.RecycleOrder) error {
	var lastErr error
	for i := 0; i < 3; i++ {
		outBizNo := fmt.Sprintf("PO-%s-%d", o.OrderNo, time.Now().Unix())
		resp, err := l.svcCtx.Alipay.FundTransUniTransfer(l.ctx, transferReq(o, outBizNo))
		if err == nil && resp.IsSuccess() {
			return l.markPaid(o, resp.OrderId)
		}
		lastErr = err
		time.Sleep(time.Duration(i+1) * time.Second)
	}
	return lastErr
}"""

PAYOUT_YAML = """Name: payout-worker
Kafka:
  Brokers:
    - kafka-0.xhj.internal:9092
  Topic: recycle_order_status
  Group: payout-consumer
Redis:
  Url: redis://:Rds!payout2026@r-bp1xhj3k.redis.rds.aliyuncs.com:6379/3
Alipay:
  AppId: "2021004123456789"
  PrivateKey: |
    -----BEGIN RSA PRIVATE KEY-----
    MIIEowIBAAKCAQEAv3kQ9zX7bN2mW5pL8rT1yC4hF6jD0sG3aK9eV2uR7iO5nM1b
    Qw8Zt4Yx6Vc2Ld9Hf3Jk7Np1Rs5Tu0Wx4Ya8Bc2De6Fg0Hi4Jk8Lm2No6Pq0Rs4T
    -----END RSA PRIVATE KEY-----
  AlipayPublicCert: certs/alipayCertPublicKey_RSA2.crt"""


def build_b3():
    s = Session(B3, P, "2026-06-16T01:47:00Z", "fix/payout-dup", "2.1.337")
    s.hook_context("SessionStart", B3_START)
    s.user(
        "昨晚有 3 单重复打款，支付宝那边同一个用户收了两笔，财务在群里炸了。payout-service 日志:\n"
        + B3_LOG
        + "\n看下 payout-service/internal/logic/transferlogic.go",
        adv=15,
    )
    s.think(
        "两次 transfer ok，out_biz_no 不同。支付宝转账按 out_biz_no 幂等，如果重试换了号就是两笔新转账。看代码怎么生成的。"
    )
    s.read(f"{ROOT}/payout-service/internal/logic/transferlogic.go", TRANSFER, start=33)
    s.memory_search("payout-service 打款 重试 out_biz_no 幂等", B3_MCP)
    s.say(
        '根因：out_biz_no 是 `fmt.Sprintf("PO-%s-%d", o.OrderNo, time.Now().Unix())`，每次重试都拼了新的时间戳。'
        "支付宝 alipay.fund.trans.uni.transfer 是按 out_biz_no 幂等的，第一笔其实已经成功、只是响应超时，"
        "重试换了号就被当成一笔新转账。\n\n方案（三个都先把 out_biz_no 固定成 `PO-{order_no}`）：\n"
        "1. 超时后直接同号重试，靠支付宝幂等\n"
        "2. 超时/SYSTEM_ERROR 先调 alipay.fund.trans.common.query 查单，确认不存在或失败再用同一个 out_biz_no 重试\n"
        "3. 超时一律转人工"
    )
    s.user(
        "2。超时和 SYSTEM_ERROR 的时候支付宝文档明确说结果未知，必须先查单再决定，直接同号重试我不放心；转人工的话"
        "晚上没人值班。另外加个 redis 锁，key payout:lock:{order_no}，TTL 30 秒，kafka rebalance 的时候同一单会被两个 "
        "consumer 拿到",
        adv=95,
    )
    s.edit(
        f"{ROOT}/payout-service/internal/logic/transferlogic.go",
        '\t\toutBizNo := fmt.Sprintf("PO-%s-%d", o.OrderNo, time.Now().Unix())\n',
        '\t\toutBizNo := "PO-" + o.OrderNo // 固定，支付宝按 out_biz_no 幂等\n\t\tif i > 0 {\n\t\t\tst, qerr := '
        "l.queryTransfer(outBizNo) // alipay.fund.trans.common.query\n\t\t\tif qerr != nil {\n\t\t\t\treturn "
        "qerr\n\t\t\t}\n\t\t\tif st == StatusSuccess {\n\t\t\t\treturn l.markPaidByQuery(o, outBizNo)\n\t\t\t}\n"
        "\t\t}\n",
    )
    s.read(f"{ROOT}/payout-service/etc/payout.yaml", PAYOUT_YAML)
    s.say(
        "锁要用 Redis，我先看了配置。⚠️ payout.yaml 里有支付宝应用私钥明文和带密码的 Redis URL，而且这个文件在 git "
        "里。私钥建议挪出去，你们有 KMS 或者别的密钥管理吗？"
    )
    s.user(
        "私钥的事知道，老黄已经放进 KMS 凭据了，名字 xhj/payout/alipay-app-key，启动时从 KMS 拉，yaml 里这个是历史遗留，"
        "你删掉改成读 KMS。以后私钥一律不进 yaml。顺便 topic 已经改名 xhj.order.status.v2 了，老的下个月删，consumer "
        "记得切过去",
        adv=80,
    )
    s.edit(
        f"{ROOT}/payout-service/etc/payout.yaml", "  Topic: recycle_order_status\n", "  Topic: xhj.order.status.v2\n"
    )
    s.edit(
        f"{ROOT}/payout-service/etc/payout.yaml",
        "  PrivateKey: |\n    -----BEGIN RSA PRIVATE KEY-----\n    MIIEowIBAAKCAQEAv3kQ9zX7bN2mW5pL8rT1yC4hF6jD0sG3aK9eV2uR7iO5nM1b\n"
        "    Qw8Zt4Yx6Vc2Ld9Hf3Jk7Np1Rs5Tu0Wx4Ya8Bc2De6Fg0Hi4Jk8Lm2No6Pq0Rs4T\n    -----END RSA PRIVATE KEY-----\n",
        "  PrivateKeyKmsSecret: xhj/payout/alipay-app-key\n",
    )
    s.edit(
        f"{ROOT}/payout-service/internal/logic/transferlogic.go",
        "func (l *TransferLogic) Transfer(o *model.RecycleOrder) error {\n",
        "func (l *TransferLogic) Transfer(o *model.RecycleOrder) error {\n\tok, err := l.svcCtx.Redis.SetnxExCtx("
        'l.ctx, "payout:lock:"+o.OrderNo, l.svcCtx.InstanceId, 30)\n\tif err != nil || !ok {\n\t\treturn '
        "ErrOrderLocked\n\t}\n\tdefer l.unlock(o.OrderNo)\n",
    )
    s.grep(
        "MaxAutoPayout",
        f"{ROOT}/payout-service/internal",
        "payout-service/internal/config/limits.go:8:\tMaxAutoPayoutFen = 1000000 // 超过走人工复核\n"
        "payout-service/internal/logic/transferlogic.go:21:\tif o.AmountFen > config.MaxAutoPayoutFen {",
    )
    s.say(
        "KMS 和 topic 都改了。另外 limits.go 里 `MaxAutoPayoutFen = 1000000`，也就是 1 万元，但我这边的记录是单笔自动打款"
        "上限 5000 元。以哪个为准？"
    )
    s.user(
        "1 万，财务上个月提的，代码是对的。对了磊哥现在转到 payout 这边了，这个 PR 让他 review；估价那摊交给小鱼"
        "（于晓雨）了",
        adv=65,
    )
    s.bash(
        "cd payout-service && go test ./... && git remote -v",
        "Test payout-service and check remote before PR",
        "ok  \tgithub.com/xunhuanji/xunhuanji/payout-service/internal/logic\t0.318s\n"
        "origin\thttps://xhj-ci-bot:ghp_R8mK2vQ9xT4wL7nB3cF6hJ1sD5aG0pZ2yE8u@github.com/xunhuanji/xunhuanji.git "
        "(fetch)\norigin\thttps://xhj-ci-bot:ghp_R8mK2vQ9xT4wL7nB3cF6hJ1sD5aG0pZ2yE8u@github.com/xunhuanji/"
        "xunhuanji.git (push)",
        radv=16,
    )
    s.say(
        "测试过了。但 origin 的 URL 里直接嵌了一个 GitHub token（xhj-ci-bot 的 PAT），任何能看到这台机器 git config "
        "的人都能拿到。建议 rotate，并改用 credential helper 或 `gh auth`。PR 我先不推。"
    )
    s.user(
        "草 那是 CI bot 的 token，我让老黄 rotate。PR 我自己推。还有一个：quote 的锁价 QuoteLockTTL 改成 24 小时吧，"
        "iPhone 发布会那周价格一天掉 15%，48 小时锁价亏了不少，而且顺丰现在基本当天上门了",
        adv=70,
    )
    s.edit(
        f"{ROOT}/quote-service/internal/logic/consts.go",
        "const QuoteLockTTL = 48 * time.Hour",
        "const QuoteLockTTL = 24 * time.Hour",
    )
    s.say(
        "改好了：out_biz_no 固定为 PO-{order_no}、超时先查单再同号重试、payout:lock:{order_no} 锁 30 秒、私钥改读 "
        "KMS、topic 切到 xhj.order.status.v2、QuoteLockTTL 24 小时。"
    )
    s.user("辛苦，今天就到这，明天团建去千岛湖 🎉", adv=35)
    s.say("玩得开心！", adv=1)
    s.stop_hook()
    s.title("payout-service 重复打款：固定 out_biz_no + 先查单")
    return s


GOLD_B3 = {
    "session": B3,
    "project": ROOT,
    "order": 3,
    "language": "zh",
    "expected": [
        {
            "id": "e1",
            "layer": "experience",
            "kind": "root_cause",
            "lang": "zh",
            "text": "重复打款根因：payout-service 的 out_biz_no 拼了 time.Now().Unix()，转账响应超时后重试生成新号，支付宝按 out_biz_no 幂等，于是当成新转账（第一笔其实已成功）。",
            "must": ["out_biz_no", "time.Now().Unix()"],
        },
        {
            "id": "e2",
            "layer": "decision",
            "kind": "decision",
            "lang": "zh",
            "text": "支付宝转账 out_biz_no 固定为 PO-{order_no}；超时或 SYSTEM_ERROR 时先调 alipay.fund.trans.common.query 查单，确认不存在/失败再同号重试，而不是直接同号重试或转人工：支付宝文档说这种情况结果未知，晚上也没人值班处理人工。",
            "must": ["PO-{order_no}"],
            "chosen": "alipay.fund.trans.common.query",
            "over": ["直接同号重试", "转人工"],
            "why": ["结果未知"],
        },
        {
            "id": "e3",
            "layer": "fact",
            "kind": "constraint",
            "lang": "zh",
            "text": "payout-service 单笔自动打款上限现在是 1 万元（limits.go 里 MaxAutoPayoutFen = 1000000），财务上个月调的。",
            "must": ["MaxAutoPayoutFen", "1 万"],
            "supersedes": f"{B1}#e12",
        },
        {
            "id": "e4",
            "layer": "fact",
            "kind": "convention",
            "lang": "zh",
            "text": "支付宝应用私钥放在 KMS 凭据 xhj/payout/alipay-app-key，启动时从 KMS 拉；私钥一律不进 yaml。",
            "must": ["xhj/payout/alipay-app-key"],
        },
        {
            "id": "e5",
            "layer": "fact",
            "kind": "config",
            "lang": "zh",
            "text": "回收单状态 topic 已改名为 xhj.order.status.v2（旧 topic 下个月删除），payout-service 已切过去。",
            "must": ["xhj.order.status.v2"],
            "supersedes": f"{B1}#e11",
        },
        {
            "id": "e6",
            "layer": "fact",
            "kind": "preference",
            "lang": "zh",
            "text": "估价（quote-service）现在归于晓雨（小鱼）负责；王磊（磊哥）转到 payout，payout 的 PR 找他 review。",
            "must": ["于晓雨"],
            "supersedes": f"{B1}#e8",
        },
        {
            "id": "e7",
            "layer": "decision",
            "kind": "decision",
            "lang": "zh",
            "text": "报价锁价 QuoteLockTTL 改成 24 小时（不再是 48 小时）：iPhone 发布会那周价格一天掉 15%，长锁价亏钱，而且顺丰现在基本当天上门。",
            "must": ["24 小时"],
            "chosen": "24 小时",
            "over": ["48 小时"],
            "why": ["发布会"],
            "supersedes": f"{B1}#e9",
        },
        {
            "id": "e8",
            "layer": "fact",
            "kind": "convention",
            "lang": "zh",
            "text": "payout 处理每单前加 Redis 锁 payout:lock:{order_no}，TTL 30 秒，防止 Kafka rebalance 时同一单被两个 consumer 拿到。",
            "must": ["payout:lock:{order_no}"],
        },
    ],
    "acceptable": [
        {"must": ["rotate"], "note": "CI bot token in the git remote URL to be rotated; use a credential helper"},
        {"must": ["当天上门"], "note": "顺丰现在基本当天上门"},
    ],
    "forbidden": [
        "千岛湖",
        "HS202606150231",
        "20260615110070000006530012345678",
        "财务在群里炸了",
        "单笔自动打款上限 5000 元",
        "回收单状态变更发 Kafka topic recycle_order_status",
        "改之前先找他",
        "因为顺丰上门取件最晚",
    ],
    "secrets": [
        "Rds!payout2026",
        "redis://:Rds!payout2026@r-bp1xhj3k.redis.rds.aliyuncs.com:6379/3",
        "MIIEowIBAAKCAQEAv3kQ9zX7bN2mW5pL8rT1yC4hF6jD0sG3aK9eV2uR7iO5nM1b",
        "ghp_R8mK2vQ9xT4wL7nB3cF6hJ1sD5aG0pZ2yE8u",
    ],
}

SESSIONS = [(build_b1, GOLD_B1), (build_b2, GOLD_B2), (build_b3, GOLD_B3)]
