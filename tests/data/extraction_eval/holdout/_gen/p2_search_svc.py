"""Project 2: 搜索服务 search-svc (Java / Spring Boot / Elasticsearch), talked about in Chinese."""
from common import Session, recall_block

P = "/home/dev/work/search-svc"

ES_DEV_PW = "Sv7!rq2LmOzT"
MQ_AK = "AKLT4f9QmZ2xV8rN1cJ7"
MQ_SK = "s8KdP2vX9qLm4Tz7Yw1BnR6cF3hJ0gUe"
MYSQL_PW = "Qw3rty!88prod"
ES_TEST_PW = "tE5t-9fLq!x2Wm"
GO_DSN = f"search_ro:{MYSQL_PW}@tcp(10.20.3.14:3306)/product"
DING_HOOK = "https://oapi.dingtalk.com/robot/send?access_token=6f1c0b9e2d7a4c3f8e5b1a0d9c2e7f4a6b3d8c1e0f9a2b5c7d4e1f0a3b6c9d2e"
JWT = ("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJvbmNhbGwtYm90Iiwicm9sZSI6ImFkbWluIiwiZXhwIjoxNzkxNDIwODAwfQ."
       "k3ZpQw8vN2xR7tL0mB5cY9hJ4dF6gS1aE8uI3oP7nKq")


