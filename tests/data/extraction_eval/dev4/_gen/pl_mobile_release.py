"""Project L (en): mobile-release, the release pipeline of the Tandem iOS + Android apps (fastlane, GitHub Actions,
self-hosted Mac minis, TestFlight / Play Console, Crashlytics)."""

from lib import Session, reminder

CWD = "/home/dev/work/mobile-release"


def s1():
    s = Session(
        "l1_release_ios_signing", CWD, "2027-01-13T16:10:00Z", branch="fix/match-extension", version="2.1.319",
        lang="en", order=1,
    )
    s.snapshot()
    s.user(
        "Morning. Plan for today: get the beta green, then finally sort out CI costs. The iOS beta workflow has been red since "
        "yesterday afternoon, it dies at code signing. "
        "The job runs on mac-ci-01.build.tandem.internal. Can you take a look?"
    )
    s.bash(
        "gh run view 7734120981 --log-failed | tail -3",
        "▸ error: No profile for team 'K7Q2M4XJ9P' matching 'match AppStore com.tandem.app.NotificationService' found: "
        "Xcode couldn't find any provisioning profiles matching 'K7Q2M4XJ9P/match AppStore com.tandem.app.NotificationService'.\n"
        "[!] Error building the application - see the log above\nError: Process completed with exit code 1.",
        desc="Failed step of the last beta run",
    )
    s.read(
        "/home/dev/work/mobile-release/fastlane/Matchfile",
        'git_url("git@github.com:tandem-app/ios-certificates.git")\nstorage_mode("git")\ntype("appstore")\n'
        'app_identifier(["com.tandem.app"])\nreadonly(is_ci)',
    )
    s.grep(
        "PRODUCT_BUNDLE_IDENTIFIER = ",
        "ios/Tandem.xcodeproj/project.pbxproj:1184:\t\t\t\tPRODUCT_BUNDLE_IDENTIFIER = com.tandem.app;\n"
        "ios/Tandem.xcodeproj/project.pbxproj:1342:\t\t\t\tPRODUCT_BUNDLE_IDENTIFIER = com.tandem.app.NotificationService;",
        path="ios",
    )
    s.say(
        "Root cause: the rich-push NotificationService extension that landed in #1482 has its own bundle id, but the Matchfile only lists "
        "`com.tandem.app`. So fastlane match never created a provisioning profile for the extension, and CI runs match with "
        "`readonly(is_ci)`, so it can't create one on its own either. Fix: add the extension's id to the Matchfile and run match "
        "once from a machine with write access to the certificates repo."
    )
    s.edit(
        "/home/dev/work/mobile-release/fastlane/Matchfile",
        'app_identifier(["com.tandem.app"])',
        'app_identifier(["com.tandem.app", "com.tandem.app.NotificationService"])',
    )
    s.user("Do it. MATCH_PASSWORD is tandem-match-Sx81!q (also in 1Password under 'iOS signing').")
    s.bash(
        "MATCH_PASSWORD=\"$(op read 'op://Mobile/iOS signing/password')\" bundle exec fastlane match appstore | tail -2",
        "[16:31:07]: Installed Provisioning Profile 'match AppStore com.tandem.app.NotificationService'\n"
        "[16:31:08]: All required keys, certificates and provisioning profiles are installed 🙌",
        desc="Create the missing profile",
    )
    s.bash(
        "gh workflow run ios-beta.yml --ref main && sleep 5 && gh run watch --exit-status | tail -1",
        "✓ main iOS Beta · 7735002114",
    )
    s.user(
        "Green 🎉. Jess asked whether we should drop match altogether and let Xcode do automatic signing on CI with the "
        "App Store Connect API key. Thoughts?"
    )
    s.say(
        "Automatic signing with the API key removes the certificates repo, and new targets just work. The catch: when a runner "
        "doesn't have the private key of an existing distribution cert, Xcode creates a new cert, and Apple caps distribution "
        "certs per team. With three runners plus a couple of laptops we'd keep hitting the cap and revoking each other's certs. "
        "fastlane match keeps one shared cert and the profiles encrypted in git; its cost is exactly today's failure, a manual "
        "step when a target is added, and a CI check can catch that before it breaks a build."
    )
    s.user(
        "Stay on match. The cert cap is a deal breaker with three runners. Add a CI check that fails when any bundle id in "
        "the Xcode project is missing from the Matchfile."
    )
    s.tool(
        "Write",
        {
            "file_path": "/home/dev/work/mobile-release/scripts/check_matchfile.rb",
            "content": "#!/usr/bin/env ruby\n# Fails when a PRODUCT_BUNDLE_IDENTIFIER in the Xcode project is not listed in fastlane/Matchfile.\n",
        },
        "File created successfully at: /home/dev/work/mobile-release/scripts/check_matchfile.rb",
    )
    s.user("Next: we burn through our macOS minutes by the 20th every month. Hosted macOS is eating the CI budget.")
    s.say(
        "Options:\n1. GitHub-hosted macOS runners, bigger size: per-minute price is about 10x Linux, and Xcode versions on the "
        "image change on GitHub's schedule;\n2. self-hosted Mac minis: fixed cost, we choose the Xcode version, but we patch "
        "and babysit them;\n3. Bitrise or Codemagic: managed macOS, another vendor and another place holding our signing secrets."
    )
    s.user(
        "Self-hosted it is. We already have three minis in the office rack doing nothing. Bitrise would mean another vendor "
        "through procurement and yet another place with our signing secrets."
    )
    s.edit(
        "/home/dev/work/mobile-release/.github/workflows/ios-beta.yml",
        "    runs-on: macos-14-xlarge",
        "    runs-on: [self-hosted, macOS, xcode]",
    )
    s.user("And build numbers: someone bumps them by hand and we've collided twice this quarter. Use a timestamp?")
    s.say(
        "A yyMMddHHmm timestamp is 2701131645 today, which is above Play's versionCode maximum of 2100000000, so Android "
        "would reject it. GITHUB_RUN_NUMBER is monotonic, small, and available on both platforms."
    )
    s.user("Run number then, the same number on iOS and Android, so builds line up in bug reports.")
    s.edit(
        "/home/dev/work/mobile-release/fastlane/Fastfile",
        '  build_number = prompt(text: "Build number: ")',
        '  build_number = ENV.fetch("GITHUB_RUN_NUMBER")',
    )
    s.user(
        "A few things for the record. Nightly builds run at 02:00 UTC from main, the cron is in .github/workflows/nightly.yml. "
        "Lanes pipe xcodebuild through xcpretty, keep it that way so logs stay readable. Release branches are release/YY.N, "
        "cut from main every other Tuesday. Jessica Park (Jess) is release captain and signs off every store submission. "
        "The release bot posts to Slack via https://hooks.slack.com/services/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"
    )
    s.say("Noted. The webhook goes into the repo secret `SLACK_RELEASE_WEBHOOK`; the workflows read it from there.")
    s.user("coffee break, then open the PR")
    s.bash(
        "git add -A && git commit -qm 'ci: add NotificationService to match, self-hosted runners, run-number builds' && gh pr create --fill",
        "https://github.com/tandem-app/mobile-release/pull/214",
    )
    s.stop(ms=2298400)
    s.title("iOS beta signing failure and runner/build-number choices")

    s.exp(
        "root_cause",
        "en",
        "iOS beta failed at code signing ('No profile ... matching match AppStore com.tandem.app.NotificationService'): the "
        "NotificationService extension added in #1482 has its own bundle id that was missing from the Matchfile, and CI runs "
        "match readonly so it could not create the profile. Fixed by adding the id and running match once with write access.",
        ["Matchfile", "NotificationService"],
    )
    s.decision(
        "en",
        "Keep signing with fastlane match instead of Xcode automatic signing with the App Store Connect API key on CI: "
        "automatic signing creates new distribution certs per machine and the per-team cert cap is a deal breaker with three runners.",
        ["fastlane match"],
        "match",
        ["automatic signing"],
        ["cert cap"],
    )
    s.fact(
        "constraint",
        "en",
        "CI check scripts/check_matchfile.rb fails when a bundle id in the Xcode project is missing from the Matchfile.",
        ["check_matchfile"],
    )
    s.decision(
        "en",
        "Run iOS CI on self-hosted Mac minis (three in the office rack) instead of GitHub-hosted macOS runners or Bitrise: "
        "hosted macOS minutes ran out every month, and Bitrise would be another vendor through procurement holding our signing secrets.",
        ["Mac minis"],
        "self-hosted",
        ["GitHub-hosted", "Bitrise"],
        ["procurement"],
    )
    s.decision(
        "en",
        "Build numbers come from GITHUB_RUN_NUMBER, the same on iOS and Android, instead of manual bumps or a yyMMddHHmm "
        "timestamp: the timestamp exceeds Play's versionCode maximum of 2100000000.",
        ["GITHUB_RUN_NUMBER"],
        "GITHUB_RUN_NUMBER",
        ["timestamp"],
        ["2100000000"],
    )
    s.fact("config", "en", "The iOS beta job runs on mac-ci-01.build.tandem.internal.", ["mac-ci-01"])
    s.fact(
        "config",
        "en",
        "Nightly builds run at 02:00 UTC from main; the cron is in .github/workflows/nightly.yml.",
        ["02:00 UTC", "nightly.yml"],
    )
    s.fact("convention", "en", "Lanes pipe xcodebuild output through xcpretty so logs stay readable.", ["xcpretty"])
    s.fact(
        "convention",
        "en",
        "Release branches are release/YY.N, cut from main every other Tuesday.",
        ["release/YY.N", "every other Tuesday"],
    )
    s.fact("config", "en", "Jessica Park (Jess) is release captain and signs off every store submission.", ["Jess"])
    s.fact(
        "config",
        "en",
        "The release bot's Slack webhook lives in the repo secret SLACK_RELEASE_WEBHOOK.",
        ["SLACK_RELEASE_WEBHOOK"],
    )
    s.ok(["readonly(is_ci)"], "match runs readonly on CI")
    s.forbid("Plan for today", "coffee break", "7734120981", "7735002114", "pull/214", "Installed Provisioning Profile")
    s.secret(
        "tandem-match-Sx81!q",
        "https://hooks.slack.com/services/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",
        "x9Kq2LmV8pRt4Wn6Yz1Bc3Df",
    )
    return s


