// amt-local's page: tuning jobs side by side (#/compare/<name>,<name>,...), and two views of one
// tuning job's trials: parallel coordinates and hyperparameter importance. Uses dom.js and
// charts.js (finalObjective, launchOrder, bestSoFar, rangesOf, INTEGER_STEPS).
"use strict";

// One colour per compared tuning job (Okabe-Ito, readable on white).
const JOB_COLOURS = ["#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00", "#56b4e9", "#000000"];

const SVG_NS = "http://www.w3.org/2000/svg";

// `node` with inline styles set through the CSSOM (the page's Content-Security-Policy refuses
// style attributes in markup, not styles set by its own script).
function styled(node, styles) {
  Object.assign(node.style, styles);
  return node;
}

// A coloured key for the i-th compared tuning job.
function jobKey(i, text) {
  return styled(el("span", {class: "key"}, text), {color: JOB_COLOURS[i % JOB_COLOURS.length]});
}

function svgEl(tag, attributes, text) {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attributes)) node.setAttribute(k, v);
  if (text !== undefined) node.textContent = text;
  return node;
}

// Seconds a training job trained (TrainingStartTime to TrainingEndTime), 0 when it never did.
function trainingSeconds(summary) {
  const start = Number(summary.TrainingStartTime);
  const end = Number(summary.TrainingEndTime);
  return Number.isFinite(start) && Number.isFinite(end) && end > start ? end - start : 0;
}

// ---------------------------------------------------------------- comparing tuning jobs

// The compare view's data for each name: {name, job (Describe), training (summaries), minimize}.
async function compareData(names) {
  return Promise.all(names.map(async (name) => {
    const job = await sagemaker("DescribeHyperParameterTuningJob", {HyperParameterTuningJobName: name});
    const training = await listAll("ListTrainingJobsForHyperParameterTuningJob",
                                   {HyperParameterTuningJobName: name, MaxResults: 100},
                                   "TrainingJobSummaries");
    const objective = (job.HyperParameterTuningJobConfig || {}).HyperParameterTuningJobObjective || {};
    return {name, job, training: launchOrder(training), objective,
            minimize: objective.Type !== "Maximize"};
  }));
}

// Best objective so far of one tuning job, with x either the launch index or the training
// seconds spent so far (every job's, in launch order): [[x...], [best...]].
function bestCurve(entry, bySeconds) {
  const values = entry.training.map(finalObjective);
  const best = bestSoFar(values, entry.minimize);
  const xs = [];
  let seconds = 0;
  entry.training.forEach((t, i) => {
    seconds += trainingSeconds(t);
    xs.push(bySeconds ? Math.round(seconds * 1000) / 1000 : i + 1);
  });
  return [xs, best];
}

// One uPlot of every compared job's best-so-far steps on a shared x axis.
function compareChart(entries, bySeconds, metric, width) {
  const curves = entries.map((e) => bestCurve(e, bySeconds));
  const xs = [...new Set(curves.flatMap(([x]) => x))].sort((a, b) => a - b);
  const data = [xs, ...curves.map(([x, best]) => {
    const at = new Map(x.map((v, i) => [v, best[i]]));
    return xs.map((v) => (at.has(v) ? at.get(v) : null));
  })];
  const kind = bySeconds ? "compare-seconds" : "compare-jobs";
  const axis = bySeconds ? "training seconds spent (every training job's, in launch order)"
                         : "training job (launch order)";
  const figure = el("figure", {class: "chart", "data-chart": kind,
                               "data-series": String(entries.length)});
  const plot = el("div", {class: "plot", role: "img",
                          "aria-label": "Best " + metric + " so far against " + axis});
  figure.append(plot);
  if (xs.length) {
    figure.uplot = new uPlot({
      width, height: Math.round(width * 0.35),
      legend: {show: false},
      cursor: {drag: {x: false, y: false}, points: {show: false}},
      scales: {x: {time: false}},
      axes: [Object.assign({label: axis}, bySeconds ? {} : {incrs: INTEGER_STEPS}),
             {label: "best " + metric + " so far", size: 70}],
      series: [{label: axis}, ...entries.map((e, i) => ({
        label: e.name, stroke: JOB_COLOURS[i % JOB_COLOURS.length], width: 2, spanGaps: true,
        paths: uPlot.paths.stepped({align: 1}), points: {show: false}}))],
    }, data, plot);
  }
  figure.append(el("figcaption", {}, "Best " + metric + " so far against " + axis + "; ",
      entries.flatMap((e, i) => [i ? ", " : "", jobKey(i, e.name)]), "."));
  return figure;
}

