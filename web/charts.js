// amt-local's charts, drawn with uPlot (web/package.json; served as /ui/uplot.js) from what
// AmtLocal.ExplainHyperParameterTuningJob answers: every training job's objective at every
// emission, the decisions that stopped jobs (and Hyperband's rungs), and AUTO's median line.
//
// A chart is a <figure> holding the canvas, one focusable marker per stop decision (its text is
// the decision's explanation, the same sentence as `amt explain`), a key, and a table view of the
// same data beside it. Its data-* attributes say what was drawn (series, median points, markers),
// for people reading the DOM and for the browser tests.
"use strict";

const STATUS_COLOURS = {
  Completed: "#1d6b2a",
  Stopped: "#b35c00",
  Stopping: "#b35c00",
  Failed: "#a4161a",
  InProgress: "#0b5cad",
};
const MEDIAN_COLOUR = "#1a1a1a";
// Axis steps for counts (epochs, job indices): never a fraction.
const INTEGER_STEPS = [1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000, 2000, 5000, 10000];

function statusColour(status) {
  return STATUS_COLOURS[status] || "#6b6b6b";
}

// The decisions drawn as markers: the stops, and Hyperband's rung decisions (promotions too).
function markersOf(explain) {
  const markers = [];
  for (const job of explain.TrainingJobs || []) {
    for (const decision of job.Decisions || []) {
      markers.push({
        job: job.TrainingJobName,
        epoch: decision.Epoch,
        value: (job.ObjectiveValues || [])[decision.Epoch - 1],
        stop: Boolean(decision.Stop),
        rule: decision.Rule,
        rung: decision.Rule === "Hyperband" && decision.Threshold !== undefined,
        explanation: decision.Explanation || "",
      });
    }
  }
  return markers;
}

// The learning-curves figure of a tuning job (`explain` is the ExplainHyperParameterTuningJob
// answer), `width` CSS pixels wide.
function learningCurves(explain, width) {
  const jobs = (explain.TrainingJobs || []).filter((j) => (j.ObjectiveValues || []).length > 0);
  const median = explain.MedianReference || [];
  const markers = markersOf(explain);
  const epochs = Math.max(1, ...jobs.map((j) => j.ObjectiveValues.length),
                          ...median.map((p) => p.Epoch));
  const xs = Array.from({length: epochs}, (_, i) => i + 1);
  const data = [xs];
  const series = [{label: "epoch"}];
  for (const job of jobs) {
    const values = job.ObjectiveValues;
    data.push(xs.map((x) => (x <= values.length ? values[x - 1] : null)));
    series.push({label: job.TrainingJobName, stroke: statusColour(job.TrainingJobStatus), width: 1.25,
                 points: {show: false}});
  }
  if (median.length) {
    const byEpoch = new Map(median.map((p) => [p.Epoch, p.Median]));
    data.push(xs.map((x) => (byEpoch.has(x) ? byEpoch.get(x) : null)));
    series.push({label: "median of running averages", stroke: MEDIAN_COLOUR, width: 2.5,
                 dash: [8, 5], points: {show: false}});
  }

  const metric = explain.ObjectiveMetricName || "objective";
  const figure = el("figure", {
    class: "chart", "data-chart": "learning-curves", "data-series": String(jobs.length),
    "data-median-points": String(median.length), "data-markers": String(markers.length),
    "data-emissions": String(jobs.reduce((n, j) => n + j.ObjectiveValues.length, 0)),
  });
  const plot = el("div", {class: "plot", role: "img",
                          "aria-label": "Learning curves: " + metric + " of " + jobs.length +
                                        " training jobs by epoch"});
  const said = el("p", {class: "decision", "aria-live": "polite"},
                  markers.length ? "Choose a marker to read its decision." : "");
  figure.append(plot);

  const hyperband = explain.EarlyStopping === "Hyperband";
  const rungs = hyperband ? [...new Set(markers.filter((m) => m.rung).map((m) => m.epoch))]
                                .sort((a, b) => a - b)
                          : [];
  const chart = new uPlot({
    width, height: Math.round(width * 0.45),
    legend: {show: false},
    cursor: {drag: {x: false, y: false}, points: {show: false}},
    scales: {x: {time: false}},
    axes: [{label: "epoch (objective emission)", incrs: INTEGER_STEPS}, {label: metric, size: 70}],
    series,
    hooks: {
      drawClear: [(u) => drawRungs(u, rungs)],
      draw: [(u) => placeMarkers(u, markers, said)],
    },
  }, data, plot);
  figure.uplot = chart;

  figure.append(
      el("figcaption", {},
         el("span", {}, metric + " (" + (explain.ObjectiveType || "") + ") of every training job " +
                        "at every epoch, coloured by status: "),
         keyOf(jobs), ".", median.length ? [" The dashed line is the median rule's reference: a job " +
                                       "launched now is stopped at an epoch where its " + metric +
                                       " is " + (explain.ObjectiveType === "Maximize" ? "below" : "above") +
                                       " it."] : "",
         rungs.length ? [" Vertical lines are Hyperband's rungs (epochs " + rungs.join(", ") + ")."] : "",
         markers.length ? (hyperband ? " Markers: × a stop, ○ a promotion at a rung."
                                     : " × marks the epoch at which a job was stopped.")
                        : ""),
      said,
      decisionsTable(markers, metric),
      curvesTable(jobs, median, epochs));
  return figure;
}