def h2s1():
    s = Session("h2s1_search_svc_synonym", P, 1, "zh", "2026-09-02T02:31:07.000Z", "feature/synonym-fix", "2.1.301")
    s.title("排查同义词不生效")
    s.user("运营反馈同义词不生效：后台加了「手机壳,手机套,手机保护壳」，搜“手机套”还是出不来手机壳。先帮我本地复现下。"
           "本地依赖用 `docker compose -f deploy/dev/compose.yml up -d` 起，ES 映射在 9201（9200 被我本机另一个 ES 占了）",
           gap=0)
    s.bash("docker compose -f deploy/dev/compose.yml up -d", """[+] Running 4/4
 ✔ Network search-dev_default    Created                                   0.1s
 ✔ Container search-dev-mysql-1  Started                                   1.2s
 ✔ Container search-dev-es-1     Started                                   1.4s
 ✔ Container search-dev-kibana-1 Started                                   1.9s""", description="起本地依赖")
    s.bash("sleep 20; curl -s 'localhost:9201/_cat/aliases?v'", """{"error":{"root_cause":[{"type":"security_exception","reason":"missing authentication credentials for REST request [/_cat/aliases?v]","header":{"WWW-Authenticate":["Basic realm=\\"security\\" charset=\\"UTF-8\\"","ApiKey"]}}],"type":"security_exception","reason":"missing authentication credentials for REST request [/_cat/aliases?v]","header":{"WWW-Authenticate":["Basic realm=\\"security\\" charset=\\"UTF-8\\"","ApiKey"]}},"status":401}""",
           description="看下别名")
    s.say("本地 ES 开了安全认证，需要 elastic 用户的密码。方便给一下吗？或者告诉我从哪里读。")
    s.user(f"dev 的 elastic 密码是 {ES_DEV_PW} ，你 export 成 ES_PASSWORD 用就行，别写进任何文件。"
           "另外提醒下，ES 镜像是我们自己打的 registry.internal/search/es-ik:8.11.3，IK 插件版本必须跟 ES 一模一样，"
           "别顺手换成官方镜像，版本对不上节点直接起不来")
    s.bash(f"export ES_PASSWORD='{ES_DEV_PW}'; curl -s -u \"elastic:$ES_PASSWORD\" 'localhost:9201/_cat/aliases?v'",
           """alias          index       filter routing.index routing.search is_write_index
products_read  products_v3 -      -             -              -
products_write products_v3 -      -             -              true""", description="带认证看别名")
    s.read(P + "/search-core/src/main/resources/es/products_v3.settings.json", """{
  "settings": {
    "number_of_shards": 12,
    "analysis": {
      "filter": {
        "syn_graph": {
          "type": "synonym_graph",
          "synonyms_path": "analysis/synonyms.txt",
          "updateable": true
        }
      },
      "analyzer": {
        "ik_max": { "type": "custom", "tokenizer": "ik_max_word" },
        "ik_smart_syn": { "type": "custom", "tokenizer": "ik_smart", "filter": ["syn_graph"] }
      }
    }
  },
  "mappings": {
    "properties": {
      "title": { "type": "text", "analyzer": "ik_max", "search_analyzer": "ik_smart_syn" },""")
    s.bash("docker exec search-dev-es-1 grep 手机 /usr/share/elasticsearch/config/analysis/synonyms.txt; "
           "curl -s -u \"elastic:$ES_PASSWORD\" -H 'Content-Type: application/json' "
           "'localhost:9201/products_v3/_analyze' -d '{\"analyzer\":\"ik_smart_syn\",\"text\":\"手机套\"}'",
           """手机壳,手机套,手机保护壳
{"tokens":[{"token":"手机套","start_offset":0,"end_offset":3,"type":"CN_WORD","position":0}]}""",
           description="对比同义词文件和分词结果")
    s.think("The file on the node has the new line but the analyzer still emits only the original token. "
            "synonym_graph with updateable=true is loaded when the index opens; edits need _reload_search_analyzers.")
    s.say("文件里已经有这行了（SynonymExportJob 每 10 分钟从 MySQL 的 syn_dict 表导出），但 `ik_smart_syn` 分出来还是只有“手机套”一个词。"
          "`syn_graph` 是 `updateable: true` 的 search-time 同义词，文件只在索引打开时读一次，之后改文件不会自动生效。"
          "试一下 reload：")
    s.bash("curl -s -u \"elastic:$ES_PASSWORD\" -X POST 'localhost:9201/products_v3/_reload_search_analyzers'; echo; "
           "curl -s -u \"elastic:$ES_PASSWORD\" -H 'Content-Type: application/json' "
           "'localhost:9201/products_v3/_analyze' -d '{\"analyzer\":\"ik_smart_syn\",\"text\":\"手机套\"}'",
           """{"_shards":{"total":2,"successful":1,"failed":0},"reload_details":[{"index":"products_v3","reloaded_analyzers":["ik_smart_syn"],"reloaded_node_ids":["x2Lw0m9GQm6VtJb0cQ1h3A"]}]}
{"tokens":[{"token":"手机套","start_offset":0,"end_offset":3,"type":"SYNONYM","position":0},{"token":"手机壳","start_offset":0,"end_offset":3,"type":"SYNONYM","position":0},{"token":"手机保护壳","start_offset":0,"end_offset":3,"type":"SYNONYM","position":0}]}""",
           description="reload search analyzer 后再分词")
    s.bash("curl -s -u \"elastic:$ES_PASSWORD\" -X POST 'localhost:9201/products_v3/_cache/clear?request=true'; echo; "
           "curl -s -u \"elastic:$ES_PASSWORD\" 'localhost:9201/products_read/_count?q=title:手机套'",
           """{"_shards":{"total":2,"successful":1,"failed":0}}
{"count":1287,"_shards":{"total":12,"successful":12,"skipped":0,"failed":0}}""")
    s.say("复现并确认了：\n\n"
          "- **根因**：同义词在 `search_analyzer`（synonym_graph + synonyms_path）里，`synonyms.txt` 更新以后 analyzer 不会自己重新加载，"
          "必须调 `POST /products_v3/_reload_search_analyzers`。重启 search-svc 没用，它只是个客户端。\n"
          "- reload 之后还要清一下 request cache（`POST /products_v3/_cache/clear?request=true`），"
          "否则之前缓存的聚合/计数结果还是旧的。\n"
          "- 现在“手机套”能命中 1287 个商品，包括手机壳。")
    s.end_turn()

    s.user("那线上怎么办？总不能每次运营改完都找人手动 reload 吧")
    s.say("几个办法：\n\n"
          "1. **导出任务里自动 reload**：`SynonymExportJob` 推完文件后调 `_reload_search_analyzers` + 清 request cache。改动最小，"
          "但还是依赖把 synonyms.txt 推到每个节点。\n"
          "2. **换 ES 的 Synonyms API**（8.10+）：`PUT _synonyms/products-syn` 存在集群里，filter 用 `synonyms_set`，"
          "更新同义词集时会自动 reload 相关 analyzer，不用再往节点上放文件。\n"
          "3. 索引时同义词 + reindex：每次改都要重建，不现实。\n\n"
          "长期建议 2。")
    s.user("用 Synonyms API 吧。运维一直不肯给我们 ES 机器的 SSH，现在推 synonyms.txt 那套是靠一个 ansible 脚本硬撑的，"
           "每次还得找他们执行。线上也是 8.11，支持的。不过这个改动大，今天先止血：SynonymExportJob 推完文件以后自动调一下 reload 和清缓存")
    s.grep("class SynonymExportJob", P, """search-core/src/main/java/com/shop/search/synonym/SynonymExportJob.java:24:public class SynonymExportJob {""")
    s.read(P + "/search-core/src/main/java/com/shop/search/synonym/SynonymExportJob.java", """    @Scheduled(fixedDelay = 10, timeUnit = TimeUnit.MINUTES)
    public void export() {
        List<SynonymRule> rules = synDictMapper.selectEnabled();
        String content = SynonymFormatter.toSolrFormat(rules);
        pusher.pushToAllNodes("analysis/synonyms.txt", content);
        log.info("synonyms exported, rules={}", rules.size());
    }""", offset=31)
    s.edit(P + "/search-core/src/main/java/com/shop/search/synonym/SynonymExportJob.java",
           """        pusher.pushToAllNodes("analysis/synonyms.txt", content);
        log.info("synonyms exported, rules={}", rules.size());""",
           """        pusher.pushToAllNodes("analysis/synonyms.txt", content);
        // TODO 迁移到 Synonyms API 后删掉：文件更新后 analyzer 不会自动重新加载
        esAdmin.reloadSearchAnalyzers(IndexAliases.READ);
        esAdmin.clearRequestCache(IndexAliases.READ);
        log.info("synonyms exported and reloaded, rules={}", rules.size());""", snippet_start=35)
    s.bash("./mvnw -q -pl search-core test -Dtest=SynonymExportJobTest", """[INFO] -------------------------------------------------------
[INFO]  T E S T S
[INFO] -------------------------------------------------------
[INFO] Running com.shop.search.synonym.SynonymExportJobTest
[INFO] Tests run: 4, Failures: 0, Errors: 0, Skipped: 0, Time elapsed: 1.382 s -- in com.shop.search.synonym.SynonymExportJobTest
[INFO]
[INFO] Results:
[INFO]
[INFO] Tests run: 4, Failures: 0, Errors: 0, Skipped: 0
[INFO]
[INFO] BUILD SUCCESS""", description="跑 SynonymExportJob 单测", gap=40)
    s.say("单测过了。要不要跑一下集成测试？")
    s.user("跑。单测就是 `./mvnw -pl <模块> test`，集成测试加 `-Pit`：`./mvnw -pl search-core verify -Pit`，"
           "Testcontainers 会自己拉 es-ik 镜像，本机 docker 得开着")
    s.bash("./mvnw -pl search-core verify -Pit 2>&1 | grep -E 'Testcontainers|Tests run:|BUILD'", """[INFO] Testcontainers version: 1.20.1
[INFO] Image pull policy will be performed by: DefaultPullPolicy()
[INFO] Creating container for image: registry.internal/search/es-ik:8.11.3
[INFO] Tests run: 19, Failures: 0, Errors: 0, Skipped: 0, Time elapsed: 48.21 s -- in com.shop.search.it.ProductSearchIT
[INFO] Tests run: 4, Failures: 0, Errors: 0, Skipped: 0, Time elapsed: 9.87 s -- in com.shop.search.it.SynonymReloadIT
[INFO] Tests run: 23, Failures: 0, Errors: 0, Skipped: 0
[INFO] BUILD SUCCESS""", description="跑集成测试", gap=130)
    s.say("集成测试 23 个全过。改动：`SynonymExportJob` 每次导出完对 `products_read` 调 reload 并清 request cache，"
          "加了 TODO，迁到 Synonyms API 后删除。")
    s.user("好的谢谢，我老是记不住 reload 这个 API 叫啥")
    s.end_turn()

    s.expect("e1", "fact", "command", "zh",
             "本地依赖用 `docker compose -f deploy/dev/compose.yml up -d` 启动，ES 映射到 9201 端口（9200 被占）。",
             ["deploy/dev/compose.yml", "9201"])
    s.expect("e2", "fact", "constraint", "zh",
             "IK 分词插件版本必须和 ES 版本完全一致；dev 用自建镜像 registry.internal/search/es-ik:8.11.3，不要换官方镜像，否则节点起不来。",
             ["IK", "8.11.3"])
    s.expect("e3", "fact", "convention", "zh",
             "商品索引通过别名访问：products_read 读、products_write 写（is_write_index），当前都指向 products_v3。",
             ["products_read", "products_write"])
    s.expect("e4", "experience", "root_cause", "zh",
             "同义词不生效：同义词是 search_analyzer 里的 synonym_graph（synonyms_path），synonyms.txt 更新后 analyzer 不会自动重载，"
             "需要调 `POST /products_v3/_reload_search_analyzers`；重启 search-svc 没用。",
             ["_reload_search_analyzers"])
    s.expect("e5", "fact", "gotcha", "zh",
             "reload search analyzers 之后还要清 request cache（`_cache/clear?request=true`），否则缓存的结果还是旧的。",
             ["_cache/clear"])
    s.expect("e6", "experience", "workaround", "zh",
             "止血方案：SynonymExportJob 推完 synonyms.txt 后自动对 products_read 调 reload 并清 request cache（迁到 Synonyms API 后删除）。",
             ["SynonymExportJob"])
    s.expect("e7", "decision", "decision", "zh",
             "同义词管理改用 ES Synonyms API（8.10+，线上 8.11），不再用 ansible 往节点推 synonyms.txt，因为运维不给 ES 机器 SSH。",
             ["Synonyms API"], chosen="Synonyms API", over=["synonyms.txt"], why=["SSH"])
    s.expect("e8", "fact", "command", "zh",
             "单测 `./mvnw -pl <模块> test`；集成测试加 `-Pit`（`./mvnw -pl search-core verify -Pit`），用 Testcontainers，需要本机 Docker。",
             ["-Pit"])
    s.expect("e9", "fact", "config", "zh",
             "dev ES 开了认证：用户 elastic，密码放在环境变量 ES_PASSWORD，不能写进任何文件。",
             ["ES_PASSWORD"])
    s.acceptable(["syn_dict"], "SynonymExportJob 每 10 分钟把 syn_dict 导出成 synonyms.txt")
    s.acceptable(["12"], "products_v3 有 12 个主分片")
    s.forbid("记不住", "1287", "BUILD SUCCESS", "Tests run: 23", "x2Lw0m9GQm6VtJb0cQ1h3A")
    s.secret(ES_DEV_PW)
    return s


