from cc import Session, make_jwt
from common import A, E, gold

CWD = "/home/dev/work/console-web"
QA_PW = "Qa@123456"
SID = "s%3A7Qd1kXv9RzP0mW3tLc8yHb2N.Fq4uJ6sVx0aZeK1oTg9rYw5pDl7iMnB3cE8hS2fU"
JWT = make_jwt({"sub": "10023", "name": "qa01", "tenant": "acme", "roles": ["billing:read", "billing:write"],
                "iat": 1757380000, "exp": 1757466400}, b"console-dev-signing-key-not-real")
FEISHU = "https://open.feishu.cn/open-apis/bot/v2/hook/3f7c9a12-8b4e-4d21-9f6a-0c5e7d2b1a98"


# ---------------------------------------------------------------- s1
def s1():
    name = "p3s1_console_web_dev_proxy_login"
    s = Session(name, CWD, "2026-09-09T03:33:50.000Z", version="2.1.303", branch="fix/dev-proxy-cookie",
                title="本地 dev 登录 401 与全局状态方案")
    s.snapshot()
    s.user(f"本地 pnpm dev 起来之后登录一直 401，but 同样的账号在 dev 环境页面上是好的。帮我看下 vite 的 proxy 配置。测试账号 qa01 / {QA_PW}")
    s.bash("npm install", """npm ERR! code 1
npm ERR! path /home/dev/work/console-web
npm ERR! command failed
npm ERR! command sh -c npx only-allow pnpm
npm ERR! ╔═════════════════════════════════════════════════════════════╗
npm ERR! ║                                                             ║
npm ERR! ║   Use "pnpm install" for installation in this project.      ║
npm ERR! ║                                                             ║
npm ERR! ║   If you don't have pnpm, install it via "npm i -g pnpm".   ║
npm ERR! ║   For more details, go to https://pnpm.js.org/              ║
npm ERR! ║                                                             ║
npm ERR! ╚═════════════════════════════════════════════════════════════╝

npm ERR! A complete log of this run can be found in: /home/dev/.npm/_logs/2026-09-09T03_35_02_114Z-debug-0.log""", code=1, desc="Install dependencies")
    s.bash("pnpm install", """Lockfile is up to date, resolution step is skipped
Packages: +1123
++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++
Progress: resolved 1123, reused 0, downloaded 1123, added 1123, done

dependencies:
+ @ant-design/icons 5.5.1
+ @tanstack/react-query 5.56.2
+ antd 5.21.6
+ axios 1.7.7
+ dayjs 1.11.13
+ react 18.3.1
+ react-dom 18.3.1
+ react-redux 9.1.2
+ react-router-dom 6.26.2
+ redux-saga 1.3.0

devDependencies:
+ @playwright/test 1.47.2
+ @vitejs/plugin-react-swc 3.7.1
+ eslint 8.57.1
+ typescript 5.6.2
+ vite 5.4.8
+ vitest 2.1.2

> console-web@0.1.0 prepare /home/dev/work/console-web
> husky

Done in 14.2s""", desc="Install with pnpm", gap=(12, 20))
    s.read(f"{CWD}/vite.config.ts", """import { defineConfig } from 'vite'
import react from '@vitejs/plugin-react-swc'
import path from 'node:path'

export default defineConfig({
  plugins: [react()],
  resolve: { alias: { '@': path.resolve(__dirname, 'src') } },
  server: {
    port: 5173,
    proxy: {
      '/api': {
        target: 'https://console-dev.internal.example.com',
        changeOrigin: true,
        secure: false,
      },
    },
  },
})
""")
    s.tool("Bash", {"command": "pnpm dev", "description": "Start dev server", "run_in_background": True},
           "Command running in background with ID: bash_1",
           tur={"stdout": "", "stderr": "", "interrupted": False, "isImage": False, "backgroundTaskId": "bash_1"})
    s.bash(f"curl -si -X POST http://localhost:5173/api/auth/login -H 'content-type: application/json' -d '{{\"username\":\"qa01\",\"password\":\"{QA_PW}\"}}' | sed -n '1,12p'",
           f"""HTTP/1.1 200 OK
content-type: application/json; charset=utf-8
set-cookie: CONSOLE_SID={SID}; Domain=console-dev.internal.example.com; Path=/; Expires=Wed, 10 Sep 2026 03:36:41 GMT; HttpOnly; Secure; SameSite=None
x-request-id: 1f9c0b7e4a2d
content-length: 389

{{"code":0,"data":{{"user":{{"id":10023,"name":"qa01"}},"token":"{JWT}"}}}}""", desc="Log in through the dev proxy")
    s.say("登录本身是成功的（200），问题在 cookie：后端返回的 `set-cookie` 带 `Domain=console-dev.internal.example.com`，而页面在 `localhost:5173`，浏览器不会为 localhost 存一个别的域名的 cookie，直接丢掉了。所以后续请求都不带 `CONSOLE_SID`，接口就 401。\n\n`changeOrigin` 只改请求的 Host，不会改响应里的 cookie domain。Vite 的 proxy 底层是 http-proxy，支持 `cookieDomainRewrite`，改成 localhost 就行。")
    s.edit(f"{CWD}/vite.config.ts", """        changeOrigin: true,
        secure: false,""", """        changeOrigin: true,
        secure: false,
        // backend sets Domain=<dev host>; rewrite so the browser keeps the session cookie on localhost
        cookieDomainRewrite: 'localhost',""", at_line=13)
    s.user("好了！登录 ok 了👍 顺便问个问题：新的全局 state 用什么？老代码是 redux + redux-saga，我真的不想再写 saga 了")
    s.say("看了下现在的用法：接口数据已经大部分走 TanStack Query 了，redux 里剩下的主要是当前租户、侧边栏折叠、一些筛选条件这种纯客户端状态。\n\n选项：\n- **Redux Toolkit**：和老代码共存最顺，但 slice/reducer 那套 boilerplate 还在，团队也容易继续往里写 saga。\n- **Zustand**：一个 `create()` 就是一个 store，boilerplate 很少，不需要 Provider，和 redux 可以并存。\n- **Jotai**：原子化，适合很细的状态，这里有点过度。\n\n客户端状态这么少，我建议 Zustand。")
    s.user("ok let's go with zustand. 老的 redux 模块先不动，谁改到了谁顺手迁。server state 一律 TanStack Query，别往 store 里塞接口数据")
    s.bash("pnpm add zustand", """Packages: +1
+
Progress: resolved 1124, reused 1124, downloaded 0, added 1, done

dependencies:
+ zustand 4.5.5

Done in 2.1s""", desc="Add zustand")
    s.user("还有，回复我用中文就行，但是 code comment 和 commit message 用英文")
    s.say("好的。")
    s.bash("pnpm test && pnpm lint", """
> console-web@0.1.0 test /home/dev/work/console-web
> vitest run

 RUN  v2.1.2 /home/dev/work/console-web

 ✓ src/utils/money.test.ts (14 tests) 6ms
 ✓ src/utils/format.test.ts (12 tests) 4ms
 ✓ src/pages/billing/details/filters.test.tsx (9 tests) 211ms
 ...
 Test Files  38 passed (38)
      Tests  214 passed (214)
   Start at  11:41:07
   Duration  9.81s (transform 1.92s, setup 3.10s, collect 6.44s, tests 4.77s, environment 8.02s, prepare 2.61s)


> console-web@0.1.0 lint /home/dev/work/console-web
> eslint 'src/**/*.{ts,tsx}'

/home/dev/work/console-web/src/pages/login/index.tsx
  42:11  error  'res' is assigned a value but never used  @typescript-eslint/no-unused-vars

✖ 1 problem (1 error, 0 warnings)

 ELIFECYCLE  Command failed with exit code 1.""", code=1, desc="Unit tests and lint")
    s.edit(f"{CWD}/src/pages/login/index.tsx", "      const res = await login(values)", "      await login(values)", at_line=42)
    s.bash("pnpm lint && git add -A && git commit -m 'fix(dev): rewrite cookie domain in vite proxy; add zustand'", """
> console-web@0.1.0 lint /home/dev/work/console-web
> eslint 'src/**/*.{ts,tsx}'

→ lint-staged
✔ Preparing lint-staged...
✔ Running tasks for staged files...
✔ Applying modifications from tasks...
✔ Cleaning up temporary files...
[fix/dev-proxy-cookie 0b6e2d9] fix(dev): rewrite cookie domain in vite proxy; add zustand
 4 files changed, 12 insertions(+), 2 deletions(-)""", desc="Lint and commit")
    s.stop_hook()
    s.turn_duration()
    g = gold(name, CWD, 1, "mixed", [
        E("e1", "fact", "constraint", "en", "The repo is pnpm-only (preinstall runs only-allow pnpm); `npm install` fails, use `pnpm install`.", ["pnpm"]),
        E("e2", "fact", "config", "en", "Local dev: `pnpm dev` serves on :5173 and Vite proxies /api to https://console-dev.internal.example.com.", ["console-dev.internal.example.com"]),
        E("e3", "experience", "root_cause", "zh", "本地 dev 登录后 401：后端 set-cookie 带 Domain=console-dev.internal.example.com，页面在 localhost，浏览器丢弃 session cookie；changeOrigin 不改响应 cookie，需在 vite proxy 加 `cookieDomainRewrite: 'localhost'`。", ["cookieDomainRewrite"]),
        E("e4", "decision", "decision", "en", "New global client state uses Zustand, not Redux Toolkit or more redux-saga: little client state is left and Zustand has far less boilerplate; old redux modules are migrated opportunistically when touched.", ["zustand"], chosen="zustand", over=["redux"], why=["boilerplate"]),
        E("e5", "fact", "convention", "zh", "server state 一律用 TanStack Query，不要把接口数据放进 store。", ["TanStack Query"]),
        E("e6", "fact", "preference", "zh", "回复用户用中文，但代码注释和 commit message 用英文。", ["commit"]),
        E("e7", "fact", "command", "en", "Unit tests: `pnpm test` (vitest run); lint: `pnpm lint`.", ["pnpm test"]),
    ], [
        A(["plugin-react-swc"], "vite uses @vitejs/plugin-react-swc"),
        A(["antd"], "antd 5.21.6"),
        A(["lint-staged"], "husky + lint-staged pre-commit"),
    ], ["214 passed", "登录 ok 了", "Done in 14.2s", "0b6e2d9", "1123"], [QA_PW, SID, JWT])
    return s, g