function keyOf(jobs) {
  const counts = new Map();
  for (const job of jobs) counts.set(job.TrainingJobStatus, (counts.get(job.TrainingJobStatus) || 0) + 1);
  return [...counts].map(([status, n], i) => [
    i ? ", " : "",
    el("span", {class: "key status-" + status}, status + " " + n),
  ]);
}

// Hyperband's rungs: a thin vertical line at each rung epoch, under the curves.
function drawRungs(u, rungs) {
  if (!rungs.length) return;
  const ctx = u.ctx;
  ctx.save();
  ctx.strokeStyle = "#9a9a9a";
  ctx.lineWidth = 1;
  ctx.setLineDash([2, 4]);
  for (const epoch of rungs) {
    const x = Math.round(u.valToPos(epoch, "x", true)) + 0.5;
    ctx.beginPath();
    ctx.moveTo(x, u.bbox.top);
    ctx.lineTo(x, u.bbox.top + u.bbox.height);
    ctx.stroke();
  }
  ctx.restore();
}

// One button per decision over the plot, at (epoch, value): focus or hover shows its sentence.
function placeMarkers(u, markers, said) {
  for (const old of u.over.querySelectorAll(".marker")) old.remove();
  for (const m of markers) {
    if (m.value === undefined || m.value === null) continue;
    const button = el("button", {
      type: "button", class: "marker " + (m.stop ? "stop" : "promoted"),
      "aria-label": m.job + ", " + m.explanation, title: m.job + ": " + m.explanation,
      "data-job": m.job, "data-epoch": String(m.epoch),
    }, m.stop ? "×" : "○");
    button.style.left = u.valToPos(m.epoch, "x") + "px";
    button.style.top = u.valToPos(m.value, "y") + "px";
    const show = () => { said.textContent = m.job + ": " + m.explanation; };
    button.addEventListener("focus", show);
    button.addEventListener("mouseenter", show);
    u.over.append(button);
  }
}

function decisionsTable(markers, metric) {
  if (!markers.length) return "";
  return table("Early-stopping decisions drawn as markers (amt explain has every decision)", [
    ["Training job", (m) => link("#/training-jobs/" + encodeURIComponent(m.job), m.job)],
    ["Epoch", (m) => el("td", {class: "num"}, String(m.epoch))],
    [metric, (m) => el("td", {class: "num"}, number(m.value))],
    ["Decision", (m) => (m.stop ? "stop" : "continue")],
    ["Why", (m) => m.explanation],
  ], markers);
}

