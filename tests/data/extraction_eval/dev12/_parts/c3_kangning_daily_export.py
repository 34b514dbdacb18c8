"""c3 — kangning-booking, session 3 of 3, Chinese: 当日预约清单导出 + corrections of c1/c2."""
from _lib import Session

NAME = "c3_kangning_daily_export"
CWD = "/home/dev/work/kangning-booking"
ROOT = CWD

RECALL = [
    (38, "fact", "config", "放号任务 releaseSlotJob 每天 7:00 放第 7 天的号。"),
    (40, "fact", "convention", "JSON 处理统一走 common 的 JSONUtil（底层 fastjson2）。"),
]


def build():
    s = Session(NAME, CWD, "feat/daily-appt-export", "2026-05-20T01:50:00Z")
    s.snapshot()
    s.user("早，今天做前台要的「当日预约清单」导出，按科室分 sheet。先说两个变化：测试库迁了，现在连 mysql-test.kn.internal:3306，"
           "账号没变。然后号源表上周 DBA 改名成 t_schedule_slot 了，mapper 我改了一半，你帮我全局扫一下还有没有漏的")
    s.recall_attachment("UserPromptSubmit", RECALL)
    s.bash("grep -rn --include=*.xml --include=*.java --include=*.sql -w 't_slot' appt-service schedule-service his-bridge "
           "| grep -v db/migration", "查还在用旧表名的地方",
           "his-bridge/src/main/resources/mapper/SlotMapper.xml:12:    UPDATE t_slot SET remain = remain + #{delta} WHERE id = #{id}\n"
           "schedule-service/src/main/resources/mapper/ScheduleMapper.xml:31:    FROM t_slot s JOIN t_doctor d ON d.id = s.doctor_id\n"
           "schedule-service/src/main/java/com/kangning/schedule/report/SlotStatSql.java:9:    \"SELECT dept_id, SUM(remain) FROM t_slot GROUP BY dept_id\"")
    s.edit(ROOT + "/his-bridge/src/main/resources/mapper/SlotMapper.xml",
           "UPDATE t_slot SET remain = remain + #{delta}", "UPDATE t_schedule_slot SET remain = remain + #{delta}")
    s.edit(ROOT + "/schedule-service/src/main/resources/mapper/ScheduleMapper.xml",
           "FROM t_slot s JOIN t_doctor d", "FROM t_schedule_slot s JOIN t_doctor d")
    s.edit(ROOT + "/schedule-service/src/main/java/com/kangning/schedule/report/SlotStatSql.java",
           "SUM(remain) FROM t_slot GROUP BY", "SUM(remain) FROM t_schedule_slot GROUP BY")
    s.say("剩下 3 处都改成 t_schedule_slot 了（migration 目录里的历史脚本没动）。导出这块，Excel 有几种做法：\n"
          "1. EasyExcel：流式写，内存占用低，按科室分 sheet 很方便\n"
          "2. Apache POI 的 SXSSF 自己写\n3. 先导 CSV，前台用 Excel 打开（不支持多 sheet）\n\n用哪个？")
    s.user("1 就行", dt_s=45)
    s.write(ROOT + "/appt-service/src/main/java/com/kangning/appt/export/DailyApptExportService.java",
            "@Service\n@RequiredArgsConstructor\npublic class DailyApptExportService {\n    private final AppointmentMapper mapper;\n\n"
            "    public void export(LocalDate day, OutputStream out) {\n"
            "        try (ExcelWriter w = EasyExcel.write(out, DailyApptRow.class).build()) {\n"
            "            for (Dept dept : deptService.listOpen(day)) {\n"
            "                WriteSheet sheet = EasyExcel.writerSheet(dept.getName()).build();\n"
            "                long page = 1;\n                IPage<DailyApptRow> p;\n                do {\n"
            "                    p = mapper.selectDaily(new Page<>(page++, 500), day, dept.getId());\n"
            "                    w.write(p.getRecords(), sheet);\n                } while (p.getCurrent() < p.getPages());\n"
            "            }\n        }\n    }\n}\n")
    s.user("（POI 那次你不知道，去年导全院数据直接 OOM 把 pod 打挂了，所以别碰 POI）", dt_s=30)
    s.bash("mvn -q -pl appt-service test -Dtest=DailyApptExportServiceTest", "跑导出单测",
           "[ERROR] DailyApptExportServiceTest.exportsInPagesOf500:58 expected: <3> but was: <1>\n"
           "[ERROR] DailyApptExportServiceTest.exportsInPagesOf500:61 total expected: <1203> but was: <0>\n"
           "[ERROR] Tests run: 2, Failures: 2", is_error=True)
    s.say("`selectPage` 一次返回了全部 1203 行、total=0，说明分页根本没生效：appt-service 里没注册 MyBatis-Plus 的分页插件，"
          "`Page` 参数被忽略了。加一个 `MybatisPlusInterceptor` 配置，挂上 `PaginationInnerInterceptor(DbType.MYSQL)`。")
    s.write(ROOT + "/appt-service/src/main/java/com/kangning/appt/config/MybatisPlusConfig.java",
            "@Configuration\npublic class MybatisPlusConfig {\n    @Bean\n    public MybatisPlusInterceptor mybatisPlusInterceptor() {\n"
            "        MybatisPlusInterceptor i = new MybatisPlusInterceptor();\n"
            "        i.addInnerInterceptor(new PaginationInnerInterceptor(DbType.MYSQL));\n        return i;\n    }\n}\n")
    s.bash("mvn -q -pl appt-service test -Dtest=DailyApptExportServiceTest", "重跑导出单测",
           "[INFO] Tests run: 2, Failures: 0, Errors: 0, Skipped: 0\n[INFO] BUILD SUCCESS")
    s.user("ok 另外几件事一起说了：唐伟调去做医保对接了，his-bridge 以后找柯佳（小K）；放号时间也改了，医院要求早上 6:30 放，"
           "XXL-JOB 控制台我已经改成 0 30 6 * * ? 了，代码里 @XxlJob 旁边注释和 README 你同步一下；还有 JSON 不再用 fastjson2 了，"
           "统一换 Jackson，安全扫描那边过不了，这个 PR 里新写的代码别再引 fastjson2", dt_s=160)
    s.bash("grep -rn 'fastjson2\\|0 0 7 \\* \\* ?' --include=*.java --include=*.md --include=pom.xml appt-service schedule-service README.md",
           "找 fastjson2 引用和旧的放号时间",
           "appt-service/pom.xml:88:            <artifactId>fastjson2</artifactId>\n"
           "schedule-service/src/main/java/com/kangning/schedule/job/ReleaseSlotJob.java:17:    @XxlJob(\"releaseSlotJob\") // cron: 0 0 7 * * ?\n"
           "README.md:42:| releaseSlotJob | 0 0 7 * * ? | 每天放第 7 天的号 |")
    s.edit(ROOT + "/schedule-service/src/main/java/com/kangning/schedule/job/ReleaseSlotJob.java",
           "@XxlJob(\"releaseSlotJob\") // cron: 0 0 7 * * ?", "@XxlJob(\"releaseSlotJob\") // cron: 0 30 6 * * ?")
    s.edit(ROOT + "/README.md", "| releaseSlotJob | 0 0 7 * * ? | 每天放第 7 天的号 |",
           "| releaseSlotJob | 0 30 6 * * ? | 每天 6:30 放第 7 天的号 |")
    s.say("放号注释和 README 已同步成 `0 30 6 * * ?`。导出代码里没有直接用 fastjson2，DailyApptRow 的日期格式用 Jackson 的 "
          "`@JsonFormat`；appt-service/pom.xml 里 fastjson2 依赖还在，其他模块还有调用，这个 PR 先不删，要我另开一个 PR 全量替换吗？")
    s.user("先不用，下周统一搞。对了 Vivian 说就诊提醒改成提前一天推了，2 小时太赶，很多人来不及请假，nacos 里 remind.ahead-minutes "
           "已经改成 1440。今天食堂有小龙虾，先去排队了", dt_s=100)
    s.say("好的，记下了：提醒提前量现在是 1440 分钟。导出功能在 feat/daily-appt-export 上：EasyExcel 按科室分 sheet，每页 500 条，"
          "分页插件已注册。")
    s.stop_hook()
    s.title("当日预约清单导出")

    gold = {
        "session": NAME, "project": CWD, "order": 3, "language": "zh",
        "expected": [
            {"id": "n1", "layer": "fact", "kind": "config", "lang": "zh",
             "text": "测试库迁到了 mysql-test.kn.internal:3306，账号不变。",
             "must": ["mysql-test.kn.internal"], "supersedes": "c1_kangning_slot_oversell#k6"},
            {"id": "n2", "layer": "fact", "kind": "config", "lang": "zh",
             "text": "号源表已由 DBA 从 t_slot 改名为 t_schedule_slot，mapper/SQL 都要用新表名。",
             "must": ["t_schedule_slot"], "supersedes": "c1_kangning_slot_oversell#k4"},
            {"id": "n3", "layer": "decision", "kind": "decision", "lang": "zh",
             "text": "当日预约清单导出用 EasyExcel（按科室分 sheet、每页 500 条流式写），不用 Apache POI 或 CSV："
                     "去年 POI 导全院数据 OOM 把 pod 打挂过。",
             "must": ["EasyExcel"], "chosen": "EasyExcel", "over": ["POI"], "why": ["OOM"]},
            {"id": "n4", "layer": "experience", "kind": "fix", "lang": "zh",
             "text": "MyBatis-Plus selectPage 返回全部行且 total=0：appt-service 没注册分页插件，需要配置 MybatisPlusInterceptor "
                     "并添加 PaginationInnerInterceptor(DbType.MYSQL)。",
             "must": ["PaginationInnerInterceptor"]},
            {"id": "n5", "layer": "fact", "kind": "preference", "lang": "zh",
             "text": "his-bridge 现在找柯佳（小K）；唐伟已调去做医保对接。",
             "must": ["柯佳"], "supersedes": "c1_kangning_slot_oversell#k9"},
            {"id": "n6", "layer": "fact", "kind": "config", "lang": "zh",
             "text": "放号任务 releaseSlotJob 改为每天早上 6:30 执行，cron `0 30 6 * * ?`（医院要求）。",
             "must": ["0 30 6 * * ?"], "supersedes": "c1_kangning_slot_oversell#k10"},
            {"id": "n7", "layer": "fact", "kind": "convention", "lang": "zh",
             "text": "JSON 不再用 fastjson2，统一换成 Jackson（安全扫描过不了）；新代码不要再引 fastjson2。",
             "must": ["Jackson"], "supersedes": "c1_kangning_slot_oversell#k11"},
            {"id": "n8", "layer": "fact", "kind": "config", "lang": "zh",
             "text": "就诊提醒改为提前一天推：Nacos 里 remind.ahead-minutes 改成 1440（2 小时太赶，患者来不及请假）。",
             "must": ["1440"], "supersedes": "c2_kangning_visit_remind#m1"},
        ],
        "acceptable": [
            {"must": ["下周统一"], "note": "fastjson2 全量替换留到下周"},
        ],
        "forbidden": ["每天 7:00 放第 7 天的号", "统一走 common 的 JSONUtil", "小龙虾", "but was: <0>", "1203"],
        "secrets": [],
    }
    return s, gold
