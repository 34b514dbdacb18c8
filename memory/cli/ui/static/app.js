/* MAPLE's web page: views over the JSON the server returns (memory.app.Memories' answers).
   Routing by the URL's hash (#/browse, #/search?q=, #/memory/12, #/sessions, #/session/ID,
   #/graph, #/health). Memory text is user data: it is only ever set with textContent. */
(function () {
  "use strict";
  var TOKEN = document.querySelector('meta[name="maple-token"]').content;
  var main = document.getElementById("main");
  var PROJECT = document.querySelector('meta[name="maple-project"]').content;

  // -- small helpers ------------------------------------------------------------------------------

  function h(tag, attrs, children) {
    var e = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) {
      var v = attrs[k];
      if (v === null || v === undefined || v === false) return;
      if (k === "text") e.textContent = v;
      else if (k.slice(0, 2) === "on") e.addEventListener(k.slice(2), v);
      else e.setAttribute(k, v === true ? "" : v);
    });
    (children || []).forEach(function (c) {
      if (c === null || c === undefined || c === false) return;
      e.appendChild(typeof c === "string" || typeof c === "number" ? document.createTextNode(String(c)) : c);
    });
    return e;
  }

  function api(path, params) {
    var q = new URLSearchParams();
    Object.keys(params || {}).forEach(function (k) { if (params[k] !== "" && params[k] != null) q.set(k, params[k]); });
    var url = "/api/" + path + (q.toString() ? "?" + q : "");
    return fetch(url, {headers: {"X-Maple-Token": TOKEN}, credentials: "same-origin"}).then(answer);
  }

  function post(path, body) {
    return fetch("/api/" + path, {
      method: "POST", credentials: "same-origin",
      headers: {"X-Maple-Token": TOKEN, "Content-Type": "application/json"},
      body: JSON.stringify(body || {})
    }).then(answer);
  }

  function answer(r) {
    return r.json().then(function (d) {
      if (!r.ok) throw new Error(d.error || ("the server answered " + r.status));
      return d;
    });
  }

  var toastTimer = null;
  function toast(text) {
    var t = document.getElementById("toast");
    t.textContent = text; t.classList.add("on");
    clearTimeout(toastTimer);
    toastTimer = setTimeout(function () { t.classList.remove("on"); }, 2600);
  }

  function fail(err) {
    main.textContent = "";
    main.appendChild(h("p", {"class": "error", text: String(err.message || err)}));
  }

  function date(iso) { return iso ? iso.slice(0, 16).replace("T", " ") : ""; }
  function short(text, n) { text = String(text || "").replace(/\s+/g, " "); return text.length > n ? text.slice(0, n - 1) + "…" : text; }
  function link(href, text) { return h("a", {href: href, text: text}); }

  function badges(m, status) {
    var out = [h("span", {"class": "badge " + m.layer, text: m.layer}), h("span", {"class": "badge", text: m.category})];
    if (m.pinned) out.push(h("span", {"class": "badge pinned", text: "pinned"}));
    var s = status || (m.deleted_at ? "archived" : m.superseded_by ? "superseded" : "current");
    if (s !== "current") out.push(h("span", {"class": "badge " + s, text: s}));
    if (m.scope !== PROJECT) out.push(h("span", {"class": "badge scope", title: m.scope, text: scopeName(m.scope)}));
    return out;
  }

  // A memory's scope as a person reads it: global, this project, or another project by its
  // folder's name (the full path in the title).
  function scopeName(scope) {
    if (scope === "global") return "global";
    if (scope === PROJECT) return "this project";
    var parts = String(scope || "").split(/[\\/]/).filter(Boolean);
    return "project " + (parts.length ? parts[parts.length - 1] : scope);
  }

  // The scope filter: this project + global, each alone, and (with --all-projects) every project
  // that holds memories, by name. The projects arrive from the server after the form is drawn.
  var scopesPresent = null;
  function scopeSelect(value) {
    var label = select("scope", [["all", "this project + global"], ["project", "this project"], ["global", "global"]], value, "scope");
    var sel = label.querySelector("select");
    if (["all", "project", "global"].indexOf(value) < 0) sel.appendChild(h("option", {value: value, selected: true, text: scopeName(value)}));
    scopesPresent = scopesPresent || api("scopes");
    scopesPresent.then(function (d) {
      if (!d.all_projects) return;
      sel.options[0].textContent = "every project";
      d.scopes.forEach(function (s) {
        if (s.scope === "global" || s.scope === PROJECT) return;
        var o = Array.prototype.find.call(sel.options, function (x) { return x.value === s.scope; });
        if (!o) { o = h("option", {value: s.scope}); sel.appendChild(o); }
        o.textContent = scopeName(s.scope) + " (" + s.memories + ")";
        o.title = s.scope;
      });
    }).catch(function () { /* the filter keeps its three choices */ });
    return label;
  }

  function memoryRow(m, extra) {
    return h("li", {"data-id": String(m.id)}, [
      h("div", {"class": "row"}, [
        h("span", {"class": "id", text: "#" + m.id}),
        h("div", {"class": "text"}, [
          h("a", {href: "#/memory/" + m.id, text: short(m.content, 400)}),
          h("div", {"class": "meta"}, badges(m, m.status).concat([
            h("span", {text: date(m.occurred_at || m.created_at)}),
            m.subject ? h("span", {text: "subject: " + m.subject}) : null,
            h("span", {text: "importance " + m.importance})
          ])),
          extra || null
        ])
      ])
    ]);
  }

  function parseHash() {
    var raw = location.hash.replace(/^#\/?/, "") || "browse";
    var qi = raw.indexOf("?");
    var path = qi < 0 ? raw : raw.slice(0, qi);
    var params = new URLSearchParams(qi < 0 ? "" : raw.slice(qi + 1));
    var parts = path.split("/").map(decodeURIComponent);
    return {view: parts[0], arg: parts.slice(1).join("/"), params: params};
  }

  function go(view, params) {
    var q = new URLSearchParams();
    Object.keys(params || {}).forEach(function (k) { if (params[k]) q.set(k, params[k]); });
    location.hash = "#/" + view + (q.toString() ? "?" + q : "");
  }

  // -- browse -------------------------------------------------------------------------------------

  var LAYERS = ["", "fact", "experience", "decision"];

  function select(name, options, value, label) {
    return h("label", {}, [label, h("select", {name: name}, options.map(function (o) {
      var v = Array.isArray(o) ? o[0] : o, t = Array.isArray(o) ? o[1] : (o || "any");
      return h("option", {value: v, selected: v === value, text: t});
    }))]);
  }

  function viewBrowse(route) {
    var p = route.params;
    var form = h("form", {"class": "filters", id: "filters"}, [
      scopeSelect(p.get("scope") || "all"),
      select("layer", LAYERS, p.get("layer") || "", "layer"),
      h("label", {}, ["category", h("input", {name: "category", value: p.get("category") || "", size: "12"})]),
      select("pinned", [["", "any"], ["1", "pinned"], ["0", "not pinned"]], p.get("pinned") || "", "pinned"),
      select("status", [["current", "current"], ["history", "history (superseded, expired)"], ["archived", "archived"], ["all", "all"]], p.get("status") || "current", "status"),
      select("sort", [["newest", "newest"], ["oldest", "oldest"], ["updated", "recently changed"], ["importance", "importance"], ["recently_used", "recently used"]], p.get("sort") || "newest", "sort"),
      h("label", {}, ["since", h("input", {name: "since", type: "date", value: p.get("since") || ""})]),
      h("label", {}, ["until", h("input", {name: "until", type: "date", value: p.get("until") || ""})]),
      h("button", {type: "submit", text: "Filter"})
    ]);
    form.addEventListener("change", function () { form.requestSubmit(); });
    form.addEventListener("submit", function (ev) {
      ev.preventDefault();
      var d = {}; new FormData(form).forEach(function (v, k) { d[k] = v; });
      if (d.scope === "all") delete d.scope;
      if (d.status === "current") delete d.status;
      if (d.sort === "newest") delete d.sort;
      go("browse", d);
    });
    var list = h("ul", {"class": "list", id: "memories"});
    var summary = h("p", {"class": "muted small", id: "summary"});
    var more = h("button", {type: "button", id: "more", text: "More", hidden: true});
    main.append(h("h1", {text: "Memories"}), form, summary, list, h("div", {"class": "bar"}, [more]));
    var since = p.get("since"), until = p.get("until");
    var shown = 0;
    function inTime(m) {  // the date filter, on when each memory happened
      var t = (m.occurred_at || m.created_at || "").slice(0, 10);
      return (!since || t >= since) && (!until || t <= until);
    }
    var sort = p.get("sort") || "newest";
    function past(d) {  // sorted by when they happened, the rest of the pages are all outside the dates
      var last = d.memories[d.memories.length - 1];
      if (!last) return true;
      var t = (last.occurred_at || last.created_at || "").slice(0, 10);
      return (sort === "newest" && since && t < since) || (sort === "oldest" && until && t > until);
    }
    function page(cursor, skipped) {
      return api("list", {scope: p.get("scope"), layer: p.get("layer"), category: p.get("category"),
                          pinned: p.get("pinned"), status: p.get("status"), sort: p.get("sort"), limit: 50, cursor: cursor})
        .then(function (d) {
          var kept = d.memories.filter(inTime);
          kept.forEach(function (m) { list.appendChild(memoryRow(m)); });
          shown += kept.length;
          var next = d.next_cursor && !((since || until) && past(d)) ? d.next_cursor : null;
          // A page the dates filtered out whole: read on (a few pages) rather than offer an empty More.
          if (!kept.length && next && (skipped || 0) < 20) return page(next, (skipped || 0) + 1);
          summary.textContent = (since || until) ? shown + " shown (dated " + (since || "…") + " to " + (until || "…") + ") of " + d.total
                                                 : shown + " of " + d.total + " memories";
          if (!shown && !next) list.appendChild(h("li", {"class": "empty", text: "No memories match these filters."}));
          more.hidden = !next;
          more.onclick = function () { page(next); };
        });
    }
    return page(null);
  }

  // -- search -------------------------------------------------------------------------------------

  var CHANNELS = {
    bm25: "keywords · 关键词", vector: "meaning · 语义", entity: "named things · 实体", speaker: "said by the person named · 所问之人说的", graph: "graph · 图谱", relation: "states the relation asked · 所问的关系",
    mood: "mood · 情绪", time: "time · 时间", session: "same session · 同一会话", neighbour: "neighbour · 相邻",
    context: "neighbouring turns · 相邻对话", reply: "reply to a match · 匹配内容的回复", nearby: "close in time · 时间相近",
    weighting: "layer & importance · 层级与重要性", prior: "recency & use · 近期与使用"
  };

  function why(r) {
    var parts = Object.keys(r.channels || {}).map(function (k) { return [k, r.channels[k]]; })
      .sort(function (a, b) { return Math.abs(b[1]) - Math.abs(a[1]); });
    var top = parts.filter(function (x) { return x[1] > 0; }).slice(0, 3).map(function (x) { return (CHANNELS[x[0]] || x[0] + " · 其他信号").split(" · "); });
    return top.length ? "Ranked by " + top.map(function (t) { return t[0]; }).join(", ") +
                        " · 排序依据：" + top.map(function (t) { return t[1]; }).join("、")
                      : "No channel added to its score · 没有渠道加分";
  }

  function bar(px) {  // a width set through the CSSOM: the page's CSP allows no style attributes
    var i = document.createElement("i"); i.style.width = px + "px"; return i;
  }

  function channelBars(r) {
    var max = Math.max.apply(null, [0.0001].concat(Object.keys(r.channels).map(function (k) { return Math.abs(r.channels[k]); })));
    return h("div", {"class": "channels"}, Object.keys(r.channels).map(function (k) {
      var v = r.channels[k];
      return h("span", {"class": "channel", "data-channel": k, title: CHANNELS[k] || k}, [
        bar(Math.round(40 * Math.abs(v) / max)), (CHANNELS[k] || k).split(" · ")[0] + " " + v.toFixed(3)
      ]);
    }));
  }

  function viewSearch(route) {
    var p = route.params, q = p.get("q") || "";
    var box = h("input", {type: "search", name: "q", value: q, placeholder: "What to look for, in any language · 搜索", autofocus: true});
    var form = h("form", {"class": "filters", id: "search"}, [
      h("label", {"class": "grow"}, ["query", box]),
      scopeSelect(p.get("scope") || "all"),
      select("layer", LAYERS, p.get("layer") || "", "layer"),
      h("label", {}, ["since", h("input", {name: "since", type: "date", value: p.get("since") || ""})]),
      h("label", {}, ["until", h("input", {name: "until", type: "date", value: p.get("until") || ""})]),
      h("button", {type: "submit", "class": "primary", text: "Search"})
    ]);
    form.addEventListener("submit", function (ev) {
      ev.preventDefault();
      var d = {}; new FormData(form).forEach(function (v, k) { d[k] = v; });
      if (d.scope === "all") delete d.scope;
      go("search", d);
    });
    main.append(h("h1", {text: "Search"}), form);
    if (!q.trim()) {
      main.appendChild(h("p", {"class": "muted", text: "Each result shows what each retrieval channel added to its score, and why it ranked where it did: the same explanation the assistant's memory_search gets."}));
      return Promise.resolve();
    }
    return api("search", {q: q, scope: p.get("scope"), layer: p.get("layer"), since: p.get("since"), until: p.get("until"), limit: 20}).then(function (d) {
      var notes = [];
      if (d.model && d.model !== "ready") notes.push("The embedding model is " + d.model + ": ranked by keywords and names only for now.");
      if (d.without_vectors && d.without_vectors.length) notes.push(d.without_vectors.length + " results have no vector yet (matched by keywords alone); `maple-memory maintain` embeds them.");
      notes.forEach(function (n) { main.appendChild(h("p", {"class": "muted small", text: n})); });
      var list = h("ul", {"class": "list", id: "results"});
      if (!d.results.length) list.appendChild(h("li", {"class": "empty", text: "No memories match “" + q + "” in " + d.scopes.join(", ") + "."}));
      d.results.forEach(function (r) {
        list.appendChild(memoryRow(r, h("div", {}, [
          h("div", {"class": "why", text: "score " + r.score.toFixed(4) + " — " + why(r)}),
          channelBars(r)
        ])));
      });
      main.appendChild(list);
    });
  }

  // -- one memory ---------------------------------------------------------------------------------

  function field(name, value) {
    if (value === null || value === undefined || value === "" || (Array.isArray(value) && !value.length)) return null;
    return h("div", {}, [h("b", {text: name}), typeof value === "object" ? JSON.stringify(value) : String(value)]);
  }

  function viewMemory(route) {
    if (!/^\d+$/.test(route.arg)) {
      main.append(h("h1", {text: "Memory"}), h("p", {"class": "error", id: "bad-id",
        text: "A memory's id is a whole number, as in #/memory/12; “" + short(route.arg, 40) + "” is not one. Search or browse to find it."}));
      return Promise.resolve();
    }
    var id = parseInt(route.arg, 10);
    return api("memory/" + id).then(function (d) {
      var m = d.memory, st = d.status;
      main.append(h("h1", {text: "Memory #" + m.id}));
      var card = h("div", {"class": "card"}, [
        h("div", {"class": "meta"}, badges(m, st)),
        h("p", {"class": "content", id: "content", text: m.content}),
        h("div", {"class": "grid"}, [
          field("layer", m.layer), field("category", m.category), field("subject", m.subject),
          field("scope", m.scope === "global" || m.scope === PROJECT ? scopeName(m.scope) : scopeName(m.scope) + " — " + m.scope), field("importance", m.importance),
          field("confidence", m.confidence), field("emotion", (m.valence || m.intensity) ? "valence " + m.valence + ", intensity " + m.intensity : null),
          field("moods", (m.moods || []).join(", ")), field("tags", (m.tags || []).join(", ")),
          field("happened", date(m.occurred_at)), field("stored", date(m.created_at)), field("changed", date(m.updated_at)),
          field("recalled", m.activation_count ? m.activation_count + (m.activation_count === 1 ? " time" : " times") + ", last " + date(m.last_activated_at) : null),
          field("valid", (m.valid_from || m.valid_to) ? date(m.valid_from) + " – " + date(m.valid_to) : null),
          field("source", m.source + (m.source_ref ? " (" + m.source_ref + ")" : "")),
          m.session_id ? h("div", {}, [h("b", {text: "session"}), link("#/session/" + encodeURIComponent(m.session_id), short(m.session_id, 24))]) : null,
          m.superseded_by ? h("div", {}, [h("b", {text: "superseded by"}), link("#/memory/" + m.superseded_by, "#" + m.superseded_by)]) : null
        ])
      ]);
      main.appendChild(card);
      if (d.entities.length) {
        main.appendChild(h("h2", {text: "Names"}));
        main.appendChild(h("p", {}, d.entities.map(function (e) {
          return h("span", {}, [link("#/graph?entity=" + encodeURIComponent(e.name), e.name), h("span", {"class": "muted small", text: " (" + e.kind + ")  "})]);
        })));
      }
      main.appendChild(actions(m, st));
      var dec = (m.metadata || {}).decision, out = (m.metadata || {}).outcome, warn = (m.metadata || {}).warning;
      if (dec || out || d.outcomes.length) {
        main.appendChild(h("h2", {text: "Decision"}));
        var box = h("div", {"class": "card", id: "decision"});
        if (dec) {
          box.appendChild(field("chosen", dec.chosen) || h("span"));
          box.appendChild(field("why", dec.why) || h("span"));
          if (dec.alternatives && dec.alternatives.length) box.appendChild(field("alternatives", dec.alternatives.join("; ")));
        }
        if (out) box.appendChild(field("outcome", out.result + (out.notes ? ": " + out.notes : "") + " (" + date(out.at) + ")"));
        if (warn) box.appendChild(h("p", {"class": "error", text: "Lesson: " + warn}));
        if (d.outcomes.length) {
          box.appendChild(h("ul", {}, d.outcomes.map(function (o) {
            return h("li", {text: date(o.recorded_at) + " " + o.outcome + (o.notes ? ": " + o.notes : "")});
          })));
        }
        main.appendChild(box);
      }
      main.appendChild(h("h2", {text: "History"}));
      var tl = h("div", {"class": "timeline", id: "history"});
      d.history.forEach(function (e) {
        var em = e.memory;
        var block = h("div", {"data-id": String(em.id)}, [
          h("div", {}, [em.id === m.id ? h("b", {text: "#" + em.id + " (this memory)"}) : link("#/memory/" + em.id, "#" + em.id),
                        " ", h("span", {"class": "badge " + e.status, text: e.status}),
                        e.supersedes.length ? h("span", {"class": "muted small", text: " replaces " + e.supersedes.map(function (i) { return "#" + i; }).join(", ")}) : null]),
          h("div", {"class": "small", text: short(em.content, 300)})
        ]);
        if (e.versions.length) {
          block.appendChild(h("ul", {"class": "versions small"}, e.versions.map(function (v) {
            return h("li", {}, [h("span", {"class": "muted", text: date(v.changed_at) + " · " + v.reason + (v.editor ? " by " + v.editor : "") + (v.changed.length ? " · changed " + v.changed.join(", ") : "") + ": "}), short(v.content, 300)]);
          })));
        }
        tl.appendChild(block);
      });
      main.appendChild(tl);
    });
  }

  function actions(m, status) {
    var bar = h("div", {"class": "actions", id: "actions"});
    var live = status !== "archived" && !m.superseded_by;
    function act(path, body, done) {
      return post("memory/" + m.id + "/" + path, body).then(function (d) { toast(done(d)); render(); }, function (e) { toast(e.message); });
    }
    if (live) {
      bar.appendChild(h("button", {type: "button", id: "edit", text: "Edit", onclick: function () { editor(m, bar); }}));
      bar.appendChild(h("button", {type: "button", id: "pin", text: m.pinned ? "Unpin" : "Pin",
        onclick: function () { act("pin", {pinned: !m.pinned}, function () { return m.pinned ? "Unpinned" : "Pinned: surfaced first, kept from decay"; }); }}));
    }
    if (status === "archived") {
      bar.appendChild(h("button", {type: "button", id: "restore", text: "Restore",
        onclick: function () { act("restore", {}, function () { return "Restored"; }); }}));
    } else {
      bar.appendChild(h("button", {type: "button", id: "forget", text: "Forget",
        onclick: function () { act("forget", {}, function () { return "Archived: Restore brings it back"; }); }}));
    }
    bar.appendChild(h("button", {type: "button", id: "delete", "class": "danger", text: "Delete permanently…", onclick: function () {
      if (document.getElementById("confirm-delete")) return;
      var input = h("input", {id: "confirm-id", inputmode: "numeric", size: "8", "aria-label": "memory id to confirm"});
      var box = h("div", {"class": "confirm", id: "confirm-delete"}, [
        h("p", {text: "Delete memory #" + m.id + " for good, with its versions and links? This cannot be undone (Forget can). Type its id, " + m.id + ", to confirm."}),
        h("div", {"class": "bar"}, [input,
          h("button", {type: "button", "class": "danger", id: "confirm-delete-go", text: "Delete for good", onclick: function () {
            post("memory/" + m.id + "/delete", {confirm: parseInt(input.value, 10)}).then(function () {
              toast("Memory #" + m.id + " deleted"); go("browse");
            }, function (e) { toast(e.message); });
          }}),
          h("button", {type: "button", text: "Cancel", onclick: function () { box.remove(); }})])
      ]);
      bar.after(box);
      input.focus();
    }}));
    return bar;
  }

  function editor(m, bar) {
    if (document.getElementById("editor")) return;
    var text = h("textarea", {name: "content", id: "edit-content"}); text.value = m.content;
    var form = h("form", {"class": "card", id: "editor"}, [
      h("label", {}, ["text", text]),
      h("div", {"class": "bar"}, [
        h("label", {}, ["category", h("input", {name: "category", value: m.category, size: "14"})]),
        h("label", {}, ["subject", h("input", {name: "subject", value: m.subject || "", size: "14"})]),
        h("label", {}, ["importance", h("input", {name: "importance", type: "number", min: "1", max: "5", value: String(m.importance)})]),
        h("label", {}, ["tags (comma-separated)", h("input", {name: "tags", value: (m.tags || []).join(", "), size: "20"})]),
        select("mode", [["edit", "edit: fix the wording (kept as a version)"], ["supersede", "supersede: the fact changed (a new memory)"]], "edit", "how")
      ]),
      h("div", {"class": "bar"}, [h("button", {type: "submit", "class": "primary", id: "save", text: "Save"}),
                                  h("button", {type: "button", text: "Cancel", onclick: function () { form.remove(); }})])
    ]);
    form.addEventListener("submit", function (ev) {
      ev.preventDefault();
      var d = {}; new FormData(form).forEach(function (v, k) { d[k] = v; });
      d.tags = d.tags.split(",").map(function (t) { return t.trim(); }).filter(Boolean);
      if (d.content === m.content) delete d.content;
      post("memory/" + m.id + "/edit", d).then(function (r) {
        toast(r.action === "superseded" ? "Stored as memory #" + r.memory.id + "; #" + m.id + " kept as history"
              : r.action === "edited" ? "Saved; the earlier wording is kept as version " + r.versions : "Nothing changed");
        if (r.action === "superseded") go("memory/" + r.memory.id); else render();
      }, function (e) { toast(e.message); });
    });
    bar.after(form);
    text.focus();
  }

  // -- sessions -----------------------------------------------------------------------------------

  function viewSessions() {
    return api("sessions", {limit: 100}).then(function (d) {
      main.append(h("h1", {text: "Sessions"}),
        h("p", {"class": "muted small", text: "What each Claude Code session was shown (the brief at its start, memories beside its prompts) and what its harvest stored."}));
      var list = h("ul", {"class": "list", id: "sessions"});
      if (!d.sessions.length) list.appendChild(h("li", {"class": "empty", text: "No session has been shown or has stored memories here yet."}));
      d.sessions.forEach(function (s) {
        list.appendChild(h("li", {"data-session": s.session_id}, [
          h("div", {"class": "row"}, [h("div", {"class": "text"}, [
            link("#/session/" + encodeURIComponent(s.session_id), s.session_id),
            h("div", {"class": "meta"}, [h("span", {text: date(s.first) + " – " + date(s.last)}),
              h("span", {text: s.briefed + " in the brief"}), h("span", {text: s.surfaced + " surfaced"}), h("span", {text: s.stored + " stored"})])
          ])])
        ]));
      });
      main.appendChild(list);
    });
  }

  var KINDS = {brief: "Brief at session start", surface: "Beside a prompt", context: "Context asked for"};

  function miniList(items, note) {
    var ul = h("ul", {"class": "list"});
    items.forEach(function (m) { ul.appendChild(memoryRow(m, note ? note(m) : null)); });
    return ul;
  }

  function viewSession(route) {
    var sid = route.arg;
    return api("session/" + encodeURIComponent(sid)).then(function (d) {
      main.append(h("h1", {text: "Session " + short(sid, 40)}));
      var hv0 = d.harvest;
      if (!d.deliveries.length && !hv0.stored.length && !hv0.superseded.length && !hv0.reinforced.length) {
        main.appendChild(h("p", {"class": "error", id: "no-session",
          text: "There is no session “" + short(sid, 60) + "” in these memories' records: nothing was shown to it or stored from it. The Sessions list names the ones there are."}));
        main.appendChild(h("p", {}, [link("#/sessions", "All sessions")]));
        return;
      }
      main.appendChild(h("h2", {text: "What the model was shown"}));
      var tl = h("div", {"class": "timeline", id: "deliveries"});
      if (!d.deliveries.length) tl.appendChild(h("p", {"class": "muted", text: "Nothing was put in front of this session."}));
      d.deliveries.forEach(function (e) {
        tl.appendChild(h("div", {"class": "delivery", "data-kind": e.kind}, [
          h("div", {}, [h("b", {text: KINDS[e.kind] || e.kind}), h("span", {"class": "muted small", text: "  " + date(e.at)})]),
          e.prompt ? h("div", {"class": "prompt", text: "Prompt: " + e.prompt}) : null,
          miniList(e.memories)
        ]));
      });
      if (d.deliveries.some(function (e) { return e.kind === "surface" && !e.prompt; }) && !d.transcript_prompts) {
        tl.appendChild(h("p", {"class": "muted small", text: "Deliveries recorded before prompts were kept with them get their prompt from the session's transcript once it has been harvested; this one has not been (or is gone)."}));
      }
      main.appendChild(tl);
      var hv = d.harvest;
      main.appendChild(h("h2", {text: "What its harvest did"}));
      var box = h("div", {id: "harvest"});
      box.appendChild(h("p", {"class": "muted small", text: hv.stored.length + " stored, " + hv.superseded.length + " superseded, " + hv.reinforced.length + " merged into or reinforced existing memories"}));
      if (hv.stored.length) box.append(h("h2", {text: "Stored"}), miniList(hv.stored));
      if (hv.superseded.length) box.append(h("h2", {text: "Superseded"}), miniList(hv.superseded, function (m) { return h("div", {"class": "small"}, ["replaced by ", link("#/memory/" + m.by, "#" + m.by)]); }));
      if (hv.reinforced.length) box.append(h("h2", {text: "Merged or reinforced"}), miniList(hv.reinforced));
      main.appendChild(box);
    });
  }

  // -- graph --------------------------------------------------------------------------------------

  function viewGraph(route) {
    var p = route.params, entity = p.get("entity") || "", size = p.get("max") || "60";
    var form = h("form", {"class": "filters", id: "graph-form"}, [
      h("label", {"class": "grow"}, ["centre on an entity (empty: the most connected)", h("input", {type: "search", name: "entity", value: entity})]),
      select("max", [["30", "30 entities"], ["60", "60 entities"], ["120", "120 entities"], ["250", "250 entities"]], size, "show"),
      h("button", {type: "submit", text: "Draw"})
    ]);
    form.addEventListener("submit", function (ev) {
      ev.preventDefault(); var d = {}; new FormData(form).forEach(function (v, k) { d[k] = v; }); go("graph", d);
    });
    var svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
    svg.setAttribute("id", "graph"); svg.setAttribute("role", "img"); svg.setAttribute("aria-label", "entity graph");
    var panel = h("aside", {"class": "card", id: "graph-panel"}, [h("p", {"class": "muted", text: "Click an entity to see its memories."})]);
    var zoom = h("div", {"class": "bar"});
    main.append(h("h1", {text: "Graph"}), form, zoom, h("div", {"class": "graph-wrap"}, [svg, panel]));
    var problem = h("p", {"class": "error", id: "graph-error", role: "alert", hidden: true});
    form.after(problem);
    return api("graph", {entity: entity, max: size}).catch(function (err) {
      // An entity that is not there: say so beside the form, which stays for another try.
      problem.textContent = String(err.message || err); problem.hidden = false;
      panel.textContent = "Nothing drawn. Leave the box empty for the most connected entities.";
      return null;
    }).then(function (d) {
      if (!d) return;
      if (!d.nodes.length) { panel.textContent = d.empty || "The graph is empty."; return; }
      var summary = d.nodes.length + " entities, " + d.edges.length + " connections" + (d.truncated ? " (the most connected part; show more above)" : "");
      zoom.append(h("span", {"class": "muted small", id: "graph-summary", text: summary}));
      var g = window.MapleGraph.draw(svg, d, {onSelect: function (n) {
        panel.textContent = "";
        panel.append(h("h2", {text: n.name}), h("div", {"class": "meta"}, [h("span", {text: n.kind}), h("span", {text: scopeName(n.scope), title: n.scope}), h("span", {text: (n.memories || 0) + " memories"})]));
        panel.appendChild(h("ul", {"class": "small"}, (n.memories_shown || []).map(function (m) {
          return h("li", {}, [link("#/memory/" + m.id, "#" + m.id), " ", (m.outcome === "failed" ? "[failed decision] " : "") + short(m.content, 160)]);
        })));
        panel.appendChild(h("button", {type: "button", text: "Centre here", onclick: function () { go("graph", {entity: n.name, max: size}); }}));
      }});
      zoom.prepend(h("button", {type: "button", text: "−", title: "zoom out", onclick: g.zoomOut}), h("button", {type: "button", text: "+", title: "zoom in", onclick: g.zoomIn}));
    });
  }

  // -- health -------------------------------------------------------------------------------------

  function kv(obj) {
    var keys = Object.keys(obj || {});
    if (!keys.length) return h("span", {"class": "muted", text: "none"});
    return h("table", {}, keys.map(function (k) { return h("tr", {}, [h("td", {text: k}), h("td", {text: typeof obj[k] === "object" ? JSON.stringify(obj[k]) : String(obj[k])})]); }));
  }

  function mb(n) { return n < 1048576 ? Math.round(n / 1024) + " KB" : (n / 1048576).toFixed(1) + " MB"; }

  function viewHealth() {
    return api("health").then(function (d) {
      var s = d.stats, e = d.engine || {};
      main.append(h("h1", {text: "Health"}));
      main.appendChild(h("div", {"class": "card grid", id: "counts"}, [
        field("memories", s.memories), field("history", s.history), field("archived", s.archived), field("pinned", s.pinned),
        field("decisions", s.decisions ? s.decisions.total + " (" + s.decisions.open + " without an outcome)" : null),
        field("entities", s.entities), field("relations", s.relations), field("versions", s.versions),
        field("database", mb(s.database_bytes)), field("text", mb(s.content_bytes || 0)),
        field("embedding model", (s.embedding_model || "none yet") + " · " + s.model),
        field("without vectors", s.without_vectors),
        field("engine", e.pid ? "pid " + e.pid + ", model " + e.model + ", indexes " + e.indexes : "not running"),
        field("last maintenance", s.last_maintenance ? date(s.last_maintenance) : "never")
      ]));
      main.append(h("h2", {text: "By layer"}), h("div", {"class": "card"}, [kv(s.by_layer)]));
      main.append(h("h2", {text: "By scope"}), h("div", {"class": "card"}, [kv(s.by_scope)]));
      main.append(h("h2", {text: "Jobs"}), h("div", {"class": "card", id: "jobs"}, [kv(s.jobs)]));
      main.append(h("h2", {text: "Last maintenance"}), h("div", {"class": "card"}, [kv(s.last_maintenance_changes)]));
      var doctor = h("div", {"class": "card", id: "doctor"}, [h("button", {type: "button", id: "run-doctor", text: "Run the doctor's checks", onclick: function (ev) {
        ev.target.disabled = true; ev.target.textContent = "Checking…";
        api("doctor").then(function (r) {
          doctor.textContent = "";
          doctor.appendChild(h("table", {}, r.checks.map(function (c) {
            var word = c.ok === true ? "ok" : c.ok === false ? "fail" : "skip";
            return h("tr", {}, [h("td", {"class": word, text: word}), h("td", {text: c.name}), h("td", {}, [c.detail, c.fix ? h("div", {"class": "small", text: "fix: " + c.fix}) : null])]);
          })));
        }, function (err) { doctor.textContent = err.message; });
      }})]);
      main.append(h("h2", {text: "Doctor"}), doctor);
    });
  }

  // -- routing and live updates -------------------------------------------------------------------

  var VIEWS = {browse: viewBrowse, search: viewSearch, memory: viewMemory, sessions: viewSessions,
               session: viewSession, graph: viewGraph, health: viewHealth};
  var LIVE = {browse: true, sessions: true, session: true, health: true};

  function render() {
    var route = parseHash(), view = VIEWS[route.view] || viewBrowse;
    document.querySelectorAll("nav a").forEach(function (a) {
      var v = a.getAttribute("data-view");
      a.classList.toggle("on", v === route.view || (v === "sessions" && route.view === "session") || (v === "browse" && route.view === "memory"));
    });
    var y = window.scrollY;
    // A fresh element per render: a view still loading from an earlier route writes into the one
    // it was given, now detached, and can neither mix into this view nor mark it ready.
    var here = main.cloneNode(false);
    main.replaceWith(here); main = here;
    here.setAttribute("data-view", route.view);
    here.removeAttribute("data-ready");
    return Promise.resolve(view(route)).then(function () {
      here.setAttribute("data-ready", "1");
      here.setAttribute("data-ready-at", String(Math.round(performance.now())));  // for the benchmark
      return y;
    }, function (err) { if (here === main) fail(err); });
  }

  var last = null, live = document.getElementById("live");
  function poll() {
    api("pulse").then(function (p) {
      live.classList.add("on");
      var key = [p.newest, p.changed, p.count, p.shown].join("|");
      if (last !== null && key !== last) {
        var added = p.newest - JSON.parse(last.split("|")[0] || "0");
        if (added > 0) toast(added + " new memor" + (added === 1 ? "y" : "ies"));
        live.classList.add("flash"); setTimeout(function () { live.classList.remove("flash"); }, 800);
        if (LIVE[parseHash().view] && !document.getElementById("editor") && !document.getElementById("confirm-delete")) {
          render().then(function (y) { if (typeof y === "number") window.scrollTo(0, y); });
        }
      }
      last = key;
    }, function () { live.classList.remove("on"); });
  }

  window.addEventListener("hashchange", render);
  // The first view first; then the pulse (it scans the memories once) every two seconds.
  render().then(function () { poll(); setInterval(poll, 2000); });
})();