def h2s2():
    s = Session("h2s2_search_svc_sync", P, 2, "zh", "2026-09-08T06:15:44.000Z", "feature/incr-sync", "2.1.307")
    s.title("商品价格增量同步方案")
    s.user("商品改价以后搜索里的价格要等凌晨那次全量同步才更新，业务方已经忍不了了，想做增量同步。"
           "你先看下 search-sync 现在是怎么做的，给几个方案，先别写代码",
           reminder=recall_block([
               ("3", "fact", "6 days ago", "本地依赖用 docker compose -f deploy/dev/compose.yml up -d 启动，ES 映射到 9201。"),
               ("5", "fact", "6 days ago", "IK 插件版本必须与 ES 完全一致，dev 镜像 registry.internal/search/es-ik:8.11.3。"),
               ("8", "decision", "6 days ago", "同义词改用 ES Synonyms API，不再推 synonyms.txt（运维不给 SSH）。"),
           ]), gap=0)
    s.grep("@Scheduled", P + "/search-sync", """search-sync/src/main/java/com/shop/search/sync/FullSyncJob.java:28:    @Scheduled(cron = "0 0 2 * * ?")""")
    s.read(P + "/search-sync/src/main/java/com/shop/search/sync/FullSyncJob.java", """    @Scheduled(cron = "0 0 2 * * ?")
    public void run() {
        long lastId = 0;
        while (true) {
            List<ProductRow> rows = productMapper.scanOnSale(lastId, PAGE_SIZE); // PAGE_SIZE = 2000
            if (rows.isEmpty()) break;
            BulkRequest.Builder bulk = new BulkRequest.Builder();
            rows.forEach(r -> bulk.operations(op -> op.index(i -> i
                    .index(IndexAliases.WRITE).id(r.getId().toString()).document(ProductDoc.from(r)))));
            esClient.bulk(bulk.build());
            lastId = rows.get(rows.size() - 1).getId();
        }
    }""", offset=28)
    s.say("现状：只有 `FullSyncJob`，每天凌晨 2 点（`0 0 2 * * ?`）按 id 每页 2000 扫在售商品，bulk 写到 `products_write`。"
          "两次全量之间的改动都看不到。\n\n几个增量方案：\n\n"
          "1. **定时扫 updated_at**：每分钟查 `updated_at > 上次水位`。最简单，但删除/下架要靠状态字段，而且给商品库加了持续的查询压力。\n"
          "2. **Canal 订阅 binlog**：实时、对商品服务零侵入。需要 DBA 给一个有 REPLICATION SLAVE/CLIENT 权限的账号，还要部署 Canal。\n"
          "3. **订阅商品服务的 MQ 消息**：依赖对方在所有改动点都发消息。\n\n"
          "如果能拿到 binlog 权限，我倾向 2。")
    s.user("binlog 那条路走不通，DBA 不给开 REPLICATION 权限，订单组去年申请了两个月都没批。商品服务那边改价、上下架本来就会发 "
           "RocketMQ 的 PRODUCT_CHANGED 消息，咱们直接订阅就行")
    s.say("那就订阅 `PRODUCT_CHANGED`。建议消费时只用消息里的 `productId`，回查 MySQL 拿最新数据再写 ES，"
          "不直接用消息体里的价格等字段：消息可能乱序、重复，回查拿到的永远是当前状态，天然幂等，也不用跟商品服务对齐消息体格式。")
    s.user("对，就这么办。消费组名按我们的规范是 `应用名-用途`，就叫 search-svc-product-sync")
    s.bash("cat .env", f"""# local overrides, DO NOT COMMIT
SPRING_PROFILES_ACTIVE=test
ROCKETMQ_NAMESRV=10.20.5.31:9876;10.20.5.32:9876
ROCKETMQ_ACCESS_KEY={MQ_AK}
ROCKETMQ_SECRET_KEY={MQ_SK}
MYSQL_URL=jdbc:mysql://10.20.3.14:3306/product?useSSL=false&serverTimezone=Asia/Shanghai
MYSQL_USER=search_ro
MYSQL_PASSWORD={MYSQL_PW}
ES_URIS=http://es-test.internal:9200
ES_PASSWORD={ES_TEST_PW}""", description="看下 RocketMQ 连接配置")
    s.say("RocketMQ 的 namesrv 和 AK/SK 已经在 `.env` 里了（注意这个文件有明文密钥，确认一下它在 .gitignore 里）。下面写消费者。")
    s.write(P + "/search-sync/src/main/java/com/shop/search/sync/ProductChangedConsumer.java", """package com.shop.search.sync;

@Slf4j
@Component
@RequiredArgsConstructor
@RocketMQMessageListener(topic = "PRODUCT_CHANGED", consumerGroup = "search-svc-product-sync",
        maxReconsumeTimes = 16)
public class ProductChangedConsumer implements RocketMQListener<ProductChangedMsg> {

    private final ProductMapper productMapper;
    private final ElasticsearchClient esClient;

    @Override
    public void onMessage(ProductChangedMsg msg) {
        // 只信任 productId，回查拿最新状态
        ProductRow row = productMapper.selectById(msg.getProductId());
        if (row == null || !row.isOnSale()) {
            esDelete(msg.getProductId());
        } else {
            esIndex(ProductDoc.from(row));
        }
    }
}
""")
    s.say("`maxReconsumeTimes = 16` 是 RocketMQ 的默认值，超过后消息进死信队列 `%DLQ%search-svc-product-sync`，需要的话可以对死信单独告警。")
    s.bash("./mvnw -q -pl search-sync test", """[INFO] Tests run: 31, Failures: 0, Errors: 0, Skipped: 0
[INFO] BUILD SUCCESS""", gap=35)
    s.say("消费者写好了，search-sync 单测通过。")
    s.end_turn()

    s.user("部署到测试环境压了一下批量改价（5 万条），日志里一堆这个：\n```\n"
           "co.elastic.clients.elasticsearch._types.ElasticsearchException: [es/index] failed: [es_rejected_execution_exception] "
           "rejected execution of org.elasticsearch.action.support.replication.TransportWriteAction$1/WrappedActionListener@6b1e2f4a "
           "on EsThreadPoolExecutor[name = es-test-2/write, queue capacity = 10000, org.elasticsearch.common.util.concurrent.EsThreadPoolExecutor@3c9a[Running, "
           "pool size = 8, active threads = 8, queued tasks = 10000, completed tasks = 88123401]]\n```", gap=5400)
    s.say("现在是一条消息一个单独的 index 请求，5 万条改价几秒内涌进来，就是几万个小写请求，节点 write 线程池队列（10000）被打满，"
          "ES 直接拒绝（429）。改成用 Java client 的 `BulkIngester` 聚合：每 500 条或 1 秒 flush 一次，最多 2 个并发 bulk，"
          "遇到 429 指数退避重试。")
    s.edit(P + "/search-sync/src/main/java/com/shop/search/sync/ProductChangedConsumer.java",
           """            esIndex(ProductDoc.from(row));""",
           """            ingester.add(op -> op.index(i -> i.index(IndexAliases.WRITE)
                    .id(row.getId().toString()).document(ProductDoc.from(row))));""", snippet_start=22)
    s.edit(P + "/search-sync/src/main/java/com/shop/search/sync/EsConfig.java",
           """    // bulk ingester""",
           """    @Bean(destroyMethod = "close")
    BulkIngester<Void> productIngester(ElasticsearchClient client) {
        return BulkIngester.of(b -> b.client(client)
                .maxOperations(500)
                .flushInterval(1, TimeUnit.SECONDS)
                .maxConcurrentRequests(2)
                .listener(new RetryOn429Listener(Backoff.exponential(200, 5))));
    }""", snippet_start=41)
    s.say("改好了：消费者里的单条 index 换成往 `productIngester` 里 add，bulk 由 ingester 统一发。")
    s.user("还有个问题，测了下改价以后 ES 里还是旧价格，但过几秒手动再触发一次同步就对了")
    s.think("Stale read right after commit, correct a few seconds later: classic replica lag. Check which datasource the mapper uses.")
    s.grep("@DS", P + "/search-sync/src", """search-sync/src/main/java/com/shop/search/sync/mapper/ProductMapper.java:14:@DS("slave")""")
    s.say("商品服务是事务提交后马上发消息的，我们回查用的 `ProductMapper` 类上标的是 `@DS(\"slave\")`，走从库。"
          "从库同步一般落后几百毫秒到几秒，消息到的时候那次改价还没同步过来，查到的就是改价前的数据；过几秒再查就对了。"
          "增量同步回查这一步单独加一个走主库的方法，`@DS(\"master\")`，全量同步继续走从库。")
    s.edit(P + "/search-sync/src/main/java/com/shop/search/sync/mapper/ProductMapper.java",
           """    ProductRow selectById(Long id);""",
           """    ProductRow selectById(Long id);

    /** 增量同步回查专用：必须读主库，从库有延迟 */
    @DS("master")
    @Select("SELECT * FROM product WHERE id = #{id}")
    ProductRow selectByIdFromMaster(Long id);""", snippet_start=20)
    s.say("加了 `selectByIdFromMaster`，`ProductChangedConsumer` 回查改用它。")
    s.user(f"好。顺便跑下 tools/diffcheck 对下账，DSN 用 search_ro 那个：{GO_DSN}")
    s.bash(f"cd tools/diffcheck && go run . -dsn '{GO_DSN}' -es http://es-test.internal:9200 -index products_read",
           """go: downloading github.com/go-sql-driver/mysql v1.8.1
go: downloading github.com/elastic/go-elasticsearch/v8 v8.11.1
2026/09/08 16:02:11 mysql on_sale=182331 es=182329 diff=2
2026/09/08 16:02:11 missing in es: [88120311 88120977]""", description="MySQL 和 ES 对账", gap=25)
    s.say("对账结果：MySQL 在售 182331，ES 182329，差 2 个（88120311、88120977）。")
    s.user("这俩应该是压测前就有的，先不管。今天就到这吧")
    s.end_turn()

    s.expect("e1", "fact", "config", "zh",
             "全量同步 FullSyncJob 每天凌晨 2 点（cron `0 0 2 * * ?`）按 id 每页 2000 扫在售商品，bulk 写入 products_write。",
             ["FullSyncJob"])
    s.expect("e2", "decision", "decision", "zh",
             "增量同步订阅商品服务的 RocketMQ 消息 PRODUCT_CHANGED，而不是用 Canal 订阅 binlog，因为 DBA 不给开 REPLICATION 权限。",
             ["PRODUCT_CHANGED"], chosen="PRODUCT_CHANGED", over=["Canal"], why=["DBA"])
    s.expect("e3", "fact", "convention", "zh",
             "增量同步消费者只使用消息里的 productId，回查 MySQL 取最新数据再写 ES，不用消息体字段（消息会乱序、重复，回查天然幂等）。",
             ["productId"])
    s.expect("e4", "fact", "convention", "zh",
             "RocketMQ 消费组命名规范是 `应用名-用途`，增量同步的消费组叫 search-svc-product-sync。",
             ["search-svc-product-sync"])
    s.expect("e5", "fact", "config", "zh",
             "ProductChangedConsumer 的 maxReconsumeTimes 为 16（RocketMQ 默认），超过后进死信队列 %DLQ%search-svc-product-sync。",
             ["16", "DLQ"])
    s.expect("e6", "experience", "root_cause", "zh",
             "批量改价压测时一条消息一个 index 请求打满 ES write 线程池队列，报 es_rejected_execution_exception；"
             "改用 BulkIngester 聚合（500 条或 1 秒 flush、最多 2 个并发、429 指数退避重试）。",
             ["rejected", "BulkIngester"])
    s.expect("e7", "experience", "root_cause", "zh",
             "改价后 ES 仍是旧价格：回查走从库（ProductMapper 上 @DS(\"slave\")），从库有延迟；增量同步回查改用 @DS(\"master\") 读主库，全量同步仍走从库。",
             ["master"])
    s.expect("e8", "fact", "command", "zh",
             "MySQL 与 ES 对账用 Go 工具 tools/diffcheck：`go run . -dsn <search_ro DSN> -es <ES 地址> -index products_read`。",
             ["diffcheck"])
    s.acceptable(["ROCKETMQ_NAMESRV"], ".env 里有 RocketMQ namesrv 和 AK/SK 配置（不含值）")
    s.acceptable(["search_ro"], "对账/全量读库用只读账号 search_ro")
    s.forbid("9201", "deploy/dev/compose.yml", "es-ik", "Synonyms API", "182331", "182329", "88120311",
             "今天就到这", "Tests run: 31")
    s.secret(MQ_AK, MQ_SK, MYSQL_PW, ES_TEST_PW, GO_DSN)
    return s


