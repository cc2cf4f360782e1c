// eltrace HTML report: reads the JSON of #eltrace-data (its layout is described in
// crates/export/src/html.rs), draws the call tree on a canvas (icicle or flame graph, click to
// zoom, search) and fills the tables. Plain JavaScript, no libraries, nothing fetched.
(function () {
  'use strict';

  // Errors are shown on the page (and counted in body[data-errors]) instead of only in a
  // console nobody opens.
  const errorBox = document.getElementById('errors');
  function showError(msg) {
    errorBox.hidden = false;
    errorBox.textContent += msg + '\n';
    document.body.dataset.errors = String(Number(document.body.dataset.errors || 0) + 1);
  }
  window.addEventListener('error', function (e) {
    showError('Report script error: ' + e.message + (e.lineno ? ' (line ' + e.lineno + ')' : ''));
  });
  window.addEventListener('unhandledrejection', function (e) {
    showError('Report script error: ' + e.reason);
  });

  const D = JSON.parse(document.getElementById('eltrace-data').textContent);
  // Two views of the call tree: per thread (`tree`), or logical (`tree_logical`: each async
  // call under the call that awaited it, whatever thread ran it), chosen by the page's
  // `#logical`; the switch reloads the page with the other one.
  const LOGICAL = location.hash === '#logical' && !!D.tree_logical;
  const S = D.strings, T = LOGICAL ? D.tree_logical : D.tree, FN = D.functions, TH = D.threads, PR = D.processes;
  const N = T.parent.length;
  // A trace recorded without per-event times (`record --timing none`): the graph is weighted
  // by calls and no time is shown (its frames' spans are ordering times, not time). With
  // `--timing sampled` (`estimated`), the times are the sampler's estimates: shown with a `~`,
  // and only inclusive and exclusive ones (per-call and per-thread times are not known); the
  // logical tree has no estimates (it is weighted by calls).
  const EST = D.estimated === true && !LOGICAL;
  const TIMED = D.timed !== false || EST;
  const MEASURED = D.timed !== false;

  // ---- formatting ----
  // Three significant digits in the largest unit that keeps the number at least 1 once
  // rounded (999.6 ms is "1.00 s", not "1000 ms").
  const UNITS = [['ns', 1], ['µs', 1e3], ['ms', 1e6], ['s', 1e9]];
  function fmtNs(ns) {
    let k = 0;
    while (k + 1 < UNITS.length && ns >= 999.5 * UNITS[k][1]) k++;
    const v = ns / UNITS[k][1];
    const text = k === 0 ? String(Math.round(v)) : v < 9.995 ? v.toFixed(2) : v < 99.95 ? v.toFixed(1) : v.toFixed(0);
    return text + ' ' + UNITS[k][0];
  }
  // A time of the tree or the function rows: estimated ones are marked.
  function fmtT(ns) { return (EST ? '~' : '') + fmtNs(ns); }
  function fmtInt(n) { return Math.round(n).toLocaleString('en-US'); }
  function count(n, noun) { return fmtInt(n) + ' ' + noun + (n === 1 ? '' : noun.endsWith('x') ? 'es' : 's'); }
  function fmtPct(part, whole) {
    if (!whole) return '–';
    const p = 100 * part / whole;
    return (p >= 10 ? p.toFixed(1) : p >= 0.1 ? p.toFixed(2) : p > 0 ? '<0.1' : '0') + '%';
  }
  function fmtDate(unixNs) {
    if (!unixNs) return '';
    return new Date(unixNs / 1e6).toISOString().replace('T', ' ').replace(/\.\d+Z$/, ' UTC');
  }
  function el(tag, attrs, children) {
    const e = document.createElement(tag);
    if (attrs) for (const k in attrs) {
      if (k === 'text') e.textContent = attrs[k]; else if (k === 'cls') e.className = attrs[k]; else e.setAttribute(k, attrs[k]);
    }
    if (children) for (const c of children) e.append(c);
    return e;
  }
  const $ = function (id) { return document.getElementById(id); };

  // ---- the tree ----
  const kids = new Array(N);
  const depth = new Int32Array(N);
  const subCalls = new Float64Array(N);
  const labels = new Array(N);
  const lower = new Array(N);
  let maxDepth = 0;
  for (let i = 0; i < N; i++) {
    kids[i] = [];
    const p = T.parent[i];
    if (p >= 0) { kids[p].push(i); depth[i] = depth[p] + 1; }
    if (depth[i] > maxDepth) maxDepth = depth[i];
  }
  for (let i = N - 1; i >= 0; i--) {
    subCalls[i] += T.calls[i];
    if (T.parent[i] >= 0) subCalls[T.parent[i]] += subCalls[i];
  }
  function threadLabel(row) { return S[TH.label[row]]; }
  function processLabel(row) { const p = PR[row]; return (p.command || 'process') + ' (pid ' + p.pid + ')'; }
  function nodeLabel(i) {
    switch (T.kind[i]) {
      case 0: return 'all processes';
      case 1: return processLabel(T.ref[i]);
      case 2: return threadLabel(T.ref[i]);
      case 3: return S[FN.name[T.ref[i]]] + (T.thunk && T.thunk[i] ? ' [thunk]' : '');
      default: return 'other: ' + count(T.ref[i], 'smaller node');
    }
  }
  for (let i = 0; i < N; i++) { labels[i] = nodeLabel(i); lower[i] = labels[i].toLowerCase(); }
  // What a narrow box shows of a function: `Type.Method`, without the namespace.
  function shortLabel(i) {
    const name = labels[i];
    if (T.kind[i] !== 3) return name;
    let m = name.lastIndexOf('.');
    if (m > 0 && name[m - 1] === '.') m--; // `.ctor`, `.cctor`
    const t = m > 0 ? name.lastIndexOf('.', m - 1) : -1;
    return t >= 0 ? name.slice(t + 1) : name;
  }

  // Per width metric: children heaviest first and each node's offset from the root's start.
  const layouts = {};
  function layoutOf(metric) {
    if (layouts[metric]) return layouts[metric];
    const W = metric === 'time' ? T.incl : subCalls;
    const X = new Float64Array(N);
    const order = new Array(N);
    for (let i = 0; i < N; i++) {
      order[i] = kids[i].slice().sort(function (a, b) { return W[b] - W[a] || (labels[a] < labels[b] ? -1 : labels[a] > labels[b] ? 1 : 0); });
      let off = X[i];
      for (const c of order[i]) { X[c] = off; off += W[c]; }
    }
    return (layouts[metric] = { W: W, X: X, order: order });
  }

  // ---- the graph ----
  // Rows drawn at most: a canvas is limited to 32,767 device pixels in height.
  const ROW = 18, MIN_PX = 0.4;
  const MAX_ROWS = Math.floor(32000 / (ROW * Math.max(1, window.devicePixelRatio || 1)));
  const canvas = $('flame'), box = $('flame-box'), ctx = canvas.getContext('2d');
  const state = { layout: 'icicle', metric: TIMED ? 'time' : 'calls', zoom: 0, query: '', hover: -1 };
  let matches = new Uint8Array(N), matchCount = 0;
  let view = { Wpx: 0, H: 0, rows: 0, scale: 1, x0: 0 };
  const FONT = '12px ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace';
  ctx.font = FONT;
  const charW = ctx.measureText('abcdefghijklmnopqrstuvwxyz').width / 26 || 7;

  function hash(s) {
    let h = 2166136261;
    for (let k = 0; k < s.length; k++) { h ^= s.charCodeAt(k); h = Math.imul(h, 16777619); }
    return h >>> 0;
  }
  // Warm colours by name (one function, one colour), blue-grey for processes and threads.
  const baseColour = labels.map(function (name, i) {
    switch (T.kind[i]) {
      case 0: case 1: return '#9eb2d2';
      case 2: return '#bccbe3';
      case 4: return '#d3d3d3';
    }
    const h = hash(name);
    return 'rgb(' + (205 + h % 50) + ',' + (90 + (h >>> 8) % 130) + ',' + (40 + (h >>> 16) % 45) + ')';
  });
  function colour(i) {
    if (state.query && matches[i]) return '#cf4fd9';
    if (state.query && T.kind[i] === 3) return '#e6e2de';
    return baseColour[i];
  }
  // The zoomed box's ancestors, drawn faded across the whole width.
  let aboveZoom = new Uint8Array(N);
  function markAboveZoom() {
    aboveZoom = new Uint8Array(N);
    for (let a = T.parent[state.zoom]; a >= 0; a = T.parent[a]) aboveZoom[a] = 1;
  }

  function draw() {
    const L = layoutOf(state.metric);
    const Wpx = Math.max(320, box.clientWidth - 2);
    const rows = Math.min(maxDepth + 1, MAX_ROWS);
    const H = rows * ROW;
    const dpr = window.devicePixelRatio || 1;
    canvas.width = Math.round(Wpx * dpr);
    canvas.height = Math.round(H * dpr);
    canvas.style.width = Wpx + 'px';
    canvas.style.height = H + 'px';
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, Wpx, H);
    ctx.font = FONT;
    ctx.textBaseline = 'middle';
    const z = state.zoom;
    const span = L.W[z] > 0 ? L.W[z] : 1;
    view = { Wpx: Wpx, H: H, rows: rows, scale: Wpx / span, x0: L.X[z] };
    let drawn = 0;
    const stack = N > 0 ? [0] : [];
    while (stack.length) {
      const i = stack.pop();
      const w = L.W[i] * view.scale;
      if (w < MIN_PX || depth[i] >= rows) continue;
      const x = (L.X[i] - view.x0) * view.scale;
      if (x >= Wpx || x + w <= 0) continue;
      const left = Math.max(0, x), right = Math.min(Wpx, x + w);
      const y = state.layout === 'icicle' ? depth[i] * ROW : H - (depth[i] + 1) * ROW;
      ctx.globalAlpha = aboveZoom[i] ? 0.55 : 1;
      ctx.fillStyle = colour(i);
      ctx.fillRect(left, y, Math.max(right - left - (right - left > 3 ? 1 : 0), 0.5), ROW - 1);
      if (i === state.hover) {
        ctx.strokeStyle = '#1d1f23';
        ctx.strokeRect(left + 0.5, y + 0.5, Math.max(right - left - 2, 1), ROW - 2);
      }
      const chars = Math.floor((right - left - 6) / charW);
      if (chars >= 3) {
        let text = labels[i];
        if (text.length > chars) text = shortLabel(i);
        if (text.length > chars) text = text.slice(0, chars - 1) + '…';
        ctx.fillStyle = state.query && matches[i] ? '#ffffff' : '#1b1b1b';
        ctx.fillText(text, left + 3, y + ROW / 2);
      }
      drawn++;
      const order = L.order[i];
      for (let k = order.length - 1; k >= 0; k--) stack.push(order[k]);
    }
    ctx.globalAlpha = 1;
    canvas.dataset.nodes = String(N);
    canvas.dataset.drawn = String(drawn);
    canvas.dataset.zoom = z < N ? labels[z] : '';
    canvas.dataset.layout = state.layout;
    canvas.dataset.metric = state.metric;
    canvas.dataset.matches = String(matchCount);
    return drawn;
  }

  // The node under a point of the canvas (CSS pixels), -1 for none.
  function nodeAt(px, py) {
    if (N === 0) return -1;
    const L = layoutOf(state.metric);
    const row = state.layout === 'icicle' ? Math.floor(py / ROW) : Math.floor((view.H - py) / ROW);
    if (row < 0 || row >= view.rows || px < 0 || px >= view.Wpx) return -1;
    const u = view.x0 + px / view.scale;
    let i = 0;
    while (depth[i] < row) {
      let next = -1;
      for (const c of L.order[i]) if (u >= L.X[c] && u < L.X[c] + L.W[c]) { next = c; break; }
      if (next < 0) return -1;
      i = next;
    }
    return L.W[i] * view.scale >= MIN_PX ? i : -1;
  }

  // A node's box in client coordinates (for tests and tools), null when not drawn.
  function rectOf(i) {
    const L = layoutOf(state.metric);
    const x = (L.X[i] - view.x0) * view.scale, w = L.W[i] * view.scale;
    const left = Math.max(0, x), right = Math.min(view.Wpx, x + w);
    if (right - left < MIN_PX || depth[i] >= view.rows) return null;
    const y = state.layout === 'icicle' ? depth[i] * ROW : view.H - (depth[i] + 1) * ROW;
    const r = canvas.getBoundingClientRect();
    return { x: r.left + left, y: r.top + y, w: right - left, h: ROW - 1 };
  }

  function threadOf(i) {
    for (let a = i; a >= 0; a = T.parent[a]) if (T.kind[a] === 2) return a;
    return -1;
  }

  function showDetails(i) {
    const d = $('details');
    d.textContent = '';
    if (i < 0 || i >= N) return;
    const total = T.incl[0], zoomW = T.incl[state.zoom];
    const parts = [el('b', { text: labels[i] })];
    const add = function (s) { parts.push(document.createTextNode(' · ' + s)); };
    const kind = T.kind[i];
    if (kind === 3) {
      const r = T.ref[i];
      if (S[FN.module[r]]) add(S[FN.module[r]]);
      const t = threadOf(i);
      if (t >= 0) add('on ' + labels[t]);
    }
    if (TIMED) {
      add((EST ? 'estimated ' : '') + 'inclusive ' + fmtT(T.incl[i]) + ' (' + fmtPct(T.incl[i], total) + ' of all' +
          (state.zoom !== 0 ? ', ' + fmtPct(T.incl[i], zoomW) + ' of the zoomed box' : '') + ')');
      if (kind === 3 || kind === 4) add('exclusive ' + fmtT(T.excl[i]) + ' (' + fmtPct(T.excl[i], total) + ')');
    }
    if (kind === 3) {
      // An async method's frames are its segments (a call can have several).
      const what = FN.async[T.ref[i]] === 1 || FN.async[T.ref[i]] === 3 ? 'segment' : 'call';
      add(count(T.calls[i], what) + ' on this path' + (MEASURED && T.calls[i] ? ', ' + fmtNs(T.incl[i] / T.calls[i]) + ' each' : ''));
    }
    if (kind === 4) add('the ' + count(T.ref[i], 'node') + ' below this parent with the least time, merged: ' + count(T.calls[i], 'call'));
    add(count(subCalls[i], 'call') + ' in the subtree');
    if (kind === 3) {
      const r = T.ref[i];
      add('function in all: ' + count(FN.calls[r], 'call') + (TIMED ? ', inclusive ' + fmtT(FN.incl[r]) + ', exclusive ' + fmtT(FN.excl[r]) : ''));
    }
    for (const p of parts) d.append(p);
  }

  function crumbs() {
    const c = $('crumbs');
    c.textContent = '';
    const path = [];
    for (let a = state.zoom; a >= 0; a = T.parent[a]) path.unshift(a);
    if (path.length <= 1) { c.textContent = 'Whole tree shown. Click a box to zoom in.'; return; }
    c.append('Zoomed: ');
    path.forEach(function (a, k) {
      if (k > 0) c.append(' › ');
      const link = el('a', { text: labels[a], title: 'Zoom to ' + labels[a] });
      link.addEventListener('click', function () { zoomTo(a); });
      c.append(link);
    });
  }

  function zoomTo(i) {
    state.zoom = i >= 0 && i < N ? i : 0;
    markAboveZoom();
    crumbs();
    draw();
    showDetails(state.zoom);
  }

  function search(q) {
    state.query = q.trim().toLowerCase();
    matches = new Uint8Array(N);
    matchCount = 0;
    const out = $('search-result');
    if (state.query) {
      for (let i = 0; i < N; i++) if (lower[i].includes(state.query)) { matches[i] = 1; matchCount++; }
      // The share of the whole tree under matches (nested matches counted once).
      const L = layoutOf(state.metric);
      let covered = 0;
      const stack = N > 0 ? [0] : [];
      while (stack.length) {
        const i = stack.pop();
        if (matches[i]) { covered += L.W[i]; continue; }
        for (const c of kids[i]) stack.push(c);
      }
      out.textContent = count(matchCount, 'box') + (matchCount === 1 ? ' matches, ' : ' match, ') + fmtPct(covered, L.W[0]) +
        (state.metric === 'time' ? ' of the time' : ' of the calls');
    } else {
      out.textContent = '';
    }
    functionsTable.filter(state.query);
    draw();
  }

  canvas.addEventListener('mousemove', function (e) {
    const r = canvas.getBoundingClientRect();
    const i = nodeAt(e.clientX - r.left, e.clientY - r.top);
    if (i !== state.hover) { state.hover = i; draw(); showDetails(i >= 0 ? i : state.zoom); }
  });
  canvas.addEventListener('mouseleave', function () { state.hover = -1; draw(); showDetails(state.zoom); });
  canvas.addEventListener('click', function (e) {
    const r = canvas.getBoundingClientRect();
    const i = nodeAt(e.clientX - r.left, e.clientY - r.top);
    if (i >= 0) zoomTo(i);
  });
  function toggle(prefix, key, value) {
    state[key] = value;
    for (const b of document.querySelectorAll('[id^="' + prefix + '-"]')) b.classList.toggle('on', b.id === prefix + '-' + value);
  }
  $('layout-icicle').addEventListener('click', function () { toggle('layout', 'layout', 'icicle'); draw(); });
  $('layout-flame').addEventListener('click', function () { toggle('layout', 'layout', 'flame'); draw(); });
  $('metric-time').addEventListener('click', function () { toggle('metric', 'metric', 'time'); search($('search').value); });
  $('metric-calls').addEventListener('click', function () { toggle('metric', 'metric', 'calls'); search($('search').value); });
  if (EST) $('metric-time').title = 'Width: estimated inclusive time (from samples)';
  if (!TIMED) {
    $('metric-time').hidden = true;
    toggle('metric', 'metric', 'calls');
  }
  $('reset-zoom').addEventListener('click', function () { zoomTo(0); });
  $('search').addEventListener('input', function (e) { search(e.target.value); });
  document.addEventListener('keydown', function (e) {
    if (e.key === '/' && document.activeElement !== $('search')) { e.preventDefault(); $('search').focus(); }
    else if (e.key === 'Escape') { if (document.activeElement === $('search')) { $('search').value = ''; search(''); } else zoomTo(0); }
  });
  let resizeTimer = 0;
  window.addEventListener('resize', function () { clearTimeout(resizeTimer); resizeTimer = setTimeout(draw, 100); });

  // ---- tables ----
  // columns: {title, get(row) -> sort key, show(row) -> text or node, text: left-aligned, tip}
  function sortableTable(table, columns, rows, opts) {
    let sortCol = opts.sortCol, asc = false, limit = opts.limit, query = '';
    const more = opts.more ? $(opts.more) : null;
    const head = el('tr');
    columns.forEach(function (c, k) {
      const th = el('th', { text: c.title, cls: c.text ? 'text' : '', title: c.tip || 'Sort by ' + c.title });
      th.addEventListener('click', function () { if (sortCol === k) asc = !asc; else { sortCol = k; asc = !!c.text; } render(); });
      head.append(th);
    });
    const tbody = el('tbody');
    table.append(el('thead', null, [head]), tbody);
    function render() {
      head.querySelectorAll('th').forEach(function (th, k) { th.className = (columns[k].text ? 'text ' : '') + (k === sortCol ? 'sorted' + (asc ? ' asc' : '') : ''); });
      const key = columns[sortCol].get;
      let list = rows.filter(function (r) { return !query || opts.match(r, query); });
      list.sort(function (a, b) { const x = key(a), y = key(b), c = x < y ? -1 : x > y ? 1 : 0; return (asc ? c : -c) || a - b; });
      const shown = limit ? list.slice(0, limit) : list;
      tbody.textContent = '';
      for (const r of shown) {
        const tr = el('tr');
        for (const c of columns) {
          const v = c.show(r);
          const td = el('td', { cls: (c.cls ? c.cls(r) + ' ' : '') + (c.text ? 'text' : '') });
          td.append(v);
          tr.append(td);
        }
        if (opts.onClick) tr.addEventListener('click', function () { opts.onClick(r); });
        tbody.append(tr);
      }
      if (more) {
        more.hidden = !limit || list.length <= limit;
        more.textContent = 'Show all ' + fmtInt(list.length) + ' rows';
      }
      table.dataset.rows = String(shown.length);
    }
    if (more) more.addEventListener('click', function () { limit = 0; render(); });
    render();
    return { filter: function (q) { query = q; render(); }, render: render };
  }
  function bar(part, whole) {
    const span = el('span', { cls: 'bar' });
    span.style.width = Math.round(40 * (whole ? part / whole : 0)) + 'px';
    return span;
  }
  const range = function (n) { return Array.from({ length: n }, function (_, i) { return i; }); };
  const total = N > 0 ? T.incl[0] : 0;
  const nFn = FN.name.length;

  // Columns of time (`time: true`) are left out of a timeless trace's tables; of a sampled
  // trace's, all but the estimated ones (`est: true`).
  const timeless = function (columns) { return columns.filter(function (c) { return MEASURED ? true : EST ? !c.time || c.est : !c.time; }); };
  const ESTTIP = EST ? ' (estimated from samples: record --timing sampled)' : '';
  const sortBy = function (columns, timed, other) {
    const at = function (title) { return columns.findIndex(function (c) { return c.title === title; }); };
    return TIMED && at(timed) >= 0 ? at(timed) : at(other);
  };
  const fnColumns = timeless([
    { title: 'Function', text: true, get: function (r) { return S[FN.name[r]]; }, show: function (r) { return S[FN.name[r]]; }, cls: function () { return 'name'; } },
    { title: 'Module', text: true, get: function (r) { return S[FN.module[r]]; }, show: function (r) { return S[FN.module[r]]; } },
    { title: 'Calls', get: function (r) { return FN.calls[r]; }, show: function (r) { return fmtInt(FN.calls[r]); } },
    { title: 'Inclusive', time: true, est: true, tip: 'Time in the function and its callees (recursion counted once)' + ESTTIP, get: function (r) { return FN.incl[r]; }, show: function (r) { return fmtT(FN.incl[r]); } },
    { title: '%', time: true, est: true, tip: 'Inclusive time, share of all threads\u2019 time' + ESTTIP, get: function (r) { return FN.incl[r]; }, show: function (r) { const f = document.createDocumentFragment(); f.append(bar(FN.incl[r], total), fmtPct(FN.incl[r], total)); return f; } },
    { title: 'Exclusive', time: true, est: true, tip: 'Time in the function itself' + ESTTIP, get: function (r) { return FN.excl[r]; }, show: function (r) { return fmtT(FN.excl[r]); } },
    { title: 'Excl %', time: true, est: true, get: function (r) { return FN.excl[r]; }, show: function (r) { return fmtPct(FN.excl[r], total); } },
    { title: 'Mean', time: true, tip: 'Inclusive time per call', get: function (r) { return FN.calls[r] ? FN.incl[r] / FN.calls[r] : 0; }, show: function (r) { return FN.calls[r] ? fmtNs(FN.incl[r] / FN.calls[r]) : '–'; } },
    { title: 'Max', time: true, tip: 'Longest single frame', get: function (r) { return FN.max[r]; }, show: function (r) { return fmtNs(FN.max[r]); } },
    { title: 'Unwound', tip: 'Frames ended by an exception', get: function (r) { return FN.unwound[r]; }, show: function (r) { return FN.unwound[r] ? fmtInt(FN.unwound[r]) : ''; } },
    { title: 'Open', tip: 'Frames still open when the trace ended', get: function (r) { return FN.open[r]; }, show: function (r) { return FN.open[r] ? fmtInt(FN.open[r]) : ''; } },
  ]);
  const functionsTable = sortableTable($('functions'), fnColumns, range(nFn).filter(function (r) { return FN.calls[r] > 0; }), {
    sortCol: sortBy(fnColumns, 'Inclusive', 'Calls'), limit: 100, more: 'functions-more',
    match: function (r, q) { return S[FN.name[r]].toLowerCase().includes(q); },
    onClick: function (r) { $('search').value = S[FN.name[r]]; search(S[FN.name[r]]); $('flame-section').scrollIntoView(); },
  });

  const threadNode = new Map();
  for (let i = 0; i < N; i++) if (T.kind[i] === 2) threadNode.set(T.ref[i], i);
  let t0 = Infinity;
  TH.first.forEach(function (v, k) { if (TH.events[k] > 0 && v < t0) t0 = v; });
  const rel = function (ns) { return isFinite(t0) ? fmtNs(Math.max(0, ns - t0)) : ''; };
  const threadColumns = timeless([
    { title: 'Thread', text: true, get: function (r) { return threadLabel(r); }, show: function (r) { return threadLabel(r); } },
    { title: 'Events', get: function (r) { return TH.events[r]; }, show: function (r) { return fmtInt(TH.events[r]); } },
    { title: 'Frames', get: function (r) { return TH.frames[r]; }, show: function (r) { return fmtInt(TH.frames[r]); } },
    { title: 'Time in frames', time: true, tip: 'Sum of the thread\u2019s root frames', get: function (r) { return TH.incl[r]; }, show: function (r) { return fmtNs(TH.incl[r]); } },
    { title: '%', time: true, get: function (r) { return TH.incl[r]; }, show: function (r) { const f = document.createDocumentFragment(); f.append(bar(TH.incl[r], total), fmtPct(TH.incl[r], total)); return f; } },
    { title: 'Max depth', get: function (r) { return TH.depth[r]; }, show: function (r) { return String(TH.depth[r]); } },
    { title: 'First event', time: true, tip: 'Since the trace\u2019s first event', get: function (r) { return TH.first[r]; }, show: function (r) { return TH.events[r] ? rel(TH.first[r]) : ''; } },
    { title: 'Last event', time: true, get: function (r) { return TH.last[r]; }, show: function (r) { return TH.events[r] ? rel(TH.last[r]) : ''; } },
    { title: 'Throws', get: function (r) { return TH.throws[r]; }, show: function (r) { return TH.throws[r] ? fmtInt(TH.throws[r]) : ''; } },
    { title: 'Open at end', get: function (r) { return TH.open[r]; }, show: function (r) { return TH.open[r] ? fmtInt(TH.open[r]) : ''; } },
    { title: 'Dropped', tip: 'Events lost to a full buffer', get: function (r) { return TH.dropped[r]; }, show: function (r) { return TH.dropped[r] ? fmtInt(TH.dropped[r]) : ''; }, cls: function (r) { return TH.dropped[r] ? 'warn-cell' : ''; } },
  ].concat(TH.waits ? [
    { title: 'Waits', tip: 'Times the thread waited for the trace writer, and how long in all', get: function (r) { return TH.wait_ns[r]; }, show: function (r) { return TH.waits[r] ? fmtInt(TH.waits[r]) + ' (' + fmtNs(TH.wait_ns[r]) + ')' : ''; }, cls: function (r) { return TH.waits[r] ? 'warn-cell' : ''; } },
  ] : []));
  if (PR.length > 1) {
    const pid = function (r) { return PR[TH.process[r]].pid; };
    threadColumns.splice(1, 0, { title: 'Process', tip: 'The process\u2019s pid', get: pid, show: function (r) { return String(pid(r)); } });
  }
  sortableTable($('threads'), threadColumns, range(TH.tid.length), {
    sortCol: sortBy(threadColumns, 'Time in frames', 'Events'), limit: 200, more: 'threads-more', match: function () { return true; },
    onClick: function (r) { if (threadNode.has(r)) { zoomTo(threadNode.get(r)); $('flame-section').scrollIntoView(); } },
  });

  const asyncRows = range(nFn).filter(function (r) { return FN.async[r] !== 0 && FN.calls[r] > 0; });
  const asyncKind = function (r) {
    switch (FN.async[r]) {
      case 1: return 'runtime async';
      case 2: return 'runtime-async thunk';
      default: return 'state machine of ' + S[FN.method[r]];
    }
  };
  const asyncTable = $('async');
  if (asyncRows.length === 0) {
    asyncTable.replaceWith(el('p', { id: 'async', cls: 'note', text: 'No async methods in this trace.' }));
  } else {
    const asyncColumns = timeless([
      { title: 'Method', text: true, get: function (r) { return S[FN.name[r]]; }, show: function (r) { return S[FN.name[r]]; }, cls: function () { return 'name'; } },
      { title: 'Kind', text: true, get: asyncKind, show: asyncKind },
      { title: 'Calls', get: function (r) { return FN.calls[r]; }, show: function (r) { return fmtInt(FN.calls[r]); } },
      { title: 'Segments', get: function (r) { return FN.segments[r]; }, show: function (r) { return fmtInt(FN.segments[r]); } },
      { title: 'Resumes', get: function (r) { return FN.resumes[r]; }, show: function (r) { return fmtInt(FN.resumes[r]); } },
      { title: 'Suspensions', get: function (r) { return FN.suspensions[r]; }, show: function (r) { return fmtInt(FN.suspensions[r]); } },
      { title: 'Wall', time: true, tip: 'Sum over calls of first segment start to last segment end', get: function (r) { return FN.wall[r]; }, show: function (r) { return FN.wall[r] ? fmtNs(FN.wall[r]) : ''; } },
      { title: 'Mean wall', time: true, get: function (r) { return FN.calls[r] ? FN.wall[r] / FN.calls[r] : 0; }, show: function (r) { return FN.wall[r] && FN.calls[r] ? fmtNs(FN.wall[r] / FN.calls[r]) : ''; } },
      { title: 'CPU', time: true, tip: 'Inclusive time of the segments', get: function (r) { return FN.incl[r]; }, show: function (r) { return fmtNs(FN.incl[r]); } },
      { title: 'Pending at end', get: function (r) { return FN.pending[r]; }, show: function (r) { return FN.pending[r] ? fmtInt(FN.pending[r]) : ''; } },
      { title: 'By order', tip: 'Resumes linked to a call by order alone (several calls were waiting)', get: function (r) { return FN.inferred[r]; }, show: function (r) { return FN.inferred[r] ? fmtInt(FN.inferred[r]) : ''; } },
      { title: 'Ambiguous', tip: 'Enters counted as calls that may have been resumes', get: function (r) { return FN.ambiguous[r]; }, show: function (r) { return FN.ambiguous[r] ? fmtInt(FN.ambiguous[r]) : ''; }, cls: function (r) { return FN.ambiguous[r] ? 'warn-cell' : ''; } },
    ]);
    sortableTable(asyncTable, asyncColumns, asyncRows, { sortCol: sortBy(asyncColumns, 'Wall', 'Calls'), limit: 0, match: function () { return true; } });
  }

  // ---- facts and warnings ----
  const warnings = $('warnings');
  const warn = function (text) { warnings.append(el('li', { text: text })); };
  const facts = $('facts');
  PR.forEach(function (p, k) {
    // With several processes, a warning says which one it is about.
    const warnOf = function (text) { warn(PR.length > 1 ? processLabel(k) + ': ' + text : text); };
    if (p.dropped_events > 0) warnOf(fmtInt(p.dropped_events) + ' events were dropped (a thread\u2019s buffer was full): the affected stacks were cut at the drop.');
    if (p.truncated) warnOf('The trace was cut short (no end record): the process was killed or the trace could not be finished.');
    if (p.internal_errors > 0) warnOf('The profiler counted ' + fmtInt(p.internal_errors) + ' internal errors (see the diagnostics under Facts).');
    if (p.vanished_frames > 0) warnOf(fmtInt(p.vanished_frames) + ' frames ended without a Leave.');
    const waits = p.waits || 0, waitNs = p.wait_ns || 0;
    if (waits > 0) warnOf('Threads waited ' + count(waits, 'time') + ' for the trace writer (' + fmtNs(waitNs) + ' in all): the recording slowed them down there (it loses no event; record --lossy drops events instead of waiting).');
    const rows = [
      ['Process', 'pid ' + p.pid], ['Command', p.command], ['Runtime', p.runtime], ['Hooks', p.hook_mode],
      ['Recorded', fmtDate(p.start_unix_ns)], ['Duration', fmtNs(p.duration_ns)],
      ['Time in frames', MEASURED ? fmtNs(p.root_ns) + ' (all threads)' : ''],
      ['Events', fmtInt(p.events) + (p.analysed_events !== p.events ? ' (' + fmtInt(p.analysed_events) + ' analysed)' : '')],
      ['Threads', fmtInt(p.threads)], ['Functions', fmtInt(p.functions_called) + ' called of ' + fmtInt(p.functions) + ' seen'],
      ['Frames', fmtInt(p.frames)], ['Async logical calls', fmtInt(p.logical_calls)], ['Exceptions thrown', fmtInt(p.throws)],
      ['Dropped events', fmtInt(p.dropped_events), p.dropped_events > 0],
      ['Waits for the trace writer', fmtInt(waits) + (waits > 0 ? ' (' + fmtNs(waitNs) + ')' : ''), waits > 0],
      ['Truncated', p.truncated ? 'yes' : 'no', p.truncated], ['End', p.end_reason, p.end_reason === 'abort' || p.end_reason === 'none'],
      ['Profiler internal errors', fmtInt(p.internal_errors), p.internal_errors > 0],
      ['Frames open at end', fmtInt(p.open_frames_at_end)], ['Mismatched frames', fmtInt(p.mismatched_frames)],
      ['Unmatched leaves', fmtInt(p.unmatched_leaves)], ['Frames lost to drops', fmtInt(p.lost_frames), p.lost_frames > 0],
      ['Async suspensions', fmtInt(p.suspended_frames)], ['Vanished frames', fmtInt(p.vanished_frames), p.vanished_frames > 0],
    ];
    const dl = el('dl', { cls: 'facts' });
    for (const r of rows) if (r[1] !== '') dl.append(el('dt', { text: r[0] }), el('dd', { text: r[1], cls: r[2] ? 'bad' : '' }));
    if (PR.length > 1) facts.append(el('h3', { text: processLabel(k) }));
    facts.append(dl);
    if (p.diagnostics.length) {
      facts.append(el('details', { open: '' }, [el('summary', { text: 'Profiler diagnostics (' + p.diagnostics.length + ')' }),
        el('pre', { text: p.diagnostics.join('\n') })]));
    }
    if (p.extra.length) {
      const x = el('dl', { cls: 'facts' });
      for (const kv of p.extra) x.append(el('dt', { text: kv[0] }), el('dd', { text: kv[1] }));
      facts.append(el('details', null, [el('summary', { text: 'Recording settings' }), x]));
    }
  });
  const cap = LOGICAL ? D.tree_logical_cap : D.tree_cap;
  let note = fmtInt(cap.total) + (LOGICAL
    ? ' logical call-tree nodes (each async call under the call that awaited it, whatever thread ran its segments; calls count calls, times are the segments\u2019 own).'
    : ' call-tree nodes (paths per thread).');
  if (cap.hidden > 0) {
    note = 'The call tree has ' + fmtInt(cap.total) + ' nodes, more than this report holds (' + fmtInt(cap.max) +
      '): the nodes of largest time are shown and, under each, the ' + fmtInt(cap.hidden) + ' others are merged into \u201cother\u201d boxes.';
    warn(note);
  }
  $('tree-note').textContent = note + (maxDepth + 1 > MAX_ROWS ? ' Stacks deeper than ' + MAX_ROWS + ' are cut in the graph.' : '') +
    (EST ? ' Times (~) are estimates from samples (record --timing sampled): paths no sample saw have none; calls are exact.' : '');
  const fcap = D.functions_cap;
  $('functions-note').textContent = fcap.shown < fcap.total
    ? 'The report holds ' + fmtInt(fcap.shown) + ' of ' + fmtInt(fcap.total) + ' functions: the top ' + fmtInt(fcap.per_key) + ' by inclusive time, exclusive time and calls, and those the graph shows. Click a row to find it in the graph.'
    : 'Each row merges the functions of one name and module. Click a row to find it in the graph.';
  if (PR.length === 1) {
    const p = PR[0];
    $('subtitle').textContent = ['pid ' + p.pid, p.runtime, p.hook_mode, fmtDate(p.start_unix_ns), fmtNs(p.duration_ns),
      fmtInt(p.events) + ' events', fmtInt(p.threads) + ' threads'].filter(Boolean).join(' · ');
  } else if (PR.length > 1) {
    const sum = function (key) { return PR.reduce(function (n, p) { return n + p[key]; }, 0); };
    $('subtitle').textContent = [fmtInt(PR.length) + ' processes (pids ' + PR.map(function (p) { return p.pid; }).join(', ') + ')',
      fmtDate(Math.min.apply(null, PR.map(function (p) { return p.start_unix_ns; }))),
      fmtInt(sum('events')) + ' events', fmtInt(sum('threads')) + ' threads'].filter(Boolean).join(' · ');
  }

  // ---- the view switch ----
  const viewThreads = $('view-threads'), viewLogical = $('view-logical');
  if (!D.tree_logical) {
    viewLogical.disabled = true;
    viewLogical.title = 'No logical call tree in this report';
  }
  viewThreads.classList.toggle('on', !LOGICAL);
  viewLogical.classList.toggle('on', LOGICAL);
  function switchView(logical) {
    if (logical === LOGICAL) return;
    history.replaceState(null, '', logical ? '#logical' : '#');
    location.reload();
  }
  viewThreads.addEventListener('click', function () { switchView(false); });
  viewLogical.addEventListener('click', function () { switchView(true); });

  // ---- first picture ----
  crumbs();
  draw();
  showDetails(0);
  // For tools and tests: read-only views of the graph and the two interactions.
  window.eltraceReport = {
    nodes: N,
    view: LOGICAL ? 'logical' : 'threads',
    label: function (i) { return labels[i]; },
    parent: function (i) { return T.parent[i]; },
    find: function (name) { return range(N).filter(function (i) { return labels[i] === name; }); },
    rect: rectOf,
    state: function () { return { layout: state.layout, metric: state.metric, zoom: state.zoom, query: state.query, matches: matchCount, drawn: Number(canvas.dataset.drawn) }; },
  };
  document.body.dataset.rendered = 'yes';
})();
