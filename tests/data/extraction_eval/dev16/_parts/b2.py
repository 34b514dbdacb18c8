# b2 — tailwind-mx, session 2 (en): new teammate Jules explores ad-watch (mostly questions)
import json

META = {
    "id": "b2",
    "project": "tailwind-mx",
    "topic": "ad_watch_walkthrough",
    "order": 2,
    "language": "en",
    "branch": "main",
    "start": "2026-10-22T14:31:00.000Z",
    "title": "Walkthrough of ad-watch for a new teammate",
}

SEARCH = json.dumps(
    {
        "results": [
            {
                "id": 21,
                "layer": "fact",
                "kind": "command",
                "score": 0.58,
                "content": "squawk-api runs locally with `dotnet run --project src/SquawkApi` and listens on port 5080.",
            },
            {
                "id": 24,
                "layer": "fact",
                "kind": "preference",
                "score": 0.52,
                "content": "Mackenzie Rowe owns hobbs-sync and the tach/hobbs meter mapping; check with her before changing how meters are imported.",
            },
            {
                "id": 27,
                "layer": "fact",
                "kind": "config",
                "score": 0.49,
                "content": "dispatch-gate publishes aircraft.grounded to the mx.events topic exchange; the booking sync consumes it from the scheduler.grounding queue.",
            },
        ]
    },
    ensure_ascii=False,
)

ADWATCH_PROGRAM = """var builder = WebApplication.CreateBuilder(args);

builder.Services.AddMxData(builder.Configuration.GetConnectionString("Mx")!);
builder.Services.AddHttpClient<DrsClient>(c => c.BaseAddress = new Uri("https://drs.faa.gov/api/v2/"));
builder.Services.AddScoped<ApplicabilityMatcher>();
builder.Services.AddHangfire(cfg => cfg.UsePostgreSqlStorage(o => o.UseNpgsqlConnection(builder.Configuration.GetConnectionString("Mx"))));
builder.Services.AddHangfireServer();

var app = builder.Build();

RecurringJob.AddOrUpdate<AdPollJob>("ad-watch:poll", j => j.RunAsync(CancellationToken.None), "30 5 * * *"); // 05:30 UTC daily

app.MapHangfireDashboard("/jobs");
app.Run();
"""

MATCHER = """namespace Mx.AdWatch.Matching;

public sealed class ApplicabilityMatcher
{
    private readonly MxDbContext _db;

    public ApplicabilityMatcher(MxDbContext db) => _db = db;

    public async Task<IReadOnlyList<Aircraft>> AffectedAsync(AdRecord ad, CancellationToken ct)
    {
        var fleet = await _db.Aircraft.Where(a => a.Active).ToListAsync(ct);
        return fleet
            .Where(a => string.Equals(a.Make, ad.Make, StringComparison.OrdinalIgnoreCase)
                     && ad.Models.Any(m => string.Equals(m, a.Model, StringComparison.OrdinalIgnoreCase))
                     && ad.SerialRange.Contains(a.SerialNumber))
            .ToList();
    }
}
"""

FLEET = """tail     make      model        serial        active
N4471T   CESSNA    C172S        172S11208     yes
N5310S   CESSNA    172S         172S10874     yes
N7720S   CESSNA    172S         172S11390     yes
N1194C   CESSNA    C172S        172S9921      yes
N3386C   CESSNA    C172S        172S10102     yes
N8816P   PIPER     PA-28-181    2843311       yes
N2207P   PIPER     PA-28-181    2843502       yes
N6642P   PIPER     PA-28-181    2843719       yes
N208SM   PIPER     PA-44-180    4496244       yes
N9031K   CESSNA    C152         15285077      no
10 aircraft (9 active)"""

MATCH_TESTS = """  Determining projects to restore...
  All projects are up-to-date for restore.
  Mx.AdWatch.Tests -> /home/dev/work/tailwind-mx/tests/Mx.AdWatch.Tests/bin/Debug/net8.0/Mx.AdWatch.Tests.dll
Test run for /home/dev/work/tailwind-mx/tests/Mx.AdWatch.Tests/bin/Debug/net8.0/Mx.AdWatch.Tests.dll (.NETCoreApp,Version=v8.0)
Starting test execution, please wait...
  Passed Mx.AdWatch.Tests.ApplicabilityMatcherTests.Matches_make_and_model_case_insensitively [4 ms]
  Passed Mx.AdWatch.Tests.ApplicabilityMatcherTests.Respects_serial_range [1 ms]
  Passed Mx.AdWatch.Tests.ApplicabilityMatcherTests.Skips_inactive_aircraft [1 ms]
  Passed Mx.AdWatch.Tests.ApplicabilityMatcherTests.Multiple_models_per_ad [1 ms]

Passed!  - Failed:     0, Passed:    17, Skipped:     0, Total:    17, Duration: 212 ms - Mx.AdWatch.Tests.dll (net8.0)"""

