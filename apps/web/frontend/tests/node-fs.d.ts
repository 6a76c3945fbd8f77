// The one Node API the tests use (they run in Node; the app's own types have no Node in them).
declare module "node:fs" {
  export function readFileSync(path: URL, encoding: "utf8"): string;
}
