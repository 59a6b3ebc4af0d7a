/* take5 arena, the web pages (referee serve --web): the live parts, no framework.
 *
 * The standings and the list of games in progress follow server-sent events; a game is watched
 * turn by turn and replayed with the static site's renderer (/site/site.js, window.Take5). Every
 * text from the server goes into the page as a text node, never as HTML (the page's
 * Content-Security-Policy allows no inline script in any case).
 */
(function () {
  "use strict";

  function el(tag, text, attrs) {
    var node = document.createElement(tag);
    if (text !== undefined && text !== null) node.textContent = String(text);
    Object.keys(attrs || {}).forEach(function (k) { node.setAttribute(k, attrs[k]); });
    return node;
  }

  /* The competition whose pages these are: "" the default's, "/c/NAME" another's (every link and
   * stream of its pages stays in it); anything else the server would never send: the default. */
  var PREFIX = /^(\/c\/[a-z0-9][a-z0-9-]{0,31})?$/.test(document.body.dataset.prefix || "")
    ? (document.body.dataset.prefix || "") : "";

  function botLink(name) {
    var bare = String(name).split("@")[0];
    return el("a", name, { href: PREFIX + "/bot.html?bot=" + encodeURIComponent(bare) });
  }

  function fixed(x, d) { return x === null || x === undefined ? "–" : Number(x).toFixed(d); }

  function follow(url, onData) {
    var source = new EventSource(url);
    source.onmessage = function (ev) {
      var data;
      try { data = JSON.parse(ev.data); } catch (e) { return; }
      onData(data, source);
    };
    return source;
  }

  function standings() {
    var body = document.getElementById("standings-body");
    var meta = document.getElementById("standings-meta");
    follow(PREFIX + "/events/standings", function (data) {
      body.textContent = "";
      if (!data.rows.length) {
        var tr0 = el("tr", null, { class: "empty" });
        tr0.appendChild(el("td", "No games rated yet.", { colspan: "8" }));
        body.appendChild(tr0);
      }
      data.rows.forEach(function (r) {
        var tr = el("tr");
        var cells = [
          el("td", r.rank, { class: "num" }), el("td"), el("td", r.owner),
          el("td", fixed(r.rating, 0), { class: "num" }),
          el("td", r.interval ? fixed(r.interval[0], 0) + " to " + fixed(r.interval[1], 0) : (r.no_interval || "–")),
          el("td", r.games, { class: "num" }), el("td", r.wins, { class: "num" }),
          el("td", fixed(r.mean_place, 2), { class: "num" })];
        cells[1].appendChild(botLink(r.entrant));
        cells.forEach(function (c) { tr.appendChild(c); });
        body.appendChild(tr);
      });
      var note = document.getElementById("interval-note");
      if (note) note.hidden = !!data.intervals;
      meta.textContent = data.games + " games rated" + (data.computed_at ? ", computed " + data.computed_at : "") + ". Updated live.";
      document.body.dataset.updates = String(Number(document.body.dataset.updates || 0) + 1);
    });
  }

  function live() {
    var list = document.getElementById("live-games");
    follow(PREFIX + "/events/live", function (data) {
      list.textContent = "";
      if (!data.games.length) list.appendChild(el("li", "No game is being played right now.", { class: "empty" }));
      data.games.forEach(function (g) {
        var li = el("li", null, { "data-game": g.id });
        li.appendChild(el("a", g.id, { href: PREFIX + "/watch?game=" + encodeURIComponent(g.id) }));
        li.appendChild(document.createTextNode(": " + g.entrants.join(", ") + (g.done ? " (finished)" : "")));
        list.appendChild(li);
      });
    });
  }

  function watch() {
    var id = document.body.dataset.game;
    var turns = 0;
    follow(PREFIX + "/events/games/" + encodeURIComponent(id), function (game, source) {
      window.Take5.renderReplay(game, { follow: true });
      turns += 1;
      document.body.dataset.turns = String(turns);
      var app = document.getElementById("app");
      var note = el("p", game.done ? "The game is over. " : "Live: the board follows each turn as it is played.", { class: "note", id: "watch-note" });
      if (game.done) {
        note.appendChild(el("a", "Its replay", { href: PREFIX + "/replay.html?game=" + encodeURIComponent(id) }));
        note.appendChild(document.createTextNode(" is public once every rotation of its deal is played."));
        source.close();
        document.body.dataset.done = "1";
      }
      app.insertBefore(note, app.firstChild);
    });
  }

  /* A signed-in author's own bots' output in this game ([round, turn, seat, text] rows, from
   * PREFIX/me/games/ID/output.json, the page's competition's: their seats only), put into the turns it was printed in, where the
   * renderer shows it beside the turn ("Bot logs this turn"). Anything else: no logs. */
  function ownOutput(id, game) {
    if (document.body.dataset.ownOutput !== "1") return Promise.resolve(game);
    return fetch(PREFIX + "/me/games/" + encodeURIComponent(id) + "/output.json", { credentials: "same-origin" })
      .then(function (r) { return r.ok ? r.json() : { logs: [] }; })
      .then(function (own) {
        (own.logs || []).forEach(function (row) {
          var rnd = game.record.rounds.find(function (x) { return x.round === row[0]; });
          var turn = rnd && (rnd.turns || []).find(function (t) { return t.turn === row[1]; });
          if (turn) (turn.logs = turn.logs || []).push([row[2], String(row[3])]);
        });
        return game;
      }, function () { return game; });
  }

  /* The author's analysis of their own seats (PREFIX/me/games/ID/analysis.json), asked for by a button:
   * each card played beside the SDK search's card, the cost, the costliest decision of each seat;
   * each row links to its turn of the replay (#rRtT). Numbers and the seats' names only, as text. */
  function ownAnalysis(id, game) {
    if (document.body.dataset.ownOutput !== "1") return;
    var box = el("section", null, { id: "analysis" });
    var button = el("button", "Analyse my seats", { type: "button", id: "analyse" });
    box.appendChild(el("h2", "Where your bots lost points"));
    box.appendChild(button);
    document.getElementById("app").appendChild(box);
    button.addEventListener("click", function () {
      button.disabled = true;
      button.textContent = "Analysing …";
      fetch(PREFIX + "/me/games/" + encodeURIComponent(id) + "/analysis.json", { credentials: "same-origin" })
        .then(function (r) { return r.json().then(function (d) { return [r.ok, d]; }); })
        .then(function (x) {
          if (!x[0]) throw new Error(x[1].error || "refused");
          var a = x[1];
          button.remove();
          if (!a.seats.length) { box.appendChild(el("p", "None of your bots played this game.", { class: "note" })); return; }
          a.seats.forEach(function (seat) {
            var name = game.entrants[seat] !== undefined ? game.entrants[seat] : "seat " + seat;
            var worst = a.costliest[String(seat)];
            if (worst) box.appendChild(el("p", name + ": the costliest decision was round " + worst[0] + ", turn " + worst[1] +
              ": played " + worst[2] + " where the search would play " + worst[3] + " (" + worst[4] + " bull heads given away, expected).", { class: "costliest", "data-seat": String(seat) }));
            var table = el("table", null, { class: "small analysis", "data-seat": String(seat) });
            var head = el("tr");
            ["Turn", "Played", "Search's card", "Cost"].forEach(function (h) { head.appendChild(el("th", h)); });
            table.appendChild(head);
            a.decisions.filter(function (d) { return d[0] === seat; }).forEach(function (d) {
              var tr = el("tr");
              var cell = el("td");
              cell.appendChild(el("a", d[1] + "." + d[2], { href: "#r" + d[1] + "t" + (d[2] - 1) }));
              tr.appendChild(cell);
              tr.appendChild(el("td", d[3], { class: "num" }));
              tr.appendChild(el("td", d[4], { class: "num" }));
              tr.appendChild(el("td", Number(d[5]).toFixed(2), { class: "num" }));
              table.appendChild(tr);
            });
            box.appendChild(table);
          });
        })
        .catch(function (e) { button.disabled = false; button.textContent = "Analyse my seats"; box.appendChild(el("p", "No analysis: " + e.message, { class: "error" })); });
    });
  }

  function replay() {
    var id = document.body.dataset.game;
    // a competition's replay (/c/NAME/replay.html) reads that competition's /c/NAME/api/games/
    fetch(document.body.dataset.api + encodeURIComponent(id), { credentials: "same-origin" })
      .then(function (r) { return r.json().then(function (d) { return [r.ok, d]; }); })
      .then(function (x) {
        if (!x[0]) throw new Error(x[1].error || "not found");
        return ownOutput(id, x[1]);
      })
      .then(function (game) { window.Take5.renderReplay(game); ownAnalysis(id, game); })
      .catch(function (e) {
        var app = document.getElementById("app");
        app.textContent = "";
        app.appendChild(el("p", "No replay of game " + id + ": " + e.message, { class: "error", id: "error" }));
      });
  }

  function submission() {
    if (document.body.dataset.finished === "1") return;
    var id = document.body.dataset.submission;
    var timer = setInterval(function () {
      fetch("/me/submissions/" + encodeURIComponent(id) + ".json", { credentials: "same-origin" })
        .then(function (r) { return r.json(); })
        .then(function (s) {
          document.getElementById("status").textContent = s.status;
          var progress = document.getElementById("progress");
          if (progress) progress.textContent = s.detail;
          if (s.finished) { clearInterval(timer); window.location.reload(); }
        })
        .catch(function () {});
    }, 1000);
  }

  var PAGES = { standings: standings, live: live, watch: watch, "web-replay": replay, submission: submission };
  function start() {
    var fn = PAGES[document.body.dataset.page];
    if (fn) fn();
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