// A <details> whose table is built by `build` when it is first opened.
function lazyTable(summary, build) {
  const details = el("details", {class: "chart-table"}, el("summary", {}, summary));
  details.addEventListener("toggle", () => {
    if (details.open && !details.querySelector("table")) details.append(build());
  });
  return details;
}

// The chart's data as a table, built when it is opened (1,000 jobs x 100 epochs is large).
function curvesTable(jobs, median, epochs) {
  return lazyTable("The curves as a table", () => {
    const columns = [["Training job", (j) => j.name], ["Status", (j) => j.status]];
    for (let e = 1; e <= epochs; ++e) {
      columns.push([String(e), (j) => el("td", {class: "num"}, number(j.values[e - 1]))]);
    }
    const rows = jobs.map((j) => ({name: j.TrainingJobName, status: j.TrainingJobStatus,
                                   values: j.ObjectiveValues}));
    if (median.length) {
      const values = [];
      for (const p of median) values[p.Epoch - 1] = p.Median;
      rows.push({name: "median of running averages", status: "", values});
    }
    return table("Objective by epoch (columns)", columns, rows);
  });
}

// ---------------------------------------------------------------- progress and warm start

const PRIOR_COLOUR = "#7b3fa0";  // warm-start parents' jobs, before job 1
const PARENT_COLOUR = "#8a8a8a";  // the parents' own best-so-far curves

function finalObjective(summary) {
  const metric = summary.FinalHyperParameterTuningJobObjectiveMetric;
  return metric && Number.isFinite(Number(metric.Value)) ? Number(metric.Value) : null;
}

// Training-job summaries in launch order.
function launchOrder(summaries) {
  return [...summaries].sort((a, b) => (Number(a.CreationTime) - Number(b.CreationTime)) ||
                                       String(a.TrainingJobName).localeCompare(b.TrainingJobName));
}

// Best so far along `values` (nulls skipped, carried over).
function bestSoFar(values, minimize, start = null) {
  let best = start;
  return values.map((v) => {
    if (v !== null && (best === null || (minimize ? v < best : v > best))) best = v;
    return best;
  });
}