def h2s3():
    s = Session("h2s3_search_svc_ranking", P, 3, "zh", "2026-09-15T03:02:19.000Z", "feature/rank-sales", "2.1.313")
    s.title("销量加权排序 + 下架商品仍被搜出")
    s.user("先同步两件事：\n1）本地环境改了，compose 文件挪到 deploy/local/docker-compose.yml，ES 端口改回 9200 了（我把本机那个 ES 卸了）\n"
           "2）以后跑测试统一用 make：`make test` 单测，`make it` 集成测试，别再直接敲 mvnw 了，Makefile 里带了 -T 1C 和一堆 -D 参数\n\n"
           "然后正事：搜“手机壳”销量高的排不上来，运营想要按销量加权。另外运营说偶尔还能搜到已下架的商品，一起看下", gap=0)
    s.read(P + "/search-core/src/main/java/com/shop/search/query/ProductQueryBuilder.java", """    public Query build(SearchParam p) {
        return Query.of(q -> q.bool(b -> b
                .must(m -> m.multiMatch(mm -> mm.query(p.getKeyword())
                        .fields("title^3", "brand^2", "category_path")))
                .should(s -> s.term(t -> t.field("status").value("ON_SALE")))
                .should(s -> s.term(t -> t.field("is_self_operated").value(true).boost(2.0f)))
        ));
    }""", offset=40)
    s.think("status=ON_SALE is in should, which only affects scoring, so off-sale docs still match via the must clause. "
            "That's the off-sale bug. For sales weighting: function_score with field_value_factor.")
    s.say("先看下架的问题。`ProductQueryBuilder.build()` 里 `status=ON_SALE` 放在 `bool.should`，而 bool 里已经有 `must`，"
          "这时候 should 只影响打分不影响命中……\n\n然后是销量加权，大概的写法是这样：\n\n```java\n"
          "return Query.of(q -> q.functionScore(fs -> fs\n        .query(base)\n        .functions(f -> f.fieldValueFactor(v -> v\n"
          "                .field(\"sales\")\n                .modifier(FieldValueFactorModifier.Log1p)\n                .factor(1.2)\n                .missing(0.0)))\n"
          "        .boostMode(FunctionBoostMode.Sum)\n        .scoreMode(FunctionScoreMode.Sum)\n        .maxBoost(10.0)\n        ...")
    s.interrupt()
    s.user("停，太长了。以后回答先给结论，再讲细节，别一上来就贴一大段代码")
    s.say("结论：\n1. **下架商品能搜到**：`status=ON_SALE` 写在 `bool.should` 里，只加分不过滤，挪到 `bool.filter`。\n"
          "2. **销量加权**：用 `function_score`，两种做法：`field_value_factor`（按字段值取 log 加权）或 `script_score`（painless 脚本，灵活但慢）。\n\n"
          "要我先改第 1 个吗？")
    s.user("下架那个直接改。销量：上次大促压测 script_score 那版 p99 从 80ms 干到 300ms，脚本打分别考虑了。就 field_value_factor，"
           "modifier 用 log1p，factor 1.2，boost_mode 用 sum。另外以后新的查询都写成 search template（mustache），放 "
           "search-core/src/main/resources/templates/ 下面，别在 Java 里拼 DSL 了")
    s.edit(P + "/search-core/src/main/java/com/shop/search/query/ProductQueryBuilder.java",
           """                .should(s -> s.term(t -> t.field("status").value("ON_SALE")))""",
           """                .filter(f -> f.term(t -> t.field("status").value("ON_SALE")))""", snippet_start=44)
    s.bash("curl -s -u \"elastic:$ES_PASSWORD\" 'localhost:9200/products_read/_mapping/field/sales*?pretty'", """{
  "products_v3" : {
    "mappings" : {
      "sales" : {
        "full_name" : "sales",
        "mapping" : {
          "sales" : {
            "type" : "keyword"
          }
        }
      }
    }
  }
}""", description="看 sales 字段类型")
    s.bash("curl -s -u \"elastic:$ES_PASSWORD\" -X PUT -H 'Content-Type: application/json' 'localhost:9200/products_write/_mapping' "
           "-d '{\"properties\":{\"sales\":{\"type\":\"long\"}}}'",
           """{"error":{"root_cause":[{"type":"illegal_argument_exception","reason":"mapper [sales] cannot be changed from type [keyword] to [long]"}],"type":"illegal_argument_exception","reason":"mapper [sales] cannot be changed from type [keyword] to [long]"},"status":400}""",
           description="尝试把 sales 改成 long")
    s.say("`sales` 是 keyword，field_value_factor 要数值字段；已有字段的类型改不了。两个选择：加一个新的数值字段（比如 `sales_30d`，long），"
          "或者建 products_v4 然后 reindex。")
    s.user("加新字段。记住这个规矩：mapping 只能加字段，不能改类型；真要改类型就建 products_v4，reindex 完再切 products_read/products_write 别名。"
           "新字段要同时加到 products_v3.settings.json 和 ProductDoc 里，不然下次重建索引就丢了。sales_30d 的数据是数仓每天 T+1 算好写在 "
           "MySQL 的 product_stats 表里，同步的时候 join 进来")
    s.bash("curl -s -u \"elastic:$ES_PASSWORD\" -X PUT -H 'Content-Type: application/json' 'localhost:9200/products_write/_mapping' "
           "-d '{\"properties\":{\"sales_30d\":{\"type\":\"long\"}}}'", """{"acknowledged":true}""")
    s.edit(P + "/search-core/src/main/resources/es/products_v3.settings.json",
           """      "title": { "type": "text", "analyzer": "ik_max", "search_analyzer": "ik_smart_syn" },""",
           """      "title": { "type": "text", "analyzer": "ik_max", "search_analyzer": "ik_smart_syn" },
      "sales_30d": { "type": "long" },""", snippet_start=19)
    s.edit(P + "/search-core/src/main/java/com/shop/search/doc/ProductDoc.java",
           """    private String sales;""", """    private String sales;
    /** 近 30 天销量，来自 product_stats（数仓 T+1） */
    private Long sales30d;""", snippet_start=31)
    s.write(P + "/search-core/src/main/resources/templates/product_search.mustache", """{
  "query": {
    "function_score": {
      "query": {
        "bool": {
          "must": [{ "multi_match": { "query": "{{keyword}}", "fields": ["title^3", "brand^2", "category_path"] } }],
          "filter": [{ "term": { "status": "ON_SALE" } }]
        }
      },
      "functions": [
        { "field_value_factor": { "field": "sales_30d", "modifier": "log1p", "factor": 1.2, "missing": 0 } }
      ],
      "boost_mode": "sum"
    }
  },
  "from": {{from}}, "size": {{size}}
}
""")
    s.bash("make test", """mvn -T 1C -q -Dspring.profiles.active=test -Dsurefire.printSummary=true test
[INFO] Tests run: 112, Failures: 0, Errors: 0, Skipped: 2
[INFO] BUILD SUCCESS
[INFO] Total time:  38.114 s (Wall Clock)""", gap=50)
    s.say("结论：两件都改完了，`make test` 通过。\n\n细节：\n- 下架过滤挪到了 `bool.filter`\n"
          "- 新字段 `sales_30d`(long) 已加到本地索引 mapping、`products_v3.settings.json` 和 `ProductDoc`\n"
          "- 新查询写在 `templates/product_search.mustache`：function_score + field_value_factor(sales_30d, log1p, factor 1.2)，boost_mode=sum\n"
          "- 还没做：同步时 join `product_stats` 填 `sales_30d`，要我接着改 FullSyncJob 和增量消费者吗？")
    s.user("下次吧")
    s.end_turn()

    s.expect("e1", "fact", "command", "zh",
             "本地依赖的 compose 文件改为 deploy/local/docker-compose.yml，ES 端口改回 9200。",
             ["deploy/local/docker-compose.yml", "9200"], supersedes="h2s1_search_svc_synonym#e1")
    s.expect("e2", "fact", "command", "zh",
             "测试统一用 make：`make test` 单测，`make it` 集成测试，不要直接调 mvnw（Makefile 带 -T 1C 和 -D 参数）。",
             ["make test", "make it"], supersedes="h2s1_search_svc_synonym#e8")
    s.expect("e3", "fact", "preference", "zh",
             "用户希望回答先给结论再讲细节，不要一上来贴大段代码。", ["结论"])
    s.expect("e4", "experience", "root_cause", "zh",
             "已下架商品能被搜到：status=ON_SALE 条件写在 bool.should 里只加分不过滤，已挪到 bool.filter。",
             ["ON_SALE", "filter"])
    s.expect("e5", "decision", "decision", "zh",
             "销量加权用 function_score + field_value_factor，不用 script_score，因为大促压测时 script_score 让 p99 从 80ms 涨到 300ms。",
             ["field_value_factor"], chosen="field_value_factor", over=["script_score"], why=["p99"])
    s.expect("e6", "fact", "constraint", "zh",
             "ES mapping 只能加字段不能改类型（改类型报 illegal_argument_exception）；要改类型需新建 products_v4，reindex 后切换 "
             "products_read/products_write 别名；新字段要同时加到 products_v3.settings.json 和 ProductDoc。",
             ["mapping", "reindex"])
    s.expect("e7", "fact", "config", "zh",
             "销量加权参数：字段 sales_30d（long），modifier log1p，factor 1.2，boost_mode sum。",
             ["sales_30d", "log1p"])
    s.expect("e8", "fact", "convention", "zh",
             "新的查询写成 search template（mustache），放在 search-core/src/main/resources/templates/，不要在 Java 里拼 DSL。",
             ["mustache"])
    s.expect("e9", "fact", "config", "zh",
             "sales_30d 来自数仓每天 T+1 写入 MySQL 的 product_stats 表，同步时 join 进来。", ["product_stats"])
    s.acceptable(["sales", "keyword"], "旧的 sales 字段是 keyword，不能用于 field_value_factor")
    s.forbid("Tests run: 112", "38.114", "下次吧", "太长了")
    return s