# ---------------------------------------------------------------- s2 (pure exploration)
R_P3S2 = [(31, "fact", "5 days ago", "The repo is pnpm-only; npm install fails, use pnpm install."),
          (34, "decision", "5 days ago", "New global client state uses Zustand, not Redux Toolkit.")]


def s2():
    name = "p3s2_console_web_routing_tour"
    s = Session(name, CWD, "2026-09-14T09:12:00.000Z", version="2.1.304", branch="main",
                title="Explain router and menu structure")
    s.local_command("model", "", "Set model to claude-sonnet-5 (default)")
    s.user("新来的同事问我路由是怎么组织的，我也说不太清😅 帮我捋一下 src/router 和 src/pages 的关系，不用改代码")
    s.recall_attachment(R_P3S2)
    s.glob("src/router/**/*", ["src/router/index.tsx", "src/router/guards.tsx", "src/router/routes/billing.tsx",
                               "src/router/routes/customers.tsx", "src/router/routes/settings.tsx", "src/router/types.ts"])
    s.read(f"{CWD}/src/router/index.tsx", """import { createBrowserRouter } from 'react-router-dom'
import { RequireAuth } from './guards'
import AppLayout from '@/layouts/AppLayout'
import { billingRoutes } from './routes/billing'
import { customerRoutes } from './routes/customers'
import { settingsRoutes } from './routes/settings'

export const routes = [
  {
    path: '/',
    element: <RequireAuth><AppLayout /></RequireAuth>,
    children: [...billingRoutes, ...customerRoutes, ...settingsRoutes],
  },
  { path: '/login', lazy: () => import('@/pages/login') },
  { path: '*', lazy: () => import('@/pages/not-found') },
]

export const router = createBrowserRouter(routes)
""")
    s.read(f"{CWD}/src/router/routes/billing.tsx", """export const billingRoutes: AppRoute[] = [
  {
    path: 'billing/details',
    lazy: () => import('@/pages/billing/details'),
    handle: { menu: { title: '账单明细', icon: 'FileTextOutlined' }, permission: 'billing:read' },
  },
  {
    path: 'billing/invoices/:id',
    lazy: () => import('@/pages/billing/invoice-detail'),
    handle: { permission: 'billing:read' },
  },
]
""")
    s.read(f"{CWD}/src/router/guards.tsx", """export function RequireAuth({ children }: PropsWithChildren) {
  const user = useCurrentUser()
  const matches = useMatches()
  if (!user) return <Navigate to="/login" replace />
  const need = matches.map((m) => (m.handle as RouteHandle)?.permission).filter(Boolean)
  if (!need.every((p) => user.permissions.includes(p!))) return <Forbidden />
  return children
}
""", start=8, total=24)
    s.say("结构是这样的：\n\n1. **src/router/index.tsx** 只负责拼装：根路由 `/` 套一层 `RequireAuth` + `AppLayout`，子路由从 `routes/*.tsx` 按业务模块汇总；`/login` 和 404 在外层。\n2. **src/router/routes/<模块>.tsx**：每个模块一个文件，每条路由用 `lazy: () => import('@/pages/...')` 懒加载页面，`handle` 里放元信息：`menu`（菜单标题/图标）和 `permission`。\n3. **src/pages/<模块>/<页面>/index.tsx**：页面本身，路由文件里的 import 路径和目录一一对应。\n4. **权限**：`RequireAuth` 用 `useMatches()` 收集当前匹配链上所有 `handle.permission`，用户缺任何一个就渲染 `<Forbidden />`，没登录跳 `/login`。")
    s.user("menu 是从路由自动生成的吗？")
    s.grep("handle.*menu|buildMenu", """src/layouts/menu.ts:9:export function buildMenu(routes: AppRoute[], perms: string[]): MenuItem[] {
src/layouts/menu.ts:14:    .filter((r) => r.handle?.menu && (!r.handle.permission || perms.includes(r.handle.permission)))
src/layouts/AppLayout.tsx:22:  const items = useMemo(() => buildMenu(routes[0].children, user.permissions), [user.permissions])""", path="src/layouts")
    s.say("是的。`AppLayout` 调 `src/layouts/menu.ts` 的 `buildMenu()`，只取带 `handle.menu` 的路由，并且按用户权限过滤掉没权限的项。所以加一个新页面，只要在对应的 `routes/<模块>.tsx` 里加一条带 `handle.menu` 的路由，菜单就会自动出现；像 `billing/invoices/:id` 这种详情页不写 `menu`，就不会进菜单。")
    s.user("ok 懂了，我转给他。thanks!")
    s.say("不客气～")
    s.stop_hook()
    g = gold(name, CWD, 2, "mixed", [], [
        A(["buildMenu"], "side menu is generated from routes with handle.menu via buildMenu in src/layouts/menu.ts"),
        A(["handle"], "route handle carries menu and permission; RequireAuth checks permissions via useMatches"),
        A(["src/router/routes"], "one route file per module under src/router/routes, pages lazy-loaded from src/pages"),
    ], ["新来的同事", "thanks", "说不太清", "转给他", R_P3S2[0][3], R_P3S2[1][3]], [])
    return s, g


