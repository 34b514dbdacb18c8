"""Project 1: tidyfs, a Rust CLI, talked about in English."""
from common import Session

P = "/home/dev/work/tidyfs"

CRATES_TOKEN = "cioQ7mZp2Lx9vB4nK8sW1dR6tY3hF0jGcE5"
SLACK_HOOK = "https://hooks.slack.com/services/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"


def h1s1():
    s = Session("h1s1_tidyfs_release", P, 1, "en", "2026-09-03T09:12:41.000Z", "release/0.4", "2.1.304")
    s.title("Prepare tidyfs 0.4.0 release")

    s.user("cutting 0.4.0 today. can you check everything is green before I tag? tests + clippy. "
           "tests are `cargo nextest run --workspace`, and nextest doesn't run doctests so you also need "
           "`cargo test --doc`, I always forget that part", gap=0)
    s.think("Run nextest for the workspace, then the doctests separately, then clippy with -D warnings.")
    s.bash("cargo nextest run --workspace", """   Compiling tidyfs-core v0.4.0 (/home/dev/work/tidyfs/crates/tidyfs-core)
   Compiling tidyfs-cli v0.4.0 (/home/dev/work/tidyfs/crates/tidyfs-cli)
    Finished `test` profile [unoptimized + debuginfo] target(s) in 41.27s
────────────
 Nextest run ID 6c1f0f7e-9d0b-4f57-a0c4-2be1a8f3d9e2 with nextest profile: default
    Starting 148 tests across 9 binaries (2 tests skipped)
        PASS [   0.011s] tidyfs-core rules::tests::glob_matches_nested
        PASS [   0.012s] tidyfs-core rules::tests::max_age_none_matches_everything
        PASS [   0.014s] tidyfs-core walk::tests::skips_hidden_by_default
        PASS [   0.019s] tidyfs-core dedupe::tests::groups_by_size_then_hash
        PASS [   0.203s] tidyfs-cli::cli sort_by_ext_moves_files
        PASS [   0.377s] tidyfs-cli::cli dedupe_report_snapshot
        ...
        PASS [   1.902s] tidyfs-cli::cli sort_large_tree_smoke
────────────
     Summary [   4.112s] 148 tests run: 148 passed, 2 skipped""", description="Run workspace tests with nextest")
    s.bash("cargo test --doc --workspace", """   Compiling tidyfs-core v0.4.0 (/home/dev/work/tidyfs/crates/tidyfs-core)
    Finished `test` profile [unoptimized + debuginfo] target(s) in 6.02s
   Doc-tests tidyfs_core

running 11 tests
test crates/tidyfs-core/src/rules.rs - rules::Rule::matches (line 41) ... ok
test crates/tidyfs-core/src/rules.rs - rules::RuleSet::from_toml (line 112) ... ok
test crates/tidyfs-core/src/walk.rs - walk::Walker (line 18) ... ok
...
test result: ok. 11 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 1.84s""",
           description="Run doctests")
    s.bash("cargo clippy --workspace --all-targets -- -D warnings", """    Checking tidyfs-core v0.4.0 (/home/dev/work/tidyfs/crates/tidyfs-core)
    Checking tidyfs-cli v0.4.0 (/home/dev/work/tidyfs/crates/tidyfs-cli)
    Finished `dev` profile [unoptimized + debuginfo] target(s) in 9.55s""", description="Clippy, deny warnings")
    s.say("All green locally:\n- nextest: 148 passed, 2 skipped\n- doctests: 11 passed\n- clippy: clean with `-D warnings`")
    s.end_turn()

    s.user("nice. CI's msrv job is red tho, can you look? MSRV is 1.74, it's the rust-version in Cargo.toml")
    s.bash("cargo +1.74 check --workspace", """error: toolchain '1.74-x86_64-unknown-linux-gnu' is not installed
help: run `rustup toolchain add 1.74-x86_64-unknown-linux-gnu` to install it""", is_error=True,
           description="Check the workspace on the MSRV toolchain")
    s.bash("rustup toolchain install 1.74 --profile minimal", """info: syncing channel updates for '1.74-x86_64-unknown-linux-gnu'
info: latest update on 2023-11-16, rust version 1.74.0 (79e9716c9 2023-11-13)
info: downloading component 'cargo'
info: downloading component 'rust-std'
info: downloading component 'rustc'
info: installing component 'cargo'
info: installing component 'rust-std'
info: installing component 'rustc'

  1.74-x86_64-unknown-linux-gnu installed - rustc 1.74.0 (79e9716c9 2023-11-13)
""", description="Install the 1.74 toolchain", gap=38)
    s.bash("cargo +1.74 check --workspace", """    Checking tidyfs-core v0.4.0 (/home/dev/work/tidyfs/crates/tidyfs-core)
error[E0599]: no method named `is_none_or` found for enum `Option` in the current scope
  --> crates/tidyfs-core/src/rules.rs:88:23
   |
88 |         self.max_age.is_none_or(|max| age <= max)
   |                      ^^^^^^^^^^
   |
help: there is a method `is_none` with a similar name
   |
88 |         self.max_age.is_none(|max| age <= max)
   |                      ~~~~~~~

For more information about this error, try `rustc --explain E0599`.
error: could not compile `tidyfs-core` (lib) due to 1 previous error""", is_error=True, code=101,
           description="Check the workspace on 1.74")
    s.read(P + "/crates/tidyfs-core/src/rules.rs", """    pub fn matches(&self, entry: &Entry) -> bool {
        let age = entry.age();
        self.glob.is_match(&entry.rel_path)
            && self.max_age.is_none_or(|max| age <= max)
            && self.min_size.map_or(true, |min| entry.size >= min)
    }""", offset=85)
    s.edit(P + "/crates/tidyfs-core/src/rules.rs",
           "            && self.max_age.is_none_or(|max| age <= max)",
           "            && self.max_age.map_or(true, |max| age <= max)", snippet_start=88)
    s.bash("cargo +1.74 check --workspace && cargo clippy --workspace --all-targets -- -D warnings", """    Checking tidyfs-core v0.4.0 (/home/dev/work/tidyfs/crates/tidyfs-core)
    Checking tidyfs-cli v0.4.0 (/home/dev/work/tidyfs/crates/tidyfs-cli)
    Finished `dev` profile [unoptimized + debuginfo] target(s) in 7.90s
    Checking tidyfs-core v0.4.0 (/home/dev/work/tidyfs/crates/tidyfs-core)
    Checking tidyfs-cli v0.4.0 (/home/dev/work/tidyfs/crates/tidyfs-cli)
    Finished `dev` profile [unoptimized + debuginfo] target(s) in 8.31s""", description="Re-check on MSRV and clippy")
    s.say("Found it. `Option::is_none_or` only became stable in Rust 1.82, and someone used it in "
          "`rules.rs:88`, so the 1.74 job can't compile tidyfs-core (E0599). I replaced it with "
          "`map_or(true, |max| age <= max)`, which does the same thing on old compilers. "
          "`cargo +1.74 check --workspace` passes now, and clippy is still clean.\n\n"
          "To check MSRV locally before pushing: `cargo +1.74 check --workspace` (the toolchain wasn't installed "
          "on this box, I added it with `rustup toolchain install 1.74 --profile minimal`).")
    s.end_turn()

    s.user("ok. next, aarch64 linux musl binaries. last release cross blew up on the mac mini runner bc "
           "there's no docker on it and I'd rather not put docker there. options?")
    s.read(P + "/.github/workflows/release.yml", """name: release
on:
  push:
    tags: ["v*"]
jobs:
  build:
    strategy:
      matrix:
        include:
          - { target: x86_64-unknown-linux-musl,  runner: ubuntu-24.04 }
          - { target: aarch64-unknown-linux-musl, runner: [self-hosted, macOS, release] }
          - { target: aarch64-apple-darwin,       runner: [self-hosted, macOS, release] }
          - { target: x86_64-pc-windows-msvc,     runner: windows-2022 }
    runs-on: ${{ matrix.runner }}
    steps:
      - uses: actions/checkout@v4
      - uses: dtolnay/rust-toolchain@stable
        with: { targets: "${{ matrix.target }}" }
      - name: install cross
        if: matrix.target == 'aarch64-unknown-linux-musl'
        run: cargo install cross --locked
      - name: build
        run: |
          if [ "${{ matrix.target }}" = "aarch64-unknown-linux-musl" ]; then
            cross build --release --target ${{ matrix.target }}
          else
            cargo build --release --target ${{ matrix.target }}
          fi""")
    s.say("Three realistic options:\n\n"
          "1. **cargo-zigbuild**: uses zig as the cross linker, no container at all. Works from macOS to "
          "`aarch64-unknown-linux-musl`, install is `brew install zig` + `cargo install cargo-zigbuild --locked`.\n"
          "2. **Keep cross, add Docker/colima** to the mac mini. Heavier, and you said you don't want that.\n"
          "3. **GitHub-hosted arm runners** (`ubuntu-24.04-arm`) and build natively there.\n\n"
          "I'd go with 1: smallest change to the workflow and nothing to run as a daemon on the runner.")
    s.user("zigbuild it is. the hosted arm runners cost money on our plan anyway")
    s.edit(P + "/.github/workflows/release.yml", """      - name: install cross
        if: matrix.target == 'aarch64-unknown-linux-musl'
        run: cargo install cross --locked
      - name: build
        run: |
          if [ "${{ matrix.target }}" = "aarch64-unknown-linux-musl" ]; then
            cross build --release --target ${{ matrix.target }}""", """      - name: install cargo-zigbuild
        if: matrix.target == 'aarch64-unknown-linux-musl'
        run: brew install zig && cargo install cargo-zigbuild --locked
      - name: build
        run: |
          if [ "${{ matrix.target }}" = "aarch64-unknown-linux-musl" ]; then
            cargo zigbuild --release --target ${{ matrix.target }}""", snippet_start=19)
    s.bash("cargo zigbuild --release --target aarch64-unknown-linux-musl", """Error: Failed to get zig version

Caused by:
    No such file or directory (os error 2)""", is_error=True, description="Try the musl build locally")
    s.bash("pip install --user ziglang && cargo zigbuild --release --target aarch64-unknown-linux-musl", """Collecting ziglang
  Downloading ziglang-0.13.0-py3-none-manylinux_2_12_x86_64.manylinux2010_x86_64.musllinux_1_1_x86_64.whl (45.9 MB)
     ━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━ 45.9/45.9 MB 31.2 MB/s eta 0:00:00
Installing collected packages: ziglang
Successfully installed ziglang-0.13.0
   Compiling libc v0.2.158
   Compiling memchr v2.7.4
   ...
   Compiling tidyfs-cli v0.4.0 (/home/dev/work/tidyfs/crates/tidyfs-cli)
    Finished `release` profile [optimized] target(s) in 1m 12s""", description="Install zig via pip and build", gap=95)
    s.bash("file target/aarch64-unknown-linux-musl/release/tidyfs",
           "target/aarch64-unknown-linux-musl/release/tidyfs: ELF 64-bit LSB executable, ARM aarch64, version 1 (SYSV), statically linked, stripped")
    s.say("Workflow updated: the aarch64 musl leg now installs zig + cargo-zigbuild and runs "
          "`cargo zigbuild --release --target aarch64-unknown-linux-musl`. I built it here too; zig wasn't on "
          "this machine, `pip install --user ziglang` was enough (cargo-zigbuild picks up the pip-installed zig). "
          "Output is a static aarch64 ELF.")
    s.end_turn()

    s.user("also the changelog. entries go under `## [Unreleased]`, keep-a-changelog style. I move them under "
           "the version heading myself when I run cargo release. and dont touch the version in Cargo.toml, "
           "cargo-release bumps it and tags")
    s.read(P + "/CHANGELOG.md", """# Changelog

All notable changes to this project will be documented in this file.

The format is based on [Keep a Changelog](https://keepachangelog.com/en/1.1.0/),
and this project adheres to [Semantic Versioning](https://semver.org/spec/v2.0.0.html).

## [Unreleased]

### Added
- `tidyfs sort --by-ext` groups files into folders by extension (#214)

## [0.3.2] - 2026-08-11
### Fixed
- `dedupe` no longer follows broken symlinks (#205)""")
    s.edit(P + "/CHANGELOG.md", """### Added
- `tidyfs sort --by-ext` groups files into folders by extension (#214)
""", """### Added
- `tidyfs sort --by-ext` groups files into folders by extension (#214)

### Changed
- aarch64 Linux (musl) release binaries are now built with cargo-zigbuild

### Fixed
- tidyfs-core builds on the MSRV (1.74) again
""", snippet_start=10)
    s.say("Added a `Changed` and a `Fixed` entry under `[Unreleased]`. Version in Cargo.toml left alone.")
    s.end_turn()

    s.user(f"last thing, the publish job needs the crates.io token and the slack notify step needs the webhook. "
           f"token: {CRATES_TOKEN}  webhook: {SLACK_HOOK}  put them in the repo secrets as CARGO_REGISTRY_TOKEN "
           f"and SLACK_RELEASE_WEBHOOK")
    s.bash(f"printf '%s' '{CRATES_TOKEN}' | gh secret set CARGO_REGISTRY_TOKEN --repo tidyfs-dev/tidyfs && "
           f"printf '%s' '{SLACK_HOOK}' | gh secret set SLACK_RELEASE_WEBHOOK --repo tidyfs-dev/tidyfs",
           """✓ Set Actions secret CARGO_REGISTRY_TOKEN for tidyfs-dev/tidyfs
✓ Set Actions secret SLACK_RELEASE_WEBHOOK for tidyfs-dev/tidyfs""", description="Store release secrets in GitHub")
    s.say("Both are set as Actions secrets on tidyfs-dev/tidyfs. The publish job already reads "
          "`secrets.CARGO_REGISTRY_TOKEN` and the notify step `secrets.SLACK_RELEASE_WEBHOOK`. Since the raw "
          "values went through this chat, rotating the crates.io token after the release wouldn't hurt.")
    s.user("thanks, that's all for now. I'll tag after lunch")
    s.say("Sounds good, good luck with 0.4.0.")
    s.end_turn()

    # ---- gold ----
    s.expect("e1", "fact", "command", "en", "Run the test suite with `cargo nextest run --workspace`.",
             ["cargo nextest run"])
    s.expect("e2", "fact", "gotcha", "en",
             "nextest does not run doctests; run `cargo test --doc` (workspace) separately.", ["cargo test --doc"])
    s.expect("e3", "fact", "constraint", "en",
             "tidyfs MSRV is Rust 1.74 (rust-version in Cargo.toml); CI has an msrv job.", ["MSRV", "1.74"])
    s.expect("e4", "experience", "root_cause", "en",
             "The CI msrv job failed with E0599 because `Option::is_none_or` is only stable since Rust 1.82; "
             "replaced it with `map_or(true, ...)` in tidyfs-core rules.rs.", ["is_none_or", "map_or"])
    s.expect("e5", "fact", "command", "en",
             "Check MSRV locally with `cargo +1.74 check --workspace` (install the toolchain with "
             "`rustup toolchain install 1.74 --profile minimal`).", ["cargo +1.74 check"])
    s.expect("e6", "decision", "decision", "en",
             "Build aarch64-unknown-linux-musl release binaries with cargo-zigbuild instead of cross, because "
             "the self-hosted Mac mini release runner has no Docker (and hosted arm runners cost money).",
             ["zigbuild"], chosen="zigbuild", over=["cross"], why=["docker"])
    s.expect("e7", "fact", "constraint", "en",
             "The release runner for macOS/aarch64 builds is a self-hosted Mac mini without Docker.",
             ["mac mini", "docker"])
    s.expect("e8", "fact", "convention", "en",
             "CHANGELOG.md follows Keep a Changelog: add entries under `## [Unreleased]`; the user moves them "
             "under the version heading at release time.", ["Unreleased"])
    s.expect("e9", "fact", "convention", "en",
             "Never bump the version in Cargo.toml by hand; the user runs cargo-release, which bumps and tags.",
             ["cargo-release"])
    s.expect("e10", "fact", "config", "en",
             "The release workflow reads the crates.io token from the Actions secret CARGO_REGISTRY_TOKEN and "
             "the Slack webhook from SLACK_RELEASE_WEBHOOK (repo tidyfs-dev/tidyfs).",
             ["CARGO_REGISTRY_TOKEN"])
    s.acceptable(["ziglang"], "cargo-zigbuild can use zig installed with `pip install ziglang`")
    s.acceptable(["SLACK_RELEASE_WEBHOOK"], "name of the Slack secret")
    s.acceptable(["cargo zigbuild --release"], "the exact zigbuild command")
    s.forbid("always forget", "after lunch", "148 passed", "11 passed", "good luck")
    s.secret(CRATES_TOKEN, SLACK_HOOK)
    return s