def h2s4():
    s = Session("h2s4_search_svc_oncall", P, 4, "zh", "2026-09-29T13:40:51.000Z", "hotfix/deep-paging", "2.1.322")
    s.title("线上 p99 飙高：爬虫深分页")
    s.user("线上 search-svc p99 飙到 2s 多，钉钉群一直在刷告警。先帮我看下是什么请求慢", gap=0)
    s.mcp_search("search-svc 线上 p99 慢查询 排查", [
        {"id": "27", "content": "增量同步：消费 RocketMQ PRODUCT_CHANGED，只用 productId 回查主库后写 ES。"},
        {"id": "33", "content": "销量加权用 function_score + field_value_factor(sales_30d, log1p, factor 1.2)，不用 script_score（p99 问题）。"},
        {"id": "12", "content": "dev ES 需要认证：用户 elastic，密码从环境变量 ES_PASSWORD 读。"},
    ])
    s.say("记忆里没有线上排查相关的内容，直接看日志。")
    s.bash("kubectl -n search logs deploy/search-svc --since=30m | grep 'took=' | sort -t= -k2 -nr | head",
           """Error from server (NotFound): namespaces "search" not found""", is_error=True,
           description="看最近 30 分钟的慢请求")
    s.bash("kubectl config get-contexts", """CURRENT   NAME             CLUSTER          AUTHINFO         NAMESPACE
*         kind-dev         kind-dev         kind-dev
          prod-sh-search   prod-sh-search   oidc-oncall      search
          test-sh-search   test-sh-search   oidc-oncall      search""")
    s.bash("kubectl --context prod-sh-search -n search logs deploy/search-svc --since=30m | grep 'took=' "
           "| awk '$NF ~ /took=/' | sort -t= -k2 -nr | head -8", """2026-09-29 21:38:02.114 WARN  [http-nio-8080-exec-91] c.s.s.api.SearchController - slow search q=手机壳 page=481 size=20 ua=python-requests/2.31.0 took=2874
2026-09-29 21:37:55.530 WARN  [http-nio-8080-exec-14] c.s.s.api.SearchController - slow search q=手机壳 page=477 size=20 ua=python-requests/2.31.0 took=2791
2026-09-29 21:39:11.006 WARN  [http-nio-8080-exec-63] c.s.s.api.SearchController - slow search q=数据线 page=412 size=20 ua=python-requests/2.31.0 took=2650
2026-09-29 21:36:40.871 WARN  [http-nio-8080-exec-7] c.s.s.api.SearchController - slow search q=数据线 page=399 size=20 ua=python-requests/2.31.0 took=2533
2026-09-29 21:35:19.442 WARN  [http-nio-8080-exec-40] c.s.s.api.SearchController - slow search q=充电宝 page=356 size=20 ua=python-requests/2.31.0 took=2302
2026-09-29 21:39:30.905 WARN  [http-nio-8080-exec-22] c.s.s.api.SearchController - slow search q=耳机 page=330 size=20 ua=python-requests/2.31.0 took=2119
2026-09-29 21:38:47.318 ERROR [http-nio-8080-exec-5] c.s.s.api.SearchController - search failed: Result window is too large, from + size must be less than or equal to: [10000] but was [10020]
2026-09-29 21:34:02.650 WARN  [http-nio-8080-exec-88] c.s.s.api.SearchController - slow search q=手机壳 page=318 size=20 ua=python-requests/2.31.0 took=1987""",
           description="用 prod context 重新看慢请求")
    s.say("慢请求基本都是深分页：page 300～500，size 20，UA 全是 python-requests，明显是爬虫在翻页。\n\n"
          "ES 用 from+size 分页时，每个分片都要取出前 from+size 条，再在协调节点归并排序。products 有 12 个主分片，page 480 就是每个分片 "
          "9600 条、协调节点要排 11 万多条，这就是 2s 的来源；超过 10000（`index.max_result_window` 默认值）的直接报 Result window is too large。")
    s.user("有人建议直接把 index.max_result_window 调到 10 万，省得报错，你觉得呢")
    s.say("不建议。调大只是把报错变成更慢的请求，而且深分页的开销都压在协调节点上，爬虫一并发起来协调节点 heap 顶不住，会拖累所有正常搜索。\n\n"
          "建议：\n1. 普通搜索限制最大页数（比如 50 页，from+size ≤ 1000），超过直接返回 400；正常用户几乎不会翻到 50 页以后。\n"
          "2. 确实需要遍历的场景（导出接口）用 PIT + `search_after`，没有深度限制，开销也是常数级的。")
    s.user("行，限 50 页，做成 Apollo 配置 search.paging.max-page，默认 50，超过返回 400；导出接口改 search_after。网关那边我让他们按 UA 限流")
    s.grep("getPage\\(\\)", P + "/search-api/src", """search-api/src/main/java/com/shop/search/api/SearchController.java:57:        int from = (param.getPage() - 1) * param.getSize();""")
    s.edit(P + "/search-api/src/main/java/com/shop/search/api/SearchController.java",
           """        int from = (param.getPage() - 1) * param.getSize();""",
           """        if (param.getPage() > pagingProps.getMaxPage()) {
            throw new BizException(HttpStatus.BAD_REQUEST, "PAGE_TOO_DEEP",
                    "page must be <= " + pagingProps.getMaxPage());
        }
        int from = (param.getPage() - 1) * param.getSize();""", snippet_start=57)
    s.edit(P + "/search-api/src/main/java/com/shop/search/api/PagingProperties.java",
           """@ConfigurationProperties(prefix = "search.paging")
public class PagingProperties {""", """@ConfigurationProperties(prefix = "search.paging")
public class PagingProperties {
    /** Apollo: search.paging.max-page */
    private int maxPage = 50;""", snippet_start=9)
    s.edit(P + "/search-api/src/main/java/com/shop/search/export/ExportService.java",
           """        for (int page = 1; ; page++) {
            SearchResponse<ProductDoc> resp = search(keyword, page, 500);""",
           """        String pit = openPit(IndexAliases.READ, "1m");
        List<FieldValue> after = null;
        while (true) {
            SearchResponse<ProductDoc> resp = searchAfter(pit, keyword, after, 500); // sort: _score desc, id asc""",
           snippet_start=33)
    s.bash("make test", """mvn -T 1C -q -Dspring.profiles.active=test -Dsurefire.printSummary=true test
[INFO] Tests run: 118, Failures: 0, Errors: 0, Skipped: 2
[INFO] BUILD SUCCESS""", gap=45)
    s.bash(f"curl -s -H 'Authorization: Bearer {JWT}' 'https://search-staging.internal/api/search?q=%E6%89%8B%E6%9C%BA%E5%A3%B3&page=60'",
           """{"code":"PAGE_TOO_DEEP","message":"page must be <= 50","traceId":"5e0b8c1d2f7a4e93"}""",
           description="staging 验证超过 50 页返回 400")
    s.say("结论：超过 50 页现在返回 400 `PAGE_TOO_DEEP`（staging 已验证），导出改成了 PIT + search_after，`make test` 通过。")
    s.end_turn()

    s.user(f"告警也太吵了。阈值现在 800ms，改成 1500ms、持续 3 分钟再报。webhook 配在 Apollo 的 search.alert.webhook，值是 {DING_HOOK} "
           "你确认下代码里读的是不是这个 key")
    s.grep("search.alert", P + "/search-api/src", """search-api/src/main/java/com/shop/search/alert/AlertProperties.java:8:@ConfigurationProperties(prefix = "search.alert")
search-api/src/main/java/com/shop/search/alert/AlertProperties.java:11:    private String webhook;
search-api/src/main/java/com/shop/search/alert/AlertProperties.java:13:    private long p99ThresholdMs = 800;""")
    s.edit(P + "/search-api/src/main/java/com/shop/search/alert/AlertProperties.java",
           """    private long p99ThresholdMs = 800;""", """    private long p99ThresholdMs = 1500;
    /** 连续超过阈值多少分钟才告警 */
    private int sustainMinutes = 3;""", snippet_start=13)
    s.say("结论：代码读的就是 `search.alert.webhook`（`AlertProperties`，prefix `search.alert`）。\n\n细节：\n"
          "- 阈值 key 是 `search.alert.p99-threshold-ms`，Apollo 里改成 1500 即可，代码默认值我也改成了 1500\n"
          "- 原来没有“持续 N 分钟”的逻辑，新加了 `search.alert.sustain-minutes`，默认 3")
    s.user("ok。另外同步那个消费者，maxReconsumeTimes 我们上周已经改成 5 了，16 次太久，一条毒消息能堵半天。你看下代码里是不是 5")
    s.grep("maxReconsumeTimes", P + "/search-sync/src", """search-sync/src/main/java/com/shop/search/sync/ProductChangedConsumer.java:7:        maxReconsumeTimes = 5)""")
    s.say("是 5，`ProductChangedConsumer` 里已经是 `maxReconsumeTimes = 5`。")
    s.end_turn()

    s.expect("e1", "fact", "config", "zh",
             "线上 k8s 用 context prod-sh-search、namespace search（本机默认 context 是 kind-dev，要显式指定 --context）。",
             ["prod-sh-search"])
    s.expect("e2", "experience", "root_cause", "zh",
             "线上 p99 飙到 2s：爬虫（python-requests）深分页到 page 300～500，from+size 分页每个分片都要取 from+size 条再在协调节点归并；"
             "超过 10000 报 Result window is too large。", ["爬虫"])
    s.expect("e3", "decision", "decision", "zh",
             "不调大 index.max_result_window；普通搜索限制最大页数，导出接口改用 PIT + search_after，因为深分页开销压在协调节点 heap 上。",
             ["search_after"], chosen="search_after", over=["max_result_window"], why=["heap"])
    s.expect("e4", "fact", "config", "zh",
             "普通搜索最多 50 页，Apollo 配置 search.paging.max-page（默认 50），超过返回 400 PAGE_TOO_DEEP。",
             ["max-page", "50"])
    s.expect("e5", "fact", "config", "zh",
             "告警钉钉机器人 webhook 配在 Apollo 的 search.alert.webhook（AlertProperties，prefix search.alert）。",
             ["search.alert.webhook"])
    s.expect("e6", "fact", "config", "zh",
             "p99 告警阈值改为 1500ms（search.alert.p99-threshold-ms），连续 3 分钟才告警（search.alert.sustain-minutes）。",
             ["1500"])
    s.expect("e7", "fact", "config", "zh",
             "增量同步消费者 maxReconsumeTimes 已改为 5（16 次太久，毒消息会堵住消费）。",
             ["maxReconsumeTimes", "5"], supersedes="h2s2_search_svc_sync#e5")
    s.acceptable(["PIT"], "导出接口用 PIT + search_after")
    s.acceptable(["12"], "products 有 12 个主分片")
    s.acceptable(["UA"], "网关按 UA 限流爬虫")
    s.forbid("field_value_factor", "ES_PASSWORD", "script_score", "page=481", "2874", "Tests run: 118", "5e0b8c1d2f7a4e93")
    s.secret(DING_HOOK, JWT)
    return s


SESSIONS = [h2s1, h2s2, h2s3, h2s4]
