// A headless Chromium for tests, driven line by line from Python (tests/support/browser.py).
//
//   node browser.js PLAYWRIGHT_CORE CHROMIUM
//
// Each line in is {"id", "code", "args"}: `code` is the body of an async function of
// `page` and `args`; its result (JSON) or its error goes back as one line
// {"id", "value"} or {"id", "error"}. The browser closes when stdin does.
"use strict";
const readline = require("node:readline");
const { chromium } = require(process.argv[2]);

async function main() {
  const browser = await chromium.launch({
    executablePath: process.argv[3],
    // As root (CI), Chromium runs only without its sandbox.
    args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
  });
  const context = await browser.newContext({ viewport: { width: 1920, height: 1080 } });
  const page = await context.newPage();
  const lines = readline.createInterface({ input: process.stdin });
  for await (const line of lines) {
    const { id, code, args } = JSON.parse(line);
    let answer;
    try {
      const run = new Function("page", "args", `return (async () => { ${code} })();`);
      const value = await run(page, args ?? {});
      answer = { id, value: value === undefined ? null : value };
    } catch (error) {
      answer = { id, error: String(error && error.stack ? error.stack : error) };
    }
    process.stdout.write(`${JSON.stringify(answer)}\n`);
  }
  await browser.close();
}

main().catch((error) => {
  process.stderr.write(`${error && error.stack ? error.stack : error}\n`);
  process.exit(1);
});
