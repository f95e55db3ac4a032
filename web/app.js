// amt-local's page: the tuning jobs amtd holds, read through the same SageMaker and CloudWatch
// Logs APIs that boto3 and the aws cli use (POST / with X-Amz-Target), so it shows exactly what
// they see. No framework; every value is put into the page as text (textContent), never as HTML,
// and the server's Content-Security-Policy allows no inline script.
//
// Views (the URL's fragment): #/ the tuning jobs; #/tuning-jobs/<name>; #/training-jobs/<name>;
// #/compare/<name>,<name>,... tuning jobs side by side (compare.js).
// While the view shows a job that is not finished, it is read again on every change of it (the
// live feed, server-sent events) or, for the list and when the feed fails, every POLL_MS.
"use strict";

const POLL_MS = 2000;
const TERMINAL = new Set(["Completed", "Failed", "Stopped"]);

// ---------------------------------------------------------------- the API

class ApiError extends Error {
  constructor(code, message) {
    super(message);
    this.code = code;
  }
}

async function call(target, body) {
  const response = await fetch("/", {
    method: "POST",
    headers: {"X-Amz-Target": target, "Content-Type": "application/x-amz-json-1.1"},
    body: JSON.stringify(body || {}),
  });
  const text = await response.text();
  let data = {};
  try {
    data = text ? JSON.parse(text) : {};
  } catch (e) {
    data = {message: text};
  }
  if (!response.ok) {
    const code = String(data.__type || "Error").split("#").pop();
    throw new ApiError(code, data.message || data.Message || response.statusText);
  }
  return data;
}

const sagemaker = (operation, body) => call("SageMaker." + operation, body);
const logs = (operation, body) => call("Logs_20140328." + operation, body);
// amt-local's own reads (api/operations.h): the charts' data.
const amtLocal = (operation, body) => call("AmtLocal." + operation, body);

// Every page of a paginated SageMaker list.
async function listAll(operation, body, key) {
  const items = [];
  let token;
  do {
    const page = await sagemaker(operation, Object.assign({}, body, token ? {NextToken: token} : {}));
    items.push(...(page[key] || []));
    token = page.NextToken;
  } while (token);
  return items;
}

// The charts' width: the view's, within bounds.
function chartWidth() {
  const main = document.getElementById("view");
  return Math.max(320, Math.min(1100, (main.clientWidth || 900) - 32));
}

function crumbs(...items) {
  const list = document.getElementById("crumbs");
  list.replaceChildren(...items.map((item) => el("li", {}, item)));
}

// ---------------------------------------------------------------- views

// Every tuning job, described (for warm-start parents and children).
async function allTuningJobs() {
  const summaries = await listAll("ListHyperParameterTuningJobs", {MaxResults: 100},
                                  "HyperParameterTuningJobSummaries");
  return Promise.all(summaries.map(
      (s) => sagemaker("DescribeHyperParameterTuningJob",
                       {HyperParameterTuningJobName: s.HyperParameterTuningJobName})
                 .catch(() => s)));
}

async function tuningJobsView() {
  crumbs("Tuning jobs");
  const described = await allTuningJobs();
  const compare = compareControls(described);
  const view = [
    el("h1", {}, "Tuning jobs"),
    described.length > 1 ? el("p", {}, compare.go) : "",
    table("Every tuning job of this amtd, newest first", [
      ["Compare", (j) => el("td", {}, compare.boxOf(j))],
      ["Name", (j) => link("#/tuning-jobs/" + encodeURIComponent(j.HyperParameterTuningJobName),
                           j.HyperParameterTuningJobName)],
      ["Status", (j) => statusCell(j.HyperParameterTuningJobStatus)],
      ["Strategy", (j) => j.HyperParameterTuningJobConfig ? j.HyperParameterTuningJobConfig.Strategy
                                                          : j.Strategy],
      ["Training jobs", (j) => counters(j.TrainingJobStatusCounters)],
      ["Best objective", (j) => bestObjective(j)],
      ["Warm start from", (j) => parents(j)],
      ["Created", (j) => time(j.CreationTime)],
    ], described, "No tuning jobs yet: create one with amt, boto3, the aws cli or the SageMaker SDK."),
  ];
  return {view, live: described.some((j) => !TERMINAL.has(j.HyperParameterTuningJobStatus))};
}

function counters(c) {
  if (!c) return "";
  const parts = [["Completed", c.Completed], ["InProgress", c.InProgress], ["Stopped", c.Stopped],
                 ["RetryableError", c.RetryableError], ["NonRetryableError", c.NonRetryableError]];
  return parts.filter(([, n]) => n).map(([name, n]) => name + " " + n).join(", ") || "0";
}

