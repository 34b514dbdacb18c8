from cc import Session
from common import A, E, gold

CWD = "/home/dev/work/order-center"
MOD = "gitlab.example.com/trade/order-center"
DSN_PW = "Xk9#pLm2vQ"
DSN = f"order_rw:{DSN_PW}@tcp(10.12.3.45:3306)/order_center_test?charset=utf8mb4&parseTime=True&loc=Local"
APOLLO_SECRET = "6f1e0c2d9a8b47e3b5c4d2a1f0e9d8c7"
DING_TOKEN = "5b8e2f0c9d1a4e7b3c6f8a2d0e9b1c4f7a3d6e8b0c2f5a9d1e4b7c0a3f6d9e2b"
DING_URL = f"https://oapi.dingtalk.com/robot/send?access_token={DING_TOKEN}"


# ---------------------------------------------------------------- s1
def s1():
    name = "p2s1_order_center_idempotency"
    s = Session(name, CWD, "2026-09-10T02:12:45.000Z", version="2.1.303", branch="feature/ORD-231-idempotent",
                title="下单接口幂等改造")
    s.snapshot()
    s.user("下单接口 /v1/orders 最近偶现重复下单，客户端超时会自动重试一次。帮我加个幂等，先看下现在 CreateOrder 怎么写的")
    s.think("先找 CreateOrder 的 usecase 实现和 orders 表结构，看看有没有可以用来去重的字段。")
    s.grep("func \\(uc \\*OrderUsecase\\) CreateOrder", "internal/biz/order.go:58:func (uc *OrderUsecase) CreateOrder(ctx context.Context, req *CreateOrderReq) (*Order, error) {", path="internal")
    s.read(f"{CWD}/internal/biz/order.go", """// CreateOrder 下单
func (uc *OrderUsecase) CreateOrder(ctx context.Context, req *CreateOrderReq) (*Order, error) {
	if len(req.Items) == 0 {
		return nil, v1.ErrorInvalidArgument("订单明细不能为空")
	}
	if len(req.Items) > 50 {
		return nil, errors.New("too many items")
	}
	price, err := uc.pricing.Quote(ctx, req.UserID, req.Items)
	if err != nil {
		return nil, err
	}
	o := &Order{
		UserID:    req.UserID,
		Status:    StatusPending,
		AmountFen: price.TotalFen,
		Items:     req.Items,
	}
	if err := uc.repo.Create(ctx, o); err != nil {
		return nil, err
	}
	uc.log.WithContext(ctx).Infof("order created id=%d user=%d", o.ID, o.UserID)
	return o, nil
}
""", start=57, total=131)
    s.bash("sed -n '/CREATE TABLE `orders`/,/;/p' migrations/20260301_init.sql && grep -rn 'X-Request-Id' internal/server | head -3",
           """CREATE TABLE `orders` (
  `id` bigint unsigned NOT NULL AUTO_INCREMENT,
  `user_id` bigint unsigned NOT NULL,
  `status` tinyint NOT NULL DEFAULT '0',
  `amount_fen` bigint NOT NULL,
  `version` int NOT NULL DEFAULT '0',
  `created_at` datetime(3) NOT NULL,
  `paid_at` datetime(3) DEFAULT NULL,
  `closed_at` datetime(3) DEFAULT NULL,
  PRIMARY KEY (`id`),
  KEY `idx_user_created` (`user_id`,`created_at`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
internal/server/http.go:41:			middleware.RequestID("X-Request-Id"),""", desc="看 orders 表结构和 request id 中间件")
    s.say("现状：CreateOrder 没有任何去重，orders 表也没有能区分“同一次请求”的字段。客户端已经在 header 里带 `X-Request-Id`（重试时不变），可以用它做幂等键。\n\n方案：\n1. orders 加 `idem_key` 列，建唯一索引 `uk_user_idem (user_id, idem_key)`，插入冲突（MySQL 1062）时查出原订单直接返回；\n2. 可选：前面再加一层 Redis `SETNX idem:{user}:{key}` 24h TTL，挡掉重复请求。最终一致性还是靠唯一索引，Redis 主从切换可能丢 key。")
    s.user("Redis 那层有必要吗？少一个依赖不好么")
    s.say("可以不加。唯一索引已经保证正确性，Redis 只是让重复请求少打一次 MySQL。下单峰值 QPS 也就 200 左右，重复请求占比更小，MySQL 完全扛得住。")
    s.user("那就不加 Redis，只靠唯一索引，冲突了查出原订单直接返回。就这么定")
    s.say("好。建列时注意一点：老订单没有 idem_key，如果列定义成 `NOT NULL DEFAULT ''`，同一个用户的多条老订单都是空串，唯一索引会直接建不起来。MySQL 的唯一索引允许多个 NULL，所以列用 NULL，老数据保持 NULL。")
    s.write(f"{CWD}/migrations/20260910_orders_idem_key.sql", """-- ORD-231 下单幂等：idem_key 取自 X-Request-Id。老数据保持 NULL（唯一索引允许多个 NULL）
ALTER TABLE `orders`
  ADD COLUMN `idem_key` varchar(64) NULL DEFAULT NULL AFTER `user_id`,
  ADD UNIQUE KEY `uk_user_idem` (`user_id`, `idem_key`);
""")
    s.say("另外第 62 行的 `len(req.Items) > 50` 是写死的，`errors.New(\"too many items\")` 也没走统一错误码。要顺手改吗？")
    s.user("改。这种配置别写死，都放 Nacos（dataId order-center.yaml，group TRADE），conf 里加个 biz.max_items。还有错误码统一在 api/order/v1/error_reason.proto 里定义，别在 biz 里 errors.New 随手写")
    s.edit(f"{CWD}/api/order/v1/error_reason.proto", "  ORDER_NOT_FOUND = 2 [(errors.code) = 404];",
           "  ORDER_NOT_FOUND = 2 [(errors.code) = 404];\n  TOO_MANY_ITEMS = 3 [(errors.code) = 400];", at_line=14)
    s.edit(f"{CWD}/internal/biz/order.go", """	if len(req.Items) > 50 {
		return nil, errors.New("too many items")
	}""", """	if max := uc.conf.GetMaxItems(); max > 0 && len(req.Items) > int(max) {
		return nil, v1.ErrorTooManyItems("订单明细最多 %d 条", max)
	}""", at_line=62)
    s.edit(f"{CWD}/internal/biz/order.go", """	if err := uc.repo.Create(ctx, o); err != nil {
		return nil, err
	}""", """	o.IdemKey = req.IdemKey
	if err := uc.repo.Create(ctx, o); err != nil {
		if isDuplicateKey(err) { // MySQL 1062: 同一个 X-Request-Id 已经下过单
			return uc.repo.GetByIdemKey(ctx, req.UserID, req.IdemKey)
		}
		return nil, err
	}""", at_line=74)
    s.bash("make api && go build ./...", """buf generate
protoc-gen-go-errors: generated api/order/v1/error_reason_errors.pb.go""", desc="重新生成 proto 并编译")
    s.bash("go test ./internal/biz/...", f"""# {MOD}/internal/biz [{MOD}/internal/biz.test]
internal/biz/order_test.go:12:2: no required module provides package {MOD}/internal/biz/mock; to add it:
	go get {MOD}/internal/biz/mock
FAIL	{MOD}/internal/biz [setup failed]
FAIL""", code=1, desc="跑 biz 层单测")
    s.bash("ls internal/biz/mock", "ls: cannot access 'internal/biz/mock': No such file or directory", code=2)
    s.user("mock 不进 git 的，先 make mock（就是 mockgen 那一坨）")
    s.bash("make mock && go test ./internal/biz/...", f"""mockgen -source=internal/biz/order.go -destination=internal/biz/mock/order_mock.go -package=mock
mockgen -source=internal/biz/pricing.go -destination=internal/biz/mock/pricing_mock.go -package=mock
ok  	{MOD}/internal/biz	0.412s""", desc="生成 mock 后重跑")
    s.bash("make test", f"""go test ./... -race -count=1
?   	{MOD}/cmd/server	[no test files]
ok  	{MOD}/internal/biz	1.733s
--- FAIL: TestOrderRepo_GetByIdemKey (5.01s)
    order_test.go:31: dial tcp 127.0.0.1:3306: connect: connection refused
FAIL
FAIL	{MOD}/internal/data	5.094s
ok  	{MOD}/internal/service	1.208s
FAIL
make: *** [Makefile:21: test] Error 1""", code=2, desc="全量测试")
    s.say("biz/service 都过了。internal/data 的测试要连真实 MySQL，本地 3306 没有库。data 层测试是从哪读连接串的？")
    s.user(f"data 层测试连的是测试环境的库，本地不装 MySQL。从环境变量 ORDER_TEST_DSN 读，DSN 在这：{DSN}")
    s.bash(f"ORDER_TEST_DSN='{DSN}' go test ./internal/data/... -count=1", f"ok  	{MOD}/internal/data	2.871s", desc="带 DSN 跑 data 层测试")
    s.say("全部通过。")
    s.user("提交吧。commit 信息按我们的规矩：中文，前面带 Jira 号，比如 `ORD-231 下单接口支持幂等`")
    s.bash("git add -A && git commit -m 'ORD-231 下单接口支持幂等（uk_user_idem 唯一索引）'", """[feature/ORD-231-idempotent 3f9a1c2] ORD-231 下单接口支持幂等（uk_user_idem 唯一索引）
 7 files changed, 96 insertions(+), 7 deletions(-)
 create mode 100644 migrations/20260910_orders_idem_key.sql""", desc="提交")
    s.stop_hook()
    s.turn_duration()
    g = gold(name, CWD, 1, "zh", [
        E("e1", "decision", "decision", "zh", "下单幂等只靠 MySQL 唯一索引 uk_user_idem (user_id, idem_key)，idem_key 取自 X-Request-Id，插入冲突（1062）时查出原订单返回；不加 Redis SETNX 前置拦截，因为下单峰值 QPS 约 200，MySQL 扛得住，少一个依赖。", ["uk_user_idem"], chosen="uk_user_idem", over=["Redis"], why=["QPS"]),
        E("e2", "fact", "gotcha", "zh", "MySQL 唯一索引允许多个 NULL：orders.idem_key 定义成可空，老订单保持 NULL；若用 NOT NULL DEFAULT '' 同一用户的老订单会冲突，唯一索引建不起来。", ["NULL", "idem_key"]),
        E("e3", "fact", "command", "zh", "mock 文件不进 git，跑测试前先 `make mock`（mockgen），否则 biz 层测试编译失败。", ["make mock"]),
        E("e4", "fact", "command", "zh", "`make test` 执行 `go test ./... -race -count=1`。", ["make test", "-race"]),
        E("e5", "fact", "config", "zh", "internal/data 层测试连测试环境 MySQL，连接串从环境变量 ORDER_TEST_DSN 读取，本地不装 MySQL。", ["ORDER_TEST_DSN"]),
        E("e6", "fact", "config", "zh", "测试环境 MySQL 在 10.12.3.45:3306（库 order_center_test）。", ["10.12.3.45"]),
        E("e7", "fact", "convention", "zh", "commit 信息用中文，前面带 Jira 号，例如 `ORD-231 下单接口支持幂等`。", ["ORD-"]),
        E("e8", "fact", "convention", "zh", "错误码统一在 api/order/v1/error_reason.proto 里定义，biz 层不要 errors.New 随手写。", ["error_reason.proto"]),
        E("e9", "fact", "convention", "zh", "业务配置不写死在代码里，放 Nacos（dataId order-center.yaml，group TRADE），例如 biz.max_items。", ["Nacos", "order-center.yaml"]),
        E("e10", "fact", "command", "zh", "改了 proto 之后用 `make api`（buf generate）重新生成代码。", ["make api"]),
    ], [
        A(["X-Request-Id"], "client keeps X-Request-Id across retries"),
        A(["max_items"], "biz.max_items config"),
    ], ["0.412s", "96 insertions", "3f9a1c2", "connection refused"], [DSN, DSN_PW])
    return s, g