async function compareView(names) {
  crumbs(link("#/", "Tuning jobs"), "Compare");
  const entries = await compareData(names);
  const metrics = [...new Set(entries.map((e) => e.objective.MetricName || "objective"))];
  const directions = new Set(entries.map((e) => e.minimize));
  const metric = metrics.join(" / ");
  const width = chartWidth();
  const best = (e) => {
    const values = e.training.map(finalObjective).filter((v) => v !== null);
    if (!values.length) return "";
    return number(e.minimize ? Math.min(...values) : Math.max(...values));
  };
  const view = [
    el("h1", {}, "Compare " + names.length + " tuning jobs"),
    metrics.length > 1 || directions.size > 1
        ? el("p", {class: "error", role: "note"}, "These tuning jobs do not share one objective (" +
             entries.map((e) => e.name + ": " + (e.objective.Type || "") + " " +
                                (e.objective.MetricName || "")).join("; ") + "): the curves are not comparable.")
        : "",
    table("The compared tuning jobs", [
      ["Name", (e) => el("td", {}, jobKey(entries.indexOf(e), "■ "),
                         link("#/tuning-jobs/" + encodeURIComponent(e.name), e.name))],
      ["Status", (e) => statusCell(e.job.HyperParameterTuningJobStatus)],
      ["Strategy", (e) => (e.job.HyperParameterTuningJobConfig || {}).Strategy],
      ["Early stopping", (e) => (e.job.HyperParameterTuningJobConfig || {}).TrainingJobEarlyStoppingType || "Off"],
      ["Training jobs", (e) => el("td", {class: "num"}, String(e.training.length))],
      ["Training seconds", (e) => el("td", {class: "num"},
                                     number(e.training.reduce((s, t) => s + trainingSeconds(t), 0)))],
      ["Best " + metric, (e) => el("td", {class: "num"}, best(e))],
    ], entries),
    el("h2", {}, "Best so far by training job"),
    compareChart(entries, false, metric, width),
    el("h2", {}, "Best so far by training seconds"),
    compareChart(entries, true, metric, width),
  ];
  return {view, live: entries.some((e) => !TERMINAL.has(e.job.HyperParameterTuningJobStatus))};
}

// The list view's "compare" control: a checkbox per tuning job and a link to the chosen ones.
function compareControls(jobs) {
  const go = el("a", {href: "#/", class: "compare-link", "aria-disabled": "true"},
                "Compare the selected tuning jobs");
  const boxes = jobs.map((j) => el("input", {type: "checkbox", class: "compare-box",
                                             value: j.HyperParameterTuningJobName,
                                             "aria-label": "Compare " + j.HyperParameterTuningJobName}));
  const update = () => {
    const chosen = boxes.filter((b) => b.checked).map((b) => encodeURIComponent(b.value));
    go.setAttribute("href", chosen.length ? "#/compare/" + chosen.join(",") : "#/");
    go.setAttribute("aria-disabled", String(chosen.length < 2));
    go.textContent = "Compare the " + chosen.length + " selected tuning jobs";
  };
  boxes.forEach((b) => b.addEventListener("change", update));
  return {go, boxOf: (j) => boxes[jobs.indexOf(j)]};
}

// ---------------------------------------------------------------- one tuning job's trials