function bestObjective(job) {
  const best = job.BestTrainingJob;
  if (!best || !best.FinalHyperParameterTuningJobObjectiveMetric) return "";
  const metric = best.FinalHyperParameterTuningJobObjectiveMetric;
  return [metric.MetricName + " = " + number(metric.Value) + " (",
          link("#/training-jobs/" + encodeURIComponent(best.TrainingJobName), best.TrainingJobName),
          ")"];
}

function parents(job) {
  const config = job.WarmStartConfig;
  if (!config) return "";
  return (config.ParentHyperParameterTuningJobs || []).flatMap((p, i) => [
    i ? ", " : "",
    link("#/tuning-jobs/" + encodeURIComponent(p.HyperParameterTuningJobName),
         p.HyperParameterTuningJobName),
  ]).concat(" (" + config.WarmStartType + ")");
}

async function tuningJobView(name) {
  crumbs(link("#/", "Tuning jobs"), name);
  const job = await sagemaker("DescribeHyperParameterTuningJob", {HyperParameterTuningJobName: name});
  const [training, tags, explain] = await Promise.all([
    listAll("ListTrainingJobsForHyperParameterTuningJob",
            {HyperParameterTuningJobName: name, MaxResults: 100}, "TrainingJobSummaries"),
    sagemaker("ListTags", {ResourceArn: job.HyperParameterTuningJobArn}).catch(() => ({Tags: []})),
    amtLocal("ExplainHyperParameterTuningJob", {HyperParameterTuningJobName: name}),
  ]);
  const config = job.HyperParameterTuningJobConfig || {};
  const objective = config.HyperParameterTuningJobObjective || {};
  const warm = job.WarmStartConfig;
  const [parentJobs, family] = await Promise.all([
    Promise.all(((warm && warm.ParentHyperParameterTuningJobs) || []).map(async (p) => ({
      name: p.HyperParameterTuningJobName, type: warm.WarmStartType,
      summaries: await listAll("ListTrainingJobsForHyperParameterTuningJob",
                               {HyperParameterTuningJobName: p.HyperParameterTuningJobName,
                                MaxResults: 100}, "TrainingJobSummaries").catch(() => []),
    }))),
    allTuningJobs(),
  ]);
  // Managed spot training: each training job's attempts, from its Describe.
  const jobDefinitions = job.TrainingJobDefinitions || [job.TrainingJobDefinition || {}];
  const spot = jobDefinitions.some((d) => d && d.EnableManagedSpotTraining)
      ? await Promise.all(training.map((t) => sagemaker("DescribeTrainingJob",
                                                        {TrainingJobName: t.TrainingJobName})))
      : [];
  const tuned = new Set();
  for (const t of training) Object.keys(t.TunedHyperParameters || {}).forEach((k) => tuned.add(k));
  const view = [
    el("h1", {}, name),
    definitions([
      ["Status", job.HyperParameterTuningJobStatus],
      ["Strategy", config.Strategy],
      ["Objective", objective.Type ? objective.Type + " " + objective.MetricName : ""],
      ["Early stopping", config.TrainingJobEarlyStoppingType],
      ["Training jobs", counters(job.TrainingJobStatusCounters)],
      ["Best objective", bestObjective(job)],
      ["Warm start from", parents(job)],
      ["Failure reason", job.FailureReason],
    ]),
    el("h2", {}, "Learning curves"),
    (explain.TrainingJobs || []).some((t) => (t.ObjectiveValues || []).length)
        ? learningCurves(explain, chartWidth())
        : el("p", {}, "No objective values yet."),
    el("h2", {}, "Progress"),
    training.some((t) => finalObjective(t) !== null) || parentJobs.length
        ? progressChart(training, parentJobs, objective, chartWidth())
        : el("p", {}, "No final objective yet."),
    el("h2", {}, "Hyperparameters"),
    hyperparameterCharts(training, config, objective, chartWidth()),
    el("h2", {}, "Parallel coordinates"),
    parallelCoordinates(training, config, objective, chartWidth()),
    el("h2", {}, "Hyperparameter importance"),
    importanceChart(training, config),
    ...(spot.length ? [el("h2", {}, "Spot"), spotTable(spot)] : []),
    el("h2", {}, "Warm-start lineage"),
    lineage(name, family),
    el("h2", {}, "Training jobs"),
    table("Every training job of the tuning job, with its objective and tuned hyperparameters", [
      ["Name", (t) => link("#/training-jobs/" + encodeURIComponent(t.TrainingJobName),
                           t.TrainingJobName)],
      ["Status", (t) => statusCell(t.TrainingJobStatus)],
      ["Objective", (t) => el("td", {class: "num"},
                              t.FinalHyperParameterTuningJobObjectiveMetric
                                  ? number(t.FinalHyperParameterTuningJobObjectiveMetric.Value) : "")],
      ...[...tuned].sort().map((k) => [k, (t) => (t.TunedHyperParameters || {})[k]]),
      ["Failure reason", (t) => t.FailureReason],
    ], training, "No training jobs yet."),
    el("h2", {}, "Tags"),
    table("The tuning job's tags", [["Key", (t) => t.Key], ["Value", (t) => t.Value]],
          tags.Tags || [], "No tags."),
  ];
  return {view, live: !TERMINAL.has(job.HyperParameterTuningJobStatus),
          status: job.HyperParameterTuningJobStatus};
}

