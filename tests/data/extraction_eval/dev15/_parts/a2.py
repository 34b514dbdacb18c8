META = {
    "name": "a2_foliopress_approval_walkthrough",
    "project": "foliopress",
    "order": 2,
    "language": "en",
    "branch": "main",
    "start": "2026-10-13T12:05:00Z",
    "version": "2.1.325",
    "title": "Walkthrough: from proof approval to PrintHaus",
}

R = "/home/dev/work/foliopress"

RECALL = (
    "<maple-memory>\n"
    "Memories for /home/dev/work/foliopress (most relevant first):\n"
    '- #14 fact · config: "proof-api runs locally with bin/dev and serves the proof UI on localhost:3100."\n'
    '- #17 fact · preference: "Maggie Olsen owns press-gateway and the PrintHaus drop folder layout; ask her before touching it."\n'
    '- #19 decision · decision: "Interior PDFs are flattened to PDF/X-1a because PrintHaus\'s Harlequin RIP rejects live transparency."\n'
    '- #20 fact · constraint: "Nothing goes out to press-gateway on a Friday (PrintHaus weekend batch)."\n'
    "</maple-memory>"
)

STATE_MACHINE = """module BookStateMachine
  extend ActiveSupport::Concern

  included do
    include AASM

    aasm column: :state, whiny_persistence: true do
      state :draft, initial: true
      state :proofing, :approved, :rendering, :rendered, :dropped, :rejected, :printed, :shipped

      event :submit_for_proof do
        transitions from: :draft, to: :proofing
      end

      event :approve, after_commit: :enqueue_render do
        transitions from: :proofing, to: :approved, guard: :all_placements_printable?
      end

      event :start_render do
        transitions from: :approved, to: :rendering
      end

      event :render_done, after_commit: :enqueue_press_drop do
        transitions from: :rendering, to: :rendered
      end

      event :drop do
        transitions from: :rendered, to: :dropped
      end

      event :press_reject do
        transitions from: :dropped, to: :rejected
      end

      event :mark_printed do
        transitions from: :dropped, to: :printed
      end

      event :ship do
        transitions from: :printed, to: :shipped
      end
    end
  end

  def enqueue_render
    RenderBookJob.perform_async(id)
  end

  def enqueue_press_drop
    PressDropJob.perform_async(id)
  end
end
"""

PRESS_DROP = """class PressDropJob
  include Sidekiq::Job
  sidekiq_options queue: "press", retry: 8

  def perform(book_id)
    book = Book.find(book_id)
    return if book.hold_until&.future?

    # sftp.printhaus.de:/inbound/foliopress/<yyyymmdd>/<book_id>/ + manifest.json
    Drop.new(book).upload!
    book.drop!
  end
end
"""