def s2():
    s = Session(
        "l2_release_play_version_code", CWD, "2027-01-27T15:40:00Z", branch="fix/version-codes", version="2.1.321",
        lang="en", order=2,
    )
    s.snapshot()
    s.user(
        reminder(
            [
                (611, "decision", "2 weeks ago", "Build numbers come from GITHUB_RUN_NUMBER on both platforms."),
                (615, "fact", "2 weeks ago", "iOS beta job runs on mac-ci-01.build.tandem.internal."),
            ]
        )
        + "\nThe Android release for 27.2 failed at the Play upload: version code already used. Didn't we fix numbering two weeks ago?"
    )
    s.bash(
        "gh run view 7791203346 --log-failed | grep -m1 -i 'google api'",
        "[14:03:12]: Google Api Error: Invalid request - APK specifies a version code that has already been used. (versionCode: 37)",
        desc="Play upload error",
    )
    s.bash(
        "gh run list --workflow release-android.yml -L 2 --json number,displayTitle -q '.[] | \"\\(.number) \\(.displayTitle)\"' "
        "&& git log --oneline --follow .github/workflows/release-android.yml | tail -1",
        "37 release 27.2\n36 release 27.2\na41c9e2 ci: rename android.yml -> release-android.yml (#1519)",
    )
    s.say(
        "GITHUB_RUN_NUMBER is counted per workflow, and GitHub treats a renamed workflow file as a new workflow. When android.yml "
        "became release-android.yml in #1519 the counter started again from 1, so this run produced versionCode 37, which the old "
        "workflow already shipped in November. iOS will hit the same wall the first time someone renames ios-beta.yml.\n\n"
        "We can go two ways:\n(a) add a fixed offset to the run number, which holds until the next rename;\n"
        "(b) ask the stores: the highest code on any Play track (`google_play_track_version_codes`) and "
        "`latest_testflight_build_number`, take the max and add one."
    )
    s.user(
        "(b). The store is the source of truth, I don't want another counter living in CI. Keep iOS and Android on the same "
        "number: take the max of both."
    )
    s.edit(
        "/home/dev/work/mobile-release/fastlane/Fastfile",
        '  build_number = ENV.fetch("GITHUB_RUN_NUMBER")',
        "  build_number = [max_play_version_code, latest_testflight_build_number].max + 1",
    )
    s.bash(
        "bundle exec fastlane android deploy track:internal | tail -2",
        "[14:31:55]: Uploaded AAB with versionCode 1208 to track 'internal'\n[14:31:57]: fastlane.tools finished successfully 🎉",
    )
    s.user("Write that one down: run_number resets when a workflow file is renamed. Bit us once, never again.")
    s.say("Noted.")
    s.user("While we're here: production releases are all-or-nothing right now. I want staged rollouts on both stores.")
    s.say(
        "On Play that's a staged rollout with a user fraction; a common ladder is 1% → 5% → 20% → 50% → 100%. On iOS, phased "
        "release follows Apple's fixed 7-day curve (1, 2, 5, 10, 20, 50, 100%) and can be paused. Many teams start Play at 1%."
    )
    s.user(
        "Start Android at 5%, not 1%. At our DAU 1% is about 800 people, too few to see a crash trend within a day. "
        "And turn on phased release for iOS."
    )
    s.edit(
        "/home/dev/work/mobile-release/fastlane/Fastfile",
        "    upload_to_play_store(track: 'production')",
        "    upload_to_play_store(track: 'production', rollout: '0.05')",
    )
    s.say(
        "For the next steps we could either have someone watch the Crashlytics dashboard and advance or halt by hand, or run a "
        "guard job every hour that reads crash-free users and halts the Play rollout / pauses phased release below a threshold."
    )
    s.user("Automatic. Nobody is watching dashboards on a Friday night. Halt if crash-free users drop below 99.5%.")
    s.tool(
        "Write",
        {
            "file_path": "/home/dev/work/mobile-release/scripts/rollout_guard.rb",
            "content": "# hourly: halt Play rollout / pause iOS phased release when crash-free users < 99.5%\nTHRESHOLD = 99.5\n",
        },
        "File created successfully at: /home/dev/work/mobile-release/scripts/rollout_guard.rb",
    )
    s.bash(
        "bundle exec ruby scripts/rollout_guard.rb --dry-run",
        "crash-free users (24h): 99.71%\nGoogle::Apis::ClientError: forbidden: The caller does not have permission",
        err=True,
    )
    s.say(
        "The guard can read Crashlytics but Play refuses the halt call: the service account play-ci@tandem-release.iam.gserviceaccount.com "
        "only has upload rights to testing tracks. It needs the \"Release to production\" permission in Play Console."
    )
    s.user("Granted it Release to production just now. Try again.")
    s.bash(
        "bundle exec ruby scripts/rollout_guard.rb --dry-run",
        "crash-free users (24h): 99.71%\nthreshold 99.5% ok, would not halt (dry run)",
    )
    s.user(
        "Two more things. mac-ci-01 died over the weekend (logic board); its replacement is mac-ci-03.build.tandem.internal, "
        "same runner labels. And the upload keystore password is kP9#tandem-upload-22, it's also in the UPLOAD_KEYSTORE_PASSWORD secret."
    )
    s.say("Thanks. The lanes already read UPLOAD_KEYSTORE_PASSWORD from the environment, nothing goes into the repo.")
    s.user("ship it, I'm off to standup")
    s.bash(
        "git add -A && git commit -qm 'release: store-derived build numbers, staged rollout + guard' && git push -q && git log -1 --format=%h",
        "e93b1d6",
    )
    s.stop(ms=2644100)
    s.title("Play version code collision and staged rollouts")

    s.exp(
        "root_cause",
        "en",
        "Play rejected versionCode 37 as already used: GITHUB_RUN_NUMBER is counted per workflow, and renaming android.yml to "
        "release-android.yml (#1519) made a new workflow whose counter restarted at 1.",
        ["per workflow", "release-android.yml"],
    )
    s.decision(
        "en",
        "Build numbers are now derived from the stores: max(highest versionCode on any Play track, latest_testflight_build_number) + 1, "
        "same number on both platforms. The store is the source of truth, no counter in CI; rejected a fixed offset on the run "
        "number, which breaks again at the next rename.",
        ["source of truth"],
        "store",
        ["offset"],
        ["rename"],
        sup="l1_release_ios_signing#e5",
    )
    s.exp("lesson", "en", "run_number resets when a workflow file is renamed; don't derive build numbers from it.", ["run_number", "renamed"])
    s.decision(
        "en",
        "Production releases use staged rollouts: Play starts at 5% rather than 1% (1% is about 800 users at our DAU, too few "
        "to see a crash trend in a day); iOS uses phased release.",
        ["5%", "phased release"],
        "5%",
        ["1%"],
        ["crash trend"],
    )
    s.decision(
        "en",
        "An hourly rollout guard (scripts/rollout_guard.rb) halts the Play rollout and pauses iOS phased release automatically "
        "when crash-free users drop below 99.5%, instead of someone watching the Crashlytics dashboard: nobody watches dashboards on a Friday night.",
        ["99.5%"],
        "Automatic",
        ["dashboard"],
        ["Friday night"],
    )
    s.exp(
        "fix",
        "en",
        "rollout_guard got 'The caller does not have permission' from Play: the play-ci service account needs the "
        "Release to production permission in Play Console to halt rollouts.",
        ["Release to production"],
    )
    s.fact(
        "config",
        "en",
        "mac-ci-01 died; its replacement runner is mac-ci-03.build.tandem.internal with the same labels.",
        ["mac-ci-03"],
        sup="l1_release_ios_signing#e6",
    )
    s.fact(
        "config",
        "en",
        "The Android upload keystore password is in the UPLOAD_KEYSTORE_PASSWORD secret; lanes read it from the environment.",
        ["UPLOAD_KEYSTORE_PASSWORD"],
    )
    s.ok(["fastlane android deploy"], "Android deploy lane")
    s.forbid(
        "standup",
        "7791203346",
        "a41c9e2",
        "e93b1d6",
        "versionCode 1208",
        "Build numbers come from GITHUB_RUN_NUMBER on both platforms.",
        "iOS beta job runs on mac-ci-01.build.tandem.internal.",
    )
    s.secret("kP9#tandem-upload-22")
    return s