# ---------------------------------------------------------------- s3
R_P3S3 = [(37, "fact", "13 days ago", "Unit tests: pnpm test (vitest run); lint: pnpm lint."),
          (36, "fact", "13 days ago", "回复用户用中文，代码注释和 commit message 用英文。"),
          (33, "experience", "13 days ago", "本地 dev 登录 401 是 cookie domain 问题，vite proxy 需要 cookieDomainRewrite。")]


def s3():
    name = "p3s3_console_web_table_virtual"
    s = Session(name, CWD, "2026-09-22T07:45:18.000Z", version="2.1.308", branch="perf/billing-details-virtual",
                title="账单明细大表格卡顿优化")
    s.snapshot()
    s.user_inline_reminder("账单明细页 /billing/details 一次拉 5000 行的时候滚动巨卡，基本没法用。看看怎么优化", R_P3S3)
    s.read(f"{CWD}/src/pages/billing/details/index.tsx", """export default function BillingDetails() {
  const filters = useDetailFilters()
  const { data, isLoading } = useQuery({
    queryKey: ['billing-details', filters],
    queryFn: () => fetchDetails(filters),
  })
  const columns = [
    { title: '账单号', dataIndex: 'billNo', render: (v: string) => <Typography.Text copyable>{v}</Typography.Text> },
    { title: '客户', dataIndex: 'customerName' },
    { title: '金额', dataIndex: 'amountFen', render: (v: number) => <Money fen={v} /> },
    { title: '状态', dataIndex: 'status', render: (v: BillStatus) => <StatusTag status={v} /> },
    { title: '创建时间', dataIndex: 'createdAt', render: (v: string) => dayjs(v).format('YYYY-MM-DD HH:mm') },
  ]
  return <Table columns={columns} dataSource={data?.items} loading={isLoading} pagination={false} />
}
""", start=14, total=29)
    s.think("5000 real rows in DOM, columns array recreated every render, no rowKey -> antd falls back to index and warns. Virtual list is the real fix; check antd version for Table virtual support (5.9+).")
    s.bash("pnpm why antd | tail -3", "dependencies:\nantd 5.21.6", desc="Check antd version")
    s.say("几个问题叠在一起：\n1. `columns` 写在组件里，每次 render 都是新数组，里面的 render 函数也是新的，Table 会认为列变了；\n2. 没有 `rowKey`，antd 退回用 index 当 key（控制台也有 `Each record in table should have a unique key` 的警告），筛选后整表重建；\n3. `pagination={false}`，5000 行全部是真实 DOM，这是卡的大头。\n\n1、2 是小修。3 有两个办法：\n- antd Table 自带的 `virtual`（5.9 起支持，当前 5.21.6）\n- 用 react-window 自己包一个虚拟表格\n\n我建议直接用 antd 的 `virtual`：固定列、表头、排序、样式都不用重写。")
    s.user("react-window 我们别的项目用过，体验还行… 但要自己重写表头和固定列太麻烦了。就用 antd 的 virtual 吧")
    s.edit(f"{CWD}/src/pages/billing/details/index.tsx", """  const columns = [""", """  const columns = useMemo<TableColumnsType<BillDetail>>(() => [""", at_line=20)
    s.edit(f"{CWD}/src/pages/billing/details/index.tsx", """  return <Table columns={columns} dataSource={data?.items} loading={isLoading} pagination={false} />""",
           """  return (
    <Table
      rowKey="id"
      virtual
      scroll={{ x: 1200, y: 640 }}
      columns={columns}
      dataSource={data?.items}
      loading={isLoading}
      pagination={false}
    />
  )""", at_line=28)
    s.say("注意 antd 的 virtual 模式有两个硬性要求：`scroll.y` 必须是数字（不能是 `'calc(...)'` 之类的字符串），而且每一列都要有 `width`，不然表头和内容会错位。我给每列都补了 width。")
    s.bash("pnpm test", """
> console-web@0.1.0 test /home/dev/work/console-web
> pnpm test:unit && pnpm test:e2e


> console-web@0.1.0 test:unit /home/dev/work/console-web
> vitest run

 RUN  v2.1.2 /home/dev/work/console-web
 ...
 Test Files  39 passed (39)
      Tests  221 passed (221)
   Duration  10.42s

> console-web@0.1.0 test:e2e /home/dev/work/console-web
> playwright test

Running 18 tests using 4 workers

  ✘   1 [chromium] › e2e/login.spec.ts:5:5 › login with qa account (14ms)
  ✘   2 [chromium] › e2e/billing.spec.ts:8:5 › details table renders (11ms)
  ...

  1) [chromium] › e2e/login.spec.ts:5:5 › login with qa account ─────────────────

    Error: browserType.launch: Executable doesn't exist at /home/dev/.cache/ms-playwright/chromium-1134/chrome-linux/chrome
    ╔═════════════════════════════════════════════════════════════════════════╗
    ║ Looks like Playwright Test or Playwright was just installed or updated. ║
    ║ Please run the following command to download new browsers:              ║
    ║                                                                         ║
    ║     pnpm exec playwright install                                        ║
    ╚═════════════════════════════════════════════════════════════════════════╝

  18 failed
 ELIFECYCLE  Command failed with exit code 1.""", code=1, desc="Run tests", gap=(20, 40))
    s.user("哦对，上周改了 scripts：`pnpm test` 现在是 unit + e2e 全跑，只跑单测用 `pnpm test:unit`。e2e 本地先别跑")
    s.bash("pnpm test:unit", """
> console-web@0.1.0 test:unit /home/dev/work/console-web
> vitest run

 RUN  v2.1.2 /home/dev/work/console-web
 ...
 Test Files  39 passed (39)
      Tests  221 passed (221)
   Duration  10.18s""", desc="Unit tests only")
    s.bash("pnpm build", """
> console-web@0.1.0 build /home/dev/work/console-web
> tsc -b && vite build

vite v5.4.8 building for production...
✓ 4213 modules transformed.
dist/index.html                          0.62 kB │ gzip:   0.41 kB
dist/assets/index-Dk3n2Q1f.css           4.18 kB │ gzip:   1.52 kB
dist/assets/index-C9aVf7Wm.js          512.77 kB │ gzip: 158.44 kB
dist/assets/vendor-antd-BqL0xY2c.js  1,246.31 kB │ gzip: 388.02 kB

(!) Some chunks are larger than 500 kB after minification. Consider:
- Using dynamic import() to code-split the application
- Use build.rollupOptions.output.manualChunks to improve chunking: https://rollupjs.org/configuration-options/#output-manualchunks
- Adjust chunk size limit for this warning via build.chunkSizeWarningLimit.
✓ built in 21.37s""", desc="Production build", gap=(20, 35))
    s.say("build 通过。有个 chunk 超过 500 kB 的警告。")
    s.user("这个 chunk warning 一直有，不用管。另外以后超过 500 行的 Table 都开 virtual，写到 docs/frontend-guide.md 里")
    s.edit(f"{CWD}/docs/frontend-guide.md", "## Tables\n", "## Tables\n\n- Any `Table` that can show more than 500 rows must use antd's `virtual` mode.\n  Requirements: `rowKey`, numeric `scroll.y`, and an explicit `width` on every column.\n- Define `columns` with `useMemo` (or outside the component).\n", at_line=40)
    s.bash("git add -A && git commit -m 'perf(billing): virtual scroll on details table'", """→ lint-staged
✔ Preparing lint-staged...
✔ Running tasks for staged files...
[perf/billing-details-virtual 4e1a9c7] perf(billing): virtual scroll on details table
 2 files changed, 31 insertions(+), 9 deletions(-)""", desc="Commit")
    s.stop_hook()
    g = gold(name, CWD, 3, "zh", [
        E("e1", "experience", "fix", "zh", "账单明细页 5000 行卡顿：columns 每次 render 重建、没有 rowKey（回退用 index）、5000 行全是真实 DOM；修复为 useMemo columns、rowKey=\"id\"、开启 antd Table virtual。", ["rowKey", "virtual"]),
        E("e2", "decision", "decision", "zh", "大表格虚拟滚动用 antd Table 自带的 virtual（antd 5.21），不用 react-window 自己包，因为表头、固定列不用重写。", ["virtual"], chosen="virtual", over=["react-window"], why=["固定列"]),
        E("e3", "fact", "gotcha", "zh", "antd Table virtual 模式下 scroll.y 必须是数字，且每列都要设 width，否则表头和内容错位。", ["scroll.y", "width"]),
        E("e4", "fact", "command", "zh", "`pnpm test` 现在跑 unit + e2e（Playwright）；只跑单测用 `pnpm test:unit`。", ["test:unit"], supersedes="p3s1_console_web_dev_proxy_login#e7"),
        E("e5", "fact", "convention", "zh", "超过 500 行的 Table 一律开 antd virtual（需 rowKey、数字 scroll.y、每列 width），写在 docs/frontend-guide.md。", ["500", "virtual"]),
        E("e6", "fact", "gotcha", "zh", "vite build 的 chunk 超过 500 kB 警告是已知的，不用管。", ["chunk"]),
        E("e7", "fact", "preference", "zh", "本地先不要跑 e2e（Playwright 浏览器没装）。", ["e2e"]),
    ], [
        A(["5.21.6"], "antd version"),
        A(["docs/frontend-guide.md"], "frontend guide location"),
        A(["playwright install"], "browsers missing locally"),
    ], ["221 passed", "18 failed", "4e1a9c7", "built in", R_P3S3[0][3], R_P3S3[1][3], R_P3S3[2][3]], [])
    return s, g