# ---------------------------------------------------------------- s2
R_S2 = [
    {"id": 21, "layer": "fact", "content": "`make test` 执行 `go test ./... -race -count=1`。"},
    {"id": 24, "layer": "fact", "content": "错误码统一在 api/order/v1/error_reason.proto 定义，biz 里不要 errors.New。"},
    {"id": 6, "layer": "fact", "content": "订单超时时间 30 分钟，由 cron 每分钟扫表关单（close_expired_orders）。"},
]


def s2():
    name = "p2s2_order_center_status_race"
    s = Session(name, CWD, "2026-09-17T14:48:09.000Z", version="2.1.306", branch="hotfix/ORD-245-status-overwrite",
                title="修复超时关单覆盖已支付订单")
    s.snapshot()
    s.user("线上出事了：有用户付了钱订单却显示已关闭，工单 ORD-245。看日志是超时关单和支付回调几乎同时到的")
    s.maple_search("订单 状态 超时关单 支付回调", R_S2)
    s.grep("StatusClosed", """internal/biz/order.go:21:	StatusClosed  Status = 2
internal/job/close_expired.go:37:		o.Status = model.StatusClosed""", path="internal")
    s.read(f"{CWD}/internal/job/close_expired.go", """// Run 关闭超过 30 分钟未支付的订单
func (j *CloseExpiredJob) Run(ctx context.Context) error {
	var orders []model.Order
	deadline := time.Now().Add(-30 * time.Minute)
	if err := j.db.WithContext(ctx).
		Where("status = ? AND created_at < ?", model.StatusPending, deadline).
		Limit(500).Find(&orders).Error; err != nil {
		return err
	}
	for i := range orders {
		o := &orders[i]
		paid, err := j.payment.QueryPaid(ctx, o.ID) // 问一下支付中心
		if err != nil || paid {
			continue
		}
		o.Status = model.StatusClosed
		o.ClosedAt = ptr(time.Now())
		if err := j.db.WithContext(ctx).Save(o).Error; err != nil {
			j.log.Errorf("close order %d: %v", o.ID, err)
		}
	}
	return nil
}
""", start=21, total=45)
    s.grep("func \\(r \\*orderRepo\\) MarkPaid", "internal/data/order.go:88:func (r *orderRepo) MarkPaid(ctx context.Context, id int64, paidAt time.Time) error {", path="internal/data")
    s.read(f"{CWD}/internal/data/order.go", """func (r *orderRepo) MarkPaid(ctx context.Context, id int64, paidAt time.Time) error {
	return r.data.db.WithContext(ctx).Model(&model.Order{}).Where("id = ?", id).
		Updates(model.Order{Status: model.StatusPaid, PaidAt: &paidAt}).Error
}
""", start=88, total=140)
    s.think("Job reads Pending, asks payment (not yet paid), callback then sets Paid, job Saves the whole stale struct with Closed -> overwrite. Neither side checks current status.")
    s.say("时间线是这样的：\n1. 关单 job 查出这单（Pending），调支付中心问，回答“未支付”；\n2. 几乎同时支付回调进来，MarkPaid 把它改成 Paid；\n3. job 接着执行 `Save(o)`，`o` 还是第 1 步读出来的旧对象，只是 Status 改成了 Closed，整行按主键写回去，把 Paid 盖掉了。\n\n`Save` 不看数据库里现在是什么状态，MarkPaid 也一样（只按 id 更新）。两边都是“读-改-写”没有条件，谁后写谁赢。\n\n修法：所有状态流转改成条件更新 `UPDATE orders SET status=?, version=version+1 WHERE id=? AND status=?`，RowsAffected 为 0 就是状态已被别人改了，返回冲突。")
    s.edit(f"{CWD}/internal/data/order.go", """func (r *orderRepo) MarkPaid(ctx context.Context, id int64, paidAt time.Time) error {
	return r.data.db.WithContext(ctx).Model(&model.Order{}).Where("id = ?", id).
		Updates(model.Order{Status: model.StatusPaid, PaidAt: &paidAt}).Error
}""", """// TransitStatus 条件更新：只有当前状态等于 from 时才改成 to，否则返回 biz.ErrStatusConflict。
// 用 map 不用 struct：GORM Updates(struct) 会跳过零值字段，StatusPending 是 0。
func (r *orderRepo) TransitStatus(ctx context.Context, id int64, from, to model.Status, extra map[string]any) error {
	vals := map[string]any{"status": to, "version": gorm.Expr("version + 1")}
	for k, v := range extra {
		vals[k] = v
	}
	res := r.data.db.WithContext(ctx).Model(&model.Order{}).
		Where("id = ? AND status = ?", id, from).Updates(vals)
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected == 0 {
		return biz.ErrStatusConflict
	}
	return nil
}""", at_line=88)
    s.say("这里特意用了 map：GORM 的 `Updates(struct)` 会跳过零值字段，`StatusPending` 是 0，以后如果有流转回 Pending（比如支付失败重置），struct 写法会静默不更新 status。")
    s.edit(f"{CWD}/internal/job/close_expired.go", """		o.Status = model.StatusClosed
		o.ClosedAt = ptr(time.Now())
		if err := j.db.WithContext(ctx).Save(o).Error; err != nil {
			j.log.Errorf("close order %d: %v", o.ID, err)
		}""", """		err = j.repo.TransitStatus(ctx, o.ID, model.StatusPending, model.StatusClosed,
			map[string]any{"closed_at": time.Now()})
		if errors.Is(err, biz.ErrStatusConflict) {
			continue // 回调抢先一步改成了 Paid，正常
		}
		if err != nil {
			j.log.Errorf("close order %d: %v", o.ID, err)
		}""", at_line=36)
    s.bash("make test", f"""go test ./... -race -count=1
?   	{MOD}/cmd/server	[no test files]
ok  	{MOD}/internal/biz	3.817s
--- FAIL: TestTransitStatus_Conflict (0.00s)
    order_test.go:88: expected ErrStatusConflict, got <nil>
FAIL
FAIL	{MOD}/internal/data	6.402s
ok  	{MOD}/internal/job	4.955s
ok  	{MOD}/internal/service	2.611s
FAIL
make: *** [Makefile:21: test] Error 1""", code=2, desc="跑测试", gap=(40, 70))
    s.read(f"{CWD}/internal/data/order_test.go", """	mock.ExpectExec("UPDATE `orders` SET").
		WithArgs(model.StatusClosed, sqlmock.AnyArg(), int64(7), model.StatusPending).
		WillReturnResult(sqlmock.NewResult(0, 1))
""", start=80, total=95)
    s.edit(f"{CWD}/internal/data/order_test.go", "		WillReturnResult(sqlmock.NewResult(0, 1))", "		WillReturnResult(sqlmock.NewResult(0, 0)) // 0 行受影响 = 状态已被改", at_line=82)
    s.bash("make test", f"""go test ./... -race -count=1
?   	{MOD}/cmd/server	[no test files]
ok  	{MOD}/internal/biz	3.702s
ok  	{MOD}/internal/data	6.118s
ok  	{MOD}/internal/job	4.870s
ok  	{MOD}/internal/service	2.594s""", desc="重跑", gap=(40, 70))
    s.user("CI 上 -race 太慢了，整条 pipeline 要 12 分钟。`make test` 去掉 -race，另外加一个 `make test-race`，nightly 单独跑。改下 Makefile")
    s.edit(f"{CWD}/Makefile", """test:
	go test ./... -race -count=1""", """test:
	go test ./... -count=1

# nightly 单独跑，主流水线不跑
test-race:
	go test ./... -race -count=1""", at_line=20)
    s.user("关单这个扫表本身也有问题，订单表 3000 万行了，每分钟扫一次，DBA 天天发慢查询告警给我。有没有更好的办法")
    s.say("几个方向：\n- A. 延时消息：下单时投一条 30 分钟后投递的消息，到点检查状态并条件关单。你们支付结果本来就走 RocketMQ，不用新组件。\n- B. Redis ZSET 做延时队列：score 存过期时间，后台轮询。要自己处理轮询、多实例抢占、丢失。\n- C. 继续扫表，但加 `(status, created_at)` 联合索引并分批。\n\n我倾向 A。RocketMQ 5.x 支持任意时间的定时消息。")
    s.user("集群还是 4.9 的，运维说年底才升 5.x。4.9 只有 18 个固定延时等级吧")
    s.say("对，4.9 只有固定等级：1s 5s 10s 30s 1m 2m 3m 4m 5m 6m 7m 8m 9m 10m 20m 30m 1h 2h。30 分钟正好是 level 16，直接用就行，不依赖 5.x。")
    s.user("行，那就用 RocketMQ 延时消息 level 16，不搞 ZSET。扫表 job 留着当兜底，改成每 10 分钟一次，加上 (status, created_at) 索引。就这么办，下个 PR 做")
    s.bash("git add -A && git commit -m 'ORD-245 订单状态流转改为条件更新，修复超时关单覆盖已支付'", """[hotfix/ORD-245-status-overwrite 9d2e71b] ORD-245 订单状态流转改为条件更新，修复超时关单覆盖已支付
 6 files changed, 71 insertions(+), 18 deletions(-)""", desc="提交")
    s.stop_hook()
    s.turn_duration()
    g = gold(name, CWD, 2, "zh", [
        E("e1", "experience", "root_cause", "zh", "ORD-245 已支付订单被关闭：超时关单 job 读出 Pending 订单后用 GORM Save 整行写回 Closed，覆盖了并发支付回调刚写入的 Paid；Save 按主键整行覆盖，两边都没有按当前状态做条件更新。", ["Save"]),
        E("e2", "fact", "convention", "zh", "订单状态流转一律用条件更新 orderRepo.TransitStatus(id, from, to)：`WHERE id=? AND status=?` 并 version+1，RowsAffected 为 0 返回 ErrStatusConflict。", ["TransitStatus"]),
        E("e3", "fact", "gotcha", "zh", "GORM 的 Updates(struct) 会跳过零值字段（StatusPending 是 0），更新状态要用 map 或 Select。", ["Updates", "map"]),
        E("e4", "fact", "command", "zh", "`make test` 不再带 -race（CI 太慢）；race 检测用 `make test-race`，nightly 单独跑。", ["make test-race"], supersedes="p2s1_order_center_idempotency#e4"),
        E("e5", "decision", "decision", "zh", "超时关单改用 RocketMQ 延时消息（30 分钟 = level 16），不用 Redis ZSET 延时队列；原来每分钟扫 3000 万行订单表导致慢查询告警，扫表 job 保留为每 10 分钟兜底并加 (status, created_at) 索引。", ["RocketMQ", "level 16"], chosen="RocketMQ", over=["ZSET"], why=["慢查询"]),
        E("e6", "fact", "constraint", "zh", "RocketMQ 集群是 4.9，只有 18 个固定延时等级（不支持任意时间定时消息），运维计划年底升级 5.x。", ["4.9"]),
    ], [
        A(["3000 万"], "orders table ~30M rows"),
        A(["status, created_at"], "index for the fallback scan"),
        A(["QueryPaid"], "job asks payment center before closing"),
    ], [R_S2[2]["content"], R_S2[0]["content"], "由 cron 每分钟扫表关单", R_S2[1]["content"], "3.817s", "9d2e71b", "71 insertions"], [])
    return s, g