// The progress figure: each training job's final objective by launch index, the best so far as a
// step line; with warm start, the parents' jobs (the strategy's prior observations) drawn before
// job 1 (indices <= 0) in another colour, and each parent's own best-so-far curve for comparison.
// `parents` is [{name, type, summaries}].
function progressChart(training, parents, objective, width) {
  const minimize = objective.Type !== "Maximize";
  const own = launchOrder(training).map(finalObjective);
  const priors = parents.flatMap((p) => launchOrder(p.summaries).map(finalObjective))
                        .filter((v) => v !== null);
  const priorBest = bestSoFar(priors, minimize);
  const start = priorBest.length ? priorBest[priorBest.length - 1] : null;
  const parentCurves = parents.map((p) => bestSoFar(launchOrder(p.summaries).map(finalObjective),
                                                    minimize));
  const first = 1 - priors.length;
  const last = Math.max(own.length, ...parentCurves.map((c) => c.length), 1);
  const xs = [];
  for (let x = first; x <= last; ++x) xs.push(x);
  const at = (x, from, values) => (x >= from && x - from < values.length ? values[x - from] : null);
  const points = {show: true, size: 7};
  const data = [xs, xs.map((x) => at(x, 1, own)), xs.map((x) => at(x, 1, bestSoFar(own, minimize, start)))];
  const series = [{label: "training job"},
                  {label: "objective", stroke: "#0b5cad", paths: () => null, points},
                  {label: "best so far", stroke: "#1d6b2a", width: 2, paths: uPlot.paths.stepped({align: 1}),
                   points: {show: false}}];
  if (priors.length) {
    data.push(xs.map((x) => at(x, first, priors)));
    series.push({label: "warm-start priors", stroke: PRIOR_COLOUR, paths: () => null, points});
    data.push(xs.map((x) => at(x, first, priorBest)));
    series.push({label: "priors' best so far", stroke: PRIOR_COLOUR, width: 2, dash: [6, 4],
                 paths: uPlot.paths.stepped({align: 1}), points: {show: false}});
  }
  parentCurves.forEach((curve, i) => {
    data.push(xs.map((x) => at(x, 1, curve)));
    series.push({label: parents[i].name + " (its own run)", stroke: PARENT_COLOUR, width: 1.5,
                 dash: [2, 3], paths: uPlot.paths.stepped({align: 1}), points: {show: false}});
  });
  const metric = objective.MetricName || "objective";
  const figure = el("figure", {class: "chart", "data-chart": "progress",
                               "data-jobs": String(own.filter((v) => v !== null).length),
                               "data-prior-points": String(priors.length),
                               "data-parents": String(parents.length)});
  const plot = el("div", {class: "plot", role: "img",
                          "aria-label": "Progress: best " + metric + " so far by training job"});
  figure.append(plot);
  figure.uplot = new uPlot({
    width, height: Math.round(width * 0.35),
    legend: {show: false},
    cursor: {drag: {x: false, y: false}, points: {show: false}},
    scales: {x: {time: false}},
    axes: [{label: "training job (launch order; <= 0: warm-start priors)", incrs: INTEGER_STEPS},
           {label: metric, size: 70}],
    series,
  }, data, plot);
  figure.append(el("figcaption", {},
      "Each training job's final " + metric + " (blue points) in launch order, and the best so far " +
      "(green steps).",
      priors.length ? " Warm start: the " + priors.length + " jobs of " +
                      parents.map((p) => p.name + " (" + p.type + ")").join(", ") +
                      " were known before job 1; they are drawn at 0 and below (purple), and the " +
                      "grey dotted steps are the parents' own runs, job by job, for comparison."
                    : ""));
  const rows = [...priors.map((v, i) => ({x: first + i, value: v, best: priorBest[i], kind: "warm-start prior"})),
                ...own.map((v, i) => ({x: i + 1, value: v, best: data[2][i + 1 - first], kind: "this tuning job"}))];
  figure.append(lazyTable("The series as a table", () => table("Final objective by training job", [
    ["Index", (r) => el("td", {class: "num"}, String(r.x))],
    ["Final " + metric, (r) => el("td", {class: "num"}, number(r.value))],
    ["Best so far", (r) => el("td", {class: "num"}, number(r.best))],
    ["Kind", (r) => r.kind],
  ], rows)));
  return figure;
}

// ---------------------------------------------------------------- hyperparameters

// The tuning job's ranges by name: {kind: "Continuous"|"Integer"|"Categorical", log, values}.
function rangesOf(config) {
  const ranges = config.ParameterRanges || {};
  const out = new Map();
  for (const kind of ["Continuous", "Integer", "Categorical"]) {
    for (const r of ranges[kind + "ParameterRanges"] || []) {
      out.set(r.Name, {kind, log: r.ScalingType === "Logarithmic" || r.ScalingType === "ReverseLogarithmic",
                       values: r.Values || []});
    }
  }
  return out;
}

