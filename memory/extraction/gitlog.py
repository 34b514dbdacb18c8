"""What a teammate would want remembered from a project's commit messages (never its diffs).

Precision first: most commits ("bump deps", "fix typo", merges, release notes, bots) say nothing
worth remembering, and a memory full of them buries the few that do. A commit is kept only when
its message gives a rule, a decision or a warning *and* something of why (a reason, an incident,
a consequence), the way a reviewer would write it down: decisions with their reasons, reverts
that say why, migrations with their order, conventions ("from now on", "never", "must"),
deprecations with their dates, security rules. Measured on a labelled set written before these
rules (tests/data/git_eval; tests/benchmarks/bench_backfill.py --git-eval prints the figures).

A kept commit becomes one memory: its subject and the first paragraphs of its body, with the
commit as `source_ref` (`git:<sha>`) and the commit's date as when it happened. Reading goes from
the last commit read on (its sha kept in the transcript ledger under `git:<repository>`), so a
second `backfill --git` reads only newer commits.
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from typing import Any

from memory.extraction.heuristic import Candidate
from memory.lang import privacy

MAX_CONTENT = 700  # characters of a commit message kept as one memory
MIN_BODY = 90  # characters of explanation (latin script) a kept commit's body has at least
MAX_COMMITS = 20_000  # a backfill reads at most this many commits (newest first)

_NOISE_SUBJECT = re.compile(
    r"^(?:merge (?:branch|pull request|remote-tracking)|bump |chore\(release\)|chore\(deps|build\(deps|"
    r"fixup!|squash!|amend!|wip\b|update readme|release v?\d|v?\d+\.\d+\.\d+$)",
    re.I,
)
_BOT = re.compile(r"\[bot\]|dependabot|renovate|github-actions|semantic-release", re.I)
_TRAILER = re.compile(
    r"^(?:signed-off-by|co-authored-by|reviewed-by|acked-by|tested-by|refs?|fixes|closes|see|change-id|"
    r"cc|reported-by|helped-by)\s*:",
    re.I,
)
_REVERTS = re.compile(r"This reverts commit [0-9a-f]{7,40}\.?", re.I)
_REVERTED_SHA = re.compile(r"This reverts commit ([0-9a-f]{7,40})", re.I)
_REVERTED_SUBJECT = re.compile(r'^Revert\s+"(.+)"\s*$', re.I)
# A subject that announces a choice ("Switch the queue to Postgres", "feat: move X to Y"): a
# decision, whatever words of its reasons ("must", "only") sound like a rule.
_DECISION_SUBJECT = re.compile(
    r"^(?:\w+(?:\([^)]*\))?!?:\s*)?(?:switch|switched|move|moved|migrate|replace|replaced|use|adopt|drop|"
    r"choose|pick|go with|prefer)\b",
    re.I,
)
_CONVENTION_SUBJECT = re.compile(r"\b(?:convention|rule|policy|guideline|from now on)s?\b|约定|规范|规定", re.I)
# A rule or a decision: what the next person must do, or must not.
_RULE = re.compile(
    r"\b(?:must(?:n't| not)?|never|don'?t|do not|always|from now on|rule\b|only\b|stays?\b|"
    r"instead of|not\b[^.]{0,40}\b(?:but|:)|until\b|required?\b|deprecat\w*|removed? on|sunset|"
    r"no longer|going forward|convention|policy|decided|decision|agreed|adr[- ]?\d+|"
    r"before deploying|deploy order|before\b[^.]{0,30}\bdeploy|migration \d+|run\b[^.]{0,40}\bbefore)",
    re.I,
)
_RULE_ZH = re.compile(
    r"必须|不要|禁止|一律|务必|不能|不得|以后|今后|统一|约定|规定|决定|只能|别|不再|注意|弃用|废弃|确认|要先|删除|先"
)
# Why: a reason, an incident, a consequence.
_WHY = re.compile(
    r"\b(?:because|since\b|so that|so\b|otherwise|which (?:broke|caused|meant)|caused|broke|blew|bit us|"
    r"incident|inc-\d+|outage|down for|double-charged|leak\w*|failed|fails|timed? ?out|oom\w*|"
    r"limit|cheaper|slower|faster|drift\w*|stale|corrupt\w*|lost|ended up|turned out|the reason|"
    r"\d+(?:\.\d+)?\s?%|cve-\d+)",
    re.I,
)
_WHY_ZH = re.compile(r"因为|由于|所以|导致|否则|原因|为了|结果|事故|故障|超时|丢失|泄露|报错|慢|会|变了|重复|失败")
_SECURITY = re.compile(r"\b(?:secret|credential|token|password|ssh|public access|ownership|leak|pii|rotat\w+)", re.I)
_MIGRATION = re.compile(r"\bmigrat\w*|迁移", re.I)
_CONVENTION = re.compile(r"\b(?:from now on|convention|rule|always|never|must|only)\b|一律|必须|统一|约定", re.I)


@dataclass
class Commit:
    sha: str
    date: str  # ISO 8601 with its offset
    author: str
    message: str


def read_log(repo: str, *, since_sha: str | None = None, since: str | None = None) -> list[Commit]:
    """The repository's commits, newest first (after `since_sha` when given and still in the
    history). Messages only: no diff is read. OSError/CalledProcessError when git cannot."""
    args = ["git", "-C", repo, "log", f"--max-count={MAX_COMMITS}", "--format=%H%x00%aI%x00%an <%ae>%x00%B%x1e"]
    if since:
        args.append(f"--since={since}")
    if since_sha:
        known = subprocess.run(
            ["git", "-C", repo, "merge-base", "--is-ancestor", since_sha, "HEAD"], capture_output=True, timeout=60
        )
        if known.returncode == 0:
            args.append(f"{since_sha}..HEAD")
    raw = subprocess.run(args, capture_output=True, check=True, timeout=300).stdout.decode("utf-8", "replace")
    out = []
    for rec in raw.split("\x1e"):
        rec = rec.strip("\n")
        if not rec:
            continue
        sha, date, author, body = (rec.split("\x00", 3) + ["", "", ""])[:4]
        out.append(Commit(sha.strip(), date.strip(), author.strip(), body.strip()))
    return out


def top_level(directory: str) -> str | None:
    """The repository a folder is in, or None outside git (or without git)."""
    try:
        done = subprocess.run(
            ["git", "-C", directory, "rev-parse", "--show-toplevel"], capture_output=True, text=True, timeout=60
        )
    except OSError:
        return None
    return done.stdout.strip() if done.returncode == 0 and done.stdout.strip() else None


def _body(message: str) -> tuple[str, str]:
    """(subject, body) with trailers, the revert boilerplate and release-note lists removed."""
    lines = message.strip().splitlines()
    subject = lines[0].strip() if lines else ""
    kept = [ln for ln in lines[1:] if not _TRAILER.match(ln.strip())]
    body = _REVERTS.sub("", "\n".join(kept)).strip()
    return subject, body


def _cjk(text: str) -> int:
    return len(re.findall(r"[\u4e00-\u9fff]", text))


def judge(c: Commit) -> tuple[str, str] | None:
    """(kind, why) when the commit is worth remembering, else None. Kinds: revert, migration,
    security, convention, decision.

    Kept: a message whose body explains (a rule, a reason, a consequence) at some length. Left
    out: bots, merges, release notes and dependency bumps, subjects without a body, short bodies
    ("OOMKilled again") and bodies that only list what changed."""
    subject, body = _body(c.message)
    if not subject or _BOT.search(c.author) or _NOISE_SUBJECT.search(subject):
        return None
    if "|---" in body or body.count("\n* ") + body.count("\n- ") > 12:  # a changelog or an update table
        return None
    text = f"{subject}\n{body}"
    prose = re.sub(r"\s+", " ", body)
    cjk = _cjk(prose)
    long_enough = 3 * cjk + len(prose) - cjk >= MIN_BODY  # a CJK character says about what three letters do
    if not long_enough:
        return None
    rule = _RULE.search(text) or _RULE_ZH.search(text)
    why = _WHY.search(prose) or _WHY_ZH.search(prose)
    revert = subject.lower().startswith("revert") or "回滚" in subject
    if revert:
        return "revert", "a revert that says why"
    if not (rule or why):
        return None
    if _CONVENTION_SUBJECT.search(subject):  # "docs: convention for migrations" is a convention
        return "convention", "a rule with its reason"
    if _MIGRATION.search(subject):
        return "migration", "a migration with its order or reason"
    if _SECURITY.search(text):
        return "security", "a security rule with its reason"
    if _DECISION_SUBJECT.search(subject):
        return "decision", "a decision with its reason"
    if _CONVENTION.search(text):
        return "convention", "a rule with its reason"
    return "decision", "a decision with its reason"


def content_of(c: Commit) -> str:
    """The memory a kept commit becomes: subject, then its body as prose, cut to MAX_CONTENT."""
    subject, body = _body(c.message)
    paras = [re.sub(r"\s+", " ", p).strip() for p in re.split(r"\n\s*\n", body) if p.strip()]
    text = subject + (": " + " ".join(paras) if paras else "")
    if len(text) > MAX_CONTENT:
        text = text[: MAX_CONTENT - 1].rsplit(" ", 1)[0] + "…"
    return text


def candidates(commits: list[Commit], scope: str) -> list[Candidate]:
    """The kept commits as memory candidates, oldest first (a later decision supersedes)."""
    out = []
    for c in reversed(commits):
        verdict = judge(c)
        if verdict is None:
            continue
        kind, why = verdict
        layer = "decision" if kind in ("decision", "revert", "migration") else "fact"
        category = {"convention": "rule", "security": "rule", "revert": "decision", "migration": "decision"}.get(
            kind, "decision"
        )
        meta: dict[str, Any] = {"source": "git", "commit": c.sha, "kind": kind}
        if kind == "revert":  # the memory of the reverted commit is superseded by this one
            sha = _REVERTED_SHA.search(c.message)
            quoted = _REVERTED_SUBJECT.match(_body(c.message)[0])
            meta["reverts"] = {"commit": sha.group(1) if sha else None, "subject": quoted.group(1) if quoted else None}
        out.append(
            Candidate(
                content=privacy.redact(content_of(c)),
                layer=layer,
                category=category,
                importance=4 if kind in ("security", "migration", "revert") else 3,
                why=f"git: {why}",
                scope=scope,
                source_ref=f"git:{c.sha}",
                occurred_at=c.date,
                role="user",
                metadata=meta,
                felt=False,  # a commit message records a decision, not how someone felt about it
            )
        )
    return out


def harvest_git(store: Any, repo: str, scope: str, *, since: str | None = None, dry_run: bool = False) -> dict:
    """Read the commits after the last one read, ingest the kept ones and record the newest
    commit read, in one transaction (memory.extraction.harvest's rule for transcripts)."""
    from memory.extraction.ingest import ingest

    scope = store.project_key(scope)  # the repository's remote on a team database
    key = f"git:{repo}"
    row = store.conn.execute("SELECT head FROM transcript_cursors WHERE path = ?", (key,)).fetchone()
    commits = read_log(repo, since_sha=row[0] if row else None, since=since)
    cands = candidates(commits, scope)
    with store.tx.atomic() as conn:
        report = ingest(store, cands, dry_run=dry_run)
        if commits and not dry_run:
            conn.execute(
                "INSERT INTO transcript_cursors (path, session_id, offset, inode, head, updated_at) "
                "VALUES (?, NULL, ?, NULL, ?, strftime('%s','now')) ON CONFLICT(path) DO UPDATE SET "
                "offset = transcript_cursors.offset + excluded.offset, head = excluded.head, "
                "updated_at = excluded.updated_at",
                (key, len(commits), commits[0].sha),
            )
    actions = [i.get("action") for i in report.items]
    return {
        "repo": repo,
        "commits": len(commits),
        "kept": len(cands),
        "stored": sum(a in ("store", "supersede") for a in actions),
        "merged": sum(a in ("merge", "repeat", "reinforce") for a in actions),
        "dry_run": dry_run,
        "items": [{**i, "source_ref": c.source_ref} for c, i in zip(cands, report.items)],
    }
