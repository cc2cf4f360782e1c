// Appended to an eltrace HTML report by the browser tests (crates/cli/tests/e2e/browser_html/),
// after `window.eltraceTest = {zoom, search}` is set. It reads what the page rendered, then
// uses it as a user would, through DOM events: clicks the box of `zoom` on the canvas, hovers
// it, resets the zoom, switches to the flame-graph layout and the calls metric and zooms
// there, types `search` into the search box. Everything it saw goes, as URI-encoded JSON,
// into a hidden pre element (id test-result), which `chromium --dump-dom` shows. It ends
// zoomed on `zoom` with the search on, for the screenshot.
(function () {
  'use strict';
  const cfg = window.eltraceTest;
  const out = {};
  const $ = function (id) { return document.getElementById(id); };
  const column = function (table, k) {
    return Array.from(document.querySelectorAll('#' + table + ' tbody tr')).map(function (tr) {
      return tr.children[k].textContent.trim();
    });
  };
  function mouse(type, canvas, x, y) {
    canvas.dispatchEvent(new MouseEvent(type, { clientX: x, clientY: y, bubbles: true }));
  }
  function clickBox(canvas, node) {
    const r = window.eltraceReport.rect(node);
    // Mouse events have whole-pixel coordinates: a user cannot hit a thinner box either.
    if (!r || r.w < 2) throw new Error('box ' + node + ' is not drawn wide enough to click: ' + JSON.stringify(r));
    mouse('mousemove', canvas, r.x + r.w / 2, r.y + r.h / 2);
    mouse('click', canvas, r.x + r.w / 2, r.y + r.h / 2);
  }
  // Device pixels of the canvas that are not transparent (read from a copy, so the page's
  // canvas is never read back).
  function painted(canvas) {
    const copy = document.createElement('canvas');
    copy.width = canvas.width;
    copy.height = canvas.height;
    const c = copy.getContext('2d', { willReadFrequently: true });
    c.drawImage(canvas, 0, 0);
    const px = c.getImageData(0, 0, copy.width, copy.height).data;
    let n = 0;
    for (let k = 3; k < px.length; k += 4) if (px[k] !== 0) n++;
    return n;
  }
  try {
    const R = window.eltraceReport;
    const canvas = $('flame');
    const state = function () { return R.state(); };
    out.rendered = document.body.dataset.rendered || '';
    out.errors = $('errors').textContent;
    out.title = document.title;
    out.nodes = R.nodes;
    out.drawn = state().drawn;
    out.painted = painted(canvas);
    out.canvas = [canvas.width, canvas.height];
    out.functions = column('functions', 0);
    out.function_calls = column('functions', 2);
    out.threads = column('threads', 0);
    out.async = document.querySelector('#async tbody') ? column('async', 0) : [];
    out.async_counts = document.querySelector('#async tbody')
      ? [2, 3, 4, 5].map(function (k) { return column('async', k); }) : [];
    out.facts = {};
    document.querySelectorAll('#facts dl.facts:first-of-type dt').forEach(function (dt) {
      out.facts[dt.textContent] = dt.nextElementSibling.textContent;
    });
    out.warnings = Array.from(document.querySelectorAll('#warnings li')).map(function (li) { return li.textContent; });
    out.tree_note = $('tree-note').textContent;

    const ids = R.find(cfg.zoom);
    out.zoom_boxes = ids.length;
    const t0 = performance.now();
    clickBox(canvas, ids[0]);
    out.zoom_ms = performance.now() - t0;
    out.zoomed = R.label(state().zoom);
    out.zoomed_drawn = state().drawn;
    out.zoomed_painted = painted(canvas);
    out.crumbs = $('crumbs').textContent;
    out.details = $('details').textContent;

    $('reset-zoom').click();
    out.after_reset = R.label(state().zoom);
    out.after_reset_drawn = state().drawn;

    $('layout-flame').click();
    $('metric-calls').click();
    out.flame = [state().layout, state().metric, state().drawn];
    clickBox(canvas, ids[0]);
    out.flame_zoomed = R.label(state().zoom);
    $('layout-icicle').click();
    $('metric-time').click();

    const input = $('search');
    input.value = cfg.search;
    input.dispatchEvent(new Event('input', { bubbles: true }));
    out.matches = state().matches;
    out.search_result = $('search-result').textContent;
    out.search_functions = column('functions', 0);

    // Final state for the screenshot: zoomed on the box, the search highlighted.
    $('reset-zoom').click();
    clickBox(canvas, ids[0]);
    mouse('mouseleave', canvas, 0, 0);
  } catch (e) {
    out.exception = String((e && e.stack) || e);
  }
  const pre = document.createElement('pre');
  pre.id = 'test-result';
  pre.hidden = true;
  pre.textContent = encodeURIComponent(JSON.stringify(out));
  document.body.append(pre);
})();