// Axes of the trials' views: one per tuned hyperparameter seen in a finished job, in the
// ranges' order: {name, kind, log, categories, min, max, position(raw) in [0, 1] or null}.
function trialAxes(finished, config) {
  const ranges = rangesOf(config);
  const axes = [];
  for (const [name, range] of ranges) {
    const raw = finished.map((t) => (t.TunedHyperParameters || {})[name]).filter((v) => v !== undefined);
    if (!raw.length) continue;
    if (range.kind === "Categorical") {
      const categories = [...range.values];
      for (const v of raw) if (!categories.includes(v)) categories.push(v);
      const span = Math.max(1, categories.length - 1);
      axes.push({name, kind: range.kind, categories,
                 position: (v) => (categories.includes(v) ? categories.indexOf(v) / span : null)});
      continue;
    }
    const scale = (v) => (range.log ? Math.log(v) : v);
    const values = raw.map(Number).filter((v) => Number.isFinite(v) && (!range.log || v > 0));
    if (!values.length) continue;
    const min = Math.min(...values), max = Math.max(...values);
    const lo = scale(min), hi = scale(max);
    axes.push({name, kind: range.kind, log: range.log, min, max,
               position: (v) => {
                 const n = Number(v);
                 if (!Number.isFinite(n) || (range.log && n <= 0)) return null;
                 return hi > lo ? (scale(n) - lo) / (hi - lo) : 0.5;
               }});
  }
  return axes;
}

// A colour from the best (dark blue) to the worst (light orange) objective; `rank` in [0, 1].
function rampColour(rank) {
  const a = [8, 48, 107], b = [253, 174, 97];
  const c = a.map((v, i) => Math.round(v + (b[i] - v) * rank));
  return "rgb(" + c.join(",") + ")";
}

// Parallel coordinates: an axis per tuned hyperparameter and one for the objective, a line per
// finished training job through its values, coloured by its objective's rank (the best drawn last,
// on top). Log-scaled ranges on log axes; a categorical's values evenly spaced.
function parallelCoordinates(training, config, objective, width) {
  const minimize = objective.Type !== "Maximize";
  const metric = objective.MetricName || "objective";
  const finished = training.filter((t) => finalObjective(t) !== null);
  const axes = trialAxes(finished, config);
  const ys = finished.map(finalObjective);
  const yMin = Math.min(...ys), yMax = Math.max(...ys);
  axes.push({name: metric, min: yMin, max: yMax, objective: true,
             position: (v) => (yMax > yMin ? (v - yMin) / (yMax - yMin) : 0.5)});
  const height = 280, top = 30, bottom = 20, left = 80, right = 70;
  const step = axes.length > 1 ? (width - left - right) / (axes.length - 1) : 0;
  const xOf = (i) => left + i * step;
  const yOf = (p) => top + (1 - p) * (height - top - bottom);
  const root = svgEl("svg", {width, height, viewBox: "0 0 " + width + " " + height, role: "img",
                             class: "parallel", "aria-label": "Parallel coordinates: every finished " +
                             "training job's hyperparameters and " + metric});
  const order = finished.map((t, i) => ({t, y: ys[i]}))
                        .sort((a, b) => (minimize ? b.y - a.y : a.y - b.y));  // worst first
  order.forEach(({t, y}, k) => {
    const points = axes.map((axis, i) => {
      const p = axis.objective ? axis.position(y) : axis.position((t.TunedHyperParameters || {})[axis.name]);
      return p === null ? null : xOf(i).toFixed(1) + "," + yOf(p).toFixed(1);
    });
    if (points.includes(null)) return;
    const rank = order.length > 1 ? 1 - k / (order.length - 1) : 0;
    const line = svgEl("polyline", {points: points.join(" "), fill: "none", stroke: rampColour(rank),
                                    "stroke-width": k === order.length - 1 ? "2.5" : "1.2",
                                    "stroke-opacity": "0.85", class: "trial"});
    line.append(svgEl("title", {}, t.TrainingJobName + ": " + metric + " " + number(y)));
    root.append(line);
  });
  const label = (axis, v) => (axis.categories ? v : number(v));
  axes.forEach((axis, i) => {
    root.append(svgEl("line", {x1: xOf(i), x2: xOf(i), y1: yOf(1), y2: yOf(0), class: "axis"}));
    root.append(svgEl("text", {x: xOf(i), y: top - 12, "text-anchor": "middle", class: "axis-name"},
                      axis.name + (axis.log ? " (log)" : "")));
    const ticks = axis.categories ? axis.categories.map((c, j) => [c, axis.position(c)])
                                  : [[axis.max, 1], [axis.min, 0]];
    for (const [v, p] of ticks) {
      root.append(svgEl("text", {x: xOf(i) + 4, y: yOf(p) + 4, class: "tick"}, label(axis, v)));
    }
  });
  const figure = el("figure", {class: "chart", "data-chart": "parallel-coordinates",
                               "data-axes": String(axes.length),
                               "data-lines": String(root.querySelectorAll("polyline").length)});
  figure.append(root, el("figcaption", {}, "Every finished training job as a line through its " +
      "hyperparameters and its final " + metric + " (last axis), dark blue the best, light orange " +
      "the worst; hover a line for its training job."));
  return finished.length ? figure : el("p", {}, "No finished training job yet.");
}

