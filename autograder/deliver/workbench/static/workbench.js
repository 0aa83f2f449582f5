// attnlab workbench: the page's behaviour. Written by hand, without a library, on purpose: the page must work
// offline from one file, no pinned Python package ships a small UI library to inline, and what it does (draw
// tables and a few SVG lines from precomputed numbers, keep a prediction in localStorage) is a few hundred lines
// of plain DOM code. It never computes a result of the lab: every number it shows came from the student's code
// (or the chapter) and is read from the JSON block; it only adds up products to show how a sum is made.
// Every sentence comes from the translated strings in the data (DATA.text, and DATA.counted for a sentence with a
// count); none is written here.
(function () {
  "use strict";
  const DATA = JSON.parse(document.getElementById("wb-data").textContent);
  const TEXT = DATA.text;
  const COUNTED = DATA.counted;  // key -> every form of a sentence with a count, in the catalog's order
  const TOKENS = DATA.tokens;
  const STAGES = DATA.stage_ids;
  const state = {
    tab: "stages", stage: 0, cells: {}, playing: null,
    calibrator: { token: 2, scale: true, mask: false, temperature: 1, predictFirst: true, pending: false, guess: null },
    tracker: { layer: 0, head: 0, pos: TOKENS.length ? 0 : 0 },
    lens: { source: "gpt:0", cell: [0, 0] },
    cache: { step: 0, layer: 0, head: 0 },
  };

  // ---- plural forms: the catalog's own rule ---------------------------------------------------------------
  // The page's counts come from the student's code (the shape their scores returns, the lengths of
  // their cache), so no table of forms made in Python for a list of counts could cover them. The page evaluates instead
  // the catalog's Plural-Forms expression (DATA.plural, the one gettext uses for the kit's Python sentences),
  // read here by a small parser of gettext's C-like grammar: n, whole numbers, ! * / % + - < <= > >= == != && ||
  // ?: and brackets. No eval: the expression becomes a tree of closures. tests/test_workbench_plurals.py holds
  // it to gettext's for every shipped language.
  function pluralRule(expression) {
    const tokens = expression.match(/\d+|n|\|\||&&|==|!=|<=|>=|[<>!?:()*\/%+-]|\S/g) || [];
    let at = 0;
    function peek() { return tokens[at]; }
    function take(token) {
      if (tokens[at] !== token) { throw new Error("expected " + token + " at " + at + " in " + expression); }
      at += 1;
    }
    const ops = {
      "||": function (a, b) { return a || b ? 1 : 0; }, "&&": function (a, b) { return a && b ? 1 : 0; },
      "==": function (a, b) { return a === b ? 1 : 0; }, "!=": function (a, b) { return a !== b ? 1 : 0; },
      "<": function (a, b) { return a < b ? 1 : 0; }, "<=": function (a, b) { return a <= b ? 1 : 0; },
      ">": function (a, b) { return a > b ? 1 : 0; }, ">=": function (a, b) { return a >= b ? 1 : 0; },
      "+": function (a, b) { return a + b; }, "-": function (a, b) { return a - b; },
      "*": function (a, b) { return a * b; }, "/": function (a, b) { return Math.trunc(a / b); },
      "%": function (a, b) { return a % b; },
    };
    const levels = [["||"], ["&&"], ["==", "!="], ["<", "<=", ">", ">="], ["+", "-"], ["*", "/", "%"]];
    function binary(level) {  // left-associative operators of levels[level], and tighter ones below
      if (level === levels.length) { return unary(); }
      let left = binary(level + 1);
      while (levels[level].indexOf(peek()) >= 0) {
        const op = ops[tokens[at++]], a = left, b = binary(level + 1);
        left = function (n) { return op(a(n), b(n)); };
      }
      return left;
    }
    function unary() {
      const token = tokens[at++];
      if (token === "!") { const a = unary(); return function (n) { return a(n) ? 0 : 1; }; }
      if (token === "n") { return function (n) { return n; }; }
      if (token === "(") { const a = ternary(); take(")"); return a; }
      if (/^\d+$/.test(token || "")) { const v = Number(token); return function () { return v; }; }
      throw new Error("unexpected " + token + " in " + expression);
    }
    function ternary() {  // c ? a : b, right-associative, the loosest
      const c = binary(0);
      if (peek() !== "?") { return c; }
      take("?");
      const a = ternary();
      take(":");
      const b = ternary();
      return function (n) { return c(n) ? a(n) : b(n); };
    }
    const rule = ternary();
    if (at !== tokens.length) { throw new Error("unexpected " + peek() + " in " + expression); }
    return rule;
  }
  const PLURAL = (function () {
    try { return pluralRule(DATA.plural.expression); } catch (e) {
      console.error("attnlab workbench: the catalog's plural rule cannot be read: " + e.message);
      return function (n) { return n === 1 ? 0 : 1; };
    }
  })();
  function pluralIndex(count) {  // the form of count: as autograder.i18n.plural_count, a fraction (2.5) asks as 2
    const n = Number.isInteger(count) ? Math.abs(count) : 2;
    const k = PLURAL(n);
    return Number.isInteger(k) && k >= 0 && k < DATA.plural.nplurals ? k : DATA.plural.nplurals - 1;
  }
  window.attnlabWorkbench = Object.freeze({ pluralRule: pluralRule, pluralIndex: pluralIndex });  // for the tests

  // ---- small helpers -------------------------------------------------------------------------------------
  // T(key, values): a sentence of DATA.text with its {fields} filled; T(key, values, count): the form of a
  // sentence of DATA.counted that the catalog's rule gives count. A sentence with a count shown without one is
  // an error in the console (the browser tests fail on it), and shows its last form.
  function T(key, values, count) {
    let text;
    if (COUNTED[key] !== undefined) {
      const forms = COUNTED[key];
      if (typeof count !== "number" || !Number.isFinite(count)) {
        console.error("attnlab workbench: the sentence " + key + " is shown without its count");
        text = forms[forms.length - 1];
      } else { text = forms[Math.min(pluralIndex(count), forms.length - 1)]; }
    } else { text = TEXT[key]; }
    if (text === undefined) { text = "[" + key + "]"; }
    return text.replace(/\{(\w+)\}/g, function (all, name) {
      return values && values[name] !== undefined ? String(values[name]) : all;
    });
  }
  function num(v) {
    if (v === null) { return NaN; }
    if (v === "-inf") { return -Infinity; }
    if (v === "inf") { return Infinity; }
    return v;
  }
  function mat(a) { return a === null || a === undefined ? null : a.map(function (r) { return r.map(num); }); }
  function fmt(v, digits) {
    if (typeof v === "boolean") { return v ? "True" : "False"; }
    if (Number.isNaN(v)) { return "NaN"; }
    if (v === -Infinity) { return "\u2212\u221e"; }
    if (v === Infinity) { return "\u221e"; }
    const d = digits === undefined ? 4 : digits;
    const text = (Math.abs(v) < 0.5 * Math.pow(10, -d) ? 0 : v).toFixed(d);
    return text.replace("-", "\u2212");
  }
  function count(v) { return Math.round(v).toString().replace(/\B(?=(\d{3})+(?!\d))/g, ","); }
  function el(tag, attrs, children) {
    const node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) {
      if (k === "text") { node.textContent = attrs[k]; } else if (k === "cls") { node.className = attrs[k]; }
      else if (k.startsWith("on")) { node.addEventListener(k.slice(2), attrs[k]); } else { node.setAttribute(k, attrs[k]); }
    });
    (children || []).forEach(function (c) { if (c) { node.appendChild(typeof c === "string" ? document.createTextNode(c) : c); } });
    return node;
  }
  function clear(node) { while (node.firstChild) { node.removeChild(node.firstChild); } return node; }
  function colour(t) {
    const p = DATA.palette;
    const i = Math.max(0, Math.min(p.length - 1, Math.round(t * (p.length - 1))));
    return { bg: p[i].bg, fg: p[i].fg };
  }
  function close(a, b) { return Number.isFinite(a) && Number.isFinite(b) && Math.abs(a - b) <= 1e-4 * Math.max(1, Math.abs(b)); }
  function same(a, b) {  // two matrices of numbers equal to the checks' tolerance
    if (!a || !b || a.length !== b.length) { return false; }
    return a.every(function (row, i) {
      return row.length === b[i].length && row.every(function (v, j) { return v === b[i][j] || close(v, b[i][j]); });
    });
  }
  function badge(yours, chapter) {
    if (!yours || !chapter) { return null; }
    const ok = same(yours, chapter);
    return el("span", { cls: "badge " + (ok ? "same" : "differs"), text: ok ? T("matches_chapter") : T("differs_chapter") });
  }

  // ---- a heatmap table whose cells can be focused, moved between with the arrow keys, and picked --------
  function grid(values, o) {
    const table = el("table", { cls: "grid " + (o.cls || ""), role: "grid", "aria-label": o.caption || "" });
    if (o.id) { table.id = o.id; }
    if (o.caption) { table.appendChild(el("caption", { text: o.caption }, o.badge ? [" ", o.badge] : [])); }
    if (!values) {
      table.appendChild(el("tr", {}, [el("td", { cls: "nan", text: T("no_values") })]));
      return table;
    }
    const finite = [].concat.apply([], values).filter(function (v) { return typeof v === "number" && Number.isFinite(v); });
    const lo = o.range ? o.range[0] : Math.min.apply(null, finite.concat([0]));
    const hi = o.range ? o.range[1] : Math.max.apply(null, finite.concat([1e-12]));
    const head = el("tr", {}, [el("th", {})]);
    (o.cols || values[0].map(function (_, j) { return String(j); })).forEach(function (c) { head.appendChild(el("th", { scope: "col", text: c })); });
    if (o.sums) { head.appendChild(el("th", { scope: "col", text: T("row_sum") })); }
    table.appendChild(head);
    const chosen = o.chosen || null;
    values.forEach(function (row, i) {
      const tr = el("tr", {}, [el("th", { scope: "row", text: o.rows ? o.rows[i] : String(i) })]);
      row.forEach(function (v, j) {
        const cell = el("td", { role: "gridcell", "data-i": i, "data-j": j, text: o.format ? o.format(v) : fmt(v, o.digits) });
        if (typeof v === "boolean") {
          const c = colour(v ? 0.85 : 0.12);
          cell.style.background = c.bg; cell.style.color = c.fg;
        } else if (typeof v !== "number") { cell.classList.add("label"); }  // a label (q·k), not a value: no colour
        else if (Number.isNaN(v)) { cell.className = "nan"; }
        else if (v === -Infinity) { cell.className = "ninf"; }
        else {
          const c = colour(hi > lo ? (Math.min(Math.max(v, lo), hi) - lo) / (hi - lo) : 0.5);
          cell.style.background = c.bg; cell.style.color = c.fg;
        }
        cell.setAttribute("aria-label", (o.rows ? o.rows[i] : i) + ", " + (o.cols ? o.cols[j] : j) + ": " + cell.textContent);
        if (o.marked && o.marked(i, j)) { cell.classList.add("chosen"); }
        if (o.pick) {
          cell.classList.add("pick");
          const isChosen = chosen && chosen[0] === i && chosen[1] === j;
          cell.tabIndex = isChosen || (!chosen && i === 0 && j === 0) ? 0 : -1;
          if (isChosen) { cell.classList.add("chosen"); cell.setAttribute("aria-selected", "true"); }
          cell.addEventListener("click", function () { o.pick(i, j); });
          cell.addEventListener("keydown", function (e) { moveOrPick(e, table, i, j, o.pick); });
        }
        tr.appendChild(cell);
      });
      if (o.sums) {
        const total = row.reduce(function (a, b) { return a + b; }, 0);
        tr.appendChild(el("td", { cls: "sum", text: fmt(total) }));
      }
      table.appendChild(tr);
    });
    return table;
  }
  function moveOrPick(e, table, i, j, pick) {
    const moves = { ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1] };
    if (e.key === "Enter" || e.key === " ") { e.preventDefault(); pick(i, j); return; }
    if (!moves[e.key]) { return; }
    e.preventDefault();
    const next = table.querySelector('td[data-i="' + (i + moves[e.key][0]) + '"][data-j="' + (j + moves[e.key][1]) + '"]');
    if (next) { table.querySelectorAll("td.pick").forEach(function (c) { c.tabIndex = -1; }); next.tabIndex = 0; next.focus(); }
  }
  function refocus(id) {  // after a view is drawn again, give focus back to the chosen cell of the grid that had it
    const table = id && document.getElementById(id);
    const cell = table && table.querySelector("td.chosen");
    if (cell) { cell.focus(); }
  }

  function problems(list, what) {
    return (list || []).map(function (p) {
      const parts = [p.todo ? T("not_written", { text: p.text }) : T("problem_is", { text: p.text })];
      if (p.todo && what) { parts.push(T("will_show", { what: what })); }
      if (p.section) { parts.push(T("read_section", { section: p.section, link: p.link })); }
      return el("div", { cls: "problem" + (p.todo ? " todo" : ""), role: "note" }, [parts.join(" ")]);
    });
  }
  function warnings(list) { return (list || []).map(function (w) { return el("div", { cls: "warning", role: "note", text: w }); }); }
  function legend() {
    const stops = DATA.palette.map(function (c, k) { return c.bg + " " + Math.round(100 * k / (DATA.palette.length - 1)) + "%"; });
    return el("div", { cls: "legend" }, [T("low"), el("span", { cls: "ramp", style: "background: linear-gradient(to right, " + stops.join(", ") + ")" }), T("high")]);
  }
  const DIMS = ["1", "2"];

  // ---- the eight stages of the worked example ------------------------------------------------------------
  function stageView(root) {
    const id = STAGES[state.stage];
    const data = DATA.stages[id];
    const stepper = el("div", { cls: "stepper", role: "toolbar", "aria-label": T("stages_label") });
    STAGES.forEach(function (name, k) {
      stepper.appendChild(el("button", {
        type: "button", "aria-pressed": String(k === state.stage), "data-stage": name,
        text: (k + 1) + ". " + T("stage_" + name), onclick: function () { state.stage = k; draw(); },
      }));
    });
    root.appendChild(stepper);
    root.appendChild(el("h2", { text: T("stage_heading", { number: state.stage + 1, title: T("stage_" + id) }) }));
    root.appendChild(el("p", { cls: "explain", text: T("stage_" + id + "_text") }));
    problems(data.problems, T("stage_" + id + "_what")).forEach(function (n) { root.appendChild(n); });
    warnings(data.warnings).forEach(function (n) { root.appendChild(n); });
    const body = el("div", { cls: "row" });
    const detail = el("div", { cls: "detail", id: "detail", "aria-live": "polite" });
    root.appendChild(body);
    root.appendChild(detail);
    root.appendChild(legend());
    STAGE_VIEWS[id](body, detail, data);
  }
  function cellOf(id, fallback) { return state.cells[id] || fallback || [2, 1]; }
  function picker(id) { return function (i, j) { state.cells[id] = [i, j]; draw(); refocus("grid-" + id); }; }
  function pair(body, id, c, yours, yoursOpts, chapter, chapterOpts) {  // the pick goes to yours, else the chapter's
    const pick = { pick: picker(id), chosen: c, id: "grid-" + id };
    body.appendChild(grid(yours, Object.assign({}, yoursOpts, yours ? pick : {})));
    body.appendChild(grid(chapter, Object.assign({}, chapterOpts, yours ? {} : pick)));
  }
  function eq(text) { return el("p", { cls: "eq", text: text }); }
  const IN = DATA.inputs;
  const STAGE_VIEWS = {
    products: function (body, detail, data) {
      const Q = mat(IN.Q), K = mat(IN.K);
      const c = cellOf("products");
      body.appendChild(grid(Q, { caption: T("queries_q"), rows: TOKENS, cols: DIMS }));
      body.appendChild(grid(K, { caption: T("keys_k"), rows: TOKENS, cols: DIMS }));
      const labels = TOKENS.map(function (q) { return TOKENS.map(function (k) { return "q\u00b7k"; }); });
      body.appendChild(grid(labels, { caption: T("click_a_cell"), rows: TOKENS, cols: TOKENS, pick: picker("products"), chosen: c, id: "grid-products", format: function (v) { return v; } }));
      const yours = data.yours;
      if (yours.Q) {
        body.appendChild(grid(mat(yours.Q), { caption: T("your_project_q"), rows: TOKENS, cols: DIMS, badge: badge(mat(yours.Q), mat(data.chapter.Q)) }));
        body.appendChild(grid(mat(yours.K), { caption: T("your_project_k"), rows: TOKENS, cols: DIMS, badge: badge(mat(yours.K), mat(data.chapter.K)) }));
      }
      const q = Q[c[0]], k = K[c[1]];
      detail.appendChild(el("p", { text: T("products_of", { query: TOKENS[c[0]], key: TOKENS[c[1]] }) }));
      q.forEach(function (qv, d) { detail.appendChild(eq("q[" + d + "] \u00d7 k[" + d + "] = " + fmt(qv, 2) + " \u00d7 " + fmt(k[d], 2) + " = " + fmt(qv * k[d]))); });
      detail.appendChild(el("p", { cls: "muted", text: T("products_next") }));
    },
    sum: function (body, detail, data) {
      const c = cellOf("sum");
      const yours = mat(data.yours.scores), chapter = mat(data.chapter.scores);
      pair(body, "sum", c, yours, { caption: T("your_scores"), rows: TOKENS, cols: TOKENS, badge: badge(yours, chapter) }, chapter, { caption: T("chapter_scores"), rows: TOKENS, cols: TOKENS });
      const q = mat(IN.Q)[c[0]], k = mat(IN.K)[c[1]];
      const products = q.map(function (v, d) { return v * k[d]; });
      const total = products.reduce(function (a, b) { return a + b; }, 0);
      detail.appendChild(el("p", { text: T("sum_of", { query: TOKENS[c[0]], key: TOKENS[c[1]] }) }));
      detail.appendChild(eq(q.map(function (v, d) { return fmt(v, 2) + " \u00d7 " + fmt(k[d], 2); }).join(" + ") + " = " + products.map(function (p) { return fmt(p); }).join(" + ") + " = " + fmt(total)));
      detail.appendChild(valueLine("your_value", yours, c, "scores(Q, K)"));
      detail.appendChild(valueLine("chapter_value", chapter, c));
      detail.appendChild(el("p", { cls: "muted", text: T("sum_note") }));
    },
    scale: function (body, detail, data) {
      const c = cellOf("scale");
      const yours = mat(data.yours.scaled), chapter = mat(data.chapter.scaled), raw = mat(data.yours.scores);
      pair(body, "scale", c, yours, { caption: T("your_scaled"), rows: TOKENS, cols: TOKENS, badge: badge(yours, chapter) }, chapter, { caption: T("chapter_scaled"), rows: TOKENS, cols: TOKENS });
      detail.appendChild(el("p", { text: T("scale_by", { root: fmt(IN.sqrt_dk) }) }));
      if (raw && yours) {
        detail.appendChild(eq(fmt(raw[c[0]][c[1]]) + " / " + fmt(IN.sqrt_dk) + " = " + fmt(raw[c[0]][c[1]] / IN.sqrt_dk)));
      }
      detail.appendChild(valueLine("your_value", yours, c, "scaled_scores(Q, K)"));
      detail.appendChild(valueLine("chapter_value", chapter, c));
    },
    mask: function (body, detail, data) {
      const c = cellOf("mask", [0, 2]);
      const mask = data.yours.mask, masked = mat(data.yours.masked), weights = mat(data.yours.weights);
      const at = function (i, j) { return i === c[0] && j === c[1]; };
      pair(body, "mask", c, mask, { caption: T("your_mask"), rows: TOKENS, cols: TOKENS }, mat(data.chapter.scaled), { caption: T("chapter_scaled"), rows: TOKENS, cols: TOKENS, marked: mask ? at : null });
      body.appendChild(grid(masked, { caption: T("your_masked"), rows: TOKENS, cols: TOKENS, marked: at }));
      body.appendChild(grid(weights, { caption: T("your_masked_weights"), rows: TOKENS, cols: TOKENS, range: [0, 1], sums: true, marked: at }));
      const allowed = c[1] <= c[0];
      detail.appendChild(el("p", { text: T(allowed ? "mask_allowed" : "mask_blocked", { query: TOKENS[c[0]], key: TOKENS[c[1]] }) }));
      if (mask) { detail.appendChild(eq("causal_mask(3)[" + c + "] = " + fmt(mask[c[0]][c[1]]))); }
      if (masked) { detail.appendChild(eq("apply_mask(S, causal)[" + c + "] = " + fmt(masked[c[0]][c[1]]))); }
      if (weights) {
        const w = weights[c[0]][c[1]];
        detail.appendChild(eq("attention(Q, K, V, causal) -> weights[" + c + "] = " + (Number.isFinite(w) ? String(w) : fmt(w))));
        if (!allowed) { detail.appendChild(el("p", { cls: "verdict", text: T(w === 0 ? "exactly_zero" : "not_exactly_zero", { value: String(w) }) })); }
      }
    },
    softmax: function (body, detail, data) {
      const c = cellOf("softmax");
      const yours = mat(data.yours.weights), chapter = mat(data.chapter.weights);
      pair(body, "softmax", c, yours, { caption: T("your_weights"), rows: TOKENS, cols: TOKENS, range: [0, 1], sums: true, badge: badge(yours, chapter) }, chapter, { caption: T("chapter_weights"), rows: TOKENS, cols: TOKENS, range: [0, 1], sums: true });
      const s = mat(DATA.stages.scale.chapter.scaled)[c[0]];
      const e = s.map(Math.exp), total = e.reduce(function (a, b) { return a + b; }, 0);
      detail.appendChild(el("p", { text: T("softmax_row", { query: TOKENS[c[0]] }) }));
      detail.appendChild(eq("exp(" + s.map(function (v) { return fmt(v); }).join(", ") + ") = [" + e.map(function (v) { return fmt(v); }).join(", ") + "]"));
      detail.appendChild(eq(fmt(e[c[1]]) + " / " + fmt(total) + " = " + fmt(e[c[1]] / total)));
      detail.appendChild(valueLine("your_value", yours, c, "softmax(S)"));
      detail.appendChild(valueLine("chapter_value", chapter, c));
    },
    mixing: function (body, detail, data) {
      const c = cellOf("mixing", [2, 0]);
      const weights = mat(data.yours.weights), output = mat(data.yours.output), chapter = mat(data.chapter.output), V = mat(IN.V);
      body.appendChild(grid(weights, { caption: T("your_weights"), rows: TOKENS, cols: TOKENS, range: [0, 1], marked: function (i) { return i === c[0]; } }));
      body.appendChild(grid(V, { caption: T("values_v"), rows: TOKENS, cols: DIMS, marked: function (i, j) { return j === c[1]; } }));
      pair(body, "mixing", c, output, { caption: T("your_output"), rows: TOKENS, cols: DIMS, badge: badge(output, chapter) }, chapter, { caption: T("chapter_output"), rows: TOKENS, cols: DIMS });
      detail.appendChild(el("p", { text: T("weighted_sum", { query: TOKENS[c[0]], column: c[1] + 1 }) }));
      if (weights) {
        const w = weights[c[0]];
        const terms = w.map(function (wj, j) { return fmt(wj) + " \u00d7 " + fmt(V[j][c[1]], 2); });
        const total = w.reduce(function (a, wj, j) { return a + wj * V[j][c[1]]; }, 0);
        detail.appendChild(eq(terms.join(" + ") + " = " + fmt(total)));
        detail.appendChild(el("p", { cls: "muted", text: T("weights_not_contributions") }));
      }
      detail.appendChild(valueLine("your_value", output, c, "attention(Q, K, V) -> output"));
      detail.appendChild(valueLine("chapter_value", chapter, c));
    },
    concat: function (body, detail, data) {
      const c = cellOf("concat", [0, 2]);
      const head1 = mat(DATA.stages.mixing.yours.output), head2 = mat(data.yours.output2);
      const yours = mat(data.yours.concat), chapter = mat(data.chapter.concat);
      const cols = ["h1:1", "h1:2", "h2:1", "h2:2"];
      body.appendChild(grid(head1, { caption: T("head_output", { head: 1 }), rows: TOKENS, cols: DIMS }));
      body.appendChild(grid(head2, { caption: T("head_output", { head: 2 }), rows: TOKENS, cols: DIMS }));
      pair(body, "concat", c, yours, { caption: T("your_concat"), rows: TOKENS, cols: cols, badge: badge(yours, chapter) }, chapter, { caption: T("chapter_concat"), rows: TOKENS, cols: cols });
      const head = c[1] < 2 ? 1 : 2, column = (c[1] % 2) + 1;
      const from = head === 1 ? head1 : head2;
      detail.appendChild(el("p", { text: T("concat_from", { column: c[1] + 1, head: head, head_column: column }) }));
      if (from) { detail.appendChild(eq(T("head_value", { head: head }) + " " + fmt(from[c[0]][column - 1]))); }
      detail.appendChild(valueLine("your_value", yours, c, "multi_head(X, heads, I)"));
      detail.appendChild(valueLine("chapter_value", chapter, c));
    },
    projection: function (body, detail, data) {
      const c = cellOf("projection", [0, 0]);
      const concat = mat(data.yours.concat), yours = mat(data.yours.projected), chapter = mat(data.chapter.projected), W = mat(IN.W_O);
      const cols = ["1", "2", "3", "4"];
      body.appendChild(grid(concat, { caption: T("your_concat"), rows: TOKENS, cols: cols, marked: function (i) { return i === c[0]; } }));
      body.appendChild(grid(W, { caption: T("w_o"), rows: cols, cols: cols, marked: function (i, j) { return j === c[1]; } }));
      pair(body, "projection", c, yours, { caption: T("your_projected"), rows: TOKENS, cols: cols, badge: badge(yours, chapter) }, chapter, { caption: T("chapter_projected"), rows: TOKENS, cols: cols });
      detail.appendChild(el("p", { text: T("projection_of", { query: TOKENS[c[0]], column: c[1] + 1 }) }));
      if (concat) {
        const terms = concat[c[0]].map(function (v, k) { return fmt(v) + " \u00d7 " + fmt(W[k][c[1]], 1); });
        const total = concat[c[0]].reduce(function (a, v, k) { return a + v * W[k][c[1]]; }, 0);
        detail.appendChild(eq(terms.join(" + ") + " = " + fmt(total)));
      }
      detail.appendChild(valueLine("your_value", yours, c, "multi_head(X, heads, W_O)"));
      detail.appendChild(valueLine("chapter_value", chapter, c));
    },
  };
  function valueLine(key, values, c, call) {
    const v = values ? values[c[0]][c[1]] : null;
    const text = values ? fmt(v) : T("none_yet");
    return el("p", { cls: key === "your_value" ? "yours" : "chapter", text: T(key, { call: call || "", where: c.join(", "), value: text }) });
  }

  // ---- the calibrator: change a condition, predict, then see what your attention does --------------------
  function calibratorView(root) {
    const data = DATA.calibrator, cal = state.calibrator;
    root.appendChild(el("h2", { text: T("calibrator") }));
    root.appendChild(el("p", { cls: "explain", text: T("calibrator_text") }));
    problems(data.problems, T("calibrator_what")).forEach(function (n) { root.appendChild(n); });
    warnings(data.warnings).forEach(function (n) { root.appendChild(n); });
    const changed = function () { cal.pending = cal.predictFirst; cal.guess = null; draw(); };
    const controls = el("div", { cls: "controls" });
    const check = function (key, label) {
      const input = el("input", { type: "checkbox", id: "cal-" + key, onchange: function (e) { cal[key] = e.target.checked; changed(); } });
      input.checked = cal[key];
      return el("label", {}, [input, " " + label]);
    };
    controls.appendChild(check("scale", T("cal_scale")));
    controls.appendChild(check("mask", T("cal_mask")));
    const temperature = el("select", { id: "cal-temperature", onchange: function (e) { cal.temperature = Number(e.target.value); changed(); } });
    data.temperatures.forEach(function (t) { const o = el("option", { value: t, text: String(t) }); o.selected = t === cal.temperature; temperature.appendChild(o); });
    controls.appendChild(el("label", {}, [T("cal_temperature") + " ", temperature]));
    const token = el("select", { id: "cal-token", onchange: function (e) { cal.token = Number(e.target.value); changed(); } });
    TOKENS.forEach(function (t, k) { const o = el("option", { value: k, text: t }); o.selected = k === cal.token; token.appendChild(o); });
    controls.appendChild(el("label", {}, [T("cal_token", { position: TOKENS.length }) + " ", token]));
    const first = el("input", { type: "checkbox", id: "cal-first", onchange: function (e) { cal.predictFirst = e.target.checked; cal.pending = false; draw(); } });
    first.checked = cal.predictFirst;
    controls.appendChild(el("label", {}, [first, " " + T("cal_predict_first")]));
    root.appendChild(controls);
    const key = [cal.token, cal.scale ? 1 : 0, cal.mask ? 1 : 0, String(cal.temperature)].join("|");
    const result = data.results[key];
    const tokens = TOKENS.slice(0, TOKENS.length - 1).concat([TOKENS[cal.token]]);
    root.appendChild(el("p", { text: T("cal_sentence", { sentence: tokens.join(" ") }) }));
    if (!result) { root.appendChild(el("p", { cls: "muted", text: T("none_yet") })); return; }
    const last = TOKENS.length - 1;
    if (cal.pending) {
      const box = el("div", { cls: "card", id: "cal-predict" }, [el("p", { text: T("cal_question", { token: tokens[last] }) })]);
      tokens.forEach(function (t, k) {
        box.appendChild(el("button", { type: "button", "data-guess": k, text: t, onclick: function () { cal.guess = k; cal.pending = false; draw(); } }));
        box.appendChild(document.createTextNode(" "));
      });
      root.appendChild(box);
      return;
    }
    const weights = mat(result.weights), output = mat(result.output);
    const row = weights[last];
    const winner = row.indexOf(Math.max.apply(null, row));
    if (cal.guess !== null) {
      root.appendChild(el("p", { cls: "verdict", id: "cal-verdict", text: T(cal.guess === winner ? "cal_right" : "cal_wrong", { guess: tokens[cal.guess], winner: tokens[winner], weight: fmt(row[winner]) }) }));
    }
    const body = el("div", { cls: "row" });
    body.appendChild(grid(weights, { caption: T("your_weights"), rows: tokens, cols: tokens, range: [0, 1], sums: true, id: "cal-weights" }));
    body.appendChild(grid(output, { caption: T("your_output"), rows: tokens, cols: DIMS }));
    const base = data.results["2|1|0|1"];
    if (base) { body.appendChild(grid(mat(base.weights), { caption: T("cal_baseline"), rows: TOKENS, cols: TOKENS, range: [0, 1] })); }
    root.appendChild(body);
    root.appendChild(legend());
  }

  // ---- the toy GPT: token tracker, head lens, prefill and decode -----------------------------------------
  function gptTokens() { return DATA.gpt.tokens.map(function (t, k) { return k + ":" + t; }); }
  function headWeights(layer, head) {
    const layers = DATA.gpt.forward.layers;
    return layers[layer] && layers[layer][head] ? mat(layers[layer][head]) : null;
  }
  function choose(label, id, options, value, onchange) {
    const select = el("select", { id: id, onchange: function (e) { onchange(e.target.value); } });
    options.forEach(function (o) { const opt = el("option", { value: o[0], text: o[1] }); opt.selected = String(o[0]) === String(value); select.appendChild(opt); });
    return el("label", {}, [label + " ", select]);
  }
  function blockOptions() { return Array.from({ length: DATA.gpt.sizes.blocks }, function (_, k) { return [k, T("block_n", { n: k + 1 })]; }); }
  function headOptions() { return Array.from({ length: DATA.gpt.sizes.heads }, function (_, k) { return [k, T("head_n", { n: k + 1 })]; }); }
  function gptIntro(root, key) {  // its form follows the number of tokens
    const s = DATA.gpt.sizes, n = DATA.gpt.tokens.length;
    const values = { blocks: T("n_blocks", { count: s.blocks }, s.blocks), heads: T("n_heads", { count: s.heads }, s.heads), width: s.d_model, vocabulary: s.vocabulary, n: n };
    root.appendChild(el("p", { cls: "explain", text: T(key, values, n) }));
  }

  function trackerView(root) {
    const tr = state.tracker, fwd = DATA.gpt.forward;
    root.appendChild(el("h2", { text: T("tracker") }));
    gptIntro(root, "tracker_text");
    problems(fwd.problems, T("tracker_what")).forEach(function (n) { root.appendChild(n); });
    warnings(fwd.warnings).forEach(function (n) { root.appendChild(n); });
    const controls = el("div", { cls: "controls" }, [
      choose(T("block"), "tracker-layer", blockOptions(), tr.layer, function (v) { tr.layer = Number(v); draw(); }),
      choose(T("head"), "tracker-head", headOptions(), tr.head, function (v) { tr.head = Number(v); draw(); }),
    ]);
    root.appendChild(controls);
    const weights = headWeights(tr.layer, tr.head);
    const labels = gptTokens(), n = labels.length, step = 62, width = n * step + 20, height = 210, base = 170;
    const ns = "http://www.w3.org/2000/svg";
    const svg = document.createElementNS(ns, "svg");
    svg.setAttribute("viewBox", "0 0 " + width + " " + height);
    svg.setAttribute("width", width);
    svg.setAttribute("role", "group");  // a group, not an image: its token buttons are controls (an image's are not)
    svg.setAttribute("aria-label", T("tracker_picture", { position: tr.pos }));
    svg.setAttribute("id", "tracker-svg");
    const x = function (k) { return 10 + k * step + step / 2; };
    const future = [];
    if (weights) {
      weights[tr.pos].forEach(function (w, j) {
        if (!(w > 0) && !Number.isNaN(w)) { return; }
        if (j > tr.pos) { future.push(j); }
        const path = document.createElementNS(ns, "path");
        const x0 = x(tr.pos), x1 = x(j), lift = j === tr.pos ? 30 : 18 + Math.abs(x1 - x0) * 0.28;
        path.setAttribute("d", j === tr.pos
          ? "M " + (x0 - 8) + " " + (base - 22) + " C " + (x0 - 22) + " " + (base - 22 - lift) + ", " + (x0 + 22) + " " + (base - 22 - lift) + ", " + (x0 + 8) + " " + (base - 22)
          : "M " + x0 + " " + (base - 22) + " C " + x0 + " " + (base - 22 - lift) + ", " + x1 + " " + (base - 22 - lift) + ", " + x1 + " " + (base - 22));
        path.setAttribute("fill", "none");
        const c = colour(0.15);
        path.setAttribute("stroke", c.bg);
        path.setAttribute("stroke-width", String(Number.isNaN(w) ? 1 : 1 + 14 * w));
        path.setAttribute("stroke-opacity", "0.8");
        path.setAttribute("data-key", j);
        path.setAttribute("data-weight", Number.isNaN(w) ? "NaN" : String(w));
        if (j > tr.pos || Number.isNaN(w)) { path.setAttribute("stroke-dasharray", "5 4"); }
        svg.appendChild(path);
        if (w >= 0.1 && j !== tr.pos) {  // the larger weights written at the top of their line
          const label = document.createElementNS(ns, "text");
          label.setAttribute("x", (x0 + x1) / 2); label.setAttribute("y", base - 26 - 0.75 * lift);
          label.setAttribute("text-anchor", "middle"); label.setAttribute("font-size", "11");
          label.textContent = fmt(w, 2);
          svg.appendChild(label);
        }
      });
    }
    labels.forEach(function (label, k) {
      const g = document.createElementNS(ns, "g");
      g.setAttribute("class", "token");
      g.setAttribute("tabindex", k === tr.pos ? "0" : "-1");
      g.setAttribute("role", "button");
      g.setAttribute("aria-pressed", String(k === tr.pos));
      g.setAttribute("aria-label", T("position_token", { position: k, token: label }));  // holds the text it shows
      g.setAttribute("data-pos", k);
      const rect = document.createElementNS(ns, "rect");
      rect.setAttribute("x", x(k) - 24); rect.setAttribute("y", base - 20); rect.setAttribute("width", 48); rect.setAttribute("height", 30); rect.setAttribute("rx", 5);
      const c = colour(k === tr.pos ? 0.95 : 0.7);
      rect.setAttribute("fill", k === tr.pos ? "#ff9f1c" : "#fff"); rect.setAttribute("stroke", c.bg); rect.setAttribute("stroke-width", "2");
      const text = document.createElementNS(ns, "text");
      text.setAttribute("x", x(k)); text.setAttribute("y", base); text.setAttribute("text-anchor", "middle"); text.setAttribute("font-size", "13");
      text.textContent = label;
      g.appendChild(rect); g.appendChild(text);
      g.addEventListener("click", function () { tr.pos = k; draw(); focusToken(); });
      g.addEventListener("keydown", function (e) {
        if (e.key === "ArrowLeft" || e.key === "ArrowRight") {
          e.preventDefault(); tr.pos = Math.max(0, Math.min(n - 1, tr.pos + (e.key === "ArrowLeft" ? -1 : 1))); draw(); focusToken();
        } else if (e.key === "Enter" || e.key === " ") { e.preventDefault(); tr.pos = k; draw(); focusToken(); }
      });
      svg.appendChild(g);
    });
    const wrap = el("div", { cls: "tracker" });
    wrap.appendChild(svg);
    root.appendChild(wrap);
    if (future.length) { root.appendChild(el("div", { cls: "warning", role: "note", text: T("tracker_future", { positions: future.join(", ") }) })); }
    if (weights) {
      const row = [weights[tr.pos].slice(0, n)];
      root.appendChild(grid(row, { caption: T("tracker_row", { position: tr.pos }), rows: [labels[tr.pos]], cols: labels, range: [0, 1], sums: true, cls: "small", digits: 3, id: "tracker-row" }));
    }
    root.appendChild(el("p", { cls: "muted", text: T("tracker_how") }));
  }
  function focusToken() { const g = document.querySelector('#tracker-svg g[tabindex="0"]'); if (g) { g.focus(); } }

  function lensView(root) {
    const lens = state.lens;
    root.appendChild(el("h2", { text: T("lens") }));
    gptIntro(root, "lens_text");
    const options = blockOptions().map(function (o) { return ["gpt:" + o[0], T("lens_gpt", { block: o[1] })]; });
    options.push(["worked", T("lens_worked")]);
    root.appendChild(el("div", { cls: "controls" }, [choose(T("lens_source"), "lens-source", options, lens.source, function (v) { lens.source = v; lens.cell = [0, 0]; draw(); })]));
    let heads, rows, trouble;
    if (lens.source === "worked") {
      heads = [mat(DATA.stages.mixing.yours.weights), mat(DATA.stages.concat.yours.weights2)];
      rows = TOKENS;
      trouble = DATA.stages.mixing.problems.concat(DATA.stages.concat.problems);
      root.appendChild(el("p", { cls: "muted", text: T("lens_worked_note") }));
    } else {
      const layer = Number(lens.source.split(":")[1]);
      heads = [headWeights(layer, 0), headWeights(layer, 1)];
      rows = gptTokens();
      trouble = DATA.gpt.forward.problems;
    }
    problems(trouble, T("lens_what")).forEach(function (n) { root.appendChild(n); });
    const c = lens.cell;
    const body = el("div", { cls: "row" });
    heads.forEach(function (w, h) {
      body.appendChild(grid(w, {
        caption: T("head_n", { n: h + 1 }), rows: rows, cols: rows, range: [0, 1], cls: rows.length > 4 ? "small" : "", digits: rows.length > 4 ? 2 : 4,
        pick: function (i, j) { lens.cell = [i, j]; draw(); refocus("lens-" + h); }, chosen: c, id: "lens-" + h,
      }));
    });
    root.appendChild(body);
    const values = heads.map(function (w) { return w ? fmt(w[c[0]][c[1]]) : T("none_yet"); });
    root.appendChild(el("div", { cls: "detail", id: "detail", "aria-live": "polite" }, [T("lens_cell", { query: rows[c[0]], key: rows[c[1]], one: values[0], two: values[1] })]));
    root.appendChild(legend());
  }

  function cacheView(root) {
    const cs = state.cache, dec = DATA.gpt.decode, fwd = DATA.gpt.forward, gen = DATA.gpt.generate;
    root.appendChild(el("h2", { text: T("cache") }));
    gptIntro(root, "cache_text");
    problems(dec.problems, T("cache_what")).forEach(function (n) { root.appendChild(n); });
    warnings(dec.warnings).forEach(function (n) { root.appendChild(n); });
    const labels = gptTokens(), steps = dec.steps;
    root.appendChild(el("div", { cls: "controls" }, [
      choose(T("block"), "cache-layer", blockOptions(), cs.layer, function (v) { cs.layer = Number(v); draw(); }),
      choose(T("head"), "cache-head", headOptions(), cs.head, function (v) { cs.head = Number(v); draw(); }),
    ]));
    const t = cs.step;
    root.appendChild(el("h3", { text: T("decode_step", { step: t, token: DATA.gpt.tokens[t] }) }));
    const logits = mat(fwd.logits);
    const body = el("div", { cls: "row" });
    const vocab = function (row) { return row.map(function (_, k) { return String(k); }); };
    if (logits) { body.appendChild(grid(logits, { caption: T("prefill_row", { step: t }), rows: labels, cols: vocab(logits[0]), cls: "small", digits: 1, marked: function (i) { return i === t; } })); }
    const stepNow = steps[t];
    const decoded = stepNow && stepNow.logits ? [stepNow.logits.map(num)] : null;
    if (decoded) { body.appendChild(grid(decoded, { caption: T("decode_row", { step: t }), rows: [labels[t]], cols: vocab(decoded[0]), cls: "small", digits: 1, id: "decode-row" })); }
    root.appendChild(body);
    if (logits && decoded) {
      const gap = Math.max.apply(null, decoded[0].map(function (v, k) { return Math.abs(v - logits[t][k]); }));
      root.appendChild(el("p", { cls: "verdict", id: "cache-gap", text: T(gap <= 1e-6 * 10 ? "same_logits" : "different_logits", { gap: gap.toExponential(1) }) }));
    }
    if (stepNow && stepNow.cache) {
      problems(stepNow.cache.problems).forEach(function (n) { root.appendChild(n); });
      const lengths = stepNow.cache.lengths;
      if (lengths) {
        root.appendChild(el("p", { id: "cache-lengths", text: T("cache_lengths", { step: t, lengths: lengths.map(function (l, k) { return T("block_n", { n: k + 1 }) + ": " + l.join(", "); }).join("; ") }) }));
      }
      const keys = stepNow.cache.keys && stepNow.cache.keys[cs.layer] ? stepNow.cache.keys[cs.layer][cs.head] : null;
      const values = stepNow.cache.values && stepNow.cache.values[cs.layer] ? stepNow.cache.values[cs.layer][cs.head] : null;
      const held = el("div", { cls: "row" });
      const rowsOf = function (m) { return m ? m.map(function (_, k) { return labels[k] || String(k); }) : []; };
      const newest = function (m) { return function (i) { return m && i === m.length - 1; }; };
      const width = function (m) { return m && m[0] ? m[0].map(function (_, k) { return String(k + 1); }) : []; };
      held.appendChild(grid(mat(keys), { caption: T("cache_keys"), rows: rowsOf(keys), cols: width(keys), cls: "small", digits: 2, marked: newest(keys), id: "cache-keys" }));
      held.appendChild(grid(mat(values), { caption: T("cache_values"), rows: rowsOf(values), cols: width(values), cls: "small", digits: 2, marked: newest(values) }));
      root.appendChild(held);
      root.appendChild(el("p", { cls: "muted", text: T("cache_newest") }));
    }
    root.appendChild(el("h3", { text: T("generation") }));
    problems(gen.problems, T("generation_what")).forEach(function (n) { root.appendChild(n); });
    ["cache", "no_cache"].forEach(function (name) {
      const run = gen.runs[name];
      if (run) {
        root.appendChild(el("p", { text: T("generated_" + name, { prompt: gen.prompt.join(" "), tokens: run.tokens ? run.tokens.join(" ") : T("none_yet") }) }));
      }
    });
  }

  // ---- predict, then test ------------------------------------------------------------------------------
  const STORE = "attnlab-workbench/";
  function remembered(id) { try { const v = window.localStorage.getItem(STORE + id); return v === null ? null : JSON.parse(v); } catch (e) { return null; } }
  function remember(id, value) { try { window.localStorage.setItem(STORE + id, JSON.stringify(value)); } catch (e) { /* no storage: the page works without it */ } }
  const revealed = {};
  function predictView(root) {
    root.appendChild(el("h2", { text: T("predict") }));
    root.appendChild(el("p", { cls: "explain", text: T("predict_text") }));
    DATA.experiments.forEach(function (x) { root.appendChild(experimentCard(x)); });
  }
  function choicesOf(x) {
    if (x.id === "value_row") { return TOKENS; }
    if (x.id === "drop_scale") { return [T("drop_larger"), T("drop_same"), T("drop_smaller")]; }
    return [];
  }
  function numberIn(text) {  // a number as a person types it (1e6, .5, -2, 1,5 with a decimal comma), else null
    const t = String(text).trim().replace(",", ".");
    return /^[-+]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?$/i.test(t) && Number.isFinite(Number(t)) ? Number(t) : null;
  }
  function experimentCard(x) {
    const card = el("div", { cls: "card", id: "exp-" + x.id });
    card.appendChild(el("h3", { text: T("exp_" + x.id) }));
    card.appendChild(el("p", { text: T("exp_" + x.id + "_question") }));
    const earlier = remembered(x.id);
    const button = el("button", { type: "button", cls: "test", disabled: "disabled", text: T("record_and_test") });
    let read;
    if (x.kind === "choice") {
      const set = el("fieldset", {}, [el("legend", { cls: "muted", text: T("your_prediction") })]);
      choicesOf(x).forEach(function (label, k) {
        const input = el("input", { type: "radio", name: "guess-" + x.id, value: k, id: "guess-" + x.id + "-" + k, onchange: function () { button.disabled = false; } });
        if (earlier && earlier.prediction === k) { input.checked = true; button.disabled = false; }
        set.appendChild(el("label", { for: input.id }, [input, " " + label]));
        set.appendChild(document.createTextNode("  "));
      });
      card.appendChild(set);
      read = function () { const on = card.querySelector("input:checked"); return on ? Number(on.value) : null; };
    } else {
      // a text field read by the page, not type="number": a browser's number field takes "e" or "1e" silently as
      // no value at all, and the button then stays disabled with nothing to say why
      const hint = el("p", { cls: "hint", id: "hint-" + x.id, "aria-live": "polite", text: T("number_hint") });
      const input = el("input", { type: "text", inputmode: "decimal", autocomplete: "off", id: "guess-" + x.id, "aria-describedby": hint.id });
      const update = function () {
        const typed = input.value.trim(), value = numberIn(typed), wrong = typed !== "" && value === null;
        button.disabled = value === null;
        input.setAttribute("aria-invalid", wrong ? "true" : "false");
        hint.textContent = wrong ? T("not_a_number", { text: typed }) : T("number_hint");
        hint.classList.toggle("wrong", wrong);
      };
      input.addEventListener("input", update);
      if (earlier && earlier.prediction !== null && earlier.prediction !== undefined) { input.value = String(earlier.prediction); }
      input.addEventListener("keydown", function (e) { if (e.key === "Enter" && numberIn(input.value) !== null) { e.preventDefault(); button.click(); } });
      card.appendChild(el("label", { for: input.id }, [T("your_prediction")]));
      card.appendChild(document.createTextNode(" "));
      card.appendChild(input);
      card.appendChild(hint);
      update();
      read = function () { return numberIn(input.value); };
    }
    card.appendChild(el("p", {}, [button]));
    const reveal = el("div", { cls: "reveal", id: "reveal-" + x.id, "aria-live": "polite" });
    card.appendChild(reveal);
    if (earlier) { card.appendChild(el("p", { cls: "muted", text: T("earlier_prediction") })); }
    const show = function () {
      const guess = read();
      if (guess === null) { return; }
      remember(x.id, { prediction: guess });
      revealed[x.id] = guess;
      clear(reveal);
      revealExperiment(x, guess).forEach(function (n) { reveal.appendChild(n); });
    };
    button.addEventListener("click", show);
    if (revealed[x.id] !== undefined) { setTimeout(show, 0); }
    return card;
  }
  function revealExperiment(x, guess) {
    const nodes = [];
    const choices = choicesOf(x);
    nodes.push(el("p", { text: T("you_predicted", { prediction: x.kind === "choice" ? choices[guess] : String(guess) }) }));
    if (x.answer === null || x.answer === undefined) {
      nodes.push(el("p", { text: T("no_answer_yet") }));
      problems(x.problems, T("exp_" + x.id + "_what")).forEach(function (n) { nodes.push(n); });
    } else {
      const d = x.detail;
      // each sentence's fields, and the count its form follows (none for a sentence without a count)
      const said = {
        value_row: function () { return [{ token: TOKENS[x.answer], weight: fmt(d.weights[x.answer]), weights: d.weights.map(function (v) { return fmt(v); }).join(", ") }]; },
        drop_scale: function () { return [{ scaled: fmt(d.scaled, 3), unscaled: fmt(d.unscaled, 3), trials: d.trials, d_k: d.d_k, keys: T("n_keys", { count: d.keys }, d.keys) }, d.trials]; },
        mask_first_row: function () { return [{ weights: d.weights.map(function (v) { return fmt(num(v)); }).join(", "), self: fmt(num(x.answer)), zeros: T(d.exact_zeros.every(Boolean) ? "zeros_exact" : "zeros_not_exact") }]; },
        scores_1024: function () { return [{ count: count(x.answer), n: d.shape[0], allowed: d.allowed === null ? T("none_yet") : count(d.allowed) }, x.answer]; },
        cache_length: function () { return [{ length: T("n_keys", { count: x.answer }, x.answer), steps: d.steps, lengths: d.lengths.map(function (l, k) { return T("block_n", { n: k + 1 }) + ": " + l.join(", "); }).join("; ") }, d.steps]; },
      }[x.id]();
      nodes.push(el("p", { cls: "yours", text: T("exp_" + x.id + "_yours", said[0], said[1]) }));
      const tolerance = { mask_first_row: 0.01, scores_1024: 0.01 * x.answer, cache_length: 0 }[x.id];
      const match = x.kind === "choice" ? guess === x.answer : Math.abs(guess - num(x.answer)) <= tolerance;
      nodes.push(el("p", { cls: "verdict", text: T(match ? "prediction_matches" : "prediction_differs") }));
    }
    if (x.chapter) {
      const c = x.chapter;
      const values = x.id === "value_row" ? { weights: c.weights.map(function (v) { return fmt(v); }).join(", ") }
        : x.id === "drop_scale" ? { scaled: fmt(c.scaled, 3), unscaled: fmt(c.unscaled, 3) } : { millions: fmt(c.millions, 2), count: count(c.millions * 1e6) };
      const shown = x.id === "scores_1024" ? Math.round(c.millions * 100) / 100 : undefined;  // 1.05 (million): a fraction
      nodes.push(el("p", { cls: "chapter", text: T("exp_" + x.id + "_chapter", values, shown) }));
    }
    return nodes;
  }

  // ---- tabs, the time control, keyboard and the address's #state ----------------------------------------
  const TABS = [["stages", stageView], ["calibrator", calibratorView], ["tracker", trackerView], ["lens", lensView], ["cache", cacheView], ["predict", predictView]];
  function timeline() {
    if (state.tab === "stages") { return { n: STAGES.length, get: function () { return state.stage; }, set: function (k) { state.stage = k; }, label: function (k) { return T("time_stage", { k: k + 1, n: STAGES.length }); } }; }
    if (state.tab === "tracker") { const n = DATA.gpt.tokens.length; return { n: n, get: function () { return state.tracker.pos; }, set: function (k) { state.tracker.pos = k; }, label: function (k) { return T("time_position", { k: k, n: n - 1 }); } }; }
    if (state.tab === "cache") { const n = DATA.gpt.tokens.length; return { n: n, get: function () { return state.cache.step; }, set: function (k) { state.cache.step = k; }, label: function (k) { return T("time_step", { k: k, n: n - 1 }); } }; }
    return null;
  }
  function stepBy(delta) {
    const line = timeline();
    if (!line) { return false; }
    const next = line.get() + delta;
    if (next < 0 || next >= line.n) { return false; }
    line.set(next); draw(); return true;
  }
  function play() {
    if (state.playing) { clearInterval(state.playing); state.playing = null; drawTime(); return; }
    const line = timeline();
    if (!line) { return; }
    if (line.get() >= line.n - 1) { line.set(0); }
    state.playing = setInterval(function () { if (!stepBy(1)) { clearInterval(state.playing); state.playing = null; drawTime(); } }, 1400);
    draw();
  }
  function drawTime() {
    const bar = clear(document.getElementById("timebar"));
    const line = timeline();
    const back = el("button", { type: "button", id: "time-back", text: "\u25c0 " + T("step_back"), onclick: function () { stepBy(-1); } });
    const go = el("button", { type: "button", id: "time-play", "aria-pressed": String(!!state.playing), text: state.playing ? "\u275a\u275a " + T("pause") : "\u25b6 " + T("play"), onclick: play });
    const fwd = el("button", { type: "button", id: "time-forward", text: T("step_forward") + " \u25b6", onclick: function () { stepBy(1); } });
    [back, go, fwd].forEach(function (b) { if (!line) { b.disabled = true; } bar.appendChild(b); });
    bar.appendChild(el("span", { cls: "where", id: "time-where", text: line ? line.label(line.get()) : T("time_none") }));
    bar.appendChild(el("span", { cls: "keys", text: T("keys_help") }));
  }
  function drawTabs() {
    const bar = clear(document.getElementById("tabs"));
    TABS.forEach(function (tab) {
      const b = el("button", { type: "button", role: "tab", id: "tab-" + tab[0], "aria-selected": String(state.tab === tab[0]), "aria-controls": "panel", text: T("tab_" + tab[0]) + mark(tab[0]) });
      b.tabIndex = state.tab === tab[0] ? 0 : -1;
      b.addEventListener("click", function () { select(tab[0]); });
      b.addEventListener("keydown", function (e) {
        const k = TABS.findIndex(function (t) { return t[0] === state.tab; });
        if (e.key === "ArrowRight" || e.key === "ArrowLeft") {
          e.preventDefault();
          select(TABS[(k + (e.key === "ArrowRight" ? 1 : TABS.length - 1)) % TABS.length][0]);
          document.getElementById("tab-" + state.tab).focus();
        }
      });
      bar.appendChild(b);
    });
  }
  function mark(tab) {  // a tab whose views wait for code not written yet, or have a problem, says so
    const status = DATA.meta.status;
    const names = { stages: STAGES.map(function (s) { return "stage:" + s; }), calibrator: ["calibrator"], tracker: ["tracker"], lens: ["tracker"], cache: ["decode", "generate"], predict: [] }[tab];
    const found = names.map(function (n) { return status[n]; });
    if (found.indexOf("problem") >= 0) { return " \u26a0"; }
    if (found.indexOf("todo") >= 0) { return " \u2026"; }
    return "";
  }
  function select(tab) {
    if (state.playing) { clearInterval(state.playing); state.playing = null; }
    state.tab = tab; draw();
  }
  function draw() {
    drawTabs();
    drawTime();
    const panel = clear(document.getElementById("panel"));
    panel.setAttribute("aria-labelledby", "tab-" + state.tab);
    TABS.find(function (t) { return t[0] === state.tab; })[1](panel);
  }
  function summary() {
    const status = DATA.meta.status, names = Object.keys(status);
    const n = function (kind) { return names.filter(function (k) { return status[k] === kind; }).length; };
    document.getElementById("summary").textContent = T("summary", { ok: n("ok"), total: names.length, todo: n("todo"), problem: n("problem") });
  }
  function fromAddress() {
    const hash = window.location.hash.replace(/^#/, "");
    hash.split("&").forEach(function (part) {
      const kv = part.split("=");
      if (kv[0] === "tab" && TABS.some(function (t) { return t[0] === kv[1]; })) { state.tab = kv[1]; }
      if (kv[0] === "stage") { const k = STAGES.indexOf(kv[1]); if (k >= 0) { state.stage = k; } }
      if (kv[0] === "cell" && kv[1]) { state.cells[STAGES[state.stage]] = kv[1].split(",").map(Number); }
      if (kv[0] === "pos" && kv[1]) { state.tracker.pos = Math.min(Number(kv[1]), DATA.gpt.tokens.length - 1); }
      if (kv[0] === "step" && kv[1]) { state.cache.step = Math.min(Number(kv[1]), DATA.gpt.tokens.length - 1); }
    });
  }
  document.addEventListener("keydown", function (e) {
    const tag = (e.target.tagName || "").toLowerCase();
    if (tag === "input" || tag === "select" || tag === "textarea" || e.ctrlKey || e.metaKey || e.altKey) { return; }
    if (e.key === "[") { stepBy(-1); } else if (e.key === "]") { stepBy(1); } else if (e.key === "p") { play(); }
  });
  window.addEventListener("hashchange", function () { fromAddress(); draw(); });
  fromAddress();
  summary();
  draw();
  document.body.setAttribute("data-ready", "true");
})();