# ---------------------------------------------------------------- s4
R_P3S4 = [
    {"id": 34, "layer": "decision", "content": "New global client state uses Zustand, not Redux Toolkit; old redux modules migrated when touched."},
    {"id": 42, "layer": "fact", "content": "超过 500 行的 Table 一律开 antd virtual，写在 docs/frontend-guide.md。"},
    {"id": 36, "layer": "fact", "content": "回复用户用中文，代码注释和 commit message 用英文。"},
]


def s4():
    name = "p3s4_console_web_i18n"
    s = Session(name, CWD, "2026-10-09T01:58:27.000Z", version="2.1.316", branch="feat/i18n",
                title="i18n 方案选型与接入")
    s.snapshot()
    s.user("We need English UI for the overseas customers by end of month. 现在文案全是硬编码中文。先定方案")
    s.maple_search("console-web i18n 文案 约定", R_P3S4)
    s.bash("grep -rlP '[\\x{4e00}-\\x{9fa5}]' src --include='*.tsx' | wc -l && grep -c swc vite.config.ts", "187\n1", desc="Count files with hard-coded Chinese")
    s.say("187 个 tsx 文件里有硬编码中文。候选：\n- **react-intl (FormatJS)**：ICU 消息格式很强，但 API 偏重，`<FormattedMessage>` 到处都是。\n- **i18next + react-i18next**：生态最大，按 namespace 懒加载，`useTranslation()` 简单，和 antd 的 `ConfigProvider locale` 各管各的。\n- **Lingui**：extract 工具链很好，但 `t` 宏依赖 babel 宏，我们用的是 `@vitejs/plugin-react-swc`，SWC 下的宏插件还不算稳。\n\n我建议 i18next。")
    s.user("lingui 的 extract 挺香的，but 我们是 swc，macro 支持不稳，不想踩坑。i18next it is.")
    s.say("好，用 i18next。key 的命名和文件组织有约定吗？没有的话我按模块分 namespace。")
    s.user("key 命名：`<module>.<page>.<field>`，全小写点分，比如 `billing.details.amount`。文件放 src/locales/zh-CN/billing.json、src/locales/en-US/billing.json 这样，一个模块一个 namespace")
    s.say("明白：key 形如 `billing.details.amount`，每个模块一个 namespace JSON，放在 `src/locales/<lang>/<module>.json`，按需懒加载。")
    s.bash("pnpm add i18next react-i18next i18next-browser-languagedetector i18next-resources-to-backend", """Packages: +4
++++
Progress: resolved 1128, reused 1124, downloaded 4, added 4, done

dependencies:
+ i18next 23.15.1
+ i18next-browser-languagedetector 8.0.0
+ i18next-resources-to-backend 1.2.1
+ react-i18next 15.0.2

Done in 3.4s""", desc="Add i18next")
    s.write(f"{CWD}/src/i18n/index.ts", """import i18n from 'i18next'
import LanguageDetector from 'i18next-browser-languagedetector'
import resourcesToBackend from 'i18next-resources-to-backend'
import { initReactI18next } from 'react-i18next'

// one namespace per module: src/locales/<lang>/<module>.json, loaded on demand
i18n
  .use(LanguageDetector)
  .use(resourcesToBackend((lng: string, ns: string) => import(`../locales/${lng}/${ns}.json`)))
  .use(initReactI18next)
  .init({
    fallbackLng: 'zh-CN',
    supportedLngs: ['zh-CN', 'en-US'],
    defaultNS: 'common',
    interpolation: { escapeValue: false },
  })

export default i18n
""")
    s.bash("pnpm test:unit", """
> console-web@0.1.0 test:unit /home/dev/work/console-web
> vitest run

 RUN  v2.1.2 /home/dev/work/console-web

 ❯ src/pages/billing/details/filters.test.tsx (9 tests | 2 failed) 233ms
   × shows amount column header
     → Unable to find an element with the text: 金额
   × resets filters
     → Unable to find an element with the text: 重置
 ...
 Test Files  1 failed | 38 passed (39)
      Tests  2 failed | 219 passed (221)
 ELIFECYCLE  Command failed with exit code 1.""", code=1, desc="Unit tests")
    s.say("测试里没有初始化 i18n，`t()` 直接返回 key（比如 `billing.details.amount`），所以按中文文案找元素失败。在 vitest 的 setup 文件里引入 i18n 并固定 `zh-CN` 就行。")
    s.write(f"{CWD}/src/test/setup.ts", """import '@testing-library/jest-dom/vitest'
import i18n from '@/i18n'

// tests assert on zh-CN copy; load it synchronously
await i18n.changeLanguage('zh-CN')
""")
    s.edit(f"{CWD}/vitest.config.ts", "    environment: 'jsdom',", "    environment: 'jsdom',\n    setupFiles: ['./src/test/setup.ts'],", at_line=9)
    s.bash("pnpm test:unit", """
> console-web@0.1.0 test:unit /home/dev/work/console-web
> vitest run
 ...
 Test Files  39 passed (39)
      Tests  221 passed (221)
   Duration  10.77s""", desc="Unit tests")
    s.user("对了，dev 环境后端域名换了，现在是 console-dev.k8s.example.com，老的 internal 那个下周下线。proxy target 改一下")
    s.edit(f"{CWD}/vite.config.ts", "        target: 'https://console-dev.internal.example.com',", "        target: 'https://console-dev.k8s.example.com',", at_line=12)
    s.user(f"CI 里加个 i18n 缺 key 的检查，结果发到飞书通知群。机器人 webhook 是 {FEISHU} ，放 CI secret 里，变量名 FEISHU_WEBHOOK，别写进仓库")
    s.write(f"{CWD}/scripts/check-i18n-keys.ts", """// Compares keys across src/locales/<lang>/*.json; exits 1 when en-US misses keys that zh-CN has.
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'

const root = join(import.meta.dirname, '../src/locales')
const flat = (o: Record<string, unknown>, p = ''): string[] =>
  Object.entries(o).flatMap(([k, v]) => (typeof v === 'object' && v ? flat(v as Record<string, unknown>, `${p}${k}.`) : [`${p}${k}`]))
const keys = (lng: string) =>
  new Set(readdirSync(join(root, lng)).flatMap((f) => flat(JSON.parse(readFileSync(join(root, lng, f), 'utf8')))))
const zh = keys('zh-CN')
const en = keys('en-US')
const missing = [...zh].filter((k) => !en.has(k))
console.log(`missing keys in en-US: ${missing.length}`)
missing.forEach((k) => console.log(`  - ${k}`))
process.exit(missing.length ? 1 : 0)
""")
    s.edit(f"{CWD}/.gitlab-ci.yml", "stages: [lint, test, build]\n", """stages: [lint, test, build]

i18n:check:
  stage: lint
  script:
    - pnpm i18n:check | tee i18n-report.txt
  after_script:
    - 'curl -s -X POST -H "Content-Type: application/json" -d "{\\"msg_type\\":\\"text\\",\\"content\\":{\\"text\\":\\"$(head -c 1500 i18n-report.txt)\\"}}" "$FEISHU_WEBHOOK"'
""", at_line=1)
    s.bash("pnpm i18n:check", """
> console-web@0.1.0 i18n:check /home/dev/work/console-web
> tsx scripts/check-i18n-keys.ts

missing keys in en-US: 0""", desc="Run the i18n key check")
    s.rejected("Bash", {"command": "pnpm exec playwright test e2e/billing.spec.ts", "description": "Run billing e2e"})
    s.user("e2e 别跑，太慢了，本地也没装浏览器")
    s.say("好，不跑 e2e。改动：i18next 接入、vitest setup、dev proxy 指向 console-dev.k8s.example.com、CI 加 `i18n:check`（通过 `$FEISHU_WEBHOOK` 发飞书）。")
    s.stop_hook()
    s.turn_duration()
    g = gold(name, CWD, 4, "mixed", [
        E("e1", "decision", "decision", "en", "i18n uses i18next + react-i18next (one lazily loaded namespace per module), not react-intl or Lingui; Lingui's macros are unreliable with SWC (@vitejs/plugin-react-swc).", ["i18next"], chosen="i18next", over=["lingui"], why=["swc"]),
        E("e2", "fact", "convention", "en", "i18n keys are lowercase dot paths `<module>.<page>.<field>`, e.g. `billing.details.amount`.", ["billing.details.amount"]),
        E("e3", "fact", "convention", "en", "Translations live in src/locales/<lang>/<module>.json (zh-CN, en-US), one namespace per module; fallback language zh-CN.", ["src/locales"]),
        E("e4", "fact", "config", "en", "The dev backend is now https://console-dev.k8s.example.com (old console-dev.internal.example.com is being retired); the Vite /api proxy targets it.", ["console-dev.k8s.example.com"], supersedes="p3s1_console_web_dev_proxy_login#e2"),
        E("e5", "experience", "fix", "zh", "接入 i18n 后单测按中文文案找元素失败（t() 返回 key）；在 vitest setupFiles（src/test/setup.ts）里引入 i18n 并切到 zh-CN 解决。", ["i18n", "setup"]),
        E("e6", "fact", "command", "en", "`pnpm i18n:check` (scripts/check-i18n-keys.ts) lists keys missing in en-US; the CI job `i18n:check` runs it and posts to Feishu.", ["i18n:check"]),
        E("e7", "fact", "config", "en", "The Feishu bot webhook for CI notifications is stored as the CI secret variable FEISHU_WEBHOOK, never in the repo.", ["FEISHU_WEBHOOK"]),
        E("e8", "fact", "preference", "zh", "不要在本地跑 e2e（Playwright），太慢，本地也没装浏览器。", ["e2e"]),
    ], [
        A(["end of month"], "English UI deadline for overseas customers"),
        A(["187"], "187 tsx files with hard-coded Chinese"),
    ], ["219 passed", "221 passed", "missing keys in en-US: 0", R_P3S4[0]["content"], R_P3S4[1]["content"], R_P3S4[2]["content"]], [FEISHU])
    return s, g


SESSIONS = [s1, s2, s3, s4]