// Hyperparameter importance: each tuned hyperparameter's first-order share of the variance of
// the final objective (an fANOVA-style main effect, estimated by binning): the trials are grouped
// by the hyperparameter's value (a categorical's values; a numeric range's values in up to five
// equal-count bins) and the variance of the group means, weighted by group size, is divided by
// the objective's variance. The shares need not add up to 1: the rest is interactions and noise.
function importanceOf(training, config) {
  const finished = training.filter((t) => finalObjective(t) !== null);
  const ys = finished.map(finalObjective);
  const n = ys.length;
  const mean = ys.reduce((s, y) => s + y, 0) / Math.max(1, n);
  const total = ys.reduce((s, y) => s + (y - mean) * (y - mean), 0) / Math.max(1, n);
  return trialAxes(finished, config).map((axis) => {
    const pairs = finished.map((t, i) => ({p: axis.position((t.TunedHyperParameters || {})[axis.name]), y: ys[i]}))
                          .filter((q) => q.p !== null).sort((a, b) => a.p - b.p);
    const groups = new Map();
    const bins = Math.min(5, Math.max(1, Math.floor(pairs.length / 2)));
    pairs.forEach((q, i) => {
      const key = axis.categories ? String(q.p) : String(Math.floor((i * bins) / pairs.length));
      if (!groups.has(key)) groups.set(key, []);
      groups.get(key).push(q.y);
    });
    let between = 0;
    for (const g of groups.values()) {
      const m = g.reduce((s, y) => s + y, 0) / g.length;
      between += g.length * (m - mean) * (m - mean);
    }
    between /= Math.max(1, pairs.length);
    return {name: axis.name, share: total > 0 && n >= 4 ? Math.min(1, between / total) : null};
  }).sort((a, b) => (b.share || 0) - (a.share || 0));
}

function importanceChart(training, config) {
  const rows = importanceOf(training, config);
  const measured = rows.filter((r) => r.share !== null);
  return el("div", {"data-chart": "importance", "data-params": String(measured.length)},
            table("First-order share of the final objective's variance per hyperparameter " +
                  "(binned main effects, fANOVA-style; needs 4 finished training jobs)", [
              ["Hyperparameter", (r) => r.name],
              ["Share", (r) => el("td", {class: "num"}, r.share === null ? "" : number(r.share))],
              ["", (r) => el("td", {}, r.share === null ? "" : styled(
                  el("span", {class: "bar", "aria-hidden": "true"}),
                  {width: Math.round(r.share * 200) + "px"}))],
            ], rows, "No tuned hyperparameter yet."));
}