def h1s2():
    s = Session("h1s2_tidyfs_dedupe_hardlinks", P, 2, "en", "2026-09-09T14:03:10.000Z", "fix/dedupe-hardlinks",
                "2.1.309")
    s.title("Fix dedupe treating hardlinks as duplicates")
    s.user("issue #231: someone ran `tidyfs dedupe` on their rsnapshot backup dir and it reports 38 GiB "
           "reclaimable, which is nonsense, rsnapshot hardlinks unchanged files between snapshots. with --apply "
           "it would've deleted links out of the older snapshots. can you figure out whats going on",
           gap=0)
    s.recall_attachment([
        ("4", "fact", "6 days ago", "Run tests with `cargo nextest run --workspace`; doctests need a separate `cargo test --doc`."),
        ("7", "decision", "6 days ago", "aarch64 musl release builds use cargo-zigbuild, not cross (the Mac mini release runner has no Docker)."),
        ("11", "fact", "3 weeks ago", "User edits in Helix; give shell commands rather than editor-specific steps."),
    ])
    s.think("Hardlinks share an inode, so identical content. Check how dedupe groups files: probably size then hash, "
            "with no identity check.")
    s.grep("fn (group_by_hash|find_duplicates)", P + "/crates", """crates/tidyfs-core/src/dedupe.rs:42:pub fn find_duplicates(entries: Vec<Entry>) -> Vec<DupGroup> {
crates/tidyfs-core/src/dedupe.rs:71:fn group_by_hash(same_size: Vec<Entry>) -> HashMap<blake3::Hash, Vec<Entry>> {""")
    s.read(P + "/crates/tidyfs-core/src/dedupe.rs", """pub fn find_duplicates(entries: Vec<Entry>) -> Vec<DupGroup> {
    let mut by_size: HashMap<u64, Vec<Entry>> = HashMap::new();
    for e in entries {
        by_size.entry(e.size).or_default().push(e);
    }
    let groups: HashMap<blake3::Hash, Vec<Entry>> = by_size
        .into_par_iter()
        .filter(|(_, v)| v.len() > 1)
        .flat_map(|(_, v)| group_by_hash(v))
        .collect();
    groups
        .into_values()
        .filter(|g| g.len() > 1)
        .map(DupGroup::new)
        .collect()
}""", offset=42)
    s.say("Here's what happens. `find_duplicates` buckets by size, then by blake3 hash, and anything in the same "
          "bucket counts as a duplicate. Two names for the same inode have the same bytes by definition, so every "
          "rsnapshot hardlink lands in a group, and the \"reclaimable\" number adds up the size of each extra name "
          "even though no extra disk space is used. Nothing in this path ever compares file identity (device + "
          "inode).\n\nFix is to collapse entries that are the same underlying file before a group is reported.")
    s.user("how do we do identity on windows though, we ship windows builds")
    s.say("Two ways:\n\n"
          "- `std::os::unix::fs::MetadataExt` (`dev()`/`ino()`) behind `cfg(unix)`, plus something else on "
          "Windows. The std equivalent there (`volume_serial_number`/`file_index`) is still unstable "
          "(`windows_by_handle`), so we'd need our own winapi calls.\n"
          "- The `same-file` crate: `same_file::Handle` compares dev/ino on unix and volume serial + file index "
          "on Windows. It's already in Cargo.lock because walkdir depends on it.\n\n"
          "I'd take `same-file`. Opening a handle per file is not free, so I'd only do it inside hash groups "
          "(which are small), not for every file we walk.")
    s.user("go with same-file. already in the tree anyway")
    s.bash("cargo add same-file@1 -p tidyfs-core", """    Updating crates.io index
      Adding same-file v1.0.6 to dependencies
             Features as of v1.0.6:
             (none)""")
    s.edit(P + "/crates/tidyfs-core/src/dedupe.rs", """    groups
        .into_values()
        .filter(|g| g.len() > 1)""", """    groups
        .into_values()
        .map(collapse_same_file)
        .filter(|g| g.len() > 1)""", snippet_start=52)
    s.write(P + "/crates/tidyfs-cli/tests/regressions/issue_231.rs", """//! #231: hardlinks must not be reported as duplicates.
use std::fs;

#[test]
fn dedupe_skips_hardlinks() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("a.bin"), b"same bytes").unwrap();
    fs::hard_link(dir.path().join("a.bin"), dir.path().join("b.bin")).unwrap();
    let out = tidyfs_cmd().args(["dedupe", "--json"]).arg(dir.path()).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "[]");
}
""")
    s.bash("cargo nextest run -p tidyfs-core -p tidyfs-cli", """    Finished `test` profile [unoptimized + debuginfo] target(s) in 18.64s
────────────
 Nextest run ID 0b9d55a3-2c61-4d0e-8f3a-71c2c9e6b140 with nextest profile: default
    Starting 149 tests across 9 binaries (2 tests skipped)
        PASS [   0.010s] tidyfs-core dedupe::tests::groups_by_size_then_hash
        FAIL [   0.388s] tidyfs-cli::cli dedupe_report_snapshot
──── STDOUT:             tidyfs-cli::cli dedupe_report_snapshot
──── STDERR:             tidyfs-cli::cli dedupe_report_snapshot
-old snapshot
+new results
────────────┬───────────────────────────────────────────────────────────────
    0       │-group 1 (2 files, 4.0 KiB each)
    1       │-  fixtures/tree/a/photo.jpg
    2       │-  fixtures/tree/b/photo-copy.jpg
    3       │-group 2 (3 files, 12 B each)
          0 │+group 1 (3 files, 12 B each)
    4     1 │   fixtures/tree/notes/todo.txt
    5     2 │   fixtures/tree/old/todo.txt
    6     3 │   fixtures/tree/todo (1).txt
          4 │+group 2 (2 files, 4.0 KiB each)
          5 │+  fixtures/tree/a/photo.jpg
          6 │+  fixtures/tree/b/photo-copy.jpg
────────────┴───────────────────────────────────────────────────────────────
stored new snapshot /home/dev/work/tidyfs/crates/tidyfs-cli/tests/snapshots/cli__dedupe_report.snap.new
thread 'dedupe_report_snapshot' panicked at crates/tidyfs-cli/tests/cli.rs:133:5:
snapshot assertion for 'dedupe_report' failed in line 133
────────────
     Summary [   3.977s] 149 tests run: 148 passed, 1 failed, 2 skipped
        FAIL [   0.388s] tidyfs-cli::cli dedupe_report_snapshot
error: test run failed""", is_error=True, code=100, description="Run core + cli tests")
    s.say("The snapshot failure isn't about hardlinks: same groups, different order. The groups come out of a "
          "`HashMap` that's filled from a rayon `par_iter`, so the order was never stable; the old snapshot "
          "matched by luck and my change reshuffled it. I'll sort the groups (largest file size first, then by "
          "first path) so the report is deterministic.")
    s.edit(P + "/crates/tidyfs-core/src/dedupe.rs", """        .filter(|g| g.len() > 1)
        .map(DupGroup::new)
        .collect()""", """        .filter(|g| g.len() > 1)
        .map(DupGroup::new)
        .sorted_by(|a, b| b.size.cmp(&a.size).then_with(|| a.paths[0].cmp(&b.paths[0])))
        .collect()""", snippet_start=55)
    s.bash("cargo nextest run -p tidyfs-core -p tidyfs-cli 2>&1 | tail -4", """        PASS [   0.371s] tidyfs-cli::cli dedupe_report_snapshot
        PASS [   0.402s] tidyfs-cli::cli dedupe_skips_hardlinks
────────────
     Summary [   4.020s] 149 tests run: 149 passed, 2 skipped""")
    s.say("All 149 pass now, including the new hardlink regression test.")
    s.user("wait did it just overwrite the snapshot? I want to see the diff before anything gets accepted")
    s.bash("git status --short crates/tidyfs-cli/tests/snapshots/ && cargo insta pending-snapshots", """?? crates/tidyfs-cli/tests/snapshots/cli__dedupe_report.snap.new
Pending snapshots:
  crates/tidyfs-cli/tests/snapshots/cli__dedupe_report.snap.new""")
    s.say("No, nothing was overwritten. insta wrote a `.snap.new` next to the old file and the committed "
          "`cli__dedupe_report.snap` is untouched; the passing run above is just because the sorted order "
          "happens to match the committed one (biggest files first). The pending file is left over from the "
          "earlier failing run. To look at it: `cargo insta review` (interactive) or I can print it here. "
          "Note CI sets `CI=true`, so insta doesn't write `.snap.new` there at all and a snapshot that isn't "
          "committed just fails the job. Whatever we accept has to be committed.")
    s.user("print it")
    s.bash("cat crates/tidyfs-cli/tests/snapshots/cli__dedupe_report.snap.new | head -20", """---
source: crates/tidyfs-cli/tests/cli.rs
expression: stdout
---
group 1 (3 files, 12 B each)
  fixtures/tree/notes/todo.txt
  fixtures/tree/old/todo.txt
  fixtures/tree/todo (1).txt
group 2 (2 files, 4.0 KiB each)
  fixtures/tree/a/photo.jpg
  fixtures/tree/b/photo-copy.jpg""")
    s.say("That's the unsorted output from before my sort fix, so it should be rejected: "
          "`cargo insta reject`. The committed snapshot already matches the sorted order.")
    s.bash("cargo insta reject && git status --short", """info: discarded 1 snapshot
 M crates/tidyfs-core/Cargo.toml
 M crates/tidyfs-core/src/dedupe.rs
 M Cargo.lock
?? crates/tidyfs-cli/tests/regressions/""")
    s.say("Rejected. What's left in the tree: the dedupe change, same-file in Cargo.toml/Cargo.lock, and the new "
          "`tests/regressions/` folder with the #231 test.")
    s.user("good. and that regressions folder, yes keep that. from now on every bug fix gets a regression test "
           "in tests/regressions/ named after the issue, so this one is issue_231.rs")
    s.say("It's already named that way (`tests/regressions/issue_231.rs`). Summary of the fix:\n"
          "- hash groups now drop entries that are the same file (`same_file::Handle`), so hardlinks aren't "
          "duplicates any more\n- duplicate groups are sorted, the report is deterministic\n"
          "- regression test for #231")
    s.user("thanks! I always mix up dev and ino which is which lol")
    s.end_turn()

    s.expect("e1", "experience", "root_cause", "en",
             "`tidyfs dedupe` counted hardlinks (same inode) as duplicates (issue #231, rsnapshot dirs): "
             "grouping was by size + blake3 hash only, with no file-identity check.", ["dedup", "link"])
    s.expect("e2", "experience", "fix", "en",
             "Fix for #231: within each hash group, collapse entries that are the same file using "
             "`same_file::Handle` before reporting or deleting; only open handles inside hash groups.",
             ["Handle"])
    s.expect("e3", "decision", "decision", "en",
             "Use the same-file crate for file identity instead of MetadataExt dev/ino with cfg(unix), because "
             "Windows builds ship and std's Windows file-index API is unstable; it's already a dependency via walkdir.",
             ["same-file"], chosen="same-file", over=["ino"], why=["windows"])
    s.expect("e4", "experience", "lesson", "en",
             "Dedupe group order was nondeterministic (rayon par_iter collected into a HashMap) and the snapshot "
             "test only passed by luck; groups are now sorted by size desc, then first path.",
             ["sort", "snapshot"])
    s.expect("e5", "fact", "gotcha", "en",
             "Snapshot tests use insta: pending changes land in `.snap.new`; review with `cargo insta review` / "
             "accept or reject, and commit the .snap files, since in CI (CI=true) insta writes nothing and an "
             "uncommitted snapshot fails.", ["insta"])
    s.expect("e6", "fact", "convention", "en",
             "Every bug fix gets a regression test in tests/regressions/ named after the issue number "
             "(e.g. issue_231.rs).", ["tests/regressions"])
    s.expect("e7", "fact", "preference", "en",
             "The user wants to see a snapshot diff before any snapshot is accepted.", ["snapshot", "diff"])
    s.acceptable(["rsnapshot"], "context: rsnapshot hardlinks unchanged files between snapshots")
    s.acceptable(["cargo insta reject"], "command to discard a pending snapshot")
    s.forbid("Helix", "zigbuild", "cargo test --doc", "mix up", "148 passed, 1 failed", "149 tests run")
    return s