# ---------------------------------------------------------------- s3
R_S3 = [(14, "fact", "19 days ago", "业务配置放 Nacos（dataId order-center.yaml，group TRADE），不写死在代码里。"),
        (22, "fact", "12 days ago", "race 检测用 make test-race，nightly 跑。"),
        (23, "decision", "12 days ago", "超时关单用 RocketMQ 延时消息 level 16，扫表每 10 分钟兜底。")]


def s3():
    name = "p2s3_order_center_apollo"
    s = Session(name, CWD, "2026-09-29T06:20:31.000Z", version="2.1.311", branch="feature/ORD-260-apollo",
                title="Nacos 迁移到 Apollo，修复配置热更新不生效")
    s.recall_attachment(R_S3, event="SessionStart")
    s.user("Nacos 已经下线了，上周配置全部迁到 Apollo（appId order-center，namespace 是 application 和 TRADE.common）。代码里还在用 nacos 的 config source，帮我换成 Apollo。顺便看看为什么之前改了配置服务不生效，max_items 改了要重启才行")
    s.grep("nacos", """cmd/server/main.go:19:	"github.com/go-kratos/kratos/contrib/config/nacos/v2"
cmd/server/main.go:54:	source := nacos.NewConfigSource(client, nacos.WithGroup("TRADE"), nacos.WithDataID("order-center.yaml"))
go.mod:9:	github.com/go-kratos/kratos/contrib/config/nacos/v2 v2.0.0-20240504
go.mod:27:	github.com/nacos-group/nacos-sdk-go v1.1.4""")
    s.read(f"{CWD}/cmd/server/main.go", """	c := config.New(config.WithSource(file.NewSource(flagconf), source))
	defer c.Close()
	if err := c.Load(); err != nil {
		panic(err)
	}
	var bc conf.Bootstrap
	if err := c.Scan(&bc); err != nil {
		panic(err)
	}
	if err := c.Watch("biz", func(key string, v config.Value) {
		if err := v.Scan(bc.Biz); err != nil {
			log.Errorf("reload biz conf: %v", err)
		}
	}); err != nil {
		panic(err)
	}
	app, cleanup, err := wireApp(bc.Server, bc.Data, *bc.Biz, logger)
""", start=55, total=92)
    s.say("热更新不生效的原因在最后一行：`wireApp(..., *bc.Biz, ...)` 把 Biz 配置**按值**传进去了，OrderUsecase 拿到的是启动时的一份拷贝。Watch 回调确实更新了 `bc.Biz`，但 usecase 里那份永远是旧的。\n\n改法：usecase 持有 `*atomic.Pointer[conf.Biz]`，回调里 Scan 到新对象再 `Store`，业务读的时候 `Load()`。\n\nApollo 这边，kratos 有官方的 `contrib/config/apollo/v2`，实现的是同一个 `config.Source` 接口，Scan/Watch 的用法不用变。也可以直接用 agollo 自己包，但要自己处理变更通知。我建议用 contrib。")
    s.user("用 contrib 的吧，别自己包 agollo")
    s.bash("go get github.com/go-kratos/kratos/contrib/config/apollo/v2@latest", """go: github.com/go-kratos/kratos/contrib/config/apollo/v2@latest: module github.com/go-kratos/kratos/contrib/config/apollo/v2: Get "https://proxy.golang.org/github.com/go-kratos/kratos/contrib/config/apollo/v2/@v/list": dial tcp 142.250.66.81:443: i/o timeout""", code=1, desc="拉 apollo config source")
    s.bash("go env GOPROXY GOPRIVATE", "https://proxy.golang.org,direct\n", desc="看 GOPROXY")
    s.user("内网得用公司的 goproxy：GOPROXY=https://goproxy.corp.example.com,direct，GOPRIVATE=gitlab.example.com。之前没人写文档，坑了好几个新人")
    s.bash("go env -w GOPROXY=https://goproxy.corp.example.com,direct GOPRIVATE=gitlab.example.com && go get github.com/go-kratos/kratos/contrib/config/apollo/v2@v2.0.0-20240823 && go mod tidy",
           """go: downloading github.com/go-kratos/kratos/contrib/config/apollo/v2 v2.0.0-20240823095201-19f7ac5bc0e5
go: downloading github.com/apolloconfig/agollo/v4 v4.4.0
go: added github.com/apolloconfig/agollo/v4 v4.4.0
go: added github.com/go-kratos/kratos/contrib/config/apollo/v2 v2.0.0-20240823095201-19f7ac5bc0e5
go: removed github.com/nacos-group/nacos-sdk-go v1.1.4""", desc="配置公司 goproxy 后重试", gap=(8, 25))
    s.edit(f"{CWD}/cmd/server/main.go", """	source := nacos.NewConfigSource(client, nacos.WithGroup("TRADE"), nacos.WithDataID("order-center.yaml"))""",
           """	source := apollo.NewSource(
		apollo.WithAppID("order-center"),
		apollo.WithCluster("default"),
		apollo.WithEndpoint(os.Getenv("APOLLO_META")),
		apollo.WithNamespace("application,TRADE.common"),
		apollo.WithSecret(os.Getenv("APOLLO_SECRET")),
		apollo.WithEnableBackup(),
	)""", at_line=54)
    s.edit(f"{CWD}/cmd/server/main.go", """	if err := c.Watch("biz", func(key string, v config.Value) {
		if err := v.Scan(bc.Biz); err != nil {
			log.Errorf("reload biz conf: %v", err)
		}
	}); err != nil {
		panic(err)
	}
	app, cleanup, err := wireApp(bc.Server, bc.Data, *bc.Biz, logger)""", """	bizConf := &atomic.Pointer[conf.Biz]{}
	bizConf.Store(bc.Biz)
	if err := c.Watch("biz", func(key string, v config.Value) {
		next := &conf.Biz{}
		if err := v.Scan(next); err != nil {
			log.Errorf("reload biz conf: %v", err)
			return
		}
		bizConf.Store(next)
	}); err != nil {
		panic(err)
	}
	app, cleanup, err := wireApp(bc.Server, bc.Data, bizConf, logger)""", at_line=63)
    s.user(f"APOLLO_META 测试环境是 http://apollo-meta.test.corp:8080，secret 是 {APOLLO_SECRET}，你本地调试用")
    s.bash("curl -s -o /dev/null -w '%{http_code}\\n' http://apollo-meta.test.corp:8080/configs/order-center/default/application", "401", desc="直接请求 apollo 配置")
    s.grep("WithSecret|Authorization", "cmd/server/main.go:59:		apollo.WithSecret(os.Getenv(\"APOLLO_SECRET\")),", path=".")
    s.say("测试环境 Apollo 开了访问密钥，裸 curl 会 401，需要按 appId+时间戳签名的 `Authorization` 头，服务里 agollo 会自己签，这里就不手搓了。")
    s.bash(f"APOLLO_META=http://apollo-meta.test.corp:8080 APOLLO_SECRET={APOLLO_SECRET} make wire && make test", f"""cd cmd/server && wire
wire: {MOD}/cmd/server: wrote {CWD}/cmd/server/wire_gen.go
go test ./... -count=1
?   	{MOD}/cmd/server	[no test files]
ok  	{MOD}/internal/biz	0.822s
ok  	{MOD}/internal/data	2.406s
ok  	{MOD}/internal/job	0.913s
ok  	{MOD}/internal/service	0.551s""", desc="重新生成 wire 并测试")
    s.user("对了测试环境 MySQL 也换了，现在是 10.12.8.20，老的 10.12.3.45 下周回收。ORDER_TEST_DSN 我自己改好了")
    s.say("收到，代码里没有写死 MySQL 地址，DSN 都从环境变量读，不用改。")
    s.user("还有一条规矩：以后新加的配置项，都要同时在 configs/config.example.yaml 里加上注释和默认值，不然新人不知道 Apollo 里要配啥")
    s.edit(f"{CWD}/configs/config.example.yaml", "biz:\n", "biz:\n  # 单个订单最多明细条数，超过返回 TOO_MANY_ITEMS。Apollo: application / biz.max_items\n  max_items: 50\n", at_line=31)
    s.user(f"配置变更以后顺便在钉钉群里发个通知，机器人 webhook：{DING_URL} ，放 Apollo 的 TRADE.common 里，key 叫 notify.dingtalk_webhook，代码里从配置读，别写死")
    s.edit(f"{CWD}/configs/config.example.yaml", "notify:\n", "notify:\n  # 配置变更通知的钉钉机器人 webhook。Apollo: TRADE.common / notify.dingtalk_webhook（不要提交真实值）\n  dingtalk_webhook: \"\"\n", at_line=44)
    s.bash("git add -A && git commit -m 'ORD-260 配置中心从 Nacos 迁到 Apollo，修复 biz 配置热更新不生效'", """[feature/ORD-260-apollo 1c7b0e4] ORD-260 配置中心从 Nacos 迁到 Apollo，修复 biz 配置热更新不生效
 9 files changed, 88 insertions(+), 41 deletions(-)""", desc="提交")
    s.stop_hook()
    g = gold(name, CWD, 3, "zh", [
        E("e1", "fact", "config", "zh", "配置中心已从 Nacos 迁到 Apollo（Nacos 已下线）：appId order-center，namespace application 和 TRADE.common，代码用 kratos contrib/config/apollo。", ["Apollo", "TRADE.common"], supersedes="p2s1_order_center_idempotency#e9"),
        E("e2", "experience", "root_cause", "zh", "改配置要重启才生效：main.go 把 *bc.Biz 按值传给 wireApp，usecase 拿的是启动时的拷贝，Watch 回调只更新了 bc；改为 atomic.Pointer[conf.Biz]，回调里 Store 新对象。", ["atomic.Pointer"]),
        E("e3", "decision", "decision", "zh", "Apollo 接入用 kratos 官方 contrib/config/apollo/v2（同一个 config.Source 接口，Scan/Watch 用法不变），不自己包 agollo。", ["contrib"], chosen="contrib", over=["agollo"], why=["Watch"]),
        E("e4", "fact", "config", "zh", "内网拉 Go 依赖必须用公司 goproxy：GOPROXY=https://goproxy.corp.example.com,direct，GOPRIVATE=gitlab.example.com。", ["goproxy.corp.example.com"]),
        E("e5", "fact", "config", "zh", "测试环境 Apollo meta 地址 http://apollo-meta.test.corp:8080；服务从环境变量 APOLLO_META 和 APOLLO_SECRET 读取。", ["apollo-meta.test.corp"]),
        E("e6", "fact", "gotcha", "zh", "测试环境 Apollo 开了访问密钥，直接 curl configs 接口返回 401，需要签名的 Authorization 头。", ["401"]),
        E("e7", "fact", "config", "zh", "测试环境 MySQL 已换到 10.12.8.20，老的 10.12.3.45 回收。", ["10.12.8.20"], supersedes="p2s1_order_center_idempotency#e6"),
        E("e8", "fact", "convention", "zh", "新增配置项必须同时在 configs/config.example.yaml 里写注释和默认值。", ["config.example.yaml"]),
        E("e9", "fact", "config", "zh", "配置变更通知的钉钉机器人 webhook 放在 Apollo TRADE.common 的 notify.dingtalk_webhook，代码从配置读取。", ["notify.dingtalk_webhook"]),
        E("e10", "fact", "command", "zh", "改了依赖注入后用 `make wire` 重新生成 cmd/server/wire_gen.go。", ["make wire"]),
    ], [
        A(["WithEnableBackup"], "apollo backup enabled"),
    ], [R_S3[0][3], R_S3[1][3], R_S3[2][3], "1c7b0e4", "88 insertions"], [APOLLO_SECRET, DING_URL, DING_TOKEN])
    return s, g