async function trainingJobView(name) {
  const job = await sagemaker("DescribeTrainingJob", {TrainingJobName: name});
  const tuning = job.TuningJobArn ? job.TuningJobArn.split("/").pop() : "";
  crumbs(link("#/", "Tuning jobs"),
         tuning ? link("#/tuning-jobs/" + encodeURIComponent(tuning), tuning) : "",
         name);
  const [lines, explained] = await Promise.all([
    logLines(name),
    amtLocal("ExplainTrainingJob", {TrainingJobName: name}).catch(() => ({})),
  ]);
  const view = [
    el("h1", {}, name),
    definitions([
      ["Status", job.TrainingJobStatus + (job.SecondaryStatus ? " (" + job.SecondaryStatus + ")" : "")],
      ["Failure reason", job.FailureReason],
      ["Training image", (job.AlgorithmSpecification || {}).TrainingImage],
      ["Instances", job.ResourceConfig ? job.ResourceConfig.InstanceCount + " x " +
                                         job.ResourceConfig.InstanceType : ""],
      ["GPUs", (explained.Gpus || []).join("; ")],
      ["Training time", job.TrainingTimeInSeconds !== undefined ? job.TrainingTimeInSeconds + " s" : ""],
      ["Billable time", job.BillableTimeInSeconds !== undefined ? job.BillableTimeInSeconds + " s" : ""],
    ]),
    el("h2", {}, "Timeline"),
    spotTimeline(job),
    el("h2", {}, "Status transitions"),
    table("SecondaryStatusTransitions", [
      ["Status", (t) => t.Status],
      ["Start", (t) => time(t.StartTime)],
      ["End", (t) => time(t.EndTime)],
      ["Message", (t) => t.StatusMessage],
    ], job.SecondaryStatusTransitions || []),
    el("h2", {}, "Hyperparameters"),
    table("HyperParameters", [["Name", ([k]) => k], ["Value", ([, v]) => v]],
          Object.entries(job.HyperParameters || {}).sort()),
    el("h2", {}, "Final metrics"),
    table("FinalMetricDataList", [
      ["Metric", (m) => m.MetricName],
      ["Value", (m) => el("td", {class: "num"}, number(m.Value))],
      ["Time", (m) => time(m.Timestamp)],
    ], job.FinalMetricDataList || []),
    el("h2", {}, "Early stopping"),
    explained.EarlyStopping && explained.EarlyStopping !== "Off"
        ? el("div", {"data-chart": "decisions"}, table(
              "Every early-stopping decision (" + explained.EarlyStopping + "), as amt explain prints it", [
                ["Epoch", (d) => el("td", {class: "num"}, String(d.Epoch))],
                ["Rule", (d) => d.Rule],
                ["Decision", (d) => el("td", {class: d.Stop ? "status-Stopped" : undefined},
                                       d.Stop ? "stop" : "continue")],
                ["Why", (d) => d.Explanation],
              ], explained.Decisions || [], "No decision yet: no objective value was emitted."))
        : el("p", {}, "No early stopping for this training job."),
    el("h2", {}, "Log"),
    lines.length ? el("pre", {class: "log", tabindex: "0", "aria-label": "Training log"},
                      lines.join("\n"))
                 : el("p", {}, "No log lines yet."),
  ];
  return {view, live: !TERMINAL.has(job.TrainingJobStatus), status: job.TrainingJobStatus};
}

// The training job's log, every host's stream (algo-1, ...) in turn, as CloudWatch Logs has it.
async function logLines(job) {
  const group = "/aws/sagemaker/TrainingJobs";
  const streams = await logs("DescribeLogStreams",
                             {logGroupName: group, logStreamNamePrefix: job + "/"})
                      .catch(() => ({logStreams: []}));
  const lines = [];
  const several = (streams.logStreams || []).length > 1;
  for (const stream of streams.logStreams || []) {
    let token;
    for (;;) {
      const page = await logs("GetLogEvents", Object.assign(
          {logGroupName: group, logStreamName: stream.logStreamName, startFromHead: true},
          token ? {nextToken: token} : {}));
      const host = several ? stream.logStreamName.split("/").pop().split("-").slice(0, 2).join("-") + ": " : "";
      for (const event of page.events || []) lines.push(host + event.message);
      if (!page.nextForwardToken || page.nextForwardToken === token) break;
      token = page.nextForwardToken;
      if ((page.events || []).length === 0) break;
    }
  }
  return lines;
}

