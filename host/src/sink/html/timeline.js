// ttprof's timeline viewer: draws the zones and marks (events, data, sum zones) embedded in
// #ttprof-data on a canvas. Wheel: zoom around the pointer; drag or arrows: pan; shift+wheel
// or up/down: scroll lanes; 0 or "Reset": whole run; hover: what a zone or mark is.
(function () {
  "use strict";
  var D = JSON.parse(document.getElementById("ttprof-data").textContent);
  // lane, site, depth, start ns, duration ns, op (-1: none), start cycle, cycles (a cycle
  // count above 2^53 - 1 is a string of digits).
  var ZW = 9;
  var Z = D.zones, N = Z.length / ZW;
  // lane, site, kind, time ns, op (-1: none), cycle, a, b: data: a = value; sum zone: a =
  // total cycles, b = count. A cycle, value or total above 2^53 - 1 is a string of digits.
  var MW = 8;
  var M = D.marks || [], NM = M.length / MW;
  var ROW = 15, LABEL = 210, AXIS = 24, OPS = 18, GAP = 5;
  // A mark is a triangle at the top of its lane, its point at the mark's time.
  var MARK_W = 9, MARK_H = 7;
  var KINDS = ["event", "data", "sum zone"], KIND_COLOR = ["#7b1fa2", "#1565c0", "#d84315"];

  // Zones of each (lane, depth), in start order (at one depth they never overlap).
  var rows = D.lanes.map(function (l) { var r = []; for (var d = 0; d < l[2]; d++) r.push([]); return r; });
  for (var i = 0; i < N; i++) rows[Z[i * ZW]][Z[i * ZW + 2]].push(i);
  // Marks of each (lane, kind), in time order.
  var mrows = D.lanes.map(function () { return [[], [], []]; });
  for (var m = 0; m < NM; m++) mrows[M[m * MW]][M[m * MW + 2]].push(m);
  mrows.forEach(function (r) {
    r.forEach(function (arr) {
      for (var q = 1; q < arr.length; q++) {
        if (M[arr[q] * MW + 3] < M[arr[q - 1] * MW + 3]) {
          arr.sort(function (a, b) { return M[a * MW + 3] - M[b * MW + 3]; });
          break;
        }
      }
    });
  });

  // Lanes with zones or marks (one row at least), stacked below the time axis and the ops row.
  var shown = [], laneTop = [], laneH = [], y = AXIS + OPS + GAP;
  D.lanes.forEach(function (l, li) {
    var marks = mrows[li][0].length + mrows[li][1].length + mrows[li][2].length;
    if (l[2] > 0 || marks > 0) {
      shown.push(li); laneTop.push(y); laneH.push(Math.max(l[2], 1) * ROW); y += laneH[laneH.length - 1] + GAP;
    }
  });
  var contentH = y;

  // Critical paths (#ttprof-paths: [from lane name, chip, ns, to lane name, chip, ns]): an
  // arrow from each signal to the end of the wait it ended on another core.
  var P = [], pathsEl = document.getElementById("ttprof-paths");
  if (pathsEl) {
    var laneOf = {};
    D.lanes.forEach(function (l, li) { laneOf[l[1] + " " + l[0]] = li; });
    JSON.parse(pathsEl.textContent).forEach(function (a) {
      var f = laneOf[a[1] + " " + a[0]], t = laneOf[a[4] + " " + a[3]];
      if (f !== undefined && t !== undefined) P.push([f, a[2] - D.t0, t, a[5] - D.t0]);
    });
  }

  var canvas = document.getElementById("timeline"), ctx = canvas.getContext("2d");
  var tip = document.getElementById("tip");
  var W = 0, H = 0, v0 = 0, v1 = Math.max(D.span, 1), top = 0, stats = { drawn: 0, marks: 0 };

  function resize() {
    W = window.innerWidth;
    H = Math.max(100, window.innerHeight - document.querySelector("header").offsetHeight - 1);
    canvas.width = W; canvas.height = H;
    draw();
  }
  function xOf(t) { return LABEL + (t - v0) / (v1 - v0) * (W - LABEL); }
  function tOf(x) { return v0 + (x - LABEL) / (W - LABEL) * (v1 - v0); }

  var colors = {};
  function color(s) {
    if (colors[s] === undefined) {
      var h = 0, n = D.sites[s][0];
      for (var k = 0; k < n.length; k++) h = (h * 31 + n.charCodeAt(k)) >>> 0;
      colors[s] = "hsl(" + (h % 360) + ",60%,62%)";
    }
    return colors[s];
  }
  // 1500000 -> "1.5 ms" (at most three decimals, no trailing zeros).
  function fmtNs(ns) {
    var a = Math.abs(ns), u = a >= 1e9 ? [1e9, " s"] : a >= 1e6 ? [1e6, " ms"] : a >= 1e3 ? [1e3, " \u00b5s"] : [1, " ns"];
    return parseFloat((ns / u[0]).toFixed(u[0] === 1 ? 0 : 3)) + u[1];
  }
  // 1234567 or "1234567" (a u64 beyond 2^53 - 1) -> "1,234,567".
  function group(n) { return (typeof n === "string" ? n : Math.round(n).toString()).replace(/\B(?=(\d{3})+(?!\d))/g, ","); }
  function hex(n) { return "0x" + (typeof BigInt === "function" ? BigInt(n) : Number(n)).toString(16); }
  // A mean to one decimal: 10 -> "10", 10.333 -> "10.3".
  function mean(total, n) {
    var r = Math.round(Number(total) / n * 10) / 10, f = Math.round(r % 1 * 10);
    return group(Math.floor(r)) + (f ? "." + f : "");
  }
  function clipText(s, w) {
    var fit = Math.floor(w / 6.5);
    return fit <= 1 ? "" : s.length <= fit ? s : s.slice(0, fit - 1) + "\u2026";
  }
  // Text inside [x0, x1], cut at the box's right edge.
  function label(text, x0, x1, y, fill) {
    var left = Math.max(x0, LABEL) + 2, w = Math.min(x1, W) - left - 2;
    if (w < 12) return;
    ctx.save();
    ctx.beginPath(); ctx.rect(left, y - 11, w, 14); ctx.clip();
    ctx.fillStyle = fill;
    ctx.fillText(clipText(text, w), left, y);
    ctx.restore();
  }
  // First index of arr (zone ids at one depth) whose zone ends at or after t.
  function firstEnding(arr, t) {
    var lo = 0, hi = arr.length;
    while (lo < hi) { var m = (lo + hi) >> 1, z = arr[m] * ZW; if (Z[z + 3] + Z[z + 4] < t) lo = m + 1; else hi = m; }
    return lo;
  }
  // First index of arr (mark ids of one lane and kind), from `from` on, whose mark is at or
  // after t.
  function firstMark(arr, t, from) {
    var lo = from || 0, hi = arr.length;
    while (lo < hi) { var mid = (lo + hi) >> 1; if (M[arr[mid] * MW + 3] < t) lo = mid + 1; else hi = mid; }
    return lo;
  }
  // Time either side of a mark that its triangle (and a little more) covers.
  function markSlack() { return (MARK_W / 2 + 1) * (v1 - v0) / (W - LABEL); }
  function triangle(x, y) {
    ctx.moveTo(x - MARK_W / 2, y); ctx.lineTo(x + MARK_W / 2, y); ctx.lineTo(x, y + MARK_H); ctx.closePath();
  }
  // Lane li's marks on screen, one path per kind (sum zones on top). Marks each within 2 px
  // of the one before make one shape, the union of their triangles; finding where such a run
  // ends skips (binary search) past every mark within a pixel of the last, so a dense lane
  // costs a step per pixel, not per mark.
  function drawMarks(li, yl) {
    var slack = markSlack(), px = (v1 - v0) / (W - LABEL), h = MARK_W / 2;
    for (var kind = 0; kind < 3; kind++) {
      var arr = mrows[li][kind], n = 0, j = firstMark(arr, v0 - slack);
      if (j >= arr.length) continue;
      ctx.beginPath();
      while (j < arr.length) {
        var t = M[arr[j] * MW + 3];
        if (t > v1 + slack) break;
        var x0 = xOf(t), x1 = x0;
        for (j = firstMark(arr, t + px, j + 1); j < arr.length; j = firstMark(arr, t + px, j + 1)) {
          var x = xOf(M[arr[j] * MW + 3]);
          if (x - x1 > 2 || x > W + h + 1) break;
          x1 = x; t = M[arr[j] * MW + 3];
        }
        ctx.moveTo(x0 - h, yl); ctx.lineTo(x1 + h, yl); ctx.lineTo(x1, yl + MARK_H); ctx.lineTo(x0, yl + MARK_H); ctx.closePath();
        n++;
      }
      if (!n) continue;
      ctx.strokeStyle = "#fff"; ctx.lineWidth = 1.5; ctx.stroke(); ctx.lineWidth = 1;
      ctx.fillStyle = KIND_COLOR[kind]; ctx.fill();
      stats.marks += n;
    }
  }
  // Lane li's mark nearest to t within its triangle's reach, or -1 (a tie: the later kind).
  function markAt(li, t) {
    var slack = markSlack(), best = -1, bestD = Infinity;
    for (var kind = 2; kind >= 0; kind--) {
      var arr = mrows[li][kind], j = firstMark(arr, t);
      for (var c = Math.max(j - 1, 0); c <= j && c < arr.length; c++) {
        var d = Math.abs(M[arr[c] * MW + 3] - t);
        if (d <= slack && d < bestD) { bestD = d; best = arr[c]; }
      }
    }
    return best;
  }
  // The marks' colors in the box above the lane labels.
  function drawLegend() {
    if (!NM) return;
    ctx.fillStyle = "#f0f0f0"; ctx.fillRect(0, 0, LABEL, AXIS);
    ctx.font = "11px sans-serif";
    for (var kind = 0, x = 8; kind < 3; kind++) {
      ctx.beginPath(); triangle(x + MARK_W / 2, 6);
      ctx.fillStyle = KIND_COLOR[kind]; ctx.fill();
      ctx.fillStyle = "#333"; ctx.fillText(KINDS[kind], x + MARK_W + 3, 15);
      x += MARK_W + 3 + ctx.measureText(KINDS[kind]).width + 10;
    }
  }

  function drawAxis() {
    ctx.fillStyle = "#f0f0f0"; ctx.fillRect(0, 0, W, AXIS);
    var span = v1 - v0, step = Math.pow(10, Math.floor(Math.log10(span / 8)));
    if (span / step > 16) step *= 5; else if (span / step > 8) step *= 2;
    ctx.fillStyle = "#444"; ctx.strokeStyle = "#e4e4e4"; ctx.font = "11px sans-serif";
    for (var t = Math.ceil(v0 / step) * step; t <= v1; t += step) {
      var x = Math.round(xOf(t)) + 0.5;
      ctx.beginPath(); ctx.moveTo(x, AXIS - 6); ctx.lineTo(x, H); ctx.stroke();
      ctx.fillText("+" + fmtNs(t), x + 3, 14);
    }
  }
  function drawOps() {
    ctx.fillStyle = "#fafafa"; ctx.fillRect(LABEL, AXIS, W - LABEL, OPS);
    D.ops.forEach(function (o) {
      if (o[3] === null) return;
      var x0 = xOf(o[3]), x1 = Math.max(xOf(o[4]), x0 + 1);
      if (x1 < LABEL || x0 > W) return;
      ctx.fillStyle = "hsl(" + (o[1] * 67 % 360) + ",45%,55%)";
      ctx.fillRect(x0, AXIS + 2, x1 - x0, OPS - 4);
      stats.drawn++;
      if (x1 - x0 > 30) label(o[0], x0, x1, AXIS + OPS - 6, "#fff");
    });
  }
  function drawPaths() {
    ctx.strokeStyle = "#d32f2f"; ctx.fillStyle = "#d32f2f"; ctx.lineWidth = 1.5;
    P.forEach(function (a) {
      var kf = shown.indexOf(a[0]), kt = shown.indexOf(a[2]);
      if (kf < 0 || kt < 0) return;
      var x0 = xOf(a[1]), y0 = laneTop[kf] - top + ROW / 2, x1 = xOf(a[3]), y1 = laneTop[kt] - top + ROW / 2;
      ctx.beginPath(); ctx.moveTo(x0, y0); ctx.lineTo(x1, y1); ctx.stroke();
      var ang = Math.atan2(y1 - y0, x1 - x0);
      ctx.beginPath(); ctx.moveTo(x1, y1);
      ctx.lineTo(x1 - 7 * Math.cos(ang - 0.4), y1 - 7 * Math.sin(ang - 0.4));
      ctx.lineTo(x1 - 7 * Math.cos(ang + 0.4), y1 - 7 * Math.sin(ang + 0.4));
      ctx.closePath(); ctx.fill();
      stats.arrows++;
    });
    ctx.lineWidth = 1;
  }
  function draw() {
    stats = { drawn: 0, marks: 0, arrows: 0 };
    ctx.clearRect(0, 0, W, H);
    ctx.save();
    drawAxis();
    ctx.beginPath(); ctx.rect(LABEL, 0, W - LABEL, H); ctx.clip();
    drawOps();
    ctx.font = "11px sans-serif";
    for (var k = 0; k < shown.length; k++) {
      var li = shown[k], yl = laneTop[k] - top;
      if (yl > H || yl + laneH[k] < AXIS + OPS) continue;
      for (var d = 0; d < rows[li].length; d++) {
        var arr = rows[li][d], yr = yl + d * ROW, lastX = -1;
        if (yr + ROW < AXIS + OPS || yr > H) continue;
        for (var j = firstEnding(arr, v0); j < arr.length; j++) {
          var z = arr[j] * ZW, s = Z[z + 3];
          if (s > v1) break;
          var x0 = xOf(s), x1 = Math.max(xOf(s + Z[z + 4]), x0 + 1);
          // A zone that starts under the pixel just drawn and ends within a pixel of it waits
          // (a sliver that thin the canvas all but drops): a run of such zones is drawn a
          // whole pixel at a time, from where the last drawing ended.
          if (x0 < lastX && x1 < lastX + 1) continue;
          x0 = Math.max(x0, lastX);
          ctx.fillStyle = color(Z[z + 1]);
          ctx.fillRect(x0, yr + 1, x1 - x0, ROW - 2);
          stats.drawn++;
          lastX = x1;
          if (x1 - x0 > 24) label(D.sites[Z[z + 1]][0], x0, x1, yr + ROW - 4, "#111");
        }
      }
      if (yl >= AXIS + OPS) drawMarks(li, yl);
      ctx.strokeStyle = "#ddd";
      ctx.beginPath(); ctx.moveTo(LABEL, yl + laneH[k] + GAP / 2); ctx.lineTo(W, yl + laneH[k] + GAP / 2); ctx.stroke();
    }
    drawPaths();
    ctx.restore();
    // Lane labels.
    ctx.fillStyle = "#f7f7f7"; ctx.fillRect(0, AXIS, LABEL, H - AXIS);
    ctx.fillStyle = "#333"; ctx.font = "11px sans-serif";
    ctx.fillText("ops (device kernel)", 6, AXIS + OPS - 6);
    for (var q = 0; q < shown.length; q++) {
      var yy = laneTop[q] - top;
      if (yy < AXIS + OPS || yy > H) continue;
      var ln = D.lanes[shown[q]];
      ctx.fillText(clipText("chip " + ln[1] + " " + ln[0], LABEL - 8), 6, yy + 11);
    }
    drawLegend();
    document.body.dataset.drawn = stats.drawn;
    document.body.dataset.marks = stats.marks;
  }

  // What is under (x, y) in canvas coordinates: a tooltip text, or "".
  function describe(x, y) {
    if (x < LABEL) return "";
    var t = tOf(x), slack = (v1 - v0) / (W - LABEL);
    if (y >= AXIS && y < AXIS + OPS) {
      for (var i = 0; i < D.ops.length; i++) {
        var o = D.ops[i];
        if (o[3] !== null && o[3] - slack <= t && t <= o[4] + slack) return opText(o);
      }
      return "";
    }
    for (var k = 0; k < shown.length; k++) {
      var li = shown[k], dy = y + top - laneTop[k];
      if (dy < 0 || dy >= laneH[k]) continue;
      if (dy <= MARK_H + 1) {
        var mk = markAt(li, t);
        if (mk >= 0) return markText(mk);
      }
      var d = Math.floor(dy / ROW);
      if (d >= D.lanes[li][2]) return "";
      var arr = rows[li][d];
      for (var j = firstEnding(arr, t - slack); j < arr.length; j++) {
        var z = arr[j] * ZW;
        if (Z[z + 3] > t + slack) break;
        return zoneText(arr[j]);
      }
      return "";
    }
    return "";
  }
  function opText(o) {
    var s = "<b>" + esc(o[0]) + "</b>  (run " + o[1] + ", chip " + o[2] + ")\n";
    s += "device kernel: +" + fmtNs(o[3]) + " for " + group(o[4] - o[3]) + " ns\n";
    if (o[5] !== null) s += "host: +" + fmtNs(o[5]) + " for " + group(o[6] - o[5]) + " ns";
    return s;
  }
  function zoneText(i) {
    var z = i * ZW, lane = D.lanes[Z[z]], site = D.sites[Z[z + 1]], op = Z[z + 5] >= 0 ? D.ops[Z[z + 5]] : null;
    var s = "<b>" + esc(site[0]) + "</b>" + (site[1] ? "  " + esc(site[1]) : "") + "\n";
    s += "core: chip " + lane[1] + " " + esc(lane[0]) + "\n";
    s += "op: " + (op ? esc(op[0]) + " (run " + op[1] + ")" : "none") + "\n";
    s += "start: " + ((D.t0 + Z[z + 3]) / 1e3).toFixed(3) + " \u00b5s host (+" + fmtNs(Z[z + 3]) + "), cycle " + group(Z[z + 6]) + "\n";
    s += "duration: " + group(Z[z + 4]) + " ns, " + group(Z[z + 7]) + " cycles\n";
    if (Z[z + 8] >= 0) s += "value: " + group(Z[z + 8]) + " (" + hex(Z[z + 8]) + ")\n";
    s += "depth: " + Z[z + 2];
    return s;
  }
  function markText(i) {
    var m = i * MW, lane = D.lanes[M[m]], site = D.sites[M[m + 1]], kind = M[m + 2], op = M[m + 4] >= 0 ? D.ops[M[m + 4]] : null;
    var s = "<b>" + esc(site[0]) + "</b>" + (site[1] ? "  " + esc(site[1]) : "") + "\n";
    s += "kind: " + KINDS[kind] + "\n";
    s += "core: chip " + lane[1] + " " + esc(lane[0]) + "\n";
    s += "op: " + (op ? esc(op[0]) + " (run " + op[1] + ")" : "none") + "\n";
    s += "time: " + ((D.t0 + M[m + 3]) / 1e3).toFixed(3) + " \u00b5s host (+" + fmtNs(M[m + 3]) + "), cycle " + group(M[m + 5]);
    if (kind === 1) s += "\nvalue: " + group(M[m + 6]) + " (" + hex(M[m + 6]) + ")";
    if (kind === 2) {
      var n = M[m + 7];
      s += "\ncount: " + group(n) + " measurement" + (n === 1 ? "" : "s") + "\n";
      s += "total: " + group(M[m + 6]) + " cycles\n";
      s += "mean: " + (n > 0 ? mean(M[m + 6], n) + " cycles" : "none");
    }
    return s;
  }
  function esc(s) { return String(s).replace(/[&<>]/g, function (c) { return { "&": "&amp;", "<": "&lt;", ">": "&gt;" }[c]; }); }

  function setView(a, b) {
    var minSpan = 10, span = Math.max(b - a, minSpan), full = Math.max(D.span, 1);
    if (span > full * 1.2) { a = -full * 0.1; span = full * 1.2; }
    v0 = a; v1 = a + span; draw();
  }
  function zoomAt(factor, x) {
    var t = tOf(x);
    setView(t - (t - v0) / factor, t + (v1 - t) / factor);
  }
  function scrollBy(dy) {
    top = Math.min(Math.max(0, top + dy), Math.max(0, contentH - H + GAP)); draw();
  }
  function pos(e) { var r = canvas.getBoundingClientRect(); return [e.clientX - r.left, e.clientY - r.top]; }

  canvas.addEventListener("wheel", function (e) {
    e.preventDefault();
    var p = pos(e);
    if (e.shiftKey) scrollBy(e.deltaY); else zoomAt(Math.pow(1.0015, -e.deltaY), p[0]);
  }, { passive: false });
  var drag = null;
  canvas.addEventListener("mousedown", function (e) { drag = { p: pos(e), v0: v0, v1: v1, top: top }; });
  window.addEventListener("mouseup", function () { drag = null; });
  canvas.addEventListener("mousemove", function (e) {
    var p = pos(e);
    if (drag) {
      var dt = (p[0] - drag.p[0]) / (W - LABEL) * (drag.v1 - drag.v0);
      v0 = drag.v0 - dt; v1 = drag.v1 - dt;
      top = Math.min(Math.max(0, drag.top - (p[1] - drag.p[1])), Math.max(0, contentH - H + GAP));
      draw();
    }
    var text = describe(p[0], p[1]);
    if (!text) { tip.style.display = "none"; return; }
    tip.innerHTML = text;
    tip.style.display = "block";
    tip.style.left = Math.min(e.clientX + 14, window.innerWidth - tip.offsetWidth - 4) + "px";
    tip.style.top = Math.min(e.clientY + 14, window.innerHeight - tip.offsetHeight - 4) + "px";
  });
  canvas.addEventListener("mouseleave", function () { tip.style.display = "none"; });
  canvas.addEventListener("dblclick", function () { setView(0, D.span); });
  window.addEventListener("keydown", function (e) {
    var span = v1 - v0;
    if (e.key === "+" || e.key === "=") zoomAt(1.5, (W + LABEL) / 2);
    else if (e.key === "-") zoomAt(1 / 1.5, (W + LABEL) / 2);
    else if (e.key === "0") setView(0, D.span);
    else if (e.key === "ArrowLeft") setView(v0 - span / 10, v1 - span / 10);
    else if (e.key === "ArrowRight") setView(v0 + span / 10, v1 + span / 10);
    else if (e.key === "ArrowUp") scrollBy(-ROW * 4);
    else if (e.key === "ArrowDown") scrollBy(ROW * 4);
  });
  document.getElementById("zoom-in").onclick = function () { zoomAt(2, (W + LABEL) / 2); };
  document.getElementById("zoom-out").onclick = function () { zoomAt(0.5, (W + LABEL) / 2); };
  document.getElementById("reset").onclick = function () { setView(0, D.span); };
  window.addEventListener("resize", resize);
  document.getElementById("info").textContent = D.summary;
  resize();

  // Self-test for headless browsers (file.html#selftest): drives the real event handlers and
  // writes what happened into #selftest.
  if (location.hash === "#selftest") {
    // marksDrawn counts shapes: a run of marks under 2 px apart is one.
    var out = { zones: N, lanes: shown.length, drawn: stats.drawn, marks: NM, marksDrawn: stats.marks };
    // The tooltip of the first value zone (value_zone!), and of the first plain zone.
    for (var vz = 0; vz < N && Z[vz * ZW + 8] < 0; vz++);
    out.valueZone = vz < N ? zoneText(vz) : null;
    for (var pz = 0; pz < N && Z[pz * ZW + 8] >= 0; pz++);
    out.plainZone = pz < N ? zoneText(pz) : null;
    // Marks on the lanes whose top is in view (where drawMarks draws).
    out.marksInView = 0;
    for (var v = 0; v < shown.length; v++) {
      var yv = laneTop[v] - top;
      if (yv >= AXIS + OPS && yv <= H) out.marksInView += mrows[shown[v]][0].length + mrows[shown[v]][1].length + mrows[shown[v]][2].length;
    }
    var img = ctx.getImageData(LABEL, AXIS + OPS, W - LABEL, H - AXIS - OPS).data, painted = 0;
    for (var p = 0; p < img.length; p += 4) {
      var mx = Math.max(img[p], img[p + 1], img[p + 2]), mn = Math.min(img[p], img[p + 1], img[p + 2]);
      if (mx - mn > 40) painted++;
    }
    out.painted = painted;
    // Pixels of exactly each kind's mark color (a triangle's inside) in the lane area.
    var rgb = KIND_COLOR.map(function (c) { return [1, 3, 5].map(function (o) { return parseInt(c.substr(o, 2), 16); }); });
    function kindPixels() {
      var px = ctx.getImageData(LABEL, AXIS + OPS, W - LABEL, H - AXIS - OPS).data, n = [0, 0, 0];
      for (var q = 0; q < px.length; q += 4) {
        for (var c = 0; c < 3; c++) if (px[q] === rgb[c][0] && px[q + 1] === rgb[c][1] && px[q + 2] === rgb[c][2]) n[c]++;
      }
      return n;
    }
    out.markPixels = kindPixels();
    out.area = (W - LABEL) * (H - AXIS - OPS);
    // Hover the middle of the first lane's outermost zone that is at least 3 px wide (below
    // the marks at the lane's top).
    var r = canvas.getBoundingClientRect(), target = null;
    for (var a = 0; a < rows[shown[0]][0].length && !target; a++) {
      var zz = rows[shown[0]][0][a] * ZW, xa = xOf(Z[zz + 3]), xb = xOf(Z[zz + 3] + Z[zz + 4]);
      if (xb - xa >= 3 && xa >= LABEL && xb <= W) target = [(xa + xb) / 2, laneTop[0] - top + (MARK_H + 1 + ROW) / 2, rows[shown[0]][0][a]];
    }
    if (target) {
      canvas.dispatchEvent(new MouseEvent("mousemove", { clientX: r.left + target[0], clientY: r.top + target[1], bubbles: true }));
      out.hover = tip.textContent;
      out.hoverZone = target[2];
      out.hoverShown = tip.style.display;
      var before = v1 - v0;
      canvas.dispatchEvent(new WheelEvent("wheel", { deltaY: -400, clientX: r.left + target[0], clientY: r.top + target[1], bubbles: true, cancelable: true }));
      out.zoom = before / (v1 - v0);
      out.drawnZoomed = stats.drawn;
      canvas.dispatchEvent(new MouseEvent("mousemove", { clientX: r.left + target[0], clientY: r.top + target[1], bubbles: true }));
      out.hoverZoomed = tip.textContent;
      setView(0, D.span);
    }
    // Hover the first mark of each kind: in the whole run, then 40 ns around it (marks a
    // nanosecond apart are ~25 px apart there), its lane scrolled into view.
    out.hoverMarks = [null, null, null]; out.hoverMarksWhole = [null, null, null];
    out.hoverMarkShown = [null, null, null]; out.marksDrawnZoomed = [null, null, null]; out.markPixelsZoomed = [null, null, null];
    for (var kind = 0; kind < 3; kind++) {
      for (var b = 0; b < NM && (M[b * MW + 2] !== kind || shown.indexOf(M[b * MW]) < 0); b++);
      if (b === NM) continue;
      var kk = shown.indexOf(M[b * MW]), tm = M[b * MW + 3];
      top = Math.min(Math.max(0, laneTop[kk] - AXIS - OPS - GAP), Math.max(0, contentH - H + GAP));
      setView(0, D.span);
      var hx = r.left + xOf(tm), hy = r.top + laneTop[kk] - top + 2;
      canvas.dispatchEvent(new MouseEvent("mousemove", { clientX: hx, clientY: hy, bubbles: true }));
      out.hoverMarksWhole[kind] = tip.textContent;
      setView(tm - 20, tm + 20);
      out.marksDrawnZoomed[kind] = stats.marks;
      out.markPixelsZoomed[kind] = kindPixels();
      hx = r.left + xOf(tm);
      canvas.dispatchEvent(new MouseEvent("mousemove", { clientX: hx, clientY: hy, bubbles: true }));
      out.hoverMarks[kind] = tip.textContent;
      out.hoverMarkShown[kind] = tip.style.display;
    }
    top = 0;
    setView(0, D.span);
    out.arrows = P.length;
    out.arrowsDrawn = stats.arrows;
    document.getElementById("selftest").textContent = JSON.stringify(out);
  }
})();
