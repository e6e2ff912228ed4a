// The live view of a codecbus event bus: polls /metrics (Prometheus text)
// every second, parses it and shows each address's rate, pending queue,
// failures and request round trip, with charts of the last few minutes.
"use strict";

(function () {
  var POLL_MS = 1000;
  var HISTORY = 180; // points kept for the charts (three minutes at one a second)
  var COLORS = ["#2563eb", "#16a34a", "#dc2626", "#9333ea", "#ea580c", "#0891b2",
                "#ca8a04", "#db2777", "#4b5563", "#65a30d"];

  // The series prefix: `?prefix=NAME` on the page's address, otherwise
  // found in the text (the name before `_sent_total` or `_handlers`).
  var wantedPrefix = new URLSearchParams(window.location.search).get("prefix");

  // ---- Prometheus text ------------------------------------------------------

  // One sample line: name, optional {labels}, value (a timestamp may follow).
  function parseLine(line) {
    var i = 0;
    while (i < line.length && /[A-Za-z0-9_:]/.test(line[i])) i++;
    var name = line.slice(0, i);
    if (!name) return null;
    var labels = {};
    if (line[i] === "{") {
      i++;
      for (;;) {
        while (line[i] === " " || line[i] === ",") i++;
        if (line[i] === "}") { i++; break; }
        var eq = line.indexOf("=", i);
        if (eq < 0 || line[eq + 1] !== "\"") return null;
        var key = line.slice(i, eq).trim();
        var value = "";
        i = eq + 2;
        while (i < line.length && line[i] !== "\"") {
          if (line[i] === "\\" && i + 1 < line.length) {
            var next = line[i + 1];
            value += next === "n" ? "\n" : next;
            i += 2;
          } else {
            value += line[i++];
          }
        }
        if (i >= line.length) return null;
        i++; // closing quote
        labels[key] = value;
      }
    }
    var rest = line.slice(i).trim().split(/\s+/);
    var number = parseFloat(rest[0]);
    if (rest[0] === "+Inf") number = Infinity;
    else if (rest[0] === "-Inf") number = -Infinity;
    else if (rest[0] === "NaN") number = NaN;
    else if (isNaN(number)) return null;
    return { name: name, labels: labels, value: number };
  }

  function parseText(text) {
    var samples = [];
    text.split("\n").forEach(function (raw) {
      var line = raw.trim();
      if (!line || line[0] === "#") return;
      var sample = parseLine(line);
      if (sample) samples.push(sample);
    });
    return samples;
  }

  function findPrefix(samples) {
    if (wantedPrefix) return wantedPrefix;
    var suffixes = ["_sent_total", "_handlers", "_published_total", "_delivered_total"];
    for (var s = 0; s < suffixes.length; s++) {
      for (var i = 0; i < samples.length; i++) {
        var name = samples[i].name;
        if ("address" in samples[i].labels && name.endsWith(suffixes[s])) {
          return name.slice(0, name.length - suffixes[s].length);
        }
      }
    }
    return null;
  }

  // Per address: the numbers the table shows, from one scrape.
  function summarize(samples, prefix) {
    var byAddress = {};
    var head = prefix + "_";
    function entry(address) {
      if (!byAddress[address]) {
        byAddress[address] = {
          handlers: 0, pending: 0, sent: 0, published: 0, remote: 0, delivered: 0,
          replyFailures: 0, failureKinds: {}, refused: 0, refusedKinds: {},
          p50: null, p99: null, requests: 0
        };
      }
      return byAddress[address];
    }
    samples.forEach(function (sample) {
      if (!sample.name.startsWith(head)) return;
      var address = sample.labels.address;
      if (address === undefined) return;
      var field = sample.name.slice(head.length);
      var e = entry(address);
      var v = sample.value;
      switch (field) {
        case "handlers": e.handlers = v; break;
        case "pending": e.pending = v; break;
        case "sent_total": e.sent += v; break;
        case "published_total": e.published += v; break;
        case "received_total":
          if (sample.labels.side === "remote") e.remote += v;
          break;
        case "delivered_total": e.delivered += v; break;
        case "reply_failures_total":
          e.replyFailures += v;
          e.failureKinds[sample.labels.failure || "?"] = v;
          break;
        case "refused_total":
          e.refused += v;
          e.refusedKinds[sample.labels.reason || "?"] = v;
          break;
        case "request_time_seconds":
          if (sample.labels.quantile === "0.5") e.p50 = v;
          if (sample.labels.quantile === "0.99") e.p99 = v;
          break;
        case "request_time_seconds_count": e.requests = v; break;
        default: break;
      }
    });
    return byAddress;
  }

  // ---- formatting -----------------------------------------------------------

  function count(n) {
    return Math.round(n).toLocaleString("en-US");
  }

  function rate(n) {
    if (n === null) return "\u2013";
    if (n >= 100) return Math.round(n).toLocaleString("en-US");
    return n.toFixed(1);
  }

  function seconds(s, requests) {
    if (s === null || !isFinite(s) || !requests) return "\u2013";
    if (s < 1e-3) return (s * 1e6).toFixed(0) + " \u00b5s";
    if (s < 1) return (s * 1e3).toFixed(s < 0.01 ? 2 : 1) + " ms";
    return s.toFixed(2) + " s";
  }

  function kinds(map) {
    return Object.keys(map).filter(function (k) { return map[k] > 0; }).sort()
      .map(function (k) { return k + ": " + count(map[k]); }).join(", ");
  }

  // ---- state ----------------------------------------------------------------

  var previous = null; // { at, totals: {address: messages} }
  var colorOf = {};
  var nextColor = 0;
  var history = { t: [], rate: {}, pending: {} };
  var charts = { rate: null, pending: null, addresses: "" };

  function color(address) {
    if (!colorOf[address]) colorOf[address] = COLORS[nextColor++ % COLORS.length];
    return colorOf[address];
  }

  function messages(e) {
    return e.sent + e.published + e.remote;
  }

  function setStatus(state, text) {
    var status = document.getElementById("status");
    status.setAttribute("data-state", state);
    status.textContent = text;
  }

  function cell(row, field, text, kind, value, title) {
    var td = document.createElement("td");
    td.setAttribute("data-field", field);
    td.className = field === "address" ? "address" : "num";
    if (kind) {
      td.setAttribute("data-kind", kind);
      if (value > 0) td.classList.add("nonzero");
    }
    if (title) td.title = title;
    td.textContent = text;
    row.appendChild(td);
    return td;
  }

  function renderTable(addresses, byAddress, rates) {
    var body = document.getElementById("address-rows");
    var rows = document.createDocumentFragment();
    addresses.forEach(function (address) {
      var e = byAddress[address];
      var tr = document.createElement("tr");
      tr.setAttribute("data-address", address);
      var name = cell(tr, "address", "");
      var swatch = document.createElement("span");
      swatch.className = "swatch";
      swatch.style.background = color(address);
      name.appendChild(swatch);
      name.appendChild(document.createTextNode(address));
      cell(tr, "handlers", count(e.handlers));
      cell(tr, "rate", rate(rates[address]));
      cell(tr, "sent", count(e.sent));
      cell(tr, "published", count(e.published));
      cell(tr, "delivered", count(e.delivered));
      cell(tr, "pending", count(e.pending), "warn", e.pending);
      cell(tr, "reply_failures", count(e.replyFailures), "bad", e.replyFailures, kinds(e.failureKinds));
      cell(tr, "refused", count(e.refused), "bad", e.refused, kinds(e.refusedKinds));
      cell(tr, "p50", seconds(e.p50, e.requests));
      cell(tr, "p99", seconds(e.p99, e.requests));
      rows.appendChild(tr);
    });
    body.textContent = "";
    if (addresses.length === 0) {
      var empty = document.createElement("tr");
      empty.className = "empty";
      var td = document.createElement("td");
      td.colSpan = 11;
      td.textContent = "no address has been used yet";
      empty.appendChild(td);
      body.appendChild(empty);
    } else {
      body.appendChild(rows);
    }
  }

  function renderTotals(addresses, byAddress, rates) {
    var t = { rate: 0, sent: 0, published: 0, delivered: 0, pending: 0, reply_failures: 0, refused: 0 };
    var anyRate = false;
    addresses.forEach(function (address) {
      var e = byAddress[address];
      if (rates[address] !== null) { t.rate += rates[address]; anyRate = true; }
      t.sent += e.sent;
      t.published += e.published;
      t.delivered += e.delivered;
      t.pending += e.pending;
      t.reply_failures += e.replyFailures;
      t.refused += e.refused;
    });
    var totals = document.getElementById("totals");
    Object.keys(t).forEach(function (field) {
      var el = totals.querySelector('[data-field="' + field + '"]');
      el.textContent = field === "rate" ? rate(anyRate ? t.rate : null) : count(t[field]);
    });
  }

  // ---- charts ---------------------------------------------------------------

  function chartOptions(el, addresses, unit) {
    var series = [{}];
    addresses.forEach(function (address) {
      series.push({ label: address, stroke: color(address), width: 2, spanGaps: false,
                    value: function (u, v) { return v === null ? "\u2013" : v.toFixed(unit === "msg/s" ? 1 : 0); } });
    });
    return {
      width: Math.max(200, el.clientWidth),
      height: 240,
      series: series,
      scales: { x: { time: true }, y: { range: function (u, min, max) { return [0, Math.max(1, max * 1.1)]; } } },
      axes: [{ stroke: "#667382", grid: { stroke: "#eef1f4" } },
             { stroke: "#667382", grid: { stroke: "#eef1f4" }, label: unit, size: 60 }],
      legend: { live: false },
      cursor: { show: true }
    };
  }

  function chartData(addresses, key) {
    var data = [history.t.slice()];
    addresses.forEach(function (address) {
      var values = history[key][address] || [];
      // Pad at the front for an address first seen later.
      var padded = new Array(history.t.length - values.length).fill(null).concat(values);
      data.push(padded);
    });
    return data;
  }

  function renderCharts(addresses) {
    if (typeof uPlot === "undefined") return;
    var key = addresses.join("\u0000");
    var rateEl = document.getElementById("rate-chart");
    var pendingEl = document.getElementById("pending-chart");
    if (charts.addresses !== key || !charts.rate) {
      if (charts.rate) charts.rate.destroy();
      if (charts.pending) charts.pending.destroy();
      charts.rate = new uPlot(chartOptions(rateEl, addresses, "msg/s"), chartData(addresses, "rate"), rateEl);
      charts.pending = new uPlot(chartOptions(pendingEl, addresses, "pending"), chartData(addresses, "pending"), pendingEl);
      charts.addresses = key;
    } else {
      charts.rate.setData(chartData(addresses, "rate"));
      charts.pending.setData(chartData(addresses, "pending"));
    }
  }

  function remember(now, addresses, byAddress, rates) {
    history.t.push(now / 1000);
    addresses.forEach(function (address) {
      var r = history.rate[address] || (history.rate[address] = []);
      var p = history.pending[address] || (history.pending[address] = []);
      // Keep every address's list as long as the time list.
      while (r.length < history.t.length - 1) r.push(null);
      while (p.length < history.t.length - 1) p.push(null);
      r.push(rates[address]);
      p.push(byAddress[address].pending);
    });
    if (history.t.length > HISTORY) {
      var drop = history.t.length - HISTORY;
      history.t.splice(0, drop);
      Object.keys(history.rate).forEach(function (a) { history.rate[a].splice(0, drop); });
      Object.keys(history.pending).forEach(function (a) { history.pending[a].splice(0, drop); });
    }
  }

  // ---- polling --------------------------------------------------------------

  function update(text) {
    var now = Date.now();
    var samples = parseText(text);
    var prefix = findPrefix(samples);
    var byAddress = prefix ? summarize(samples, prefix) : {};
    var addresses = Object.keys(byAddress).sort();
    var rates = {};
    var totals = {};
    addresses.forEach(function (address) {
      var total = messages(byAddress[address]);
      totals[address] = total;
      rates[address] = null;
      if (previous && address in previous.totals && now > previous.at) {
        var delta = total - previous.totals[address];
        // A counter that went down was reset (a restarted process).
        rates[address] = delta >= 0 ? delta / ((now - previous.at) / 1000) : null;
      }
    });
    previous = { at: now, totals: totals };
    renderTotals(addresses, byAddress, rates);
    renderTable(addresses, byAddress, rates);
    remember(now, addresses, byAddress, rates);
    renderCharts(addresses);
    document.body.setAttribute("data-scrapes", String(Number(document.body.getAttribute("data-scrapes") || 0) + 1));
    setStatus("ok", "updated " + new Date(now).toLocaleTimeString("en-GB") +
      (prefix ? " \u00b7 series " + prefix + "_*" : " \u00b7 no bus series yet"));
  }

  function poll() {
    fetch("/metrics", { cache: "no-store" })
      .then(function (response) {
        if (!response.ok) throw new Error("HTTP " + response.status);
        return response.text();
      })
      .then(update)
      .catch(function (err) {
        setStatus("error", "cannot read /metrics: " + err.message);
      })
      .then(function () { setTimeout(poll, POLL_MS); });
  }

  window.addEventListener("resize", function () {
    charts.addresses = "";
  });

  poll();
})();