// ---------------------------------------------------------------- routing and live updates

let timer = null;
let shown = "";

function route() {
  const hash = location.hash.replace(/^#/, "") || "/";
  const parts = hash.split("/").filter(Boolean).map(decodeURIComponent);
  if (parts[0] === "tuning-jobs" && parts[1]) {
    return {view: () => tuningJobView(parts[1]), feed: "tuning-job=" + encodeURIComponent(parts[1])};
  }
  if (parts[0] === "compare" && parts[1]) {
    const names = [...new Set(parts[1].split(",").filter(Boolean))];  // parts are decoded
    return {view: () => compareView(names), feed: null};
  }
  if (parts[0] === "training-jobs" && parts[1]) {
    return {view: () => trainingJobView(parts[1]), feed: "training-job=" + encodeURIComponent(parts[1])};
  }
  return {view: tuningJobsView, feed: null};
}

// The live feed of the job a view shows (amtd's /ui/events, server-sent events): the view is read
// again on every change while the job runs, and once more when it has ended. The list of tuning
// jobs, and a view whose feed failed, are read again every POLL_MS instead.
let feed = null;  // {source, key}
let failedFeed = null;

function closeFeed() {
  if (feed) feed.source.close();
  feed = null;
}

function openFeed(key) {
  if (feed && feed.key === key) return;
  closeFeed();
  const source = new EventSource("/ui/events?" + key);
  feed = {source, key};
  source.addEventListener("change", () => {
    document.body.dataset.events = String(Number(document.body.dataset.events || 0) + 1);
    renderSoon();
  });
  source.addEventListener("end", () => {
    closeFeed();
    renderSoon();
  });
  source.addEventListener("error", () => {
    if (!feed || feed.source !== source) return;
    closeFeed();  // amtd went away, or the feed was refused: fall back to reading every POLL_MS
    failedFeed = key;
    renderSoon();
  });
}

// With ?renderlog in the URL (bench/web/live_bench.py), each render of the learning curves is
// recorded in #render-log as "<epoch seconds> <objective emissions drawn>" lines.
const RENDER_LOG = new URLSearchParams(location.search).has("renderlog");

function logRender(main) {
  if (!RENDER_LOG) return;
  const chart = main.querySelector('[data-chart="learning-curves"]');
  let log = document.getElementById("render-log");
  if (!log) {
    log = el("pre", {id: "render-log", hidden: ""});
    document.body.append(log);
  }
  log.append((Date.now() / 1000).toFixed(3) + " " + (chart ? chart.dataset.emissions : 0) + "\n");
}

// One render at a time: a change during a render asks for one more after it.
let rendering = false;
let pending = false;

function renderSoon() {
  if (rendering) {
    pending = true;
    return;
  }
  render();
}

async function render() {
  clearTimeout(timer);
  rendering = true;
  const target = location.hash;
  const main = document.getElementById("view");
  const live = document.getElementById("live");
  const {view: build, feed: key} = route();
  try {
    const {view, live: again, status} = await build();
    if (location.hash !== target) return;  // the user moved on meanwhile
    main.replaceChildren(...view);
    if (status && !document.body.dataset.firstStatus) document.body.dataset.firstStatus = status;
    logRender(main);
    if (again && key && failedFeed !== key) {
      openFeed(key);
      live.textContent = "live";
    } else {
      closeFeed();
      live.textContent = again ? "live: updating every " + POLL_MS / 1000 + " s" : "";
      if (again) timer = setTimeout(renderSoon, POLL_MS);
    }
  } catch (error) {
    if (location.hash !== target) return;
    closeFeed();
    main.replaceChildren(el("p", {class: "error", role: "alert"},
                            error.code ? error.code + ": " + error.message : String(error.message || error)));
    live.textContent = "";
  } finally {
    rendering = false;
  }
  if (shown !== target) {
    shown = target;
    main.focus();
  }
  document.title = "amt-local" + (target.length > 2 ? " — " + decodeURIComponent(target.split("/").pop()) : "");
  document.body.dataset.rendered = String(Number(document.body.dataset.rendered || 0) + 1);
  if (pending) {
    pending = false;
    render();
  }
}

window.addEventListener("hashchange", () => {
  pending = false;
  render();
});
render();