# ---------------------------------------------------------------- s4
def s4():
    name = "p2s4_order_center_sharding"
    s = Session(name, CWD, "2026-10-13T07:02:10.000Z", version="2.1.320", branch="feature/ORD-288-sharding",
                title="订单表分表方案与迁移 dry-run 工具")
    s.snapshot()
    s.user("订单表 3000 多万了，DBA 要求年底前分表。先讨论方案，别写代码")
    s.think("Options for Go: ShardingSphere-Proxy (transparent), app-level sharding with gorm.io/sharding, or moving to TiDB. Need to think about merchant queries and IDs.")
    s.say("几个选项：\n- **ShardingSphere-Proxy**：MySQL 协议的代理，应用几乎不改。代价是多一跳、多一个要运维的有状态组件，出问题排查链路更长。\n- **应用层分表（gorm.io/sharding 插件）**：按分表键改写 SQL，不引入新组件。限制是查询必须带分表键，跨分片查询要自己处理。\n- **迁 TiDB**：一劳永逸，但迁移和运维成本最大。\n\n关键问题：除了 user_id，还有谁按别的维度查订单？")
    s.user("Proxy 我们没人会运维，出了问题只能干瞪眼。TiDB 太重。我倾向按 user_id 分 16 张表，用 gorm sharding 插件。但商家后台要按 merchant_id 查怎么办")
    s.grep("merchant_id", """internal/service/merchant.go:33:	// 商家后台列表走 ES 的 order_index，不直接查 MySQL
internal/data/es.go:18:const orderIndex = "order_index\"""", path="internal")
    s.say("商家后台的列表查询本来就走 ES 的 `order_index`，不直接查 MySQL，所以按 user_id 分表对它没影响，binlog 同步到 ES 那条链路照旧。\n\n另外一个问题是主键：现在 orders.id 是 AUTO_INCREMENT，分成 16 张表后每张表各自自增，id 会重复。")
    s.user("好，定了：gorm.io/sharding，user_id % 16，表名 orders_00 到 orders_15。主键改用雪花 ID，别再用自增了。pkg/idgen 里好像有个现成的")
    s.read(f"{CWD}/pkg/idgen/snowflake.go", """// New 返回一个雪花 ID 生成器。machine id 取 HOSTNAME 的 hash 低 10 位。
func New() *Generator {
	h := fnv.New32a()
	h.Write([]byte(os.Getenv("HOSTNAME")))
	return &Generator{machineID: int64(h.Sum32() & 0x3FF)}
}
""", start=12, total=58)
    s.say("pkg/idgen 能直接用，但 machine id 是 HOSTNAME 哈希取低 10 位：Deployment 的 pod 名是随机后缀，两个 pod 哈希撞到同一个 machine id 的概率不低（几十个 pod 就有可观的概率），撞了就可能生成重复 ID。")
    s.user("这个记个 TODO，worker id 分配下次单独搞。先这样")
    s.say("好，TODO 记下了：pkg/idgen 的 machine id 分配需要单独设计。")
    s.compact("""Summary:
1. Primary request: plan sharding of the orders table (30M+ rows, DBA wants it before year end). No code yet.
2. Decisions so far: application-level sharding with gorm.io/sharding, shard key user_id % 16, tables orders_00..orders_15. ShardingSphere-Proxy rejected (nobody can operate it), TiDB rejected (too heavy). Merchant back-office queries already go to ES order_index, unaffected. Primary keys switch from AUTO_INCREMENT to snowflake IDs from pkg/idgen.
3. Open TODO: pkg/idgen derives machine id from a hash of HOSTNAME (collision risk under a Deployment); worker-id assignment to be designed separately.
4. Files looked at: internal/service/merchant.go, internal/data/es.go, pkg/idgen/snowflake.go.""")
    s.user("写个分表迁移 dry-run 工具 cmd/migrate_shard，先只打印每张分表会迁多少行，连接串还是读 ORDER_TEST_DSN")
    s.write(f"{CWD}/cmd/migrate_shard/main.go", """package main

import (
	"flag"
	"fmt"
	"os"

	"gorm.io/driver/mysql"
	"gorm.io/gorm"
)

const shards = 16

func main() {
	dryRun := flag.Bool("dry-run", true, "only print row counts per shard")
	flag.Parse()
	db, err := gorm.Open(mysql.Open(os.Getenv("ORDER_TEST_DSN")), &gorm.Config{})
	if err != nil {
		panic(err)
	}
	var total int64
	for i := 0; i < shards; i++ {
		var n int64
		db.Table("orders").Where("user_id % ? = ?", shards, i).Count(&n)
		fmt.Printf("orders_%02d: %d\\n", i, n)
		total += n
	}
	fmt.Printf("total: %d (dry-run=%v)\\n", total, *dryRun)
}
""")
    s.bash("go run ./cmd/migrate_shard --dry-run", """panic: dial tcp 10.12.8.20:3306: i/o timeout

goroutine 1 [running]:
main.main()
	/home/dev/work/order-center/cmd/migrate_shard/main.go:19 +0x2f4
exit status 2""", code=1, desc="dry-run", gap=(30, 32))
    s.user("测试库要先连 VPN，我刚连上了，再跑一次")
    s.bash("go run ./cmd/migrate_shard --dry-run", """orders_00: 1912334
orders_01: 1908771
orders_02: 1915020
orders_03: 1911458
orders_04: 1913902
orders_05: 1907316
orders_06: 1914587
orders_07: 1910043
orders_08: 1912799
orders_09: 1909126
orders_10: 1913467
orders_11: 1911870
orders_12: 1908402
orders_13: 1914211
orders_14: 1910685
orders_15: 1916812
total: 30611207 (dry-run=true)""", desc="dry-run", gap=(20, 60))
    s.say("分布很均匀，每张表约 191 万行。")
    s.user("commit 吧。对了 commit 规范改了，现在统一 conventional commits：`feat(order): 描述`，Jira 号放在 footer 里写 `Refs: ORD-288`，CI 上 commitlint 会卡")
    s.bash("git add -A && git commit -m 'feat(order): 新增分表迁移 dry-run 工具' -m 'Refs: ORD-288'", """⧗   input: feat(order): 新增分表迁移 dry-run 工具
✔   found 0 problems, 0 warnings
[feature/ORD-288-sharding 6a0f3d8] feat(order): 新增分表迁移 dry-run 工具
 1 file changed, 31 insertions(+)
 create mode 100644 cmd/migrate_shard/main.go""", desc="提交")
    s.user("谢谢，今天先这样")
    s.say("好的。worker id 那个 TODO 记得开个单。")
    s.stop_hook()
    g = gold(name, CWD, 4, "zh", [
        E("e1", "decision", "decision", "zh", "订单表分表用应用层 gorm.io/sharding，按 user_id % 16 分成 orders_00~orders_15；不用 ShardingSphere-Proxy（没人会运维），也不迁 TiDB（太重）。", ["gorm.io/sharding", "user_id"], chosen="gorm.io/sharding", over=["ShardingSphere"], why=["运维"]),
        E("e2", "decision", "decision", "zh", "分表后订单主键改用 pkg/idgen 的雪花 ID，不再用 AUTO_INCREMENT（16 张表各自自增会重复）。", ["雪花"], chosen="雪花", over=["自增"], why=["重复"]),
        E("e3", "fact", "config", "zh", "商家后台按 merchant_id 的列表查询走 ES 的 order_index，不查 MySQL，不受分表影响。", ["order_index"]),
        E("e4", "fact", "gotcha", "zh", "pkg/idgen 的 machine id 取 HOSTNAME 哈希低 10 位，Deployment 下 pod 之间可能撞号生成重复 ID；worker id 分配是待办。", ["HOSTNAME"]),
        E("e5", "fact", "convention", "zh", "commit 规范改为 conventional commits：`feat(order): 描述`，Jira 号放 footer `Refs: ORD-xxx`，CI commitlint 会检查。", ["feat(order)", "Refs:"], supersedes="p2s1_order_center_idempotency#e7"),
        E("e6", "fact", "command", "zh", "`go run ./cmd/migrate_shard --dry-run` 打印每张分表要迁移的行数（连接串读 ORDER_TEST_DSN）。", ["migrate_shard"]),
        E("e7", "fact", "constraint", "zh", "连测试环境 MySQL 要先连 VPN，否则 i/o timeout。", ["VPN"]),
    ], [
        A(["年底"], "DBA wants sharding done before year end"),
        A(["191"], "rows per shard ~1.91M"),
    ], ["30611207", "1912334", "0 problems", "6a0f3d8", "谢谢"], [])
    return s, g


SESSIONS = [s1, s2, s3, s4]