def build(s):
    s.attachment(RECALL, "SessionStart")
    s.user(
        "not a task today, more of a question. I'm picking up the approval -> print side next sprint and I "
        "honestly don't know how a book gets from 'customer clicks approve' to PrintHaus. can you walk me "
        "through it? please don't change anything",
        gap=(2, 5),
    )
    s.tool(
        "Grep",
        {"pattern": "event :approve|def approve", "path": R, "output_mode": "content", "-n": True},
        "proof-api/app/models/book_state_machine.rb:15:      event :approve, after_commit: :enqueue_render do\n"
        "proof-api/app/controllers/proofs_controller.rb:48:  def approve\n"
        'proof-api/spec/models/book_state_machine_spec.rb:12:  describe "event :approve" do',
    )
    s.read(f"{R}/proof-api/app/models/book_state_machine.rb", STATE_MACHINE)
    s.read(f"{R}/press-gateway/app/jobs/press_drop_job.rb", PRESS_DROP)
    s.say(
        "Here's the path end to end:\n\n"
        "1. **Approve** - `ProofsController#approve` calls `book.approve!`. The guard "
        "`all_placements_printable?` is where the under-150-dpi block from last week bites.\n"
        "2. **Render** - the `approve` event's `after_commit` enqueues `RenderBookJob` on the render queue. "
        "render-worker flips the book to `rendering`, builds interior + cover, uploads them to the renders "
        "bucket and fires `render_done!`.\n"
        "3. **Drop** - `render_done`'s `after_commit` enqueues `PressDropJob` (Sidekiq queue `press`, 8 retries) "
        "in press-gateway. Unless `hold_until` is in the future it uploads the PDFs plus a `manifest.json` to "
        "`sftp.printhaus.de:/inbound/foliopress/<yyyymmdd>/<book_id>/` and moves the book to `dropped`.\n"
        "4. **Back from PrintHaus** - `rejected` / `printed` / `shipped` come later from their side.\n\n"
        "So it's event-driven throughout: each transition's callback enqueues the next step."
    )
    s.user(
        "ok. so press-gateway doesn't poll the books table every minute looking for approved books? I was "
        "sure that's how it worked",
        gap=(60, 140),
    )
    s.bash(
        "cat press-gateway/config/sidekiq_cron.yml",
        'printhaus_status_import:\n  cron: "*/20 * * * *"\n  class: "PrintHausStatusImportJob"\n'
        '  description: "Pull PrintHaus status CSV (accepted/rejected/printed/shipped)"',
        "Check press-gateway scheduled jobs",
    )
    s.say(
        "No - nothing polls `books`. The only scheduled job in press-gateway is `PrintHausStatusImportJob` every "
        "20 minutes, and that goes the other way: it pulls PrintHaus's status CSV and fires `press_reject` / "
        "`mark_printed` / `ship` on the matching books. Getting a book *to* PrintHaus is purely the "
        "`render_done` callback."
    )
    s.user("huh ok. what's hold_until for? never seen it set", gap=(40, 90))
    s.tool(
        "Grep",
        {"pattern": "hold_until", "path": R, "output_mode": "content", "-n": True},
        "proof-api/app/admin/books.rb:61:  member_action :hold, method: :post do\n"
        "proof-api/app/admin/books.rb:62:    resource.update!(hold_until: 48.hours.from_now, hold_reason: params[:reason])\n"
        'proof-api/db/schema.rb:88:    t.datetime "hold_until"\n'
        "press-gateway/app/jobs/press_drop_job.rb:7:    return if book.hold_until&.future?\n"
        'press-gateway/app/jobs/release_holds_job.rb:4:    Book.rendered.where("hold_until < ?", Time.current).find_each { |b| PressDropJob.perform_async(b.id) }',
    )
    s.say(
        "It's the support team's \"Hold drop\" button in the admin (`app/admin/books.rb`): it sets `hold_until` "
        "48 h out with a reason, typically for a last-minute address change. `PressDropJob` silently skips held "
        "books and `ReleaseHoldsJob` re-enqueues them once the hold expires."
    )
    s.user(
        'and what happens if someone does `book.update(state: "approved")` in a console, like to unstick a book?',
        gap=(50, 120),
    )
    s.say(
        "Nothing downstream. AASM only runs `after_commit: :enqueue_render` when the *event* fires; a plain "
        "`update(state: ...)` just writes the column. The book would sit in `approved` with no render job and "
        "no error anywhere. The safe way from a console is `book.approve!` (or `book.aasm.fire!(:approve)`), "
        "which runs the guard and the callback."
    )
    s.user(
        "yeah that's exactly what bit Dima last month, two books sat in approved for a week before anyone "
        "noticed. so rule of thumb: state only ever changes through BookStateMachine events, never write the "
        "column directly.\n\nlet me try the flow locally. btw proof-api comes up on 3400 now with bin/dev, "
        "3100 kept colliding with the grafana agent on my machine, so it's localhost:3400",
        gap=(70, 150),
    )
    s.bash("curl -s localhost:3400/up", '{"status":"ok","git_sha":"b81e0c2"}', "Check proof-api is up")
    s.say(
        "proof-api answers on :3400. If you approve a proofing book in the UI you should see `RenderBookJob` "
        "in the Sidekiq web UI within a second, then `PressDropJob` once the render finishes."
    )
    s.user(
        "last one: if PrintHaus rejects a drop, where do we find out? is there an alert or does someone read the csv",
        gap=(120, 300),
    )
    s.tool(
        "Grep",
        {"pattern": "press_reject|rejected", "path": f"{R}/press-gateway/app", "output_mode": "content", "-n": True},
        'press-gateway/app/jobs/print_haus_status_import_job.rb:23:      when "REJECTED" then book.press_reject!\n'
        'press-gateway/app/jobs/print_haus_status_import_job.rb:24:        SupportMailer.press_rejected(book, row["reason"]).deliver_later\n'
        "press-gateway/app/mailers/support_mailer.rb:9:  def press_rejected(book, reason)",
    )
    s.say(
        "Only by email: when the status import sees `REJECTED` it fires `press_reject!` and sends "
        "`SupportMailer.press_rejected` with PrintHaus's free-text reason to support. No metric or page, and "
        "with the 20-minute import a rejection can take a while to surface - the 14 bleed rejects last week "
        "were found that way."
    )
    s.user("ok that's enough for one day. thanks, this was helpful", gap=(40, 90))
    s.say(
        "Anytime. If it helps, the three files worth reading first are book_state_machine.rb, "
        "press_drop_job.rb and print_haus_status_import_job.rb."
    )
    s.stop_hook()


GOLD = {
    "expected": [
        {
            "id": "e1",
            "layer": "fact",
            "kind": "config",
            "lang": "en",
            "text": "proof-api now comes up on port 3400 locally with bin/dev (3100 collided with the Grafana agent); "
            "check it with `curl localhost:3400/up`.",
            "must": ["3400"],
            "supersedes": "a1_foliopress_bleed_dpi#e1",
        },
        {
            "id": "e2",
            "layer": "fact",
            "kind": "convention",
            "lang": "en",
            "text": "Book state only ever changes through BookStateMachine (AASM) events such as book.approve!; never "
            "write the state column directly (book.update(state: ...)), the after_commit callbacks that enqueue "
            "the render / press drop don't fire and the book gets stuck.",
            "must": ["BookStateMachine"],
        },
    ],
    "acceptable": [
        {
            "must": ["PressDropJob"],
            "note": "render_done enqueues PressDropJob on the press queue; SFTP drop to PrintHaus",
        },
        {
            "must": ["hold_until"],
            "note": "support's Hold drop button sets hold_until 48h; PressDropJob skips held books",
        },
        {"must": ["PrintHausStatusImportJob"], "note": "status CSV import every 20 minutes; rejections only by email"},
        {"must": ["sftp.printhaus.de"], "note": "drop path /inbound/foliopress/<yyyymmdd>/<book_id>/"},
    ],
    "forbidden": [
        "bin/dev and serves the proof UI on localhost:3100",
        "Maggie Olsen owns press-gateway",
        "flattened to PDF/X-1a because",
        "Nothing goes out to press-gateway on a Friday (PrintHaus weekend batch)",
        "poll the books table every minute",
        "b81e0c2",
        "this was helpful",
    ],
    "secrets": [],
}
