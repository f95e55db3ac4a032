// Opens a page of amtd in Debian's headless Chromium (driven by playwright-core, real time: no
// virtual clock), waits until the view shows a finished job, and prints the page's render log
// (#render-log: "<epoch seconds> <emissions drawn>" lines). Used by live_bench.py.
//   node live.mjs <url>
import {chromium} from "playwright-core";

const url = process.argv[2];
const browser = await chromium.launch({
  executablePath: "/usr/bin/chromium",
  args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--disable-quic"],
});
try {
  const page = await browser.newPage({viewport: {width: 1200, height: 900}});
  await page.goto(url);
  // Finished: the view was drawn, and it no longer follows the job (the feed said "end").
  await page.waitForFunction(() => document.body.dataset.firstStatus &&
                                   document.getElementById("live").textContent === "" &&
                                   document.getElementById("render-log"),
                             null, {timeout: 300000, polling: 100});
  process.stdout.write(await page.textContent("#render-log"));
} finally {
  await browser.close();
}