def s3():
    s = Session(
        "l3_release_xcode_drift", CWD, "2027-02-10T17:05:00Z", branch="chore/pin-xcode", version="2.1.324",
        lang="en", order=3,
    )
    s.snapshot()
    s.user(
        "Nightly iOS failed on two of the last three nights, and always on mac-ci-02. Swift compiler segfault in TandemChat. "
        "The other runner is fine."
    )
    s.maple_search(
        "nightly ios runner mac-ci xcode",
        [
            (622, "fact", "Nightly builds run at 02:00 UTC from main."),
            (628, "fact", "Replacement runner mac-ci-03.build.tandem.internal, same labels."),
        ],
    )
    s.bash(
        "for h in mac-ci-02 mac-ci-03; do printf '%s: ' $h; ssh $h.build.tandem.internal xcodebuild -version | head -1; done",
        "mac-ci-02: Xcode 18.3\nmac-ci-03: Xcode 18.2",
        desc="Xcode version per runner",
    )
    s.bash(
        "ssh mac-ci-02.build.tandem.internal 'grep -h \"Xcode\" /Library/Receipts/InstallHistory.plist | tail -1; log show --last 7d --predicate \"process == \\\"softwareupdated\\\"\" | grep -m1 Xcode'",
        "<string>Xcode</string>\n2027-02-07 03:12:44.120 softwareupdated: Installing update: Xcode 18.3 (App Store, automatic)",
    )
    s.say(
        "mac-ci-02 took an automatic App Store update to Xcode 18.3 on Saturday; mac-ci-03 is still on 18.2. The segfault only "
        "happens with the 18.3 compiler on TandemChat, so the runners have drifted apart and the nightly fails whenever it lands on "
        "mac-ci-02. We can make TandemChat compile on 18.3 eventually, but the real issue is that nothing decides which Xcode a "
        "runner uses. Options: pin the version in the repo (`.xcode-version` + `xcodes select` in every lane) and turn off "
        "App Store auto-update on the minis, or keep letting runners auto-update and chase breakages as they come."
    )
    s.user(
        "Pin it. .xcode-version at the repo root, lanes call xcodes select, auto-update off on the minis. We move Xcode "
        "deliberately, in a PR, not when a Mac feels like it."
    )
    s.tool(
        "Write",
        {"file_path": "/home/dev/work/mobile-release/.xcode-version", "content": "18.2\n"},
        "File created successfully at: /home/dev/work/mobile-release/.xcode-version",
    )
    s.bash(
        "ssh mac-ci-02.build.tandem.internal 'xcodes install 18.2 --select'",
        "Error: Apple ID authentication requires a two-factor code, and no interactive session is available.",
        err=True,
    )
    s.user("Leave it, I'll do it at the box tomorrow with my 2FA. Take mac-ci-02 out of the pool until then.")
    s.bash(
        "gh api -X DELETE repos/tandem-app/mobile-release/actions/runners/41/labels/xcode",
        '{"total_count":3,"labels":[{"name":"self-hosted"},{"name":"macOS"},{"name":"X64"}]}',
    )
    s.user(
        "Tomás asked whether we should enroll in Play App Signing. Today we sign with our own key that lives on a USB stick "
        "and in the keystore secret."
    )
    s.say(
        "With Play App Signing, Google holds the app signing key and we only sign uploads with an upload key. If the upload "
        "key leaks or gets lost, Play support can reset it. With our own key, losing it means we can never ship an update to "
        "the existing listing. The trade-off is that Google holds the signing key."
    )
    s.user("Enroll. Tomás can do the console part.")
    s.say("OK. I'll add the enrollment steps and the upload-key reset procedure to docs/android-signing.md for him.")
    s.user(
        "Thanks. For the record, the reason: losing the signing key today would mean a new package name and every user reinstalling."
    )
    s.user("Release notes: captains write them by hand from the merged PR list and it takes an hour every release.")
    s.say(
        "Two ways to generate a draft: from PR labels (feature / fix / internal, skipping internal) through a `release_notes` "
        "lane that queries the GitHub API, or commit-based, parsing commit messages, which only works if everyone follows a "
        "commit format."
    )
    s.user("That one, the labels. We don't do conventional commits here, so commit-based is a non-starter. The captain still edits before submitting.")
    s.user(
        "A few changes while you're in there. QA moved to Manila, so the nightly has to be done by their morning: move the cron "
        "to 18:00 UTC. Replace xcpretty with xcbeautify everywhere, xcpretty is unmaintained and mangles Xcode 18 output. "
        "Jess is on parental leave until June, Bao is release captain now and store submissions go through him. "
        "And one new rule: hotfix branches are hotfix/YY.N.P, cut from the release tag; the fix lands on main first and gets cherry-picked."
    )
    s.edit(
        "/home/dev/work/mobile-release/.github/workflows/nightly.yml",
        "    - cron: '0 2 * * *'",
        "    - cron: '0 18 * * *'",
    )
    s.grep("xcpretty", "fastlane/Fastfile:22:    xcodebuild_formatter: 'xcpretty',\nGemfile:7:gem 'xcpretty'", mode="content")
    s.edit("/home/dev/work/mobile-release/fastlane/Fastfile", "    xcodebuild_formatter: 'xcpretty',", "    xcodebuild_formatter: 'xcbeautify',")
    s.user(
        "Last one: the beta lane should upload dSYMs to Sentry. Token is sntrys_eyJpYXQiOjE3Mzg5MjQwMDB9_q8Lx2Vm4Np7Rt1Wz9Kc3Bd6Fh0Gj5Sa, "
        "put it in SENTRY_AUTH_TOKEN."
    )
    s.say("Done: `sentry_debug_files_upload` runs after `upload_to_testflight`, reading SENTRY_AUTH_TOKEN from the secret.")
    s.user("ok, lunch")
    s.stop(ms=2541800)
    s.title("Xcode drift on mac-ci-02, Play App Signing, release notes")

    s.exp(
        "root_cause",
        "en",
        "Nightly iOS segfaulted in TandemChat only on mac-ci-02: it took an automatic App Store update to Xcode 18.3 while "
        "mac-ci-03 stayed on 18.2, so the runners drifted apart.",
        ["mac-ci-02", "18.3"],
    )
    s.decision(
        "en",
        "Pin Xcode in the repo with .xcode-version (lanes run xcodes select) and turn off App Store auto-update on the minis, "
        "instead of letting runners auto-update: we move Xcode deliberately, in a PR.",
        [".xcode-version"],
        ".xcode-version",
        ["auto-update"],
        ["deliberately"],
    )
    s.decision(
        "en",
        "Enroll the Android app in Play App Signing instead of signing with our own key: losing our own key would mean a new "
        "package name and every user reinstalling; a lost upload key can be reset. Tomás does the console part.",
        ["Play App Signing"],
        "Play App Signing",
        ["own key"],
        ["package name"],
    )
    s.decision(
        "en",
        "Release notes are generated from PR labels (feature / fix / internal) by a release_notes lane and edited by the captain, "
        "not commit-based: we don't do conventional commits here.",
        ["labels"],
        "labels",
        ["commit-based"],
        ["conventional commits"],
    )
    s.fact(
        "config",
        "en",
        "Nightly cron moved to 18:00 UTC so it is done by the Manila QA team's morning.",
        ["18:00 UTC"],
        sup="l1_release_ios_signing#e7",
    )
    s.fact(
        "convention",
        "en",
        "Lanes use xcbeautify instead of xcpretty (unmaintained, mangles Xcode 18 output).",
        ["xcbeautify"],
        sup="l1_release_ios_signing#e8",
    )
    s.fact(
        "config",
        "en",
        "Bao is release captain now (Jess on parental leave until June); store submissions go through him.",
        ["Bao"],
        sup="l1_release_ios_signing#e10",
    )
    s.fact(
        "convention",
        "en",
        "Hotfix branches are hotfix/YY.N.P, cut from the release tag; the fix lands on main first and is cherry-picked.",
        ["hotfix/YY.N.P"],
    )
    s.fact(
        "config",
        "en",
        "The beta lane uploads dSYMs to Sentry after TestFlight upload, using the SENTRY_AUTH_TOKEN secret.",
        ["SENTRY_AUTH_TOKEN"],
    )
    s.ok(["xcodes install"], "mac-ci-02 still needs Xcode 18.2 installed interactively (2FA); out of the pool until then (unresolved)")
    s.forbid(
        "lunch",
        "InstallHistory.plist",
        '"total_count":3',
        "Nightly builds run at 02:00 UTC from main.",
        "Replacement runner mac-ci-03.build.tandem.internal, same labels.",
    )
    s.secret("sntrys_eyJpYXQiOjE3Mzg5MjQwMDB9_q8Lx2Vm4Np7Rt1Wz9Kc3Bd6Fh0Gj5Sa")
    return s


