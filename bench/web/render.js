// The render benchmark's page (bench/web/render_bench.py opens it in headless Chromium): builds an
// ExplainHyperParameterTuningJob answer of ?jobs= training jobs x ?epochs= emissions (AUTO early
// stopping: the median line, every other job stopped with a marker), times web/charts.js's
// learningCurves() from the data to the drawn canvas, and writes the figures into #result as JSON.
"use strict";

function synthetic(jobs, epochs) {
  // Deterministic curves: loss = a + (1 - a) * exp(-k * epoch), a and k from the job's index.
  const training = [];
  for (let j = 0; j < jobs; ++j) {
    const a = 0.1 + 0.5 * ((j * 7919) % 1000) / 1000;
    const k = 0.02 + 0.2 * ((j * 104729) % 1000) / 1000;
    const stopped = j % 2 === 1;
    const length = stopped ? Math.max(3, Math.floor(epochs * (0.2 + 0.6 * ((j * 31) % 100) / 100)))
                           : epochs;
    const values = Array.from({length}, (_, e) => a + (1 - a) * Math.exp(-k * (e + 1)));
    const job = {TrainingJobName: "bench-" + String(j + 1).padStart(4, "0"),
                 TrainingJobStatus: stopped ? "Stopped" : "Completed", ObjectiveValues: values};
    if (stopped) {
      job.Decisions = [{Rule: "Median", Epoch: length, Value: values[length - 1], Threshold: 0.3,
                        ReferenceJobs: 10, Stop: true,
                        Explanation: "epoch " + length + ": val_loss " + values[length - 1].toFixed(4) +
                                     " > 0.3, the median of the running averages to epoch " +
                                     length + " of 10 completed or stopped jobs: stop"}];
    }
    training.push(job);
  }
  const median = Array.from({length: epochs - 2}, (_, i) => ({Epoch: i + 3, Median: 0.3,
                                                              ReferenceJobs: jobs}));
  return {HyperParameterTuningJobName: "bench", EarlyStopping: "Auto",
          ObjectiveMetricName: "val_loss", ObjectiveType: "Minimize", TrainingJobs: training,
          MedianReference: median};
}

const params = new URLSearchParams(location.search);
const jobs = Number(params.get("jobs") || 1000);
const epochs = Number(params.get("epochs") || 100);
const explain = synthetic(jobs, epochs);
const t0 = performance.now();
const figure = learningCurves(explain, 1100);
document.getElementById("view").append(figure);
const built = performance.now();
// uPlot draws in a microtask queued while it was built: this one runs after that draw.
queueMicrotask(() => {
  const drawn = performance.now();
  document.getElementById("result").textContent = JSON.stringify({
    jobs, epochs, points: jobs * epochs,
    series: Number(figure.dataset.series), markers: Number(figure.dataset.markers),
    build_ms: built - t0, total_ms: drawn - t0,
  });
});