STEPS = [
    (
        "u",
        "hi! I'm Jules, started Monday. Robbie said to poke around ad-watch with you before I pick up MX-430. still figuring out the VPN lol. what does ad-watch actually do?",
    ),
    ("tool", "mcp__maple__memory_search", {"query": "ad-watch overview tailwind-mx", "limit": 5}, SEARCH),
    ("tool", "Read", {"file_path": "/home/dev/work/tailwind-mx/src/AdWatch/Program.cs"}, ADWATCH_PROGRAM),
    (
        "a",
        "Welcome! In short: ad-watch is a small ASP.NET Core service that runs one Hangfire job, `ad-watch:poll`, every day at 05:30 UTC. The job pulls newly published Airworthiness Directives from the FAA DRS API, works out which of our aircraft each AD applies to (`ApplicabilityMatcher`), and opens a compliance item in squawk-api for every affected tail. Mechanics then see those items in mx-portal next to the regular inspections. The Hangfire dashboard is mounted at `/jobs` if you want to trigger a run by hand.",
    ),
    ("u", "what's an AD vs a service bulletin? sorry, not an aviation person"),
    (
        "a",
        "No worries. An Airworthiness Directive is issued by the FAA and is legally enforceable: if an AD applies to an aircraft, it can't fly past the compliance deadline until the AD is complied with (inspection, part replacement, etc.). Service Bulletins are manufacturer recommendations; they're optional for Part 91 operators unless an AD makes them mandatory. That's why ad-watch only tracks ADs automatically and SBs are entered by hand.",
    ),
    ("u", "how does it match an AD to a plane? like what if the model string is different"),
    ("tool", "Read", {"file_path": "/home/dev/work/tailwind-mx/src/AdWatch/Matching/ApplicabilityMatcher.cs"}, MATCHER),
    (
        "tool",
        "Bash",
        {
            "command": "dotnet run --project tools/MxCli -- fleet",
            "description": "List the fleet with make/model/serial",
        },
        FLEET,
    ),
    (
        "a",
        "Good instinct, that's exactly the weak spot. The matcher needs make, model and serial range to line up, and the model comparison is an exact (case-insensitive) string match. Our fleet table isn't consistent: N5310S and N7720S are stored as `172S`, the rest of the 172s as `C172S`, and the FAA feed uses `C172S`. So any AD against the C172S silently skips those two tails. Worth a ticket; the fix is probably to normalize model designators on import rather than fuzzy-matching in ad-watch.",
    ),
    ("u", "oh wow. ok I'll file that. is it normal that ad-watch takes like 4 minutes locally?"),
    (
        "a",
        "I'd guess that's the first run after a fresh database: with no high-water mark stored, `AdPollJob` probably pages through the whole AD index instead of only the last day. A second run should be quick; if it isn't, tell me and we'll look at it properly.",
    ),
    ("u", "second run was 6 seconds, so yeah. can you run the matcher tests so I see what's covered?"),
    (
        "tool",
        "Bash",
        {
            "command": "dotnet test tests/Mx.AdWatch.Tests --filter ApplicabilityMatcherTests -v n",
            "description": "Run matcher tests",
        },
        MATCH_TESTS,
    ),
    (
        "a",
        "17 tests pass in that project; the matcher has four: case-insensitive make/model, serial ranges, inactive aircraft, multiple models per AD. None of them covers a designator mismatch like `172S` vs `C172S`, which is why it slipped through.",
    ),
    ("u", "makes sense. why do we store both hobbs and tach on every flight btw? seems redundant"),
    (
        "a",
        "They measure different things. Hobbs counts clock time while the master is on (that's what students are billed on), tach counts engine time weighted by RPM. Some maintenance intervals are written against one, some against the other, so the flight log keeps both. There's a per-interval TimeBasis on the inspection program that says which one each interval uses.",
    ),
    (
        "u",
        "the FAA DRS key I got from Robbie is `drs_live_4f9a7c2e81b35d60e9a1f7c3b2d84e05`, do I put that in appsettings.Development.json?",
    ),
    (
        "a",
        'Please don\'t, that file is committed. Use user-secrets instead: `dotnet user-secrets set "AdWatch:DrsApiKey" "<key>" --project src/AdWatch`. The app reads `AdWatch:DrsApiKey` from configuration either way.',
    ),
    ("u", "done. last thing: where do I see the logs when it runs on staging?"),
    (
        "a",
        "Seq on staging. Filter with `Application = 'ad-watch'` and you'll get the poll runs, one summary line per run with the number of ADs fetched and items opened.",
    ),
    (
        "u",
        "ah right, Robbie mentioned that. he also said Seq only keeps 7 days now since they moved it to the smaller VM, so I'd better look quickly. ok, thanks a ton, going to grab coffee and read through the matcher tests",
    ),
    ("a", "Sounds good. The tests live in tests/Mx.AdWatch.Tests/ApplicabilityMatcherTests.cs. Have fun with MX-430."),
    ("stop",),
]

B1 = "b1_tailwind_mx_tach_intervals"
GOLD = {
    "expected": [
        {
            "id": "e1",
            "layer": "experience",
            "kind": "gotcha",
            "lang": "en",
            "text": "ad-watch's ApplicabilityMatcher matches the AD model by exact (case-insensitive) string; N5310S and N7720S are stored as `172S` while the FAA feed says `C172S`, so ADs against the C172S silently skip them. Normalize model designators on import.",
            "must": ["172S"],
        },
        {
            "id": "e2",
            "layer": "fact",
            "kind": "config",
            "lang": "en",
            "text": "Seq now keeps only 7 days of logs (moved to a smaller VM).",
            "must": ["7 days"],
            "supersedes": B1 + "#e13",
        },
    ],
    "acceptable": [
        {"must": ["ad-watch:poll"], "note": "Hangfire job ad-watch:poll runs daily 05:30 UTC"},
        {
            "must": ["AdWatch:DrsApiKey"],
            "note": "DRS key goes in user-secrets as AdWatch:DrsApiKey, never in appsettings",
        },
        {"must": ["/jobs"], "note": "Hangfire dashboard path"},
    ],
    "forbidden": [
        "listens on port 5080",
        "Mackenzie Rowe owns hobbs-sync",
        "publishes aircraft.grounded",
        "figuring out the VPN",
        "Service Bulletins are manufacturer recommendations",
        "legally enforceable",
        "first run after a fresh database",
        "second run was 6 seconds",
        "Passed:    17",
        "grab coffee",
        "Hobbs counts clock time",
    ],
    "secrets": [
        "drs_live_4f9a7c2e81b35d60e9a1f7c3b2d84e05",
    ],
}