def s4():
    s = Session(
        "l4_release_rollout_status", CWD, "2027-02-24T15:55:00Z", branch="main", version="2.1.325", lang="en", order=4
    )
    s.snapshot()
    s.recall(
        [
            (641, "decision", "4 weeks ago", "Play staged rollout starts at 5%; iOS uses phased release."),
            (644, "decision", "4 weeks ago", "Rollout guard halts when crash-free users drop below 99.5%."),
            (652, "fact", "2 weeks ago", "Bao is release captain now."),
        ],
        event="SessionStart",
    )
    s.user("Where is 27.4 at on Play? Just want the numbers for standup.")
    s.bash(
        "bundle exec fastlane android rollout_status | tail -2",
        "[15:57:02]: track production: 27.4 (1311) inProgress userFraction=0.2\n[15:57:03]: crash-free users (24h): 99.82%",
        desc="Current Play rollout",
    )
    s.say("27.4 (1311) is at 20% on production, crash-free users 99.82% over the last 24h. The guard hasn't fired.")
    s.user("How does the guard decide to pause iOS? Just curious, not changing anything.")
    s.read(
        "/home/dev/work/mobile-release/scripts/rollout_guard.rb",
        "THRESHOLD = 99.5\n\ndef ios_check(rate)\n  return if rate >= THRESHOLD\n"
        "  asc.phased_release(app_version).pause!\n  notify(\"paused iOS phased release at #{rate}%\")\nend",
    )
    s.say(
        "Same threshold as Android: if the iOS crash-free rate is below it, the script calls App Store Connect to pause the "
        "phased release and posts to the release channel. Pausing keeps the current percentage; resuming is manual."
    )
    s.user("ok. The Android lint job flaked again on my PR, can you re-run it?")
    s.bash("gh run rerun 7850122931 --failed", "✓ Requested rerun (failed jobs) of run 7850122931")
    s.bash(
        "gh run watch 7850122931 --exit-status | tail -1",
        "✓ feat/profile-badges Android lint · 7850122931",
    )
    s.say("Re-run passed.")
    s.user("thanks. anything waiting on my review?")
    s.bash("gh pr list --search 'review-requested:@me' --json number,title", "[]")
    s.say("Nothing waiting on you.")
    s.user("great, lunch 🌮")
    s.stop(ms=301500)
    s.title("Rollout status check")
    s.ok(["pause the phased release"], "rollout guard pauses iOS phased release below the threshold (explanation of existing code)")
    s.forbid(
        "lunch",
        "userFraction=0.2",
        "99.82%",
        "7850122931",
        "starts at 5%; iOS uses phased release.",
        "Rollout guard halts when crash-free users drop below 99.5%.",
        "Bao is release captain now.",
    )
    return s


SESSIONS = [s1, s2, s3, s4]