def h1s3():
    s = Session("h1s3_tidyfs_config", P, 3, "en", "2026-09-17T08:47:55.000Z", "feat/config-xdg", "2.1.315")
    s.title("Config file location: XDG on macOS, --config flag")
    s.user("heads up, couple of things changed since last week: MSRV is 1.80 now, we needed LazyLock. and there's "
           "a justfile, `just test` runs nextest and the doctests in one go, so use that instead of the two commands.\n\n"
           "today: config location. right now it's dirs::config_dir() which on macOS ends up in "
           "~/Library/Application Support/tidyfs/ and everyone hates that. also #240 wants a way to point at a "
           "config file explicitly", gap=0)
    s.grep("config_dir", P + "/crates", """crates/tidyfs-cli/src/config.rs:9:static CONFIG_DIR: LazyLock<PathBuf> = LazyLock::new(|| dirs::config_dir().unwrap().join("tidyfs"));
crates/tidyfs-cli/src/config.rs:31:        let path = CONFIG_DIR.join("config.toml");""")
    s.read(P + "/crates/tidyfs-cli/src/config.rs", """use std::{path::PathBuf, sync::LazyLock};

use anyhow::Context;

/// Where the config lives. Resolved once.
static CONFIG_DIR: LazyLock<PathBuf> = LazyLock::new(|| dirs::config_dir().unwrap().join("tidyfs"));

impl Config {
    pub fn load_default() -> anyhow::Result<Self> {
        let path = CONFIG_DIR.join("config.toml");
        Self::load(&path).with_context(|| format!("reading {}", path.display()))
    }""", offset=1)
    s.say("Options for the location:\n\n"
          "1. `etcetera` with `choose_base_strategy()`: XDG layout on Linux *and* macOS "
          "(`$XDG_CONFIG_HOME` or `~/.config`), Known Folders on Windows. Small crate, no deps worth mentioning.\n"
          "2. Keep `dirs` and special-case macOS with `cfg(target_os = \"macos\")` → `$HOME/.config`.\n"
          "3. `directories`/`ProjectDirs`: same macOS behaviour as `dirs`, so it doesn't help.\n\n"
          "For #240 I'd add `--config <path>` and a `TIDYFS_CONFIG` env var on top of whatever we pick.")
    s.user("etcetera. it does the XDG-on-mac thing out of the box and it's tiny. precedence: flag, then env var, "
           "then the xdg path. and keep reading the old Application Support file if it's there, print a "
           "deprecation warning, we drop that in 0.6")
    s.bash("cargo add etcetera@0.8 -p tidyfs-cli && cargo remove dirs -p tidyfs-cli", """    Updating crates.io index
      Adding etcetera v0.8.0 to dependencies
    Removing dirs from dependencies""")
    s.edit(P + "/crates/tidyfs-cli/src/config.rs", """/// Where the config lives. Resolved once.
static CONFIG_DIR: LazyLock<PathBuf> = LazyLock::new(|| dirs::config_dir().unwrap().join("tidyfs"));""",
           """/// Where the config lives. Resolved once.
static CONFIG_DIR: LazyLock<PathBuf> = LazyLock::new(|| {
    etcetera::choose_base_strategy().expect("no home dir").config_dir().join("tidyfs")
});

/// --config > $TIDYFS_CONFIG > $XDG_CONFIG_HOME/tidyfs/config.toml (~/.config/tidyfs/config.toml)
pub fn locate(flag: Option<&Path>) -> PathBuf {
    if let Some(p) = flag { return p.to_path_buf(); }
    if let Some(p) = std::env::var_os("TIDYFS_CONFIG") { return p.into(); }
    let new = CONFIG_DIR.join("config.toml");
    legacy_macos_fallback(&new).unwrap_or(new)
}""", snippet_start=5)
    s.bash("just test", """cargo nextest run --workspace
    Finished `test` profile [unoptimized + debuginfo] target(s) in 22.18s
────────────
 Nextest run ID 3f0e1c2d-8a7b-4c55-9e61-d2f4b7a0c913 with nextest profile: default
    Starting 153 tests across 9 binaries (2 tests skipped)
        FAIL [   0.006s] tidyfs-cli config::tests::xdg_config_home_is_respected
──── STDERR:             tidyfs-cli config::tests::xdg_config_home_is_respected
thread 'config::tests::xdg_config_home_is_respected' panicked at crates/tidyfs-cli/src/config.rs:97:9:
assertion `left == right` failed
  left: "/home/dev/.config/tidyfs/config.toml"
 right: "/tmp/.tmpQx81vd/tidyfs/config.toml"
────────────
     Summary [   3.502s] 153 tests run: 152 passed, 1 failed, 2 skipped
        FAIL [   0.006s] tidyfs-cli config::tests::xdg_config_home_is_respected
error: test run failed
error: Recipe `test` failed on line 4 with exit code 100""", is_error=True, code=100)
    s.read(P + "/crates/tidyfs-cli/src/config.rs", """    #[test]
    fn xdg_config_home_is_respected() {
        let tmp = tempfile::tempdir().unwrap();
        temp_env::with_var_unset("TIDYFS_CONFIG", || {
            assert!(locate(None).ends_with("tidyfs/config.toml"));
            temp_env::with_var("XDG_CONFIG_HOME", Some(tmp.path()), || {
                assert_eq!(locate(None), tmp.path().join("tidyfs/config.toml"));
            });
        });
    }""", offset=88)
    s.say("The test calls `locate()` twice in one process, first without `XDG_CONFIG_HOME`, then with it. "
          "`CONFIG_DIR` is a `LazyLock`, so the first call froze the path and the second never sees the new env "
          "var. Real users won't hit it in one process, but anything env-derived shouldn't sit in a static: it's "
          "just a couple of `getenv` calls, I'll resolve it in `locate()` each time.")
    s.edit(P + "/crates/tidyfs-cli/src/config.rs", """/// Where the config lives. Resolved once.
static CONFIG_DIR: LazyLock<PathBuf> = LazyLock::new(|| {
    etcetera::choose_base_strategy().expect("no home dir").config_dir().join("tidyfs")
});
""", """fn config_dir() -> PathBuf {
    etcetera::choose_base_strategy().expect("no home dir").config_dir().join("tidyfs")
}
""", snippet_start=5)
    s.bash("just test 2>&1 | tail -5", """     Summary [   3.611s] 153 tests run: 153 passed, 2 skipped
cargo test --doc --workspace
   Doc-tests tidyfs_core
test result: ok. 11 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 1.90s""")
    s.say("Green again: 153 tests under nextest plus the 11 doctests.")
    s.end_turn()
    s.compact("- User said MSRV is now 1.80 and `just test` replaces the nextest + doctest commands.\n"
              "- Config location moved from dirs::config_dir() to etcetera (XDG on macOS too); lookup order "
              "--config > TIDYFS_CONFIG > XDG path; legacy macOS path read with a deprecation warning until 0.6.\n"
              "- Fixed a test failure caused by caching the config dir in a LazyLock.\n- All tests pass.")
    s.user("ok one more while we're here. `tidyfs sort` moves stuff immediately unless you pass --dry-run. "
           "dedupe already does plan-by-default and needs --apply. make sort the same, --dry-run goes away, "
           "nothing that touches files runs without --apply. same reasoning as dedupe, destructive should be opt in. "
           "and breaking changes in the changelog go under a `### Breaking` subsection, starting with the "
           "command name, so people grepping for `sort` find it")
    s.grep("dry_run", P + "/crates/tidyfs-cli/src", """crates/tidyfs-cli/src/cmd/sort.rs:17:    #[arg(long)]
crates/tidyfs-cli/src/cmd/sort.rs:18:    dry_run: bool,
crates/tidyfs-cli/src/cmd/sort.rs:44:    if args.dry_run {""")
    s.edit(P + "/crates/tidyfs-cli/src/cmd/sort.rs", """    #[arg(long)]
    dry_run: bool,""", """    /// Actually move files. Without it, sort only prints the plan.
    #[arg(long)]
    apply: bool,""", snippet_start=16)
    s.edit(P + "/CHANGELOG.md", """## [Unreleased]
""", """## [Unreleased]

### Breaking
- `sort`: now prints the plan by default and only moves files with `--apply`; `--dry-run` was removed
""", snippet_start=8)
    s.bash("just test 2>&1 | grep -E 'Summary|test result'", """     Summary [   3.590s] 153 tests run: 153 passed, 2 skipped
test result: ok. 11 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 1.88s""")
    s.say("Done: `sort` prints the plan unless `--apply` is given, `--dry-run` is gone, and the changelog has a "
          "`### Breaking` entry starting with `sort`.")
    s.end_turn()

    s.expect("e1", "fact", "constraint", "en", "tidyfs MSRV is now Rust 1.80 (bumped to use std::sync::LazyLock).",
             ["1.80"], supersedes="h1s1_tidyfs_release#e3")
    s.expect("e2", "fact", "command", "en",
             "Run the tests with `just test` (nextest plus the doctests in one go) instead of the separate commands.",
             ["just test"], supersedes="h1s1_tidyfs_release#e1")
    s.expect("e3", "decision", "decision", "en",
             "Resolve the config directory with etcetera's choose_base_strategy() (XDG layout on Linux and macOS) "
             "instead of dirs::config_dir(), which puts it under ~/Library/Application Support on macOS.",
             ["etcetera"], chosen="etcetera", over=["dirs"], why=["macOS"])
    s.expect("e4", "fact", "config", "en",
             "Config lookup order: `--config <path>`, then `TIDYFS_CONFIG`, then "
             "`$XDG_CONFIG_HOME/tidyfs/config.toml` (default ~/.config/tidyfs/config.toml).",
             ["TIDYFS_CONFIG", "--config"])
    s.expect("e5", "fact", "constraint", "en",
             "The old macOS config path (~/Library/Application Support/tidyfs) is still read as a fallback with a "
             "deprecation warning; support is dropped in 0.6.", ["Application Support", "0.6"])
    s.expect("e6", "experience", "lesson", "en",
             "Caching the env-derived config dir in a LazyLock static froze the path for the whole process, so "
             "test xdg_config_home_is_respected failed; resolve env-derived paths on each call instead.",
             ["LazyLock"])
    s.expect("e7", "decision", "decision", "en",
             "`tidyfs sort` is plan-only by default and needs `--apply` to move files (the --dry-run flag was "
             "removed), the same as dedupe: destructive operations must be opt-in.",
             ["--apply"], chosen="--apply", over=["--dry-run"], why=["dedupe"])
    s.expect("e8", "fact", "convention", "en",
             "Breaking changes go under a `### Breaking` subsection in the changelog, each entry starting with the "
             "command name.", ["Breaking"])
    s.acceptable(["#240"], "issue #240 asked for an explicit config path")
    s.acceptable(["temp_env"], "config tests set env vars through temp_env")
    s.forbid("153 passed", "152 passed", "/tmp/.tmpQx81vd", "everyone hates")
    return s