// One scatter per tuned hyperparameter: the final objective against its value (log axis for a
// log-scaled range, the category's name for a categorical one), the best job highlighted.
function hyperparameterCharts(training, config, objective, width) {
  const minimize = objective.Type !== "Maximize";
  const ranges = rangesOf(config);
  const finished = training.filter((t) => finalObjective(t) !== null);
  const best = finished.reduce((b, t) => (b === null || (minimize ? finalObjective(t) < finalObjective(b)
                                                                 : finalObjective(t) > finalObjective(b))
                                             ? t : b), null);
  const names = [...ranges.keys()].filter((n) => finished.some((t) => (t.TunedHyperParameters || {})[n] !== undefined));
  const metric = objective.MetricName || "objective";
  const box = el("div", {class: "small-multiples"});
  for (const name of names) {
    const range = ranges.get(name);
    const categorical = range.kind === "Categorical";
    const categories = categorical ? [...range.values] : [];
    const xOf = (t) => {
      const raw = (t.TunedHyperParameters || {})[name];
      if (raw === undefined) return null;
      if (!categorical) return Number(raw);
      let i = categories.indexOf(raw);
      if (i < 0) { categories.push(raw); i = categories.length - 1; }
      return i;
    };
    const pts = finished.map((t) => ({x: xOf(t), y: finalObjective(t), best: t === best}))
                        .filter((p) => p.x !== null && Number.isFinite(p.x) && (!range.log || p.x > 0))
                        .sort((a, b) => a.x - b.x);
    const data = [pts.map((p) => p.x), pts.map((p) => (p.best ? null : p.y)),
                  pts.map((p) => (p.best ? p.y : null))];
    const figure = el("figure", {class: "chart small", "data-chart": "hyperparameter",
                                 "data-name": name, "data-points": String(pts.length),
                                 "data-log": String(range.log)});
    const plot = el("div", {class: "plot", role: "img",
                            "aria-label": metric + " against " + name});
    figure.append(plot);
    const w = Math.max(280, Math.min(420, Math.floor(width / 2) - 16));
    figure.uplot = new uPlot({
      width: w, height: Math.round(w * 0.7),
      legend: {show: false},
      cursor: {drag: {x: false, y: false}, points: {show: false}},
      scales: {x: Object.assign({time: false}, range.log ? {distr: 3} : {},
                                categorical ? {range: [-0.5, categories.length - 0.5]} : {})},
      axes: [Object.assign({label: name + (range.log ? " (log)" : "")},
                           range.log ? {values: (u, splits) => splits.map((v) => (v === null ? "" : String(+v.toPrecision(2))))}
                                     : {},
                           range.kind === "Integer" ? {incrs: INTEGER_STEPS} : {},
                           categorical ? {splits: () => categories.map((_, i) => i),
                                          values: () => categories} : {}),
             {label: metric, size: 60}],
      series: [{label: name},
               {label: metric, stroke: "#0b5cad", paths: () => null, points: {show: true, size: 7}},
               {label: "best", stroke: "#a4161a", paths: () => null,
                points: {show: true, size: 11, fill: "#a4161a"}}],
    }, data, plot);
    figure.append(el("figcaption", {}, metric + " against " + name +
                     (range.log ? " (logarithmic axis)" : "") + "; red: the best training job" +
                     (best ? " (" + best.TrainingJobName + ")" : "") + "."));
    box.append(figure);
  }
  return names.length ? box : el("p", {}, "No finished training job with tuned hyperparameters yet.");
}

// ---------------------------------------------------------------- lineage

