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
    axes: [{label: "epoch (objective emission)"}, {label: metric, size: 70}],
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

// The chart's data as a table, built when it is opened (1,000 jobs x 100 epochs is large).
function curvesTable(jobs, median, epochs) {
  const details = el("details", {class: "chart-table"}, el("summary", {}, "The curves as a table"));
  details.addEventListener("toggle", () => {
    if (!details.open || details.querySelector("table")) return;
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
    details.append(table("Objective by epoch (columns)", columns, rows));
  });
  return details;
}
