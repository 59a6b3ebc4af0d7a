/* take5 arena: the published leaderboard (index.html, bot.html, replay.html, competitions.html).
 *
 * Static pages, no framework, no network: the data comes from JavaScript files that set globals
 * (data/standings.js -> window.TAKE5_STANDINGS; the others add an entry under their own path to
 * window.TAKE5_BOTS, window.TAKE5_PAGES or window.TAKE5_REPLAYS), loaded with <script> tags, also
 * lazily (a page of games, one replay bundle), so that the pages work when opened straight from disk
 * (file://), where the fetch API may not read files. Replays come in bundles of many games, deflated
 * and base64-encoded; DecompressionStream unpacks them. The layout is leaderboard/site_build.py's.
 * Charts are inline SVG. All text from the data goes into the page as text nodes, never as HTML.
 */
(function () {
  "use strict";

  // ---------------------------------------------------------------------------------------------
  // Small helpers

  var SVG_NS = "http://www.w3.org/2000/svg";
  var COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2",
    "#17becf", "#7f7f7f", "#bcbd22", "#393b79", "#637939"];
  var MAX_MATRIX = 30;   // bots shown in the LOS matrix and the crosstable
  var MAX_LINES = 12;    // bots drawn in the ratings-over-time chart of the front page

  function el(tag, attrs) {
    var node = document.createElement(tag);
    setAttrs(node, attrs);
    for (var i = 2; i < arguments.length; i++) append(node, arguments[i]);
    return node;
  }

  function svg(tag, attrs) {
    var node = document.createElementNS(SVG_NS, tag);
    setAttrs(node, attrs);
    for (var i = 2; i < arguments.length; i++) append(node, arguments[i]);
    return node;
  }

  function setAttrs(node, attrs) {
    if (!attrs) return;
    Object.keys(attrs).forEach(function (key) {
      var value = attrs[key];
      if (value === null || value === undefined || value === false) return;
      if (key === "text") node.textContent = String(value);
      else if (key === "onclick") node.addEventListener("click", value);
      else node.setAttribute(key, String(value));
    });
  }

  /* append(node, child, ...): children may be nodes, text, arrays of them, or null (skipped). */
  function append(node) {
    for (var i = 1; i < arguments.length; i++) {
      var child = arguments[i];
      if (child === null || child === undefined || child === false) continue;
      if (Array.isArray(child)) child.forEach(function (c) { append(node, c); });
      else node.appendChild(typeof child === "object" ? child : document.createTextNode(String(child)));
    }
  }

  /* The file name stem of a bot name or game id: the same as leaderboard.publish.file_key. */
  function fileKey(text) {
    var safe = /[a-z0-9_-]/;
    var bytes = new TextEncoder();
    var key = "";
    for (var ch of String(text)) {
      if (safe.test(ch)) key += ch;
      else bytes.encode(ch).forEach(function (b) { key += "~" + (b < 16 ? "0" : "") + b.toString(16); });
    }
    if (!key) return "~";
    if (key.length > 180) key = key.slice(0, 180) + "~~" + fnv1a(key);
    return key;
  }

  function fnv1a(text) {
    var h = 0x811c9dc5;
    new TextEncoder().encode(text).forEach(function (b) {
      h = Math.imul(h ^ b, 0x01000193) >>> 0;
    });
    return ("0000000" + h.toString(16)).slice(-8);
  }

  var scripts = {};
  function loadScript(src) {
    if (!scripts[src]) {
      scripts[src] = new Promise(function (resolve, reject) {
        var s = document.createElement("script");
        s.src = src;
        s.onload = resolve;
        s.onerror = function () { delete scripts[src]; reject(new Error("could not load " + src)); };
        document.head.appendChild(s);
      });
    }
    return scripts[src];
  }

  /* The data a lazily loaded file put under its own path in window[table]. */
  function loadData(table, path) {
    return loadScript(path).then(function () {
      var t = window[table] || {};
      if (!Object.prototype.hasOwnProperty.call(t, path)) throw new Error("no data in " + path);
      return t[path];
    });
  }

  function pad(n, width) { var t = String(n); while (t.length < width) t = "0" + t; return t; }

  /* Where things live (leaderboard/site_build.py): by game number n, from 0 in publishing order. */
  function layout() { return (window.TAKE5_STANDINGS && window.TAKE5_STANDINGS.layout) || { bundle: 100, folder_files: 1000, page_size: 1000 }; }
  function bundlePath(n) {
    var b = Math.floor(n / layout().bundle);
    return "replays/" + pad(Math.floor(b / layout().folder_files), 3) + "/" + pad(b, 6) + ".js";
  }
  function pagePath(prefix, page) { return prefix + "/" + pad(page, 6) + ".js"; }

  /* base64 of raw deflate -> text, with the browser's own DecompressionStream. */
  function inflate(b64) {
    var bin = atob(b64);
    var bytes = new Uint8Array(bin.length);
    for (var i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("deflate-raw"));
    return new Response(stream).text();
  }

  /* The games of the replay bundle that holds game number n. */
  function loadBundle(n) {
    var path = bundlePath(n);
    return loadData("TAKE5_REPLAYS", path).then(inflate).then(JSON.parse);
  }

  /* Game number of a game id, when a link did not carry it: look through the game list pages,
     newest first (a few hundred kilobytes a page). */
  function findGame(id) {
    var data = window.TAKE5_STANDINGS || {};
    var page = (data.game_pages || 0) - 1;
    function next() {
      if (page < 0) return Promise.resolve(null);
      return loadData("TAKE5_PAGES", pagePath("data/games", page--)).then(function (rows) {
        var hit = rows.find(function (g) { return g.id === id; });
        return hit ? hit.n : next();
      });
    }
    return next();
  }

  function param(name) {
    return new URLSearchParams(window.location.search).get(name);
  }

  /* The one escaper of the site's links: every value (a name, a game id, a number read from a
     published file, all of them hostile) goes through encodeURIComponent; absent ones are left out. */
  function pageHref(page, params) {
    var parts = [];
    Object.keys(params).forEach(function (key) {
      var value = params[key];
      if (value !== undefined && value !== null) parts.push(key + "=" + encodeURIComponent(String(value)));
    });
    return page + (parts.length ? "?" + parts.join("&") : "");
  }
  function botHref(name) { return pageHref("bot.html", { bot: name }); }
  function replayHref(id, n) { return pageHref("replay.html", { game: id, n: n }); }
  function gameName(g) { return g.label || g.id; }

  function fixed(x, digits) { return x === null || x === undefined ? "–" : Number(x).toFixed(digits); }
  function pct(x) { return x === null || x === undefined ? "–" : (100 * x).toFixed(0) + "%"; }
  function wins(x) { return String(Math.round(x * 100) / 100); }

  function bullHeads(card) {
    if (card === 55) return 7;
    if (card % 11 === 0) return 5;
    if (card % 10 === 0) return 3;
    if (card % 5 === 0) return 2;
    return 1;
  }
  function heads(cards) { return cards.reduce(function (s, c) { return s + bullHeads(c); }, 0); }

  function niceTicks(lo, hi, count) {
    if (!(hi > lo)) { lo -= 1; hi += 1; }
    var raw = (hi - lo) / Math.max(1, count);
    var mag = Math.pow(10, Math.floor(Math.log10(raw)));
    var step = [1, 2, 2.5, 5, 10].map(function (m) { return m * mag; })
      .find(function (s) { return s >= raw; }) || 10 * mag;
    var ticks = [];
    for (var t = Math.ceil(lo / step) * step; t <= hi + 1e-9; t += step) ticks.push(Math.round(t * 1e6) / 1e6);
    return ticks;
  }

  function fail(message) {
    var app = document.getElementById("app");
    app.textContent = "";
    append(app, el("p", { class: "error", role: "alert", text: message }));
  }

  function header(title, subtitle, links) {
    return el("header", { class: "top" },
      el("nav", null, links),
      el("h1", { text: title }),
      subtitle ? el("p", { class: "subtitle", text: subtitle }) : null);
  }

  function section(title, id, intro) {
    var s = el("section", { id: id }, el("h2", { text: title }));
    if (intro) append(s, el("p", { class: "note", text: intro }));
    for (var i = 3; i < arguments.length; i++) append(s, arguments[i]);
    return s;
  }

  /* ["timeout", "timeout", "crash"] -> "timeout ×2, crash" */
  function countKinds(kinds) {
    if (!kinds || !kinds.length) return "–";
    var counts = {}, order = [];
    kinds.forEach(function (k) { if (!counts[k]) { counts[k] = 0; order.push(k); } counts[k]++; });
    return order.map(function (k) { return counts[k] > 1 ? k + " ×" + counts[k] : k; }).join(", ");
  }

  function faultsText(faults) {
    var kinds = Object.keys(faults || {});
    if (!kinds.length) return "–";
    return kinds.sort().map(function (k) { return k + " " + faults[k]; }).join(", ");
  }

  // ---------------------------------------------------------------------------------------------
  // Charts

  /* The one text form of a rating interval (as standings.md and the terminal print it). */
  function intervalText(r) {
    if (!r.interval) return r.enough_games === false ? "not enough games" : "–";
    return fixed(r.interval[0], 0) + " – " + fixed(r.interval[1], 0) + (r.enough_games === false ? " (not enough games)" : "");
  }

  /* The one text form of a rank range (as standings.md prints it): "3rd-7th", "1st", "–". */
  function ordinal(n) {
    var suffix = n % 100 >= 10 && n % 100 <= 20 ? "th" : ({ 1: "st", 2: "nd", 3: "rd" }[n % 10] || "th");
    return n + suffix;
  }
  function rankRangeText(r) {
    if (!r.rank_range) return "–";
    var best = r.rank_range[0], worst = r.rank_range[1];
    return best === worst ? ordinal(best) : ordinal(best) + "-" + ordinal(worst);
  }

  /* The interval of one bot on a shared axis: a bar from low to high and a dot at the rating. */
  function intervalScale(rows) {
    var lo = Infinity, hi = -Infinity;
    rows.forEach(function (r) {
      var values = r.interval ? [r.interval[0], r.interval[1], r.rating] : [r.rating];
      values.forEach(function (v) { lo = Math.min(lo, v); hi = Math.max(hi, v); });
    });
    if (!isFinite(lo)) { lo = 1400; hi = 1600; }
    var pad = Math.max(10, (hi - lo) * 0.06);
    lo -= pad; hi += pad;
    var width = 240;
    return { lo: lo, hi: hi, width: width, ticks: niceTicks(lo, hi, 5),
      x: function (v) { return 18 + (width - 36) * (v - lo) / (hi - lo); } };
  }

  function intervalAxis(scale) {
    var node = svg("svg", { class: "axis", width: scale.width, height: 22, viewBox: "0 0 " + scale.width + " 22",
      role: "img", "aria-label": "rating axis" });
    scale.ticks.forEach(function (t) {
      var x = scale.x(t);
      append(node, svg("line", { x1: x, x2: x, y1: 16, y2: 22, class: "tick" }));
      append(node, svg("text", { x: x, y: 12, "text-anchor": "middle", text: t }));
    });
    return node;
  }

  function intervalBar(scale, row) {
    var node = svg("svg", { class: "interval", width: scale.width, height: 20, viewBox: "0 0 " + scale.width + " 20",
      role: "img", "aria-label": row.interval
        ? "rating " + row.rating.toFixed(0) + ", 95% interval " + row.interval[0].toFixed(0) + " to " + row.interval[1].toFixed(0)
        : "rating " + row.rating.toFixed(0) });
    scale.ticks.forEach(function (t) {
      var x = scale.x(t);
      append(node, svg("line", { x1: x, x2: x, y1: 0, y2: 20, class: t === 1500 ? "grid base" : "grid" }));
    });
    if (row.interval) {
      var a = scale.x(row.interval[0]), b = scale.x(row.interval[1]);
      append(node, svg("line", { x1: a, x2: b, y1: 10, y2: 10, class: "ci" }));
      append(node, svg("line", { x1: a, x2: a, y1: 5, y2: 15, class: "ci-end" }));
      append(node, svg("line", { x1: b, x2: b, y1: 5, y2: 15, class: "ci-end" }));
    }
    append(node, svg("circle", { cx: scale.x(row.rating), cy: 10, r: 4.5, class: "rating" }));
    return node;
  }

  var chartCount = 0;

  /* A line chart: series = [{name, color, points: [[x, y], ...], strong}] */
  function lineChart(series, opts) {
    var W = opts.width || 820, H = opts.height || 340;
    var m = { l: 56, r: opts.legend ? 170 : 16, t: 12, b: 40 };
    var xs = [], ys = [];
    series.forEach(function (s) { s.points.forEach(function (p) { xs.push(p[0]); ys.push(p[1]); }); });
    var node = svg("svg", { class: "chart", width: W, height: H, viewBox: "0 0 " + W + " " + H, role: "img",
      "aria-label": opts.label || "chart" });
    if (!xs.length) return node;
    var x0 = Math.min.apply(null, xs), x1 = Math.max.apply(null, xs);
    // The whole range: the first games swing ratings wildly, and a chart that cut them off would
    // hide where each bot started.
    var y0 = Math.min.apply(null, ys), y1 = Math.max.apply(null, ys);
    if (x1 === x0) { x0 -= 1; x1 += 1; }
    var pad = Math.max(10, (y1 - y0) * 0.05); y0 -= pad; y1 += pad;
    var X = function (v) { return m.l + (W - m.l - m.r) * (v - x0) / (x1 - x0); };
    var Y = function (v) { return H - m.b - (H - m.t - m.b) * (v - y0) / (y1 - y0); };
    niceTicks(y0, y1, 6).forEach(function (t) {
      append(node, svg("line", { x1: m.l, x2: W - m.r, y1: Y(t), y2: Y(t), class: t === 1500 ? "grid base" : "grid" }));
      append(node, svg("text", { x: m.l - 6, y: Y(t) + 4, "text-anchor": "end", text: t }));
    });
    niceTicks(x0, x1, 8).filter(function (t) { return t === Math.round(t); }).forEach(function (t) {
      append(node, svg("line", { x1: X(t), x2: X(t), y1: H - m.b, y2: H - m.b + 5, class: "tick" }));
      append(node, svg("text", { x: X(t), y: H - m.b + 18, "text-anchor": "middle", text: t }));
    });
    append(node, svg("line", { x1: m.l, x2: W - m.r, y1: H - m.b, y2: H - m.b, class: "axis-line" }));
    append(node, svg("text", { x: (m.l + W - m.r) / 2, y: H - 4, "text-anchor": "middle", class: "label",
      text: opts.xLabel || "" }));
    append(node, svg("text", { x: 12, y: (m.t + H - m.b) / 2, "text-anchor": "middle", class: "label",
      transform: "rotate(-90 12 " + (m.t + H - m.b) / 2 + ")", text: opts.yLabel || "" }));
    var clip = "clip" + (++chartCount);
    append(node, svg("defs", null, svg("clipPath", { id: clip },
      svg("rect", { x: m.l, y: m.t, width: W - m.l - m.r, height: H - m.t - m.b }))));
    series.forEach(function (s, i) {
      var d = s.points.map(function (p, j) { return (j ? "L" : "M") + X(p[0]).toFixed(1) + " " + Y(p[1]).toFixed(1); }).join(" ");
      var line = svg("path", { d: d, class: "series" + (s.strong ? " strong" : ""), stroke: s.color, "data-name": s.name, "clip-path": "url(#" + clip + ")" },
        svg("title", { text: s.name }));
      append(node, line);
      if (s.points.length === 1) {
        append(node, svg("circle", { cx: X(s.points[0][0]), cy: Y(s.points[0][1]), r: 3, fill: s.color }));
      }
      if (opts.legend) {
        var ly = m.t + 14 + 18 * i;
        append(node, svg("line", { x1: W - m.r + 12, x2: W - m.r + 32, y1: ly - 4, y2: ly - 4, stroke: s.color, class: "legend-line" }));
        append(node, svg("text", { x: W - m.r + 38, y: ly, class: "legend", text: s.name.length > 18 ? s.name.slice(0, 17) + "…" : s.name }));
      }
    });
    return node;
  }

  function overTimeSeries(data, names, strong) {
    var points = (data.over_time && data.over_time.points) || [];
    return names.map(function (name, i) {
      return {
        name: name,
        color: COLORS[i % COLORS.length],
        strong: strong === name,
        points: points.filter(function (p) { return p.ratings[name] !== undefined; })
          .map(function (p) { return [p.games, p.ratings[name]]; })
      };
    });
  }

  /* Heat colour of a share between 0 (red) and 1 (green). */
  function heat(p) {
    var hue = 120 * p;
    var light = 94 - 40 * Math.abs(p - 0.5);
    return "hsl(" + hue.toFixed(0) + ", 65%, " + light.toFixed(0) + "%)";
  }

  /* The crosstable of standings.json, square or sparse (docs/standings-format.md): meetings(i, j),
     score(i, j) (null when they never met) and the opponents of i, either way. */
  function headToHead(ct) {
    var n = ct.entrants.length, met = null;
    function pairsOf(i) {
      if (!met) {
        met = ct.entrants.map(function () { return {}; });
        ct.pairs.forEach(function (p) {
          met[p[0]][p[1]] = [p[2], p[3]];
          met[p[1]][p[0]] = [p[2], 1 - p[3]];
        });
      }
      return met[i];
    }
    if (!ct.pairs) {
      return {
        meetings: function (i, j) { return ct.meetings[i][j]; },
        score: function (i, j) { return ct.score[i][j]; },
        opponents: function (i) {
          var out = [];
          for (var j = 0; j < n; j++) if (j !== i && ct.meetings[i][j] > 0) out.push(j);
          return out;
        }
      };
    }
    return {
      meetings: function (i, j) { var p = pairsOf(i)[j]; return p ? p[0] : 0; },
      score: function (i, j) { var p = pairsOf(i)[j]; return p ? p[1] : null; },
      opponents: function (i) {
        return Object.keys(pairsOf(i)).map(Number).sort(function (a, b) { return a - b; });
      }
    };
  }

  function matrixTable(id, names, value, title, caption) {
    var shown = names.slice(0, MAX_MATRIX);
    var head = el("tr", null, el("th", { scope: "col", text: "" }),
      shown.map(function (n) { return el("th", { scope: "col", class: "col-name", title: n }, el("a", { href: botHref(n), text: n })); }));
    var body = shown.map(function (n, i) {
      return el("tr", null,
        el("th", { scope: "row", class: "row-name", title: n }, el("a", { href: botHref(n), text: n })),
        shown.map(function (m, j) {
          var v = value(i, j);
          if (i === j) return el("td", { class: "self", text: "" });
          if (v === null || v === undefined) return el("td", { class: "none", text: "·", title: "not comparable / never met" });
          return el("td", { style: "background:" + heat(v), title: title(i, j, v), "data-value": v.toFixed(4), text: pct(v) });
        }));
    });
    var note = names.length > MAX_MATRIX ? el("p", { class: "note", text: "Showing the top " + MAX_MATRIX + " of " + names.length + " bots; standings.json has the full matrix." }) : null;
    return [el("div", { class: "scroll" }, el("table", { id: id, class: "matrix" }, el("caption", { text: caption }), el("thead", null, head), el("tbody", null, body))), note];
  }

  /* Games as a table; on a bot page (own = true) each game's g.seat is that bot's seat. */
  function gamesTable(games, own, id) {
    var rows = games.map(function (g) {
      var bySeat = g.entrants.map(function (name, s) { return s; });
      if (g.places) bySeat.sort(function (a, b) { return g.places[a] - g.places[b] || a - b; });
      var seats = bySeat.map(function (s) {
        var name = g.entrants[s];
        var me = own && s === g.seat;
        return el("li", { class: me ? "me" : null },
          g.places ? el("span", { class: "place", text: g.places[s] + "." }) : null, " ",
          me ? el("strong", { text: name }) : el("a", { href: botHref(name), text: name }),
          g.penalties ? el("span", { class: "pen", text: " " + g.penalties[s] }) : null);
      });
      var cells = [
        el("td", null, el("a", { href: replayHref(g.id, g.n), title: "game " + g.id, text: gameName(g) }),
          g.unrated ? el("span", { class: "unrated", title: g.unrated, text: " not rated" }) : null),
        el("td", { class: "num", text: g.n + 1 })
      ];
      if (own) {
        cells.push(el("td", { class: "num", text: g.place }));
        cells.push(el("td", { class: "num", text: g.penalty }));
        cells.push(el("td", { class: "faults", text: countKinds(g.faults) }));
      }
      cells.push(el("td", null, el("ol", { class: "seats" }, seats)));
      return el("tr", { "data-game": g.id }, cells);
    });
    var head = ["Game", "No."];
    if (own) head = head.concat(["Place", "Penalty", "Faults"]);
    head.push("Table (place. bot penalty)");
    return el("table", { id: id, class: "games" },
      el("thead", null, el("tr", null, head.map(function (h) { return el("th", { scope: "col", text: h }); }))),
      el("tbody", null, rows));
  }

  /* A list of games, newest first, a page at a time: the pages are files under `prefix`, loaded when
     shown. Returns the node and a promise of the first page shown. */
  function gamePager(id, prefix, pages, own) {
    var holder = el("div", { class: "scroll" });
    var label = el("span", { class: "page-label", id: id + "-page" });
    var page = pages - 1;
    var newer = el("button", { type: "button", id: id + "-newer", text: "◀ newer" });
    var older = el("button", { type: "button", id: id + "-older", text: "older ▶" });
    function show(p) {
      page = p;
      newer.disabled = older.disabled = true;
      return loadData("TAKE5_PAGES", pagePath(prefix, p)).then(function (rows) {
        holder.textContent = "";
        append(holder, gamesTable(rows.slice().reverse(), own, id));
        label.textContent = "page " + (pages - p) + " of " + pages;
        label.dataset.page = String(p);
        newer.disabled = p >= pages - 1;
        older.disabled = p <= 0;
      }, function (error) {
        holder.textContent = "";
        append(holder, el("p", { class: "error", text: error.message }));
      });
    }
    newer.addEventListener("click", function () { show(page + 1); });
    older.addEventListener("click", function () { show(page - 1); });
    var node = el("div", { class: "pager" }, pages > 1 ? el("div", { class: "controls" }, newer, label, older) : null, holder);
    return { node: node, ready: pages > 0 ? show(pages - 1) : Promise.resolve() };
  }

  var SETTING_NAMES = { players: "Players per table", variant: "Variant", threshold: "Game ends at", end_rule: "End rule",
    timeout: "Time per move (s)", time_control: "Time control (bank+increment, s)", time_cap: "Most per move (s)",
    clock: "Clock", start_timeout: "Start-up time (s)", max_faults: "Faults before forfeit",
    duplicate: "Duplicate deals", games: "Games scheduled", sandbox: "Sandbox" };

  function settingsList(settings) {
    var keys = Object.keys(settings || {});
    if (!keys.length) return null;
    return el("dl", { id: "settings", class: "facts" }, keys.map(function (k) {
      var v = settings[k];
      if (v === true) v = "yes"; else if (v === false) v = "no"; else if (v === null) v = "–";
      else if (typeof v === "object") v = JSON.stringify(v);
      return el("div", { "data-key": k }, el("dt", { text: SETTING_NAMES[k] || k }), el("dd", { text: v }));
    }));
  }

  function dealKeys(deals) {
    if (!deals || !deals.length) return null;
    return el("dl", { id: "deals", class: "facts" }, deals.map(function (d) {
      return el("div", { "data-season": String(d.season) },
        el("dt", { text: "Season " + d.season }),
        el("dd", null, el("span", { text: "commitment (SHA-256 of the key) " }), el("code", { text: String(d.commitment) }),
          d.key ? [el("br"), el("span", { text: "key (revealed) " }), el("code", { text: String(d.key) })]
                : el("span", { text: " · key still secret" })));
    }));
  }

  function methodNotes(data) {
    var m = data.method || {};
    var items = [
      ["Rating", m.rating], ["95% interval", m.interval], ["Likelihood of superiority (LOS)", m.los],
      ["Online Elo", m.online_elo]
    ].filter(function (x) { return x[1]; });
    return el("dl", { class: "method" }, items.map(function (x) {
      return [el("dt", { text: x[0] }), el("dd", { text: x[1] })];
    }), el("dt", { text: "Wins" }), el("dd", { text: "A first place shared by k bots counts 1/k of a win." }));
  }

  function footer() {
    return el("footer", null, "Published by take5 arena · ",
      el("a", { href: "standings.json", text: "standings.json" }), " · ",
      el("a", { href: "standings.md", text: "standings.md" }));
  }

  // ---------------------------------------------------------------------------------------------
  // competitions.html: the Swisses and knockouts of competitions.json, stage by stage, table by
  // table, each game's places once the site rates it and a link to its replay. Every value is
  // the data's, shown as text (String()): a hostile name stays a name.

  function placesText(seats, places) {
    if (!Array.isArray(places)) return "";
    return places.map(function (p, s) { return String(p) + ". " + String(seats[s]); })
      .sort(function (a, b) { return parseInt(a, 10) - parseInt(b, 10); }).join(" · ");
  }

  function stageTable(stage, results) {
    var tables = {}, order = [];
    (Array.isArray(stage.games) ? stage.games : []).forEach(function (g) {
      var t = Number(g && g.table);
      if (!(t in tables)) { tables[t] = []; order.push(t); }
      tables[t].push(g);
    });
    order.sort(function (a, b) { return a - b; });
    var rows = order.map(function (t) {
      var games = tables[t];
      var seats = (Array.isArray(games[0].seats) ? games[0].seats : []).map(String);
      return el("tr", null,
        el("td", { class: "num", text: String(t + 1) }),
        el("td", { text: seats.join(", ") }),
        el("td", null, games.map(function (g, j) {
          var gid = String(g.game), r = Object.prototype.hasOwnProperty.call(results, gid) ? results[gid] : null;
          var gseats = (Array.isArray(g.seats) ? g.seats : []).map(String);
          return [j ? el("br") : null, el("a", { href: replayHref(gid, r && typeof r.n === "number" ? r.n : null), title: "game " + gid, text: gid }), " ",
            el("span", { class: r ? "places" : "note", text: r ? placesText(gseats, r.places) : "no result published yet" })];
        })));
    });
    return el("table", { class: "competition-stage" },
      el("thead", null, el("tr", null, el("th", { scope: "col", text: "Table" }), el("th", { scope: "col", text: "Seats" }), el("th", { scope: "col", text: "Games (places)" }))),
      el("tbody", null, rows));
  }

  function renderCompetitions(data, comps) {
    document.title = "Competitions · " + (data.title || "");
    var app = document.getElementById("app");
    app.textContent = "";
    append(app, header("Competitions", data.title || "", [el("a", { href: "index.html", text: "← standings" }), " ", el("a", { href: "competitions.json", text: "competitions.json" })]));
    var list = comps && Array.isArray(comps.competitions) ? comps.competitions : [];
    var results = comps && comps.results && typeof comps.results === "object" ? comps.results : {};
    if (!list.length) { append(app, el("p", { class: "note", text: "This site has no Swiss or knockout." })); return; }
    append(app, el("p", { class: "note", text: "Every stage is paired by its format from the results before it: " +
      "`referee verify --site DIR` pairs each one again from this site alone (competitions.json and the records)." }));
    list.forEach(function (c, i) {
      var prefix = String(c && c.prefix);
      var fmt = (c && c.settings && c.settings.format) || {};
      var entrants = Array.isArray(c && c.entrants) ? c.entrants.map(String) : [];
      var kind = String(fmt.format || "") === "knockout" ? "Knockout" : "Swiss";
      var stages = Array.isArray(c && c.stages) ? c.stages : [];
      var s = section(kind + " " + prefix, "competition-" + i,
        entrants.length + " entrants, tables of " + String(fmt.table_size || "?") + ", " + stages.length +
        " stage" + (stages.length === 1 ? "" : "s") + (c && c.created_at ? ", begun " + String(c.created_at) : ""));
      append(s, el("p", { class: "entrants", text: "Entrants: " + entrants.join(", ") }));
      stages.forEach(function (stage, n) {
        append(s, el("h3", { text: "Stage " + (n + 1) + " · " + String(stage && stage.schedule) }), stageTable(stage || {}, results));
      });
      append(app, s);
    });
  }

  // ---------------------------------------------------------------------------------------------
  // index.html

  function renderIndex(data) {
    document.title = data.title || "Standings";
    var app = document.getElementById("app");
    app.textContent = "";
    var rows = data.rows || [];
    var multi = new Set(rows.map(function (r) { return r.component; })).size > 1;
    var subtitle = data.games + " rated games · " + rows.length + " bots" + (data.generated_at ? " · published " + data.generated_at : "");
    append(app, header(data.title || "Standings", subtitle, [el("a", { href: "standings.json", text: "standings.json" }), " ", el("a", { href: "standings.md", text: "standings.md" }),
      data.competitions ? [" ", el("a", { id: "competitions-link", href: "competitions.html", text: "competitions (" + Number(data.competitions) + ")" })] : null]));
    var settings = settingsList(data.settings);
    if (settings) append(app, section("Tournament settings", "settings-section", null, settings));
    if (data.same_author && data.same_author.games) {
      var shared = Object.keys(data.same_author.authors || {}).map(function (a) { return a + " " + data.same_author.authors[a]; });
      append(app, el("p", { id: "same-author", class: "note", text: data.same_author.games +
        " games seated two bots of one author at a table (the schedule did not keep them apart: too few authors in the pool, or the rule off): " + shared.join(", ") }));
    }
    var deals = dealKeys(data.deals);
    if (deals) append(app, section("Deal keys", "deals-section",
      "Deals come from a secret key; its SHA-256 is published from the start, the key when the season is over. " +
      "`referee verify --site` then checks every seed against it.", deals));

    var scale = intervalScale(rows);
    var los = data.los ? data.los.matrix : null;
    // who submitted each version, as its newest record names it (the seat's "owner"; none: not known)
    function ownerOf(entrant) {
      var info = (data.bots || {})[entrant];
      return info && typeof info.owner === "string" ? info.owner : "";
    }
    var head = el("tr", null,
      ["#", "Bot", "Rating", "95% interval"].map(function (h) { return el("th", { scope: "col", text: h }); }),
      el("th", { scope: "col", class: "interval-head" }, intervalAxis(scale)),
      ["Rank range", "LOS next", "Games", "Wins", "Win %", "Mean penalty", "Mean place", "Faults", "Online Elo"].map(function (h) {
        return el("th", { scope: "col", text: h });
      }));
    var body = rows.map(function (r, i) {
      // the LOS over the next bot down; above 1,000 bots there is no matrix, only this
      var next = los && i + 1 < rows.length ? los[i][i + 1] : (r.los_next === undefined ? null : r.los_next);
      return el("tr", { "data-entrant": r.entrant, "data-rank": r.rank },
        el("td", { class: "num", text: r.rank }),
        el("td", { class: "name" }, el("a", { href: botHref(r.entrant), text: r.entrant }),
          ownerOf(r.entrant) ? el("span", { class: "owner", title: "the author who submitted this version", text: " by " + ownerOf(r.entrant) }) : null,
          multi ? el("span", { class: "pool", text: " pool " + (r.component + 1) }) : null),
        el("td", { class: "num rating", text: fixed(r.rating, 0) }),
        el("td", { class: "num ci-text", text: intervalText(r) }),
        el("td", { class: "interval-cell" }, intervalBar(scale, r)),
        el("td", { class: "num rank-range", text: rankRangeText(r),
          title: r.rank_range ? "the places the 95% LOS leave open to " + r.entrant : null }),
        el("td", { class: "num", text: pct(next), title: next === null ? null : "chance that " + r.entrant + " is stronger than " + rows[i + 1].entrant }),
        el("td", { class: "num", text: r.games }),
        el("td", { class: "num", text: wins(r.wins) }),
        el("td", { class: "num", text: r.games ? fixed(100 * r.wins / r.games, 1) : "–" }),
        el("td", { class: "num", text: fixed(r.mean_penalty, 1) }),
        el("td", { class: "num", text: fixed(r.mean_place, 2) }),
        el("td", { class: "faults", text: faultsText(r.faults) }),
        el("td", { class: "num", text: fixed(r.online_elo, 0) }));
    });
    append(app, section("Standings", "standings-section",
      "Rating on the Elo scale (pool mean 1500); the bar is the 95% interval, the dot the rating" +
      (data.method && data.method.interval ? " (" + data.method.interval + ")." : ".") +
      (rows.some(function (r) { return r.enough_games === false; })
        ? " A bot marked \u201cnot enough games\u201d has no result against another bot yet (or the tournament none to measure its design effect with): it has no interval, and no order is claimed for it." : "") +
      " The rank range is the places within its pool that the 95% LOS leave open to the bot." +
      (multi ? " Bots of different pools never met, directly or through others: their ratings are not comparable." : ""),
      el("div", { class: "scroll" }, el("table", { id: "standings", class: "standings" }, el("thead", null, head), el("tbody", null, body)))));

    var names = rows.map(function (r) { return r.entrant; });
    if (los) {
      append(app, section("Who is stronger", "los-section",
        "Likelihood of superiority: the chance that the bot of the row is stronger than the bot of the column.",
        matrixTable("los", names, function (i, j) { return los[i][j]; },
          function (i, j, v) { return names[i] + " stronger than " + names[j] + ": " + (100 * v).toFixed(1) + "%"; },
          "row bot stronger than column bot")));
    }
    var ct = data.crosstable;
    if (ct && ct.entrants.length) {
      var h2h = headToHead(ct);
      append(app, section("Head to head", "crosstable-section",
        "Share of the pairwise points the bot of the row took from the bot of the column (finishing ahead = 1, level = ½), over the games both played.",
        matrixTable("crosstable", ct.entrants, h2h.score,
          function (i, j, v) { return ct.entrants[i] + " vs " + ct.entrants[j] + ": " + (100 * v).toFixed(1) + "% of " + h2h.meetings(i, j) + " meetings"; },
          "row bot's score against column bot")));
    }
    if (data.over_time && data.over_time.points.length) {
      var top = names.slice(0, MAX_LINES);
      append(app, section("Ratings over time", "over-time-section",
        "The rating each bot would have had after the first N games (refitted on every prefix)." +
        (names.length > MAX_LINES ? " Top " + MAX_LINES + " bots shown." : ""),
        el("div", { class: "scroll" }, lineChart(overTimeSeries(data, top), { legend: true, xLabel: "games played", yLabel: "rating", label: "ratings over time" }))));
    }
    if (data.recent_games && data.recent_games.length && (data.game_pages || 0) > 1) {
      append(app, section("Recent games", "recent-section", "Newest first; open a game to step through it.",
        el("div", { class: "scroll" }, gamesTable(data.recent_games, false, "recent"))));
    }
    var pager = gamePager("all-games", "data/games", data.game_pages || 0, false);
    append(app, section("All games", "all-games-section",
      (data.game_count || 0) + " games, newest first" + ((data.game_pages || 0) > 1 ? ", " + data.page_size + " a page." : "."), pager.node));
    var unrated = data.unrated || { count: 0, games: [] };
    if (unrated.count) {
      append(app, section("Games not rated", "unrated-section",
        unrated.count + " game(s) have a record but are not rated" + (unrated.count > unrated.games.length ? " (the first " + unrated.games.length + " listed)" : "") + ".",
        el("ul", { id: "unrated" }, unrated.games.map(function (g) {
          return el("li", null, el("a", { href: replayHref(g.id, g.n), text: g.id }), ": " + g.reason);
        }))));
    }
    append(app, section("How to read this", "method-section", null, methodNotes(data)));
    append(app, footer());
    return pager.ready;
  }

  // ---------------------------------------------------------------------------------------------
  // bot.html

  function renderBot(data, bot, name) {
    var rows = data.rows || [];
    var i = rows.findIndex(function (r) { return r.entrant === name; });
    var r = rows[i];
    document.title = name + " – " + (data.title || "Standings");
    var app = document.getElementById("app");
    app.textContent = "";
    append(app, header(name, r ? "Rank " + r.rank + " of " + rows.length + " · " + (data.title || "") : "", [el("a", { href: "index.html", text: "← standings" })]));
    if (!r) { append(app, el("p", { class: "error", text: "No bot named " + name + " in these standings." })); return; }

    var facts = [
      ["Rating", fixed(r.rating, 0)],
      ["95% interval", intervalText(r)],
      ["Rank range", rankRangeText(r)],
      ["Games", r.games], ["Wins", wins(r.wins) + (r.outright_wins !== r.wins ? " (" + r.outright_wins + " outright)" : "")],
      ["Win %", r.games ? fixed(100 * r.wins / r.games, 1) : "–"],
      ["Mean penalty", fixed(r.mean_penalty, 1)], ["Mean place", fixed(r.mean_place, 2)],
      ["Online Elo", fixed(r.online_elo, 0)]
    ];
    append(app, el("dl", { id: "bot-facts", class: "facts" }, facts.map(function (f) {
      return el("div", null, el("dt", { text: f[0] }), el("dd", { text: f[1] }));
    })));
    var info = bot.info || (data.bots || {})[name] || {};
    // "owner" is the organiser's word (the arena's account that submitted it); the rest is what the
    // bot said of itself, which a bot may make up ("author" included)
    var INFO_NAMES = [["owner", "Author"], ["bot_name", "Calls itself"], ["version", "Version"],
      ["author", "Says its author is"], ["sdk", "SDK"], ["protocol_version", "Protocol"], ["kind", "Kind"],
      ["digest", "Image / source digest"]];
    var shown = INFO_NAMES.filter(function (x) { return info[x[0]] !== undefined; });
    append(app, section("Bot", "info-section", shown.length ? "From its newest game: the author as the organiser knows it, the rest from the bot's own handshake." : "No handshake information recorded.",
      shown.length ? el("dl", { id: "bot-info", class: "facts" }, shown.map(function (x) {
        return el("div", { "data-key": x[0] }, el("dt", { text: x[1] }), el("dd", { text: info[x[0]] }));
      })) : null));

    if (data.over_time && data.over_time.points.length) {
      var series = overTimeSeries(data, [name], name);
      series[0].color = COLORS[0];
      append(app, section("Rating over time", "bot-over-time", null,
        el("div", { class: "scroll" }, lineChart(series, { width: 720, height: 260, xLabel: "games played (all bots)", yLabel: "rating", label: "rating of " + name + " over time" }))));
    }

    // faults
    var kinds = Object.keys(r.faults || {}).sort();
    var faultSection = section("Faults", "faults-section",
      kinds.length ? "Faults by kind; each got the referee's default move (docs/faults.md)." : "No faults.");
    if (kinds.length) {
      append(faultSection, el("table", { id: "fault-kinds", class: "small" },
        el("thead", null, el("tr", null, el("th", { text: "Kind" }), el("th", { text: "Count" }))),
        el("tbody", null, kinds.map(function (k) { return el("tr", null, el("td", { text: k }), el("td", { class: "num", text: r.faults[k] })); }))));
      var log = bot.faults || [];
      if (log.length) {
        append(faultSection, el("table", { id: "fault-log", class: "small" },
          el("thead", null, el("tr", null, ["Game", "Round", "Turn", "Kind", "Detail"].map(function (h) { return el("th", { text: h }); }))),
          el("tbody", null, log.map(function (f) {
            return el("tr", null, el("td", null, el("a", { href: replayHref(f.game, f.n), text: f.label || f.game })),
              el("td", { class: "num", text: f.round === null ? "–" : f.round }),
              el("td", { class: "num", text: f.turn === null ? "–" : f.turn }),
              el("td", { text: f.kind }), el("td", { class: "detail", text: f.detail || "" }));
          }))));
        if ((bot.fault_total || 0) > log.length) append(faultSection, el("p", { class: "note", text: "The newest " + log.length + " of " + bot.fault_total + " faults." }));
      }
    }
    append(app, faultSection);

    // head to head
    var ct = data.crosstable, los = data.los ? data.los.matrix : null;
    if (ct) {
      var ci = ct.entrants.indexOf(name), h2h = headToHead(ct);
      var opponents = ci < 0 ? [] : h2h.opponents(ci);
      append(app, section("Head to head", "h2h-section", "Pairwise results against each opponent, and the chance of being the stronger bot.",
        el("table", { id: "h2h", class: "small" },
          el("thead", null, el("tr", null, ["Opponent", "Rating", "Meetings", "Score", "LOS"].map(function (h) { return el("th", { text: h }); }))),
          el("tbody", null, opponents.map(function (j) {
            var oi = rows.findIndex(function (x) { return x.entrant === ct.entrants[j]; });
            var l = los ? los[i][oi] : null;
            var sc = h2h.score(ci, j);
            return el("tr", null, el("td", null, el("a", { href: botHref(ct.entrants[j]), text: ct.entrants[j] })),
              el("td", { class: "num", text: fixed(rows[oi].rating, 0) }),
              el("td", { class: "num", text: h2h.meetings(ci, j) }),
              el("td", { class: "num", style: sc === null ? null : "background:" + heat(sc), text: pct(sc) }),
              el("td", { class: "num", style: l === null ? null : "background:" + heat(l), text: pct(l) }));
          })))));
    }

    // games
    var pager = gamePager("games", "data/bots/" + fileKey(name), bot.pages || 0, true);
    append(app, section("Games", "games-section", (bot.games || 0) + " games, newest first" + ((bot.pages || 0) > 1 ? ", " + bot.page_size + " a page." : "."), pager.node));
    append(app, footer());
    return pager.ready;
  }

  // ---------------------------------------------------------------------------------------------
  // replay.html

  function cardNode(card, extra) {
    var h = bullHeads(card);
    return el("span", { class: "card h" + h + (extra ? " " + extra : ""), "data-card": card, title: card + ": " + h + " bull head" + (h > 1 ? "s" : "") },
      el("span", { class: "n", text: card }),
      el("span", { class: "heads", "aria-label": h + " bull head" + (h > 1 ? "s" : "") }, el("span", { class: "bull", text: "♉" }), String(h)));
  }

  /* Every position of the game: the deal of each round (turn 0), then after each turn. */
  function replaySteps(record) {
    var steps = [];
    var before = record.seats.map(function () { return 0; });
    record.rounds.forEach(function (round, ri) {
      var hands = (round.hands || []).map(function (h) { return h.slice(); });
      var points = record.seats.map(function () { return 0; });
      steps.push({ ri: ri, round: round.round, turn: 0, rows: round.rows || [], hands: hands.map(function (h) { return h.slice(); }),
        points: points.slice(), totals: before.slice(), plays: [], takes: [], end: false, logs: [],
        clock: round.draft && Array.isArray(round.draft.clock) ? round.draft.clock : [] });
      (round.turns || []).forEach(function (turn, ti) {
        turn.plays.forEach(function (p) {
          var k = hands[p[0]] ? hands[p[0]].indexOf(p[1]) : -1;
          if (k >= 0) hands[p[0]].splice(k, 1);
        });
        turn.takes.forEach(function (t) { points[t.seat] += heads(t.cards); });
        var last = ti === round.turns.length - 1 && round.scores !== undefined;
        steps.push({ ri: ri, round: round.round, turn: turn.turn, rows: turn.rows, hands: hands.map(function (h) { return h.slice(); }),
          points: points.slice(), totals: before.map(function (b, s) { return b + points[s]; }), plays: turn.plays, takes: turn.takes, end: last,
          logs: Array.isArray(turn.logs) ? turn.logs : [], clock: Array.isArray(turn.clock) ? turn.clock : [] });
      });
      if (round.scores) before = round.scores.slice();
      else before = before.map(function (b, s) { return b + points[s]; });
    });
    return steps;
  }

  /* A record's time control in words (records before time controls have none: ""); `banked` is
     false for a fixed limit per decision, where no bank carries over (take5.clock). */
  function timeControl(record) {
    var tc = record.time_control;
    if (!tc || typeof tc !== "object") return { text: "", banked: false };
    var s = function (ms) { return String(Number(ms) / 1000); };
    var capped = tc.cap_ms !== null && tc.cap_ms !== undefined;
    var fixed = capped && Math.max(tc.bank_ms, tc.cap_ms - tc.increment_ms) === 0;
    var text = fixed ? s(tc.increment_ms) + " s per decision"
      : s(tc.bank_ms) + "+" + s(tc.increment_ms) + (capped ? " (at most " + s(tc.cap_ms) + " s a decision)" : "");
    return { text: text + ", " + tc.clock + " clock", banked: !fixed };
  }

  /* One seat's decisions of a step: their times, and the bank after the last. */
  function timesText(clock, seat, banked) {
    var mine = clock.filter(function (e) { return Array.isArray(e) && e.length === 3 && e[0] === seat; });
    if (!mine.length) return "–";
    var last = mine[mine.length - 1];
    return mine.map(function (e) { return Number(e[1]) + " ms"; }).join(" + ") +
      (banked ? " · bank " + (Number(last[2]) / 1000).toFixed(2) + " s" : "");
  }

  /* The replay of one game. opts.follow (a game watched as it is played, `referee serve --web`):
   * the record grows between calls; a viewer at the newest position stays at the newest, one who
   * stepped back stays where they are. The page's key handlers are installed once. */
  var replayKeys = null, replayHash = null, replayAt = null;
  function renderReplay(game, opts) {
    var follow = !!(opts && opts.follow);
    var record = game.record;
    /* A game watched while it is played is not complete yet, and says so: in progress, not cut off. */
    var live = follow && !game.done && !record.complete;
    var names = game.entrants && game.entrants.length ? game.entrants : record.seats.map(function (s) { return s.name; });
    var n = names.length;
    var steps = replaySteps(record);
    var settings = record.settings || {};
    var title = game.label ? game.label.charAt(0).toUpperCase() + game.label.slice(1) : "Game " + game.id;
    document.title = title;
    var app = document.getElementById("app");
    app.textContent = "";
    var subtitle = n + " players · " + (settings.variant || "standard") + " · ends " + (settings.end_rule || "at-or-above") + " " + settings.threshold +
      " · seed " + (game.seed || record.seed) + " · rotation " + record.rotation + (record.complete ? "" : live ? " · in progress" : " · INCOMPLETE");
    var tc = timeControl(record);
    if (tc.text) subtitle += " · time " + tc.text;
    if (game.label) subtitle = "game " + game.id + " · " + subtitle;
    append(app, header(title, subtitle, [el("a", { href: "index.html", text: "← standings" })]));

    var label = el("span", { id: "step-label", "aria-live": "polite" });
    var range = el("input", { id: "step-range", type: "range", min: 0, max: steps.length - 1, value: 0, "aria-label": "position in the game" });
    function button(id, text, title, fn) { return el("button", { type: "button", id: id, title: title, text: text, onclick: fn }); }
    var cur = 0;
    var controls = el("div", { class: "controls" },
      button("first", "|◀", "start (Home)", function () { go(0); }),
      button("prev-round", "« round", "previous round (Page Up)", function () { go(roundStart(cur, -1)); }),
      button("prev", "◀ prev", "previous turn (←)", function () { go(cur - 1); }),
      button("next", "next ▶", "next turn (→)", function () { go(cur + 1); }),
      button("next-round", "round »", "next round (Page Down)", function () { go(roundStart(cur, +1)); }),
      button("last", "▶|", "end (End)", function () { go(steps.length - 1); }),
      range, label);
    var rowsBox = el("div", { id: "rows", class: "rows" });
    var playsBox = el("div", { id: "plays" });
    var takesBox = el("div", { id: "takes" });
    var banner = el("div", { id: "banner", class: "banner", hidden: "hidden" });
    var scoreBody = el("tbody");
    var hasTimes = steps.some(function (st) { return st.clock.length; });
    var columns = ["Seat", "Bot", "Hand", "This round", "Total"].concat(hasTimes ? [tc.banked ? "Time (bank after)" : "Time"] : []);
    var scores = el("table", { id: "scores", class: "scores" },
      el("thead", null, el("tr", null, columns.map(function (h) { return el("th", { scope: "col", text: h }); }))),
      scoreBody);
    var draftBox = el("div", { id: "draft" });
    var logsBox = el("div", { id: "logs", class: "logs" });
    var hasLogs = steps.some(function (st) { return st.logs.length; });
    append(app, controls,
      el("div", { class: "board" },
        el("div", { class: "left" }, el("h2", { text: "Rows" }), rowsBox, banner),
        el("div", { class: "right" }, el("h2", { text: "Cards revealed" }), playsBox, el("h2", { text: "Rows taken" }), takesBox)),
      hasLogs ? [el("h2", { text: "Bot logs this turn" }), logsBox] : null,
      el("h2", { text: "Players" }), el("div", { class: "scroll" }, scores), draftBox);

    var seatRows = names.map(function (name, s) {
      var tr = el("tr", { "data-seat": s },
        el("td", { class: "num", text: s }),
        el("td", { class: "name" }, el("a", { href: botHref(name), text: name })),
        el("td", { class: "hand" }), el("td", { class: "num round-points" }), el("td", { class: "num total" }),
        hasTimes ? el("td", { class: "num time" }) : null);
      append(scoreBody, tr);
      return tr;
    });

    function roundStart(from, dir) {
      var ri = steps[from].ri + dir;
      if (dir < 0 && steps[from].turn > 0) ri = steps[from].ri;
      for (var k = 0; k < steps.length; k++) if (steps[k].ri === ri && steps[k].turn === 0) return k;
      return dir < 0 ? 0 : steps.length - 1;
    }

    function go(k) {
      cur = Math.max(0, Math.min(steps.length - 1, k));
      draw();
    }

    function draw() {
      var st = steps[cur];
      var round = record.rounds[st.ri];
      var turns = (round.turns || []).length;
      label.textContent = "Round " + st.round + " · " + (st.turn === 0 ? "deal" : "turn " + st.turn + " of " + turns) + " · step " + (cur + 1) + "/" + steps.length;
      range.value = cur;
      label.dataset.round = st.round;
      label.dataset.turn = st.turn;
      document.getElementById("first").disabled = cur === 0;
      document.getElementById("prev").disabled = cur === 0;
      document.getElementById("next").disabled = cur === steps.length - 1;
      document.getElementById("last").disabled = cur === steps.length - 1;
      if (history.replaceState) history.replaceState(null, "", "#r" + st.round + "t" + st.turn);

      var placedNow = {};
      st.plays.forEach(function (p) { placedNow[p[1]] = p[0]; });
      var takenBy = {};
      st.takes.forEach(function (t) { takenBy[t.row] = t; });
      rowsBox.textContent = "";
      st.rows.forEach(function (row, i) {
        var slots = [];
        for (var c = 0; c < 6; c++) {
          var card = row[c];
          if (card === undefined) slots.push(el("span", { class: "slot" + (c === 5 ? " sixth" : "") }));
          else slots.push(cardNode(card, placedNow[card] !== undefined ? "new" : ""));
        }
        var t = takenBy[i];
        append(rowsBox, el("div", { class: "row", "data-row": i },
          el("span", { class: "row-label", text: "Row " + (i + 1) }), slots,
          el("span", { class: "row-heads", title: "bull heads in this row" }, el("span", { class: "bull", text: "♉" }), " " + heads(row)),
          t ? el("span", { class: "took", text: "← " + names[t.seat] + " took " + heads(t.cards) }) : null));
      });

      playsBox.textContent = "";
      if (!st.plays.length) append(playsBox, el("p", { class: "note", text: st.turn === 0 ? "New deal: 10 cards each; the rows start with one card." : "" }));
      else {
        var order = st.plays.slice().sort(function (a, b) { return a[1] - b[1]; });
        append(playsBox, el("ol", { class: "plays" }, order.map(function (p) {
          return el("li", { "data-seat": p[0] }, cardNode(p[1]), " ", el("span", { text: names[p[0]] }));
        })));
        append(playsBox, el("p", { class: "note", text: "placed lowest first" }));
      }
      takesBox.textContent = "";
      if (!st.takes.length) append(takesBox, el("p", { class: "note", text: st.turn === 0 ? "–" : "nobody took a row" }));
      st.takes.forEach(function (t) {
        append(takesBox, el("div", { class: "take", "data-seat": t.seat },
          el("strong", { text: names[t.seat] }),
          " took row " + (t.row + 1) + " with " + t.card + (t.reason === "low-card" ? " (lower than every row: chose it)" : " (sixth card)") + ": ",
          t.cards.map(function (c) { return cardNode(c, "small"); }),
          el("span", { class: "pts", text: " = " + heads(t.cards) + " bull heads" })));
      });

      seatRows.forEach(function (tr, s) {
        var hand = tr.querySelector(".hand");
        hand.textContent = "";
        append(hand, (st.hands[s] || []).map(function (c) { return cardNode(c, "small"); }));
        tr.querySelector(".round-points").textContent = st.points[s];
        tr.querySelector(".total").textContent = st.totals[s];
        if (hasTimes) tr.querySelector(".time").textContent = timesText(st.clock, s, tc.banked);
        tr.classList.toggle("took-now", st.takes.some(function (t) { return t.seat === s; }));
      });

      var isLast = cur === steps.length - 1;
      var closes = st.end || (isLast && !live);  // a live game's newest turn closes nothing
      banner.hidden = !closes;
      banner.textContent = "";
      if (closes) {
        var recorded = round.scores || st.totals;
        append(banner, el("strong", { text: "End of round " + st.round + ". " }),
          "Scores: " + names.map(function (nm, s) { return nm + " " + recorded[s]; }).join(", ") + ".");
        if (isLast && record.result && !live) {
          var res = record.result;
          append(banner, el("br"), el("strong", { text: record.complete ? "Game over. " : "Game cut off. " }),
            res.standing.map(function (group, p) {
              return (p + 1) + ". " + group.map(function (s) { return names[s] + (res.forfeited && res.forfeited.indexOf(s) >= 0 ? " (forfeited)" : ""); }).join(" = ");
            }).join("  "));
        }
        banner.dataset.round = st.round;
      }

      logsBox.textContent = "";
      if (hasLogs) {
        if (!st.logs.length) append(logsBox, el("p", { class: "note", text: "–" }));
        st.logs.forEach(function (entry) {
          var seat = Array.isArray(entry) ? entry[0] : null;
          append(logsBox, el("div", { class: "log", "data-seat": seat },
            el("strong", { text: (names[seat] !== undefined ? names[seat] : "seat " + seat) + ": " }),
            el("pre", { text: Array.isArray(entry) ? String(entry[1]) : "" })));
        });
      }
      draftBox.textContent = "";
      if (round.draft && st.turn === 0) {
        append(draftBox, el("h2", { text: "Draft" }), el("p", { class: "note", text: "Open draft, first pick: " + names[round.draft.first] }),
          el("ol", { class: "draft" }, round.draft.picks.map(function (p, k) {
            return el("li", { "data-seat": p[0] }, el("span", { class: "pick-no", text: (k + 1) + "." }), cardNode(p[1], "small"), el("span", { text: names[p[0]] }));
          })));
      }
      var faults = [];
      (record.faults || []).forEach(function (list, s) {
        list.forEach(function (f) { if (f.round === st.round && f.turn === st.turn) faults.push([s, f]); });
      });
      if (faults.length) {
        append(takesBox, el("div", { class: "faults" }, faults.map(function (x) {
          return el("p", { class: "fault" }, el("strong", { text: "Fault: " }), names[x[0]] + " – " + x[1].kind + (x[1].detail ? ": " + x[1].detail : ""));
        })));
      }
    }

    range.addEventListener("input", function () { go(Number(range.value)); });
    if (replayKeys) document.removeEventListener("keydown", replayKeys);
    if (replayHash) window.removeEventListener("hashchange", replayHash);
    document.addEventListener("keydown", replayKeys = function (ev) {
      if (ev.target && ev.target.tagName === "INPUT" && ev.target !== range) return;
      var keys = { ArrowRight: cur + 1, ArrowLeft: cur - 1, Home: 0, End: steps.length - 1,
        PageDown: roundStart(cur, +1), PageUp: roundStart(cur, -1) };
      if (keys[ev.key] !== undefined) { ev.preventDefault(); go(keys[ev.key]); }
    });
    /* Deep links: replay.html?game=ID#r2t5 opens round 2 after turn 5 (t0: the deal). */
    function fromHash() {
      var m = /^#r(\d+)t(\d+)$/.exec(window.location.hash);
      if (!m) return -1;
      return steps.findIndex(function (s) { return s.round === Number(m[1]) && s.turn === Number(m[2]); });
    }
    window.addEventListener("hashchange", replayHash = function () {
      var k = fromHash();
      if (k >= 0 && k !== cur) go(k);
    });
    if (follow) {
      cur = replayAt === null || replayAt.atEnd ? steps.length - 1 : Math.min(replayAt.cur, steps.length - 1);
      var draw0 = draw;
      draw = function () { replayAt = { cur: cur, atEnd: cur === steps.length - 1 }; draw0(); };
    } else cur = Math.max(0, fromHash());
    draw();
    document.body.dataset.ready = "1";
  }

  // ---------------------------------------------------------------------------------------------

  function start() {
    var page = document.body.dataset.page;
    if (page !== "replay" && page !== "index" && page !== "bot" && page !== "competitions") return;  // another page's script draws it
    try {
      if (page === "replay") {
        var id = param("game");
        if (!id) return fail("No game given: open replay.html?game=GAME_ID (games are linked from the standings).");
        var n = param("n");
        var where = n !== null && /^[0-9]+$/.test(n) ? Promise.resolve(Number(n)) : findGame(id);
        where.then(function (k) {
          if (k === null) throw new Error("not listed");
          return loadBundle(k);
        }).then(function (bundle) {
          var game = bundle.find(function (g) { return g.id === id; });
          if (!game) throw new Error("not in its bundle");
          renderReplay(game);
        }).catch(function () { fail("No replay of game " + id + " in this site."); });
        return;
      }
      var data = window.TAKE5_STANDINGS;
      if (!data) return fail("data/standings.js is missing: publish the site with `referee publish`.");
      var ready = function () { document.body.dataset.ready = "1"; };
      if (page === "index") { Promise.resolve(renderIndex(data)).then(ready); return; }
      if (page === "competitions") { renderCompetitions(data, window.TAKE5_COMPETITIONS); ready(); return; }
      if (page === "bot") {
        var name = param("bot");
        if (!name) return fail("No bot given: open bot.html?bot=NAME.");
        loadData("TAKE5_BOTS", "data/bots/" + fileKey(name) + ".js").then(function (bot) {
          return renderBot(data, bot, name);
        }, function () {
          return renderBot(data, { games: 0, pages: 0, faults: [] }, name);
        }).then(ready);
      }
    } catch (error) {
      fail("Could not show this page: " + error.message);
      throw error;
    }
  }

  window.Take5 = { fileKey: fileKey, bullHeads: bullHeads, replaySteps: replaySteps, bundlePath: bundlePath, renderReplay: renderReplay, botHref: botHref, replayHref: replayHref };
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