// The warm-start graph around `name`: its ancestors (WarmStartConfig parents, recursively) and
// its descendants (jobs whose WarmStartConfig names it), one column per generation, an arrow per
// edge labelled with its WarmStartType. `jobs` are Describe answers of every tuning job.
function lineage(name, jobs) {
  const byName = new Map(jobs.map((j) => [j.HyperParameterTuningJobName, j]));
  const edges = [];
  for (const j of jobs) {
    const config = j.WarmStartConfig;
    if (!config) continue;
    for (const p of config.ParentHyperParameterTuningJobs || []) {
      edges.push({parent: p.HyperParameterTuningJobName, child: j.HyperParameterTuningJobName,
                  type: config.WarmStartType});
    }
  }
  // Generations relative to `name`: walk up the parents and down the children.
  const generation = new Map([[name, 0]]);
  const queue = [name];
  while (queue.length) {
    const n = queue.shift();
    for (const e of edges) {
      if (e.child === n && !generation.has(e.parent)) {
        generation.set(e.parent, generation.get(n) - 1); queue.push(e.parent);
      }
      if (e.parent === n && !generation.has(e.child)) {
        generation.set(e.child, generation.get(n) + 1); queue.push(e.child);
      }
    }
  }
  const shown = edges.filter((e) => generation.has(e.parent) && generation.has(e.child));
  if (!shown.length) return el("p", {}, "No warm start: this tuning job has no parent and no child.");
  const columns = new Map();
  for (const [n, g] of generation) {
    if (!columns.has(g)) columns.set(g, []);
    columns.get(g).push(n);
  }
  const order = [...columns.keys()].sort((a, b) => a - b);
  const boxW = 210, boxH = 34, gapX = 110, gapY = 22;
  const height = Math.max(...order.map((g) => columns.get(g).length)) * (boxH + gapY) + gapY;
  const width = order.length * (boxW + gapX) - gapX + 20;
  const pos = new Map();
  order.forEach((g, c) => columns.get(g).sort().forEach((n, r) => {
    pos.set(n, {x: 10 + c * (boxW + gapX), y: gapY + r * (boxH + gapY)});
  }));
  const NS = "http://www.w3.org/2000/svg";
  const svg = (tag, attributes, text) => {
    const node = document.createElementNS(NS, tag);
    for (const [k, v] of Object.entries(attributes)) node.setAttribute(k, v);
    if (text !== undefined) node.textContent = text;
    return node;
  };
  const root = svg("svg", {width, height, viewBox: "0 0 " + width + " " + height, role: "img",
                           "aria-label": "Warm-start lineage of " + name, class: "lineage"});
  const defs = svg("defs", {});
  const marker = svg("marker", {id: "arrow", viewBox: "0 0 10 10", refX: "10", refY: "5",
                                markerWidth: "7", markerHeight: "7", orient: "auto-start-reverse"});
  marker.append(svg("path", {d: "M 0 0 L 10 5 L 0 10 z", fill: "#555"}));
  defs.append(marker);
  root.append(defs);
  for (const e of shown) {
    const a = pos.get(e.parent), b = pos.get(e.child);
    root.append(svg("line", {x1: a.x + boxW, y1: a.y + boxH / 2, x2: b.x, y2: b.y + boxH / 2,
                             stroke: "#555", "stroke-width": "1.5", "marker-end": "url(#arrow)"}));
    root.append(svg("text", {x: (a.x + boxW + b.x) / 2, y: (a.y + b.y) / 2 + boxH / 2 - 6,
                             "text-anchor": "middle", class: "edge-label"},
                    e.type === "IdenticalDataAndAlgorithm" ? "Identical" : e.type));
  }
  for (const [n, p] of pos) {
    const job = byName.get(n);
    const a = svg("a", {href: "#/tuning-jobs/" + encodeURIComponent(n)});
    a.append(svg("rect", {x: p.x, y: p.y, width: boxW, height: boxH, rx: "5",
                          class: "node" + (n === name ? " current" : "")}));
    a.append(svg("text", {x: p.x + 8, y: p.y + 14, class: "node-name"}, n));
    a.append(svg("text", {x: p.x + 8, y: p.y + 28, class: "node-status"},
                 job ? job.HyperParameterTuningJobStatus : "not found"));
    root.append(a);
  }
  return el("div", {class: "lineage-box", "data-chart": "lineage", "data-edges": String(shown.length)},
            root,
            table("Warm-start edges (parent → child)", [
              ["Parent", (e) => link("#/tuning-jobs/" + encodeURIComponent(e.parent), e.parent)],
              ["Child", (e) => link("#/tuning-jobs/" + encodeURIComponent(e.child), e.child)],
              ["WarmStartType", (e) => e.type],
            ], shown));
}

// ---------------------------------------------------------------- spot