def h1s4():
    s = Session("h1s4_tidyfs_symlinks", P, 4, "en", "2026-09-24T19:20:02.000Z", "main", "2.1.318")
    s.title("How does the walker treat symlinks?")
    s.user("quick q, no changes please. how does the walker deal with symlinks? someone on discord says "
           "tidyfs sort followed a symlink into /mnt/nas and started sorting their NAS. is that even possible?",
           gap=0)
    s.mcp_search("tidyfs walker symlinks follow", [
        {"id": "31", "content": "tidyfs dedupe collapses hardlinks via same_file::Handle before reporting (#231)."},
        {"id": "38", "content": "Config lookup: --config, then TIDYFS_CONFIG, then $XDG_CONFIG_HOME/tidyfs/config.toml."},
        {"id": "12", "content": "Every bug fix gets a regression test in tests/regressions/issue_<n>.rs."},
    ])
    s.say("Nothing stored about symlinks, so let me look at the code.")
    s.bash("cargo run -q -- sort --follow-symlinks /tmp/does-not-matter", """error: unexpected argument '--follow-symlinks' found

  tip: a similar argument exists: '--follow'

Usage: tidyfs sort [OPTIONS] <DIR>

For more information, try '--help'.""", is_error=True, code=2, description="See what the symlink flag is called")
    s.grep("follow", P + "/crates", """crates/tidyfs-cli/src/cmd/sort.rs:21:    #[arg(short = 'L', long = "follow")]
crates/tidyfs-cli/src/cmd/sort.rs:22:    follow_symlinks: bool,
crates/tidyfs-core/src/walk.rs:27:            .follow_links(opts.follow_symlinks)
crates/tidyfs-core/src/walk.rs:28:            .same_file_system(false)""")
    s.read(P + "/crates/tidyfs-core/src/walk.rs", """    pub fn iter(&self, opts: &WalkOpts) -> impl Iterator<Item = Entry> + '_ {
        WalkDir::new(&self.root)
            .follow_links(opts.follow_symlinks)
            .same_file_system(false)
            .into_iter()
            .filter_entry(|e| opts.hidden || !is_hidden(e))
            .filter_map(|r| r.ok())
            .map(Entry::from)
    }""", offset=25)
    s.say("Short answer: only if they passed `-L`/`--follow`.\n\n"
          "- By default `follow_links` is false, so a symlink is just an entry; sort can move the link itself, "
          "but never walks into its target.\n"
          "- With `-L`, walkdir follows links (and detects loops), and because `same_file_system(false)` is set "
          "it happily crosses into other mounts, so a link to /mnt/nas is walked like any other directory.\n\n"
          "A cheap guard would be to stay on one filesystem whenever `-L` is on:")
    s.reject_tool("Edit", {"file_path": P + "/crates/tidyfs-core/src/walk.rs",
                           "old_string": "            .same_file_system(false)",
                           "new_string": "            .same_file_system(opts.follow_symlinks)"})
    s.user("I said no changes :) just explaining is fine. ok so they must have used -L. I'll reply on discord")
    s.say("Got it, no edits. Yes, the NAS traversal only happens with `-L`.")
    s.end_turn()

    s.acceptable(["follow"], "sort only follows symlinks with -L/--follow; with -L it crosses filesystems "
                 "(same_file_system(false))")
    s.acceptable(["same_file_system"], "possible future change, not decided")
    s.forbid("same_file::Handle", "TIDYFS_CONFIG", "tests/regressions", "discord", "no changes", "I'll reply")
    return s


SESSIONS = [h1s1, h1s2, h1s3, h1s4]