// What a training job's SecondaryStatusTransitions say of its attempts: each "Starting" begins
// one; an "Interrupted" ends one that resumes from its checkpoints in the next.
function attemptsOf(job) {
  const transitions = job.SecondaryStatusTransitions || [];
  return {
    attempts: Math.max(1, transitions.filter((t) => t.Status === "Starting").length),
    interruptions: transitions.filter((t) => t.Status === "Interrupted").length,
  };
}

function savingsOf(job) {
  const training = Number(job.TrainingTimeInSeconds), billable = Number(job.BillableTimeInSeconds);
  if (!job.EnableManagedSpotTraining || !(training > 0) || !Number.isFinite(billable)) return "";
  return (Math.round((1 - billable / training) * 1000) / 10) + "%";
}

// A training job's timeline: one bar segment per status transition, as long as it lasted, the
// interruptions marked, and the training vs billable seconds and the spot savings.
function spotTimeline(job) {
  const transitions = job.SecondaryStatusTransitions || [];
  const {attempts, interruptions} = attemptsOf(job);
  const start = transitions.length ? Number(transitions[0].StartTime) : 0;
  const end = Math.max(start, ...transitions.map((t) => Number(t.EndTime || t.StartTime)));
  const span = Math.max(end - start, 1e-3);
  const bar = el("div", {class: "timeline", role: "list", "aria-label": "Status transitions over time"});
  let attempt = 0;
  for (const t of transitions) {
    if (t.Status === "Starting") ++attempt;
    const from = Number(t.StartTime), to = Number(t.EndTime || t.StartTime);
    const seconds = Math.max(0, to - from);
    const segment = el("span", {class: "segment seg-" + t.Status, role: "listitem", tabindex: "0",
                                title: "attempt " + attempt + ": " + t.Status + ", " +
                                       number(seconds) + " s: " + (t.StatusMessage || "")},
                       t.Status === "Interrupted" ? "⚡" : "");
    segment.style.flexGrow = String(seconds / span);
    bar.append(segment);
  }
  const figure = el("figure", {class: "chart", "data-chart": "timeline",
                               "data-attempts": String(attempts),
                               "data-interruptions": String(interruptions)});
  figure.append(bar, el("figcaption", {},
      attempts + (attempts === 1 ? " attempt" : " attempts") +
      (interruptions ? ", " + interruptions + (interruptions === 1 ? " spot interruption" : " spot interruptions") +
                       " (⚡), each resumed from the checkpoints in the next attempt" : "") +
      ". Training " + (job.TrainingTimeInSeconds ?? "?") + " s, billable " +
      (job.BillableTimeInSeconds ?? "?") + " s" +
      (savingsOf(job) ? ": Managed Spot Training savings " + savingsOf(job) : "") + ".",
      " Hover or focus a segment for its status and length; the table below has every transition."));
  return figure;
}

// The spot table of a tuning job: per training job, its attempts, interruptions, training and
// billable seconds and savings. `described` are DescribeTrainingJob answers.
function spotTable(described) {
  return el("div", {"data-chart": "spot"}, table(
      "Managed spot training, per training job", [
        ["Training job", (j) => link("#/training-jobs/" + encodeURIComponent(j.TrainingJobName),
                                     j.TrainingJobName)],
        ["Status", (j) => statusCell(j.TrainingJobStatus)],
        ["Attempts", (j) => el("td", {class: "num"}, String(attemptsOf(j).attempts))],
        ["Interruptions", (j) => el("td", {class: "num"}, String(attemptsOf(j).interruptions))],
        ["Training s", (j) => el("td", {class: "num"}, String(j.TrainingTimeInSeconds ?? ""))],
        ["Billable s", (j) => el("td", {class: "num"}, String(j.BillableTimeInSeconds ?? ""))],
        ["Savings", (j) => el("td", {class: "num"}, savingsOf(j))],
      ], described));
}
